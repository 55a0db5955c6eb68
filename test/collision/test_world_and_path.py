"""Obstacles from an SDF world, a YAML file and a floor; paths checked with the motion bound between checks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers.collision_robots import table_world

from bb_robot.collision.errors import WorldError
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.path import MotionBound, check_path
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import read_srdf
from bb_robot.collision.world import load_world, standing_contacts
from bb_robot.loading import load_file

MODELS = Path(__file__).resolve().parents[2] / "models"

TABLE_WORLD = table_world(
    """    <model name="plate">
      <static>true</static>
      <pose>0.0 1.0 0.3 0 0 0</pose>
      <link name="sheet">
        <collision name="sheet"><geometry><box><size>0.002 0.5 0.4</size></box></geometry></collision>
      </link>
    </model>
"""
)


def arm_model(world: str = "", directory: Path | None = None) -> CollisionModel:
    loaded = load_file(str(MODELS / "bb_arm.urdf"))
    model = CollisionModel(
        loaded.robot,
        robot_parts(loaded.robot, loaded.source),
        read_srdf(MODELS / "bb_arm.srdf", loaded.robot.links).disabled,
    )
    if world:
        model = model.with_obstacles(load_world(world, loaded.robot).parts)
    return model


def sweep(lift: float, start: float, end: float, rows: int) -> np.ndarray:
    """The arm straight out (elbow 0), lifted by ``lift``, panning from ``start`` to ``end``."""
    pan = np.linspace(start, end, rows)
    path = np.zeros((rows, 7))
    path[:, 0] = pan
    path[:, 1] = lift
    return path


@pytest.fixture
def cell(tmp_path: Path) -> CollisionModel:
    world = tmp_path / "cell.sdf"
    world.write_text(TABLE_WORLD, encoding="utf-8")
    return arm_model(str(world))


def test_world_models_become_obstacles(cell: CollisionModel) -> None:
    assert [p.link for p in cell.obstacles] == ["world/table/top", "world/plate/sheet"]
    np.testing.assert_allclose(cell.obstacles[0].local[:3, 3], [0.0, -0.8, 0.25])
    assert ("upper_arm_link", "world/table/top") in cell.pairs


def test_a_path_through_the_table_is_refused_one_above_it_accepted(cell: CollisionModel) -> None:
    # Straight out at the shoulder's height (lift -π/2), panning from 0.5 to 2.6 rad: the arm points
    # along -y at π/2, through the table at y = -0.8.  Lifted by 1 rad it passes above it.
    through = check_path(cell, sweep(-math.pi / 2, 0.5, 2.6, 50))
    assert not through.ok
    assert through.contact is not None and "world/table/top" in through.contact.links
    assert 10 < through.index < 40
    above = check_path(cell, sweep(-1.0, 0.5, 2.6, 50))
    assert above.ok, above
    assert above.nearest > 0.001


def test_a_thin_plate_between_two_waypoints_is_found(cell: CollisionModel) -> None:
    # Two waypoints only, on either side of a 2 mm plate at +y (the arm points along +y at pan -π/2):
    # neither waypoint touches it; the check between them must.
    path = sweep(-math.pi / 2, -2.6, -0.5, 2)
    assert cell.nearest(path[0]) is not None and cell.nearest(path[0]).distance > 0.05  # type: ignore[union-attr]
    assert cell.nearest(path[1]).distance > 0.05  # type: ignore[union-attr]
    verdict = check_path(cell, path)
    assert not verdict.ok
    assert verdict.contact is not None and "world/plate/sheet" in verdict.contact.links
    assert verdict.checks > 2


def test_motion_bound_holds_along_a_path() -> None:
    # The bound of the motion of every vertex of every part, against the motion measured by FK.
    model = arm_model()
    bound = MotionBound(model)
    rng = np.random.default_rng(4)
    row = {link: i for i, link in enumerate(bound.links)}
    for _ in range(50):
        a, b = rng.uniform(-1.5, 1.5, size=(2, 7))
        a[6], b[6] = 0.0, 0.04
        limit = bound.along(np.vstack([a, b]))[1]
        start, end = model.placements(a), model.placements(b)
        for index, part in enumerate(model.parts):
            points = np.c_[part.points, np.ones(len(part.points))] @ np.linalg.inv(part.local).T
            moved = np.linalg.norm((points @ end[index].T - points @ start[index].T)[:, :3], axis=1).max()
            assert moved <= limit[row[part.link]] + 1e-12


def test_yaml_world_with_a_floor(tmp_path: Path) -> None:
    world = tmp_path / "cell.yaml"
    world.write_text(
        "floor: 0.01\nobstacles:\n"
        "  - name: post\n    xyz: [0.5, 0.0, 0.3]\n    cylinder: {radius: 0.05, length: 0.6}\n",
        encoding="utf-8",
    )
    model = arm_model(str(world))
    assert [p.link for p in model.obstacles] == ["world/post", "world/floor"]
    # The base (a cylinder from z 0 to 0.15) sinks 1 cm into the floor: where the robot stands.
    assert standing_contacts(model) == {("base_link", "world/floor")}
    standing = model.with_allowed(set(model.disabled) | standing_contacts(model))
    assert not standing.in_collision(np.zeros(7))
    # Reaching down through the floor, and out to the post, are contacts.
    assert standing.in_collision([0.0, 2.0, 1.2, 0, 0, 0, 0])
    post = standing.nearest([math.pi, -math.pi / 2, 0, 0, 0, 0, 0])
    assert post is not None and post.links[1] == "world/post" and post.distance < 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("obstacles: [{name: a, box: [1, 1]}]", r"obstacles\[0\].box: needs a list of 3 numbers"),
        ("obstacles: [{name: a, frame: elbow, sphere: {radius: 1}}]", r"frame 'elbow' is not 'world'"),
        ("obstacles: [{name: a, sphere: {radius: -1}}]", r"'radius' must be a positive number"),
        ("obstacles: [{name: a}]", "needs exactly one of box"),
        ("floor: high", "'floor' must be a height"),
        ("walls: 3", r"unknown keys \['walls'\]"),
        ("obstacles: [{name: a, mesh: {filename: nowhere.stl}}]", "collision mesh 'nowhere.stl' cannot be used"),
    ],
)
def test_yaml_errors_name_the_entry(tmp_path: Path, text: str, message: str) -> None:
    world = tmp_path / "bad.yaml"
    world.write_text(text, encoding="utf-8")
    with pytest.raises(Exception, match=message) as caught:
        arm_model(str(world))
    assert str(world) in str(caught.value) or "nowhere.stl" in str(caught.value)


def test_an_unreadable_world_is_a_world_error(tmp_path: Path) -> None:
    with pytest.raises(WorldError, match="missing.sdf"):
        arm_model(str(tmp_path / "missing.sdf"))

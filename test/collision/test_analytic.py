"""Distances and contacts of simple shapes against their closed forms, and placement through FK."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.collision_robots import two_bodies

from bb_robot.collision.matrix import adjacent_pairs
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.shapes import robot_parts
from bb_robot.loading import load_text


def model_of(text: str, disabled: tuple[tuple[str, str], ...] = ()) -> CollisionModel:
    robot = load_text(text).robot
    return CollisionModel(robot, robot_parts(robot), disabled)


@pytest.mark.parametrize("x", [0.5, 0.31, 1.7, -0.9])
def test_sphere_sphere_distance(x: float) -> None:
    model = model_of(two_bodies('<sphere radius="0.1"/>', '<sphere radius="0.2"/>'))
    nearest = model.nearest([x, 0.7])
    assert nearest is not None
    assert nearest.links == ("base", "mover")
    assert nearest.distance == pytest.approx(abs(x) - 0.3, abs=1e-6)
    assert not model.in_collision([x, 0.0])


def test_sphere_sphere_contact() -> None:
    model = model_of(two_bodies('<sphere radius="0.1"/>', '<sphere radius="0.2"/>'))
    assert model.in_collision([0.29, 0.0])
    assert [c.links for c in model.colliding([0.1, 0.0])] == [("base", "mover")]
    assert not model.in_collision([0.31, 0.0])


@pytest.mark.parametrize("x", [0.5, 0.3001, 2.0])
def test_box_box_distance_along_a_face(x: float) -> None:
    # base: 0.2 cube; mover: 0.4 × 0.2 × 0.2 (its half length along x is 0.2), not turned.
    model = model_of(two_bodies('<box size="0.2 0.2 0.2"/>', '<box size="0.4 0.2 0.2"/>'))
    nearest = model.nearest([x, 0.0])
    assert nearest is not None
    assert nearest.distance == pytest.approx(x - 0.1 - 0.2, abs=1e-6)


def test_box_box_turned_corner() -> None:
    # The mover (0.2 cube) turned 45° about z shows a corner at half its diagonal.
    model = model_of(two_bodies('<box size="0.2 0.2 0.2"/>', '<box size="0.2 0.2 0.2"/>'))
    nearest = model.nearest([1.0, math.pi / 4])
    assert nearest is not None
    assert nearest.distance == pytest.approx(1.0 - 0.1 - 0.1 * math.sqrt(2), abs=1e-6)
    assert model.in_collision([0.1 + 0.1 * math.sqrt(2) - 0.01, math.pi / 4])
    assert not model.in_collision([0.1 + 0.1 * math.sqrt(2) + 0.01, math.pi / 4])


@pytest.mark.parametrize(
    ("axis", "position", "expected"), [("1 0 0", 0.6, 0.6 - 0.1 - 0.05), ("0 0 1", 0.6, 0.6 - 0.25 - 0.05)]
)
def test_cylinder_sphere_distance(axis: str, position: float, expected: float) -> None:
    # Cylinder radius 0.1, length 0.5 along z; sphere radius 0.05 moving along the side or the axis.
    model = model_of(two_bodies('<cylinder radius="0.1" length="0.5"/>', '<sphere radius="0.05"/>', axis))
    nearest = model.nearest([position, 0.0])
    assert nearest is not None
    assert nearest.distance == pytest.approx(expected, abs=1e-6)


def test_placement_follows_forward_kinematics() -> None:
    # A sphere 0.3 m off the turning joint's axis, at the end of a 0.5 m slide: its centre is at
    # (0.5 + 0.3 cos θ, 0.3 sin θ); the base sphere (r 0.1) sits at the origin.
    text = two_bodies('<sphere radius="0.1"/>', '<sphere radius="0.05"/>').replace(
        '<link name="mover"><collision>', '<link name="mover"><collision><origin xyz="0.3 0 0"/>'
    )
    model = model_of(text)
    for theta in (0.0, 1.0, 2.5, -2.0):
        centre = np.array([0.5 + 0.3 * math.cos(theta), 0.3 * math.sin(theta), 0.0])
        poses = model.placements([0.5, theta])
        np.testing.assert_allclose(poses[1][:3, 3], centre, atol=1e-12)
        nearest = model.nearest([0.5, theta])
        assert nearest is not None
        assert nearest.distance == pytest.approx(np.linalg.norm(centre) - 0.15, abs=1e-6)


def test_disabled_pairs_are_not_checked() -> None:
    model = model_of(two_bodies('<sphere radius="0.1"/>', '<sphere radius="0.2"/>'), disabled=(("mover", "base"),))
    assert model.pairs == ()
    assert not model.in_collision([0.0, 0.0])
    assert model.nearest([0.0, 0.0]) is None


def test_adjacency_reaches_through_links_without_geometry() -> None:
    robot = load_text(two_bodies('<sphere radius="0.1"/>', '<sphere radius="0.2"/>')).robot
    # base and mover are joined through 'slider', which has no geometry.
    assert adjacent_pairs(robot, ["base", "mover"]) == {("base", "mover")}


def test_the_compiled_box_cull_is_the_separating_axis_test() -> None:
    """bb_robot.collision._placement_numba._boxes_apart against coal: two boxes it calls apart never
    touch, and for boxes (where the test is exact) it agrees with coal's collide at every sample."""
    numba_kernel = pytest.importorskip("bb_robot.collision._placement_numba", reason="numba is in requirements")
    import coal

    from bb_robot.model.transforms import rpy_to_matrix

    random = np.random.default_rng(3)
    agreed = 0
    for _ in range(400):
        frames = np.zeros((2, 16))
        transforms = []
        for f in frames:
            pose = np.eye(4)
            pose[:3, :3] = rpy_to_matrix(random.uniform(-np.pi, np.pi, 3))
            pose[:3, 3] = random.uniform(-0.5, 0.5, 3)
            f[:] = pose.ravel()
            transforms.append(coal.Transform3s(pose[:3, :3], pose[:3, 3]))
        halves = random.uniform(0.05, 0.4, (2, 3))
        centers = random.uniform(-0.1, 0.1, (2, 3))
        apart = numba_kernel._boxes_apart(frames, 0, 1, centers[0], halves[0], centers[1], halves[1])
        boxes = [coal.Box(*(2 * h)) for h in halves]
        placed = []
        for transform, center in zip(transforms, centers, strict=True):  # the box's centre in its frame
            offset = coal.Transform3s(np.eye(3), center)
            placed.append(transform * offset)
        result = coal.CollisionResult()
        touching = coal.collide(boxes[0], placed[0], boxes[1], placed[1], coal.CollisionRequest(), result) > 0
        assert not (apart and touching)
        agreed += apart != touching
    assert agreed == 400

"""The world's objects as physics takes them: mass and friction from YAML and SDF, static or movable.

A YAML obstacle with ``mass:`` (and ``friction:``) is a movable object; an SDF model that is not
``<static>``, with one link whose ``<inertial><mass>`` is positive, one too (friction from its
``<surface><friction><ode><mu>``); the rest are static.  Malformed values are refused naming the
file, the entry and the key; MuJoCo's document gets a free body with the solids' inertia.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from helpers.collision_robots import table_world

from bb_robot.collision.errors import WorldError
from bb_robot.collision.world import load_world
from bb_robot.mjcf import MjcfOptions, MjcfWriteError, robot_to_mjcf
from bb_robot.mjcf.bodies import SceneBody, solid_inertia
from bb_robot.model.geometry import Box, Cylinder, Mesh, Sphere
from bb_robot.resources import bundled_model
from bb_robot.urdf.builder import load_urdf

ROBOT = load_urdf(bundled_model("bb_arm.urdf"))

CUBE_MODEL = """    <model name="cube">
      <pose>0.5 0.0 0.32 0 0 0.3</pose>
      <link name="body">
        <inertial><mass>0.25</mass></inertial>
        <collision name="c">
          <geometry><box><size>0.04 0.04 0.04</size></box></geometry>
          <surface><friction><ode><mu>0.7</mu><mu2>0.7</mu2></ode></friction></surface>
        </collision>
      </link>
    </model>
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_yaml_obstacles_with_a_mass_are_movable_objects(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "w.yaml",
        """obstacles:
  - {name: table, xyz: [0.3, 0, -0.02], box: [1.4, 1.2, 0.04]}
  - {name: cube, xyz: [0.45, 0, 0.02], rpy: [0, 0, 0.5], box: [0.04, 0.04, 0.04], mass: 0.1, friction: 0.8}
  - {name: ball, xyz: [0.3, 0.2, 0.05], sphere: {radius: 0.05}, mass: 0.2}
""",
    )
    world = load_world(path, ROBOT)
    table, cube, ball = world.bodies
    assert (table.name, table.mass, table.friction, table.movable) == ("table", None, None, False)
    assert (cube.name, cube.mass, cube.friction, cube.movable) == ("cube", 0.1, 0.8, True)
    assert (ball.mass, ball.friction) == (0.2, None)
    assert cube.pose[:3, 3] == pytest.approx([0.45, 0.0, 0.02])
    assert cube.pose[:3, :3] @ np.array([1.0, 0.0, 0.0]) == pytest.approx([math.cos(0.5), math.sin(0.5), 0.0])
    # the movable ones are no configured obstacles (the planning scene learns them at run time)
    assert sorted({part.link for part in world.parts}) == ["world/table"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("mass: -0.1", "obstacles[0]: 'mass' must be a positive number"),
        ("mass: .nan", "obstacles[0]: 'mass' must be a positive number"),
        ("friction: 0", "obstacles[0]: 'friction' must be a positive number"),
        ("friction: yes", "obstacles[0]: 'friction' must be a positive number"),
    ],
)
def test_a_bad_mass_or_friction_is_refused_naming_the_entry(tmp_path: Path, entry: str, message: str) -> None:
    path = write(tmp_path, "w.yaml", f"obstacles:\n  - name: cube\n    box: [0.04, 0.04, 0.04]\n    {entry}\n")
    with pytest.raises(WorldError, match=re.escape(message)) as caught:
        load_world(path, ROBOT)
    assert path in str(caught.value)


def test_a_mesh_with_a_mass_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "w.yaml", "obstacles:\n  - {name: rock, mesh: {filename: rock.stl}, mass: 1.0}\n")
    with pytest.raises(WorldError, match=r"obstacles\[0\]: a mesh cannot have a mass"):
        load_world(path, ROBOT)


def test_an_sdf_model_that_is_not_static_with_a_mass_is_movable(tmp_path: Path) -> None:
    path = write(tmp_path, "w.sdf", table_world(CUBE_MODEL))
    bodies = {body.name: body for body in load_world(path, ROBOT).bodies}
    assert set(bodies) == {"table", "cube"}
    assert not bodies["table"].movable  # <static>true</static>
    cube = bodies["cube"]
    assert (cube.mass, cube.friction) == (0.25, 0.7)
    assert cube.pose[:3, 3] == pytest.approx([0.5, 0.0, 0.32])
    geometry, local = cube.shapes[0]
    assert geometry == Box((0.04, 0.04, 0.04)) and local == pytest.approx(np.eye(4))


def test_an_sdf_model_marked_static_stays_static_whatever_its_mass(tmp_path: Path) -> None:
    static_cube = CUBE_MODEL.replace("<pose>", "<static>true</static>\n      <pose>")
    path = write(tmp_path, "w.sdf", table_world(static_cube))
    bodies = {body.name: body for body in load_world(path, ROBOT).bodies}
    assert not bodies["cube"].movable


def test_the_inertia_of_solids_is_the_textbook_one() -> None:
    eye = np.eye(4)
    box = SceneBody("b", ((Box((0.1, 0.2, 0.3)), eye),), eye, 2.0)
    com, inertia = solid_inertia(box)
    assert com == pytest.approx([0, 0, 0])
    assert np.diag(inertia) == pytest.approx(
        [2.0 / 12 * (0.04 + 0.09), 2.0 / 12 * (0.01 + 0.09), 2.0 / 12 * (0.01 + 0.04)]
    )
    # two equal spheres 0.2 m apart: each 2/5 m r² plus m d² about the middle (parallel axes)
    apart = [np.eye(4), np.eye(4)]
    apart[0][0, 3], apart[1][0, 3] = -0.1, 0.1
    pair = SceneBody("p", ((Sphere(0.05), apart[0]), (Sphere(0.05), apart[1])), eye, 2.0)
    com, inertia = solid_inertia(pair)
    assert com == pytest.approx([0, 0, 0])
    assert inertia[1, 1] == pytest.approx(2 * (2 / 5 * 1.0 * 0.05**2 + 1.0 * 0.1**2))
    assert inertia[0, 0] == pytest.approx(2 * (2 / 5 * 1.0 * 0.05**2))
    cylinder = SceneBody("c", ((Cylinder(0.1, 0.4), eye),), eye, 3.0)
    _, inertia = solid_inertia(cylinder)
    assert np.diag(inertia) == pytest.approx([3 * (3 * 0.01 + 0.16) / 12] * 2 + [3 * 0.01 / 2])


def test_mujoco_gets_free_bodies_and_static_ones() -> None:
    mujoco = pytest.importorskip("mujoco")
    eye = np.eye(4)
    pose = np.eye(4)
    pose[:3, 3] = (0.5, 0.0, 0.3)
    bodies = (
        SceneBody("wall", ((Box((0.1, 1.0, 0.5)), eye),), eye),
        SceneBody("cube", ((Box((0.04,) * 3), eye),), pose, 0.1, 0.6),
    )
    model = mujoco.MjModel.from_xml_string(robot_to_mjcf(ROBOT, MjcfOptions(bodies=bodies)).text)
    cube, wall = model.body("object/cube"), model.body("object/wall")
    assert model.body_mass[cube.id] == pytest.approx(0.1)
    assert model.body_inertia[cube.id] == pytest.approx([0.1 * 2 * 0.04**2 / 12] * 3)
    assert model.jnt_type[model.joint("object/cube").id] == mujoco.mjtJoint.mjJNT_FREE
    assert model.body_weldid[wall.id] == 0  # welded to the world
    assert model.geom_friction[model.body_geomadr[cube.id], 0] == pytest.approx(0.6)
    mesh = (SceneBody("rock", ((Mesh("/nowhere/rock.stl"), eye),), eye, 1.0),)
    with pytest.raises(MjcfWriteError, match="object 'rock': a mesh cannot be part of an object with a mass"):
        robot_to_mjcf(ROBOT, MjcfOptions(bodies=mesh))
    twice = (bodies[0], bodies[0])
    with pytest.raises(MjcfWriteError, match="two objects are named 'wall'"):
        robot_to_mjcf(ROBOT, MjcfOptions(bodies=twice))

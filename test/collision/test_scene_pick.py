"""The scene through a pick: a movable object of the world, allowed to touch the hand, attached, detached.

The world file has a table and a 4 cm cube with a mass.  The cube is no configured obstacle (the
physics moves it): the client adds it where it is, as MoveIt's tutorial does, allows the fingers
and ``gripper_base`` to touch it while the hand closes, attaches it with them as touch links and
detaches it.  Judged from the scene's contacts: the closed fingers on the cube are no contact once
allowed; the held cube moves with the hand and is checked against the table (lowered until its
bottom, 1 cm below the fingertips, sinks into the table: a contact of ``attached/cube``, not of the
fingers); once detached it stays where it was put, wherever the arm goes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bb_robot.collision.model import CollisionModel
from bb_robot.collision.scene import Scene
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import read_srdf
from bb_robot.collision.world import load_world
from bb_robot.loading import load_file
from bb_robot.model.geometry import Box
from bb_robot.model.serial import SerialManipulator

MODELS = Path(__file__).resolve().parents[2] / "models"
SIDE = 0.04
CONTACT = SIDE / 2 - 0.005  # the finger joint's position where the inner faces meet the cube
HAND = ("gripper_base", "left_finger", "right_finger")


def tool_down(x: float, y: float, z: float) -> np.ndarray:
    pose = np.diag([1.0, -1.0, -1.0, 1.0])
    pose[:3, 3] = (x, y, z)
    return pose


@pytest.fixture(scope="module")
def pick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Scene, dict[str, np.ndarray], np.ndarray]:
    loaded = load_file(str(MODELS / "bb_arm.urdf"))
    model = CollisionModel(
        loaded.robot,
        robot_parts(loaded.robot, loaded.source),
        read_srdf(MODELS / "bb_arm.srdf", loaded.robot.links).disabled,
    )
    arm = SerialManipulator.from_urdf(str(MODELS / "bb_arm.urdf"), tip="tcp")
    grasp = tool_down(0.45, 0.0, 0.15)
    centre = grasp @ np.array([0.0, 0.0, -0.01, 1.0])  # 1 cm up the fingers from the tcp
    top = float(centre[2] - SIDE / 2) - 0.001  # 1 mm under the cube: resting on it would be a contact
    world = tmp_path_factory.mktemp("pick") / "world.yaml"
    world.write_text(
        "obstacles:\n"
        f"  - {{name: table, xyz: [0.4, 0.0, {top - 0.02!r}], box: [1.0, 1.0, 0.04]}}\n"
        f"  - {{name: cube, xyz: {[float(v) for v in centre[:3]]}, box: {[SIDE] * 3}, mass: 0.1}}\n"
    )
    names = model.fk.joint_names

    seed = arm.inverse(grasp, rng=1, timeout=None, max_restarts=100).q

    def configuration(tcp: np.ndarray, finger: float) -> np.ndarray:
        solved = arm.inverse(tcp, seed=seed, rng=1, timeout=None, max_restarts=100).q
        q = dict(zip(arm.joint_names, solved, strict=True))
        q["left_finger_joint"] = finger
        return np.array([q.get(n, 0.0) for n in names])

    poses = {
        "open": configuration(grasp, 0.04),
        "closed": configuration(grasp, CONTACT),
        "lifted": configuration(tool_down(0.45, 0.0, 0.25), CONTACT),
        "sunk": configuration(tool_down(0.45, 0.0, 0.145), CONTACT),  # the cube's bottom 4 mm into the table
        "away": configuration(tool_down(0.3, 0.25, 0.3), 0.04),
    }
    return Scene(model, load_world(str(world), loaded.robot)), poses, centre


def contacts(scene: Scene, q: np.ndarray) -> set[tuple[str, str]]:
    return {c.links for c in scene.colliding(q)}


def test_a_movable_object_is_no_configured_obstacle(pick: tuple[Scene, dict, np.ndarray]) -> None:
    scene, _, _ = pick
    assert scene.configured_obstacles == ("world/table",)
    assert [b.name for b in scene.world.bodies if b.movable] == ["cube"]


def test_allowed_attached_carried_checked_and_left_where_it_was_put(pick: tuple[Scene, dict, np.ndarray]) -> None:
    scene, q, centre = pick
    cube = np.eye(4)
    cube[:3, 3] = centre[:3]
    scene.add_object("cube", [(Box((SIDE,) * 3), np.eye(4))], cube)
    assert not contacts(scene, q["open"])  # the open fingers around it
    closed = contacts(scene, q["closed"])
    assert closed and all("world/cube" in pair for pair in closed)  # the fingers on its faces
    for link in HAND:
        scene.allow("cube", link)
    assert not contacts(scene, q["closed"])  # allowed while the hand closes
    scene.attach("cube", "gripper_base", q["closed"], ["left_finger", "right_finger"])
    for link in HAND:
        scene.disallow("cube", link)  # the touch links allow it now
    assert not contacts(scene, q["closed"]) and not contacts(scene, q["lifted"])
    # carried: lowered into the table, the held cube (not the fingers) meets it
    assert contacts(scene, q["sunk"]) == {("attached/cube", "world/table")}
    scene.detach("cube", q["lifted"])
    put = scene.objects["cube"].pose
    assert put[:3, 3] == pytest.approx(centre[:3] + [0.0, 0.0, 0.1], abs=1e-4)
    assert not contacts(scene, q["away"])
    assert scene.objects["cube"].pose == pytest.approx(put)  # where it was put, wherever the arm goes
    # the open fingers at the put-down pose are no contact; closed there without an allowance, they are
    assert not contacts(scene, q["away"])
    lifted_closed = contacts(scene, q["lifted"])
    assert lifted_closed and all("world/cube" in pair for pair in lifted_closed)

"""``backend: mujoco`` with the world's objects: free bodies judged against statics.

A free cube comes to rest on a static table at half its height above the table top, upright; the
bundled arm's gripper closes on it with the fingers' position actuator and lifts it: it rises with
the hand when the friction the squeeze makes possible, ``μ·F`` (two fingers, each pressing with
half the actuator's force ``F``: the right finger mimics the left through an equality constraint,
so the actuator carries both contacts), is more than the cube's weight, and stays on the table
when it is less.  Everything runs in lockstep on a simulated clock (:mod:`mujoco_rig`).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from helpers.mujoco_rig import Rig, make_rig  # noqa: E402

from bb_robot.driver.commands.commands import CommandMode  # noqa: E402
from bb_robot.mjcf.bodies import SceneBody  # noqa: E402
from bb_robot.model.geometry import Box  # noqa: E402
from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402
from bb_robot.model.serial import SerialManipulator  # noqa: E402
from bb_robot.model.transforms import quaternion_to_matrix  # noqa: E402
from bb_robot.resources import bundled_model  # noqa: E402
from bb_robot.urdf.builder import load_urdf  # noqa: E402

G = 9.81
SIDE, MASS = 0.04, 0.1
OPEN, CLOSED = 0.04, 0.0


def placed(x: float, y: float, z: float, rotation: np.ndarray | None = None) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, 3] = (x, y, z)
    if rotation is not None:
        pose[:3, :3] = rotation
    return pose


def tool_down(x: float, y: float, z: float) -> np.ndarray:
    """The tcp at (x, y, z) pointing down (its z axis along the world's −z)."""
    return placed(x, y, z, np.diag([1.0, -1.0, -1.0]))


def table(top: float) -> SceneBody:
    return SceneBody("table", ((Box((1.0, 1.0, 0.04)), np.eye(4)),), placed(0.4, 0.0, top - 0.02))


def cube(pose: np.ndarray, friction: float | None = 1.0) -> SceneBody:
    return SceneBody("cube", ((Box((SIDE, SIDE, SIDE)), np.eye(4)),), pose, MASS, friction)


def cube_pose(rig: Rig) -> np.ndarray:
    poses = rig.backend.object_poses()
    assert poses is not None
    index = poses.names.index("cube")
    return placed(*poses.positions[index], quaternion_to_matrix(poses.quaternions[index])[:3, :3])


def test_a_free_cube_comes_to_rest_on_the_table_at_half_its_height() -> None:
    robot = load_urdf(bundled_model("bb_arm.urdf"))
    top = 0.1
    start = placed(0.5, 0.2, top + SIDE / 2 + 0.01, quaternion_to_matrix((0.0, 0.0, np.sin(0.2), np.cos(0.2)))[:3, :3])
    rig = make_rig(robot, objects=(table(top), cube(start)))
    rig.run(1.0)
    pose = cube_pose(rig)
    # fallen 1 cm and at rest: half its side above the top (MuJoCo's soft contact sinks it < 0.2 mm)
    assert pose[2, 3] == pytest.approx(top + SIDE / 2, abs=2e-4)
    assert pose[:2, 3] == pytest.approx(start[:2, 3], abs=1e-5)
    assert pose[:3, 2] @ np.array([0.0, 0.0, 1.0]) > np.cos(np.radians(0.1))  # upright
    # the measured pose is MuJoCo's body pose; the table, static, has not moved
    data = rig.backend.data
    assert pose[:3, 3] == pytest.approx(data.body("object/cube").xpos)
    poses = rig.backend.object_poses()
    assert poses is not None and poses.names == ("table", "cube")
    assert poses.positions[0] == pytest.approx([0.4, 0.0, top - 0.02])


def grasp_and_lift(friction: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Close the fingers on a cube on a table, lift the hand 10 cm; the actuator's squeeze force and
    the cube's pose in the tcp frame after the close and 1 s after the lift."""
    path = bundled_model("bb_arm.urdf")
    robot = load_urdf(path)
    arm = SerialManipulator.from_urdf(path, tip="tcp")
    grasp = tool_down(0.45, 0.0, 0.15)
    q0 = arm.inverse(grasp, rng=1, timeout=None, max_restarts=100).q
    q1 = arm.inverse(tool_down(0.45, 0.0, 0.25), seed=q0, rng=1, timeout=None, max_restarts=100).q
    held = grasp @ placed(0.0, 0.0, -0.01)  # the cube's centre 1 cm up the fingers from the tcp
    rig = make_rig(
        robot, {"initial_positions": [*q0, OPEN]}, objects=(table(held[2, 3] - SIDE / 2), cube(held, friction))
    )
    fk = ForwardKinematics(robot)

    def in_tcp() -> np.ndarray:
        poses = fk.poses(dict(zip(rig.joints, (float(v) for v in rig.sample.positions), strict=True)))
        return np.linalg.inv(poses["tcp"]) @ cube_pose(rig)

    rig.command(CommandMode.POSITION, [*q0, CLOSED])
    rig.run(1.0)
    force = abs(float(rig.sample.efforts[rig.joints.index("left_finger_joint")]))
    closed = in_tcp()
    for k in range(1, 501):  # a smooth 1 s lift (smoothstep), one command per cycle
        s = k / 500
        rig.command(CommandMode.POSITION, [*(q0 + (q1 - q0) * s * s * (3 - 2 * s)), CLOSED])
        rig.run(0.002)
    rig.run(1.0)
    return force, closed, in_tcp()


@pytest.mark.parametrize("friction", [1.0, 0.2])
def test_a_squeezed_cube_is_lifted_when_the_friction_outweighs_it(friction: float) -> None:
    force, closed, lifted = grasp_and_lift(friction)
    assert force > 0.5  # the fingers stopped on the cube and push
    holds = friction * force > MASS * G
    assert holds == (friction == 1.0)  # the two cases are on either side of the weight
    slip = float(np.linalg.norm(lifted[:3, 3] - closed[:3, 3]))
    if holds:
        assert slip < 1e-3  # carried with the hand, within 1 mm
        angle = np.degrees(np.arccos(np.clip((np.trace(closed[:3, :3].T @ lifted[:3, :3]) - 1) / 2, -1, 1)))
        assert angle < 1.0
    else:
        assert slip == pytest.approx(0.1, abs=2e-3)  # left on the table: the hand rose 10 cm without it


def test_the_steps_a_static_object_touches_a_movable_one_are_counted_and_reported() -> None:
    robot = load_urdf(bundled_model("bb_arm.urdf"))
    wall = SceneBody("wall", ((Box((0.2, 0.2, 0.1)), np.eye(4)),), placed(0.6, 0.4, 0.05))
    rig = make_rig(robot, objects=(wall, cube(placed(0.6, 0.4, 0.1 + SIDE / 2 + 0.005))))
    values = rig.backend.health().values
    assert values["contact steps wall/objects"] == "0" and values["contact steps wall/robot"] == "0"
    rig.run(1.0)  # the cube falls 5 mm onto the wall and rests there: every step after touches it
    values = rig.backend.health().values
    steps = int(values["physics steps"])
    assert steps * 0.8 < int(values["contact steps wall/objects"]) <= steps
    assert values["contact steps wall/robot"] == "0"  # the arm stands far from it
    assert "contact steps cube/objects" not in values  # movable objects are not counted against others

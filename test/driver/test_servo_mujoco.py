"""The servo against drift, on MuJoCo in lockstep (its joints lag their references as a real arm's
do), on the simulated clock: the tool pose is the forward kinematics of the *measured* joints."""

from __future__ import annotations

import numpy as np
from helpers.servo_rig import make_rig

from bb_robot.driver.servo_math import rotation_vector


def test_angular_twist_about_the_tool_keeps_the_tool_point_within_a_millimetre_for_ten_seconds():
    rig = make_rig(backend="mujoco")
    rig.run(0.5)
    start = rig.tool()
    worst = [0.0]

    def each() -> None:
        rig.twist((0.0, 0.0, 0.0), (0.0, 0.0, 0.3), frame="tcp")
        worst[0] = max(worst[0], float(np.linalg.norm(rig.tool()[:3, 3] - start[:3, 3])))

    rig.run(10.0, each)
    turned = rotation_vector(start[:3, :3].T @ rig.tool()[:3, :3])
    assert turned[2] > 0.5  # it did turn (wrapping past pi is fine: the tool point is what counts)
    assert worst[0] < 1e-3, worst[0]


def test_linear_twist_keeps_the_orientation_within_a_milliradian():
    rig = make_rig(backend="mujoco")
    rig.run(0.5)
    start = rig.tool()
    worst = [0.0]

    def each() -> None:
        rig.twist((0.0, 0.03, -0.01))
        worst[0] = max(worst[0], float(np.linalg.norm(rotation_vector(rig.tool()[:3, :3] @ start[:3, :3].T))))

    rig.run(3.0, each)
    assert np.linalg.norm(rig.tool()[:3, 3] - start[:3, 3]) > 0.08
    assert worst[0] < 1e-3, worst[0]


def test_a_held_pose_stays_within_a_tenth_of_a_millimetre_for_a_minute():
    rig = make_rig(backend="mujoco")
    rig.run(0.5)
    target = rig.tool().copy()
    target[:3, 3] += (0.02, 0.0, 0.02)
    rig.pose(target)
    rig.run(2.0)
    worst = [0.0]

    def each() -> None:
        worst[0] = max(worst[0], float(np.linalg.norm(rig.tool()[:3, 3] - target[:3, 3])))

    rig.run(60.0, each)
    assert worst[0] < 1e-4, worst[0]

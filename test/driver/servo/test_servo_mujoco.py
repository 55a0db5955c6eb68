"""The servo against drift, on MuJoCo in lockstep (its joints lag their references as a real arm's
do), on the simulated clock: the tool pose is the forward kinematics of the *measured* joints."""

from __future__ import annotations

import numpy as np
from helpers.servo_rig import PERIOD, make_rig

from bb_robot.driver.servo.servo_math import rotation_vector


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


def progress_along(circle, tool: np.ndarray) -> float:
    """How far (m, along the circle) the tool point has gone round ``circle`` (unwrapped by the caller)."""
    offset = tool[:3, 3] - circle.center
    return float(np.arctan2(offset @ circle.start[:3, 1], offset @ circle.start[:3, 0]))


def test_a_pose_stream_paused_mid_turn_stops_where_the_tool_is_and_never_goes_back():
    # The Cartesian demo's circle streamed at 100 Hz (its time runs on through the pause, as the
    # demo's does), silent for 0.3 s at the middle of the turn, where the tool is fastest
    # (0.15 m/s): the servo stops where the tool is, within the accelerations, and never turns
    # back towards the last pose received (which would be up to 15 mm back at 0.1 s of timeout).
    from bb_robot.bringup.cartesian import STREAM_RATE, Circle

    rig = make_rig(backend="mujoco")
    rig.run(0.5)
    circle = Circle(rig.tool())
    every = int(round(1.0 / (STREAM_RATE * PERIOD)))
    pause = (2.0, 2.3)
    angles, states = [], set()
    for k in range(int(round((circle.duration + 0.5) / PERIOD))):
        t = k * PERIOD
        if k % every == 0 and not pause[0] <= t < pause[1]:
            rig.pose(circle.pose(t))
        rig.run(PERIOD)
        angles.append(progress_along(circle, rig.tool()))
        if pause[0] + 0.15 <= t < pause[1]:
            states.add((rig.servo.status.state, rig.servo.status.reason.split(" (")[0]))
    along = np.unwrap(angles) * circle.radius
    back = float(np.max(np.maximum.accumulate(along) - along))
    assert back < 1e-3, f"the tool went {back * 1000:.2f} mm back along the circle"
    assert along[-1] > 2 * np.pi * circle.radius - 1e-3  # the turn was completed after the pause
    assert any("stream" in reason for _, reason in states), states

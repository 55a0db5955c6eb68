"""The Cartesian demo's circle and ready pose (``bb-robot up --demo-cartesian``).

The ready pose is checked by what the demo needs, with the model's own inverse kinematics (tested
against Pinocchio in test/model) and the driver's collision model: the whole circle followed
continuously, well-conditioned, clear of the joint limits and of the arm itself.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bb_robot.bringup import cartesian
from bb_robot.bringup.cartesian import Circle, min_jerk, ready_configuration
from bb_robot.cli.up_cartesian import collision_check, servo_chain
from bb_robot.cli.up_inputs import UpError, plan_bringup
from bb_robot.model.dexterity import reach
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import quaternion_to_matrix
from bb_robot.urdf.builder import load_urdf

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"


def test_min_jerk_starts_and_ends_at_rest() -> None:
    assert min_jerk(0.0) == 0.0 and min_jerk(1.0) == 1.0 and min_jerk(0.5) == pytest.approx(0.5)
    assert min_jerk(-1.0) == 0.0 and min_jerk(2.0) == 1.0
    h = 1e-6
    for s in (0.0, 1.0):  # zero velocity and acceleration at both ends (one-sided differences)
        inside = s + h if s == 0.0 else s - h
        assert abs(min_jerk(inside) - min_jerk(s)) / h < 1e-6


def test_the_circle_passes_through_the_start_in_the_tool_plane() -> None:
    start = np.eye(4)
    start[:3, :3] = quaternion_to_matrix((0.2, -0.3, 0.1, 0.9))
    start[:3, 3] = (0.4, -0.1, 0.6)
    circle = Circle(start)
    times = np.linspace(0.0, circle.duration, 81)
    points = np.array([circle.pose(t)[:3, 3] for t in times])
    np.testing.assert_allclose(points[0], start[:3, 3], atol=1e-12)
    np.testing.assert_allclose(points[-1], start[:3, 3], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(points - circle.center, axis=1), cartesian.RADIUS, atol=1e-12)
    np.testing.assert_allclose((points - circle.center) @ start[:3, 2], 0.0, atol=1e-12)  # normal to tool z
    assert circle.deviation(points).max() < 1e-12
    # Half-way through the turn it is at the far side: two radii from the start.
    assert np.linalg.norm(circle.pose(circle.duration / 2)[:3, 3] - start[:3, 3]) == pytest.approx(0.1)
    for t in times:
        np.testing.assert_allclose(circle.pose(t)[:3, :3], start[:3, :3])
    # A point off the circle: its distance (out of the plane and radially) combined.
    off = circle.center + 0.003 * start[:3, 2] + (cartesian.RADIUS + 0.004) * start[:3, 0]
    assert circle.deviation(off)[0] == pytest.approx(0.005)


def test_the_bundled_arms_ready_pose_lets_it_draw_the_circle_clear_of_itself() -> None:
    plan = plan_bringup(None)
    chain = servo_chain(plan)
    assert chain.tip_link == "tcp"
    clear = collision_check(plan, chain)
    assert clear is not None
    zero = np.zeros(chain.dof)
    ready = ready_configuration(chain, zero, clear=clear)
    np.testing.assert_array_equal(ready, ready_configuration(chain, zero, clear=clear))  # reproducible
    lower, upper = np.array(chain.lower_limits), np.array(chain.upper_limits)
    followed = cartesian.follow_circle(chain, ready, lower, upper, reach(chain))
    assert followed is not None
    rows, worst = followed
    assert worst >= cartesian.READY_MEASURE
    assert (rows >= lower + cartesian.LIMIT_CLEARANCE - 1e-9).all() and (
        rows <= upper - cartesian.LIMIT_CLEARANCE + 1e-9
    ).all()
    circle = Circle(chain.end_effector_pose(ready))
    tool = np.array([chain.end_effector_pose(q)[:3, 3] for q in rows])
    assert circle.deviation(tool).max() < 1e-4
    assert clear(rows) and clear(zero + np.linspace(0, 1, 20)[:, None] * (ready - zero))
    # bb_arm's zero pose (stretched straight up) is singular: the reason for a ready pose.
    assert cartesian.measure(chain, zero, reach(chain)) < 1e-6


def test_a_chain_of_five_joints_tracks_the_circle_by_position() -> None:
    chain = SerialManipulator.from_robot(load_urdf(BB_ARM), "wrist_2_link", strict=False)
    assert chain.dof == 5
    ready = ready_configuration(chain, np.zeros(chain.dof))
    followed = cartesian.follow_circle(
        chain, ready, np.array(chain.lower_limits), np.array(chain.upper_limits), reach(chain)
    )
    assert followed is not None and followed[1] >= cartesian.READY_MEASURE


def test_a_chain_that_cannot_draw_the_circle_is_refused_naming_it() -> None:
    one_joint = load_urdf(BB_ARM)
    chain = SerialManipulator.from_robot(one_joint, "shoulder_link", strict=False)
    assert chain.dof == 1
    with pytest.raises(cartesian.CartesianDemoError, match=r"chain base_link -> shoulder_link: no ready pose"):
        ready_configuration(chain, np.zeros(1))


def test_a_parameter_file_without_the_servo_is_refused_before_anything_starts() -> None:
    plan = plan_bringup(str(BB_ARM))  # generic.yaml: the servo is off
    with pytest.raises(UpError, match=r"servo is off in .*generic.yaml.*servo.enable"):
        servo_chain(plan)
    assert math.isfinite(reach(servo_chain(plan_bringup(None))))


def test_a_turn_is_judged_only_without_pauses_over_the_limit() -> None:
    period = 1.0 / cartesian.STREAM_RATE
    steady = [k * period for k in range(450)]
    assert cartesian.TurnTiming(steady, [0.03, 0.04]).pause() == ""
    # The stream paused for 0.3 s at t = 1.5 s: named with its length and time.
    paused = [t for t in steady if t < 1.5] + [t + 0.3 for t in steady if t >= 1.5]
    assert cartesian.TurnTiming(paused, []).pause() == "the pose stream paused for 0.31 s at t = 1.49 s"
    # The driver's joint states paused longer than the stream: that is named.
    assert cartesian.TurnTiming(steady, [0.02, 0.12]).pause() == "the driver's joint states paused for 0.12 s"
    assert cartesian.TurnTiming(paused, [0.12]).pause().startswith("the pose stream paused for 0.31 s")
    # Exactly the limit still counts as steady.
    limit = [0.0, cartesian.MAX_GAP, 2 * cartesian.MAX_GAP]
    assert cartesian.TurnTiming(limit, [cartesian.MAX_GAP]).pause() == ""
    assert cartesian.TurnTiming([], []).pause() == "" and cartesian.TurnTiming([0.0], []).pause() == ""
    # The stream was steady when sent, but what the driver received fell silent (its servo counted it).
    assert cartesian.TurnTiming(steady, [0.03], 1).pause() == "the pose stream the driver received fell silent once"
    assert cartesian.TurnTiming(steady, [], 4).pause() == "the pose stream the driver received fell silent 4 times"
    assert cartesian.TurnTiming(paused, [], 4).pause().startswith("the pose stream paused for 0.31 s")


def test_the_tool_is_at_rest_only_once_it_stayed_put_for_the_whole_window() -> None:
    still = cartesian.Stillness(distance=1e-4, window=0.2)
    # closing a goal-tolerance error: 3 mm in 0.3 s, then put
    stamps = np.arange(0.0, 1.0, 0.01)
    x = np.where(stamps < 0.3, 0.003 * (1.0 - stamps / 0.3), 0.0)
    verdicts = [still.add(float(t), [float(v), 0.0, 0.0]) for t, v in zip(stamps, x, strict=True)]
    first = verdicts.index(True)
    # not while it moved, nor before a whole window had passed since it was last 0.1 mm away
    # (at 0.29 s, 0.1 mm from where it stops)
    assert abs(stamps[first] - 0.49) < 1e-9, stamps[first]
    assert all(verdicts[first:])
    # a joint state seen again (the same stamp) or an older one changes nothing
    assert still.add(0.5, [1.0, 0.0, 0.0]) is True
    # moving again: not at rest
    assert still.add(1.0, [0.001, 0.0, 0.0]) is False


def test_a_tool_seen_for_less_than_the_window_is_not_yet_at_rest() -> None:
    still = cartesian.Stillness(distance=1e-4, window=0.2)
    assert not still.add(0.0, [0.0, 0.0, 0.0])
    assert not still.add(0.1, [0.0, 0.0, 0.0])
    assert still.add(0.2, [0.0, 0.0, 0.0])

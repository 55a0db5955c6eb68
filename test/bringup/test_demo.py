"""The demo motion: every joint through at least 30 % of its range, within limits, in at most 10 s."""

from __future__ import annotations

import math

import pytest

from bb_robot.bringup.demo import DemoError, JointRange, demo_points, moved_fraction
from bb_robot.cli.up_inputs import plan_bringup

REVOLUTE = JointRange("a", -2.0, 2.0, 1.5, 4.0)
PRISMATIC = JointRange("finger", 0.0, 0.04, 0.05, 0.5)
CONTINUOUS = JointRange("wheel", None, None, 2.0, 5.0)


def _peak_velocity_and_acceleration(distance: float, duration: float) -> tuple[float, float]:
    # minimum-jerk profile s(t) = d (10 τ³ - 15 τ⁴ + 6 τ⁵): peaks 15/8 d/T and 10/√3 d/T²
    return 15 / 8 * distance / duration, 10 / math.sqrt(3) * distance / duration**2


def test_every_joint_moves_through_30_percent_of_its_range_within_limits() -> None:
    joints = [REVOLUTE, PRISMATIC, CONTINUOUS]
    points = demo_points(joints, {"a": 0.3, "wheel": 1.0})
    assert len(points) == 2 and 0 < points[0].time < points[1].time <= 10.0
    for index, joint in enumerate(joints):
        first, second = points[0].positions[index], points[1].positions[index]
        start = {"a": 0.3, "finger": 0.0, "wheel": 1.0}[joint.name]
        assert moved_fraction(joint, start, [first, second]) >= 0.3
        if joint.lower is not None and joint.upper is not None:
            assert joint.lower <= min(first, second) and max(first, second) <= joint.upper
        # each segment within the joint's velocity and acceleration limits
        previous, begin = start, 0.0
        for point in points:
            velocity, acceleration = _peak_velocity_and_acceleration(
                abs(point.positions[index] - previous), point.time - begin
            )
            assert velocity <= joint.max_velocity and acceleration <= joint.max_acceleration
            previous, begin = point.positions[index], point.time


def test_a_continuous_joint_moves_around_where_it_is() -> None:
    (first, second) = demo_points([CONTINUOUS], {"wheel": 10.0})
    assert 10.0 - math.pi / 2 <= first.positions[0] < second.positions[0] <= 10.0 + math.pi / 2


def test_too_slow_a_joint_is_refused_naming_it() -> None:
    slow = JointRange("slow", -3.0, 3.0, 0.1, 1.0)
    with pytest.raises(DemoError, match="'slow'"):
        demo_points([slow], {})


def test_a_joint_without_limits_to_move_by_is_refused() -> None:
    with pytest.raises(DemoError, match="'stuck'"):
        demo_points([JointRange("stuck", -1.0, 1.0, 0.0, 1.0)], {})
    with pytest.raises(DemoError, match="no joints"):
        demo_points([], {})


def test_the_bundled_arm_demo_fits_in_ten_seconds() -> None:
    plan = plan_bringup(None)
    assert {j.name for j in plan.demo_joints} >= {"shoulder_pan_joint", "left_finger_joint"}
    points = demo_points(plan.demo_joints, {})
    assert points[-1].time <= 10.0
    assert plan.demo_time == pytest.approx(points[-1].time)

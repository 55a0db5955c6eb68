"""Trajectories: interpolation (C2 spline, cubic and quintic Hermite), checks, timing against limits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers.driver_rig import JOINTS, arm_limits

from bb_robot.driver.commands.trajectory import TrajectoryOptions, TrajectoryPoint, build_trajectory, evaluate_all
from bb_robot.driver.errors import INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP, TrajectoryRejected

ZERO = np.zeros(3)
S = 1_000_000_000


def build(points: list[TrajectoryPoint], names=JOINTS, current=ZERO, velocity=ZERO, start=0, now=0, **options):  # type: ignore[no-untyped-def]
    return build_trajectory(
        names,
        points,
        arm_limits(),
        np.asarray(current, float),
        np.asarray(velocity, float),
        start_ns=start,
        now_ns=now,
        options=TrajectoryOptions(**options),
    )


def test_positions_only_is_a_c2_spline_through_the_points_from_the_current_state() -> None:
    points = [
        TrajectoryPoint(1.0, [0.5, 1.0, 0.1]),
        TrajectoryPoint(2.5, [1.0, -0.5, 0.2]),
        TrajectoryPoint(4.0, [0.2, 0.0, 0.1]),
    ]
    trajectory = build(points, current=[0.0, 0.5, 0.0])
    assert trajectory.knots.tolist() == [0.0, 1.0, 2.5, 4.0]  # a first segment from the current state
    for point in points:
        p, _, _ = trajectory.sample_at(point.time)
        assert np.allclose(p, point.positions, atol=1e-12)
    p0, v0, _ = trajectory.sample_at(0.0)
    assert np.allclose(p0, [0.0, 0.5, 0.0]) and np.allclose(v0, 0.0)
    assert np.allclose(trajectory.sample_at(4.0)[1], 0.0)  # ends at rest
    for knot in trajectory.knots[1:-1]:  # velocity and acceleration continuous at the inner knots
        before, after = trajectory.sample_at(knot - 1e-9), trajectory.sample_at(knot + 1e-9)
        assert np.allclose(before[1], after[1], atol=1e-6) and np.allclose(before[2], after[2], atol=1e-5)


def test_cubic_and_quintic_match_the_given_velocities_and_accelerations() -> None:
    cubic = build(
        [
            TrajectoryPoint(0.0, [0, 0, 0], [0, 0, 0]),
            TrajectoryPoint(1.0, [0.5, 0.5, 0.1], [0.3, -0.2, 0.05]),
            TrajectoryPoint(2.0, [0.6, 0.0, 0.1], [0, 0, 0]),
        ],
        allow_nonzero_end_velocity=False,
    )
    p, v, _ = cubic.sample_at(1.0)
    assert np.allclose(p, [0.5, 0.5, 0.1]) and np.allclose(v, [0.3, -0.2, 0.05])
    quintic = build(
        [
            TrajectoryPoint(0.0, [0, 0, 0], [0, 0, 0], [0, 0, 0]),
            TrajectoryPoint(1.0, [0.5, 0.5, 0.1], [0.3, -0.2, 0.05], [0.5, -1.0, 0.0]),
            TrajectoryPoint(2.0, [0.6, 0.0, 0.1], [0, 0, 0], [0, 0, 0]),
        ]
    )
    p, v, a = quintic.sample_at(1.0)
    assert np.allclose(p, [0.5, 0.5, 0.1]) and np.allclose(v, [0.3, -0.2, 0.05]) and np.allclose(a, [0.5, -1.0, 0.0])


def test_sampling_outside_the_trajectory_holds_its_ends_and_index_follows_points() -> None:
    trajectory = build([TrajectoryPoint(1.0, [0.5, 0, 0]), TrajectoryPoint(2.0, [1.0, 0, 0])], start=5 * S)
    assert np.allclose(trajectory.sample(0)[0], 0.0)
    assert np.allclose(trajectory.sample(10 * S)[0], [1.0, 0, 0])
    assert trajectory.end_ns == 7 * S
    assert [trajectory.point_index(5 * S + int(t * S)) for t in (0.5, 1.5, 3.0)] == [0, 1, 1]


@pytest.mark.parametrize(
    ("names", "points", "code", "text"),
    [
        ([], [TrajectoryPoint(1, [])], INVALID_JOINTS, "names no joints"),
        (["j1", "x", "j3"], [TrajectoryPoint(1, [0, 0, 0])], INVALID_JOINTS, "unknown joint 'x'"),
        (["j1", "j1", "j3"], [TrajectoryPoint(1, [0, 0, 0])], INVALID_JOINTS, "named twice"),
        (["j1", "j2"], [TrajectoryPoint(1, [0, 0])], INVALID_JOINTS, "leaves out joints j3"),
        (JOINTS, [], INVALID_GOAL, "no points"),
        (JOINTS, [TrajectoryPoint(1, [0, 0, 0]), TrajectoryPoint(1, [0, 0, 0])], INVALID_GOAL, "increase strictly"),
        (JOINTS, [TrajectoryPoint(-1, [0, 0, 0])], INVALID_GOAL, "negative time_from_start"),
        (JOINTS, [TrajectoryPoint(1, [0, 0])], INVALID_GOAL, "point 0 has 2 positions for 3 joints"),
        (
            JOINTS,
            [TrajectoryPoint(1, [0, 0, 0], [0, 0, 0]), TrajectoryPoint(2, [0, 0, 0])],
            INVALID_GOAL,
            "point 1 has no velocities but point 0 has",
        ),
        (JOINTS, [TrajectoryPoint(1, [0, 0, 0], [], [0, 0, 0])], INVALID_GOAL, "accelerations but no velocities"),
        (JOINTS, [TrajectoryPoint(1, [0, 0, 0], effort=[1, 1, 1])], INVALID_GOAL, "efforts"),
        (JOINTS, [TrajectoryPoint(1, [0, float("nan"), 0])], INVALID_GOAL, "not a finite number"),
        (JOINTS, [TrajectoryPoint(1, [0, 0, 0], [0.1, 0, 0])], INVALID_GOAL, "last point's velocity"),
        (JOINTS, [TrajectoryPoint(0, [0.3, 0, 0])], INVALID_GOAL, "starts at once 0.3 away"),
        # Found by fuzzing: times that make the polynomials overflow used to give NaN, which no check caught.
        (JOINTS, [TrajectoryPoint(5e-324, [0.3, 0, 0])], INVALID_GOAL, "starts at once 0.3 away"),
        (JOINTS, [TrajectoryPoint(1, [0, 0, 0]), TrajectoryPoint(1 + 1e-9, [0.1, 0, 0])], INVALID_GOAL, "by at least"),
        (JOINTS, [TrajectoryPoint(3.6e307, [0, 0, 0])], INVALID_GOAL, "is the unit nanoseconds"),
        (JOINTS, [TrajectoryPoint(2e6, [0, 0, 0])], INVALID_GOAL, "more than 1e+06 s"),
        # Found by fuzzing: a huge time between two others overflowed the check of their differences.
        (
            JOINTS,
            [TrajectoryPoint(1, [0, 0, 0]), TrajectoryPoint(1.7e308, [0, 0, 0]), TrajectoryPoint(-1.7e308, [0, 0, 0])],
            INVALID_GOAL,
            "point 1 has a time_from_start of 1.7e+308 s",
        ),
    ],
)
def test_invalid_trajectories_are_rejected_with_the_reason(names, points, code, text) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TrajectoryRejected) as info, warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow on the way is a defect too
        build(points, names=names)
    assert info.value.code == code and text in info.value.reason


def test_partial_joints_when_allowed() -> None:
    trajectory = build([TrajectoryPoint(1, [0.4])], names=["j2"], allow_partial_joints=True)
    assert trajectory.indices.tolist() == [1]


def test_timing_beyond_the_velocity_limit_is_rejected_not_retimed() -> None:
    with pytest.raises(TrajectoryRejected) as info:
        build([TrajectoryPoint(0.5, [1.0, 0, 0])])
    reason = info.value.reason
    assert info.value.code == INVALID_GOAL
    assert "velocity" in reason and "'j1'" in reason and "above its velocity limit 1.5" in reason
    assert "from the current state to point 0" in reason


def test_timing_beyond_the_acceleration_limit_is_rejected() -> None:
    # 0.08 m in 0.5 s from rest to rest: peak velocity 0.24 (limit 0.25), acceleration 1.92 (limit 1).
    build([TrajectoryPoint(0.5, [0.08, 0, 0])])
    with pytest.raises(TrajectoryRejected, match="acceleration 1.9.* for joint 'j3'.*limit 1 "):
        build([TrajectoryPoint(0.5, [0, 0, 0.08])])


def test_limit_margin_admits_a_trajectory_just_over_the_limit() -> None:
    # Rest to rest by a cubic: peak velocity 1.5 d / T, acceleration 6 d / T^2; d = T = 1.5 meets
    # both limits of j1 (1.5 rad/s, 4 rad/s^2) exactly.
    build([TrajectoryPoint(1.5, [1.5, 0, 0])], limit_margin=0.0)
    with pytest.raises(TrajectoryRejected):
        build([TrajectoryPoint(1.5, [1.51, 0, 0])], limit_margin=0.0)
    build([TrajectoryPoint(1.5, [1.51, 0, 0])], limit_margin=0.02)


def test_positions_outside_the_limits_with_reject_policy() -> None:
    with pytest.raises(TrajectoryRejected, match="outside its limits"):
        build([TrajectoryPoint(3.0, [1.9, 0, 0])], limit_policy="reject")
    build([TrajectoryPoint(3.0, [1.9, 0, 0])], limit_policy="clamp")  # clamped while executing


def test_start_tolerance_and_header_stamps() -> None:
    build([TrajectoryPoint(0.0, [0.04, 0, 0]), TrajectoryPoint(1.0, [0.1, 0, 0])])  # within 0.05
    with pytest.raises(TrajectoryRejected) as info:
        build([TrajectoryPoint(1.0, [0.1, 0, 0])], start=0, now=2 * S)
    assert info.value.code == OLD_HEADER_TIMESTAMP and "in the past" in info.value.reason
    # Started 0.5 s ago: execution joins the first segment where it is now, from the current state.
    late = build([TrajectoryPoint(1.0, [0.1, 0, 0]), TrajectoryPoint(2.0, [0.2, 0, 0])], start=0, now=S // 2)
    assert late.knots[0] == pytest.approx(0.5)
    # The first point already due and far from the current state: too old.
    with pytest.raises(TrajectoryRejected) as info:
        build([TrajectoryPoint(0.2, [0.5, 0, 0]), TrajectoryPoint(3.0, [0.6, 0, 0])], start=0, now=S // 2)
    assert info.value.code == OLD_HEADER_TIMESTAMP
    future = build([TrajectoryPoint(1.0, [0.1, 0, 0])], start=3 * S, now=0)
    assert future.knots[0] == 0.0 and future.start_ns == 3 * S


def test_evaluate_all_is_consistent_with_sample() -> None:
    trajectory = build([TrajectoryPoint(1.0, [0.5, 0.2, 0.1]), TrajectoryPoint(3.0, [-0.5, 0.0, 0.2])])
    times, position, velocity, acceleration = evaluate_all(trajectory, samples=5)
    for s in range(times.shape[0]):
        for k in range(times.shape[1]):
            p, v, a = trajectory.sample_at(float(times[s, k]))
            assert (
                np.allclose(p, position[s, k]) and np.allclose(v, velocity[s, k]) and np.allclose(a, acceleration[s, k])
            )


def test_clamp_near_rejects_points_beyond_the_margin_and_keeps_those_within() -> None:
    # j1: command range +-1.8 (soft limits), revolute margin 0.1
    build([TrajectoryPoint(3.0, [1.85, 0, 0])], limit_policy="clamp_near")  # within: accepted (clamped while executing)
    with pytest.raises(TrajectoryRejected) as info:
        build([TrajectoryPoint(3.0, [1.95, 0, 0])], limit_policy="clamp_near")
    assert info.value.code == INVALID_GOAL
    assert "j1' position 1.95 is outside its limits [-1.8, 1.8] by more than the clamp margin 0.1" in info.value.reason
    build([TrajectoryPoint(3.0, [1.95, 0, 0])], limit_policy="clamp")  # clamp: at any distance

"""time_path: exactly on the polyline, every sample within the limits at the driver's period, durations by hand.

The positions are judged by their distance to the nearest segment of the path; the limits by the
samples themselves and by their finite differences (what a driver sampling at the period sees);
and the trajectory is handed to the driver's own trajectory builder, whose quintic interpolation
between the samples must stay on the polyline too and whose limit check must accept it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.trajectory import TrajectoryPoint, build_trajectory
from bb_robot.planning.errors import InvalidRequest
from bb_robot.planning.limits import JointLimits
from bb_robot.planning.timing import DRIVER_PERIOD, Trajectory, time_path

NAMES = ("a", "b", "c")


def limits(velocity=(1.0, 2.0, 3.0), acceleration=(2.0, 4.0, 5.0), jerk=None) -> JointLimits:
    n = len(velocity)
    return JointLimits(NAMES[:n], np.full(n, -10.0), np.full(n, 10.0), velocity, acceleration, jerk=jerk)


def distance_to_polyline(points: np.ndarray, path: np.ndarray) -> np.ndarray:
    """Each point's distance to the nearest segment of ``path``."""
    best = np.full(points.shape[0], np.inf)
    for p0, p1 in zip(path[:-1], path[1:], strict=True):
        d = p1 - p0
        u = np.clip((points - p0) @ d / (d @ d), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(points - (p0 + u[:, None] * d), axis=1))
    return best


def assert_within(trajectory: Trajectory, lim: JointLimits, scale_v: float = 1.0, scale_a: float = 1.0) -> None:
    eps = 1e-9
    assert np.allclose(np.diff(trajectory.times), trajectory.period)
    assert (np.abs(trajectory.velocities) <= lim.velocity * scale_v + eps).all()
    assert (np.abs(trajectory.accelerations) <= lim.acceleration * scale_a + eps).all()
    p, dt = trajectory.positions, trajectory.period
    assert (np.abs(np.diff(p, axis=0)) / dt <= lim.velocity * scale_v + eps).all()
    assert (np.abs(np.diff(p, 2, axis=0)) / dt**2 <= lim.acceleration * scale_a + 1e-6).all()
    assert trajectory.peak_velocity_ratio <= scale_v + eps
    assert trajectory.peak_acceleration_ratio <= scale_a + eps
    assert trajectory.peak_velocity_ratio == pytest.approx((np.abs(trajectory.velocities) / lim.velocity).max())
    assert trajectory.peak_acceleration_ratio == pytest.approx(
        (np.abs(trajectory.accelerations) / lim.acceleration).max()
    )
    measured_jerk = np.abs(np.diff(trajectory.accelerations, axis=0)).max() / dt
    assert trajectory.peak_jerk == pytest.approx(measured_jerk)
    assert not np.any(trajectory.velocities[trajectory.waypoints])  # at rest on every waypoint


@pytest.mark.parametrize("jerk", [None, (20.0, 30.0, 40.0)])
@pytest.mark.parametrize("seed", range(5))
def test_every_sample_is_on_the_polyline_and_within_the_limits(seed: int, jerk: tuple[float, ...] | None) -> None:
    rng = np.random.default_rng(seed)
    path = rng.uniform(-2, 2, (int(rng.integers(2, 7)), 3))
    path[1] = path[0] + rng.uniform(-1e-3, 1e-3, 3)  # a tiny segment too
    lim = limits(jerk=jerk)
    trajectory = time_path(path, lim)
    assert (
        trajectory.positions[0].tolist() == path[0].tolist() and trajectory.positions[-1].tolist() == path[-1].tolist()
    )
    assert (trajectory.positions[trajectory.waypoints] == path).all()
    assert distance_to_polyline(trajectory.positions, path).max() <= 1e-9
    assert_within(trajectory, lim)
    if jerk is None:
        assert trajectory.peak_jerk_ratio is None
    else:
        assert trajectory.peak_jerk_ratio is not None and trajectory.peak_jerk_ratio <= 1 + 1e-9
        assert (np.abs(np.diff(trajectory.accelerations, axis=0)) / DRIVER_PERIOD <= np.asarray(jerk) + 1e-6).all()
        assert not np.any(trajectory.accelerations[trajectory.waypoints])  # the acceleration is continuous


@pytest.mark.parametrize("jerk", [None, (20.0, 30.0, 40.0)])
def test_the_drivers_interpolation_stays_on_the_polyline_and_is_accepted(jerk: tuple[float, ...] | None) -> None:
    """Accelerations go to the driver only where they are continuous (``smooth``): the quintic is exact then."""
    rng = np.random.default_rng(7)
    path = rng.uniform(-2, 2, (4, 3))
    lim = limits(jerk=jerk)
    trajectory = time_path(path, lim)
    assert trajectory.smooth == (jerk is not None)
    points = [
        TrajectoryPoint(float(t), p.tolist(), v.tolist(), a.tolist() if trajectory.smooth else [])
        for t, p, v, a in zip(
            trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations, strict=True
        )
    ]
    n = len(NAMES)
    table = JointLimitTable(
        names=NAMES,
        lower=lim.lower,
        upper=lim.upper,
        soft_lower=np.full(n, -np.inf),
        soft_upper=np.full(n, np.inf),
        velocity=np.asarray(lim.velocity),
        acceleration=np.asarray(lim.acceleration),
        effort=np.full(n, np.inf),
    )
    driven = build_trajectory(NAMES, points, table, path[0], np.zeros(n), start_ns=0, now_ns=0)  # raises if refused
    fine = np.linspace(0.0, trajectory.duration, 20 * len(trajectory) + 1)
    assert distance_to_polyline(driven.positions_at(fine), path).max() <= 1e-9
    # The knots alone give the driver the same motion: one polynomial of degree <= 3 between two.
    sparse = build_trajectory(
        NAMES, [points[k] for k in trajectory.knots], table, path[0], np.zeros(n), start_ns=0, now_ns=0
    )
    assert len(trajectory.knots) < len(trajectory) / 20
    assert np.abs(sparse.positions_at(trajectory.times) - trajectory.positions).max() <= 1e-9


@pytest.mark.parametrize(
    ("distance", "v", "a", "expected"),
    [
        (2.0, 1.0, 2.0, 2.0 / 1.0 + 1.0 / 2.0),  # reaches 1 rad/s: d/v + v/a
        (0.1, 1.0, 2.0, 2 * math.sqrt(0.1 / 2.0)),  # never does: 2·sqrt(d/a)
    ],
)
def test_single_segment_durations_by_hand(distance: float, v: float, a: float, expected: float) -> None:
    lim = JointLimits(("a",), [-9.0], [9.0], [v], [a])
    trajectory = time_path([[0.0], [distance]], lim)
    # every phase lengthened to whole periods: at most one period more per phase (three)
    assert expected <= trajectory.duration <= expected + 3 * DRIVER_PERIOD + 1e-12
    assert trajectory.duration == pytest.approx(round(trajectory.duration / DRIVER_PERIOD) * DRIVER_PERIOD)


def test_a_jerk_limited_segment_by_hand() -> None:
    """Distance 2, v 1, a 2, j 8: Tj = a/j = 0.25, Ta = Tj + v/a = 0.75, T = d/v + Ta = 2.75 (the double S)."""
    lim = JointLimits(("a",), [-9.0], [9.0], [1.0], [2.0], jerk=[8.0])
    trajectory = time_path([[0.0], [2.0]], lim)
    assert 2.75 <= trajectory.duration <= 2.75 + 7 * DRIVER_PERIOD
    assert trajectory.peak_velocity_ratio == pytest.approx(1.0, abs=2e-3)
    assert trajectory.peak_acceleration_ratio == pytest.approx(1.0, abs=1e-2)
    assert trajectory.peak_jerk_ratio is not None and trajectory.peak_jerk_ratio <= 1.0 + 1e-9


def test_the_joint_that_binds_reaches_its_limit_the_others_stay_below() -> None:
    lim = limits()
    trajectory = time_path([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], lim)  # joint a (1 rad/s, 2 rad/s²) binds
    assert np.abs(trajectory.velocities[:, 0]).max() == pytest.approx(1.0, rel=1e-2)
    assert np.abs(trajectory.velocities[:, 1]).max() <= 1.0 + 1e-9  # the same motion, half its limit


def test_scaling_factors() -> None:
    path = np.array([[0.0, 0.0, 0.0], [1.5, -1.0, 0.5], [0.0, 1.0, 1.0]])
    lim = limits()
    full = time_path(path, lim)
    assert time_path(path, lim, velocity_scale=0.0, acceleration_scale=0.0).duration == full.duration  # 0 means 1
    slow = time_path(path, lim, velocity_scale=0.5, acceleration_scale=0.25)
    assert_within(slow, lim, 0.5, 0.25)
    assert slow.duration > 1.5 * full.duration
    for bad in (-0.1, 1.01, float("nan")):
        with pytest.raises(InvalidRequest, match="velocity_scale .* is outside \\[0, 1\\]"):
            time_path(path, lim, velocity_scale=bad)
        with pytest.raises(InvalidRequest, match="acceleration_scale .* is outside \\[0, 1\\]"):
            time_path(path, lim, acceleration_scale=bad)


def test_repeated_and_single_waypoints() -> None:
    lim = limits()
    trajectory = time_path([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], lim)
    assert trajectory.waypoints.tolist() == [0, 0, len(trajectory) - 1, len(trajectory) - 1]
    still = time_path([[0.5, 0.5, 0.5]], lim)
    assert len(still) == 1 and still.duration == 0.0 and still.waypoints.tolist() == [0]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ([[0.0, float("nan"), 0.0], [1.0, 1.0, 1.0]], "waypoint 0, joint 'b' is nan"),
        ([[0.0, 0.0], [1.0, 1.0]], r"path has shape \(2, 2\), expected \(N >= 1, 3\)"),
        (np.zeros((0, 3)), r"path has shape \(0, 3\)"),
    ],
)
def test_malformed_paths_are_refused_naming_the_value(path: object, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        time_path(path, limits())  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest, match="period 0.0 must be a positive"):
        time_path([[0.0, 0.0, 0.0]], limits(), period=0.0)

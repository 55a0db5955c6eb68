"""Time parameterisation of a checked joint-space path: exactly on its segments, within the limits.

:func:`time_path` moves along each straight segment of the polyline on its own, from rest to rest,
with the time-optimal one-dimensional profile of the segment's *path parameter* ``u`` (0 at its
start, 1 at its end; each joint at ``p0 + u · (p1 - p0)``):

- without jerk limits, a trapezoid of velocity (constant acceleration, cruise, constant
  deceleration);
- with jerk limits, the seven-phase "double S" (jerk ``+J, 0, -J, 0, -J, 0, +J``), so the
  acceleration is continuous and starts and ends at 0 at every waypoint.

The limits of ``u`` are the joints' divided by how far each joint moves on the segment
(``u̇ ≤ min_j v_j / |Δq_j|``, likewise for acceleration and jerk), so every joint stays within its
own limits and the one that binds reaches it.

Every phase is then lengthened to a whole number of sampling periods.  Lengthening a phase never
raises the peak velocity, acceleration or jerk (:func:`_snap`), and it puts every phase boundary,
and so every waypoint, on a sample: the samples at ``k · period`` contain the waypoints
exactly, and between two samples the motion is one polynomial of degree ≤ 3 in time.  A driver
that interpolates between the samples with their positions and velocities (cubic Hermite, as
bb_robot's driver does when a point has no accelerations) reproduces that polynomial exactly; so
does a quintic through positions, velocities and accelerations when the acceleration is
continuous (:attr:`Trajectory.smooth`: jerk-limited).  A trapezoid's acceleration jumps at its
phase boundaries, and a quintic through one acceleration value there overshoots the limit (37 %
measured on the driver's check), so its points go to a driver without accelerations.  Since every
sample's position, velocity and acceleration lie along the segment's direction, the interpolation
also stays on the segment: the timed motion never leaves the polyline that was checked, and no
second check is needed.

Why stopping at each waypoint: a motion that passes a corner of the polyline without stopping
leaves it (a blend), or needs an infinite acceleration.  The planner's simplified paths have few
waypoints (docs/planning.md measures them), so the stops cost little; ruckig and toppra were
measured against this (docs/planning.md, "Timing").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from bb_robot.planning.errors import InvalidRequest
from bb_robot.planning.limits import JointLimits

FloatArray = npt.NDArray[np.float64]

#: The driver's loop period (its default ``rate`` of 500 Hz): the sampling period of trajectories.
DRIVER_PERIOD = 0.002
#: A phase shorter than this many periods after snapping is rounded down rather than up (rounding noise).
_SNAP_SLACK = 1e-9


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A timed trajectory sampled at a fixed period.

    Attributes:
        names: the joints, in column order.
        times: ``(M,)`` seconds from the start, ``k · period``.
        positions: ``(M, n)``.
        velocities: ``(M, n)``.
        accelerations: ``(M, n)``.
        period: the sampling period (s).
        waypoints: ``(N,)`` the sample index of each waypoint (row) of the path: first 0, last ``M - 1``
            (a repeated waypoint has its predecessor's).
        peak_velocity_ratio: the largest ``|v_j| / v_max_j`` over all samples and joints, against the
            unscaled limits (at most the velocity scale).
        peak_acceleration_ratio: the same for acceleration (at most the acceleration scale).
        peak_jerk: the largest ``|Δa_j| / period`` between two samples (rad/s³ or m/s³).
        peak_jerk_ratio: ``peak_jerk`` against the jerk limits, where they are given (else ``None``).
        knots: the sample index of every phase boundary (waypoints included), first 0, last ``M - 1``:
            between two knots the motion is one polynomial of degree ≤ 3, so the knots alone, with
            their positions and velocities, give a driver's cubic interpolation the same motion.
        smooth: the acceleration is continuous (every segment a double S: jerk limits on its joints).
            Otherwise it jumps on some samples (a trapezoid's phase boundaries): give a driver the
            positions and velocities only, whose cubic interpolation is then exact (module docstring).
    """

    names: tuple[str, ...]
    times: FloatArray
    positions: FloatArray
    velocities: FloatArray
    accelerations: FloatArray
    period: float
    waypoints: npt.NDArray[np.intp]
    peak_velocity_ratio: float
    peak_acceleration_ratio: float
    peak_jerk: float
    peak_jerk_ratio: float | None
    smooth: bool = False
    knots: npt.NDArray[np.intp] = field(default_factory=lambda: np.zeros(1, dtype=np.intp))

    @property
    def duration(self) -> float:
        """The time of the last sample (s)."""
        return float(self.times[-1])

    def __len__(self) -> int:
        return int(self.times.shape[0])


def checked_scale(value: float, label: str) -> float:
    """A scaling factor as MoveIt takes it: 0 means 1; outside [0, 1] (or not a number) is refused.

    Args:
        value: the factor.
        label: its name, for the message (``velocity_scale``).

    Returns:
        The factor to use, in (0, 1].

    Raises:
        InvalidRequest: ``value`` outside [0, 1] or not finite.
    """
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise InvalidRequest(f"{label} {value} is outside [0, 1] (0 means 1, full speed); give a factor in [0, 1]")
    return 1.0 if number == 0.0 else number


# ------------------------------------------------------------------------------- profiles
# A profile of u from rest at 0 to rest at 1 is a list of phases (duration, acceleration at its
# start, jerk): the trapezoid's three have jerk 0 and jumps of acceleration between them; the
# double S's seven have constant jerks and a continuous acceleration.


def _trapezoid(vmax: float, amax: float, period: float) -> list[tuple[float, float, float]]:
    """Rest-to-rest over u ∈ [0, 1]: accelerate, cruise, decelerate; phases whole periods."""
    ta = vmax / amax
    if vmax * ta <= 1.0:  # the velocity limit is reached: cruise for the rest
        tv = 1.0 / vmax - ta
    else:
        ta, tv = math.sqrt(1.0 / amax), 0.0
    ta, tv = _snap(ta, period, minimum=1), _snap(tv, period, minimum=0)
    v = 1.0 / (ta + tv)  # the snapped profile's peak velocity (area ta·v + tv·v = 1)
    a = v / ta
    return [(ta, a, 0.0), (tv, 0.0, 0.0), (ta, -a, 0.0)]


def _double_s(vmax: float, amax: float, jmax: float, period: float) -> list[tuple[float, float, float]]:
    """Rest-to-rest over u ∈ [0, 1] with jerk ``±J``: phases ``Tj, Tc, Tj, Tv, Tj, Tc, Tj``, whole periods."""
    if vmax * jmax >= amax * amax:
        tj, tc = amax / jmax, vmax / amax - amax / jmax
    else:
        tj, tc = math.sqrt(vmax / jmax), 0.0
    ta = 2 * tj + tc
    v = jmax * tj * (tj + tc)  # the velocity reached at the end of the acceleration
    tv = 1.0 / v - ta
    if tv < 0.0:  # the velocity limit is not reached
        tv = 0.0
        tj = amax / jmax
        # Maximum acceleration reached: v² / amax + v·tj = 1.
        v = (-tj + math.sqrt(tj * tj + 4.0 / amax)) * amax / 2.0
        tc = v / amax - tj
        if tc < 0.0:  # nor the acceleration limit: 2·J·tj³ = 1
            tj, tc = (1.0 / (2.0 * jmax)) ** (1.0 / 3.0), 0.0
    tj, tc, tv = _snap(tj, period, minimum=1), _snap(tc, period, minimum=0), _snap(tv, period, minimum=0)
    # The snapped profile: peak acceleration A = J·tj, peak velocity A·(tj + tc), distance v·(ta + tv) = 1.
    v = 1.0 / (2 * tj + tc + tv)
    a = v / (tj + tc)
    j = a / tj
    return [
        (tj, 0.0, j),
        (tc, a, 0.0),
        (tj, a, -j),
        (tv, 0.0, 0.0),
        (tj, 0.0, -j),
        (tc, -a, 0.0),
        (tj, -a, j),
    ]


def _snap(duration: float, period: float, *, minimum: int) -> float:
    """``duration`` rounded up to whole periods (at least ``minimum``).

    Why this keeps the limits: for the trapezoid the distance is ``v · (ta + tv) = 1``, so longer
    phases give a lower ``v`` and ``a = v / ta``; for the double S ``v · (2·tj + tc + tv) = 1``,
    ``a = v / (tj + tc)`` and ``j = a / tj`` all fall as any phase grows.
    """
    steps = math.ceil(duration / period - _SNAP_SLACK)
    return max(steps, minimum) * period


def _sample(
    profiles: list[list[tuple[float, float, float]]], period: float
) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """u, u̇, ü of consecutive profiles at ``k · period``, their segment per sample, each one's first sample, the knots.

    One vectorised pass over every phase of every profile; the last sample is the last profile's end
    (u = 1, at rest).  Each profile's first sample is its start (u = 0): the previous one's end.
    """
    rows: list[tuple[int, float, float, float, float, int]] = []  # steps, s0, v0, a0, jerk, segment
    firsts = []
    total = 0
    for segment, phases in enumerate(profiles):
        firsts.append(total)
        s0 = v0 = 0.0
        for duration, a0, jerk in phases:
            steps = round(duration / period)
            if steps == 0:
                continue
            rows.append((steps, s0, v0, a0, jerk, segment))
            total += steps
            s0, v0 = (
                s0 + v0 * duration + a0 * duration**2 / 2 + jerk * duration**3 / 6,
                v0 + a0 * duration + jerk * duration**2 / 2,
            )
    firsts.append(total)
    table = np.array(rows, dtype=float).reshape(-1, 6)
    counts = table[:, 0].astype(np.intp)
    phase = np.repeat(np.arange(len(rows)), counts)
    starts = np.cumsum(counts) - counts
    dt = (np.arange(total) - starts[phase]) * period
    s0, v0, a0, jerk = (table[phase, column] for column in (1, 2, 3, 4))
    u = np.empty(total + 1)
    v = np.empty(total + 1)
    a = np.empty(total + 1)
    u[:total] = s0 + dt * (v0 + dt * (a0 / 2 + dt * jerk / 6))
    v[:total] = v0 + dt * (a0 + dt * jerk / 2)
    a[:total] = a0 + dt * jerk
    u[total], v[total], a[total] = 1.0, 0.0, 0.0
    np.clip(u, 0.0, 1.0, out=u)
    np.maximum(v, 0.0, out=v)
    segment_of = np.empty(total + 1, dtype=np.intp)
    segment_of[:total] = table[phase, 5].astype(np.intp)
    segment_of[total] = max(len(profiles) - 1, 0)
    knots = np.append(starts, total).astype(np.intp)
    return u, v, a, segment_of, np.asarray(firsts, dtype=np.intp), knots


# ------------------------------------------------------------------------------- the call
def time_path(
    path: npt.ArrayLike,
    limits: JointLimits,
    *,
    velocity_scale: float = 1.0,
    acceleration_scale: float = 1.0,
    period: float = DRIVER_PERIOD,
) -> Trajectory:
    """Time a joint-space polyline: each segment from rest to rest, sampled every ``period``.

    Args:
        path: ``(N, n)`` waypoints in ``limits.names`` order (N ≥ 1); repeated waypoints are merged.
        limits: the joints' limits (:meth:`JointLimits.from_robot`).
        velocity_scale: a factor on the velocity limits in [0, 1]; 0 means 1 (MoveIt's rule).
        acceleration_scale: a factor on the acceleration (and jerk) limits in [0, 1]; 0 means 1.
        period: the sampling period in seconds (the driver's loop period).

    Returns:
        The trajectory (module docstring: exactly on the polyline, every sample within the scaled
        limits, every waypoint a sample).

    Raises:
        InvalidRequest: a path of the wrong shape or with a non-finite value, a scaling factor
            outside [0, 1], a period that is not a positive finite number.
    """
    vs = checked_scale(velocity_scale, "velocity_scale")
    acs = checked_scale(acceleration_scale, "acceleration_scale")
    if not (math.isfinite(period) and period > 0.0):
        raise InvalidRequest(f"period {period} must be a positive number of seconds")
    points = np.array(path, dtype=float)
    n = limits.dof
    if points.ndim != 2 or points.shape[1] != n or points.shape[0] < 1:
        raise InvalidRequest(f"path has shape {points.shape}, expected (N >= 1, {n}) for the joints {limits.names}")
    bad = np.argwhere(~np.isfinite(points))
    if bad.size:
        row, column = bad[0]
        raise InvalidRequest(f"path: waypoint {row}, joint '{limits.names[column]}' is {points[row, column]}")
    scaled = limits.scaled(vs, acs)
    keep = np.ones(points.shape[0], dtype=bool)
    keep[1:] = np.any(np.diff(points, axis=0) != 0.0, axis=1)
    points, merged = points[keep], np.cumsum(keep) - 1  # merged: each given row's waypoint
    if points.shape[0] == 1:
        return _at_rest(points, limits, period, len(merged))
    deltas = np.diff(points, axis=0)
    size = np.abs(deltas)  # the limits of u: min_j limit_j / |Δq_j| over the joints that move
    vmax = 1.0 / (size / scaled.velocity).max(axis=1)
    amax = 1.0 / (size / scaled.acceleration).max(axis=1)
    with np.errstate(divide="ignore"):  # a segment whose moving joints have no jerk limit: inf
        jmax = None if scaled.jerk is None else 1.0 / (size / scaled.jerk).max(axis=1)
    profiles = [
        _trapezoid(vmax[k], amax[k], period)
        if jmax is None or math.isinf(jmax[k])
        else _double_s(vmax[k], amax[k], jmax[k], period)
        for k in range(deltas.shape[0])
    ]
    u, v, a, segment, waypoints, knots = _sample(profiles, period)
    step = deltas[segment]
    positions = points[segment]
    positions += u[:, None] * step
    positions[waypoints] = points  # exactly the waypoints
    # The peaks are the profiles' (each is reached on a sample, every phase boundary being one), per
    # segment times the largest ratio of a joint's motion to its limit; the jerk between two samples
    # is the double S's J, or a trapezoid's jump of acceleration over one period.
    peak_v = np.array([1.0 / sum(d for d, _, _ in p[:2]) if len(p) == 3 else _peak(p)[0] for p in profiles])
    peak_a = np.array([p[0][1] if len(p) == 3 else _peak(p)[1] for p in profiles])
    peak_j = np.array([(1 + (p[1][0] == 0)) * p[0][1] / period if len(p) == 3 else p[0][2] for p in profiles])
    accelerations = a[:, None] * step
    ends = waypoints[1:]  # a trapezoid's jumps of acceleration at the waypoints, measured
    jerks = np.vstack([peak_j[:, None] * size, np.abs(accelerations[ends] - accelerations[ends - 1]) / period])
    return Trajectory(
        names=limits.names,
        times=np.arange(u.shape[0], dtype=np.float64) * period,
        positions=positions,
        velocities=v[:, None] * step,
        accelerations=accelerations,
        period=period,
        waypoints=waypoints[merged],
        peak_velocity_ratio=float((peak_v * (size / limits.velocity).max(axis=1)).max()),
        peak_acceleration_ratio=float((peak_a * (size / limits.acceleration).max(axis=1)).max()),
        peak_jerk=float(jerks.max()),
        peak_jerk_ratio=None if limits.jerk is None else float((jerks / limits.jerk).max()),
        smooth=all(len(p) == 7 for p in profiles),
        knots=knots,
    )


def _peak(phases: list[tuple[float, float, float]]) -> tuple[float, float]:
    """The double S's peak velocity and acceleration: ``A·(tj + tc)`` and ``A`` (A the second phase's)."""
    tj, tc, a = phases[0][0], phases[1][0], phases[1][1]
    return a * (tj + tc), a


def _at_rest(points: FloatArray, limits: JointLimits, period: float, rows: int) -> Trajectory:
    """The trajectory of a path that does not move: one sample at time 0."""
    zeros = np.zeros_like(points)
    return Trajectory(
        names=limits.names,
        times=np.zeros(1),
        positions=points.copy(),
        velocities=zeros,
        accelerations=zeros.copy(),
        period=period,
        waypoints=np.zeros(rows, dtype=np.intp),
        peak_velocity_ratio=0.0,
        peak_acceleration_ratio=0.0,
        peak_jerk=0.0,
        peak_jerk_ratio=None if limits.jerk is None else 0.0,
        smooth=True,
    )

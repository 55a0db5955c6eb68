"""Joint trajectories: checking one, interpolating it smoothly, and sampling it in the loop.

A trajectory (``trajectory_msgs/JointTrajectory`` or a ``FollowJointTrajectory`` goal) is a
list of points, each with ``time_from_start`` and positions, optionally velocities and
accelerations.  :func:`build_trajectory` checks it and turns it into piecewise polynomials:

- positions, velocities and accelerations given: a quintic per segment, matching all three
  at both ends;
- positions and velocities: a cubic per segment (Hermite);
- positions only: a C2 cubic spline through the points (velocities solved for, so the
  acceleration is continuous), starting with the joint's current velocity and ending at rest.

Execution starts from the joints' current state: when the first point lies ahead in time, a
first segment goes from the current position and velocity to it (and is checked like the
others); when the first point is due at once (``time_from_start`` 0, or its time has already
come), the current position must lie within ``start_tolerance`` of where the trajectory
starts, or the trajectory is rejected.

Rejected, with the reason and the ``FollowJointTrajectory`` result code
(:class:`~bb_robot.driver.errors.TrajectoryRejected`), much as ros2_control's
joint_trajectory_controller does: no joint names, unknown or repeated joints, a partial set
of joints unless ``allow_partial_joints``, no points, times not strictly increasing, arrays of
the wrong length, velocities or accelerations on some points only, efforts, non-finite values,
a non-zero final velocity unless ``allow_nonzero_end_velocity``, a trajectory that ends in the
past (``OLD_HEADER_TIMESTAMP``), positions outside the joint limits with ``limit_policy:
reject`` (with ``clamp_near``, the default: outside by more than the clamp margin; within
it the positions are clamped while executing, as with ``clamp``), and a trajectory whose
*timing* needs more velocity or acceleration than the limits allow anywhere along the
interpolated path (beyond ``limit_margin``, relative): the trajectory is not re-timed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.driver.commands.limits import ClampMargins, JointLimitTable
from bb_robot.driver.errors import INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP, TrajectoryRejected

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

#: Samples per segment for the velocity/acceleration/position check (ends included).
CHECK_SAMPLES = 33
#: Velocities below this count as zero at the end of a trajectory (as float epsilon in JTC).
ZERO_VELOCITY = 1.2e-7
#: Points closer in time than this (seconds) are refused: the interpolation through them would
#: divide by almost nothing.  A first point closer than this to "now" is due at once.
MIN_SEGMENT = 1e-6
#: A time_from_start beyond this (seconds, about 11.6 days) is refused as a unit mistake; it
#: also keeps every power of time in the polynomials finite.
MAX_TIME_FROM_START = 1e6


@dataclass(frozen=True)
class TrajectoryOptions:
    """How trajectories are checked (the node's ``trajectory.*`` parameters)."""

    start_tolerance: float = 0.05
    limit_margin: float = 0.02
    allow_partial_joints: bool = False
    allow_nonzero_end_velocity: bool = False
    limit_policy: str = "clamp_near"
    clamp_margins: ClampMargins = ClampMargins()


@dataclass(frozen=True)
class TrajectoryPoint:
    """One point as received: ``time`` in seconds from the start; empty sequences where not given."""

    time: float
    positions: Sequence[float]
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()
    effort: Sequence[float] = ()


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A checked trajectory for the driver's joints ``indices`` (names ``names``).

    Time ``t`` is in seconds from ``start_ns`` (the driver's monotonic clock).  Segment ``k``
    spans ``knots[k]`` to ``knots[k + 1]`` and is ``sum(coeffs[k, i] * (t - knots[k]) ** i)``.
    ``point_times`` are the times of the points as received; ``source`` says where the
    trajectory came from.
    """

    names: tuple[str, ...]
    indices: IntArray
    start_ns: int
    knots: FloatArray
    coeffs: FloatArray
    point_times: FloatArray
    source: str = ""

    @property
    def duration(self) -> float:
        """Seconds from ``start_ns`` to the last point."""
        return float(self.knots[-1])

    @property
    def end_ns(self) -> int:
        return self.start_ns + int(round(self.duration * 1e9))

    @property
    def final_positions(self) -> FloatArray:
        return self.sample_at(self.duration)[0]

    def sample(self, now_ns: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Desired position, velocity and acceleration at ``now_ns``: before the first knot the
        first knot's, after the last the last one's."""
        return self.sample_at((now_ns - self.start_ns) * 1e-9)

    def sample_at(self, t: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        knots = self.knots
        t = min(max(t, float(knots[0])), float(knots[-1]))
        k = int(np.searchsorted(knots, t, side="right")) - 1
        k = min(max(k, 0), len(knots) - 2)
        tau = t - float(knots[k])
        c = self.coeffs[k]
        position = c[0] + tau * (c[1] + tau * (c[2] + tau * (c[3] + tau * (c[4] + tau * c[5]))))
        velocity = c[1] + tau * (2 * c[2] + tau * (3 * c[3] + tau * (4 * c[4] + tau * 5 * c[5])))
        acceleration = 2 * c[2] + tau * (6 * c[3] + tau * (12 * c[4] + tau * 20 * c[5]))
        return position, velocity, acceleration

    def positions_at(self, times: FloatArray) -> FloatArray:
        """Desired positions at many times (seconds from ``start_ns``) at once: ``(len(times), joints)``,
        clamped to the first and last knot as :meth:`sample_at`."""
        knots = self.knots
        t = np.clip(np.asarray(times, dtype=np.float64), float(knots[0]), float(knots[-1]))
        k = np.clip(np.searchsorted(knots, t, side="right") - 1, 0, len(knots) - 2)
        tau = (t - knots[k])[:, None]
        c = self.coeffs[k]
        return np.asarray(
            c[:, 0] + tau * (c[:, 1] + tau * (c[:, 2] + tau * (c[:, 3] + tau * (c[:, 4] + tau * c[:, 5]))))
        )

    def point_index(self, now_ns: int) -> int:
        """The point being approached (``FollowJointTrajectory`` feedback ``index``)."""
        t = (now_ns - self.start_ns) * 1e-9
        index = int(np.searchsorted(self.point_times, t, side="right"))
        return min(index, len(self.point_times) - 1)


# ------------------------------------------------------------------------------ building
def build_trajectory(
    joint_names: Sequence[str],
    points: Sequence[TrajectoryPoint],
    limits: JointLimitTable,
    current_positions: FloatArray,
    current_velocities: FloatArray,
    *,
    start_ns: int,
    now_ns: int,
    options: TrajectoryOptions = TrajectoryOptions(),
    source: str = "",
) -> Trajectory:
    """Check a trajectory and interpolate it (see the module docstring).

    ``current_positions`` / ``current_velocities`` hold the state of *every* driver joint (in
    ``limits.names`` order) at ``now_ns``; ``start_ns`` is when ``time_from_start`` 0 falls
    (``now_ns`` or later for "start now", or the header stamp converted to the monotonic
    clock).  Raises :class:`TrajectoryRejected`.
    """
    indices = _joint_indices(joint_names, limits.names, options.allow_partial_joints)
    names = tuple(joint_names)
    n_joints = len(names)
    if not points:
        raise TrajectoryRejected(INVALID_GOAL, "the trajectory has no points")
    times = np.array([float(p.time) for p in points])
    if not np.isfinite(times).all():
        raise TrajectoryRejected(INVALID_GOAL, "a time_from_start is not finite")
    if times[0] < 0:
        raise TrajectoryRejected(INVALID_GOAL, f"point 0 has a negative time_from_start ({times[0]:g} s)")
    too_late = np.flatnonzero(times > MAX_TIME_FROM_START)  # before the differences below could overflow
    if too_late.size:
        i = int(too_late[0])
        raise TrajectoryRejected(
            INVALID_GOAL,
            f"point {i} has a time_from_start of {times[i]:g} s, more than {MAX_TIME_FROM_START:g} s "
            "(is the unit nanoseconds instead of seconds?)",
        )
    for i in range(1, len(times)):
        if times[i] - times[i - 1] < MIN_SEGMENT:
            raise TrajectoryRejected(
                INVALID_GOAL,
                f"time_from_start must increase strictly, by at least {MIN_SEGMENT:g} s: point {i} is at "
                f"{times[i]:g} s, point {i - 1} at {times[i - 1]:g} s",
            )
    positions = _field(points, "positions", n_joints, required=True)
    assert positions is not None
    velocities = _field(points, "velocities", n_joints, required=False)
    accelerations = _field(points, "accelerations", n_joints, required=False)
    if accelerations is not None and velocities is None:
        raise TrajectoryRejected(INVALID_GOAL, "points have accelerations but no velocities (give both, or neither)")
    if any(len(p.effort) for p in points):
        raise TrajectoryRejected(INVALID_GOAL, "efforts in trajectory points are not supported; leave them empty")
    if velocities is not None and not options.allow_nonzero_end_velocity:
        moving = np.flatnonzero(np.abs(velocities[-1]) > ZERO_VELOCITY)
        if len(moving):
            j = int(moving[0])
            raise TrajectoryRejected(
                INVALID_GOAL,
                f"the last point's velocity of joint '{names[j]}' is {velocities[-1][j]:g}, not zero "
                "(allow_nonzero_velocity_at_trajectory_end is false)",
            )

    lower = limits.command_lower[indices]
    upper = limits.command_upper[indices]
    if options.limit_policy in ("reject", "clamp_near"):
        margin = limits.position_margins(options.clamp_margins)[indices]
        if options.limit_policy == "reject":
            margin = np.zeros_like(margin)
        outside = (positions < lower - margin) | (positions > upper + margin)
        if outside.any():
            i, j = (int(x) for x in np.argwhere(outside)[0])
            beyond = "" if options.limit_policy == "reject" else f" by more than the clamp margin {margin[j]:g}"
            raise TrajectoryRejected(
                INVALID_GOAL,
                f"point {i}: joint '{names[j]}' position {positions[i, j]:g} is outside its limits "
                f"[{lower[j]:g}, {upper[j]:g}]{beyond} (limit_policy: {options.limit_policy})",
            )

    # When does execution begin, relative to start_ns?  Not before now.
    begin = max(0.0, (now_ns - start_ns) * 1e-9)
    if begin >= times[-1] and start_ns < now_ns:
        raise TrajectoryRejected(
            OLD_HEADER_TIMESTAMP,
            f"the trajectory ends {begin - times[-1]:.3f} s in the past (header stamp too old); "
            "stamp it later, or 0 to start at once",
        )
    p_now = np.asarray(current_positions, dtype=np.float64)[indices]
    v_now = np.asarray(current_velocities, dtype=np.float64)[indices]
    prepend = times[0] - begin >= MIN_SEGMENT
    if prepend:
        knots = np.concatenate(([begin], times))
        pos = np.vstack((p_now, positions))
        vel = None if velocities is None else np.vstack((v_now, velocities))
        acc = None if accelerations is None else np.vstack((np.zeros(n_joints), accelerations))
    else:
        knots, pos, vel, acc = times, positions, velocities, accelerations
        if len(knots) == 1:
            # A single point due at once: hold it (a zero-length trajectory ending there).
            knots = np.array([times[0], times[0] + 1e-9])
            pos = np.vstack((positions, positions))
            vel = np.zeros((2, n_joints))
            acc = None
    if vel is None:
        vel = _spline_velocities(knots, pos, v_now, np.zeros(n_joints))
    with np.errstate(over="ignore", invalid="ignore"):  # what overflows is refused just below
        coeffs = _segments(knots, pos, vel, acc)
    if not np.isfinite(coeffs).all():
        raise TrajectoryRejected(
            INVALID_GOAL,
            "the points cannot be interpolated in finite numbers (positions, velocities or accelerations far too "
            "large for their times); check the units",
        )
    trajectory = Trajectory(names, indices, start_ns, knots, coeffs, times, source)
    if not prepend:
        start = trajectory.sample_at(begin)[0]
        offset = np.abs(start - p_now)
        worst = int(np.argmax(offset)) if n_joints else 0
        if n_joints and offset[worst] > options.start_tolerance:
            code = OLD_HEADER_TIMESTAMP if start_ns < now_ns and times[0] > 0 else INVALID_GOAL
            raise TrajectoryRejected(
                code,
                f"the trajectory starts at once {offset[worst]:g} away from the current position of joint "
                f"'{names[worst]}' ({start[worst]:g} instead of {p_now[worst]:g}; trajectory.start_tolerance "
                f"{options.start_tolerance:g}): give the first point a later time_from_start, or start it "
                "at the current position",
            )
    _check_limits(trajectory, limits, options, first_is_current=prepend)
    return trajectory


def _joint_indices(joint_names: Sequence[str], driver_joints: Sequence[str], allow_partial: bool) -> IntArray:
    if not len(joint_names):
        raise TrajectoryRejected(INVALID_JOINTS, "the trajectory names no joints")
    index = {name: i for i, name in enumerate(driver_joints)}
    seen: set[str] = set()
    result = []
    for name in joint_names:
        if name in seen:
            raise TrajectoryRejected(INVALID_JOINTS, f"joint '{name}' is named twice")
        seen.add(name)
        if name not in index:
            raise TrajectoryRejected(
                INVALID_JOINTS, f"unknown joint '{name}' (the driver's joints: {', '.join(driver_joints)})"
            )
        result.append(index[name])
    if not allow_partial and len(result) != len(driver_joints):
        missing = [name for name in driver_joints if name not in seen]
        raise TrajectoryRejected(
            INVALID_JOINTS,
            f"the trajectory leaves out joints {', '.join(missing)} (allow_partial_joints_goal is false)",
        )
    return np.array(result, dtype=np.intp)


def _field(points: Sequence[TrajectoryPoint], field: str, n_joints: int, *, required: bool) -> FloatArray | None:
    rows = [getattr(p, field) for p in points]
    given = [len(row) > 0 for row in rows]
    if not any(given):
        if required:
            raise TrajectoryRejected(INVALID_GOAL, f"the points have no {field}")
        return None
    if not all(given):
        missing = given.index(False)
        if required:
            raise TrajectoryRejected(INVALID_GOAL, f"point {missing} has no {field}")
        raise TrajectoryRejected(
            INVALID_GOAL,
            f"point {missing} has no {field} but point {given.index(True)} has (give them on every point, or none)",
        )
    for i, row in enumerate(rows):
        if len(row) != n_joints:
            raise TrajectoryRejected(INVALID_GOAL, f"point {i} has {len(row)} {field} for {n_joints} joints")
    array = np.array(rows, dtype=np.float64)
    if not np.isfinite(array).all():
        i, j = (int(x) for x in np.argwhere(~np.isfinite(array))[0])
        raise TrajectoryRejected(INVALID_GOAL, f"point {i}: {field}[{j}] is {array[i, j]}, not a finite number")
    return array


def _spline_velocities(knots: FloatArray, positions: FloatArray, v_start: FloatArray, v_end: FloatArray) -> FloatArray:
    """Knot velocities of the C2 cubic spline through ``positions`` with the end velocities given."""
    n = len(knots)
    vel = np.zeros_like(positions)
    vel[0], vel[-1] = v_start, v_end
    if n <= 2:
        return vel
    h = np.diff(knots)
    slope = np.diff(positions, axis=0) / h[:, None]
    # Interior knots i = 1..n-2: h[i] m[i-1] + 2 (h[i-1] + h[i]) m[i] + h[i-1] m[i+1] = rhs[i].
    m = n - 2
    sub = h[2 : m + 1]  # coefficient of m[i-1] in rows 1..m-1 (h[i])
    diag = 2.0 * (h[:-1] + h[1:])
    sup = h[: m - 1]  # coefficient of m[i+1] for rows 1..n-3 (h[i-1])
    rhs = 3.0 * (h[1:, None] * slope[:-1] + h[:-1, None] * slope[1:])
    rhs[0] -= h[1] * v_start
    rhs[-1] -= h[-2] * v_end
    # Thomas algorithm (diagonally dominant: stable without pivoting).
    c_prime = np.zeros(m)
    d_prime = np.zeros_like(rhs)
    c_prime[0] = sup[0] / diag[0] if m > 1 else 0.0
    d_prime[0] = rhs[0] / diag[0]
    for i in range(1, m):
        denominator = diag[i] - sub[i - 1] * c_prime[i - 1]
        c_prime[i] = sup[i] / denominator if i < m - 1 else 0.0
        d_prime[i] = (rhs[i] - sub[i - 1] * d_prime[i - 1]) / denominator
    solution = np.zeros_like(rhs)
    solution[-1] = d_prime[-1]
    for i in range(m - 2, -1, -1):
        solution[i] = d_prime[i] - c_prime[i] * solution[i + 1]
    vel[1:-1] = solution
    return vel


def _segments(knots: FloatArray, pos: FloatArray, vel: FloatArray, acc: FloatArray | None) -> FloatArray:
    """Polynomial coefficients (segments, 6, joints): quintic with accelerations, else cubic."""
    h = np.diff(knots)[:, None]
    p0, p1, v0, v1 = pos[:-1], pos[1:], vel[:-1], vel[1:]
    coeffs = np.zeros((len(h), 6, pos.shape[1]))
    coeffs[:, 0] = p0
    coeffs[:, 1] = v0
    dp = p1 - p0
    if acc is None:
        coeffs[:, 2] = (3 * dp / h - 2 * v0 - v1) / h
        coeffs[:, 3] = (-2 * dp / h + v0 + v1) / h**2
    else:
        a0, a1 = acc[:-1], acc[1:]
        coeffs[:, 2] = a0 / 2
        coeffs[:, 3] = (20 * dp - (8 * v1 + 12 * v0) * h - (3 * a0 - a1) * h**2) / (2 * h**3)
        coeffs[:, 4] = (-30 * dp + (14 * v1 + 16 * v0) * h + (3 * a0 - 2 * a1) * h**2) / (2 * h**4)
        coeffs[:, 5] = (12 * dp - 6 * (v1 + v0) * h - (a0 - a1) * h**2) / (2 * h**5)
    return coeffs


def evaluate_all(
    trajectory: Trajectory, samples: int = CHECK_SAMPLES
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Times, positions, velocities and accelerations at ``samples`` evenly spaced times in every
    segment (shapes (segments, samples) and (segments, samples, joints))."""
    knots = trajectory.knots
    h = np.diff(knots)
    fraction = np.linspace(0.0, 1.0, samples)
    tau = h[:, None] * fraction[None, :]  # (S, K)
    c = trajectory.coeffs[:, :, None, :]  # (S, 6, 1, J)
    t = tau[:, :, None]
    position = c[:, 0] + t * (c[:, 1] + t * (c[:, 2] + t * (c[:, 3] + t * (c[:, 4] + t * c[:, 5]))))
    velocity = c[:, 1] + t * (2 * c[:, 2] + t * (3 * c[:, 3] + t * (4 * c[:, 4] + t * 5 * c[:, 5])))
    acceleration = 2 * c[:, 2] + t * (6 * c[:, 3] + t * (12 * c[:, 4] + t * 20 * c[:, 5]))
    return knots[:-1, None] + tau, position, velocity, acceleration


def _check_limits(
    trajectory: Trajectory, limits: JointLimitTable, options: TrajectoryOptions, *, first_is_current: bool
) -> None:
    times, position, velocity, acceleration = evaluate_all(trajectory)
    idx = trajectory.indices
    margin = 1.0 + max(options.limit_margin, 0.0)
    checks = (
        ("velocity", np.abs(velocity), limits.velocity[idx] * margin + 1e-9, limits.velocity[idx]),
        ("acceleration", np.abs(acceleration), limits.acceleration[idx] * margin + 1e-9, limits.acceleration[idx]),
    )
    for label, values, bound, limit in checks:
        over = ~(values <= bound)  # NaN (from overflowing powers of time) counts as over
        if over.any():
            segment, sample, joint = _worst(over, values / np.where(limit > 0, limit, 1e-300))
            raise TrajectoryRejected(
                INVALID_GOAL,
                f"the timing needs {label} {values[segment, sample, joint]:.4g} for joint "
                f"'{trajectory.names[joint]}' at t={times[segment, sample]:.3f} s "
                f"({_segment_name(segment, first_is_current)}), above its {label} limit {limit[joint]:g} "
                f"(trajectory.limit_margin {options.limit_margin:g}); slow the trajectory down",
            )
    if options.limit_policy == "reject":
        lower, upper = limits.command_lower[idx], limits.command_upper[idx]
        span = np.maximum(upper - lower, 0.0)
        slack = np.where(np.isfinite(span), 1e-6 * span, 0.0) + 1e-9
        over = ~((position >= lower - slack) & (position <= upper + slack))
        if over.any():
            excess = np.maximum(lower - position, position - upper)
            segment, sample, joint = _worst(over, excess)
            raise TrajectoryRejected(
                INVALID_GOAL,
                f"the interpolated path takes joint '{trajectory.names[joint]}' to "
                f"{position[segment, sample, joint]:.6g} at t={times[segment, sample]:.3f} s "
                f"({_segment_name(segment, first_is_current)}), outside its limits [{lower[joint]:g}, "
                f"{upper[joint]:g}] (limit_policy: reject)",
            )


def _worst(mask: npt.NDArray[np.bool_], severity: FloatArray) -> tuple[int, int, int]:
    """In the earliest segment where ``mask`` holds, the (segment, sample, joint) of the worst ``severity``."""
    segment = int(np.flatnonzero(mask.any(axis=(1, 2)))[0])
    scores = np.where(mask[segment], severity[segment], -np.inf)
    sample, joint = (int(x) for x in np.unravel_index(int(np.argmax(scores)), scores.shape))
    return segment, sample, joint


def _segment_name(segment: int, first_is_current: bool) -> str:
    if first_is_current:
        if segment == 0:
            return "from the current state to point 0"
        return f"between points {segment - 1} and {segment}"
    return f"between points {segment} and {segment + 1}"

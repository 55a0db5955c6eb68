"""The demo motion of ``bb-robot up --demo``: every joint through a good part of its range.

From where the joints are, each goes to 35 % of its range, then to 65 % (30 % of its range
between the two; at 25 % and 75 % the bundled arm's gripper folds into its first wrist link, which
the driver's collision check refuses), stopping at each waypoint; each segment lasts what the
slowest joint needs within its velocity and acceleration limits, so the motion stays inside the
limits the driver enforces.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bb_robot.errors import BbRobotError

#: Fractions of each joint's range the two waypoints sit at.
WAYPOINTS = (0.35, 0.65)
#: Range given to a joint without position limits (a continuous joint), centred on where it is.
UNLIMITED_RANGE = math.pi
#: Peak velocity and acceleration of a minimum-jerk move over distance d in time T are
#: 1.875 d/T and 5.774 d/T²; the driver interpolates smoothly, so these bound its motion.
_PEAK_VELOCITY = 1.875
_PEAK_ACCELERATION = 5.774
#: Margin on the limits.
_MARGIN = 1.25


class DemoError(BbRobotError):
    """No demo motion fits the joints' limits in the time allowed (the message says which joint)."""


@dataclass(frozen=True)
class JointRange:
    """One joint as the demo sees it: position limits (``None``: none), velocity and acceleration limits."""

    name: str
    lower: float | None
    upper: float | None
    max_velocity: float
    max_acceleration: float


@dataclass(frozen=True)
class DemoPoint:
    """A waypoint: joint positions in ``joint_names`` order, reached at ``time`` s (velocity 0 there)."""

    time: float
    positions: tuple[float, ...]


def _bounds(joint: JointRange, current: float) -> tuple[float, float]:
    if joint.lower is None or joint.upper is None or not math.isfinite(joint.upper - joint.lower):
        return current - UNLIMITED_RANGE / 2, current + UNLIMITED_RANGE / 2
    return joint.lower, joint.upper


def _segment_time(distance: float, joint: JointRange) -> float:
    if distance == 0.0:
        return 0.0
    by_velocity = _PEAK_VELOCITY * distance / joint.max_velocity
    by_acceleration = math.sqrt(_PEAK_ACCELERATION * distance / joint.max_acceleration)
    return _MARGIN * max(by_velocity, by_acceleration)


def move_point(joints: Sequence[JointRange], start: Sequence[float], target: Sequence[float]) -> DemoPoint:
    """One waypoint from ``start`` to ``target`` (both in ``joints`` order), timed as the demo's segments.

    Args:
        joints: the joints moved.
        start: where they are.
        target: where they go.

    Returns:
        The point, reached after what the slowest joint needs (at least 0.1 s).
    """
    duration = max((_segment_time(abs(b - a), j) for j, a, b in zip(joints, start, target, strict=True)), default=0.0)
    return DemoPoint(max(duration, 0.1), tuple(float(v) for v in target))


def demo_points(joints: Sequence[JointRange], current: Mapping[str, float], max_time: float = 10.0) -> list[DemoPoint]:
    """The demo's waypoints.

    Args:
        joints: the driven joints, in the order of the positions returned.
        current: where they are now (a missing joint counts as at 0, or its lower limit if above).
        max_time: the longest the whole motion may take (s).

    Returns:
        Two points: every joint at 25 % of its range, then at 75 %.

    Raises:
        DemoError: no joints, a joint without a positive velocity or acceleration limit, or a
            motion that needs more than ``max_time``.
    """
    if not joints:
        raise DemoError("the robot has no joints to move")
    for joint in joints:
        if not (joint.max_velocity > 0 and joint.max_acceleration > 0):
            raise DemoError(f"joint '{joint.name}' has no positive velocity and acceleration limits")
    starts = []
    for joint in joints:
        start = current.get(joint.name, 0.0)
        lower, upper = _bounds(joint, start)
        starts.append(min(max(start, lower), upper))
    points: list[DemoPoint] = []
    time = 0.0
    previous = starts
    for fraction in WAYPOINTS:
        target = []
        for joint, start in zip(joints, starts, strict=True):
            lower, upper = _bounds(joint, start)
            target.append(lower + fraction * (upper - lower))
        duration = max(_segment_time(abs(b - a), j) for j, a, b in zip(joints, previous, target, strict=True))
        time += max(duration, 0.1)
        points.append(DemoPoint(time, tuple(target)))
        previous = target
    if time > max_time:
        slowest = max(joints, key=lambda j: _segment_time(abs(_bounds(j, 0.0)[1] - _bounds(j, 0.0)[0]) / 2, j))
        raise DemoError(
            f"the demo motion would take {time:.1f} s (more than {max_time:g} s): joint '{slowest.name}' "
            "is too slow for its range"
        )
    return points


def moved_fraction(joint: JointRange, start: float, positions: Sequence[float]) -> float:
    """The part of ``joint``'s range (0..1) that ``positions`` cover (for checks and the display)."""
    lower, upper = _bounds(joint, start)
    span = upper - lower
    if span <= 0 or not positions:
        return 0.0
    return (max(positions) - min(positions)) / span

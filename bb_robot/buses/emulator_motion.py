"""The emulator's motion model: a trapezoidal velocity profile towards a goal.

A servo in position mode moves towards its goal accelerating at most ``acceleration`` up to
``speed``, cruising, and braking to stop on the goal, as the vendors describe their profiles
(Feetech's goal speed and acceleration, Dynamixel's Profile Velocity and Profile Acceleration).
A new goal is planned from the current position *and velocity*: a servo moving away from the
new goal brakes first, one too fast to stop in time overshoots and comes back. Everything is
analytic: :meth:`Profile.state` gives the position and velocity at any time, so the emulator's
motion is exact and its tests compare with closed-form results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The acceleration used where a servo has "no ramp" (acceleration setting 0), ticks/s².
INSTANT = 1e9


@dataclass(frozen=True)
class Segment:
    """Constant acceleration from ``start`` for ``duration`` seconds."""

    start: float
    position: float
    velocity: float
    acceleration: float
    duration: float

    def at(self, t: float) -> tuple[float, float]:
        """Position and velocity ``t`` seconds after the segment's start (``0 <= t <= duration``)."""
        return (
            self.position + self.velocity * t + 0.5 * self.acceleration * t * t,
            self.velocity + self.acceleration * t,
        )


class Profile:
    """A planned motion: segments, then rest at the goal.

    Args:
        segments: in time order, each starting where the previous ends.
        goal: where the motion rests after the last segment.
        start: the time the motion starts (the first segment's start, or now for a rest).
    """

    def __init__(self, segments: list[Segment], goal: float, start: float) -> None:
        self.segments = segments
        self.goal = goal
        self.start = start
        self.end = segments[-1].start + segments[-1].duration if segments else start

    def state(self, t: float) -> tuple[float, float]:
        """Position (ticks) and velocity (ticks/s) at time ``t``."""
        for segment in self.segments:
            if t < segment.start + segment.duration:
                return segment.at(max(0.0, t - segment.start))
        return self.goal, 0.0

    def moving(self, t: float) -> bool:
        """Whether the motion is still under way at ``t``."""
        return t < self.end


def rest(position: float, t: float) -> Profile:
    """A profile that holds ``position`` from ``t`` on."""
    return Profile([], position, t)


def plan(position: float, velocity: float, goal: float, speed: float, acceleration: float, t: float) -> Profile:
    """Plan the motion from ``(position, velocity)`` at time ``t`` to rest at ``goal``.

    Args:
        position: ticks now.
        velocity: ticks/s now.
        goal: ticks to stop at.
        speed: the largest speed (ticks/s, > 0).
        acceleration: the largest acceleration (ticks/s², > 0; :data:`INSTANT` for none).
        t: the time now (s).
    """
    segments: list[Segment] = []
    now, p, v = t, position, velocity
    a = acceleration
    for _ in range(4):  # brake, overshoot, and the final trapezoid: at most a few phases
        distance = goal - p
        if distance == 0 and v == 0:
            break
        s = 1.0 if distance > 0 or (distance == 0 and v < 0) else -1.0
        x, u = abs(distance), v * s  # distance to go and velocity towards the goal
        if u < 0:  # moving away: brake to rest first
            segments.append(Segment(now, p, v, s * a, -u / a))
            p, v, now = p + v * (-u / a) + 0.5 * s * a * (u / a) ** 2, 0.0, now - u / a
            continue
        if u > speed:  # too fast: slow down to the speed limit
            duration = (u - speed) / a
            segments.append(Segment(now, p, v, -s * a, duration))
            p += s * (u + speed) / 2 * duration
            v, now = s * speed, now + duration
            continue
        if u * u / (2 * a) > x + 1e-12:  # cannot stop in time: brake to rest past the goal, then come back
            duration = u / a
            segments.append(Segment(now, p, v, -s * a, duration))
            p, v, now = p + s * u * u / (2 * a), 0.0, now + duration
            continue
        peak = min(speed, math.sqrt(a * x + u * u / 2))
        t_up = (peak - u) / a
        t_down = peak / a
        cruise = max(0.0, x - (peak * peak - u * u) / (2 * a) - peak * peak / (2 * a))
        t_cruise = cruise / peak if peak > 0 else 0.0
        if t_up > 0:
            segments.append(Segment(now, p, v, s * a, t_up))
            p, now = p + s * (u + peak) / 2 * t_up, now + t_up
        if t_cruise > 0:
            segments.append(Segment(now, p, s * peak, 0.0, t_cruise))
            p, now = p + s * cruise, now + t_cruise
        segments.append(Segment(now, p, s * peak, -s * a, t_down))
        break
    return Profile(segments, goal, t)


def time_to_goal(distance: float, speed: float, acceleration: float) -> float:
    """Closed form: seconds to travel ``distance`` from rest to rest (the trapezoid, or a triangle)."""
    x = abs(distance)
    if x * acceleration >= speed * speed:
        return x / speed + speed / acceleration
    return 2 * math.sqrt(x / acceleration)

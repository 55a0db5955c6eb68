"""The Cartesian demo of ``bb-robot up --demo-cartesian``: its ready pose and its circle.

The demo moves the servo's chain to a *ready pose* away from singularities (a FollowJointTrajectory
goal), then streams tool poses to the driver's ``~/pose_commands``: the tool point draws a circle
of :data:`RADIUS` in the plane normal to the tool's z axis, starting and ending where the tool is,
with the orientation kept, one turn in :data:`TURN_TIME` (minimum-jerk timing: it starts and ends
at rest).  It succeeds when every tool position seen while drawing, and :data:`SETTLE` after, lies
within :data:`TOLERANCE` of the circle.

A turn is judged only when the timing it depends on held: the demo's own pose stream and the
joint states it measures each without a pause longer than :data:`MAX_GAP` (:class:`TurnTiming`).
A paused stream is carried forward by the servo, then stopped (docs/nodes/servo.md), and a
paused driver lets the simulation run on with its last command; either moves the tool off the
circle for reasons of the machine's load, not of the tracking.  Such a turn is drawn again, up to
:data:`TURNS` in all.

The ready pose is searched for (:func:`ready_configuration`), reproducibly: random configurations
in the middle of each joint's range, ranked by the singularity measure
(:mod:`bb_robot.model.dexterity`, the servo's), the first whose whole circle the chain can follow
continuously, well away from singularities and joint limits, and clear of collisions where the
caller can check them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from bb_robot.errors import BbRobotError
from bb_robot.model.dexterity import reach, singularity_measure
from bb_robot.model.serial import SerialManipulator

FloatArray = npt.NDArray[np.float64]
#: ``clear(configurations)``: whether the chain passes these configurations (rows, chain joint order) without collision.
Clear = Callable[[FloatArray], bool]

#: The circle's radius (m).
RADIUS = 0.05
#: One turn (s).
TURN_TIME = 4.0
#: How often a pose is sent (Hz).
STREAM_RATE = 100.0
#: Largest distance from the circle of a tool position seen (m).
TOLERANCE = 0.002
#: How long after the turn the tool is still watched (s).
SETTLE = 0.5
#: Longest pause of the pose stream, or between the joint states seen, in a turn that is judged (s).
#: At the circle's top speed (0.15 m/s) a stream carried 0.05 s along its tangent leaves the
#: circle by 0.5 mm, a quarter of :data:`TOLERANCE`.
MAX_GAP = 0.05
#: Turns drawn at most, while every one before was paused for longer than :data:`MAX_GAP`.
TURNS = 3
#: The tool is at rest when it moved at most :data:`STILL_DISTANCE` (m) over the last
#: :data:`STILL_WINDOW` (s) of joint states: the circle starts there.  A goal succeeds within its
#: goal tolerance (bb_arm.yaml: 0.01 rad a joint, a few mm at the tool) and the arm goes on closing
#: that error; a circle anchored before it has would carry the rest as a deviation.
STILL_DISTANCE, STILL_WINDOW = 1e-4, 0.2
#: How long the demo waits for the tool to come to rest after the ready move (s); then it draws
#: anyway, and the judge says how far the tool strayed.
STILL_WAIT = 3.0
#: The part of each joint's range the ready pose is searched in (centred).
INNER = 0.7
#: The singularity measure the whole circle keeps at least: above the servo's default slowdown (0.06).
READY_MEASURE = 0.065
#: How far from its range's ends every joint stays along the circle (rad or m; the servo's margin is 0.1).
LIMIT_CLEARANCE = 0.15
#: Points on the circle the search follows with inverse kinematics.
CIRCLE_STEPS = 48
#: Random configurations tried, and how many of the best-conditioned are followed around the circle.
SAMPLES, CANDIDATES = 400, 25


class CartesianDemoError(BbRobotError):
    """No ready pose from which the chain can draw the demo's circle (the message says which chain)."""


def min_jerk(fraction: float) -> float:
    """Minimum-jerk timing: 0 to 1 with zero velocity and acceleration at both ends.

    Args:
        fraction: elapsed time over the duration (clamped to 0..1).

    Returns:
        The fraction of the path covered.
    """
    s = min(max(fraction, 0.0), 1.0)
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


@dataclass(frozen=True)
class Circle:
    """The circle the tool draws: through ``start``'s position, in the plane of its x and y axes.

    Attributes:
        start: the tool's pose when the circle starts (4x4, in the chain's base frame).
        radius: metres.
        duration: one turn (s).
    """

    start: FloatArray
    radius: float = RADIUS
    duration: float = TURN_TIME

    @property
    def center(self) -> FloatArray:
        """The centre: one radius along the tool's -x axis from the start."""
        return np.asarray(self.start[:3, 3] - self.radius * self.start[:3, 0])

    def pose(self, t: float) -> FloatArray:
        """The tool pose wanted ``t`` seconds after the start (the start's orientation throughout).

        Args:
            t: seconds since the circle started (before 0: the start; after the turn: the start again).

        Returns:
            The 4x4 pose.
        """
        angle = 2.0 * math.pi * min_jerk(t / self.duration)
        x, y = self.start[:3, 0], self.start[:3, 1]
        pose = self.start.copy()
        pose[:3, 3] = self.center + self.radius * (math.cos(angle) * x + math.sin(angle) * y)
        return pose

    def deviation(self, points: npt.ArrayLike) -> FloatArray:
        """How far each point lies from the circle (m).

        Args:
            points: ``(n, 3)`` positions in the chain's base frame.

        Returns:
            ``(n,)`` distances.
        """
        offset = np.atleast_2d(np.asarray(points, dtype=float)) - self.center
        normal = self.start[:3, 2]
        height = offset @ normal
        in_plane = offset - np.outer(height, normal)
        radial = np.linalg.norm(in_plane, axis=1) - self.radius
        return np.asarray(np.hypot(height, radial))


@dataclass
class TurnTiming:
    """The pauses of one turn: of the demo's pose stream and between the joint states the driver sent.

    Attributes:
        sent: when each pose was sent (s since the turn started).
        state_pauses: the pauses between successive joint states' stamps during the turn (s; those
            of :data:`bb_robot.bringup.status.NOTED_PAUSE` and more will do).
        silences: how often the pose stream the driver received fell silent during the turn (its
            servo stopped the tool where it was, and caught up when poses came again).
    """

    sent: list[float] = field(default_factory=list)
    state_pauses: list[float] = field(default_factory=list)
    silences: int = 0

    def pause(self) -> str:
        """Why the turn cannot be judged: the longest pause over :data:`MAX_GAP`; ``""`` when none was.

        Returns:
            E.g. ``"the pose stream paused for 0.31 s at t = 2.02 s"``, or ``""``.
        """
        stream, at = 0.0, 0
        if len(self.sent) > 1:
            gaps = np.diff(np.asarray(self.sent, dtype=float))
            at = int(np.argmax(gaps))
            stream = float(gaps[at])
        states = max(self.state_pauses, default=0.0)
        if stream > MAX_GAP and stream >= states:
            return f"the pose stream paused for {stream:.2f} s at t = {self.sent[at]:.2f} s"
        if states > MAX_GAP:
            return f"the driver's joint states paused for {states:.2f} s"
        if self.silences:
            times = "once" if self.silences == 1 else f"{self.silences} times"
            return f"the pose stream the driver received fell silent {times}"
        return ""


class Stillness:
    """Whether the tool has come to rest, from the tool positions of successive joint states.

    Args:
        distance: the most the tool may move over ``window`` and be at rest (m).
        window: seconds of joint-state stamps the tool must stay within ``distance`` of where it is.
    """

    def __init__(self, distance: float = STILL_DISTANCE, window: float = STILL_WINDOW) -> None:
        self.distance, self.window = distance, window
        self._seen: list[tuple[float, FloatArray]] = []

    def add(self, stamp: float, tool: npt.ArrayLike) -> bool:
        """Take the tool position of the joint state stamped ``stamp`` (s; an older or repeated
        stamp is ignored).

        Returns:
            Whether the tool stayed within ``distance`` of this position through the last ``window``.
        """
        if self._seen and stamp <= self._seen[-1][0]:
            return self.still
        self._seen.append((stamp, np.asarray(tool, dtype=float)))
        while len(self._seen) > 2 and self._seen[1][0] <= stamp - self.window:
            self._seen.pop(0)
        return self.still

    @property
    def still(self) -> bool:
        """Whether the positions taken span ``window`` and stay within ``distance`` of the last."""
        # (a nanosecond's slack: stamps are nanoseconds, and their differences are rounded)
        if len(self._seen) < 2 or self._seen[-1][0] - self._seen[0][0] < self.window - 1e-9:
            return False
        last = self._seen[-1][1]
        return all(float(np.linalg.norm(tool - last)) <= self.distance for _, tool in self._seen)


def _ranges(chain: SerialManipulator, current: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each joint's range, a continuous joint's taken as a turn centred where it is."""
    lower = np.array(chain.lower_limits, dtype=float)
    upper = np.array(chain.upper_limits, dtype=float)
    open_ended = ~(np.isfinite(lower) & np.isfinite(upper))
    lower = np.where(open_ended, current - math.pi, lower)
    upper = np.where(open_ended, current + math.pi, upper)
    return lower, upper


def measure(chain: SerialManipulator, q: FloatArray, scale: float) -> float:
    """The servo's singularity measure at ``q`` (the linear rows alone for fewer than six joints)."""
    return singularity_measure(np.asarray(chain.jacobian(q))[: 6 if chain.dof >= 6 else 3], scale)


def follow_circle(
    chain: SerialManipulator, ready: FloatArray, lower: FloatArray, upper: FloatArray, scale: float
) -> tuple[FloatArray, float] | None:
    """The chain's configurations around the circle from ``ready``, and the smallest measure on the way.

    Each point is solved from the previous one (the chain follows continuously, as the servo
    does); ``None`` when a point cannot be solved, the chain would jump, or a joint would come
    within :data:`LIMIT_CLEARANCE` of its range's ends.
    """
    circle = Circle(chain.end_effector_pose(ready))
    inner_lower, inner_upper = lower + LIMIT_CLEARANCE, upper - LIMIT_CLEARANCE
    rows, worst, q = [ready], math.inf, ready
    rotation = 1e-5 if chain.dof >= 6 else None  # fewer joints: the servo tracks the position only
    for k in range(1, CIRCLE_STEPS + 1):
        target = circle.pose(circle.duration * k / CIRCLE_STEPS)
        solution = chain.inverse(
            target, seed=q, timeout=None, max_restarts=0, lower=lower, upper=upper, rotation_tolerance=rotation
        )
        if not solution.success:
            return None
        step = solution.q - q
        if float(np.abs(step).max()) > 0.5 or (solution.q < inner_lower).any() or (solution.q > inner_upper).any():
            return None
        q = solution.q
        worst = min(worst, measure(chain, q, scale))
        rows.append(q)
    return np.array(rows), worst


def ready_configuration(
    chain: SerialManipulator,
    current: npt.ArrayLike,
    *,
    clear: Clear | None = None,
    seed: int = 0,
) -> FloatArray:
    """A ready pose for the demo: well-conditioned, its circle followable, clear of collisions.

    Args:
        chain: the servo's chain.
        current: where its joints are (chain order).
        clear: checks configurations for collisions (the move from ``current`` and the circle); ``None``: not checked.
        seed: the search's random seed (the same seed, the same pose).

    Returns:
        The configuration (chain order).

    Raises:
        CartesianDemoError: no candidate passes (the message names the chain and what was required).
    """
    start = np.asarray(current, dtype=float)
    lower, upper = _ranges(chain, start)
    middle, half = (lower + upper) / 2.0, (upper - lower) * INNER / 2.0
    rng = np.random.default_rng(seed)
    samples = middle + half * rng.uniform(-1.0, 1.0, size=(SAMPLES, chain.dof))
    scale = reach(chain)
    measures = np.array([measure(chain, q, scale) for q in samples])
    best: tuple[float, FloatArray] | None = None
    for index in np.argsort(-measures)[:CANDIDATES]:
        ready = samples[index]
        followed = follow_circle(chain, ready, lower, upper, scale)
        if followed is None or followed[1] < READY_MEASURE:
            continue
        rows, worst = followed
        if clear is not None:
            approach = start + np.linspace(0.0, 1.0, 50)[:, None] * (ready - start)
            if not clear(approach) or not clear(rows):
                continue
        if best is None or worst > best[0]:
            best = (worst, ready)
    if best is None:
        raise CartesianDemoError(
            f"chain {chain.base_link} -> {chain.tip_link}: no ready pose found from which the tool can draw a "
            f"{RADIUS * 100:g} cm circle with the singularity measure above {READY_MEASURE:g}, every joint "
            f"{LIMIT_CLEARANCE:g} from its limits{' and no collision' if clear is not None else ''} "
            f"({CANDIDATES} of {SAMPLES} random configurations tried)"
        )
    return best[1]

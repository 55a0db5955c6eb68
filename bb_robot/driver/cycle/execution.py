"""A trajectory handed to the driver's core, its feedback while it runs, and how it ends."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.commands.tolerances import GoalMonitor, Outcome, Tolerances
from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.errors import SUCCESSFUL

FloatArray = npt.NDArray[np.float64]


@dataclass
class Feedback:
    """The latest state of an executing trajectory (for ``FollowJointTrajectory`` feedback).

    Attributes:
        now_ns: When (the driver's monotonic clock).
        desired: Positions, velocities and accelerations the trajectory asks for.
        actual: Positions and velocities measured.
        index: The trajectory point being approached.
    """

    now_ns: int
    desired: tuple[FloatArray, FloatArray, FloatArray]
    actual: tuple[FloatArray, FloatArray]
    index: int


class Execution:
    """A trajectory handed to the core, and how it ends.

    ``done`` is set once ``outcome`` is known; ``feedback`` is updated every cycle while it
    runs.  Topic trajectories have no ``tolerances`` (they only end or are preempted).

    Args:
        trajectory: The prepared trajectory.
        tolerances: Path and goal tolerances (a ``FollowJointTrajectory`` goal), or ``None``.
        source: Where it came from, for messages.
    """

    def __init__(self, trajectory: Trajectory, tolerances: Tolerances | None, source: str) -> None:
        self.trajectory = trajectory
        self.tolerances = tolerances
        self.source = source
        self.done = threading.Event()
        self.outcome: Outcome | None = None
        self.feedback: Feedback | None = None
        self.started = False
        #: Set by whoever asked the core to cancel it (so that it asks once).
        self.cancel_sent = False
        self.monitor = GoalMonitor(trajectory, tolerances) if tolerances is not None else None

    def finish(self, outcome: Outcome) -> None:
        """End it with ``outcome`` (the first outcome wins)."""
        if self.outcome is None:
            self.outcome = outcome
            self.done.set()

    def verdict(self, now: int, sample: JointSample) -> Outcome | None:
        """How it ends at ``now``, given the joints' ``sample``, or ``None`` while it goes on.

        Without tolerances it succeeds at the trajectory's end; with them its goal monitor judges
        this cycle's desired state (its feedback) against the sample.
        """
        trajectory = self.trajectory
        monitor = self.monitor
        if monitor is None:
            return Outcome("succeeded", SUCCESSFUL, "trajectory finished") if now >= trajectory.end_ns else None
        feedback = self.feedback
        if feedback is None:
            return None
        p, v, _ = feedback.desired
        indices = trajectory.indices
        return monitor.check(now, p, v, sample.positions[indices], np.nan_to_num(sample.velocities[indices]))

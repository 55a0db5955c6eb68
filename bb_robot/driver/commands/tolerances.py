"""Path and goal tolerances of a ``FollowJointTrajectory`` goal, and watching a goal execute.

The semantics are those of ``control_msgs/JointTolerance`` as ros2_control's
joint_trajectory_controller applies them:

- defaults come from the node's parameters (``constraints.<joint>.trajectory``: path position
  tolerance; ``constraints.<joint>.goal``: goal position tolerance;
  ``constraints.stopped_velocity_tolerance``: goal velocity tolerance;
  ``constraints.goal_time``: goal time tolerance);
- a goal's tolerance of 0 keeps the default, -1 removes the tolerance, a positive value
  replaces it; any other negative value, or a tolerance for a joint the driver does not drive,
  rejects the goal (``INVALID_GOAL`` / ``INVALID_JOINTS``; the controller logs and falls back
  to its defaults instead);
- a tolerance of 0 after resolution is not checked;
- while the trajectory runs (before its last point's time) the error between desired and
  actual state must stay within the path tolerances, else ``PATH_TOLERANCE_VIOLATED``;
- from the last point's time on, the goal succeeds as soon as the actual state is within the
  goal tolerances; if it is not by ``goal_time`` seconds later, ``GOAL_TOLERANCE_VIOLATED``
  (a goal time tolerance of 0 waits without limit).

Acceleration tolerances are accepted but not checked: no backend measures acceleration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.errors import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    INVALID_JOINTS,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    TrajectoryRejected,
)

FloatArray = npt.NDArray[np.float64]

#: ``control_msgs/JointTolerance``: this value removes a tolerance.
ERASE = -1.0
_ERASE_EPSILON = 1.2e-7


@dataclass(frozen=True)
class StateTolerance:
    """Per-joint tolerances (0: not checked)."""

    position: FloatArray
    velocity: FloatArray
    acceleration: FloatArray

    @classmethod
    def zeros(cls, n: int) -> StateTolerance:
        return cls(np.zeros(n), np.zeros(n), np.zeros(n))


@dataclass(frozen=True)
class Tolerances:
    """The tolerances of one goal, for the trajectory's joints (in its order)."""

    path: StateTolerance
    goal: StateTolerance
    goal_time: float


@dataclass(frozen=True)
class ToleranceDefaults:
    """The node's ``constraints.*`` parameters, for the driver's joints."""

    trajectory: Mapping[str, float]
    goal: Mapping[str, float]
    stopped_velocity: float = 0.01
    goal_time: float = 0.0

    def for_joints(self, names: Sequence[str]) -> Tolerances:
        n = len(names)
        path = StateTolerance(np.array([self.trajectory.get(name, 0.0) for name in names]), np.zeros(n), np.zeros(n))
        goal = StateTolerance(
            np.array([self.goal.get(name, 0.0) for name in names]), np.full(n, self.stopped_velocity), np.zeros(n)
        )
        return Tolerances(path, goal, self.goal_time)


@dataclass(frozen=True)
class JointToleranceSpec:
    """One ``control_msgs/JointTolerance``."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


def _resolve(default: float, value: float, where: str) -> float:
    if not np.isfinite(value):
        raise TrajectoryRejected(INVALID_GOAL, f"{where} is {value}, not a finite number")
    if value > 0.0:
        return value
    if abs(value - ERASE) < _ERASE_EPSILON:
        return 0.0
    if value < 0.0:
        raise TrajectoryRejected(INVALID_GOAL, f"{where} is {value:g}; a tolerance is > 0, 0 (default) or -1 (none)")
    return default


def resolve_tolerances(
    defaults: Tolerances,
    names: Sequence[str],
    path: Sequence[JointToleranceSpec] = (),
    goal: Sequence[JointToleranceSpec] = (),
    goal_time: float = 0.0,
) -> Tolerances:
    """The tolerances of a goal for the trajectory joints ``names`` (see the module docstring)."""
    index = {name: i for i, name in enumerate(names)}
    result = {}
    for label, specs, base in (("path_tolerance", path, defaults.path), ("goal_tolerance", goal, defaults.goal)):
        position, velocity, acceleration = base.position.copy(), base.velocity.copy(), base.acceleration.copy()
        for spec in specs:
            i = index.get(spec.name)
            if i is None:
                raise TrajectoryRejected(
                    INVALID_JOINTS, f"{label} names joint '{spec.name}', which is not in the trajectory"
                )
            where = f"{label} of joint '{spec.name}'"
            position[i] = _resolve(position[i], spec.position, f"{where}: position")
            velocity[i] = _resolve(velocity[i], spec.velocity, f"{where}: velocity")
            acceleration[i] = _resolve(acceleration[i], spec.acceleration, f"{where}: acceleration")
        result[label] = StateTolerance(position, velocity, acceleration)
    time_tolerance = _resolve(defaults.goal_time, goal_time, "goal_time_tolerance")
    return Tolerances(result["path_tolerance"], result["goal_tolerance"], time_tolerance)


@dataclass(frozen=True)
class Outcome:
    """How a goal ended: ``code`` (``FollowJointTrajectory`` result code), ``status``
    (``"succeeded"``, ``"aborted"`` or ``"canceled"``) and a message."""

    status: str
    code: int
    message: str


def _violation(names: Sequence[str], error_p: FloatArray, error_v: FloatArray, tolerance: StateTolerance) -> str | None:
    for label, error, bound in (("position", error_p, tolerance.position), ("velocity", error_v, tolerance.velocity)):
        bad = (bound > 0.0) & (np.abs(error) > bound)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            return f"joint '{names[j]}' {label} error {error[j]:.4g} exceeds the tolerance {bound[j]:g}"
    return None


class GoalMonitor:
    """Checks one executing trajectory against its tolerances, cycle by cycle."""

    def __init__(self, trajectory: Trajectory, tolerances: Tolerances) -> None:
        self.trajectory = trajectory
        self.tolerances = tolerances

    def check(
        self,
        now_ns: int,
        desired_position: FloatArray,
        desired_velocity: FloatArray,
        actual_position: FloatArray,
        actual_velocity: FloatArray,
    ) -> Outcome | None:
        """``None`` while the goal runs on; an :class:`Outcome` once it has ended.

        The arrays are for the trajectory's joints, in its order.
        """
        trajectory = self.trajectory
        t = (now_ns - trajectory.start_ns) * 1e-9
        names = trajectory.names
        if t < trajectory.duration:
            text = _violation(
                names, desired_position - actual_position, desired_velocity - actual_velocity, self.tolerances.path
            )
            if text is not None:
                return Outcome("aborted", PATH_TOLERANCE_VIOLATED, f"path tolerance violated at t={t:.3f} s: {text}")
            return None
        final_position, final_velocity, _ = trajectory.sample_at(trajectory.duration)
        text = _violation(
            names, actual_position - final_position, actual_velocity - final_velocity, self.tolerances.goal
        )
        if text is None:
            return Outcome("succeeded", SUCCESSFUL, "goal reached")
        late = t - trajectory.duration
        if self.tolerances.goal_time > 0.0 and late > self.tolerances.goal_time:
            return Outcome(
                "aborted",
                GOAL_TOLERANCE_VIOLATED,
                f"goal tolerance not met {late:.3f} s after the trajectory's end (goal_time_tolerance "
                f"{self.tolerances.goal_time:g} s): {text}",
            )
        return None

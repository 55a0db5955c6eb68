"""The driver core's goal handling: trajectories prepared and queued (any thread), started when the
loop takes them, checked against their tolerances each cycle, and ended: succeeded, aborted,
preempted or canceled, the joints holding where they should."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.tolerances import Outcome, Tolerances
from bb_robot.driver.commands.trajectory import Trajectory, TrajectoryPoint, build_trajectory
from bb_robot.driver.core.parts import CoreParts
from bb_robot.driver.cycle.execution import Execution
from bb_robot.driver.cycle.inbox import (
    CancelExecution,
    ExecuteTrajectory,
)
from bb_robot.driver.cycle.setpoints import TRAJECTORY
from bb_robot.driver.errors import INVALID_GOAL, SUCCESSFUL, TrajectoryRejected


class GoalHandling(CoreParts):
    """Trajectories and goals: checked and queued from any thread, started, ended and checked against
    their tolerances by the loop."""

    def prepare_trajectory(
        self,
        joint_names: Sequence[str],
        points: Sequence[TrajectoryPoint],
        *,
        start_ns: int | None = None,
        source: str = "",
    ) -> Trajectory:
        """Check and interpolate a trajectory from the joints' current state (any thread).

        ``start_ns``: when its time 0 falls on the driver's monotonic clock (``None``: now).
        Raises :class:`TrajectoryRejected` or :class:`CommandRejected` (inactive, disarmed).
        """
        with self._lock:
            self._check_accepting()
            settings = self.settings
            limits = self.limits
        snapshot = self._snapshot
        sample = snapshot.sample
        if sample is None or not snapshot.all_seen:
            raise TrajectoryRejected(INVALID_GOAL, "the backend has not reported every joint yet")
        # Execution begins two loop periods from now (the loop picks the trajectory up before);
        # the joints' state then is extrapolated from the latest sample.
        lead = 2 * (self._loop.period_ns if self._loop is not None else 2_000_000)
        begin = self._clock() + lead
        dt = max(begin - sample.stamp_ns, 0) * 1e-9
        velocities = np.nan_to_num(sample.velocities)
        positions = sample.positions + velocities * dt
        trajectory = build_trajectory(
            joint_names,
            points,
            limits,
            positions,
            velocities,
            start_ns=begin if start_ns is None else start_ns,
            now_ns=begin,
            options=settings.trajectory,
            source=source,
        )
        if self.trajectory_check is not None:
            checked_from = self._clock()
            self.trajectory_check(trajectory, positions)
            if start_ns is None:  # "start now": from when the check ends, not from before it
                trajectory = replace(trajectory, start_ns=trajectory.start_ns + self._clock() - checked_from)
        return trajectory

    def execute(self, trajectory: Trajectory, tolerances: Tolerances | None = None, source: str = "") -> Execution:
        """Queue a prepared trajectory; it preempts the active one at the next cycle."""
        execution = Execution(trajectory, tolerances, source or trajectory.source)
        with self._lock:
            self._check_accepting()
            self._last_command_ns = self._clock()
            self._inbox.append(ExecuteTrajectory(execution))
        return execution

    def cancel(self, execution: Execution, reason: str = "canceled") -> None:
        """Stop ``execution`` (the joints hold) and end it as canceled."""
        with self._lock:
            self._inbox.append(CancelExecution(execution, reason))
            if not self.running:
                execution.finish(Outcome("canceled", SUCCESSFUL, reason))

    def _start_execution(self, execution: Execution, sample: JointSample, now: int) -> None:
        if not self.arming.armed or self.stale_watch.holding:
            why = self.stale_watch.reason() if self.arming.armed else f"the driver is {self.arming.state.value}"
            execution.finish(Outcome("aborted", INVALID_GOAL, why))
            return
        previous = self._execution
        if previous is not None:
            self._end_execution(
                Outcome("aborted", INVALID_GOAL, f"preempted by a new trajectory from {execution.source}"),
                sample,
                now,
                hold_final=False,
            )
        indices = execution.trajectory.indices
        self._setpoints.set_modes(indices, TRAJECTORY)
        self._execution = execution
        execution.started = True
        self._watchdog_tripped = False
        if self.backend.capabilities.trajectories:
            try:
                self.backend.send_trajectory(execution.trajectory)
            except Exception as error:  # noqa: BLE001
                self._log("warning", f"backend '{self.backend.name}' refused the trajectory: {error!r}")

    def _end_execution(self, outcome: Outcome, sample: JointSample | None, now: int, *, hold_final: bool) -> None:
        execution = self._execution
        if execution is None:
            return
        self._execution = None
        indices = execution.trajectory.indices
        setpoints = self._setpoints
        mine = indices[setpoints.modes[indices] == TRAJECTORY]
        if hold_final:
            setpoints.set_modes(indices, int(CommandMode.HOLD))
            setpoints.hold[indices] = execution.trajectory.final_positions
        else:
            setpoints.hold_joints(mine, sample)
        execution.finish(outcome)

    def _check_goal(self, execution: Execution, sample: JointSample, now: int) -> None:
        outcome = execution.verdict(now, sample)
        if outcome is None:
            return
        succeeded = outcome.status == "succeeded"
        if not succeeded:
            self._log("warning", f"trajectory from {execution.source} aborted: {outcome.message}")
        self._end_execution(outcome, sample, now, hold_final=succeeded)

"""One cycle of the driver's core: read the backend, apply the inbox (every message handled in one
``match``), arming, the watchdog and stale joints, the command through the collision filter,
write it, check the goal, and publish the snapshot (the steps of :mod:`bb_robot.driver.core.core`'s
docstring)."""

from __future__ import annotations

from typing import assert_never

from bb_robot.driver.backends.base import BackendCommand, JointSample
from bb_robot.driver.commands.commands import MODE_NAMES, JointCommand
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.tolerances import Outcome
from bb_robot.driver.core.reactions import SafetyReactions
from bb_robot.driver.cycle.inbox import (
    CancelExecution,
    ExecuteTrajectory,
    HoldAll,
    InboxMessage,
    KeepCommand,
    ServoInput,
    SetLimits,
    SetRobot,
    SubmitCommand,
)
from bb_robot.driver.errors import INVALID_GOAL, SUCCESSFUL
from bb_robot.driver.servo.servo import PREEMPTED
from bb_robot.driver.state.samples import freshness
from bb_robot.driver.state.snapshot import CoreSettings, Snapshot
from bb_robot.driver.timing.loop import CycleInfo


class CycleStep(SafetyReactions):
    """One control cycle, and the inbox it applies (see :mod:`bb_robot.driver.core.core`)."""

    def step(self, info: CycleInfo) -> None:
        """One control cycle (the loop thread; tests may call it directly)."""
        with self._cycle_lock:
            self._step(info.start_ns)

    def _step(self, now: int) -> None:
        self._cycle += 1
        self._cycle_failed = False
        sample = self._read(now)
        settings, last_command = self._drain(sample, now)
        command = None
        if sample is not None:
            self._watchdog(settings, last_command, sample, now)
            self._check_stale(settings, sample, now)
            command = self._command(sample, now)
            self._write(command, now)
            if self._execution is not None:
                self._check_goal(self._execution, sample, now)
        if not self._cycle_failed:
            self._backend_failing = False
        # After a failed read the last good sample stays, its stamps ageing: it turns stale.
        self._publish(sample if sample is not None else self._sample, now, settings, command)
        if now >= self._next_health_ns:
            self._poll_health(now)

    def _drain(self, sample: JointSample | None, now: int) -> tuple[CoreSettings, int | None]:
        """Apply what the inbox holds and an arming change; returns the settings and the time of
        the last command, as they were when the inbox was taken."""
        with self._lock:
            items = list(self._inbox)
            self._inbox.clear()
            armed = self.arming.armed
            settings = self.settings
            last_command = self._last_command_ns
        if sample is not None and self._dropped_without_sample:
            dropped = self._dropped_without_sample
            self._log("info", f"the backend gives joint states again ({dropped} command(s) dropped meanwhile)")
            self._dropped_without_sample = 0
        for message in items:
            self._apply(message, sample, now)
        if armed != self._was_armed and (sample is not None or armed):
            self._on_arming_changed(armed, sample, now)
        return settings, last_command

    def _read(self, now: int) -> JointSample | None:
        try:
            sample = self.backend.read(now)
        except Exception as error:  # noqa: BLE001 - a failing backend puts the driver in error
            self._fail(f"backend '{self.backend.name}' failed to read: {error}")
            return None
        self._sample = sample
        return sample

    def _write(self, command: BackendCommand, now: int) -> None:
        try:
            self.backend.write(command, now)
        except Exception as error:  # noqa: BLE001
            self._fail(f"backend '{self.backend.name}' failed to write: {error}")
            return
        if self._pending_latency:
            done = self._clock()
            for received in self._pending_latency:
                self._latency.add(done - received)
            self._pending_latency.clear()

    def _apply(self, message: InboxMessage, sample: JointSample | None, now: int) -> None:
        """Handle one inbox message, with this cycle's sample or without one (the backend's read failed).

        Without a sample: a command is dropped (its joints keep what they did; said once per
        stretch without samples), a trajectory is aborted (its outcome says why), a cancellation
        or a hold holds the joints where they are next reported; limits and the model are applied.
        """
        match message:
            case SubmitCommand(command=command):
                if sample is None:
                    self._dropped_without_sample += 1
                    if self._dropped_without_sample == 1:
                        self._log(
                            "warning",
                            f"a command on {command.source} arrived while the backend gives no joint state: dropped "
                            "(so are the next ones until it does)",
                        )
                    return
                self._apply_command(command, sample, now)
            case ExecuteTrajectory(execution=execution):
                if sample is None:
                    self._log("warning", f"trajectory from {execution.source} aborted: the backend gave no joint state")
                    execution.finish(Outcome("aborted", INVALID_GOAL, "the backend gave no joint state"))
                    return
                self._start_execution(execution, sample, now)
            case CancelExecution(execution=execution, reason=reason):
                if execution is self._execution:
                    self._end_execution(Outcome("canceled", SUCCESSFUL, reason), sample, now, hold_final=False)
                else:
                    execution.finish(Outcome("canceled", SUCCESSFUL, reason))
            case HoldAll(reason=reason):
                self._hold_every_joint(reason, sample, now)
                if sample is None:
                    self._log("info", f"{reason}: every joint holds where the backend next reports it")
            case KeepCommand(indices=indices, positions=positions):
                if self.arming.armed and not self.stale_watch.holding:
                    self._setpoints.keep_command(indices, positions)
            case SetLimits(limits=limits):
                self._apply_limits(limits)
            case SetRobot(robot=robot):
                self.backend.set_robot(robot)
            case ServoInput():  # taken when armed with a sample; a trajectory on the servo's joints ends
                if self.servo is not None and self.servo.take(message, self._setpoints, sample, self):
                    self._end_execution(PREEMPTED, sample, now, hold_final=False)
            case _:
                assert_never(message)

    def _apply_limits(self, limits: JointLimitTable) -> None:
        self.limits = limits
        self._setpoints.use_limits(limits)
        try:
            self.backend.set_limits(limits)
        except Exception as error:  # noqa: BLE001
            self._log("warning", f"backend '{self.backend.name}' did not take the new limits: {error!r}")

    def _apply_command(self, command: JointCommand, sample: JointSample, now: int) -> None:
        if not self.arming.armed or self.stale_watch.holding:
            return  # disarmed, or a joint went stale, after it was queued: dropped (the joints hold)
        execution = self._execution
        if execution is not None and self._setpoints.masks().traj[command.indices].any():
            self._end_execution(
                Outcome(
                    "aborted", INVALID_GOAL, f"preempted by a {MODE_NAMES[command.mode]} command on {command.source}"
                ),
                sample,
                now,
                hold_final=False,
            )
        self._setpoints.set_modes(command.indices, int(command.mode))
        self._setpoints.targets[command.indices] = command.values
        self._watchdog_tripped = False
        self._pending_latency.append(command.received_ns)

    def _command(self, sample: JointSample, now: int) -> BackendCommand:
        period = self._loop.period_ns * 1e-9 if self._loop is not None else 0.002
        command = self._setpoints.command(sample, now, self._execution, period, self.servo)
        if self.command_filter is not None:
            command = self.command_filter(command, sample, now, self._execution is not None)
        return command

    def _publish(
        self, sample: JointSample | None, now: int, settings: CoreSettings, command: BackendCommand | None
    ) -> None:
        all_seen, stale = freshness(self.names, sample, now, settings.stale_timeout)
        self._snapshot = Snapshot(
            cycle=self._cycle,
            now_ns=now,
            sample=sample,
            all_seen=all_seen,
            stale=stale,
            arm_state=self.arming.state,
            arm_reason=self.arming.reason,
            modes=self._setpoints.masks().labels,
            desired=command.position if command is not None else None,
        )
        self._samples.after_cycle(sample, all_seen, stale)

    def run_cycles(self, count: int, period_ns: int, start_ns: int | None = None) -> int:
        """Run ``count`` cycles back to back on a simulated clock (for tests); returns the end time."""
        now = start_ns if start_ns is not None else self._clock()
        for k in range(count):
            self.step(CycleInfo(k, now, now, period_ns))
            now += period_ns
        return now

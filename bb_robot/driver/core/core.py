"""The driver's core: the control loop, what each joint does, arming, the watchdog, goals.

:class:`DriverCore` owns the backend while the loop runs.  ROS callbacks (any thread) hand it
checked commands and trajectories; its loop thread applies them at the next cycle, so a
callback never waits for the loop nor the loop for a callback.  Every cycle:

1. ``backend.read(now)``: the joints' state (kept as the latest :class:`Snapshot`);
2. the inbox (:mod:`bb_robot.driver.cycle.inbox`): commands, trajectories, cancellations, limit and
   model changes, typed messages handled in one place (:meth:`DriverCore._apply`), also when the
   backend gave no sample (then what needs one says so);
3. arming and the watchdog;
4. per joint (:mod:`bb_robot.driver.cycle.setpoints`), the setpoint of its mode: hold, position,
   velocity (slowed so that the joint can stop before its limits), effort, or the active
   trajectory's sample;
5. a last guard clamps positions into the command range and velocities and efforts to
   their limits, then ``backend.write(command, now)``;
6. the active trajectory's goal is checked against its tolerances.

Hold: a joint told to hold (no command yet, the watchdog, disarming, deactivation, a
cancelled or aborted trajectory) is sent to the position where it stops when braking at its
acceleration limit from its current velocity (its current position without one), so it
stops without coming back.  At the natural end of a trajectory the joints hold its last
point.

Two paths do not wait for a cycle (both on by default in the node):

- **Immediate commands** (``CoreSettings.immediate_commands``): a streaming command handed to
  :meth:`DriverCore.submit` is applied and written to the backend at once by the thread that
  submitted it (steps 2, 4 and 5 on the latest sample), serialised with the loop by the cycle
  lock; the loop keeps writing it every cycle.  Command → backend then costs the callback's own
  time, not up to a period.
- **Sample watching** (:meth:`DriverCore.watch_samples`): a listener gets every new sample, from
  the backend's own thread as it arrives where the backend can
  (:meth:`~bb_robot.driver.backends.base.Backend.watch_samples`), else from the loop thread after
  each cycle (:mod:`bb_robot.driver.state.samples`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import assert_never

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends.base import Backend, BackendCommand, Health, HealthLevel, JointSample
from bb_robot.driver.commands.commands import MODE_NAMES, CommandMode, JointCommand
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.tolerances import Outcome, Tolerances
from bb_robot.driver.commands.trajectory import Trajectory, TrajectoryPoint, build_trajectory
from bb_robot.driver.cycle.execution import Execution, Feedback
from bb_robot.driver.cycle.inbox import (
    CancelExecution,
    ExecuteTrajectory,
    HoldAll,
    InboxMessage,
    ServoInput,
    SetLimits,
    SetRobot,
    SubmitCommand,
)
from bb_robot.driver.cycle.setpoints import TRAJECTORY, Setpoints
from bb_robot.driver.cycle.watchdog import watchdog_trip
from bb_robot.driver.errors import INVALID_GOAL, SUCCESSFUL, CommandRejected, TrajectoryRejected
from bb_robot.driver.servo.servo import PREEMPTED, Servo
from bb_robot.driver.state.arming import Arming, ArmState
from bb_robot.driver.state.samples import SampleFanout, SampleListener, freshness
from bb_robot.driver.state.snapshot import LATENCY_WINDOW, CommandLatency, CoreSettings, Snapshot, replace_settings
from bb_robot.driver.timing.loop import CycleInfo, LoopStats, RateLoop
from bb_robot.driver.timing.staleness import StaleWatch
from bb_robot.model.robot import Robot

__all__ = [
    "HEALTH_PERIOD",
    "LATENCY_WINDOW",
    "TRAJECTORY",
    "WATCHDOG_ACTIONS",
    "CoreSettings",
    "DriverCore",
    "Execution",
    "Feedback",
    "SampleListener",
    "Snapshot",
    "replace_settings",
]

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]

#: How often the loop asks the backend for its health (seconds).
HEALTH_PERIOD = 0.2
WATCHDOG_ACTIONS = ("hold", "disarm")


class DriverCore:
    """The control loop and everything it decides (see the module docstring).

    ``log(level, text)`` receives what the driver has to say (``level``: ``"debug"``,
    ``"info"``, ``"warning"``, ``"error"``); it is called from the loop thread too, so it must
    be quick (the ROS logger is).
    """

    def __init__(
        self,
        backend: Backend,
        limits: JointLimitTable,
        settings: CoreSettings | None = None,
        *,
        log: LogFunction | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        armed: bool = False,
    ) -> None:
        self.backend = backend
        self.names = limits.names
        self.limits = limits
        self.settings = settings if settings is not None else CoreSettings()
        self._log_function = log or (lambda level, text: None)
        self._clock = clock
        self._lock = threading.Lock()
        #: Held for a whole cycle, and by an immediate command: one of them at a time.
        self._cycle_lock = threading.Lock()
        self._samples = SampleFanout(self.names, backend, clock, lambda: self.settings.stale_timeout, self._log)
        self._inbox: deque[InboxMessage] = deque()
        self.arming = Arming(armed)
        self.active = False
        n = len(self.names)
        self._setpoints = Setpoints(limits, backend.capabilities.bounds_velocity)
        self._execution: Execution | None = None
        self._last_command_ns: int | None = None
        self._watchdog_tripped = False
        self.stale_watch = StaleWatch()
        self._started_ns = 0
        self._was_armed = self.arming.armed
        self._sample: JointSample | None = None
        self._snapshot = Snapshot(0, 0, None, False, (), self.arming.state, self.arming.reason, ("hold",) * n)
        self._health = Health(connected=False, message="not connected")
        self._next_health_ns = 0
        self._latency = CommandLatency()
        self._pending_latency: list[int] = []
        self._loop: RateLoop | None = None
        self._thread: threading.Thread | None = None
        self._cycle = 0
        self._backend_failing = False
        self._cycle_failed = False
        self.errors = 0
        self._last_error = ""
        #: Commands that arrived while the backend gave no sample (dropped), since the last sample.
        self._dropped_without_sample = 0
        #: Collision hooks (bb_robot.driver.guard.collision_guard), set before the loop starts: one may refuse a
        #: prepared trajectory, the other slow or stop each cycle's command (without waiting).
        self.trajectory_check: Callable[[Trajectory, FloatArray], None] | None = None
        self.command_filter: Callable[[BackendCommand, JointSample, int, bool], BackendCommand] | None = None
        self.servo: Servo | None = None  #: The Cartesian servo (bb_robot.driver.servo), set before the loop starts.

    # ------------------------------------------------------------------ helpers
    def _log(self, level: str, text: str) -> None:
        try:
            self._log_function(level, text)
        except Exception:  # noqa: BLE001 - logging must never stop the loop
            pass

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def health(self) -> Health:
        return self._health

    @property
    def execution(self) -> Execution | None:
        return self._execution

    def loop_stats(self) -> LoopStats | None:
        return self._loop.stats() if self._loop is not None else None

    @property
    def scheduling(self) -> str:
        """How the loop thread is scheduled (real-time or not, and why)."""
        return self._loop.scheduling if self._loop is not None else "not started"

    def command_latency(self) -> tuple[float, float, float] | None:
        """Command received → written to the backend: (p50, p99, max) in seconds, recent window."""
        return self._latency.percentiles()

    def last_command_age(self, now_ns: int | None = None) -> float | None:
        last = self._last_command_ns
        if last is None:
            return None
        return ((now_ns if now_ns is not None else self._clock()) - last) * 1e-9

    # ------------------------------------------------------------- the loop
    def start(self, rate: float, priority: int = 0) -> None:
        """Start the loop thread at ``rate`` Hz (the backend must be connected); ``priority`` > 0
        asks for real-time scheduling (see :mod:`bb_robot.driver.timing.loop`)."""
        if self._thread is not None:
            raise RuntimeError("the loop is already running")
        try:
            self.backend.set_armed(self.arming.armed)  # the backend learns the arming state it starts in
        except Exception as error:  # noqa: BLE001
            self._log("warning", f"backend '{self.backend.name}' failed to take the arming state: {error!r}")
        self.backend.start()
        self.stale_watch.restart()
        self._started_ns = self._clock()
        self._loop = RateLoop(rate, self._clock, priority)
        self._samples.thread_priority = 1 if priority > 0 else 0
        loop = self._loop
        self._thread = threading.Thread(target=self._run, args=(loop,), name="bb_robot-driver-loop", daemon=True)
        self.active = True
        self._thread.start()

    def _run(self, loop: RateLoop) -> None:
        try:
            loop.run(self.step)
        except Exception as error:  # noqa: BLE001 - reported, never silent
            self._log("error", f"the control loop stopped on an unexpected error: {error!r}")
            with self._lock:
                self.arming.fault(f"control loop failure: {error!r}")

    def stop(self, settle_timeout: float = 2.0) -> None:
        """Hold every joint, let the loop run until they stop (at most ``settle_timeout`` s), then stop
        it; the sample listener (:meth:`watch_samples`) is dropped."""
        with self._lock:
            self.active = False
            self._inbox.append(HoldAll("the driver was deactivated"))
        thread = self._thread
        if thread is None:
            return
        deadline = time.monotonic() + settle_timeout
        while time.monotonic() < deadline and thread.is_alive():
            sample = self._snapshot.sample
            if self._snapshot.cycle > 0 and not self._inbox and sample is not None:
                moving = np.abs(np.nan_to_num(sample.velocities)) > 1e-6
                if not moving.any():
                    break
            time.sleep(0.005)
        assert self._loop is not None
        self._loop.stop()
        thread.join(5.0)
        self._thread = None
        self.watch_samples(None)
        try:
            self.backend.stop()
        except Exception as error:  # noqa: BLE001
            self._log("warning", f"backend '{self.backend.name}' failed to stop: {error!r}")

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # --------------------------------------------------- entry points (any thread)
    def submit(self, command: JointCommand | ServoInput) -> None:
        """Queue a checked command for the next cycle; raises :class:`CommandRejected` when the
        driver is inactive or not armed."""
        with self._lock:
            self._check_accepting()
            self._last_command_ns = command.received_ns
            self._inbox.append(SubmitCommand(command) if isinstance(command, JointCommand) else command)
            immediate = self.settings.immediate_commands
        if immediate and self.running:
            self._dispatch()

    def _dispatch(self) -> None:
        """Apply the inbox and write the command now, on the latest sample (an off-grid half cycle:
        no read, no watchdog, no goal check, no snapshot; the next cycle does those)."""
        with self._cycle_lock:
            sample = self._sample
            if sample is None or not self.running:
                return  # the loop applies it
            now = self._clock()
            self._drain(sample, now)
            self._write(self._command(sample, now), now)

    def _check_accepting(self) -> None:
        if not self.active:
            raise CommandRejected("inactive", "the driver is not active (activate it through its lifecycle)")
        if not self.arming.armed:
            state = self.arming.state.value
            hint = "call ~/reset, then ~/arm" if self.arming.state is ArmState.ERROR else "call ~/arm"
            raise CommandRejected("disarmed", f"the driver is {state} ({self.arming.reason}); {hint}")
        if self.stale_watch.holding:
            raise CommandRejected("stale", self.stale_watch.reason())

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

    def arm(self) -> tuple[bool, str]:
        with self._lock:
            return self.arming.arm()

    def disarm(self, reason: str = "disarm requested") -> tuple[bool, str]:
        with self._lock:
            return self.arming.disarm(reason)

    def reset(self) -> tuple[bool, str]:
        health = self._health
        healthy = health.connected and health.level < HealthLevel.ERROR and not self._backend_failing
        problem = health.message if not healthy else ""
        if self._backend_failing:
            problem = f"the backend still fails: {self._last_error}"
        with self._lock:
            return self.arming.reset(healthy, problem)

    def set_limits(self, limits: JointLimitTable) -> None:
        """New effective limits (applied at the next cycle, also given to the backend)."""
        if limits.names != self.names:
            raise ValueError("the limits are for other joints")
        with self._lock:
            self.limits = limits
            self._inbox.append(SetLimits(limits))
        if not self.running:
            self._apply_limits(limits)

    def set_robot(self, robot: Robot) -> None:
        """The model's bound parameters changed (given to the backend at the next cycle)."""
        with self._lock:
            self._inbox.append(SetRobot(robot))
        if not self.running:
            self.backend.set_robot(robot)

    def update_settings(self, settings: CoreSettings) -> None:
        with self._lock:
            self.settings = settings

    def hold_all(self, reason: str) -> None:
        with self._lock:
            self._inbox.append(HoldAll(reason))

    # ------------------------------------------------------------ one cycle
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

    def _fail(self, reason: str) -> None:
        self._cycle_failed = True
        self.errors += 1
        self._last_error = reason
        if not self._backend_failing:
            self._log("error", reason)
        self._backend_failing = True
        with self._lock:
            changed = self.arming.fault(reason)
        if changed:
            self._log("error", f"driver in error: {reason}; joints hold; call ~/reset once the cause is fixed")

    def _poll_health(self, now: int) -> None:
        self._next_health_ns = now + int(HEALTH_PERIOD * 1e9)
        try:
            health = self.backend.health()
        except Exception as error:  # noqa: BLE001
            health = Health(connected=False, level=HealthLevel.ERROR, message=f"health() failed: {error!r}")
        self._health = health
        if not health.connected or health.level >= HealthLevel.ERROR:
            with self._lock:
                changed = self.arming.fault(f"backend '{self.backend.name}': {health.message}")
            if changed:
                self._log("error", f"driver in error: backend '{self.backend.name}' reports: {health.message}")

    # -------------------------------------------------------------- the inbox
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

    def _on_arming_changed(self, armed: bool, sample: JointSample | None, now: int) -> None:
        self._was_armed = armed
        if not armed and sample is not None:
            self._hold_every_joint(f"the driver was {self.arming.state.value}: {self.arming.reason}", sample, now)
        try:
            self.backend.set_armed(armed)
        except Exception as error:  # noqa: BLE001
            self._log("warning", f"backend '{self.backend.name}' failed to {'arm' if armed else 'disarm'}: {error!r}")

    def _watchdog(self, settings: CoreSettings, last_command: int | None, sample: JointSample, now: int) -> None:
        if self._watchdog_tripped or self._execution is not None:
            return
        trip = watchdog_trip(settings.command_timeout, self._setpoints.masks(), last_command, sample.velocities, now)
        if trip is None:
            return
        self._watchdog_tripped = True
        if settings.watchdog_action == "disarm":
            with self._lock:
                self.arming.disarm(f"watchdog: {trip.what}")
            self._log("warning", f"watchdog: {trip.what}: disarming")
            self._on_arming_changed(False, sample, now)
        else:
            self._setpoints.hold_joints(trip.commanded, sample)
            self._log("warning" if trip.moving else "debug", f"watchdog: {trip.what}: holding position")

    def _check_stale(self, settings: CoreSettings, sample: JointSample, now: int) -> None:
        """Take ``stale_action`` on the cycle a joint goes stale (:mod:`bb_robot.driver.timing.staleness`)."""
        stale = freshness(self.names, sample, now, settings.stale_timeout)[1]
        change = self.stale_watch.update(stale, bool(sample.stamps.min() >= self._started_ns))
        if change is not None:
            self._log(*change.log_line(settings.stale_timeout, settings.stale_action))
        if change is None or change.recovered:
            return
        if settings.stale_action == "disarm":
            with self._lock:
                self.arming.disarm(f"stale_action: {change.describe(settings.stale_timeout)}")
            self._on_arming_changed(False, sample, now)
        else:
            self._hold_every_joint(change.describe(settings.stale_timeout), sample, now)

    def _hold_every_joint(self, reason: str, sample: JointSample | None, now: int) -> None:
        """End a running goal (aborted, ``reason``) and hold every joint where it was last reported."""
        if self._execution is not None:
            self._end_execution(Outcome("aborted", INVALID_GOAL, reason), sample, now, hold_final=False)
        self._setpoints.hold_joints(np.arange(len(self.names)), sample)

    # ---------------------------------------------------------- the command
    def _command(self, sample: JointSample, now: int) -> BackendCommand:
        period = self._loop.period_ns * 1e-9 if self._loop is not None else 0.002
        command = self._setpoints.command(sample, now, self._execution, period, self.servo)
        if self.command_filter is not None:
            command = self.command_filter(command, sample, now, self._execution is not None)
        return command

    # ------------------------------------------------------------------ goals
    def _check_goal(self, execution: Execution, sample: JointSample, now: int) -> None:
        outcome = execution.verdict(now, sample)
        if outcome is None:
            return
        succeeded = outcome.status == "succeeded"
        if not succeeded:
            self._log("warning", f"trajectory from {execution.source} aborted: {outcome.message}")
        self._end_execution(outcome, sample, now, hold_final=succeeded)

    # ------------------------------------------------------------- snapshot
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

    # ------------------------------------------------------------ sample watching
    def watch_samples(self, listener: SampleListener | None) -> None:
        """Call ``listener(sample, all_seen, stale)`` with every new sample (``None``: stop).

        From the backend's own thread as the sample arrives when the backend offers it
        (:meth:`Backend.watch_samples`), else from the loop thread at the end of each cycle.
        The listener must be quick and must not raise (what it raises is logged).
        """
        self._samples.watch(listener)

    @property
    def samples_from_backend(self) -> bool:
        """Whether the listener is called by the backend as samples arrive (not after each cycle)."""
        return self._samples.from_backend

    # ---------------------------------------------------------------- tests
    def run_cycles(self, count: int, period_ns: int, start_ns: int | None = None) -> int:
        """Run ``count`` cycles back to back on a simulated clock (for tests); returns the end time."""
        now = start_ns if start_ns is not None else self._clock()
        for k in range(count):
            self.step(CycleInfo(k, now, now, period_ns))
            now += period_ns
        return now

"""The driver's core: the control loop, what each joint does, arming, the watchdog, goals.

:class:`DriverCore` owns the backend while the loop runs.  ROS callbacks (any thread) hand it
checked commands and trajectories; its loop thread applies them at the next cycle, so a
callback never waits for the loop nor the loop for a callback.  Every cycle:

1. ``backend.read(now)``: the joints' state (kept as the latest :class:`Snapshot`);
2. the inbox: commands, trajectories, cancellations, limit and setting changes;
3. arming and the watchdog;
4. per joint, the setpoint of its mode: hold, position, velocity (slowed so that the joint
   can stop before its limits), effort, or the active trajectory's sample;
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
  each cycle.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.driver.arming import Arming, ArmState
from bb_robot.driver.backends.base import Backend, BackendCommand, Health, HealthLevel, JointSample
from bb_robot.driver.commands import MODE_NAMES, CommandMode, JointCommand
from bb_robot.driver.errors import INVALID_GOAL, SUCCESSFUL, CommandRejected, TrajectoryRejected
from bb_robot.driver.limits import JointLimitTable, braking_speeds
from bb_robot.driver.loop import CycleInfo, LoopStats, RateLoop, request_realtime
from bb_robot.driver.tolerances import GoalMonitor, Outcome, Tolerances
from bb_robot.driver.trajectory import Trajectory, TrajectoryOptions, TrajectoryPoint, build_trajectory

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]

#: Internal mode of a joint driven by the active trajectory.
TRAJECTORY = 4
_MODE_LABELS = {**{int(m): name for m, name in MODE_NAMES.items()}, TRAJECTORY: "trajectory"}
#: Samples kept for the command latency statistics.
LATENCY_WINDOW = 4096
#: How often the loop asks the backend for its health (seconds).
HEALTH_PERIOD = 0.2
WATCHDOG_ACTIONS = ("hold", "disarm")


@dataclass(frozen=True)
class CoreSettings:
    """Settings that may change while the loop runs (the node's parameters)."""

    command_timeout: float = 0.5
    watchdog_action: str = "hold"
    stale_timeout: float = 0.1
    trajectory: TrajectoryOptions = field(default_factory=TrajectoryOptions)
    #: Write a submitted command at once (in the submitting thread), not at the next cycle.
    immediate_commands: bool = False


@dataclass(frozen=True, eq=False)
class Snapshot:
    """What the loop last saw and did, for publishers (immutable; replaced every cycle).

    ``sample`` is ``None`` until the backend has been read; ``all_seen`` tells whether every
    joint has been reported at least once; ``stale`` names the joints whose latest value is
    older than ``stale_timeout``.  ``modes`` holds each joint's mode label.
    """

    cycle: int
    now_ns: int
    sample: JointSample | None
    all_seen: bool
    stale: tuple[str, ...]
    arm_state: ArmState
    arm_reason: str
    modes: tuple[str, ...]
    desired: FloatArray | None = None


@dataclass
class Feedback:
    """The latest state of an executing trajectory (for ``FollowJointTrajectory`` feedback)."""

    now_ns: int
    desired: tuple[FloatArray, FloatArray, FloatArray]
    actual: tuple[FloatArray, FloatArray]
    index: int


#: ``listener(sample, all_seen, stale)``: a new sample; whether every joint was ever reported;
#: the joints whose value is older than ``stale_timeout``.
SampleListener = Callable[[JointSample, bool, tuple[str, ...]], None]


class Execution:
    """A trajectory handed to the core, and how it ends.

    ``done`` is set once ``outcome`` is known; ``feedback`` is updated every cycle while it
    runs.  Topic trajectories have no ``tolerances`` (they only end or are preempted).
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
        if self.outcome is None:
            self.outcome = outcome
            self.done.set()


class _Masks:
    """Which joints are in which mode (recomputed only when a mode changes)."""

    def __init__(self, modes: npt.NDArray[np.int8]) -> None:
        self.hold = modes == int(CommandMode.HOLD)
        self.pos = modes == int(CommandMode.POSITION)
        self.vel = modes == int(CommandMode.VELOCITY)
        self.eff = modes == int(CommandMode.EFFORT)
        self.traj = modes == TRAJECTORY
        self.any_hold, self.any_vel = bool(self.hold.any()), bool(self.vel.any())
        self.any_eff, self.any_traj = bool(self.eff.any()), bool(self.traj.any())
        self.position_like = self.hold | self.pos | self.traj
        self.backend_modes = np.where(self.traj, np.int8(CommandMode.POSITION), modes).astype(np.int8)
        self.labels = tuple(_MODE_LABELS[int(m)] for m in modes)


@dataclass
class _Latency:
    values: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(LATENCY_WINDOW, dtype=np.int64))
    count: int = 0

    def add(self, value: int) -> None:
        self.values[self.count % LATENCY_WINDOW] = value
        self.count += 1

    def percentiles(self) -> tuple[float, float, float] | None:
        n = min(self.count, LATENCY_WINDOW)
        if n == 0:
            return None
        window = self.values[:n].astype(np.float64) * 1e-9
        p50, p99 = np.percentile(window, [50, 99])
        return float(p50), float(p99), float(window.max())


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
        settings: CoreSettings = CoreSettings(),
        *,
        log: LogFunction | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        armed: bool = False,
    ) -> None:
        self.backend = backend
        self.names = limits.names
        self.limits = limits
        self._lower, self._upper = limits.command_lower, limits.command_upper
        self.settings = settings
        self._log_function = log or (lambda level, text: None)
        self._clock = clock
        self._lock = threading.Lock()
        #: Held for a whole cycle, and by an immediate command: one of them at a time.
        self._cycle_lock = threading.Lock()
        self._listener: SampleListener | None = None
        self._listener_in_loop = False
        #: Real-time priority for the threads that pass samples on (0: leave them alone), and those seen.
        self._sample_thread_priority = 0
        self._sample_threads: set[int] = set()
        self._inbox: deque[tuple[str, Any]] = deque()
        self.arming = Arming(armed)
        self.active = False
        n = len(self.names)
        self._modes = np.full(n, int(CommandMode.HOLD), dtype=np.int8)
        self._masks: _Masks | None = None
        self._targets = np.zeros(n)
        self._hold = np.full(n, np.nan)
        self._execution: Execution | None = None
        self._last_command_ns: int | None = None
        self._watchdog_tripped = False
        self._was_armed = self.arming.armed
        self._sample: JointSample | None = None
        self._snapshot = Snapshot(0, 0, None, False, (), self.arming.state, self.arming.reason, ("hold",) * n)
        self._health = Health(connected=False, message="not connected")
        self._next_health_ns = 0
        self._latency = _Latency()
        self._pending_latency: list[int] = []
        self._loop: RateLoop | None = None
        self._thread: threading.Thread | None = None
        self._cycle = 0
        self._backend_failing = False
        self._cycle_failed = False
        self.errors = 0
        self._last_error = ""

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
        asks for real-time scheduling (see :mod:`bb_robot.driver.loop`)."""
        if self._thread is not None:
            raise RuntimeError("the loop is already running")
        try:
            self.backend.set_armed(self.arming.armed)  # the backend learns the arming state it starts in
        except Exception as error:  # noqa: BLE001
            self._log("warning", f"backend '{self.backend.name}' failed to take the arming state: {error!r}")
        self.backend.start()
        self._loop = RateLoop(rate, self._clock, priority)
        self._sample_thread_priority = 1 if priority > 0 else 0
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
            self._inbox.append(("hold_all", "the driver was deactivated"))
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
    def submit(self, command: JointCommand) -> None:
        """Queue a checked command for the next cycle; raises :class:`CommandRejected` when the
        driver is inactive or not armed."""
        with self._lock:
            self._check_accepting()
            self._last_command_ns = command.received_ns
            self._inbox.append(("command", command))
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
        return build_trajectory(
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

    def execute(self, trajectory: Trajectory, tolerances: Tolerances | None = None, source: str = "") -> Execution:
        """Queue a prepared trajectory; it preempts the active one at the next cycle."""
        execution = Execution(trajectory, tolerances, source or trajectory.source)
        with self._lock:
            self._check_accepting()
            self._last_command_ns = self._clock()
            self._inbox.append(("execute", execution))
        return execution

    def cancel(self, execution: Execution, reason: str = "canceled") -> None:
        """Stop ``execution`` (the joints hold) and end it as canceled."""
        with self._lock:
            self._inbox.append(("cancel", (execution, reason)))
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
            self._inbox.append(("limits", limits))
        if not self.running:
            self._apply_limits(limits)

    def set_robot(self, robot: Any) -> None:
        with self._lock:
            self._inbox.append(("robot", robot))
        if not self.running:
            self.backend.set_robot(robot)

    def update_settings(self, settings: CoreSettings) -> None:
        with self._lock:
            self.settings = settings

    def hold_all(self, reason: str) -> None:
        with self._lock:
            self._inbox.append(("hold_all", reason))

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
        if sample is not None:
            for kind, item in items:
                self._apply(kind, item, sample, now)
        else:
            for kind, item in items:
                if kind == "execute":
                    item.finish(Outcome("aborted", INVALID_GOAL, "the backend gave no joint state"))
                elif kind == "cancel":
                    item[0].finish(Outcome("canceled", SUCCESSFUL, item[1]))
                elif kind == "limits":
                    self._apply_limits(item)
                elif kind == "robot":
                    self.backend.set_robot(item)
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
    def _apply(self, kind: str, item: Any, sample: JointSample, now: int) -> None:
        if kind == "command":
            self._apply_command(item, sample, now)
        elif kind == "execute":
            self._start_execution(item, sample, now)
        elif kind == "cancel":
            execution, reason = item
            if execution is self._execution:
                self._end_execution(Outcome("canceled", SUCCESSFUL, reason), sample, now, hold_final=False)
            else:
                execution.finish(Outcome("canceled", SUCCESSFUL, reason))
        elif kind == "hold_all":
            if self._execution is not None:
                self._end_execution(Outcome("aborted", INVALID_GOAL, item), sample, now, hold_final=False)
            self._hold_joints(np.arange(len(self.names)), sample)
        elif kind == "limits":
            self._apply_limits(item)
        elif kind == "robot":
            self.backend.set_robot(item)

    def _apply_limits(self, limits: JointLimitTable) -> None:
        self.limits = limits
        self._lower, self._upper = limits.command_lower, limits.command_upper
        try:
            self.backend.set_limits(limits)
        except Exception as error:  # noqa: BLE001
            self._log("warning", f"backend '{self.backend.name}' did not take the new limits: {error!r}")

    def _apply_command(self, command: JointCommand, sample: JointSample, now: int) -> None:
        if not self.arming.armed:
            return  # disarmed after it was queued: dropped (the joints hold)
        execution = self._execution
        if execution is not None and self._mode_masks().traj[command.indices].any():
            self._end_execution(
                Outcome(
                    "aborted", INVALID_GOAL, f"preempted by a {MODE_NAMES[command.mode]} command on {command.source}"
                ),
                sample,
                now,
                hold_final=False,
            )
        self._set_modes(command.indices, int(command.mode))
        self._targets[command.indices] = command.values
        self._watchdog_tripped = False
        self._pending_latency.append(command.received_ns)

    def _start_execution(self, execution: Execution, sample: JointSample, now: int) -> None:
        if not self.arming.armed:
            execution.finish(Outcome("aborted", INVALID_GOAL, f"the driver is {self.arming.state.value}"))
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
        self._set_modes(indices, TRAJECTORY)
        self._execution = execution
        execution.started = True
        self._watchdog_tripped = False
        if self.backend.capabilities.trajectories:
            try:
                self.backend.send_trajectory(execution.trajectory)
            except Exception as error:  # noqa: BLE001
                self._log("warning", f"backend '{self.backend.name}' refused the trajectory: {error!r}")

    def _end_execution(self, outcome: Outcome, sample: JointSample, now: int, *, hold_final: bool) -> None:
        execution = self._execution
        if execution is None:
            return
        self._execution = None
        indices = execution.trajectory.indices
        mine = indices[self._modes[indices] == TRAJECTORY]
        if hold_final:
            final = execution.trajectory.final_positions
            self._set_modes(indices, int(CommandMode.HOLD))
            self._hold[indices] = final
        else:
            self._hold_joints(mine, sample)
        execution.finish(outcome)

    def _hold_joints(self, indices: npt.NDArray[np.intp], sample: JointSample) -> None:
        """Hold ``indices`` where they stop when braking from their current velocity."""
        if not len(indices):
            return
        position = sample.positions[indices]
        velocity = np.nan_to_num(sample.velocities[indices])
        accel = self.limits.acceleration[indices]
        with np.errstate(invalid="ignore", divide="ignore"):
            distance = np.where(np.isfinite(accel), velocity * np.abs(velocity) / (2.0 * accel), 0.0)
        target = np.where(np.isfinite(position), position + distance, self._hold[indices])
        self._hold[indices] = np.clip(target, self._lower[indices], self._upper[indices])
        self._set_modes(indices, int(CommandMode.HOLD))

    def _on_arming_changed(self, armed: bool, sample: JointSample | None, now: int) -> None:
        self._was_armed = armed
        if not armed and sample is not None:
            if self._execution is not None:
                self._end_execution(
                    Outcome("aborted", INVALID_GOAL, f"the driver was {self.arming.state.value}: {self.arming.reason}"),
                    sample,
                    now,
                    hold_final=False,
                )
            self._hold_joints(np.arange(len(self.names)), sample)
        try:
            self.backend.set_armed(armed)
        except Exception as error:  # noqa: BLE001
            self._log("warning", f"backend '{self.backend.name}' failed to {'arm' if armed else 'disarm'}: {error!r}")

    def _watchdog(self, settings: CoreSettings, last_command: int | None, sample: JointSample, now: int) -> None:
        timeout = settings.command_timeout
        if timeout <= 0 or self._watchdog_tripped or self._execution is not None:
            return
        masks = self._mode_masks()
        commanded = masks.pos | masks.vel | masks.eff
        if not commanded.any():
            return
        age = (now - last_command) * 1e-9 if last_command is not None else None
        if age is not None and age < timeout:
            return
        self._watchdog_tripped = True
        moving = (np.abs(np.nan_to_num(sample.velocities)) > 1e-3) | masks.vel | masks.eff
        what = f"no command for {timeout:g} s (command_timeout)"
        if settings.watchdog_action == "disarm":
            with self._lock:
                self.arming.disarm(f"watchdog: {what}")
            self._log("warning", f"watchdog: {what}: disarming")
            self._on_arming_changed(False, sample, now)
        else:
            self._hold_joints(np.flatnonzero(commanded), sample)
            self._log("warning" if moving[commanded].any() else "debug", f"watchdog: {what}: holding position")

    # ---------------------------------------------------------- the command
    def _set_modes(self, indices: npt.NDArray[np.intp], mode: int) -> None:
        if (self._modes[indices] != mode).any():
            self._modes[indices] = mode
            self._masks = None

    def _mode_masks(self) -> _Masks:
        masks = self._masks
        if masks is None:
            masks = self._masks = _Masks(self._modes)
        return masks

    def _command(self, sample: JointSample, now: int) -> BackendCommand:
        n = len(self.names)
        limits = self.limits
        masks = self._mode_masks()
        if masks.any_hold:
            # A joint whose position was never reported keeps no hold target (NaN reaches the
            # backend, which sends nothing for it) until its position is known: holding it at 0
            # would move it there once it reports (a simulator started after the driver).
            unset = masks.hold & np.isnan(self._hold) & np.isfinite(sample.positions)
            if unset.any():
                self._hold[unset] = np.clip(sample.positions[unset], self._lower[unset], self._upper[unset])
        position = np.where(masks.hold, self._hold, self._targets)
        velocity = np.zeros(n)
        acceleration = np.zeros(n)
        effort = np.full(n, np.nan)
        if masks.any_vel:
            vel = masks.vel
            velocity[vel] = self._stoppable(
                self._targets[vel], sample.positions[vel], np.nan_to_num(sample.velocities[vel]), np.flatnonzero(vel)
            )
        if masks.any_eff:
            effort[masks.eff] = np.clip(self._targets[masks.eff], -limits.effort[masks.eff], limits.effort[masks.eff])
        execution = self._execution
        if masks.any_traj and execution is not None:
            p, v, a = execution.trajectory.sample(now)
            indices = execution.trajectory.indices
            position[indices] = p
            velocity[indices] = v
            acceleration[indices] = a
            execution.feedback = Feedback(
                now,
                (p, v, a),
                (sample.positions[indices], np.nan_to_num(sample.velocities[indices])),
                execution.trajectory.point_index(now),
            )
        # The last guard: nothing outside the limits reaches the backend.
        clipped = np.minimum(np.maximum(position, self._lower), self._upper)
        at_limit = (clipped != position) & masks.position_like
        position = np.where(masks.position_like, clipped, np.nan)
        velocity = np.minimum(np.maximum(velocity, -limits.velocity), limits.velocity)
        if at_limit.any():
            velocity[at_limit] = 0.0
            acceleration[at_limit] = 0.0
        return BackendCommand(masks.backend_modes, position, velocity, acceleration, effort)

    def _stoppable(
        self, velocity: FloatArray, position: FloatArray, current: FloatArray, indices: npt.NDArray[np.intp]
    ) -> FloatArray:
        """Velocities slowed so that each joint can stop inside its command range, braking at its
        acceleration limit in steps of one loop period.

        The distance left is shortened by what the joint covers in one period at its current
        velocity: a late cycle (the command applies for longer than a period) does not carry it
        past the limit.  A stopped joint may then creep the rest of the way.
        """
        accel = self.limits.acceleration[indices]
        finite = np.isfinite(accel)
        period = self._loop.period_ns * 1e-9 if self._loop is not None else 0.002
        reach = np.abs(current) * period
        distances = np.concatenate(
            (
                np.maximum(self._upper[indices] - position - reach, 0.0),
                np.maximum(position - self._lower[indices] - reach, 0.0),
            )
        )
        safe = np.where(finite, accel, 1.0)
        speeds = braking_speeds(distances, np.concatenate((safe, safe)), np.concatenate((finite, finite)), period)
        n = len(indices)
        return np.minimum(np.maximum(velocity, -speeds[n:]), speeds[:n])

    # ------------------------------------------------------------------ goals
    def _check_goal(self, execution: Execution, sample: JointSample, now: int) -> None:
        trajectory = execution.trajectory
        indices = trajectory.indices
        monitor = execution.monitor
        if monitor is None:
            if now >= trajectory.end_ns:
                self._end_execution(
                    Outcome("succeeded", SUCCESSFUL, "trajectory finished"), sample, now, hold_final=True
                )
            return
        feedback = execution.feedback
        if feedback is None:
            return
        p, v, _ = feedback.desired
        outcome = monitor.check(now, p, v, sample.positions[indices], np.nan_to_num(sample.velocities[indices]))
        if outcome is None:
            return
        if outcome.status == "succeeded":
            self._end_execution(outcome, sample, now, hold_final=True)
        else:
            self._log("warning", f"trajectory from {execution.source} aborted: {outcome.message}")
            self._end_execution(outcome, sample, now, hold_final=False)

    # ------------------------------------------------------------- snapshot
    def _publish(
        self, sample: JointSample | None, now: int, settings: CoreSettings, command: BackendCommand | None
    ) -> None:
        all_seen, stale = self._freshness(sample, now, settings.stale_timeout)
        self._snapshot = Snapshot(
            cycle=self._cycle,
            now_ns=now,
            sample=sample,
            all_seen=all_seen,
            stale=stale,
            arm_state=self.arming.state,
            arm_reason=self.arming.reason,
            modes=self._mode_masks().labels,
            desired=command.position if command is not None else None,
        )
        listener = self._listener
        if listener is not None and self._listener_in_loop and sample is not None:
            self._notify(listener, sample, all_seen, stale)

    def _freshness(self, sample: JointSample | None, now: int, stale_timeout: float) -> tuple[bool, tuple[str, ...]]:
        """Whether every joint of ``sample`` was ever reported, and the names of the stale ones."""
        if sample is None:
            return False, ()
        seen = sample.stamps > 0
        stale: tuple[str, ...] = ()
        if stale_timeout > 0:
            old = seen & ((now - sample.stamps) > int(stale_timeout * 1e9))
            if old.any():
                stale = tuple(self.names[i] for i in np.flatnonzero(old))
        return bool(seen.all()), stale

    def _notify(self, listener: SampleListener, sample: JointSample, all_seen: bool, stale: tuple[str, ...]) -> None:
        try:
            listener(sample, all_seen, stale)
        except Exception as error:  # noqa: BLE001 - a listener never stops the loop nor the backend
            self._log("warning", f"the joint-state listener failed: {error!r}")

    # ------------------------------------------------------------ sample watching
    def watch_samples(self, listener: SampleListener | None) -> None:
        """Call ``listener(sample, all_seen, stale)`` with every new sample (``None``: stop).

        From the backend's own thread as the sample arrives when the backend offers it
        (:meth:`Backend.watch_samples`), else from the loop thread at the end of each cycle.
        The listener must be quick and must not raise (what it raises is logged).
        """
        self._listener = listener
        offered = self.backend.watch_samples(self._forward_sample if listener is not None else None)
        self._listener_in_loop = listener is not None and not offered

    @property
    def samples_from_backend(self) -> bool:
        """Whether the listener is called by the backend as samples arrive (not after each cycle)."""
        return self._listener is not None and not self._listener_in_loop

    def _forward_sample(self, sample: JointSample) -> None:
        listener = self._listener
        if listener is None:
            return
        if self._sample_thread_priority and threading.get_ident() not in self._sample_threads:
            # Like the executor thread: a thread publishing samples while the loop runs real-time
            # gets the lowest real-time priority, so that ordinary processes do not preempt it while
            # it holds the interpreter lock (it still yields to the loop).
            self._sample_threads.add(threading.get_ident())
            request_realtime(self._sample_thread_priority)
        all_seen, stale = self._freshness(sample, self._clock(), self.settings.stale_timeout)
        self._notify(listener, sample, all_seen, stale)

    # ---------------------------------------------------------------- tests
    def run_cycles(self, count: int, period_ns: int, start_ns: int | None = None) -> int:
        """Run ``count`` cycles back to back on a simulated clock (for tests); returns the end time."""
        now = start_ns if start_ns is not None else self._clock()
        for k in range(count):
            self.step(CycleInfo(k, now, now, period_ns))
            now += period_ns
        return now


def replace_settings(settings: CoreSettings, **changes: Any) -> CoreSettings:
    """``settings`` with ``changes`` (``trajectory_<field>`` keys change the trajectory options)."""
    trajectory = {k[len("trajectory_") :]: v for k, v in changes.items() if k.startswith("trajectory_")}
    plain = {k: v for k, v in changes.items() if not k.startswith("trajectory_")}
    if trajectory:
        plain["trajectory"] = replace(settings.trajectory, **trajectory)
    return replace(settings, **plain)

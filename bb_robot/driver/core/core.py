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

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends.base import Backend, BackendCommand, Health, JointSample
from bb_robot.driver.commands.commands import JointCommand
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.core.step import CycleStep
from bb_robot.driver.cycle.execution import Execution
from bb_robot.driver.cycle.inbox import (
    HoldAll,
    InboxMessage,
    KeepCommand,
    ServoInput,
    SetLimits,
    SetRobot,
    SubmitCommand,
)
from bb_robot.driver.cycle.setpoints import Setpoints
from bb_robot.driver.servo.servo import Servo
from bb_robot.driver.state.arming import Arming
from bb_robot.driver.state.samples import SampleFanout, SampleListener
from bb_robot.driver.state.snapshot import CommandLatency, CoreSettings, Snapshot
from bb_robot.driver.timing.loop import LoopStats, RateLoop
from bb_robot.driver.timing.staleness import StaleWatch
from bb_robot.model.robot import Robot

__all__ = ["WATCHDOG_ACTIONS", "DriverCore"]

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]

WATCHDOG_ACTIONS = ("hold", "disarm")


class DriverCore(CycleStep):
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
        #: How many times the loop asked the backend for its health (a reset waits for a fresh answer).
        self._health_polls = 0
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

    def keep_command(self, joints: Sequence[str], positions: Sequence[float]) -> None:
        """Joints ``joints``, while still commanded to ``positions`` (position mode, nobody's command
        since), hold there from the next cycle: the command stays when its stream stops, and the
        watchdog (``command_timeout``) no longer watches them (:class:`KeepCommand`).

        Raises:
            ValueError: a joint the driver does not drive.
        """
        index = {name: k for k, name in enumerate(self.names)}
        unknown = [j for j in joints if j not in index]
        if unknown:
            raise ValueError(
                f"keep_command: joint(s) {', '.join(unknown)} not driven (driven: {', '.join(self.names)})"
            )
        message = KeepCommand(np.array([index[j] for j in joints], dtype=np.intp), np.asarray(positions, dtype=float))
        with self._lock:
            self._inbox.append(message)

    def hold_all(self, reason: str) -> None:
        with self._lock:
            self._inbox.append(HoldAll(reason))

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

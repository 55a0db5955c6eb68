"""The attributes every part of the driver's core uses, declared once (:mod:`bb_robot.driver.core`)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends.base import Backend, BackendCommand, Health, JointSample
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.cycle.execution import Execution
from bb_robot.driver.cycle.inbox import (
    InboxMessage,
)
from bb_robot.driver.cycle.setpoints import Setpoints
from bb_robot.driver.errors import CommandRejected
from bb_robot.driver.servo.servo import Servo
from bb_robot.driver.state.arming import Arming, ArmState
from bb_robot.driver.state.samples import SampleFanout
from bb_robot.driver.state.snapshot import CommandLatency, CoreSettings, Snapshot
from bb_robot.driver.timing.loop import RateLoop
from bb_robot.driver.timing.staleness import StaleWatch

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]


class CoreParts:
    """What the parts of :class:`~bb_robot.driver.core.core.DriverCore` share: its attributes (set
    in ``DriverCore.__init__``), its log, and whether it takes commands now."""

    backend: Backend
    names: tuple[str, ...]
    limits: JointLimitTable
    settings: CoreSettings
    _log_function: LogFunction
    _clock: Callable[[], int]
    _lock: threading.Lock
    _cycle_lock: threading.Lock
    _samples: SampleFanout
    _inbox: deque[InboxMessage]
    arming: Arming
    active: bool
    _setpoints: Setpoints
    _execution: Execution | None
    _last_command_ns: int | None
    _watchdog_tripped: bool
    stale_watch: StaleWatch
    _started_ns: int
    _was_armed: bool
    _sample: JointSample | None
    _snapshot: Snapshot
    _health: Health
    _next_health_ns: int
    _health_polls: int
    _latency: CommandLatency
    _pending_latency: list[int]
    _loop: RateLoop | None
    _thread: threading.Thread | None
    _cycle: int
    _backend_failing: bool
    _cycle_failed: bool
    errors: int
    _last_error: str
    _dropped_without_sample: int
    trajectory_check: Callable[[Trajectory, FloatArray], None] | None
    command_filter: Callable[[BackendCommand, JointSample, int, bool], BackendCommand] | None
    servo: Servo | None

    def _log(self, level: str, text: str) -> None:
        try:
            self._log_function(level, text)
        except Exception:  # noqa: BLE001 - logging must never stop the loop
            pass

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _check_accepting(self) -> None:
        if not self.active:
            raise CommandRejected("inactive", "the driver is not active (activate it through its lifecycle)")
        if not self.arming.armed:
            state = self.arming.state.value
            hint = "call ~/reset, then ~/arm" if self.arming.state is ArmState.ERROR else "call ~/arm"
            raise CommandRejected("disarmed", f"the driver is {state} ({self.arming.reason}); {hint}")
        if self.stale_watch.holding:
            raise CommandRejected("stale", self.stale_watch.reason())

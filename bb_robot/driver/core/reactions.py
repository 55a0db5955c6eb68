"""What the driver's core does about its safety state: arming and disarming (and the backend told),
a failing or unhealthy backend (error), the command watchdog, joints gone stale, and holding every
joint."""

from __future__ import annotations

import time

import numpy as np

from bb_robot.driver.backends.base import Health, HealthLevel, JointSample
from bb_robot.driver.commands.tolerances import Outcome
from bb_robot.driver.core.goals import GoalHandling
from bb_robot.driver.cycle.watchdog import watchdog_trip
from bb_robot.driver.errors import INVALID_GOAL
from bb_robot.driver.state.samples import freshness
from bb_robot.driver.state.snapshot import CoreSettings

#: How often the loop asks the backend for its health (seconds).
HEALTH_PERIOD = 0.2
#: How long a reset waits at most for the loop's fresh health poll (seconds; a loop that is this late
#: leaves the last poll's answer).
FRESH_HEALTH_WAIT = 1.0


def _usable(health: Health) -> bool:
    """Whether the backend can run the arm: connected, and nothing it reports is an error."""
    return health.connected and health.level < HealthLevel.ERROR


class SafetyReactions(GoalHandling):
    """Arming, backend failures, the watchdog and stale joints, as the loop acts on them."""

    def arm(self) -> tuple[bool, str]:
        with self._lock:
            return self.arming.arm()

    def disarm(self, reason: str = "disarm requested") -> tuple[bool, str]:
        with self._lock:
            return self.arming.disarm(reason)

    def reset(self) -> tuple[bool, str]:
        health = self._health
        if self.running and not _usable(health):
            # The cause may have gone since the last poll (a bus back 60 ms before the reset, the health
            # polled 200 ms ago): judge on a fresh answer, which the loop asks for at its next cycle.
            health = self._fresh_health()
        healthy = _usable(health) and not self._backend_failing
        problem = health.message if not healthy else ""
        if self._backend_failing:
            problem = f"the backend still fails: {self._last_error}"
        with self._lock:
            return self.arming.reset(healthy, problem)

    def _fresh_health(self) -> Health:
        polls = self._health_polls
        self._next_health_ns = 0
        deadline = time.monotonic() + FRESH_HEALTH_WAIT
        while self._health_polls == polls and self.running and time.monotonic() < deadline:
            time.sleep(0.001)
        return self._health

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
        self._health_polls += 1
        if not _usable(health):
            with self._lock:
                changed = self.arming.fault(f"backend '{self.backend.name}': {health.message}")
            if changed:
                self._log("error", f"driver in error: backend '{self.backend.name}' reports: {health.message}")

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

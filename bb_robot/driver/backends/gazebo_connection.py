"""The gazebo backend's connection to Gazebo: whether its joint states arrive, what to say while
they do not, which command topics nobody reads, and the backend's health.

:class:`GazeboConnection` is the part of :class:`~bb_robot.driver.backends.gazebo.GazeboBackend`
that its monitor thread runs (every 0.2 s: connected, lost, reminders while waiting) and that
answers :meth:`~bb_robot.driver.backends.base.Backend.health`; the backend derives from it and
sets the attributes declared here.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends import gazebo_topics as world
from bb_robot.driver.backends.base import Backend, Health, HealthLevel
from bb_robot.driver.backends.host import ClockOutput
from bb_robot.gz.api import GzPublisher, GzTransport

#: Seconds between reminders while waiting for Gazebo.
_REMIND_PERIOD = 10.0
#: Seconds after the first joint state before a command topic without a Gazebo subscriber is reported.
_SUBSCRIBER_GRACE = 3.0
_MONITOR_PERIOD = 0.2


@dataclass
class CommandGroup:
    """The joints sent in one message: one Actuators or JointTrajectory topic."""

    topic: str
    type_name: str
    publisher: GzPublisher
    joints: list[int] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)  # Actuators index / JointTrajectory position
    names: list[str] = field(default_factory=list)  # JointTrajectory joint names


class GazeboConnection(Backend):
    """The gazebo backend's connection state and health (see the module docstring)."""

    _lock: threading.Lock
    _stamps: npt.NDArray[np.int64]
    _limits_checked: npt.NDArray[np.bool_]
    _last_state_ns: int
    _state_messages: int
    topics: world.GazeboTopics | None
    transport: GzTransport | None
    _doubles: list[tuple[int, str, GzPublisher, str]]
    _groups: list[CommandGroup]
    _unknown: set[str]
    _progress: int
    _connected: bool
    _first_state_ns: int
    _waiting_since: float
    _reminded: float
    _reported_subscribers: set[str]
    _stop: threading.Event
    _clock_publisher: ClockOutput | None
    _clock_messages: int
    _sent: int

    # ------------------------------------------------------------------ connection state
    def _all_seen(self) -> bool:
        with self._lock:
            return bool((self._stamps > 0).all())

    def _state_age(self) -> float | None:
        with self._lock:
            last = self._last_state_ns
        return None if last == 0 else (time.monotonic_ns() - last) * 1e-9

    def _waiting_text(self) -> str:
        topics = self.topics
        transport = self.transport
        assert topics is not None
        unseen = [self.joint_names[i] for i in np.flatnonzero(self._stamps == 0)]
        state_topics = ", ".join(s.topic for s in topics.states)
        partition = getattr(transport, "partition", "?")
        parts = [f"no joint state yet on {state_topics} [{world.MODEL}] in partition '{partition}'"]
        if unseen and len(unseen) < len(self.joint_names):
            parts.append(f"joints never reported: {', '.join(unseen)}")
        if transport is not None:
            publishers = [p for s in topics.states for p in transport.publishers(s.topic)]
            if publishers:
                parts.append(f"publishers seen: {', '.join(f'{t} at {a}' for t, a in publishers)}")
            try:
                diagnostics = transport.diagnostics()
            except Exception:  # noqa: BLE001 - diagnosis is best effort
                diagnostics = None
            if diagnostics is not None:
                parts += [f"problem: {p}" for p in diagnostics.problems]
                parts += [f"note: {n}" for n in diagnostics.notes]
        parts.append("is Gazebo running the world, with the same GZ_PARTITION and GZ_IP?")
        return "; ".join(parts)

    def _on_connected(self) -> None:
        self._connected = True
        self._first_state_ns = time.monotonic_ns()
        self._reported_subscribers.clear()
        topics = self.topics
        assert topics is not None
        waited = time.monotonic() - self._waiting_since
        self.logger.info(
            f"gazebo: connected: joint states of {len(self.joint_names)} joints on "
            f"{', '.join(s.topic for s in topics.states)} (after {waited:.1f} s)"
        )

    def _watch(self) -> None:
        """The monitor thread: connection transitions, reminders, command topics nobody reads."""
        silence = self.number_option("silence_timeout")
        while not self._stop.wait(_MONITOR_PERIOD):
            try:
                self._check(silence)
            except Exception as error:  # noqa: BLE001 - the monitor must go on
                self.logger.warning(f"gazebo: monitor: {error!r}")

    def _check(self, silence: float) -> None:
        age = self._state_age()
        if self._connected:
            if age is None or age > silence:
                self._connected = False
                with self._lock:
                    self._limits_checked[:] = False
                self._waiting_since = self._reminded = time.monotonic()
                self.logger.warning(
                    f"gazebo: no joint state from Gazebo for {silence:g} s (stopped or restarted?): waiting; the "
                    "latest command keeps being sent"
                )
                return
            self._check_subscribers()
        elif self._all_seen() and age is not None and age <= silence:
            self._on_connected()
        elif time.monotonic() - self._reminded >= _REMIND_PERIOD:
            self._reminded = time.monotonic()
            self.logger.warning(
                f"gazebo: still waiting for Gazebo ({time.monotonic() - self._waiting_since:.0f} s): "
                + self._waiting_text()
            )

    def _check_subscribers(self) -> None:
        if (time.monotonic_ns() - self._first_state_ns) * 1e-9 < _SUBSCRIBER_GRACE:
            return
        publishers = [(topic, p) for _, _, p, topic in self._doubles]
        publishers += [(g.topic, g.publisher) for g in self._groups]
        for topic, publisher in publishers:
            if topic in self._reported_subscribers:
                continue
            if not publisher.has_connections():
                self._reported_subscribers.add(topic)
                self.logger.warning(
                    f"gazebo: Gazebo publishes joint states but nothing subscribes to {topic} "
                    f"[{publisher.type_name}]: is the controller plugin loaded, and listening with this type?"
                )

    def health(self) -> Health:
        topics = self.topics
        transport = self.transport
        if topics is None or transport is None:
            return Health(connected=False, level=HealthLevel.ERROR, message="not connected")
        age = self._state_age()
        values = {
            "gz transport": f"{transport.implementation}, partition '{transport.partition}'",
            "joint state topics": ", ".join(s.topic for s in topics.states),
            "joint state messages": str(self._state_messages),
            "last joint state": "never" if age is None else f"{age:.3f} s ago",
            "commands sent": str(self._sent),
        }
        if self._progress:
            values["trajectory progress messages"] = str(self._progress)
        if self._clock_publisher is not None:
            values["clock messages"] = str(self._clock_messages)
        if self._unknown:
            values["ignored joints"] = ", ".join(sorted(self._unknown))
        problems = list(getattr(transport, "problems", lambda: [])())
        if problems:
            values["transport problems"] = " | ".join(problems)
        if self._connected:
            level = HealthLevel.WARN if problems else HealthLevel.OK
            return Health(True, level, "connected to Gazebo", values)
        # Waiting (Gazebo not started yet, stopped or restarting) is a warning, not a fault: the
        # driver keeps running and Gazebo gets the latest command when it is back; with
        # fault_on_disconnect the driver goes to error instead (and needs ~/reset), as with hardware.
        fault = self.flag_option("fault_on_disconnect")
        return Health(not fault, HealthLevel.WARN, "waiting for Gazebo's joint states", values)

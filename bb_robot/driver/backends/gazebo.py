"""``backend: gazebo``: drive an arm in Gazebo Harmonic (gz-sim 8) over gz-transport.

The topics come from the SDF world the driver's model was loaded from (or ``gazebo.world_file``):
each controller plugin of the robot's joints and its settings, by gz-sim 8's naming rules
(:mod:`bb_robot.driver.backends.gazebo_topics` over :mod:`bb_robot.gzsim.topics`;
``docs/nodes/gazebo.md``), or from explicit ``gazebo.*_topics``.

- **Commands**: POSITION and HOLD go to a JointPositionController (``gz.msgs.Double``, or one
  ``gz.msgs.Actuators`` per topic) or else a JointTrajectoryController (a one-point
  ``gz.msgs.JointTrajectory`` per topic); VELOCITY to a JointController; EFFORT to an
  ApplyJointForce.  The backend accepts the modes every driven joint has a controller for.
  The latest command of every joint is sent at each loop cycle (or at ``gazebo.command_rate``),
  and at once when it changes (and, with the driver's immediate commands, as it arrives), so
  nothing depends on one message surviving a connection's set-up;
  a joint held before Gazebo ever reported it gets nothing (the core has no target for it).
- **State**: each JointStatePublisher's ``gz.msgs.Model`` (bare joint names; names the robot
  lacks are ignored), stamped with its arrival on the driver's monotonic clock and passed on at
  once to a sample listener (:meth:`GazeboBackend.watch_samples`; the node's ``publish_rate`` 0).  The joint limits
  Gazebo reports are checked once per connection against the driver's.
- **Gazebo not running**: configure succeeds (unless ``gazebo.require_gazebo``), the driver says
  it is waiting and holds nothing; when the joint states appear it says so.  A silent Gazebo
  (stopped, restarted) is reported after ``gazebo.silence_timeout``; the transport connects to a
  restarted one by itself.  Partition and type-name mismatches are diagnosed by the transport
  (built-in client) and repeated in the waiting messages and ``/diagnostics``.
- ``gazebo.publish_clock``: Gazebo's world clock (``gz.msgs.Clock``) is republished on ROS
  ``/clock`` (``rosgraph_msgs/Clock``), for nodes with ``use_sim_time``, through the driver
  node's :meth:`~bb_robot.driver.backends.host.BackendHost.open_clock` (no ROS import here).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bb_robot.driver.backends import gazebo_topics as world
from bb_robot.driver.backends.base import (
    BackendCommand,
    BackendContext,
    Capabilities,
    JointSample,
    ParameterSpec,
)
from bb_robot.driver.backends.gazebo_connection import CommandGroup, GazeboConnection
from bb_robot.driver.backends.gazebo_parameters import GAZEBO_PARAMETERS
from bb_robot.driver.backends.host import ClockOutput
from bb_robot.driver.commands.commands import EFFORT_MODE as _EFFORT
from bb_robot.driver.commands.commands import HOLD_MODE as _HOLD
from bb_robot.driver.commands.commands import POSITION_MODE as _POSITION
from bb_robot.driver.commands.commands import VELOCITY_MODE as _VELOCITY
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.errors import BackendError
from bb_robot.gz.api import GzPublisher, GzSubscription, GzTransport, MessageCallback, MessageInfo

#: |limit| at or above this is "no limit" (SDF's ±1e16 defaults).
_UNLIMITED = 1e15


class GazeboBackend(GazeboConnection):
    """Gazebo Harmonic over gz-transport (see the module docstring)."""

    name = "gazebo"
    summary = "Gazebo Harmonic (gz-sim 8) over gz-transport: the world's joint controllers and joint states"

    @classmethod
    def parameters(cls) -> Sequence[ParameterSpec]:
        return GAZEBO_PARAMETERS

    # ------------------------------------------------------------------ set-up
    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        n = len(self.joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self._lock = threading.Lock()
        self._positions = np.full(n, np.nan)
        self._velocities = np.full(n, np.nan)
        self._efforts = np.full(n, np.nan)
        self._stamps = np.zeros(n, dtype=np.int64)
        self._limits_checked = np.zeros(n, dtype=bool)
        self.topics: world.GazeboTopics | None = None
        self.transport: GzTransport | None = None
        self._subscriptions: list[GzSubscription] = []
        self._doubles: list[tuple[int, str, GzPublisher, str]] = []  # (joint, interface, publisher, topic)
        self._groups: list[CommandGroup] = []
        self._routes: dict[tuple[int, str], world.CommandTopic] = {}
        self._position_route = np.zeros(n, dtype=bool)
        self._velocity_route = np.zeros(n, dtype=bool)
        self._effort_route = np.zeros(n, dtype=bool)
        #: The gz.msgs classes (protobuf messages: their fields are dynamic).
        self._messages: Any = None
        self._last_sent: dict[tuple[int, str] | str, tuple[object, ...]] = {}
        self._last_sent_ns: dict[tuple[int, str] | str, int] = {}
        self._resend_ns = 0
        self._state_messages = 0
        self._last_state_ns = 0
        self._unknown: set[str] = set()
        self._invalid: set[str] = set()
        self._progress = 0
        self._connected = False
        self._first_state_ns = 0
        self._waiting_since = 0.0
        self._reminded = 0.0
        self._reported_subscribers: set[str] = set()
        self._monitor: threading.Thread | None = None
        self._stop = threading.Event()
        self._clock_publisher: ClockOutput | None = None
        self._clock_messages = 0
        self._modes: frozenset[CommandMode] = frozenset()
        self._sent = 0
        self._listener: Callable[[JointSample], None] | None = None

    @property
    def capabilities(self) -> Capabilities:
        # Gazebo's JointController takes a bare velocity: nothing there stops it at the command range.
        return Capabilities(modes=self._modes or self._predicted_modes(), effort_feedback=True, bounds_velocity=False)

    def _predicted_modes(self) -> frozenset[CommandMode]:
        """Before connect the topics are not known: claim what a controller may give (the core's
        checks are built after connect, from the real modes)."""
        return frozenset({CommandMode.POSITION, CommandMode.VELOCITY, CommandMode.EFFORT})

    def _plan(self, topics: world.GazeboTopics) -> None:
        """Choose a route per joint and interface; the modes every joint supports."""
        problems = []
        for i, joint in enumerate(self.joint_names):
            position = topics.command(joint, "position") or topics.command(joint, "trajectory")
            velocity = topics.command(joint, "velocity")
            effort = topics.command(joint, "effort")
            for interface, route in (("position", position), ("velocity", velocity), ("effort", effort)):
                if route is not None:
                    self._routes[(i, interface)] = route
            self._position_route[i] = position is not None
            self._velocity_route[i] = velocity is not None
            self._effort_route[i] = effort is not None
            if position is None and velocity is None and effort is None:
                problems.append(f"{joint} has no controller (JointPositionController, JointController, ...)")
            if topics.state_of(joint) is None:
                problems.append(f"no JointStatePublisher reports {joint}")
        if problems:
            raise BackendError(
                "gazebo: " + "; ".join(problems) + ". Add the plugins to the world, give gazebo.*_topics, or drive "
                "fewer joints (joints parameter)"
            )
        modes = set()
        if self._position_route.all():
            modes.add(CommandMode.POSITION)
        if self._velocity_route.all():
            modes.add(CommandMode.VELOCITY)
        if self._effort_route.all():
            modes.add(CommandMode.EFFORT)
        self._modes = frozenset(modes)
        for k in np.flatnonzero(~self._position_route):
            fallback = "zero velocity" if self._velocity_route[k] else "zero effort"
            self.logger.warning(
                f"gazebo: {self.joint_names[k]} has no position controller: holding it sends {fallback}"
            )

    # ------------------------------------------------------------------ lifecycle
    def connect(self, timeout: float) -> None:
        from bb_robot.gz.api import create_transport
        from bb_robot.gz.messages import GzMessagesUnavailable, default_messages

        topics = self.topics = world.load_topics(self)
        for warning in topics.warnings:
            self.logger.warning(f"gazebo: {warning}")
        self._plan(topics)
        for line in topics.describe():
            self.logger.info(f"gazebo: {line}")
        implementation = self.text_option("gz_transport")
        options: dict[str, object] = {}
        try:
            self._messages = default_messages()
        except GzMessagesUnavailable as error:
            raise BackendError(f"gazebo: no gz.msgs10 message classes: {error}") from None
        if implementation == "builtin":
            options["messages"] = self._messages
            if self.text_option("ip"):
                options["ip"] = self.text_option("ip")
        partition = self.text_option("partition") or None
        try:
            self.transport = create_transport(implementation, partition=partition, logger=self.logger, **options)
        except (ValueError, OSError, ImportError, RuntimeError) as error:
            raise BackendError(f"gazebo: cannot start gz-transport '{implementation}': {error}") from None
        try:
            self._open(topics)
        except Exception:
            self.disconnect()
            raise
        self._waiting_since = time.monotonic()
        wait = min(float(timeout), self.number_option("wait_at_configure"))
        if self.flag_option("require_gazebo"):
            wait = float(timeout)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and not self._all_seen():
            time.sleep(0.02)
        if self._all_seen():
            self._on_connected()
        else:
            if self.flag_option("require_gazebo"):
                text = self._waiting_text()
                self.disconnect()
                raise BackendError(f"gazebo: no joint state within {timeout:g} s: {text}")
            self.logger.warning(f"gazebo: waiting for Gazebo: {self._waiting_text()}")
            self._reminded = time.monotonic()
        self._stop.clear()
        self._monitor = threading.Thread(target=self._watch, name="gazebo-monitor", daemon=True)
        self._monitor.start()

    def _open(self, topics: world.GazeboTopics) -> None:
        transport = self.transport
        assert transport is not None
        for state in topics.states:
            mapping = {gz: self._index[joint] for gz, joint in state.joints.items() if joint in self._index}
            self._subscriptions.append(transport.subscribe(state.topic, world.MODEL, self._state_callback(mapping)))
        groups: dict[str, CommandGroup] = {}
        for (i, interface), route in self._routes.items():
            if route.type_name == world.DOUBLE:
                self._doubles.append((i, interface, transport.advertise(route.topic, world.DOUBLE), route.topic))
                continue
            group = groups.get(route.topic)
            if group is None:
                group = groups[route.topic] = CommandGroup(
                    route.topic, route.type_name, transport.advertise(route.topic, route.type_name)
                )
                if route.type_name == world.JOINT_TRAJECTORY and route.progress_topic:
                    self._subscriptions.append(
                        transport.subscribe(route.progress_topic, world.FLOAT, self._on_progress)
                    )
            elif group.type_name != route.type_name:
                raise BackendError(
                    f"gazebo: {route.topic} carries both {group.type_name} and {route.type_name}: fix the world"
                )
            group.joints.append(i)
            group.indices.append(route.actuator if route.actuator is not None else len(group.names))
            group.names.append(route.gz_joint)
        self._groups = list(groups.values())
        for group in self._groups:
            if group.type_name == world.ACTUATORS:
                # Indices the driver does not drive are sent as 0: say so.
                for kind in ("position", "velocity"):
                    used = {
                        group.indices[k]
                        for k, j in enumerate(group.joints)
                        if (j, kind) in self._routes and self._routes[(j, kind)].topic == group.topic
                    }
                    gaps = sorted(set(range(max(used) + 1)) - used) if used else []
                    if gaps:
                        listed = ", ".join(map(str, gaps))
                        self.logger.warning(
                            f"gazebo: {group.topic} ({world.ACTUATORS}): the driver sends {kind}[{listed}] as 0 "
                            "(no driven joint there)"
                        )
        rate = self.number_option("command_rate")
        self._resend_ns = int(1e9 / rate) if rate > 0 else 0
        if self.flag_option("publish_clock"):
            self._start_clock(topics)

    def _start_clock(self, topics: world.GazeboTopics) -> None:
        host, transport = self.context.host, self.transport
        assert transport is not None
        if host is None:
            self.logger.warning("gazebo: publish_clock needs the driver node (no host here): not published")
            return
        if not topics.clock:
            self.logger.warning("gazebo: publish_clock: no clock topic (set gazebo.world_name or gazebo.clock_topic)")
            return
        self._clock_publisher = host.open_clock()
        self._subscriptions.append(transport.subscribe(topics.clock, world.CLOCK, self._on_clock))
        self.logger.info(f"gazebo: republishing {topics.clock} on ROS /clock")

    def disconnect(self) -> None:
        self._stop.set()
        monitor, self._monitor = self._monitor, None
        if monitor is not None and monitor is not threading.current_thread():
            monitor.join(2.0)
        transport, self.transport = self.transport, None
        if transport is not None:
            try:
                transport.close()
            except Exception as error:  # noqa: BLE001 - never raise here
                self.logger.warning(f"gazebo: closing gz-transport: {error!r}")
        self._subscriptions.clear()
        self._doubles.clear()
        self._groups.clear()
        publisher, self._clock_publisher = self._clock_publisher, None
        if publisher is not None:
            publisher.close()
        self._connected = False

    # ------------------------------------------------------------------ callbacks (gz-data thread)
    def _state_callback(self, mapping: dict[str, int]) -> MessageCallback:
        positions, velocities, efforts, stamps = self._positions, self._velocities, self._efforts, self._stamps
        lock = self._lock

        def on_state(message: Any, info: MessageInfo) -> None:  # noqa: ANN401 - a gz.msgs.Model
            now = info.received_ns
            unknown = None
            invalid: list[tuple[str, float, float, float]] = []
            with lock:
                for joint in message.joint:
                    i = mapping.get(joint.name)
                    if i is None:
                        unknown = joint.name
                        continue
                    axis = joint.axis1
                    position, velocity, force = axis.position, axis.velocity, axis.force
                    if not (math.isfinite(position) and math.isfinite(velocity) and math.isfinite(force)):
                        invalid.append((joint.name, position, velocity, force))
                        continue  # the joint keeps its last good value, and ages towards stale
                    positions[i] = position
                    velocities[i] = velocity
                    efforts[i] = force
                    stamps[i] = now
                    if not self._limits_checked[i]:
                        self._limits_checked[i] = True
                        self._check_limits(i, axis.limit_lower, axis.limit_upper)
                self._state_messages += 1
                self._last_state_ns = now
            listener = self._listener
            if listener is not None:
                listener(self.read(now))
            if unknown is not None and unknown not in self._unknown:
                self._unknown.add(unknown)
                self.logger.info(f"gazebo: ignoring joint '{unknown}' in {info.topic}: not a driven joint")
            for name, position, velocity, force in invalid:
                if name in self._invalid:
                    continue
                self._invalid.add(name)
                self.logger.warning(
                    f"gazebo: ignoring the state of joint '{name}' in {info.topic}: not finite (position "
                    f"{position}, velocity {velocity}, force {force}); it keeps its last value (said once per joint)"
                )

        return on_state

    def _check_limits(self, i: int, lower: float, upper: float) -> None:
        if not self.flag_option("check_limits"):
            return
        joint = self.joint_names[i]
        ours = (float(self.limits.lower[i]), float(self.limits.upper[i]))
        theirs = tuple(v if abs(v) < _UNLIMITED else math.copysign(math.inf, v) for v in (lower, upper))
        if lower == 0.0 and upper == 0.0:
            return  # not reported (a message without limits)

        def differs(a: float, b: float) -> bool:
            return not (a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= 1e-6))

        if differs(ours[0], theirs[0]) or differs(ours[1], theirs[1]):
            narrower = theirs[0] > ours[0] + 1e-6 or theirs[1] < ours[1] - 1e-6
            self.logger.warning(
                f"gazebo: Gazebo's position limits of {joint} are [{theirs[0]:g}, {theirs[1]:g}], the driver's "
                f"[{ours[0]:g}, {ours[1]:g}]"
                + (
                    ": targets outside Gazebo's range will not be reached (is it the same world?)"
                    if narrower
                    else " (the driver's are the tighter ones)"
                )
            )

    def _on_progress(self, message: object, info: MessageInfo) -> None:
        self._progress += 1

    def _on_clock(self, message: Any, info: MessageInfo) -> None:  # noqa: ANN401 - a gz.msgs.Clock
        publisher = self._clock_publisher
        if publisher is None:
            return
        publisher.publish(int(message.sim.sec) * 1_000_000_000 + int(message.sim.nsec))
        self._clock_messages += 1

    def watch_samples(self, listener: Callable[[JointSample], None] | None) -> bool:
        """Samples are passed on from the gz-transport thread as each joint-state message arrives."""
        self._listener = listener
        return True

    # ------------------------------------------------------------------ loop thread
    def read(self, now_ns: int) -> JointSample:
        with self._lock:
            positions = self._positions.copy()
            velocities = self._velocities.copy()
            efforts = self._efforts.copy()
            stamps = self._stamps.copy()
        return JointSample(positions, velocities, efforts, stamps, int(stamps.max()) if len(stamps) else 0)

    def write(self, command: BackendCommand, now_ns: int) -> None:
        if self.transport is None:
            raise BackendError("gazebo: not connected")
        # Plain lists: a handful of joints, where numpy's per-element indexing costs more than it saves.
        n = len(command.modes)
        position, velocity, effort = command.position.tolist(), command.velocity.tolist(), command.effort.tolist()
        routes = self._position_route.tolist(), self._velocity_route.tolist()
        value = [math.nan] * n
        feed = [0.0] * n
        interface: list[str] = [""] * n
        for i, mode in enumerate(command.modes.tolist()):
            if mode == _POSITION or mode == _HOLD:
                if routes[0][i]:
                    value[i], feed[i], interface[i] = position[i], velocity[i], "position"
                elif routes[1][i]:
                    value[i], interface[i] = 0.0, "velocity"
                else:
                    value[i], interface[i] = 0.0, "effort"
                if mode == _HOLD and math.isnan(position[i]):
                    value[i] = math.nan  # never reported yet: nothing to hold
            elif mode == _VELOCITY:
                value[i], interface[i] = velocity[i], "velocity"
            elif mode == _EFFORT:
                value[i], interface[i] = effort[i], "effort"
        resend = self._resend_ns
        for i, kind, publisher, _ in self._doubles:
            v = value[i]
            if interface[i] != kind or math.isnan(v):
                continue
            key = (i, kind)
            if self._last_sent.get(key) == (v,) and resend and now_ns - self._last_sent_ns.get(key, 0) < resend:
                continue
            message = self._messages.new(world.DOUBLE)
            message.data = v
            publisher.publish(message)
            self._last_sent[key] = (v,)
            self._last_sent_ns[key] = now_ns
            self._sent += 1
        for group in self._groups:
            self._send_group(group, value, feed, interface, now_ns)

    def _send_group(
        self, group: CommandGroup, value: list[float], feed: list[float], interface: list[str], now_ns: int
    ) -> None:
        if group.type_name == world.JOINT_TRAJECTORY:
            members = [k for k, j in enumerate(group.joints) if interface[j] == "position" and not math.isnan(value[j])]
            if not members:
                return
            key: tuple[float, ...] = tuple(float(value[group.joints[k]]) for k in members)
            if self._unchanged(group, key, now_ns):
                return
            message = self._messages.new(world.JOINT_TRAJECTORY)
            message.joint_names.extend(group.names[k] for k in members)
            point = message.points.add()
            point.positions.extend(key)
            point.velocities.extend(float(feed[group.joints[k]]) for k in members)
        else:
            positions: dict[int, float] = {}
            velocities: dict[int, float] = {}
            for j in group.joints:
                v = value[j]
                if math.isnan(v):
                    continue
                route_p = self._routes.get((j, "position"))
                route_v = self._routes.get((j, "velocity"))
                if interface[j] == "position" and route_p is not None and route_p.topic == group.topic:
                    positions[route_p.actuator or 0] = float(v)
                elif interface[j] == "velocity" and route_v is not None and route_v.topic == group.topic:
                    velocities[route_v.actuator or 0] = float(v)
            if not positions and not velocities:
                return
            key = (*sorted(positions.items()), -1.0, *sorted(velocities.items()))  # type: ignore[arg-type]
            if self._unchanged(group, key, now_ns):
                return
            message = self._messages.new(world.ACTUATORS)
            if positions:
                message.position.extend(positions.get(k, 0.0) for k in range(max(positions) + 1))
            if velocities:
                message.velocity.extend(velocities.get(k, 0.0) for k in range(max(velocities) + 1))
        group.publisher.publish(message)
        self._last_sent[group.topic] = key
        self._last_sent_ns[group.topic] = now_ns
        self._sent += 1

    def _unchanged(self, group: CommandGroup, key: tuple[object, ...], now_ns: int) -> bool:
        resend = self._resend_ns
        return bool(
            resend
            and self._last_sent.get(group.topic) == key
            and now_ns - self._last_sent_ns.get(group.topic, 0) < resend
        )


BACKEND = GazeboBackend

"""``backend: actuators``: servos behind ROS topics, one command topic and one feedback topic per
actuator, through simple transmissions (the contract for servo bridges: ``docs/nodes/actuators.md``).

- **Actuators and names** (:mod:`bb_robot.driver.backends.actuator_topics`): one actuator per driven joint,
  from the model's ``<transmission>`` or from the parameters ``actuators.joints.<joint>.actuator
  | reduction | offset | reversed`` (declared at configure, one set per driven joint, with the
  model's values as defaults), else ``actuators.default_actuator_name``.  Topics:
  ``<ns>/actuator/<path elements…>`` (``actuators.actuator_topic_style: path``) or
  ``<ns>/actuator/<joint>/<actuator>`` (``joint``), feedback on ``…/state``; the latched index
  ``<ns>/actuators`` (``std_msgs/String``, JSON) lists them.  Configure fails on a name longer
  than ROS allows, naming it.
- **Commands** (the loop thread every cycle, and the executor thread as a command arrives with
  the driver's ``immediate_commands``; at most ``actuators.command_rate`` per second): one
  ``sensor_msgs/JointState`` per actuator with a single entry, in actuator space (SI, after the
  transmission): position (plus the feed-forward velocity) for position and hold, velocity, or
  effort.  Nothing is sent to an actuator that has never reported.
- **Feedback** (the executor thread): the latest ``sensor_msgs/JointState`` of each actuator,
  stamped on arrival with the driver's monotonic clock, converted back to joint space in
  :meth:`ActuatorsBackend.read`.  ``connect`` waits (up to the driver's ``connect_timeout``) until
  every actuator has reported, and fails naming the ones that did not (unless
  ``actuators.wait_for_feedback`` is false: then the driver's joint states wait for every
  actuator).  An actuator that has never reported gets no command.
- **Health**: an actuator that reported once and is then silent for longer than
  ``actuators.feedback_timeout`` is reported
  (``WARN``, or ``ERROR`` with ``actuators.disarm_on_feedback_timeout``, which puts the driver in
  ``error``: commands refused and joints held until ``~/reset`` succeeds, once it reports again);
  so is a second publisher on an actuator's command topic and a command topic nobody subscribes
  to (a timer on the node checks the ROS graph every ``actuators.graph_check_period`` seconds).

The backend imports no ROS: its topics, parameters and graph checks go through the driver
node's :class:`~bb_robot.driver.backends.host.BackendHost` (QoS: :mod:`bb_robot.ros.qos`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections.abc import Sequence
from functools import partial

import numpy as np

from bb_robot.common.parameters import ParameterValue, configure_parameter
from bb_robot.common.throttle import WarningThrottle
from bb_robot.driver.backends.actuator_topics import (
    DEFAULT_ACTUATOR_NAME,
    INDEX_TOPIC,
    TOPIC_STYLES,
    Actuator,
    ActuatorConfigError,
    ActuatorTopics,
    SimpleTransmissions,
    TransmissionOverride,
    actuator_limits,
    actuator_topics,
    full_name,
    index_document,
    model_transmission,
    resolve_actuators,
)
from bb_robot.driver.backends.base import (
    Backend,
    BackendCommand,
    BackendContext,
    Capabilities,
    Health,
    HealthLevel,
    JointSample,
    ParameterSpec,
)
from bb_robot.driver.backends.host import (
    ActuatorCommand,
    BackendHost,
    JointCommandOutput,
    JointStateLike,
    Port,
    TextOutput,
)
from bb_robot.driver.commands.commands import EFFORT_MODE as _EFFORT
from bb_robot.driver.commands.commands import HOLD_MODE as _HOLD
from bb_robot.driver.commands.commands import MODE_NAMES, CommandMode
from bb_robot.driver.commands.commands import POSITION_MODE as _POSITION
from bb_robot.driver.commands.commands import VELOCITY_MODE as _VELOCITY
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.errors import BackendError
from bb_robot.model.robot import Robot

_MODES_BY_NAME = {MODE_NAMES[m]: m for m in (CommandMode.POSITION, CommandMode.VELOCITY, CommandMode.EFFORT)}
#: The per-joint configuration parameters: ``actuators.joints.<joint>.<field>``.
JOINT_FIELDS = ("actuator", "reduction", "offset", "reversed")


class ActuatorsBackend(Backend):
    """Servos behind ROS topics (see the module docstring)."""

    name = "actuators"
    summary = "servos behind ROS topics named by actuator paths, through simple transmissions"

    @classmethod
    def parameters(cls) -> Sequence[ParameterSpec]:
        return (
            configure_parameter(
                "actuator_topic_style",
                "path",
                "Names of the actuator topics: 'path' (<ns>/actuator/<the actuator's path: root link, joints and "
                "links down to its joint, its name>) or 'joint' (<ns>/actuator/<joint>/<actuator>, for deep trees "
                "whose paths exceed ROS's 247-character limit).",
                choices=TOPIC_STYLES,
            ),
            configure_parameter(
                "feedback_timeout",
                0.25,
                "An actuator whose latest feedback is older than this (seconds) is reported silent in /diagnostics.",
                "double",
                range=(0.001, 3600.0),
            ),
            configure_parameter(
                "disarm_on_feedback_timeout",
                False,
                "A silent actuator puts the driver in error (commands refused, joints held until ~/reset "
                "succeeds once it reports again) instead of only a warning.",
                "bool",
            ),
            configure_parameter(
                "default_actuator_name",
                DEFAULT_ACTUATOR_NAME,
                "Name of the actuator of a joint that neither the model (<transmission>) nor "
                "actuators.joints.<joint>.actuator names; '{joint}' is replaced by the joint's name.",
            ),
            configure_parameter(
                "wait_for_feedback",
                True,
                "Configure waits (up to connect_timeout) until every actuator has reported, and fails naming the "
                "ones that did not. False: configure does not wait; an actuator gets no command until it has "
                "reported, and joint_states wait for every actuator.",
                "bool",
            ),
            configure_parameter(
                "modes",
                ["position", "velocity", "effort"],
                "The command modes the servo bridges accept (position, velocity, effort); the driver rejects others.",
                "string_array",
            ),
            configure_parameter(
                "command_rate",
                0.0,
                "Commands per second sent to each actuator; 0: one per control cycle (the driver's rate).",
                "double",
                range=(0.0, 100000.0),
            ),
            configure_parameter(
                "graph_check_period",
                1.0,
                "Seconds between two checks of the ROS graph for a second publisher on an actuator's command topic "
                "and for command topics without a subscriber.",
                "double",
                range=(0.05, 3600.0),
            ),
        )

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.style = self.text_option("actuator_topic_style")
        if self.style not in TOPIC_STYLES:
            raise ActuatorConfigError(
                f"actuators.actuator_topic_style must be one of {', '.join(TOPIC_STYLES)}, not {self.style!r}"
            )
        self.feedback_timeout = self.number_option("feedback_timeout")
        self.disarm_on_timeout = self.flag_option("disarm_on_feedback_timeout")
        self.default_name = self.text_option("default_actuator_name") or DEFAULT_ACTUATOR_NAME
        modes = self.list_option("modes")
        unknown = [m for m in modes if m not in _MODES_BY_NAME]
        if unknown or not modes:
            raise ActuatorConfigError(
                f"actuators.modes: {unknown or 'none'} (allowed: {', '.join(_MODES_BY_NAME)}, at least one)"
            )
        self._modes = frozenset(_MODES_BY_NAME[m] for m in modes)
        rate = self.number_option("command_rate")
        self._command_period_ns = int(1e9 / rate) if rate > 0 else 0
        self.graph_check_period = self.number_option("graph_check_period")
        self.wait_for_feedback = self.flag_option("wait_for_feedback")
        self._clock = context.clock
        self._host: BackendHost | None = context.host
        n = len(self.joint_names)
        self.actuators: tuple[Actuator, ...] = ()
        self.topics: tuple[ActuatorTopics, ...] = ()
        self._transmissions = SimpleTransmissions([1.0] * n, [0.0] * n)
        self._lock = threading.Lock()
        self._fb_position = np.full(n, np.nan)
        self._fb_velocity = np.zeros(n)
        self._fb_effort = np.full(n, np.nan)
        self._fb_stamps = np.zeros(n, dtype=np.int64)
        self._effort_seen = False
        self.feedback_counts = np.zeros(n, dtype=np.int64)
        self.rejected_feedback = 0
        self.skipped_commands = 0
        self.commands_sent = 0
        self._last_command_ns = 0
        self._started_ns = 0
        self._connected = False
        self._throttle = WarningThrottle(5.0)
        self._commands: JointCommandOutput | None = None
        self._subscriptions: list[Port] = []
        self._index_pub: TextOutput | None = None
        self._graph_timer: Port | None = None
        self._declared: list[str] = []
        self._param_guard: Port | None = None
        #: From the graph checks (the executor thread): command topic -> the other publishers' nodes.
        self.duplicates: dict[str, list[str]] = {}
        #: Command topics without any subscriber at the last graph check.
        self.unsubscribed: list[str] = []
        self._reported_duplicates: set[tuple[str, str]] = set()

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(modes=self._modes, effort_feedback=True)

    # ------------------------------------------------------------------ configuration
    def _parameter_prefix(self) -> str:
        return f"{self.name}.joints."

    def _declare_joint_parameters(self, host: BackendHost) -> dict[str, TransmissionOverride]:
        """Declare ``actuators.joints.<joint>.*`` for every driven joint (defaults: the model's)
        and return what they say; overrides given for other joints are returned too, so that
        :func:`resolve_actuators` can say why they are wrong."""
        prefix = self._parameter_prefix()
        result: dict[str, TransmissionOverride] = {}
        for joint in self.joint_names:
            base = model_transmission(self.robot, joint, self.default_name)
            defaults: dict[str, ParameterValue] = {
                "actuator": base.name,
                "reduction": base.reduction,
                "offset": base.offset,
                "reversed": base.reversed,
            }
            specs = [
                ParameterSpec(
                    f"{prefix}{joint}.{field}", default, _JOINT_FIELD_DOCS[field].format(joint=joint), "dynamic"
                )
                for field, default in defaults.items()
            ]
            self._declared += [spec.name for spec in specs if spec.name not in self._declared]
            declared = host.declare_parameters(specs)
            values = {field: declared[f"{prefix}{joint}.{field}"] for field in defaults}
            result[joint] = TransmissionOverride(
                actuator=str(values["actuator"]) if values["actuator"] not in (None, "") else None,
                reduction=_as_float(values["reduction"], f"{prefix}{joint}.reduction"),
                offset=_as_float(values["offset"], f"{prefix}{joint}.offset"),
                reversed=bool(values["reversed"]),
            )
        # Overrides (parameter file, command line) for joints that get no parameters: an error.
        for key in host.parameter_overrides(prefix):
            joint = key[len(prefix) :].rpartition(".")[0]
            if joint and joint not in result:
                result[joint] = TransmissionOverride()
        return result

    def _refuse_change(self, name: str) -> str | None:
        """The host's parameter guard: this backend's parameters apply at configure."""
        if name.startswith(f"{self.name}.") and self._connected:
            return f"{name} applies at configure: clean up first"
        return None

    # ------------------------------------------------------------------ lifecycle
    def connect(self, timeout: float) -> None:
        host = self._host
        if host is None:
            raise BackendError("the actuators backend needs the driver node's host (BackendContext.host)")
        try:
            overrides = self._declare_joint_parameters(host)
            self.actuators = resolve_actuators(self.robot, self.joint_names, overrides, self.default_name)
            self.topics = actuator_topics(host.namespace, self.actuators, self.style)
            self._transmissions = SimpleTransmissions.of(self.actuators)
            self._index_pub = host.open_latched_text(full_name(host.namespace, INDEX_TOPIC))
            self._publish_index()
            for i, topics in enumerate(self.topics):
                self._subscriptions.append(host.subscribe_joint_states(topics.state, partial(self._on_feedback, i)))
            if self.wait_for_feedback:
                self._wait_for_feedback(host, timeout)
            # After the wait: the helper node it spins comes and goes in this participant, and command
            # publishers made before it were left without their node in the ROS graph (Fast DDS: the graph
            # checks below then named this driver's own as "a second publisher", node _NODE_NAME_UNKNOWN_).
            self._commands = host.open_joint_commands(
                [t.command for t in self.topics], [a.name for a in self.actuators]
            )
            self._graph_timer = host.every(self.graph_check_period, self.check_graph)
            self._param_guard = host.guard_parameters(self._refuse_change)
        except BaseException:
            self.disconnect()
            raise
        self._connected = True
        self.logger.info(
            f"actuators: {len(self.actuators)} actuator(s), {self.style} topics "
            f"({', '.join(t.command for t in self.topics[:2])}{', ...' if len(self.topics) > 2 else ''}); "
            f"index on {full_name(host.namespace, INDEX_TOPIC)}"
        )

    def _missing(self) -> list[int]:
        with self._lock:
            return [int(i) for i in np.flatnonzero(self._fb_stamps == 0)]

    def _wait_for_feedback(self, host: BackendHost, timeout: float) -> None:
        """Until every actuator has reported or ``timeout``."""
        if host.wait_for(lambda: not self._missing(), timeout):
            return
        missing = self._missing()
        names = [f"'{self.actuators[i].name}' on {self.topics[i].state}" for i in missing]
        raise BackendError(
            f"no feedback within {timeout:g} s (connect_timeout) from {len(missing)} of {len(self.actuators)} "
            f"actuator(s): {'; '.join(names)} (start their servo bridges; the index is on "
            f"{full_name(host.namespace, INDEX_TOPIC)})"
        )

    def disconnect(self) -> None:
        self._connected = False
        ports: list[Port | None] = [
            *self._subscriptions,
            self._commands,
            self._index_pub,
            self._graph_timer,
            self._param_guard,
        ]
        for port in ports:
            if port is not None:
                port.close()
        self._subscriptions, self._commands = [], None
        self._index_pub = self._graph_timer = self._param_guard = None
        if self._host is not None:
            self._host.undeclare_parameters(self._declared)
        self._declared = []

    def start(self) -> None:
        self._last_command_ns = 0
        # Silence counts from the start at the earliest: while the driver configured and activated,
        # its executor thread took no feedback, which is no fault of the servos.
        self._started_ns = self._clock()

    # ------------------------------------------------------------------ feedback (executor thread)
    def _on_feedback(self, index: int, msg: JointStateLike) -> None:
        now = self._clock()
        problem = _feedback_problem(msg, self.actuators[index].name)
        if problem is not None:
            self.rejected_feedback += 1
            topic = self.topics[index].state
            kind, text = problem
            muted = self._throttle.allow((topic, kind))
            if muted is not None:
                more = f" ({muted} more like it since the last one)" if muted else ""
                self.logger.warning(f"actuators: ignored a feedback message on '{topic}': {text}{more}")
            return
        velocity = float(msg.velocity[0]) if len(msg.velocity) else 0.0
        effort = float(msg.effort[0]) if len(msg.effort) else math.nan
        with self._lock:
            self._fb_position[index] = float(msg.position[0])
            self._fb_velocity[index] = velocity
            self._fb_effort[index] = effort
            if len(msg.effort):
                self._effort_seen = True
            self._fb_stamps[index] = now
            self.feedback_counts[index] += 1

    # ------------------------------------------------------------------ loop thread
    def read(self, now_ns: int) -> JointSample:
        if not self._connected:
            raise BackendError("the actuators backend is not connected")
        with self._lock:
            position = self._fb_position.copy()
            velocity = self._fb_velocity.copy()
            effort = self._fb_effort.copy() if self._effort_seen else None
            stamps = self._fb_stamps.copy()
        tx = self._transmissions
        return JointSample(
            tx.joint_position(position),
            tx.joint_velocity(velocity),
            tx.joint_effort(effort) if effort is not None else None,
            stamps,
            int(stamps.max()) if len(stamps) else 0,
        )

    def write(self, command: BackendCommand, now_ns: int) -> None:
        if not self._connected:
            raise BackendError("the actuators backend is not connected")
        period = self._command_period_ns
        if period and self._last_command_ns and now_ns - self._last_command_ns < period:
            return
        self._last_command_ns = now_ns
        output = self._commands
        if output is None:
            return
        tx = self._transmissions
        with np.errstate(invalid="ignore"):
            positions = tx.actuator_position(command.position).tolist()
            velocities = tx.actuator_velocity(np.nan_to_num(command.velocity)).tolist()
            efforts = tx.actuator_effort(command.effort).tolist()
        seen = (self._fb_stamps > 0).tolist()
        isfinite = math.isfinite
        commands: list[ActuatorCommand] = []
        for i, mode in enumerate(command.modes.tolist()):
            if mode == _POSITION or mode == _HOLD:
                value = positions[i]
            elif mode == _VELOCITY:
                value = velocities[i]
            elif mode == _EFFORT:
                value = efforts[i]
            else:
                value = math.nan
            if not seen[i] or not isfinite(value):
                self.skipped_commands += 1
                continue
            commands.append((i, mode, value, velocities[i]))
        output.send(commands)
        self.commands_sent += len(commands)

    def health(self) -> Health:
        if not self._connected:
            return Health(connected=False, level=HealthLevel.ERROR, message="not connected")
        now = self._clock()
        with self._lock:
            stamps = self._fb_stamps.copy()
        ages = np.where(stamps > 0, (now - np.maximum(stamps, self._started_ns)) * 1e-9, np.inf)
        silent = [i for i in range(len(ages)) if np.isfinite(ages[i]) and ages[i] > self.feedback_timeout]
        missing = [i for i in range(len(ages)) if not np.isfinite(ages[i])]
        problems: list[str] = []
        level = HealthLevel.OK
        if silent:
            level = HealthLevel.ERROR if self.disarm_on_timeout else HealthLevel.WARN
            described = ", ".join(f"{self.actuators[i].name} ({ages[i]:.2f} s)" for i in silent)
            problems.append(f"no feedback for more than {self.feedback_timeout:g} s (feedback_timeout): {described}")
        if missing:
            level = max(level, HealthLevel.WARN)
            problems.append("waiting for the first feedback of " + ", ".join(self.actuators[i].name for i in missing))
        duplicates = dict(self.duplicates)
        if duplicates:
            level = max(level, HealthLevel.WARN)
            problems.append(
                "a second publisher on "
                + "; ".join(f"{topic} ({', '.join(nodes)})" for topic, nodes in sorted(duplicates.items()))
            )
        unsubscribed = list(self.unsubscribed)
        if unsubscribed:
            level = max(level, HealthLevel.WARN)
            problems.append(f"no subscriber on {len(unsubscribed)} command topic(s): {', '.join(unsubscribed)}")
        finite = ages[np.isfinite(ages)]
        values = {
            "actuators": str(len(self.actuators)),
            "actuator_topic_style": self.style,
            "feedback timeout (s)": f"{self.feedback_timeout:g}",
            "on feedback timeout": "error (disarm)" if self.disarm_on_timeout else "warn",
            "feedback age max (ms)": f"{finite.max() * 1e3:.1f}" if len(finite) else "-",
            "silent actuators": ", ".join(self.actuators[i].name for i in silent) or "none",
            "actuators never reported": ", ".join(self.actuators[i].name for i in missing) or "none",
            "second publishers": ", ".join(sorted(duplicates)) or "none",
            "command topics without subscriber": str(len(unsubscribed)),
            "commands sent": str(self.commands_sent),
            "commands not sent (actuator never reported, or not finite)": str(self.skipped_commands),
            "feedback messages ignored": str(self.rejected_feedback),
        }
        message = "; ".join(problems) if problems else f"{len(self.actuators)} actuators reporting"
        return Health(connected=True, level=HealthLevel(level), message=message, values=values)

    def set_limits(self, limits: JointLimitTable) -> None:
        super().set_limits(limits)
        if self._connected:
            self._publish_index()

    def set_robot(self, robot: Robot) -> None:
        """A bound parameter of the model changed: ``transmissions.<actuator>.reduction|offset``
        change that actuator's transmission at once."""
        previous = self.robot
        super().set_robot(robot)
        changed = False
        updated = list(self.actuators)
        for i, actuator in enumerate(updated):
            old, new = previous.actuators.get(actuator.name), robot.actuators.get(actuator.name)
            if old is None or new is None or old.transmission == new.transmission or new.transmission is None:
                continue
            fields: dict[str, float] = {}
            for field in ("reduction", "offset"):
                before, after = getattr(old.transmission, field, None), getattr(new.transmission, field)
                if after is not None and after != before:
                    fields[field] = float(after)
            if fields:
                reduction = fields.get("reduction", actuator.reduction)
                if not math.isfinite(reduction) or reduction == 0.0:
                    self.logger.warning(f"actuators: ignored reduction {reduction!r} of '{actuator.name}' (0)")
                    continue
                updated[i] = dataclasses.replace(
                    actuator, reduction=reduction, offset=fields.get("offset", actuator.offset)
                )
                changed = True
        if changed:
            self.actuators = tuple(updated)
            self._transmissions = SimpleTransmissions.of(self.actuators)
            self.logger.info(
                "actuators: transmissions now "
                + ", ".join(f"{a.name} ×{a.signed_reduction:g} offset {a.offset:g}" for a in self.actuators)
            )
            if self._connected:
                self._publish_index()

    # ------------------------------------------------------------------ the index and the graph
    def index(self) -> dict[str, object]:
        """The document of ``<ns>/actuators``."""
        limits = self.limits
        per_actuator = []
        for actuator in self.actuators:
            j = limits.index(actuator.joint)
            per_actuator.append(
                actuator_limits(
                    actuator,
                    float(limits.lower[j]),
                    float(limits.upper[j]),
                    float(limits.velocity[j]),
                    float(limits.effort[j]),
                    (float(limits.command_lower[j]), float(limits.command_upper[j])),
                )
            )
        host = self._host
        return index_document(
            self.robot.name,
            host.namespace if host is not None else "/",
            self.style,
            self.actuators,
            self.topics,
            per_actuator,
            extra={
                "driver": host.node_name if host is not None else "",
                "modes": sorted(MODE_NAMES[CommandMode(m)] for m in self._modes),
                "feedback_timeout": self.feedback_timeout,
            },
        )

    def _publish_index(self) -> None:
        if self._index_pub is not None:
            self._index_pub.publish(json.dumps(self.index(), indent=1))

    def check_graph(self) -> None:
        """Look for other publishers on the command topics and for command topics without
        subscribers (a timer on the node, in the executor thread)."""
        host, output = self._host, self._commands
        if host is None or output is None:
            return
        duplicates: dict[str, list[str]] = {}
        unsubscribed: list[str] = []
        for i, topics in enumerate(self.topics):
            try:
                others = host.other_publishers(topics.command)
                subscribers = output.subscriber_count(i)
            except BackendError as error:
                self.logger.debug(f"actuators: graph check failed: {error}")
                return
            if others:
                duplicates[topics.command] = others
                for other in others:
                    if (topics.command, other) not in self._reported_duplicates:
                        self._reported_duplicates.add((topics.command, other))
                        self.logger.warning(
                            f"actuators: a second publisher on '{topics.command}' (node {other}): each actuator "
                            "must have exactly one commanding owner, this driver"
                        )
            if subscribers == 0:
                unsubscribed.append(topics.command)
        self.duplicates = duplicates
        self.unsubscribed = unsubscribed


def _feedback_problem(msg: JointStateLike, actuator: str) -> tuple[str, str] | None:
    """Why a feedback message is not usable, as (kind, text); ``None`` if it is usable."""
    if len(msg.name) > 1 or (len(msg.name) == 1 and msg.name[0] != actuator):
        return "name", f"name {list(msg.name)} is not ['{actuator}'] (or empty)"
    if len(msg.position) != 1:
        return "position", f"position has {len(msg.position)} entries instead of 1"
    if len(msg.velocity) > 1 or len(msg.effort) > 1:
        return "entries", "velocity and effort must have 0 or 1 entries"
    values = [msg.position[0], *msg.velocity, *msg.effort]
    if not all(math.isfinite(v) for v in values):
        return "finite", f"non-finite value in {values}"
    return None


def _as_float(value: ParameterValue | None, name: str) -> float:
    try:
        if isinstance(value, int | float | str):
            return float(value)
    except ValueError:
        pass
    raise ActuatorConfigError(f"{name} must be a number, not {value!r}") from None


_JOINT_FIELD_DOCS = {
    "actuator": "Name of the actuator of joint '{joint}' (its topic and index name). Applies at configure.",
    "reduction": "Reduction of the simple transmission of joint '{joint}': actuator position = (joint position - "
    "offset) x reduction; negative for a reversed drive. Applies at configure.",
    "offset": "Offset of the simple transmission of joint '{joint}', in joint units. Applies at configure.",
    "reversed": "Whether the actuator of joint '{joint}' turns the other way (the reduction's sign flipped). "
    "Applies at configure.",
}

BACKEND = ActuatorsBackend

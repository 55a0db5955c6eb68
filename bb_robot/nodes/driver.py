"""The driver node: joint commands in, a backend moved, joint states out (``ros2 run bb_robot driver``).

A managed (lifecycle) node; what it does, its parameters, topics, services and QoS are in
``docs/nodes/driver.md``.  This module is the thin ROS layer: parameters, lifecycle,
subscriptions, publishers, services and the ``FollowJointTrajectory`` action server.  The
decisions (checking and limiting commands, trajectories and tolerances, arming, the watchdog,
the control loop on its own thread, the backends) are made in :mod:`bb_robot.driver`, which
the tests exercise without ROS.

Threads: one executor thread runs every ROS callback (rclpy's C++ ``EventsExecutor`` where
available: a sixth of the CPU per message of the multi-threaded executor); callbacks check
commands and queue them (and, with ``immediate_commands``, write them to the backend: see
:mod:`bb_robot.driver.core`), and a ``FollowJointTrajectory`` goal is a coroutine that waits
without blocking.  The control loop runs on a thread of its own at ``rate`` on absolute
deadlines; the publishers read the loop's latest snapshot at ``publish_rate``, or (0) publish
each sample as the core passes it on.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import rclpy
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.clock import Clock, ClockType
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future

from bb_robot.description.parameters import default_model_dirs
from bb_robot.description.throttle import WarningThrottle
from bb_robot.driver import limits as joint_limits
from bb_robot.driver.backends.base import Backend, BackendContext, HealthLevel, backend_class
from bb_robot.driver.commands import CommandMode, CommandValidator, describe_clamped
from bb_robot.driver.core import CoreSettings, DriverCore, Execution, Feedback
from bb_robot.driver.errors import INVALID_GOAL, INVALID_JOINTS, BackendError, CommandRejected, TrajectoryRejected
from bb_robot.driver.loop import request_realtime
from bb_robot.driver.model import (
    Mimic,
    ModelError,
    driven_joints,
    load_model_file,
    load_model_text,
    mimic_joints,
    mimic_sources,
)
from bb_robot.driver.parameters import JOINT_PARAMETERS, PARAMETERS, ParameterSpec, joint_parameter
from bb_robot.driver.tolerances import JointToleranceSpec, Outcome, ToleranceDefaults, resolve_tolerances
from bb_robot.driver.trajectory import TrajectoryOptions, TrajectoryPoint
from bb_robot.errors import BbRobotError
from bb_robot.model.robot import Robot
from bb_robot.nodes.lifecycle_guard import answer_impossible_transitions

NODE_NAME = "driver"


def _qos(depth: int, durability: DurabilityPolicy) -> QoSProfile:
    return QoSProfile(
        depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE, durability=durability
    )


#: ``robot_description`` (subscribed), ``~/arm_state``, ``<robot>/get/joint_positions_min|max``.
LATCHED_QOS = _qos(1, DurabilityPolicy.TRANSIENT_LOCAL)
#: ``<robot>/set/*`` and ``<robot>/get/joint_states``: depth 1, as sas_robot_driver.
SAS_QOS = _qos(1, DurabilityPolicy.VOLATILE)
#: ``~/joint_commands``, ``~/joint_trajectory``, ``joint_states``, ``/diagnostics``.
DEFAULT_QOS = _qos(10, DurabilityPolicy.VOLATILE)
#: Seconds between two ``/diagnostics`` messages.
DIAGNOSTICS_PERIOD = 1.0
#: With ``publish_rate`` 0: how often (Hz) the arm state and the "held back" message are checked.
HOUSEKEEPING_RATE = 10.0

_TYPES = {
    "string": ParameterType.PARAMETER_STRING,
    "double": ParameterType.PARAMETER_DOUBLE,
    "integer": ParameterType.PARAMETER_INTEGER,
    "bool": ParameterType.PARAMETER_BOOL,
    "string_array": ParameterType.PARAMETER_STRING_ARRAY,
    "double_array": ParameterType.PARAMETER_DOUBLE_ARRAY,
}
#: The model's bound parameters (Robot.param_subscriptions) start with these.
_BOUND_PREFIXES = ("joints.", "transmissions.")


def _descriptor(spec: ParameterSpec, name: str | None = None) -> ParameterDescriptor:
    description = spec.description
    if spec.choices:
        description += f" One of: {', '.join(spec.choices)}."
    descriptor = ParameterDescriptor(
        name=name or spec.name, type=_TYPES[spec.type], description=description, read_only=spec.read_only
    )
    if spec.range is not None and spec.type == "double":
        descriptor.floating_point_range = [FloatingPointRange(from_value=spec.range[0], to_value=spec.range[1])]
    return descriptor


def _initial(spec: ParameterSpec) -> Any:
    if spec.name == "model_dirs" and spec.default is None:
        return list(default_model_dirs())
    return list(spec.default) if isinstance(spec.default, list | tuple) else spec.default


class Session:
    """What exists while the node is configured (created by configure, released by cleanup)."""

    def __init__(self) -> None:
        self.robot: Robot | None = None
        self.base_robot: Robot | None = None
        self.source: str | None = None
        self.kind = ""
        self.joints: tuple[str, ...] = ()
        self.mimic: dict[str, Mimic] = {}
        self.backend: Backend | None = None
        self.core: DriverCore | None = None
        self.validator: CommandValidator | None = None
        self.declared: list[str] = []
        self.bound: dict[str, float] = {}
        self.entities: list[tuple[str, Any]] = []
        self.timers: list[Any] = []
        self.goal_timer: Any = None
        self.action_server: ActionServer | None = None
        self.publishers: dict[str, Any] = {}
        self.last_stamp = -1
        self.limits_published_ns = 0
        self.published_arm_state: str | None = None
        #: publish_rate 0: every sample is published as the core passes it on (no publish timer).
        self.each_sample = False
        self.waiting_logged = False

    @property
    def ready(self) -> tuple[DriverCore, CommandValidator]:
        assert self.core is not None and self.validator is not None
        return self.core, self.validator


class DriverNode(LifecycleNode):
    """The driver (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, **kwargs)
        answer_impossible_transitions(self)  # rclpy 7 (Jazzy) would die of such a request
        from diagnostic_msgs.msg import DiagnosticArray
        from std_msgs.msg import String

        self._String, self._DiagnosticArray = String, DiagnosticArray
        for spec in PARAMETERS:
            self.declare_parameter(spec.name, _initial(spec), _descriptor(spec))
        self._callback_scheduling = "normal"
        self._throttle = WarningThrottle(5.0)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._session: Session | None = None
        #: Joint states are published by the executor (publish timer) or another thread (publish_rate 0).
        self._publish_lock = threading.Lock()
        #: Goals being executed: the execution, its goal handle, the future its coroutine awaits.
        self._goals: list[tuple[Execution, Any, Future]] = []

        self._backend_name = str(self.get_parameter("backend").value)
        self._backend_class: type[Backend] | None = None
        self._backend_error: str | None = None
        self._backend_parameters: list[str] = []
        try:
            self._backend_class = backend_class(self._backend_name)
        except BackendError as error:
            self._backend_error = str(error)
            self.get_logger().error(f"{error}; configure will fail")
        if self._backend_class is not None:
            # Under the backend's own name (``sim.initial_positions``), also when it was selected as
            # ``package.module:Class``.
            prefix = self._backend_class.name or self._backend_name.rsplit(":", 1)[-1]
            for spec in self._backend_class.parameters():
                name = f"{prefix}.{spec.name}"
                self.declare_parameter(name, _initial(spec), _descriptor(spec, name))
                self._backend_parameters.append(name)

        self._arm_state_pub = self.create_publisher(String, "~/arm_state", LATCHED_QOS)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DEFAULT_QOS)
        self._diagnostics_timer = self.create_timer(DIAGNOSTICS_PERIOD, self._publish_diagnostics, clock=self._steady)
        self._description: str | None = None
        if not self.get_parameter("model").value:
            self._description_sub = self.create_subscription(
                String, "robot_description", self._on_description, LATCHED_QOS
            )
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)
        self._autostart_timer: Any = None
        if self.get_parameter("autostart").value:
            self._autostart_timer = self.create_timer(0.01, self._autostart, clock=self._steady)

    # ------------------------------------------------------------------ helpers
    @property
    def lifecycle_state(self) -> str:
        """``unconfigured``, ``inactive``, ``active``, ``finalized`` or a transition state."""
        return str(self._state_machine.current_state[1])

    def _warn(self, key: object, text: str) -> None:
        muted = self._throttle.allow(key)
        if muted is None:
            return
        suffix = f" ({muted} more like it since the last one)" if muted else ""
        self.get_logger().warning(text + suffix)

    def _log(self, level: str, text: str) -> None:
        # One call site per severity: rclpy's logger refuses a call site whose severity changes.
        logger = self.get_logger()
        if level == "debug":
            logger.debug(text)
        elif level == "info":
            logger.info(text)
        elif level == "warning":
            logger.warning(text)
        else:
            logger.error(text)

    def _topic(self, name: str) -> str:
        try:
            return str(self.resolve_topic_name(name))
        except Exception:  # noqa: BLE001 - only for messages
            return name

    def _autostart(self) -> None:
        timer, self._autostart_timer = self._autostart_timer, None
        if timer is None:
            return  # a second call already queued by the executor
        timer.cancel()
        if self.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            self.get_logger().error("autostart: configure failed; the node stays unconfigured")
        elif self.trigger_activate() != TransitionCallbackReturn.SUCCESS:
            self.get_logger().error("autostart: activate failed; the node stays inactive")

    def _on_description(self, msg: Any) -> None:
        changed = self._description is not None and msg.data != self._description
        self._description = msg.data
        if changed and self._session is not None:
            self.get_logger().warning(
                "robot_description changed; the driver keeps the model it was configured with "
                "(clean up and configure again to use the new one)"
            )

    # ------------------------------------------------------------------ lifecycle
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        session = self._session = Session()
        try:
            self._configure(session)
        except Exception as error:  # noqa: BLE001 - any failure fails the transition, with its reason
            text = str(error) if isinstance(error, BbRobotError | OSError | ValueError) else repr(error)
            self.get_logger().error(f"configure failed: {text}")
            self._release()
            return TransitionCallbackReturn.FAILURE
        assert session.robot is not None
        self.get_logger().info(
            f"configured: robot '{session.robot.name}' ({session.kind}, "
            f"{session.source or 'robot_description topic'}), "
            f"joints {', '.join(session.joints)}, backend '{self._backend_name}'"
        )
        return TransitionCallbackReturn.SUCCESS

    def _configure(self, session: Session) -> None:
        if self._backend_class is None:
            raise BackendError(self._backend_error or f"unknown backend '{self._backend_name}'")
        model = str(self.get_parameter("model").value)
        if model:
            loaded = load_model_file(
                model, list(self.get_parameter("model_dirs").value or []), str(self.get_parameter("model_scope").value)
            )
        else:
            timeout = float(self.get_parameter("description_timeout").value)
            if self._description is None:
                # Configure runs in the executor thread: wait on a subscription of its own.
                from rclpy.wait_for_message import wait_for_message
                from std_msgs.msg import String

                received, message = wait_for_message(
                    String, self, "robot_description", qos_profile=LATCHED_QOS, time_to_wait=timeout
                )
                if received and message is not None and self._description is None:
                    self._description = message.data
            if self._description is None:
                raise ModelError(
                    f"no robot_description message on '{self._topic('robot_description')}' within {timeout:g} s "
                    "(start the description node, or set the model parameter)"
                )
            loaded = load_model_text(self._description)
        for warning in loaded.warnings:
            self.get_logger().warning(warning)
        session.robot = session.base_robot = loaded.robot
        session.source = loaded.source if loaded.kind != "string" else None
        session.kind = loaded.kind
        session.joints = driven_joints(loaded.robot, list(self.get_parameter("joints").value or []))
        session.mimic = dict(mimic_joints(loaded.robot, session.joints))
        self._declare_joint_parameters(session)
        limits = self._effective_limits(session)
        options = {name.split(".", 1)[1]: self.get_parameter(name).value for name in self._backend_parameters}
        # (backend parameters are named <backend name>.<parameter>; backend names have no dot)
        backend = self._backend_class(
            BackendContext(
                robot=session.robot,
                joint_names=session.joints,
                limits=limits,
                rate=float(self.get_parameter("rate").value),
                logger=self.get_logger(),
                options=options,
                model_source=session.source,
                ros_node=self,
                model_scope=loaded.scope,
                model_dirs=tuple(str(d) for d in self.get_parameter("model_dirs").value or []),
            )
        )
        backend.connect(float(self.get_parameter("connect_timeout").value))
        session.backend = backend
        session.core = DriverCore(backend, limits, self._core_settings(), log=self._log)
        session.validator = CommandValidator(
            limits,
            backend.capabilities.modes,
            policy=str(self.get_parameter("limit_policy").value),
            backend=self._backend_name,
            mimic=mimic_sources(loaded.robot),
        )
        self._create_interfaces(session)
        self._publish_arm_state(session)

    def _declare_joint_parameters(self, session: Session) -> None:
        """Per-joint limit overrides and tolerances, and the model's bound parameters."""
        defaults: dict[str, Any] = {}
        path = str(self.get_parameter("joint_limits_file").value)
        if path:
            for joint, entry in joint_limits.load_overrides(path).items():
                for key, value in vars(entry).items():
                    if value is not None:
                        defaults[f"joint_limits.{joint}.{key}"] = value
        for joint in session.joints:
            for spec in JOINT_PARAMETERS:
                name = joint_parameter(spec.name, joint)
                value = defaults.get(name, spec.default)
                self._declare(session, name, float(value) if spec.type == "double" else value, _descriptor(spec, name))
        robot = session.base_robot
        assert robot is not None
        for param_key, locations in robot.param_subscriptions.items():
            location = locations[0]
            if location.kind == "joint" and location.name not in session.joints:
                continue
            item: Any = robot.joints[location.name] if location.kind == "joint" else robot.actuators[location.name]
            for part in location.field:
                item = getattr(item, part, None) if item is not None else None
            if item is None or not np.isfinite(item):
                continue
            name = ".".join(param_key)
            what = ".".join(location.field)
            descriptor = ParameterDescriptor(
                name=name,
                type=ParameterType.PARAMETER_DOUBLE,
                description=f"The model's {what} of {location.kind} '{location.name}' (a bound parameter of the "
                "robot model; a change takes effect at once).",
            )
            self._declare(session, name, float(item), descriptor)
            session.bound[name] = float(self.get_parameter(name).value)

    def _declare(self, session: Session, name: str, value: Any, descriptor: ParameterDescriptor) -> None:
        if not self.has_parameter(name):
            self.declare_parameter(name, value, descriptor)
        session.declared.append(name)

    def _effective_limits(self, session: Session) -> joint_limits.JointLimitTable:
        """The model's limits (with its bound parameters), tightened by the ``joint_limits.*`` ones."""
        assert session.base_robot is not None
        bound: dict[str | tuple[str, ...], float] = {name: value for name, value in session.bound.items()}
        robot = session.base_robot.with_parameters(bound) if bound else session.base_robot
        session.robot = robot
        values = {name: self.get_parameter(name).value for name in session.declared if name.startswith("joint_limits.")}
        table = joint_limits.from_robot(robot, session.joints)
        return joint_limits.apply_overrides(
            table,
            joint_limits.override_from_parameters(values, session.joints),
            source="joint_limits",
            warn=lambda text: self._warn(("limits", text), text),
        )

    def _core_settings(self) -> CoreSettings:
        def get(name: str) -> Any:
            return self.get_parameter(name).value

        return CoreSettings(
            command_timeout=float(get("command_timeout")),
            watchdog_action=str(get("watchdog_action")),
            stale_timeout=float(get("stale_timeout")),
            trajectory=TrajectoryOptions(
                start_tolerance=float(get("trajectory.start_tolerance")),
                limit_margin=float(get("trajectory.limit_margin")),
                allow_partial_joints=bool(get("allow_partial_joints_goal")),
                allow_nonzero_end_velocity=bool(get("allow_nonzero_velocity_at_trajectory_end")),
                limit_policy=str(get("limit_policy")),
            ),
            immediate_commands=bool(get("immediate_commands")),
        )

    def _create_interfaces(self, session: Session) -> None:
        from control_msgs.action import FollowJointTrajectory
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from std_srvs.srv import SetBool, Trigger
        from trajectory_msgs.msg import JointTrajectory

        assert session.robot is not None
        prefix = (str(self.get_parameter("robot_name").value) or session.robot.name).strip("/")
        entities = session.entities
        for suffix, mode in (
            ("target_joint_positions", CommandMode.POSITION),
            ("target_joint_velocities", CommandMode.VELOCITY),
            ("target_joint_forces", CommandMode.EFFORT),
        ):
            topic = f"{prefix}/set/{suffix}"
            try:
                resolved = str(self.resolve_topic_name(topic))
            except Exception as error:  # noqa: BLE001 - rclpy raises several types for a bad name
                raise ModelError(f"'{topic}' is not a valid topic name ({error}); set robot_name") from None
            entities.append(
                (
                    "subscription",
                    self.create_subscription(
                        Float64MultiArray,
                        topic,
                        functools.partial(self._on_array, mode=mode, topic=resolved),
                        SAS_QOS,
                    ),
                )
            )
        publishers = {
            "sas_state": (JointState, f"{prefix}/get/joint_states", SAS_QOS),
            "sas_min": (Float64MultiArray, f"{prefix}/get/joint_positions_min", LATCHED_QOS),
            "sas_max": (Float64MultiArray, f"{prefix}/get/joint_positions_max", LATCHED_QOS),
            "joint_states": (JointState, "joint_states", DEFAULT_QOS),
        }
        for key, (msg_type, topic, qos) in publishers.items():
            session.publishers[key] = self.create_publisher(msg_type, topic, qos)
            entities.append(("publisher", session.publishers[key]))
        commands, trajectories = self._topic("~/joint_commands"), self._topic("~/joint_trajectory")
        entities.append(
            (
                "subscription",
                self.create_subscription(
                    JointState,
                    "~/joint_commands",
                    lambda msg: self._on_joint_commands(msg, commands),
                    DEFAULT_QOS,
                ),
            )
        )
        entities.append(
            (
                "subscription",
                self.create_subscription(
                    JointTrajectory,
                    "~/joint_trajectory",
                    lambda msg: self._on_trajectory(msg, trajectories),
                    DEFAULT_QOS,
                ),
            )
        )
        for srv_type, name, callback in (
            (Trigger, "~/arm", self._on_arm),
            (Trigger, "~/disarm", self._on_disarm),
            (SetBool, "~/set_armed", self._on_set_armed),
            (Trigger, "~/reset", self._on_reset),
        ):
            entities.append(("service", self.create_service(srv_type, name, callback)))
        session.action_server = ActionServer(
            self,
            FollowJointTrajectory,
            "~/follow_joint_trajectory",
            execute_callback=self._execute_goal,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda goal_handle: CancelResponse.ACCEPT,
        )
        self._start_goal_monitor(session)
        self._publish_limits(session)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        session = self._session
        if session is None or session.core is None:
            return TransitionCallbackReturn.FAILURE
        rate = float(self.get_parameter("rate").value)
        priority = int(self.get_parameter("realtime_priority").value)
        if priority > 0:
            self._callback_scheduling = _executor_thread_scheduling(priority)
        try:
            session.core.start(rate, priority)
        except Exception as error:  # noqa: BLE001 - reported as a failed transition
            self.get_logger().error(f"activate failed: {error}")
            return TransitionCallbackReturn.FAILURE
        self._start_publish_timer(session)
        if self.get_parameter("auto_arm").value:
            _, text = session.core.arm()
            self.get_logger().info(f"auto_arm: {text}")
        self._publish_arm_state(session)
        for _ in range(100):  # the loop thread reports its scheduling as it starts
            if session.core.scheduling != "not started":
                break
            time.sleep(0.001)
        self.get_logger().info(
            f"active: control loop at {rate:g} Hz ({session.core.scheduling}), joint_states at "
            f"{float(self.get_parameter('publish_rate').value):g} Hz; {session.core.arming.state.value}"
        )
        return TransitionCallbackReturn.SUCCESS

    def _start_publish_timer(self, session: Session) -> None:
        """``publish_rate`` > 0: a timer publishes the latest sample; 0: every sample is published as
        the core passes it on, and a timer at :data:`HOUSEKEEPING_RATE` keeps the arm state and the
        waiting message up to date."""
        for timer in session.timers:
            self.destroy_timer(timer)
        rate = float(self.get_parameter("publish_rate").value)
        assert session.core is not None
        session.each_sample = rate <= 0
        session.core.watch_samples(self._on_sample if session.each_sample else None)
        period = 1.0 / (rate if rate > 0 else HOUSEKEEPING_RATE)
        session.timers = [self.create_timer(period, self._publish_state, clock=self._steady)]

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        session = self._session
        if session is not None and session.core is not None:
            session.core.stop()
            if self._callback_scheduling != "normal":
                self._callback_scheduling = _executor_thread_scheduling(0)
            for timer in session.timers:
                self.destroy_timer(timer)
            session.timers = []
            self._publish_arm_state(session)
        self.get_logger().info("inactive: joints held, control loop stopped")
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        self.get_logger().info("cleaned up: backend released")
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.get_logger().error("lifecycle error: releasing the backend")
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def _release(self) -> None:
        """Stop the loop, end any goal, disconnect the backend, remove what configure made (never raises)."""
        session, self._session = self._session, None
        if session is None:
            return
        core = session.core
        if core is not None:
            if core.running:
                core.stop(settle_timeout=0.5)
            if core.execution is not None:
                core.cancel(core.execution, "the driver was cleaned up")
        for timer in session.timers:
            self.destroy_timer(timer)
        self._monitor_goals()  # ends the goals of this session (the core is being released)
        if session.goal_timer is not None:
            self.destroy_timer(session.goal_timer)
        if session.action_server is not None:
            session.action_server.destroy()
        destroy: dict[str, Any] = {
            "publisher": self.destroy_publisher,
            "subscription": self.destroy_subscription,
            "service": self.destroy_service,
        }
        with self._publish_lock:  # not while a backend thread publishes a sample
            for kind, entity in session.entities:
                try:
                    destroy[kind](entity)
                except Exception:  # noqa: BLE001 - best effort while releasing
                    pass
        if session.backend is not None:
            try:
                session.backend.disconnect()
            except Exception as error:  # noqa: BLE001
                self.get_logger().warning(f"backend '{self._backend_name}' failed to disconnect: {error!r}")
        for name in session.declared:
            if self.has_parameter(name):
                try:
                    self.undeclare_parameter(name)
                except Exception:  # noqa: BLE001
                    pass

    def shutdown(self) -> None:
        """Release everything (the process is ending)."""
        self._release()

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, parameters: Sequence[Parameter]) -> SetParametersResult:
        state = self.lifecycle_state
        for parameter in parameters:
            reason = self._parameter_problem(parameter.name, parameter.value, state)
            if reason is not None:
                return SetParametersResult(successful=False, reason=reason)
        session = self._session
        bound = {p.name: p.value for p in parameters if session is not None and p.name in session.bound}
        if bound and session is not None and session.base_robot is not None:
            try:
                values: dict[str | tuple[str, ...], float] = {name: value for name, value in session.bound.items()}
                values.update({name: float(value) for name, value in bound.items()})
                session.base_robot.with_parameters(values)
            except BbRobotError as error:
                return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    def _parameter_problem(self, name: str, value: Any, state: str) -> str | None:
        spec = next((s for s in PARAMETERS if s.name == name), None)
        if spec is not None:
            if spec.when == "activate" and state == "active":
                return f"{name} applies at activate: deactivate first"
            if spec.when == "configure" and state in ("inactive", "active"):
                return f"{name} applies at configure: clean up first"
            if spec.choices and value not in spec.choices:
                return f"{name} must be one of {', '.join(spec.choices)}, not {value!r}"
            if spec.type == "integer" and spec.range is not None and not spec.range[0] <= value <= spec.range[1]:
                return f"{name} must be from {spec.range[0]:g} to {spec.range[1]:g}, not {value!r}"
        if name.startswith("joint_limits.") and isinstance(value, float):
            if not np.isfinite(value):
                return f"{name} must be a finite number"
            if name.rsplit(".", 1)[-1] in ("max_velocity", "max_acceleration", "max_effort") and value < 0:
                return f"{name} must be above 0 (0: not given)"
        return None

    def _after_set_parameters(self, parameters: Sequence[Parameter]) -> None:
        session = self._session
        if session is None or session.core is None or session.validator is None:
            return
        names = {p.name for p in parameters}
        core = session.core
        core.update_settings(self._core_settings())
        if "limit_policy" in names:
            session.validator.update(policy=str(self.get_parameter("limit_policy").value))
        if any(n.startswith(("joint_limits.", *_BOUND_PREFIXES)) for n in names):
            for name in names & session.bound.keys():
                session.bound[name] = float(self.get_parameter(name).value)
            limits = self._effective_limits(session)
            core.set_limits(limits)
            session.validator.update(limits)
            if names & session.bound.keys():
                core.set_robot(session.robot)
            self._publish_limits(session)
            self.get_logger().info("joint limits now: " + "; ".join(limits.describe(j) for j in session.joints))
        if "publish_rate" in names and session.timers:
            self._start_publish_timer(session)
        if "action_monitor_rate" in names:
            self._start_goal_monitor(session)

    # ------------------------------------------------------------------ commands
    def _on_array(self, msg: Any, mode: CommandMode, topic: str) -> None:
        session = self._session
        if session is None or session.core is None:
            return
        core, validator = session.ready
        try:
            command = validator.from_array(mode, msg.data, topic, time.monotonic_ns())
            core.submit(command)
        except CommandRejected as error:
            self._warn((topic, error.kind), f"rejected a command on '{topic}': {error.reason}")
            return
        if command.clamped:
            self._warn((topic, "clamped"), f"command on '{topic}': {describe_clamped(command)}")

    def _on_joint_commands(self, msg: Any, topic: str) -> None:
        session = self._session
        if session is None or session.core is None:
            return
        core, validator = session.ready
        try:
            command = validator.from_joint_state(
                msg.name, msg.position, msg.velocity, msg.effort, topic, time.monotonic_ns()
            )
            core.submit(command)
        except CommandRejected as error:
            self._warn((topic, error.kind), f"rejected a command on '{topic}': {error.reason}")
            return
        if command.clamped:
            self._warn((topic, "clamped"), f"command on '{topic}': {describe_clamped(command)}")

    @staticmethod
    def _points(trajectory: Any) -> list[TrajectoryPoint]:
        return [
            TrajectoryPoint(
                p.time_from_start.sec + p.time_from_start.nanosec * 1e-9,
                p.positions,
                p.velocities,
                p.accelerations,
                p.effort,
            )
            for p in trajectory.points
        ]

    def _start_ns(self, trajectory: Any) -> int | None:
        """The header stamp on the monotonic clock (``None`` for a zero stamp: start now)."""
        stamp = trajectory.header.stamp
        if stamp.sec == 0 and stamp.nanosec == 0:
            return None
        offset = stamp.sec * 1_000_000_000 + stamp.nanosec - self.get_clock().now().nanoseconds
        return int(time.monotonic_ns() + offset)

    def _on_trajectory(self, msg: Any, topic: str) -> None:
        session = self._session
        if session is None or session.core is None:
            return
        try:
            source = f"'{topic}'"
            trajectory = session.core.prepare_trajectory(
                msg.joint_names, self._points(msg), start_ns=self._start_ns(msg), source=source
            )
            session.core.execute(trajectory, None, source)
        except (TrajectoryRejected, CommandRejected) as error:
            self._warn((topic, "trajectory", str(error)), f"rejected a trajectory on '{topic}': {error}")

    # ------------------------------------------------------------------ the action
    async def _execute_goal(self, goal_handle: Any) -> Any:
        """A goal's whole life, as a coroutine: it awaits the end of its execution without
        blocking the executor (the goal monitor timer resolves the future it awaits)."""
        from control_msgs.action import FollowJointTrajectory

        result_type = FollowJointTrajectory.Result
        action = self._topic("~/follow_joint_trajectory")
        source = f"a goal on '{action}'"
        session = self._session
        goal = goal_handle.request
        try:
            if session is None or session.core is None:
                raise CommandRejected("inactive", "the driver is not configured")
            if goal.multi_dof_trajectory.joint_names or goal.multi_dof_trajectory.points:
                raise TrajectoryRejected(INVALID_JOINTS, "multi-DOF trajectories are not supported")
            if goal.component_path_tolerance or goal.component_goal_tolerance:
                raise TrajectoryRejected(INVALID_JOINTS, "component tolerances (multi-DOF joints) are not supported")
            core = session.core
            trajectory = core.prepare_trajectory(
                goal.trajectory.joint_names,
                self._points(goal.trajectory),
                start_ns=self._start_ns(goal.trajectory),
                source=source,
            )
            tolerances = resolve_tolerances(
                self._tolerance_defaults(session).for_joints(trajectory.names),
                trajectory.names,
                [JointToleranceSpec(t.name, t.position, t.velocity, t.acceleration) for t in goal.path_tolerance],
                [JointToleranceSpec(t.name, t.position, t.velocity, t.acceleration) for t in goal.goal_tolerance],
                goal.goal_time_tolerance.sec + goal.goal_time_tolerance.nanosec * 1e-9,
            )
            execution = core.execute(trajectory, tolerances, source)
        except (TrajectoryRejected, CommandRejected) as error:
            code = error.code if isinstance(error, TrajectoryRejected) else INVALID_GOAL
            self.get_logger().warning(f"{source} rejected: {error}")
            goal_handle.abort()
            return result_type(error_code=code, error_string=str(error))
        self.get_logger().info(
            f"{source} accepted: {len(trajectory.point_times)} points over {trajectory.duration:.3f} s"
        )
        finished: Future = Future()
        self._goals.append((execution, goal_handle, finished))
        self._monitor_goals()
        await finished
        outcome = execution.outcome
        assert outcome is not None
        try:
            if outcome.status == "succeeded":
                goal_handle.succeed()
            elif outcome.status == "canceled" and goal_handle.is_cancel_requested:
                goal_handle.canceled()
            else:
                goal_handle.abort()
        except Exception as error:  # noqa: BLE001 - the action server may be gone (cleanup)
            self.get_logger().debug(f"could not report the goal's end: {error!r}")
        if outcome.status != "succeeded":
            self.get_logger().info(f"{execution.source} {outcome.status}: {outcome.message}")
        return result_type(error_code=outcome.code, error_string=outcome.message)

    def _tolerance_defaults(self, session: Session) -> ToleranceDefaults:
        return ToleranceDefaults(
            trajectory={j: float(self.get_parameter(f"constraints.{j}.trajectory").value) for j in session.joints},
            goal={j: float(self.get_parameter(f"constraints.{j}.goal").value) for j in session.joints},
            stopped_velocity=float(self.get_parameter("constraints.stopped_velocity_tolerance").value),
            goal_time=float(self.get_parameter("constraints.goal_time").value),
        )

    def _monitor_goals(self) -> None:
        """At ``action_monitor_rate``: feedback, cancel requests, and the end of each goal."""
        if not self._goals:
            return
        from control_msgs.action import FollowJointTrajectory

        session = self._session
        remaining = []
        for execution, goal_handle, finished in self._goals:
            if execution.done.is_set() or session is None or session.core is None:
                if not execution.done.is_set():
                    execution.finish(Outcome("aborted", INVALID_GOAL, "the driver was cleaned up"))
                finished.set_result(True)
                continue
            if goal_handle.is_cancel_requested and not execution.cancel_sent:
                session.core.cancel(execution, "canceled by the client")
                execution.cancel_sent = True
            feedback = execution.feedback
            if feedback is not None and goal_handle.is_active:
                goal_handle.publish_feedback(self._feedback(FollowJointTrajectory.Feedback(), execution, feedback))
            remaining.append((execution, goal_handle, finished))
        self._goals = remaining

    def _start_goal_monitor(self, session: Session) -> None:
        period = 1.0 / float(self.get_parameter("action_monitor_rate").value)
        if session.goal_timer is not None:
            self.destroy_timer(session.goal_timer)
        session.goal_timer = self.create_timer(period, self._monitor_goals, clock=self._steady)

    def _feedback(self, message: Any, execution: Execution, feedback: Feedback) -> Any:
        message.header.stamp = self.get_clock().now().to_msg()
        message.joint_names = list(execution.trajectory.names)
        p, v, a = feedback.desired
        ap, av = feedback.actual
        t = max((feedback.now_ns - execution.trajectory.start_ns) * 1e-9, 0.0)
        for point in (message.desired, message.actual, message.error):
            point.time_from_start.sec = int(t)
            point.time_from_start.nanosec = int((t - int(t)) * 1e9)
        message.desired.positions, message.desired.velocities = p.tolist(), v.tolist()
        message.desired.accelerations = a.tolist()
        message.actual.positions, message.actual.velocities = ap.tolist(), av.tolist()
        message.error.positions, message.error.velocities = (p - ap).tolist(), (v - av).tolist()
        if hasattr(message, "index"):  # control_msgs 6.3+ (Kilted); Jazzy's 5.x feedback has no index
            message.index = int(feedback.index)
        return message

    # ------------------------------------------------------------------ arming
    def _arming(self, what: str, request: Any, response: Any) -> Any:
        session = self._session
        if session is None or session.core is None:
            response.success, response.message = False, f"cannot {what}: the driver is not configured"
            return response
        core = session.core
        if what == "set_armed":
            what = "arm" if request.data else "disarm"
        if what == "arm":
            response.success, response.message = core.arm()
        elif what == "disarm":
            response.success, response.message = core.disarm(f"{self._topic('~/' + what)} called")
        else:
            response.success, response.message = core.reset()
        if response.success:  # (two call sites: rclpy's logger refuses a call site whose severity changes)
            self.get_logger().info(f"{what}: {response.message}")
        else:
            self.get_logger().warning(f"{what}: {response.message}")
        self._publish_arm_state(session)
        return response

    def _on_arm(self, request: Any, response: Any) -> Any:
        return self._arming("arm", request, response)

    def _on_disarm(self, request: Any, response: Any) -> Any:
        return self._arming("disarm", request, response)

    def _on_set_armed(self, request: Any, response: Any) -> Any:
        return self._arming("set_armed", request, response)

    def _on_reset(self, request: Any, response: Any) -> Any:
        return self._arming("reset", request, response)

    def _publish_arm_state(self, session: Session) -> None:
        if session.core is None:
            return
        state = session.core.arming.state.value
        if state != session.published_arm_state:
            session.published_arm_state = state
            self._arm_state_pub.publish(self._String(data=state))

    # ------------------------------------------------------------------ publishing
    def _publish_limits(self, session: Session) -> None:
        from std_msgs.msg import Float64MultiArray

        assert session.core is not None
        session.limits_published_ns = time.monotonic_ns()
        limits = session.core.limits
        session.publishers["sas_min"].publish(Float64MultiArray(data=limits.lower.tolist()))
        session.publishers["sas_max"].publish(Float64MultiArray(data=limits.upper.tolist()))

    def _publish_state(self) -> None:
        """The publish timer: the arm state, then (``publish_rate`` > 0) the loop's latest sample."""
        session = self._session
        if session is None or session.core is None:
            return
        try:
            self._publish_arm_state(session)
            snapshot = session.core.snapshot
            if snapshot.sample is not None and not snapshot.all_seen:
                self._held_back(session, snapshot.cycle)
            elif snapshot.sample is not None and not session.each_sample:
                self._publish_sample(session, snapshot.sample, snapshot.all_seen, snapshot.stale)
        except Exception as error:  # noqa: BLE001 - publishing must not take the node down
            self._warn(("publish", repr(error)), f"failed to publish the joint state: {error!r}")

    def _held_back(self, session: Session, cycle: int) -> None:
        if not session.waiting_logged and cycle > 0:
            session.waiting_logged = True
            self.get_logger().info("joint_states are held back until the backend has reported every joint")

    def _on_sample(self, sample: Any, all_seen: bool, stale: tuple[str, ...]) -> None:
        """``publish_rate`` 0: a new sample from the core (the backend's or the loop's thread)."""
        session = self._session
        if session is not None and all_seen:
            self._publish_sample(session, sample, all_seen, stale)

    def _publish_sample(self, session: Session, sample: Any, all_seen: bool, stale: tuple[str, ...]) -> None:
        """Publish ``sample`` on joint_states and the sas topic, once per sample (any thread)."""
        if not all_seen:
            return
        with self._publish_lock:
            if sample.stamp_ns == session.last_stamp:
                return
            session.last_stamp = sample.stamp_ns
            age = time.monotonic_ns() - sample.stamp_ns
            self._publish_joint_states(session, sample, stale, self.get_clock().now().nanoseconds - age)
            if sample.stamp_ns - session.limits_published_ns >= 1_000_000_000:
                # Latched, and also repeated once a second for clients that subscribe volatile (sas).
                self._publish_limits(session)

    def _publish_joint_states(self, session: Session, sample: Any, stale: tuple[str, ...], stamp_ns: int) -> None:
        from sensor_msgs.msg import JointState

        names = list(session.joints)
        positions = sample.positions.tolist()
        velocities = sample.velocities.tolist()
        efforts = sample.efforts.tolist() if sample.efforts is not None else None
        index = {name: i for i, name in enumerate(names)}
        for name, mimic in session.mimic.items():
            i = index[mimic.source]
            names.append(name)
            positions.append(mimic.multiplier * positions[i] + mimic.offset)
            velocities.append(mimic.multiplier * velocities[i])
            if efforts is not None:
                efforts.append(float("nan"))
        n = len(session.joints)
        if not stale:
            sas = JointState(name=names[:n], position=positions[:n], velocity=velocities[:n])
            if efforts is not None:
                sas.effort = efforts[:n]
            sas.header.stamp.sec, sas.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
            session.publishers["sas_state"].publish(sas)
        else:
            gone = set(stale) | {name for name, mimic in session.mimic.items() if mimic.source in stale}
            keep = [i for i, name in enumerate(names) if name not in gone]
            names = [names[i] for i in keep]
            positions = [positions[i] for i in keep]
            velocities = [velocities[i] for i in keep]
            efforts = [efforts[i] for i in keep] if efforts is not None else None
        if names:
            msg = JointState(name=names, position=positions, velocity=velocities)
            if efforts is not None:
                msg.effort = efforts
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
            session.publishers["joint_states"].publish(msg)

    def _publish_diagnostics(self) -> None:
        try:
            self._diagnostics_pub.publish(self._diagnostics())
        except Exception as error:  # noqa: BLE001
            self._warn(("diagnostics", repr(error)), f"failed to publish diagnostics: {error!r}")

    def _publishing(self, session: Session) -> str:
        """How joint_states are published, for /diagnostics."""
        core = session.core
        if not session.each_sample:
            return f"at {float(self.get_parameter('publish_rate').value):g} Hz"
        if core is not None and core.samples_from_backend:
            return "each sample, as the backend receives it"
        return "each sample, after each control cycle"

    def _diagnostics(self) -> Any:
        from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

        ok, warn, error = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
        array = self._DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        state = self.lifecycle_state
        session = self._session

        def status(name: str, level: Any, message: str, values: dict[str, Any], hardware: str = "") -> Any:
            item = DiagnosticStatus(
                level=level, name=f"{self.get_name()}: {name}", message=message, hardware_id=hardware
            )
            item.values = [KeyValue(key=str(k), value=str(v)) for k, v in values.items()]
            return item

        if session is None or session.core is None or session.robot is None:
            message = self._backend_error or f"{state}: not configured"
            array.status = [
                status("driver", error if self._backend_error else warn, message, {"lifecycle state": state})
            ]
            return array
        core, hardware = session.core, session.robot.name
        snapshot = core.snapshot
        loop: dict[str, Any] = {
            "lifecycle state": state,
            "rate (Hz)": f"{float(self.get_parameter('rate').value):g}",
            "scheduling": core.scheduling,
            "executor thread": self._callback_scheduling,
            "joint_states": self._publishing(session),
            "commands": "written at once" if core.settings.immediate_commands else "written at the next cycle",
        }
        loop_level, loop_message = ok, "running" if core.running else "stopped"
        stats = core.loop_stats()
        if stats is not None and stats.cycles:
            loop.update(
                {
                    "cycles": stats.cycles,
                    "skipped cycles": stats.skipped,
                    "measured rate (Hz)": f"{1.0 / stats.period_mean:.1f}" if stats.period_mean > 0 else "-",
                    "period jitter std (ms)": f"{stats.period_std * 1e3:.3f}",
                    "period max deviation (ms)": f"{stats.period_max_deviation * 1e3:.3f}",
                    "lag last (ms)": f"{stats.lag_last * 1e3:.3f}",
                    "lag p99 (ms)": f"{stats.lag_p99 * 1e3:.3f}",
                    "lag max (ms)": f"{stats.lag_max * 1e3:.3f}",
                    "cycle time mean (ms)": f"{stats.step_mean * 1e3:.3f}",
                    "cycle time max (ms)": f"{stats.step_max * 1e3:.3f}",
                }
            )
            if stats.skipped:
                loop_level, loop_message = warn, f"running; {stats.skipped} cycles skipped since activation"
        latency = core.command_latency()
        if latency is not None:
            loop["command latency p50 (ms)"] = f"{latency[0] * 1e3:.3f}"
            loop["command latency p99 (ms)"] = f"{latency[1] * 1e3:.3f}"
        age = core.last_command_age()
        loop["command age (s)"] = f"{age:.3f}" if age is not None else "no command yet"
        loop["command timeout (s)"] = f"{core.settings.command_timeout:g}"
        health = core.health
        backend_level = {HealthLevel.OK: ok, HealthLevel.WARN: warn, HealthLevel.ERROR: error}[health.level]
        if not health.connected:
            backend_level = error
        backend = {"backend": self._backend_name, "connected": health.connected, **health.values}
        arm_level = error if snapshot.arm_state.value == "error" else ok
        arming = {"state": snapshot.arm_state.value, "reason": snapshot.arm_reason, "backend errors": core.errors}
        joints_level, joints_message = ok, "every joint reported"
        if not snapshot.all_seen:
            joints_level, joints_message = warn, "waiting for every joint to be reported by the backend"
        if snapshot.stale:
            joints_level, joints_message = warn, f"stale: {', '.join(snapshot.stale)}"
        modes = dict(zip(session.joints, snapshot.modes, strict=False))
        array.status = [
            status("control loop", loop_level, loop_message, loop, hardware),
            status("backend", backend_level, health.message, backend, hardware),
            status("arming", arm_level, snapshot.arm_state.value, arming, hardware),
            status("joints", joints_level, joints_message, modes, hardware),
        ]
        return array


def _executor_thread_scheduling(priority: int) -> str:
    """While the loop runs with real-time priority, put the calling (executor) thread at the
    lowest real-time priority; ``priority`` 0 puts it back to normal.

    Python threads share one interpreter lock: a loop thread at high priority still waits for
    whichever thread holds it, and an ordinary thread holding it can be preempted by any other
    process for milliseconds (priority inversion).  At real-time priority 1 the executor thread
    still yields to the loop thread, but no longer to ordinary processes.
    """
    if priority > 0:
        return request_realtime(1)
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError, ValueError) as error:
        return f"normal ({getattr(error, 'strerror', None) or error})"
    return "normal"


def make_executor() -> Executor:
    """rclpy's C++ events executor where this rclpy has it, else the single-threaded one."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:  # pragma: no cover - rclpy before Kilted
        return SingleThreadedExecutor()
    return EventsExecutor()


def main(args: Sequence[str] | None = None) -> int:
    """Run the node until SIGINT or SIGTERM; the backend is released on the way out."""
    # A short switch interval lets the loop thread take the interpreter soon after it wakes,
    # even while the executor thread runs Python code (the default is 5 ms).
    sys.setswitchinterval(0.0005)
    rclpy.init(args=list(args) if args is not None else None)
    node: DriverNode | None = None
    executor = make_executor()
    try:
        node = DriverNode()
        executor.add_node(node)
        # spin_once in a loop, not spin(): the events executor's spin() does not return on SIGINT.
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.2)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        steps: list[Any] = [executor.shutdown]
        if node is not None:
            steps = [node.shutdown, node.destroy_node, executor.shutdown]
        for step in [*steps, rclpy.try_shutdown]:
            _uninterrupted(step)
    return 0


def _uninterrupted(step: Any) -> None:
    """Run a clean-up step to its end even if a second SIGINT arrives meanwhile."""
    for _ in range(3):
        try:
            step()
            return
        except KeyboardInterrupt:
            continue


if __name__ == "__main__":
    sys.exit(main())

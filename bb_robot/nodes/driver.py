"""The driver node: joint commands in, a backend moved, joint states out (``ros2 run bb_robot driver``).

A managed (lifecycle) node; what it does, its parameters, topics, services and QoS are in
``docs/nodes/driver.md``.  This module is the thin ROS layer's lifecycle and wiring; its parts
are :mod:`~bb_robot.nodes.driver_parameters` (declaring, reading and checking parameters),
:mod:`~bb_robot.nodes.driver_commands` (command topics), :mod:`~bb_robot.nodes.driver_action`
(the ``FollowJointTrajectory`` action server), :mod:`~bb_robot.nodes.driver_publishing` (joint
states and limits), :mod:`~bb_robot.nodes.driver_scene` (run-time objects into the collision guard),
:mod:`~bb_robot.nodes.driver_diagnostics` and :mod:`~bb_robot.nodes.executor`; a backend reaches
ROS through :class:`~bb_robot.ros.backend_host.RosBackendHost`.  The decisions (checking and
limiting commands, trajectories and tolerances, arming, the watchdog, the control loop on its own
thread, the backends) are made in :mod:`bb_robot.driver`, which the tests exercise without ROS.

Threads: one executor thread runs every ROS callback (rclpy's C++ ``EventsExecutor`` where
available: a sixth of the CPU per message of the multi-threaded executor); callbacks check
commands and queue them (and, with ``immediate_commands``, write them to the backend: see
:mod:`bb_robot.driver.core`), and a ``FollowJointTrajectory`` goal is a coroutine that waits
without blocking.  The control loop runs on a thread of its own at ``rate`` on absolute
deadlines; the publishers read the loop's latest snapshot at ``publish_rate``, or (0) publish
each sample as the core passes it on.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.service import Service
from rclpy.timer import Timer
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger

from bb_robot.common.collector import settle_collector
from bb_robot.common.throttle import WarningThrottle
from bb_robot.driver.backends.base import Backend, JointSample, backend_class
from bb_robot.driver.commands.commands import CommandValidator
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.core import DriverCore
from bb_robot.driver.errors import BackendError
from bb_robot.driver.guard.collision_guard import CollisionGuard
from bb_robot.driver.model import (
    Mimic,
    ModelError,
    driven_joints,
    load_model_file,
    load_model_text,
    mimic_joints,
    mimic_sources,
)
from bb_robot.driver.servo.servo import Servo
from bb_robot.driver.state.restarts import record_start
from bb_robot.driver.timing.skips import SkipWindow
from bb_robot.errors import BbRobotError
from bb_robot.model.robot import Robot
from bb_robot.nodes import driver_startup as startup
from bb_robot.nodes.driver_action import TrajectoryAction
from bb_robot.nodes.driver_commands import CommandInputs, resolve
from bb_robot.nodes.driver_diagnostics import DriverView, driver_statuses, judge_rate, unconfigured_status
from bb_robot.nodes.driver_gripper import GripperAction, gripper_settings
from bb_robot.nodes.driver_parameters import BOUND_PREFIXES, DriverParameters, parameter_problem
from bb_robot.nodes.driver_publishing import JointStatePublishers, PublishThread
from bb_robot.nodes.driver_scene import SceneFollower, follow_scene
from bb_robot.nodes.driver_servo import ServoInputs, make_servo, servo_status, settings_from
from bb_robot.nodes.executor import AddNode, executor_thread_scheduling, interruptible, serve
from bb_robot.nodes.lifecycle_guard import answer_impossible_transitions
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS, LATEST_RELIABLE_QOS

__all__ = [
    "DEFAULT_QOS",
    "DIAGNOSTICS_PERIOD",
    "HOUSEKEEPING_RATE",
    "LATCHED_QOS",
    "NODE_NAME",
    "SAS_QOS",
    "DriverNode",
    "Session",
    "main",
]

NODE_NAME = "driver"
#: ``<robot>/set/*`` and ``<robot>/get/joint_states``: depth 1, as sas_robot_driver (see :mod:`bb_robot.ros.qos`).
SAS_QOS = LATEST_RELIABLE_QOS
#: Seconds between two ``/diagnostics`` messages.
DIAGNOSTICS_PERIOD = 1.0
#: With ``publish_rate`` 0: how often (Hz) the arm state and the "held back" message are checked.
HOUSEKEEPING_RATE = 10.0
#: Seconds of control cycles after which the loop's load is judged, once per activation.
RATE_JUDGED_AFTER = 3.0


@dataclass(frozen=True)
class DrivenModel:
    """The model configure loaded, where it came from, and the joints the driver drives.

    Attributes:
        robot: The model as loaded (its bound parameters at the file's values).
        source: The file (``None``: the ``robot_description`` topic).
        kind: ``urdf``, ``xacro``, ``sdf``, ``string``, ...
        joints: The driven joints, in order.
        mimic: The mimic joints published with them, by name.
    """

    robot: Robot
    source: str | None
    kind: str
    joints: tuple[str, ...]
    mimic: Mapping[str, Mimic]


@dataclass
class Session:
    """What exists while the node is configured (created by configure, released by cleanup).

    Filled in by configure step by step: what a failed configure got to is released.
    """

    model: DrivenModel | None = None
    #: The model with the current values of its bound parameters.
    robot: Robot | None = None
    #: Parameters declared at configure, and the model's bound parameters' values.
    declared: list[str] = field(default_factory=list)
    bound: dict[str, float] = field(default_factory=dict)
    backend: Backend | None = None
    core: DriverCore | None = None
    #: Collision checking (``collision.check`` and collision geometry), its thread runs while active.
    guard: CollisionGuard | None = None
    scene: SceneFollower | None = None  # the move_group node's run-time objects into the guard
    validator: CommandValidator | None = None
    #: The session's ROS interfaces.
    commands: CommandInputs | None = None
    #: The Cartesian servo (``servo.*``; docs/nodes/servo.md), its inputs, or why there is none.
    servo: Servo | None = None
    servo_inputs: ServoInputs | None = None
    servo_off: str = ""
    action: TrajectoryAction | None = None
    gripper: GripperAction | None = None  # ~/gripper_cmd (gripper.joints)
    publishers: JointStatePublishers | None = None
    services: list[Service] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)
    #: publish_rate > 0: the thread that publishes the latest sample (not the executor's).
    publish_thread: PublishThread | None = None
    published_arm_state: str | None = None
    #: publish_rate 0: every sample is published as the core passes it on (no publish timer).
    each_sample: bool = False
    waiting_logged: bool = False
    #: Whether the loop's measured load was judged since activation (:func:`rate_advice`).
    rate_judged: bool = False


class DriverNode(LifecycleNode):
    """The driver (see the module docstring).

    Args:
        **kwargs: Passed on to :class:`rclpy.lifecycle.LifecycleNode` (``namespace``,
            ``parameter_overrides``, ...).
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(NODE_NAME, **kwargs)  # type: ignore[arg-type]
        answer_impossible_transitions(self)  # rclpy 7 (Jazzy) would die of such a request
        self._params = DriverParameters(self)
        self._params.declare_node_parameters()
        self._callback_scheduling = "normal"
        self._throttle = WarningThrottle(5.0)
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._session: Session | None = None
        self._skips = SkipWindow()
        #: Earlier starts under the same launch (respawn: true); > 0: this process is a restart.
        self.restarts = record_start(self.get_fully_qualified_name()) if self._params.flag("respawn") else 0
        if self.restarts:
            self.get_logger().warning(
                f"respawned: restart {self.restarts} of this driver under its launch; it starts disarmed whatever "
                "auto_arm says and resumes no goal or command (sim and mujoco restart from their initial state)"
            )

        self._backend_name = self._params.text("backend")
        self._backend_class: type[Backend] | None = None
        self._backend_error: str | None = None
        self._backend_parameters: list[str] = []
        try:
            self._backend_class = backend_class(self._backend_name)
        except BackendError as error:
            self._backend_error = str(error)
            self.get_logger().error(f"{error}; configure will fail")
        if self._backend_class is not None:
            self._backend_parameters = self._params.declare_backend_parameters(self._backend_class, self._backend_name)

        self._arm_state_pub = self.create_publisher(String, "~/arm_state", LATCHED_QOS)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DEFAULT_QOS)
        self._diagnostics_timer = self.create_timer(DIAGNOSTICS_PERIOD, self._publish_diagnostics, clock=self._steady)
        self._description: str | None = None
        if not self._params.text("model"):
            self._description_sub = self.create_subscription(
                String, "robot_description", self._on_description, LATCHED_QOS
            )
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)
        self._autostart_timer: Timer | None = None
        if self._params.flag("autostart"):
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

    def _autostart(self) -> None:
        timer, self._autostart_timer = self._autostart_timer, None
        if timer is not None:  # (None: a second call already queued by the executor)
            timer.cancel()
            startup.autostart(self)

    def _on_description(self, msg: String) -> None:
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
        steps = startup.StepTimes("configured")
        try:
            with interruptible():  # SIGINT: released, the process stops (driver_startup)
                self._configure(session, steps)
        except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - any failure fails the transition, with its reason
            if isinstance(error, KeyboardInterrupt) or startup.stopping(self):
                return startup.interrupted(self._release)
            text = str(error) if isinstance(error, BbRobotError | OSError | ValueError) else repr(error)
            self.get_logger().error(f"configure failed: {text}")
            self._release()
            return TransitionCallbackReturn.FAILURE
        model = session.model
        assert model is not None
        self.get_logger().info(
            f"configured: robot '{model.robot.name}' ({model.kind}, "
            f"{model.source or 'robot_description topic'}), "
            f"joints {', '.join(model.joints)}, backend '{self._backend_name}'"
        )
        startup.log_steps(self, steps)
        return TransitionCallbackReturn.SUCCESS

    def _wait_for_description(self) -> str:
        """The ``robot_description`` text, waited for up to ``description_timeout``."""
        timeout = self._params.number("description_timeout")
        if self._description is None:
            # Configure runs in the executor thread: wait on a subscription of its own.
            from rclpy.wait_for_message import wait_for_message

            received, message = wait_for_message(
                String, self, "robot_description", qos_profile=LATCHED_QOS, time_to_wait=timeout
            )
            if received and message is not None and self._description is None:
                self._description = message.data
        if self._description is None:
            raise ModelError(
                f"no robot_description message on '{resolve(self, 'robot_description')}' within {timeout:g} s "
                "(start the description node, or set the model parameter)"
            )
        return self._description

    def _configure(self, session: Session, steps: startup.StepTimes) -> None:
        if self._backend_class is None:
            raise BackendError(self._backend_error or f"unknown backend '{self._backend_name}'")
        parameters = self._params
        model_file = parameters.text("model")
        if model_file:
            loaded = load_model_file(model_file, parameters.texts("model_dirs"), parameters.text("model_scope"))
        else:
            description = self._wait_for_description()
            steps.lap("robot_description wait")
            loaded = load_model_text(description)
        for warning in loaded.warnings:
            self.get_logger().warning(warning)
        joints = driven_joints(loaded.robot, parameters.texts("joints"))
        model = session.model = DrivenModel(
            loaded.robot,
            loaded.source if loaded.kind != "string" else None,
            loaded.kind,
            joints,
            dict(mimic_joints(loaded.robot, joints)),
        )
        session.robot = loaded.robot
        parameters.declare_joint_parameters(joints, loaded.robot, session.declared, session.bound)
        limits = self._effective_limits(session)
        steps.lap("model load")
        backend = session.backend = startup.connect_backend(
            self, self._backend_class, parameters, self._backend_parameters, session.robot, joints, limits, loaded
        )
        core = session.core = DriverCore(backend, limits, parameters.core_settings(), log=self._log)
        steps.lap("backend connect")
        if parameters.flag("collision.check"):
            session.guard = parameters.collision_guard(loaded, limits, self._log)
        if session.guard is not None:
            steps.lap("collision guard", session.guard.build_times)
            session.guard.prepare()  # its process starts, in parallel with the rest of configure
            steps.lap("placement kernel")
            core.trajectory_check = session.guard.check_trajectory
            core.command_filter = session.guard.filter
            session.scene = follow_scene(self, session.guard, lambda: core.snapshot.sample, self._log, self._warn)
        session.validator = CommandValidator(
            limits,
            backend.capabilities.modes,
            policy=parameters.text("limit_policy"),
            margins=parameters.clamp_margins(),
            backend=self._backend_name,
            mimic=mimic_sources(loaded.robot),
        )
        prefix = (parameters.text("robot_name") or session.robot.name).strip("/")
        guard = session.guard
        check = (lambda command: guard.check_command(command, core.snapshot.sample, core.limits)) if guard else None
        session.commands = CommandInputs(self, prefix, core, session.validator, self._warn, check)
        steps.lap("command topics")
        servo = make_servo(parameters.value, loaded.robot, limits, session.guard, self._log, self.get_namespace())
        session.servo, session.servo_off = servo
        if session.servo is not None:
            core.servo = session.servo
            session.servo_inputs = ServoInputs(self, core, session.servo, self._warn)
        steps.lap("servo")
        session.publishers = JointStatePublishers(self, prefix, joints, model.mimic, backend, loaded.robot.root_link)
        session.services = [
            self.create_service(Trigger, "~/arm", lambda request, response: self._arming("arm", response)),
            self.create_service(Trigger, "~/disarm", lambda request, response: self._arming("disarm", response)),
            self.create_service(SetBool, "~/set_armed", self._on_set_armed),
            self.create_service(Trigger, "~/reset", lambda request, response: self._arming("reset", response)),
        ]
        session.action = TrajectoryAction(
            self,
            core,
            lambda: parameters.tolerance_defaults(joints),
            parameters.number("action_monitor_rate"),
            self._steady,
        )
        settings, rate = gripper_settings(parameters.value, joints), parameters.number("action_monitor_rate")
        session.gripper = GripperAction(self, core, session.validator, check, settings, rate, self._steady)
        session.publishers.publish_limits(core.limits)
        self._publish_arm_state(session)
        steps.lap("publishers and services")

    def _effective_limits(self, session: Session) -> JointLimitTable:
        """The model's limits (with its bound parameters), tightened by the ``joint_limits.*`` ones."""
        model = session.model
        assert model is not None
        bound: dict[str | tuple[str, ...], float] = {name: value for name, value in session.bound.items()}
        session.robot = model.robot.with_parameters(bound) if bound else model.robot
        return self._params.effective_limits(
            session.robot, model.joints, session.declared, lambda text: self._warn(("limits", text), text)
        )

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        session = self._session
        if session is None or session.core is None:
            return TransitionCallbackReturn.FAILURE
        steps = startup.StepTimes("active")
        rate = self._params.number("rate")
        priority = int(self._params.number("realtime_priority"))
        try:
            with interruptible():  # SIGINT: released, the process stops (driver_startup)
                if priority > 0:
                    self._callback_scheduling = executor_thread_scheduling(priority)
                settle_collector()  # the session's objects out of the collector's full passes
                steps.lap("garbage collection")
                if session.guard is not None:
                    session.guard.start()  # checking before the loop runs: no cycle goes unchecked
                    steps.lap("checker process start")
                session.core.start(rate, priority)
                self._start_publish_timer(session)
                startup.wait_for_loop(session.core)  # (it reports its scheduling as it starts)
                steps.lap("loop and publishing start")
        except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - reported as a failed transition
            if isinstance(error, KeyboardInterrupt) or startup.stopping(self):
                return startup.interrupted(self._release)
            self.get_logger().error(f"activate failed: {error}")
            return TransitionCallbackReturn.FAILURE
        if self._params.flag("auto_arm") and not self.restarts:
            _, text = session.core.arm()
            self.get_logger().info(f"auto_arm: {text}")
        elif self.restarts and session.core.arming.reason == "not armed yet":
            session.core.arming.reason = f"respawned (restart {self.restarts}): call ~/arm"
        self._publish_arm_state(session)
        self.get_logger().info(
            f"active: control loop at {rate:g} Hz ({session.core.scheduling}), joint_states at "
            f"{self._params.number('publish_rate'):g} Hz; {session.core.arming.state.value}"
        )
        startup.log_steps(self, steps)
        return TransitionCallbackReturn.SUCCESS

    def _start_publish_timer(self, session: Session) -> None:
        """``publish_rate`` > 0: a thread of its own publishes the latest sample at that rate
        (:class:`PublishThread`: not held back by the executor), with real-time priority 1 while the
        loop has real-time priority; 0: every sample is published as the core passes it on.  A timer
        (at ``publish_rate``, or :data:`HOUSEKEEPING_RATE` with 0) keeps the arm state and the
        waiting message up to date."""
        self._stop_publishing(session)
        rate = self._params.number("publish_rate")
        assert session.core is not None
        if session.publishers is not None:
            session.publishers.restart_gaps()
        session.each_sample = rate <= 0
        session.core.watch_samples(self._on_sample if session.each_sample else None)
        period = 1.0 / (rate if rate > 0 else HOUSEKEEPING_RATE)
        session.timers = [self.create_timer(period, self._publish_state, clock=self._steady)]
        if rate > 0:
            priority = 1 if int(self._params.number("realtime_priority")) > 0 else 0
            session.publish_thread = PublishThread(rate, priority, lambda: self._publish_sample(session))

    def _stop_publishing(self, session: Session) -> None:
        """Destroy the publish timers and stop the publish thread (its last sample published)."""
        for timer in session.timers:
            self.destroy_timer(timer)
        session.timers = []
        thread, session.publish_thread = session.publish_thread, None
        if thread is not None:
            thread.stop()

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        session = self._session
        if session is not None and session.core is not None:
            session.core.stop()
            if session.guard is not None:
                session.guard.stop()
            if self._callback_scheduling != "normal":
                self._callback_scheduling = executor_thread_scheduling(0)
            self._stop_publishing(session)
            session.rate_judged = False  # judged again after the next activation
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
        if session.guard is not None:
            session.guard.stop()
        if core is not None:
            if core.running:
                core.stop(settle_timeout=0.5)
            if core.execution is not None:
                core.cancel(core.execution, "the driver was cleaned up")
        self._stop_publishing(session)
        if session.action is not None:
            session.action.close()  # ends the goals of this session (the core is being released)
        for inputs in (session.commands, session.servo_inputs, session.scene, session.gripper):
            if inputs is not None:
                inputs.close()
        if session.publishers is not None:
            session.publishers.close()  # (not while a backend thread publishes a sample)
        for service in session.services:
            try:
                self.destroy_service(service)
            except Exception:  # noqa: BLE001 - best effort while releasing
                pass
        if session.backend is not None:
            try:
                session.backend.disconnect()
            except Exception as error:  # noqa: BLE001
                self.get_logger().warning(f"backend '{self._backend_name}' failed to disconnect: {error!r}")
        self._params.undeclare(session.declared)

    def shutdown(self) -> None:
        """Release everything (the process is ending)."""
        self._release()

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, parameters: Sequence[Parameter]) -> SetParametersResult:
        state = self.lifecycle_state
        for parameter in parameters:
            reason = parameter_problem(parameter.name, parameter.value, state)
            if reason is not None:
                return SetParametersResult(successful=False, reason=reason)
        session = self._session
        bound = {p.name: p.value for p in parameters if session is not None and p.name in session.bound}
        if bound and session is not None and session.model is not None:
            try:
                values: dict[str | tuple[str, ...], float] = {name: value for name, value in session.bound.items()}
                values.update({name: float(value) for name, value in bound.items()})
                session.model.robot.with_parameters(values)
            except BbRobotError as error:
                return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, parameters: Sequence[Parameter]) -> None:
        session = self._session
        if session is None or session.core is None or session.validator is None or session.model is None:
            return
        joints = session.model.joints
        names = {p.name for p in parameters}
        core = session.core
        core.update_settings(self._params.core_settings())
        if "limit_policy" in names or any(n.startswith("clamp_margin.") for n in names):
            session.validator.update(policy=self._params.text("limit_policy"), margins=self._params.clamp_margins())
        if any(n.startswith(("joint_limits.", *BOUND_PREFIXES)) for n in names):
            for name in names & session.bound.keys():
                session.bound[name] = self._params.number(name)
            limits = self._effective_limits(session)
            core.set_limits(limits)
            session.validator.update(limits)
            if session.servo is not None:
                session.servo.use_limits(limits)
            if names & session.bound.keys() and session.robot is not None:
                core.set_robot(session.robot)
            if session.publishers is not None:
                session.publishers.publish_limits(limits)
            self.get_logger().info("joint limits now: " + "; ".join(limits.describe(j) for j in joints))
        if session.servo is not None and any(n.startswith("servo.") for n in names):
            session.servo.use_settings(settings_from(self._params.value, self.get_namespace()))
        if "publish_rate" in names and session.timers:
            self._start_publish_timer(session)
        if "action_monitor_rate" in names and session.action is not None:
            session.action.set_monitor_rate(self._params.number("action_monitor_rate"))

    # ------------------------------------------------------------------ arming
    def _on_set_armed(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        """``~/set_armed``: arm on ``data: true``, disarm on ``false``."""
        return self._arming("arm" if request.data else "disarm", response)

    def _arming(self, what: str, response: Trigger.Response) -> Trigger.Response:
        """``~/arm``, ``~/disarm``, ``~/set_armed`` (as ``arm`` / ``disarm``) and ``~/reset``."""
        session = self._session
        if session is None or session.core is None:
            response.success, response.message = False, f"cannot {what}: the driver is not configured"
            return response
        core = session.core
        if what == "arm":
            response.success, response.message = core.arm()
        elif what == "disarm":
            response.success, response.message = core.disarm(f"{resolve(self, '~/' + what)} called")
        else:
            response.success, response.message = core.reset()
        if response.success:  # (two call sites: rclpy's logger refuses a call site whose severity changes)
            self.get_logger().info(f"{what}: {response.message}")
        else:
            self.get_logger().warning(f"{what}: {response.message}")
        self._publish_arm_state(session)
        return response

    def _publish_arm_state(self, session: Session) -> None:
        if session.core is None:
            return
        state = session.core.arming.state.value
        if state != session.published_arm_state:
            session.published_arm_state = state
            self._arm_state_pub.publish(String(data=state))

    # ------------------------------------------------------------------ publishing
    def _publish_state(self) -> None:
        """The publish timer: the arm state, and the message that joint_states wait for every joint."""
        session = self._session
        if session is None or session.core is None or session.publishers is None:
            return
        try:
            self._publish_arm_state(session)
            snapshot = session.core.snapshot
            if snapshot.sample is not None and not snapshot.all_seen:
                if not session.waiting_logged and snapshot.cycle > 0:
                    session.waiting_logged = True
                    self.get_logger().info("joint_states are held back until the backend has reported every joint")
        except Exception as error:  # noqa: BLE001 - publishing must not take the node down
            self._warn(("publish", repr(error)), f"failed to publish the arm state: {error!r}")

    def _publish_sample(self, session: Session) -> None:
        """The publish thread (``publish_rate`` > 0): the loop's latest sample, once every joint was reported."""
        core, publishers = session.core, session.publishers
        if core is None or publishers is None:
            return
        try:
            snapshot = core.snapshot
            if snapshot.sample is not None and snapshot.all_seen:
                publishers.publish_sample(snapshot.sample, snapshot.stale)
        except Exception as error:  # noqa: BLE001 - publishing must not take the node down
            if self.context.ok():  # (a SIGINT shut the context down before the thread stopped: no fault)
                self._warn(("publish", repr(error)), f"failed to publish the joint state: {error!r}")

    def _on_sample(self, sample: JointSample, all_seen: bool, stale: tuple[str, ...]) -> None:
        """``publish_rate`` 0: a new sample from the core (the backend's or the loop's thread)."""
        session = self._session
        if session is not None and session.publishers is not None and all_seen:
            session.publishers.publish_sample(sample, stale)

    def _publish_diagnostics(self) -> None:
        session = self._session
        if session is not None and not session.rate_judged:  # once per activation (judge_rate)
            session.rate_judged, advice = judge_rate(session.core, RATE_JUDGED_AFTER)
            if advice is not None:
                self.get_logger().warning(f"control loop: {advice}")
        try:
            self._diagnostics_pub.publish(self._diagnostics())
        except Exception as error:  # noqa: BLE001
            self._warn(("diagnostics", repr(error)), f"failed to publish diagnostics: {error!r}")

    def _publishing(self, session: Session) -> str:
        """How joint_states are published, for /diagnostics."""
        core = session.core
        thread = session.publish_thread
        if not session.each_sample:
            how = f", its own thread ({thread.scheduling})" if thread is not None else ""
            return f"at {self._params.number('publish_rate'):g} Hz{how}"
        if core is not None and core.samples_from_backend:
            return "each sample, as the backend receives it"
        return "each sample, after each control cycle"

    def _diagnostics(self) -> DiagnosticArray:
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        state = self.lifecycle_state
        session = self._session
        if session is None or session.core is None or session.robot is None or session.model is None:
            array.status = unconfigured_status(self.get_name(), state, self._backend_error)
            return array
        view = DriverView(
            session.core,
            session.robot.name,
            session.model.joints,
            self._params.number("rate"),
            self._callback_scheduling,
            self._publishing(session),
            self._skips,
            self.restarts,
            session.guard,
            session.publishers.take_gaps() if session.publishers is not None else None,
        )
        array.status = driver_statuses(self.get_name(), state, self._backend_name, view)
        array.status.append(servo_status(self.get_name(), session.servo, session.servo_off, session.robot.name))
        return array


def main(args: Sequence[str] | None = None) -> int:
    """Run the node until SIGINT or SIGTERM; the backend is released on the way out.

    Args:
        args: Command-line arguments for rclpy (``None``: the process's).

    Returns:
        The exit status: 0, or 1 when the executor became unusable (see :func:`serve`).
    """
    rclpy.init(args=list(args) if args is not None else None)

    def start(add: AddNode) -> None:
        node = DriverNode()
        add(node, node.shutdown)

    return serve(start)


if __name__ == "__main__":
    sys.exit(main())

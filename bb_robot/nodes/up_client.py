"""The ROS side of ``bb-robot up``: a client node that watches a brought-up robot and runs the demo.

It subscribes to what the description node and the driver publish (``robot_description``,
``/tf``, ``joint_states``, the driver's ``~/arm_state``, ``/diagnostics``, the description node's
``~/tip_pose``), asks the driver's lifecycle state (``~/get_state``), arms it (``~/arm``), sends
FollowJointTrajectory goals, and MoveIt ``move_action`` goals to the move_group node (``--demo-plan``:
a pose goal as MoveIt's clients send it, :func:`pose_move_goal`), keeping every joint state
received meanwhile (:meth:`UpClient.record_joint_states`).  Rates are counted from the messages received here
(:class:`bb_robot.bringup.rates.RateCounter`).  :meth:`UpClient.snapshot` gives everything as
plain data, so the command line (which never imports rclpy) can show it.  The node spins on its
own thread.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.action import ActionClient
from rclpy.executors import ExternalShutdownException

from bb_robot.bringup.demo import DemoPoint
from bb_robot.bringup.rates import RateCounter
from bb_robot.bringup.status import NOTED_PAUSE, PAUSES_KEPT, GoalProgress, MoveProgress, RobotView
from bb_robot.driver.servo.servo import STREAM_SILENCES
from bb_robot.nodes import description as description_node
from bb_robot.nodes.executor import end_context, make_executor

#: What the description node and the driver use: latched (robot_description, arm_state), and
#: reliable volatile for the streams.
LATCHED_QOS = description_node.LATCHED_QOS
STREAM_QOS = description_node.TF_QOS
#: Seconds between lifecycle state queries.
STATE_PERIOD = 0.2


def _level(level: bytes | int) -> int:
    """A DiagnosticStatus level (``byte``: ``bytes`` of length 1 in rclpy) as an int."""
    return level[0] if isinstance(level, bytes) else int(level)


def demo_goal(joint_names: Sequence[str], points: Sequence[DemoPoint]) -> Any:
    """The FollowJointTrajectory goal through ``points`` (at rest at each), as the demo sends it.

    Args:
        joint_names: The joints, in the order of each point's positions.
        points: The waypoints (:func:`bb_robot.bringup.demo.demo_points`).

    Returns:
        A ``control_msgs/action/FollowJointTrajectory`` goal.
    """
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(joint_names)
    for point in points:
        seconds = int(point.time)
        goal.trajectory.points.append(
            JointTrajectoryPoint(
                positions=list(point.positions),
                velocities=[0.0] * len(point.positions),
                time_from_start=Duration(sec=seconds, nanosec=int(round((point.time - seconds) * 1e9))),
            )
        )
    return goal


#: A joint state as :meth:`UpClient.record_joint_states` keeps it: (monotonic s, names, positions).
JointStateRecord = tuple[float, tuple[str, ...], tuple[float, ...]]


def pose_move_goal(
    group: str,
    frame: str,
    link: str,
    position: Sequence[float],
    quaternion: Sequence[float],
    position_tolerance: float,
    orientation_tolerance: float,
    planning_time: float,
) -> Any:
    """A ``moveit_msgs/action/MoveGroup`` goal to put ``link`` at a pose, planned and executed.

    As MoveIt's clients build a pose target: one ``Constraints`` with a ``PositionConstraint`` whose
    region is a sphere around the position (its radius the tolerance) and an ``OrientationConstraint``
    with the same absolute tolerance about each axis; the start state is the current one (``is_diff``).

    Args:
        group: the planning group.
        frame: the frame of the pose (``header.frame_id``).
        link: the link to place.
        position: x, y, z (m).
        quaternion: x, y, z, w.
        position_tolerance: the sphere's radius (m).
        orientation_tolerance: each axis's tolerance (rad).
        planning_time: ``allowed_planning_time`` (s).

    Returns:
        The goal, ``planning_options.plan_only`` false.
    """
    from geometry_msgs.msg import Pose
    from moveit_msgs.action import MoveGroup
    from moveit_msgs.msg import Constraints, OrientationConstraint, PositionConstraint
    from shape_msgs.msg import SolidPrimitive

    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
    o = pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
    region = PositionConstraint(link_name=link, weight=1.0)
    region.header.frame_id = frame
    region.constraint_region.primitives.append(
        SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[float(position_tolerance)])
    )
    region.constraint_region.primitive_poses.append(pose)
    orientation = OrientationConstraint(link_name=link, orientation=pose.orientation, weight=1.0)
    orientation.header.frame_id = frame
    orientation.absolute_x_axis_tolerance = orientation.absolute_y_axis_tolerance = float(orientation_tolerance)
    orientation.absolute_z_axis_tolerance = float(orientation_tolerance)
    goal = MoveGroup.Goal()
    request = goal.request
    request.group_name = group
    request.num_planning_attempts = 1
    request.allowed_planning_time = float(planning_time)
    request.start_state.is_diff = True
    request.goal_constraints.append(Constraints(position_constraints=[region], orientation_constraints=[orientation]))
    goal.planning_options.plan_only = False
    goal.planning_options.planning_scene_diff.is_diff = True
    goal.planning_options.planning_scene_diff.robot_state.is_diff = True
    return goal


def _seconds(duration: Any) -> float:
    return float(duration.sec) + float(duration.nanosec) * 1e-9


class _Robot:
    """Subscriptions, clients and counters of one robot."""

    def __init__(self, client: UpClient, namespace: str) -> None:
        from control_msgs.action import FollowJointTrajectory
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import PoseStamped
        from lifecycle_msgs.srv import GetState
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from std_srvs.srv import Trigger
        from tf2_msgs.msg import TFMessage

        self.view = RobotView(namespace)
        self.client = client
        prefix = f"/{namespace}" if namespace else ""
        node = client.node
        self.tf_rate = RateCounter()
        self.joint_state_rate = RateCounter()
        self.lock = threading.Lock()
        self.frame_prefix_hint = f"{namespace}/" if namespace else ""
        self.subscriptions = [
            node.create_subscription(String, f"{prefix}/robot_description", self._on_description, LATCHED_QOS),
            node.create_subscription(JointState, f"{prefix}/joint_states", self._on_joint_states, STREAM_QOS),
            node.create_subscription(String, f"{prefix}/driver/arm_state", self._on_arm_state, LATCHED_QOS),
            node.create_subscription(PoseStamped, f"{prefix}/description/tip_pose", self._on_tip, STREAM_QOS),
            node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, STREAM_QOS),
        ]
        self.tf_subscription = node.create_subscription(TFMessage, "/tf", self._on_tf, STREAM_QOS)
        self.get_state: Any = node.create_client(GetState, f"{prefix}/driver/get_state")
        self.arm_client: Any = node.create_client(Trigger, f"{prefix}/driver/arm")
        self.action_name = f"{prefix}/driver/follow_joint_trajectory"
        self.action: Any = ActionClient(node, FollowJointTrajectory, self.action_name)
        self._GetState = GetState
        self._Trigger = Trigger
        self._FollowJointTrajectory = FollowJointTrajectory
        self._state_future: Any = None
        self._driver_node = f"{prefix}/driver"
        self.move_action_name = f"{prefix}/move_action"
        self.move_action: Any = None  # created at the first move goal
        self.recorders: list[list[JointStateRecord]] = []

    # ---------------------------------------------------------------- callbacks
    def _on_description(self, msg: Any) -> None:
        with self.lock:
            if self.view.description_at is None:
                self.view.description_at = time.monotonic()
            self.view.description_size = len(msg.data)

    def _on_joint_states(self, msg: Any) -> None:
        now = time.monotonic()
        self.joint_state_rate.add(now)
        if self.recorders:
            record = (now, tuple(msg.name), tuple(msg.position))
            for recorder in self.recorders:
                recorder.append(record)
        with self.lock:
            self.view.joint_names = tuple(msg.name)
            self.view.positions = tuple(msg.position)
            stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            pause = stamp - self.view.joint_state_stamp
            if self.view.joint_state_stamp and pause > NOTED_PAUSE:
                self.view.joint_state_pauses = (*self.view.joint_state_pauses, (stamp, pause))[-PAUSES_KEPT:]
            self.view.joint_state_stamp = stamp
            self.view.velocities = tuple(msg.velocity)

    def _on_tf(self, msg: Any) -> None:
        mine = any(t.child_frame_id.startswith(self.frame_prefix_hint) for t in msg.transforms)
        if not mine:
            return
        now = time.monotonic()
        self.tf_rate.add(now)
        with self.lock:
            if self.view.first_tf_at is None:
                self.view.first_tf_at = now

    def _on_arm_state(self, msg: Any) -> None:
        with self.lock:
            self.view.arm_state = msg.data
            if msg.data == "armed" and self.view.armed_at is None:
                self.view.armed_at = time.monotonic()

    def _on_tip(self, msg: Any) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        with self.lock:
            self.view.tip = (p.x, p.y, p.z, q.x, q.y, q.z, q.w)
            self.view.tip_frame = msg.header.frame_id

    def _on_diagnostics(self, msg: Any) -> None:
        mine = self._driver_node.strip("/")
        warnings = tuple(
            f"{status.name}: {status.message}"
            for status in msg.status
            if _level(status.level) > 0 and mine in status.name
        )
        silences = [
            int(value.value)
            for status in msg.status
            if mine in status.name and status.name.endswith(": servo")
            for value in status.values
            if value.key == STREAM_SILENCES and value.value.isdigit()
        ]
        with self.lock:
            self.view.warnings = warnings
            self.view.diagnostics_at = time.monotonic()
            if silences:
                self.view.stream_silences = silences[0]

    # ---------------------------------------------------------------- polling
    def poll_state(self) -> None:
        """Ask the driver's lifecycle state (one request at a time; the answer updates the view)."""
        future = self._state_future
        if future is not None and not future.done():
            return
        if future is not None and future.done() and future.result() is not None:
            label = future.result().current_state.label
            now = time.monotonic()
            with self.lock:
                self.view.lifecycle = label
                if label in ("inactive", "active") and self.view.configured_at is None:
                    self.view.configured_at = now
                if label == "active" and self.view.active_at is None:
                    self.view.active_at = now
        self._state_future = (
            self.get_state.call_async(self._GetState.Request()) if self.get_state.service_is_ready() else None
        )

    def snapshot(self) -> RobotView:
        now = time.monotonic()
        with self.lock:
            view = RobotView(**self.view.__dict__)
        view.tf_rate = self.tf_rate.rate(now)
        view.joint_state_rate = self.joint_state_rate.rate(now)
        return view


class UpClient:
    """A node (own context, own thread) watching the robots in ``namespaces`` ("" for none)."""

    def __init__(self, namespaces: Sequence[str]) -> None:
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
        self.node = rclpy.create_node(f"bb_robot_up_{uuid.uuid4().hex[:6]}", context=self.context)
        self.robots = {namespace: _Robot(self, namespace) for namespace in namespaces}
        self._pose_publishers: dict[str, Any] = {}
        # The events executor where rclpy has it (Kilted): the joint states, TF and tip poses it takes
        # at 100 Hz each kept the single-threaded one's Python busy (docs/bringup.md, "On a slow host").
        self.executor = make_executor(self.context)
        self._closing = threading.Event()
        self.executor.add_node(self.node)
        self.node.create_timer(STATE_PERIOD, self._poll)
        self._thread = threading.Thread(target=self._spin, name="bb_robot_up_client", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        # spin_once in a loop, as serve() does: it ends within 0.2 s of close() with either executor.
        try:
            while not self._closing.is_set() and self.context.ok():
                self.executor.spin_once(timeout_sec=0.2)
        except (ExternalShutdownException, rclpy.executors.ShutdownException):
            pass

    def _poll(self) -> None:
        for robot in self.robots.values():
            robot.poll_state()

    def snapshot(self) -> dict[str, RobotView]:
        """Each robot's view, as plain data."""
        return {namespace: robot.snapshot() for namespace, robot in self.robots.items()}

    def pose_topic(self, namespace: str) -> str:
        """Create the publisher of the robot's ``driver/pose_commands`` (once) and return the topic.

        Args:
            namespace: the robot's namespace.

        Returns:
            The fully qualified topic.
        """
        from geometry_msgs.msg import PoseStamped

        topic = f"/{namespace}/driver/pose_commands" if namespace else "/driver/pose_commands"
        if topic not in self._pose_publishers:
            self._pose_publishers[topic] = self.node.create_publisher(PoseStamped, topic, 10)
        return topic

    def publish_pose(
        self, namespace: str, frame: str, position: Sequence[float], quaternion: Sequence[float], age: float = 0.0
    ) -> None:
        """Publish a tool pose target to the robot's servo, stamped with the moment it is for.

        The servo carries a streamed pose forward from its stamp, so the stamp must be the moment
        the pose was computed for, not when a busy machine got round to publishing it.

        Args:
            namespace: the robot's namespace.
            frame: ``header.frame_id`` (a link of the robot; "" the chain's base).
            position: x, y, z (m).
            quaternion: x, y, z, w.
            age: how long ago (s) the moment the pose is for was; the stamp is now minus that.
        """
        from geometry_msgs.msg import PoseStamped
        from rclpy.duration import Duration

        message = PoseStamped()
        message.header.frame_id = frame
        message.header.stamp = (self.node.get_clock().now() - Duration(nanoseconds=int(age * 1e9))).to_msg()
        p, q = message.pose.position, message.pose.orientation
        p.x, p.y, p.z = (float(v) for v in position)
        q.x, q.y, q.z, q.w = (float(v) for v in quaternion)
        self._pose_publishers[self.pose_topic(namespace)].publish(message)

    def subscribed(self, node_name: str, topic: str) -> bool:
        """Whether a node named ``node_name`` subscribes to ``topic`` (as the graph shows it here).

        Args:
            node_name: the node's name (without namespace).
            topic: the fully qualified topic.

        Returns:
            True once the subscription is known here.
        """
        return any(info.node_name == node_name for info in self.node.get_subscriptions_info_by_topic(topic))

    def arm(self, namespace: str, timeout: float = 10.0) -> tuple[bool, str]:
        """Call the driver's ``~/arm``; returns (success, message)."""
        robot = self.robots[namespace]
        deadline = time.monotonic() + timeout
        while not robot.arm_client.service_is_ready():
            if time.monotonic() > deadline:
                return False, f"no service {robot.arm_client.srv_name} after {timeout:g} s"
            time.sleep(0.05)
        future = robot.arm_client.call_async(robot._Trigger.Request())
        while not future.done():
            if time.monotonic() > deadline:
                return False, f"{robot.arm_client.srv_name} did not answer within {timeout:g} s"
            time.sleep(0.02)
        answer = future.result()
        if answer is None:
            return False, f"{robot.arm_client.srv_name} gave no answer"
        return bool(answer.success), str(answer.message)

    def send_goal(self, namespace: str, joint_names: Sequence[str], points: Sequence[DemoPoint]) -> GoalProgress:
        """Send a FollowJointTrajectory goal; the returned :class:`GoalProgress` fills in as it runs."""
        robot = self.robots[namespace]
        goal = demo_goal(joint_names, points)
        progress = GoalProgress()

        def on_feedback(message: Any) -> None:
            progress.feedback_count += 1
            progress.last_error = tuple(f"{e:+.3f}" for e in message.feedback.error.positions)

        def on_result(future: Any) -> None:
            answer = future.result()
            progress.status = int(answer.status)
            progress.error_code = int(answer.result.error_code)
            progress.error_string = str(answer.result.error_string)
            progress.done = True

        def on_goal(future: Any) -> None:
            handle = future.result()
            progress.accepted = bool(handle.accepted)
            if not handle.accepted:
                progress.rejected_reason = "the driver rejected the goal"
                progress.done = True
                return
            handle.get_result_async().add_done_callback(on_result)

        if not robot.action.wait_for_server(timeout_sec=10.0):
            progress.accepted = False
            progress.rejected_reason = f"no action server {robot.action_name} after 10 s"
            progress.done = True
            return progress
        self._send_in_executor(robot.action, robot.action_name, goal, on_feedback, on_goal, progress)
        return progress

    def record_joint_states(self, namespace: str) -> list[JointStateRecord]:
        """Keep every joint state of the robot received from now on.

        Args:
            namespace: the robot's namespace.

        Returns:
            A list this client appends each joint state to, as it arrives: ``(monotonic s, names,
            positions)`` (read it from another thread; only appended to).
        """
        recorder: list[JointStateRecord] = []
        self.robots[namespace].recorders.append(recorder)
        return recorder

    def send_move(self, namespace: str, goal: Any, server_timeout: float = 10.0) -> MoveProgress:
        """Send a ``move_action`` goal (:func:`pose_move_goal`) to the robot's move_group node.

        Args:
            namespace: the robot's namespace.
            goal: a ``moveit_msgs/action/MoveGroup`` goal.
            server_timeout: how long to wait for the action server (s).

        Returns:
            The goal's :class:`MoveProgress`, filled in as feedback and the result arrive.
        """
        from moveit_msgs.action import MoveGroup

        robot = self.robots[namespace]
        if robot.move_action is None:
            robot.move_action = ActionClient(self.node, MoveGroup, robot.move_action_name)
        progress = MoveProgress()

        def on_feedback(message: Any) -> None:
            progress.states = (*progress.states, (time.monotonic(), str(message.feedback.state)))

        def on_result(future: Any) -> None:
            answer = future.result()
            result = answer.result
            progress.status = int(answer.status)
            progress.error_code = int(result.error_code.val)
            progress.error_message = str(result.error_code.message)
            progress.planning_time = float(result.planning_time)
            planned = result.planned_trajectory.joint_trajectory.points
            progress.planned_points = len(planned)
            progress.planned_duration = _seconds(planned[-1].time_from_start) if planned else 0.0
            progress.executed_points = len(result.executed_trajectory.joint_trajectory.points)
            progress.finished_at = time.monotonic()
            progress.done = True

        def on_goal(future: Any) -> None:
            handle = future.result()
            progress.accepted = bool(handle.accepted)
            if not handle.accepted:
                progress.rejected_reason = f"{robot.move_action_name} rejected the goal"
                progress.done = True
                return
            handle.get_result_async().add_done_callback(on_result)

        if not robot.move_action.wait_for_server(timeout_sec=server_timeout):
            progress.accepted = False
            progress.rejected_reason = f"no action server {robot.move_action_name} after {server_timeout:g} s"
            progress.done = True
            return progress
        self._send_in_executor(robot.move_action, robot.move_action_name, goal, on_feedback, on_goal, progress)
        return progress

    def _send_in_executor(
        self,
        action: Any,
        name: str,
        goal: Any,
        on_feedback: Callable[[Any], None],
        on_goal: Callable[[Any], None],
        progress: GoalProgress | MoveProgress,
    ) -> None:
        """Send ``goal`` from the thread spinning this client's executor.

        Jazzy's rclpy (7.1) sends a goal request and only then files its sequence number, with no
        lock: a goal sent from another thread whose response the spinning thread takes first is
        dropped ("Ignoring unexpected goal response"), and its result never comes, though the
        driver runs the goal.  Sent from the spinning thread, the response is read after.
        """

        def send() -> None:
            try:
                action.send_goal_async(goal, feedback_callback=on_feedback).add_done_callback(on_goal)
            except Exception as error:  # (rclpy's errors have no common base)
                progress.accepted = False
                progress.rejected_reason = f"sending the goal to {name} failed: {error}"
                progress.done = True

        self.executor.create_task(send)

    def close(self) -> None:
        """Stop spinning and destroy the node and its context."""
        self._closing.set()
        try:
            self.executor.shutdown(timeout_sec=2.0)
        finally:
            self.node.destroy_node()
            if self.context.ok():
                rclpy.shutdown(context=self.context)
            self._thread.join(timeout=5.0)
            end_context(self.context)  # (its middleware participant deleted now, not at exit)

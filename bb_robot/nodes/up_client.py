"""The ROS side of ``bb-robot up``: a client node that watches a brought-up robot and runs the demo.

It subscribes to what the description node and the driver publish (``robot_description``,
``/tf``, ``joint_states``, the driver's ``~/arm_state``, ``/diagnostics``, the description node's
``~/tip_pose``), asks the driver's lifecycle state (``~/get_state``), arms it (``~/arm``) and sends
FollowJointTrajectory goals.  Rates are counted from the messages received here
(:class:`bb_robot.bringup.rates.RateCounter`).  :meth:`UpClient.snapshot` gives everything as
plain data, so the command line (which never imports rclpy) can show it.  The node spins on its
own thread.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

import rclpy
from rclpy.action import ActionClient
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from bb_robot.bringup.demo import DemoPoint
from bb_robot.bringup.rates import RateCounter
from bb_robot.bringup.status import NOTED_PAUSE, PAUSES_KEPT, GoalProgress, RobotView
from bb_robot.driver.servo.servo import STREAM_SILENCES
from bb_robot.nodes import description as description_node
from bb_robot.nodes.executor import end_context

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

    # ---------------------------------------------------------------- callbacks
    def _on_description(self, msg: Any) -> None:
        with self.lock:
            if self.view.description_at is None:
                self.view.description_at = time.monotonic()
            self.view.description_size = len(msg.data)

    def _on_joint_states(self, msg: Any) -> None:
        self.joint_state_rate.add(time.monotonic())
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
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.node.create_timer(STATE_PERIOD, self._poll)
        self._thread = threading.Thread(target=self._spin, name="bb_robot_up_client", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
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
        robot.action.send_goal_async(goal, feedback_callback=on_feedback).add_done_callback(on_goal)
        return progress

    def close(self) -> None:
        """Stop spinning and destroy the node and its context."""
        try:
            self.executor.shutdown(timeout_sec=2.0)
        finally:
            self.node.destroy_node()
            if self.context.ok():
                rclpy.shutdown(context=self.context)
            self._thread.join(timeout=5.0)
            end_context(self.context)  # (its middleware participant deleted now, not at exit)

"""The ROS side of ``bb-robot teleop --leader``: the follower as :class:`bb_robot.buses.leader.TeleopLoop` sees it.

A node of its own context that follows the follower's measured pose (``<ns>/joint_states``), its
driver's arming (``<ns>/driver/arm_state``) and its joint limits (``<ns>/robot_description``, the
description node's), and sends the leader's pose as position commands on the driver's
``<ns>/driver/joint_commands`` (``sensor_msgs/JointState`` by name): the driver's own streamed
command input, so its limits, arming, watchdog and collision guard apply.  ``~/arm`` is called on
request.  :mod:`bb_robot.cli.teleop_leader` owns the loop and the leader's bus, and never imports rclpy.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from rclpy.client import Client
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from bb_robot.errors import BbRobotError
from bb_robot.loading.load import load_text
from bb_robot.nodes.background import BackgroundNode
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS


class FollowerClient:
    """The follower's topics and its driver's ``~/arm`` (module docstring).

    Args:
        namespace: the follower's namespace (``""``: the root).
    """

    def __init__(self, namespace: str) -> None:
        prefix = "/" + namespace.strip("/") if namespace.strip("/") else ""
        self.command_topic = f"{prefix}/driver/joint_commands"
        self.states_topic = f"{prefix}/joint_states"
        self.arm_service = f"{prefix}/driver/arm"
        self.description_topic = f"{prefix}/robot_description"
        self._pose: dict[str, float] | None = None
        self.arm_state = ""
        #: The follower's joint limits (rad) from its robot_description, once it came.
        self.limits: dict[str, tuple[float, float]] | None = None
        #: The follower's commandable joints (moving, not mimic) from its robot_description, once it came.
        #: Not joint_states' names: the driver leaves a stale joint out of them (a bridge still starting).
        self.joints: list[str] | None = None
        self.description_error = ""
        self._message = JointState()
        # (What the callbacks fill is set before the node spins.) The command's own SIGINT / SIGTERM
        # handlers stop the stream (bb_robot.cli.teleop_leader).
        self._background = BackgroundNode("bb_robot_teleop_leader", "bb_robot-teleop-leader", signals=False)
        self._node = self._background.node
        self._publisher = self._node.create_publisher(JointState, self.command_topic, DEFAULT_QOS)
        self._node.create_subscription(JointState, self.states_topic, self._on_states, DEFAULT_QOS)
        self._node.create_subscription(String, f"{prefix}/driver/arm_state", self._on_arm_state, LATCHED_QOS)
        self._node.create_subscription(String, self.description_topic, self._on_description, LATCHED_QOS)
        self._arm_client: Client = self._node.create_client(Trigger, self.arm_service)

    def _on_states(self, msg: JointState) -> None:
        if len(msg.position) == len(msg.name):
            self._pose = dict(zip(msg.name, msg.position, strict=True))

    def _on_arm_state(self, msg: String) -> None:
        self.arm_state = msg.data

    def _on_description(self, msg: String) -> None:
        try:
            robot = load_text(msg.data, source=self.description_topic).robot
        except BbRobotError as error:
            self.description_error = f"{self.description_topic}: cannot read the follower's description: {error}"
            return
        self.limits = {
            name: (float(joint.limits.lower), float(joint.limits.upper))
            for name, joint in robot.joints.items()
            if joint.limits is not None and joint.limits.lower is not None and joint.limits.upper is not None
        }
        self.joints = [name for name, joint in robot.joints.items() if joint.dof > 0 and joint.mimic is None]

    # ------------------------------------------------------------------ the Follower protocol
    def pose(self) -> Mapping[str, float] | None:
        """The follower's latest measured joint positions (rad), or ``None`` before any."""
        return self._pose

    def armed(self) -> bool:
        """Whether the follower's driver says ``armed``."""
        return self.arm_state == "armed"

    def send(self, positions: Mapping[str, float]) -> None:
        """Publish one position command (rad, by joint) on the driver's ``~/joint_commands``."""
        message = self._message
        message.header.stamp = self._node.get_clock().now().to_msg()
        message.name = list(positions)
        message.position = [float(v) for v in positions.values()]
        self._publisher.publish(message)

    # ------------------------------------------------------------------ the rest
    def subscribers(self) -> int:
        """How many subscribers the command topic has (0: no driver is listening)."""
        return int(self._publisher.get_subscription_count())

    def arm(self, timeout: float = 30.0) -> tuple[bool, str]:
        """Call the driver's ``~/arm``.

        Args:
            timeout: seconds to wait for the service and for its answer.

        Returns:
            ``(success, message)``; a missing service or answer is a failure naming the service.
        """
        if not self._arm_client.wait_for_service(timeout_sec=timeout):
            return False, f"{self.arm_service}: no such service after {timeout:g} s (is the follower's driver up?)"
        future = self._arm_client.call_async(Trigger.Request())
        end = time.monotonic() + timeout
        while not future.done() and time.monotonic() < end:
            time.sleep(0.01)
        answer = future.result() if future.done() else None
        if answer is None:
            return False, f"{self.arm_service}: no answer within {timeout:g} s"
        return bool(answer.success), str(answer.message)

    def close(self) -> None:
        """Destroy the node and its context (never raises)."""
        self._background.close()

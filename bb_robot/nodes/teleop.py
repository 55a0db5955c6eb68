"""The ROS side of ``bb-robot teleop``: publishes the jog twist on the driver's ``~/twist_commands``
and follows the tool pose the description node publishes (``<ns>/description/tip_pose``) and its
tool frame (``<ns>/description/serial_manipulator``).  :mod:`bb_robot.cli.teleop` owns the
keyboard and the screen and never imports rclpy.
"""

from __future__ import annotations

import json

from geometry_msgs.msg import PoseStamped, TwistStamped
from std_msgs.msg import String

from bb_robot.nodes.background import BackgroundNode
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS


class TeleopClient:
    """A node of its own context that publishes twists and keeps the latest tool pose.

    Args:
        namespace: The robot's namespace (``""``: the root).
    """

    def __init__(self, namespace: str) -> None:
        prefix = "/" + namespace.strip("/") if namespace.strip("/") else ""
        self.twist_topic = f"{prefix}/driver/twist_commands"
        self.pose_topic = f"{prefix}/description/tip_pose"
        self.pose: tuple[str, tuple[float, ...], tuple[float, ...]] | None = None
        #: The description's tool frame (its tip link, with the frame prefix), once known.
        self.tool_frame = ""
        self._background = BackgroundNode("bb_robot_teleop", "bb_robot-teleop")
        self._node = self._background.node
        self._publisher = self._node.create_publisher(TwistStamped, self.twist_topic, DEFAULT_QOS)
        self._node.create_subscription(PoseStamped, self.pose_topic, self._on_pose, DEFAULT_QOS)
        serial = f"{prefix}/description/serial_manipulator"
        self._node.create_subscription(String, serial, self._on_serial, LATCHED_QOS)

    def _on_pose(self, msg: PoseStamped) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        self.pose = (msg.header.frame_id, (p.x, p.y, p.z), (q.x, q.y, q.z, q.w))

    def _on_serial(self, msg: String) -> None:
        try:
            self.tool_frame = str(json.loads(msg.data).get("tip_link", ""))
        except (ValueError, AttributeError):
            pass

    def subscribers(self) -> int:
        """How many subscribers the twist topic has (0: no driver is listening)."""
        return int(self._publisher.get_subscription_count())

    def publish(self, frame: str, linear: tuple[float, float, float], angular: tuple[float, float, float]) -> None:
        """Publish one twist.

        Args:
            frame: ``header.frame_id`` (``""``: the base link).
            linear: m/s.
            angular: rad/s.
        """
        message = TwistStamped()
        message.header.frame_id = frame
        message.header.stamp = self._node.get_clock().now().to_msg()
        message.twist.linear.x, message.twist.linear.y, message.twist.linear.z = linear
        message.twist.angular.x, message.twist.angular.y, message.twist.angular.z = angular
        self._publisher.publish(message)

    def close(self) -> None:
        """Destroy the node and its context (never raises)."""
        self._background.close()

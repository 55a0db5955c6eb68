#!/usr/bin/env python3
"""The ceiling of benchmarks/bench_description.py: JointState in, a precomputed TFMessage out.

It answers each ``sensor_msgs/JointState`` on ``joint_states`` with one ``tf2_msgs/TFMessage`` on
``/tf`` holding the same frames as the description node publishes, built once at start: per
message it only copies the JointState's stamp into each transform (the benchmark matches
answers to requests by stamp) and publishes.  No kinematics, no merging, no validation: what is
left is the cost of rclpy and the middleware, the most any node in Python can do.

    python benchmarks/tf_ceiling_node.py --frames base:link1 link1:link2 ... [--bytes] [--ros-args ...]

``--bytes`` publishes a precomputed serialisation instead of the message object (stamp bytes
patched in place): the same answer without rclpy's per-message conversion of the message.  The
same QoS as the description node: ``joint_states`` and ``/tf`` reliable, volatile, depth 100.
"""

from __future__ import annotations

import argparse
import sys

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.executors import ExternalShutdownException
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

QOS = QoSProfile(
    depth=100,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)
# Placeholder stamp of the precomputed bytes (found once; see --bytes).
_SEC, _NANOSEC = 0x5EC0_1234, 0x3B00_5678


def _message(frames: list[tuple[str, str]]) -> TFMessage:
    message = TFMessage()
    for i, (parent, child) in enumerate(frames):
        t = TransformStamped()
        t.header.frame_id, t.child_frame_id = parent, child
        t.header.stamp.sec, t.header.stamp.nanosec = _SEC, _NANOSEC
        t.transform.translation.x = 0.1 * (i + 1)
        t.transform.rotation.w = 1.0
        message.transforms.append(t)
    return message


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ros_args = argv[argv.index("--ros-args") :] if "--ros-args" in argv else []
    own = argv[: len(argv) - len(ros_args)]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", nargs="+", required=True, help="parent:child pairs, in order")
    parser.add_argument("--bytes", action="store_true", help="publish precomputed bytes, not the message object")
    options = parser.parse_args(own)
    frames = [tuple(pair.split(":", 1)) for pair in options.frames]

    rclpy.init(args=["ceiling", *ros_args])
    node = rclpy.create_node("tf_ceiling")
    publisher = node.create_publisher(TFMessage, "/tf", QOS)
    message = _message(frames)  # type: ignore[arg-type]
    stamps = [t.header for t in message.transforms]

    if options.bytes:
        template = bytearray(serialize_message(message))
        sec_bytes, nanosec_bytes = _SEC.to_bytes(4, "little"), _NANOSEC.to_bytes(4, "little")
        offsets = []
        start = 0
        while (found := template.find(sec_bytes, start)) >= 0:
            if template[found + 4 : found + 8] == nanosec_bytes:
                offsets.append(found)
            start = found + 1
        assert len(offsets) == len(frames), "stamp placeholders not found once per transform"

        def answer(state: JointState) -> None:
            stamp = state.header.stamp.sec.to_bytes(4, "little", signed=True) + state.header.stamp.nanosec.to_bytes(
                4, "little"
            )
            for offset in offsets:
                template[offset : offset + 8] = stamp
            publisher.publish(bytes(template))

    else:

        def answer(state: JointState) -> None:
            stamp = state.header.stamp
            for header in stamps:
                header.stamp = stamp
            publisher.publish(message)

    node.create_subscription(JointState, "joint_states", answer, QOS)
    node.get_logger().info(f"ceiling ready: {len(frames)} transforms, {'bytes' if options.bytes else 'message'}")
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A program for the serve() tests: two nodes on one executor, one of whose callbacks always raise.

    python -m helpers.faulty_nodes [--single] --ros-args -r __ns:=/ns

``faulty`` raises from a timer (20 Hz) and from its subscription to ``poke``; ``steady`` publishes a
count on ``count`` (20 Hz).  ``--single`` serves them on a single-threaded executor (as the
description and view nodes run), else on the default one (the driver's and the fleet's).  The
exit status is serve()'s.
"""

from __future__ import annotations

import sys

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import UInt32

from bb_robot.nodes.executor import AddNode, make_executor, serve


class Faulty(Node):
    def __init__(self) -> None:
        super().__init__("faulty")
        self.create_timer(0.05, self.on_timer)
        self.create_subscription(UInt32, "poke", self.on_poke, 10)

    def on_timer(self) -> None:
        raise ValueError("the faulty timer fails, as it always does")

    def on_poke(self, message: UInt32) -> None:
        raise RuntimeError(f"poked with {message.data}")


class Steady(Node):
    def __init__(self) -> None:
        super().__init__("steady")
        self.publisher = self.create_publisher(UInt32, "count", 10)
        self.count = 0
        self.create_timer(0.05, self.tick)

    def tick(self) -> None:
        self.count += 1
        self.publisher.publish(UInt32(data=self.count))


def main() -> int:
    arguments = sys.argv[1:]
    single = "--single" in arguments
    rclpy.init(args=sys.argv)

    def start(add: AddNode) -> None:
        add(Faulty(), None)
        add(Steady(), None)

    return serve(start, SingleThreadedExecutor if single else make_executor)


if __name__ == "__main__":
    sys.exit(main())

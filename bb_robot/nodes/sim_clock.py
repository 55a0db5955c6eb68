"""``/clock`` for a driver backend that simulates in its own time (``backend: mujoco`` in lockstep).

The backend says its time (:class:`bb_robot.driver.sim_clock.SimulationClock`, no ROS); this
module publishes it as ``rosgraph_msgs/Clock`` on ``/clock`` (best effort, depth 1, as rclpy's
time source subscribes) from a timer on the steady clock at the driver's rate (at most 1 kHz),
so that nodes with ``use_sim_time`` follow the simulation whether it runs faster or slower than
real time.  A stamp that has not changed since the last one is not published again.
"""

from __future__ import annotations

from typing import Any

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMessage

from bb_robot.driver.sim_clock import SimulationClock

#: Where simulated time is published (absolute: one clock per ROS graph).
CLOCK_TOPIC = "/clock"
CLOCK_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
MAX_RATE = 1000.0


def start_clock(node: Node, source: SimulationClock, rate: float) -> list[tuple[str, Any]]:
    """Publish ``source``'s time on ``/clock`` at ``rate`` Hz (capped at 1 kHz).

    Args:
        node: The node that publishes.
        source: The simulated time.
        rate: Publications per second of the steady clock.

    Returns:
        The entities created, as ``(kind, entity)`` pairs (``"publisher"``, ``"timer"``) for the
        node to destroy.
    """
    publisher = node.create_publisher(ClockMessage, CLOCK_TOPIC, CLOCK_QOS)
    message = ClockMessage()
    last = [-1]

    def publish() -> None:
        now = source.sim_time_ns()
        if now == last[0]:
            return
        last[0] = now
        message.clock.sec, message.clock.nanosec = divmod(now, 1_000_000_000)
        publisher.publish(message)

    period = 1.0 / min(max(rate, 1.0), MAX_RATE)
    timer = node.create_timer(period, publish, clock=Clock(clock_type=ClockType.STEADY_TIME))
    return [("publisher", publisher), ("timer", timer)]

"""A simulated servo bridge for the driver's ``actuators`` backend, and the template for a real one.

    ros2 run bb_robot servo_bridge --ros-args -r __ns:=/arm        # next to the driver in /arm
    python -m bb_robot.examples.servo_bridge --ros-args -r __ns:=/arm

It speaks the contract of ``docs/nodes/actuators.md`` and nothing else, so a bridge for real
servos has the same shape: replace :class:`SimulatedServo` by the device's driver.

1. Read the latched index ``actuators`` (``std_msgs/String``, JSON) in the driver's namespace:
   every actuator's name, command and state topics, transmission and limits in actuator space.
2. Subscribe to each actuator's command topic (``sensor_msgs/JointState``, one entry): a
   position (with a feed-forward velocity), a velocity, or an effort, in SI actuator units.
3. At ``rate``, move each servo and publish its feedback on ``<command topic>/state``
   (``sensor_msgs/JointState``, one entry: position and velocity).

The simulated servo works in encoder counts, as hardware does: its position is an integer count
(``counts_per_revolution`` per turn for actuators of revolute and continuous joints,
``counts_per_metre`` for prismatic ones), its travel is limited to the actuator's range from the
index, and it moves towards a position target at the actuator's velocity limit times
``speed_scale`` (at once where the index gives no velocity limit).  Velocity commands are
integrated within the same limits and stop at the end of the index's command range
(``command_min`` / ``command_max``), however long the command stands; effort commands are not
supported (the servo holds, with a warning).  Counts are this bridge's business: the topics carry SI values only.

**Command silence** (the contract's rule every bridge must follow): a servo that hears no command
for ``command_timeout`` seconds (0.25 by default) stops the motion by itself: a velocity goes to
zero, a position target becomes the position the servo is at.  The driver sends every cycle, so
silence means it died, froze or lost the network; without this rule a servo would keep turning at
the last velocity.  The servo follows commands again as soon as one arrives.

A gap between two simulation steps longer than ``max_gap`` (the process was stopped, e.g. with
SIGSTOP) is not integrated: the simulated servos were stopped with it, so they do not jump.

``silent_actuators`` (a parameter, changeable at run time) names actuators whose feedback is not
published, as if their cable were cut: for tests and demonstrations of the driver's
``feedback_timeout``.
"""

from __future__ import annotations

import functools
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

NODE_NAME = "servo_bridge"


@dataclass
class SimulatedServo:
    """One servo: an integer encoder position within ``[min_count, max_count]``, driven by the
    latest command (ROS-free, so tests can drive it directly)."""

    counts_per_unit: float
    min_count: int | None
    max_count: int | None
    max_speed: float | None  # actuator units per second; None: reaches a position target at once
    count: int = 0
    #: The command range (the index's ``command_min`` / ``command_max``) a velocity stops at.
    command_min: float | None = None
    command_max: float | None = None
    velocity: float = 0.0
    mode: str = "position"
    target: float = math.nan
    target_velocity: float = 0.0
    unsupported: set[str] = field(default_factory=set)
    #: When the last command arrived (seconds on the bridge's monotonic clock; None: never).
    last_command: float | None = None
    #: Whether the motion was stopped for command silence (until the next command).
    silenced: bool = False

    @property
    def position(self) -> float:
        """The measured position, in actuator units (one count of resolution)."""
        return self.count / self.counts_per_unit

    def command(
        self, position: Sequence[float], velocity: Sequence[float], effort: Sequence[float], now: float | None = None
    ) -> str | None:
        """Take a command message's arrays (``now``: when it arrived); returns a complaint for one it cannot follow."""
        self.last_command, self.silenced = (now if now is not None else time.monotonic()), False
        if len(position) == 1:
            self.mode, self.target = "position", float(position[0])
        elif len(velocity) == 1:
            self.mode, self.target_velocity = "velocity", float(velocity[0])
        elif len(effort) == 1:
            self.mode, self.target = "position", self.position
            return "effort commands are not supported by the simulated servo: holding"
        else:
            return "a command needs one position, velocity or effort"
        return None

    def stay_where(self, other: SimulatedServo) -> None:
        """Take the position of ``other`` (the same servo under an earlier index), within this one's
        travel, and hold it: a new index (new limits, a restarted driver) does not move a servo."""
        count = other.count
        if self.min_count is not None:
            count = max(count, self.min_count)
        if self.max_count is not None:
            count = min(count, self.max_count)
        self.count, self.mode, self.target, self.velocity = count, "position", count / self.counts_per_unit, 0.0

    def check_silence(self, now: float, timeout: float) -> bool:
        """Stop the motion when no command came for ``timeout`` s (0: never); ``True`` when it just did.

        A velocity becomes zero; a position target becomes the current position.
        """
        if timeout <= 0 or self.silenced or self.last_command is None or now - self.last_command < timeout:
            return False
        self.silenced = True
        self.mode, self.target, self.target_velocity = "position", self.position, 0.0
        return True

    def step(self, dt: float) -> None:
        """Move for ``dt`` seconds."""
        start = self.position
        if self.mode == "position":
            if math.isnan(self.target):
                self.velocity = 0.0
                return
            goal = self.target
            if self.max_speed is not None:
                reach = self.max_speed * dt
                goal = min(max(goal, start - reach), start + reach)
        else:
            speed = self.target_velocity
            if self.max_speed is not None:
                speed = min(max(speed, -self.max_speed), self.max_speed)
            goal = start + speed * dt
            # Never past the command range, however long the command stands (not pulled in if already out).
            if self.command_max is not None and speed > 0:
                goal = min(goal, max(self.command_max, start))
            if self.command_min is not None and speed < 0:
                goal = max(goal, min(self.command_min, start))
        count = round(goal * self.counts_per_unit)
        if self.min_count is not None:
            count = max(count, self.min_count)
        if self.max_count is not None:
            count = min(count, self.max_count)
        self.count = count
        self.velocity = (self.position - start) / dt if dt > 0 else 0.0


def servo_for(
    entry: dict[str, Any], counts_per_revolution: float, counts_per_metre: float, speed_scale: float
) -> SimulatedServo:
    """A simulated servo for an actuator of the index, starting where its joint is at 0 (or at the
    nearest end of its range)."""
    rotary = entry.get("joint_type") in ("revolute", "continuous")
    per_unit = counts_per_revolution / (2 * math.pi) if rotary else counts_per_metre
    limits = entry.get("limits") or {}
    low, high = limits.get("position_min"), limits.get("position_max")
    min_count = math.ceil(low * per_unit) if low is not None else None
    max_count = math.floor(high * per_unit) if high is not None else None
    speed = limits.get("velocity")
    transmission = entry["transmission"]
    start = (0.0 - transmission["offset"]) * transmission["signed_reduction"]
    count = round(start * per_unit)
    if min_count is not None:
        count = max(count, min_count)
    if max_count is not None:
        count = min(count, max_count)
    servo = SimulatedServo(
        per_unit,
        min_count,
        max_count,
        speed * speed_scale if speed is not None else None,
        count,
        command_min=limits.get("command_min"),
        command_max=limits.get("command_max"),
    )
    servo.target = servo.position
    return servo


def main(args: Sequence[str] | None = None) -> int:
    """Run the bridge until SIGINT or SIGTERM."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

    from bb_robot.nodes.executor import end_context

    rclpy.init(args=list(args) if args is not None else None)
    node: Any = None
    executor = SingleThreadedExecutor()
    try:
        node = _make_node()
        executor.add_node(node)
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.2)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        executor.shutdown()
        end_context()
    return 0


def _make_node() -> Any:
    """The bridge node (a function, so that importing this module needs no ROS)."""
    from rcl_interfaces.msg import ParameterDescriptor
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from bb_robot.ros.qos import LATCHED_QOS, LATEST_BEST_EFFORT_QOS

    # The index: reliable, transient local (latched), depth 1.
    latched = LATCHED_QOS
    # Commands: the driver publishes reliably; best effort here takes them as well, the latest counts.
    # Feedback: best effort, the latest value only (the driver subscribes best effort): depth 1, volatile.
    latest = LATEST_BEST_EFFORT_QOS

    class ServoBridge(Node):
        def __init__(self) -> None:
            super().__init__(NODE_NAME)
            describe = {
                "index_topic": "The driver's latched actuator index (relative names follow the namespace).",
                "rate": "Feedback messages per second and actuator (and the simulation's step).",
                "counts_per_revolution": "Encoder counts per turn of the actuators of revolute and continuous joints.",
                "counts_per_metre": "Encoder counts per metre of the actuators of prismatic joints.",
                "speed_scale": "Fraction of each actuator's velocity limit (from the index) the servo moves at.",
                "silent_actuators": "Actuators whose feedback is not published (a cut cable), changeable live.",
                "command_timeout": "Command silence (s) after which a servo stops by itself: a velocity goes to 0, a "
                "position is held where the servo is (docs/nodes/actuators.md; 0: never, not for real servos).",
                "max_gap": "A longer gap (s) between two simulation steps (the process was stopped) is not integrated.",
            }
            defaults: dict[str, Any] = {
                "index_topic": "actuators",
                "rate": 100.0,
                "counts_per_revolution": 4096.0,
                "counts_per_metre": 100000.0,
                "speed_scale": 1.0,
                "silent_actuators": [],
                "command_timeout": 0.25,
                "max_gap": 0.1,
            }
            for name, default in defaults.items():
                if name == "silent_actuators":  # (an empty list would be declared as a byte array)
                    default = Parameter.Type.STRING_ARRAY
                self.declare_parameter(name, default, ParameterDescriptor(description=describe[name]))
            self.servos: dict[str, SimulatedServo] = {}
            self.entities: list[Any] = []
            self.publishers_: dict[str, Any] = {}
            self.warned: set[tuple[str, str]] = set()
            self.index_sub = self.create_subscription(
                String, str(self.get_parameter("index_topic").value), self.on_index, latched
            )
            self.get_logger().info(f"waiting for the actuator index on '{self.index_sub.topic_name}'")
            self.last = time.monotonic()
            self.timer = self.create_timer(1.0 / float(self.get_parameter("rate").value), self.tick)

        def on_index(self, msg: Any) -> None:
            index = json.loads(msg.data)
            for kind, entity in self.entities:
                (self.destroy_subscription if kind == "sub" else self.destroy_publisher)(entity)
            previous = self.servos
            self.entities, self.servos, self.publishers_ = [], {}, {}
            get = self.get_parameter
            for entry in index["actuators"]:
                name = entry["name"]
                servo = servo_for(
                    entry,
                    float(get("counts_per_revolution").value),
                    float(get("counts_per_metre").value),
                    float(get("speed_scale").value),
                )
                if name in previous:  # a new index (new limits, a restarted driver): the servo stays where it is
                    servo.stay_where(previous[name])
                self.servos[name] = servo
                sub = self.create_subscription(
                    JointState, entry["command_topic"], functools.partial(self.on_command, name), latest
                )
                pub = self.create_publisher(JointState, entry["state_topic"], latest)
                self.entities += [("sub", sub), ("pub", pub)]
                self.publishers_[name] = pub
            self.get_logger().info(f"serving {len(self.servos)} actuator(s) of '{index['robot']}'")

        def on_command(self, name: str, msg: Any) -> None:
            servo = self.servos.get(name)
            if servo is None:
                return
            complaint = servo.command(msg.position, msg.velocity, msg.effort, time.monotonic())
            if complaint is not None and (name, complaint) not in self.warned:
                self.warned.add((name, complaint))
                self.get_logger().warning(f"{name}: {complaint}")

        def tick(self) -> None:
            if not self.context.ok():
                return  # shutting down
            now = time.monotonic()
            dt, self.last = now - self.last, now
            if dt > float(self.get_parameter("max_gap").value):
                dt = 0.0  # the process was stopped: so were the simulated servos
            timeout = float(self.get_parameter("command_timeout").value)
            # Declared by type only (no default list): its value is None until someone sets it.
            silent = set(self.get_parameter_or("silent_actuators").value or [])
            stamp = self.get_clock().now().to_msg()
            for name, servo in self.servos.items():
                if servo.check_silence(now, timeout):
                    self.get_logger().warning(
                        f"{name}: no command for {timeout:g} s (command_timeout): stopped, holding at "
                        f"{servo.position:.4f}"
                    )
                servo.step(dt)
                if name in silent:
                    continue
                feedback = JointState(name=[name], position=[servo.position], velocity=[servo.velocity])
                feedback.header.stamp = stamp
                try:
                    self.publishers_[name].publish(feedback)
                except Exception:
                    if self.context.ok():
                        raise
                    return  # ROS shut down meanwhile

    return ServoBridge()


if __name__ == "__main__":
    sys.exit(main())

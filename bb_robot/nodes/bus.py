"""``bb-robot bus`` / ``ros2 run bb_robot bus``: servos on a real bus behind the actuators backend's topics.

The node serves the actuator-path topics of docs/nodes/actuators.md for the servos of one serial
bus (Feetech or Dynamixel; a USB adapter or the bus emulator's pty): it takes the driver's latched
actuator index, subscribes to each configured joint's command topic and publishes its feedback,
from a loop thread of its own at ``rate`` (one sync read and one sync write a cycle).  Its
parameters are a ``/**/bus`` section of the robot's parameter file (``config/so101.yaml``).
Everything it decides (start-up checks, clamps, the step cap, silence, hardware errors, torque off)
is :mod:`bb_robot.buses.bridge`, without ROS; this module is the ROS wiring, the loop, the port's
loss and return, and ``/diagnostics``.  docs/buses.md ("The bridge") describes it all.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import IntegerRange
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from bb_robot.buses.bridge import Bridge, BridgeError
from bb_robot.buses.bridge_setup import BridgeSetupError, CycleStats, latency_timer_warning, servo_specs
from bb_robot.buses.dynamixel import DYNAMIXEL
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.pacing import Deadlines
from bb_robot.buses.transport import Bus, BusError
from bb_robot.common.parameters import ParameterSpec
from bb_robot.nodes.bus_commands import CommandTopics
from bb_robot.nodes.executor import serve
from bb_robot.nodes.joint_state_wire import FeedbackMessage, FeedbackWire, matches_rclpy
from bb_robot.ros.parameters import declared_value, descriptor
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS, LATEST_BEST_EFFORT_QOS

NODE_NAME = "bus"
S = "start"
PARAMETERS = (
    ParameterSpec(
        "port",
        "",
        "The serial port (/dev/ttyACM0, /dev/serial/by-id/...) or the bus emulator's pty; "
        "bb-robot up --bus-port overrides it.",
        when=S,
    ),  # fmt: skip
    ParameterSpec(
        "baud",
        1_000_000,
        "The bus's baud rate (bit/s): the servos' own (the SO-101's: 1000000).",
        "integer",
        when=S,
        range=(9600, 4_500_000),
    ),  # fmt: skip
    ParameterSpec("protocol", "feetech", "The servos' protocol.", when=S, choices=("feetech", "dynamixel")),
    ParameterSpec(
        "joints",
        (),
        "The joints with a servo on this bus (each needs servos.<joint>.id and .model).",
        "string_array",
        when=S,
    ),  # fmt: skip
    ParameterSpec(
        "calibration",
        "",
        "The arm's LeRobot calibration JSON (a path or a name in bb_robot's config/); "
        "empty: each servo's whole turn, mid at 2048.",
        when=S,
    ),  # fmt: skip
    ParameterSpec(
        "rate",
        200.0,
        "Cycles per second (one sync read and one sync write each); 0: as fast as the bus allows.",
        "double",
        when=S,
        range=(0.0, 2000.0),
    ),  # fmt: skip
    ParameterSpec(
        "latency",
        0.004,
        "Seconds allowed per transaction for the USB adapter, on top of the wire time "
        "(about 1 ms with its latency timer at 1).",
        "double",
        when=S,
        range=(0.0001, 0.1),
    ),  # fmt: skip
    ParameterSpec(
        "retries", 2, "How many times a failed read is asked again within a cycle.", "integer", when=S, range=(0, 10)
    ),  # fmt: skip
    ParameterSpec(
        "silence_timeout",
        0.25,
        "Seconds without a command after which silence_action applies (docs/nodes/actuators.md); 0: never.",
        "double",
        when=S,
        range=(0.0, 10.0),
    ),  # fmt: skip
    ParameterSpec(
        "silence_action",
        "hold",
        "On command silence: hold where each servo is, or turn torque off (an arm under gravity falls).",
        when=S,
        choices=("hold", "torque_off"),
    ),  # fmt: skip
    ParameterSpec(
        "poll_period",
        0.5,
        "Seconds between two reads of temperature, voltage and error bits.",
        "double",
        when=S,
        range=(0.05, 60.0),
    ),  # fmt: skip
    ParameterSpec(
        "diagnostics_period", 1.0, "Seconds between two /diagnostics messages.", "double", when=S, range=(0.1, 60.0)
    ),  # fmt: skip
    ParameterSpec(
        "index_topic", "actuators", "The driver's latched actuator index (relative: in the namespace).", when=S
    ),  # fmt: skip
    ParameterSpec(
        "arm_state_topic",
        "driver/arm_state",
        "The driver's ~/arm_state: after the port came back, commands are followed again only once it says armed anew.",
        when=S,
    ),  # fmt: skip
    ParameterSpec(
        "reopen_period",
        0.5,
        "Seconds between two attempts to open a port that vanished.",
        "double",
        when=S,
        range=(0.05, 60.0),
    ),  # fmt: skip
    ParameterSpec(
        "torque_off_attempts", 5, "Attempts per servo to turn torque off at exit.", "integer", when=S, range=(1, 50)
    ),  # fmt: skip
)
SERVO_PARAMETERS = (
    ParameterSpec("id", -1, "The servo's bus ID.", "integer", when=S, range=(-1, 252)),
    ParameterSpec(
        "model", "", "The servo's model: sts3215, xl330-m288, xl330-m077, xl430-w250, xm430-w350, xm430-w210.", when=S
    ),  # fmt: skip
    ParameterSpec(
        "direction",
        1,
        "1, or -1 to turn the joint the other way than the calibration says.",
        "integer",
        when=S,
        range=(-1, 1),
    ),  # fmt: skip
    ParameterSpec("calibration", "", "This servo's calibration file (empty: the bus's calibration).", when=S),
    ParameterSpec("motor", "", "Its name in the calibration file (empty: the joint's).", when=S),
    ParameterSpec(
        "speed_limit",
        0.0,
        "The fastest a goal may move (rad/s at the joint); 0: the model's safe default.",
        "double",
        when=S,
        range=(0.0, 20.0),
    ),  # fmt: skip
    ParameterSpec(
        "mapping",
        "angle",
        "angle: LeRobot's mid-range convention; percent: LeRobot's 0-100 gripper onto the URDF joint's limits.",
        when=S,
        choices=("angle", "percent"),
    ),  # fmt: skip
)


class BusNode(Node):
    """The bridge of one bus (module docstring)."""

    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self.values = {spec.name: self._declare(spec, spec.name) for spec in PARAMETERS}
        joints = [str(j) for j in self.values["joints"] or ()]
        servos = {
            joint: {spec.name: self._declare(spec, f"servos.{joint}.{spec.name}") for spec in SERVO_PARAMETERS}
            for joint in joints
        }
        self.port = str(self.values["port"])
        if not self.port:
            raise BridgeSetupError("no port: set the bus section's port, or bb-robot up --bus-port PATH")
        self.specs = servo_specs(str(self.values["protocol"]), joints, servos, str(self.values["calibration"]))
        self.codec = FEETECH if self.values["protocol"] == "feetech" else DYNAMIXEL
        self.stats = CycleStats()
        self.lock = threading.Lock()
        self.bridge = Bridge(
            self._open(),
            self.specs,
            silence_timeout=float(self.values["silence_timeout"]),
            silence_action=str(self.values["silence_action"]),
            max_step_time=2.0 / float(self.values["rate"]) if self.values["rate"] else 0.02,
        )
        warning = latency_timer_warning(self.port)
        if warning:
            self.get_logger().warning(warning)
        for text in self.bridge.start():
            self.get_logger().warning(text)
        found = ", ".join(f"{s.id} {s.joint} ({s.model.name})" for s in self.specs)
        self.get_logger().info(
            f"{self.port} at {self.values['baud']} baud: servos {found}; torque on at each first command"
        )
        self.lost: str | None = None
        self.arm_state = ""
        self.armed_count = 0
        self.armed_at_loss = 0
        self.entries: dict[str, tuple[Any, FeedbackWire | FeedbackMessage]] = {}
        #: Feedback as bytes where they match this rclpy's serialiser (joint_state_wire), else message objects.
        self.feedback_bytes = matches_rclpy("joint")
        self.commands = CommandTopics(self, self.on_command)
        self.index_sub = self.create_subscription(String, str(self.values["index_topic"]), self.on_index, LATCHED_QOS)
        self.arm_sub = self.create_subscription(String, str(self.values["arm_state_topic"]), self.on_arm, LATCHED_QOS)
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", DEFAULT_QOS)
        self.create_timer(float(self.values["diagnostics_period"]), self.publish_diagnostics)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="bus-loop", daemon=True)
        self.thread.start()

    def _declare(self, spec: ParameterSpec, name: str) -> Any:
        described = descriptor(spec, name)
        if spec.type == "integer" and spec.range is not None:
            described.integer_range = [IntegerRange(from_value=int(spec.range[0]), to_value=int(spec.range[1]), step=1)]
        value: Any = self.declare_parameter(name, declared_value(spec), described).value
        return value if value is not None else ([] if spec.type == "string_array" else spec.default)

    def _open(self) -> Bus:
        return Bus.open(self.port, self.codec, baud=int(self.values["baud"]), latency=float(self.values["latency"]),
                        retries=int(self.values["retries"]))  # fmt: skip

    # ------------------------------------------------------------------ topics
    def on_index(self, msg: String) -> None:
        import json

        index = json.loads(msg.data)
        for publisher, _ in self.entries.values():
            self.destroy_publisher(publisher)
        entries, topics = {}, {}
        configured = {s.joint for s in self.specs}
        for entry in index.get("actuators", []):
            joint = entry.get("joint")
            if joint not in configured:
                continue
            limits = entry.get("limits") or {}
            with self.lock:
                self.bridge.set_limits(joint, limits.get("position_min"), limits.get("position_max"))
            topics[joint] = entry["command_topic"]
            publisher = self.create_publisher(JointState, entry["state_topic"], LATEST_BEST_EFFORT_QOS)
            wire = FeedbackWire if self.feedback_bytes else FeedbackMessage
            entries[joint] = (publisher, wire(entry["name"]))
        with self.lock:
            self.commands.replace(topics)
        self.entries = entries
        absent = sorted(configured - set(entries))
        self.get_logger().info(
            f"serving {len(entries)} actuator(s) of '{index.get('robot')}'"
            + (f"; the index has no actuator for joint(s) {', '.join(absent)}" if absent else "")
        )

    def on_command(self, joint: str, positions: Sequence[float]) -> None:
        if len(positions) == 1:
            self.bridge.command(joint, float(positions[0]))
        elif self.entries.get(joint) is not None:
            self.get_logger().warning(
                f"{joint}: only position commands are followed (actuators.modes: [position]); holding",
                throttle_duration_sec=5.0,
            )

    def on_arm(self, msg: String) -> None:
        if msg.data == "armed" and self.arm_state != "armed":
            self.armed_count += 1
        self.arm_state = msg.data

    # ------------------------------------------------------------------ the loop
    def loop(self) -> None:
        """The bridge's cycles until :meth:`shutdown` (the loop thread).

        SIGINT and SIGTERM shut rclpy's context down at once, before :meth:`shutdown` stops this
        loop: a take or publish then fails on the invalid context, and the loop ends quietly
        (``shutdown`` still turns the torque off); any other failure is raised.
        """
        try:
            self._cycles()
        except Exception:
            if self.context.ok():
                raise

    def _cycles(self) -> None:
        rate = float(self.values["rate"])
        period = 1.0 / rate if rate > 0 else 0.0
        poll_period = float(self.values["poll_period"])
        deadlines = Deadlines(period)
        next_poll = time.monotonic()
        while not self.stop.is_set():
            deadlines.wait()
            start = time.monotonic()
            if self.lost is not None:
                self.reopen()
                continue
            try:
                with self.lock:
                    if self.bridge.gated and self.armed_count > self.armed_at_loss:
                        self.bridge.gated = False
                        self.get_logger().info("the driver is armed again: following commands")
                    feedback = self.bridge.cycle(self.commands.take)
                    if start >= next_poll:
                        next_poll = start + poll_period
                        self.bridge.poll()
            except BridgeError as error:
                if error.kind == "port":
                    self.on_lost(str(error))
                else:
                    self.get_logger().error(str(error), throttle_duration_sec=1.0)
                continue
            sec, nanosec = divmod(self.get_clock().now().nanoseconds, 1_000_000_000)
            for item in feedback:
                entry = self.entries.get(item.joint)
                if entry is not None:
                    publisher, wire = entry
                    publisher.publish(wire.write(sec, nanosec, item.position, item.velocity))
            self.log_events()
            self.stats.record(start, time.monotonic() - start)

    def log_events(self) -> None:
        """The bridge's messages, to the log (one call site per severity: rclpy's rule)."""
        for level, text in self.bridge.events.take():
            if level == "error":
                self.get_logger().error(text)
            else:
                self.get_logger().warning(text)

    def on_lost(self, error: str) -> None:
        self.lost = error
        self.armed_at_loss = self.armed_count
        try:
            self.bridge.bus.close()
        except OSError:
            pass
        self.get_logger().error(
            f"{self.port}: the port vanished ({error}): feedback stopped, so the driver's staleness rules take over "
            "(stale_action); nothing can be said to the servos now (they keep their torque and last goal). "
            "Waiting for the port to come back"
        )

    def reopen(self) -> None:
        time.sleep(float(self.values["reopen_period"]))
        try:
            bus = self._open()
        except BusError:
            return
        try:
            with self.lock:
                self.bridge.bus = bus
                warnings = self.bridge.start()
                self.bridge.gated = True
                self.commands.discard()  # what came while the port was away is not followed later
                # Only an arming heard from now on counts: the driver's "armed" of just before the
                # loss can reach this node after it (CI: armed 8 ms before the loss, heard after it,
                # and taken for a new arming once the port was back, while the driver was disarmed).
                self.armed_at_loss = self.armed_count
        except BridgeError as error:
            bus.close()
            self.get_logger().error(f"{self.port} is back, but: {error}", throttle_duration_sec=5.0)
            return
        for text in warnings:
            self.get_logger().warning(text)
        self.lost = None
        self.get_logger().warning(
            f"{self.port} is back and every servo answers: feedback resumes; commands are followed again once the "
            "driver is armed anew (call its ~/reset if it is in error, then ~/arm)"
        )

    # ------------------------------------------------------------------ diagnostics, end
    def publish_diagnostics(self) -> None:
        stats, bus = self.stats, self.bridge.bus.stats
        failed = [s for s in self.bridge.servos.values() if s.failed]
        rate = float(self.values["rate"])
        if self.lost is not None:
            level, message = DiagnosticStatus.ERROR, f"port lost: {self.lost}"
        elif failed:
            level = DiagnosticStatus.ERROR
            message = "hardware error: " + "; ".join(
                f"servo {s.spec.id} ({s.spec.joint}) {', '.join(self.bridge.describe(s))}" for s in failed
            )
        elif self.bridge.gated:
            level, message = DiagnosticStatus.WARN, "port back: waiting for the driver to be armed again"
        elif rate and stats.rate() < 0.9 * rate:
            level, message = DiagnosticStatus.WARN, f"achieved {stats.rate():.0f} Hz of {rate:g}"
        else:
            level, message = DiagnosticStatus.OK, f"{stats.rate():.0f} Hz, p99 {stats.p99() * 1000:.2f} ms"
        values = {
            "port": self.port,
            "rate_hz": f"{stats.rate():.1f}",
            "p99_cycle_ms": f"{stats.p99() * 1000:.3f}",
            "cycles": str(stats.cycles),
            **{
                name: str(getattr(bus, name))
                for name in (
                    "transactions",
                    "retries",
                    "timeouts",
                    "corrupt",
                    "partial",
                    "failures",
                    "stray_bytes",
                    "last_error",
                )
            },  # fmt: skip
        }
        statuses = [self._status(f"bus: {self.port}", level, message, values)]
        for state in self.bridge.servos.values():
            servo = {
                "id": str(state.spec.id),
                "temperature_c": _number(state.temperature),
                "voltage_v": _number(state.voltage),
                "torque": str(state.torque).lower(),
                "errors": ", ".join(self.bridge.describe(state)) or "none",
            }
            servo_level = DiagnosticStatus.ERROR if state.failed else DiagnosticStatus.OK
            name = f"bus: {self.port}: {state.spec.joint}"
            statuses.append(self._status(name, servo_level, servo["errors"], servo))
        self.diagnostics.publish(DiagnosticArray(status=statuses, header=_header(self)))

    def _status(self, name: str, level: bytes, message: str, values: dict[str, str]) -> DiagnosticStatus:
        return DiagnosticStatus(
            level=level, name=name, message=message, hardware_id=self.port,
            values=[KeyValue(key=k, value=v) for k, v in values.items()],
        )  # fmt: skip

    def shutdown(self) -> None:
        """Stop the loop and turn every servo's torque off (retried)."""
        self.stop.set()
        self.thread.join(timeout=5.0)
        self.commands.destroy()
        if self.lost is not None:
            print(f"bus: {self.port} is lost: torque cannot be turned off (the servos keep their last goal)",
                  file=sys.stderr, flush=True)  # fmt: skip
            return
        with self.lock:
            left = self.bridge.torque_off(int(self.values["torque_off_attempts"]))
            self.bridge.bus.close()
        if left:
            names = ", ".join(f"{s.spec.id} ({s.spec.joint})" for s in left)
            print(f"bus: {self.port}: torque could not be turned off on servo(s) {names}: cut their power",
                  file=sys.stderr, flush=True)  # fmt: skip
        else:
            print(f"bus: {self.port}: torque off on every servo", file=sys.stderr, flush=True)


def _number(value: float) -> str:
    return f"{value:.1f}" if math.isfinite(value) else "unknown"


def _header(node: Node) -> Any:
    from std_msgs.msg import Header

    return Header(stamp=node.get_clock().now().to_msg())


def main(args: Sequence[str] | None = None) -> int:
    """Run the bridge until SIGINT or SIGTERM (then torque off); exit status 1 when it cannot start."""
    rclpy.init(args=None if args is None else list(args))

    def start(add: Any) -> None:
        node = BusNode()
        add(node, node.shutdown)

    try:
        return serve(start, SingleThreadedExecutor)
    except (BridgeError, BridgeSetupError, BusError) as error:
        rclpy.logging.get_logger(NODE_NAME).fatal(f"cannot start: {error}")
        return 1


__all__ = ["PARAMETERS", "SERVO_PARAMETERS", "BusNode", "main"]

if __name__ == "__main__":
    sys.exit(main())

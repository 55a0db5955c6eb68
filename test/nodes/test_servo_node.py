"""The Cartesian servo over real DDS: the driver runs as a child process on the ``actuators`` backend
for bb_arm; this process is every actuator (it reports back each commanded position, an ideal
servo) and publishes twists and poses on the driver's ``~/twist_commands`` / ``~/pose_commands``.

Assertions are on what the backend sends (the actuator command topics), not on joint_states.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, TwistStamped
from helpers.nodes import LOADED_MACHINE_TIMING, TIMEOUT, NodeProcess, Probe, StartNode
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from bb_robot.driver.backends.actuator_topics import actuator_topics, resolve_actuators
from bb_robot.driver.commands.limits import from_robot
from bb_robot.driver.model import driven_joints
from bb_robot.model.serial import SerialManipulator
from bb_robot.urdf.builder import load_urdf

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
VOLATILE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
READY = [0.0, -1.2, 1.5, -1.9, -1.5708, 0.0]


class EchoActuators:
    """Every actuator: reports the last commanded position back (at 100 Hz and on each command)."""

    def __init__(self, probe: Probe, namespace: str) -> None:
        robot = load_urdf(BB_ARM)
        self.joints = driven_joints(robot)
        self.actuators = resolve_actuators(robot, self.joints)
        topics = actuator_topics(namespace, self.actuators, "joint")
        node = probe.node
        self.publishers = [node.create_publisher(JointState, t.state, VOLATILE) for t in topics]
        start = READY + [0.0] * (len(self.joints) - 6)
        self.positions = [self.to_actuator(i, q) for i, q in enumerate(start)]
        #: Every command received, per actuator: (receive time, joint position, joint velocity).
        self.commands: list[list[tuple[float, float, float]]] = [[] for _ in topics]
        for i, topic in enumerate(topics):
            node.create_subscription(JointState, topic.command, lambda m, i=i: self.on_command(i, m), VOLATILE)
        node.create_timer(0.01, self.publish)

    def to_actuator(self, i: int, joint: float) -> float:
        a = self.actuators[i]
        return (joint - a.offset) * a.signed_reduction

    def to_joint(self, i: int, actuator: float) -> float:
        a = self.actuators[i]
        return actuator / a.signed_reduction + a.offset

    def on_command(self, i: int, message: JointState) -> None:
        if len(message.position) == 1 and math.isfinite(message.position[0]):
            self.positions[i] = message.position[0]
            velocity = message.velocity[0] / self.actuators[i].signed_reduction if message.velocity else 0.0
            self.commands[i].append((time.monotonic(), self.to_joint(i, message.position[0]), velocity))
            self.publishers[i].publish(JointState(name=[self.actuators[i].name], position=[message.position[0]]))

    def publish(self) -> None:
        for actuator, publisher, position in zip(self.actuators, self.publishers, self.positions, strict=True):
            publisher.publish(JointState(name=[actuator.name], position=[position], velocity=[0.0]))

    def arm_positions(self) -> np.ndarray:
        return np.array([self.to_joint(i, self.positions[i]) for i in range(6)])


def wait_for(probe: Probe, condition: Any, what: str, node: NodeProcess, timeout: float = TIMEOUT) -> None:
    if not probe.spin_until(condition, timeout):
        raise AssertionError(f"not within {timeout} s: {what}\n--- driver output:\n{node.log()}")


def servo_status(diagnostics: list[Any]) -> Any:
    for array in reversed(diagnostics):
        for status in array.status:
            if status.name.endswith(": servo"):
                return status
    return None


def twist(frame: str, linear: tuple[float, float, float], angular: tuple[float, float, float] = (0, 0, 0)) -> Any:
    message = TwistStamped()
    message.header.frame_id = frame
    message.twist.linear.x, message.twist.linear.y, message.twist.linear.z = linear
    message.twist.angular.x, message.twist.angular.y, message.twist.angular.z = angular
    return message


def test_twists_and_poses_move_the_tool_through_the_backend_and_bad_input_is_rejected(
    probe: Probe, start_node: StartNode
) -> None:
    parameters = {
        "model": str(BB_ARM),
        "backend": "actuators",
        "autostart": True,
        "auto_arm": True,
        "command_timeout": 0.0,
        "connect_timeout": 20.0,
        # Not a test of timing: a loaded machine's late feedback must not make the joints stale (an
        # input is dropped while a joint is stale).
        "stale_timeout": LOADED_MACHINE_TIMING["stale_timeout"],
        "collision.check": False,
        "servo.enable": True,
        "servo.tip": "tcp",
        "servo.frame_prefix": "left/",
        "actuators": {
            "command_rate": 100.0,
            "feedback_timeout": LOADED_MACHINE_TIMING["actuators"]["feedback_timeout"],
            "actuator_topic_style": "joint",
        },
    }
    node = start_node(parameters, module="bb_robot.nodes.driver", node="driver")
    echo = EchoActuators(probe, node.namespace)
    chain = SerialManipulator.from_robot(load_urdf(BB_ARM), "tcp", strict=False)
    limits = from_robot(load_urdf(BB_ARM), echo.joints)
    diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics", VOLATILE)
    twists = probe.node.create_publisher(TwistStamped, f"{node.name}/twist_commands", VOLATILE)
    poses = probe.node.create_publisher(PoseStamped, f"{node.name}/pose_commands", VOLATILE)
    wait_for(probe, lambda: "active: control loop" in node.log(), "the driver active", node)
    assert "servo: base_link -> tcp, 6 joints, tracks position and orientation" in node.log()
    probe.wait_for_subscribers(twists)
    probe.wait_for_subscribers(poses)
    wait_for(probe, lambda: all(echo.commands[i] for i in range(6)), "hold commands", node)
    start_tool = chain.end_effector_pose(echo.arm_positions())

    # A twist in the tool frame, named with the frame prefix, streamed at 50 Hz for 1 s: the tool moves along its z.
    begin = [len(c) for c in echo.commands]
    for _ in range(50):
        twists.publish(twist("left/tcp", (0.0, 0.0, 0.05)))
        probe.spin_for(0.02)
    # The stream ends: the twist goes stale, the tool decelerates and is held. Waited for on states, not
    # on time (a loaded machine decelerates late): every twist is in the driver's queue (acknowledged),
    # then a servo status published after that says stale, and the last command of every arm joint has
    # zero velocity.
    probe.wait_for_acked(twists)
    acknowledged = len(diagnostics)

    def stopped() -> bool:
        status = servo_status(diagnostics[acknowledged:])
        return (
            status is not None
            and "stale" in status.message
            and all(abs(echo.commands[i][-1][2]) < 1e-9 for i in range(6))
        )

    wait_for(probe, stopped, "stale, and a zero velocity last sent to every arm joint", node)
    moved = chain.end_effector_pose(echo.arm_positions())[:3, 3] - start_tool[:3, 3]
    along = start_tool[:3, 2]
    assert moved @ along > 0.03, node.log()
    assert np.linalg.norm(moved - along * (moved @ along)) < 1e-3
    for i in range(6):
        received = echo.commands[i][begin[i] :]
        velocities = np.array([v for _, _, v in received])
        assert np.abs(velocities).max() <= limits.velocity[i] + 1e-9
        assert abs(velocities[-1]) < 1e-9  # stopped

    # Bad inputs: each rejected with a warning naming the topic and the field; the arm does not move.
    for bad, field in (
        (twist("", (math.nan, 0.0, 0.0)), "twist.linear is not finite"),
        (twist("", (0.0, 0.0, 0.0), (0.0, math.inf, 0.0)), "twist.angular is not finite"),
        (twist("nowhere", (0.01, 0.0, 0.0)), "header.frame_id 'nowhere' names no link"),
        (twist("", (5.0, 0.0, 0.0)), "twist.linear speed 5 is beyond 10x"),
    ):
        before = echo.arm_positions()
        twists.publish(bad)
        wait_for(probe, lambda f=field: f in node.log(), f"the warning '{field}'", node)
        assert f"{node.name}/twist_commands" in node.log().split(field)[0].splitlines()[-1]
        probe.spin_for(0.2)
        np.testing.assert_allclose(echo.arm_positions(), before, atol=1e-9)

    # A pose 3 cm away in the base frame: reached within 1e-4 m by the commanded positions, and held.
    target = chain.end_effector_pose(echo.arm_positions())
    target[:3, 3] += (0.02, -0.02, 0.01)
    message = PoseStamped()
    message.header.frame_id = "base_link"
    message.pose.position.x, message.pose.position.y, message.pose.position.z = target[:3, 3]
    w = math.sqrt(max(1.0 + np.trace(target[:3, :3]), 0.0)) / 2.0
    r = target[:3, :3]
    message.pose.orientation.w = w
    message.pose.orientation.x = (r[2, 1] - r[1, 2]) / (4 * w)
    message.pose.orientation.y = (r[0, 2] - r[2, 0]) / (4 * w)
    message.pose.orientation.z = (r[1, 0] - r[0, 1]) / (4 * w)
    poses.publish(message)

    def reached() -> bool:
        return bool(np.linalg.norm(chain.end_effector_pose(echo.arm_positions())[:3, 3] - target[:3, 3]) < 1e-4)

    wait_for(probe, reached, "the pose reached", node)
    wait_for(
        probe,
        lambda: (s := servo_status(diagnostics)) is not None and s.message == "tracking",
        "/diagnostics: servo tracking",
        node,
    )
    status = servo_status(diagnostics)
    values = {kv.key: kv.value for kv in status.values}
    assert values["input"] == "pose" and values["chain"] == "base_link -> tcp (6 joints)"


def test_the_frame_prefix_defaults_to_the_drivers_namespace() -> None:
    from bb_robot.driver.servo.servo_inputs import SERVO_PARAMETERS, FrameNames
    from bb_robot.nodes.driver_servo import settings_from

    values: dict[str, object] = {spec.name: spec.default for spec in SERVO_PARAMETERS}
    settings = settings_from(values.__getitem__, "/left")
    frames = FrameNames(load_urdf(BB_ARM).links, "base_link", settings.frame_prefix)
    assert frames.resolve("left/tcp") == "tcp" and frames.resolve("tcp") == "tcp"
    assert frames.resolve("right/tcp") is None
    values["servo.frame_prefix"] = "arm1/"
    assert settings_from(values.__getitem__, "/left").frame_prefix == "arm1/"
    assert settings_from({**values, "servo.frame_prefix": ""}.__getitem__, "").frame_prefix == ""

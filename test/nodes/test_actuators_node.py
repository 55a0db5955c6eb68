"""The driver's ``actuators`` backend over real DDS: the driver runs as a child process; the servo
side is either this process (its own subscribers and publishers on the actuator topics) or the
example servo bridge as another child process.

Every check goes through the real subscribers on each side: the driver's subscriptions on the
feedback topics and the bridge's (or this process's) subscriptions on the command topics.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from helpers.actuated_robot import ACTUATED_URDF, EXPECTED, JOINTS, WRIST_CONFIG
from helpers.nodes import LOADED_MACHINE_TIMING, TIMEOUT, NodeProcess, Probe, StartNode, node_overrides
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from bb_robot.driver.backends.actuator_topics import TransmissionOverride, actuator_topics, resolve_actuators
from bb_robot.driver.commands.limits import from_robot
from bb_robot.driver.model import driven_joints
from bb_robot.urdf.builder import build_robot, load_urdf
from bb_robot.urdf.parser import parse_string

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
VOLATILE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def driver_parameters(model: Path, **actuators: Any) -> dict[str, Any]:
    return {
        "model": str(model),
        "backend": "actuators",
        "autostart": True,
        "auto_arm": True,
        "command_timeout": 0.0,
        "connect_timeout": 20.0,
        "actuators": {"graph_check_period": 0.2, "feedback_timeout": 0.5, **actuators},
    }


def start_driver(start_node: StartNode, parameters: dict[str, Any]) -> NodeProcess:
    return start_node(parameters, module="bb_robot.nodes.driver", node="driver")


def wait_for(
    probe: Probe, condition: Callable[[], bool], what: str, node: NodeProcess, timeout: float = TIMEOUT
) -> None:
    if not probe.spin_until(condition, timeout):
        raise AssertionError(f"not within {timeout} s: {what}\n--- driver output:\n{node.log()}")


def repeating(send: Callable[[], None], period: float = 0.5) -> Callable[[], None]:
    """A function that calls ``send`` the first time, then again once ``period`` seconds have passed
    since it last did (a command sent again while its effect is not seen, not at every look)."""
    last = [-math.inf]

    def maybe_send() -> None:
        now = time.monotonic()
        if now - last[0] >= period:
            last[0] = now
            send()

    return maybe_send


def backend_status(diagnostics: list[Any]) -> Any:
    for array in reversed(diagnostics):
        for status in array.status:
            if status.name.endswith(": backend"):
                return status
    return None


def joint_positions(state: JointState, names: Sequence[str]) -> np.ndarray:
    index = {name: i for i, name in enumerate(state.name)}
    return np.array([state.position[index[n]] for n in names])


def at(joint_states: list[JointState], names: Sequence[str], target: Sequence[float]) -> bool:
    """The last joint state has every joint of ``names`` within 1e-3 of ``target`` (a stale joint
    is left out of joint_states, so a state without one is not there yet)."""
    if not joint_states or not set(names) <= set(joint_states[-1].name):
        return False
    return bool(np.abs(joint_positions(joint_states[-1], names) - np.asarray(target)).max() < 1e-3)


def call(probe: Probe, client: Any, request: Any) -> Any:
    assert probe.spin_until(client.service_is_ready), f"no service {client.srv_name}"
    return probe.answer(lambda: client.call_async(request), client.srv_name)


class ServoSide:
    """This process on the servo side of every actuator: a subscriber on its command topic and a
    publisher of its feedback, sent at 50 Hz while the probe spins (unless ``silent``)."""

    def __init__(self, probe: Probe, names: Sequence[str], commands: Sequence[str], states: Sequence[str]) -> None:
        node = probe.node
        self.names = list(names)
        self.received = {
            name: probe.subscribe(JointState, topic, VOLATILE) for name, topic in zip(names, commands, strict=True)
        }
        self.publishers = [node.create_publisher(JointState, topic, VOLATILE) for topic in states]
        self.positions = [0.0] * len(names)
        self.silent: set[str] = set()
        self.timer = node.create_timer(0.02, self.publish)

    def publish(self) -> None:
        for name, publisher, position in zip(self.names, self.publishers, self.positions, strict=True):
            if name not in self.silent:
                publisher.publish(JointState(name=[name], position=[position], velocity=[0.0], effort=[0.0]))

    def last(self, name: str) -> JointState | None:
        received = self.received[name]
        return received[-1] if received else None


# ------------------------------------------------------------------------------ through the transmissions
def test_commands_and_feedback_go_through_the_transmissions(
    probe: Probe, start_node: StartNode, tmp_path: Path
) -> None:
    """A robot with reductions, offsets, a reversed drive and a configured actuator; this process
    is the servo side.  Also: the index, a second publisher, a silent actuator."""
    model = tmp_path / "actuated.urdf"
    model.write_text(ACTUATED_URDF)
    robot = build_robot(parse_string(ACTUATED_URDF))
    actuators = resolve_actuators(robot, JOINTS, {"wrist": TransmissionOverride(**WRIST_CONFIG)})  # type: ignore[arg-type]
    names = [a.name for a in actuators]
    node = start_driver(
        start_node,
        driver_parameters(model, command_rate=50.0, joints={"wrist": WRIST_CONFIG}),
    )
    ns = node.namespace
    topics = actuator_topics(ns, actuators, "path")
    # The path style: the root link, the joints and links down to the actuator's joint, its name.
    assert topics[0].command == f"{ns}/actuator/base__2Dplate/shoulder/shoulder_motor"
    assert topics[1].command == f"{ns}/actuator/base__2Dplate/shoulder/l1/elbow__2Djoint/elbow__20motor"
    servo = ServoSide(probe, names, [t.command for t in topics], [t.state for t in topics])
    servo.positions = [1.0, -2.0, 0.3, 2.0]  # actuator space
    joint_states = probe.subscribe(JointState, f"{ns}/joint_states", VOLATILE)
    diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics", VOLATILE)
    index = probe.subscribe(String, f"{ns}/actuators", LATCHED)

    # Feedback -> joint space: joint = actuator / reduction + offset; the mimic joint follows.  (A
    # joint whose feedback has not arrived yet, or went stale on a busy machine, is left out of
    # joint_states: wait for one with every joint.)
    expected = [p / EXPECTED[j][1] + EXPECTED[j][2] for p, j in zip(servo.positions, JOINTS, strict=True)]
    wait_for(
        probe,
        lambda: "active: control loop" in node.log() and at(joint_states, JOINTS, expected),
        f"active, a joint state with every joint at {expected}",
        node,
    )
    np.testing.assert_allclose(joint_positions(joint_states[-1], JOINTS), expected, atol=1e-12)
    assert joint_positions(joint_states[-1], ["slide_mimic"])[0] == pytest.approx(expected[3])

    # The latched index.
    wait_for(probe, lambda: bool(index), "the actuators index", node)
    document = json.loads(index[-1].data)
    assert document["actuator_topic_style"] == "path"
    entries = {e["joint"]: e for e in document["actuators"]}
    assert set(entries) == set(JOINTS)
    for joint, (name, reduction, offset) in EXPECTED.items():
        entry = entries[joint]
        assert entry["name"] == name and entry["path"] == list(robot.topology.joint_paths[joint]) + [name]
        assert entry["transmission"]["signed_reduction"] == reduction and entry["transmission"]["offset"] == offset
    assert entries["wrist"]["transmission"]["source"] == "config"
    assert [entries[j]["command_topic"] for j in JOINTS] == [t.command for t in topics]
    assert [entries[j]["state_topic"] for j in JOINTS] == [t.state for t in topics]

    # Holding where they are: the hold command is the reported position, back through the transmission.
    wait_for(probe, lambda: all(servo.last(n) is not None for n in names), "hold commands on every topic", node)
    for name, position in zip(names, servo.positions, strict=True):
        assert servo.last(name).position[0] == pytest.approx(position, abs=1e-9)  # type: ignore[union-attr]

    # A position command by name -> actuator = (joint - offset) x reduction, on each actuator's topic.
    commands = probe.node.create_publisher(JointState, f"{node.name}/joint_commands", VOLATILE)
    probe.wait_for_subscribers(commands)
    target = [0.7, 0.5, 1.0, 0.03]
    wanted = [5.0, -2.0, -4.5, 2.0]
    # Each command below is sent again every 0.5 s until its effect is seen: on a busy host a
    # joint's feedback can pause past stale_timeout, and the driver then refuses commands (every joint
    # holds) until it reports again (seen under the slow host). The commands are targets, so a repeat
    # changes nothing once one was taken.

    send_target = repeating(lambda: commands.publish(JointState(name=list(JOINTS), position=target)))

    def commanded() -> bool:
        send_target()
        lasts = [servo.last(n) for n in names]
        return all(
            m is not None and len(m.position) == 1 and abs(m.position[0] - w) < 1e-9
            for m, w in zip(lasts, wanted, strict=True)
        )

    wait_for(probe, commanded, f"actuator positions {wanted}", node)
    for name in names:
        message = servo.last(name)
        assert message is not None and list(message.name) == [name] and list(message.effort) == []
        assert list(message.velocity) == [0.0]

    # Velocity (wrist: x -3) and effort (shoulder: / 10).
    def send_other_modes() -> None:
        commands.publish(JointState(name=["wrist"], velocity=[0.2]))
        commands.publish(JointState(name=["shoulder"], effort=[5.0]))

    send_modes = repeating(send_other_modes)

    def other_modes() -> bool:
        send_modes()
        wrist, shoulder = servo.last("wrist_servo"), servo.last("shoulder_motor")
        return (
            wrist is not None
            and list(wrist.position) == []
            and len(wrist.velocity) == 1
            and abs(wrist.velocity[0] + 0.6) < 1e-9
            and shoulder is not None
            and list(shoulder.position) == []
            and list(shoulder.effort) == pytest.approx([0.5])
        )

    wait_for(probe, other_modes, "wrist velocity -0.6 and shoulder effort 0.5", node)
    send_position = repeating(lambda: commands.publish(JointState(name=["wrist"], position=[1.0])))

    def position_again() -> bool:
        send_position()  # and back to a position
        wrist = servo.last("wrist_servo")
        return wrist is not None and list(wrist.position) == pytest.approx([-4.5]) and list(wrist.effort) == []

    wait_for(probe, position_again, "wrist position -4.5 again", node)

    # Feedback that breaks the contract is ignored, with a warning naming the topic.
    bad = probe.node.create_publisher(JointState, topics[0].state, VOLATILE)
    probe.wait_for_subscribers(bad)
    warning = f"ignored a feedback message on '{topics[0].state}'"

    def warned_after_sending_bad_feedback() -> bool:
        # Feedback is best effort with depth 1 and the servo side keeps publishing good
        # feedback, so one bad message can be dropped or overwritten: keep sending it.
        bad.publish(JointState(name=["shoulder_motor"], position=[1.0, 2.0]))
        return warning in node.log()

    wait_for(probe, warned_after_sending_bad_feedback, "the warning", node)
    probe.node.destroy_publisher(bad)

    # The model's bound parameter transmissions.<actuator>.reduction changes the transmission live
    # (feedback 1.0 -> 1.0 / 20 + 0.2), and the index is republished.
    results = probe.set_parameters(node.name, {"transmissions.shoulder_motor.reduction": 20.0})
    assert all(r.successful for r in results), results
    wait_for(
        probe,
        lambda: abs(joint_positions(joint_states[-1], ["shoulder"])[0] - 0.25) < 1e-12,
        "shoulder at 1.0 / 20 + 0.2",
        node,
    )
    wait_for(
        probe,
        lambda: json.loads(index[-1].data)["actuators"][0]["transmission"]["reduction"] == 20.0,
        "the index with the new reduction",
        node,
    )

    # A second publisher on an actuator's command topic is detected and reported.
    intruder = probe.node.create_publisher(JointState, topics[1].command, VOLATILE)

    def reported() -> bool:
        status = backend_status(diagnostics)
        return status is not None and "second publisher" in status.message and topics[1].command in status.message

    wait_for(probe, reported, "the second publisher in /diagnostics", node)
    assert f"a second publisher on '{topics[1].command}'" in node.log()
    assert backend_status(diagnostics).level == DiagnosticStatus.WARN
    probe.node.destroy_publisher(intruder)

    # A silent actuator: flagged in /diagnostics (a warning: disarm_on_feedback_timeout is off) and
    # left out of joint_states once stale; the driver stays armed.
    servo.silent = {"slide_motor"}

    def flagged() -> bool:
        status = backend_status(diagnostics)
        return (
            status is not None
            and "no feedback for more than 0.5 s" in status.message
            and "slide_motor" in (status.message)
        )

    wait_for(probe, flagged, "slide_motor flagged silent", node)
    wait_for(probe, lambda: "slide" not in joint_states[-1].name, "slide left out of joint_states", node)
    assert "shoulder" in joint_states[-1].name
    assert "in error" not in node.log()


# ------------------------------------------------------------------------------ with the example bridge
def test_the_example_servo_bridge_drives_the_bundled_arm(probe: Probe, start_node: StartNode) -> None:
    """bb_arm's seven actuators (joint topic style: its gripper's path is too long) served by the
    example bridge: a missing actuator fails configure; without waiting, joint states wait for
    it; commands converge; a silent actuator disarms (puts the driver in error) by parameter."""
    robot = load_urdf(BB_ARM)
    joints = driven_joints(robot)
    parameters = driver_parameters(BB_ARM, actuator_topic_style="joint", disarm_on_feedback_timeout=True)
    parameters["connect_timeout"] = 5.0
    parameters["stale_timeout"] = LOADED_MACHINE_TIMING["stale_timeout"]  # a stale joint holds until a new command
    ns = f"/t{uuid.uuid4().hex[:10]}"
    bridge = start_node(
        {"index_topic": f"{ns}/actuators", "rate": 100.0, "silent_actuators": ["gripper_motor"]},
        namespace=f"{ns}_bridge",
        module="bb_robot.examples.servo_bridge",
        node="servo_bridge",
    )
    bridge.wait_for_log("waiting for the actuator index")
    node = start_node(parameters, namespace=ns, module="bb_robot.nodes.driver", node="driver")
    joint_states = probe.subscribe(JointState, f"{ns}/joint_states", VOLATILE)
    arm_state = probe.subscribe(String, f"{node.name}/arm_state", LATCHED)
    diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics", VOLATILE)

    # A missing actuator: configure fails naming it.
    node.wait_for_log("autostart: configure failed")
    log = node.log()
    assert (
        f"no feedback within 5 s (connect_timeout) from 1 of 7 actuator(s): 'gripper_motor' on "
        f"{ns}/actuator/left_finger_joint/gripper_motor/state" in log
    ), log
    assert "serving 7 actuator(s) of 'bb_arm'" in bridge.log()

    # Without waiting: active, but no joint state until every actuator has reported.
    results = probe.set_parameters(node.name, {"actuators.wait_for_feedback": False})
    assert all(r.successful for r in results), results
    change = probe.node.create_client(ChangeState, f"{node.name}/change_state")
    for transition in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
        assert call(probe, change, ChangeState.Request(transition=Transition(id=transition))).success, node.log()

    def waiting() -> bool:
        status = backend_status(diagnostics)
        return status is not None and "waiting for the first feedback of gripper_motor" in status.message

    wait_for(probe, waiting, "diagnostics waiting for gripper_motor", node)
    probe.spin_for(0.5)
    assert not joint_states, "joint_states before every actuator reported"
    probe.set_parameters(bridge.name, {"silent_actuators": [""]})
    wait_for(probe, lambda: bool(joint_states), "joint states once the gripper reports", node)

    # Commands converge (the bridge moves each servo at its velocity limit, in whole counts).
    limits = from_robot(robot, joints)
    target = [
        float(0.35 * lo + 0.65 * hi) if np.isfinite(lo) and np.isfinite(hi) else 0.5
        for lo, hi in zip(limits.command_lower, limits.command_upper, strict=True)
    ]
    commands = probe.node.create_publisher(JointState, f"{node.name}/joint_commands", VOLATILE)
    probe.wait_for_subscribers(commands)
    commands.publish(JointState(name=list(joints), position=target))

    wait_for(probe, lambda: at(joint_states, joints, target), f"joint positions {target}", node)
    state = joint_states[-1]
    assert joint_positions(state, ["right_finger_joint"])[0] == pytest.approx(target[joints.index("left_finger_joint")])

    # A silent actuator with disarm_on_feedback_timeout: the driver goes to error, and reset works
    # once it reports again.
    probe.set_parameters(bridge.name, {"silent_actuators": ["elbow_motor"]})
    wait_for(probe, lambda: bool(arm_state) and arm_state[-1].data == "error", "arm state error", node)

    def flagged() -> bool:
        status = backend_status(diagnostics)
        return status is not None and status.level == DiagnosticStatus.ERROR and "elbow_motor" in status.message

    wait_for(probe, flagged, "elbow_motor flagged in /diagnostics (ERROR)", node)
    reset = probe.node.create_client(Trigger, f"{node.name}/reset")
    assert not call(probe, reset, Trigger.Request()).success
    probe.set_parameters(bridge.name, {"silent_actuators": [""]})

    def recovered() -> bool:  # the backend's health, as reset judges it
        status = backend_status(diagnostics)
        return status is not None and status.level < DiagnosticStatus.ERROR and "elbow_motor" not in status.message

    wait_for(probe, recovered, "the backend healthy in /diagnostics once elbow_motor reports again", node)
    assert call(probe, reset, Trigger.Request()).success, node.log()
    wait_for(probe, lambda: arm_state[-1].data == "disarmed", "disarmed after reset", node)


# ------------------------------------------------------------------------------ names
def test_a_path_too_long_fails_configure_suggesting_the_joint_style(
    probe: Probe, start_node: StartNode, corpus_dir: Path
) -> None:
    """UR5e: the paths of its wrist actuators exceed ROS's 247 characters."""
    node = start_driver(start_node, driver_parameters(corpus_dir / "ur_description_ros2" / "ur5e.urdf"))
    log = node.wait_for_log("autostart: configure failed")
    assert "actuator topic name(s) are longer than ROS's limit of 247 characters" in log
    assert "'wrist_3_joint_actuator' (joint 'wrist_3_joint')" in log
    assert "set actuator_topic_style: joint" in log


# ------------------------------------------------------------------------------ the bundled config
def test_the_bundled_actuators_config_runs_bb_arm_with_the_example_bridge(
    probe: Probe, start_node: StartNode, tmp_path: Path
) -> None:
    """``config/bb_arm_actuators.yaml`` as a user runs it: the description node and the driver take
    the file, the example bridge serves the actuators; the driver starts disarmed, is armed, and
    the arm follows a command."""
    config = ("--params-file", str(REPO_ROOT / "config" / "bb_arm_actuators.yaml"))
    ns = f"/t{uuid.uuid4().hex[:10]}"
    start_node({}, namespace=ns, args=config)  # the description node: robot_description
    start_node({"rate": 100.0}, namespace=ns, module="bb_robot.examples.servo_bridge", node="servo_bridge")
    node = start_node(
        {"autostart": True, "connect_timeout": 20.0},
        namespace=ns,
        # The file's timeouts made loose for a loaded machine, as test_shipped_configs does.
        args=(*config, "--params-file", str(node_overrides(tmp_path / "timing.yaml", "driver", LOADED_MACHINE_TIMING))),
        module="bb_robot.nodes.driver",
        node="driver",
    )
    log = node.wait_for_log("active: control loop")
    assert "backend 'actuators'" in log and "disarmed" in log, log
    joint_states = probe.subscribe(JointState, f"{ns}/joint_states", VOLATILE)
    wait_for(probe, lambda: bool(joint_states), "joint states", node)
    assert call(probe, probe.node.create_client(Trigger, f"{node.name}/arm"), Trigger.Request()).success
    joints = driven_joints(load_urdf(BB_ARM))
    target = [0.2, -0.3, 0.4, 0.1, -0.2, 0.3, 0.01]
    commands = probe.node.create_publisher(JointState, f"{node.name}/joint_commands", VOLATILE)
    probe.wait_for_subscribers(commands)
    commands.publish(JointState(name=list(joints), position=target))
    wait_for(probe, lambda: at(joint_states, joints, target), f"joint positions {target}", node)

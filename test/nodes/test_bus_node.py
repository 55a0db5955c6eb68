"""The bus bridge (``bb-robot bus``) end to end over the bus emulator's pty, as real processes.

The emulator is ``bb-robot bus-emulator --arm so101 --no-timing`` in a process of its own (answering
at once: what is tested is what the bridge does, not how fast); the test sees every servo's torque,
goal and present position and injects the faults through its control socket. The bridge, the
driver and the description node are the installed package's.

- ``bb-robot up --config so101.yaml --bus-port <pty> --demo`` (the file for a loaded machine, the goal
  judged at arrival: :func:`demo_config`): exit 0, the goal succeeded, the joint_states seen here are
  the emulated present positions through the calibration, and every servo's torque is off after the
  command ends;
- each injected fault, with the driver armed and holding: dropped, corrupt, partial and late
  replies (the bridge goes on and names the servo), overheating (that servo's torque off, its
  error named in the log and /diagnostics, the driver disarmed by staleness), the port closing
  (named at once, the driver disarmed; when the port comes back the bridge waits for the driver to
  be armed anew, then follows commands); in every case no servo moved that was not commanded;
- a servo missing at start: the bridge ends, naming it and the baud, and no torque came on;
- SIGTERM: every servo's torque off.
Tests wait on states and messages, never on wall-clock thresholds.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.bringup_helpers import Launched, environment, launches, up_command
from helpers.bus_processes import CONFIG, EMULATOR_LATENCY, Emulator, loaded_machine_config, up_demo
from helpers.nodes import Probe, StartNode, node_overrides
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from bb_robot.buses.calibration import load_calibration, shipped_calibration
from bb_robot.buses.units import ticks_to_angle

BEST_EFFORT = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
STREAM = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
CALIBRATIONS = load_calibration(shipped_calibration("so101"))
#: so101.yaml's joints and their servos' IDs (the bus section's ``servos``).
MOTORS = [(name, c.id) for name, c in sorted(CALIBRATIONS.items(), key=lambda item: item[1].id)]
#: How far (ticks) a servo nobody commanded may read from where it was: its own quantisation.
STILL = 2


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    made = Emulator(tmp_path)
    yield made
    made.stop()


def test_up_demo_moves_the_emulated_arm_and_reports_its_present_positions(
    emulator: Emulator, probe: Probe, tmp_path: Path
) -> None:
    final, servos = up_demo(probe, emulator, tmp_path, "--config", str(demo_config(tmp_path)))
    for name, position in zip(final.name, final.position, strict=True):
        calibration = CALIBRATIONS[name]
        ticks = round(servos[calibration.id]["ticks"])
        if name == "gripper":
            assert position == pytest.approx(_gripper(ticks), abs=0.003), name
        else:
            assert position == pytest.approx(ticks_to_angle(ticks, calibration), abs=0.003), name
    moved = [n for n, p in zip(final.name, final.position, strict=True) if abs(p) > 0.05]
    assert len(moved) == 6, f"the demo moved only {moved}"


def demo_config(directory: Path) -> Path:
    """so101.yaml for a loaded machine (:func:`loaded_machine_config`) whose goals are judged at arrival, to
    the resolution the demo's test compares at: every joint within 0.002 rad of the last point.

    The emulated servos stop exactly on their goal's tick, so such a goal has succeeded only once the
    arm stands at its end, and the last joint_states is where it stays. With so101.yaml's 0.05 rad (a
    real arm's, under load) the demo may end while a joint still moves up to that far: on a slow host
    the bridge lags its commands (test/buses/test_bus_goal_arrival.py), and the driver's joint_states
    stop at the launch's end while the bridge still follows the last command. No goal time limit:
    ``bb-robot up`` bounds the goal itself (its duration and 20 s).
    """
    path = loaded_machine_config(directory)
    data = yaml.safe_load(path.read_text())
    driver = data["/**/driver"]["ros__parameters"]
    driver["constraints"].update(
        {"goal_time": 0.0, **{joint: {"goal": 0.002} for joint in data["/**/bus"]["ros__parameters"]["joints"]}}
    )
    path.write_text(yaml.safe_dump(data))
    return path


def _gripper(ticks: int) -> float:
    c = CALIBRATIONS["gripper"]
    lower, upper = -0.174533, 1.74533
    return lower + (ticks - c.range_min) / (c.range_max - c.range_min) * (upper - lower)


class Armed:
    """The so101.yaml bringup (description, driver, bus; no move_group) over the emulator, armed."""

    def __init__(self, launched: Callable[..., Launched], probe: Probe, port: Path) -> None:
        self.probe = probe
        config = loaded_machine_config(port.parent)
        self.launch = launched("bringup.launch.py", f"config:={config}", f"bus_port:={port}", "planning:=false")
        self.arm_state = probe.subscribe(String, "/driver/arm_state", LATCHED)
        # Every joint's commands from the driver and feedback from the bridge, to say which of them
        # moved a servo that should have stayed (:meth:`moved`).
        self.commands = {j: probe.subscribe(JointState, f"/actuator/{j}/motor{n}", BEST_EFFORT) for j, n in MOTORS}
        self.feedback = {
            j: probe.subscribe(JointState, f"/actuator/{j}/motor{n}/state", BEST_EFFORT) for j, n in MOTORS
        }
        self.diagnostics: list[Any] = []
        from diagnostic_msgs.msg import DiagnosticArray

        probe.node.create_subscription(DiagnosticArray, "/diagnostics", self.diagnostics.append, STREAM)
        assert probe.spin_until(lambda: bool(self.arm_state), timeout=120), self.launch.log()
        self.arm()

    def arm(self, reset: bool = False) -> None:
        from std_srvs.srv import Trigger

        if reset:  # a silent bridge put the driver in error (disarm_on_feedback_timeout): reset first
            resetting = self.probe.node.create_client(Trigger, "/driver/reset")
            assert self.probe.spin_until(resetting.service_is_ready)
            answer = self.probe.answer(lambda: resetting.call_async(Trigger.Request()), "reset")
            assert answer.success, f"{answer.message}\n{self.launch.log()}"
        client = self.probe.node.create_client(Trigger, "/driver/arm")
        assert self.probe.spin_until(client.service_is_ready)
        answer = self.probe.answer(lambda: client.call_async(Trigger.Request()), "arm")
        assert answer.success, f"{answer.message}\n{self.launch.log()}"
        assert self.probe.spin_until(lambda: self.arm_state[-1].data == "armed")

    def said(self, text: str) -> bool:
        return self.probe.spin_until(lambda: text in self.launch.log(), timeout=60)

    def diagnosed(self, text: str) -> bool:
        return self.probe.spin_until(
            lambda: any(text in status.message for array in self.diagnostics for status in array.status), timeout=60
        )

    def moved(self, before: dict[int, float], after: dict[int, float], emulator: Emulator) -> str:
        """What a failed "nothing moved" check shows: the servos, and what the driver sent each joint
        that moved and what the bridge reported of it (first and last three of each)."""
        servos = emulator.servos()
        lines = [f"moved: {before} -> {after}"]
        for joint, servo_id in MOTORS:
            if abs(after[servo_id] - before[servo_id]) <= STILL:
                continue
            sent = [round(m.position[0], 4) for m in self.commands[joint] if len(m.position)]
            seen = [round(m.position[0], 4) for m in self.feedback[joint] if len(m.position)]
            lines.append(
                f"{joint} (servo {servo_id}): {servos[servo_id]}; commands {len(sent)}: {sent[:3]} ... {sent[-3:]}; "
                f"feedback {len(seen)}: {seen[:3]} ... {seen[-3:]}"
            )
        return "\n".join(lines) + "\n" + self.launch.log()

    def retried(self) -> int:
        """The retries the bridge reports in /diagnostics (its bus's counter), 0 before any report."""
        counts = [int(kv.value) for array in self.diagnostics for status in array.status
                  for kv in status.values if kv.key == "retries"]  # fmt: skip
        return max(counts, default=0)


@pytest.fixture
def armed(emulator: Emulator, probe: Probe, tmp_path: Path) -> Iterator[Armed]:
    with launches(tmp_path) as launched:
        runs: list[Launched] = []

        def start(*args: str) -> Launched:
            runs.append(launched(*args))
            return runs[-1]

        try:
            made = Armed(start, probe, tmp_path / "so101")
            assert probe.spin_until(lambda: all(emulator.torques())), made.launch.log()
        except BaseException:  # launches() stops what it started only after a body that ended normally
            for run in runs:
                run.stop()
            raise
        yield made


@pytest.mark.parametrize("fault", ["drop", "corrupt", "partial", "late"])
def test_bad_replies_are_survived_and_named_and_nothing_moves(
    emulator: Emulator, armed: Armed, probe: Probe, fault: str
) -> None:
    before = emulator.presents()
    assert armed.probe.spin_until(lambda: bool(armed.diagnostics))
    retried = armed.retried()
    emulator.ask({"fault": fault, "count": 12, "id": 5})  # more than one cycle's retries: wrist_roll (ID 5)
    assert probe.spin_until(lambda: armed.retried() > retried, timeout=60), armed.launch.log()  # retried, counted
    if fault != "late":  # a late reply can still answer the next request: not always a missed cycle
        assert armed.said("no feedback of wrist_roll this cycle"), armed.launch.log()
    after = emulator.presents()
    assert all(abs(after[i] - before[i]) <= STILL for i in before), armed.moved(before, after, emulator)
    assert "Traceback" not in armed.launch.log()


def test_overheating_turns_that_servo_off_names_it_and_disarms_the_driver(
    emulator: Emulator, armed: Armed, probe: Probe
) -> None:
    before = emulator.presents()
    emulator.ask({"overheat": 3})
    assert armed.said("servo 3 (elbow_flex) reports a hardware error: overheating"), armed.launch.log()
    assert probe.spin_until(lambda: armed.arm_state[-1].data != "armed"), "the driver stayed armed"
    assert armed.diagnosed("servo 3 (elbow_flex) overheating")
    assert not emulator.servos()[3]["torque"]
    after = emulator.presents()
    assert all(abs(after[i] - before[i]) <= STILL for i in before), armed.moved(before, after, emulator)


def test_a_closed_port_is_named_then_resumed_only_once_the_driver_is_armed_again(
    emulator: Emulator, armed: Armed, probe: Probe, tmp_path: Path
) -> None:
    emulator.ask({"close": True})
    assert armed.said("the port vanished"), armed.launch.log()
    assert probe.spin_until(lambda: armed.arm_state[-1].data != "armed"), "the driver stayed armed"
    back = Emulator(tmp_path)
    try:
        assert armed.said("is back and every servo answers"), armed.launch.log()
        assert armed.diagnosed("waiting for the driver to be armed again")
        assert not any(back.torques()), "torque on before the driver was armed again"
        armed.arm(reset=True)
        assert armed.said("the driver is armed again: following commands")
        assert probe.spin_until(lambda: all(back.torques())), armed.launch.log()
        # A commanded move is followed again.
        commands = probe.node.create_publisher(JointState, "/driver/joint_commands", STREAM)
        probe.wait_for_subscribers(commands)
        target = back.servos()[1]["angle"] + 0.2
        timer = probe.node.create_timer(0.05, lambda: commands.publish(JointState(name=["shoulder_pan"],
                                                                                     position=[target])))  # fmt: skip
        try:
            assert probe.spin_until(lambda: abs(back.servos()[1]["angle"] - target) < 0.01), armed.launch.log()
        finally:
            probe.node.destroy_timer(timer)
    finally:
        back.stop()


def _bus_node(start_node: StartNode, port: Path, namespace: str) -> Any:
    override = node_overrides(
        port.parent / "bus_overrides.yaml", "bus", {"port": str(port), "latency": EMULATOR_LATENCY}
    )
    return start_node({}, namespace, ("--params-file", str(CONFIG), "--params-file", str(override)),
                      module="bb_robot.nodes.bus", node="bus")  # fmt: skip


def test_a_servo_missing_at_start_is_named_and_no_torque_comes_on(start_node: StartNode, tmp_path: Path) -> None:
    emulator = Emulator(tmp_path, "--missing", "3")
    node = _bus_node(start_node, tmp_path / "so101", f"/t{uuid.uuid4().hex[:10]}")
    assert node.wait_for_exit() == 1
    assert "servo ID(s) 3 (elbow_flex) did not answer a ping at 1000000 baud" in node.log(), node.log()
    assert not any(emulator.torques())
    emulator.stop()


def test_sigterm_turns_every_servos_torque_off(
    emulator: Emulator, start_node: StartNode, probe: Probe, tmp_path: Path
) -> None:
    """The test is the driver here: it publishes an index and a command for each servo."""
    namespace = f"/t{uuid.uuid4().hex[:10]}"
    node = _bus_node(start_node, tmp_path / "so101", namespace)
    node.wait_for_log("torque on at each first command")
    entries = [
        {"name": f"motor{c.id}", "joint": joint, "command_topic": f"{namespace}/actuator/{joint}/motor{c.id}",
         "state_topic": f"{namespace}/actuator/{joint}/motor{c.id}/state",
         "limits": {"position_min": -1.5, "position_max": 1.5}}
        for joint, c in CALIBRATIONS.items()
    ]  # fmt: skip
    index = probe.node.create_publisher(String, f"{namespace}/actuators", LATCHED)
    index.publish(String(data=json.dumps({"robot": "so101", "actuators": entries})))
    feedback = {e["joint"]: probe.subscribe(JointState, e["state_topic"], BEST_EFFORT) for e in entries}
    assert probe.spin_until(lambda: all(feedback.values())), node.log()
    publishers = [probe.node.create_publisher(JointState, e["command_topic"], STREAM) for e in entries]
    for publisher in publishers:
        probe.wait_for_subscribers(publisher)

    def command() -> None:  # each servo where it is
        for publisher, (joint, messages) in zip(publishers, feedback.items(), strict=True):
            publisher.publish(JointState(name=[joint], position=[messages[-1].position[0]]))

    # Sent until every torque is on: the bridge's reader takes a writer's messages only once it has learnt
    # of the writer, which a loaded host delays past the writer's counting it (one command sent once was lost).
    timer = probe.node.create_timer(0.05, command)
    try:
        assert probe.spin_until(lambda: all(emulator.torques())), node.log()
    finally:
        probe.node.destroy_timer(timer)
    node.process.send_signal(signal.SIGTERM)
    assert node.wait_for_exit() == 0, node.log()
    assert "torque off on every servo" in node.log()
    assert not any(emulator.torques())
    assert all(math.isfinite(m[-1].position[0]) for m in feedback.values())


def test_bb_robot_bus_needs_a_bus_section(tmp_path: Path) -> None:
    result = subprocess.run(up_command()[:-1] + ["bus", "--config", "bb_arm.yaml"], capture_output=True, text=True,
                            env=environment(), timeout=120)  # fmt: skip
    assert result.returncode != 0 and "has no /**/bus section" in result.stderr, result.stderr

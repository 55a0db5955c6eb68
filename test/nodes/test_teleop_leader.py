"""Leader-follower teleop (``bb-robot teleop --leader``) end to end over two bus emulators, as real processes.

The follower is the so101.yaml bringup (description, driver, bus bridge; no move_group) on one
``bb-robot bus-emulator --arm so101``; the leader is ``bb-robot bus-emulator --arm so101_leader``
(the leader's shipped calibration), its joints moved by a motion script (``--motion``: away from the
follower's pose, so that engaging has a way to go) and then by hand through its control socket.
``bb-robot teleop --leader --leader-port <pty> --arm`` arms the driver and streams.

- the follower (its emulated present positions, as /joint_states reports them) ramps to the
  leader's pose no faster than 0.5 rad/s, judged between every two recorded joint states, then
  tracks the leader within 0.02 rad, and never leaves the leader's path by more than that;
- a leader's dropped replies are named and nothing moves; the leader's port closing is named, teleop
  ends with status 1, and the follower does not move afterwards (the driver's command timeout holds it).
Tests wait on states and messages, never on wall-clock thresholds.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from helpers.bringup_helpers import REPO_ROOT, Launched, environment, launches
from helpers.bus_processes import Emulator, loaded_machine_config
from helpers.nodes import Probe
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from bb_robot.buses.calibration import load_calibration, shipped_calibration
from bb_robot.buses.leader import ENGAGE_SPEED
from bb_robot.buses.units import SO101_GRIPPER_LIMITS, ticks_to_percent

LEADER_CONFIG = REPO_ROOT / "config" / "so101_leader.yaml"
#: The latency allowance (s) of both buses here: on a loaded machine a reply waits for a CPU (the
#: emulators answer at once; how fast is measured by benchmarks/bench_bus.py).
LOADED_LATENCY = 0.05
STREAM = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
LEADER = load_calibration(shipped_calibration("so101_leader"))
ARM = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")
JOINTS = (*ARM, "gripper")
#: Where the motion script puts the leader (rad), before teleop starts: 1 rad from the follower's pose,
#: on a way the collision guard lets through (the elbow and wrist bent towards each other are refused).
POSE_A = {"shoulder_pan": 1.0, "wrist_roll": -0.5}
TRACK = 0.02
#: What a distance judged between two joint states may exceed ENGAGE_SPEED times their time apart by:
#: two ticks (present positions are whole ticks, 1.5 mrad) and what a 0.2 s stall of the driver or
#: the bridge on a loaded machine makes up at once (the follower then catches up with the command at
#: the bridge's speed limit; the driver stamps feedback as it arrives).  A follower without the ramp
#: (the bridge's 2 rad/s) covers POSE_A's 1 rad in 0.5 s, 0.65 rad over this bound; one ramping at
#: 0.6 rad/s exceeds it too.
MARGIN = 2 * 2 * np.pi / 4096 + ENGAGE_SPEED * 0.2
#: Within this (rad) of the leader's pose the follower has arrived: two ticks of either arm's rounding.
SETTLED = 2 * 2 * np.pi / 4096
#: How far (ticks) a follower servo nobody commanded may read from where it was.
STILL = 2
#: Seconds of joint states (by their stamps) within SETTLED of the leader's pose that make the follower at rest.
SETTLE_SPAN = 0.5


def leader_targets(leader: Emulator) -> dict[str, float]:
    """Where the follower should be for the leader's present pose: its angles, the gripper through its 0-100."""
    servos = {s["joint"]: s for s in leader.servos().values()}
    targets = {joint: float(servos[joint]["angle"]) for joint in ARM}
    lower, upper = SO101_GRIPPER_LIMITS
    percent = ticks_to_percent(float(servos["gripper"]["ticks"]), LEADER["gripper"])
    targets["gripper"] = lower + percent / 100.0 * (upper - lower)
    return targets


def loaded_leader_config(directory: Path) -> Path:
    """so101_leader.yaml with the loaded machine's latency allowance and the shipped leader calibration."""
    leader = yaml.safe_load(LEADER_CONFIG.read_text())
    leader["/**/leader"]["ros__parameters"].update(
        latency=LOADED_LATENCY, calibration=str(shipped_calibration("so101_leader"))
    )
    path = directory / "so101_leader_loaded.yaml"
    path.write_text(yaml.safe_dump(leader))
    return path


class Rig:
    """The follower's bringup, the leader's emulator and bb-robot teleop --leader, started in that order."""

    def __init__(self, tmp_path: Path, probe: Probe, launched: Any) -> None:
        self.probe, self.tmp_path = probe, tmp_path
        self.follower = Emulator(tmp_path)
        namespace = f"t{uuid.uuid4().hex[:10]}"  # another session's robot in this domain does not count
        self.states: list[JointState] = probe.subscribe(JointState, f"/{namespace}/joint_states", STREAM)
        config = loaded_machine_config(tmp_path)
        data = yaml.safe_load(config.read_text())  # the bridge's replies may wait for a CPU, too
        data["/**/bus"]["ros__parameters"]["latency"] = LOADED_LATENCY
        config.write_text(yaml.safe_dump(data))
        self.launch = launched("bringup.launch.py", f"config:={config}", f"bus_port:={self.follower.link}",
                               "planning:=false", f"namespace:={namespace}")  # fmt: skip
        assert probe.spin_until(lambda: len(self.whole()) > 20, timeout=120), self.launch.log()
        #: The follower at rest before teleop starts: what is judged begins here.
        self.rest_from = len(self.whole()) - 1
        script = tmp_path / "leader.motion"
        script.write_text("".join(f"0.5 {joint} {value}\n" for joint, value in POSE_A.items()))
        self.leader = Emulator(tmp_path, "--motion", str(script), name="leader", arm="so101_leader")
        leader_config = loaded_leader_config(tmp_path)
        command = ["teleop", "--leader", str(leader_config), "--leader-port", str(self.leader.link), "--arm",
                   "--namespace", namespace]  # fmt: skip
        self.teleop = Launched([sys.executable, "-m", "bb_robot.cli", *command], tmp_path / "teleop.log", environment())

    def said(self, text: str) -> bool:
        return self.probe.spin_until(lambda: text in self.teleop.log(), timeout=120)

    def whole(self) -> list[JointState]:
        """The joint states that have every joint (the driver leaves a stale one out: a loaded machine)."""
        return [s for s in self.states if set(JOINTS) <= set(s.name)]

    def follower_pose(self) -> dict[str, float]:
        state = next((s for s in reversed(self.states) if set(JOINTS) <= set(s.name)), None)
        return {} if state is None else dict(zip(state.name, state.position, strict=True))

    def tracks(self, targets: dict[str, float], within: float = TRACK) -> bool:
        return self.probe.spin_until(
            lambda: all(abs(self.follower_pose().get(j, np.inf) - v) <= within for j, v in targets.items()), timeout=60
        )

    def settles(self, targets: dict[str, float], within: float = SETTLED) -> bool:
        """Whether the follower comes to rest at ``targets``: every joint state stamped in the last
        ``SETTLE_SPAN`` seconds within ``within`` of them.  One state within reach is not rest: on a
        slow host a joint can pass through its target and come back (measured: 7 ticks after it)."""

        def settled() -> bool:
            states = self.whole()
            if not states or _seconds(states[0]) > _seconds(states[-1]) - SETTLE_SPAN:
                return False
            recent = [s for s in states if _seconds(s) >= _seconds(states[-1]) - SETTLE_SPAN]
            return all(abs(s.position[list(s.name).index(j)] - v) <= within for s in recent for j, v in targets.items())

        return self.probe.spin_until(settled, timeout=60)

    def stop(self) -> None:
        self.teleop.stop()
        self.leader.stop()
        self.follower.stop()


@pytest.fixture
def rig(tmp_path: Path, probe: Probe) -> Iterator[Rig]:
    with launches(tmp_path) as launched:
        made = Rig(tmp_path, probe, launched)
        try:
            assert made.said("tracking the leader"), made.teleop.log() + made.launch.log()
            yield made
        finally:
            made.stop()


def _seconds(state: JointState) -> float:
    return state.header.stamp.sec + state.header.stamp.nanosec * 1e-9


def test_the_follower_ramps_to_the_leader_at_most_at_half_a_radian_a_second_then_tracks_it(
    rig: Rig, probe: Probe
) -> None:
    assert rig.tracks(leader_targets(rig.leader)), rig.teleop.log()
    ramp = rig.whole()[rig.rest_from :]
    names = list(ramp[0].name)
    t = np.array([_seconds(s) for s in ramp])
    q = np.array([[s.position[names.index(j)] for j in (*ARM, "gripper")] for s in ramp])
    assert np.abs(q[0] - [POSE_A.get(j, 0.0) for j in (*ARM, "gripper")])[:5].max() > 0.9, "the ramp had no way to go"
    moving = np.flatnonzero(np.abs(q - q[0]).max(axis=1) > 2 * 2 * np.pi / 4096)  # from its last still state
    first = max(0, int(moving[0]) - 1)
    t, q = t[first:], q[first:]
    # The ramp: between any two joint states, no joint moved faster than ENGAGE_SPEED (up to MARGIN).
    for lag in range(1, len(t)):
        excess = np.abs(q[lag:] - q[:-lag]) - (ENGAGE_SPEED * (t[lag:] - t[:-lag]) + MARGIN)[:, None]
        worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
        assert excess[worst] <= 0, (
            f"{(*ARM, 'gripper')[worst[1]]} moved {q[worst[0] + lag, worst[1]] - q[worst[0], worst[1]]:+.4f} rad "
            f"in {t[worst[0] + lag] - t[worst[0]]:.3f} s during the ramp"
        )
    # Tracking: moved by hand (the control socket), the follower follows within TRACK and stays on the path.
    begin = len(rig.whole())
    path = {"shoulder_pan": (POSE_A["shoulder_pan"], -0.2), "wrist_roll": (POSE_A["wrist_roll"], 0.5)}
    final = {**leader_targets(rig.leader), **{joint: to for joint, (_, to) in path.items()}}
    for joint, (_, to) in path.items():
        assert rig.leader.ask({"move": joint, "position": to, "duration": 1.0})["moved"]
    assert rig.tracks(final), rig.teleop.log()
    for state in rig.whole()[begin:]:
        for joint, (a, b) in path.items():
            value = state.position[list(state.name).index(joint)]
            assert min(a, b) - TRACK <= value <= max(a, b) + TRACK, f"{joint} at {value:.4f} left the leader's path"
    assert "Traceback" not in rig.teleop.log()
    # The driver's own command publishers are its own in the ROS graph (they were once "a second publisher").
    assert "a second publisher" not in rig.launch.log(), rig.launch.log()


def test_leader_faults_are_named_and_the_follower_does_not_move(rig: Rig, probe: Probe) -> None:
    assert rig.settles(leader_targets(rig.leader)), rig.teleop.log()  # arrived and standing still
    before = rig.follower.presents()
    rig.leader.ask({"fault": "drop", "count": 30, "id": 5})
    assert rig.said("servo(s) 5 (wrist_roll) did not answer"), rig.teleop.log()
    assert rig.follower.presents() == pytest.approx(before, abs=STILL)
    rig.leader.ask({"close": True})
    assert rig.said("the leader's port failed"), rig.teleop.log()
    assert rig.teleop.wait(60) == 1, rig.teleop.log()
    assert "stopped streaming: the follower holds where it is" in rig.teleop.log()
    count = len(rig.states)
    assert probe.spin_until(lambda: len(rig.states) > count + 100), "joint_states stopped"  # 1 s at 100 Hz
    after = rig.follower.presents()
    assert all(abs(after[i] - before[i]) <= STILL for i in before), f"moved: {before} -> {after}"
    assert "Traceback" not in rig.teleop.log()


def test_a_file_without_a_leader_section_is_refused_naming_it(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "bb_robot.cli", "teleop", "--leader", "so101.yaml"],
                            capture_output=True, text=True, env=environment(), cwd=REPO_ROOT, timeout=120)  # fmt: skip
    assert result.returncode == 2 and "so101.yaml has no /**/leader section" in result.stderr, result.stderr


def test_a_follower_whose_joint_states_still_lack_a_joint_is_waited_for(tmp_path: Path, probe: Probe) -> None:
    """The follower's joints are its description's: while its driver leaves a joint whose bridge has not
    answered yet out of joint_states, teleop waits, and engages on every joint once they name them all.

    The probe plays the follower's topics (its description, its driver armed, its joint states); what is
    judged is teleop's commands on the driver's ``~/joint_commands``.
    """
    namespace = f"t{uuid.uuid4().hex[:10]}"
    urdf = (REPO_ROOT / "models" / "so101" / "so101_new_calib.urdf").read_text()
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node = probe.node
    node.create_publisher(String, f"/{namespace}/robot_description", latched).publish(String(data=urdf))
    node.create_publisher(String, f"/{namespace}/driver/arm_state", latched).publish(String(data="armed"))
    states = node.create_publisher(JointState, f"/{namespace}/joint_states", 10)
    commands: list[JointState] = probe.subscribe(JointState, f"/{namespace}/driver/joint_commands", STREAM)
    leader = Emulator(tmp_path, name="leader", arm="so101_leader")
    leader_config = loaded_leader_config(tmp_path)
    command = ["teleop", "--leader", str(leader_config), "--leader-port", str(leader.link), "--namespace", namespace]
    teleop = Launched([sys.executable, "-m", "bb_robot.cli", *command], tmp_path / "teleop.log", environment())
    partial = ("elbow_flex", "wrist_flex", "gripper")  # three bridges answered so far

    def publish(names: tuple[str, ...]) -> None:
        states.publish(JointState(name=list(names), position=[0.0] * len(names), velocity=[0.0] * len(names)))

    def up_on_partial_states() -> bool:
        publish(partial)
        return "streaming to" in teleop.log() or not teleop.running()

    try:
        # Joint states without three of the joints, until teleop is up and a second after.
        assert probe.spin_until(up_on_partial_states, 120), teleop.log()
        for _ in range(50):
            publish(partial)
            probe.spin_for(0.02)
        assert teleop.running() and "has no joint" not in teleop.log(), teleop.log()
        assert commands == [], "a command before the follower's pose was known"

        def whole_and_commanded() -> bool:
            publish(JOINTS)
            return any(set(JOINTS) <= set(c.name) for c in commands)

        assert probe.spin_until(whole_and_commanded, 60), teleop.log()
    finally:
        teleop.stop()
        leader.stop()
    assert "Traceback" not in teleop.log()

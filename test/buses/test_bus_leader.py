"""Leader-follower teleop's logic without ROS (:mod:`bb_robot.buses.leader`), over the emulator's pty.

The ramp and the joint map on their own; the leader arm read through the bridge's logic from an
emulated leader (its shipped calibration, joints moved by hand); and the loop with a follower that
records what it was sent, on a test clock: the engaging ramp never faster than 0.5 rad/s and never
a jump, then tracking; a failed leader read sends nothing; a vanished port ends the loop, named.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from helpers.bus_helpers import LATENCY

from bb_robot.bringup.config import read_config
from bb_robot.buses.emulator import BusEmulator
from bb_robot.buses.emulator_control import move_joint
from bb_robot.buses.emulator_faults import Fault, Faults
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.leader import ENGAGE_SPEED, JointMap, LeaderArm, LeaderConfig, LeaderError, Ramp, TeleopLoop
from bb_robot.buses.transport import Bus
from bb_robot.buses.units import SO101_GRIPPER_LIMITS

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
LIMITS = {
    "shoulder_pan": (-1.91986, 1.91986), "shoulder_lift": (-1.74533, 1.74533), "elbow_flex": (-1.69, 1.69),
    "wrist_flex": (-1.65806, 1.65806), "wrist_roll": (-2.74385, 2.84121), "gripper": SO101_GRIPPER_LIMITS,
}  # fmt: skip


def shipped(port: str = "/dev/null") -> LeaderConfig:
    config = read_config("so101_leader.yaml")
    return LeaderConfig.from_parameters(config.leader, str(config.path), port)


# ---------------------------------------------------------------------- the ramp
def test_the_ramp_starts_where_the_follower_is_and_moves_no_faster_than_its_speed() -> None:
    ramp = Ramp()
    ramp.engage({"a": 0.0, "b": 1.0})
    target = {"a": 1.0, "b": 0.5}
    first = ramp.step(target, 0.0)
    assert first == {"a": 0.0, "b": 1.0}  # no jump: the first command is the measured pose
    previous, steps = first, 0
    while not ramp.tracking:
        command = ramp.step(target, 0.005)
        steps += 1
        assert max(abs(command[j] - previous[j]) for j in command) <= ENGAGE_SPEED * 0.005 + 1e-12
        # every joint on the straight line: they arrive together
        assert (command["a"] - 0.0) / 1.0 == pytest.approx((1.0 - command["b"]) / 0.5, abs=1e-9)
        previous = command
    assert previous == target and abs(steps - 1.0 / (ENGAGE_SPEED * 0.005)) <= 1  # (rounding)
    assert ramp.step({"a": 1.7, "b": 0.0}, 0.005) == {"a": 1.7, "b": 0.0}  # tracking: the target itself


def test_the_ramp_does_not_make_up_for_a_stall_and_chases_a_moving_target() -> None:
    ramp = Ramp(max_step_time=0.02)
    ramp.engage({"a": 0.0})
    assert ramp.step({"a": 1.0}, 5.0)["a"] == pytest.approx(ENGAGE_SPEED * 0.02)
    position = ramp.command["a"]
    for i in range(200):
        target = {"a": -0.5 + 0.001 * i}
        command = ramp.step(target, 0.005)
        assert abs(command["a"] - position) <= ENGAGE_SPEED * 0.005 + 1e-12
        position = command["a"]
    ramp.disengage()
    assert not ramp.engaged and not ramp.tracking


def test_the_ramp_waits_for_a_follower_that_lags_by_more_than_its_lead() -> None:
    ramp = Ramp(lead=0.05)
    ramp.engage({"a": 0.0})
    measured = {"a": 0.0}
    for _ in range(100):  # the follower does not move (its driver stalled): the command stops at the lead
        command = ramp.step({"a": 1.0}, 0.005, measured)
        assert command["a"] <= 0.05 + ENGAGE_SPEED * 0.005 + 1e-12
    assert ramp.waiting_for == "a" and not ramp.tracking
    measured["a"] = command["a"]  # it caught up: the ramp goes on at its speed
    assert ramp.step({"a": 1.0}, 0.005, measured)["a"] == pytest.approx(command["a"] + ENGAGE_SPEED * 0.005)
    assert ramp.waiting_for == ""


# ---------------------------------------------------------------------- the map and the config
def test_the_shipped_leader_config() -> None:
    config = shipped("/tmp/leader")
    assert config.port == "/tmp/leader" and config.protocol == "feetech" and config.rate == 200.0
    assert [s.joint for s in config.specs] == list(JOINTS) and [s.id for s in config.specs] == [1, 2, 3, 4, 5, 6]
    assert (
        config.specs[-1].mapping == "percent" and config.specs[-1].calibration_file == "so101_leader_calibration.json"
    )
    assert dict(config.follower) == {j: j for j in JOINTS}


def test_the_joint_map_clamps_to_the_followers_limits_and_names_what_is_missing() -> None:
    config = shipped()
    joint_map = JointMap.build(config, JOINTS, LIMITS)
    targets = joint_map.targets({**dict.fromkeys(JOINTS, 0.0), "shoulder_pan": 2.5, "elbow_flex": -3.0})
    assert targets["shoulder_pan"] == 1.91986 and targets["elbow_flex"] == -1.69 and targets["wrist_flex"] == 0.0
    with pytest.raises(LeaderError, match=r"the follower has no joint for gripper -> gripper .*follower_joints"):
        JointMap.build(config, JOINTS[:-1], LIMITS)


def test_follower_joints_rename_and_bad_sections_are_named(tmp_path: Path) -> None:
    values = {**read_config("so101_leader.yaml").leader, "follower_joints.shoulder_pan": "pan"}
    config = LeaderConfig.from_parameters(values, "leader.yaml")
    assert config.follower["shoulder_pan"] == "pan"
    with pytest.raises(LeaderError, match=r"leader.yaml: follower_joints names leader joint\(s\) elbow"):
        LeaderConfig.from_parameters({**values, "follower_joints.elbow": "x"}, "leader.yaml")
    with pytest.raises(LeaderError, match=r"leader.yaml: the leader section has no port.*--leader-port"):
        LeaderConfig.from_parameters({**values, "port": ""}, "leader.yaml")
    with pytest.raises(LeaderError, match=r"leader.yaml: the leader section: servos.wrist_roll.id"):
        LeaderConfig.from_parameters({**values, "servos.wrist_roll.id": 1}, "leader.yaml")


# ---------------------------------------------------------------------- the leader arm on the emulator
@pytest.fixture
def leader() -> Iterator[BusEmulator]:
    """The emulated leader: the SO-101's servos with the leader's shipped calibration, answering at once."""
    emulator = BusEmulator.so101(read_config("so101_leader.yaml").path.parent / "so101_leader_calibration.json",
                                 timing=False)  # fmt: skip
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture
def arm(leader: BusEmulator) -> Iterator[LeaderArm]:
    bus = Bus.open(leader.path, FEETECH, baud=1_000_000, latency=LATENCY, retries=2)
    made = LeaderArm(bus, shipped(leader.path), LIMITS)
    made.start()
    yield made
    bus.close()


def test_the_leader_is_read_through_its_calibration_with_torque_off(leader: BusEmulator, arm: LeaderArm) -> None:
    assert not any(s.torque for s in leader.servos.values())
    assert move_joint(leader, "elbow_flex", 0.4) and move_joint(leader, "gripper", f"{2010 + (2860 - 2010) // 4}t")
    pose = arm.read()
    assert pose is not None and set(pose) == set(JOINTS)
    assert pose["elbow_flex"] == pytest.approx(0.4, abs=0.002)
    lower, upper = SO101_GRIPPER_LIMITS  # 25 % of the leader's range: a quarter of the follower's gripper
    assert pose["gripper"] == pytest.approx(lower + 0.25 * (upper - lower), abs=0.005)
    assert not any(s.torque for s in leader.servos.values()), "reading the leader turned torque on"


def test_a_leader_servo_missing_at_start_is_named_and_torque_stays_off() -> None:
    emulator = BusEmulator.so101(read_config("so101_leader.yaml").path.parent / "so101_leader_calibration.json",
                                 timing=False, faults=Faults(missing={3}))  # fmt: skip
    emulator.start()
    bus = Bus.open(emulator.path, FEETECH, baud=1_000_000, latency=LATENCY, retries=0)
    try:
        with pytest.raises(LeaderError, match=r"the leader: .*servo ID\(s\) 3 \(elbow_flex\) did not answer") as error:
            LeaderArm(bus, shipped(emulator.path), LIMITS).start()
        assert error.value.kind == "start"
        assert not any(s.torque for s in emulator.servos.values())
    finally:
        bus.close()
        emulator.stop()


def test_a_failed_leader_read_gives_no_pose_and_is_counted(leader: BusEmulator, arm: LeaderArm) -> None:
    leader.faults.inject(Fault.DROP, 3, 5)  # more than the retries: wrist_roll misses this read
    assert arm.read() is None and arm.failures == 1
    assert any("wrist_roll" in text for _, text in arm.messages())
    assert arm.read() is not None


class Recorder:
    """The follower as the loop sees it: a measured pose, arming, and what it was sent."""

    def __init__(self, pose: Mapping[str, float]) -> None:
        self.measured, self.is_armed, self.sent = dict(pose), True, []  # type: list[dict[str, float]]

    def pose(self) -> Mapping[str, float] | None:
        return self.measured

    def armed(self) -> bool:
        return self.is_armed

    def send(self, positions: Mapping[str, float]) -> None:
        self.sent.append(dict(positions))
        self.measured.update(positions)  # a follower that is where it was sent


def test_the_loop_ramps_then_tracks_and_stops_when_disarmed(leader: BusEmulator, arm: LeaderArm) -> None:
    now = [0.0]
    follower = Recorder({**dict.fromkeys(JOINTS, 0.0), "gripper": 0.3, "extra": 9.0})
    said: list[tuple[str, str]] = []
    loop = TeleopLoop(arm, JointMap.build(shipped(), [*JOINTS, "extra"], LIMITS), follower,
                      lambda level, text: said.append((level, text)), clock=lambda: now[0])  # fmt: skip
    assert move_joint(leader, "shoulder_pan", 0.6)
    loop.cycle()
    assert follower.sent[0] == {**dict.fromkeys(JOINTS, 0.0), "gripper": 0.3}  # the measured pose: no jump
    while loop.state != "tracking":
        now[0] += 0.005
        loop.cycle()
        step = max(abs(follower.sent[-1][j] - follower.sent[-2][j]) for j in JOINTS)
        assert step <= ENGAGE_SPEED * 0.005 + 1e-9
    assert follower.sent[-1]["shoulder_pan"] == pytest.approx(0.6, abs=0.002)
    assert ("info", "tracking the leader") in said
    assert move_joint(leader, "shoulder_pan", -0.2)
    now[0] += 0.005
    loop.cycle()
    assert follower.sent[-1]["shoulder_pan"] == pytest.approx(-0.2, abs=0.002)  # tracking: no ramp
    follower.is_armed, count = False, len(follower.sent)
    now[0] += 0.005
    loop.cycle()
    assert len(follower.sent) == count and loop.state == "waiting"
    follower.is_armed, follower.measured["shoulder_pan"] = True, -0.2
    now[0] += 0.005
    loop.cycle()
    assert loop.state in ("ramping", "tracking") and follower.sent[-1]["shoulder_pan"] == pytest.approx(-0.2, abs=0.002)


def test_a_failed_read_sends_nothing_and_a_vanished_port_ends_the_loop(leader: BusEmulator, arm: LeaderArm) -> None:
    follower = Recorder(dict.fromkeys(JOINTS, 0.0))
    said: list[tuple[str, str]] = []
    now = [0.0]
    loop = TeleopLoop(arm, JointMap.build(shipped(), JOINTS, LIMITS), follower,
                      lambda level, text: said.append((level, text)), clock=lambda: now[0])  # fmt: skip
    loop.cycle()
    sent = len(follower.sent)
    for _ in range(10):  # 0.3 s of failed reads
        leader.faults.inject(Fault.CORRUPT, 3, 2)
        now[0] += 0.03
        loop.cycle()
    assert len(follower.sent) == sent, "a failed leader read was sent as a position"
    assert any(level == "warn" and "no whole leader pose" in text for level, text in said), said
    leader.close_port()
    with pytest.raises(LeaderError, match=r"the leader's port failed .*stopped streaming: the follower holds") as error:
        loop.cycle()
    assert error.value.kind == "port"

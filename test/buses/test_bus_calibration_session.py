"""Calibration by hand (``bb_robot.buses.calibration_session`` and ``calibration_script``) over the emulator's pty.

The emulator runs on a clock the test moves (``ManualClock``), so hand moves end at exact times and
every reading is of a known position; the session reads the servos over a real pty with the real
``Bus``, and the scripts are played through the emulator's real control socket.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.bus_helpers import LATENCY, ManualClock

from bb_robot.buses.bridge import Bridge
from bb_robot.buses.bridge_setup import ServoSpec
from bb_robot.buses.calibration import CalibrationError, actual_from_present, present_from_actual
from bb_robot.buses.calibration_script import CalibrationScriptError, HandScript, read_calibration_script
from bb_robot.buses.calibration_session import MIN_TRAVEL, CalibrationSession, Motor
from bb_robot.buses.eeprom import write_eeprom
from bb_robot.buses.emulator import SO101_MOTORS, BusEmulator
from bb_robot.buses.emulator_control import ControlClient, ControlError, ControlServer, move_joint
from bb_robot.buses.tables import model
from bb_robot.buses.transport import Bus, BusError

STS = model("sts3215")
XL = model("xl330-m288")
EEPROM = ("homing_offset", "min_position_limit", "max_position_limit")


@pytest.fixture
def arm() -> Iterator[tuple[BusEmulator, Bus, ManualClock]]:
    """The SO-101's servos on a clock the test moves, and a Bus on their pty."""
    clock = ManualClock()
    yield from served(BusEmulator.so101(timing=False, clock=clock), clock)


@pytest.fixture
def dxl_arm() -> Iterator[tuple[BusEmulator, Bus, ManualClock]]:
    """Two XL330-M288 servos (IDs 1, 2) at present 2048, on a clock the test moves."""
    clock = ManualClock()
    yield from served(BusEmulator.dynamixel([1, 2], "xl330-m288", timing=False, clock=clock), clock)


def served(emulator: BusEmulator, clock: ManualClock) -> Iterator[tuple[BusEmulator, Bus, ManualClock]]:
    """``emulator`` started, with a Bus of its protocol on its pty; both closed after."""
    emulator.start()
    bus = Bus.open(emulator.path, emulator.codec, baud=emulator.baud, latency=LATENCY, retries=3)
    yield emulator, bus, clock
    bus.close()
    emulator.stop()


@pytest.fixture
def control(arm: tuple[BusEmulator, Bus, ManualClock], tmp_path: Path) -> Iterator[ControlClient]:
    """A client of the SO-101 emulator's control socket."""
    server = ControlServer(arm[0], tmp_path / "control.sock")
    server.start()
    client = ControlClient(tmp_path / "control.sock")
    yield client
    client.close()
    server.stop()


def started(bus: Bus, motors: list[Motor] | None = None, protocol: str = "feetech") -> CalibrationSession:
    """A session whose servos were found and whose middle is marked where they stand."""
    session = CalibrationSession(bus, motors or so101_motors(), protocol)
    session.start()
    session.mark_middle()
    return session


def so101_motors(full_turn: tuple[str, ...] = ()) -> list[Motor]:
    return [Motor(name, i, STS, 0, name in full_turn) for i, name in enumerate(SO101_MOTORS, 1)]


def eeprom(emulator: BusEmulator, servo_id: int) -> dict[str, int]:
    return {name: emulator.servos[servo_id].peek(name) for name in EEPROM}


def hand(emulator: BusEmulator, clock: ManualClock, session: CalibrationSession, joint: str, *ticks: float) -> None:
    """Move ``joint`` by hand to each present position in turn (instantly, at a later time each), reading after each."""
    for value in ticks:
        clock.t += 0.1
        assert move_joint(emulator, joint, f"{value}t")
        session.sample()


def test_a_travel_across_the_wrap_point_is_moved_off_it_and_written_to_eeprom(
    arm: tuple[BusEmulator, Bus, ManualClock],
) -> None:
    """lerobot #3587 by hand: shoulder_pan's travel crosses present 0 with the shipped offset."""
    emulator, bus, clock = arm
    before = {i: eeprom(emulator, i) for i in range(1, 7)}
    old_offset = before[1]["homing_offset"]
    session = started(bus)
    assert not any(s.torque for s in emulator.servos.values())
    # shoulder_pan from its middle (2048) down through 0 (reading 4095 next) to -300, and back: 2348 ticks.
    hand(emulator, clock, session, "shoulder_pan", 1000, 200, -150, -300, 500, 1400)
    for joint in SO101_MOTORS[1:]:
        hand(emulator, clock, session, joint, 1500, 2600)
    rows = {row.motor.name: row for row in session.rows()}
    assert (rows["shoulder_pan"].low, rows["shoulder_pan"].high, rows["shoulder_pan"].position) == (-300, 2048, 1400)
    chosen = session.choose()
    pan = chosen["shoulder_pan"]
    assert (pan.range_min, pan.range_max) == (2048 - 1174, 2048 + 1174)
    assert abs(pan.homing_offset) <= 2047
    # The travel's ends, physically, are where the new offset's range ends are.
    for present, end in ((-300, pan.range_min), (2048, pan.range_max)):
        actual = actual_from_present(present, old_offset, "feetech")
        assert present_from_actual(actual, pan.homing_offset, "feetech") == end
    assert chosen["elbow_flex"].range_max - chosen["elbow_flex"].range_min == 1100
    assert eeprom(emulator, 1) == before[1], "written before session.write"
    session.write(chosen)
    for name, calibration in chosen.items():
        servo = emulator.servos[calibration.id]
        assert eeprom(emulator, calibration.id) == dict(
            zip(EEPROM, (calibration.homing_offset, calibration.range_min, calibration.range_max), strict=True)
        ), name
        assert servo.peek("lock") == 1, f"{name}: left unlocked"
        assert not servo.refusals, servo.refusals
    left = actual_from_present(1400, old_offset, "feetech")  # where the hand left it
    assert emulator.servos[1].present() == pytest.approx(present_from_actual(left, pan.homing_offset, "feetech"))


def test_the_bridge_accepts_what_the_session_wrote(arm: tuple[BusEmulator, Bus, ManualClock]) -> None:
    emulator, bus, clock = arm
    session = started(bus)
    for joint in SO101_MOTORS:
        hand(emulator, clock, session, joint, 1200, 2900)
    chosen = session.choose()
    session.write(chosen)
    specs = [ServoSpec(name, c.id, STS, 1, c, "calibrated.json", 2.0) for name, c in chosen.items()]
    bridge = Bridge(bus, specs)
    bridge.start()  # raises BridgeError kind "eeprom" on any difference
    assert {joint: state.present for joint, state in bridge.servos.items()} == {
        joint: pytest.approx(c.range_max) for joint, c in chosen.items()
    }


def test_a_servo_missing_at_start_is_named_and_nothing_is_written(arm: tuple[BusEmulator, Bus, ManualClock]) -> None:
    emulator, bus, _ = arm
    emulator.faults.missing.add(3)
    emulator.servos[2].poke("torque_enable", 1)
    session = CalibrationSession(bus, so101_motors(), "feetech")
    with pytest.raises(CalibrationError, match=r"servo ID\(s\) 3 \(elbow_flex\) did not answer a ping at 1000000 baud"):
        session.start()
    assert emulator.servos[2].torque, "torque turned off before every servo was found"


def test_another_model_than_configured_is_named(dxl_arm: tuple[BusEmulator, Bus, ManualClock]) -> None:
    motors = [Motor("elbow", 1, XL), Motor("wrist", 2, model("xl430-w250"))]
    with pytest.raises(CalibrationError, match=r"servo 2 \(wrist\) is model number 1200 \(xl330-m288\), "
                       r"configured as xl430-w250 \(1060\)"):  # fmt: skip
        CalibrationSession(dxl_arm[1], motors, "dynamixel").start()


def test_joints_not_moved_or_moved_a_whole_turn_are_each_named_and_nothing_is_written(
    arm: tuple[BusEmulator, Bus, ManualClock],
) -> None:
    emulator, bus, clock = arm
    before = {i: eeprom(emulator, i) for i in range(1, 7)}
    session = started(bus)
    hand(emulator, clock, session, "shoulder_pan", 1000, 0, -1000, -2030)  # 4078 ticks: nearly a whole turn
    for joint in SO101_MOTORS[1:5]:
        hand(emulator, clock, session, joint, 1500, 2600)
    hand(emulator, clock, session, "gripper", 2750 + MIN_TRAVEL - 1)  # its middle: 2750
    with pytest.raises(CalibrationError) as raised:
        session.choose()
    message = str(raised.value)
    assert "motor 'shoulder_pan': the joint travelled 4078 ticks (358.4°)" in message
    assert f"motor 'gripper' (servo 6) moved {MIN_TRAVEL - 1} ticks" in message
    assert "elbow_flex" not in message and "nothing was written" in message
    assert {i: eeprom(emulator, i) for i in range(1, 7)} == before


def test_a_full_turn_joint_gets_the_whole_turn_with_its_step_1_pose_at_the_middle(
    arm: tuple[BusEmulator, Bus, ManualClock],
) -> None:
    emulator, bus, clock = arm
    session = CalibrationSession(bus, so101_motors(full_turn=("wrist_roll",)), "feetech")
    session.start()
    clock.t += 0.1
    move_joint(emulator, "wrist_roll", "300t")  # the step-1 pose, far from mid
    session.sample()
    session.mark_middle()
    for joint in SO101_MOTORS:
        hand(emulator, clock, session, joint, 1000, 3000)
    hand(emulator, clock, session, "wrist_roll", 300)
    chosen = session.choose()
    assert (chosen["wrist_roll"].range_min, chosen["wrist_roll"].range_max) == (0, 4095)
    session.write(chosen)
    assert emulator.servos[5].present() == pytest.approx(2048)


def test_a_dynamixel_arm_is_calibrated_with_its_offset_sign(dxl_arm: tuple[BusEmulator, Bus, ManualClock]) -> None:
    """Dynamixel: present = actual + offset, the reverse of Feetech's; the same travel, the same range."""
    emulator, bus, clock = dxl_arm
    session = started(bus, [Motor("elbow", 1, XL), Motor("wrist", 2, XL)], "dynamixel")
    hand(emulator, clock, session, "1", 3000, 4500)  # across the wrap point: 2048 .. 4500 (reads 404)
    hand(emulator, clock, session, "2", 1000, 1500)
    chosen = session.choose()
    assert chosen["elbow"].range_max - chosen["elbow"].range_min == 2452
    # the middle of 2048..4500 (3274) reads 2048: offset 2048 - 3274
    assert chosen["elbow"].homing_offset == 2048 - 3274
    assert chosen["wrist"].homing_offset == 2048 - 1524
    session.write(chosen)
    assert emulator.servos[1].peek("homing_offset") == -1226
    assert emulator.servos[1].present() == pytest.approx(chosen["elbow"].range_max)


def test_eeprom_is_never_written_with_torque_on(arm: tuple[BusEmulator, Bus, ManualClock]) -> None:
    emulator, bus, _ = arm
    before = eeprom(emulator, 4)
    bus.write(4, STS.register("torque_enable"), 1)
    with pytest.raises(BusError, match=r"servo 4 \(wrist_flex\): homing_offset not written: its torque is on"):
        write_eeprom(bus, 4, STS, {"homing_offset": 5}, who="servo 4 (wrist_flex)")
    assert eeprom(emulator, 4) == before and not emulator.servos[4].refusals
    with pytest.raises(BusError, match="goal_position is not an EEPROM register"):
        write_eeprom(bus, 4, STS, {"goal_position": 5})


# ------------------------------------------------------------------ the script
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0 enter\nsoon shoulder_pan 1\n1 enter\n", r"s.txt:2: 'soon' is not a time"),
        ("0 enter\n2 shoulder_pan 1\n1 enter\n", r"s.txt:3: time 1 is earlier than line 2's 2"),
        (
            "0 enter\n1 knee 1\n2 enter\n",
            r"s.txt:2: no joint 'knee' on this bus; the joints calibrated are shoulder_pan",
        ),
        ("0 enter\n1 gripper wide\n2 enter\n", r"s.txt:2: position 'wide' is neither radians nor ticks"),
        ("0 enter\n1 gripper\n2 enter\n", r"s.txt:2: expected 'time joint position' or 'time enter', got '1 gripper'"),
        ("0 enter\n1 gripper 1\n", r"s.txt: 1 'enter' line\(s\); a calibration script has two"),
        ("0 enter\n1 enter\n2 gripper 1\n", r"s.txt:3: a line after the second 'enter'"),
        ("0 enter\n-1 enter\n", r"s.txt:2: '-1' is not a time"),
    ],
)
def test_bad_scripts_name_the_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.txt"
    path.write_text(text)
    with pytest.raises(CalibrationScriptError, match=message):
        read_calibration_script(path, SO101_MOTORS)
    with pytest.raises(CalibrationScriptError, match=r"missing.txt: cannot read the calibration script"):
        read_calibration_script(tmp_path / "missing.txt", SO101_MOTORS)


def test_a_script_reads_every_position_it_names_however_late_the_readings(
    arm: tuple[BusEmulator, Bus, ManualClock], control: ControlClient, tmp_path: Path
) -> None:
    """Readings 0.7 s apart, longer than any move: each joint's next move and each Enter still wait
    for a reading after the previous move ended, so the ranges are exactly the scripted ones."""
    _, bus, clock = arm
    path = tmp_path / "calibrate.txt"
    path.write_text(
        "# time joint position\n0.0 enter\n"
        "0.2 shoulder_pan 1200t\n0.4 shoulder_pan 2900t\n0.5 elbow_flex 1000t\n0.6, elbow_flex, 3000t\n"
        "0.8 shoulder_pan 2048t\n0.9 enter  # done\n"
    )
    session = CalibrationSession(bus, so101_motors(), "feetech")
    session.start()
    script = HandScript(path, read_calibration_script(path, SO101_MOTORS), control.ask, clock)
    presses, steps = 0, 0
    while presses < 2:
        steps += 1
        assert steps < 100, "the script never ended"
        read_at = clock()
        session.sample()
        pressed = script.step(read_at)
        if pressed and presses == 0:
            session.mark_middle()
        presses += pressed
        clock.t += 0.7
    rows = {row.motor.name: row for row in session.rows()}
    assert (rows["shoulder_pan"].low, rows["shoulder_pan"].high) == (1200, 2900)
    assert (rows["elbow_flex"].low, rows["elbow_flex"].high) == (1000, 3000)
    assert rows["shoulder_pan"].position == 2048
    assert (rows["gripper"].low, rows["gripper"].high) == (2048, 2048)


def test_a_move_the_emulator_refuses_names_the_script_line(
    arm: tuple[BusEmulator, Bus, ManualClock], control: ControlClient, tmp_path: Path
) -> None:
    _, bus, clock = arm
    path = tmp_path / "calibrate.txt"
    path.write_text("0 enter\n0.5 wrist_flex 0.2\n1 enter\n")
    bus.write(4, STS.register("torque_enable"), 1)
    script = HandScript(path, read_calibration_script(path, SO101_MOTORS), control.ask, clock)
    with pytest.raises(CalibrationScriptError, match=r"calibrate.txt:2: the emulator did not move wrist_flex: torque"):
        script.step(0.0)  # Enter, then the move, which the emulator refuses
    with pytest.raises(ControlError, match=r"nowhere.sock: cannot reach the emulator's control socket"):
        ControlClient(tmp_path / "nowhere.sock")


def test_the_live_table_shows_the_travel_around_2048_before_anything_is_written(
    arm: tuple[BusEmulator, Bus, ManualClock],
) -> None:
    emulator, bus, clock = arm
    session = CalibrationSession(bus, so101_motors(), "feetech")
    session.start()
    hand(emulator, clock, session, "wrist_flex", 2500)
    row = session.rows()[3]
    assert (row.position, row.low, row.high) == (2500, None, None)
    session.mark_middle()
    hand(emulator, clock, session, "wrist_flex", 2000, 3000)
    row = session.rows()[3]
    assert (row.position, row.low, row.high) == (2548, 2048 - 500, 2548)
    assert row.span_degrees == pytest.approx(math.degrees(1000 * 2 * math.pi / 4096))

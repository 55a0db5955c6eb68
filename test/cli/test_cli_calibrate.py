"""``bb-robot calibrate`` as a process, against the bus emulator over its pty and its control socket.

The emulator serves in this process (``helpers.calibrate_helpers.serving``: the product's emulator,
its pty linked, its control socket open), so the test sees its registers; the script's moves go to
the control socket and its ``enter`` lines stand for the keypresses. The calibration in the JSON
file, and in the servos' EEPROM, must be the scripted travel's. With ``bb-robot bus-emulator`` as a
process and the ROS bridge accepting the result: ``test/nodes/test_calibrate_node.py``; here the
bridge's logic (``Bridge.start``, the same EEPROM check) does.

**Tolerance: 0 ticks.** The script's positions are whole present ticks (radians are rounded to the
nearest tick by the emulator, as ``units.angle_to_ticks`` rounds), a hand move ends exactly at its
target, and the session reads each move's end before the next move or Enter
(``calibration_script.HandScript``), so every end of every travel is read exactly, however loaded
the host.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.bus_helpers import LATENCY
from helpers.calibrate_helpers import calibrate_command, scripted_ends, serving, so101_script, source_env

from bb_robot.bringup.config import read_config
from bb_robot.buses.bridge import Bridge
from bb_robot.buses.bridge_setup import servo_specs
from bb_robot.buses.calibration import (
    RESOLUTION,
    load_calibration,
    present_from_actual,
    shipped_calibration,
)
from bb_robot.buses.emulator import SO101_MOTORS, BusEmulator
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.leader import LeaderArm, LeaderConfig
from bb_robot.buses.transport import Bus

SHIPPED = load_calibration(shipped_calibration("so101"))
EEPROM = ("homing_offset", "min_position_limit", "max_position_limit")


class Served:
    """An emulator serving on a linked pty with its control socket."""

    def __init__(self, emulator: BusEmulator, link: Path, socket: Path) -> None:
        self.emulator, self.link, self.socket = emulator, link, socket

    def eeprom(self) -> dict[int, tuple[int, ...]]:
        return {i: tuple(s.peek(name) for name in EEPROM) for i, s in self.emulator.servos.items()}


@pytest.fixture
def so101(tmp_path: Path) -> Iterator[Served]:
    emulator = BusEmulator.so101(timing=False)
    with serving(emulator, tmp_path) as (link, socket):
        yield Served(emulator, link, socket)


def calibrate(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    quiet = None if stdin is not None else subprocess.DEVNULL
    return subprocess.run(calibrate_command(*args), capture_output=True, text=True, env=source_env(), timeout=300,
                          input=stdin, stdin=quiet, check=False)  # fmt: skip


def test_a_scripted_so101_calibration_writes_the_travel_to_the_file_and_eeprom(so101: Served, tmp_path: Path) -> None:
    script, output = tmp_path / "calibrate.txt", tmp_path / "so101.json"
    script.write_text(so101_script())
    result = calibrate("--config", "so101.yaml", "--port", so101.link, "--script", script, "--control", so101.socket,
                       "--output", output)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "torque is OFF" in result.stderr and f"wrote {output}" in result.stdout
    written = load_calibration(output)
    assert list(written) == list(SO101_MOTORS)
    for joint, (low, high) in scripted_ends(SHIPPED).items():
        calibration = written[joint]
        assert calibration.id == SHIPPED[joint].id and calibration.drive_mode == 0
        assert abs(calibration.homing_offset) <= 2047
        # Where the travel's ends read with the new offset: the range, exactly.
        ends = (present_from_actual(low % RESOLUTION, calibration.homing_offset, "feetech"),
                present_from_actual(high % RESOLUTION, calibration.homing_offset, "feetech"))  # fmt: skip
        assert (calibration.range_min, calibration.range_max) == ends, joint
        assert calibration.range_max - calibration.range_min == high - low, joint
        assert 0 < calibration.range_min and calibration.range_max < RESOLUTION - 1, f"{joint} touches the wrap point"
    # shoulder_pan's travel crossed the shipped offset's wrap point; the new offset moved it off.
    assert written["shoulder_pan"].homing_offset != SHIPPED["shoulder_pan"].homing_offset
    assert so101.eeprom() == {c.id: (c.homing_offset, c.range_min, c.range_max) for c in written.values()}
    assert not any(s.torque for s in so101.emulator.servos.values())
    assert all(s.peek("lock") == 1 for s in so101.emulator.servos.values()), "a servo left unlocked"
    # The bridge's start-up accepts it: the same EEPROM check as the bus node's.
    servos = {name: {"id": c.id, "model": "sts3215"} for name, c in written.items()}
    bus = Bus.open(str(so101.link), FEETECH, baud=1_000_000, latency=LATENCY, retries=3)
    try:
        bridge = Bridge(bus, servo_specs("feetech", list(written), servos, str(output)))
        bridge.start()
        assert all(state.low >= written[j].range_min and state.high <= written[j].range_max
                   for j, state in bridge.servos.items())  # fmt: skip
    finally:
        bus.close()


def test_the_leader_arm_calibrates_from_its_own_parameter_file_and_teleop_accepts_it(tmp_path: Path) -> None:
    """``--config so101_leader.yaml`` (a ``/**/leader`` section, no bus section): the leader's servos, and
    the written file passes the leader's start-up check (the bridge's EEPROM comparison) as teleop runs it."""
    shipped = load_calibration(shipped_calibration("so101_leader"))
    emulator = BusEmulator.so101(shipped_calibration("so101_leader"), timing=False)
    with serving(emulator, tmp_path) as (link, socket):
        script, output = tmp_path / "calibrate.txt", tmp_path / "leader.json"
        script.write_text(so101_script())
        result = calibrate("--config", "so101_leader.yaml", "--port", link, "--script", script, "--control", socket,
                           "--output", output)  # fmt: skip
        assert result.returncode == 0, result.stderr
        written = load_calibration(output)
        assert {j: c.id for j, c in written.items()} == {j: c.id for j, c in shipped.items()}
        for joint, (low, high) in scripted_ends(shipped).items():
            assert written[joint].range_max - written[joint].range_min == high - low, joint
        eeprom = {i: tuple(s.peek(name) for name in EEPROM) for i, s in emulator.servos.items()}
        assert eeprom == {c.id: (c.homing_offset, c.range_min, c.range_max) for c in written.values()}
        leader = read_config("so101_leader.yaml").leader
        config = LeaderConfig.from_parameters({**leader, "calibration": str(output)}, "so101_leader.yaml", str(link))
        bus = Bus.open(str(link), FEETECH, baud=1_000_000, latency=LATENCY, retries=3)
        try:
            arm = LeaderArm(bus, config, {"gripper": (0.0, 1.7)})
            assert not [w for w in arm.start() if "EEPROM" in w]
            assert arm.read() is not None
        finally:
            bus.close()


def test_a_dynamixel_arm_by_ids_gets_offsets_of_its_own_sign(tmp_path: Path) -> None:
    emulator = BusEmulator.dynamixel([1, 2], "xl330-m288", timing=False)
    with serving(emulator, tmp_path) as (link, socket):
        script, output = tmp_path / "calibrate.txt", tmp_path / "koch.json"
        # ID 1 from 2048 across 4095 to 4500 (reads 404), ID 2 from 2048 down to 1000: both start at present 2048.
        script.write_text("0 enter\n0.2 elbow 3200t\n0.4 elbow 4500t\n0.6 wrist 1000t\n0.8 enter\n")
        result = calibrate("--port", link, "--protocol", "dynamixel", "--ids", "1", "2", "--names", "elbow",
                           "wrist", "--script", script, "--control", socket, "--output", output)  # fmt: skip
        assert result.returncode == 0, result.stderr
        written = load_calibration(output, "dynamixel")
        # Dynamixel: present = actual + offset; the travel's middle reads 2048.
        assert (written["elbow"].homing_offset, written["elbow"].range_min, written["elbow"].range_max) == (
            2048 - 3274, 822, 3274)  # fmt: skip
        assert (written["wrist"].homing_offset, written["wrist"].range_min, written["wrist"].range_max) == (
            2048 - 1524, 1000 + 524, 2048 + 524)  # fmt: skip
        eeprom = {i: tuple(s.peek(name) for name in EEPROM) for i, s in emulator.servos.items()}
        assert eeprom == {c.id: (c.homing_offset, c.range_min, c.range_max) for c in written.values()}


def test_a_bad_script_names_its_file_and_line_and_nothing_is_written(so101: Served, tmp_path: Path) -> None:
    before = so101.eeprom()
    script, output = tmp_path / "calibrate.txt", tmp_path / "so101.json"
    script.write_text("0 enter\n0.5 shoulder_pan 0.4\n1.0 knee 0.2\n2 enter\n")
    result = calibrate("--config", "so101.yaml", "--port", so101.link, "--script", script, "--control", so101.socket,
                       "--output", output)  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert f"{script}:3: no joint 'knee' on this bus" in result.stderr
    assert not output.exists()
    assert so101.eeprom() == before


def test_a_missing_servo_is_named_with_the_baud_and_nothing_is_written(so101: Served, tmp_path: Path) -> None:
    so101.emulator.faults.missing.add(3)
    before = so101.eeprom()
    script, output = tmp_path / "calibrate.txt", tmp_path / "so101.json"
    script.write_text(so101_script())
    result = calibrate("--config", "so101.yaml", "--port", so101.link, "--script", script, "--control", so101.socket,
                       "--output", output)  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "servo ID(s) 3 (elbow_flex) did not answer a ping at 1000000 baud" in result.stderr
    assert "nothing was written" in result.stderr and not output.exists()
    assert so101.eeprom() == before


def test_enter_from_standard_input_without_moving_names_every_joint_and_writes_nothing(
    so101: Served, tmp_path: Path
) -> None:
    output = tmp_path / "so101.json"
    result = calibrate("--config", "so101.yaml", "--port", so101.link, "--output", output, stdin="\n\n")
    assert result.returncode == 1, result.stderr
    for name in SO101_MOTORS:
        assert f"motor '{name}' (servo {SO101_MOTORS.index(name) + 1}) moved 0 ticks" in result.stderr
    assert not output.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--config", "so101.yaml", "--ids", "1"], "either --config or --ids"),
        (["--ids", "1", "2"], "--port PATH and --ids"),
        (["--port", "/dev/null", "--ids", "1", "2", "--names", "a"], "--names gives 1 names for 2 --ids"),
        (["--config", "bb_arm.yaml"], "has no /**/bus or /**/leader section"),
        (["--config", "so101.yaml", "--full-turn", "knee"], "--full-turn knee: not on this bus"),
    ],
)
def test_options_that_do_not_fit_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = calibrate(*args, "--output", tmp_path / "out.json")
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_script_moves_need_the_control_socket(tmp_path: Path) -> None:
    script = tmp_path / "calibrate.txt"
    script.write_text("0 enter\n1 gripper 0.5\n2 enter\n")
    result = calibrate("--config", "so101.yaml", "--port", "/dev/null", "--script", script, "--output",
                       tmp_path / "out.json")  # fmt: skip
    assert result.returncode == 2 and "--control PATH" in result.stderr, result.stderr

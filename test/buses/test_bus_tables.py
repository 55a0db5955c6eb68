"""The control tables: addresses against the vendor's own model files, value encodings, blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from bb_robot.buses.tables import MODELS, Sign, TableError, model, model_by_number

#: bb_robot's register names -> the "Data Name" of ROBOTIS's model files (dynamixel_easy_sdk).
ROBOTIS_NAMES = {
    "model_number": "Model Number", "firmware": "Firmware Version", "id": "ID", "baud_rate": "Baud Rate",
    "return_delay": "Return Delay Time", "drive_mode": "Drive Mode", "operating_mode": "Operating Mode",
    "homing_offset": "Homing Offset", "max_temperature_limit": "Temperature Limit",
    "max_voltage_limit": "Max Voltage Limit", "min_voltage_limit": "Min Voltage Limit",
    "velocity_limit": "Velocity Limit", "max_position_limit": "Max Position Limit",
    "min_position_limit": "Min Position Limit", "torque_enable": "Torque Enable",
    "status_return_level": "Status Return Level", "hardware_error": "Hardware Error Status",
    "goal_velocity": "Goal Velocity", "profile_acceleration": "Profile Acceleration",
    "profile_velocity": "Profile Velocity", "goal_position": "Goal Position", "moving": "Moving",
    "present_velocity": "Present Velocity", "present_position": "Present Position",
    "present_voltage": "Present Input Voltage", "present_temperature": "Present Temperature",
    "present_current": "Present Current", "present_load": "Present Load",
}  # fmt: skip


def robotis_tables() -> Path:
    sdk = pytest.importorskip("dynamixel_easy_sdk")
    return Path(sdk.__file__).parent / "control_table"


def read_robotis(path: Path) -> dict[str, tuple[int, int]]:
    rows: dict[str, tuple[int, int]] = {}
    section = ""
    for line in path.read_text().splitlines():
        if line.startswith("["):
            section = line
        elif section == "[control table]" and line and line[0].isdigit():
            address, size, name = line.split("\t")
            rows[name] = (int(address), int(size))
    return rows


@pytest.mark.parametrize("name", [n for n, m in MODELS.items() if m.protocol == "dynamixel"])
def test_dynamixel_registers_and_model_numbers_match_robotis_model_files(name: str) -> None:
    directory = robotis_tables()
    ours = model(name)
    theirs = read_robotis(directory / f"{name.replace('-', '_')}.model")
    for register in ours.registers.values():
        assert theirs[ROBOTIS_NAMES[register.name]] == (register.address, register.size), register.name
    numbers = dict(line.split("\t") for line in (directory / "dynamixel.model").read_text().splitlines()[1:] if line)
    assert numbers[str(ours.model_number)] == f"{name.replace('-', '_')}.model"
    assert model_by_number("dynamixel", ours.model_number) is ours


def test_sts3215_registers_used_by_a_so101_bridge() -> None:
    sts = model("sts3215")
    layout = {n: (r.address, r.size) for n, r in sts.registers.items()}
    assert layout["id"] == (5, 1) and layout["baud_rate"] == (6, 1) and layout["return_delay"] == (7, 1)
    assert layout["min_position_limit"] == (9, 2) and layout["max_position_limit"] == (11, 2)
    assert layout["homing_offset"] == (31, 2) and layout["torque_enable"] == (40, 1)
    assert layout["goal_position"] == (42, 2) and layout["lock"] == (55, 1)
    assert layout["present_position"] == (56, 2) and layout["present_temperature"] == (63, 1)
    assert sts.model_number == 777 and sts.baud_rates[0] == 1_000_000


@pytest.mark.parametrize(("value", "raw"), [(0, "0000"), (2047, "FF07"), (-2047, "FF0F"), (-1, "0108"), (5, "0500")])
def test_feetech_homing_offset_is_sign_magnitude_with_bit_11(value: int, raw: str) -> None:
    register = model("sts3215").register("homing_offset")
    assert register.sign is Sign.MAGNITUDE
    assert register.encode(value) == bytes.fromhex(raw)
    assert register.decode(bytes.fromhex(raw)) == value


def test_feetech_offset_beyond_2047_is_refused_naming_register_and_range() -> None:
    with pytest.raises(TableError, match=r"homing_offset \(address 31\) holds -2047..2047; 2114"):
        model("sts3215").register("homing_offset").encode(2114)


def test_velocity_and_load_signs() -> None:
    sts = model("sts3215")
    assert sts.register("present_velocity").decode(bytes.fromhex("6480")) == -100  # bit 15
    assert sts.register("present_load").decode(bytes.fromhex("6404")) == -100  # bit 10
    assert model("xl430-w250").register("present_velocity").decode(bytes.fromhex("9CFFFFFF")) == -100


def test_blocks_cover_one_range_and_know_whether_they_can_be_written() -> None:
    sts = model("sts3215")
    block = sts.block(["present_velocity", "present_position"])
    assert (block.address, block.length, block.contiguous) == (56, 4, True)
    assert block.decode(bytes.fromhex("1805 6480")) == {"present_position": 1304, "present_velocity": -100}
    assert block.encode({"present_position": 1304, "present_velocity": -100}) == bytes.fromhex("18056480")
    gappy = sts.block(["goal_position", "torque_limit"])
    assert not gappy.contiguous and gappy.length == 8
    with pytest.raises(TableError, match="gaps"):
        gappy.encode({"goal_position": 1, "torque_limit": 1})


def test_unknown_names_list_what_there_is() -> None:
    with pytest.raises(TableError, match="known: sts3215"):
        model("sts9999")
    with pytest.raises(TableError, match="has no register 'lock'"):
        model("xl430-w250").register("lock")
    with pytest.raises(TableError, match="offers no 9600 baud"):
        model("sts3215").baud_code(9600)

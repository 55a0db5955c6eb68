"""Calibrations: LeRobot's JSON, the homing-offset mapping, offsets kept off the wrap point, SI units."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bb_robot.buses.calibration import (
    CalibrationError,
    MotorCalibration,
    actual_from_present,
    choose_homing,
    load_calibration,
    present_from_actual,
    save_calibration,
    shipped_calibration,
)
from bb_robot.buses.tables import model
from bb_robot.buses.units import (
    SO101_GRIPPER_LIMITS,
    angle_to_percent,
    angle_to_ticks,
    percent_to_angle,
    percent_to_ticks,
    ticks_to_angle,
    ticks_to_percent,
    to_si,
)
from bb_robot.urdf.builder import load_urdf


def sweep(start: int, end: int, step: int = 37) -> list[int]:
    """Actual positions (unwrapped) from start to end, as a joint moved by hand reads them."""
    stride = step if end >= start else -step
    return [*range(start, end, stride), end]


def presents(actual: list[int], offset: int, protocol: str) -> list[int]:
    return [present_from_actual(a % 4096, offset, protocol) for a in actual]


# ------------------------------------------------------------------ LeRobot's file
def test_shipped_so101_calibration_round_trips_as_lerobot_writes_it(tmp_path: Path) -> None:
    source = shipped_calibration("so101")
    calibrations = load_calibration(source)
    assert list(calibrations) == ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    assert [c.id for c in calibrations.values()] == [1, 2, 3, 4, 5, 6]
    copy = tmp_path / "so101.json"
    save_calibration(copy, calibrations)
    assert load_calibration(copy) == calibrations
    assert json.loads(copy.read_text()) == json.loads(source.read_text())
    assert list(json.loads(copy.read_text())["gripper"]) == [
        "id",
        "drive_mode",
        "homing_offset",
        "range_min",
        "range_max",
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"id": 1, "drive_mode": 0, "homing_offset": 2114, "range_min": 0, "range_max": 10}, "2114 exceeds ±2047"),
        ({"id": 1, "drive_mode": 0, "homing_offset": 0, "range_min": 10}, "'range_max' is None"),
        ({"id": 1, "drive_mode": 2, "homing_offset": 0, "range_min": 0, "range_max": 10}, "drive_mode 2"),
        ({"id": 1, "drive_mode": 0, "homing_offset": 0, "range_min": 10, "range_max": 5}, "range 10..5"),
        ({"id": 1.5, "drive_mode": 0, "homing_offset": 0, "range_min": 0, "range_max": 5}, "'id' is 1.5"),
    ],
)
def test_bad_calibration_files_name_file_motor_and_value(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"elbow_flex": entry}))
    with pytest.raises(CalibrationError, match=message) as raised:
        load_calibration(path)
    assert str(path) in str(raised.value) and "elbow_flex" in str(raised.value)


def test_a_dynamixel_offset_beyond_2047_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "koch.json"
    path.write_text(
        json.dumps({"j": {"id": 1, "drive_mode": 1, "homing_offset": -3000, "range_min": 0, "range_max": 9}})
    )
    assert load_calibration(path, "dynamixel")["j"].homing_offset == -3000


def test_two_motors_on_one_id_are_refused(tmp_path: Path) -> None:
    entry = {"id": 3, "drive_mode": 0, "homing_offset": 0, "range_min": 0, "range_max": 9}
    path = tmp_path / "dup.json"
    path.write_text(json.dumps({"a": entry, "b": entry}))
    with pytest.raises(CalibrationError, match="shares ID 3"):
        load_calibration(path)


# ------------------------------------------------------------------ the mapping and the homing offsets
@pytest.mark.parametrize("protocol", ["feetech", "dynamixel"])
def test_present_and_actual_are_inverse(protocol: str) -> None:
    for actual in (0, 1, 2047, 4095):
        for offset in (-2047, -1, 0, 900, 2047):
            assert actual_from_present(present_from_actual(actual, offset, protocol), offset, protocol) == actual
    assert present_from_actual(1000, 100, "feetech") == 900 and present_from_actual(1000, 100, "dynamixel") == 1100


def test_lerobot_1296_an_offset_that_overflowed_now_fits() -> None:
    # The joint's travel crosses the encoder's zero: actual 3900 .. 4095, 0 .. 330 (unwrapped 3900..4426).
    # Its middle is at 4163; an offset of middle - 2047 would be 2116, which sign-magnitude cannot hold.
    travel = presents(sweep(3900, 4426), 0, "feetech")
    choice = choose_homing(travel, protocol="feetech", motor="wrist_flex")
    assert abs(choice.homing_offset) <= 2047
    assert choice.homing_offset == 4163 - 2048 - 4096
    assert (choice.range_min, choice.range_max) == (2048 - 263, 2048 + 263)


def test_lerobot_3587_the_wrap_point_is_moved_out_of_the_travel() -> None:
    # Calibrated at a "middle" that is not the middle: with the old offset the travel crossed 4095 -> 0.
    old = -1500
    travel = presents(sweep(1000, 3000), old, "feetech")
    assert any(b < a - 2048 for a, b in zip(travel, travel[1:], strict=False))  # the jump is there
    choice = choose_homing(travel, protocol="feetech", current_offset=old)
    new = presents(sweep(1000, 3000), choice.homing_offset, "feetech")
    assert all(b > a for a, b in zip(new, new[1:], strict=False)) and new[0] == choice.range_min


@given(
    centre=st.integers(0, 4095),
    span=st.integers(0, 4095 - 34),
    current=st.integers(-2047, 2047),
    protocol=st.sampled_from(["feetech", "dynamixel"]),
    backwards=st.booleans(),
)
def test_chosen_offsets_fit_and_keep_every_travel_off_the_wrap_point(
    centre: int, span: int, current: int, protocol: str, backwards: bool
) -> None:
    low = centre - span // 2
    actual = sweep(low, low + span)
    if backwards:
        actual.reverse()
    choice = choose_homing(presents(actual, current, protocol), protocol=protocol, current_offset=current)
    assert abs(choice.homing_offset) <= (2047 if protocol == "feetech" else 2048)
    new = presents(actual, choice.homing_offset, protocol)
    assert min(new) == choice.range_min and max(new) == choice.range_max
    assert choice.range_max - choice.range_min == span
    assert choice.range_min >= 16 and choice.range_max <= 4095 - 16
    steps = [b - a for a, b in zip(new, new[1:], strict=False)]
    assert all(abs(s) < 2048 for s in steps)  # no jump of a turn anywhere in the travel


def test_a_travel_of_a_whole_turn_cannot_avoid_the_wrap_point() -> None:
    with pytest.raises(
        CalibrationError, match=r"motor 'wrist_roll': the joint travelled 4095 ticks \(359\.9°\).*wrap point"
    ):
        choose_homing(presents(sweep(0, 4095), 0, "feetech"), protocol="feetech", motor="wrist_roll")
    with pytest.raises(CalibrationError, match="no positions"):
        choose_homing([], protocol="feetech")


# ------------------------------------------------------------------ units
def test_joint_angle_is_zero_at_mid_range_and_signed_by_drive_mode() -> None:
    c = MotorCalibration(1, 0, 0, 1000, 3000)
    assert ticks_to_angle(2000, c) == 0.0
    assert ticks_to_angle(3000, c) == pytest.approx(1000 * 2 * math.pi / 4096)
    flipped = MotorCalibration(1, 1, 0, 1000, 3000)
    assert ticks_to_angle(3000, flipped) == pytest.approx(-1000 * 2 * math.pi / 4096)
    for ticks in range(1000, 3001, 7):
        assert angle_to_ticks(ticks_to_angle(ticks, flipped), flipped) == ticks


def test_shipped_calibration_fits_the_so101_urdf_limits(corpus_dir: Path) -> None:
    robot = load_urdf(corpus_dir / "so101" / "so101_new_calib.urdf")
    for name, c in load_calibration(shipped_calibration("so101")).items():
        if name == "gripper":
            continue
        limit = robot.joints[name].limits
        assert limit is not None and limit.lower is not None and limit.upper is not None
        ends = sorted((ticks_to_angle(c.range_min, c), ticks_to_angle(c.range_max, c)))
        assert limit.lower - 1e-3 <= ends[0] and ends[1] <= limit.upper + 1e-3, name
    gripper = robot.joints["gripper"].limits
    assert gripper is not None and (gripper.lower, gripper.upper) == SO101_GRIPPER_LIMITS


def test_gripper_percent_maps_onto_the_urdf_joint() -> None:
    c = MotorCalibration(6, 0, 0, 2030, 3470)
    assert ticks_to_percent(2030, c) == 0.0 and ticks_to_percent(3470, c) == 100.0
    assert percent_to_ticks(50.0, c) == 2750
    assert percent_to_angle(0.0) == SO101_GRIPPER_LIMITS[0] and percent_to_angle(100.0) == SO101_GRIPPER_LIMITS[1]
    assert angle_to_percent(percent_to_angle(37.5)) == pytest.approx(37.5)
    assert ticks_to_percent(2030, MotorCalibration(6, 1, 0, 2030, 3470)) == 100.0


def test_si_units_of_each_family() -> None:
    sts, xl = model("sts3215"), model("xl430-w250")
    assert to_si(sts, "present_velocity", 4096) == pytest.approx(2 * math.pi)
    assert to_si(xl, "present_velocity", 100) == pytest.approx(100 * 0.229 * 2 * math.pi / 60)
    assert to_si(sts, "present_voltage", 121) == pytest.approx(12.1)
    assert to_si(sts, "present_load", -500) == pytest.approx(-0.5)
    assert to_si(sts, "present_current", 100) == pytest.approx(0.65)
    assert to_si(model("xm430-w350"), "present_current", 100) == pytest.approx(0.269)
    assert to_si(sts, "present_temperature", 41) == 41.0

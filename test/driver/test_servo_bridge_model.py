"""The example servo bridge's simulated servo, without ROS: counts, travel limits, speed, modes."""

from __future__ import annotations

import math

import pytest

from bb_robot.examples.servo_bridge import SimulatedServo, servo_for


def entry(**limits: float | None) -> dict[str, object]:
    return {
        "joint_type": "revolute",
        "transmission": {"offset": 0.2, "signed_reduction": 10.0},
        "limits": {"position_min": -22.0, "position_max": 18.0, "velocity": 15.0, "effort": 1.0, **limits},
    }


def test_a_servo_starts_where_its_joint_is_at_zero_in_whole_counts() -> None:
    servo = servo_for(entry(), 4096.0, 1e5, 1.0)
    per_unit = 4096 / (2 * math.pi)
    assert servo.counts_per_unit == pytest.approx(per_unit)
    assert servo.count == round(-2.0 * per_unit)  # (0 - 0.2) x 10
    assert (servo.min_count, servo.max_count) == (math.ceil(-22.0 * per_unit), math.floor(18.0 * per_unit))
    assert servo.max_speed == 15.0 and servo.position == servo.target


def test_position_commands_move_at_the_speed_limit_and_stop_at_the_travel_limits() -> None:
    servo = servo_for(entry(), 4096.0, 1e5, 0.5)
    assert servo.command([5.0], [0.0], []) is None
    start = servo.position
    servo.step(0.1)  # 7.5 units/s x 0.1 s
    assert servo.position - start == pytest.approx(0.75, abs=1 / servo.counts_per_unit)
    assert servo.velocity == pytest.approx(7.5, rel=0.01)
    for _ in range(20):
        servo.step(0.1)
    assert servo.position == pytest.approx(5.0, abs=1 / servo.counts_per_unit)
    servo.command([100.0], [], [])
    for _ in range(100):
        servo.step(0.1)
    assert servo.count == servo.max_count


def test_velocity_effort_and_empty_commands() -> None:
    servo = SimulatedServo(counts_per_unit=1000.0, min_count=None, max_count=None, max_speed=None, count=0)
    assert servo.command([], [2.0], []) is None
    servo.step(0.5)
    assert servo.position == pytest.approx(1.0) and servo.velocity == pytest.approx(2.0)
    assert "not supported" in (servo.command([], [], [3.0]) or "")
    held = servo.position
    servo.step(0.5)
    assert servo.position == held
    assert servo.command([], [], []) is not None


def test_a_velocity_stops_at_the_command_range_however_long_it_stands() -> None:
    # The driver's command range (soft limits) inside the travel: the servo stops at its end even
    # if no further command comes (a driver that stalled or died), and is not pulled in from outside.
    servo = servo_for(entry(command_min=-20.0, command_max=16.0), 4096.0, 1e5, 1.0)
    assert (servo.command_min, servo.command_max) == (-20.0, 16.0)
    servo.command([], [15.0], [])
    for _ in range(40):  # 40 s at 15 units/s: far past the end without the bound
        servo.step(1.0)
        assert servo.position <= 16.0
    assert servo.position == pytest.approx(16.0, abs=1 / servo.counts_per_unit)
    servo.command([], [-15.0], [])
    for _ in range(40):
        servo.step(1.0)
        assert servo.position >= -20.0 - 1 / servo.counts_per_unit
    assert servo.position == pytest.approx(-20.0, abs=1 / servo.counts_per_unit)
    outside = SimulatedServo(1000.0, None, None, None, count=17_000, command_min=-20.0, command_max=16.0)
    outside.command([], [1.0], [])
    outside.step(1.0)
    assert outside.position == 17.0  # no further out, and not yanked back
    outside.command([], [-1.0], [])
    outside.step(1.0)
    assert outside.position == 16.0


def test_command_silence_stops_a_velocity_and_holds_a_position() -> None:
    """The contract's silence rule: no command for the timeout stops the motion; the next command is
    followed again."""
    servo = servo_for(entry(), 4096.0, 1e5, 1.0)
    assert servo.command([], [2.0], [], now=10.0) is None
    servo.step(0.1)
    assert servo.velocity == pytest.approx(2.0, rel=0.01)
    assert not servo.check_silence(10.2, 0.25)  # within the timeout: still turning
    assert servo.check_silence(10.3, 0.25)  # silent for 0.3 s: stopped
    assert not servo.check_silence(10.4, 0.25)  # said once
    stopped_at = servo.position
    servo.step(0.1)
    assert servo.velocity == 0.0 and servo.position == stopped_at
    servo.command([stopped_at + 0.5], [0.0], [], now=11.0)  # a new command: followed
    servo.step(0.1)
    assert servo.position > stopped_at
    assert not servo.check_silence(11.1, 0.0)  # 0: never


def test_command_silence_holds_where_a_position_move_is() -> None:
    servo = servo_for(entry(), 4096.0, 1e5, 0.1)
    servo.command([10.0], [0.0], [], now=0.0)
    servo.step(0.1)
    assert servo.check_silence(1.0, 0.25)
    held = servo.position
    for _ in range(10):
        servo.step(0.1)
    assert servo.position == held and held < 10.0


def test_a_new_index_leaves_a_servo_where_it_is() -> None:
    """A restarted driver republishes the index: the bridge's servo keeps its position (a real one
    would not teleport), within the new travel."""
    old = servo_for(entry(), 4096.0, 1e5, 1.0)
    old.command([5.0], [0.0], [], now=0.0)
    for _ in range(10):
        old.step(0.1)
    new = servo_for(entry(), 4096.0, 1e5, 1.0)
    assert new.position != old.position
    new.stay_where(old)
    assert new.count == old.count and new.target == new.position and new.mode == "position"
    narrow = servo_for(entry(position_max=1.0), 4096.0, 1e5, 1.0)
    narrow.stay_where(old)
    assert narrow.count == narrow.max_count

"""The Bus over the emulator's pty: transactions, and each injected fault retried, counted, never a value."""

from __future__ import annotations

import time

import pytest
from helpers.bus_helpers import LATENCY

from bb_robot.buses.dynamixel import DYNAMIXEL
from bb_robot.buses.emulator import BusEmulator
from bb_robot.buses.emulator_faults import Fault
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.tables import model
from bb_robot.buses.transport import Bus, BusError

STS = model("sts3215")
XL = model("xl430-w250")
IDS = [1, 2, 3, 4, 5, 6]
STATE = STS.block(["present_position", "present_velocity", "present_load"])
GOAL = STS.block(["goal_position"])


def truth(emulator: BusEmulator, servo_id: int) -> int:
    """The present position the emulated servo holds (what a valid reply must say)."""
    servo = emulator.servos[servo_id]
    return round(servo.present()) % 4096


def test_ping_read_write_and_broadcast_ping(so101: BusEmulator, so101_bus: Bus) -> None:
    assert so101_bus.ping(3) is not None and so101_bus.ping(42) is None
    assert [r.servo_id for r in so101_bus.broadcast_ping(max_replies=6)] == IDS
    assert so101_bus.read(1, STS.register("model_number")) == 777
    assert so101_bus.read(1, STS.register("homing_offset")) == -1470  # sign-magnitude, from the calibration
    assert so101_bus.write(2, STS.register("torque_enable"), 1) == 0
    assert so101.servos[2].torque


def test_one_sync_read_and_one_sync_write_per_cycle(so101: BusEmulator, so101_bus: Bus) -> None:
    result = so101_bus.sync_read(IDS, STATE)
    assert set(result.values) == set(IDS) and result.missing == ()
    assert all(result.values[i]["present_position"] == truth(so101, i) for i in IDS)
    for i in IDS:
        so101_bus.write(i, STS.register("torque_enable"), 1)
    so101_bus.sync_write(GOAL, {i: {"goal_position": truth(so101, i) + 10 * i} for i in IDS})
    goals = so101_bus.sync_read(IDS, GOAL).values  # served after the sync write: the bus is one line
    assert [goals[i]["goal_position"] for i in IDS] == [2058, 2068, 2078, 2088, 2098, 2810]
    assert so101_bus.stats.transactions == 1 + 6 + 1 + 1 and so101_bus.stats.retries == 0


@pytest.mark.parametrize(
    ("fault", "servo_id", "counter"),
    [
        (Fault.DROP, 4, "timeouts"),
        (Fault.CORRUPT, 4, "corrupt"),
        (Fault.PARTIAL, 6, "partial"),  # the last reply cut short: nothing follows it
        (Fault.PARTIAL, 4, "corrupt"),  # cut short with the next servo's reply after it: its checksum fails
    ],
)
def test_a_bad_reply_is_retried_and_counted(
    so101: BusEmulator, so101_bus: Bus, fault: Fault, servo_id: int, counter: str
) -> None:
    so101.faults.inject(fault, 1, servo_id=servo_id)
    result = so101_bus.sync_read(IDS, STATE)
    assert all(result.values[i]["present_position"] == truth(so101, i) for i in IDS)
    assert getattr(so101_bus.stats, counter) >= 1 and so101_bus.stats.retries >= 1
    assert so101_bus.stats.failures == 0 and so101.faults.counts == {fault.value: 1}


@pytest.mark.parametrize("fault", [Fault.DROP, Fault.CORRUPT, Fault.PARTIAL])
def test_a_servo_that_keeps_failing_is_raised_never_read(so101: BusEmulator, so101_bus: Bus, fault: Fault) -> None:
    so101.faults.inject(fault, so101_bus.retries + 1, servo_id=5)
    with pytest.raises(BusError) as raised:
        so101_bus.sync_read(IDS, STATE)
    error = raised.value
    assert error.servo_ids == (5,) and error.kind == {"drop": "timeout"}.get(fault.value, fault.value)
    assert so101.path in str(error) and "servo 5" in str(error) and "present_position" in str(error)
    assert so101_bus.stats.failures == 1
    so101.faults.inject(fault, so101_bus.retries + 1, servo_id=5)
    partial = so101_bus.sync_read(IDS, STATE, allow_missing=True)
    assert partial.missing == (5,) and 5 not in partial.values and set(partial.values) == {1, 2, 3, 4, 6}


def test_a_late_reply_is_retried_and_later_dropped_as_stray(so101: BusEmulator) -> None:
    bus = Bus.open(so101.path, FEETECH, baud=1_000_000, latency=0.05, retries=20)
    try:
        so101.faults.late_by = 0.5
        so101.faults.inject(Fault.LATE, 1, servo_id=2)
        assert bus.read(2, STS.register("present_position")) == truth(so101, 2)
        assert bus.stats.timeouts >= 1 and bus.stats.retries >= 1
        while not so101.late_sent:  # the late reply is on its way; wait for it to be sent
            time.sleep(0.01)
        # It is dropped before a request, or (arriving during one) taken as that request's reply and the
        # request's own reply dropped later: either way one reply's bytes are stray, and every value true.
        while not bus.stats.stray_bytes:
            assert bus.read(2, STS.register("present_position")) == truth(so101, 2)
            time.sleep(0.01)
        assert bus.stats.stray_bytes == FEETECH.status_size(2) and bus.stats.failures == 0
    finally:
        bus.close()


def test_a_servo_missing_at_start_is_named_then_found_when_it_answers(so101: BusEmulator, so101_bus: Bus) -> None:
    so101.faults.missing.add(3)
    assert so101_bus.ping(3) is None
    with pytest.raises(BusError, match=r"servo 3: present_position\+present_velocity\+present_load: no reply"):
        so101_bus.sync_read(IDS, STATE)
    so101.faults.revive(3)
    assert so101_bus.sync_read(IDS, STATE).missing == ()


def test_servos_at_another_baud_do_not_answer(so101: BusEmulator, so101_bus: Bus) -> None:
    so101_bus.write(6, STS.register("lock"), 0)
    so101_bus.write(6, STS.register("baud_rate"), STS.baud_code(57_600))  # the status still comes at the old baud
    assert so101_bus.ping(6) is None and so101.servos[6].baud == 57_600


def test_overheating_sets_the_status_bit_and_turns_torque_off(so101: BusEmulator, so101_bus: Bus) -> None:
    so101_bus.write(2, STS.register("torque_enable"), 1)
    so101.servos[2].overheat(so101.now())
    result = so101_bus.sync_read(IDS, STS.block(["present_position", "present_temperature"]))
    assert FEETECH.describe_error(result.status[2]) == ["overheating"] and result.status[1] == 0
    assert result.values[2]["present_temperature"] > STS.defaults["max_temperature_limit"]
    assert so101_bus.read(2, STS.register("torque_enable")) == 0
    so101_bus.write(2, STS.register("torque_enable"), 1)
    assert not so101.servos[2].torque


def test_the_port_closing_mid_run_is_reported_at_once(so101: BusEmulator, so101_bus: Bus) -> None:
    so101_bus.sync_read(IDS, STATE)
    so101.close_port()
    with pytest.raises(BusError) as raised:
        so101_bus.sync_read(IDS, STATE)
    assert raised.value.kind == "port" and "unplugged" in str(raised.value)
    assert so101_bus.stats.retries == 0


def test_an_adapter_echo_is_not_taken_as_a_reply(so101: BusEmulator, so101_bus: Bus) -> None:
    # A READ of 2 bytes has 2 parameters, like its reply: without the echo check it would read as data.
    register = STS.register("present_position")
    request = FEETECH.instruction(1, 0x02, FEETECH.read_params(register.address, 2))
    assert FEETECH.scan(request).frame is not None
    assert FEETECH.decode_status(FEETECH.scan(request).frame) == (0x02, request[5:7])  # what the echo would decode to
    assert so101_bus.read(1, register) == truth(so101, 1)


def test_dynamixel_eeprom_write_with_torque_on_is_refused_and_named(dxl: BusEmulator, dxl_bus: Bus) -> None:
    dxl_bus.write(1, XL.register("torque_enable"), 1)
    with pytest.raises(BusError, match=r"servo 1: operating_mode = 1: refused \(access error\)") as raised:
        dxl_bus.write(1, XL.register("operating_mode"), 1)
    assert raised.value.kind == "refused" and dxl_bus.stats.refused == 1 and dxl_bus.stats.retries == 0
    with pytest.raises(BusError, match="data limit error"):
        dxl_bus.write(1, XL.register("goal_position"), 5000)
    dxl_bus.write(1, XL.register("torque_enable"), 0)
    assert dxl_bus.write(1, XL.register("operating_mode"), 4) == 0


def test_dynamixel_ping_sync_read_and_the_alert_bit(dxl: BusEmulator, dxl_bus: Bus) -> None:
    reply = dxl_bus.ping(2)
    assert reply is not None and reply.model_number == 1060
    assert [r.servo_id for r in dxl_bus.broadcast_ping(max_replies=3)] == [1, 2, 3]
    block = XL.block(["present_velocity", "present_position"])
    assert dxl_bus.sync_read([1, 2, 3], block).values[3] == {"present_velocity": 0, "present_position": 2048}
    dxl.servos[3].overheat(dxl.now())
    result = dxl_bus.sync_read([1, 2, 3], block)
    assert result.status[3] == 0x80 and result.values[3]["present_position"] == 2048
    assert dxl_bus.read(3, XL.register("hardware_error")) == 0x04


def test_values_a_register_cannot_hold_are_refused_before_sending(so101_bus: Bus) -> None:
    with pytest.raises(BusError, match=r"servo 1: homing_offset \(address 31\) holds -2047..2047; 2114"):
        so101_bus.write(1, STS.register("homing_offset"), 2114)
    with pytest.raises(BusError, match="gaps"):
        so101_bus.sync_write(STS.block(["goal_position", "torque_limit"]), {1: {"goal_position": 1, "torque_limit": 1}})
    assert so101_bus.stats.transactions == 0


def test_a_port_that_cannot_be_opened_says_what_to_check(tmp_path: object) -> None:
    with pytest.raises(BusError, match="cannot open the serial port at 1000000 baud.*dialout"):
        Bus.open("/nonexistent/ttyACM9", DYNAMIXEL, baud=1_000_000)


def test_read_timeouts_follow_the_bytes_expected(so101: BusEmulator) -> None:
    bus = Bus(open(so101.path, "rb+", buffering=0), FEETECH, baud=1_000_000, latency=LATENCY, return_delay=20e-6)
    try:
        assert bus.wire_time(100) == pytest.approx(1e-3)
        six = bus.reply_timeout(10, 6 * 10, 6)
        assert six == pytest.approx(70 * 10 / 1e6 + 6 * 20e-6 + LATENCY)
        assert bus.reply_timeout(10, 60, 6) - bus.reply_timeout(10, 10, 1) == pytest.approx(50e-5 + 5 * 20e-6)
    finally:
        bus.close()

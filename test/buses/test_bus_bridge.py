"""The bus bridge's logic without ROS (bb_robot.buses.bridge), over the emulator's pty.

Start-up (the ping naming missing IDs and the baud, the EEPROM compared with the calibration, the
return delay set only with torque off, goals seeded before torque), the cycle (clamps to the
URDF's and the EEPROM's limits, the step cap, command silence, hardware errors), the port
vanishing, and torque off at the end. The bridge's clock is the test's, so the step cap is exact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.bus_helpers import LATENCY

from bb_robot.buses.bridge import Bridge, BridgeError
from bb_robot.buses.bridge_setup import (
    BridgeSetupError,
    CycleStats,
    Mapping,
    latency_timer_warning,
    servo_specs,
)
from bb_robot.buses.calibration import load_calibration, shipped_calibration
from bb_robot.buses.dynamixel import DYNAMIXEL
from bb_robot.buses.emulator import BusEmulator
from bb_robot.buses.emulator_faults import Fault
from bb_robot.buses.transport import Bus
from bb_robot.buses.units import TICK

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
CALIBRATION = str(shipped_calibration("so101"))
#: The SO-101 URDF's limits (so101_new_calib.urdf).
URDF_LIMITS = {
    "shoulder_pan": (-1.91986, 1.91986),
    "shoulder_lift": (-1.74533, 1.74533),
    "elbow_flex": (-1.69, 1.69),
    "wrist_flex": (-1.65806, 1.65806),
    "wrist_roll": (-2.74385, 2.84121),
    "gripper": (-0.174533, 1.74533),
}


class Clock:
    """The bridge's time, moved by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def so101_specs(**servo: object) -> dict[str, dict[str, object]]:
    calibrations = load_calibration(CALIBRATION)
    return {
        joint: {
            "id": calibrations[joint].id,
            "model": "sts3215",
            **({"mapping": "percent"} if joint == "gripper" else {}),
            **servo,
        }  # fmt: skip
        for joint in JOINTS
    }


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def bridge(so101: BusEmulator, so101_bus: Bus, clock: Clock) -> Iterator[Bridge]:
    specs = servo_specs("feetech", JOINTS, so101_specs(), CALIBRATION)
    made = Bridge(so101_bus, specs, clock=clock, max_step_time=1.0)
    yield made


def run(bridge: Bridge, clock: Clock, cycles: int, dt: float = 0.005) -> None:
    for _ in range(cycles):
        clock.now += dt
        bridge.cycle()
    settle(bridge)


def settle(bridge: Bridge) -> None:
    """A round trip, so that the emulator has handled the sync write before it (which gets no reply)."""
    assert bridge.bus.ping(next(iter(bridge.by_id))) is not None


def test_start_seeds_the_goals_with_the_present_positions_and_leaves_torque_off(
    so101: BusEmulator, bridge: Bridge, clock: Clock
) -> None:
    assert bridge.start() == []
    for joint, state in bridge.servos.items():
        servo = so101.servos[state.spec.id]
        assert state.present == servo.peek("present_position") and state.goal == state.present
        assert not servo.torque, f"{joint}: torque turned on before any command"
    feedback = {f.joint: f for f in bridge.cycle()}
    assert set(feedback) == set(JOINTS)
    assert all(abs(feedback[j].position) < 2 * TICK for j in JOINTS if j != "gripper")
    assert not any(s.torque for s in so101.servos.values()), "a cycle without commands turned torque on"


def test_a_missing_servo_is_named_with_the_baud_tried(so101: BusEmulator, bridge: Bridge) -> None:
    so101.faults.missing.add(3)
    with pytest.raises(BridgeError, match=r"servo ID\(s\) 3 \(elbow_flex\) did not answer a ping at 1000000 baud"):
        bridge.start()
    assert not any(s.torque for s in so101.servos.values())


def test_eeprom_that_differs_from_the_calibration_is_named(so101: BusEmulator, bridge: Bridge) -> None:
    so101.servos[2].poke("homing_offset", 1000)
    with pytest.raises(
        BridgeError, match=r"servo 2 \(shoulder_lift\): EEPROM differs .*homing_offset 1000 \(file: 1389\)"
    ):
        bridge.start()


def test_return_delay_is_set_to_zero_only_with_torque_off(so101: BusEmulator, bridge: Bridge) -> None:
    so101.servos[1].poke("return_delay", 250)
    so101.servos[2].poke("return_delay", 250)
    so101.servos[2].poke("torque_enable", 1)
    warnings = bridge.start()
    assert so101.servos[1].peek("return_delay") == 0 and so101.servos[1].peek("lock") == 1
    assert so101.servos[2].peek("return_delay") == 250, "EEPROM written while torque was on"
    assert any("servo 2 (shoulder_lift) has return delay 250" in w and "torque on: not changed" in w for w in warnings)


def test_torque_comes_on_at_the_first_command_holding_where_the_servo_is(
    so101: BusEmulator, bridge: Bridge, clock: Clock
) -> None:
    bridge.start()
    servo = so101.servos[1]
    start = servo.peek("present_position")
    bridge.command("shoulder_pan", 0.0)
    run(bridge, clock, 1)
    assert servo.torque and abs(servo.peek("goal_position") - start) <= 1
    assert not so101.servos[2].torque, "a servo without a command was turned on"


def test_goals_are_clamped_to_the_narrower_of_urdf_and_eeprom_and_capped_per_step(
    so101: BusEmulator, bridge: Bridge, clock: Clock
) -> None:
    bridge.start()
    for joint, (lower, upper) in URDF_LIMITS.items():
        bridge.set_limits(joint, lower, upper)
    state = bridge.servos["shoulder_pan"]
    speed = state.spec.speed_limit
    bridge.command("shoulder_pan", 10.0)  # far beyond every limit
    run(bridge, clock, 1)
    first = so101.servos[1].peek("goal_position")
    run(bridge, clock, 1, dt=0.01)
    step = so101.servos[1].peek("goal_position") - first
    assert abs(step - speed * 0.01 / TICK) <= 1, f"a step of {step} ticks in 10 ms at {speed} rad/s"
    for _ in range(400):  # commanded all along, as the driver does every cycle
        bridge.command("shoulder_pan", 10.0)
        run(bridge, clock, 1, dt=0.01)
    eeprom_max = load_calibration(CALIBRATION)["shoulder_pan"].range_max
    urdf_max = state.mapping.to_ticks(URDF_LIMITS["shoulder_pan"][1])
    assert so101.servos[1].peek("goal_position") == min(eeprom_max, math.floor(urdf_max + 1e-6))


def test_command_silence_holds_where_the_servo_is(so101: BusEmulator, bridge: Bridge, clock: Clock) -> None:
    bridge.start()
    bridge.command("elbow_flex", 0.5)
    run(bridge, clock, 20, dt=0.01)
    clock.now += 0.3  # silence
    bridge.cycle()
    settle(bridge)
    state = bridge.servos["elbow_flex"]
    assert state.silenced and so101.servos[3].peek("goal_position") == round(state.present)
    assert any("no command for 0.25 s: holding" in text for _, text in bridge.events.take())
    assert so101.servos[3].torque


def test_command_silence_with_torque_off(so101: BusEmulator, so101_bus: Bus, clock: Clock) -> None:
    made = Bridge(so101_bus, servo_specs("feetech", JOINTS, so101_specs(), CALIBRATION), clock=clock,
                  silence_action="torque_off")  # fmt: skip
    made.start()
    made.command("wrist_flex", 0.1)
    run(made, clock, 2)
    assert so101.servos[4].torque
    clock.now += 0.3
    made.cycle()
    settle(made)
    assert not so101.servos[4].torque
    made.command("wrist_flex", 0.1)  # a command again: seeded where it is, torque on
    run(made, clock, 1)
    assert so101.servos[4].torque


@pytest.mark.parametrize("fault", [Fault.DROP, Fault.CORRUPT, Fault.PARTIAL])
def test_a_bad_reply_never_becomes_a_position(so101: BusEmulator, bridge: Bridge, clock: Clock, fault: Fault) -> None:
    bridge.start()
    so101.faults.inject(fault, 10, 5)  # more than the retries: servo 5 is missing this cycle
    feedback = {f.joint for f in bridge.cycle()}
    assert "wrist_roll" not in feedback and len(feedback) == 5
    assert any("wrist_roll" in text for _, text in bridge.events.take())
    while so101.faults.pending():
        bridge.cycle()
    assert "wrist_roll" in {f.joint for f in bridge.cycle()}


def test_overheating_turns_that_servo_off_and_stops_its_feedback(
    so101: BusEmulator, bridge: Bridge, clock: Clock
) -> None:
    bridge.start()
    bridge.command("elbow_flex", 0.0)
    bridge.command("wrist_flex", 0.0)
    run(bridge, clock, 2)
    so101.servos[3].overheat(so101.now())
    assert "elbow_flex" in {f.joint for f in bridge.cycle()}, "one read of the status bits put it out of service"
    feedback = {f.joint for f in bridge.cycle()}
    assert "elbow_flex" not in feedback and "wrist_flex" in feedback
    assert not so101.servos[3].torque and so101.servos[4].torque
    text = " ".join(t for _, t in bridge.events.take())
    assert "servo 3 (elbow_flex) reports a hardware error: overheating" in text
    bridge.poll()
    assert bridge.servos["wrist_flex"].temperature == pytest.approx(30.0)


def test_a_vanished_port_is_a_port_error_at_once(so101: BusEmulator, bridge: Bridge) -> None:
    bridge.start()
    so101.close_port()
    with pytest.raises(BridgeError) as raised:
        bridge.cycle()
    assert raised.value.kind == "port" and so101.path in str(raised.value)


def test_torque_off_at_the_end(so101: BusEmulator, bridge: Bridge, clock: Clock) -> None:
    bridge.start()
    for joint in JOINTS:
        bridge.command(joint, 0.0)
    run(bridge, clock, 2)
    assert all(s.torque for s in so101.servos.values())
    so101.faults.inject(Fault.DROP, 4, 2)  # retried until it answers
    assert bridge.torque_off(attempts=5) == []
    assert not any(s.torque for s in so101.servos.values())


def test_dynamixel_servos_without_a_calibration_file() -> None:
    emulator = BusEmulator.dynamixel([1, 2], "xl430-w250", timing=False)
    emulator.start()
    bus = Bus.open(emulator.path, DYNAMIXEL, baud=1_000_000, latency=LATENCY, retries=3)
    try:
        servos = {"a": {"id": 1, "model": "xl430-w250"}, "b": {"id": 2, "model": "xl430-w250", "direction": -1}}
        specs = servo_specs("dynamixel", ["a", "b"], servos)
        made = Bridge(bus, specs, max_step_time=1.0)
        made.start()
        assert {f.joint: round(f.position, 6) for f in made.cycle()} == {"a": 0.0, "b": -0.0}
        made.command("b", 0.1)
        made.cycle()
        settle(made)
        assert emulator.servos[2].torque
        emulator.servos[2].overheat(emulator.now())
        made.cycle()
        made.cycle()
        assert made.servos["b"].failed and "overheating" in made.describe(made.servos["b"])
        assert made.torque_off() == []
    finally:
        bus.close()
        emulator.stop()


def test_setup_errors_name_the_parameter() -> None:
    with pytest.raises(BridgeSetupError, match="servos.gripper.model"):
        servo_specs("feetech", ["gripper"], {"gripper": {"id": 6, "model": "xl430-w250"}})
    with pytest.raises(BridgeSetupError, match="ID 1 is also a's"):
        servo_specs("feetech", ["a", "b"], {"a": {"id": 1, "model": "sts3215"}, "b": {"id": 1, "model": "sts3215"}})
    with pytest.raises(BridgeSetupError, match="gives motor 'shoulder_pan' ID 1"):
        servo_specs("feetech", ["shoulder_pan"], {"shoulder_pan": {"id": 9, "model": "sts3215"}}, CALIBRATION)
    with pytest.raises(BridgeSetupError, match="no calibration file"):
        servo_specs("feetech", ["a"], {"a": {"id": 1, "model": "sts3215"}}, "/nonexistent.json")
    specs = servo_specs("feetech", ["a"], {"a": {"id": 1, "model": "sts3215"}})
    assert specs[0].speed_limit == 2.0 and specs[0].calibration.range_max == 4095


def test_the_gripper_maps_lerobots_percent_onto_the_urdf_limits(tmp_path: Path) -> None:
    calibration = load_calibration(CALIBRATION)["gripper"]
    mapping = Mapping.of(calibration, 1, "percent", URDF_LIMITS["gripper"])
    assert mapping.to_angle(calibration.range_min) == pytest.approx(URDF_LIMITS["gripper"][0])
    assert mapping.to_angle(calibration.range_max) == pytest.approx(URDF_LIMITS["gripper"][1])
    angle = Mapping.of(calibration, -1, "angle", None)
    assert angle.to_angle(calibration.mid) == pytest.approx(0.0) and angle.slope == pytest.approx(-TICK)
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps({"a": {"id": 1, "drive_mode": 1, "homing_offset": 0, "range_min": 0, "range_max": 4095}})
    )
    flipped = servo_specs("feetech", ["a"], {"a": {"id": 1, "model": "sts3215"}}, str(path))[0]
    assert flipped.mapping_for(None).slope == pytest.approx(-TICK)


def test_latency_timer_warning_says_how_to_set_it() -> None:
    assert latency_timer_warning("/dev/ttyUSB0", 1) is None
    text = latency_timer_warning("/dev/ttyUSB0", 16)
    assert text and "16 ms" in text and "echo 1 | sudo tee /sys/bus/usb-serial/devices/ttyUSB0/latency_timer" in text
    assert latency_timer_warning("/dev/pts/0") is None  # a pty has none


def test_cycle_stats() -> None:
    stats = CycleStats()
    for i in range(101):
        stats.record(i * 0.005, 0.001 if i < 99 else 0.004)
    assert stats.rate() == pytest.approx(200.0) and stats.p99() == pytest.approx(0.004)

"""The emulator's servos: motion against closed-form results, torque gating, limits, hand moves, the CLI."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.bus_helpers import LATENCY, ManualClock
from hypothesis import given
from hypothesis import strategies as st

from bb_robot.bringup.config import read_config
from bb_robot.buses.bridge import Bridge
from bb_robot.buses.bridge_setup import servo_sections, servo_specs
from bb_robot.buses.dynamixel import DYNAMIXEL
from bb_robot.buses.emulator import KOCH_FOLLOWER_MODELS, BusEmulator, EmulatorError
from bb_robot.buses.emulator_control import ControlError, ControlServer, ScriptPlayer, move_joint, read_script
from bb_robot.buses.emulator_motion import INSTANT, plan, time_to_goal
from bb_robot.buses.emulator_servo import EmulatedServo
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.tables import model
from bb_robot.buses.transport import Bus
from bb_robot.buses.units import ticks_to_angle

STS = model("sts3215")
XL = model("xl430-w250")
REPO = Path(__file__).resolve().parents[2]


def sts_servo(**eeprom: int) -> EmulatedServo:
    servo = EmulatedServo(STS, 1, {"lock": 0, **eeprom}, present=1000)
    return servo


def write(servo: EmulatedServo, name: str, value: int, t: float = 0.0) -> int:
    register = servo.model.register(name)
    return servo.write(register.address, register.encode(value), t)


# ------------------------------------------------------------------ the profile, closed form
@given(
    distance=st.floats(1.0, 4000.0),
    speed=st.floats(10.0, 4000.0),
    acceleration=st.floats(10.0, 1e5),
    sign=st.sampled_from([-1.0, 1.0]),
)
def test_a_profile_from_rest_reaches_the_goal_in_the_closed_form_time(
    distance: float, speed: float, acceleration: float, sign: float
) -> None:
    profile = plan(100.0, 0.0, 100.0 + sign * distance, speed, acceleration, 2.0)
    expected = time_to_goal(distance, speed, acceleration)
    assert profile.end - 2.0 == pytest.approx(expected, rel=1e-9)
    assert profile.state(profile.end) == (100.0 + sign * distance, 0.0)
    position, velocity = profile.state(2.0 + expected / 2)  # symmetric: half way at half time
    assert position == pytest.approx(100.0 + sign * distance / 2, rel=1e-6)
    assert abs(velocity) <= speed * (1 + 1e-9)


@given(
    start_velocity=st.floats(-3000.0, 3000.0),
    goal=st.floats(-2000.0, 2000.0),
    acceleration=st.floats(100.0, 1e4),
)
def test_a_profile_from_motion_never_exceeds_its_limits_and_stops_on_the_goal(
    start_velocity: float, goal: float, acceleration: float
) -> None:
    speed = 1500.0
    profile = plan(0.0, start_velocity, goal, speed, acceleration, 0.0)
    assert profile.state(profile.end + 1.0) == (goal, 0.0)
    end = profile.segments[-1].at(profile.segments[-1].duration) if profile.segments else (goal, 0.0)
    assert end[0] == pytest.approx(goal, abs=1e-6) and end[1] == pytest.approx(0.0, abs=1e-6)
    for segment in profile.segments:
        assert abs(segment.acceleration) == pytest.approx(acceleration) or segment.acceleration == 0.0
        assert abs(segment.velocity) <= max(speed, abs(start_velocity)) * (1 + 1e-9)


def test_feetech_motion_follows_goal_speed_and_acceleration_registers() -> None:
    servo = sts_servo()
    write(servo, "torque_enable", 1)
    write(servo, "goal_velocity", 800)  # ticks/s
    write(servo, "acceleration", 20)  # 2000 ticks/s²
    write(servo, "goal_position", 3000, t=1.0)
    expected = time_to_goal(2000, 800, 2000)  # 2000/800 + 800/2000 = 2.9 s
    assert servo.profile.end - 1.0 == pytest.approx(expected) == pytest.approx(2.9)
    at = 1.0 + 0.2  # still accelerating: x = a t² / 2
    assert servo.read(56, 2, at) == STS.register("present_position").encode(round(1000 + 0.5 * 2000 * 0.2**2))
    assert servo.peek("moving") == 1 and servo.peek("present_velocity") == 400
    assert servo.read(56, 2, 1.0 + expected) == STS.register("present_position").encode(3000)
    assert servo.peek("moving") == 0


def test_dynamixel_motion_uses_profile_velocity_and_acceleration_units() -> None:
    servo = EmulatedServo(XL, 1, present=1000)
    write(servo, "profile_velocity", 100)  # 100 x 0.229 rev/min
    write(servo, "profile_acceleration", 50)  # 50 x 214.577 rev/min²
    write(servo, "torque_enable", 1)
    write(servo, "goal_position", 3000)
    speed = 100 * 0.229 * 4096 / 60
    acceleration = 50 * 214.577 * 4096 / 3600
    assert servo.profile.end == pytest.approx(time_to_goal(2000, speed, acceleration))


def test_zero_speed_and_acceleration_mean_top_speed_without_a_ramp() -> None:
    servo = sts_servo()
    write(servo, "torque_enable", 1)
    write(servo, "goal_position", 1000 + 1707)
    assert servo.speed_limits() == (STS.no_load_speed, INSTANT)
    assert servo.profile.end == pytest.approx(1707 / STS.no_load_speed, rel=1e-3)  # not an instant jump


def test_torque_gating_eeprom_lock_and_limits() -> None:
    servo = sts_servo(min_position_limit=500, max_position_limit=3500)
    write(servo, "lock", 1)
    write(servo, "max_position_limit", 3000)
    assert servo.peek("max_position_limit") == 3500 and "lock" in servo.refusals[-1].reason
    write(servo, "lock", 0)
    write(servo, "torque_enable", 1)
    assert servo.peek("goal_position") == 1000  # torque on holds where it is
    write(servo, "homing_offset", 100)
    assert servo.peek("homing_offset") == 0 and "torque is on" in servo.refusals[-1].reason
    write(servo, "goal_position", 4000)
    assert servo.peek("goal_position") == 3500  # Feetech clamps to the limits
    assert not servo.move_by_hand(2000, 0.0)  # torque on: the hand cannot move it


def test_the_homing_offset_moves_the_present_position() -> None:
    servo = sts_servo()
    write(servo, "homing_offset", -500)
    assert servo.read(56, 2, 0.0) == STS.register("present_position").encode(1500)
    dxl = EmulatedServo(XL, 1, {"homing_offset": 0}, present=1000)
    write(dxl, "homing_offset", -500)
    assert XL.register("present_position").decode(dxl.read(132, 4, 0.0)) == 500


# ------------------------------------------------------------------ the emulator on its pty
@pytest.fixture
def clocked() -> Iterator[tuple[BusEmulator, Bus, ManualClock]]:
    clock = ManualClock()
    emulator = BusEmulator.so101(timing=False, clock=clock)
    emulator.start()
    bus = Bus.open(emulator.path, FEETECH, baud=1_000_000, latency=LATENCY)
    yield emulator, bus, clock
    bus.close()
    emulator.stop()


def test_a_goal_over_the_pty_is_reached_at_the_servo_speed(clocked: tuple[BusEmulator, Bus, ManualClock]) -> None:
    emulator, bus, clock = clocked
    for name, value in (("torque_enable", 1), ("goal_velocity", 1000), ("acceleration", 10)):
        bus.write(1, STS.register(name), value)
    bus.sync_write(STS.block(["goal_position"]), {1: {"goal_position": 2048 + 1200}})  # within 797..3299
    present = STS.block(["present_position"])
    assert bus.sync_read([1], present).values[1]["present_position"] == 2048
    travel = time_to_goal(1200, 1000, 1000)  # 2.2 s
    clock.t = travel / 2
    assert bus.sync_read([1], present).values[1]["present_position"] == 2048 + 600
    clock.t = travel
    assert bus.sync_read([1], present).values[1]["present_position"] == 2048 + 1200


def test_a_motion_script_moves_torque_off_joints_only(
    clocked: tuple[BusEmulator, Bus, ManualClock], tmp_path: Path
) -> None:
    emulator, bus, clock = clocked
    script = tmp_path / "motion.txt"
    script.write_text("# time joint position\n0.5 shoulder_pan 0.3\n1.0, elbow_flex, 2100t\n2.0 shoulder_pan -0.2\n")
    moves = read_script(script)
    assert [(m.time, m.joint) for m in moves] == [(0.5, "shoulder_pan"), (1.0, "elbow_flex"), (2.0, "shoulder_pan")]
    bus.write(3, STS.register("torque_enable"), 1)  # elbow_flex holds against the hand
    clock.t = 10.0  # every move is due at once
    player = ScriptPlayer(emulator, moves)
    player.start()
    player.stop()
    assert player.refused == 1
    values = bus.sync_read([1, 3], STS.block(["present_position"])).values
    pan = emulator.calibrations["shoulder_pan"]
    assert ticks_to_angle(values[1]["present_position"], pan) == pytest.approx(-0.2, abs=2 * math.pi / 4096)
    assert values[3]["present_position"] == 2048


def test_bad_scripts_and_joints_name_the_file_line_and_joint(so101: BusEmulator, tmp_path: Path) -> None:
    script = tmp_path / "bad.txt"
    script.write_text("0.5 shoulder_pan 0.3\nsoon elbow_flex 1\n")
    with pytest.raises(ControlError, match=r"bad.txt:2: expected 'time joint position'"):
        read_script(script)
    with pytest.raises(EmulatorError, match="no joint or servo 'knee'.*shoulder_pan"):
        move_joint(so101, "knee", 0.1)
    with pytest.raises(ControlError, match="neither radians nor ticks"):
        move_joint(so101, "gripper", "wide")


def test_the_control_socket_moves_injects_and_reports(so101: BusEmulator, so101_bus: Bus, tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    server = ControlServer(so101, path)
    server.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client, client.makefile("rw") as stream:
            client.connect(str(path))

            def ask(request: dict[str, object]) -> dict[str, object]:
                stream.write(json.dumps(request) + "\n")
                stream.flush()
                answer: dict[str, object] = json.loads(stream.readline())
                return answer

            assert ask({"move": "wrist_flex", "ticks": 2500}) == {"ok": True, "moved": True}
            assert so101_bus.read(4, STS.register("present_position")) == 2500
            assert ask({"fault": "drop", "count": 1, "id": 2}) == {"ok": True}
            assert so101_bus.read(2, STS.register("present_position")) == 2048 and so101_bus.stats.timeouts == 1
            assert ask({"overheat": 5}) == {"ok": True} and so101.servos[5].overheated
            servos = ask({"state": True})["servos"]
            assert isinstance(servos, list) and servos[3]["joint"] == "wrist_flex" and servos[3]["ticks"] == 2500
            assert ask({"jump": 1})["ok"] is False
    finally:
        server.stop()
    assert not path.exists()


@contextlib.contextmanager
def emulator_process(link: Path, *options: str) -> Iterator[str]:
    """``bb-robot bus-emulator OPTIONS --link LINK --no-timing`` as a process: its pty's path, printed first.
    It must end with exit status 0 on SIGTERM."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "bb_robot.cli", "bus-emulator", *options, "--link", str(link), "--no-timing"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_command_line_serves_a_linked_pty_until_sigterm(tmp_path: Path) -> None:
    link = tmp_path / "so101"
    with emulator_process(link, "--arm", "so101") as path:
        assert path.startswith("/dev/pts/") and os.readlink(link) == path
        bus = Bus.open(str(link), FEETECH, baud=1_000_000, latency=LATENCY)
        try:
            assert [r.servo_id for r in bus.broadcast_ping(max_replies=6)] == [1, 2, 3, 4, 5, 6]
        finally:
            bus.close()
    assert not link.is_symlink()


def test_the_koch_arm_is_the_servos_koch_follower_yaml_configures(tmp_path: Path) -> None:
    """``--arm koch``: the bridge's start-up (each servo's model number checked against the file's
    model) accepts the shipped koch_follower.yaml's bus section, as ``bb-robot up --config
    koch_follower.yaml --bus-port`` runs it."""
    link = tmp_path / "koch"
    with emulator_process(link, "--arm", "koch") as path:
        assert path.startswith("/dev/pts/")
        values = read_config("koch_follower.yaml").bus
        sections = servo_sections(values)
        assert {int(s["id"]): s["model"] for s in sections.values()} == KOCH_FOLLOWER_MODELS
        specs = servo_specs("dynamixel", [str(j) for j in values["joints"]], sections)
        bus = Bus.open(str(link), DYNAMIXEL, baud=int(values["baud"]), latency=LATENCY)
        try:
            bridge = Bridge(bus, specs)
            bridge.start()
            assert set(bridge.servos) == set(values["joints"])
        finally:
            bus.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--protocol", "dynamixel"], "--ids 1 2 3"),
        (["--protocol", "dynamixel", "--ids", "1", "2", "3", "--model", "xl430-w250", "xl330-m288"],
         "--model gives 2 models for 3 --ids"),
        (["--arm", "koch", "--ids", "1"], "--arm koch has its six Dynamixel servos"),
        (["--arm", "koch", "--protocol", "feetech"], "--arm koch has its six Dynamixel servos"),
        (["--ids", "1"], "--ids and --model are for --protocol dynamixel"),
    ],
)  # fmt: skip
def test_the_command_line_refuses_options_that_do_not_fit(args: list[str], message: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-m", "bb_robot.cli", "bus-emulator", *args],
                            capture_output=True, text=True, env=env, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_dynamixel_servos_of_several_models_answer_with_their_own_model_numbers() -> None:
    emulator = BusEmulator.dynamixel([1, 2], ["xl430-w250", "xl330-m288"], timing=False)
    assert [emulator.servos[i].model.name for i in (1, 2)] == ["xl430-w250", "xl330-m288"]
    assert emulator.servos[1].model.model_number != emulator.servos[2].model.model_number
    with pytest.raises(ValueError, match="2 Dynamixel models for 3 IDs"):
        BusEmulator.dynamixel([1, 2, 3], ["xl430-w250", "xl330-m288"], timing=False)

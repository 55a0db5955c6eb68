"""The Koch v1.1 follower's shipped config (``config/koch_follower.yaml``: Dynamixel X servos of two
models, no calibration) end to end, as a user without the arm runs it (the file's header):

    bb-robot bus-emulator --arm koch --link /tmp/koch
    bb-robot up /path/to/koch.urdf --config koch_follower.yaml --bus-port /tmp/koch --demo

bb_robot ships no Koch model; the SO-101's URDF has the same joint names (LeRobot's), as
test_shipped_configs.py uses it. The emulator is ``bb-robot bus-emulator --arm koch --no-timing``
in a process of its own; the file is the shipped one with the tests' allowances for a loaded machine
(``loaded_machine_config``: staleness timing and the bridge's latency allowance, not the servos or
the limits). Asserted: exit 0 and the demo goal's success, the bridge's start-up check of each
servo's model number passed (it ends the bridge otherwise), every servo's goal moved away from its
start and its torque off after the command, and the last joint_states are the emulated present
positions through the uncalibrated mapping (each servo's whole turn, 2048 at the joint's zero).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.bus_processes import Emulator, loaded_machine_config, up_demo
from helpers.nodes import Probe
from helpers.ros_distro import REPO_ROOT

from bb_robot.bringup.config import read_config

CONFIG = REPO_ROOT / "config" / "koch_follower.yaml"
URDF = REPO_ROOT / "models" / "so101" / "so101_new_calib.urdf"
#: One tick of a 4096-tick turn (rad): the resolution the joint states are compared at.
TICK = 2 * math.pi / 4096


@pytest.fixture
def koch(tmp_path: Path) -> Iterator[Emulator]:
    with Emulator(tmp_path, name="koch", arm="koch") as made:
        yield made


def test_up_demo_moves_the_emulated_koch_arm_through_its_shipped_config(
    koch: Emulator, probe: Probe, tmp_path: Path
) -> None:
    bus = read_config(str(CONFIG)).bus
    ids = {joint: int(bus[f"servos.{joint}.id"]) for joint in bus["joints"]}
    start = koch.presents()
    config = loaded_machine_config(tmp_path, CONFIG)
    last, servos = up_demo(probe, koch, tmp_path, str(URDF), "--config", str(config))
    moved = [joint for joint, i in ids.items() if abs(servos[i]["ticks"] - start[i]) > 20]
    assert sorted(moved) == sorted(ids), f"the demo moved only {moved} of {sorted(ids)}"
    final = dict(zip(last.name, last.position, strict=True))
    for joint, servo_id in ids.items():
        expected = (servos[servo_id]["ticks"] - 2048) * TICK
        assert final[joint] == pytest.approx(expected, abs=2 * TICK), joint

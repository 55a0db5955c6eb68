"""The bus emulator as a process of its own, the shipped bus configs for a loaded machine, and ``bb-robot up
--demo`` on the emulator: what the node tests of the bus bridge (test/nodes/test_bus_node.py,
test_bus_koch.py) and of leader-follower teleop (test/nodes/test_teleop_leader.py) start."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

from helpers.bringup_helpers import REPO_ROOT, Launched, environment, require_launch, up_command
from helpers.nodes import LOADED_MACHINE_TIMING, Probe

CONFIG = REPO_ROOT / "config" / "so101.yaml"


class Emulator:
    """``bb-robot bus-emulator --arm ARM`` on a pty linked at ``directory/name``, driven through its control socket."""

    def __init__(self, directory: Path, *options: str, name: str = "so101", arm: str = "so101") -> None:
        self.link, self.socket = directory / name, directory / f"control-{uuid.uuid4().hex[:6]}"
        self.log_path = directory / f"emulator-{uuid.uuid4().hex[:6]}.log"
        command = [sys.executable, "-m", "bb_robot.cli", "bus-emulator", "--arm", arm, "--no-timing",
                   "--link", str(self.link), "--control", str(self.socket), *options]  # fmt: skip
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=environment())
        deadline = time.monotonic() + 60
        while not (self.socket.exists() and self.link.is_symlink()):
            assert self.process.poll() is None and time.monotonic() < deadline, self.log_path.read_text()
            time.sleep(0.05)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(str(self.socket))
            connection.sendall((json.dumps(request) + "\n").encode())
            answer = json.loads(connection.makefile().readline())
        assert answer["ok"], answer
        return answer

    def servos(self) -> dict[int, dict[str, Any]]:
        return {s["id"]: s for s in self.ask({"state": True})["servos"]}

    def torques(self) -> list[bool]:
        return [s["torque"] for s in self.servos().values()]

    def presents(self) -> dict[int, float]:
        return {i: s["ticks"] for i, s in self.servos().items()}

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)
        self._log.close()


#: The bridge's allowance (s) per transaction beyond the wire time when the servos are the emulator: a
#: process of its own, which a loaded or CPU-throttled host schedules late (under ``scripts/slow-host
#: --cpu 46`` hundreds of its replies came after the shipped 4 ms, and the driver disarmed on the missing
#: feedback). Real servos answer on the wire whatever the host's load, and the bridge takes a reply
#: that came while it was descheduled. Below the emulator's ``--late-by`` (0.05 s), so a late reply stays late.
EMULATOR_LATENCY = 0.025


def loaded_machine_config(directory: Path, config: Path = CONFIG) -> Path:
    """A shipped bus config (so101.yaml unless ``config``) for a loaded CI machine: the driver's staleness
    timing (LOADED_MACHINE_TIMING: a bridge starved of CPU for 0.1 s must not disarm the driver before the
    fault under test does) and the bridge's latency allowance for the emulator (EMULATOR_LATENCY)."""
    data = yaml.safe_load(config.read_text())
    driver = data["/**/driver"]["ros__parameters"]
    driver["stale_timeout"] = LOADED_MACHINE_TIMING["stale_timeout"]
    driver["actuators"].update(LOADED_MACHINE_TIMING["actuators"])
    data["/**/bus"]["ros__parameters"]["latency"] = EMULATOR_LATENCY
    path = directory / f"{config.stem}_loaded.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def up_demo(probe: Probe, emulator: Emulator, directory: Path, *args: str) -> tuple[Any, dict[int, dict[str, Any]]]:
    """``bb-robot up ARGS --bus-port <the emulator's pty> --demo`` to its end: it must exit 0 with the demo
    goal succeeded and every servo's torque off after it.

    Returns:
        The last JointState this probe received (every message taken), and the emulated servos then.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    require_launch()
    states = probe.subscribe(
        JointState, "/joint_states", QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    )
    run = Launched(up_command(*args, "--bus-port", str(emulator.link), "--demo"), directory / "up.log", environment())
    status = run.wait(300)
    log = run.log()
    assert status == 0, log
    assert "demo goal succeeded" in log, log
    assert not any(emulator.torques()), "torque left on after the command ended"
    assert probe.spin_until(lambda: len(states) > 10)
    assert probe.spin_until_quiet(lambda: len(states))  # every message taken: the last is the last published
    return states[-1], emulator.servos()

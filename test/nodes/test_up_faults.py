"""``bb-robot up`` when the driver process dies: the client says "driver lost", a running demo ends
with exit 1 (not a hang), and with ``--respawn`` the driver comes back disarmed although its
parameter file says ``auto_arm: true``, reported in the view and on ``/diagnostics``.

Real processes: the command from this source tree starts the launch, which starts the nodes; the
test kills the driver with SIGKILL (found below the launch by its ``__node:=driver`` argument).
Every process runs UDP-only, so that the killed one leaves no shared memory behind.  Bounded
waits; the assertions are on the order of what the command says.  Under ``CI=true`` these fail
(not skip) when launch is not installed.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil
import yaml
from helpers.bringup_helpers import REPO_ROOT, Launched, environment, require_launch, up_command

if TYPE_CHECKING:
    from helpers.nodes import Probe


def _driver_pid(run: Launched) -> int:
    for child in psutil.Process(run.process.pid).children(recursive=True):
        try:
            if "__node:=driver" in child.cmdline():
                return child.pid
        except psutil.Error:
            continue
    raise AssertionError(f"no driver process below {run.command}:\n{run.log()}")


def test_a_demo_whose_driver_dies_ends_with_exit_1_driver_lost(tmp_path: Path) -> None:
    require_launch()
    env = environment(FASTDDS_BUILTIN_TRANSPORTS="UDPv4")
    run = Launched(up_command("--demo", "--timeout", "90"), tmp_path / "up.log", env)
    try:
        run.wait_for_log("demo goal sent", timeout=180)
        os.kill(_driver_pid(run), signal.SIGKILL)
        status = run.wait(120)
    finally:
        run.watch()
    output = run.log()
    assert status == 1, output
    lost = output.index("driver lost: its process")
    assert output.index("demo goal sent") < lost < output.index("demo goal failed: driver lost"), output
    assert "demo goal succeeded" not in output
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"


def test_respawn_brings_the_driver_back_disarmed_and_says_so(probe: Probe, tmp_path: Path) -> None:
    require_launch()
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    config = yaml.safe_load((REPO_ROOT / "config" / "bb_arm.yaml").read_text())
    config["/**/driver"]["ros__parameters"]["auto_arm"] = True  # the respawn must not honour it
    path = tmp_path / "bb_arm_auto_arm.yaml"
    path.write_text(yaml.safe_dump(config))
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    arm_state = probe.subscribe(String, "/driver/arm_state", latched)
    diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics", QoSProfile(depth=100))
    env = environment(FASTDDS_BUILTIN_TRANSPORTS="UDPv4")
    run = Launched(up_command("--config", str(path), "--respawn", "--timeout", "90"), tmp_path / "up.log", env)
    try:
        run.wait_for_log("driver armed", timeout=180)  # auto_arm at the first start
        first = _driver_pid(run)
        os.kill(first, signal.SIGKILL)
        run.wait_for_log("driver restarted", timeout=120)

        def respawned(status: Any) -> bool:
            return status.name.endswith("driver: arming") and "respawned 1 time(s)" in status.message

        assert probe.spin_until(lambda: any(respawned(s) for a in diagnostics for s in a.status), 90), run.log()
        assert probe.spin_until(lambda: bool(arm_state) and arm_state[-1].data == "disarmed", 30), run.log()
        assert _driver_pid(run) != first
        run.wait_for_log("warning: driver restarted 1 time(s)", timeout=30)  # the live view
        run.interrupt(signal.SIGINT, group=True)
        status = run.wait(90)
    finally:
        run.watch()
    output = run.log()
    assert status == 0, output
    assert output.index("driver armed") < output.index("driver lost: its process") < output.index("driver restarted")
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"

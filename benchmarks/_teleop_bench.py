"""Leader-follower teleop on two bus emulators: the rows of ``bench_bus.py`` on ``bb-robot teleop --leader``.

Both emulators run in this process with their timing model (1 Mbaud, 1 ms per transaction), so that
one clock stamps what each serves: the leader (``--arm so101_leader``: the leader's shipped
calibration) records every sync read teleop makes and the present position it served, the follower
(``--arm so101``) every goal the bridge writes.  ``bb-robot up --config so101.yaml --bus-port
<follower> --no-planning`` and ``bb-robot teleop --leader --leader-port <leader> --arm`` run as
processes of their own, as a user runs them.  Once teleop tracks, the leader's shoulder_pan is moved
by hand along a sine (±0.3 rad at 0.3 Hz: within so101.yaml's velocity and acceleration
limits).  Measured: the leader's reads per second (teleop's
loop), the follower's new goals per second, and the latency from a leader read to the follower's
goal write of the value that read gave: for each new shoulder_pan goal, the latest leader read
before it whose present position maps (leader calibration → angle → follower calibration) to it.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from bb_robot.buses.bridge_setup import Mapping
from bb_robot.buses.calibration import load_calibration, shipped_calibration
from bb_robot.buses.emulator import BusEmulator
from bb_robot.buses.emulator_control import move_joint
from bb_robot.buses.packets import Instruction
from bb_robot.cli.up import environment

REPO_ROOT = Path(__file__).resolve().parents[1]
JOINT = "shoulder_pan"
#: The leader's shoulder_pan moves as AMPLITUDE · sin(2π · FREQUENCY · t) (rad): at most 0.57 rad/s and
#: 1.1 rad/s², within so101.yaml's joint limits (1.5 rad/s, 3 rad/s²), so that the driver passes the
#: stream on unshaped and what is measured is the way from leader to follower, not the limits.
AMPLITUDE = 0.3
FREQUENCY = 0.3
#: The straight pieces the sine is moved in (s).
STEP = 0.02
#: How many leader reads before a goal write its source is looked for among (about 0.5 s at 200 Hz).
WINDOW = 100


def _record(emulator: BusEmulator, instruction: int, value: Callable[[], int], log: list[tuple[float, int]]) -> None:
    """Append ``(time, value())`` to ``log`` each time ``emulator`` serves ``instruction``."""
    serve = emulator.serve_request

    def served(servo_id: int, kind: int, params: bytes) -> list[tuple[int, bytes]]:
        replies = serve(servo_id, kind, params)
        if kind == instruction:
            log.append((time.monotonic(), value()))
        return replies

    emulator.serve_request = served  # type: ignore[method-assign]


def _loaded_machine_config(directory: Path) -> Path:
    """so101.yaml with the tests' timing for a loaded machine (stale_timeout 1 s, feedback_timeout 2 s, the
    bridge's latency allowance 50 ms): the emulators share this process, and a reply late by a few ms on a
    busy host must not disarm the follower before anything is measured (the rates and latencies are not
    changed by these allowances, only what counts as a failure)."""
    data = yaml.safe_load((REPO_ROOT / "config" / "so101.yaml").read_text())
    driver = data["/**/driver"]["ros__parameters"]
    driver["stale_timeout"] = 1.0
    driver["actuators"]["feedback_timeout"] = 2.0
    data["/**/bus"]["ros__parameters"]["latency"] = 0.05
    path = (directory / "bench_teleop_so101.yaml").resolve()
    path.write_text(yaml.safe_dump(data))
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "bb_robot.cli", *args]


def _stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def teleop_run(seconds: float, log_dir: Path, latency: float = 0.001) -> dict[str, float]:
    """Teleop for ``seconds`` of leader motion; returns the rates (Hz) and latencies (s).

    Raises:
        RuntimeError: teleop never tracked (its output is in ``log_dir``).
    """
    leader_calibration = load_calibration(shipped_calibration("so101_leader"))[JOINT]
    follower_calibration = load_calibration(shipped_calibration("so101"))[JOINT]
    leader = BusEmulator.so101(shipped_calibration("so101_leader"), latency=latency)
    follower = BusEmulator.so101(latency=latency)
    reads: list[tuple[float, int]] = []
    writes: list[tuple[float, int]] = []
    leader_servo, follower_servo = leader.servo_of(JOINT), follower.servo_of(JOINT)
    _record(leader, Instruction.SYNC_READ, lambda: leader_servo.peek("present_position"), reads)
    _record(follower, Instruction.SYNC_WRITE, lambda: follower_servo.peek("goal_position"), writes)
    leader_path, follower_path = leader.start(), follower.start()
    environment()  # the launch finds the package through the ament index, as `bb-robot up` sets it
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")
    up_log = open(log_dir / "bench_teleop_up.log", "wb")  # noqa: SIM115 - closed below
    teleop_log = log_dir / "bench_teleop.log"
    namespace = f"bench{uuid.uuid4().hex[:8]}"  # another robot in this ROS domain does not count
    config = _loaded_machine_config(log_dir)
    up = subprocess.Popen([sys.executable, "-m", "bb_robot.nodes.bringup_launch", f"config:={config}",
                           f"bus_port:={follower_path}", "planning:=false", f"namespace:={namespace}"],
                          stdout=up_log, stderr=subprocess.STDOUT, env=env, start_new_session=True)  # fmt: skip
    command = _cli("teleop", "--leader", "--leader-port", leader_path, "--arm", "--namespace", namespace)
    teleop = subprocess.Popen(command,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                              start_new_session=True)  # fmt: skip
    lines: list[str] = []
    tracking = threading.Event()

    def follow() -> None:
        assert teleop.stdout is not None
        with open(teleop_log, "w") as out:
            for line in teleop.stdout:
                lines.append(line)
                out.write(line)
                out.flush()
                if "tracking the leader" in line:
                    tracking.set()

    threading.Thread(target=follow, daemon=True).start()
    try:
        if not tracking.wait(240):
            raise RuntimeError(f"teleop never tracked the leader: see {teleop_log} and {up_log.name}")
        time.sleep(1.0)
        start = time.monotonic()
        first = len(reads), len(writes)
        while (now := time.monotonic()) < start + seconds:  # a sine in short straight pieces, by hand
            t = now - start + STEP
            move_joint(leader, JOINT, AMPLITUDE * math.sin(2 * math.pi * FREQUENCY * t), duration=STEP)
            time.sleep(STEP)
        end = time.monotonic()
        reads_in, writes_in = reads[first[0] :], writes[first[1] :]
    finally:
        _stop(teleop)
        _stop(up)
        up_log.close()
        leader.stop()
        follower.stop()
    to_angle = Mapping.of(leader_calibration, 1, "angle", None).to_angle
    to_ticks = Mapping.of(follower_calibration, 1, "angle", None).to_ticks
    mapped = [(t, round(to_ticks(to_angle(ticks)))) for t, ticks in reads_in]
    latencies = []
    previous = None
    cursor = 0
    for t_write, goal in writes_in:
        if goal == previous:
            continue
        previous = goal
        while cursor < len(mapped) and mapped[cursor][0] <= t_write:
            cursor += 1
        # The latest read before the write at which the leader reached the goal: the read before it had
        # not (its mapped position on the near side of the goal), this one had.
        for k in range(cursor - 1, max(0, cursor - WINDOW), -1):
            (_, before), (t_read, at) = mapped[k - 1], mapped[k]
            if before < goal <= at or at <= goal < before:
                latencies.append(t_write - t_read)
                break
    changes = sum(1 for a, b in zip(writes_in, writes_in[1:], strict=False) if a[1] != b[1])
    ordered = sorted(latencies)

    def pct(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    return {
        "read_rate": len(reads_in) / (end - start),
        "goal_rate": changes / (end - start),
        "write_rate": len(writes_in) / (end - start),
        "median": pct(0.5),
        "p99": pct(0.99),
        "matched": float(len(latencies)),
        "seconds": end - start,
    }

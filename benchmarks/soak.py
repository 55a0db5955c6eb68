"""Soak: ``bb-robot up``'s demo goal, repeated for hours, on the sim and mujoco backends.

    .venv/bin/python benchmarks/soak.py --hours 1                    # the documented run (not in CI)
    .venv/bin/python benchmarks/soak.py --minutes 12 --warmup 4      # a short run, said so in its table

Two systems run side by side, each in a ROS domain of its own: ``bringup.launch.py`` with
``config/bb_arm.yaml`` (control loop at 500 Hz), the view node on (``view:=true``, a Foxglove
server on a free port), one on ``backend:=sim`` and one on ``backend:=mujoco``.  This process arms
each driver and sends the demo goal of ``bb-robot up --demo`` (25 % then 75 % of every joint's
range, from where the arm is) again as soon as the previous one ends, counting the results.

Every ``--sample`` seconds (60) it samples the resident memory (RSS) and open file descriptors of
every process below each launch (psutil), and keeps each driver's own cycle counts from
``/diagnostics``.  Verdict: RSS grows at most 1 MB/h after the warm-up (``--warmup``, 10 minutes;
the least-squares slope of each process's samples after it), no goal failed, and at most 0.1 % of
the control cycles were skipped.  Writes its section of docs/benchmarks.md (``--no-docs``: not).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import numpy as np
import psutil

REPO_ROOT = _common.REPO_ROOT
BACKENDS = ("sim", "mujoco")
RSS_LIMIT_MB_PER_H = 1.0
SKIPPED_LIMIT = 0.001


@dataclass
class System:
    """One brought-up system and what was measured of it."""

    backend: str
    domain: int
    launch: subprocess.Popen[bytes]
    log: Path
    goals_sent: int = 0
    succeeded: int = 0
    failed: list[str] = field(default_factory=list)
    cycles: int = 0
    skipped: int = 0
    #: process label → [(seconds since start, RSS bytes, open fds)]
    samples: dict[str, list[tuple[float, int, int]]] = field(default_factory=dict)
    client: Any = None


def _label(process: psutil.Process) -> str:
    arguments = process.cmdline()
    node = next((a[len("__node:=") :] for a in arguments if a.startswith("__node:=")), "")
    return node or ("launch" if "bringup_launch" in " ".join(arguments) else Path(arguments[0]).name)


def _sample(system: System, since: float) -> None:
    try:
        root = psutil.Process(system.launch.pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for process in processes:
        try:
            with process.oneshot():
                label = f"{_label(process)} ({process.pid})"
                entry = (time.monotonic() - since, process.memory_info().rss, process.num_fds())
        except psutil.Error:
            continue
        system.samples.setdefault(label, []).append(entry)


class Client:
    """An rclpy node in the system's domain: arms the driver, repeats the demo goal, reads /diagnostics."""

    def __init__(self, system: System) -> None:
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger

        from bb_robot.cli.up_inputs import plan_bringup

        self.system = system
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, domain_id=system.domain)
        self.node = rclpy.create_node(f"soak_{system.backend}", context=self.context)
        self.plan = plan_bringup(None, config=str(REPO_ROOT / "config" / "bb_arm.yaml"), backend=system.backend)
        self.positions: dict[str, float] = {}
        self.node.create_subscription(JointState, "/joint_states", self._on_state, QoSProfile(depth=10))
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, QoSProfile(depth=10))
        self.arm = self.node.create_client(Trigger, "/driver/arm")
        self.action = ActionClient(self.node, FollowJointTrajectory, "/driver/follow_joint_trajectory")
        self._Trigger = Trigger
        self.busy = False
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - shutting down
            pass

    def _on_state(self, message: Any) -> None:
        self.positions = dict(zip(message.name, message.position, strict=False))

    def _on_diagnostics(self, message: Any) -> None:
        for status in message.status:
            if status.name.endswith("driver: control loop"):
                values = {v.key: v.value for v in status.values}
                if "cycles" in values:
                    self.system.cycles = int(values["cycles"])
                    self.system.skipped = int(values["skipped cycles"])

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not (self.arm.service_is_ready() and self.action.server_is_ready() and self.positions):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {self.system.backend} system did not come up (log: {self.system.log})")
            time.sleep(0.1)
        answer = self.arm.call_async(self._Trigger.Request())
        while not answer.done():
            time.sleep(0.05)
        if not answer.result().success:
            raise RuntimeError(f"the {self.system.backend} driver did not arm: {answer.result().message}")

    def send_demo(self) -> None:
        """Send the demo goal from where the arm is (when none is running)."""
        from bb_robot.bringup.demo import demo_points
        from bb_robot.nodes.up_client import demo_goal

        if self.busy:
            return
        joints = [j for j in self.plan.demo_joints if j.name in self.positions]
        goal = demo_goal([j.name for j in joints], demo_points(joints, self.positions))
        self.busy = True
        self.system.goals_sent += 1
        # (sent from the spinning thread: Jazzy's rclpy drops a goal response that thread reads
        # before another thread's send_goal_async has filed the goal)
        self.executor.create_task(lambda: self.action.send_goal_async(goal).add_done_callback(self._on_goal))

    def _on_goal(self, future: Any) -> None:
        handle = future.result()
        if not handle.accepted:
            self._end(f"goal {self.system.goals_sent} rejected")
            return
        handle.get_result_async().add_done_callback(self._on_result)

    def _on_result(self, future: Any) -> None:
        answer = future.result()
        if answer.status == 4 and answer.result.error_code == 0:  # SUCCEEDED
            self._end(None)
        else:
            self._end(f"goal {self.system.goals_sent}: status {answer.status}, {answer.result.error_string}")

    def _end(self, failure: str | None) -> None:
        if failure is None:
            self.system.succeeded += 1
        else:
            self.system.failed.append(failure)
        self.busy = False

    def close(self) -> None:
        import rclpy

        self.executor.shutdown(timeout_sec=2.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def _config(workdir: Path, collision_check: bool) -> Path:
    """config/bb_arm.yaml, or a copy of it with ``collision.check: false``."""
    import yaml

    path = REPO_ROOT / "config" / "bb_arm.yaml"
    if collision_check:
        return path
    data = yaml.safe_load(path.read_text())
    data["/**/driver"]["ros__parameters"]["collision"] = {"check": False}
    copy = workdir / "bb_arm_no_collision_check.yaml"
    copy.write_text(yaml.safe_dump(data))
    return copy


def _start(backend: str, domain: int, workdir: Path, config: Path) -> System:
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    env.setdefault("ROS_LOG_DIR", str(workdir / "ros_log"))
    log = workdir / f"{backend}.log"
    arguments = [f"config:={config}", f"backend:={backend}", "view:=true", "view_port:=0"]
    launch = subprocess.Popen(
        [sys.executable, "-m", "bb_robot.nodes.bringup_launch", *arguments],
        stdout=open(log, "wb"),  # noqa: SIM115 - the child holds it
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    return System(backend, domain, launch, log)


def _slope_mb_per_hour(samples: list[tuple[float, int, int]], warmup: float) -> float | None:
    after = [(t, rss) for t, rss, _ in samples if t >= warmup]
    if len(after) < 2:
        return None
    t = np.array([a[0] for a in after]) / 3600.0
    rss = np.array([a[1] for a in after]) / 1e6
    return float(np.polyfit(t, rss, 1)[0])


def _report(
    systems: list[System], seconds: float, warmup: float, sample: float, started: str, machine: str, load: str
) -> str:
    lines = [
        "## Soak: the demo goal repeated on sim and mujoco (`benchmarks/soak.py`)",
        "",
        f"Run {started}: **{seconds / 60:.0f} minutes** (`--hours` {seconds / 3600:.2f}), warm-up "
        f"{warmup / 60:g} min, a sample every {sample:g} s."
        + ("" if seconds >= 3600 else " A short run, not the 1-hour one: its slopes rest on few samples."),
        "",
        f"Machine: {machine}; load average at the end {load}.",
        "",
        "Each system: description node, driver (500 Hz, config/bb_arm.yaml), view node (Foxglove server), in a "
        "ROS domain of its own; the demo goal of `bb-robot up --demo` sent again as soon as the last one ended. "
        "*RSS slope*: least-squares MB/h of the samples after the warm-up.",
        "",
    ]
    rows = []
    verdicts = []
    for system in systems:
        for label, samples in sorted(system.samples.items()):
            slope = _slope_mb_per_hour(samples, warmup)
            first, last = samples[0], samples[-1]
            rows.append(
                [
                    system.backend,
                    label,
                    f"{first[1] / 1e6:.0f} → {last[1] / 1e6:.0f} MB",
                    "-" if slope is None else f"{slope:+.2f}",
                    f"{first[2]} → {last[2]}",
                ]
            )
            if slope is not None and slope > RSS_LIMIT_MB_PER_H:
                verdicts.append(f"{system.backend} {label}: RSS grows {slope:.2f} MB/h")
        share = system.skipped / (system.cycles + system.skipped) if system.cycles else 0.0
        if system.failed:
            verdicts.append(f"{system.backend}: {len(system.failed)} failed goal(s): {system.failed[0]}")
        if share > SKIPPED_LIMIT:
            verdicts.append(f"{system.backend}: {100 * share:.3f} % skipped cycles")
        lines.append(
            f"- **{system.backend}**: {system.goals_sent} goals sent, {system.succeeded} succeeded, "
            f"{len(system.failed)} failed; control loop {system.cycles} cycles, {system.skipped} skipped "
            f"({100 * share:.3f} %)"
        )
    lines += ["", _common.markdown_table(["backend", "process", "RSS", "RSS slope (MB/h)", "open fds"], rows), ""]
    verdict = "holds" if not verdicts else "**fails**: " + "; ".join(verdicts)
    lines.append(
        f"Verdict (RSS slope ≤ {RSS_LIMIT_MB_PER_H:g} MB/h after the warm-up, 0 failed goals, ≤ "
        f"{100 * SKIPPED_LIMIT:g} % skipped cycles): {verdict}."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=None, help="how long to run (hours)")
    parser.add_argument("--minutes", type=float, default=None, help="how long to run (minutes), for short runs")
    parser.add_argument("--warmup", type=float, default=10.0, help="minutes left out of the RSS slope (default 10)")
    parser.add_argument("--sample", type=float, default=60.0, help="seconds between samples (default 60)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    parser.add_argument(
        "--no-collision-check",
        action="store_true",
        help="run the drivers with collision.check false (said in the report)",
    )
    args = parser.parse_args(argv)
    if (args.hours is None) == (args.minutes is None):
        parser.error("give --hours H or --minutes M")
    seconds = args.hours * 3600 if args.hours is not None else args.minutes * 60
    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_soak_"))
    base = random.SystemRandom().randint(120, 200)
    started, since = _common.timestamp(), time.monotonic()
    machine = _common.machine_summary(("numpy", "mujoco"))  # with the load average at the start
    config = _config(workdir, not args.no_collision_check)
    systems = [_start(backend, base + i, workdir, config) for i, backend in enumerate(BACKENDS)]
    clients: list[Client] = []
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        for system in systems:
            system.client = Client(system)
            clients.append(system.client)
            system.client.wait_ready(120.0)
        print(f"soak: up; running {seconds / 60:.1f} min (logs in {workdir})", flush=True)
        next_sample = time.monotonic()
        deadline = since + seconds
        while time.monotonic() < deadline and not stop.is_set():
            for system in systems:
                system.client.send_demo()
            if time.monotonic() >= next_sample:
                for system in systems:
                    _sample(system, since)
                next_sample += args.sample
                summary = ", ".join(f"{s.backend} {s.succeeded} ok / {len(s.failed)} failed" for s in systems)
                print(f"  [{(time.monotonic() - since) / 60:5.1f} min] {summary}", flush=True)
            time.sleep(0.1)
        for system in systems:
            _sample(system, since)
        report = _report(
            systems, time.monotonic() - since, args.warmup * 60, args.sample, started, machine, _common.load_average()
        )
        if args.no_collision_check:
            report += "\n\nRun with `collision.check: false` (`--no-collision-check`)."
    finally:
        for client in clients:
            client.close()
        for system in systems:
            if system.launch.poll() is None:
                system.launch.send_signal(signal.SIGINT)
        for system in systems:
            try:
                system.launch.wait(60)
            except subprocess.TimeoutExpired:
                system.launch.kill()
    print(report)
    if not args.no_docs:
        _common.rewrite_doc_section("soak", report)
    return 0 if "holds" in report.splitlines()[-1] else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A fleet of arms on one machine: how the cost grows with the number of robots, and where it fails.

    .venv/bin/python benchmarks/bench_fleet.py            # N = 1, 2, 4, 8 (+ one step past the first failure)
    .venv/bin/python benchmarks/bench_fleet.py --quick    # shorter windows, a smoke test

Each arm is two processes, as one robot is deployed: a driver (``python -m
bb_robot.nodes.driver``, the embedded simulator, control loop at 500 Hz, ``joint_states`` at its
default 100 Hz) and a description node (``python -m bb_robot.nodes.description``, /tf for every
joint-state message), both in the namespace ``/arm<i>``, the description node with the frame
prefix ``arm<i>/``, all on one ROS domain.  For N = 1, 2, 4, 8 arms, and doubling on to one step
past the first N that fails (at most :data:`MAX_ARMS`), this process starts the 2N processes,
waits until every arm's /tf flows (the start-up time), then measures a window:

- **skipped cycles**: the drivers' own counts (``/diagnostics``, ``<node>: control loop``), as a
  share of the cycles due in the window (run + skipped);
- **lag p99** and its growth: the drivers' p99 of how late a cycle starts against its grid (over
  their last 2,047 cycles) at the start and at the end of the window (worst arm);
- **rates held**: joint_states per arm (raw subscription to ``/arm<i>/joint_states``) and /tf per
  arm (raw subscription to ``/tf``, counted by frame prefix), against the nominal 100 Hz;
- **CPU per arm**: user + system time of each arm's two processes (``/proc/<pid>/stat``) over
  the window, as a share of one core; the whole machine's busy share too (``/proc/stat``),
  which includes other users of a shared machine.

An N **fails** when more than 1 % of cycles are skipped, /tf or joint_states fall below 95 % of
their nominal rate on any arm, or the loop lag p99 exceeds 2 ms on any arm.  The report names
the likely cause: CPU (the machine's cores are busy), executor (rates fall while CPU is left)
or DDS discovery (arms not all up within the start-up timeout).  This process's own
subscriptions use rclpy's events executor and raw (undeserialised) messages; its CPU is
reported too.  Prints a Markdown report and rewrites the ``bench_fleet`` section of
``docs/benchmarks.md`` (``--no-docs`` leaves it alone).  Numbers are measurements, never assertions.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import _driver_process

SECTION = "bench_fleet"
BB_ARM = _common.REPO_ROOT / "models" / "bb_arm.urdf"
LOOP_RATE = 500.0
STATE_RATE = 100.0  # the driver's default publish_rate: joint_states, and so /tf, per arm
SKIPPED_LIMIT = 0.01
RATE_FLOOR = 0.95
LAG_LIMIT = 0.002
TARGET_ARMS = 4
MAX_ARMS = 16
STARTUP_TIMEOUT = 180.0


@dataclass
class Arm:
    """One arm: its driver and description-node processes, or (``description`` None) its share
    of a ``bb_robot.nodes.fleet`` process that runs ``shared`` arms."""

    index: int
    driver: _driver_process.DriverProcess
    description: _driver_process.DriverProcess | None
    shared: int = 1
    states: int = 0
    tf: int = 0

    @property
    def name(self) -> str:
        return f"arm{self.index}"

    @property
    def processes(self) -> list[_driver_process.DriverProcess]:
        return [self.driver] if self.description is None else [self.driver, self.description]

    def cpu(self) -> tuple[float, float]:
        """CPU seconds of the driver and the description node (a fleet's share: all in the first)."""
        if self.description is None:
            return self.driver.cpu_seconds() / self.shared, 0.0
        return self.driver.cpu_seconds(), self.description.cpu_seconds()

    def memory(self) -> float:
        """Resident memory (bytes) of the arm's processes, or its share of its fleet's (``VmRSS``)."""
        total = 0.0
        for process in self.processes:
            for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += float(line.split()[1]) * 1024
        return total / self.shared


@dataclass
class Result:
    arms: int
    startup: float | None
    window: float = 0.0
    skipped_share: float = 0.0
    lag_early: float = 0.0
    lag_late: float = 0.0
    state_rates: list[float] = field(default_factory=list)
    tf_rates: list[float] = field(default_factory=list)
    driver_cpu: float = 0.0  # share of one core, per arm (mean)
    description_cpu: float = 0.0
    machine_busy: float = 0.0  # share of all cores
    monitor_cpu: float = 0.0
    memory: float = 0.0  # bytes per arm (mean)
    failures: list[str] = field(default_factory=list)
    cause: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.failures)


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs so far (``/proc/stat``)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def _status_by_arm(diagnostics: list[Any], arms: list[Arm]) -> dict[int, dict[str, str]]:
    """The latest control-loop values of each arm's driver (node ``driver_arm<i>``)."""
    found = {arm.index: _driver_process.loop_status(diagnostics, f"driver_{arm.name}")[0] for arm in arms}
    return {index: values for index, values in found.items() if values}


def _dead(arms: list[Arm]) -> list[str]:
    """``<arm> <node>: <first line of its log>`` for each process of ``arms`` that exited."""
    dead = []
    for arm in arms:
        labels = ("driver", "description node") if arm.description is not None else ("fleet process",)
        for label, process in zip(labels, arm.processes, strict=True):
            if not process.alive:
                first = next((line for line in process.log().splitlines() if line.strip()), "no output")
                dead.append(f"{arm.name} {label}: {first.strip()[:120]}")
    return dead


def _fresh_status(executor: Any, diagnostics: list[Any], arms: list[Arm]) -> dict[int, dict[str, str]]:
    """Each driver's next control-loop status (``/diagnostics`` comes once a second; at most 5 s)."""
    diagnostics.clear()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and len(_status_by_arm(diagnostics, arms)) < len(arms):
        executor.spin_once(timeout_sec=0.05)
    return _status_by_arm(diagnostics, arms)


def _start_arms(count: int, per_process: int, domain: int, workdir: Path) -> list[Arm]:
    """Start ``count`` arms: two processes each, or ``bb_robot.nodes.fleet`` processes of ``per_process`` arms."""
    common = {"model": str(BB_ARM), "autostart": True, "auto_arm": True, "command_timeout": 0.0, "rate": LOOP_RATE}
    arms: list[Arm] = []
    if per_process > 1:
        for first in range(0, count, per_process):
            size = min(per_process, count - first)
            directory = workdir / f"n{count}_fleet{first}"
            directory.mkdir(parents=True)
            process = _driver_process.start_node(
                "bb_robot.nodes.fleet",
                {**common, "model_dirs": [str(BB_ARM.parent)]},
                workdir=directory,
                domain=domain,
                log_name="fleet.log",
                program_args=("--arms", str(size), "--first", str(first)),
                remap_namespace=False,
            )
            arms += [Arm(i, process, None, size) for i in range(first, first + size)]
        return arms
    for i in range(count):
        directory = workdir / f"n{count}_arm{i}"
        directory.mkdir(parents=True)
        namespace = f"/arm{i}"
        driver = _driver_process.start_driver(
            common, workdir=directory, domain=domain, namespace=namespace, node_name=f"driver_arm{i}"
        )
        description = _driver_process.start_node(
            "bb_robot.nodes.description",
            {"model": str(BB_ARM), "model_dirs": [str(BB_ARM.parent)], "frame_prefix": f"arm{i}/"},
            workdir=directory,
            domain=domain,
            namespace=namespace,
            log_name="description.log",
        )
        arms.append(Arm(i, driver, description))
    return arms


def run_fleet(count: int, seconds: float, domain: int, workdir: Path, per_process: int = 1) -> Result:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    began = time.monotonic()
    arms = _start_arms(count, per_process, domain, workdir)
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bench_fleet_monitor", context=context)
    executor = _driver_process.make_executor(context)
    executor.add_node(node)
    diagnostics: list[Any] = []
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 100)
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    prefixes = [(arm, f"arm{arm.index}/".encode()) for arm in arms]

    def on_tf(data: bytes) -> None:
        for arm, prefix in prefixes:
            if prefix in data:
                arm.tf += 1
                return

    node.create_subscription(TFMessage, "/tf", on_tf, qos, raw=True)
    for arm in arms:

        def on_state(_data: bytes, arm: Arm = arm) -> None:
            arm.states += 1

        node.create_subscription(JointState, f"/arm{arm.index}/joint_states", on_state, qos, raw=True)
    result = Result(count, None)
    try:
        deadline = began + STARTUP_TIMEOUT
        while time.monotonic() < deadline and not all(arm.tf > 0 for arm in arms):
            executor.spin_once(timeout_sec=0.05)
            dead = _dead(arms)
            if dead:
                result.failures.append(f"exited during start-up: {'; '.join(dead)} (logs in {workdir})")
                result.cause = "a process crashed"
                return result
        if not all(arm.tf > 0 for arm in arms):
            missing = [a.name for a in arms if a.tf == 0]
            result.failures.append(f"no /tf from {', '.join(missing)} within {STARTUP_TIMEOUT:g} s")
            result.cause = "DDS discovery or start-up (arms not up in time)"
            return result
        result.startup = time.monotonic() - began
        settle = time.monotonic() + 3.0  # the drivers' next /diagnostics, the first answers' caches
        while time.monotonic() < settle:
            executor.spin_once(timeout_sec=0.05)
        early = _fresh_status(executor, diagnostics, arms)
        for arm in arms:
            arm.states = arm.tf = 0
        cpu_early = [arm.cpu() for arm in arms]
        monitor_early = _driver_process.cpu_seconds(os.getpid())
        busy_early, total_early = machine_ticks()
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            executor.spin_once(timeout_sec=0.05)
        window = time.monotonic() - start
        states, tfs = [arm.states for arm in arms], [arm.tf for arm in arms]
        cpu_late = [arm.cpu() for arm in arms]
        monitor_late = _driver_process.cpu_seconds(os.getpid())
        busy_late, total_late = machine_ticks()
        result.memory = statistics.mean(arm.memory() for arm in arms)
        late = _fresh_status(executor, diagnostics, arms)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
        for process in {id(p): p for arm in arms for p in arm.processes}.values():
            process.stop()

    result.window = window
    result.state_rates = [n / window for n in states]
    result.tf_rates = [n / window for n in tfs]
    result.driver_cpu = (
        statistics.mean(after[0] - before[0] for before, after in zip(cpu_early, cpu_late, strict=True)) / window
    )
    result.description_cpu = (
        statistics.mean(after[1] - before[1] for before, after in zip(cpu_early, cpu_late, strict=True)) / window
    )
    result.monitor_cpu = (monitor_late - monitor_early) / window
    result.machine_busy = (busy_late - busy_early) / max(total_late - total_early, 1)
    skipped = due = 0
    lags_early, lags_late = [], []
    for arm in arms:
        before, after = early.get(arm.index, {}), late.get(arm.index, {})
        if not before or not after:
            result.failures.append(f"no /diagnostics from {arm.name}'s driver")
            continue
        run = int(after["cycles"]) - int(before["cycles"])
        missed = int(after["skipped cycles"]) - int(before["skipped cycles"])
        skipped, due = skipped + missed, due + run + missed
        lags_early.append(float(before["lag p99 (ms)"]) * 1e-3)
        lags_late.append(float(after["lag p99 (ms)"]) * 1e-3)
    result.skipped_share = skipped / due if due else 0.0
    result.lag_early = max(lags_early, default=0.0)
    result.lag_late = max(lags_late, default=0.0)
    _judge(result)
    return result


def _judge(result: Result) -> None:
    floor = RATE_FLOOR * STATE_RATE
    if result.skipped_share > SKIPPED_LIMIT:
        result.failures.append(f"{result.skipped_share:.1%} of cycles skipped")
    if min(result.state_rates, default=0.0) < floor:
        result.failures.append(f"joint_states down to {min(result.state_rates):.0f} Hz")
    if min(result.tf_rates, default=0.0) < floor:
        result.failures.append(f"/tf down to {min(result.tf_rates):.0f} Hz")
    if result.lag_late > LAG_LIMIT:
        result.failures.append(f"lag p99 {result.lag_late * 1e3:.2f} ms")
    if result.failures and not result.cause:
        result.cause = (
            f"CPU (machine {result.machine_busy:.0%} busy)"
            if result.machine_busy >= 0.9
            else f"executor / scheduling (machine {result.machine_busy:.0%} busy: CPU was left)"
        )


def _pct(value: float) -> str:
    return f"{100 * value:.0f} %"


def report(results: list[Result], machine: str, seconds: float, quick: bool, per_process: int = 1) -> str:
    rows = []
    for r in results:
        if r.startup is None:
            rows.append([r.arms, *["—"] * 9, "**fails**: " + "; ".join(r.failures) + f" — cause: {r.cause}"])
            continue
        rows.append(
            [
                r.arms,
                f"{r.startup:.1f} s",
                f"{r.skipped_share:.2%}",
                f"{r.lag_early * 1e3:.2f} → {r.lag_late * 1e3:.2f} ms",
                f"{min(r.state_rates):.0f} / {statistics.median(r.state_rates):.0f} Hz",
                f"{min(r.tf_rates):.0f} / {statistics.median(r.tf_rates):.0f} Hz",
                f"{_pct(r.driver_cpu)} + {_pct(r.description_cpu)}" if per_process == 1 else _pct(r.driver_cpu),
                f"{r.memory / 1e6:.0f} MB",
                _pct(r.machine_busy),
                _pct(r.monitor_cpu),
                ("**fails**: " + "; ".join(r.failures) + f" — cause: {r.cause}") if r.failed else "holds",
            ]
        )
    target = next((r for r in results if r.arms == TARGET_ARMS), None)
    met = target is not None and not target.failed
    held = [r for r in results if not r.failed and r.startup is not None]
    heading = (
        "## A fleet of arms on one machine (`benchmarks/bench_fleet.py`)"
        if per_process == 1
        else f"## A fleet of arms, {per_process} per process (`benchmarks/bench_fleet.py --per-process {per_process}`)"
    )
    layout = (
        "one process each"
        if per_process == 1
        else (
            f"both nodes of up to {per_process} arms in one `bb_robot.nodes.fleet` process (one executor, one "
            "interpreter; each driver keeps its loop thread: docs/nodes/fleet.md); *CPU per arm* and *memory "
            "per arm* are the arm's share of its process"
        )
    )
    lines = [
        heading,
        "",
        f"Run {_common.timestamp()} ({'quick' if quick else 'full'} run: a {seconds:g} s window per N).",
        "",
        f"Machine: {machine}; load average {_common.load_average()} at the end.",
        "",
        "### Target",
        "",
        (
            f"- **not measured**: {TARGET_ARMS} arms at {LOOP_RATE:g} Hz on this machine "
            f"(N = {TARGET_ARMS} was not run)"
            if target is None
            else f"- **{'met' if met else 'MISSED'}**: {TARGET_ARMS} arms at {LOOP_RATE:g} Hz on this machine "
            f"({'holds' if met else '; '.join(target.failures)})"
        ),
        "",
        "Each arm: a driver (embedded simulator, control loop at 500 Hz, joint_states at 100 Hz) and a "
        "description node (/tf for each joint_states message), in namespace `/arm<i>`, frame prefix "
        f"`arm<i>/`, {layout}, all on one ROS domain.  An N fails when more than 1 % of cycles "
        "are skipped, joint_states or /tf fall below 95 % of 100 Hz on any arm, or the loop lag p99 "
        "exceeds 2 ms on any arm.  *start-up*: from launching the processes to /tf from every arm; "
        "*lag p99*: the worst arm's, at the start → the end of the window (the drivers' own figure "
        "over their last 2,047 cycles); *rates*: the worst arm / the median arm; *CPU per arm*: "
        f"{'driver + description node' if per_process == 1 else 'both nodes'}, share of one core; "
        "*machine busy*: all cores, other users included; "
        "*monitor*: this measuring process.",
        "",
        _common.markdown_table(
            [
                "N arms",
                "start-up",
                "skipped cycles",
                "lag p99",
                "joint_states",
                "/tf",
                "CPU per arm",
                "memory per arm",
                "machine busy",
                "monitor",
                "verdict",
            ],
            rows,
        ),
        "",
    ]
    measured = [r for r in results if r.startup is not None]
    if measured:
        lines += _paper_estimate(measured, held, per_process)
    return "\n".join(lines)


def _paper_estimate(measured: list[Result], held: list[Result], per_process: int = 1) -> list[str]:
    """50 arms on paper, from the measured CPU and memory per arm."""
    cpu = statistics.median(r.driver_cpu + r.description_cpu for r in measured)
    driver = statistics.median(r.driver_cpu for r in measured)
    memory = statistics.median(r.memory for r in measured)
    cores = os.cpu_count() or 1
    per_machine = max(1, int(0.7 * cores / cpu)) if cpu > 0 else 1
    largest = max((r.arms for r in held), default=0)
    measured_machines = math.ceil(50 / largest) if largest else None
    big = math.ceil(50 * cpu / (0.7 * 16))
    split = (
        f"the driver {_pct(driver)}, most of it the 500 Hz loop thread and publishing at 100 Hz"
        if per_process == 1
        else f"both nodes, {per_process} arms to a process"
    )
    first = [
        "### 50 arms, on paper" + ("" if per_process == 1 else f", {per_process} per process"),
        "",
        f"Measured: one arm costs {_pct(cpu)} of one core (median over the N measured; {split}) and "
        f"{memory / 1e6:.0f} MB.  Measured, the largest N that held on this machine (shared with other "
        f"work: see *machine busy*) was {largest}: 50 arms would need "
        f"{measured_machines if measured_machines is not None else '—'} such machines.  By CPU alone, at 70 % "
        f"of the cores (headroom for the loops' deadlines), an otherwise idle {cores}-core machine holds about "
        f"{per_machine} arms: {math.ceil(50 / per_machine)} such machines, or {big} machine{'s' if big > 1 else ''} "
        f"of 16 cores; {50 * memory / 1e9:.1f} GB of memory in all.",
    ]
    if per_process > 1:
        return first
    return [
        *first,
        "",
        "How they spread: give each machine its own `ROS_DOMAIN_ID` with "
        "`ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` (as here), so that discovery, which every DDS "
        "participant does with every other one on its domain (one participant per process: 2 per arm, "
        "100 for 50 arms on one domain), stays within the machine and grows with the arms per machine, "
        "not with the fleet; bridge to a supervising domain only the topics a fleet manager needs (a "
        "domain bridge), or use a discovery server instead of multicast discovery where arms must share "
        "a domain.  /tf is one global topic: with frame prefixes every subscriber of /tf receives every "
        "arm's transforms (50 × 100 messages/s), so a tool that watches one arm should subscribe in that "
        "arm's domain or to a per-arm remapped /tf.",
        "",
        "One process per arm or several arms per process: each process here is a Python interpreter with "
        "rclpy and a DDS participant; the memory per arm above is mostly that fixed part (two interpreters "
        "with numpy and the ROS message packages), the CPU mostly the per-message and per-cycle work.  "
        "`ros2 run bb_robot fleet --arms K` runs K arms' node pairs in one process (docs/nodes/fleet.md); "
        "the next section measures it the same way, to show what it saves (memory, participants) and "
        "what it costs (one interpreter lock for K control loops and their messages).",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter windows (smoke test)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    parser.add_argument("--arms", type=int, nargs="*", help="the N to run (default 1 2 4 8, then doubling)")
    parser.add_argument(
        "--per-process",
        type=int,
        default=1,
        metavar="K",
        help="K arms per bb_robot.nodes.fleet process (default 1: a driver and a description process per arm)",
    )
    args = parser.parse_args(argv)
    if args.per_process < 1:
        parser.error("--per-process: expected 1 or more")
    section = SECTION if args.per_process == 1 else f"{SECTION}_per_process"
    seconds = 5.0 if args.quick else 20.0
    machine = _common.machine_summary(("numpy",))
    print(f"machine: {machine}", file=sys.stderr)
    domain = random.SystemRandom().randint(1, 101)
    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_bench_fleet_"))
    counts = list(args.arms or [1, 2, 4, 8])
    results: list[Result] = []
    while counts:
        count = counts.pop(0)
        print(f"N = {count} ...", file=sys.stderr, flush=True)
        result = run_fleet(count, seconds, domain, workdir, args.per_process)
        results.append(result)
        print(
            f"N = {count}: start-up {result.startup}, skipped {result.skipped_share:.2%}, lag p99 "
            f"{result.lag_early * 1e3:.2f} -> {result.lag_late * 1e3:.2f} ms, joint_states min "
            f"{min(result.state_rates, default=0):.0f} Hz, /tf min {min(result.tf_rates, default=0):.0f} Hz, "
            f"machine {result.machine_busy:.0%}; {'; '.join(result.failures) or 'holds'}",
            file=sys.stderr,
            flush=True,
        )
        if not args.arms and not counts:
            failures = [r.arms for r in results if r.failed]
            # one step past the first failure: stop once a failing N has a larger one after it
            if (not failures or failures[0] == results[-1].arms) and 2 * count <= MAX_ARMS:
                counts.append(2 * count)
    text = report(results, machine, seconds, args.quick, args.per_process)
    print(text)
    if not args.no_docs:
        print(f"wrote {_common.rewrite_doc_section(section, text)}", file=sys.stderr)
    if not any("exited" in failure for r in results for failure in r.failures):
        shutil.rmtree(workdir, ignore_errors=True)  # kept when a process crashed: its log tells why
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of the view node: the driver's control-loop lag with 0 and with 3 Foxglove clients.

    .venv/bin/python benchmarks/bench_view.py            # 30 s per phase
    .venv/bin/python benchmarks/bench_view.py --quick    # 10 s per phase, a smoke test

One run, three phases, the same processes throughout: the description node and the driver
(bundled arm, embedded simulator, loop at 500 Hz, ``joint_states`` at 100 Hz, so ``/tf`` at
100 Hz too) and the view node, each its own process as ``bb-robot up --view`` runs them.

1. no client connected;
2. three clients (the tests' independent protocol client, test/nodes/foxglove_client.py), each
   subscribed to every channel the view advertises;
3. the three dropped without a close handshake (their sockets closed), no client again.

For each phase: the driver's loop lag — how late a cycle starts against its grid — from the
``driver: control loop`` status it publishes on ``/diagnostics`` once a second (each covers its
last 2,047 cycles, about 4 s): the median of the p99s and the largest max seen during the
phase; cycles skipped during the phase; the CPU time the view and the driver used per second;
and the messages the clients received.  The machine's load before and after is reported, since
it is shared.  Numbers are measurements, never assertions.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _common
import _driver_process

HERE = Path(__file__).resolve().parent
REPO_ROOT = _common.REPO_ROOT
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
SECTION = "bench_view"
CLIENTS = 3

from helpers.foxglove_client import FoxgloveTestClient  # noqa: E402


@dataclass
class Phase:
    """What one phase measured."""

    label: str
    lag_p99: list[float]
    lag_max: float
    skipped: int
    cycles: int
    view_cpu: float
    driver_cpu: float
    received: int
    seconds: float
    steal: float
    load: str


def _cpu_times() -> tuple[float, float]:
    """(all, steal) jiffies of the machine from /proc/stat: how much CPU the hypervisor took away."""
    fields = [float(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields[:8]), fields[7] if len(fields) > 7 else 0.0


def _statuses(diagnostics: list[Any], since: float) -> list[dict[str, str]]:
    found = []
    for array in diagnostics:
        stamp = array.header.stamp.sec + array.header.stamp.nanosec * 1e-9
        for status in array.status:
            if status.name == "driver: control loop" and stamp >= since:
                found.append({kv.key: kv.value for kv in status.values})
    return found


def run(seconds: float, domain: int) -> tuple[list[Phase], str, str]:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray

    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_bench_view_"))
    common = {"model": str(BB_ARM), "model_dirs": [str(BB_ARM.parent)]}
    description = _driver_process.start_node(
        "bb_robot.nodes.description",
        {**common, "tip_link": "tcp"},
        workdir=workdir,
        domain=domain,
        log_name="description.log",
    )
    ns = description.namespace
    driver = _driver_process.start_driver(
        {"model": "", "autostart": True, "auto_arm": True, "rate": 500.0, "publish_rate": 100.0},
        workdir=workdir,
        domain=domain,
        namespace=ns,
    )
    view = _driver_process.start_node(
        "bb_robot.nodes.view",
        {"port": 0, "model_dirs": [str(BB_ARM.parent)]},
        workdir=workdir,
        domain=domain,
        namespace=ns,
        log_name="view.log",
    )
    processes = [description, driver, view]
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bench_view_client", context=context)
    executor = _driver_process.make_executor(context)
    executor.add_node(node)
    diagnostics: list[Any] = []
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    clients: list[FoxgloveTestClient] = []
    phases: list[Phase] = []

    def spin(duration: float) -> None:
        end = time.monotonic() + duration
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)

    try:
        driver.wait_for(
            lambda: "Foxglove: open" in view.log() and f"showing {ns}/joint_states" in view.log(),
            90,
            "the view did not show joint_states",
            lambda: spin(0.1),
        )
        url = view.log().split("Foxglove: open ", 1)[1].split()[0]
        driver.wait_for(lambda: _statuses(diagnostics, 0.0), 60, "no driver diagnostics", lambda: spin(0.1))

        def measure(label: str) -> Phase:
            spin(2.0)  # let the previous phase's statistics age out of the first status
            start_wall = time.time()
            first = _statuses(diagnostics, 0.0)[-1]
            cpu0 = (view.cpu_seconds(), driver.cpu_seconds())
            received0 = sum(len(c.messages) for c in clients)
            machine0 = _cpu_times()
            started = time.monotonic()
            spin(seconds)
            elapsed = time.monotonic() - started
            machine1 = _cpu_times()
            statuses = _statuses(diagnostics, start_wall + 4.5)  # windows wholly inside this phase
            last = statuses[-1] if statuses else _statuses(diagnostics, 0.0)[-1]
            return Phase(
                label,
                [float(s["lag p99 (ms)"]) for s in statuses],
                max((float(s["lag max (ms)"]) for s in statuses), default=float("nan")),
                int(last["skipped cycles"]) - int(first["skipped cycles"]),
                int(last["cycles"]) - int(first["cycles"]),
                (view.cpu_seconds() - cpu0[0]) / elapsed,
                (driver.cpu_seconds() - cpu0[1]) / elapsed,
                sum(len(c.messages) for c in clients) - received0,
                elapsed,
                (machine1[1] - machine0[1]) / max(machine1[0] - machine0[0], 1.0),
                _common.load_average(),
            )

        phases.append(measure("0 clients"))
        for _ in range(CLIENTS):
            client = FoxgloveTestClient(url)
            client.wait_for(lambda client=client: len(client.channels) >= 5)
            client.subscribe(*client.topics())
            clients.append(client)
        phases.append(measure(f"{CLIENTS} clients, every channel"))
        for client in clients:
            client.ws.socket.close()  # gone without a close handshake
        clients.clear()
        phases.append(measure(f"{CLIENTS} clients dropped, 0 clients"))
        scheduling = _statuses(diagnostics, 0.0)[-1].get("scheduling", "")
        view_alive = "view still running" if view.alive else "VIEW EXITED"
    finally:
        for client in clients:
            client.close()
        for process in reversed(processes):
            process.stop()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    return phases, scheduling, view_alive


def report(runs: list[tuple[list[Phase], str, str]], seconds: float, machine: str, load_before: str) -> str:
    rows = [
        (
            f"{number}: {p.label}",
            f"{statistics.median(p.lag_p99):.3f} ms" if p.lag_p99 else "—",
            f"{p.lag_max:.3f} ms",
            f"{p.skipped} of {p.cycles}",
            f"{p.view_cpu * 100:.0f} %",
            f"{p.driver_cpu * 100:.0f} %",
            f"{p.received / p.seconds:.0f}/s" if p.received else "0",
            f"{p.load} / {p.steal * 100:.0f} %",
        )
        for number, (phases, _, _) in enumerate(runs, start=1)
        for p in phases
    ]
    scheduling = ", ".join(sorted({r[1] for r in runs}))
    alive = "; ".join(f"run {n}: {r[2]}" for n, r in enumerate(runs, start=1))
    table = _common.markdown_table(
        [
            "run: phase",
            "driver lag p99 (median)",
            "driver lag max",
            "skipped cycles",
            "view CPU",
            "driver CPU",
            "messages to the clients",
            "load average / CPU steal",
        ],
        rows,
        "lrrrrrrr",
    )
    return "\n".join(
        [
            "## View node: the driver's loop with Foxglove clients (`benchmarks/bench_view.py`)",
            "",
            f"Run {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC: {len(runs)} run(s) of three phases, "
            f"{seconds:.0f} s each.",
            "",
            f"Machine: {machine}. **The machine is shared** (up to 8 engineers on 2 cores; load average "
            f"{load_before} before this benchmark started its processes): the load and the CPU steal are given "
            "per phase, and the absolute numbers move with them.",
            "",
            "Description node, driver (bundled arm, simulator, loop 500 Hz, `joint_states` 100 Hz) and view "
            "node each run as a process, as `bb-robot up --view` starts them; the clients are the tests' "
            "independent protocol client, subscribed to every channel (`/tf`, `/tf_static`, `joint_states`, "
            "`robot_description`, `/diagnostics`, the tip pose, the serial manipulator, the arm state). *lag*: "
            "how late a driver cycle starts against its grid, from the driver's `/diagnostics` (each status "
            "covers its last 2,047 cycles; the median of the p99s and the largest max seen in the phase); "
            "*CPU*: user + system time per second of the phase (100 % = one core); *load average / CPU steal*: "
            "the machine's 1-minute load at the end of the phase and the share of its CPU time the hypervisor "
            f"took (`/proc/stat`) during it. Driver loop: {scheduling}.",
            "",
            table,
            "",
            f"After the clients dropped: {alive}. Load average at the end: {_common.load_average()}.",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s phases instead of 30 s")
    parser.add_argument("--runs", type=int, default=2, help="how many runs of the three phases (default 2)")
    parser.add_argument("--no-docs", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    seconds = 10.0 if args.quick else 30.0
    machine = _common.machine_summary(packages=("numpy", "foxglove-sdk"))
    load_before = _common.load_average()
    runs = [run(seconds, random.randint(0, 101)) for _ in range(max(1, args.runs))]
    text = report(runs, seconds, machine, load_before)
    print(text)
    if not args.no_docs:
        page = _common.rewrite_doc_section(SECTION, text)
        print(f"\nwrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

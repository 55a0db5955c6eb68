"""Benchmark of the driver node: command → backend latency, loop timing, lag over a minute, CPU.

    .venv/bin/python benchmarks/bench_driver.py            # full run (about three minutes)
    .venv/bin/python benchmarks/bench_driver.py --quick    # shorter runs, a smoke test

The driver runs as a child process (``python -m bb_robot.nodes.driver``) on the bundled arm
with the recording backend of ``benchmarks/driver_bench_backend.py`` (the embedded simulator,
recording every cycle's start and when each command reached ``write``).  This process streams
sas ``target_joint_positions`` arrays at the loop rate, each carrying a sequence number, and
stamps each just before publishing; both processes read the same monotonic clock.

Measured, per run:

- **command → backend latency**: from this process's ``publish`` to the driver's
  ``backend.write`` with that command (DDS, the executor callback, which writes it at once with
  the default ``immediate_commands``), p50 / p99 / max;
- **loop period jitter**: the spread of the intervals between cycle starts (std, p99 of the
  deviation from the period);
- **lag**: how late cycles start against their grid (``start + k · period``), from the
  driver's own statistics (``/diagnostics``) over its last 2,047 cycles, at 10 s and at the
  end; **drift**: cycles run plus cycles skipped against the time elapsed;
- **CPU per 1,000 cycles**: the driver process's user + system time (``/proc/<pid>/stat``)
  between 10 s and the end, divided by the cycles run meanwhile.

Runs: 500 Hz for 60 s (the lag target: no growth, under one period), 1 kHz for 20 s, and 500 Hz
for 60 s without real-time scheduling (``realtime_priority: 0``) for comparison.  Numbers are
measurements on this machine at this load, not assertions.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import _driver_process
import _streams
import numpy as np

HERE = Path(__file__).resolve().parent
REPO_ROOT = _common.REPO_ROOT
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
SECTION = "bench_driver"
SLOW_SECTION = "bench_driver_slow_host"
SLOW_TITLE = "The driver's streams on a slow host: `bb-robot up --demo` (`bench_driver.py --slow-host 80`)"

sys.path.insert(0, str(HERE))
from driver_bench_backend import BASE, STEP  # noqa: E402


@dataclass
class Run:
    """One driver run: settings and what was measured."""

    label: str
    rate: float
    seconds: float
    priority: int = 50
    latency: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sent: int = 0
    received: int = 0
    periods: np.ndarray = field(default_factory=lambda: np.zeros(0))
    early: dict[str, str] = field(default_factory=dict)
    late: dict[str, str] = field(default_factory=dict)
    #: Stamps (s) of the /diagnostics messages ``early`` and ``late`` came from.
    early_stamp: float = 0.0
    late_stamp: float = 0.0
    elapsed: float = 0.0
    cpu_per_1000: float | None = None
    scheduling: str = ""


def measure(run: Run, domain: int) -> Run:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray

    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_bench_driver_"))
    record = workdir / "record.npz"
    driver = _driver_process.start_driver(
        {
            "model": str(BB_ARM),
            "backend": "driver_bench_backend:RecordingBackend",
            "autostart": True,
            "auto_arm": True,
            "command_timeout": 0.0,
            "rate": run.rate,
            "realtime_priority": run.priority,
        },
        workdir=workdir,
        domain=domain,
        extra_pythonpath=[HERE],
        extra_env={"BB_ROBOT_BENCH_RECORD": str(record)},
    )
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bench_driver_client", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    diagnostics: list[Any] = []
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
    publisher = node.create_publisher(Float64MultiArray, f"{driver.namespace}/bb_arm/set/target_joint_positions", qos)
    driver_name = "driver"
    try:
        driver.wait_for(
            lambda: publisher.get_subscription_count() > 0 and "active: control loop" in driver.log(),
            60,
            "the driver did not start",
            lambda: executor.spin_once(timeout_sec=0.05),
        )
        time.sleep(0.5)
        count = int(run.rate * run.seconds) + 1
        sender, published = _driver_process.target_stream(publisher, run.rate, count, BASE, STEP, 7)
        started = time.monotonic()
        cpu_start = None
        sender.start()
        while sender.is_alive():
            executor.spin_once(timeout_sec=0.05)
            if cpu_start is None and time.monotonic() - started >= 10.0:
                cpu_start = (driver.cpu_seconds(), _driver_process.loop_status(diagnostics, driver_name))
                run.early, run.early_stamp = cpu_start[1]
        sender.join()
        spin_until = time.monotonic() + 1.5  # the next /diagnostics message
        while time.monotonic() < spin_until:
            executor.spin_once(timeout_sec=0.05)
        run.late, run.late_stamp = _driver_process.loop_status(diagnostics, driver_name)
        if cpu_start is not None and run.late.get("cycles") and run.early.get("cycles"):
            cycles = int(run.late["cycles"]) - int(run.early["cycles"])
            run.cpu_per_1000 = (driver.cpu_seconds() - cpu_start[0]) / cycles * 1000 if cycles else None
        run.sent = count
        run.scheduling = run.late.get("scheduling", "")
    finally:
        driver.stop()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    recorded = np.load(record)
    writes = recorded["writes"][1 : count + 1]
    got = writes > 0
    run.received = int(got.sum())
    run.latency = (writes[got] - published[1 : count + 1][got]) * 1e-9
    starts = recorded["starts"].astype(np.float64) * 1e-9
    run.periods = np.diff(starts)
    run.elapsed = float(starts[-1] - starts[0]) if len(starts) > 1 else 0.0
    return run


EXPLANATION = " ".join(
    [
        "The driver runs as a child process on the bundled arm (7 joints) with the embedded simulator",
        "(recording variant); this process streams sas `target_joint_positions` at the loop rate.",
        "*command → backend*: publish here to `backend.write` there (DDS, then the executor callback, which",
        "writes the command at once: `immediate_commands`, the default; with `immediate_commands: false` a",
        "command would wait for the next cycle, up to one period); *never written*: commands the backend",
        "never saw (a newer one arrived first; the sas topics keep one message); *in the driver*: from the",
        "callback receiving a command to its `backend.write`, the driver's own figure in `/diagnostics`;",
        "*lag*: how late a cycle starts against its grid, from the driver's statistics over its last 2,047",
        "cycles; *drift*: cycles run plus cycles skipped, minus the time elapsed times the rate, between the",
        "two `/diagnostics` messages (0: the loop keeps its grid); *CPU*: the driver process's user + system",
        "time from 10 s to the end, per 1,000 cycles (it includes the executor handling the command stream,",
        "writing each command, and publishing `joint_states` at 100 Hz).",
    ]
)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1e3:.3f} ms"


def report(runs: list[Run], quick: bool, machine: str) -> str:
    rows = []
    for run in runs:
        latency = run.latency
        period = 1.0 / run.rate
        deviation = np.abs(run.periods - period)
        lost = run.sent - run.received
        cycles = int(run.late.get("cycles", "0") or 0)
        skipped = int(run.late.get("skipped cycles", "0") or 0)
        if run.early:
            done = cycles + skipped - int(run.early["cycles"]) - int(run.early["skipped cycles"])
            drift_text = f"{done - (run.late_stamp - run.early_stamp) * run.rate:+.1f} cycles"
        else:
            drift_text = "—"
        lag_p99_early = float(run.early.get("lag p99 (ms)", "nan")) * 1e-3
        lag_p99_late = float(run.late.get("lag p99 (ms)", "nan")) * 1e-3
        lag_max_late = float(run.late.get("lag max (ms)", "nan")) * 1e-3
        rows.append(
            [
                run.label,
                run.scheduling,
                f"{_ms(float(np.percentile(latency, 50)))} / {_ms(float(np.percentile(latency, 99)))} / "
                f"{_ms(float(latency.max()))}"
                if len(latency)
                else "—",
                f"{lost} of {run.sent}" if run.sent else "—",
                f"{run.late.get('command latency p50 (ms)', '—')} / {run.late.get('command latency p99 (ms)', '—')} ms",
                f"{_ms(float(run.periods.std()))} / {_ms(float(np.percentile(deviation, 99)))}"
                if len(run.periods)
                else "—",
                f"{_ms(lag_p99_early)} → {_ms(lag_p99_late)} (max {_ms(lag_max_late)})",
                f"{skipped} of {cycles + skipped}",
                drift_text,
                f"{run.cpu_per_1000 * 1e3:.0f} ms" if run.cpu_per_1000 is not None else "—",
            ]
        )
    table = _common.markdown_table(
        [
            "run",
            "loop thread",
            "command → backend p50 / p99 / max",
            "never written",
            "in the driver: received → write p50 / p99",
            "period std / p99 deviation",
            "lag p99 at 10 s → end (max at end)",
            "skipped cycles",
            "drift from 10 s to the end",
            "CPU per 1,000 cycles",
        ],
        rows,
        align="llrrrrrrrr",
    )
    main = next(r for r in runs if r.rate == 500.0 and r.priority > 0)
    period = 1.0 / main.rate
    late_lag = float(main.late.get("lag p99 (ms)", "nan")) * 1e-3
    late_max = float(main.late.get("lag max (ms)", "nan")) * 1e-3
    early_lag = float(main.early.get("lag p99 (ms)", "nan")) * 1e-3
    met = late_max < period and late_lag <= max(early_lag * 2, period / 2)
    skipped = int(main.late.get("skipped cycles", "0") or 0)
    verdict = (
        f"**Target — lag after {main.seconds:.0f} s at 500 Hz: no growth, under one period (2 ms): "
        f"{'met' if met else 'missed'}** (lag p99 {_ms(early_lag)} at 10 s, {_ms(late_lag)} at the end; "
        f"the largest lag in the last 2,047 cycles {_ms(late_max)}; {skipped} cycles skipped, each one "
        "counted and the schedule kept: a skipped cycle does not push the later ones back)."
    )
    lines = [
        "## Driver node (`benchmarks/bench_driver.py`)",
        "",
        f"Run {_common.timestamp()} ({'quick run: shorter runs' if quick else 'full run'}).",
        "",
        f"Machine (before the run): {machine}.",
        "",
        EXPLANATION,
        "",
        table,
        "",
        verdict,
        "",
        f"Load average at the end: {_common.load_average()}.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s runs instead of 60 s / 20 s")
    parser.add_argument("--no-doc", action="store_true", help="print the report, do not rewrite docs/benchmarks.md")
    _streams.add_slow_host_option(parser, "--demo")
    args = parser.parse_args()
    if args.slow_host is not None:
        return _streams.slow_host_main("--demo", args.slow_host, SLOW_TITLE, SLOW_SECTION, write=not args.no_doc)
    long, short = (12.0, 8.0) if args.quick else (60.0, 20.0)
    runs = [
        Run("500 Hz, 60 s" if not args.quick else "500 Hz", 500.0, long),
        Run("1 kHz", 1000.0, short),
        Run("500 Hz, no real-time scheduling", 500.0, long if not args.quick else short, priority=0),
    ]
    domain = random.randint(0, 101)
    machine = _common.machine_summary(("numpy",))  # before the run: its load average is the start's
    for run in runs:
        print(f"running: {run.label} ({run.seconds:g} s)...", flush=True)
        measure(run, domain)
    text = report(runs, args.quick, machine)
    print(text)
    if not args.no_doc:
        page = _common.rewrite_doc_section(SECTION, text)
        print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

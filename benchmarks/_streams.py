"""The driver's streams on a slow host: ``bb-robot up --demo`` (or ``--demo-cartesian``) inside
``scripts/slow-host`` with a test-like subscriber (``_stamp_probe.py``) beside it.

Measured per run: the largest gap between consecutive ``joint_states`` stamps and between
consecutive ``/tf`` stamps (what a subscriber sees; the target is 50 ms), the largest gap between
arrivals here, the driver's cycle time and skipped cycles (its ``/diagnostics``), and whether the
demo succeeded.  ``bench_driver --slow-host`` and ``bench_servo --slow-host`` report it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
#: The stamp-gap target (s): no gap over this between consecutive stamps.
GAP_TARGET = 0.05


@dataclass(frozen=True)
class StreamRun:
    """One ``bb-robot up`` run under the slow host."""

    label: str
    status: int
    joint_states: int
    state_gap: float
    tf_gap: float
    arrival_gap: float
    cycle_ms: str
    skipped: str
    output: str
    #: The joint_states gaps over the target: (seconds after the first joint state, gap in seconds).
    long_gaps: tuple[tuple[float, float], ...] = ()

    def row(self) -> list[str]:
        met = "met" if self.status == 0 and max(self.state_gap, self.tf_gap) <= GAP_TARGET else "missed"
        return [
            self.label,
            "succeeded" if self.status == 0 else f"failed ({self.status})",
            str(self.joint_states),
            f"{self.state_gap * 1e3:.0f} ms",
            f"{self.tf_gap * 1e3:.0f} ms",
            f"{self.arrival_gap * 1e3:.0f} ms",
            self.cycle_ms,
            self.skipped,
            met,
        ]


HEADERS = [
    "run",
    "demo",
    "joint states seen",
    "largest joint_states stamp gap",
    "largest /tf stamp gap",
    "largest arrival gap",
    "cycle time mean (ms)",
    "skipped cycles",
    "stamp gaps ≤ 50 ms",
]


def largest_gap(pairs: list[list[int]], column: int) -> float:
    """The largest gap (s) between consecutive distinct values of ``column`` (0: stamps, 1: arrivals)."""
    values = np.unique(np.array([p[column] for p in pairs], dtype=np.int64))
    return float(np.diff(values).max()) * 1e-9 if len(values) > 1 else float("nan")


def gaps_over(pairs: list[list[int]], threshold: float) -> tuple[tuple[float, float], ...]:
    """The stamp gaps over ``threshold`` (s): ``(seconds after the first stamp, gap)`` each."""
    values = np.unique(np.array([p[0] for p in pairs], dtype=np.int64))
    if len(values) < 2:
        return ()
    gaps = np.diff(values) * 1e-9
    return tuple((float((values[i] - values[0]) * 1e-9), float(gaps[i])) for i in np.flatnonzero(gaps > threshold))


def measure_up(label: str, demo: str, backend: str, cpu: int) -> StreamRun:
    """Run ``bb-robot up <demo> --backend <backend>`` and the probe under ``scripts/slow-host --cpu <cpu>``.

    Args:
        label: The row's label.
        demo: ``--demo`` or ``--demo-cartesian``.
        backend: ``sim`` or ``mujoco``.
        cpu: The slow host's CPU quota (percent of one CPU; 0: not under the slow host).

    Returns:
        What the probe saw.
    """
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "probe.json"
        up = [str(bin_dir / "bb-robot"), "up", demo, "--backend", backend, "--timeout", "120"]
        probe = [sys.executable, str(HERE / "_stamp_probe.py"), str(out), "--", *up]
        command = [str(REPO_ROOT / "scripts" / "slow-host"), "--cpu", str(cpu), *probe] if cpu else probe
        subprocess.run(command, check=False, env=dict(os.environ), timeout=600)
        data = json.loads(out.read_text())
    states, tf = data["joint_states"], data["tf"]
    loop = next((v for k, v in data["diagnostics"].items() if k.endswith("control loop")), {})
    return StreamRun(
        label=label,
        status=int(data["status"]),
        joint_states=len(states),
        state_gap=largest_gap(states, 0),
        tf_gap=largest_gap(tf, 0),
        arrival_gap=largest_gap(states, 1),
        cycle_ms=loop.get("cycle time mean (ms)", "-"),
        skipped=f"{loop.get('skipped cycles', '-')} of {loop.get('cycles', '-')}",
        output=data["output"],
        long_gaps=gaps_over(states, GAP_TARGET),
    )


#: What the same runs measured before joint_states had a thread of their own (f092be2's parent,
#: the same host, scripts/slow-host --cpu 80, 2026-12-04): the demo's goal, checked for collisions
#: in the executor thread, held back the publish timer of the executor.
BEFORE = {
    "--demo": "sim: largest joint_states stamp gap 149-152 ms (2 runs), at the demo goal's arrival",
    "--demo-cartesian": "sim: largest joint_states stamp gap 59 ms",
}


def run_section(demo: str, cpu: int, title: str) -> str:
    """Measure ``bb-robot up <demo>`` on sim and mujoco, under the slow host (``cpu``) and not, as Markdown.

    Args:
        demo: ``--demo`` or ``--demo-cartesian``.
        cpu: The slow host's CPU quota (percent of one CPU).
        title: The section's heading.

    Returns:
        The section: a table with a row per run, the target's verdict and the earlier figures.
    """
    import _common

    machine = _common.machine_summary(("numpy",))
    runs = []
    for backend in ("sim", "mujoco"):
        for quota in (cpu, 0):
            where = f"slow host (scripts/slow-host --cpu {quota})" if quota else "this host"
            label = f"`up {demo} --backend {backend}`, {where}"
            print(f"running: {label}...", flush=True)
            runs.append(measure_up(label, demo, backend, quota))
    slow = [r for r in runs if "slow host" in r.label]
    met = all(r.status == 0 and max(r.state_gap, r.tf_gap) <= GAP_TARGET for r in slow)
    worst = max((max(r.state_gap, r.tf_gap) for r in slow), default=float("nan"))
    lines = [
        f"## {title}",
        "",
        f"Run {_common.timestamp()}. Machine: {machine}.",
        "",
        f"`bb-robot up {demo}` with a test-like subscriber process beside it (`benchmarks/_stamp_probe.py`: "
        "`/joint_states` and `/tf`, reliable, deep queues), both inside `scripts/slow-host` (a CPU quota of "
        f"{cpu} % of one CPU for everything the run starts: docs/testing.md), and the same on this host as it "
        "is. *Stamp gap*: the largest gap between consecutive stamps the subscriber received (the driver's "
        "samples, and the description node's transforms of them); *arrival gap*: between arrivals there; "
        "*cycle time* and *skipped cycles*: the driver's own `/diagnostics`, its last message.",
        "",
        _common.markdown_table(HEADERS, [r.row() for r in runs]),
        "",
        f"**Target — no gap over 50 ms between consecutive stamps on the slow host: {'met' if met else 'missed'}** "
        f"(largest {worst * 1e3:.0f} ms).",
        "",
        f"Before the fix (joint_states published by an executor timer): {BEFORE[demo]}.",
    ]
    for run in runs:
        if run.long_gaps:
            gaps = ", ".join(f"{g * 1e3:.0f} ms at {t:.1f} s" for t, g in run.long_gaps[:5])
            lines += ["", f"Gaps over 50 ms in {run.label}: {gaps} (seconds after the first joint state)."]
    return "\n".join(lines)


def add_slow_host_option(parser: argparse.ArgumentParser, demo: str) -> None:
    """A benchmark's ``--slow-host CPU`` option: instead of its own runs, :func:`slow_host_main`."""
    parser.add_argument(
        "--slow-host",
        type=int,
        metavar="CPU",
        help=f"instead: `bb-robot up {demo}` under scripts/slow-host --cpu CPU (root), its stamp gaps",
    )


def slow_host_main(demo: str, cpu: int, title: str, section: str, write: bool) -> int:
    """Run :func:`run_section`, print it and (``write``) put it in its section of docs/benchmarks.md."""
    import _common

    text = run_section(demo, cpu, title)
    print(text)
    if write:
        print(f"wrote {_common.rewrite_doc_section(section, text)}")
    return 0

"""Benchmark of ``bb-robot up``: how long the whole system takes to come up.

    .venv/bin/python benchmarks/bench_bringup.py            # 7 starts
    .venv/bin/python benchmarks/bench_bringup.py --quick    # 3 starts, a smoke test

Each repetition runs ``bb-robot up --duration 0`` (the bundled arm on the simulator, through ROS 2's
launch system) as a user would, and notes when each stage line appears on its output, counted
from the moment the command was started: robot_description published, driver active, first /tf
received, move_group ready (the move_group node can plan).  It also records how long the shutdown
took.  Each repetition also starts ``bb-robot up --duration 0 --no-planning`` (no move_group node),
alternating, so the time the node adds to "driver active" is measured on the same host at the
same time.  Reported: median, minimum and maximum over the repetitions.  Goal: the driver active
within 3 s (median, with the move_group node).  Needs scripts/setup with the
launch archives (``bb-robot up`` says so otherwise).  ``bb-robot`` of this checkout is run
(``python -m bb_robot.cli`` from the repository root); the launch and the nodes are the installed
package (scripts/install_package).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

import _common

SECTION = "bench_bringup"
#: Output line → the stage it marks.
STAGES = (
    ("robot_description published", "robot_description"),
    ("driver active", "driver active"),
    ("first /tf received", "first /tf"),
    ("move_group ready", "move_group ready"),
)
GOAL_ACTIVE = 3.0


def one_start(planning: bool = True) -> dict[str, float]:
    """One ``bb-robot up --duration 0`` (``--no-planning`` unless ``planning``): seconds from the
    command's start to each stage line, and to its exit."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "bb_robot.cli", "up", "--duration", "0", *([] if planning else ["--no-planning"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=_common.REPO_ROOT,
        env=env,
    )
    assert process.stdout is not None
    times: dict[str, float] = {}
    output = []
    for line in process.stdout:
        now = time.perf_counter() - start
        output.append(line)
        for text, stage in STAGES:
            if text in line and stage not in times:
                times[stage] = now
        if "stopping the launch" in line:
            times["shutdown from"] = now
    status = process.wait()
    times["exit"] = time.perf_counter() - start
    wanted = [s for _, s in STAGES if planning or s != "move_group ready"]
    if status != 0 or any(s not in times for s in wanted):
        raise SystemExit(f"bb-robot up failed (exit {status}):\n{''.join(output)}")
    return times


def report(runs: list[dict[str, float]], bare: list[dict[str, float]], load_start: str, quick: bool) -> str:
    rows = []
    for _, stage in STAGES:
        samples = [run[stage] for run in runs]
        rows.append((stage, f"{_common.median(samples):.2f} s", f"{min(samples):.2f} s", f"{max(samples):.2f} s"))
    shutdown = [run["exit"] - run["shutdown from"] for run in runs]
    rows.append(
        (
            "shutdown (SIGINT → every process gone)",
            f"{_common.median(shutdown):.2f} s",
            f"{min(shutdown):.2f} s",
            f"{max(shutdown):.2f} s",
        )
    )
    for stage in ("driver active", "exit"):
        samples = [run[stage] for run in bare]
        rows.append(
            (
                f"{stage} without move_group (`--no-planning`)",
                f"{_common.median(samples):.2f} s",
                f"{min(samples):.2f} s",
                f"{max(samples):.2f} s",
            )
        )
    active = _common.median([run["driver active"] for run in runs])
    added = active - _common.median([run["driver active"] for run in bare])
    verdict = "met" if active <= GOAL_ACTIVE else "not met"
    lines = [
        "## Bringup: `bb-robot up` to a running system (`benchmarks/bench_bringup.py`)",
        "",
        f"Run {_common.timestamp()} ({'quick run' if quick else 'full run'}: {len(runs)} starts of "
        "`bb-robot up --duration 0`, one after the other; median, minimum and maximum).",
        "",
        f"Machine: {_common.machine_summary(('numpy',))}.",
        "",
        "Times from starting the command (a new Python process: interpreter start-up, imports, the input check, "
        "the launch process, the description node and the driver each starting their own interpreter, DDS "
        "discovery) to the line it prints for the stage.",
        "",
        f"**Goal — driver active within {GOAL_ACTIVE:g} s: {verdict}** (median {active:.2f} s).",
        "",
        f"The move_group node (started by default) adds {added:+.2f} s to the median time to driver active "
        "(the same stage without it, `--no-planning`, rows below: one more Python process starting beside the "
        "driver on the same cores).",
        "",
        _common.markdown_table(("stage", "median", "min", "max"), rows),
        "",
        f"Load average at the end: {_common.load_average()} (at the start: {load_start}).",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 starts")
    parser.add_argument("--repeat", type=int, default=None, help="number of starts (default 7)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    options = parser.parse_args()
    repeat = options.repeat or (3 if options.quick else 7)
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(0, 101)))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    load_start = _common.load_average()
    runs: list[dict[str, float]] = []
    bare: list[dict[str, float]] = []
    for index in range(repeat):
        for planning, into in ((True, runs), (False, bare)) if index % 2 == 0 else ((False, bare), (True, runs)):
            run = one_start(planning)
            into.append(run)
            label = "" if planning else " --no-planning"
            print(f"[{index + 1}/{repeat}{label}] " + ", ".join(f"{k} {v:.2f} s" for k, v in run.items()), flush=True)
    text = report(runs, bare, load_start, options.quick)
    print()
    print(text)
    if not options.no_docs:
        print(f"\nwrote {_common.rewrite_doc_section(SECTION, text)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

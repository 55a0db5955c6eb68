"""Benchmark of ``bb-robot up --demo-pick``: pick and place over the wall, judged by MuJoCo, over 20 seeds.

    .venv/bin/python benchmarks/bench_pick.py                   # seeds 0-19 on MuJoCo
    .venv/bin/python benchmarks/bench_pick.py --quick           # seeds 0-2, a smoke test
    .venv/bin/python benchmarks/bench_pick.py --backend sim     # the kinematic simulator instead

Each seed runs ``bb-robot up --demo-pick --seed S`` as a user would (a new process: the launch, the
description node, the driver, the move_group node), one after the other, and reads what it prints:
its verdict (the cube's last pose from ``object/cube`` within 1 cm of the place spot and standing on
a face, its slip in the hand at most 5 mm and 5°, on MuJoCo no physics step in which the wall touched
the arm or the cube), the time of the ten steps (the pick), the part of it spent planning (the
``move_action`` plans and the ``compute_cartesian_path`` requests, as the client waited for them), the
largest slip of the cube relative to ``tcp`` between close and open, and how far from the place spot
the cube ended.  Verdict: 20 of 20 seeds succeed.  Rewrites the ``bench_pick`` section of
docs/benchmarks.md (``--no-docs``: not).  ``bb-robot`` of this checkout is run (``python -m
bb_robot.cli`` from the repository root); the launch and the nodes are the installed package
(scripts/install_package).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import _common

SECTION = "bench_pick"
GOAL_SUCCESSES = 20
#: What the command prints (bb_robot/cli/up_pick.py).
TIMES = re.compile(r"pick demo (?:succeeded|failed)[^\n]*?([0-9.]+) s, planning ([0-9.]+) s")
SLIP = re.compile(r"slip at most ([0-9.]+) mm \([^)]*\) and ([0-9.]+)°")
PLACE = re.compile(r"place spot \(([-0-9.]+), ([-0-9.]+), [-0-9.]+\) m; cube at [^:]*: ([0-9.]+) mm off")
WALL = re.compile(r"wall contacts: (\d+) physics steps with the arm, (\d+) with the cube")
FAILED_STEP = re.compile(r"step (\d+) \(([^)]+)\) failed: ([^\n]*)")
MEASURED = re.compile(r"cube measured at \(([-0-9.]+), ([-0-9.]+), [-0-9.]+\) m, yaw ([-0-9.]+)°")


@dataclass
class Pick:
    """One seed's run, as the command printed it."""

    seed: int
    ok: bool
    wall_seconds: float
    pick_seconds: float | None = None
    planning_seconds: float | None = None
    slip_mm: float | None = None
    slip_deg: float | None = None
    place_mm: float | None = None
    wall: str = ""
    spot: str = ""
    why: str = ""


def one_pick(seed: int, backend: str, timeout: float) -> Pick:
    """Run the demo with ``--seed seed``; what it printed, parsed."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "bb_robot.cli", "up", "--demo-pick", "--seed", str(seed), "--backend", backend]
    start = time.perf_counter()
    try:
        run = subprocess.run(
            command, capture_output=True, text=True, cwd=_common.REPO_ROOT, env=env, timeout=timeout, check=False
        )
        output, code = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired as expired:
        output, code = str(expired.stdout or "") + str(expired.stderr or ""), -1
    pick = Pick(seed, code == 0, time.perf_counter() - start)
    if (found := TIMES.search(output)) is not None:
        pick.pick_seconds, pick.planning_seconds = float(found.group(1)), float(found.group(2))
    last = [line for line in output.splitlines() if line.startswith("pick demo ")]
    tail = last[-1] if last else output
    if (found := SLIP.search(tail)) is not None:
        pick.slip_mm, pick.slip_deg = float(found.group(1)), float(found.group(2))
    if (found := PLACE.search(tail)) is not None:
        pick.place_mm = float(found.group(3))
    if (found := WALL.search(tail)) is not None:
        pick.wall = f"{found.group(1)} / {found.group(2)}"
    if (found := MEASURED.search(output)) is not None:
        pick.spot = f"({found.group(1)}, {found.group(2)}), {float(found.group(3)):+.0f}°"
    if not pick.ok:
        failed = FAILED_STEP.search(output)
        pick.why = (
            f"step {failed.group(1)} ({failed.group(2)}): {failed.group(3)}"
            if failed
            else (tail.strip() if last else f"exit {code}: {output.strip().splitlines()[-1:] or ['no output']}")
        )
    return pick


def _cell(value: float | None, form: str) -> str:
    return "—" if value is None else format(value, form)


def report(picks: list[Pick], backend: str, machine: str, load_start: str) -> str:
    """The docs section."""
    ok = [p for p in picks if p.ok]
    timed = [p for p in picks if p.pick_seconds is not None and p.planning_seconds is not None]
    total = sum(p.pick_seconds or 0.0 for p in timed)
    planning = sum(p.planning_seconds or 0.0 for p in timed)
    slips = [p.slip_mm for p in picks if p.slip_mm is not None]
    angles = [p.slip_deg for p in picks if p.slip_deg is not None]
    places = [p.place_mm for p in picks if p.place_mm is not None]
    seconds = [p.pick_seconds for p in timed if p.pick_seconds is not None]
    median_pick = statistics.median(seconds) if seconds else None
    fastest, slowest = (min(seconds), max(seconds)) if seconds else (None, None)
    met = len(ok) >= GOAL_SUCCESSES and len(picks) >= GOAL_SUCCESSES
    status = "met" if met else ("not met" if len(picks) >= GOAL_SUCCESSES else "not judged (fewer seeds)")
    lines = _common.report_head(
        "Pick and place: `bb-robot up --demo-pick` (`benchmarks/bench_pick.py`)",
        f"({len(picks)} seeds, {', '.join(str(p.seed) for p in picks)}, backend {backend}; one `bb-robot up "
        "--demo-pick --seed S` after the other, each a new process: the launch, the nodes, the demo).",
        machine,
        [(status, f"{GOAL_SUCCESSES} of {GOAL_SUCCESSES} seeds succeed: {len(ok)} of {len(picks)}")],
    )
    lines += [
        f"- success rate: {len(ok)} / {len(picks)}",
        f"- time per pick (the ten steps): median {_cell(median_pick, '.1f')} s (min {_cell(fastest, '.1f')} s, "
        f"max {_cell(slowest, '.1f')} s); the whole command (start-up, demo, shutdown) median "
        f"{statistics.median(p.wall_seconds for p in picks):.1f} s",
        f"- planning share: {planning / total * 100 if total else 0.0:.1f} % of the steps' time "
        f"({planning:.1f} s of {total:.1f} s: `move_action` plans and `compute_cartesian_path` requests, as the client "
        "waited for them; the rest is motion, the gripper, the scene's changes reaching the driver)",
        f"- largest slip of the cube in the hand (close to open, relative to `tcp`): "
        f"{_cell(max(slips) if slips else None, '.1f')} mm and {_cell(max(angles) if angles else None, '.1f')}° "
        "(limit 5 mm and 5°)",
        f"- farthest from the place spot: {_cell(max(places) if places else None, '.1f')} mm (limit 10 mm)",
        "",
        "| seed | cube (x, y) m, yaw | result | pick | planning | slip | off the spot | wall contacts (arm / cube) |",
        "|---:|:---|:---|---:|---:|---:|---:|:---|",
    ]
    for p in picks:
        result = "ok" if p.ok else f"failed: {p.why}"
        lines.append(
            f"| {p.seed} | {p.spot or '—'} | {result} | {_cell(p.pick_seconds, '.1f')} s | "
            f"{_cell(p.planning_seconds, '.1f')} s | {_cell(p.slip_mm, '.1f')} mm, {_cell(p.slip_deg, '.1f')}° | "
            f"{_cell(p.place_mm, '.1f')} mm | {p.wall or '—'} |"
        )
    lines += ["", f"Load average at the end: {_common.load_average()} (at the start: {load_start})."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seeds 0-2 only (a smoke test)")
    parser.add_argument("--seeds", type=int, default=20, metavar="N", help="seeds 0 to N-1 (default 20)")
    parser.add_argument("--backend", default="mujoco", choices=("mujoco", "sim"))
    parser.add_argument("--timeout", type=float, default=300.0, metavar="S", help="seconds one run may take")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(0, 101)))
    seeds = range(3 if args.quick else args.seeds)
    machine, load_start = _common.machine_summary(("numpy", "mujoco")), _common.load_average()
    picks = []
    for seed in seeds:
        pick = one_pick(seed, args.backend, args.timeout)
        picks.append(pick)
        print(
            f"seed {seed:2d}: {'ok' if pick.ok else 'FAILED'} pick {_cell(pick.pick_seconds, '.1f')} s, planning "
            f"{_cell(pick.planning_seconds, '.1f')} s, slip {_cell(pick.slip_mm, '.1f')} mm, "
            f"off {_cell(pick.place_mm, '.1f')} mm"
            f"{', ' + pick.why if pick.why else ''}",
            flush=True,
        )
    text = report(picks, args.backend, machine, load_start)
    print(text)
    if not args.no_docs and not args.quick and args.backend == "mujoco":
        print(f"\nwrote {_common.rewrite_doc_section(SECTION, text)}")
    return 0 if all(p.ok for p in picks) else 1


if __name__ == "__main__":
    sys.exit(main())

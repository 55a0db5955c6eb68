"""Benchmark of the driver's ``mujoco`` backend: physics steps per second, real-time factor, lag.

    .venv/bin/python benchmarks/bench_mujoco.py            # full run (about three minutes)
    .venv/bin/python benchmarks/bench_mujoco.py --quick    # shorter runs, a smoke test

Two arms: the bundled bb_arm (7 driven joints, primitive shapes) and the Franka FR3 of the shared
corpus (``franka_description/fr3_hand.urdf``: 7 arm joints and a gripper; its meshes are not in
the corpus, so it has inertia but no collision shapes besides the floor).  Measured:

- **physics alone**: ``mujoco.mj_step`` in a loop on the written model (steps per CPU second);
- **lockstep, flat out**: the driver's core on the backend in lockstep (``mujoco.lockstep``),
  cycles run back to back on a simulated clock with the arm held armed in position control: how
  much faster than real time the whole control path (core + backend + physics) can run, at 500 Hz
  and 1 kHz control (2 and 1 physics steps of 1 ms per cycle);
- **driver node, real time**: ``python -m bb_robot.nodes.driver`` with ``backend: mujoco`` as a
  child process, the arm held armed, for a fixed time at 500 Hz and 1 kHz: the backend's real-time
  factor and the loop's lag and skipped cycles from ``/diagnostics``, and the driver process's CPU.

Numbers are measurements on this machine at this load (recorded at the start and the end), not
assertions.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import _driver_process

REPO_ROOT = _common.REPO_ROOT
SECTION = "bench_mujoco"
ARMS = {
    "bb_arm": REPO_ROOT / "models" / "bb_arm.urdf",
    "FR3 (corpus)": REPO_ROOT.parent / "shared" / "corpus" / "franka_description" / "fr3_hand.urdf",
}
#: Start poses, arm raised (the driver's joint order); the finger joints last.
POSES = {
    "bb_arm": [0.0, -0.3, 0.6, 0.0, 0.0, 0.0, 0.0],
    "FR3 (corpus)": [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8, 0.02],
}
RATES = (500.0, 1000.0)


@dataclass
class NodeRun:
    arm: str
    rate: float
    seconds: float
    status: dict[str, str] = field(default_factory=dict)
    backend: dict[str, str] = field(default_factory=dict)
    cpu_per_1000: float | None = None
    cpu_share: float | None = None


def physics_alone(path: Path, seconds: float) -> float:
    """Steps per second of ``mj_step`` on the written model (the arm falling limp, then at rest)."""
    import mujoco

    from bb_robot.mjcf import robot_to_mjcf
    from bb_robot.urdf.builder import load_urdf

    model = mujoco.MjModel.from_xml_string(robot_to_mjcf(load_urdf(str(path))).text)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, nstep=500)
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        mujoco.mj_step(model, data, nstep=1000)
        steps += 1000
    return steps / (time.perf_counter() - started)


def lockstep_flat_out(arm: str, path: Path, rate: float, sim_seconds: float) -> tuple[float, float]:
    """(cycles per second, real-time factor) of the core on the backend in lockstep, held armed."""
    from bb_robot.driver.backends.base import BackendContext
    from bb_robot.driver.backends.mujoco import MujocoBackend
    from bb_robot.driver.commands import limits as L
    from bb_robot.driver.core import CoreSettings, DriverCore
    from bb_robot.driver.model import driven_joints
    from bb_robot.urdf.builder import load_urdf

    robot = load_urdf(str(path))
    joints = driven_joints(robot)
    limits = L.from_robot(robot, joints)
    quiet = logging.getLogger("bench_mujoco")
    quiet.setLevel(logging.ERROR)
    options = {"lockstep": True, "initial_positions": POSES[arm]}
    backend = MujocoBackend(BackendContext(robot, joints, limits, rate, quiet, options))
    backend.connect(1.0)
    core = DriverCore(backend, limits, CoreSettings(command_timeout=0.0), armed=True)
    core.active = True
    backend.set_armed(True)
    period = int(round(1e9 / rate))
    cycles = int(sim_seconds * rate)
    now = core.run_cycles(int(rate), period, 1_000_000_000)  # one second to settle, untimed
    started = time.perf_counter()
    core.run_cycles(cycles, period, now)
    wall = time.perf_counter() - started
    return cycles / wall, sim_seconds / wall


def node_run(run: NodeRun, domain: int) -> NodeRun:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor

    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_bench_mujoco_"))
    driver = _driver_process.start_driver(
        {
            "model": str(ARMS[run.arm]),
            "backend": "mujoco",
            "autostart": True,
            "auto_arm": True,
            "command_timeout": 0.0,
            "rate": run.rate,
            "mujoco": {"initial_positions": POSES[run.arm]},
        },
        workdir=workdir,
        domain=domain,
    )
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bench_mujoco_client", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    diagnostics: list[Any] = []
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    try:
        driver.wait_for(
            lambda: "active: control loop" in driver.log(),
            60,
            "the driver did not start",
            lambda: executor.spin_once(timeout_sec=0.05),
        )
        settle = time.monotonic() + 2.0
        while time.monotonic() < settle:
            executor.spin_once(timeout_sec=0.05)
        early, _ = _driver_process.loop_status(diagnostics, "driver")
        cpu_start, wall_start = driver.cpu_seconds(), time.monotonic()
        end = wall_start + run.seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        run.status, _ = _driver_process.loop_status(diagnostics, "driver")
        cpu = driver.cpu_seconds() - cpu_start
        run.cpu_share = cpu / (time.monotonic() - wall_start)
        cycles = int(run.status.get("cycles", "0") or 0) - int(early.get("cycles", "0") or 0)
        run.cpu_per_1000 = cpu / cycles * 1000 if cycles > 0 else None
        for array in reversed(diagnostics):
            found = [s for s in array.status if s.name.endswith(": backend")]
            if found:
                run.backend = {kv.key: kv.value for kv in found[0].values}
                break
    finally:
        driver.stop()
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    return run


def reading(alone: dict[str, float], nodes: list[NodeRun]) -> str:
    """What the numbers say: the physics step against the whole cycle, and real time kept or not."""
    parts = []
    for arm, rate in alone.items():
        runs = [r for r in nodes if r.arm == arm and r.status.get("cycle time mean (ms)")]
        if not runs:
            continue
        cycle = max(float(r.status["cycle time mean (ms)"]) for r in runs)
        parts.append(
            f"{arm}: one 1 ms physics step costs {1e6 / rate:.0f} µs alone; a whole control cycle in the node "
            f"(core, servo gains from the mass matrix, gravity compensation, the physics steps) {cycle:.2f} ms "
            "at most on average"
        )
    kept = [r for r in nodes if r.backend.get("real-time factor")]
    worst = min((float(r.backend["real-time factor"]) for r in kept), default=float("nan"))
    return (
        "**Reading**: "
        + "; ".join(parts)
        + f". In real time the simulation kept pace with the clock in every run (real-time factor at least "
        f"{worst:.3f}); a skipped cycle is simulated at the next one (its time is carried, not lost)."
    )


def report(
    alone: dict[str, float],
    flat: dict[tuple[str, float], tuple[float, float]],
    nodes: list[NodeRun],
    quick: bool,
    machine: str,
    load_end: str,
) -> str:
    lines = [
        "## MuJoCo backend (`benchmarks/bench_mujoco.py`)",
        "",
        f"Run {_common.timestamp()} ({'quick run' if quick else 'full run'}).",
        "",
        f"Machine: {machine}.",
        "",
        "The machine is shared with other engineers' work: the load average above says how busy it was. "
        "bb_arm: the bundled arm, 7 driven joints; FR3: `franka_description/fr3_hand.urdf` of the shared "
        "corpus, 8 driven joints (its meshes are not in the corpus: inertia without collision shapes). "
        "Physics time step 1 ms; the arms held armed in position control at a raised pose. "
        "*Physics alone*: `mj_step` on the written model; *lockstep, flat out*: the driver's core and the "
        "backend in lockstep, cycles back to back on a simulated clock (simulated seconds per wall second); "
        "*driver node*: the driver as a child process in real time (`mujoco.lockstep: false`), its figures "
        "from `/diagnostics` at the end of the run (the lag over the loop's last 2,047 cycles) and its "
        "CPU time over the run.",
        "",
        _common.markdown_table(
            ["arm", "physics alone (steps/s)"],
            [[arm, f"{value:,.0f}"] for arm, value in alone.items()],
            "lr",
        ),
        "",
        _common.markdown_table(
            ["arm", "control rate", "lockstep cycles/s", "lockstep real-time factor"],
            [[arm, f"{rate:g} Hz", f"{c:,.0f}", f"{f:.1f}"] for (arm, rate), (c, f) in flat.items()],
            "lrrr",
        ),
        "",
        _common.markdown_table(
            [
                "arm",
                "driver node",
                "real-time factor",
                "physics steps/CPU s",
                "lag p99 / max",
                "skipped cycles",
                "cycle time mean / max",
                "CPU per 1,000 cycles",
                "CPU share",
            ],
            [
                [
                    run.arm,
                    f"{run.rate:g} Hz, {run.seconds:g} s",
                    run.backend.get("real-time factor", "—"),
                    run.backend.get("physics steps per CPU second", "—"),
                    f"{run.status.get('lag p99 (ms)', '—')} / {run.status.get('lag max (ms)', '—')} ms",
                    f"{run.status.get('skipped cycles', '—')} of {run.status.get('cycles', '—')}",
                    f"{run.status.get('cycle time mean (ms)', '—')} / {run.status.get('cycle time max (ms)', '—')} ms",
                    "—" if run.cpu_per_1000 is None else f"{run.cpu_per_1000 * 1e3:.0f} ms",
                    "—" if run.cpu_share is None else f"{run.cpu_share * 100:.0f} %",
                ]
                for run in nodes
            ],
            "llrrrrrrr",
        ),
        "",
        reading(alone, nodes),
        "",
        f"Load average at the end: {load_end}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="shorter runs (a smoke test)")
    parser.add_argument("--no-doc", action="store_true", help="print the report only; leave docs/benchmarks.md")
    args = parser.parse_args(argv)
    machine = _common.machine_summary(("numpy", "mujoco"))
    arms = {name: path for name, path in ARMS.items() if path.is_file()}
    missing = sorted(set(ARMS) - set(arms))
    if missing:
        print(f"skipping {', '.join(missing)}: file not found", file=sys.stderr)
    alone = {arm: physics_alone(path, 1.0 if args.quick else 3.0) for arm, path in arms.items()}
    flat = {
        (arm, rate): lockstep_flat_out(arm, path, rate, 2.0 if args.quick else 10.0)
        for arm, path in arms.items()
        for rate in RATES
    }
    domain = random.randrange(100, 200)
    nodes = [node_run(NodeRun(arm, rate, 5.0 if args.quick else 20.0), domain) for arm in arms for rate in RATES]
    text = report(alone, flat, nodes, args.quick, machine, _common.load_average())
    print(text)
    if not args.no_doc:
        print(f"wrote {_common.rewrite_doc_section(SECTION, text)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

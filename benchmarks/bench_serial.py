#!/usr/bin/env python3
"""Serial-manipulator model: forward kinematics and Jacobian against Pinocchio.

Run ``python benchmarks/bench_serial.py [--quick] [--no-docs]``.  On a 7-DOF arm (the Panda of
the shared corpus, base ``panda_link0`` to tip ``panda_hand``):

(a) one configuration per call: ``SerialManipulator.end_effector_pose(q)``, ``forward(q)`` (every
    chain link, joint frame and the end effector) and ``jacobian(q)`` against
    ``pinocchio.forwardKinematics`` + ``updateFramePlacements`` and ``computeFrameJacobian``
    (``LOCAL_WORLD_ALIGNED``, which itself runs the forward pass); random ``q`` given one at a
    time as numpy rows, a run is 2,000 configurations, the figure the best of 5 runs.  Targets:
    end-effector pose within 5× of Pinocchio, Jacobian within 8×;
(b) 10,000 configurations: one batched call against Pinocchio called in a Python loop over
    the same configurations (converted to its layout before timing); cost per configuration.

Every party is checked to agree with the others (largest difference printed) before timing.
Prints a Markdown report and rewrites the ``bench_serial`` section of ``docs/benchmarks.md``
(``--no-docs`` leaves it alone).  Numbers are measurements, never assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402  (puts the repository root and test/ on sys.path)
import numpy as np  # noqa: E402
from helpers.pinocchio_configuration import pin_configuration  # noqa: E402

from bb_robot.model.serial import SerialManipulator  # noqa: E402

try:
    import pinocchio as pin
except ImportError:  # pragma: no cover - reported in the output
    pin = None

SECTION = "bench_serial"
ARM = "moveit_resources/panda_description/urdf/panda.urdf"
TIP = "panda_hand"
BATCH = 10_000
SINGLE_RUN = 2_000
#: quantity -> (our party, Pinocchio's party, target ratio ours ÷ Pinocchio, one configuration)
SINGLE_TARGETS = {
    "end-effector pose": ("ours: end_effector_pose", "pin: fk+frames", 5.0),
    "geometric Jacobian": ("ours: jacobian", "pin: computeFrameJacobian", 8.0),
}


def _each(function: Callable[[np.ndarray], object], rows: list[np.ndarray]) -> Callable[[], None]:
    """One run: ``function`` called on each row in turn."""

    def run() -> None:
        for row in rows:
            function(row)

    return run


def _each_in_python(function: Callable[[np.ndarray], object], rows: list[np.ndarray]) -> Callable[[], None]:
    """One run without compiled code (``BB_ROBOT_KERNEL=numpy``: what the nodes and the command line run)."""
    each = _each(function, rows)

    def run() -> None:
        with _common.kinematics_in_python():
            each()

    return run


def _agreement(chain: SerialManipulator, model: Any, data: Any, q: np.ndarray) -> tuple[float, float]:
    """Largest difference of the end-effector pose and of the Jacobian, ours against Pinocchio."""
    frame = model.getFrameId(chain.tip_link, pin.BODY)
    columns = [model.joints[model.getJointId(n)].idx_v for n in chain.joint_names]
    qp = pin_configuration(model, chain, q)
    pin.forwardKinematics(model, data, qp)
    pin.updateFramePlacements(model, data)
    pose = float(np.abs(chain.end_effector_pose(q) - data.oMf[frame].homogeneous).max())
    reference = pin.computeFrameJacobian(model, data, qp, frame, pin.LOCAL_WORLD_ALIGNED)[:, columns]
    jacobian = float(np.abs(chain.jacobian(q) - reference).max())
    return pose, jacobian


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)
    single_repeat, batch_repeat = (3, 3) if args.quick else (5, 15)

    path = _common.CORPUS_DIR / ARM
    if not path.is_file():
        print(f"no {ARM} in the shared corpus ({_common.CORPUS_DIR})", file=sys.stderr)
        return 1
    machine = _common.machine_summary(("numpy", "pin"))
    print(f"machine: {machine}", file=sys.stderr)

    chain = SerialManipulator.from_urdf(path, TIP)
    rng = np.random.default_rng(7)
    q = rng.uniform(chain.lower_limits, chain.upper_limits)
    configurations = rng.uniform(chain.lower_limits, chain.upper_limits, size=(BATCH, chain.dof))
    rows = list(configurations[:SINGLE_RUN])  # numpy rows, one configuration each

    ours_single: dict[str, Callable[[], object]] = {
        "ours: end_effector_pose": _each(chain.end_effector_pose, rows),
        "ours: forward (all frames)": _each(chain.forward, rows),
        "ours: jacobian": _each(chain.jacobian, rows),
        "Python: end_effector_pose": _each_in_python(chain.end_effector_pose, rows),
        "Python: forward (all frames)": _each_in_python(chain.forward, rows),
        "Python: jacobian": _each_in_python(chain.jacobian, rows),
    }
    ours_batch: dict[str, Callable[[], object]] = {
        "ours: end_effector_pose": lambda: chain.end_effector_pose(configurations),
        "ours: forward (all frames)": lambda: chain.forward(configurations),
        "ours: jacobian": lambda: chain.jacobian(configurations),
    }
    pin_single: dict[str, Callable[[], object]] = {}
    pin_batch: dict[str, Callable[[], object]] = {}
    agreement = "Pinocchio is not installed: not compared."
    if pin is not None:
        model = pin.buildModelFromUrdf(str(path))
        data = model.createData()
        frame = model.getFrameId(chain.tip_link, pin.BODY)
        pin_configurations = [pin_configuration(model, chain, c) for c in configurations]
        forward, frames, jacobian = pin.forwardKinematics, pin.updateFramePlacements, pin.computeFrameJacobian
        world = pin.LOCAL_WORLD_ALIGNED

        def pin_fk() -> None:
            for c in pin_configurations[:SINGLE_RUN]:
                forward(model, data, c)
                frames(model, data)

        def pin_jacobian() -> None:
            for c in pin_configurations[:SINGLE_RUN]:
                jacobian(model, data, c, frame, world)

        def pin_fk_loop() -> None:
            for c in pin_configurations:
                forward(model, data, c)
                frames(model, data)

        def pin_jacobian_loop() -> None:
            for c in pin_configurations:
                jacobian(model, data, c, frame, world)

        pin_single = {"pin: fk+frames": pin_fk, "pin: computeFrameJacobian": pin_jacobian}
        pin_batch = {"pin: fk+frames": pin_fk_loop, "pin: computeFrameJacobian": pin_jacobian_loop}
        worst = [_agreement(chain, model, data, c) for c in (q, *configurations[:50])]
        agreement = (
            f"Largest difference from Pinocchio over 51 configurations: end-effector pose "
            f"{max(w[0] for w in worst):.1e}, Jacobian {max(w[1] for w in worst):.1e}."
        )
    single_parties = {**ours_single, **pin_single}
    batch_parties = {**ours_batch, **pin_batch}

    print("(a) one configuration per call", file=sys.stderr)
    timed = _common.interleaved(single_parties, single_repeat, clock=time.process_time)
    single = {n: [t / SINGLE_RUN for t in s] for n, s in timed.items()}
    print(f"(b) {BATCH:,} configurations", file=sys.stderr)
    batched = _common.interleaved(batch_parties, batch_repeat, clock=time.process_time)

    def cost(name: str) -> str:  # one configuration: the best run
        return _common.format_seconds(min(single[name])) if name in single else "—"

    def per(name: str) -> str:
        return _common.format_spread(batched[name], BATCH) if name in batched else "—"

    def ratio(ours: str, peer: str, samples: dict[str, list[float]]) -> str:
        if peer not in samples:
            return "—"
        pick = min if samples is single else _common.median
        return _common.format_ratio(pick(samples[ours]), pick(samples[peer]))

    targets = []
    for quantity, (ours_name, pin_name, target) in SINGLE_TARGETS.items():
        if pin_name in single:
            value = min(single[ours_name]) / min(single[pin_name])
            status = "met" if value <= target else "MISSED"
            targets.append(
                f"- **{status}**: one configuration, {quantity}: ours {value:.1f}× Pinocchio (target ≤ {target:g}×)"
            )

    rows = [
        [
            "end-effector pose",
            cost("ours: end_effector_pose"),
            cost("Python: end_effector_pose"),
            cost("pin: fk+frames"),
            ratio("ours: end_effector_pose", "pin: fk+frames", single),
            ratio("Python: end_effector_pose", "pin: fk+frames", single),
            per("ours: end_effector_pose"),
            per("pin: fk+frames"),
            ratio("pin: fk+frames", "ours: end_effector_pose", batched),
        ],
        [
            "all chain frames (`forward`)",
            cost("ours: forward (all frames)"),
            cost("Python: forward (all frames)"),
            cost("pin: fk+frames"),
            ratio("ours: forward (all frames)", "pin: fk+frames", single),
            ratio("Python: forward (all frames)", "pin: fk+frames", single),
            per("ours: forward (all frames)"),
            per("pin: fk+frames"),
            ratio("pin: fk+frames", "ours: forward (all frames)", batched),
        ],
        [
            "geometric Jacobian (6×7)",
            cost("ours: jacobian"),
            cost("Python: jacobian"),
            cost("pin: computeFrameJacobian"),
            ratio("ours: jacobian", "pin: computeFrameJacobian", single),
            ratio("Python: jacobian", "pin: computeFrameJacobian", single),
            per("ours: jacobian"),
            per("pin: computeFrameJacobian"),
            ratio("pin: computeFrameJacobian", "ours: jacobian", batched),
        ],
    ]
    mode = "--quick" if args.quick else "full run"
    lines = [
        "## Serial-manipulator model against Pinocchio (`benchmarks/bench_serial.py`)",
        "",
        f"Run {_common.timestamp()} ({mode}: one configuration per call, random `q` given one at a "
        f"time as numpy rows, the best of {single_repeat} runs of {SINGLE_RUN:,} configurations; "
        f"{BATCH:,} configurations: median of {batch_repeat} samples, the minimum in brackets).  Times are "
        "CPU time of the benchmark process (`time.process_time`), not wall time: on this shared machine the "
        "other work preempts long runs more often than short ones.",
        "",
        f"Machine: {machine}.",
        "",
        f"Arm: `corpus:{ARM}`, `SerialManipulator.from_urdf(path, tip='{TIP}')`: "
        f"{chain.dof} revolute joints, base `{chain.base_link}`, tip `{chain.tip_link}`.  "
        "*ours* (one) is a call with `q` of shape (7,) as a user gets it (compiled code, "
        "`bb_robot.model.compiled`); "
        "*ours, Python* the same call without numba (`BB_ROBOT_KERNEL=numpy`, as the nodes and the "
        "command line run it: generated Python, `bb_robot.model.unrolled`); *ours* (batched) one call with `Q` of "
        f"shape ({BATCH:,}, 7), cost per configuration.  Pinocchio: `forwardKinematics` + "
        "`updateFramePlacements` (every frame of the model), and `computeFrameJacobian(..., "
        "LOCAL_WORLD_ALIGNED)` (which runs the forward pass itself); batched, it is called in a "
        "Python loop over configurations already in its layout.  The *ours ÷ pin* column (one "
        "configuration) above 1× means Pinocchio is faster; the *pin ÷ ours* column (batched) "
        "above 1× means ours is cheaper per configuration.",
        "",
        agreement,
        "",
        *targets,
        "",
        _common.markdown_table(
            [
                "quantity",
                "ours (one)",
                "ours, Python (one)",
                "Pinocchio (one)",
                "ours ÷ pin",
                "Python ÷ pin",
                f"ours ({BATCH:,}), per config",
                "Pinocchio loop, per config",
                "pin ÷ ours",
            ],
            rows,
        ),
        "",
        f"Load average at the end: {_common.load_average()}.",
    ]
    if pin is None:
        lines.insert(4, "Pinocchio (`pin`) is not installed: its columns are empty.")
    report = "\n".join(lines) + "\n"
    print(report)
    if not args.no_docs:
        page = _common.rewrite_doc_section(SECTION, report)
        print(f"wrote the {SECTION} section of {page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Inverse kinematics against TRAC-IK (pytracik) and roboticstoolbox's ``ik_LM``, TRAC-IK's protocol.

Run ``python benchmarks/bench_ik.py [--count N] [--robots NAME ...] [--no-docs]``.  Per robot
(base and tip links in :data:`ROBOTS`), ``--count`` configurations (default 10,000, TRAC-IK's
number) are drawn uniformly within the joint limits (a continuous joint in (-pi, pi]); each one's
tip pose by Pinocchio's forward kinematics is a target.  Every party solves every target from the
nominal seed (the middle of each joint's range, 0 for a continuous joint), in turn, target after
target, so that a busy machine slows all of them alike:

- ours: ``SerialManipulator.inverse(target, seed=nominal)``: 1e-5 m and 1e-5 rad, 5 ms timeout
  (the defaults), compiled with numba;
- TRAC-IK: ``pytracik.TRAC_IK(base, tip, urdf, 0.005, 1e-5, Speed)`` with ``set_joint_limits``
  (a continuous joint: the float range, as TRAC-IK does itself); ``ik(seed, x, y, z, qx, qy, qz, qw)``;
- roboticstoolbox: ``ets.ik_LM(target, q0=seed, tol=5e-11, joint_limits=True)`` on the chain's
  ETS; ``tol`` bounds ``0.5 |e|^2``, so its residual ``|e|`` is at most 1e-5, at most ours.

Each solve is timed with :func:`time.perf_counter` around the call, failures included at their
full time.  One check judges every party: Pinocchio's forward kinematics of the returned
configuration must match the target within 1e-5 on each of x, y, z and of the rotation vector of
``R_target^T R`` (TRAC-IK's protocol: 1e-5 on x, y, z, roll, pitch, yaw), and the configuration
must be within the joint limits (1e-9 slack for parsing differences).  Prints a Markdown report
and rewrites the ``bench_ik`` section of ``docs/benchmarks.md`` (``--no-docs`` leaves it alone).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import math
import os
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402  (puts the repository root and test/ on sys.path)
import numpy as np  # noqa: E402
from helpers.pinocchio_configuration import pin_configuration  # noqa: E402

from bb_robot.model.ik import rotation_log  # noqa: E402
from bb_robot.model.serial import SerialManipulator  # noqa: E402

SECTION = "bench_ik"
TOLERANCE = 1e-5
TIMEOUT = 0.005
LIMIT_SLACK = 1e-9
#: roboticstoolbox's ``tol`` bounds 0.5·|e|²: |e| <= 1e-5 then.
RTB_TOL = 0.5 * TOLERANCE**2
#: name -> (file: "erd:" example-robot-data or a path in the repository, base link, tip link)
ROBOTS: dict[str, tuple[str, str, str]] = {
    "Panda": ("erd:panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
    "UR5": ("erd:ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    "xArm7": ("erd:xarm_description/urdf/xarm7.urdf", "link_base", "link_eef"),
    "Kinova Jaco2": ("erd:kinova_description/robots/kinova.urdf", "j2s6s200_link_base", "j2s6s200_end_effector"),
    "Talos left arm": ("erd:talos_data/robots/talos_reduced.urdf", "torso_2_link", "arm_left_7_link"),
    "bb_arm": ("models/bb_arm.urdf", "base_link", "tcp"),
}
#: TRAC-IK's README (v1.4.6), as quoted in issue 24: another machine, another year.
PUBLISHED = [
    ("Franka Panda", "99.70 %", "0.38 ms"),
    ("KUKA iiwa 14", "99.84 %", "0.31 ms"),
    ("22 chains (range)", "99.56 – 100 %", "0.18 – 0.65 ms"),
]
PARTIES = ("ours", "TRAC-IK", "rtb ik_LM")


@dataclass
class Outcome:
    """One party's solves of one robot's targets."""

    times: list[float]
    solved: list[bool]

    def rate(self) -> float:
        return sum(self.solved) / len(self.solved)

    def summary(self) -> tuple[float, float, float]:
        times = np.array(self.times)
        return float(times.mean()), float(np.median(times)), float(np.percentile(times, 99))


def resolve(spec: str) -> Path:
    """The file of a :data:`ROBOTS` entry."""
    if spec.startswith("erd:"):
        found = {_common.robot_label(p): p for p in _common.example_robot_data_urdfs()}
        if spec not in found:
            raise SystemExit(f"bench_ik: {spec} not found: is example-robot-data installed (scripts/setup)?")
        return found[spec]
    return _common.REPO_ROOT / spec


def without_geometry(path: Path, directory: str) -> str:
    """The URDF without visual and collision elements (roboticstoolbox resolves mesh packages through ROS)."""
    tree = ET.parse(path)
    for link in tree.getroot().iter("link"):
        for tag in ("visual", "collision"):
            for element in link.findall(tag):
                link.remove(element)
    out = os.path.join(directory, path.name)
    tree.write(out)
    return out


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence C++ output on file descriptor 1."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class Judge:
    """Pinocchio's forward kinematics of a chain: the one check of every party."""

    def __init__(self, path: Path, chain: SerialManipulator) -> None:
        import pinocchio as pin

        self.pin = pin
        with _common.quiet_stderr():
            self.model = pin.buildModelFromUrdf(str(path))
        self.data = self.model.createData()
        self.frame = self.model.getFrameId(chain.tip_link)
        self.base = self.model.getFrameId(chain.base_link)
        self.chain = chain

    def pose(self, q: np.ndarray) -> np.ndarray:
        """The tip's pose in the base link's frame."""
        pin = self.pin
        pin.forwardKinematics(self.model, self.data, pin_configuration(self.model, self.chain, q))
        pin.updateFramePlacements(self.model, self.data)
        base = self.data.oMf[self.base]
        return np.asarray((base.inverse() * self.data.oMf[self.frame]).homogeneous)

    def accepts(self, q: np.ndarray | None, target: np.ndarray) -> bool:
        if q is None or q.shape != (self.chain.dof,) or not np.isfinite(q).all():
            return False
        if (q < self.chain.lower_limits - LIMIT_SLACK).any() or (q > self.chain.upper_limits + LIMIT_SLACK).any():
            return False
        pose = self.pose(q)
        rotation = rotation_log(target[:3, :3].T @ pose[:3, :3])[0]
        return bool(np.abs(pose[:3, 3] - target[:3, 3]).max() <= TOLERANCE and np.abs(rotation).max() <= TOLERANCE)


def solvers(path: Path, chain: SerialManipulator, seed: np.ndarray, directory: str) -> dict[str, Callable[..., Any]]:
    """Each party: target (4×4) -> configuration or None."""
    import pytracik
    import roboticstoolbox as rtb

    from bb_robot.model.transforms import matrix_to_quaternion

    result: dict[str, Callable[..., Any]] = {}

    def ours(target: np.ndarray) -> np.ndarray | None:
        return chain.inverse(target, seed=seed).q

    result["ours"] = ours
    with _common.quiet_stderr(), _quiet_stdout():  # KDL's note on the root link's inertia
        tracik = pytracik.TRAC_IK(chain.base_link, chain.tip_link, path.read_text(), TIMEOUT, TOLERANCE, pytracik.Speed)
    big = float(np.finfo(np.float32).max)
    pytracik.set_joint_limits(
        tracik,
        [float(v) if math.isfinite(v) else -big for v in chain.lower_limits],
        [float(v) if math.isfinite(v) else big for v in chain.upper_limits],
    )

    def trac_ik(target: np.ndarray) -> np.ndarray | None:
        x, y, z, w = matrix_to_quaternion(target[:3, :3])
        answer = pytracik.ik(tracik, seed, target[0, 3], target[1, 3], target[2, 3], x, y, z, w)
        return np.asarray(answer[1:]) if answer[0] >= 0 else None

    result["TRAC-IK"] = trac_ik
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        robot = rtb.Robot.URDF(without_geometry(path, directory))
    # A link's ETS runs from its parent link and includes its joint: from the first joint's child.
    # Its joints keep their indices in the whole robot, which ik_LM's C++ uses to index q: renumber.
    items = [copy.deepcopy(et) for et in robot.ets(chain.joints[0].child_link, chain.tip_link)]
    for index, et in enumerate(et for et in items if et.isjoint):
        et.jindex = index
    ets = rtb.ETS(items)
    probe = np.random.default_rng(0).uniform(-1.0, 1.0, chain.dof)
    if ets.n != chain.dof or not np.allclose(ets.eval(probe), chain.end_effector_pose(probe), atol=1e-9):
        raise SystemExit(f"bench_ik: roboticstoolbox's chain {chain.base_link} -> {chain.tip_link} differs from ours")

    def rtb_lm(target: np.ndarray) -> np.ndarray | None:
        answer = ets.ik_LM(target, q0=seed, tol=RTB_TOL, joint_limits=True)
        return np.asarray(answer.q) if answer.success else None

    result["rtb ik_LM"] = rtb_lm
    return result


def run_robot(name: str, count: int, rng: np.random.Generator) -> tuple[dict[str, Outcome], str]:
    spec, base, tip = ROBOTS[name]
    path = resolve(spec)
    chain = SerialManipulator.from_urdf(path, tip=tip, base=base)
    judge = Judge(path, chain)
    lower = np.where(np.isfinite(chain.lower_limits), chain.lower_limits, -math.pi)
    upper = np.where(np.isfinite(chain.upper_limits), chain.upper_limits, math.pi)
    configurations = rng.uniform(lower, upper, (count, chain.dof))
    targets = [judge.pose(q) for q in configurations]
    seed = chain.inverse(targets[0], timeout=None, max_restarts=0).q * 0.0  # compiles before timing
    bounded = np.isfinite(chain.lower_limits) & np.isfinite(chain.upper_limits)
    seed[bounded] = 0.5 * (chain.lower_limits[bounded] + chain.upper_limits[bounded])
    outcomes = {party: Outcome([], []) for party in PARTIES}
    with tempfile.TemporaryDirectory() as directory:
        parties = solvers(path, chain, seed, directory)
        for function in parties.values():  # warm up
            function(targets[0])
        _common.freeze_heap()
        for target in targets:
            for party, function in parties.items():
                start = time.perf_counter()
                q = function(target)
                elapsed = time.perf_counter() - start
                outcomes[party].times.append(elapsed)
                outcomes[party].solved.append(judge.accepts(q, target))
    chain_text = f"`{Path(spec.removeprefix('erd:')).name}` {chain.base_link} → {chain.tip_link}, {chain.dof} joints"
    return outcomes, chain_text


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def report(results: dict[str, tuple[dict[str, Outcome], str]], count: int, wall: float) -> str:
    rows = []
    verdicts = []
    for name, (outcomes, chain_text) in results.items():
        for party in PARTIES:
            outcome = outcomes[party]
            mean, median, p99 = outcome.summary()
            rows.append(
                [name if party == "ours" else "", party, f"{100 * outcome.rate():.2f} %", ms(mean), ms(median), ms(p99)]
            )
        ours = outcomes["ours"]
        peer = min((p for p in PARTIES if p != "ours"), key=lambda p: outcomes[p].summary()[0])
        rate_ok = ours.rate() >= 0.999
        ratio = ours.summary()[0] / outcomes[peer].summary()[0]
        verdicts.append(
            f"- {name} ({chain_text}): solve rate {100 * ours.rate():.2f} % ÷ 99.9 % = "
            f"{ours.rate() / 0.999:.4f} ({'met' if rate_ok else 'NOT met'}); mean time ours ÷ {peer} (the faster "
            f"peer) = {ratio:.2f} ({'met' if ratio <= 1.0 else 'NOT met'}; aim 0.5)"
        )
    table = _common.markdown_table(["robot", "party", "solved", "mean", "median", "p99"], rows, align="llrrrr")
    published = _common.markdown_table(["chain", "solved", "mean"], PUBLISHED, align="lrr")
    lines = [
        "## Inverse kinematics against TRAC-IK and roboticstoolbox (`benchmarks/bench_ik.py`)",
        "",
        f"Run {_common.timestamp()}: `python benchmarks/bench_ik.py --count {count}` "
        f"({count:,} targets per robot, {wall:.0f} s).",
        "",
        _common.machine_summary(("numpy", "numba", "pin", "pytracik", "roboticstoolbox-python")),
        "",
        "TRAC-IK's protocol: targets are the tip poses (Pinocchio's FK) of configurations drawn uniformly "
        "within the limits (continuous joints in (-π, π]); every solve starts at the nominal seed (the middle "
        "of each range, 0 for a continuous joint); 1e-5 m / 1e-5 rad; 5 ms timeout for ours and TRAC-IK "
        "(Speed mode, joint limits set); roboticstoolbox's `ik_LM` (C++) with joint limits on and "
        "`tol=5e-11` (residual |e| ≤ 1e-5), its own budget of 100 searches of 30 iterations (it has no "
        "timeout).  Times are per call from Python, failures at their full time.  A solve counts when "
        "Pinocchio's FK of the returned q is within 1e-5 of the target on each of x, y, z and of the "
        "rotation vector, and q is within the limits (1e-9 slack): the same check for every party.",
        "",
        table,
        "",
        "Verdicts (ratios from this run):",
        "",
        *verdicts,
        "",
        "TRAC-IK's published results (its README, v1.4.6; another machine, C++ without Python calls):",
        "",
        published,
        "",
        f"Load average at the end: {_common.load_average()}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="targets per robot (TRAC-IK's protocol: 10,000)")
    parser.add_argument("--robots", nargs="+", choices=list(ROBOTS), default=list(ROBOTS), metavar="NAME")
    parser.add_argument("--random-seed", type=int, default=24, help="the configurations' random generator")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.random_seed)
    start = time.perf_counter()
    results = {}
    for name in args.robots:
        results[name] = run_robot(name, args.count, rng)
        outcomes = results[name][0]
        print(
            f"{name}: "
            + "; ".join(f"{p} {100 * outcomes[p].rate():.2f} % {ms(outcomes[p].summary()[0])}" for p in PARTIES),
            file=sys.stderr,
        )
    text = report(results, args.count, time.perf_counter() - start)
    print(text)
    if not args.no_docs:
        page = _common.rewrite_doc_section(SECTION, text)
        print(f"\nwrote the {SECTION} section of {page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""bench_collision (d): the allowed-collision matrix of real robots, and an independent check of its Never pairs.

For Baxter, Talos (``talos_reduced.urdf``), the Panda and the UR5 of example-robot-data:

- the matrix, cold: ``bb-robot collisions FILE --json`` in a fresh process with an empty cache
  (wall time: imports, meshes, sampling each pair over its joints, the closest-approach search);
- the independent check (``test/helpers/independent_contacts.py``): Pinocchio's own model and
  geometry, uniform configurations within Pinocchio's limits from a seed different from ours,
  triangle meshes through coal; how many of the pairs we call Never are ever in contact;
- the witnesses of the pairs the search found in contact, replayed in Pinocchio.

Also the SRDF checks: ``ur3_gripper.srdf`` verified (``--verify``), and the bundled models' SRDFs
verified cold in a fresh process (their stamp), and without it (searched).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from helpers.independent_contacts import PinocchioRobot, contacts
from helpers.robot_files import example_robot_data_urdfs

ROOT = Path(__file__).resolve().parents[1]
#: The independent sampler's seed (ours is 0).
INDEPENDENT_SEED = 20_261_205
ROBOTS = {
    "Baxter": "baxter_description/urdf/baxter.urdf",
    "Talos (reduced)": "talos_data/robots/talos_reduced.urdf",
    "Panda": "panda_description/urdf/panda.urdf",
    "UR5": "ur_description/urdf/ur5_robot.urdf",
}
#: Cold matrix time targets (s).
TIME_TARGETS = {"Baxter": 60.0, "Panda": 5.0}


def robot_file(suffix: str) -> tuple[Path, Path]:
    """The URDF of example-robot-data ending in ``suffix`` and the share directory its package URIs resolve in."""
    for path in example_robot_data_urdfs():
        if path.as_posix().endswith(suffix):
            return path, path.parents[4]  # <share>/example-robot-data/robots/<robot>/<dir>/<file>
    raise SystemExit(f"example-robot-data's {suffix} is not installed (scripts/setup installs it)")


def bb_robot(args: list[str], cache: str) -> tuple[float, int, str]:
    """Run ``bb-robot ARGS`` from this checkout in a fresh process: its wall time, exit code and output."""
    env = dict(os.environ, BB_ROBOT_CACHE_DIR=cache, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bb_robot.cli", *args], capture_output=True, text=True, env=env, check=False
    )
    return time.perf_counter() - start, done.returncode, done.stdout


def matrix_rows(samples: int) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """One row per robot, and the verdicts."""
    rows, targets = [], []
    for name, suffix in ROBOTS.items():
        urdf, share = robot_file(suffix)
        with tempfile.TemporaryDirectory() as cache:
            took, code, out = bb_robot(["collisions", str(urdf), "--resource-path", str(share), "--json"], cache)
        if code != 0:
            raise SystemExit(f"bb-robot collisions {urdf} exited {code}")
        report: dict[str, Any] = json.loads(out)
        never = [(d["link1"], d["link2"]) for d in report["disabled"] if d["reason"] == "Never"]
        robot = PinocchioRobot.load(urdf, share)
        replayed = 0
        for item in report["reached"]:
            pair = (item["link1"], item["link2"])
            chosen = robot.select([pair])
            replayed += pair in robot.in_contact(robot.q_of(item["witness"]), chosen)
        found = contacts(robot, never, samples, INDEPENDENT_SEED)
        margins = [d["margin"] for d in report["disabled"] if d["reason"] == "Never" and d["margin"] is not None]
        rows.append(
            [
                name,
                str(report["samples"]),
                str(len(never)),
                f"{min(margins) * 1000:.1f} mm" if margins else "—",
                f"{len(report['reached'])} ({replayed} replayed in contact)",
                f"{sum(found.values())} in {samples:,}" + (f": {found}" if found else ""),
                f"{took:.1f} s",
            ]
        )
        status = "met" if not found and replayed == len(report["reached"]) else "missed"
        targets.append(
            (
                status,
                f"{name}: of {len(never)} Never pairs, {len(found)} in contact in {samples:,} independent samples; "
                f"{replayed} of {len(report['reached'])} witnesses in contact in Pinocchio",
            )
        )
        if name in TIME_TARGETS:
            limit = TIME_TARGETS[name]
            verdict = "met" if took <= limit else "missed"
            targets.append((verdict, f"{name}'s matrix cold: {took:.1f} s (target ≤ {limit:.0f} s)"))
    return rows, targets


def srdf_rows() -> list[list[str]]:
    """The ur3_gripper SRDF verified, and the bundled models' SRDFs verified cold, stamped and searched."""
    rows = []
    urdf, share = robot_file("ur_description/urdf/ur3_gripper.urdf")
    srdf = urdf.parents[1] / "srdf" / "ur3_gripper.srdf"
    with tempfile.TemporaryDirectory() as cache:
        args = ["collisions", str(urdf), "--resource-path", str(share), "--srdf", str(srdf), "--verify", "--json"]
        took, code, out = bb_robot(args, cache)
    touching = [f"{p['link1']}–{p['link2']}" for p in json.loads(out)["pairs"] if p["status"] == "touches"]
    rows.append(
        ["ur3_gripper.srdf (example-robot-data)", f"exit {code}: can touch: {', '.join(touching)}", f"{took:.2f} s"]
    )
    for model in ("bb_arm.urdf", "bb_gripper.urdf", "bb_pan_tilt.urdf", "bb_arm_world.sdf"):
        path = ROOT / "models" / model
        srdf_path = path.with_suffix(".srdf")
        with tempfile.TemporaryDirectory() as cache:
            stamped, code, _ = bb_robot(["collisions", str(path), "--srdf", str(srdf_path), "--verify"], cache)
            copy = Path(cache) / "copy.srdf"
            copy.write_text(
                "".join(
                    line for line in srdf_path.read_text(encoding="utf-8").splitlines(True) if "verified:" not in line
                ),
                encoding="utf-8",
            )
            searched, code_searched, _ = bb_robot(["collisions", str(path), "--srdf", str(copy), "--verify"], cache)
        rows.append(
            [
                f"models/{srdf_path.name}",
                f"exit {code} (stamped), {code_searched} (stamp removed)",
                f"{stamped:.2f} s stamped; {searched:.2f} s searched",
            ]
        )
    return rows

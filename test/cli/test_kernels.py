"""``bb-robot kernels`` (bb_robot/cli/kernels.py): the one list of numba kernels, every kernel of it
compiled, and the line a command prints when it must still compile one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bb_robot.cli.kernels import KERNELS

pytest.importorskip("numba", reason="numba is not installed: run scripts/setup")

REPO = Path(__file__).resolve().parents[2]

# After compile_all, the numba functions of each listed module that numba caches (the entry points;
# inlined helpers have no cache of their own) and how many signatures each was compiled for.
_REPORT = """
import importlib, json
from bb_robot.cli.kernels import KERNELS, compile_all
compile_all(lambda line: None)
report = {}
for kernel in KERNELS:
    module = importlib.import_module(kernel.module)
    for name, value in vars(module).items():
        cache = getattr(value, "_cache", None)
        if cache is not None and type(cache).__name__ != "NullCache" and value.py_func.__module__ == kernel.module:
            report[f"{kernel.module}.{name}"] = len(value.signatures)
print(json.dumps(report))
"""


def test_every_numba_module_is_in_the_list() -> None:
    found = {
        ".".join(path.relative_to(REPO).with_suffix("").parts) for path in (REPO / "bb_robot").rglob("_*numba*.py")
    }
    assert found, "no numba module found under bb_robot/"
    assert found == {kernel.module for kernel in KERNELS}, (
        "bb_robot/cli/kernels.py's KERNELS must list every numba module (and only those), "
        "so that scripts/setup compiles it at install"
    )


def test_the_command_compiles_every_cached_kernel_of_every_module() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _REPORT], capture_output=True, text=True, cwd=REPO, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    modules = {name.rsplit(".", 1)[0] for name in report}
    assert modules == {kernel.module for kernel in KERNELS}, report
    uncompiled = sorted(name for name, signatures in report.items() if signatures == 0)
    assert not uncompiled, f"bb-robot kernels leaves these uncompiled (extend its warm-up): {uncompiled}"


def test_a_command_that_must_compile_says_so_once_and_a_cached_run_says_nothing(tmp_path: Path) -> None:
    # An empty numba cache (a fresh NUMBA_CACHE_DIR): the inverse kinematics kernel compiles.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    command = [
        sys.executable,
        "-m",
        "bb_robot.cli",
        "ik",
        "models/bb_arm.urdf",
        "--tip",
        "tcp",
        "--xyz",
        "0.3",
        "0.2",
        "0.8",
    ]
    first = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=600, check=False)
    assert first.returncode == 0, first.stderr
    lines = [line for line in first.stderr.splitlines() if "compiling" in line]
    assert len(lines) == 1, first.stderr
    assert "inverse kinematics" in lines[0] and "about" in lines[0] and "bb-robot kernels" in lines[0]
    second = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=600, check=False)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr
    assert second.stdout.splitlines()[1:] == first.stdout.splitlines()[1:]  # the first line has the time


_READY_POSE = """
import importlib, json
import numpy as np
from bb_robot.cli.kernels import KERNELS, compile_all
from bb_robot.cli.up_cartesian import collision_check, servo_chain
from bb_robot.cli.up_inputs import plan_bringup
from bb_robot.bringup import cartesian
from bb_robot.model import compiled


def signatures():
    found = {}
    for kernel in KERNELS:
        for name, value in vars(importlib.import_module(kernel.module)).items():
            if hasattr(value, "signatures") and hasattr(value, "py_func"):
                found[kernel.module + "." + name] = {str(s) for s in value.signatures}
    return found


compile_all(lambda line: None)
before = signatures()
compiled.choose("batch")  # as the bb-robot command runs
plan = plan_bringup(None)
chain = servo_chain(plan)
ready = cartesian.ready_configuration(chain, np.zeros(chain.dof), clear=collision_check(plan, chain))
added = {name: sorted(s - before.get(name, set())) for name, s in signatures().items() if s - before.get(name, set())}
print(json.dumps({"ready": ready.tolist(), "added": added}))
"""


def test_the_cartesian_demos_ready_pose_search_needs_no_kernel_the_command_did_not_compile() -> None:
    # What `bb-robot up --demo-cartesian` computes first.  It once passed writable joint limits where
    # the command had compiled read-only ones, and compiled inverse kinematics again: minutes on a
    # slow, busy host before the arm moved.  A signature numba adds (compiled, or loaded from a
    # cache some other run left) is one `bb-robot kernels` did not compile.
    result = subprocess.run(
        [sys.executable, "-c", _READY_POSE], capture_output=True, text=True, cwd=REPO, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert len(report["ready"]) == 6  # the chain's joints
    assert report["added"] == {}, "the ready pose search needs kernels bb-robot kernels does not compile"

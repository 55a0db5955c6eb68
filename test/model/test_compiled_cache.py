"""compiled.compile_cached: a kernel cached by numba is compiled again when a file it inlines changes
(numba alone checks only the kernel's own file), in real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba", reason="numba is in requirements/python.txt")

REPO_ROOT = Path(__file__).resolve().parents[2]
KERNEL = """
import numba

import helper_mod
from bb_robot.model.compiled import compile_cached


@numba.njit(cache=True)
def kernel(x):
    return x + helper_mod.value()


compile_cached(kernel, numba.float64(numba.float64), [__file__, helper_mod.__file__])
"""


def helper(value: float) -> str:
    return f"import numba\n\n\n@numba.njit\ndef value():\n    return {value}\n"


def test_a_cached_kernel_follows_a_change_of_a_file_it_compiles(tmp_path: Path) -> None:
    (tmp_path / "kernel_mod.py").write_text(textwrap.dedent(KERNEL))
    (tmp_path / "helper_mod.py").write_text(helper(1.0))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}

    def run(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)

    first = run("import kernel_mod; print(kernel_mod.kernel(1.0))")
    assert first.stdout.strip() == "2.0", first.stderr
    assert list((tmp_path / "__pycache__").glob("kernel_mod.kernel-*.nbi")), "numba cached nothing"
    again = run("import kernel_mod; print(kernel_mod.kernel(1.0), kernel_mod.kernel.stats.cache_hits)")
    assert again.stdout.split()[0] == "2.0" and again.stdout.split()[1] != "Counter()", again.stdout  # from the cache
    (tmp_path / "helper_mod.py").write_text(helper(5.0))
    changed = run("import kernel_mod; print(kernel_mod.kernel(1.0))")
    assert changed.stdout.strip() == "6.0", changed.stdout + changed.stderr  # numba alone would say 2.0
    other = run("import kernel_mod\ntry:\n    kernel_mod.kernel('x')\nexcept TypeError:\n    print('refused')")
    assert other.stdout.strip() == "refused", other.stdout + other.stderr  # one signature: nothing compiles

"""Fixtures of the command-line tests: ``bb-robot`` run as a subprocess, as a user runs it.

``run_cli(*args)`` runs ``python -m bb_robot.cli ARGS`` with this interpreter and the source tree
first on ``PYTHONPATH`` (``.venv/bin/bb-robot`` may be an older installed copy), from a scratch
directory, and returns a :class:`CliResult`.  ``CliResult.json()`` parses stdout strictly: ``NaN``,
``Infinity`` and ``-Infinity`` are refused, as the documented output never has them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli_helpers import CliResult, RunCli

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty working directory: nothing may depend on the current directory."""
    return tmp_path_factory.mktemp("cli-cwd")


@pytest.fixture(scope="session")
def run_cli(cli_workdir: Path) -> RunCli:
    """``run_cli(*args, timeout=120, env=None) -> CliResult``: one ``bb-robot`` run in a subprocess."""
    base_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    for variable in ("GZ_SIM_RESOURCE_PATH", "SDF_PATH", "IGN_GAZEBO_RESOURCE_PATH", "BB_ROBOT_TRACEBACK"):
        base_env.pop(variable, None)

    def run(*args: str | Path, timeout: float = 120.0, env: dict[str, str] | None = None) -> CliResult:
        argv = tuple(str(a) for a in args)
        completed = subprocess.run(
            [sys.executable, "-m", "bb_robot.cli", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cli_workdir,
            env={**base_env, **(env or {})},
            check=False,
        )
        return CliResult(argv, completed.returncode, completed.stdout, completed.stderr)

    return run

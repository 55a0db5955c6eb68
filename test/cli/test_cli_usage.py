"""Every ``bb-robot`` command: ``--help``, usage errors (exit 2), and hostile or unusable inputs
(exit 1 with one readable line naming the file, never a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli_helpers import RunCli, resource_args

COMMANDS = ("show", "check", "tree", "convert", "chain", "fk")
# The arguments each command needs besides FILE.
NEEDS = {"convert": ["--to", "urdf"]}


def test_top_level_help_lists_every_command(run_cli: RunCli) -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: bb-robot")
    for command in COMMANDS:
        assert f"    {command} " in result.stdout
    assert "Exit codes: 0 success, 1 bad input" in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_command(run_cli: RunCli, command: str) -> None:
    result = run_cli(command, "--help")
    assert result.returncode == 0, result
    assert result.stdout.startswith(f"usage: bb-robot {command}")
    for option in ("--json", "--scope", "--resource-path", "--xacro-arg"):
        assert option in result.stdout
    assert "Exit codes" in result.stdout


@pytest.mark.parametrize(
    "args",
    [[], ["frobnicate"], ["check"], ["fk", "x.urdf", "--bogus"], ["tree", "x.urdf", "-o"], ["chain", "--json"]],
    ids=["no-command", "unknown-command", "missing-file", "unknown-option", "missing-value", "missing-file-json"],
)
def test_usage_errors_exit_2(run_cli: RunCli, args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2, result
    assert "usage: bb-robot" in result.stderr
    assert "Traceback" not in result.stderr


def _junk(directory: Path) -> Path:
    path = directory / "junk.urdf"
    path.write_bytes(bytes(range(256)) * 40)
    return path


def _junk_sdf(directory: Path) -> Path:
    path = directory / "junk.sdf"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(200)))
    return path


def _sdf_world_of_a_urdf(directory: Path) -> Path:
    path = directory / "robot.sdf"  # the root element decides, not the extension
    path.write_text('<robot name="r"><link name="a"/></robot>')
    return path


HOSTILE = {
    "missing": lambda d, c: d / "no_such_robot.urdf",
    "directory": lambda d, c: d,
    "binary-junk": lambda d, c: _junk(d),
    "binary-junk-sdf": lambda d, c: _junk_sdf(d),
    "billion-laughs": lambda d, c: c / "synthetic/billion_laughs.urdf",
    "xxe": lambda d, c: c / "synthetic/xxe_external_entity.urdf",
    "empty": lambda d, c: c / "synthetic/empty_file.urdf",
    "cycle": lambda d, c: c / "synthetic/cycle.urdf",
    "sdf-include-cycle": lambda d, c: c / "synthetic/sdf_include_cycle.sdf",
    "sdf-include-missing": lambda d, c: c / "synthetic/sdf_include_missing.sdf",
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_inputs_exit_1_with_a_readable_message(
    run_cli: RunCli,
    corpus_dir: Path,
    corpus_resource_paths: tuple[Path, ...],
    tmp_path: Path,
    command: str,
    case: str,
) -> None:
    path = HOSTILE[case](tmp_path, corpus_dir)
    extra = resource_args(corpus_resource_paths) if path.suffix == ".sdf" else []
    result = run_cli(command, path, *NEEDS.get(command, []), *extra, timeout=60)
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lead = "error: " if command == "check" else "bb-robot: error: "
    first = result.stderr.splitlines()[0]
    assert first.startswith(lead), result
    assert str(path) in first


def test_the_root_element_decides_the_format(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli("check", "--json", _sdf_world_of_a_urdf(tmp_path))
    assert result.returncode == 0, result
    assert result.json()["format"] == "urdf"


def test_json_errors_leave_stdout_empty(run_cli: RunCli, tmp_path: Path) -> None:
    for command in ("fk", "chain", "tree", "show"):
        result = run_cli(command, "--json", tmp_path / "missing.urdf")
        assert result.returncode == 1 and result.stdout == ""


def test_a_closed_pipe_is_not_an_error(corpus_dir: Path) -> None:
    command = (
        f"{sys.executable} -m bb_robot.cli fk {corpus_dir / 'synthetic/long_chain_1000.urdf'} | head -n 1 >/dev/null; "
        "echo ${PIPESTATUS[0]}"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.stdout.strip() == "0", done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr

"""The suite's parts (test/helpers/test_parts.py): every test in exactly one of them, and the tests
that run real processes never spread over workers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers.test_parts import is_serial

TEST_DIR = Path(__file__).resolve().parent


def _module(name: str, **values: object) -> ModuleType:
    module = ModuleType(name)
    vars(module).update(values)
    return module


def test_the_node_and_gazebo_test_directories_are_serial() -> None:
    for path in [*(TEST_DIR / "nodes").glob("test_*.py"), *(TEST_DIR / "gz").glob("test_*.py")]:
        assert is_serial(path, TEST_DIR), path


def test_a_file_elsewhere_is_serial_when_it_imports_what_runs_processes() -> None:
    path = TEST_DIR / "model" / "test_something_new.py"
    assert not is_serial(path, TEST_DIR, _module("test_something_new", Path=Path, np=pytest))
    # rclpy itself, one of its names, or the node tests' helpers
    assert is_serial(path, TEST_DIR, _module("a", rclpy=ModuleType("rclpy")))
    assert is_serial(path, TEST_DIR, _module("b", Node=type("Node", (), {"__module__": "rclpy.node"})))
    assert is_serial(path, TEST_DIR, _module("c", Probe=type("Probe", (), {"__module__": "helpers.nodes"})))
    assert is_serial(path, TEST_DIR, _module("d", LaunchService=type("L", (), {"__module__": "launch.launch_service"})))
    # a name that merely starts like one of them is not
    assert not is_serial(path, TEST_DIR, _module("e", x=type("X", (), {"__module__": "launcher.tools"})))


def _collected(part: str, where: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--part", part, where],
        capture_output=True,
        text=True,
        cwd=TEST_DIR.parent,
        timeout=240,
    )
    assert result.returncode in (0, 5), result.stdout + result.stderr
    return {line for line in result.stdout.splitlines() if "::" in line}


def test_the_parts_split_the_suite_without_loss_or_overlap() -> None:
    # test/description holds both kinds: the wire tests use rclpy's serialisation, the rest do not
    where = "test/description"
    everything, parallel, serial = (_collected(part, where) for part in ("all", "parallel", "serial"))
    assert parallel and serial
    assert not parallel & serial
    assert parallel | serial == everything
    assert all("test_wire.py" in test for test in serial)


def test_every_test_file_has_a_name_of_its_own() -> None:
    # The test directories are not packages: pytest imports each file by its name alone, so two
    # files of one name cannot be collected in one session ("import file mismatch") and every test
    # of the second is lost to an error.
    seen: dict[str, Path] = {}
    twice = []
    for path in sorted(TEST_DIR.rglob("test_*.py")):
        if (path.parent / "__init__.py").is_file():
            continue  # a package's module (helpers.test_parts) is imported by its dotted name
        if path.name in seen:
            twice.append(f"{seen[path.name].relative_to(TEST_DIR)} and {path.relative_to(TEST_DIR)}")
        seen.setdefault(path.name, path)
    assert not twice, f"test files of one name (rename one): {twice}"

"""Strict skipping under CI: a skip for something missing fails; an accepted expectation stays a skip."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.strict_ci import accepted_in_ci, fail_unaccepted_skip


def _skipped(reason: str) -> pytest.TestReport:
    return pytest.TestReport(
        "test_x.py::test_x", ("test_x.py", 1, "test_x"), {}, "skipped", ("test_x.py", 1, f"Skipped: {reason}"), "setup"
    )


def test_a_missing_part_fails_under_ci_naming_it() -> None:
    report = _skipped("no shared corpus at /nowhere/shared/corpus")
    fail_unaccepted_skip(report, ci=True)
    assert report.failed and "no shared corpus at /nowhere/shared/corpus" in str(report.longrepr)


def test_outside_ci_the_same_skip_stays_a_skip() -> None:
    report = _skipped("no shared corpus at /nowhere/shared/corpus")
    fail_unaccepted_skip(report, ci=False)
    assert report.skipped


def test_an_accepted_expectation_stays_a_skip_under_ci() -> None:
    report = _skipped("bb_robot rejects cycle.urdf on purpose: a kinematic loop")
    fail_unaccepted_skip(report, ci=True)
    assert report.skipped


@pytest.mark.parametrize(
    "reason",
    [
        "rclpy is not installed: run scripts/setup",
        "tf2_msgs is not built: run scripts/setup",
        "Pinocchio (PyPI `pin`) is not installed: nothing to compare with",
        "graphviz's dot is not installed (scripts/setup)",
        "libsdformat 12 reference unavailable: no g++",
        "launch_ros is not installed here",
    ],
)
def test_what_setup_installs_is_never_accepted(reason: str) -> None:
    assert not accepted_in_ci(reason)


def test_a_real_pytest_run_under_ci_fails_a_module_level_importorskip(tmp_path: Path, repo_root: Path) -> None:
    """End to end: pytest itself, with the plugin, on a module that skips at import."""
    tests = tmp_path / "test"
    tests.mkdir()
    (tests / "test_missing.py").write_text(
        textwrap.dedent(
            """
            import pytest
            pytest.importorskip("no_such_module_bb_robot", reason="no_such_module is not installed: run scripts/setup")

            def test_never_runs():
                pass
            """
        )
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "helpers.strict_ci", str(tests)]
    env_path = f"{repo_root}{':'}{repo_root / 'test'}"
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "CI": "true", "PYTHONPATH": env_path},
    )
    assert run.returncode in (1, 2), run.stdout + run.stderr  # 2: pytest stops at a collection error
    assert "CI=true: this would have been skipped (no_such_module is not installed" in run.stdout
    quiet = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "CI": "false", "PYTHONPATH": env_path},
    )
    assert quiet.returncode == 5 and "1 skipped" in quiet.stdout, quiet.stdout + quiet.stderr  # 5: nothing ran

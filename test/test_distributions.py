"""How ROS_DISTRO picks a venv (scripts/ros_distro.sh, scripts/env.sh) and what the Jazzy profile holds.

The scripts are run for real with bash; nothing is installed or changed by these tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.ros_distro import (
    JAZZY_PROFILE_CASES,
    JAZZY_PROFILE_EXCLUDED,
    JAZZY_PROFILE_KILTED_ONLY,
    in_jazzy_profile,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
TEST_DIR = REPO_ROOT / "test"


def bash(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a clean bash (no venv or ROS variables of this process) in the repository root."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("BB_ROBOT", "_BB_ROBOT", "ROS_DISTRO"))}
    return subprocess.run(
        ["bash", "-c", script], cwd=REPO_ROOT, env={**base, **env}, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    ("distro", "venv", "requirements"),
    [
        ("", ".venv", "requirements"),
        ("kilted", ".venv", "requirements"),
        ("jazzy", ".venv-jazzy", "requirements/jazzy"),
    ],
)
def test_ros_distro_picks_the_venv_and_requirements(distro: str, venv: str, requirements: str) -> None:
    done = bash(
        'source scripts/ros_distro.sh && bb_robot_select_distro "$PWD" && '
        'echo "$BB_ROBOT_ROS_DISTRO $BB_ROBOT_SELECTED_VENV $BB_ROBOT_DISTRO_REQUIREMENTS"',
        **({"ROS_DISTRO": distro} if distro else {}),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [distro or "kilted", str(REPO_ROOT / venv), requirements]
    for name in ("runtime.txt", "build.txt"):
        assert (REPO_ROOT / requirements / name).is_file()


def test_another_distribution_is_refused_with_the_choices() -> None:
    done = bash('source scripts/ros_distro.sh && bb_robot_select_distro "$PWD"', ROS_DISTRO="humble")
    assert done.returncode == 1
    assert "ROS_DISTRO=humble" in done.stderr and "kilted" in done.stderr and "jazzy" in done.stderr


def test_env_sh_switches_venvs_and_keeps_an_explicit_one() -> None:
    done = bash(
        'source scripts/env.sh; echo "$ROS_DISTRO $BB_ROBOT_VENV"; '
        'ROS_DISTRO=jazzy; source scripts/env.sh; echo "$ROS_DISTRO $BB_ROBOT_VENV"; '
        'case ":$PATH:" in *":$PWD/.venv/bin:"*) echo "old venv on PATH";; esac; '
        'BB_ROBOT_VENV=/elsewhere; source scripts/env.sh; echo "$BB_ROBOT_VENV"'
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"kilted {REPO_ROOT / '.venv'}",
        f"jazzy {REPO_ROOT / '.venv-jazzy'}",
        "/elsewhere",
    ]


def test_the_jazzy_profile_holds_what_issue_18_asks() -> None:
    asked = [
        "nodes/test_description_node.py",
        "nodes/test_driver_node.py",  # the sim backend
        "nodes/test_actuators_node.py",  # the actuators backend
        "nodes/test_gazebo_node.py",  # the Gazebo backend against the C++ gz-transport peer
        "nodes/test_launch.py",
        "nodes/test_driver_launch.py",
        "nodes/test_bringup_launch.py",
        "nodes/test_up.py",  # bb-robot up --demo end to end
        "driver/test_control_msgs.py",
    ]
    for name in asked:
        assert (TEST_DIR / name).is_file(), name
        assert in_jazzy_profile(TEST_DIR / name, TEST_DIR), name
    for name in JAZZY_PROFILE_EXCLUDED:
        assert not in_jazzy_profile(TEST_DIR / name, TEST_DIR)
    assert not in_jazzy_profile(TEST_DIR / "urdf" / "test_parser.py", TEST_DIR)
    assert not in_jazzy_profile(REPO_ROOT / "benchmarks" / "test_x.py", TEST_DIR)


def _collected(files: list[str], *marker: str) -> set[str]:
    """pytest's own collection of ``files`` (under test/), with ``-m MARKER`` as CI selects the profile."""
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *marker]
        + [str(TEST_DIR / name) for name in files],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    return {line.strip() for line in collected.stdout.splitlines() if "::" in line}


def test_the_jazzy_profile_runs_the_named_cases_of_a_parametrized_test_and_no_other() -> None:
    files = sorted({name.split("::")[0] for name in (*JAZZY_PROFILE_CASES, *JAZZY_PROFILE_KILTED_ONLY)})
    selected = _collected(files, "-m", "jazzy_profile")
    everything = _collected(files)
    for key, cases in JAZZY_PROFILE_CASES.items():
        prefix = f"test/{key}["
        chosen = {line[len(prefix) : -1] for line in selected if line.startswith(prefix)}
        assert chosen == set(cases), (key, chosen)
    # the functions left to the Kilted suite exist (a renamed one would come back unnoticed) and are not in it
    for key in JAZZY_PROFILE_KILTED_ONLY:
        test = f"test/{key}"
        assert any(line == test or line.startswith(f"{test}[") for line in everything), f"no test {key}"
        assert not any(line == test or line.startswith(f"{test}[") for line in selected), key
    # every other test of those files stays in the profile
    assert any(line.startswith("test/nodes/test_bringup_launch.py::test_two_arms_in_one_tf_tree") for line in selected)

"""What users run keeps the code's safe defaults: no parameter file of config/ and no launch file
weakens the driver's limit policy, watchdog, command timeout, stale handling or arming.

A file may weaken one only where a comment right above the key says why, and only where this
test names the file (``EXPLAINED``).  The same files are run over DDS in
test/nodes/test_shipped_configs.py.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from bb_robot.driver.parameters import spec

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO_ROOT / "config"
#: Every robot's parameter file (a leader arm's alone, so101_leader.yaml, has no driver: bb-robot teleop --leader).
CONFIGS = sorted(
    p.relative_to(CONFIG_DIR).as_posix()
    for p in CONFIG_DIR.rglob("*.yaml")
    if not all(str(key).rstrip("/").endswith("/leader") for key in yaml.safe_load(p.read_text()) or {})
)

#: (file, key) → why the file may weaken the code's default (a comment above the key says so).
EXPLAINED: dict[tuple[str, str], str] = {
    # Gazebo's joint states come at the world's physics rate through gz-transport.
    ("worlds/ur3e_world_gazebo.yaml", "stale_timeout"): "Gazebo's joint states arrive at the physics rate",
    # The servo bus bridge is a Python process on a USB adapter (docs/buses.md): 50 of its cycles.
    ("so101.yaml", "stale_timeout"): "the bus bridge's feedback, 50 cycles at 200 Hz",
    ("koch_follower.yaml", "stale_timeout"): "the bus bridge's feedback, 50 cycles at 200 Hz",
}


def _driver_sections(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text()) or {}
    return [
        section.get("ros__parameters", {})
        for key, section in data.items()
        if key.rstrip("/").endswith("driver") and isinstance(section, dict)
    ]


def _weakens(key: str, value: Any) -> bool:
    """Whether ``value`` for ``key`` is weaker than the code's default."""
    default = spec(key).default
    if key == "limit_policy":
        return value == "clamp"
    if key in ("command_timeout", "stale_timeout"):
        assert isinstance(default, float)
        return float(value) == 0.0 or float(value) > default
    if key == "auto_arm":
        return bool(value)
    if key == "stale_action":
        return value not in ("hold", "disarm")
    if key == "watchdog_action":
        return value not in ("hold", "disarm")
    raise AssertionError(key)


AUDITED = ("limit_policy", "command_timeout", "stale_timeout", "auto_arm", "watchdog_action", "stale_action")


def test_the_code_defaults_are_the_safe_ones() -> None:
    assert spec("limit_policy").default == "clamp_near"
    assert spec("auto_arm").default is False
    assert spec("command_timeout").default == 0.5
    assert spec("stale_timeout").default == 0.1
    assert spec("watchdog_action").default == "hold"
    assert spec("stale_action").default == "hold"


@pytest.mark.parametrize("config", CONFIGS)
def test_no_shipped_file_weakens_a_safety_default(config: str) -> None:
    path = CONFIG_DIR / config
    lines = path.read_text().splitlines()
    sections = _driver_sections(path)
    assert sections, f"{config} has no driver section"
    for parameters in sections:
        for key in AUDITED:
            if key not in parameters or not _weakens(key, parameters[key]):
                continue
            assert (config, key) in EXPLAINED, (
                f"{config}: {key}: {parameters[key]!r} weakens the code's default {spec(key).default!r}"
            )
            at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{key}:"))
            assert lines[at - 1].strip().startswith("#"), f"{config}: no comment above {key} says why"


def test_the_explained_exceptions_still_exist() -> None:
    for config, key in EXPLAINED:
        assert any(key in section for section in _driver_sections(CONFIG_DIR / config)), (config, key)


def _launch_arguments(path: Path) -> dict[str, str]:
    """Name → default of a launch file's ARGUMENTS table (read without launch installed)."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ARGUMENTS" for t in node.targets):
            assert isinstance(node.value, ast.Tuple)
            rows = [row for row in node.value.elts if isinstance(row, ast.Tuple)]
            return {
                str(ast.literal_eval(row.elts[0])): ast.literal_eval(row.elts[1])
                if isinstance(row.elts[1], ast.Constant)
                else ast.unparse(row.elts[1])
                for row in rows
            }
    raise AssertionError(f"no ARGUMENTS in {path}")


@pytest.mark.parametrize("launch", ["bringup.launch.py", "driver.launch.py"])
def test_launch_defaults_leave_the_safety_parameters_alone(launch: str) -> None:
    """An empty launch argument leaves the parameter file's (and the code's) value; a launch file
    never sets a safety parameter by itself."""
    path = REPO_ROOT / "launch" / launch
    arguments = _launch_arguments(path)
    for key in AUDITED:
        assert arguments.get(key, "") == "", f"{launch}: argument {key} defaults to {arguments[key]!r}"
    text = path.read_text()
    for key in AUDITED:
        assert f'"{key}": ' not in text.replace(f'"{key}": "{key}"', ""), f"{launch} sets {key} itself"
    if "respawn" in arguments:
        assert arguments["respawn"] == "false"

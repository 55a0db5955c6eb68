"""launch/driver.launch.py and the driver's sections of config/ name only what exists and what it declares.

The approach is test_launch.py's (the description node's), the helpers launch_checks.py's: where ``launch_ros`` is
installed the launch file is loaded and inspected; here it is checked statically.  The driver
sections (``/**/driver``) of every parameter file, ``config/worlds/`` included, may set only
parameters the driver declares, for joints the robot has, with values of the declared type.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.launch_checks import (
    CONFIG_DIR,
    REPO_ROOT,
    LaunchFacts,
    console_scripts,
    flatten,
    launch_node,
    package_name,
    robot_configs,
)
from helpers.robot_files import CORPUS_DIR

from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.parameters import JOINT_PARAMETERS, PARAMETERS, is_declared

LAUNCH_FILE = REPO_ROOT / "launch" / "driver.launch.py"
NODE_NAME = "driver"
#: What issue 5 asks the launch file to take (backend, robot name, rate, params file).
REQUIRED_ARGUMENTS = {"backend", "robot_name", "rate", "config", "params_file", "model", "namespace"}
SIM_PARAMETERS = {f"sim.{spec.name}" for spec in SimBackend.parameters()}
CONFIG_FILES = sorted([*CONFIG_DIR.glob("*.yaml"), *CONFIG_DIR.glob("*/*.yaml")])
#: The seed's world, given as the model argument of config/worlds/ur3e_world.yaml.
UR3E_WORLD = CORPUS_DIR / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"


def _sections(path: Path, node: str) -> dict[str, Any]:
    """The parameters a file gives ``node``, merged in file order (as rcl applies them)."""
    data = yaml.safe_load(path.read_text()) or {}
    merged: dict[str, Any] = {}
    for pattern, body in data.items():
        if str(pattern).rstrip("/").split("/")[-1] in ("**", "*", node) and isinstance(body, dict):
            merged.update(body.get("ros__parameters") or {})
    return merged


def _driver_section(path: Path) -> dict[str, Any] | None:
    data = yaml.safe_load(path.read_text()) or {}
    for pattern, body in data.items():
        if str(pattern).rstrip("/").split("/")[-1] == NODE_NAME:
            return dict(body["ros__parameters"])
    return None


def test_launch_file_statically() -> None:
    facts = LaunchFacts(LAUNCH_FILE)
    assert REQUIRED_ARGUMENTS <= facts.arguments
    assert facts.read <= facts.arguments, f"reads undeclared arguments {facts.read - facts.arguments}"
    assert facts.package == package_name()
    scripts = console_scripts()
    assert facts.executable == NODE_NAME and facts.executable in scripts
    module, function = scripts[facts.executable].split(":")
    assert callable(getattr(importlib.import_module(module), function))
    unknown = {name for name in facts.parameters if not is_declared(name)}
    assert not unknown, f"the launch file sets parameters the driver does not declare: {unknown}"
    assert {"backend", "robot_name", "rate", "autostart"} <= facts.parameters  # autostart: brought to active
    assert (CONFIG_DIR / str(facts.default_config)).is_file()
    assert facts.defaults.get("config") == facts.default_config


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: str(p.relative_to(CONFIG_DIR)))
def test_driver_sections_set_only_declared_parameters(path: Path) -> None:
    section = _driver_section(path)
    if section is None:
        pytest.skip(f"{path.name} has no driver section")
    values = _sections(path, NODE_NAME)
    joints = _joints(path, values)
    given = {name for name in flatten("", section)}
    unknown = {name for name in given if not is_declared(name, joints, backend_parameters=_backend_parameters(values))}
    assert not unknown, f"{path.name} sets parameters the driver does not declare (joints {joints}): {unknown}"
    flat = {name: _lookup(section, name) for name in given}
    for spec in PARAMETERS:
        if spec.name in flat:
            _check_type(spec.type, flat[spec.name], f"{path.name}: {spec.name}")
            if spec.choices:
                assert flat[spec.name] in spec.choices, f"{path.name}: {spec.name}"
    for name, value in flat.items():
        pattern = next(
            (
                s
                for s in JOINT_PARAMETERS
                if s.name.split("<joint>")[0] in name and name.endswith(s.name.split("<joint>")[1])
            ),
            None,
        )
        if pattern is not None:
            _check_type(pattern.type, value, f"{path.name}: {name}")


def _backend_parameters(values: dict[str, Any]) -> set[str]:
    """The backend parameters of the file's backend (``sim`` by default), and those of the backends
    ``bb-robot up --backend`` can switch it to: the driver declares the chosen backend's, so a file
    may carry both sections (config/bb_arm_table.yaml for ``--demo-plan --backend mujoco``); each
    name is still checked against its backend's declared ones."""
    from bb_robot.driver.backends.base import backend_class, builtin_backends

    names = {str(values.get("backend") or "sim"), *builtin_backends()}
    backends = [backend_class(name) for name in sorted(names)]
    return SIM_PARAMETERS | {f"{backend.name}.{spec.name}" for backend in backends for spec in backend.parameters()}


def _lookup(section: dict[str, Any], dotted: str) -> Any:
    value: Any = section
    for part in dotted.split("."):
        value = value[part]
    return value


def _check_type(kind: str, value: Any, where: str) -> None:
    expected = {"double": (float,), "integer": (int,), "bool": (bool,), "string": (str,)}.get(kind)
    if expected is not None:
        assert isinstance(value, expected) and not (kind != "bool" and isinstance(value, bool)), (
            f"{where}: {value!r} is not a {kind} (a ROS parameter keeps the type it is declared with)"
        )


def _joints(path: Path, values: dict[str, Any]) -> tuple[str, ...] | None:
    """The joints the driver drives with this file (``None`` where the model is not known here)."""
    from bb_robot.driver.model import driven_joints, load_model_file

    model = values.get("model") or _sections(path, "description").get("model")
    if not model:
        if path.name == "koch_follower.yaml":  # the user's URDF; the SO-101's has the same joint names
            model = str(REPO_ROOT / "models" / "so101" / "so101_new_calib.urdf")
        elif path.name in ("ur3e_world.yaml", "ur3e_world_gazebo.yaml") and UR3E_WORLD.is_file():
            model = str(UR3E_WORLD)
        else:
            return None
    model = str(model).replace("package://bb_robot/", f"{REPO_ROOT}/")
    loaded = load_model_file(model, [str(REPO_ROOT / "models")], values.get("model_scope", ""))
    return driven_joints(loaded.robot, values.get("joints") or [])


@pytest.mark.parametrize(
    "path", [p for p in robot_configs() if p.parent == CONFIG_DIR and p.name != "generic.yaml"], ids=lambda p: p.name
)
def test_every_bundled_robot_has_a_driver_section_with_acceleration_limits(path: Path) -> None:
    section = _driver_section(path)
    assert section is not None, f"{path.name} has no /**/driver section"
    values = _sections(path, NODE_NAME)
    assert values["model"] == "", "the driver should take the description node's robot_description"
    joints = _joints(path, values)
    assert joints is not None and set(section["joint_limits"]) == set(joints)
    assert all(entry["has_acceleration_limits"] for entry in section["joint_limits"].values())


@pytest.mark.skipif(not UR3E_WORLD.is_file(), reason="the shared corpus (sas_robot_driver_gazebo) is absent")
def test_ur3e_world_config_names_the_worlds_joints() -> None:
    values = _sections(CONFIG_DIR / "worlds" / "ur3e_world.yaml", NODE_NAME)
    joints = _joints(CONFIG_DIR / "worlds" / "ur3e_world.yaml", values)
    assert joints is not None and set(values["joint_limits"]) == set(joints)
    assert values["robot_name"] == "ur3e"


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None, reason="launch_ros is not installed here")
def test_launch_file_loads_with_launch_ros() -> None:  # pragma: no cover - needs a ROS 2 install
    node = launch_node(LAUNCH_FILE, "driver_launch", REQUIRED_ARGUMENTS, {"rate": "1000"})
    assert node.node_package == package_name() and node.node_executable == NODE_NAME

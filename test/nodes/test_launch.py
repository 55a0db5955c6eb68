"""launch/description.launch.py and config/*.yaml name only what exists and what the node declares.

Where ``launch_ros`` is installed (a ROS 2 install) the launch file is loaded and its actions are
inspected.  Here, where it cannot be installed, the file is checked statically (its syntax tree):
the package and executable it starts, every launch argument it reads, the parameter file it
passes and every parameter name it sets.  ``importlib.util.find_spec("launch_ros")`` decides:
PyPI's unrelated ``launch`` 0.1.3, or this repository's ``launch/`` directory seen as a namespace
package, must not count as ROS's launch.
"""

from __future__ import annotations

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

from bb_robot.bringup.config import read_config
from bb_robot.description.parameters import PARAMETER_NAMES

LAUNCH_FILE = REPO_ROOT / "launch" / "description.launch.py"
NODE_NAME = "description"
#: What issue 4 asks the launch file to take.
REQUIRED_ARGUMENTS = {"model", "model_scope", "tip_link", "frame_prefix", "namespace", "use_sim_time"}
#: Declared by rclpy on every node, not by bb_robot.
RCLPY_PARAMETERS = {"use_sim_time"}


def _node_parameters_in(path: Path, node: str = NODE_NAME) -> set[str]:
    """Parameter names a YAML file gives to a node called ``node`` (``/**``, ``/**/node``, ``node``...)."""
    data = yaml.safe_load(path.read_text()) or {}
    names: set[str] = set()
    for pattern, body in data.items():
        last = str(pattern).rstrip("/").split("/")[-1]
        if last in ("**", "*", node) and isinstance(body, dict):
            names |= set((body.get("ros__parameters") or {}).keys())
    return names


# ------------------------------------------------------------------------------ the checks
def test_launch_file_statically() -> None:
    facts = LaunchFacts(LAUNCH_FILE)
    assert REQUIRED_ARGUMENTS <= facts.arguments
    assert facts.read <= facts.arguments, f"reads undeclared arguments {facts.read - facts.arguments}"
    assert facts.package == package_name()
    scripts = console_scripts()
    assert facts.executable in scripts, f"no console script '{facts.executable}' in setup.py"
    module, function = scripts[facts.executable].split(":")
    assert callable(getattr(importlib.import_module(module), function))
    unknown = facts.parameters - PARAMETER_NAMES - RCLPY_PARAMETERS
    assert not unknown, f"the launch file sets parameters the node does not declare: {unknown}"
    assert facts.parameters >= {"model", "model_scope", "tip_link", "frame_prefix", "use_sim_time"}
    assert (CONFIG_DIR / str(facts.default_config)).is_file()
    assert facts.defaults.get("config") == facts.default_config


@pytest.mark.parametrize("path", [p for p in robot_configs() if p.parent == CONFIG_DIR], ids=lambda p: p.name)
def test_parameter_files_give_the_node_only_what_it_declares(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    names = _node_parameters_in(path)
    assert names, f"{path.name} gives the description node no parameter"
    for pattern, body in data.items():
        last = str(pattern).rstrip("/").split("/")[-1]
        if last == NODE_NAME:  # a section only for this node: everything in it must be declared
            given = flatten("", body["ros__parameters"])
            unknown = {n for n in given if not n.startswith("qos_overrides.")} - PARAMETER_NAMES - RCLPY_PARAMETERS
            assert not unknown, f"{path.name} sets undeclared parameters {unknown}"
    assert "model" in names


def test_every_bundled_robot_has_a_parameter_file() -> None:
    # (a YAML file in models/ is an obstacle world for collision.world, not a robot)
    robots = {p.name.split(".")[0] for p in (REPO_ROOT / "models").iterdir() if p.is_file() and p.suffix != ".yaml"}
    assert robots <= {p.stem for p in CONFIG_DIR.glob("*.yaml")}


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None, reason="launch_ros is not installed here")
def test_launch_file_loads_with_launch_ros() -> None:  # pragma: no cover - needs a ROS 2 install
    node = launch_node(LAUNCH_FILE, "description_launch", REQUIRED_ARGUMENTS)
    assert node.node_package == package_name() and node.node_executable in console_scripts()


def _description_parameters(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text()) or {}
    values: dict[str, Any] = {}
    for pattern, body in data.items():
        if str(pattern).rstrip("/").split("/")[-1] in ("**", "*", NODE_NAME) and isinstance(body, dict):
            values.update(body.get("ros__parameters") or {})
    return values


#: Parameter files for any robot (the model comes from the launch argument or `bb-robot up MODEL`).
GENERIC_CONFIGS = {"generic.yaml"}
#: Parameter files for one robot whose model the user gives (bb_robot does not ship it), with a
#: shipped model that has the same joints to check them with.
USER_MODEL_CONFIGS = {"koch_follower.yaml": REPO_ROOT / "models" / "so101" / "so101_new_calib.urdf"}


def test_generic_parameter_files_hold_nothing_robot_specific() -> None:
    for name in GENERIC_CONFIGS:
        text = (CONFIG_DIR / name).read_text()
        data = yaml.safe_load(text)
        assert _description_parameters(CONFIG_DIR / name)["model"] == ""
        for body in data.values():
            parameters = body["ros__parameters"]
            for key in ("tip_link", "joints", "joint_limits", "constraints", "robot_name", "frame_prefix"):
                assert key not in parameters, f"{name} sets {key}, which belongs to one robot"


@pytest.mark.parametrize(
    "path",
    [p for p in robot_configs() if p.parent == CONFIG_DIR and p.name not in GENERIC_CONFIGS],
    ids=lambda p: p.name,
)
def test_parameter_files_load_their_robot(path: Path) -> None:
    from bb_robot.description.core import prepare
    from bb_robot.description.sources import load_model

    values = _description_parameters(path)
    if path.name in USER_MODEL_CONFIGS:
        values.update(model=str(USER_MODEL_CONFIGS[path.name]), tip_link="")
    loaded = load_model(
        values["model"],
        [str(REPO_ROOT / "models")],
        model_scope=values.get("model_scope", ""),
        package_share=lambda package: str(REPO_ROOT),  # this checkout, not the installed copy
    )
    prepared = prepare(loaded, values.get("tip_link", ""))
    assert prepared.serial is not None, prepared.serial_note


@pytest.mark.parametrize("path", sorted(p for p in CONFIG_DIR.glob("*.yaml") if read_config(str(p)).bus),
                         ids=lambda p: p.name)  # fmt: skip
def test_bus_sections_are_for_the_actuators_backend_and_their_robots_joints(path: Path) -> None:
    """A /**/bus section (the bridge of docs/buses.md): the driver's backend is actuators, its servos
    build (models, IDs, calibration) and drive exactly the joints the driver drives, and the bridge
    declares every parameter the section gives."""
    from bb_robot.buses.bridge_setup import servo_specs
    from bb_robot.driver.model import driven_joints, load_model_file
    from bb_robot.nodes.bus import PARAMETERS, SERVO_PARAMETERS

    config = read_config(str(path))
    assert config.backend == "actuators", f"{path.name}: a bus bridge serves the actuators backend"
    bus = config.bus
    joints = list(bus["joints"])
    servos = {j: {k.split(".")[-1]: v for k, v in bus.items() if k.startswith(f"servos.{j}.")} for j in joints}
    declared = {spec.name for spec in PARAMETERS} | {
        f"servos.{j}.{spec.name}" for j in joints for spec in SERVO_PARAMETERS
    }
    assert set(bus) <= declared, f"{path.name}: undeclared bus parameters {set(bus) - declared}"
    calibration = str(bus.get("calibration", ""))
    specs = servo_specs(str(bus["protocol"]), joints, servos, calibration.replace("so101", str(CONFIG_DIR / "so101")))
    model = USER_MODEL_CONFIGS.get(path.name) or str(config.model).replace("package://bb_robot/", f"{REPO_ROOT}/")
    robot = load_model_file(str(model), [str(REPO_ROOT / "models")], "").robot
    assert {s.joint for s in specs} == set(driven_joints(robot, []))
    assert config.joints >= {s.joint for s in specs}

"""launch/description.launch.py and config/*.yaml name only what exists and what the node declares.

Where ``launch_ros`` is installed (a ROS 2 install) the launch file is loaded and its actions are
inspected.  Here, where it cannot be installed, the file is checked statically (its syntax tree):
the package and executable it starts, every launch argument it reads, the parameter file it
passes and every parameter name it sets.  ``importlib.util.find_spec("launch_ros")`` decides:
PyPI's unrelated ``launch`` 0.1.3, or this repository's ``launch/`` directory seen as a namespace
package, must not count as ROS's launch.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bb_robot.description.parameters import PARAMETER_NAMES

REPO_ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILE = REPO_ROOT / "launch" / "description.launch.py"
CONFIG_DIR = REPO_ROOT / "config"
NODE_NAME = "description"
#: What issue 4 asks the launch file to take.
REQUIRED_ARGUMENTS = {"model", "model_scope", "tip_link", "frame_prefix", "namespace", "use_sim_time"}
#: Declared by rclpy on every node, not by bb_robot.
RCLPY_PARAMETERS = {"use_sim_time"}


# ------------------------------------------------------------------------------ what the file says
class _NotLiteral(Exception):
    pass


def _literal(node: ast.AST, constants: dict[str, Any]) -> Any:
    """A literal, where names of earlier module constants count as their values."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_literal(item, constants) for item in node.elts)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_literal(k, constants): _literal(v, constants) for k, v in zip(node.keys, node.values, strict=True)}
    raise _NotLiteral


def _constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments."""
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = _literal(node.value, found)
            except _NotLiteral:
                continue
    return found


def _value(node: ast.AST, constants: dict[str, Any]) -> Any:
    try:
        return _literal(node, constants)
    except _NotLiteral:
        return None


def _calls(tree: ast.Module, name: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
    ]


class LaunchFacts:
    """What the launch file starts, declares, reads and sets, from its syntax tree."""

    def __init__(self, path: Path) -> None:
        tree = ast.parse(path.read_text(), str(path))
        constants = _constants(tree)
        self.arguments: set[str] = {row[0] for row in constants.get("ARGUMENTS", ())}
        self.defaults: dict[str, str] = {row[0]: row[1] for row in constants.get("ARGUMENTS", ())}
        for call in _calls(tree, "DeclareLaunchArgument"):
            if call.args and isinstance(value := _value(call.args[0], constants), str):
                self.arguments.add(value)
        self.read: set[str] = {
            value
            for call in _calls(tree, "LaunchConfiguration")
            if call.args and isinstance(value := _value(call.args[0], constants), str)
        }
        mapping = constants.get("PARAMETER_ARGUMENTS", {})
        self.read |= set(mapping)
        self.parameters: set[str] = set(mapping.values())
        for node in ast.walk(tree):  # overrides["name"] = ...
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and isinstance(key := _value(target.slice, constants), str):
                        self.parameters.add(key)
        nodes = _calls(tree, "Node")
        assert len(nodes) == 1, "the launch file starts one Node"
        keywords = {k.arg: k.value for k in nodes[0].keywords}
        self.package = _value(keywords["package"], constants)
        self.executable = _value(keywords["executable"], constants)
        self.default_config = constants.get("DEFAULT_CONFIG")


def _console_scripts() -> dict[str, str]:
    """``name → module:function`` of setup.py's console scripts (its ``{PACKAGE}`` filled in)."""
    text = (REPO_ROOT / "setup.py").read_text()
    package = re.search(r'^PACKAGE = "([^"]+)"', text, re.MULTILINE)
    assert package
    return {
        name: target.replace("{PACKAGE}", package.group(1))
        for name, target in re.findall(r'f?"([\w-]+) = ([{}\w.]+:\w+)"', text)
    }


def _package_name() -> str:
    match = re.search(r"<name>([^<]+)</name>", (REPO_ROOT / "package.xml").read_text())
    assert match
    return match.group(1)


def _node_parameters_in(path: Path, node: str = NODE_NAME) -> set[str]:
    """Parameter names a YAML file gives to a node called ``node`` (``/**``, ``/**/node``, ``node``...)."""
    data = yaml.safe_load(path.read_text()) or {}
    names: set[str] = set()
    for pattern, body in data.items():
        last = str(pattern).rstrip("/").split("/")[-1]
        if last in ("**", "*", node) and isinstance(body, dict):
            names |= set((body.get("ros__parameters") or {}).keys())
    return names


def _flatten(prefix: str, value: Any) -> set[str]:
    if isinstance(value, dict):
        return {name for key, item in value.items() for name in _flatten(f"{prefix}{key}.", item)}
    return {prefix.rstrip(".")}


# ------------------------------------------------------------------------------ the checks
def test_launch_file_statically() -> None:
    facts = LaunchFacts(LAUNCH_FILE)
    assert REQUIRED_ARGUMENTS <= facts.arguments
    assert facts.read <= facts.arguments, f"reads undeclared arguments {facts.read - facts.arguments}"
    assert facts.package == _package_name()
    scripts = _console_scripts()
    assert facts.executable in scripts, f"no console script '{facts.executable}' in setup.py"
    module, function = scripts[facts.executable].split(":")
    assert callable(getattr(importlib.import_module(module), function))
    unknown = facts.parameters - PARAMETER_NAMES - RCLPY_PARAMETERS
    assert not unknown, f"the launch file sets parameters the node does not declare: {unknown}"
    assert facts.parameters >= {"model", "model_scope", "tip_link", "frame_prefix", "use_sim_time"}
    assert (CONFIG_DIR / str(facts.default_config)).is_file()
    assert facts.defaults.get("config") == facts.default_config


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_parameter_files_give_the_node_only_what_it_declares(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    names = _node_parameters_in(path)
    assert names, f"{path.name} gives the description node no parameter"
    for pattern, body in data.items():
        last = str(pattern).rstrip("/").split("/")[-1]
        if last == NODE_NAME:  # a section only for this node: everything in it must be declared
            given = _flatten("", body["ros__parameters"])
            unknown = {n for n in given if not n.startswith("qos_overrides.")} - PARAMETER_NAMES - RCLPY_PARAMETERS
            assert not unknown, f"{path.name} sets undeclared parameters {unknown}"
    assert "model" in names


def test_every_bundled_robot_has_a_parameter_file() -> None:
    robots = {p.name.split(".")[0] for p in (REPO_ROOT / "models").iterdir() if p.is_file()}
    assert robots <= {p.stem for p in CONFIG_DIR.glob("*.yaml")}


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None, reason="launch_ros is not installed here")
def test_launch_file_loads_with_launch_ros() -> None:  # pragma: no cover - needs a ROS 2 install
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    spec = importlib.util.spec_from_file_location("description_launch", LAUNCH_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    declared = [e for e in description.entities if isinstance(e, DeclareLaunchArgument)]
    assert REQUIRED_ARGUMENTS <= {a.name for a in declared}
    context = LaunchContext()
    for argument in declared:
        context.launch_configurations[argument.name] = argument.default_value[0].perform(context)
    (opaque,) = [e for e in description.entities if isinstance(e, OpaqueFunction)]
    (node,) = opaque.execute(context)
    assert node.node_package == _package_name() and node.node_executable in _console_scripts()


def _description_parameters(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text()) or {}
    values: dict[str, Any] = {}
    for pattern, body in data.items():
        if str(pattern).rstrip("/").split("/")[-1] in ("**", "*", NODE_NAME) and isinstance(body, dict):
            values.update(body.get("ros__parameters") or {})
    return values


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_parameter_files_load_their_robot(path: Path) -> None:
    from bb_robot.description.core import prepare
    from bb_robot.description.sources import load_model

    values = _description_parameters(path)
    loaded = load_model(
        values["model"],
        [str(REPO_ROOT / "models")],
        model_scope=values.get("model_scope", ""),
        package_share=lambda package: str(REPO_ROOT),  # this checkout, not the installed copy
    )
    prepared = prepare(loaded, values.get("tip_link", ""))
    assert prepared.serial is not None, prepared.serial_note

"""Helpers of the launch-file tests (test_launch.py, test_driver_launch.py).

``LaunchFacts`` reads a launch file statically (its syntax tree): the package and executable it
starts, the launch arguments it declares and reads, the parameters it sets.  ``launch_node``
loads it with ``launch_ros`` where a ROS 2 install has it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO_ROOT / "config"


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


def console_scripts() -> dict[str, str]:
    """``name → module:function`` of setup.py's console scripts (its ``{PACKAGE}`` filled in)."""
    text = (REPO_ROOT / "setup.py").read_text()
    package = re.search(r'^PACKAGE = "([^"]+)"', text, re.MULTILINE)
    assert package
    return {
        name: target.replace("{PACKAGE}", package.group(1))
        for name, target in re.findall(r'f?"([\w-]+) = ([{}\w.]+:\w+)"', text)
    }


def package_name() -> str:
    match = re.search(r"<name>([^<]+)</name>", (REPO_ROOT / "package.xml").read_text())
    assert match
    return match.group(1)


def flatten(prefix: str, value: Any) -> set[str]:
    if isinstance(value, dict):
        return {name for key, item in value.items() for name in flatten(f"{prefix}{key}.", item)}
    return {prefix.rstrip(".")}


def launch_node(
    launch_file: Path, module_name: str, required_arguments: set[str], configurations: Mapping[str, str] | None = None
) -> Any:  # pragma: no cover - needs a ROS 2 install
    """The one Node a launch file's OpaqueFunction starts, with its arguments at their defaults
    (``configurations`` overriding some); the file must declare ``required_arguments``."""
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    spec = importlib.util.spec_from_file_location(module_name, launch_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    declared = [e for e in description.entities if isinstance(e, DeclareLaunchArgument)]
    assert required_arguments <= {a.name for a in declared}
    context = LaunchContext()
    for argument in declared:
        context.launch_configurations[argument.name] = argument.default_value[0].perform(context)
    context.launch_configurations.update(configurations or {})
    (opaque,) = [e for e in description.entities if isinstance(e, OpaqueFunction)]
    (node,) = opaque.execute(context)
    return node


def is_robot_config(path: Path) -> bool:
    """Whether a parameter file under config/ is a robot's, for its bringup: every file but a leader
    arm's alone (``so101_leader.yaml``, which only ``bb-robot teleop --leader`` reads)."""
    import yaml

    sections = yaml.safe_load(path.read_text()) or {}
    return not all(str(key).rstrip("/").endswith("/leader") for key in sections)


def robot_configs(pattern: str = "*.yaml") -> list[Path]:
    """The robots' parameter files under config/ matching ``pattern`` (``rglob``), sorted."""
    return sorted(p for p in CONFIG_DIR.rglob(pattern) if is_robot_config(p))

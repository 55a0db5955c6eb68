"""What ``bb-robot up`` and ``launch/bringup.launch.py`` read from a parameter file (``config/*.yaml``).

A bringup parameter file holds the description node's and the driver's parameters.  Sections for
a namespaced node (``/left/description``) make it a file for several robots: one description node
and one driver per such namespace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from bb_robot.errors import BbRobotError
from bb_robot.resources import find_config

#: The parameter file ``bb-robot up`` and the launch file use when none is given.
DEFAULT_CONFIG = "bb_arm.yaml"


class BringupConfigError(BbRobotError):
    """A parameter file that cannot be found or read (the message names it)."""


@dataclass(frozen=True)
class BringupConfig:
    """The parts of a parameter file the bringup needs."""

    path: Path
    #: The robots' namespaces ("" for one robot in the launch namespace).
    robots: tuple[str, ...]
    #: The description node's ``model`` (``/**`` or ``/**/description``), "" if none.
    model: str
    model_scope: str
    #: The driver's backend ("" if the file does not say).
    backend: str
    #: Joints the file names in the driver's ``joints``, ``joint_limits`` and ``constraints``.
    joints: frozenset[str]
    #: ``joint_limits.<joint>.max_acceleration`` where given.
    max_acceleration: dict[str, float] = field(default_factory=dict)
    #: ``joint_limits.<joint>.max_velocity`` where given.
    max_velocity: dict[str, float] = field(default_factory=dict)
    #: The driver's ``servo.enable`` and ``servo.tip`` (the Cartesian servo; docs/nodes/servo.md).
    servo_enabled: bool = False
    servo_tip: str = ""
    #: The driver's ``collision.world``, ``model`` and ``model_scope`` (what the view shows the
    #: obstacles with) and the description's ``frame_prefix``.
    collision_world: str = ""
    driver_model: str = ""
    driver_model_scope: str = ""
    frame_prefix: str = ""
    #: The ``/**/move_group`` sections' parameters, flattened (``collision.clearance``): what
    #: ``bringup.launch.py`` gives the move_group node beside what it takes from the driver's.
    move_group: dict[str, Any] = field(default_factory=dict)
    #: The ``/**/bus`` sections' parameters, flattened (``servos.gripper.id``): a bus bridge
    #: (``bb-robot bus``, docs/buses.md) runs beside the driver when there are any.
    bus: dict[str, Any] = field(default_factory=dict)
    #: The ``/**/leader`` sections' parameters, flattened: a leader arm for ``bb-robot teleop --leader``
    #: (its bus, servos and calibration; docs/buses.md, "Leader-follower teleop").
    leader: dict[str, Any] = field(default_factory=dict)


def config_path(name: str) -> Path:
    """The parameter file ``name``: an existing path, else a name under bb_robot's ``config/``.

    Raises:
        BringupConfigError: no such file (the message lists where it looked).
    """
    found, searched = find_config(name)
    if found is None:
        raise BringupConfigError(f"no parameter file '{name}' (looked at {', '.join(map(str, searched))})")
    return found


def robots_in(data: dict[str, Any]) -> tuple[str, ...]:
    """The namespaces that have a description node section of their own (``/left/description``)."""
    found: list[str] = []
    for pattern in data:
        parts = str(pattern).strip("/").split("/")
        if len(parts) >= 2 and parts[-1] == "description" and not any("*" in part for part in parts):
            namespace = "/".join(parts[:-1])
            if namespace not in found:
                found.append(namespace)
    return tuple(found)


def flatten(prefix: str, values: dict[str, Any]) -> dict[str, Any]:
    """Nested parameter mappings as ROS names them: ``{collision: {clearance: 0.02}}`` → ``collision.clearance``."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(f"{name}.", value))
        else:
            flat[name] = value
    return flat


def _node_sections(data: dict[str, Any], node: str) -> list[dict[str, Any]]:
    """The ``ros__parameters`` of the sections named for ``node`` itself (``/**/move_group``), not ``/**``."""
    return [
        body.get("ros__parameters") or {}
        for pattern, body in data.items()
        if str(pattern).rstrip("/").split("/")[-1] == node and isinstance(body, dict)
    ]


def _sections(data: dict[str, Any], node: str) -> list[dict[str, Any]]:
    """The ``ros__parameters`` of every section that applies to ``node`` (any namespace)."""
    result = []
    for pattern, body in data.items():
        last = str(pattern).rstrip("/").split("/")[-1]
        if last in ("**", "*", node) and isinstance(body, dict):
            result.append(body.get("ros__parameters") or {})
    return result


def read_config(name: str) -> BringupConfig:
    """Read the parameter file ``name`` (see :func:`config_path`).

    Raises:
        BringupConfigError: missing, not YAML, or not a ROS parameter file.
    """
    path = config_path(name)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise BringupConfigError(f"{path}: cannot read the parameter file: {error}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) and "ros__parameters" in v for v in data.values()):
        raise BringupConfigError(f"{path}: not a ROS 2 parameter file (<node>: {{ros__parameters: ...}} sections)")
    description: dict[str, Any] = {}
    for section in _sections(data, "description"):
        description.update(section)
    driver: dict[str, Any] = {}
    joints: set[str] = set()
    accelerations: dict[str, float] = {}
    velocities: dict[str, float] = {}
    for section in _sections(data, "driver"):
        driver.update({k: v for k, v in section.items() if k not in ("joint_limits", "constraints")})
        joints |= set(section.get("joints") or ())
        for joint, limits in (section.get("joint_limits") or {}).items():
            joints.add(joint)
            if isinstance(limits, dict) and limits.get("has_acceleration_limits") and "max_acceleration" in limits:
                accelerations[joint] = float(limits["max_acceleration"])
            if isinstance(limits, dict) and limits.get("has_velocity_limits") and "max_velocity" in limits:
                velocities[joint] = float(limits["max_velocity"])
        for joint, value in (section.get("constraints") or {}).items():
            if isinstance(value, dict):
                joints.add(joint)
    nested = driver.get("servo")
    servo: dict[str, Any] = nested if isinstance(nested, dict) else {}
    nested = driver.get("collision")
    collision: dict[str, Any] = nested if isinstance(nested, dict) else {}
    return BringupConfig(
        path=path,
        robots=robots_in(data),
        model=str(description.get("model") or ""),
        model_scope=str(description.get("model_scope") or ""),
        backend=str(driver.get("backend") or ""),
        joints=frozenset(joints),
        max_acceleration=accelerations,
        max_velocity=velocities,
        servo_enabled=bool(servo.get("enable", driver.get("servo.enable", False))),
        servo_tip=str(servo.get("tip", driver.get("servo.tip", "")) or ""),
        collision_world=str(collision.get("world", driver.get("collision.world", "")) or ""),
        driver_model=str(driver.get("model") or ""),
        driver_model_scope=str(driver.get("model_scope") or ""),
        frame_prefix=str(description.get("frame_prefix") or ""),
        move_group={k: v for section in _node_sections(data, "move_group") for k, v in flatten("", section).items()},
        bus={k: v for section in _node_sections(data, "bus") for k, v in flatten("", section).items()},
        leader={k: v for section in _node_sections(data, "leader") for k, v in flatten("", section).items()},
    )

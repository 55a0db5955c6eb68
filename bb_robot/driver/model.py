"""The robot the driver drives: loading it, and which of its joints are driven.

The model comes from a file (the ``model`` parameter) or from URDF text (the
``robot_description`` topic), loaded exactly as the description node loads them: the name is
resolved by :func:`bb_robot.description.sources.resolve_model_path` (paths, ``package://``,
``model://`` and ``file://`` URIs; relative names looked up in ``model_dirs``) and the file
loaded by :func:`bb_robot.loading.load_file` (URDF, xacro, SDF model or world; the root
element decides).  The driver's ``model`` is read-only, so an absolute path is also accepted
outside ``model_dirs``.

The driven joints are the movable single-axis joints (revolute, continuous, prismatic) that
do not mimic another joint, in tree order, or the ``joints`` parameter's selection of them.
Mimic joints of driven joints are reported in ``joint_states`` (computed from their source)
but cannot be commanded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bb_robot.description.sources import load_description_text, resolve_model_path
from bb_robot.driver.errors import DriverError
from bb_robot.loading import LoadedModel, load_file
from bb_robot.model.robot import SINGLE_DOF_TYPES, Robot


class ModelError(DriverError):
    """The model cannot be loaded or driven (the message says which and why)."""


@dataclass(frozen=True)
class Mimic:
    """A reported mimic joint: value = ``multiplier`` × value(``source``) + ``offset``."""

    source: str
    multiplier: float
    offset: float


def load_model_file(model: str, model_dirs: Sequence[str], model_scope: str = "") -> LoadedModel:
    """Load the ``model`` parameter's file (see the module docstring).

    Raises:
        BbRobotError: ``ModelPathError`` and the loaders' typed errors.
    """
    dirs = list(model_dirs)
    path = model[len("file://") :] if model.startswith("file://") else os.path.expanduser(model)
    if os.path.isabs(path):
        dirs.append(os.path.dirname(os.path.realpath(path)))
    return load_file(resolve_model_path(model, dirs), scope=model_scope, resource_paths=dirs)


def load_model_text(text: str) -> LoadedModel:
    """Load URDF text (the ``robot_description`` topic)."""
    return load_description_text(text)


def drivable_joints(robot: Robot) -> tuple[str, ...]:
    """The movable single-axis joints that mimic no other, in tree order."""
    return tuple(
        name
        for name in robot.topology.joint_order
        if robot.joints[name].type in SINGLE_DOF_TYPES and robot.joints[name].mimic is None
    )


def driven_joints(robot: Robot, requested: Sequence[str] = ()) -> tuple[str, ...]:
    """The joints to drive: ``requested`` (checked) or every drivable joint.

    Raises :class:`ModelError` naming a requested joint that is unknown, fixed, multi-axis or a
    mimic joint, a repeated one, or a robot with nothing to drive.
    """
    drivable = drivable_joints(robot)
    if not requested:
        if not drivable:
            raise ModelError(f"robot '{robot.name}' has no movable joint to drive")
        return drivable
    seen: set[str] = set()
    for name in requested:
        if name in seen:
            raise ModelError(f"joints: '{name}' is listed twice")
        seen.add(name)
        joint = robot.joints.get(name)
        if joint is None:
            raise ModelError(f"joints: robot '{robot.name}' has no joint '{name}' (drivable: {', '.join(drivable)})")
        if joint.mimic is not None:
            raise ModelError(f"joints: '{name}' mimics '{joint.mimic.joint}' and cannot be driven")
        if joint.type not in SINGLE_DOF_TYPES:
            raise ModelError(f"joints: '{name}' is a {joint.type} joint; only revolute, continuous, prismatic")
    return tuple(requested)


def mimic_joints(robot: Robot, driven: Sequence[str]) -> Mapping[str, Mimic]:
    """The mimic joints whose source is driven (directly or through other mimic joints), in tree order."""
    result: dict[str, Mimic] = {}
    driven_set = set(driven)
    for name in robot.topology.joint_order:
        joint = robot.joints[name]
        if joint.mimic is None or joint.type not in SINGLE_DOF_TYPES:
            continue
        source, multiplier, offset = joint.mimic.joint, joint.mimic.multiplier, joint.mimic.offset
        # Follow chains of mimic joints down to a driven joint.
        while source in result:
            inner = result[source]
            source, multiplier, offset = inner.source, multiplier * inner.multiplier, multiplier * inner.offset + offset
        if source in driven_set:
            result[name] = Mimic(source, multiplier, offset)
    return result


def mimic_sources(robot: Robot) -> dict[str, str]:
    """Each mimic joint of the robot → the joint it mimics (for command rejections)."""
    return {name: joint.mimic.joint for name, joint in robot.joints.items() if joint.mimic is not None}

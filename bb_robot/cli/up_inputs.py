"""What ``bb-robot up`` checks before it starts anything: the model, the parameter file, the backend.

Everything that can be known to fail is refused here with a message naming the file, joint or
backend, before a single process runs (exit code 1).  The model is loaded with the description
node's own loading function (:func:`bb_robot.description.sources.load_model`), so what passes
here is what the node loads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bb_robot.bringup.config import DEFAULT_CONFIG, BringupConfig, read_config
from bb_robot.bringup.demo import JointRange, demo_points
from bb_robot.description.parameters import default_model_dirs
from bb_robot.description.sources import load_model
from bb_robot.driver.backends.base import builtin_backends
from bb_robot.errors import BbRobotError
from bb_robot.loading import LoadedModel
from bb_robot.model.robot import Robot

#: The parameter file for a MODEL given without ``--config``: nothing robot-specific in it.
GENERIC_CONFIG = "generic.yaml"
#: Acceleration assumed for the demo where the parameter file gives none (rad/s² or m/s²).
DEFAULT_ACCELERATION = 2.0
#: Velocity assumed for the demo where neither the model nor the parameter file gives one.
DEFAULT_VELOCITY = 1.0
MOVING = ("revolute", "continuous", "prismatic")


class UpError(BbRobotError):
    """``bb-robot up`` cannot start with this input (the message names the problem)."""


@dataclass(frozen=True)
class BringupPlan:
    """What to launch and how to watch it."""

    robot: Robot
    config: BringupConfig
    #: The robots' namespaces ("" for one robot).
    robots: tuple[str, ...]
    #: ``name → value`` arguments of launch/bringup.launch.py.
    launch_arguments: dict[str, str]
    #: The joints the demo moves, in the driver's order, with their limits.
    demo_joints: tuple[JointRange, ...]
    #: How long the demo motion takes from the zero pose (s).
    demo_time: float
    tip: str | None
    summary: str
    #: The loaded model (its file, text and search directories: the collision model of the Cartesian demo).
    loaded: LoadedModel | None = None
    #: Where the model's meshes and includes are looked for.
    model_dirs: tuple[str, ...] = ()


def _demo_joints(robot: Robot, config: BringupConfig) -> tuple[JointRange, ...]:
    joints = []
    for joint in robot.joints_in_order():
        if joint.type not in MOVING or joint.mimic is not None:
            continue
        limits = joint.limits
        lower = limits.lower if limits is not None and joint.type != "continuous" else None
        upper = limits.upper if limits is not None and joint.type != "continuous" else None
        velocity = limits.velocity if limits is not None and limits.velocity else DEFAULT_VELOCITY
        velocity = min(velocity, config.max_velocity.get(joint.name, velocity))
        acceleration = config.max_acceleration.get(joint.name, DEFAULT_ACCELERATION)
        joints.append(JointRange(joint.name, lower, upper, velocity, acceleration))
    return tuple(joints)


def _model_dirs(model: str, resource_paths: Sequence[str]) -> list[str]:
    dirs = [str(Path(p).resolve()) for p in resource_paths]
    if "://" not in model:
        dirs.insert(0, str(Path(model).resolve().parent))
    return [*dirs, *default_model_dirs()]


def plan_bringup(
    model: str | None,
    *,
    config: str | None = None,
    scope: str | None = None,
    resource_paths: Sequence[str] = (),
    backend: str | None = None,
) -> BringupPlan:
    """Check the input of ``bb-robot up`` and say what to launch.

    Args:
        model: the MODEL argument (a file), or ``None`` for the parameter file's model.
        config: ``--config`` (default: ``bb_arm.yaml`` without MODEL, ``generic.yaml`` with one).
        scope: ``--scope`` (SDF).
        resource_paths: ``--resource-path`` directories.
        backend: ``--backend``, or ``None`` for the parameter file's.

    Returns:
        The :class:`BringupPlan`.

    Raises:
        UpError: an unknown backend, a missing model, a parameter file for another robot.
        BbRobotError: the model cannot be loaded (the loader's error, naming file and element).
    """
    known = builtin_backends()
    if backend is not None and backend not in known:
        raise UpError(f"unknown backend '{backend}' (known: {', '.join(known)})")
    for directory in resource_paths:
        if not Path(directory).is_dir():
            raise UpError(f"--resource-path {directory}: no such directory")
    settings = read_config(config or (GENERIC_CONFIG if model else DEFAULT_CONFIG))
    if settings.backend and backend is None and settings.backend not in known:
        raise UpError(f"{settings.path}: unknown backend '{settings.backend}' (known: {', '.join(known)})")
    if model is not None:
        if not Path(model).is_file():
            raise UpError(f"{model}: no such model file")
        model = str(Path(model).resolve())
    source = model or settings.model
    if not source:
        raise UpError(f"{settings.path} names no model: give MODEL")
    model_scope = scope if scope is not None else ("" if model else settings.model_scope)
    loaded = load_model(source, _model_dirs(source, resource_paths), model_scope=model_scope)
    robot = loaded.robot
    unknown = sorted(settings.joints - set(robot.joints))
    if unknown:
        raise UpError(
            f"{settings.path} is for another robot: it names joints {', '.join(unknown)} that "
            f"{source} (robot '{robot.name}') does not have; give a parameter file for this robot with --config"
        )
    arguments = {"config": str(settings.path)}
    if model:
        arguments["model"] = model
    if model_scope:
        arguments["model_scope"] = model_scope
    if resource_paths:
        arguments["model_dirs"] = os.pathsep.join(str(Path(p).resolve()) for p in resource_paths)
    if backend:
        arguments["backend"] = backend
    joints = _demo_joints(robot, settings)
    demo_time = demo_points(joints, {}, max_time=float("inf"))[-1].time if joints else 0.0
    tip = None
    leaves = robot.leaf_links()
    if "tcp" in robot.links:
        tip = "tcp"
    elif leaves:
        tip = max(leaves, key=lambda name: robot.depth_of(name))
    robots = settings.robots or ("",)
    count = f"{len(robots)} robots ({', '.join('/' + r for r in robots)})" if len(robots) > 1 else "robot"
    summary = (
        f"{count} '{robot.name}' from {source}, parameter file {settings.path.name}, "
        f"backend {backend or settings.backend or 'sim'}"
    )
    dirs = tuple(_model_dirs(source, resource_paths))
    return BringupPlan(robot, settings, robots, arguments, joints, demo_time, tip, summary, loaded, dirs)

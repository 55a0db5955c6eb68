"""The move_group node's planner, built from a loaded robot as the driver builds its guard.

:func:`build_core` gives a :class:`~bb_robot.move_group.requests.MoveGroupCore`: the robot's
collision model with its verified allowed-collision matrix (the SRDF found as the driver finds it,
:func:`bb_robot.collision.sources.checked_model`), the world of ``collision.world``, the SRDF's
groups (else the driven chain as one group), and each group's limits: the model's, narrowed by a
``joint_limits`` file (the driver's parameter file, or MoveIt's ``joint_limits.yaml``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from bb_robot.collision.scene import Scene
from bb_robot.collision.sources import checked_model
from bb_robot.collision.world import model_world
from bb_robot.loading import LoadedModel
from bb_robot.move_group.groups import Group, default_group, read_groups
from bb_robot.move_group.requests import MoveGroupCore
from bb_robot.planning.limits import JointLimits, read_overrides
from bb_robot.planning.validity import DRIVER_CLEARANCE

Log = Callable[[str], None]


def build_core(
    loaded: LoadedModel,
    *,
    search_dirs: Sequence[str] = (),
    srdf: str = "",
    world: str = "",
    group_name: str = "arm",
    tip: str = "",
    limits_file: str = "",
    clearance: float = DRIVER_CLEARANCE,
    timeout: float = 5.0,
    seed: int = 0,
    log: Log | None = None,
) -> MoveGroupCore:
    """The planner of ``loaded`` (module docstring).

    Args:
        loaded: the robot.
        search_dirs: where meshes, the SRDF and the world file are looked for.
        srdf: an SRDF that wins over the one beside the model (``collision.srdf``).
        world: ``collision.world`` (empty: none).
        group_name: the default group's name when the SRDF has no groups (``planning.group_name``).
        tip: that group's tip (empty: the deepest tool frame).
        limits_file: a driver parameter file or MoveIt ``joint_limits.yaml`` (empty: the model's limits).
        clearance: the least distance plans keep (m).
        timeout: the planning time when a request gives none (s).
        seed: the first random seed.
        log: where notes go (defaulted limits, groups, the matrix's origin).

    Returns:
        The planner, with no run-time objects and no joint state yet.

    Raises:
        BbRobotError: the collision model, the SRDF, the world or the limits file cannot be used
            (each names the file and the entry).
    """
    say = log or (lambda text: None)
    model, found = checked_model(loaded, search_dirs, srdf or None)
    say(found.describe())
    scene = Scene(model, model_world(loaded, world, search_dirs) if world else None)
    for warning in scene.warnings:
        say(warning)
    groups: dict[str, Group] = {}
    source = found.read_from
    if source is not None and Path(str(source)).is_file():
        groups = read_groups(Path(str(source)).read_bytes(), loaded.robot, str(source))
    default = next(iter(groups)) if groups else group_name
    if not groups:
        groups = {group_name: default_group(loaded.robot, group_name, tip)}
    overrides = read_overrides(limits_file) if limits_file else None
    limits = {}
    for group in groups.values():
        limits[group.name] = JointLimits.from_robot(
            loaded.robot, group.joints, overrides, source=limits_file or "joint_limits"
        )
        for note in limits[group.name].notes:
            say(note)
        if limits[group.name].defaulted:
            say(
                f"group '{group.name}': no acceleration limit for {', '.join(limits[group.name].defaulted)}: "
                "conservative defaults"
            )
    say("groups: " + "; ".join(f"{g.name} ({', '.join(g.joints)}; tip {g.tip})" for g in groups.values()))
    return MoveGroupCore(scene, groups, default, limits, clearance=clearance, timeout=timeout, seed=seed)

"""Building the driver's collision guard at configure: the collision model of the loaded robot, its
allowed-collision matrix (SRDF, verified), the obstacles of ``collision.world``.

:func:`build_guard` gives a :class:`~bb_robot.driver.guard.collision_guard.CollisionGuard` that is
not yet started, or ``None`` when the model has no collision geometry; each step's time is kept in
the guard's ``build_times``.  Its ``scene`` (:class:`~bb_robot.collision.scene.Scene`) is where
objects added at run time go, under the scene's rules: the configured obstacles stay, and the
verified matrix cannot be allowed away.  The driver does not apply a world file's allowed pairs
(the stricter reading), so the scene is made without them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from bb_robot.collision.scene import Scene
from bb_robot.collision.sources import collision_model, find_matrix
from bb_robot.collision.verify import review
from bb_robot.collision.world import model_world
from bb_robot.driver.guard.collision_checker import GuardSettings
from bb_robot.driver.guard.collision_guard import CollisionGuard
from bb_robot.loading import LoadedModel

__all__ = ["build_guard"]

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]


def build_guard(
    loaded: LoadedModel,
    joints: Sequence[str],
    settings: GuardSettings,
    rate: float,
    *,
    srdf: str = "",
    compute_matrix: bool = False,
    world: str = "",
    search_dirs: Sequence[str] = (),
    log: LogFunction | None = None,
    velocity_limits: FloatArray | None = None,
    trust_srdf: bool = False,
) -> CollisionGuard | None:
    """The guard of a loaded model at configure, or ``None`` when the model has no collision geometry.

    Args:
        loaded: the driven model.
        joints: the driver's joints.
        settings: the ``collision.*`` distances and rate.
        rate: the control loop's rate (Hz).
        srdf: ``collision.srdf``.
        compute_matrix: ``collision.compute_matrix``.
        world: ``collision.world``.
        search_dirs: where meshes, includes and world files are looked for (``model_dirs``).
        log: ``log(level, text)``: where the matrix came from, the obstacles, the contacts allowed.
        velocity_limits: the joints' velocity limits (see :class:`CollisionGuard`).
        trust_srdf: ``collision.trust_srdf``: keep the SRDF's pairs that can touch disabled (still warned about).

    Returns:
        The guard, not started (:meth:`CollisionGuard.prepare` spawns its process and loads the compiled
        placement; otherwise the first check loads it).

    Raises:
        CollisionError: coal is missing, a mesh cannot be read (naming the link and the file), an SRDF
            or world file cannot be used (naming the file and the entry).
    """
    say = log or (lambda level, text: None)
    if not any(c.geometry is not None for link in loaded.robot.links.values() for c in link.collisions):
        say("info", "collision checking: the model has no <collision> geometry; nothing to check")
        return None
    times: list[tuple[str, float]] = []
    last = [time.perf_counter()]

    def lap(step: str) -> None:
        now = time.perf_counter()
        times.append((step, now - last[0]))
        last[0] = now

    # (bb_robot.collision.sources.checked_model's steps, timed one by one)
    model = collision_model(loaded, search_dirs)
    lap("collision model")
    found = find_matrix(loaded, model, srdf or None, compute_matrix, search_dirs=search_dirs)
    lap("collision matrix")
    say("info" if found.origin != "partial" else "warning", found.describe())
    matrix, warnings = review(model, loaded.description, found.matrix, found.read_from, trust_srdf)
    for warning in warnings:
        say("warning", warning)
    model = model.with_allowed(matrix.disabled)
    lap("SRDF verified")
    scene = Scene(model)
    if world:
        obstacles = model_world(loaded, world, search_dirs)
        scene = Scene(model, dataclasses.replace(obstacles, allowed=()))
        standing = scene.standing
        text = f"collision world {world}: {len(obstacles.parts)} obstacle parts"
        if standing:
            text += "; in contact where the robot stands (allowed): " + ", ".join(
                f"{a}/{b}" for a, b in sorted(standing)
            )
        say("info", text)
        lap("collision world")
    guard = CollisionGuard(scene.model, joints, settings, rate, log, velocity_limits)
    guard.scene = scene
    guard.build_times = tuple(times)
    return guard

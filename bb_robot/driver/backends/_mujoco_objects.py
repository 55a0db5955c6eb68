"""The ``mujoco`` backend's objects: the world of ``collision.world`` in the physics, and where they are.

The objects come from the driver's ``collision.world`` (:attr:`BackendContext.world_objects
<bb_robot.driver.backends.base.BackendContext>`): those with a mass are free bodies that fall,
rest on the table and are held by the fingers' friction; the others are welded to the world (a
table, a wall).  :class:`MujocoObjects` finds their bodies in the compiled model and measures
their poses after each read (MuJoCo's body poses, in the world body's frame: the robot's root
link), as one :class:`~bb_robot.driver.backends.base.ObjectPoses` value that other threads read
whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bb_robot.driver.backends.base import ObjectPoses
from bb_robot.mjcf.bodies import OBJECT_PREFIX, SceneBody


class MujocoObjects:
    """The world's objects of one compiled model.

    Args:
        model: The ``mujoco.MjModel`` written with ``bodies``.
        bodies: The objects it was written with.
    """

    def __init__(self, model: Any, bodies: Sequence[SceneBody]) -> None:
        self.names = tuple(body.name for body in bodies)
        self.movable = tuple(body.name for body in bodies if body.movable)
        self._ids = np.array([model.body(f"{OBJECT_PREFIX}{name}").id for name in self.names], dtype=np.intp)
        #: Each body's geoms, for telling contacts apart (geom id → object name).
        self.geom_owner = {
            int(g): name for name, body_id in zip(self.names, self._ids, strict=True) for g in _geoms(model, body_id)
        }

    def measure(self, data: Any, now_ns: int) -> ObjectPoses:
        """The objects' poses in the simulation's current state.

        Args:
            data: The ``mujoco.MjData`` after the step.
            now_ns: The driver's clock.

        Returns:
            Their poses (quaternions x y z w).
        """
        quaternions = data.xquat[self._ids][:, [1, 2, 3, 0]]
        return ObjectPoses(self.names, data.xpos[self._ids].copy(), quaternions, now_ns)


def _geoms(model: Any, body_id: int) -> list[int]:
    start, count = int(model.body_geomadr[body_id]), int(model.body_geomnum[body_id])
    return list(range(start, start + count)) if start >= 0 else []

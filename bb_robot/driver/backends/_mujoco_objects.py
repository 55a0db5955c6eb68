"""The ``mujoco`` backend's objects: the world of ``collision.world`` in the physics, and where they are.

The objects come from the driver's ``collision.world`` (:attr:`BackendContext.world_objects
<bb_robot.driver.backends.base.BackendContext>`): those with a mass are free bodies that fall,
rest on the table and are held by the fingers' friction; the others are welded to the world (a
table, a wall).  :class:`MujocoObjects` finds their bodies in the compiled model and measures
their poses after each read (MuJoCo's body poses, in the world body's frame: the robot's root
link), as one :class:`~bb_robot.driver.backends.base.ObjectPoses` value that other threads read
whole.  It also counts, at every physics step it is given (:meth:`MujocoObjects.count_contacts`), the
steps in which each static object touched the robot and in which it touched a movable object: the
pick demo's judge that the wall was never touched (the driver's ``/diagnostics``,
:meth:`MujocoObjects.contact_values`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bb_robot.driver.backends.base import ObjectPoses
from bb_robot.mjcf.bodies import OBJECT_PREFIX, SceneBody

#: Geom owners other than an object (:attr:`MujocoObjects._owner`).
ROBOT = -1
WORLD = -2


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
        # Each geom's owner: an object's index, ROBOT for the robot's links, WORLD for the world
        # body's own geoms (the floor).
        owner = np.where(np.asarray(model.geom_bodyid) == 0, WORLD, ROBOT).astype(np.intp)
        index = {name: k for k, name in enumerate(self.names)}
        for geom, name in self.geom_owner.items():
            owner[geom] = index[name]
        self._owner = owner
        self._static = np.array([k for k, name in enumerate(self.names) if name not in self.movable], dtype=np.intp)
        self._movable = np.array([k for k, name in enumerate(self.names) if name in self.movable], dtype=np.intp)
        #: Per static object: physics steps in which it touched the robot, and a movable object.
        self.robot_contacts = np.zeros(len(self.names), dtype=np.int64)
        self.object_contacts = np.zeros(len(self.names), dtype=np.int64)

    @property
    def counts_contacts(self) -> bool:
        """Whether there is a static object whose contacts are counted."""
        return bool(len(self._static))

    def count_contacts(self, data: Any) -> None:
        """Count this physics step's contacts of the static objects (call after each ``mj_step``).

        Args:
            data: The ``mujoco.MjData`` after the step.
        """
        n = int(data.ncon)
        if not n or not len(self._static):
            return
        contact = data.contact
        owners = self._owner[contact.geom[:n]][np.asarray(contact.exclude[:n]) == 0]
        for k in self._static:
            first, second = owners[:, 0] == k, owners[:, 1] == k
            other = np.concatenate((owners[first, 1], owners[second, 0]))
            if not other.size:
                continue
            if (other == ROBOT).any():
                self.robot_contacts[k] += 1
            if np.isin(other, self._movable).any():
                self.object_contacts[k] += 1

    def contact_values(self) -> dict[str, str]:
        """The counts as diagnostic values: ``contact steps <object>/robot`` and ``.../objects``."""
        values = {}
        for k in self._static:
            name = self.names[int(k)]
            values[f"contact steps {name}/robot"] = str(int(self.robot_contacts[k]))
            values[f"contact steps {name}/objects"] = str(int(self.object_contacts[k]))
        return values

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

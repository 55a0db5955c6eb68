"""Objects of the world around the robot, as MuJoCo bodies (pure Python: MuJoCo is not needed).

A :class:`SceneBody` is one object of ``collision.world`` (a YAML obstacle, a model of an SDF world)
as the physics needs it: its shapes in its own frame, its pose in the robot's root-link frame,
its mass (``None``: static, welded to the world, as a table or a wall) and its friction
coefficient (``None``: MuJoCo's default, 1).  The writer (:mod:`bb_robot.mjcf.writer`) turns a
static one into a body without a joint, and one with a mass into a free body (``<freejoint>``) with
the inertia of its shapes as uniform solids (:func:`solid_inertia`), named ``object/<name>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bb_robot.errors import BbRobotError
from bb_robot.model.geometry import Box, Cylinder, Geometry, Sphere
from bb_robot.model.transforms import Matrix

#: The MuJoCo body (and free joint) name of object ``name``: also its TF frame.
OBJECT_PREFIX = "object/"


class BodyError(BbRobotError):
    """An object cannot be a MuJoCo body (a movable mesh, a mass that is not a positive number)."""


@dataclass(frozen=True, eq=False)
class SceneBody:
    """One object of the world (see the module docstring).

    Attributes:
        name: The object's name (the body is ``object/<name>``).
        shapes: Each shape with its 4×4 pose in the object's frame.
        pose: The object's 4×4 pose in the robot's root-link frame.
        mass: kg; ``None``: static.
        friction: Sliding friction coefficient; ``None``: MuJoCo's default.
        source: The file that describes it, for messages.
    """

    name: str
    shapes: tuple[tuple[Geometry, Matrix], ...]
    pose: Matrix
    mass: float | None = None
    friction: float | None = None
    source: str = ""

    @property
    def movable(self) -> bool:
        """Whether it is a free body (it has a mass)."""
        return self.mass is not None


def _shape_solid(geometry: Geometry, where: str) -> tuple[float, Matrix]:
    """The volume of a primitive and its inertia per unit mass about its centre, in its frame."""
    if isinstance(geometry, Box):
        x, y, z = geometry.size
        return x * y * z, np.diag([(y * y + z * z), (x * x + z * z), (x * x + y * y)]) / 12.0
    if isinstance(geometry, Cylinder):
        r, h = geometry.radius, geometry.length
        side = (3.0 * r * r + h * h) / 12.0
        return math.pi * r * r * h, np.diag([side, side, r * r / 2.0])
    if isinstance(geometry, Sphere):
        r = geometry.radius
        return 4.0 / 3.0 * math.pi * r**3, np.eye(3) * (2.0 / 5.0 * r * r)
    raise BodyError(
        f"{where}: a {type(geometry).__name__.lower()} cannot be part of an object with a mass (its inertia is not "
        "known here); give the object boxes, cylinders and spheres, or no mass (static)"
    )


def solid_inertia(body: SceneBody) -> tuple[Matrix, Matrix]:
    """The centre of mass and inertia tensor (about it) of a body's shapes as uniform solids.

    Args:
        body: A body with a mass; its shapes share it by volume (overlaps counted twice).

    Returns:
        ``(com, inertia)``: the centre of mass (3) and the 3×3 inertia tensor in the body's frame.

    Raises:
        BodyError: No mass, a mass that is not a positive finite number, or a shape that is not a
            primitive (naming the object and its file).
    """
    where = f"{body.source or 'world'}: object '{body.name}'"
    mass = body.mass
    if mass is None or not math.isfinite(mass) or mass <= 0.0:
        raise BodyError(f"{where}: mass must be a positive number of kg, got {mass!r}")
    solids = [(*_shape_solid(geometry, where), np.asarray(local, dtype=float)) for geometry, local in body.shapes]
    volume = sum(v for v, _, _ in solids)
    if not solids or volume <= 0.0:
        raise BodyError(f"{where}: an object with a mass needs shapes with a volume")
    com = sum((v / volume) * local[:3, 3] for v, _, local in solids)
    inertia = np.zeros((3, 3))
    for v, unit, local in solids:
        m = mass * v / volume
        rotation = local[:3, :3]
        d = local[:3, 3] - com
        inertia += m * (rotation @ unit @ rotation.T) + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return np.asarray(com, dtype=float), inertia


def check_bodies(bodies: Sequence[SceneBody]) -> None:
    """Refuse two objects of one name.

    Args:
        bodies: The objects.

    Raises:
        BodyError: A name taken twice (naming it and the files).
    """
    seen: dict[str, SceneBody] = {}
    for body in bodies:
        other = seen.get(body.name)
        if other is not None:
            raise BodyError(
                f"two objects are named '{body.name}' ({other.source or 'world'} and {body.source or 'world'}); "
                "rename one"
            )
        seen[body.name] = body

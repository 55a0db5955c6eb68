"""World objects as collision parts: shapes at poses, placed in the robot's root frame.

The readers of ``collision.world`` (:mod:`bb_robot.collision.world`, the MoveIt formats in
:mod:`bb_robot.collision.planning_scene` and :mod:`bb_robot.collision.scene_text`) and the run-time
scene (:mod:`bb_robot.collision.scene`) build their obstacles here:

- :func:`pose_matrix` turns a position and an ``(x, y, z, w)`` quaternion into a 4×4 pose,
  refusing non-finite numbers and a zero quaternion (a non-unit one is normalised, as MoveIt does);
- :func:`object_parts` makes the parts of one object from its shapes, each at its pose in the
  object's frame: the URDF primitives and mesh files of :mod:`bb_robot.model.geometry`, plus
  :class:`Cone` and :class:`TriangleMesh` (a mesh given by its triangles, as MoveIt messages do);
- :func:`placed` moves parts by a pose and names them after their object.

Obstacle parts are named ``world/<object>`` (:data:`WORLD_PREFIX`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from bb_robot.collision.shapes import Part, coal_module, flat, robot_parts
from bb_robot.model.geometry import Box, Collision, Cylinder, Geometry, Sphere
from bb_robot.model.robot import Link, Robot
from bb_robot.model.transforms import Matrix, quaternion_to_matrix

#: Obstacle link names start with this.
WORLD_PREFIX = "world/"


@dataclass(frozen=True)
class Cone:
    """A cone along z, centred on the origin, its tip at ``+length / 2`` (MoveIt's and coal's convention)."""

    radius: float
    length: float


@dataclass(frozen=True)
class TriangleMesh:
    """A mesh given by its vertices ``(n, 3)`` and triangles ``(m, 3)`` (vertex indices)."""

    vertices: Matrix
    triangles: np.ndarray


#: One shape of an object.
Shape = Geometry | Cone | TriangleMesh


def pose_matrix(position: Sequence[float], quaternion: Sequence[float]) -> Matrix:
    """A 4×4 pose from a position and an ``(x, y, z, w)`` quaternion (normalised).

    Args:
        position: ``(x, y, z)``, metres.
        quaternion: ``(x, y, z, w)``.

    Returns:
        The pose.

    Raises:
        ValueError: a non-finite number, or a quaternion of zero length (the message says which).
    """
    p = np.asarray(position, dtype=float)
    q = np.asarray(quaternion, dtype=float)
    if p.shape != (3,) or not np.isfinite(p).all():
        raise ValueError(f"position needs 3 finite numbers, got {list(position)}")
    if q.shape != (4,) or not np.isfinite(q).all():
        raise ValueError(f"orientation needs 4 finite numbers (x, y, z, w), got {list(quaternion)}")
    if float(np.linalg.norm(q)) < 1e-9:
        raise ValueError(f"orientation {list(quaternion)} is not a rotation (zero length)")
    pose = np.eye(4)
    pose[:3, :3] = quaternion_to_matrix(q.tolist())
    pose[:3, 3] = p
    return pose


def placed(part: Part, pose: Matrix, link: str) -> Part:
    """``part`` moved by ``pose`` and renamed to ``link`` (its label follows).

    Args:
        part: a part in some frame.
        pose: that frame's pose in the new one.
        link: the part's new link name.

    Returns:
        The moved part.
    """
    rotation, translation = pose[:3, :3], pose[:3, 3]
    return replace(
        part,
        link=link,
        label=link if part.label == part.link else f"{link}/{part.label.rsplit('/', 1)[-1]}",
        local=pose @ part.local,
        center=rotation @ part.center + translation,
        points=part.points @ rotation.T + translation,
    )


def _cone_part(shape: Cone, link: str) -> Part:
    coal = coal_module()
    solid = coal.Cone(shape.radius, shape.length)
    r, h = shape.radius, shape.length / 2
    points = np.array([[sx * r, sy * r, sz * h] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return Part(link, link, np.eye(4), solid, solid, np.zeros(3), math.hypot(r, h), points)


#: The largest size or coordinate (m) an object may have: far beyond any robot's cell, and below
#: what coal's hull and BVH builders survive (a mesh vertex at 1e9 m crashed the process).
MAX_SIZE = 1000.0


def _triangle_part(shape: TriangleMesh, link: str) -> Part:
    coal = coal_module()
    vertices = np.asarray(shape.vertices, dtype=float).reshape(-1, 3)
    triangles = np.asarray(shape.triangles, dtype=np.int64).reshape(-1, 3)
    if vertices.shape[0] < 4 or not np.isfinite(vertices).all():
        raise ValueError(f"a mesh needs at least 4 finite vertices, got {vertices.shape[0]}")
    if np.abs(vertices).max() > MAX_SIZE:
        raise ValueError(f"a mesh vertex lies {np.abs(vertices).max():g} m out (at most {MAX_SIZE:g} m)")
    if triangles.size == 0 or triangles.min() < 0 or triangles.max() >= vertices.shape[0]:
        raise ValueError(f"a mesh's triangles must index its {vertices.shape[0]} vertices")
    if flat(vertices):
        raise ValueError("a mesh's vertices lie on one plane: it has no volume to check")
    exact = coal.BVHModelOBBRSS()
    exact.beginModel(len(triangles), len(vertices))
    for a, b, c in triangles:
        exact.addTriangle(vertices[a], vertices[b], vertices[c])
    exact.endModel()
    points = coal.StdVec_Vec3s()
    points.extend(vertices)
    hull = coal.ConvexBase.convexHull(points, False, "Qt")
    if hull is None:
        raise ValueError("the mesh's convex hull cannot be built (flat or degenerate)")
    center = (vertices.min(axis=0) + vertices.max(axis=0)) / 2
    radius = float(np.sqrt(((vertices - center) ** 2).sum(axis=1).max()))
    return Part(link, link, np.eye(4), hull, exact, center, radius, vertices)


def _geometry_part(shape: Geometry, link: str, source: str) -> Part:
    holder = Robot.assemble(
        "objects", [Link(name=link, collisions=(Collision(name=None, origin=None, geometry=shape),))], []
    )
    return robot_parts(holder, source)[0]


def object_parts(link: str, shapes: Sequence[tuple[Shape, Matrix]], source: str = "") -> tuple[Part, ...]:
    """The parts of one object in its own frame, one per shape.

    Args:
        link: the parts' link name (``world/<object>`` for an obstacle).
        shapes: each shape and its pose in the object's frame.
        source: the file the object came from (mesh files are relative to it).

    Returns:
        The parts; their labels are ``link`` for a single shape, else ``link/<index>``.

    Raises:
        ValueError: a degenerate mesh given by its triangles.
        MeshUnreadable: a mesh file that cannot be read.
    """
    parts = []
    for index, (shape, pose) in enumerate(shapes):
        if isinstance(shape, Cone):
            part = _cone_part(shape, link)
        elif isinstance(shape, TriangleMesh):
            part = _triangle_part(shape, link)
        else:
            part = _geometry_part(shape, link, source)
        part = placed(part, pose, link)
        if len(shapes) > 1:
            part = replace(part, label=f"{link}/{index}")
        parts.append(part)
    return tuple(parts)


def primitive(kind: str, dimensions: Sequence[float]) -> Shape:
    """A primitive from MoveIt's ``SolidPrimitive`` type and dimensions.

    Args:
        kind: ``box`` (x, y, z), ``sphere`` (radius), ``cylinder`` or ``cone`` (height, radius),
            any case.
        dimensions: as MoveIt orders them.

    Returns:
        The shape.

    Raises:
        ValueError: an unknown type, or dimensions of the wrong count or not positive and finite.
    """
    counts = {"box": 3, "sphere": 1, "cylinder": 2, "cone": 2}
    name = kind.lower()
    if name not in counts:
        raise ValueError(f"unknown primitive type {kind!r} (known: BOX, SPHERE, CYLINDER, CONE)")
    values = [float(v) for v in dimensions]
    if len(values) != counts[name] or not all(math.isfinite(v) and 0 < v <= MAX_SIZE for v in values):
        raise ValueError(
            f"{name} needs {counts[name]} positive dimensions of at most {MAX_SIZE:g} m, got {list(dimensions)}"
        )
    if name == "box":
        return Box((values[0], values[1], values[2]))
    if name == "sphere":
        return Sphere(values[0])
    if name == "cylinder":
        return Cylinder(values[1], values[0])
    return Cone(values[1], values[0])

"""Each link's ``<collision>`` geometry as coal shapes, with the bounds the queries cull with.

A :class:`Part` is one ``<collision>`` element: its link, its pose in the link frame, two coal
geometries (``hull``: the convex hull of a mesh, used for distances and the default contact
check; ``exact``: the triangle mesh itself, for contact where exactness is asked) and a bounding
sphere in the link frame (every point of the geometry lies inside it).  Primitives (box,
cylinder, sphere) are the same object in both roles.

Meshes (STL, OBJ, DAE: whatever coal's assimp loader reads) are found as the rest of bb_robot
finds them (:func:`bb_robot.mjcf.meshes.default_resolver`); a mesh that cannot be found or read
is a :class:`~bb_robot.collision.errors.MeshUnreadable` naming the link and the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from bb_robot.collision.errors import CollisionUnavailable, MeshUnreadable
from bb_robot.mjcf.meshes import default_resolver
from bb_robot.model.geometry import Box, Cylinder, Geometry, Mesh, Sphere
from bb_robot.model.robot import Robot
from bb_robot.model.transforms import Matrix, origin_to_matrix

#: ``resolver(uri, link)``: the absolute path of a mesh, or ``None`` when it is not found.
Resolver = Callable[[str, str], Path | None]


def coal_module() -> Any:
    """Return the ``coal`` module.

    Returns:
        The imported module.

    Raises:
        CollisionUnavailable: coal is not installed or does not import.
    """
    try:
        import coal
    except ImportError as error:  # pragma: no cover - scripts/setup installs coal
        raise CollisionUnavailable(str(error)) from None
    return coal


def flat(vertices: Matrix) -> bool:
    """Whether points lie on one plane or line (no volume): coal's convex hull crashes the process on them.

    Args:
        vertices: ``(n, 3)`` points.

    Returns:
        ``True`` when their spread across the thinnest direction is below 1e-9 of their extent.
    """
    centred = np.asarray(vertices, dtype=float).reshape(-1, 3)
    centred = centred - centred.mean(axis=0)
    spread = np.linalg.svd(centred, compute_uv=False) if len(centred) >= 3 else np.zeros(1)
    return len(spread) < 3 or float(spread[-1]) <= 1e-9 * max(float(spread[0]), 1e-300)


@dataclass(frozen=True, eq=False)
class Part:
    """One ``<collision>`` element of a link, ready for coal.

    Attributes:
        link: the link's name.
        label: ``link`` or ``link/<collision name>``, ``link[i]`` for the i-th unnamed one.
        local: the geometry's 4×4 pose in the link frame.
        hull: coal geometry for distances and the default contact check (a mesh's convex hull).
        exact: coal geometry for exact contact (a mesh's triangles; a primitive itself).
        center: the bounding sphere's centre in the link frame.
        radius: the bounding sphere's radius: no point of the geometry is farther from ``center``.
        points: points whose convex hull contains the geometry, in the link frame (for motion bounds).
        source: the mesh file, or ``""`` for a primitive.
        frame: the robot link that places the part when it is not ``link`` (an object attached to a
            link: ``link`` names the object, ``frame`` the link it moves with); ``""``: ``link``.
    """

    link: str
    label: str
    local: Matrix
    hull: Any
    exact: Any
    center: Matrix
    radius: float
    points: Matrix
    source: str = ""
    frame: str = ""


def _box_points(half: Sequence[float]) -> Matrix:
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    return np.asarray(signs * np.asarray(half, dtype=float))


def _cylinder_points(radius: float, length: float) -> Matrix:
    # The corners of the square around the disc contain it; z along the axis.
    return _box_points((radius, radius, length / 2))


@lru_cache(maxsize=256)
def _load_mesh(path: str, scale: tuple[float, float, float]) -> tuple[Any, Any, Matrix]:
    """Load a mesh once per file and scale: ``(exact BVH, convex hull, vertices)``."""
    coal = coal_module()
    mesh = coal.MeshLoader().load(path, np.array(scale, dtype=float))
    vertices = np.array(mesh.vertices(), dtype=float).reshape(-1, 3)
    if vertices.shape[0] < 4:
        raise ValueError(f"it has {vertices.shape[0]} vertices; a solid needs at least 4")
    if flat(vertices):
        raise ValueError("its vertices lie on one plane: it has no volume to check")
    # The hull of the hull's own vertices: coal's buildConvexRepresentation keeps every vertex of the
    # mesh, also those inside the hull, which have no neighbours for GJK's hill-climbing support
    # search; a search that starts at one stays there, and distances come out too large (measured:
    # 0.139 m for two Talos links in contact).
    points = coal.StdVec_Vec3s()
    points.extend(vertices)
    hull = coal.ConvexBase.convexHull(points, False, "Qt")
    if hull is None:
        raise ValueError("its convex hull cannot be built")
    return mesh, hull, vertices


def _mesh_part(geometry: Mesh, link: str, resolver: Resolver) -> tuple[Any, Any, Matrix, str]:
    path = resolver(geometry.filename, link)
    if path is None:
        raise MeshUnreadable(
            link, geometry.filename, "no such file was found (model directory, package share, search paths)"
        )
    scale = geometry.extra_scale_xyz or (geometry.scale, geometry.scale, geometry.scale)
    try:
        exact, hull, vertices = _load_mesh(str(path), (float(scale[0]), float(scale[1]), float(scale[2])))
    except Exception as error:  # coal's loader raises RuntimeError / ValueError / its own types
        raise MeshUnreadable(link, f"{geometry.filename} ({path})", str(error) or type(error).__name__) from None
    return exact, hull, vertices, str(path)


def _primitive(geometry: Box | Cylinder | Sphere) -> tuple[Any, Matrix]:
    coal = coal_module()
    if isinstance(geometry, Box):
        return coal.Box(*geometry.size), _box_points([s / 2 for s in geometry.size])
    if isinstance(geometry, Cylinder):
        return coal.Cylinder(geometry.radius, geometry.length), _cylinder_points(geometry.radius, geometry.length)
    return coal.Sphere(geometry.radius), _box_points((geometry.radius,) * 3)


def _bounding_sphere(geometry: Geometry, points: Matrix) -> tuple[Matrix, float]:
    """A sphere around the geometry in its own frame: exact for primitives, around the vertices for meshes."""
    if isinstance(geometry, Sphere):
        return np.zeros(3), float(geometry.radius)
    if isinstance(geometry, Cylinder):
        return np.zeros(3), float(np.hypot(geometry.radius, geometry.length / 2))
    # Bădoiu–Clarkson: step towards the farthest point with shrinking steps; the centre approaches
    # the smallest enclosing sphere's (within 1/sqrt(iterations) of its radius).  The radius is then
    # measured from the centre reached, so the sphere always holds every point.
    center = (points.min(axis=0) + points.max(axis=0)) / 2
    for step in range(1, 200):
        farthest = points[int(((points - center) ** 2).sum(axis=1).argmax())]
        center = center + (farthest - center) / (step + 1)
    aabb_center = (points.min(axis=0) + points.max(axis=0)) / 2
    candidates = [
        (float(np.sqrt(((points - c) ** 2).sum(axis=1).max())), i) for i, c in enumerate((center, aabb_center))
    ]
    radius, best = min(candidates)
    return (center, aabb_center)[best], radius


def robot_parts(
    robot: Robot,
    source: str | os.PathLike[str] | None = None,
    search_dirs: Sequence[str] = (),
    resolver: Resolver | None = None,
) -> tuple[Part, ...]:
    """Build the parts of every link's ``<collision>`` elements, in link order.

    Args:
        robot: the model.
        source: the file the model was read from (relative mesh paths start there); ``None`` for text.
        search_dirs: more directories to look for meshes in.
        resolver: how to find a mesh (default: :func:`bb_robot.mjcf.meshes.default_resolver`).

    Returns:
        One :class:`Part` per ``<collision>`` with a geometry.

    Raises:
        CollisionUnavailable: coal is missing.
        MeshUnreadable: a mesh is not found or not readable (naming the link and the file).
    """
    coal_module()
    find = resolver or default_resolver(source, search_dirs)
    parts: list[Part] = []
    for link in robot.links_in_order():
        for index, collision in enumerate(link.collisions):
            geometry = collision.geometry
            if geometry is None:
                continue
            label = link.name if len(link.collisions) == 1 else f"{link.name}/{collision.name or index}"
            local = origin_to_matrix(collision.origin)
            if isinstance(geometry, Mesh):
                exact, hull, vertices, path = _mesh_part(geometry, link.name, find)
                geometry_points, mesh_source = vertices, path
            else:
                exact, geometry_points = _primitive(geometry)
                hull, mesh_source = exact, ""
            center, radius = _bounding_sphere(geometry, geometry_points)
            rotation, translation = local[:3, :3], local[:3, 3]
            parts.append(
                Part(
                    link=link.name,
                    label=label,
                    local=local,
                    hull=hull,
                    exact=exact,
                    center=rotation @ center + translation,
                    radius=radius,
                    points=geometry_points @ rotation.T + translation,
                    source=mesh_source,
                )
            )
    return tuple(parts)

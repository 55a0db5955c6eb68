"""Collision geometry that crosses a process boundary: pickling for the convex hulls coal cannot pickle.

coal pickles its primitives and its triangle meshes (``BVHModelOBBRSS``), but not a ``ConvexBase``,
the convex hull every mesh part carries for distances (:class:`~bb_robot.collision.shapes.Part`'s
``hull``).  The driver hands its collision guard's measurer to a checker process as a pickle
(:mod:`bb_robot.driver.guard.collision_checker`), so without this a robot with mesh collision
geometry could not have its guard at all.  A hull pickles as its vertices and is rebuilt from them
as it was built (the hull of the hull's own vertices: the same polytope).

:func:`register` installs the reducer in :mod:`copyreg`; :meth:`CollisionModel.__reduce__
<bb_robot.collision.model.CollisionModel.__reduce__>` calls it, so anything that pickles a model
pickles its hulls.
"""

from __future__ import annotations

import copyreg
from typing import Any

import numpy as np

from bb_robot.collision.shapes import coal_module
from bb_robot.model.transforms import Matrix

_registered = False


def hull_from(points: Matrix) -> Any:
    """The convex hull of ``points`` (``(n, 3)``, n ≥ 4, not all on one plane), as coal's ``ConvexBase``.

    Args:
        points: the vertices.

    Returns:
        The hull.

    Raises:
        ValueError: coal could not build it.
    """
    coal = coal_module()
    vertices = coal.StdVec_Vec3s()
    vertices.extend(np.asarray(points, dtype=float).reshape(-1, 3))
    hull = coal.ConvexBase.convexHull(vertices, False, "Qt")
    if hull is None:
        raise ValueError(f"the convex hull of {len(vertices)} points cannot be built")
    return hull


def _reduce_hull(hull: Any) -> tuple[Any, tuple[Matrix]]:
    return hull_from, (np.array(hull.points(), dtype=float).reshape(-1, 3),)


def register() -> None:
    """Make coal's ``ConvexBase`` picklable in this process (once; later calls do nothing)."""
    global _registered
    if not _registered:
        copyreg.pickle(coal_module().ConvexBase, _reduce_hull)
        _registered = True

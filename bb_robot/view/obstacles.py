"""The obstacles of ``collision.world`` as a Foxglove scene: what the driver's collision checker sees.

:func:`obstacle_scene` turns a :class:`~bb_robot.collision.world.World` (read as the driver reads
it, :func:`~bb_robot.collision.world.model_world`) into one ``foxglove.SceneUpdate``: an entity per
obstacle link (``world/<model>/<link>``, ``world/<name>``, ``world/floor``), in the robot's root-link
frame and locked to it.  Boxes, cylinders, cones and spheres become Foxglove's primitives of the
same size (a cone: a cylinder primitive whose top is scaled to a point); a mesh becomes the
triangles coal checks (the exact mesh, not its hull); the floor, a half-space, a thin square
:data:`FLOOR_SIZE` across whose top face is the plane.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from foxglove.messages import (
    Color,
    CubePrimitive,
    CylinderPrimitive,
    Point3,
    Pose,
    Quaternion,
    SceneEntity,
    SceneUpdate,
    SpherePrimitive,
    TriangleListPrimitive,
    Vector3,
)

from bb_robot.collision.shapes import Part
from bb_robot.collision.world import World
from bb_robot.model.transforms import Matrix, matrix_to_quaternion

#: The obstacles' colour: translucent orange, apart from the robot's own materials.
COLOR = Color(r=0.95, g=0.45, b=0.1, a=0.55)
#: The side (m) of the square drawn for the floor, and its thickness.
FLOOR_SIZE, FLOOR_THICKNESS = 10.0, 0.002


def _pose(matrix: Matrix) -> Pose:
    x, y, z, w = matrix_to_quaternion(matrix[:3, :3])
    t = matrix[:3, 3]
    return Pose(
        position=Vector3(x=float(t[0]), y=float(t[1]), z=float(t[2])), orientation=Quaternion(x=x, y=y, z=z, w=w)
    )


def _floor_pose(normal: Matrix, offset: float) -> Matrix:
    """The pose of the floor's square: z along the normal, the top face on the plane ``n·x = d``."""
    z = normal / np.linalg.norm(normal)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    pose[:3, 3] = z * (offset - FLOOR_THICKNESS / 2)
    return pose


def _triangles(mesh: Any) -> list[Point3]:
    """The triangles of a coal mesh, three points each, in its own frame."""
    vertices = np.asarray(mesh.vertices(), dtype=float).reshape(-1, 3)
    points: list[Point3] = []
    for index in range(mesh.num_tris):
        triangle = mesh.tri_indices(index)
        for corner in (triangle[0], triangle[1], triangle[2]):
            x, y, z = vertices[corner]
            points.append(Point3(x=float(x), y=float(y), z=float(z)))
    return points


def add_part(primitives: dict[str, list[Any]], part: Part, color: Color = COLOR) -> None:
    """Add ``part``'s primitive, at its pose in the entity's frame, to an entity's lists.

    Args:
        primitives: the entity's lists by kind (``cubes``, ``cylinders``, ``spheres``, ``triangles``;
            :func:`new_primitives`).
        part: a collision part; ``part.local`` is its pose in the entity's frame.
        color: its colour.
    """
    shape = part.exact
    kind = type(shape).__name__
    if kind == "Box":
        sx, sy, sz = (2.0 * float(v) for v in shape.halfSide)
        primitives["cubes"].append(CubePrimitive(pose=_pose(part.local), size=Vector3(x=sx, y=sy, z=sz), color=color))
    elif kind == "Cylinder":
        d, h = 2.0 * float(shape.radius), 2.0 * float(shape.halfLength)
        primitives["cylinders"].append(
            CylinderPrimitive(
                pose=_pose(part.local), size=Vector3(x=d, y=d, z=h), bottom_scale=1.0, top_scale=1.0, color=color
            )
        )
    elif kind == "Cone":  # along z, its tip at +halfLength: a cylinder primitive narrowing to nothing at the top
        d, h = 2.0 * float(shape.radius), 2.0 * float(shape.halfLength)
        primitives["cylinders"].append(
            CylinderPrimitive(
                pose=_pose(part.local), size=Vector3(x=d, y=d, z=h), bottom_scale=1.0, top_scale=0.0, color=color
            )
        )
    elif kind == "Sphere":
        d = 2.0 * float(shape.radius)
        primitives["spheres"].append(SpherePrimitive(pose=_pose(part.local), size=Vector3(x=d, y=d, z=d), color=color))
    elif kind == "Halfspace":
        pose = part.local @ _floor_pose(np.asarray(shape.n, dtype=float), float(shape.d))
        size = Vector3(x=FLOOR_SIZE, y=FLOOR_SIZE, z=FLOOR_THICKNESS)
        primitives["cubes"].append(CubePrimitive(pose=_pose(pose), size=size, color=color))
    else:  # a triangle mesh (coal's BVH model)
        primitives["triangles"].append(
            TriangleListPrimitive(pose=_pose(part.local), points=_triangles(shape), color=color)
        )


def new_primitives() -> dict[str, list[Any]]:
    """An entity's empty primitive lists, by kind, for :func:`add_part` and :func:`entity`."""
    return {"cubes": [], "cylinders": [], "spheres": [], "triangles": []}


def entity(name: str, frame_id: str, primitives: dict[str, list[Any]], **fields: Any) -> SceneEntity:
    """A frame-locked scene entity of ``primitives`` (as :func:`add_part` fills them).

    Args:
        name: its id.
        frame_id: its frame.
        primitives: its primitives by kind.
        fields: further ``SceneEntity`` fields (``timestamp``).

    Returns:
        The entity.
    """
    return SceneEntity(
        frame_id=frame_id,
        id=name,
        frame_locked=True,
        cubes=primitives["cubes"],
        cylinders=primitives["cylinders"],
        spheres=primitives["spheres"],
        triangles=primitives["triangles"],
        **fields,
    )


def obstacle_scene(world: World, frame_id: str) -> SceneUpdate:
    """The obstacles of ``world`` as one scene update (see the module docstring).

    Args:
        world: the obstacles, in the robot's root-link frame.
        frame_id: that frame's TF name (the root link, with the description's frame prefix).

    Returns:
        One entity per obstacle link, its id the link's name (``world/...``), frame-locked.
    """
    entities: dict[str, dict[str, list[Any]]] = {}
    for part in world.parts:
        add_part(entities.setdefault(part.link, new_primitives()), part)
    return SceneUpdate(entities=[entity(link, frame_id, primitives) for link, primitives in entities.items()])

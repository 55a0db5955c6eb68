"""What the move_group node adds to the picture: run-time objects, attached objects and the planned path.

Fed with plain data (the node layer reads the ROS messages, :mod:`bb_robot.nodes.view_planning`):

- :func:`objects_scene` draws the run-time objects of a planning scene (:class:`SceneObject`: shapes
  at poses in a frame) as one ``foxglove.SceneUpdate``: an entity per object, ``object/<name>`` for a
  world object (translucent blue) and ``attached/<name>`` for one attached to a link (translucent
  green), each locked to its frame, so an attached object moves with its link.  The shapes become
  collision parts as the checker builds them (:func:`bb_robot.collision.objects.object_parts`) and
  are drawn as the configured obstacles are (:mod:`bb_robot.view.obstacles`).
- :func:`tool_path` computes the tool's positions along a trajectory by forward kinematics, its
  points joined by straight lines in joint space (the planner's edges are straight there), and
  :func:`path_scene` draws them as one line strip, entity ``planned_path`` in the root frame.

Each update first deletes every entity stamped before it, so it replaces the previous one whole: an
object removed, or a path planned anew, leaves nothing behind, and the update kept for clients that
subscribe later is the whole picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from foxglove.messages import (
    Color,
    LinePrimitive,
    LinePrimitiveLineType,
    Point3,
    SceneEntity,
    SceneEntityDeletion,
    SceneEntityDeletionType,
    SceneUpdate,
    Timestamp,
)

from bb_robot.collision.objects import Shape, object_parts
from bb_robot.errors import BbRobotError
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.transforms import Matrix
from bb_robot.view.obstacles import add_part, entity, new_primitives

#: Run-time world objects: translucent blue, apart from the configured obstacles' orange.
OBJECT_COLOR = Color(r=0.2, g=0.5, b=0.95, a=0.6)
#: Attached objects: translucent green.
ATTACHED_COLOR = Color(r=0.2, g=0.8, b=0.3, a=0.7)
#: The planned path: opaque magenta, 5 mm thick.
PATH_COLOR, PATH_THICKNESS = Color(r=0.9, g=0.1, b=0.8, a=1.0), 0.005
#: The largest joint motion (rad, or m for a prismatic joint) between two drawn points of the path.
PATH_STEP = 0.02
#: Drawn points of one path at most (the steps grow past it).
MAX_PATH_POINTS = 20_000
#: The id of the path's entity.
PATH_ID = "planned_path"


class DrawingError(BbRobotError):
    """An object or a path that cannot be drawn (the message names it and why)."""


@dataclass(frozen=True)
class SceneObject:
    """A run-time object of a planning scene, as plain data.

    Attributes:
        name: its id.
        frame: the frame its pose is in (a robot link; ``""``: the root link).
        pose: its 4×4 pose in ``frame``.
        shapes: each shape and its pose in the object's frame.
        attached: attached to a link (``frame`` is then that link).
    """

    name: str
    frame: str
    pose: Matrix
    shapes: tuple[tuple[Shape, Matrix], ...]
    attached: bool = False


def _stamp(stamp_ns: int) -> Timestamp:
    return Timestamp(sec=stamp_ns // 1_000_000_000, nsec=stamp_ns % 1_000_000_000)


def _replacing(stamp_ns: int, entities: list[SceneEntity]) -> SceneUpdate:
    """An update that deletes every entity stamped before ``stamp_ns``, then adds ``entities``."""
    deletion = SceneEntityDeletion(timestamp=_stamp(stamp_ns), type=SceneEntityDeletionType.All)
    return SceneUpdate(deletions=[deletion], entities=entities)


def object_entity(thing: SceneObject, root: str, prefix: str, stamp_ns: int) -> SceneEntity:
    """One run-time object as a frame-locked entity (module docstring).

    Args:
        thing: the object.
        root: the robot's root link (the frame of ``""``).
        prefix: the description's frame prefix, put before the frame's name.
        stamp_ns: the entity's time stamp, nanoseconds.

    Returns:
        The entity, ``object/<name>`` or ``attached/<name>``.

    Raises:
        DrawingError: a shape the collision parts refuse (a degenerate mesh); names the object.
    """
    placed = [(shape, thing.pose @ local) for shape, local in thing.shapes]
    try:
        parts = object_parts(thing.name, placed)
    except (ValueError, BbRobotError) as error:
        raise DrawingError(f"object '{thing.name}': {error}") from None
    primitives = new_primitives()
    color = ATTACHED_COLOR if thing.attached else OBJECT_COLOR
    for part in parts:
        add_part(primitives, part, color)
    name = f"{'attached' if thing.attached else 'object'}/{thing.name}"
    return entity(name, prefix + (thing.frame or root), primitives, timestamp=_stamp(stamp_ns))


def objects_scene(
    objects: Sequence[SceneObject], root: str, prefix: str, stamp_ns: int
) -> tuple[SceneUpdate, list[str]]:
    """The run-time objects of a scene as one update replacing the previous one.

    Args:
        objects: the scene's objects.
        root: the robot's root link.
        prefix: the description's frame prefix.
        stamp_ns: the update's time stamp, nanoseconds.

    Returns:
        The update, and why each object left out could not be drawn.
    """
    entities, problems = [], []
    for thing in objects:
        try:
            entities.append(object_entity(thing, root, prefix, stamp_ns))
        except DrawingError as error:
            problems.append(str(error))
    return _replacing(stamp_ns, entities), problems


def tool_path(
    fk: ForwardKinematics,
    tip: str,
    start: Mapping[str, float],
    names: Sequence[str],
    points: Sequence[Sequence[float]],
) -> Matrix:
    """The tool's positions along a trajectory, in the root frame.

    Args:
        fk: the robot's kinematics.
        tip: the tool link.
        start: joint values where the trajectory starts (the joints it does not name keep them;
            joints the kinematics does not know are left out).
        names: the trajectory's joints.
        points: each point's positions, in ``names``' order.

    Returns:
        ``(n, 3)``: the tool at each point, and between two points where the joints move more than
        :data:`PATH_STEP` (straight in joint space), ``n`` at most about :data:`MAX_PATH_POINTS`.

    Raises:
        DrawingError: an unknown tip, a point whose length differs from ``names``', a non-finite value.
    """
    if tip not in fk.link_names:
        raise DrawingError(f"path: the robot has no link '{tip}' (the tool)")
    index = {name: i for i, name in enumerate(fk.joint_names)}
    base = np.zeros(len(fk.joint_names))
    for name, value in start.items():
        if name in index:
            base[index[name]] = float(value)
    columns = [(i, index[name]) for i, name in enumerate(names) if name in index]
    knots = np.repeat(base[None, :], len(points), axis=0)
    for row, point in enumerate(points):
        if len(point) != len(names):
            raise DrawingError(f"path: point {row} has {len(point)} positions for {len(names)} joints")
        for source, target in columns:
            knots[row, target] = float(point[source])
    if not np.isfinite(knots).all():
        raise DrawingError("path: a joint value is not finite")
    if len(knots) == 0:
        return np.zeros((0, 3))
    gaps = np.abs(np.diff(knots, axis=0)).max(axis=1) if len(knots) > 1 else np.zeros(0)
    step = max(PATH_STEP, float(gaps.sum()) / MAX_PATH_POINTS)
    samples = [knots[:1]]
    for k, gap in enumerate(gaps):
        count = max(int(np.ceil(gap / step)), 1)
        fractions = np.arange(1, count + 1)[:, None] / count
        samples.append(knots[k] + fractions * (knots[k + 1] - knots[k]))
    poses = fk.compute(np.concatenate(samples))
    return np.asarray(poses[:, fk.link_names.index(tip), :3, 3], dtype=float)


def path_scene(positions: Matrix, frame_id: str, stamp_ns: int) -> SceneUpdate:
    """The tool's path as a line strip replacing the previous path (none for no positions).

    Args:
        positions: ``(n, 3)`` tool positions in ``frame_id``.
        frame_id: the root link's frame (with the description's prefix).
        stamp_ns: the update's time stamp, nanoseconds.

    Returns:
        The update: entity :data:`PATH_ID`, frame-locked.
    """
    if len(positions) == 0:
        return _replacing(stamp_ns, [])
    line = LinePrimitive(
        type=LinePrimitiveLineType.LineStrip,
        thickness=PATH_THICKNESS,
        scale_invariant=False,
        points=[Point3(x=float(x), y=float(y), z=float(z)) for x, y, z in positions],
        color=PATH_COLOR,
    )
    path = SceneEntity(frame_id=frame_id, id=PATH_ID, frame_locked=True, timestamp=_stamp(stamp_ns), lines=[line])
    return _replacing(stamp_ns, [path])

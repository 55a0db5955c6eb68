"""MoveIt's scene updates (``CollisionObject``, ``AttachedCollisionObject``, ``PlanningScene``) on a :class:`Scene`.

The messages arrive as plain data: mappings with the messages' field names (the node layer
converts them), poses as ``{position: {x, y, z}, orientation: {x, y, z, w}}``.  What is applied,
as MoveIt applies it:

- ``CollisionObject.operation``: ADD (0; an object of that id added at run time is replaced),
  REMOVE (1; an empty id removes every run-time world object), APPEND (2; shapes added to an
  object, which is created when missing), MOVE (3; the object's pose only);
- shapes: ``primitives`` (BOX, SPHERE, CYLINDER, CONE) at ``primitive_poses`` and ``meshes``
  (vertices and triangles) at ``mesh_poses``, each placed at the object's ``pose`` in
  ``header.frame_id``: empty or the robot's root link, or any robot link (placed where the link
  is in the current state).  Planes, octomaps and subframes are refused, naming them;
- ``AttachedCollisionObject``: ADD with shapes attaches a new object to ``link_name`` (its pose in
  the header's frame); ADD without shapes attaches the run-time world object of that id where it
  is now; REMOVE puts it back into the world where it is now (an empty id: every attached object).

Every refusal is an :class:`UpdateRefused` with the ``MoveItErrorCodes`` value that names it and a
message naming the object and the field; the scene is then as before that object.  Configured
obstacles can be neither replaced, moved nor removed (:class:`~bb_robot.collision.scene.Scene`).
Floods are bounded: at most :data:`MAX_OBJECTS` run-time objects, :data:`MAX_SHAPES` shapes per
object and :data:`MAX_VERTICES` mesh vertices per object.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from bb_robot.collision.objects import Shape, TriangleMesh, pose_matrix, primitive
from bb_robot.collision.scene import Scene
from bb_robot.errors import BbRobotError
from bb_robot.model.transforms import Matrix
from bb_robot.planning.errors import PlanningError

#: ``moveit_msgs/MoveItErrorCodes`` values used here.
INVALID_OBJECT_NAME = -19
FRAME_TRANSFORM_FAILURE = -21
INVALID_LINK_NAME = -18
FAILURE = 99999
#: ``moveit_msgs/CollisionObject`` operations.
ADD, REMOVE, APPEND, MOVE = 0, 1, 2, 3
#: Run-time objects at most (world and attached together).
MAX_OBJECTS = 256
#: Shapes of one object at most.
MAX_SHAPES = 64
#: Mesh vertices of one object at most.
MAX_VERTICES = 200_000
#: ``shape_msgs/SolidPrimitive`` types.
PRIMITIVES = {1: "box", 2: "sphere", 3: "cylinder", 4: "cone"}

Data = Mapping[str, Any]
#: A link's pose in the root frame at the current state (``KeyError`` for an unknown link).
LinkPose = Callable[[str], Matrix]


class UpdateRefused(PlanningError):
    """A scene update that is not applied.

    Attributes:
        code: the ``MoveItErrorCodes`` value.
    """

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(message)


@dataclass
class ObjectRecord:
    """A run-time object as the scene holds it, to report it back (``get_planning_scene``).

    Attributes:
        shapes: each shape with its message form and its pose in the object's frame.
        pose: the object's pose in the root frame (or in ``link``'s frame while attached).
        link: the link it is attached to (``""``: the world).
        touch_links: the links it may touch while attached.
    """

    shapes: list[tuple[Shape, Data, Matrix]] = field(default_factory=list)
    pose: Matrix = field(default_factory=lambda: np.eye(4))
    link: str = ""
    touch_links: tuple[str, ...] = ()


def pose_of(data: Data | None, where: str) -> Matrix:
    """A ``geometry_msgs/Pose`` mapping as a 4×4 pose (a zero quaternion: identity, as MoveIt takes it).

    Raises:
        UpdateRefused: a non-finite number, naming ``where``.
    """
    if not data:
        return np.eye(4)
    p, o = data.get("position") or {}, data.get("orientation") or {}
    position = [float(p.get(k, 0.0)) for k in "xyz"]
    quaternion = [float(o.get(k, 0.0)) for k in "xyzw"]
    if not all(math.isfinite(v) for v in position + quaternion):
        raise UpdateRefused(FAILURE, f"{where}: the pose has a non-finite number {position + quaternion}")
    if not any(quaternion):
        quaternion = [0.0, 0.0, 0.0, 1.0]
    try:
        return pose_matrix(position, quaternion)
    except ValueError as error:
        raise UpdateRefused(FAILURE, f"{where}: {error}") from None


def frame_pose(frame: str, root: str, link_pose: LinkPose, where: str) -> Matrix:
    """The pose of ``frame`` in the root frame: identity for ``""`` and the root, else the link's.

    Raises:
        UpdateRefused: ``FRAME_TRANSFORM_FAILURE`` for a frame that is no robot link.
    """
    if frame in ("", root):
        return np.eye(4)
    try:
        return link_pose(frame)
    except KeyError:
        raise UpdateRefused(
            FRAME_TRANSFORM_FAILURE,
            f"{where}: frame '{frame}' is neither the planning frame '{root}' nor a link of the robot",
        ) from None


def _shape(kind: str, item: Data, where: str) -> tuple[Shape, int]:
    if kind == "primitive":
        number = item.get("type")
        name = PRIMITIVES.get(int(number)) if isinstance(number, int) else None
        if name is None:
            raise UpdateRefused(
                FAILURE, f"{where}.type: {number!r} is not BOX (1), SPHERE (2), CYLINDER (3) or CONE (4)"
            )
        try:
            return primitive(name, list(item.get("dimensions") or [])), 0
        except (TypeError, ValueError) as error:
            raise UpdateRefused(FAILURE, f"{where}: {error}") from None
    vertices = item.get("vertices") or []
    triangles = item.get("triangles") or []
    if not vertices or not triangles:
        raise UpdateRefused(FAILURE, f"{where}: a mesh needs vertices and triangles")
    if len(vertices) > MAX_VERTICES:
        raise UpdateRefused(FAILURE, f"{where}: {len(vertices)} vertices; at most {MAX_VERTICES} are taken")
    points = np.array([[float(v.get(k, 0.0)) for k in "xyz"] for v in vertices])
    indices = np.array([list(t.get("vertex_indices") or []) for t in triangles])
    if indices.ndim != 2 or indices.shape[1] != 3 or indices.min() < 0 or indices.max() >= len(points):
        raise UpdateRefused(FAILURE, f"{where}.triangles: need 3 vertex indices each, below {len(points)}")
    return TriangleMesh(points, indices.astype(np.int64)), len(points)


def object_shapes(data: Data, where: str) -> list[tuple[Shape, Data, Matrix]]:
    """The shapes of a ``CollisionObject`` mapping, each with its message form and pose in the object's frame.

    Raises:
        UpdateRefused: planes or subframes, unpaired poses, too many shapes or vertices, a bad shape.
    """
    for unsupported in ("planes", "subframe_names"):
        if data.get(unsupported):
            raise UpdateRefused(FAILURE, f"{where}.{unsupported}: not supported (use primitives or meshes)")
    shapes: list[tuple[Shape, Data, Matrix]] = []
    vertices = 0
    for kind, key, poses_key in (("primitive", "primitives", "primitive_poses"), ("mesh", "meshes", "mesh_poses")):
        items, poses = list(data.get(key) or []), list(data.get(poses_key) or [])
        if len(items) != len(poses):
            raise UpdateRefused(FAILURE, f"{where}: {len(items)} {key} but {len(poses)} {poses_key}")
        if len(shapes) + len(items) > MAX_SHAPES:
            raise UpdateRefused(FAILURE, f"{where}: more than {MAX_SHAPES} shapes in one object")
        for index, (item, pose) in enumerate(zip(items, poses, strict=True)):
            shape, count = _shape(kind, item, f"{where}.{key}[{index}]")
            vertices += count
            if vertices > MAX_VERTICES:
                raise UpdateRefused(FAILURE, f"{where}: more than {MAX_VERTICES} mesh vertices in one object")
            shapes.append((shape, {"kind": kind, **item}, pose_of(pose, f"{where}.{poses_key}[{index}]")))
    return shapes


class SceneUpdater:
    """Applies MoveIt's scene messages to a :class:`Scene` and keeps what it added, to report it.

    Args:
        scene: the scene changed.
        link_pose: a link's pose in the root frame at the current state.
        configuration: the current configuration (every coordinate), where attached objects are picked up.
    """

    def __init__(self, scene: Scene, link_pose: LinkPose, configuration: Callable[[], Matrix]) -> None:
        self.scene = scene
        self._link_pose = link_pose
        self._configuration = configuration
        self.records: dict[str, ObjectRecord] = {}

    @property
    def root(self) -> str:
        """The planning frame (the robot's root link)."""
        return self.scene.robot_model.robot.root_link

    def _add(self, name: str, record: ObjectRecord, where: str) -> None:
        if len(self.records) >= MAX_OBJECTS and name not in self.records:
            raise UpdateRefused(FAILURE, f"{where}: the scene holds {MAX_OBJECTS} run-time objects, the most it takes")
        old = self.records.get(name)
        if old is not None:
            self.scene.remove_object(name)
        try:
            self.scene.add_object(
                name,
                [(shape, local) for shape, _, local in record.shapes],
                record.pose,
                record.link,
                record.touch_links,
            )
        except BbRobotError as error:
            if old is not None:  # put the old one back: the scene is as before this object
                self.scene.add_object(name, [(s, m) for s, _, m in old.shapes], old.pose, old.link, old.touch_links)
            raise UpdateRefused(INVALID_OBJECT_NAME if "name" in str(error) else FAILURE, f"{where}: {error}") from None
        self.records[name] = record

    def collision_object(self, data: Data, where: str = "collision_object") -> None:
        """Apply one ``CollisionObject`` to the world (module docstring).

        Args:
            data: the message as a mapping.
            where: the field path, for messages.

        Raises:
            UpdateRefused: as the module docstring says; the scene is then unchanged.
        """
        name = str(data.get("id", ""))
        operation = _operation(data)
        where = f"{where} '{name}'"
        if operation == REMOVE:
            names = [name] if name else [n for n, r in self.records.items() if not r.link]
            for each in names:
                self._remove(each, where)
            return
        if not name or "/" in name:
            raise UpdateRefused(INVALID_OBJECT_NAME, f"{where}: id: needs a non-empty name without '/'")
        header = data.get("header") or {}
        frame = frame_pose(str(header.get("frame_id", "")), self.root, self._link_pose, f"{where}.header.frame_id")
        pose = frame @ pose_of(data.get("pose"), f"{where}.pose")
        if operation == MOVE:
            record = self._runtime(name, where)
            try:
                self.scene.move_object(name, pose)
            except BbRobotError as error:
                raise UpdateRefused(FAILURE, f"{where}: {error}") from None
            record.pose = pose
            return
        shapes = object_shapes(data, where)
        if operation == APPEND and name in self.records:
            old = self.records[name]
            relative = np.linalg.inv(old.pose) @ pose
            shapes = old.shapes + [(s, m, relative @ local) for s, m, local in shapes]
            self._add(name, ObjectRecord(shapes, old.pose, old.link, old.touch_links), where)
            return
        if not shapes:
            raise UpdateRefused(FAILURE, f"{where}: ADD needs at least one primitive or mesh")
        self._add(name, ObjectRecord(shapes, pose), where)

    def attached_object(self, data: Data, where: str = "attached_collision_object") -> None:
        """Apply one ``AttachedCollisionObject`` (module docstring).

        Raises:
            UpdateRefused: an unknown link or object, or as :meth:`collision_object`.
        """
        thing = data.get("object") or {}
        name = str(thing.get("id", ""))
        operation = _operation(thing)
        where = f"{where} '{name}'"
        if operation == REMOVE:
            names = [name] if name else [n for n, r in self.records.items() if r.link]
            for each in names:
                record = self._runtime(each, where)
                if not record.link:
                    continue  # MoveIt: removing an attached object that is not attached changes nothing
                self._place(each, record, "", (), self._link_pose(record.link) @ record.pose, where)
            return
        link = str(data.get("link_name", ""))
        if link not in self.scene.robot_model.robot.links:
            raise UpdateRefused(INVALID_LINK_NAME, f"{where}.link_name: the robot has no link '{link}'")
        touch = tuple(str(t) for t in data.get("touch_links") or ())
        unknown = [t for t in touch if t not in self.scene.robot_model.robot.links]
        if unknown:
            raise UpdateRefused(INVALID_LINK_NAME, f"{where}.touch_links: the robot has no link '{unknown[0]}'")
        has_shapes = bool(thing.get("primitives") or thing.get("meshes"))
        link_from_root = np.linalg.inv(self._link_pose(link))
        if not has_shapes:
            record = self._runtime(name, where)
            here = record.pose if not record.link else self._link_pose(record.link) @ record.pose
            self._place(name, record, link, touch, link_from_root @ here, where)
            return
        if not name or "/" in name:
            raise UpdateRefused(INVALID_OBJECT_NAME, f"{where}: id: needs a non-empty name without '/'")
        header = thing.get("header") or {}
        frame = frame_pose(
            str(header.get("frame_id", "") or link), self.root, self._link_pose, f"{where}.header.frame_id"
        )
        pose = link_from_root @ frame @ pose_of(thing.get("pose"), f"{where}.pose")
        self._add(name, ObjectRecord(object_shapes(thing, where), pose, link, touch), where)

    def _place(
        self, name: str, record: ObjectRecord, link: str, touch: Sequence[str], pose: Matrix, where: str
    ) -> None:
        # Attached or detached, the object keeps its allowed pairs (as in MoveIt, whose matrix names
        # objects): a cube allowed to rest on the table is lifted off it attached.
        kept = [pair for pair in self.scene.runtime_allowed if name in pair]
        self._add(name, ObjectRecord(record.shapes, pose, link, tuple(touch)), where)
        for a, b in kept:
            self.scene.allow(a, b)

    def _runtime(self, name: str, where: str) -> ObjectRecord:
        if name in self.records:
            return self.records[name]
        configured = f"world/{name}" in self.scene.configured_obstacles or any(
            o.startswith(f"world/{name}/") for o in self.scene.configured_obstacles
        )
        reason = "is part of the configured world and cannot be changed at run time" if configured else "does not exist"
        raise UpdateRefused(INVALID_OBJECT_NAME, f"{where}: object '{name}' {reason}")

    def _remove(self, name: str, where: str) -> None:
        self._runtime(name, where)
        self.scene.remove_object(name)
        del self.records[name]

    def clear(self) -> None:
        """Remove every run-time object (a full, not diff, ``PlanningScene``)."""
        for name in list(self.records):
            self._remove(name, "planning_scene")

    def allowed_matrix(self, data: Data, where: str = "allowed_collision_matrix") -> list[str]:
        """Apply an ``AllowedCollisionMatrix``'s entries that name a run-time object.

        Returns:
            Warnings for the entries left alone (pairs of links and configured obstacles, which
            cannot change at run time).
        """
        names = list(data.get("entry_names") or [])
        rows = list(data.get("entry_values") or [])
        left: list[str] = []
        for i, row in enumerate(rows[: len(names)]):
            for j, enabled in enumerate(list((row or {}).get("enabled") or [])[: len(names)]):
                a, b = names[i], names[j]
                if j <= i:
                    continue
                if a not in self.records and b not in self.records:
                    left.append(f"{a}/{b}")
                    continue
                try:
                    (self.scene.allow if enabled else self.scene.disallow)(a, b)
                except BbRobotError as error:
                    raise UpdateRefused(FAILURE, f"{where}: {error}") from None
        return (
            [
                f"{where}: pairs of links and configured obstacles cannot change at run time: "
                f"{len(left)} left as they are"
            ]
            if left
            else []
        )


def apply_planning_scene(updates: SceneUpdater, data: Data, refused: list[UpdateRefused] | None = None) -> list[str]:
    """Apply a ``PlanningScene``: a full one (``is_diff`` false) replaces every run-time object.

    What is applied: ``world.collision_objects``, ``robot_state.attached_collision_objects`` and the
    ``allowed_collision_matrix`` entries that name a run-time object, in that order.

    Args:
        updates: the scene's updater.
        data: the message as a mapping.
        refused: where refused objects go, each applied or refused on its own (the driver, following
            the move_group node's scene); ``None``: the first refusal is raised (a service's answer).

    Returns:
        Warnings: the matrix's entries left as they are (:meth:`SceneUpdater.allowed_matrix`).

    Raises:
        UpdateRefused: the first refused object or entry, when ``refused`` is ``None``.
    """
    if not data.get("is_diff"):
        updates.clear()
    warnings: list[str] = []
    world = data.get("world") or {}
    robot_state = data.get("robot_state") or {}
    steps: list[Callable[[], object]] = [
        *(
            partial(updates.collision_object, item, f"world.collision_objects[{index}]")
            for index, item in enumerate(world.get("collision_objects") or [])
        ),
        *(
            partial(updates.attached_object, item, f"robot_state.attached_collision_objects[{index}]")
            for index, item in enumerate(robot_state.get("attached_collision_objects") or [])
        ),
        lambda: warnings.extend(updates.allowed_matrix(data.get("allowed_collision_matrix") or {})),
    ]
    for step in steps:
        try:
            step()
        except UpdateRefused as error:
            if refused is None:
                raise
            refused.append(error)
    return warnings


def oversized(message: Any) -> str:
    """Why a ``PlanningScene`` is over the scene's bounds, counted on the message ("" when it is not).

    Read by attribute, before the message is turned into plain data (a flood costs no conversion):
    the driver and the view call it on the ROS message itself.

    Args:
        message: the ``moveit_msgs/PlanningScene`` (anything with its fields as attributes).

    Returns:
        The object and the bound it exceeds, or ``""``.
    """
    objects = list(message.world.collision_objects) + [a.object for a in message.robot_state.attached_collision_objects]
    if len(objects) > MAX_OBJECTS:
        return f"{len(objects)} objects; the scene takes at most {MAX_OBJECTS}"
    for thing in objects:
        shapes = len(thing.primitives) + len(thing.meshes)
        if shapes > MAX_SHAPES:
            return f"object '{thing.id}': {shapes} shapes; at most {MAX_SHAPES} per object"
        vertices = sum(len(mesh.vertices) for mesh in thing.meshes)
        if vertices > MAX_VERTICES:
            return f"object '{thing.id}': {vertices} mesh vertices; at most {MAX_VERTICES} per object"
    return ""


def _operation(data: Data) -> int:
    value = data.get("operation", ADD)
    if isinstance(value, bytes | bytearray):
        value = value[0] if value else ADD
    number = int(value)
    if number not in (ADD, REMOVE, APPEND, MOVE):
        raise UpdateRefused(FAILURE, f"operation {number}: not ADD (0), REMOVE (1), APPEND (2) or MOVE (3)")
    return number

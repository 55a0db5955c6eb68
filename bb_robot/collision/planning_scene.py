"""MoveIt PlanningScene YAML as obstacles and allowed-collision entries.

The file is a ``moveit_msgs/PlanningScene`` written as YAML (``ros2 topic echo``, MoveIt's
``PlanningScene`` export, MotionBenchMaker's ``sceneNNNN.yaml``).  What is read:

- ``world.collision_objects``: each object's ``pose`` (optional: identity), its ``primitives``
  (``type`` BOX, SPHERE, CYLINDER, CONE, by name in any case or by number 1-4; ``dimensions`` in
  MoveIt's order) at their ``primitive_poses``, and its ``meshes`` (``vertices``, ``triangles``)
  at their ``mesh_poses``; each shape is placed at the object's pose times its own.  Poses come
  in message form (``position: {x, y, z}``, ``orientation: {x, y, z, w}``) or as MotionBenchMaker
  writes them (``position: [x, y, z]``, ``orientation: [x, y, z, w]``).  An object's
  ``header.frame_id`` is empty or the robot's root link (the planning frame), a frame of
  ``fixed_frame_transforms``, or ``world`` (the world frame of ``collision.world``);
- ``allowed_collision_matrix``: ``entry_names`` with ``entry_values`` (rows of booleans, or of
  ``{enabled: [...]}``), and ``default_entry_names`` / ``default_entry_values``.  Each allowed
  pair is returned as names: robot links as they are, objects as ``world/<id>``.  A name that is
  neither is ignored with a warning.  The robot-robot pairs are verified later, by the scene
  (:mod:`bb_robot.collision.scene`).

Not read: ``robot_state`` (the start state is the request's), colours, padding.  Attached objects
in ``robot_state`` and octomaps are refused (attach objects at run time instead).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bb_robot.collision.errors import WorldError
from bb_robot.collision.model import LinkPair, link_pair
from bb_robot.collision.objects import WORLD_PREFIX, Shape, TriangleMesh, object_parts, pose_matrix, primitive
from bb_robot.collision.shapes import Part
from bb_robot.errors import BbRobotError
from bb_robot.model.transforms import Matrix

#: ``shape_msgs/SolidPrimitive`` type numbers.
PRIMITIVE_TYPES = {1: "box", 2: "sphere", 3: "cylinder", 4: "cone"}


@dataclass(frozen=True)
class SceneContents:
    """What a scene file adds to the world.

    Attributes:
        parts: the obstacles, in the robot's root frame.
        allowed: allowed pairs named by the file (robot links, ``world/<id>`` objects), sorted.
        warnings: entries ignored, each naming the file and the entry.
    """

    parts: tuple[Part, ...]
    allowed: tuple[LinkPair, ...] = ()
    warnings: tuple[str, ...] = ()


def is_planning_scene(data: Mapping[str, Any]) -> bool:
    """Whether parsed YAML is a PlanningScene (it has ``world`` or ``allowed_collision_matrix``)."""
    return "world" in data or "allowed_collision_matrix" in data


def _vector(value: object, keys: str, where: str) -> list[float]:
    if isinstance(value, Mapping):
        missing = [k for k in keys if k not in value]
        if missing:
            raise ValueError(f"{where}: needs {', '.join(keys)} (missing {', '.join(missing)})")
        value = [value[k] for k in keys]
    if not isinstance(value, list | tuple) or len(value) != len(keys):
        raise ValueError(f"{where}: needs {len(keys)} numbers ({', '.join(keys)}), got {value!r}")
    try:
        numbers = [float(v) for v in value]
    except (TypeError, ValueError):
        raise ValueError(f"{where}: needs numbers, got {value!r}") from None
    if not all(math.isfinite(v) for v in numbers):
        raise ValueError(f"{where}: needs finite numbers, got {value!r}")
    return numbers


def read_pose(value: object, where: str) -> Matrix:
    """A ``geometry_msgs/Pose`` in message or list form as a 4×4 pose.

    Args:
        value: ``{position, orientation}``, each a mapping or a list (missing: origin, identity).
        where: the field's path, for messages.

    Returns:
        The pose.

    Raises:
        ValueError: a malformed or non-finite pose, naming ``where`` and the field.
    """
    if value is None:
        return np.eye(4)
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: needs position and orientation, got {value!r}")
    position = _vector(value.get("position", [0.0, 0.0, 0.0]), "xyz", f"{where}.position")
    orientation = _vector(value.get("orientation", [0.0, 0.0, 0.0, 1.0]), "xyzw", f"{where}.orientation")
    try:
        return pose_matrix(position, orientation)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _frames(data: Mapping[str, Any]) -> dict[str, Matrix]:
    frames: dict[str, Matrix] = {}
    for index, entry in enumerate(data.get("fixed_frame_transforms") or []):
        where = f"fixed_frame_transforms[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("child_frame_id"), str):
            raise ValueError(f"{where}: needs child_frame_id and transform")
        transform = entry.get("transform") or {}
        if not isinstance(transform, Mapping):
            raise ValueError(f"{where}.transform: needs translation and rotation")
        pose = {"position": transform.get("translation"), "orientation": transform.get("rotation")}
        frames[entry["child_frame_id"]] = read_pose({k: v for k, v in pose.items() if v is not None}, where)
    return frames


def _paired(entry: Mapping[str, Any], key: str, poses_key: str, where: str) -> list[tuple[str, object, Matrix]]:
    """Each item of ``entry[key]`` with its field path and its pose from ``entry[poses_key]``."""
    items = entry.get(key) or []
    poses = entry.get(poses_key) or []
    if len(poses) != len(items):
        raise ValueError(f"{where}: {len(items)} {key} but {len(poses)} {poses_key}")
    return [
        (f"{where}.{key}[{i}]", item, read_pose(pose, f"{where}.{poses_key}[{i}]"))
        for i, (item, pose) in enumerate(zip(items, poses, strict=True))
    ]


def _primitive(item: object, field: str) -> Shape:
    if not isinstance(item, Mapping):
        raise ValueError(f"{field}: needs type and dimensions, got {item!r}")
    kind = item.get("type")
    kind = PRIMITIVE_TYPES.get(kind, str(kind)) if isinstance(kind, int) else str(kind)
    dimensions = item.get("dimensions")
    if not isinstance(dimensions, list | tuple):
        raise ValueError(f"{field}.dimensions: needs a list of numbers, got {dimensions!r}")
    try:
        return primitive(kind, dimensions)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{field}: {error}") from None


def _mesh(mesh: object, field: str) -> Shape:
    if not isinstance(mesh, Mapping):
        raise ValueError(f"{field}: needs vertices and triangles")
    vertices = [_vector(v, "xyz", f"{field}.vertices[{i}]") for i, v in enumerate(mesh.get("vertices") or [])]
    triangles = []
    for i, triangle in enumerate(mesh.get("triangles") or []):
        indices = triangle.get("vertex_indices") if isinstance(triangle, Mapping) else triangle
        if not isinstance(indices, list | tuple) or len(indices) != 3 or not all(isinstance(k, int) for k in indices):
            raise ValueError(f"{field}.triangles[{i}]: needs 3 vertex indices, got {triangle!r}")
        triangles.append(list(indices))
    return TriangleMesh(np.array(vertices), np.array(triangles))


def _shapes(entry: Mapping[str, Any], where: str) -> list[tuple[Shape, Matrix]]:
    shapes = [
        (_primitive(item, field), pose) for field, item, pose in _paired(entry, "primitives", "primitive_poses", where)
    ]
    return shapes + [(_mesh(item, field), pose) for field, item, pose in _paired(entry, "meshes", "mesh_poses", where)]


def _object(entry: object, where: str, frames: Mapping[str, Matrix], source: str) -> tuple[str, tuple[Part, ...]]:
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: needs a mapping, got {entry!r}")
    name = entry.get("id")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.id: needs a non-empty name, got {name!r}")
    where = f"{where} '{name}'"
    operation = entry.get("operation", 0)
    if operation not in (0, "ADD", "add", b"\x00"):
        raise ValueError(f"{where}.operation: only ADD (0) is read from a scene file, got {operation!r}")
    header = entry.get("header") or {}
    frame = header.get("frame_id", "") if isinstance(header, Mapping) else ""
    if frame not in frames:
        raise ValueError(f"{where}.header.frame_id: unknown frame '{frame}' (known: {', '.join(sorted(frames))})")
    shapes = _shapes(entry, where)
    if not shapes:
        raise ValueError(f"{where}: has no primitives and no meshes")
    pose = frames[frame] @ read_pose(entry.get("pose"), f"{where}.pose")
    link = f"{WORLD_PREFIX}{name}"
    try:
        parts = object_parts(link, [(shape, pose @ local) for shape, local in shapes], source)
    except (BbRobotError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from None
    return name, parts


def _allowed(
    matrix: object, objects: Collection[str], links: Collection[str], source: str
) -> tuple[set[LinkPair], list[str]]:
    if not matrix:
        return set(), []
    if not isinstance(matrix, Mapping):
        raise ValueError("allowed_collision_matrix: needs entry_names and entry_values")
    warnings: list[str] = []

    def named(name: object, where: str) -> str | None:
        if name in links:
            return str(name)
        if name in objects:
            return f"{WORLD_PREFIX}{name}"
        warnings.append(
            f"{source}: {where} names '{name}', neither a link of the robot nor an object of the scene: ignored"
        )
        return None

    names = list(matrix.get("entry_names") or [])
    rows = list(matrix.get("entry_values") or [])
    if len(rows) != len(names):
        raise ValueError(f"allowed_collision_matrix: {len(names)} entry_names but {len(rows)} entry_values")
    resolved = [named(n, f"allowed_collision_matrix.entry_names[{i}]") for i, n in enumerate(names)]
    allowed: set[LinkPair] = set()
    for i, row in enumerate(rows):
        values = row.get("enabled") if isinstance(row, Mapping) else row
        if (
            not isinstance(values, list | tuple)
            or len(values) != len(names)
            or not all(isinstance(v, bool) for v in values)
        ):
            raise ValueError(f"allowed_collision_matrix.entry_values[{i}]: needs {len(names)} booleans, got {row!r}")
        for j, value in enumerate(values):
            a, b = resolved[i], resolved[j]
            if value and i != j and a is not None and b is not None:
                allowed.add(link_pair(a, b))
    defaults = list(matrix.get("default_entry_names") or [])
    default_values = list(matrix.get("default_entry_values") or [])
    if len(defaults) != len(default_values):
        raise ValueError("allowed_collision_matrix: default_entry_names and default_entry_values differ in length")
    everyone = list(links) + [f"{WORLD_PREFIX}{o}" for o in objects]
    for i, (name, value) in enumerate(zip(defaults, default_values, strict=True)):
        if value is True and (a := named(name, f"allowed_collision_matrix.default_entry_names[{i}]")) is not None:
            allowed.update(link_pair(a, b) for b in everyone if b != a)
    return allowed, warnings


def planning_scene_obstacles(
    source: str, data: Mapping[str, Any], root_link: str, links: Collection[str], to_root: Matrix
) -> SceneContents:
    """The obstacles and allowed pairs of a PlanningScene (see the module docstring).

    Args:
        source: the file (messages name it).
        data: its parsed YAML.
        root_link: the robot's root link (the planning frame).
        links: the robot's links (names the matrix may use).
        to_root: the ``world`` frame → the robot's root frame.

    Returns:
        The obstacles, the allowed pairs and the warnings.

    Raises:
        WorldError: a malformed entry, naming the file, the object and the field.
    """
    try:
        frames = {"": np.eye(4), root_link: np.eye(4), "world": to_root}
        frames.update(_frames(data))
        world = data.get("world") or {}
        if not isinstance(world, Mapping):
            raise ValueError(f"world: needs collision_objects, got {world!r}")
        octomap = (world.get("octomap") or {}).get("octomap") or {}
        if isinstance(octomap, Mapping) and octomap.get("data"):
            raise ValueError("world.octomap: octomaps are not read; give the obstacles as collision_objects")
        state = data.get("robot_state") or {}
        if isinstance(state, Mapping) and state.get("attached_collision_objects"):
            raise ValueError("robot_state.attached_collision_objects: not read from a file; attach objects at run time")
        entries = world.get("collision_objects") or []
        if not isinstance(entries, list):
            raise ValueError("world.collision_objects: needs a list")
        parts: list[Part] = []
        objects: list[str] = []
        for index, entry in enumerate(entries):
            name, object_parts_ = _object(entry, f"world.collision_objects[{index}]", frames, source)
            if name in objects:
                raise ValueError(f"world.collision_objects[{index}]: a second object '{name}'")
            objects.append(name)
            parts.extend(object_parts_)
        allowed, warnings = _allowed(data.get("allowed_collision_matrix"), objects, links, source)
    except ValueError as error:
        raise WorldError(source, str(error)) from None
    return SceneContents(tuple(parts), tuple(sorted(allowed)), tuple(warnings))

"""Static obstacles around the robot: the other models of an SDF world, a YAML list, a floor.

``collision.world`` names one file, read by :func:`load_world`:

- an SDF world (``.sdf`` / ``.world``, or any file whose root is ``<sdf>``): every top-level model
  other than the robot's is an obstacle, each link's ``<collision>`` geometry placed at the
  model's pose with its joints at 0 (a table, walls, a fixed second robot);
- a YAML file::

      floor: 0.0                 # optional: the half-space below this height (world z) is solid
      sdf: table_world.sdf       # optional: the obstacles of an SDF world, relative to this file
      robot_model: bb_arm        # optional: the robot's model in it (default: the one the robot came from)
      obstacles:                 # optional: shapes
        - name: post
          frame: world           # 'world', or the robot's root link
          xyz: [0.5, 0.0, 0.3]   # optional, metres
          rpy: [0.0, 0.0, 0.0]   # optional, radians
          box: [0.1, 0.1, 0.6]   # or cylinder: {radius, length}, sphere: {radius}, mesh: {filename, scale}
          mass: 0.1              # optional, kg: a movable object (a free body in MuJoCo); else static
          friction: 1.0          # optional: its sliding friction coefficient (physics)

- a MoveIt PlanningScene YAML (a mapping with ``world`` or ``allowed_collision_matrix``):
  its collision objects and allowed pairs (:mod:`bb_robot.collision.planning_scene`);
- a MoveIt ``.scene`` text file (:mod:`bb_robot.collision.scene_text`).

The file is a path or a URI (``package://bb_robot/models/bb_arm_table.yaml``, ``model://``,
``file://``), found as a mesh is (:func:`world_path`), so that a shipped parameter file can name a
shipped world.

Besides the collision parts, the world keeps its objects as physics takes them
(:class:`~bb_robot.mjcf.bodies.SceneBody`, ``World.bodies``): a YAML obstacle with a ``mass`` and an
SDF model that is not ``<static>``, with one link of positive ``<inertial><mass>`` (friction from
its ``<surface><friction><ode><mu>``), are movable; the rest are static.

Everything is expressed in the robot's root-link frame: the world frame is where the robot's
root link stands (``placement``: the root's pose in the world, from the SDF world the robot was
loaded from, else identity).  Obstacles become :class:`~bb_robot.collision.shapes.Part` values
whose ``link`` is ``world/<model>/<link>`` (``world/<name>`` for YAML shapes, ``world/floor``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bb_robot.collision.errors import WorldError
from bb_robot.collision.matrix import default_configuration
from bb_robot.collision.model import CollisionModel, LinkPair
from bb_robot.collision.objects import WORLD_PREFIX, placed
from bb_robot.collision.planning_scene import is_planning_scene, planning_scene_obstacles
from bb_robot.collision.scene_text import scene_text_obstacles
from bb_robot.collision.shapes import Part, coal_module, robot_parts
from bb_robot.errors import BbRobotError
from bb_robot.loading import LoadedModel, load_file
from bb_robot.loading.formats import detect_format
from bb_robot.mjcf.bodies import SceneBody
from bb_robot.mjcf.meshes import default_resolver
from bb_robot.model.geometry import Box, Collision, Cylinder, Geometry, Mesh, Origin, Sphere
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Link, Robot
from bb_robot.model.transforms import Matrix, matrix_to_rpy, origin_to_matrix
from bb_robot.sdf.document import read_document
from bb_robot.sdf.elements import SdfModel


@dataclass(frozen=True)
class World:
    """The obstacles of ``collision.world``, in the robot's root-link frame.

    Attributes:
        source: the file read (``""`` for none).
        parts: the obstacles.
        floor: the floor's height in the world frame, or ``None``.
        allowed: pairs a MoveIt scene's allowed-collision matrix allows (robot links and
            ``world/<id>`` obstacles; the robot-robot ones still to be verified), sorted.
        warnings: entries of the file that were ignored, each naming the file and the entry.
        bodies: the objects of a YAML list or an SDF world as physics needs them (shapes, pose,
            mass and friction; :class:`~bb_robot.mjcf.bodies.SceneBody`).
    """

    source: str
    parts: tuple[Part, ...]
    floor: float | None = None
    allowed: tuple[LinkPair, ...] = ()
    warnings: tuple[str, ...] = ()
    bodies: tuple[SceneBody, ...] = ()


def _origin(pose: Matrix) -> Origin:
    x, y, z = (float(v) for v in pose[:3, 3])
    return Origin((x, y, z), matrix_to_rpy(pose[:3, :3]))


def sdf_bodies(
    path: str | os.PathLike[str],
    robot_model: str,
    to_root: Matrix,
    resource_paths: Sequence[str] = (),
) -> tuple[SceneBody, ...]:
    """The objects of an SDF world: every top-level model except ``robot_model``, in the robot's root frame.

    A model that is not ``<static>``, with one link whose ``<inertial><mass>`` is positive and whose
    collisions are boxes, cylinders and spheres, is one movable object named as the model, with that
    mass and the first ``<surface><friction><ode><mu>`` of its collisions; every other model is
    static, an object per link named ``<model>/<link>`` (the model's name alone when it has one link).

    Args:
        path: the world file; ``robot_model``, ``to_root`` and ``resource_paths`` as for
            :func:`sdf_obstacles`.
        robot_model: see ``path``.
        to_root: see ``path``.
        resource_paths: see ``path``.

    Returns:
        The objects, each link's collision shapes at their poses with the model's joints at 0.

    Raises:
        WorldError: the file cannot be loaded, or a model of it (naming the model).
    """
    name = os.fspath(path)
    bodies: list[SceneBody] = []
    for model, other, poses in _sdf_models(name, robot_model, to_root, resource_paths):
        links = [link for link in other.robot.links.values() if link.collisions]
        sdf_links = {link.name: link for link in model.links}
        for link in links:
            shapes = tuple((c.geometry, origin_to_matrix(c.origin)) for c in link.collisions if c.geometry is not None)
            pose = poses[link.name]
            sdf_link = sdf_links.get(link.name)
            mass = sdf_link.inertial.mass if sdf_link is not None and sdf_link.inertial is not None else 0.0
            primitives = all(isinstance(geometry, Box | Cylinder | Sphere) for geometry, _ in shapes)
            if not model.static and len(links) == 1 and len(model.links) == 1 and mass > 0 and primitives:
                frictions = [c.friction for c in sdf_link.collisions if c.friction is not None] if sdf_link else []
                bodies.append(SceneBody(model.name, shapes, pose, mass, frictions[0] if frictions else None, name))
            else:
                label = model.name if len(links) == 1 else f"{model.name}/{link.name}"
                bodies.append(SceneBody(label, shapes, pose, None, None, name))
    return tuple(bodies)


def sdf_obstacles(
    path: str | os.PathLike[str],
    robot_model: str,
    to_root: Matrix,
    resource_paths: Sequence[str] = (),
) -> tuple[Part, ...]:
    """The collision geometry of every top-level model of an SDF world except ``robot_model``.

    Args:
        path: the world file.
        robot_model: the robot's top-level model name (its nested models are the robot too).
        to_root: world frame → robot root-link frame.
        resource_paths: directories for includes and meshes.

    Returns:
        The obstacles' parts, in the robot's root frame.

    Raises:
        WorldError: the file cannot be loaded, or a model of it (naming the model).
        MeshUnreadable: an obstacle's mesh cannot be read.
    """
    name = os.fspath(path)
    parts: list[Part] = []
    for model, other, poses in _sdf_models(name, robot_model, to_root, resource_paths):
        for part in robot_parts(other.robot, name, resource_paths):
            parts.append(placed(part, poses[part.link], f"{WORLD_PREFIX}{model.name}/{part.link}"))
    return tuple(parts)


def _sdf_models(
    name: str, robot_model: str, to_root: Matrix, resource_paths: Sequence[str]
) -> list[tuple[SdfModel, LoadedModel, dict[str, Matrix]]]:
    """Each top-level model of an SDF world but the robot's, loaded, with its links' poses in the root frame."""
    try:
        models = list(read_document(name, resource_paths=list(resource_paths)).top_models)
    except BbRobotError as error:
        raise WorldError(name, f"cannot read the world: {error}") from None
    loaded: list[tuple[SdfModel, LoadedModel, dict[str, Matrix]]] = []
    for model in models:
        if model.name == robot_model:
            continue
        try:
            other = load_file(name, scope=model.name, resource_paths=list(resource_paths))
        except BbRobotError as error:
            raise WorldError(name, f"model '{model.name}' cannot be used as an obstacle: {error}") from None
        placement = other.placement.pose if other.placement is not None else np.eye(4)
        poses = ForwardKinematics(other.robot).poses()
        loaded.append((model, other, {link: to_root @ placement @ pose for link, pose in poses.items()}))
    return loaded


def _floor(height: float, to_root: Matrix) -> Part:
    coal = coal_module()
    normal = to_root[:3, :3] @ np.array([0.0, 0.0, 1.0])
    offset = float(normal @ (to_root[:3, :3] @ np.array([0.0, 0.0, height]) + to_root[:3, 3]))
    solid = coal.Halfspace(normal, offset)
    return Part(
        link=f"{WORLD_PREFIX}floor",
        label=f"{WORLD_PREFIX}floor",
        local=np.eye(4),
        hull=solid,
        exact=solid,
        center=np.zeros(3),
        radius=math.inf,
        points=np.zeros((0, 3)),
    )


def _number_list(source: str, where: str, value: object, count: int) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != count:
        raise WorldError(source, f"{where}: needs a list of {count} numbers, got {value!r}")
    try:
        numbers = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise WorldError(source, f"{where}: needs a list of {count} numbers, got {value!r}") from None
    if not all(math.isfinite(v) for v in numbers):
        raise WorldError(source, f"{where}: needs finite numbers, got {value!r}")
    return numbers


def _positive(source: str, where: str, entry: Mapping[str, Any], key: str) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 or not math.isfinite(value):
        raise WorldError(source, f"{where}: '{key}' must be a positive number, got {value!r}")
    return float(value)


def _shape(source: str, where: str, entry: Mapping[str, Any]) -> Geometry:
    kinds = [k for k in ("box", "cylinder", "sphere", "mesh") if k in entry]
    if len(kinds) != 1:
        raise WorldError(source, f"{where}: needs exactly one of box, cylinder, sphere, mesh (has {kinds or 'none'})")
    kind = kinds[0]
    value = entry[kind]
    if kind == "box":
        size = _number_list(source, f"{where}.box", value, 3)
        if not all(s > 0 for s in size):
            raise WorldError(source, f"{where}.box: sizes must be positive, got {value!r}")
        return Box((size[0], size[1], size[2]))
    if not isinstance(value, dict):
        raise WorldError(source, f"{where}.{kind}: needs a mapping, got {value!r}")
    if kind == "cylinder":
        radius = _positive(source, f"{where}.cylinder", value, "radius")
        return Cylinder(radius, _positive(source, f"{where}.cylinder", value, "length"))
    if kind == "sphere":
        return Sphere(_positive(source, f"{where}.sphere", value, "radius"))
    filename = value.get("filename")
    if not isinstance(filename, str) or not filename:
        raise WorldError(source, f"{where}.mesh: needs 'filename'")
    scale = _positive(source, f"{where}.mesh", value, "scale") if "scale" in value else 1.0
    return Mesh(filename, scale)


def _yaml_amount(source: str, where: str, entry: Mapping[str, Any], key: str) -> float | None:
    return _positive(source, where, entry, key) if key in entry else None


def yaml_bodies(source: str, entries: object, root_link: str, to_root: Matrix) -> tuple[SceneBody, ...]:
    """The objects of a YAML ``obstacles`` list (see the module docstring), in the robot's root frame.

    Args:
        source: the YAML file (mesh paths are relative to it; messages name it).
        entries: the parsed list.
        root_link: the robot's root link (a frame an obstacle may be given in, besides ``world``).
        to_root: world frame → robot root-link frame.

    Returns:
        One object per entry: its shape, pose, and ``mass`` / ``friction`` where given (an entry
        with a mass is a free body in physics; without, static).

    Raises:
        WorldError: a malformed entry, naming its index and key.
    """
    if not isinstance(entries, list):
        raise WorldError(source, f"'obstacles' must be a list, got {type(entries).__name__}")
    bodies: list[SceneBody] = []
    for index, entry in enumerate(entries):
        where = f"obstacles[{index}]"
        if not isinstance(entry, dict):
            raise WorldError(source, f"{where}: needs a mapping, got {entry!r}")
        name = entry.get("name", f"obstacle_{index}")
        if not isinstance(name, str) or not name or any(body.name == name for body in bodies):
            raise WorldError(source, f"{where}: 'name' must be a unique non-empty string, got {name!r}")
        frame = entry.get("frame", "world")
        if frame not in ("world", root_link):
            raise WorldError(source, f"{where}: frame '{frame}' is not 'world' or the robot's root link '{root_link}'")
        xyz = _number_list(source, f"{where}.xyz", entry.get("xyz", [0.0, 0.0, 0.0]), 3)
        rpy = _number_list(source, f"{where}.rpy", entry.get("rpy", [0.0, 0.0, 0.0]), 3)
        geometry = _shape(source, where, entry)
        mass, friction = _yaml_amount(source, where, entry, "mass"), _yaml_amount(source, where, entry, "friction")
        if mass is not None and isinstance(geometry, Mesh):
            raise WorldError(
                source,
                f"{where}: a mesh cannot have a mass (its inertia is not known here); use a box, "
                "cylinder or sphere, or leave 'mass' out (static)",
            )
        pose = origin_to_matrix(Origin((xyz[0], xyz[1], xyz[2]), (rpy[0], rpy[1], rpy[2])))
        placement = (to_root if frame == "world" else np.eye(4)) @ pose
        bodies.append(SceneBody(name, ((geometry, np.eye(4)),), placement, mass, friction, source))
    return tuple(bodies)


def body_parts(bodies: Sequence[SceneBody], source: str) -> tuple[Part, ...]:
    """The collision parts of objects, each ``world/<name>``, where the objects are.

    Args:
        bodies: the objects.
        source: the file they come from (messages, relative meshes).

    Returns:
        The parts, in the robot's root frame.

    Raises:
        MeshUnreadable: a mesh that cannot be read.
    """
    parts: list[Part] = []
    for body in bodies:
        collisions = tuple(
            Collision(name=None, origin=_origin(local), geometry=geometry) for geometry, local in body.shapes
        )
        holder = Robot.assemble("obstacles", [Link(name=body.name, collisions=collisions)], [])
        for part in robot_parts(holder, source):
            parts.append(placed(part, body.pose, f"{WORLD_PREFIX}{body.name}"))
    return tuple(parts)


def fixed_parts(parts: Sequence[Part], bodies: Sequence[SceneBody]) -> tuple[Part, ...]:
    """The parts of the static objects: a movable one (with a mass) is no configured obstacle.

    The planning scene learns a movable object at run time (a client adds it where it is, at its
    ``object/<name>`` frame), so that it can be allowed to touch the hand, attached and detached.

    Args:
        parts: every object's collision parts (``world/<name>`` or ``world/<model>/<link>``).
        bodies: the objects.

    Returns:
        The parts of the objects without a mass.
    """
    movable = {body.name for body in bodies if body.movable}
    return tuple(part for part in parts if part.link.split("/")[1] not in movable)


def yaml_obstacles(source: str, entries: object, root_link: str, to_root: Matrix) -> tuple[Part, ...]:
    """The collision parts of every entry of a YAML ``obstacles`` list (:func:`yaml_bodies`, same arguments).

    Returns:
        The parts, in the robot's root frame (movable objects too: :func:`fixed_parts` leaves them out).

    Raises:
        WorldError: a malformed entry, naming its index and key.
        MeshUnreadable: a mesh that cannot be read.
    """
    return body_parts(yaml_bodies(source, entries, root_link, to_root), source)


def world_path(path: str, resource_paths: Sequence[str] = ()) -> str:
    """The file ``collision.world`` names: a path as it is, a URI resolved as a mesh's is.

    Args:
        path: a path, or a ``package://``, ``model://`` or ``file://`` URI.
        resource_paths: more directories searched for ``model://`` and relative URIs.

    Returns:
        The path of the file (a path given as a path is returned unchanged, existing or not).

    Raises:
        WorldError: a URI that names no file here (naming the URI and what to do).
    """
    if "://" not in path:
        return path
    found = default_resolver(None, resource_paths)(path, "")
    if found is None:
        raise WorldError(
            path,
            "no such file: a package:// URI needs the package installed (its share directory in "
            "AMENT_PREFIX_PATH), a model:// URI its directory in model_dirs or GZ_SIM_RESOURCE_PATH",
        )
    return str(found)


def load_world(
    path: str,
    robot: Robot,
    placement: Matrix | None = None,
    robot_model: str = "",
    resource_paths: Sequence[str] = (),
) -> World:
    """Read ``collision.world`` (see the module docstring), chosen by the suffix and content.

    Args:
        path: the SDF world or YAML file, a path or a URI (:func:`world_path`); ``""`` for none.
        robot: the robot (its root link names the root frame).
        placement: the robot root link's pose in the world (identity when ``None``).
        robot_model: SDF: the robot's top-level model name in the world (default: the robot's name).
        resource_paths: SDF includes and meshes.

    Returns:
        The obstacles.

    Raises:
        WorldError: a file that cannot be read or used, naming the file and the entry.
        MeshUnreadable: a mesh that cannot be read.
    """
    if not path:
        return World("", ())
    path = world_path(path, resource_paths)
    to_root: Matrix = np.asarray(np.linalg.inv(placement), dtype=float) if placement is not None else np.eye(4)
    if Path(path).suffix.lower() == ".scene":
        return World(path, scene_text_obstacles(path, to_root))
    if Path(path).suffix.lower() not in (".yaml", ".yml"):
        try:
            fmt = detect_format(path)
        except BbRobotError as error:
            raise WorldError(path, str(error)) from None
        if fmt != "sdf":
            raise WorldError(path, f"a collision world is an SDF world or a .yaml file, not {fmt.upper()}")
        model = robot_model or robot.name
        objects = sdf_bodies(path, model, to_root, resource_paths)
        return World(path, fixed_parts(sdf_obstacles(path, model, to_root, resource_paths), objects), bodies=objects)
    import yaml  # type: ignore[import-untyped]

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise WorldError(path, f"cannot read: {error}") from None
    if not isinstance(data, dict):
        raise WorldError(path, "a collision world is a mapping (floor, sdf, robot_model, obstacles)")
    if is_planning_scene(data):
        scene = planning_scene_obstacles(path, data, robot.root_link, tuple(robot.links), to_root)
        return World(path, scene.parts, None, scene.allowed, scene.warnings)
    unknown = sorted(set(data) - {"floor", "sdf", "robot_model", "obstacles"})
    if unknown:
        raise WorldError(path, f"unknown keys {unknown}; expected floor, sdf, robot_model, obstacles")
    parts: list[Part] = []
    bodies: list[SceneBody] = []
    if data.get("sdf"):
        world_file = Path(path).parent / str(data["sdf"])
        model = str(data.get("robot_model") or robot_model or robot.name)
        parts.extend(sdf_obstacles(world_file, model, to_root, resource_paths))
        bodies.extend(sdf_bodies(world_file, model, to_root, resource_paths))
    if "obstacles" in data:
        listed = yaml_bodies(path, data["obstacles"], robot.root_link, to_root)
        parts.extend(body_parts(listed, path))
        bodies.extend(listed)
    floor = data.get("floor")
    if floor is not None:
        if isinstance(floor, bool) or not isinstance(floor, int | float) or not math.isfinite(floor):
            raise WorldError(path, f"'floor' must be a height in metres, got {floor!r}")
        parts.append(_floor(float(floor), to_root))
    return World(path, fixed_parts(parts, bodies), None if floor is None else float(floor), bodies=tuple(bodies))


def model_world(loaded: LoadedModel, path: str, resource_paths: Sequence[str] = ()) -> World:
    """Read ``collision.world`` for a loaded model, as the driver checks it and the view shows it.

    Args:
        loaded: the robot's model: its placement in the SDF world it was loaded from (if any) and
            its model's name there (the first name of its scope, else the robot's name).
        path: ``collision.world`` (``""``: none).
        resource_paths: SDF includes and meshes (``model_dirs``).

    Returns:
        The obstacles, in the robot's root-link frame.

    Raises:
        WorldError, MeshUnreadable: as :func:`load_world`.
    """
    placement = loaded.placement.pose if loaded.placement is not None else None
    robot_model = loaded.scope.split("::")[0] if loaded.scope else loaded.robot.name
    return load_world(path, loaded.robot, placement, robot_model, resource_paths)


def standing_contacts(model: CollisionModel) -> set[LinkPair]:
    """Pairs of an obstacle and a robot link fixed to the root that touch at the default pose.

    The base on the ground or on its table: these contacts are where the robot stands, so they
    go into the allowed-collision matrix (reason ``Default``).

    Args:
        model: the collision model with its obstacles.

    Returns:
        The pairs, sorted names.
    """
    robot = model.robot
    fixed = {robot.root_link}
    for joint in robot.joints_in_order():
        if joint.type == "fixed" and joint.parent_link in fixed:
            fixed.add(joint.child_link)
    configuration = default_configuration(robot, model.fk.joint_names)
    return {
        contact.links
        for contact in model.colliding(configuration, exact=True)
        if (contact.links[0] in fixed and contact.links[1].startswith(WORLD_PREFIX))
        or (contact.links[1] in fixed and contact.links[0].startswith(WORLD_PREFIX))
    }

"""The robot model as a MuJoCo MJCF document (pure Python: MuJoCo is not needed to write it).

What is written, from a :class:`~bb_robot.model.robot.Robot` (as loaded from URDF, xacro, or an
SDF model or world):

- the root link is MuJoCo's world body (the robot stands welded to the world, as the driver
  drives it); every other link is a ``<body>`` nested under its parent, placed at its parent
  joint's origin; a fixed joint welds its child (no ``<joint>``);
- revolute joints are ``hinge`` joints with their ``range``, continuous ones unlimited hinges,
  prismatic ones ``slide`` joints; the axis as given, in the child link's frame; a ``floating``
  joint of a link on the world is a ``free`` joint; a floating joint deeper in the tree and a
  ``planar`` joint are welded, with a warning;
- ``<dynamics damping friction>`` becomes ``damping`` and ``frictionloss``;
- inertials (mass, centre of mass, full inertia); a link without one is massless, which MuJoCo
  cannot move: the compiler's ``boundmass`` / ``boundinertia`` give it a negligible mass, and a
  moving massless link is warned about;
- a mimic joint is an equality constraint ``q = offset + multiplier · q_leader``;
- collision geometry collides with the floor (and with other links when ``self_collide``, which
  Gazebo also leaves off by default); visual geometry is drawn only (group 1, no contacts); meshes
  as absolute paths (:mod:`bb_robot.mjcf.meshes`), unreadable formats and missing files left out
  with a warning naming the file and the link;
- gravity (-9.81 m/s² along z), the time step, the implicit-fast integrator, and a floor plane
  at z = 0 when the model has none (no link fixed to the root has a box collision at least
  5 m wide, or is named ``ground``, ``ground_plane`` or ``floor``);
- the world's objects (``MjcfOptions.bodies``, :mod:`bb_robot.mjcf.bodies`): static ones as bodies
  welded to the world, those with a mass as free bodies with the inertia of their solids, each named
  ``object/<name>``, colliding with the robot, the floor and each other; with a movable one,
  elliptic friction cones, ``impratio`` 10 and the no-slip solver (MuJoCo's advice for grasping);
- one ``general`` actuator per actuated joint (named as the joint): a torque or force motor
  (``gain 1``, no bias) clamped to the joint's ``<limit effort>``.  The driver's ``mujoco``
  backend turns them into position and velocity servos by changing their gains.

A robot model is a tree: closed chains never reach this writer (the loaders refuse a link with
two parent joints, naming them).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from bb_robot.errors import BbRobotError
from bb_robot.mjcf.bodies import OBJECT_PREFIX, BodyError, SceneBody, check_bodies, solid_inertia
from bb_robot.mjcf.meshes import MeshResolver, default_resolver, readable
from bb_robot.model.geometry import Box, Cylinder, Mesh, Origin, Sphere
from bb_robot.model.robot import SINGLE_DOF_TYPES, Joint, Link, Robot
from bb_robot.model.transforms import Matrix, matrix_to_quaternion, matrix_to_rpy, rpy_to_matrix

#: Gravity written into the document (m/s², z up).
GRAVITY: tuple[float, float, float] = (0.0, 0.0, -9.81)
#: Link names taken for a ground.
GROUND_NAMES = frozenset({"ground", "ground_plane", "floor"})
#: A box this wide (m, both horizontal edges) fixed to the root is taken for a floor.
FLOOR_WIDTH = 5.0
#: The no-slip solver's iterations in a world with movable objects (MuJoCo's ``noslip_iterations``).
NOSLIP_ITERATIONS = 10
#: A movable object's contacts: MuJoCo's ``solref`` (time constant s, damping ratio).  MuJoCo's default
#: (0.02 s) let fingers squeezing a 100 g cube with 12 N sink 3 mm into each face, and the box-box
#: contacts at the fingers' edges then pushed the cube sideways along them (11 mm in one carry);
#: 5 ms is stiff and still five physics steps of the default 1 ms.
OBJECT_SOLREF = (0.005, 1.0)


class MjcfWriteError(BbRobotError):
    """The model cannot be written as MJCF (a value MuJoCo cannot hold)."""


@dataclass(frozen=True)
class MjcfOptions:
    """How the document is written.

    ``actuated``: the joints given a motor (``None``: every movable single-axis joint that does
    not mimic another); ``floor``: add a floor plane (``None``: when the model has none);
    ``mesh_resolver``: (URI, link) → absolute path (``None``: :func:`~bb_robot.mjcf.meshes.default_resolver`
    of the model's source file and ``search_dirs``); ``bodies``: the world's objects
    (:mod:`bb_robot.mjcf.bodies`: static ones welded, those with a mass free bodies).
    """

    timestep: float = 0.001
    gravity: tuple[float, float, float] = GRAVITY
    floor: bool | None = None
    self_collide: bool = False
    visuals: bool = True
    actuated: Sequence[str] | None = None
    mesh_resolver: MeshResolver | None = None
    search_dirs: Sequence[str] = ()
    bodies: Sequence[SceneBody] = ()


@dataclass(frozen=True)
class MjcfDocument:
    """The document's text, what it could not carry (``warnings``), and its actuated joints in order."""

    text: str
    warnings: tuple[str, ...] = ()
    actuated: tuple[str, ...] = ()
    floor: bool = False
    meshes: tuple[str, ...] = field(default=())


def actuated_joints(robot: Robot) -> tuple[str, ...]:
    """Every movable single-axis joint that does not mimic another, in tree order (the driver's default)."""
    return tuple(j.name for j in robot.joints_in_order() if j.type in SINGLE_DOF_TYPES and j.mimic is None)


def robot_to_mjcf(robot: Robot, options: MjcfOptions = MjcfOptions()) -> MjcfDocument:
    """Write ``robot`` as an MJCF document (see the module docstring).

    Args:
        robot: The robot model.
        options: How to write it.

    Returns:
        The document, its warnings (each naming the link, joint or file) and the actuated joints.

    Raises:
        MjcfWriteError: a non-finite value, an actuated joint the robot does not have or that
            cannot move, a time step that is not positive.
    """
    return _Writer(robot, options).write()


def _f(value: float) -> str:
    if not math.isfinite(value):
        raise MjcfWriteError(f"MJCF cannot hold the non-finite value {value}")
    return repr(float(value)) if value != int(value) or abs(value) >= 1e15 else str(int(value))


def _vec(values: Sequence[float]) -> str:
    return " ".join(_f(v) for v in values)


def _place(element: ET.Element, origin: Origin | None) -> None:
    """Set ``pos`` and ``quat`` (MuJoCo's w x y z) of ``element`` from a URDF origin."""
    if origin is None:
        return
    if any(origin.xyz):
        element.set("pos", _vec(origin.xyz))
    if any(origin.rpy):
        x, y, z, w = matrix_to_quaternion(rpy_to_matrix(origin.rpy))
        element.set("quat", _vec((w, x, y, z)))


def _relative(filename: str) -> bool:
    return "://" not in filename and not Path(filename).is_absolute()


def _matrix_origin(pose: Matrix) -> Origin:
    """A 4×4 pose as a URDF origin (xyz, rpy)."""
    pose = np.asarray(pose, dtype=float)
    x, y, z = (float(v) for v in pose[:3, 3])
    return Origin((x, y, z), matrix_to_rpy(pose[:3, :3]))


class _Writer:
    def __init__(self, robot: Robot, options: MjcfOptions) -> None:
        if not options.timestep > 0 or not math.isfinite(options.timestep):
            raise MjcfWriteError(f"the time step must be a positive number of seconds, not {options.timestep}")
        self.robot = robot
        self.options = options
        self.resolve = options.mesh_resolver or default_resolver(robot.source, options.search_dirs)
        self.warnings: list[str] = []
        self.meshes: dict[tuple[str, str], str] = {}
        self.asset = ET.Element("asset")
        self.robot_affinity = "1" if options.self_collide else "0"

    # ------------------------------------------------------------------ document
    def write(self) -> MjcfDocument:
        robot, options = self.robot, self.options
        actuated = self._actuated()
        root = ET.Element("mujoco", model=robot.name)
        root.append(ET.Comment(" Written by bb_robot (bb_robot.mjcf.writer) from a robot model. "))
        ET.SubElement(
            root,
            "compiler",
            angle="radian",
            autolimits="true",
            inertiafromgeom="false",
            boundmass="1e-06",
            boundinertia="1e-10",
            balanceinertia="true",
        )
        option = ET.SubElement(
            root, "option", timestep=_f(options.timestep), gravity=_vec(options.gravity), integrator="implicitfast"
        )
        if any(body.movable for body in options.bodies):
            # Objects held by friction: elliptic cones with a high impedance ratio (MuJoCo's advice for
            # grasping), else its soft friction lets a held object creep out of the fingers.
            option.set("cone", "elliptic")
            option.set("impratio", "10")
            # and the no-slip solver after the main one: without it a cube squeezed with 12 N crept
            # 8 mm along the fingers' faces in a 1.3 s swing of the arm (docs/pick.md).
            option.set("noslip_iterations", str(NOSLIP_ITERATIONS))
        root.append(self.asset)
        world = ET.SubElement(root, "worldbody")
        ET.SubElement(world, "light", name="sun", pos="0 0 5", dir="0 0 -1", directional="true")
        floor = options.floor if options.floor is not None else not self._has_floor()
        if floor:
            ET.SubElement(
                world,
                "geom",
                name="floor",
                type="plane",
                size="0 0 0.05",
                rgba="0.8 0.8 0.8 1",
                contype="0",
                conaffinity="1",
            )
        root_link = robot.get_link(robot.root_link)
        self._geoms(world, root_link)
        for joint in robot.child_joints(root_link.name):
            self._body(world, joint, top=True)
        try:
            check_bodies(options.bodies)
            for scene_body in options.bodies:
                self._scene_body(world, scene_body)
        except BodyError as error:
            raise MjcfWriteError(str(error)) from None
        self._equalities(root)
        actuators = ET.SubElement(root, "actuator")
        for name in actuated:
            self._actuator(actuators, robot.get_joint(name))
        if not len(self.asset):
            root.remove(self.asset)
        if not len(actuators):
            root.remove(actuators)
        ET.indent(root, "  ")
        text = ET.tostring(root, encoding="unicode") + "\n"
        return MjcfDocument(text, tuple(self.warnings), actuated, floor, tuple(sorted({k[0] for k in self.meshes})))

    def _actuated(self) -> tuple[str, ...]:
        if self.options.actuated is None:
            return actuated_joints(self.robot)
        names = tuple(self.options.actuated)
        for name in names:
            joint = self.robot.joints.get(name)
            if joint is None:
                raise MjcfWriteError(f"robot '{self.robot.name}' has no joint '{name}' to actuate")
            if joint.type not in SINGLE_DOF_TYPES:
                raise MjcfWriteError(f"joint '{name}' is {joint.type}: only single-axis joints are actuated")
        return names

    def _has_floor(self) -> bool:
        robot = self.robot
        stack = [robot.root_link]
        while stack:
            link = robot.get_link(stack.pop())
            if link.name.lower() in GROUND_NAMES:
                return True
            for collision in link.collisions:
                geometry = collision.geometry
                if isinstance(geometry, Box) and min(geometry.size[0], geometry.size[1]) >= FLOOR_WIDTH:
                    return True
            stack.extend(j.child_link for j in robot.child_joints(link.name) if j.type == "fixed")
        return False

    # -------------------------------------------------------------------- bodies
    def _body(self, parent: ET.Element, joint: Joint, *, top: bool) -> None:
        link = self.robot.get_link(joint.child_link)
        body = ET.SubElement(parent, "body", name=link.name)
        _place(body, joint.origin)
        self._inertial(body, link, moving=joint.type != "fixed")
        self._joint(body, joint, top=top)
        self._geoms(body, link)
        for child in self.robot.child_joints(link.name):
            self._body(body, child, top=False)

    def _inertial(self, body: ET.Element, link: Link, *, moving: bool) -> None:
        inertial = link.inertial
        if inertial is None or not inertial.mass:
            if moving and not self._subtree_has_mass(link.name):
                self.warnings.append(
                    f"link '{link.name}' moves but has no mass (no <inertial>): given a negligible mass"
                )
            return
        origin = inertial.origin or Origin()
        element = ET.SubElement(body, "inertial", mass=_f(inertial.mass), pos=_vec(origin.xyz))
        i = inertial.inertia
        tensor = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
        if any(origin.rpy):  # MJCF takes a full inertia or an orientation, not both: turn it into the link frame
            rotation = rpy_to_matrix(origin.rpy)
            tensor = rotation @ tensor @ rotation.T
        t = tensor
        element.set("fullinertia", _vec((t[0, 0], t[1, 1], t[2, 2], t[0, 1], t[0, 2], t[1, 2])))

    def _subtree_has_mass(self, name: str) -> bool:
        link = self.robot.get_link(name)
        if link.inertial is not None and link.inertial.mass:
            return True
        return any(self._subtree_has_mass(j.child_link) for j in self.robot.child_joints(name))

    def _joint(self, body: ET.Element, joint: Joint, *, top: bool) -> None:
        kind = joint.type
        if kind == "fixed":
            return
        if kind == "floating":
            if top:
                ET.SubElement(body, "freejoint", name=joint.name)
            else:
                self.warnings.append(
                    f"joint '{joint.name}': a floating joint below the first link cannot be a MuJoCo free joint; "
                    "written as fixed"
                )
            return
        if kind == "planar":
            self.warnings.append(f"joint '{joint.name}': planar joints are not converted; written as fixed")
            return
        element = ET.SubElement(
            body, "joint", name=joint.name, type="slide" if kind == "prismatic" else "hinge", axis=_vec(joint.axis)
        )
        limits = joint.limits
        if kind != "continuous" and limits is not None and limits.lower is not None and limits.upper is not None:
            if limits.lower < limits.upper:
                element.set("range", _vec((limits.lower, limits.upper)))
        dynamics = joint.dynamics
        if dynamics is not None:
            if dynamics.damping:
                element.set("damping", _f(dynamics.damping))
            if dynamics.friction:
                element.set("frictionloss", _f(dynamics.friction))

    def _scene_body(self, world: ET.Element, scene_body: SceneBody) -> None:
        """One object of the world: welded when static, a free body with its mass otherwise."""
        name = f"{OBJECT_PREFIX}{scene_body.name}"
        body = ET.SubElement(world, "body", name=name)
        _place(body, _matrix_origin(scene_body.pose))
        if scene_body.movable:
            com, inertia = solid_inertia(scene_body)
            ET.SubElement(body, "freejoint", name=name)
            t = inertia
            ET.SubElement(
                body,
                "inertial",
                mass=_f(float(scene_body.mass or 0.0)),
                pos=_vec(com.tolist()),
                fullinertia=_vec((t[0, 0], t[1, 1], t[2, 2], t[0, 1], t[0, 2], t[1, 2])),
            )
        holder = Link(name=name)
        for geometry, local in scene_body.shapes:
            attributes = {"contype": "1", "conaffinity": "1", "group": "0", "rgba": "0.6 0.5 0.4 1"}
            if scene_body.movable:
                # priority: its contact parameters hold in every contact it makes (the fingers', the
                # table's): stiff contacts (OBJECT_SOLREF), so that fingers squeezing it do not sink
                # millimetres into it and squeeze it out sideways.
                attributes.update(solref=_vec(OBJECT_SOLREF), priority="1")
            if scene_body.friction is not None:
                # priority: its friction holds in every contact (MuJoCo takes the larger of two equals)
                attributes.update(friction=_vec((scene_body.friction, 0.005, 0.0001)), priority="1")
            if isinstance(geometry, Mesh) and scene_body.source and _relative(geometry.filename):
                geometry = replace(geometry, filename=str(Path(scene_body.source).parent / geometry.filename))
            self._geom(body, holder, geometry, _matrix_origin(local), attributes)

    # --------------------------------------------------------------------- geoms
    def _geoms(self, body: ET.Element, link: Link) -> None:
        for collision in link.collisions:
            attributes = {"contype": "1", "conaffinity": self.robot_affinity, "group": "3"}
            self._geom(body, link, collision.geometry, collision.origin, attributes)
        if not self.options.visuals:
            return
        for visual in link.visuals:
            attributes = {"contype": "0", "conaffinity": "0", "group": "1"}
            color = visual.material.color if visual.material is not None else None
            if color is not None:
                attributes["rgba"] = _vec((color.red, color.green, color.blue, color.alpha))
            self._geom(body, link, visual.geometry, visual.origin, attributes)

    def _geom(
        self, body: ET.Element, link: Link, geometry: object, origin: Origin | None, attributes: dict[str, str]
    ) -> None:
        if isinstance(geometry, Box):
            attributes.update(type="box", size=_vec([s / 2 for s in geometry.size]))
        elif isinstance(geometry, Cylinder):
            attributes.update(type="cylinder", size=_vec((geometry.radius, geometry.length / 2)))
        elif isinstance(geometry, Sphere):
            attributes.update(type="sphere", size=_f(geometry.radius))
        elif isinstance(geometry, Mesh):
            mesh = self._mesh(link, geometry)
            if mesh is None:
                return
            attributes.update(type="mesh", mesh=mesh)
        else:
            return
        if "size" in attributes and min(float(v) for v in attributes["size"].split()) <= 0:
            self.warnings.append(f"link '{link.name}': a {attributes['type']} of size zero is left out")
            return
        geom = ET.SubElement(body, "geom", attributes)
        _place(geom, origin)

    def _mesh(self, link: Link, mesh: Mesh) -> str | None:
        path = self.resolve(mesh.filename, link.name)
        if path is None:
            self.warnings.append(f"link '{link.name}': mesh '{mesh.filename}' not found; left out")
            return None
        if not readable(Path(path)):
            self.warnings.append(
                f"link '{link.name}': mesh '{mesh.filename}' ({Path(path).suffix or 'no suffix'}) is in a format "
                "MuJoCo does not read (STL, OBJ, MSH); left out"
            )
            return None
        scale = mesh.extra_scale_xyz or (mesh.scale, mesh.scale, mesh.scale)
        key = (str(Path(path).absolute()), _vec(scale))
        name = self.meshes.get(key)
        if name is None:
            name = self.meshes[key] = f"mesh{len(self.meshes)}"
            element = ET.SubElement(self.asset, "mesh", name=name, file=key[0])
            if tuple(scale) != (1.0, 1.0, 1.0):
                element.set("scale", key[1])
        return name

    # ------------------------------------------------------- equalities, motors
    def _equalities(self, root: ET.Element) -> None:
        equality = ET.Element("equality")
        for joint in self.robot.joints_in_order():
            mimic = joint.mimic
            if mimic is None:
                continue
            leader = self.robot.joints.get(mimic.joint)
            if joint.type not in SINGLE_DOF_TYPES or leader is None or leader.type not in SINGLE_DOF_TYPES:
                self.warnings.append(
                    f"joint '{joint.name}' mimics '{mimic.joint}', which is not a movable single-axis joint of "
                    "the model; the mimic is left out"
                )
                continue
            ET.SubElement(
                equality,
                "joint",
                joint1=joint.name,
                joint2=mimic.joint,
                polycoef=_vec((mimic.offset, mimic.multiplier, 0.0, 0.0, 0.0)),
            )
        if len(equality):
            root.append(equality)

    def _actuator(self, actuators: ET.Element, joint: Joint) -> None:
        element = ET.SubElement(
            actuators,
            "general",
            name=joint.name,
            joint=joint.name,
            gainprm="1",
            biastype="affine",
            biasprm="0 0 0",
        )
        effort = joint.limits.effort if joint.limits is not None else None
        if effort is not None and effort > 0 and math.isfinite(effort):
            element.set("forcerange", _vec((-effort, effort)))

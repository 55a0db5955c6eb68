"""Write a robot model (:class:`bb_robot.model.robot.Robot`) as URDF text.

:func:`robot_to_urdf` is how a robot loaded from another format (SDFormat) is published as
``robot_description``.  Reading the text back with :func:`bb_robot.urdf.parse_string` and
:func:`bb_robot.urdf.builder.build_robot` gives the same model, float for float, except
where URDF needs a value the model does not have (placeholders, below).

What is written
---------------
* ``<robot name>``; links and joints in topological order (root first, each joint after
  the joint above it), so the same model always gives the same text.
* Links: ``<inertial>`` (origin, mass, all six inertia components), every visual in order
  (name, origin, geometry, material), every collision.  Geometry is a box, cylinder, sphere
  or mesh; a mesh writes ``Mesh.extra_scale_xyz`` when set (a non-uniform scale), otherwise
  ``scale`` when it is not 1.  An origin, name or material the model does not have is not
  written (the parser reads them back as ``None``).
* Materials: a named material with a colour or texture that several visuals share, always
  with the same definition, is defined once under ``<robot>`` and referenced by name; any
  other material is written inline.  (A name used with different definitions is written
  inline each time: bb_robot reads each visual's own colour back, but urdfdom, and so
  RViz, applies the first definition of a name to all of them.  A name-only material whose
  name another visual defines cannot be said in URDF: it reads back with that definition.)
* Joints: type, ``<origin>`` (always), parent, child, ``<axis>`` (joints that use one),
  ``<limit>``, ``<dynamics>``, ``<mimic>`` (joint, multiplier, offset) and, for soft limits,
  ``<safety_controller>``.
* One simple ``<transmission>`` per actuator, named ``<actuator>_transmission``:
  ``<type>transmission_interface/SimpleTransmission</type>``, the joint with its
  ``<offset>`` (when not 0), the actuator with its ``<mechanicalReduction>``.  A
  ``reversed`` drive is written as a negative reduction (how URDF says it).
* Not written (URDF has no place for them): sensors, the model's warnings and source.

Placeholders
------------
* URDF (urdfdom) requires a ``<limit>`` with ``effort`` and ``velocity`` on revolute and
  prismatic joints.  Where the model does not know one of them (``None``, or ``+inf`` for
  "no limit"), ``unknown_limit`` (default :data:`UNKNOWN_LIMIT`, ``1e16``) is written and a
  comment says so.  ``1e16`` means "no limit" to every consumer we know: it is the
  magnitude SDFormat itself uses for unbounded joints, it is finite (URDF cannot hold
  infinity) and positive (Pinocchio refuses a negative limit, so SDFormat's ``-1`` cannot be
  used), and it is not ``0``, which a simulator enforces and the joint cannot move.  Tools
  that plan with the limits (MoveIt) then see an unbounded velocity: give real limits where
  they matter.  An unknown ``lower`` or ``upper`` is left out (URDF's own reading of an
  absent bound).
  Other joint types get a ``<limit>`` only when the model has effort, velocity or bounds.
  Continuous joints have no position limits: their bounds and soft limits are not written.
* A transmission joint needs a ``<hardwareInterface>`` (urdf_parser_py refuses the whole
  document without one), which the model does not keep: :data:`HARDWARE_INTERFACE`
  (``JointStateInterface``: the joint's state can be read; it claims no command interface).
* ``<safety_controller>`` requires ``k_velocity``, which the model does not keep:
  ``k_velocity="0"`` is written with a comment (``k_position`` is left out; URDF reads 0).

Exactness
---------
Every float is written with :func:`repr`, the shortest text that reads back as the same
double.  The builder keeps an axis that is already of unit length (to rounding), so a
written model axis reads back bit for bit.
NaN and infinite values cannot be written in URDF: they raise :class:`UrdfWriteError`,
except an infinite effort or velocity (see above).

Mesh URIs
---------
``mesh_uri`` maps every resource URI written (mesh filenames and material textures):
:func:`keep_uris` (the default) writes them as the model has them (for SDF, as written in
the SDF, e.g. ``model://arm/meshes/base.dae``); :func:`resolve_to_file_uris` turns each one
a resolver can find into an absolute ``file://`` URI, which RViz and Gazebo load without
knowing SDF's resource paths.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from os import PathLike
from pathlib import Path

from bb_robot.errors import BbRobotError
from bb_robot.model.geometry import (
    Box,
    Collision,
    Cylinder,
    Geometry,
    Inertial,
    Material,
    Mesh,
    Origin,
    Sphere,
    Visual,
)
from bb_robot.model.robot import JOINT_TYPES, ActuatorInfo, Joint, JointLimits, Robot

__all__ = [
    "HARDWARE_INTERFACE",
    "UNKNOWN_LIMIT",
    "UrdfWriteError",
    "keep_uris",
    "resolve_to_file_uris",
    "robot_to_urdf",
]

UNKNOWN_LIMIT = 1e16
"""Written by default for an unknown ``effort`` or ``velocity`` of a ``<limit>`` ("no limit")."""

SIMPLE_TRANSMISSION = "transmission_interface/SimpleTransmission"
HARDWARE_INTERFACE = "hardware_interface/JointStateInterface"
"""Written as each transmission joint's ``<hardwareInterface>``, which the model does not keep."""

_AXIS_TYPES = frozenset(("revolute", "continuous", "prismatic", "planar"))
_BOUNDED_TYPES = frozenset(("revolute", "prismatic"))
# Characters XML 1.0 cannot hold at all, even escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TRANSMISSION_COMMENT = (
    f" Transmissions: hardwareInterface {HARDWARE_INTERFACE} is a placeholder (bb_robot's model "
    "does not keep command interfaces; URDF requires one) "
)
_SAFETY_COMMENT = " k_velocity is not kept by bb_robot's model: 0 is a placeholder "

UriMapper = Callable[[str], str]


class UrdfWriteError(BbRobotError, ValueError):
    """The model holds something URDF cannot express (a NaN, an empty or non-XML name...)."""

    def __init__(self, robot: str | None, where: str, problem: str) -> None:
        self.robot = robot
        self.where = where
        self.problem = problem
        what = "URDF" if robot is None else f"robot '{robot}' as URDF"
        super().__init__(f"cannot write {what}: {where}: {problem}")


# ------------------------------------------------------------------------------ mesh URIs
def keep_uris(uri: str) -> str:
    """Return ``uri`` unchanged: meshes and textures keep the URIs the model has."""
    return uri


def resolve_to_file_uris(resolver: Callable[[str], str | PathLike[str] | None], *, strict: bool = False) -> UriMapper:
    """Return a ``mesh_uri`` mapper writing each URI ``resolver`` finds as an absolute ``file://`` URI.

    ``resolver`` takes a URI as written (``model://arm/meshes/base.dae``, ``package://...``,
    a relative path...) and returns the file's path, or ``None`` when it cannot find it.
    A relative path is made absolute against the current directory; the result is
    percent-encoded (``Path.as_uri``: a space becomes ``%20``).  A URI the resolver cannot
    find is kept as written, or, with ``strict=True``, raises :class:`UrdfWriteError`.
    """

    def to_file_uri(uri: str) -> str:
        found = resolver(uri)
        if found is None:
            if strict:
                raise UrdfWriteError(None, f"resource '{uri}'", "the resolver cannot find this file")
            return uri
        return Path(found).absolute().as_uri()

    return to_file_uri


# ---------------------------------------------------------------------------------- API
def robot_to_urdf(
    robot: Robot,
    *,
    mesh_uri: UriMapper | None = None,
    unknown_limit: float = UNKNOWN_LIMIT,
) -> str:
    """Return ``robot`` as a URDF document (text, with an XML declaration and a final newline).

    ``mesh_uri`` maps each mesh filename and texture URI (default :func:`keep_uris`); see
    :func:`resolve_to_file_uris`.  ``unknown_limit`` is written for an effort or velocity
    limit URDF requires and the model does not know (see the module notes).  Raises
    :class:`UrdfWriteError` for a model URDF cannot hold: NaN or infinite values (but see the
    module notes on limits), empty names, names with characters XML cannot carry, unknown
    joint types, a zero axis on a joint that moves.
    """
    if not math.isfinite(unknown_limit):
        raise UrdfWriteError(robot.name, "unknown_limit", f"{unknown_limit!r} is not a finite number")
    root = _Writer(robot, mesh_uri or keep_uris, float(unknown_limit)).document()
    ET.indent(root, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ------------------------------------------------------------------------------- values
class _Writer:
    def __init__(self, robot: Robot, mesh_uri: UriMapper, unknown_limit: float) -> None:
        self.robot = robot
        self.mesh_uri = mesh_uri
        self.unknown_limit = unknown_limit
        self.shared = self._shared_materials()

    # -- checks ----------------------------------------------------------------------------
    def fail(self, where: str, problem: str) -> UrdfWriteError:
        return UrdfWriteError(self.robot.name, where, problem)

    def text(self, value: str, where: str) -> str:
        bad = _NOT_XML.search(value)
        if bad is not None:
            raise self.fail(where, f"{value!r} holds the character {bad.group()!r}, which XML cannot carry")
        return value

    def name(self, value: str | None, where: str) -> str:
        if not value:
            raise self.fail(where, "the name is empty (URDF requires one)")
        return self.text(value, where)

    def number(self, value: float, where: str) -> str:
        number = float(value)
        if not math.isfinite(number):
            raise self.fail(where, f"{number!r} is not a finite number (URDF cannot hold NaN or infinity)")
        return repr(number)

    def numbers(self, values: Iterable[float], where: str) -> str:
        return " ".join(self.number(v, where) for v in values)

    # -- document --------------------------------------------------------------------------
    def document(self) -> ET.Element:
        robot = self.robot
        root = ET.Element("robot", name=self.name(robot.name, "<robot name>"))
        root.append(ET.Comment(" Written by bb_robot (bb_robot.urdf.writer) from a robot model. "))
        for name, material in self.shared.items():
            element = ET.SubElement(root, "material", name=self.text(name, f"material '{name}'"))
            self.material_body(element, material, f"material '{name}'")
        for link in robot.links_in_order():
            root.append(self.link(link.name, link.inertial, link.visuals, link.collisions))
        for joint in robot.joints_in_order():
            root.append(self.joint(joint))
        actuators = [robot.actuators[name] for joint in robot.joints_in_order() for name in joint.actuators]
        if actuators:
            root.append(ET.Comment(_TRANSMISSION_COMMENT))
        for actuator in actuators:
            root.append(self.transmission(actuator))
        return root

    # -- materials -------------------------------------------------------------------------
    def _shared_materials(self) -> dict[str, Material]:
        """Named materials with a definition that several visuals use, always identically."""
        uses: dict[str, list[Material]] = {}
        for link in self.robot.links_in_order():
            for visual in link.visuals:
                material = visual.material
                if material is not None and material.name:
                    uses.setdefault(material.name, []).append(material)
        return {
            name: found[0]
            for name, found in uses.items()
            if len(found) > 1
            and all(m == found[0] for m in found)
            and (found[0].color is not None or found[0].texture is not None)
        }

    def material_body(self, element: ET.Element, material: Material, where: str) -> None:
        if material.color is not None:
            c = material.color
            ET.SubElement(element, "color", rgba=self.numbers((c.red, c.green, c.blue, c.alpha), f"{where} <color>"))
        if material.texture is not None:
            texture = self.name(self.mesh_uri(material.texture), f"{where} <texture>")
            ET.SubElement(element, "texture", filename=texture)

    # -- links -----------------------------------------------------------------------------
    def link(
        self,
        name: str,
        inertial: Inertial | None,
        visuals: Iterable[Visual],
        collisions: Iterable[Collision],
    ) -> ET.Element:
        owner = f"link '{name}'"
        element = ET.Element("link", name=self.name(name, "<link name>"))
        if inertial is not None:
            element.append(self.inertial(inertial, f"{owner} <inertial>"))
        for visual in visuals:
            element.append(self.visual(visual, f"{owner} <visual>"))
        for collision in collisions:
            element.append(self.shape_holder("collision", collision.name, collision.origin, collision.geometry, owner))
        return element

    def origin(self, parent: ET.Element, origin: Origin | None, where: str) -> None:
        if origin is not None:
            ET.SubElement(
                parent,
                "origin",
                xyz=self.numbers(origin.xyz, f"{where} <origin xyz>"),
                rpy=self.numbers(origin.rpy, f"{where} <origin rpy>"),
            )

    def inertial(self, inertial: Inertial, where: str) -> ET.Element:
        element = ET.Element("inertial")
        self.origin(element, inertial.origin, where)
        if inertial.mass is not None:
            ET.SubElement(element, "mass", value=self.number(inertial.mass, f"{where} <mass>"))
        i = inertial.inertia
        ET.SubElement(
            element,
            "inertia",
            {key: self.number(getattr(i, key), f"{where} <inertia {key}>") for key in _INERTIA_KEYS},
        )
        return element

    def visual(self, visual: Visual, where: str) -> ET.Element:
        owner = where.removesuffix(" <visual>")
        element = self.shape_holder("visual", visual.name, visual.origin, visual.geometry, owner)
        material = visual.material
        if material is not None:
            name = material.name or ""
            attrs = {"name": self.text(name, f"{where} <material name>")}
            if name in self.shared:
                ET.SubElement(element, "material", attrs)
            else:
                self.material_body(ET.SubElement(element, "material", attrs), material, f"{where} <material>")
        return element

    def shape_holder(
        self, tag: str, name: str | None, origin: Origin | None, geometry: Geometry | None, owner: str
    ) -> ET.Element:
        where = f"{owner} <{tag}>"
        element = ET.Element(tag)
        if name is not None:
            element.set("name", self.text(name, f"{where} name"))
        self.origin(element, origin, where)
        if geometry is not None:
            ET.SubElement(element, "geometry").append(self.geometry(geometry, where))
        return element

    def geometry(self, geometry: Geometry, where: str) -> ET.Element:
        if isinstance(geometry, Box):
            return ET.Element("box", size=self.numbers(geometry.size, f"{where} <box size>"))
        if isinstance(geometry, Cylinder):
            return ET.Element(
                "cylinder",
                radius=self.number(geometry.radius, f"{where} <cylinder radius>"),
                length=self.number(geometry.length, f"{where} <cylinder length>"),
            )
        if isinstance(geometry, Sphere):
            return ET.Element("sphere", radius=self.number(geometry.radius, f"{where} <sphere radius>"))
        if isinstance(geometry, Mesh):
            element = ET.Element("mesh", filename=self.name(self.mesh_uri(geometry.filename), f"{where} <mesh>"))
            if geometry.extra_scale_xyz is not None:
                element.set("scale", self.numbers(geometry.extra_scale_xyz, f"{where} <mesh scale>"))
            elif geometry.scale != 1.0:
                element.set("scale", self.numbers((geometry.scale,) * 3, f"{where} <mesh scale>"))
            return element
        raise self.fail(where, f"geometry {type(geometry).__name__} has no URDF form")

    # -- joints ----------------------------------------------------------------------------
    def joint(self, joint: Joint) -> ET.Element:
        owner = f"joint '{joint.name}'"
        if joint.type not in JOINT_TYPES:
            raise self.fail(owner, f"type '{joint.type}' is not a URDF joint type ({', '.join(JOINT_TYPES)})")
        element = ET.Element("joint", name=self.name(joint.name, "<joint name>"), type=joint.type)
        self.origin(element, joint.origin, owner)
        ET.SubElement(element, "parent", link=self.name(joint.parent_link, f"{owner} <parent link>"))
        ET.SubElement(element, "child", link=self.name(joint.child_link, f"{owner} <child link>"))
        if joint.type in _AXIS_TYPES:
            x, y, z = (float(c) for c in joint.axis)
            if x == y == z == 0.0:
                raise self.fail(owner, "the axis has zero length (a moving joint needs a direction)")
            ET.SubElement(element, "axis", xyz=self.numbers((x, y, z), f"{owner} <axis xyz>"))
        self.limits(element, joint, owner)
        if joint.dynamics is not None:
            dynamics = ET.SubElement(element, "dynamics")
            for key in ("damping", "friction"):
                value = getattr(joint.dynamics, key)
                if value is not None:
                    dynamics.set(key, self.number(value, f"{owner} <dynamics {key}>"))
        if joint.mimic is not None and joint.type != "fixed":
            mimic = joint.mimic
            ET.SubElement(
                element,
                "mimic",
                joint=self.name(mimic.joint, f"{owner} <mimic joint>"),
                multiplier=self.number(mimic.multiplier, f"{owner} <mimic multiplier>"),
                offset=self.number(mimic.offset, f"{owner} <mimic offset>"),
            )
        return element

    def limits(self, element: ET.Element, joint: Joint, owner: str) -> None:
        limits = joint.limits or JointLimits()
        bounded = joint.type != "continuous"
        lower = limits.lower if bounded else None
        upper = limits.upper if bounded else None
        effort = _known_rate(limits.effort)
        velocity = _known_rate(limits.velocity)
        if joint.type in _BOUNDED_TYPES or any(v is not None for v in (lower, upper, effort, velocity)):
            if effort is None or velocity is None:
                element.append(
                    ET.Comment(
                        f" effort/velocity {self.unknown_limit!r}: a placeholder for a limit the model "
                        "does not know (URDF requires both); give real limits where they matter "
                    )
                )
            limit = ET.SubElement(element, "limit")
            if lower is not None:
                limit.set("lower", self.number(lower, f"{owner} <limit lower>"))
            if upper is not None:
                limit.set("upper", self.number(upper, f"{owner} <limit upper>"))
            placeholder = self.unknown_limit
            limit.set("effort", self.number(placeholder if effort is None else effort, f"{owner} <limit effort>"))
            limit.set(
                "velocity", self.number(placeholder if velocity is None else velocity, f"{owner} <limit velocity>")
            )
        soft = (limits.soft_lower, limits.soft_upper) if bounded else (None, None)
        if soft != (None, None):
            element.append(ET.Comment(_SAFETY_COMMENT))
            safety = ET.SubElement(element, "safety_controller")
            for key, value in zip(("soft_lower_limit", "soft_upper_limit"), soft, strict=True):
                if value is not None:
                    safety.set(key, self.number(value, f"{owner} <safety_controller {key}>"))
            safety.set("k_velocity", "0")

    # -- transmissions ---------------------------------------------------------------------
    def transmission(self, actuator: ActuatorInfo) -> ET.Element:
        owner = f"actuator '{actuator.name}'"
        name = self.name(actuator.name, "<actuator name>")
        element = ET.Element("transmission", name=f"{name}_transmission")
        ET.SubElement(element, "type").text = SIMPLE_TRANSMISSION
        joint = ET.SubElement(element, "joint", name=self.name(actuator.joint, f"{owner} joint"))
        ET.SubElement(joint, "hardwareInterface").text = HARDWARE_INTERFACE
        actuator_element = ET.SubElement(element, "actuator", name=name)
        transmission = actuator.transmission
        if transmission is None:
            return element
        offset = transmission.offset
        if offset is not None and (offset != 0.0 or math.copysign(1.0, offset) < 0.0):  # 0 is URDF's default
            ET.SubElement(joint, "offset").text = self.number(offset, f"{owner} offset")
        reduction = transmission.reduction
        if transmission.reversed:
            reduction = -(1.0 if reduction is None else reduction)
        if reduction is not None:
            ET.SubElement(actuator_element, "mechanicalReduction").text = self.number(
                reduction, f"{owner} mechanicalReduction"
            )
        return element


_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _known_rate(value: float | None) -> float | None:
    """An effort or velocity limit, ``None`` when unknown or unlimited (``+inf``)."""
    if value is None or value == math.inf:
        return None
    return value

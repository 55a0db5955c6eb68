"""Write a robot model (:class:`bb_robot.model.robot.Robot`) as URDF text.

:func:`robot_to_urdf` is how a robot loaded from another format (SDFormat) is published as
``robot_description``.  Reading the text back with :func:`bb_robot.urdf.parse_string` and
:func:`bb_robot.urdf.builder.build_robot` gives the same model, float for float, except
where URDF needs a value the model does not have (placeholders, below).

Layers
------
* :class:`UrdfElements` turns the values of the intermediate representation
  (:mod:`bb_robot.urdf.ir`: links, joints, transmissions, materials, geometry) into
  ``<link>``, ``<joint>``... elements.  It is the one place bb_robot formats URDF: the
  authoring API (:mod:`bb_robot.authoring`) builds its ``to_xml`` text with it too.
  :func:`ir_to_urdf` writes a whole intermediate representation.
* :func:`model_to_ir` turns a model into the intermediate representation, filling in the
  placeholders below; :func:`robot_to_urdf` is the two together, plus XML comments marking
  each placeholder.

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
  ``k_velocity="0.0"`` is written with a comment (``k_position`` is left out; URDF reads 0).

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
from collections.abc import Callable, Iterable, Mapping
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
from bb_robot.urdf import ir

__all__ = [
    "HARDWARE_INTERFACE",
    "SIMPLE_TRANSMISSION",
    "UNKNOWN_LIMIT",
    "UrdfElements",
    "UrdfWriteError",
    "ir_to_urdf",
    "keep_uris",
    "model_to_ir",
    "non_xml_character",
    "render",
    "resolve_to_file_uris",
    "robot_to_urdf",
    "urdf_document",
]

UNKNOWN_LIMIT = 1e16
"""Written by default for an unknown ``effort`` or ``velocity`` of a ``<limit>`` ("no limit")."""

SIMPLE_TRANSMISSION = "transmission_interface/SimpleTransmission"
HARDWARE_INTERFACE = "hardware_interface/JointStateInterface"
"""Written as each transmission joint's ``<hardwareInterface>``, which the model does not keep."""

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


def non_xml_character(value: str) -> str | None:
    """The first character of ``value`` that XML 1.0 cannot hold (not even escaped), or ``None``."""
    bad = _NOT_XML.search(value)
    return None if bad is None else bad.group()


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
    doc, notes = _model_to_ir(robot, unknown_limit)
    root = UrdfElements(robot.name, mesh_uri, doc.materials).robot(
        doc, comment=" Written by bb_robot (bb_robot.urdf.writer) from a robot model. "
    )
    for element in root.findall("joint"):
        for tag, comment in notes.get(element.get("name", ""), ()):
            found = element.find(tag)
            assert found is not None
            element.insert(list(element).index(found), ET.Comment(comment))
    transmissions = root.findall("transmission")
    if transmissions:
        root.insert(list(root).index(transmissions[0]), ET.Comment(_TRANSMISSION_COMMENT))
    return urdf_document(root)


def model_to_ir(robot: Robot, *, unknown_limit: float = UNKNOWN_LIMIT) -> ir.Robot:
    """Return the intermediate representation :func:`robot_to_urdf` writes for ``robot``.

    Links and joints in topological order, the placeholders of the module notes filled in,
    named materials that several visuals share (always identically) in ``materials``, one
    transmission per actuator; ``warnings`` and ``source`` are the model's.  Raises
    :class:`UrdfWriteError` for an infinite ``unknown_limit``; the values themselves are
    checked when they are written.
    """
    return _model_to_ir(robot, unknown_limit)[0]


def ir_to_urdf(
    doc: ir.Robot,
    *,
    mesh_uri: UriMapper | None = None,
    hardware_interface: str = HARDWARE_INTERFACE,
    comment: str | None = None,
) -> str:
    """Return the intermediate representation ``doc`` as a URDF document.

    Parsing the text gives ``doc`` back (``warnings`` and ``source`` aside): materials are
    defined at the top level as ``doc.materials`` has them and referenced by the visuals
    that use them unchanged; links, joints and transmissions keep their order.  Every
    transmission joint gets ``hardware_interface`` (the IR does not keep one).  ``comment``
    becomes an XML comment at the top of ``<robot>``.  Raises :class:`UrdfWriteError` for
    values URDF cannot hold.
    """
    elements = UrdfElements(doc.name, mesh_uri, doc.materials)
    return urdf_document(elements.robot(doc, hardware_interface=hardware_interface, comment=comment))


def render(element: ET.Element, indent: str = "") -> str:
    """``element`` as indented XML text (two spaces a level), every line prefixed by ``indent``."""
    ET.indent(element, space="  ")
    text = ET.tostring(element, encoding="unicode")
    return "\n".join(indent + line for line in text.split("\n"))


def urdf_document(root: ET.Element) -> str:
    """The text of a URDF document whose ``<robot>`` element is ``root``: declaration, body, newline."""
    return '<?xml version="1.0"?>\n' + render(root) + "\n"


# ------------------------------------------------------------------------------ elements
class UrdfElements:
    """Builds URDF elements from the values of the intermediate representation.

    ``robot`` names the robot in error messages (``None``: none); ``mesh_uri`` maps every
    mesh filename and texture URI written; a visual's material equal to
    ``shared_materials[material.name]`` is written as a reference (``<material name="x"/>``),
    any other material in full.  Every method raises :class:`UrdfWriteError` for a value
    URDF cannot hold: NaN and infinite numbers, empty names (where URDF requires one),
    characters XML cannot carry, unknown joint types, zero axes.  Numbers are written with
    :func:`repr` (the shortest text that reads back as the same double).
    """

    def __init__(
        self,
        robot: str | None = None,
        mesh_uri: UriMapper | None = None,
        shared_materials: Mapping[str, Material] | None = None,
    ) -> None:
        self.robot_name = robot
        self.mesh_uri = mesh_uri or keep_uris
        self.shared: Mapping[str, Material] = shared_materials or {}

    # -- checks ----------------------------------------------------------------------------
    def fail(self, where: str, problem: str) -> UrdfWriteError:
        return UrdfWriteError(self.robot_name, where, problem)

    def text(self, value: str, where: str) -> str:
        bad = non_xml_character(value)
        if bad is not None:
            raise self.fail(where, f"{value!r} holds the character {bad!r}, which XML cannot carry")
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

    # -- robot -----------------------------------------------------------------------------
    def robot(
        self,
        doc: ir.Robot,
        *,
        hardware_interface: str | Mapping[str, str] = HARDWARE_INTERFACE,
        comment: str | None = None,
    ) -> ET.Element:
        """``<robot>``: ``comment``, the top-level materials of ``self.shared``, links, joints,
        transmissions.  ``hardware_interface`` is one for all transmissions or one per
        transmission key of ``doc.transmissions`` (default :data:`HARDWARE_INTERFACE`)."""
        root = ET.Element("robot", name=self.name(doc.name, "<robot name>"))
        if comment is not None:
            root.append(ET.Comment(comment))
        for name, material in self.shared.items():
            root.append(self.material_definition(name, material))
        for link in doc.links:
            root.append(self.link(link))
        for joint in doc.joints:
            root.append(self.joint(joint))
        for key, transmission in doc.transmissions.items():
            interface = hardware_interface if isinstance(hardware_interface, str) else hardware_interface[key]
            root.append(self.transmission(transmission, interface))
        return root

    # -- materials -------------------------------------------------------------------------
    def material_definition(self, name: str, material: Material) -> ET.Element:
        """A top-level ``<material name>`` with its colour and texture."""
        where = f"material '{name}'"
        element = ET.Element("material", name=self.name(name, "<material name>"))
        self.material_body(element, material, where)
        return element

    def material_body(self, element: ET.Element, material: Material, where: str) -> None:
        if material.color is not None:
            c = material.color
            ET.SubElement(element, "color", rgba=self.numbers((c.red, c.green, c.blue, c.alpha), f"{where} <color>"))
        if material.texture is not None:
            texture = self.name(self.mesh_uri(material.texture), f"{where} <texture>")
            ET.SubElement(element, "texture", filename=texture)

    # -- links -----------------------------------------------------------------------------
    def link(self, link: ir.Link) -> ET.Element:
        """``<link>``: inertial, every visual (``visual`` then ``extra_visuals``), every collision."""
        owner = f"link '{link.name}'"
        element = ET.Element("link", name=self.name(link.name, "<link name>"))
        if link.inertial is not None:
            element.append(self.inertial(link.inertial, f"{owner} <inertial>"))
        for visual in (link.visual, *link.extra_visuals):
            if visual is not None:
                element.append(self.visual(visual, owner))
        for collision in link.collisions:
            element.append(self.collision(collision, owner))
        return element

    def origin(self, origin: Origin, where: str) -> ET.Element:
        """``<origin xyz rpy>`` (both always written)."""
        return ET.Element(
            "origin",
            xyz=self.numbers(origin.xyz, f"{where} <origin xyz>"),
            rpy=self.numbers(origin.rpy, f"{where} <origin rpy>"),
        )

    def _origin_in(self, parent: ET.Element, origin: Origin | None, where: str) -> None:
        if origin is not None:
            parent.append(self.origin(origin, where))

    def inertial(self, inertial: Inertial, where: str = "<inertial>") -> ET.Element:
        """``<inertial>``: origin (when not ``None``), mass (when not ``None``), all six inertia components."""
        element = ET.Element("inertial")
        self._origin_in(element, inertial.origin, where)
        if inertial.mass is not None:
            ET.SubElement(element, "mass", value=self.number(inertial.mass, f"{where} <mass>"))
        i = inertial.inertia
        ET.SubElement(
            element,
            "inertia",
            {key: self.number(getattr(i, key), f"{where} <inertia {key}>") for key in ir.INERTIA_KEYS},
        )
        return element

    def visual(self, visual: Visual, owner: str = "") -> ET.Element:
        """``<visual>``; ``owner`` (``"link 'x'"``) names the link in messages."""
        where = f"{owner} <visual>".lstrip()
        element = self._shape_holder("visual", visual.name, visual.origin, visual.geometry, where)
        material = visual.material
        if material is not None:
            name = material.name or ""
            attrs = {"name": self.text(name, f"{where} <material name>")}
            if name in self.shared and self.shared[name] == material:
                ET.SubElement(element, "material", attrs)
            else:
                self.material_body(ET.SubElement(element, "material", attrs), material, f"{where} <material>")
        return element

    def collision(self, collision: Collision, owner: str = "") -> ET.Element:
        """``<collision>``; ``owner`` (``"link 'x'"``) names the link in messages."""
        where = f"{owner} <collision>".lstrip()
        return self._shape_holder("collision", collision.name, collision.origin, collision.geometry, where)

    def _shape_holder(
        self, tag: str, name: str | None, origin: Origin | None, geometry: Geometry | None, where: str
    ) -> ET.Element:
        element = ET.Element(tag)
        if name is not None:
            element.set("name", self.text(name, f"{where} name"))
        self._origin_in(element, origin, where)
        if geometry is not None:
            ET.SubElement(element, "geometry").append(self.geometry(geometry, where))
        return element

    def geometry(self, geometry: Geometry, where: str = "<geometry>") -> ET.Element:
        """``<box>``, ``<cylinder>``, ``<sphere>`` or ``<mesh>`` (the content of ``<geometry>``).

        A mesh writes ``extra_scale_xyz`` when set (a non-uniform scale), else ``scale``
        (three times) when it is not 1."""
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
    def joint(self, joint: ir.Joint) -> ET.Element:
        """``<joint>``: origin (when not ``None``), parent, child, axis (joint types that use
        one: ``(1, 0, 0)`` when ``None``), limit, safety controller, dynamics, mimic.

        Attributes equal to URDF's default ``0`` (a positive zero) are left out of
        ``<safety_controller>``; ``k_velocity`` is always written."""
        owner = f"joint '{joint.name}'"
        if joint.type not in JOINT_TYPES:
            raise self.fail(owner, f"type '{joint.type}' is not a URDF joint type ({', '.join(JOINT_TYPES)})")
        element = ET.Element("joint", name=self.name(joint.name, "<joint name>"), type=joint.type)
        self._origin_in(element, joint.origin, owner)
        ET.SubElement(element, "parent", link=self.name(joint.parent, f"{owner} <parent link>"))
        ET.SubElement(element, "child", link=self.name(joint.child, f"{owner} <child link>"))
        if joint.type in ir.AXIS_TYPES:
            x, y, z = (float(c) for c in (joint.axis or (1.0, 0.0, 0.0)))
            if x == y == z == 0.0:
                raise self.fail(owner, "the axis has zero length (a moving joint needs a direction)")
            ET.SubElement(element, "axis", xyz=self.numbers((x, y, z), f"{owner} <axis xyz>"))
        if joint.limit is not None:
            limit = ET.SubElement(element, "limit")
            for key in ("lower", "upper", "effort", "velocity"):
                value = getattr(joint.limit, key)
                if value is not None:
                    limit.set(key, self.number(value, f"{owner} <limit {key}>"))
        safety = joint.safety_controller
        if safety is not None:
            element_safety = ET.SubElement(element, "safety_controller")
            for key in ("soft_lower_limit", "soft_upper_limit", "k_position"):
                value = getattr(safety, key)
                if not _is_positive_zero(value):
                    element_safety.set(key, self.number(value, f"{owner} <safety_controller {key}>"))
            element_safety.set("k_velocity", self.number(safety.k_velocity, f"{owner} <safety_controller k_velocity>"))
        if joint.dynamics is not None:
            dynamics = ET.SubElement(element, "dynamics")
            for key in ("damping", "friction"):
                value = getattr(joint.dynamics, key)
                if value is not None:
                    dynamics.set(key, self.number(value, f"{owner} <dynamics {key}>"))
        if joint.mimic is not None:
            mimic = joint.mimic
            ET.SubElement(
                element,
                "mimic",
                joint=self.name(mimic.joint, f"{owner} <mimic joint>"),
                multiplier=self.number(mimic.multiplier, f"{owner} <mimic multiplier>"),
                offset=self.number(mimic.offset, f"{owner} <mimic offset>"),
            )
        return element

    # -- transmissions ---------------------------------------------------------------------
    def transmission(self, transmission: ir.Transmission, hardware_interface: str = HARDWARE_INTERFACE) -> ET.Element:
        """A simple ``<transmission>``: its joint (with ``hardware_interface`` and, when not a
        positive zero, ``<offset>``) and its actuator with ``<mechanicalReduction>``.  Without
        an actuator the reduction is written directly under ``<transmission>`` (the old layout)."""
        name = transmission.name
        owner = f"transmission '{name}'" if name is not None else f"transmission of joint '{transmission.joint}'"
        element = ET.Element("transmission")
        if name is not None:
            element.set("name", self.name(name, f"{owner} name"))
        ET.SubElement(element, "type").text = SIMPLE_TRANSMISSION
        joint = ET.SubElement(element, "joint", name=self.name(transmission.joint, f"{owner} <joint name>"))
        ET.SubElement(joint, "hardwareInterface").text = self.name(hardware_interface, f"{owner} <hardwareInterface>")
        if not _is_positive_zero(transmission.offset):  # 0 is URDF's default
            ET.SubElement(joint, "offset").text = self.number(transmission.offset, f"{owner} <offset>")
        holder = element
        if transmission.actuator is not None:
            holder = ET.SubElement(element, "actuator", name=self.name(transmission.actuator, f"{owner} <actuator>"))
        ET.SubElement(holder, "mechanicalReduction").text = self.number(
            transmission.reduction, f"{owner} <mechanicalReduction>"
        )
        return element


def _is_positive_zero(value: float) -> bool:
    return value == 0.0 and math.copysign(1.0, value) > 0.0


# ---------------------------------------------------------------------- model -> IR
_Notes = dict[str, list[tuple[str, str]]]


def _model_to_ir(robot: Robot, unknown_limit: float) -> tuple[ir.Robot, _Notes]:
    """The IR of ``robot`` and, per joint, the comments to put before its elements (tag, text)."""
    if not math.isfinite(unknown_limit):
        raise UrdfWriteError(robot.name, "unknown_limit", f"{unknown_limit!r} is not a finite number")
    placeholder = float(unknown_limit)
    notes: _Notes = {}
    links = []
    for link in robot.links_in_order():
        visuals = list(link.visuals)
        links.append(
            ir.Link(
                name=link.name,
                visual=visuals[0] if visuals else None,
                collisions=list(link.collisions),
                inertial=link.inertial,
                extra_visuals=visuals[1:],
            )
        )
    joints = []
    for joint in robot.joints_in_order():
        converted, joint_notes = _joint_to_ir(joint, placeholder)
        joints.append(converted)
        if joint_notes:
            notes[joint.name] = joint_notes
    transmissions: dict[str, ir.Transmission] = {}
    for joint in robot.joints_in_order():
        for name in joint.actuators:
            transmission = _actuator_to_ir(robot.actuators[name])
            transmissions[transmission.name or transmission.joint] = transmission
    doc = ir.Robot(
        name=robot.name,
        links=links,
        joints=joints,
        transmissions=transmissions,
        materials=_shared_materials(robot),
        warnings=list(robot.warnings),
        source=robot.source,
    )
    return doc, notes


def _shared_materials(robot: Robot) -> dict[str, Material]:
    """Named materials with a definition that several visuals use, always identically."""
    uses: dict[str, list[Material]] = {}
    for link in robot.links_in_order():
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


def _joint_to_ir(joint: Joint, placeholder: float) -> tuple[ir.Joint, list[tuple[str, str]]]:
    notes: list[tuple[str, str]] = []
    limits = joint.limits or JointLimits()
    bounded = joint.type != "continuous"
    lower = limits.lower if bounded else None
    upper = limits.upper if bounded else None
    effort = _known_rate(limits.effort)
    velocity = _known_rate(limits.velocity)
    limit: ir.Limit | None = None
    if joint.type in ir.BOUNDED_TYPES or any(v is not None for v in (lower, upper, effort, velocity)):
        if effort is None or velocity is None:
            notes.append(
                (
                    "limit",
                    f" effort/velocity {placeholder!r}: a placeholder for a limit the model "
                    "does not know (URDF requires both); give real limits where they matter ",
                )
            )
        limit = ir.Limit(
            lower=lower,
            upper=upper,
            effort=placeholder if effort is None else effort,
            velocity=placeholder if velocity is None else velocity,
        )
    safety: ir.SafetyController | None = None
    soft_lower, soft_upper = (limits.soft_lower, limits.soft_upper) if bounded else (None, None)
    if soft_lower is not None or soft_upper is not None:
        notes.append(("safety_controller", _SAFETY_COMMENT))
        safety = ir.SafetyController(
            k_velocity=0.0,
            soft_lower_limit=0.0 if soft_lower is None else soft_lower,
            soft_upper_limit=0.0 if soft_upper is None else soft_upper,
        )
    converted = ir.Joint(
        name=joint.name,
        type=joint.type,
        parent=joint.parent_link,
        child=joint.child_link,
        origin=joint.origin,
        axis=joint.axis if joint.type in ir.AXIS_TYPES else None,
        limit=limit,
        dynamics=joint.dynamics,
        mimic=joint.mimic if joint.type != "fixed" else None,
        safety_controller=safety,
    )
    return converted, notes


def _actuator_to_ir(actuator: ActuatorInfo) -> ir.Transmission:
    """One simple transmission, named ``<actuator>_transmission``; a reversed drive is a negative reduction."""
    transmission = actuator.transmission
    reduction = 1.0 if transmission is None or transmission.reduction is None else transmission.reduction
    if transmission is not None and transmission.reversed:
        reduction = -reduction
    offset = 0.0 if transmission is None or transmission.offset is None else transmission.offset
    return ir.Transmission(
        name=f"{actuator.name}_transmission",
        joint=actuator.joint,
        actuator=actuator.name,
        reduction=reduction,
        offset=offset,
    )


def _known_rate(value: float | None) -> float | None:
    """An effort or velocity limit, ``None`` when unknown or unlimited (``+inf``)."""
    if value is None or value == math.inf:
        return None
    return value

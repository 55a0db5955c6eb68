"""Parse a URDF document into the intermediate representation of :mod:`bb_robot.urdf.ir`.

``parse_file(path)`` and ``parse_string(text)`` return an :class:`~bb_robot.urdf.ir.Robot`
(flat link and joint lists, SI floats as written, materials, transmissions, warnings) or
raise a :class:`~bb_robot.urdf.errors.UrdfError`.  A ``*.xacro`` file is expanded first
(see :mod:`bb_robot.urdf.xacro_loader`).  Kinematic structure (a single root, no loops,
joints naming defined links, mimic cycles) is *not* checked here: the model builder does it.

Decisions
---------
Errors (typed, with file, line, element and attribute, and what to do):

* unreadable, missing or over-64-MiB input; empty document; malformed XML (line and column);
  any ``<!DOCTYPE>``/entity/notation (``UnsafeXmlError``: nothing is expanded or fetched);
  a root element other than ``<robot>``;
* a missing identity attribute: link name, joint name or type, ``<parent link>``
  and ``<child link>`` (and the elements themselves), ``<mimic joint>``;
* a missing value attribute of an element that is present (``<mass value>``, ``<box size>``,
  ``<cylinder radius/length>``, ``<sphere radius>``, ``<mesh filename>``,
  ``<safety_controller k_velocity>``, a simple transmission's ``<joint name>``), as
  urdfdom (what ROS itself uses) does;
* any value that is not a number, has the wrong count of numbers, or is NaN or infinite
  (a silently dropped value would change the robot); a zero-length ``<axis>`` on a joint
  that uses its axis; an unknown joint type (the message lists the valid ones);
* duplicate link, joint or transmission names (the message gives both lines).

Warnings (strings in ``Robot.warnings``, ``file:line: ...``, naming the element and its
link or joint; the document still loads):

* unsupported elements, skipped: ``<gazebo>``, ``<ros2_control>`` (not a transmission),
  ``<calibration>``, transmissions that are not simple (a type other than
  ``SimpleTransmission``, several joints or actuators), any unknown element under
  ``<robot>``, ``<link>``, ``<joint>``, ``<visual>``, ``<collision>``, ``<inertial>``,
  ``<material>`` or ``<geometry>`` (e.g. ``<capsule>``), a repeated single element (the
  first one counts);
* kept in the IR's ``extra_*`` fields: a second and further ``<visual>``
  (``Link.extra_visuals``) and a non-uniform mesh scale (``Mesh.scale`` = first
  component, ``Mesh.extra_scale_xyz`` = all three);
* values kept as written but suspicious: a negative mass (kept: a kinematics user can still
  drive the robot; a simulator will refuse it), a negative size, ``rgba`` outside [0, 1],
  ``lower`` > ``upper``;
* URDF-required data missing where a default exists: no ``<limit>`` on a revolute or
  prismatic joint (``limit`` stays ``None``), a ``<limit>`` without ``effort``/``velocity``
  (``None``) or, on revolute/prismatic joints, without ``lower``/``upper`` (``None``;
  URDF reads them as 0), a visual or collision without ``<geometry>`` (``None``), an
  ``<inertial>`` without ``<mass>`` (``None``) or ``<inertia>`` (zeros), a missing inertia
  component (0), a transmission without a type (read as simple);
* a robot without a name (named after the file, or ``robot``); a ``<color>`` without
  ``rgba`` or a ``<texture>`` without ``filename`` (ignored, as urdfdom does);
* a material reference to an undefined material (kept by name, no colour); a top-level
  material defined twice differently (the first wins); a transmission naming an undefined
  joint; xacro arguments given for a file that is not xacro.

Defaults (URDF's): a missing ``<origin>`` is ``None``; inside an origin a missing ``xyz`` or
``rpy`` is zeros; a missing ``<axis>`` is ``(1, 0, 0)`` for revolute, continuous, prismatic
and planar joints, and ``axis`` is ``None`` for fixed and floating ones (whatever is
written); mimic ``multiplier`` 1 and ``offset`` 0; mesh ``scale`` 1; transmission
``reduction`` 1 and ``offset`` 0.  A visual's ``<material name="x"/>`` resolves to the
material ``x`` defined at top level (or inline in another visual); an inline colour or
texture wins over the name.  A nameless transmission is keyed by its joint's name.
Unknown attributes are ignored (real files carry many, e.g. Franka's ``<dynamics K=...>``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from math import isfinite

from . import ir
from .errors import (
    DuplicateNameError,
    InvalidValueError,
    MissingAttributeError,
    MissingElementError,
    NotUrdfError,
    UnknownJointTypeError,
    where,
)
from .xml_safe import Node, parse_xml, read_document

__all__ = ["parse_file", "parse_string"]

_ZERO: ir.Vec3 = (0.0, 0.0, 0.0)
_X_AXIS: ir.Vec3 = (1.0, 0.0, 0.0)
_JOINT_TYPES: dict[str, ir.JointType] = {kind: kind for kind in ir.JOINT_TYPES}
_AXIS_TYPES = frozenset(("revolute", "continuous", "prismatic", "planar"))
_BOUNDED_TYPES = frozenset(("revolute", "prismatic"))
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_EXAMPLES = {
    "xyz": "0 0 0.1",
    "rpy": "0 0 1.5708",
    "size": "0.1 0.2 0.3",
    "scale": "1 1 1",
    "rgba": "0.8 0.8 0.8 1",
}


# Elements that stand at most once in their parent: a later one is reported and skipped (see children_once).
_ONCE_IN_LINK = frozenset({"inertial"})
_ONCE_IN_VISUAL = frozenset({"origin", "geometry", "material"})
_ONCE_IN_COLLISION = frozenset({"origin", "geometry"})
_ONCE_IN_INERTIAL = frozenset({"origin", "mass", "inertia"})
_ONCE_IN_JOINT = frozenset({"origin", "axis", "limit", "dynamics", "mimic", "safety_controller"})


def _finite_number(text: str) -> float | None:
    """``text`` as a finite number, or ``None``: not a number, NaN, infinite, or with ``_`` digit separators
    (Python's ``float`` accepts them; a URDF number has none)."""
    if "_" in text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if isfinite(value) else None


def _owner_of(kind: str, name: str | None) -> str:
    return f"{kind} '{name}'" if name is not None else kind


def _stem(source: str | None) -> str:
    """``robot`` for ``/a/robot.urdf.xacro (xacro output)``; ``robot`` without a source."""
    if source is None:
        return "robot"
    base = os.path.basename(source.removesuffix(" (xacro output)"))
    for suffix in (".xacro", ".urdf", ".xml"):
        base = base.removesuffix(suffix)
    return base or "robot"


class _Parser:
    """One parse: the source name, the warnings so far, the materials known so far."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.warnings: list[str] = []
        self.materials: dict[str, ir.Material] = {}
        self.material_lines: dict[str, int] = {}
        self.local_materials: dict[str, ir.Material] = {}
        # visuals whose <material name="x"/> was not defined at top level: resolved at the end
        self.pending: list[tuple[ir.Link, int, str, int]] = []

    # -- reporting ---------------------------------------------------------------------

    def claim(self, seen: dict[str, int], kind: str, name: str, line: int) -> None:
        """Record that ``name`` of ``kind`` is defined at ``line``; raise DuplicateNameError if it was before."""
        first = seen.get(name)
        if first is not None:
            raise DuplicateNameError(kind=kind, name=name, first_line=first, line=line, source=self.source)
        seen[name] = line

    def warn(self, line: int, text: str) -> None:
        self.warnings.append(f"{where(self.source, line)}: {text}")

    def repeated(self, node: Node, owner: str) -> None:
        self.warn(node.line, f"{owner}: a second <{node.tag}> is ignored (only the first one counts)")

    def unknown(self, node: Node, owner: str, parent_tag: str) -> None:
        self.warn(node.line, f"{owner}: unknown element <{node.tag}> in <{parent_tag}> is not supported; skipped")

    def children_once(self, node: Node, owner: str, once: frozenset[str]) -> Iterator[Node]:
        """The children of ``node``, except a second or later child of a tag in ``once``: that one is
        reported with :meth:`repeated` and skipped (URDF lets such an element stand once; the first counts)."""
        seen: set[str] = set()
        for child in node.children:
            tag = child.tag
            if tag in once:
                if tag in seen:
                    self.repeated(child, owner)
                    continue
                seen.add(tag)
            yield child

    def missing(self, node: Node, attribute: str, owner: str | None, hint: str | None = None) -> MissingAttributeError:
        return MissingAttributeError(
            element=node.tag,
            attribute=attribute,
            owner=owner,
            source=self.source,
            line=node.line,
            hint=hint,
        )

    def bad_numbers(
        self, node: Node, attribute: str | None, text: str, owner: str | None, count: int
    ) -> InvalidValueError:
        """The error for ``text`` that is not ``count`` finite numbers."""
        parts = text.split()
        expected = "a number" if count == 1 else f"{count} numbers"
        if count > 1 and len(parts) != count:
            problem = f"expected {count} numbers, got {len(parts)}"
        else:
            problem = f"expected {expected}"
            for part in parts or [text]:
                try:
                    value = float(part)
                except ValueError:
                    problem = f"'{part}' is not a number"
                    break
                if "_" in part:
                    problem = f"'{part}' is not a plain decimal number"
                    break
                if not isfinite(value):
                    problem = f"'{part}' is not a finite number (NaN and infinity are not allowed)"
                    break
        if attribute is None:
            hint = f"Write {expected} (a plain decimal) as the text of <{node.tag}>."
        elif count == 1:
            hint = f'Write {attribute} as a finite decimal number, e.g. {attribute}="0.5".'
        else:
            example = _EXAMPLES.get(attribute, " ".join(["0"] * count))
            hint = (
                f"Write {attribute} as {count} finite decimal numbers separated by spaces, "
                f'e.g. {attribute}="{example}".'
            )
        return InvalidValueError(
            problem,
            element=node.tag,
            attribute=attribute,
            value=text,
            owner=owner,
            expected=expected,
            source=self.source,
            line=node.line,
            hint=hint,
        )

    # -- values ------------------------------------------------------------------------

    def vec3(self, node: Node, attribute: str, owner: str | None) -> ir.Vec3 | None:
        text = node.attrib.get(attribute)
        if text is None:
            return None
        parts = text.split()
        if len(parts) == 3:
            x, y, z = (_finite_number(part) for part in parts)
            if x is not None and y is not None and z is not None:
                return (x, y, z)
        raise self.bad_numbers(node, attribute, text, owner, 3)

    def number(self, node: Node, attribute: str, owner: str | None) -> float | None:
        text = node.attrib.get(attribute)
        if text is None:
            return None
        value = _finite_number(text)
        if value is None:
            raise self.bad_numbers(node, attribute, text, owner, 1)
        return value

    def required_number(self, node: Node, attribute: str, owner: str | None) -> float:
        value = self.number(node, attribute, owner)
        if value is None:
            raise self.missing(node, attribute, owner)
        return value

    def text_number(self, node: Node, owner: str | None) -> float:
        text = node.text.strip()
        value = _finite_number(text)
        if value is None:
            raise self.bad_numbers(node, None, text, owner, 1)
        return value

    def origin(self, node: Node, owner: str | None) -> ir.Origin:
        return ir.Origin(self.vec3(node, "xyz", owner) or _ZERO, self.vec3(node, "rpy", owner) or _ZERO)

    # -- robot ---------------------------------------------------------------------------

    def robot(self, root: Node) -> ir.Robot:
        if root.tag != "robot":
            raise NotUrdfError(root.tag, source=self.source, line=root.line)
        name = root.attrib.get("name")
        if not name:
            name = _stem(self.source)
            self.warn(root.line, f"<robot> has no name (URDF requires one); named '{name}' after the file")
        children = root.children

        for child in children:  # materials first: visuals may refer to later definitions
            if child.tag == "material":
                self.top_level_material(child)

        links: list[ir.Link] = []
        joints: list[ir.Joint] = []
        transmissions: dict[str, ir.Transmission] = {}
        link_lines: dict[str, int] = {}
        joint_lines: dict[str, int] = {}
        transmission_lines: dict[str, int] = {}
        for child in children:
            tag = child.tag
            if tag == "link":
                link = self.link(child)
                self.claim(link_lines, "link", link.name, child.line)
                links.append(link)
            elif tag == "joint":
                joint = self.joint(child)
                self.claim(joint_lines, "joint", joint.name, child.line)
                joints.append(joint)
            elif tag == "material":
                pass
            elif tag == "transmission":
                transmission = self.transmission(child)
                if transmission is not None:
                    key = transmission.name if transmission.name is not None else transmission.joint
                    self.claim(transmission_lines, "transmission", key, child.line)
                    transmissions[key] = transmission
            elif tag == "gazebo":
                reference = child.attrib.get("reference")
                about = f' reference="{reference}"' if reference is not None else ""
                self.warn(child.line, f"<gazebo{about}> is Gazebo-specific and not supported; skipped")
            elif tag == "ros2_control":
                label = _owner_of("ros2_control", child.attrib.get("name"))
                self.warn(
                    child.line,
                    f"<ros2_control> ({label}) is not supported (it describes hardware interfaces, "
                    "not a transmission); skipped",
                )
            else:
                self.warn(child.line, f"unknown element <{tag}> under <robot> is not supported; skipped")

        self.resolve_pending_materials()
        for key, transmission in transmissions.items():
            if transmission.joint not in joint_lines:
                self.warn(
                    transmission_lines[key],
                    f"transmission '{key}' refers to joint '{transmission.joint}', which is not defined",
                )
        return ir.Robot(
            name=name,
            links=links,
            joints=joints,
            transmissions=transmissions,
            materials=self.materials,
            warnings=self.warnings,
            source=self.source,
        )

    # -- materials ---------------------------------------------------------------------

    def material_body(self, node: Node, owner: str) -> tuple[ir.Color | None, str | None]:
        color: ir.Color | None = None
        texture: str | None = None
        for child in node.children:
            tag = child.tag
            if tag == "color":
                if color is not None:
                    self.repeated(child, owner)
                    continue
                if "rgba" not in child.attrib:
                    self.warn(child.line, f"{owner}: <color> has no rgba; ignored")
                    continue
                color = self.color(child, owner)
            elif tag == "texture":
                if texture is not None:
                    self.repeated(child, owner)
                    continue
                filename = child.attrib.get("filename")
                if not filename:
                    self.warn(child.line, f"{owner}: <texture> has no filename; ignored")
                    continue
                texture = filename
            else:
                self.unknown(child, owner, "material")
        return color, texture

    def color(self, node: Node, owner: str) -> ir.Color:
        text = node.attrib["rgba"]
        parts = text.split()
        values: list[float] = []
        if len(parts) == 4 and "_" not in text:
            try:
                values = [float(part) for part in parts]
            except ValueError:
                values = []
        if len(values) != 4 or not all(isfinite(v) for v in values):
            raise self.bad_numbers(node, "rgba", text, owner, 4)
        if not all(0.0 <= v <= 1.0 for v in values):
            self.warn(node.line, f'{owner}: <color rgba="{text}"> has components outside [0, 1]')
        return ir.Color(values[0], values[1], values[2], values[3])

    def top_level_material(self, node: Node) -> None:
        name = node.attrib.get("name")
        if not name:
            raise self.missing(
                node,
                "name",
                None,
                hint='A top-level <material> needs a name: <material name="blue">.',
            )
        owner = f"material '{name}'"
        color, texture = self.material_body(node, owner)
        material = ir.Material(name=name, color=color, texture=texture)
        known = self.materials.get(name)
        if known is None:
            self.materials[name] = material
            self.material_lines[name] = node.line
        elif known != material:
            self.warn(
                node.line,
                f"material '{name}' is defined again differently (first at line "
                f"{self.material_lines[name]}); the first definition is used",
            )

    def visual_material(self, node: Node, owner: str) -> tuple[ir.Material, bool]:
        """The visual's material and whether it still needs resolving by name."""
        name = node.attrib.get("name") or None
        color, texture = self.material_body(node, owner)
        if color is None and texture is None:
            if name is None:
                self.warn(node.line, f"{owner}: <material> has neither a name nor a colour or texture")
                return ir.Material(), False
            found = self.materials.get(name) or self.local_materials.get(name)
            if found is not None:
                return found, False
            return ir.Material(name=name), True
        material = ir.Material(name=name, color=color, texture=texture)
        if name is not None and name not in self.materials and name not in self.local_materials:
            self.local_materials[name] = material
        return material, False

    def resolve_pending_materials(self) -> None:
        for link, index, name, line in self.pending:
            found = self.local_materials.get(name)
            if found is None:
                self.warn(
                    line,
                    f"link '{link.name}' <visual>: material '{name}' is not defined; kept by name only (no colour)",
                )
                continue
            if index == 0:
                assert link.visual is not None
                link.visual = ir.Visual(link.visual.name, link.visual.origin, link.visual.geometry, found)
            else:
                visual = link.extra_visuals[index - 1]
                link.extra_visuals[index - 1] = ir.Visual(visual.name, visual.origin, visual.geometry, found)

    # -- links ---------------------------------------------------------------------------

    def link(self, node: Node) -> ir.Link:
        name = node.attrib.get("name")
        if not name:
            raise self.missing(node, "name", None, hint='Name the link: <link name="base_link">.')
        owner = f"link '{name}'"
        link = ir.Link(name=name)
        visuals: list[ir.Visual] = []
        for child in self.children_once(node, owner, _ONCE_IN_LINK):
            tag = child.tag
            if tag == "visual":
                visual, pending = self.visual(child, owner)
                if pending is not None:
                    self.pending.append((link, len(visuals), pending, child.line))
                visuals.append(visual)
            elif tag == "collision":
                link.collisions.append(self.collision(child, owner))
            elif tag == "inertial":
                link.inertial = self.inertial(child, owner)
            else:
                self.unknown(child, owner, "link")
        if visuals:
            link.visual = visuals[0]
            if len(visuals) > 1:
                link.extra_visuals = visuals[1:]
                self.warn(
                    node.line,
                    f"{owner} has {len(visuals)} <visual> elements; the first is Link.visual, "
                    f"the other {len(visuals) - 1} are kept in Link.extra_visuals",
                )
        return link

    def visual(self, node: Node, link_owner: str) -> tuple[ir.Visual, str | None]:
        """The visual, and the material name to resolve later (or ``None``)."""
        name = node.attrib.get("name")
        owner = f"{link_owner} <visual>"
        origin: ir.Origin | None = None
        geometry: ir.Geometry | None = None
        geometry_seen = False
        material: ir.Material | None = None
        pending: str | None = None
        for child in self.children_once(node, owner, _ONCE_IN_VISUAL):
            tag = child.tag
            if tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "geometry":
                geometry_seen = True
                geometry = self.geometry(child, owner)
            elif tag == "material":
                material, unresolved = self.visual_material(child, owner)
                if unresolved:
                    pending = material.name
            else:
                self.unknown(child, owner, "visual")
        if not geometry_seen:
            self.warn(node.line, f"{owner} has no <geometry> (URDF requires one); geometry is None")
        return ir.Visual(name=name, origin=origin, geometry=geometry, material=material), pending

    def collision(self, node: Node, link_owner: str) -> ir.Collision:
        name = node.attrib.get("name")
        owner = f"{link_owner} <collision>"
        origin: ir.Origin | None = None
        geometry: ir.Geometry | None = None
        geometry_seen = False
        for child in self.children_once(node, owner, _ONCE_IN_COLLISION):
            tag = child.tag
            if tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "geometry":
                geometry_seen = True
                geometry = self.geometry(child, owner)
            else:
                self.unknown(child, owner, "collision")
        if not geometry_seen:
            self.warn(node.line, f"{owner} has no <geometry> (URDF requires one); geometry is None")
        return ir.Collision(name=name, origin=origin, geometry=geometry)

    def geometry(self, node: Node, owner: str) -> ir.Geometry | None:
        shape: ir.Geometry | None = None
        for child in node.children:
            tag = child.tag
            if tag not in ("box", "cylinder", "sphere", "mesh"):
                self.warn(child.line, f"{owner}: geometry <{tag}> is not supported; skipped")
                continue
            if shape is not None:
                self.warn(child.line, f"{owner}: <geometry> holds more than one shape; <{tag}> is ignored")
                continue
            if tag == "box":
                size = self.vec3(child, "size", owner)
                if size is None:
                    raise self.missing(child, "size", owner, hint='Add size="x y z" in metres.')
                if size[0] < 0 or size[1] < 0 or size[2] < 0:
                    self.warn(child.line, f'{owner}: <box size="{child.attrib["size"]}"> is negative')
                shape = ir.Box(size=size)
            elif tag == "cylinder":
                radius = self.required_number(child, "radius", owner)
                length = self.required_number(child, "length", owner)
                if radius < 0 or length < 0:
                    self.warn(child.line, f"{owner}: <cylinder> has a negative radius or length")
                shape = ir.Cylinder(radius=radius, length=length)
            elif tag == "sphere":
                radius = self.required_number(child, "radius", owner)
                if radius < 0:
                    self.warn(child.line, f"{owner}: <sphere> has a negative radius")
                shape = ir.Sphere(radius=radius)
            else:
                shape = self.mesh(child, owner)
        if shape is None and not node.children:
            self.warn(node.line, f"{owner}: <geometry> is empty; geometry is None")
        return shape

    def mesh(self, node: Node, owner: str) -> ir.Mesh:
        filename = node.attrib.get("filename")
        if not filename:
            raise self.missing(node, "filename", owner, hint='Add filename="package://pkg/meshes/part.stl".')
        scale = self.vec3(node, "scale", owner)
        if scale is None:
            return ir.Mesh(filename=filename)
        if scale[0] == scale[1] == scale[2]:
            return ir.Mesh(filename=filename, scale=scale[0])
        self.warn(
            node.line,
            f'{owner}: <mesh scale="{node.attrib["scale"]}"> is not uniform; '
            "Mesh.scale is the first component and Mesh.extra_scale_xyz keeps all three",
        )
        return ir.Mesh(filename=filename, scale=scale[0], extra_scale_xyz=scale)

    def inertial(self, node: Node, link_owner: str) -> ir.Inertial:
        owner = f"{link_owner} <inertial>"
        origin: ir.Origin | None = None
        mass: float | None = None
        mass_seen = False
        inertia: ir.Inertia | None = None
        for child in self.children_once(node, owner, _ONCE_IN_INERTIAL):
            tag = child.tag
            if tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "mass":
                mass_seen = True
                mass = self.required_number(child, "value", owner)
                if mass < 0:
                    self.warn(
                        child.line,
                        f'{owner}: <mass value="{child.attrib["value"]}"> is negative; '
                        "kept as written (simulators will refuse it)",
                    )
            elif tag == "inertia":
                inertia = self.inertia(child, owner)
            else:
                self.unknown(child, owner, "inertial")
        if not mass_seen:
            self.warn(node.line, f"{owner} has no <mass> (URDF requires one); mass is None")
        if inertia is None:
            self.warn(node.line, f"{owner} has no <inertia> (URDF requires one); all components are 0")
            inertia = ir.Inertia()
        return ir.Inertial(origin=origin, mass=mass, inertia=inertia)

    def inertia(self, node: Node, owner: str) -> ir.Inertia:
        values: dict[str, float] = {}
        absent: list[str] = []
        for key in _INERTIA_KEYS:
            value = self.number(node, key, owner)
            if value is None:
                absent.append(key)
                value = 0.0
            values[key] = value
        if absent:
            self.warn(
                node.line,
                f"{owner}: <inertia> has no {', '.join(absent)} (URDF requires all six); read as 0",
            )
        return ir.Inertia(**values)

    # -- joints --------------------------------------------------------------------------

    def joint(self, node: Node) -> ir.Joint:
        attrib = node.attrib
        name = attrib.get("name")
        if not name:
            raise self.missing(node, "name", None, hint='Name the joint: <joint name="shoulder" type="revolute">.')
        owner = f"joint '{name}'"
        joint_type = attrib.get("type")
        if not joint_type:
            raise self.missing(
                node,
                "type",
                owner,
                hint="Give the joint a type: " + ", ".join(ir.JOINT_TYPES) + ".",
            )
        checked_type = _JOINT_TYPES.get(joint_type)
        if checked_type is None:
            raise UnknownJointTypeError(
                joint=name,
                joint_type=joint_type,
                valid_types=ir.JOINT_TYPES,
                source=self.source,
                line=node.line,
            )
        parent: str | None = None
        child_link: str | None = None
        origin: ir.Origin | None = None
        axis_node: Node | None = None
        limit: ir.Limit | None = None
        limit_node: Node | None = None
        dynamics: ir.Dynamics | None = None
        mimic: ir.Mimic | None = None
        safety: ir.SafetyController | None = None
        for child in self.children_once(node, owner, _ONCE_IN_JOINT):
            tag = child.tag
            if tag == "parent" or tag == "child":
                link_name = child.attrib.get("link")
                if not link_name:
                    raise self.missing(child, "link", owner, hint=f'Write <{tag} link="link_name"/>.')
                if (parent if tag == "parent" else child_link) is not None:
                    self.repeated(child, owner)
                elif tag == "parent":
                    parent = link_name
                else:
                    child_link = link_name
            elif tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "axis":
                axis_node = child
            elif tag == "limit":
                limit_node = child
                limit = ir.Limit(
                    lower=self.number(child, "lower", owner),
                    upper=self.number(child, "upper", owner),
                    effort=self.number(child, "effort", owner),
                    velocity=self.number(child, "velocity", owner),
                )
            elif tag == "dynamics":
                dynamics = ir.Dynamics(
                    damping=self.number(child, "damping", owner),
                    friction=self.number(child, "friction", owner),
                )
            elif tag == "mimic":
                mimicked = child.attrib.get("joint")
                if not mimicked:
                    raise self.missing(child, "joint", owner, hint='Name the joint to follow: <mimic joint="j1"/>.')
                multiplier = self.number(child, "multiplier", owner)
                offset = self.number(child, "offset", owner)
                mimic = ir.Mimic(
                    joint=mimicked,
                    multiplier=1.0 if multiplier is None else multiplier,
                    offset=0.0 if offset is None else offset,
                )
            elif tag == "safety_controller":
                safety = ir.SafetyController(
                    k_velocity=self.required_number(child, "k_velocity", owner),
                    k_position=self.number(child, "k_position", owner) or 0.0,
                    soft_lower_limit=self.number(child, "soft_lower_limit", owner) or 0.0,
                    soft_upper_limit=self.number(child, "soft_upper_limit", owner) or 0.0,
                )
            elif tag == "calibration":
                self.warn(child.line, f"{owner}: <calibration> is not supported; skipped")
            else:
                self.unknown(child, owner, "joint")

        if parent is None:
            raise MissingElementError(
                element="joint",
                child="parent",
                owner=owner,
                source=self.source,
                line=node.line,
                hint='Add <parent link="..."/> naming the link this joint hangs from.',
            )
        if child_link is None:
            raise MissingElementError(
                element="joint",
                child="child",
                owner=owner,
                source=self.source,
                line=node.line,
                hint='Add <child link="..."/> naming the link this joint moves.',
            )

        axis: ir.Vec3 | None = None
        if joint_type in _AXIS_TYPES:
            axis = _X_AXIS
            if axis_node is not None:
                written = self.vec3(axis_node, "xyz", owner)
                if written is not None:
                    if written[0] * written[0] + written[1] * written[1] + written[2] * written[2] < 1e-24:
                        raise InvalidValueError(
                            "the axis has zero length",
                            element="axis",
                            attribute="xyz",
                            value=axis_node.attrib["xyz"],
                            owner=owner,
                            expected="a non-zero vector",
                            source=self.source,
                            line=axis_node.line,
                            hint='Give the direction the joint moves along, e.g. xyz="0 0 1".',
                        )
                    axis = written

        if joint_type in _BOUNDED_TYPES:
            if limit is None:
                self.warn(
                    node.line,
                    f"{owner} ({joint_type}) has no <limit> (URDF requires one with effort "
                    "and velocity); limit is None",
                )
            else:
                assert limit_node is not None
                if limit.lower is None or limit.upper is None:
                    self.warn(
                        limit_node.line,
                        f"{owner}: <limit> has no {'lower' if limit.lower is None else 'upper'}"
                        f"{' or upper' if limit.lower is None and limit.upper is None else ''}"
                        " (URDF reads a missing bound as 0); kept as None",
                    )
                elif limit.lower > limit.upper:
                    self.warn(
                        limit_node.line,
                        f"{owner}: <limit> has lower {limit.lower} > upper {limit.upper}",
                    )
        if limit is not None and (limit.effort is None or limit.velocity is None):
            assert limit_node is not None
            absent = " and ".join(k for k in ("effort", "velocity") if getattr(limit, k) is None)
            self.warn(
                limit_node.line,
                f"{owner}: <limit> has no {absent} (URDF requires them); kept as None",
            )

        return ir.Joint(
            name=name,
            type=checked_type,
            parent=parent,
            child=child_link,
            origin=origin,
            axis=axis,
            limit=limit,
            dynamics=dynamics,
            mimic=mimic,
            safety_controller=safety,
        )

    # -- transmissions -----------------------------------------------------------------

    def transmission(self, node: Node) -> ir.Transmission | None:
        name = node.attrib.get("name") or None
        owner = _owner_of("transmission", name)
        kind = node.attrib.get("type")
        joints: list[Node] = []
        actuators: list[Node] = []
        reduction_node: Node | None = None
        for child in node.children:
            tag = child.tag
            if tag == "type":
                kind = child.text.strip()
            elif tag == "joint":
                joints.append(child)
            elif tag == "actuator":
                actuators.append(child)
            elif tag == "mechanicalReduction":  # the old (ROS 1 "pr2") layout keeps it here
                reduction_node = child
        if kind is not None and not kind.endswith("SimpleTransmission"):
            self.warn(
                node.line,
                f"{owner}: type '{kind}' is not supported (only simple transmissions); skipped",
            )
            return None
        if len(joints) != 1 or len(actuators) > 1:
            self.warn(
                node.line,
                f"{owner} has {len(joints)} joints and {len(actuators)} actuators; only simple "
                "transmissions (one joint, at most one actuator) are supported; skipped",
            )
            return None
        if kind is None:
            self.warn(node.line, f"{owner} has no <type>; read as a simple transmission")
        joint_node = joints[0]
        joint_name = joint_node.attrib.get("name")
        if not joint_name:
            raise self.missing(joint_node, "name", owner, hint='Name the joint: <joint name="j1">.')
        offset = 0.0
        for child in joint_node.children:
            if child.tag == "offset":
                offset = self.text_number(child, owner)
        actuator: str | None = None
        if actuators:
            actuator = actuators[0].attrib.get("name") or None
            for child in actuators[0].children:
                if child.tag == "mechanicalReduction":
                    reduction_node = child
        reduction = 1.0 if reduction_node is None else self.text_number(reduction_node, owner)
        return ir.Transmission(name=name, joint=joint_name, actuator=actuator, reduction=reduction, offset=offset)


def _parse_document(data: str | bytes, source: str | None) -> ir.Robot:
    root = parse_xml(data, source)
    assert root is not None
    return _Parser(source).robot(root)


def parse_string(text: str | bytes, *, source: str | os.PathLike[str] | None = None) -> ir.Robot:
    """Parse a URDF document held in ``text``.

    ``source`` names the document in errors and warnings and becomes ``Robot.source``
    (``None``: messages say ``<string>``).

    :raises UrdfError: (a subclass) if the document cannot be used; see the module docs.
    """
    return _parse_document(text, None if source is None else os.fspath(source))


def parse_file(path: str | os.PathLike[str], xacro_args: Mapping[str, str] | None = None) -> ir.Robot:
    """Parse the URDF file at ``path``; a ``*.xacro`` file is expanded with xacro first,
    with ``xacro_args`` as its ``name:=value`` arguments.

    Messages about an expanded file give line numbers of xacro's output, labelled
    ``path (xacro output)``; ``Robot.source`` is ``path``.

    :raises UrdfFileError: the file is missing or unreadable.
    :raises XacroError: xacro could not expand the file.
    :raises UrdfError: (another subclass) if the document cannot be used.
    """
    from .xacro_loader import expand_xacro, is_xacro_path

    name = os.fspath(path)
    if is_xacro_path(name):
        text = expand_xacro(name, xacro_args)
        robot = _parse_document(text, f"{name} (xacro output)")
        robot.source = name
        return robot
    robot = _parse_document(read_document(name), name)
    if xacro_args:
        robot.warnings.append(
            f"{name}: xacro arguments ({', '.join(sorted(xacro_args))}) were ignored: the file is not a .xacro file"
        )
    return robot

"""Reading the parts of an SDF model: links (visuals, collisions, inertial), joints (axes,
limits, mimic), frames and plugins.

Each function reads one element with an :class:`~bb_robot.sdf.values.ElementReader` and
appends what it skips or converts to ``warnings``.  An axis ``<xyz>`` is normalised (zero
length is an error).  Joint limits keep SDF's defaults of the file's version (1.9 and
older: lower -1e16, upper 1e16, effort -1, velocity -1; 1.10+: ±inf) as written.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from bb_robot.model.geometry import Inertia, Vec3
from bb_robot.sdf.elements import (
    JOINT_TYPES,
    SdfAxis,
    SdfCollision,
    SdfFrame,
    SdfInertial,
    SdfJoint,
    SdfLink,
    SdfMimic,
    SdfPlugin,
    SdfVisual,
)
from bb_robot.sdf.errors import InvalidValueError, SdfStructureError, where
from bb_robot.sdf.values import ElementReader, child_elements, first_child, read_geometry, read_material
from bb_robot.xmlsafe import Node


def inner_xml(node: Node) -> str:
    """Return the XML inside ``node`` as text (its own text first, then its children)."""
    parts: list[str] = []
    if node.text.strip():
        parts.append(escape(node.text.strip()))
    for child in node.children:
        parts.append(_outer_xml(child))
    return "".join(parts)


def _outer_xml(node: Node) -> str:
    attributes = "".join(f" {key}={quoteattr(value)}" for key, value in node.attrib.items())
    inner = inner_xml(node)
    if not inner:
        return f"<{node.tag}{attributes}/>"
    return f"<{node.tag}{attributes}>{inner}</{node.tag}>"


def read_plugin(reader: ElementReader, node: Node, from_include: bool = False) -> SdfPlugin:
    """Read a ``<plugin>``; its inner XML is kept as text (``from_include``: written in an ``<include>``)."""
    return SdfPlugin(
        name=node.attrib.get("name", ""),
        filename=node.attrib.get("filename", ""),
        xml=inner_xml(node),
        where=reader.at(node),
        from_include=from_include,
    )


def _friction(reader: ElementReader, collision: Node, owner: tuple[str, str]) -> float | None:
    """A collision's ``<surface><friction><ode><mu>``, or ``None`` when it is not written."""
    node: Node | None = collision
    for tag in ("surface", "friction", "ode"):
        node = first_child(node, tag) if node is not None else None
    if node is None or first_child(node, "mu") is None:
        return None
    mu = reader.child_number(node, "mu", math.nan, owner, finite=True)
    return None if math.isnan(mu) else mu


def read_link(reader: ElementReader, node: Node, name: str, base_dir: Path | None, warnings: list[str]) -> SdfLink:
    """Read a ``<link>`` called ``name``.

    Args:
        reader: The file's reader.
        node: The element.
        name: Its name (as the model records it).
        base_dir: The directory of its file, where its relative mesh URIs start.
        warnings: What is skipped or ignored is appended here.

    Returns:
        The link with its visuals, collisions and inertial (SDF's defaults where absent).

    Raises:
        SdfStructureError: A visual, collision or mesh misses what it needs.
        InvalidValueError: A value that is not what SDFormat allows.
    """
    owner = ("link", name)
    visuals = []
    for v in child_elements(node, "visual"):
        vname = reader.name(v, "visual")
        vowner = ("visual", f"{name}/{vname}")
        visuals.append(
            SdfVisual(
                vname,
                reader.pose(first_child(v, "pose"), v, vowner),
                read_geometry(reader, first_child(v, "geometry"), vowner, warnings),
                read_material(reader, first_child(v, "material"), vowner),
                reader.at(v),
            )
        )
    collisions = []
    for c in child_elements(node, "collision"):
        cname = reader.name(c, "collision")
        cowner = ("collision", f"{name}/{cname}")
        collisions.append(
            SdfCollision(
                cname,
                reader.pose(first_child(c, "pose"), c, cowner),
                read_geometry(reader, first_child(c, "geometry"), cowner, warnings),
                reader.at(c),
                _friction(reader, c, cowner),
            )
        )
    inertial = None
    inertial_node = first_child(node, "inertial")
    if inertial_node is not None:
        ipose = reader.pose(first_child(inertial_node, "pose"), inertial_node, owner)
        if ipose.relative_to:
            warnings.append(
                f"{ipose.where}: link '{name}' <inertial><pose relative_to>: inertial poses are always in "
                "the link frame; relative_to is ignored"
            )
            ipose = replace(ipose, relative_to="")
        inertia_node = first_child(inertial_node, "inertia")
        values: dict[str, float] = {}
        for key in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
            default = 1.0 if key in ("ixx", "iyy", "izz") else 0.0  # SDF's defaults
            values[key] = (
                default if inertia_node is None else reader.child_number(inertia_node, key, default, owner, finite=True)
            )
        inertial = SdfInertial(
            ipose,
            reader.child_number(inertial_node, "mass", 1.0, owner, finite=True),
            Inertia(**values),
        )
    return SdfLink(
        name,
        reader.pose(first_child(node, "pose"), node, owner),
        tuple(visuals),
        tuple(collisions),
        inertial,
        reader.at(node),
        base_dir,
    )


def read_axis(reader: ElementReader, node: Node | None, joint: str, which: str, warnings: list[str]) -> SdfAxis | None:
    """Read a joint's ``<axis>`` or ``<axis2>`` (``which``); ``None`` when ``node`` is ``None``.

    The direction is normalised; limits keep the defaults of the file's SDF version.

    Raises:
        InvalidValueError: A zero-length ``<xyz>`` or a value that is not a number.
        SdfStructureError: A ``<mimic>`` without its ``joint`` attribute.
    """
    if node is None:
        return None
    owner = ("joint", joint)
    xyz_node = first_child(node, "xyz")
    xyz: Vec3 = (0.0, 0.0, 1.0)
    expressed_in = ""
    if xyz_node is not None:
        xyz = reader.vector(xyz_node, owner)
        expressed_in = xyz_node.attrib.get("expressed_in", "").strip()
    norm = math.sqrt(sum(c * c for c in xyz))
    if norm == 0.0:
        raise InvalidValueError(
            f"<{which}><xyz> has zero length",
            value=xyz_node.text if xyz_node is not None else "",
            source=reader.source,
            line=xyz_node.line if xyz_node is not None else node.line,
            element="joint",
            name=joint,
            hint="Give the direction of the joint axis, e.g. <xyz>0 0 1</xyz>.",
        )
    xyz = (xyz[0] / norm, xyz[1] / norm, xyz[2] / norm)
    parent_frame = first_child(node, "use_parent_model_frame")
    if reader.version < (1, 5):
        expressed_in = "__model__"
    elif parent_frame is not None:
        if reader.version < (1, 7):
            if reader.boolean(parent_frame, owner):
                expressed_in = "__model__"
        else:
            warnings.append(
                f"{where(reader.source, parent_frame.line)}: joint '{joint}': <use_parent_model_frame> is not "
                'SDFormat 1.7+; ignored (write <xyz expressed_in="__model__">)'
            )
    unbounded = math.inf if reader.version >= (1, 10) else 1e16
    unlimited = math.inf if reader.version >= (1, 10) else -1.0
    limit = first_child(node, "limit")
    dynamics = first_child(node, "dynamics")
    mimic = None
    mimic_node = first_child(node, "mimic")
    if mimic_node is not None:
        leader = mimic_node.attrib.get("joint", "").strip()
        if not leader:
            raise SdfStructureError(
                "<mimic> needs a joint attribute naming the leader joint",
                source=reader.source,
                line=mimic_node.line,
                element="joint",
                name=joint,
                hint='Write <mimic joint="leader_joint">.',
            )
        mimic = SdfMimic(
            leader,
            mimic_node.attrib.get("axis", "axis").strip() or "axis",
            reader.child_number(mimic_node, "multiplier", 1.0, owner, finite=True),
            reader.child_number(mimic_node, "offset", 0.0, owner, finite=True),
            reader.child_number(mimic_node, "reference", 0.0, owner, finite=True),
        )

    def lim(tag: str, default: float) -> float:
        if limit is None:
            return default
        return reader.child_number(limit, tag, default, owner, finite=False)

    def dyn(tag: str) -> float:
        return 0.0 if dynamics is None else reader.child_number(dynamics, tag, 0.0, owner, finite=True)

    return SdfAxis(
        xyz=xyz,
        expressed_in=expressed_in,
        lower=lim("lower", -unbounded),
        upper=lim("upper", unbounded),
        effort=lim("effort", unlimited),
        velocity=lim("velocity", unlimited),
        damping=dyn("damping"),
        friction=dyn("friction"),
        spring_reference=dyn("spring_reference"),
        spring_stiffness=dyn("spring_stiffness"),
        mimic=mimic,
        where=reader.at(node),
    )


def read_joint(reader: ElementReader, node: Node, name: str, warnings: list[str]) -> SdfJoint:
    """Read a ``<joint>`` called ``name``: type, parent, child, pose and axes.

    Raises:
        SdfStructureError: No type, ``<parent>`` or ``<child>``.
        InvalidValueError: An unknown joint type, or a bad value in its pose or axes.
    """
    jtype = node.attrib.get("type", "").strip().lower()
    if not jtype:
        raise SdfStructureError(
            "a <joint> needs a type attribute",
            source=reader.source,
            line=node.line,
            element="joint",
            name=name,
            hint=f'Write type="...", one of {", ".join(JOINT_TYPES)}.',
        )
    if jtype not in JOINT_TYPES:
        raise InvalidValueError(
            f"unknown joint type '{jtype}'",
            value=jtype,
            source=reader.source,
            line=node.line,
            element="joint",
            name=name,
            hint=f"Use one of {', '.join(JOINT_TYPES)}.",
        )
    ends = {}
    for tag in ("parent", "child"):
        element = first_child(node, tag)
        if element is None or not element.text.strip():
            raise SdfStructureError(
                f"a <joint> needs a <{tag}>",
                source=reader.source,
                line=node.line,
                element="joint",
                name=name,
                hint=f"Write <{tag}>link_name</{tag}>.",
            )
        ends[tag] = element.text.strip()
    return SdfJoint(
        name=name,
        type=jtype,
        parent=ends["parent"],
        child=ends["child"],
        pose=reader.pose(first_child(node, "pose"), node, ("joint", name)),
        axis=read_axis(reader, first_child(node, "axis"), name, "axis", warnings),
        axis2=read_axis(reader, first_child(node, "axis2"), name, "axis2", warnings),
        where=reader.at(node),
    )


def read_frame(reader: ElementReader, node: Node, name: str) -> SdfFrame:
    """Read a ``<frame>`` called ``name`` (``attached_to`` and pose as written)."""
    return SdfFrame(
        name,
        node.attrib.get("attached_to", "").strip(),
        reader.pose(first_child(node, "pose"), node, ("frame", name)),
        reader.at(node),
    )

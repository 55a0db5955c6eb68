"""The elements of the authoring API: describe a robot in Python, get URDF.

Every element is an immutable value that checks itself when it is made: a value URDF
cannot hold or that makes no sense (a negative mass or size, an rgba component outside
[0, 1], NaN or infinity, a zero axis, an unknown joint type, a joint naming a link the
robot does not define, two links of one name...) raises :class:`AuthoringError` (a
``ValueError``) whose message names the element and the value.

``to_xml(indent="")`` gives the element's URDF text; :meth:`Robot.to_urdf` the whole
document.  The text is written by :class:`bb_robot.urdf.writer.UrdfElements` from the
element's intermediate representation (``to_ir()``, :mod:`bb_robot.urdf.ir`), the same
code that writes URDF for the rest of bb_robot: numbers are written with :func:`repr`, so
they read back exactly.  :meth:`Robot.to_model` builds the robot model through the URDF
builder.

This module holds the :class:`Robot` and re-exports every element; they are defined by
seam: :mod:`~bb_robot.authoring.shapes` (origins, geometry, materials, visuals,
collisions), :mod:`~bb_robot.authoring.links` (inertia and links),
:mod:`~bb_robot.authoring.joints` (joints and transmissions), on the checks of
:mod:`~bb_robot.authoring.checks`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bb_robot.authoring.checks import AuthoringError, check_instance, check_name, set_field
from bb_robot.authoring.joints import (
    POSITION_INTERFACE,
    Dynamics,
    Joint,
    Limit,
    Mimic,
    SafetyController,
    Transmission,
)
from bb_robot.authoring.links import Inertial, InertiaMatrix, Link
from bb_robot.authoring.shapes import Box, Collision, Cylinder, Geometry, Material, Mesh, Origin, Sphere, Visual
from bb_robot.model import geometry as g
from bb_robot.model.validation import find_problems
from bb_robot.urdf import ir
from bb_robot.urdf.writer import UrdfElements, render, urdf_document

if TYPE_CHECKING:
    from bb_robot.model.robot import Robot as ModelRobot

__all__ = [
    "POSITION_INTERFACE",
    "WORLD",
    "AuthoringError",
    "Box",
    "Collision",
    "Cylinder",
    "Dynamics",
    "Geometry",
    "InertiaMatrix",
    "Inertial",
    "Joint",
    "Limit",
    "Link",
    "Material",
    "Mesh",
    "Mimic",
    "Origin",
    "Robot",
    "SafetyController",
    "Sphere",
    "Transmission",
    "Visual",
]

WORLD = "world"
"""The world anchor: a joint may name ``parent=WORLD`` without the robot defining a link ``world``."""


# ------------------------------------------------------------------------------ robot
@dataclass(frozen=True)
class Robot:
    """A robot: links, joints, transmissions and the materials defined at the top.

    Checked when made: a non-empty name; unique link, joint, transmission and material
    names; every joint's parent and child defined (a parent :data:`WORLD` may be left
    undefined: the world anchor); the links form one tree (one parent joint per link, no
    loops, one root).  Left as written, like URDF parsers do, and reported by
    :meth:`to_model`: a mimic of a joint the robot does not define (cut-down descriptions
    have them) or mimics following each other in a loop, and a transmission of an undefined
    joint (which the model skips with a warning).

    ``materials``: ``None`` (the default) defines every named material with a colour or
    texture that the visuals use once at the top and references it by name (two different
    materials of one name, or a reference to a name nothing defines, are errors).  A list
    defines exactly those materials at the top; visuals whose material equals one of them
    reference it, the others are written inside the visual (this keeps an imported
    file's materials as it had them).
    """

    name: str
    links: tuple[Link, ...] = ()
    joints: tuple[Joint, ...] = ()
    transmissions: tuple[Transmission, ...] = ()
    materials: tuple[Material, ...] | None = None
    _top: dict[str, Material] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        name: str,
        links: Iterable[Link] = (),
        joints: Iterable[Joint] = (),
        transmissions: Iterable[Transmission] = (),
        materials: Iterable[Material] | None = None,
    ) -> None:
        name = check_name("Robot name", name)
        set_field(self, "name", name)
        label = f"Robot {name!r}"
        links = tuple(links)
        joints = tuple(joints)
        transmissions = tuple(transmissions)
        for kind, items, cls in (
            ("links", links, Link),
            ("joints", joints, Joint),
            ("transmissions", transmissions, Transmission),
        ):
            for item in items:
                check_instance(f"{label} {kind}", item, (cls,))
        _unique(label, "link", [link.name for link in links])
        _unique(label, "joint", [joint.name for joint in joints])
        _unique(label, "transmission", [t.key for t in transmissions])
        set_field(self, "links", links)
        set_field(self, "joints", joints)
        set_field(self, "transmissions", transmissions)
        set_field(self, "materials", None)
        if materials is not None:
            materials = tuple(materials)
            for material in materials:
                check_instance(f"{label} materials", material, (Material,))
                if material.name is None:
                    raise AuthoringError(f"{label}: a material defined at the top needs a name (got {material!r})")
            _unique(label, "material", [m.name or "" for m in materials])
            set_field(self, "materials", materials)
        self._check_tree(label)
        set_field(self, "_top", self._top_materials(label))

    # -- checks ------------------------------------------------------------------------------
    def _check_tree(self, label: str) -> None:
        defined = {link.name for link in self.links}
        problems: list[str] = []
        for joint in self.joints:
            for role, link in (("parent", joint.parent), ("child", joint.child)):
                if link not in defined and not (role == "parent" and link == WORLD):
                    problems.append(f"joint {joint.name!r} names {role} link {link!r}, which the robot does not define")
        if problems:
            known = ", ".join(repr(n) for n in sorted(defined)) or "none"
            raise AuthoringError(f"{label}: " + "; ".join(problems) + f" (its links: {known})")
        if not self.links:
            return
        names = [link.name for link in self.links]
        if WORLD not in defined and any(joint.parent == WORLD for joint in self.joints):
            names.insert(0, WORLD)
        edges = [(joint.name, joint.parent, joint.child) for joint in self.joints]
        tree_problems, _ = find_problems(names, edges, {})
        if tree_problems:
            raise AuthoringError(f"{label}: " + "; ".join(p.message for p in tree_problems))

    def _top_materials(self, label: str) -> dict[str, Material]:
        if self.materials is not None:
            return {m.name: m for m in self.materials if m.name is not None}
        top: dict[str, Material] = {}
        references: list[tuple[str, str]] = []
        for link in self.links:
            for visual in link.visuals:
                material = visual.material
                if material is None or material.name is None:
                    continue
                if material.is_reference:
                    references.append((link.name, material.name))
                    continue
                known = top.setdefault(material.name, material)
                if known != material:
                    raise AuthoringError(
                        f"{label}: material {material.name!r} has two definitions ({known!r} and {material!r}); "
                        "give them different names, or pass materials=[...] to write the others inside their visuals"
                    )
        for link_name, material_name in references:
            if material_name not in top:
                raise AuthoringError(
                    f"{label}: a visual of link {link_name!r} refers to material {material_name!r}, which no "
                    "visual defines (give it rgba or texture, or pass materials=[...] that define it)"
                )
        return top

    # -- output ------------------------------------------------------------------------------
    @property
    def top_materials(self) -> tuple[Material, ...]:
        """The materials written at the top of the document (``materials``, or the ones collected)."""
        return tuple(self._top.values())

    def link(self, name: str) -> Link:
        """The link called ``name`` (``KeyError`` if there is none)."""
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(name)

    def joint(self, name: str) -> Joint:
        """The joint called ``name`` (``KeyError`` if there is none)."""
        for joint in self.joints:
            if joint.name == name:
                return joint
        raise KeyError(name)

    def to_ir(self) -> ir.Robot:
        """The intermediate representation the URDF text parses to.

        As the parser does, a material reference (a name, no colour or texture) becomes the
        material of that name defined at the top, else the first one defined in a visual."""
        top = {m.name: m.to_ir() for m in self.top_materials if m.name is not None}
        defined = dict(top)
        for link in self.links:
            for visual in link.visuals:
                material = visual.material
                if material is not None and material.name is not None and not material.is_reference:
                    defined.setdefault(material.name, material.to_ir())
        links = []
        for link in self.links:
            converted = link.to_ir()
            visuals = [_resolved(v, defined) for v in (converted.visual, *converted.extra_visuals) if v is not None]
            converted.visual = visuals[0] if visuals else None
            converted.extra_visuals = visuals[1:]
            links.append(converted)
        return ir.Robot(
            name=self.name,
            links=links,
            joints=[joint.to_ir() for joint in self.joints],
            transmissions={t.key: t.to_ir() for t in self.transmissions},
            materials=top,
        )

    def _element(self, comment: str | None) -> ET.Element:
        doc = self.to_ir()
        interfaces: Mapping[str, str] = {t.key: t.hardware_interface for t in self.transmissions}
        return UrdfElements(self.name, None, doc.materials).robot(doc, hardware_interface=interfaces, comment=comment)

    def to_xml(self, indent: str = "") -> str:
        """The ``<robot>`` element: top-level materials, links, joints, transmissions."""
        return render(self._element(None), indent)

    def to_urdf(self, comment: str | None = None) -> str:
        """The URDF document: XML declaration, ``<robot>`` (with ``comment`` as an XML comment
        at its top, e.g. "generated by …"), final newline."""
        if comment is not None and ("--" in comment or comment.endswith("-")):
            raise AuthoringError(f"Robot {self.name!r}: an XML comment cannot hold '--' or end with '-': {comment!r}")
        return urdf_document(self._element(comment))

    def to_model(self, *, drop_world: bool = False) -> ModelRobot:
        """The robot model (:class:`bb_robot.model.robot.Robot`), built by the URDF builder
        (:func:`bb_robot.urdf.builder.build_robot`) from :meth:`to_ir`; raises
        :class:`~bb_robot.model.errors.InvalidRobot` for what the model refuses (e.g. a mimic
        of an undefined joint)."""
        from bb_robot.urdf.builder import build_robot

        return build_robot(self.to_ir(), drop_world=drop_world)


def _resolved(visual: g.Visual, defined: Mapping[str, g.Material]) -> g.Visual:
    material = visual.material
    if material is None or material.name is None or material.color is not None or material.texture is not None:
        return visual
    found = defined.get(material.name)
    return visual if found is None else g.Visual(visual.name, visual.origin, visual.geometry, found)


def _unique(label: str, kind: str, names: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        if name in seen:
            raise AuthoringError(f"{label}: two {kind}s are named {name!r} (numbers {seen[name] + 1} and {index + 1})")
        seen[name] = index

"""Parse a URDF document into the intermediate representation of :mod:`bb_robot.urdf.ir`.

``parse_file(path)`` and ``parse_string(text)`` return an :class:`~bb_robot.urdf.ir.Robot`
(flat link and joint lists, SI floats as written, materials, transmissions, warnings) or
raise a :class:`~bb_robot.urdf.errors.UrdfError`.  A ``*.xacro`` file is expanded first
(see :mod:`bb_robot.urdf.xacro_loader`).  Kinematic structure (a single root, no loops,
joints naming defined links, mimic cycles) is *not* checked here: the model builder does it.

This module is the driver: it reads ``<robot>`` and hands each element to the reader of its
family, :mod:`~bb_robot.urdf.links` (links, geometry, inertials, materials),
:mod:`~bb_robot.urdf.joints` and :mod:`~bb_robot.urdf.transmissions`, all built on
:mod:`~bb_robot.urdf.reading` (warnings, duplicate names, numbers and vectors).

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
  ``<safety_controller k_velocity>``), as urdfdom (what ROS itself uses) does;
* any value that is not a number, has the wrong count of numbers, or is NaN or infinite
  (a silently dropped value would change the robot) — except inside a transmission or a
  material (below); a zero-length ``<axis>`` on a joint
  that uses its axis; an unknown joint type (the message lists the valid ones);
* duplicate link, joint or transmission names (the message gives both lines).

Warnings (strings in ``Robot.warnings``, ``file:line: ...``, naming the element and its
link or joint; the document still loads):

* a problem inside an element the kinematics do not need (TF and driving the joints): a
  transmission (a reduction that is not a number, a ``<joint>`` without a name) is dropped;
  a ``<material>`` without a name or a ``<color>`` whose ``rgba`` is not 4 numbers is dropped;

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
from collections.abc import Mapping

from . import ir
from .errors import NotUrdfError
from .joints import JointReader
from .links import LinkReader
from .reading import owner_of
from .transmissions import TransmissionReader
from .xml_safe import Node, parse_xml, read_document

__all__ = ["parse_file", "parse_string"]


def _stem(source: str | None) -> str:
    """``robot`` for ``/a/robot.urdf.xacro (xacro output)``; ``robot`` without a source."""
    if source is None:
        return "robot"
    base = os.path.basename(source.removesuffix(" (xacro output)"))
    for suffix in (".xacro", ".urdf", ".xml"):
        base = base.removesuffix(suffix)
    return base or "robot"


class _Parser(LinkReader, JointReader, TransmissionReader):
    """One parse: reads the ``<robot>`` element with the readers of each element family
    (:mod:`~bb_robot.urdf.links`, :mod:`~bb_robot.urdf.joints`, :mod:`~bb_robot.urdf.transmissions`)."""

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
                label = owner_of("ros2_control", child.attrib.get("name"))
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


def _parse_document(data: str | bytes, source: str | None) -> ir.Robot:
    root = parse_xml(data, source)
    assert root is not None
    return _Parser(source).robot(root)


def parse_string(text: str | bytes, *, source: str | os.PathLike[str] | None = None) -> ir.Robot:
    """Parse a URDF document held in ``text``.

    Args:
        text: The document.
        source: Names the document in errors and warnings and becomes ``Robot.source``
            (``None``: messages say ``<string>``).

    Returns:
        The intermediate representation, with the warnings.

    Raises:
        UrdfError: (a subclass) if the document cannot be used; see the module docs.
    """
    return _parse_document(text, None if source is None else os.fspath(source))


def parse_file(path: str | os.PathLike[str], xacro_args: Mapping[str, str] | None = None) -> ir.Robot:
    """Parse the URDF file at ``path``; a ``*.xacro`` file is expanded with xacro first.

    Messages about an expanded file give line numbers of xacro's output, labelled
    ``path (xacro output)``; ``Robot.source`` is ``path``.

    Args:
        path: The file.
        xacro_args: xacro's ``name:=value`` arguments (a warning for a file that is not xacro).

    Returns:
        The intermediate representation, with the warnings.

    Raises:
        UrdfFileError: The file is missing or unreadable.
        XacroError: xacro could not expand the file.
        UrdfError: (another subclass) if the document cannot be used.
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

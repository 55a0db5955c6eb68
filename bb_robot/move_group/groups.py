"""Planning groups, as MoveIt names them: the SRDF's ``<group>`` elements, else the driven chain as one group.

A :class:`Group` is a name, its joints (root first) and its tip link (the link a pose goal or a
Cartesian path moves when the request names none).  :func:`read_groups` reads an SRDF's groups:

- ``<chain base_link="..." tip_link="..."/>``: the movable joints from the base to the tip;
- ``<joint name="..."/>``: that joint, when it moves;
- ``<link name="..."/>``: the movable joint whose child the link is;
- ``<group name="..."/>`` inside a group: that group's joints (a subgroup defined in the file).

A group whose joints do not form one serial chain can still be planned in joint space; its pose
goals need the request to name a link of a chain.  :func:`default_group` is the group served
when the SRDF has none: the robot's serial chain (the joints :func:`bb_robot.planning.plan.default_joints`
plans), named ``planning.group_name`` (``arm`` by default).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bb_robot.errors import BbRobotError
from bb_robot.model.robot import Robot
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.serial_chain import default_tip
from bb_robot.planning.errors import PlanningError
from bb_robot.xmlsafe import XmlError, parse_xml

#: Joint types that move (fixed and floating joints are not planned).
MOVABLE = ("revolute", "continuous", "prismatic")


class GroupError(PlanningError):
    """An SRDF group that cannot be used: an unknown link or joint, a chain that does not exist, a cycle."""


@dataclass(frozen=True)
class Group:
    """A planning group.

    Attributes:
        name: as requests name it.
        joints: the planned joints, root first.
        tip: the link a pose goal moves by default (a chain's tip; else the last joint's child).
    """

    name: str
    joints: tuple[str, ...]
    tip: str


def _movable(robot: Robot, names: Iterable[str]) -> list[str]:
    return [n for n in names if n in robot.joints and robot.joints[n].type in MOVABLE and robot.joints[n].mimic is None]


def _chain_joints(robot: Robot, base: str, tip: str, where: str) -> list[str]:
    for link in (base, tip):
        if link not in robot.links:
            raise GroupError(f"{where}: <chain> names link '{link}', which robot '{robot.name}' does not have")
    try:
        chain = SerialManipulator.from_robot(robot, tip=tip, strict=False, base=base)
    except BbRobotError as error:
        raise GroupError(f"{where}: <chain base_link='{base}' tip_link='{tip}'>: {error}") from None
    return list(chain.joint_names)


def _parent_joint(robot: Robot, link: str, where: str) -> str | None:
    if link not in robot.links:
        raise GroupError(f"{where}: <link> names '{link}', which robot '{robot.name}' does not have")
    return robot.links[link].parent_joint


def read_groups(text: str | bytes, robot: Robot, source: str = "SRDF") -> dict[str, Group]:
    """The planning groups of an SRDF document.

    Args:
        text: the SRDF.
        robot: the robot it describes.
        source: its name in messages.

    Returns:
        Group name → group, in document order; empty when the SRDF has no ``<group>``.

    Raises:
        GroupError: malformed XML, a group without a name, an unknown link or joint, a chain that
            does not exist, a subgroup that is not defined or refers back to itself; each names the
            file, the line and the group.
    """
    try:
        root = parse_xml(text, source)
    except XmlError as error:
        raise GroupError(f"{source}: {error}") from None
    if root is None:
        return {}
    elements = {}
    for node in root.children:
        if node.tag == "group":
            name = node.attrib.get("name", "")
            if not name:
                raise GroupError(f"{source}: line {node.line}: <group> needs a name")
            elements[name] = node
    resolved: dict[str, list[str]] = {}

    def joints_of(name: str, path: tuple[str, ...]) -> list[str]:
        if name in resolved:
            return resolved[name]
        if name not in elements:
            raise GroupError(
                f"{source}: group '{path[-1] if path else name}' includes group '{name}', which is not defined"
            )
        if name in path:
            raise GroupError(f"{source}: group '{name}' includes itself (through {' → '.join(path)})")
        node = elements[name]
        where = f"{source}: line {node.line}: group '{name}'"
        found: list[str] = []
        for child in node.children:
            if child.tag == "chain":
                found += _chain_joints(
                    robot, child.attrib.get("base_link", ""), child.attrib.get("tip_link", ""), where
                )
            elif child.tag == "joint":
                joint = child.attrib.get("name", "")
                if joint not in robot.joints:
                    raise GroupError(f"{where}: <joint> names '{joint}', which robot '{robot.name}' does not have")
                found.append(joint)
            elif child.tag == "link":
                parent = _parent_joint(robot, child.attrib.get("name", ""), where)
                if parent is not None:
                    found.append(parent)
            elif child.tag == "group":
                found += joints_of(child.attrib.get("name", ""), (*path, name))
        resolved[name] = list(dict.fromkeys(_movable(robot, found)))
        return resolved[name]

    groups: dict[str, Group] = {}
    for name, node in elements.items():
        joints = joints_of(name, ())
        if not joints:
            continue  # an end-effector group of fixed links: nothing to plan
        chains = [c for c in node.children if c.tag == "chain"]
        tip = chains[-1].attrib["tip_link"] if chains else robot.joints[joints[-1]].child_link
        groups[name] = Group(name, tuple(joints), tip)
    return groups


def default_group(robot: Robot, name: str, tip: str = "") -> Group:
    """The group served when the SRDF defines none: the robot's serial chain.

    Args:
        robot: the model.
        name: the group's name (``planning.group_name``).
        tip: the chain's tip (``""``: the deepest tool frame, as ``bb-robot show`` names the end effector).

    Returns:
        The group.

    Raises:
        GroupError: the robot has no serial chain to that tip, or nothing that moves.
    """
    end = tip or default_tip(robot)
    if end not in robot.links:
        raise GroupError(f"group '{name}': robot '{robot.name}' has no link '{end}' (planning.tip)")
    try:
        chain = SerialManipulator.from_robot(robot, tip=end, strict=False)
    except BbRobotError as error:
        raise GroupError(f"group '{name}': robot '{robot.name}' has no serial chain to '{end}': {error}") from None
    joints = _movable(robot, chain.joint_names)
    if not joints:
        raise GroupError(f"group '{name}': robot '{robot.name}' has no movable joint in its chain to '{end}'")
    return Group(name, tuple(joints), end)


def choose_group(groups: Mapping[str, Group], requested: str, default: str) -> Group | None:
    """The group a request names: ``requested``, or ``default`` when it is empty; ``None`` when unknown."""
    return groups.get(requested or default)

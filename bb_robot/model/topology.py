"""Precomputed topology of a kinematic tree (seed 001, ``BB.Robot.Topology``).

Paths are root-relative and interleave links and joints, starting at the root
link and ending at the node they name: ``("base", "shoulder", "upper_arm")``.
Even positions hold links, odd positions hold joints, so a path is
unambiguous even where a joint shares a link's name.  Links and joints are
kept in separate maps for the same reason.

Lookups here have no robot name to attribute their errors to:
:class:`bb_robot.model.robot.Robot` delegates to them and names the robot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Topology:
    """Ordering and path metadata of one tree.

    - ``depth``: link name → depth; the root link has depth 0 and each
      joint/link pair adds 1.
    - ``joint_depth``: joint name → the depth of its child link.
    - ``link_order`` / ``joint_order``: depth-first, children in declaration
      order; parents always come before their children.
    - ``paths`` / ``joint_paths``: link or joint name → root-relative path.
    """

    depth: Mapping[str, int]
    joint_depth: Mapping[str, int]
    joint_order: tuple[str, ...]
    link_order: tuple[str, ...]
    paths: Mapping[str, tuple[str, ...]]
    joint_paths: Mapping[str, tuple[str, ...]]

    @property
    def max_depth(self) -> int:
        """Return the depth of the deepest link (0 for a single-link robot)."""
        return max(self.depth.values(), default=0)


def build_topology(
    root: str,
    child_joints: Mapping[str, Sequence[str]],
    joint_child: Mapping[str, str],
) -> Topology:
    """Return the topology of the tree below ``root``.

    ``child_joints`` maps each link to its child joints in declaration order and
    ``joint_child`` maps each joint to its child link.  The walk is iterative, so
    deep chains (thousands of links) do not hit Python's recursion limit.  The
    caller guarantees a tree (see :mod:`bb_robot.model.validation`).
    """
    depth: dict[str, int] = {root: 0}
    joint_depth: dict[str, int] = {}
    paths: dict[str, tuple[str, ...]] = {root: (root,)}
    joint_paths: dict[str, tuple[str, ...]] = {}
    link_order: list[str] = []
    joint_order: list[str] = []
    stack: list[str] = [root]
    while stack:
        link = stack.pop()
        link_order.append(link)
        link_path = paths[link]
        below = child_joints.get(link, ())
        for joint in below:
            child = joint_child[joint]
            joint_path = link_path + (joint,)
            joint_paths[joint] = joint_path
            paths[child] = joint_path + (child,)
            depth[child] = joint_depth[joint] = depth[link] + 1
        # Reversed so the first declared child is visited first.
        stack.extend(joint_child[j] for j in reversed(below))
    # Joints follow the order of the links they lead to.
    parent_joint = {joint_child[j]: j for link in link_order for j in child_joints.get(link, ())}
    joint_order = [parent_joint[link] for link in link_order[1:]]
    return Topology(
        depth=MappingProxyType(depth),
        joint_depth=MappingProxyType(joint_depth),
        joint_order=tuple(joint_order),
        link_order=tuple(link_order),
        paths=MappingProxyType(paths),
        joint_paths=MappingProxyType(joint_paths),
    )

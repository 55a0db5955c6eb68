"""Precomputed topology of a kinematic tree.

Paths are root-relative and interleave links and joints, starting at the root
link and ending at the node they name: ``("base", "shoulder", "upper_arm")``.
Even positions hold links, odd positions hold joints, so a path is
unambiguous even where a joint shares a link's name.  Links and joints are
kept in separate maps for the same reason.

Lookups here have no robot name to attribute their errors to:
:class:`bb_robot.model.robot.Robot` delegates to them and names the robot.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType


class PathMap(Mapping[str, tuple[str, ...]]):
    """Root-relative paths of every link (or every joint), built on first access.

    Holding every path of a deep chain up front costs memory quadratic in its
    depth (2 million entries for a 1,000-link chain); this map keeps one parent
    step per node and caches each path once asked for.  It behaves as a plain
    read-only mapping.
    """

    def __init__(self, up: Mapping[str, tuple[str, ...]], root: str) -> None:
        """``up`` maps a node to the (joint, link) or (link,) step above it; the root maps to ()."""
        self._up = up
        self._root = root
        self._cache: dict[str, tuple[str, ...]] = {root: (root,)}

    def __getitem__(self, name: str) -> tuple[str, ...]:
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        if name not in self._up:
            raise KeyError(name)
        trail: list[str] = [name]
        node = name
        while node not in self._cache:
            step = self._up[node]
            trail.extend(reversed(step))
            node = step[0]
        trail.pop()  # ``node`` itself is the start of the cached prefix
        path = self._cache[node] + tuple(reversed(trail))
        self._cache[name] = path
        return path

    def __iter__(self) -> Iterator[str]:
        return iter(self._up)

    def __len__(self) -> int:
        return len(self._up)


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
    link_up: dict[str, tuple[str, ...]] = {root: ()}
    joint_up: dict[str, tuple[str, ...]] = {}
    link_order: list[str] = []
    joint_order: list[str] = []
    stack: list[tuple[str, str | None]] = [(root, None)]
    while stack:
        link, via = stack.pop()
        link_order.append(link)
        if via is not None:
            joint_order.append(via)
        below = child_joints.get(link, ())
        level = depth[link] + 1
        for joint in below:
            child = joint_child[joint]
            joint_up[joint] = (link,)
            link_up[child] = (link, joint)
            depth[child] = joint_depth[joint] = level
        # Reversed so the first declared child is visited first.
        stack.extend((joint_child[j], j) for j in reversed(below))
    link_paths = PathMap(link_up, root)
    return Topology(
        depth=MappingProxyType(depth),
        joint_depth=MappingProxyType(joint_depth),
        joint_order=tuple(joint_order),
        link_order=tuple(link_order),
        paths=link_paths,
        joint_paths=_JointPathMap(joint_up, link_paths),
    )


class _JointPathMap(Mapping[str, tuple[str, ...]]):
    """A joint's path is its parent link's path plus the joint."""

    def __init__(self, up: Mapping[str, tuple[str, ...]], link_paths: PathMap) -> None:
        self._up = up
        self._link_paths = link_paths

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self._link_paths[self._up[name][0]] + (name,)

    def __iter__(self) -> Iterator[str]:
        return iter(self._up)

    def __len__(self) -> int:
        return len(self._up)

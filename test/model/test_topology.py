"""bb_robot.model.topology (seed 001, ``BB.Robot.Topology``): depth, orders and paths.

Checked on ``build_topology`` directly and on the topology of assembled robots.
"""

from __future__ import annotations

import dataclasses
import sys

import pytest

from bb_robot.model.robot import Joint, Link, Robot
from bb_robot.model.topology import PathMap, Topology, build_topology


def chain(n: int) -> Robot:
    """A serial chain ``l0 -j0-> l1 -j1-> ... -> ln``."""
    links = [Link(f"l{i}") for i in range(n + 1)]
    joints = [Joint(f"j{i}", "revolute", f"l{i}", f"l{i + 1}") for i in range(n)]
    return Robot.assemble("chain", links, joints)


def small() -> Topology:
    """``r`` with children ``b`` (via ``jb``) then ``a`` (via ``ja``); ``a`` has ``c`` (via ``jc``)."""
    return build_topology(
        "r",
        {"r": ["jb", "ja"], "a": ["jc"]},
        {"jb": "b", "ja": "a", "jc": "c"},
    )


def test_root_has_depth_zero_and_each_joint_link_pair_adds_one() -> None:
    topo = small()
    assert dict(topo.depth) == {"r": 0, "b": 1, "a": 1, "c": 2}


def test_joint_depth_is_the_depth_of_its_child_link() -> None:
    topo = small()
    assert dict(topo.joint_depth) == {"jb": 1, "ja": 1, "jc": 2}


def test_orders_are_depth_first_with_children_in_declaration_order() -> None:
    topo = small()
    # declaration order puts b before a, so b's subtree comes first though 'a' < 'b'
    assert topo.link_order == ("r", "b", "a", "c")
    assert topo.joint_order == ("jb", "ja", "jc")


def test_depth_first_not_breadth_first(tree: Robot) -> None:
    # breadth first would list every depth-1 link before pan_link (depth 2)
    assert tree.topology.link_order == (
        "chassis",
        "sensor_head",
        "pan_link",
        "left_wheel",
        "arm",
        "gripper",
    )
    assert tree.topology.joint_order == ("mast", "pan", "left_wheel_joint", "arm_joint", "gripper_joint")


def test_orders_list_every_link_and_joint_once(bb_arm: Robot, tree: Robot) -> None:
    for robot in (bb_arm, tree):
        assert sorted(robot.topology.link_order) == sorted(robot.links)
        assert sorted(robot.topology.joint_order) == sorted(robot.joints)


def test_parents_come_before_children_in_both_orders(bb_arm: Robot) -> None:
    topo = bb_arm.topology
    link_pos = {name: i for i, name in enumerate(topo.link_order)}
    joint_pos = {name: i for i, name in enumerate(topo.joint_order)}
    for joint in bb_arm.joints.values():
        assert link_pos[joint.parent_link] < link_pos[joint.child_link]
        above = bb_arm.links[joint.parent_link].parent_joint
        if above is not None:
            assert joint_pos[above] < joint_pos[joint.name]


def test_joint_order_matches_the_links_it_reaches() -> None:
    """The i-th joint leads to the (i+1)-th link: each link is reached through the joint listed with it."""
    topo = small()
    child = {"jb": "b", "ja": "a", "jc": "c"}
    assert [child[j] for j in topo.joint_order] == list(topo.link_order[1:])


def test_paths_are_root_relative_and_end_with_the_node() -> None:
    topo = small()
    assert dict(topo.paths) == {
        "r": ("r",),
        "b": ("r", "jb", "b"),
        "a": ("r", "ja", "a"),
        "c": ("r", "ja", "a", "jc", "c"),
    }
    assert dict(topo.joint_paths) == {
        "jb": ("r", "jb"),
        "ja": ("r", "ja"),
        "jc": ("r", "ja", "a", "jc"),
    }


def test_paths_interleave_links_and_joints(bb_arm: Robot) -> None:
    for name, path in bb_arm.topology.paths.items():
        assert path[0] == bb_arm.root_link and path[-1] == name
        assert len(path) == 2 * bb_arm.topology.depth[name] + 1
        for i in range(1, len(path), 2):
            joint = bb_arm.joints[path[i]]
            assert (joint.parent_link, joint.child_link) == (path[i - 1], path[i + 1])
        assert all(link in bb_arm.links for link in path[::2])


def test_joint_path_is_parent_link_path_plus_joint(bb_arm: Robot) -> None:
    for name, joint in bb_arm.joints.items():
        assert bb_arm.topology.joint_paths[name] == (*bb_arm.topology.paths[joint.parent_link], name)


def test_max_depth() -> None:
    assert small().max_depth == 2
    assert build_topology("only", {}, {}).max_depth == 0
    assert chain(7).topology.max_depth == 7


def test_single_link_topology() -> None:
    topo = build_topology("only", {}, {})
    assert topo.link_order == ("only",) and topo.joint_order == ()
    assert dict(topo.paths) == {"only": ("only",)}
    assert dict(topo.joint_paths) == {}
    assert dict(topo.depth) == {"only": 0}


def test_path_maps_are_read_only_mappings() -> None:
    topo = small()
    assert isinstance(topo.paths, PathMap)
    assert len(topo.paths) == 4 and len(topo.joint_paths) == 3
    assert set(topo.paths) == {"r", "a", "b", "c"}
    assert "c" in topo.paths and "jc" not in topo.paths
    assert "jc" in topo.joint_paths and "c" not in topo.joint_paths
    with pytest.raises(KeyError):
        topo.paths["nope"]
    with pytest.raises(KeyError):
        topo.joint_paths["nope"]
    assert topo.paths.get("nope") is None
    with pytest.raises(TypeError):
        topo.paths["x"] = ("x",)  # type: ignore[index]
    with pytest.raises(TypeError):
        topo.depth["x"] = 3  # type: ignore[index]


def test_paths_are_stable_across_repeated_and_out_of_order_access() -> None:
    robot = chain(50)
    paths = robot.topology.paths
    middle = paths["l25"]  # cached first, then the deeper path reuses it
    deep = paths["l50"]
    assert deep[: len(middle)] == middle
    assert paths["l50"] == deep and paths["l25"] == middle
    assert deep == tuple(x for i in range(50) for x in (f"l{i}", f"j{i}")) + ("l50",)


def test_topology_is_frozen() -> None:
    topo = small()
    with pytest.raises(dataclasses.FrozenInstanceError):
        topo.depth = {}  # type: ignore[misc]


def test_deep_chain_beyond_the_recursion_limit() -> None:
    depth = sys.getrecursionlimit() + 500
    robot = chain(depth)
    topo = robot.topology
    assert topo.max_depth == depth
    assert topo.depth[f"l{depth}"] == depth
    deepest = topo.paths[f"l{depth}"]
    assert len(deepest) == 2 * depth + 1
    assert deepest[:3] == ("l0", "j0", "l1") and deepest[-1] == f"l{depth}"
    assert topo.link_order == tuple(f"l{i}" for i in range(depth + 1))
    assert robot.leaf_links() == [f"l{depth}"]
    assert robot.path_between(f"l{depth - 1}", f"l{depth}") == (
        f"l{depth - 1}",
        f"j{depth - 1}",
        f"l{depth}",
    )


def test_topology_has_the_seed_fields_plus_joint_depths_and_paths() -> None:
    fields = {f.name for f in dataclasses.fields(Topology)}
    assert fields == {"depth", "joint_order", "link_order", "paths"} | {"joint_depth", "joint_paths"}

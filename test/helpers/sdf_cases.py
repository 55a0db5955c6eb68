"""The SDF models the conversion tests load, and the SDF-side poses they compare against.

``CASES`` are the (corpus file, scope) pairs of every corpus SDF model that loads: the files of
``helpers.sdf_corpus.LOADS`` without a scope, and the models the corpus selects only with one.
:func:`sdf_link_poses` and :func:`sdf_poses` compute world poses straight from the SDF's resolved
frame graph (never through bb_robot's forward kinematics): the independent side of
``test_sdf_convert.py``, ``test_sdf_to_urdf.py`` and ``test_sdf_serial.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from bb_robot.sdf.document import SdfJoint
from bb_robot.sdf.frames import WORLD, join
from bb_robot.sdf.loader import SdfLoadResult, load_from_file
from helpers.sdf_corpus import LOADS

# (file, scope): models the corpus selects only with a scope
SCOPED = (
    ("gz_sim/examples/worlds/joint_trajectory_controller.sdf", "RR_position_control"),
    ("gz_sim/examples/worlds/joint_trajectory_controller.sdf", "RR_effort_control"),
    ("gz_sim/examples/worlds/mimic_fast_slow_pendulums_world.sdf", "pendulum_with_base"),
    ("gz_sim/examples/worlds/mimic_fast_slow_pendulums_world.sdf", "pendulum_with_base_mimic_slow_follows_fast"),
    ("gz_sim/examples/worlds/mimic_fast_slow_pendulums_world.sdf", "pendulum_with_base_mimic_fast_follows_slow"),
    ("gz_sim/examples/worlds/nested_model_joint_positions.sdf", "model2::model21"),
    ("gz_sim/examples/worlds/nested_model_joint_positions.sdf", "model4"),
    ("gz_sim/test/worlds/include_connected_nested_models.sdf", "include_connected_nested_new_name"),
    ("synthetic/sdf_world_two_ur3e_includes.sdf", "right_arm"),
    ("sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "ur3e"),
    ("sdformat/test/sdf/joint_parent_world.sdf", "joint_parent_world"),
    ("sdformat/test/sdf/joint_nested_parent_child.sdf", "joint_nested_parent_child::M1"),
    ("sas_robot_driver_gazebo/sdf/reference_frame.sdf", "frame"),
)
CASES = [(name, "") for name in sorted(LOADS)] + list(SCOPED)


def screw(point: np.ndarray, direction: np.ndarray, angle: float) -> np.ndarray:
    """The rigid motion rotating by ``angle`` about the line through ``point`` along ``direction``."""
    k = direction / np.linalg.norm(direction)
    skew = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    rotation = np.eye(3) + math.sin(angle) * skew + (1 - math.cos(angle)) * skew @ skew
    motion = np.eye(4)
    motion[:3, :3] = rotation
    motion[:3, 3] = point - rotation @ point
    return motion


def sdf_link_poses(result: SdfLoadResult, values: dict[str, float]) -> dict[str, np.ndarray]:
    """World poses of the SDF links at joint ``values``, straight from the SDF's resolved frames.

    Each joint moves its child body about (revolute) or along (prismatic) its axis, resolved in
    the world, through its joint frame's origin; the motion is carried by everything below it.
    Mimic joints follow SDF's rule: multiplier · (leader − reference) + offset.
    """
    graph = result.frames
    scope = result.source_scope
    joints: list[tuple[str, SdfJoint]] = []
    for sub in result.converted.model.walk():
        joints += [(join(sub.scoped_name, j.name), j) for j in sub.joints]

    def value(key: str, joint: SdfJoint) -> float:
        axis = joint.axis
        if axis is not None and axis.mimic is not None:
            leader_key = graph.lookup(graph.vertex("joint", key).scope, axis.mimic.joint)
            assert leader_key is not None
            leader = next(j for k, j in joints if k == leader_key)
            m = axis.mimic
            return m.multiplier * (value(leader_key, leader) - m.reference) + m.offset
        return values.get(key[len(scope) + 2 :], 0.0)

    children: dict[str, list[tuple[str, SdfJoint]]] = {}
    for key, joint in joints:
        children.setdefault(graph.parent_link(key), []).append((key, joint))
    poses: dict[str, np.ndarray] = {}
    roots = {
        link.scoped_name for link in graph.frames() if link.kind == "link" and link.scoped_name.startswith(scope + "::")
    }
    roots -= {graph.child_link(key) for key, _ in joints}
    stack = [(root, graph.world_pose(root)) for root in sorted(roots)] + [(WORLD, np.eye(4))]
    while stack:
        body, pose = stack.pop()
        poses[body] = pose
        rest = np.linalg.inv(graph.world_pose(body)) if body != WORLD else np.eye(4)
        for key, joint in children.get(body, []):
            child = graph.child_link(key)
            joint_world = graph.world_pose(key)
            axis = joint_world[:3, :3] @ np.array(graph.axis_in_joint(key))
            q = value(key, joint) if joint.type != "fixed" else 0.0
            if joint.type == "prismatic":
                motion = np.eye(4)
                motion[:3, 3] = q * axis
            else:
                motion = screw(joint_world[:3, 3], axis, q)
            stack.append((child, pose @ rest @ motion @ graph.world_pose(child)))
    return {key[len(scope) + 2 :]: pose for key, pose in poses.items() if key != WORLD}


def load(corpus_dir: Path, paths: tuple[Path, ...], name: str, scope: str) -> SdfLoadResult:
    return load_from_file(corpus_dir / name, scope, resource_paths=paths, build_serial=False)


def relative(result: SdfLoadResult, key: str) -> str:
    return key[len(result.source_scope) + 2 :]


def sdf_poses(result: SdfLoadResult, values: dict[str, float]) -> dict[str, np.ndarray]:
    """World poses of every SDF link and ``<frame>`` (relative names) at joint ``values``, from the
    SDF frame graph: a frame moves rigidly with the body its attached-to chain ends at."""
    graph = result.frames
    poses = sdf_link_poses(result, values)
    for frame in result.converted.frame_links:
        key = result.scoped_names[frame]
        body = graph.body(key)
        if body == WORLD:
            poses[frame] = graph.world_pose(key)
        else:
            poses[frame] = poses[relative(result, body)] @ np.linalg.inv(graph.world_pose(body)) @ graph.world_pose(key)
    return poses

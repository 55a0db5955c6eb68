"""The serial-manipulator model built from SDF against an independent 4×4 product over the SDF.

For the seed's own robots (the UR3e world with its three levels of includes, the UR3e model,
iiwa14 and its position-controller wrapper), the synthetic arms of ``EXPECTED.md`` and the
two-UR3e world (each arm by scope, one of them rotated), at the zero configuration and at
random ones:

- every chain link frame and the end effector (the default tip, and a ``<frame>`` given as tip)
  equal the world poses computed straight from the SDF's resolved frames
  (``helpers.sdf_cases.sdf_link_poses``: each joint rotates its child subtree about its
  world-resolved axis through its joint frame's origin, composed in order; a ``<frame>`` moves
  with the body it is attached to) — never through bb_robot's forward kinematics — to 1e-9;
- each joint frame's +z is the SDF joint axis in the world, and the SDF joint frame's origin lies
  on that axis line;
- the geometric Jacobian (of the end effector and of every chain link) equals central finite
  differences of that independent product (linear velocity of the frame's origin, angular
  velocity from dR·Rᵀ), to 1e-7 (the differences' own error is ~1e-10).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from helpers.sdf_cases import relative, sdf_poses

from bb_robot.model.serial import RZ, SerialManipulator
from bb_robot.sdf.frames import WORLD
from bb_robot.sdf.loader import SdfLoadResult, load_from_file

TOL = 1e-9
JACOBIAN_TOL = 1e-7
STEP = 1e-5
CONFIGURATIONS = 8

# (file, model scope, strict, tip)
CHAINS = [
    ("sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "", True, None),
    ("sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "", True, "tool0"),
    ("sas_robot_driver_gazebo/sdf/ur3e.sdf", "", True, "ft_frame"),
    ("sas_robot_driver_gazebo/sdf/iiwa14.sdf", "", True, None),
    ("sas_robot_driver_gazebo/sdf/iiwa14_position_controller.sdf", "", True, None),
    ("sas_robot_driver_gazebo/sdf/iiwa14_position_controller.sdf", "", True, "joint4_offset"),
    ("synthetic/sdf_z_axis_via_rotation.sdf", "", True, None),
    ("synthetic/sdf_x_axis_arm.sdf", "", False, None),
    ("synthetic/sdf_world_two_ur3e_includes.sdf", "left_arm", True, "tool0"),
    ("synthetic/sdf_world_two_ur3e_includes.sdf", "right_arm", True, None),
]


def _label(case: tuple[str, str, bool, str | None]) -> str:
    name, scope, strict, tip = case
    return f"{Path(name).stem}{':' + scope if scope else ''}->{tip or 'auto'}{'' if strict else ':normalised'}"


def chain_poses(result: SdfLoadResult, chain: SerialManipulator, q: np.ndarray) -> dict[str, np.ndarray]:
    """World poses of the chain's links and tip from the SDF alone (a link made for an off-axis
    joint stands at that joint's frame, moving with its child)."""
    values = dict(zip(chain.joint_names, (float(v) for v in q), strict=True))
    poses = sdf_poses(result, values)
    graph = result.frames
    for name in result.converted.joint_frame_links:
        key = result.scoped_names[name]
        child = graph.child_link(key)
        poses[name] = poses[relative(result, child)] @ np.linalg.inv(graph.world_pose(child)) @ graph.world_pose(key)
    return poses


def sdf_axis_line(result: SdfLoadResult, joint: str, poses: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A point and the unit direction of ``joint``'s axis in the world, its frame moving with its child."""
    graph = result.frames
    key = result.scoped_names[joint]
    child = graph.child_link(key)
    frame = poses[relative(result, child)] @ np.linalg.inv(graph.world_pose(child)) @ graph.world_pose(key)
    direction = frame[:3, :3] @ np.array(graph.axis_in_joint(key))
    return frame[:3, 3], direction / np.linalg.norm(direction)


def finite_difference_jacobians(
    pose_of: Callable[[np.ndarray], dict[str, np.ndarray]], q: np.ndarray, frames: Sequence[str]
) -> dict[str, np.ndarray]:
    """6×n per frame, from central differences of ``pose_of(q) -> {frame: 4×4}``: linear then
    angular velocity, in the world frame."""
    here = pose_of(q)
    columns: dict[str, list[np.ndarray]] = {frame: [] for frame in frames}
    for i in range(len(q)):
        step = np.zeros(len(q))
        step[i] = STEP
        plus, minus = pose_of(q + step), pose_of(q - step)
        for frame in frames:
            linear = (plus[frame][:3, 3] - minus[frame][:3, 3]) / (2 * STEP)
            rate = (plus[frame][:3, :3] - minus[frame][:3, :3]) / (2 * STEP) @ here[frame][:3, :3].T
            angular = np.array([rate[2, 1] - rate[1, 2], rate[0, 2] - rate[2, 0], rate[1, 0] - rate[0, 1]]) / 2
            columns[frame].append(np.concatenate([linear, angular]))
    return {frame: np.array(c).T for frame, c in columns.items()}


def load_chain(
    corpus_dir: Path, paths: tuple[Path, ...], case: tuple[str, str, bool, str | None]
) -> tuple[SdfLoadResult, SerialManipulator]:
    name, scope, strict, tip = case
    result = load_from_file(corpus_dir / name, scope, resource_paths=paths, tip=tip, strict=strict)
    assert result.serial is not None
    return result, result.serial


def random_configurations(chain: SerialManipulator, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(chain.lower_limits), chain.lower_limits, -np.pi)
    upper = np.where(np.isfinite(chain.upper_limits), chain.upper_limits, np.pi)
    return np.vstack([np.zeros(chain.dof), rng.uniform(lower, upper, (CONFIGURATIONS, chain.dof))])


@pytest.mark.parametrize("case", CHAINS, ids=[_label(c) for c in CHAINS])
def test_serial_fk_equals_the_product_over_the_sdf_frames(
    case: tuple[str, str, bool, str | None], corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result, chain = load_chain(corpus_dir, corpus_resource_paths, case)
    assert chain.joint_names == result.joint_names[: chain.dof]
    assert chain.base_link == result.canonical_link
    if case[3] is not None:
        assert chain.tip_link == case[3]
    batch = chain.forward(random_configurations(chain, 11))
    for k, q in enumerate(random_configurations(chain, 11)):
        expected = chain_poses(result, chain, q)
        poses = chain.forward(q)
        for i, link in enumerate(chain.link_names):
            np.testing.assert_allclose(poses.links[i], expected[link], atol=TOL, rtol=0, err_msg=f"{link} q={q}")
            np.testing.assert_allclose(batch.links[k, i], expected[link], atol=TOL, rtol=0)
        np.testing.assert_allclose(poses.end_effector, expected[chain.tip_link], atol=TOL, rtol=0, err_msg="tip")
        np.testing.assert_allclose(batch.end_effector[k], expected[chain.tip_link], atol=TOL, rtol=0)
        for i, joint in enumerate(chain.joints):
            assert joint.actuation == RZ
            point, direction = sdf_axis_line(result, joint.name, expected)
            frame = poses.joints[i]
            np.testing.assert_allclose(frame[:3, 2], direction, atol=TOL, err_msg=f"{joint.name} axis")
            np.testing.assert_allclose(np.cross(point - frame[:3, 3], direction), 0.0, atol=TOL, err_msg=joint.name)


@pytest.mark.parametrize("case", CHAINS, ids=[_label(c) for c in CHAINS])
def test_serial_jacobian_equals_finite_differences_of_the_sdf_product(
    case: tuple[str, str, bool, str | None], corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result, chain = load_chain(corpus_dir, corpus_resource_paths, case)
    targets: list[tuple[str | None, str]] = [(None, chain.tip_link), *((link, link) for link in chain.link_names[1:])]
    for q in random_configurations(chain, 5)[:4]:
        expected = finite_difference_jacobians(
            lambda x: chain_poses(result, chain, x), q, list(dict.fromkeys(frame for _, frame in targets))
        )
        for link, frame in targets:
            np.testing.assert_allclose(
                chain.jacobian(q, link=link), expected[frame], atol=JACOBIAN_TOL, rtol=0, err_msg=f"{frame} q={q}"
            )


def test_the_world_placement_is_the_serial_base_pose(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    # the right arm of the two-arm world stands at (0, -0.5, 0.75), turned 90° about z
    result, chain = load_chain(
        corpus_dir, corpus_resource_paths, ("synthetic/sdf_world_two_ur3e_includes.sdf", "right_arm", True, None)
    )
    expected = np.array([[0.0, -1.0, 0.0, 0.0], [1.0, 0.0, 0.0, -0.5], [0.0, 0.0, 1.0, 0.75], [0.0, 0.0, 0.0, 1.0]])
    np.testing.assert_allclose(chain.base_pose, expected, atol=1e-15)
    np.testing.assert_allclose(chain.base_pose, result.base_pose, atol=0)
    assert result.converted.world_joints == ("right_fix",)  # the world joint places it, it is not a chain joint
    assert WORLD not in chain.link_names

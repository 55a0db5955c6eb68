"""bb_robot.model.serial: the serial-manipulator model.

Chain extraction (tips, branches, merged fixed joints), strict and normalising
modes, limits, typed errors, and the numbers: forward kinematics of every chain
frame and of the end effector against :class:`ForwardKinematics` on the same
robot, batches against single configurations, and the geometric Jacobian
against finite differences.  ``test_serial_against_pinocchio.py`` compares
with Pinocchio.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers.robots import UR3E_JOINTS, UR3E_LINKS

from bb_robot.errors import BbRobotError
from bb_robot.model.errors import (
    InvalidJointValue,
    InvalidTransform,
    KinematicsError,
    NotAnAncestor,
    NotSerialError,
    OffAxisJointError,
    SerialChainError,
    UnknownLink,
    UnsupportedJointError,
)
from bb_robot.model.geometry import Origin
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Joint, JointLimits, Link, Mimic, Robot
from bb_robot.model.serial import RZ, STRICT_AXIS_TOLERANCE, TZ, SerialManipulator
from bb_robot.model.transforms import origin_to_matrix
from bb_robot.urdf.builder import load_urdf

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
ARM_JOINTS = UR3E_JOINTS
Z = (0.0, 0.0, 1.0)
TOL = 1e-9

# (corpus file, tip, base): the robots whose chains are compared with ForwardKinematics.
CORPUS_CHAINS = [
    ("moveit_resources/panda_description/urdf/panda.urdf", "panda_hand", None),
    ("moveit_resources/panda_description/urdf/panda.urdf", "panda_link8", None),
    ("moveit_resources/panda_description/urdf/panda.urdf", "panda_leftfinger", None),
    ("moveit_resources/fanuc_description/urdf/fanuc.urdf", "tool0", None),
    ("moveit_resources/fanuc_description/urdf/fanuc.urdf", None, None),
    ("franka_description/fr3_hand.urdf", "fr3_hand_tcp", None),
    ("franka_description/multi_arm.urdf", "right_fr3_hand_tcp", None),
    ("franka_description/multi_arm.urdf", "left_fr3_hand_tcp", "left_fr3_link0"),
    ("ur_description_ros2/ur3e.urdf", "tool0", None),
    ("ur_description_ros2/ur3e.urdf", None, None),
    ("ur_description_ros2/ur5e.urdf", "tool0", "base_link"),
    ("mastering_ros_robot_description_pkg/urdf/pan_tilt.urdf", None, None),
    ("synthetic/x_axis_arm.urdf", None, None),
    ("sdformat/test/integration/fixed_joint_reduction.urdf", "link3", None),
]


def hand_made(links: list[str], joints: list[Joint], name: str = "hand_made") -> Robot:
    return Robot.assemble(name, [Link(n) for n in links], joints)


@pytest.fixture(scope="module")
def arm() -> Robot:
    return load_urdf(BB_ARM)


def sample(model: SerialManipulator, count: int, seed: int = 0) -> np.ndarray:
    """Configurations within the limits (±π where a limit is infinite)."""
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(model.lower_limits), model.lower_limits, -math.pi)
    upper = np.where(np.isfinite(model.upper_limits), model.upper_limits, math.pi)
    return rng.uniform(lower, upper, size=(count, model.dof))


def reference_poses(robot: Robot, model: SerialManipulator, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chain link poses and tip pose from ForwardKinematics, in the model frame (base_pose · base⁻¹ · link)."""
    fk = ForwardKinematics(robot)
    full = np.zeros((q.shape[0], len(fk.joint_names)))
    for i, name in enumerate(model.joint_names):
        full[:, fk.joint_names.index(name)] = q[:, i]
    poses = fk.compute(full)
    to_model = model.base_pose @ np.linalg.inv(poses[:, fk.link_names.index(model.base_link)])
    links = to_model[:, None] @ poses[:, [fk.link_names.index(n) for n in model.link_names]]
    tip = to_model @ poses[:, fk.link_names.index(model.tip_link)]
    return links, tip


# ------------------------------------------------------------------------------ bb_arm chains
def test_bb_arm_to_tcp_merges_the_fixed_tool_gripper_and_tcp_joints(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tcp", strict=False)
    assert model.joint_names == ARM_JOINTS
    assert model.actuations == (RZ,) * 6
    assert model.base_link == "base_link"
    assert model.tip_link == "tcp"
    assert model.link_names == UR3E_LINKS
    assert model.tip_fixed == ("tool0_joint", "gripper_mount_joint", "tcp_joint")
    assert model.dof == len(model) == 6
    # tool0 (0.08 along z), gripper mount (yaw 90°), tcp (0.10 along z).
    expected = origin_to_matrix(Origin((0.0, 0.0, 0.18), (0.0, 0.0, math.pi / 2)))
    np.testing.assert_allclose(model.tip_offset, expected, atol=1e-15)


def test_bb_arm_to_tool0(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tool0", strict=False)
    assert model.joint_names == ARM_JOINTS
    assert model.tip_link == "tool0"
    assert model.tip_fixed == ("tool0_joint",)
    np.testing.assert_array_equal(model.tip_offset[:3, 3], (0.0, 0.0, 0.08))


def test_bb_arm_without_tip_names_the_finger_branches_and_the_tips_to_pass(arm: Robot) -> None:
    # The fingers hang from gripper_base, reached from wrist_3_link through fixed joints only:
    # two movable branches there, so without a tip the arm is not serial.
    with pytest.raises(NotSerialError) as caught:
        SerialManipulator.from_robot(arm, strict=False)
    error = caught.value
    assert error.robot == "bb_arm"
    assert error.link == "wrist_3_link"
    assert error.joints == ("left_finger_joint", "right_finger_joint")
    assert error.tips == ("tcp", "left_finger", "right_finger")
    message = str(error)
    for text in ("'bb_arm'", "'wrist_3_link'", "'left_finger_joint'", "'right_finger_joint'", "tip=", "'tcp'"):
        assert text in message


def test_bb_arm_to_a_finger_ends_with_a_prismatic_joint(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "left_finger", strict=False)
    assert model.joint_names == (*ARM_JOINTS, "left_finger_joint")
    assert model.actuations == (RZ,) * 6 + (TZ,)
    finger = model.joints[-1]
    assert finger.fixed_before == ("tool0_joint", "gripper_mount_joint")
    assert finger.parent_link == "wrist_3_link"
    assert finger.child_link == "left_finger"
    assert model.tip_link == "left_finger"
    np.testing.assert_array_equal(model.tip_offset, np.eye(4))


def test_bb_arm_is_rejected_in_strict_mode_naming_the_joints_axes_and_the_option(arm: Robot) -> None:
    with pytest.raises(OffAxisJointError) as caught:
        SerialManipulator.from_robot(arm, "tcp")
    error = caught.value
    assert error.robot == "bb_arm"
    assert error.joint == "shoulder_lift_joint"
    assert error.axis == (0.0, 1.0, 0.0)
    assert list(error.axes) == ["shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_3_joint"]
    assert error.tolerance == STRICT_AXIS_TOLERANCE
    message = str(error)
    assert "'shoulder_lift_joint' acts about (0, 1, 0)" in message
    assert "strict=False" in message
    assert "'bb_arm'" in message


def test_limits_come_from_the_robot(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "left_finger", strict=False)
    np.testing.assert_array_equal(model.lower_limits, (-3.14159, -2.0, -2.6, -3.14159, -3.14159, -6.28318, 0.0))
    np.testing.assert_array_equal(model.upper_limits, (3.14159, 2.0, 2.6, 3.14159, 3.14159, 6.28318, 0.04))
    np.testing.assert_array_equal(model.velocity_limits, (2.0, 2.0, 2.5, 3.0, 3.0, 3.0, 0.1))
    np.testing.assert_array_equal(model.effort_limits, (150, 150, 100, 28, 28, 28, 40))
    assert model.joints[0].lower == -3.14159 and model.joints[0].velocity == 2.0


def test_continuous_joints_and_missing_limits_are_unbounded(corpus_dir: Path) -> None:
    model = SerialManipulator.from_urdf(corpus_dir / "ur_description_ros2" / "ur3e.urdf", "tool0")
    wrist_3 = model.joints[model.joint_names.index("wrist_3_joint")]
    assert wrist_3.joint_type == "continuous"
    assert (wrist_3.lower, wrist_3.upper) == (-math.inf, math.inf)
    assert math.isfinite(wrist_3.velocity) and math.isfinite(wrist_3.effort)

    robot = hand_made(
        ["a", "b", "c"],
        [
            Joint("free", "revolute", "a", "b", axis=Z),
            Joint("half", "prismatic", "b", "c", axis=Z, limits=JointLimits(lower=-0.5, effort=3.0)),
        ],
    )
    model = SerialManipulator.from_robot(robot)
    np.testing.assert_array_equal(model.lower_limits, (-math.inf, -0.5))
    np.testing.assert_array_equal(model.upper_limits, (math.inf, math.inf))
    np.testing.assert_array_equal(model.velocity_limits, (math.inf, math.inf))
    np.testing.assert_array_equal(model.effort_limits, (math.inf, 3.0))


def test_model_arrays_are_read_only(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tcp", strict=False)
    for array in (model.base_pose, model.tip_offset, model.lower_limits, model.joints[0].offset_before):
        with pytest.raises(ValueError):
            array[0] = 1.0


# ------------------------------------------------------------------------------ chain rules
def test_without_tip_the_tip_is_the_end_of_a_unique_fixed_path(corpus_dir: Path) -> None:
    fanuc = SerialManipulator.from_urdf(corpus_dir / "moveit_resources/fanuc_description/urdf/fanuc.urdf")
    assert fanuc.tip_link == "tool0"  # link_6 -> tool0 is the only fixed joint after joint_6
    assert fanuc.tip_fixed == ("joint_6-tool0",)
    # base_link -> base is a fixed side branch at the root: never a branch of the chain.
    assert fanuc.joint_names == tuple(f"joint_{i}" for i in range(1, 7))


def test_without_tip_a_branching_fixed_path_ends_the_chain_at_the_last_link(corpus_dir: Path) -> None:
    # UR: wrist_3_link has two fixed children (ft_frame; flange -> tool0): the tip stays wrist_3_link.
    ur = SerialManipulator.from_urdf(corpus_dir / "ur_description_ros2/ur3e.urdf")
    assert ur.tip_link == "wrist_3_link"
    assert ur.tip_fixed == ()
    assert ur.base_link == "world"
    assert ur.joints[0].fixed_before == ("base_joint", "base_link-base_link_inertia")


def test_two_arms_on_one_base_name_both_first_joints(corpus_dir: Path) -> None:
    robot = load_urdf(corpus_dir / "franka_description/multi_arm.urdf")
    with pytest.raises(NotSerialError) as caught:
        SerialManipulator.from_robot(robot)
    assert caught.value.link == "base"
    assert caught.value.joints == ("left_fr3_joint1", "right_fr3_joint1")
    model = SerialManipulator.from_robot(robot, "right_fr3_hand_tcp")
    assert model.joint_names == tuple(f"right_fr3_joint{i}" for i in range(1, 8))


def test_panda_hand_without_tip_names_both_fingers_mimic_included(corpus_dir: Path) -> None:
    robot = load_urdf(corpus_dir / "moveit_resources/panda_description/urdf/panda.urdf")
    with pytest.raises(NotSerialError) as caught:
        SerialManipulator.from_robot(robot)
    assert caught.value.joints == ("panda_finger_joint1", "panda_finger_joint2")
    assert caught.value.tips == ("panda_hand", "panda_leftfinger", "panda_rightfinger")


def test_fixed_side_branches_never_count() -> None:
    robot = hand_made(
        ["base", "camera", "mount", "l1", "l2", "flange", "tool"],
        [
            Joint("camera_joint", "fixed", "base", "camera", Origin((0.0, 0.1, 0.0))),
            Joint("mount_joint", "fixed", "base", "mount", Origin((0.0, 0.0, 0.1))),
            Joint("j1", "revolute", "mount", "l1", Origin((0.0, 0.0, 0.2)), axis=Z),
            Joint("j2", "prismatic", "l1", "l2", Origin((0.3, 0.0, 0.0)), axis=Z),
            Joint("flange_joint", "fixed", "l2", "flange", Origin((0.0, 0.0, 0.05))),
            Joint("tool_joint", "fixed", "flange", "tool", Origin((0.0, 0.0, 0.1))),
        ],
    )
    model = SerialManipulator.from_robot(robot)
    assert model.joint_names == ("j1", "j2")
    assert model.joints[0].fixed_before == ("mount_joint",)
    assert model.joints[0].parent_link == "base"
    np.testing.assert_allclose(model.joints[0].offset_before[:3, 3], (0.0, 0.0, 0.3))
    assert model.tip_link == "tool"
    assert model.tip_fixed == ("flange_joint", "tool_joint")
    np.testing.assert_allclose(model.tip_offset[:3, 3], (0.0, 0.0, 0.15))


def test_movable_branches_behind_fixed_joints_are_branches() -> None:
    robot = hand_made(
        ["base", "l1", "plate", "a", "b"],
        [
            Joint("j1", "revolute", "base", "l1", axis=Z),
            Joint("plate_joint", "fixed", "l1", "plate"),
            Joint("ja", "revolute", "plate", "a", axis=Z),
            Joint("jb", "prismatic", "l1", "b", axis=Z),
        ],
    )
    with pytest.raises(NotSerialError) as caught:
        SerialManipulator.from_robot(robot)
    # In tree (traversal) order, whatever the depth behind fixed joints.
    assert caught.value.joints == ("ja", "jb")
    assert caught.value.link == "l1"
    assert caught.value.tips == ("plate", "a", "b")
    assert SerialManipulator.from_robot(robot, "a").joint_names == ("j1", "ja")
    assert SerialManipulator.from_robot(robot, "b").joint_names == ("j1", "jb")


def test_tip_and_base_errors_propagate(arm: Robot) -> None:
    with pytest.raises(UnknownLink) as unknown:
        SerialManipulator.from_robot(arm, "nowhere", strict=False)
    assert unknown.value.role == "target"
    with pytest.raises(UnknownLink):
        SerialManipulator.from_robot(arm, "tcp", base="nowhere", strict=False)
    with pytest.raises(UnknownLink):
        SerialManipulator.from_robot(arm, base="nowhere", strict=False)
    with pytest.raises(NotAnAncestor) as not_above:
        SerialManipulator.from_robot(arm, "left_finger", base="right_finger", strict=False)
    assert not_above.value.common_ancestor == "gripper_base"


def test_a_base_below_the_root_starts_the_chain_there(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tcp", base="upper_arm_link", strict=False)
    assert model.joint_names == ARM_JOINTS[2:]
    assert model.link_names[0] == "upper_arm_link"
    q = sample(model, 4)
    links, tip = reference_poses(arm, model, q)
    np.testing.assert_allclose(model.link_poses(q), links, atol=TOL)
    np.testing.assert_allclose(model.end_effector_pose(q), tip, atol=TOL)


def test_a_chain_without_movable_joints_has_no_coordinates(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tcp", base="wrist_3_link", strict=False)
    assert model.dof == 0
    assert model.tip_fixed == ("tool0_joint", "gripper_mount_joint", "tcp_joint")
    np.testing.assert_allclose(model.end_effector_pose(np.zeros(0)), model.tip_offset, atol=1e-15)
    assert model.jacobian(np.zeros(0)).shape == (6, 0)
    assert model.jacobian(np.zeros((3, 0))).shape == (3, 6, 0)
    assert model.link_poses(np.zeros((3, 0))).shape == (3, 1, 4, 4)
    same = SerialManipulator.from_robot(arm, "tcp", base="tcp", strict=False)
    assert same.dof == 0 and same.tip_link == "tcp"
    np.testing.assert_array_equal(same.end_effector_pose([]), np.eye(4))


# ------------------------------------------------------------------------------ joint types
def test_floating_and_planar_joints_in_the_chain_are_named() -> None:
    robot = hand_made(
        ["world", "body", "arm", "hand"],
        [
            Joint("free", "floating", "world", "body"),
            Joint("j1", "revolute", "body", "arm", axis=Z),
            Joint("slide", "planar", "arm", "hand", axis=Z),
        ],
        "odd",
    )
    with pytest.raises(UnsupportedJointError) as caught:
        SerialManipulator.from_robot(robot)
    error = caught.value
    assert error.robot == "odd"
    assert error.joints == ("free", "slide")
    assert error.joint == "free"
    assert "floating" in error.reasons["free"] and "planar" in error.reasons["slide"]
    assert "'free'" in str(error) and "'slide'" in str(error) and "'odd'" in str(error)
    # Below the floating joint, the chain is fine.
    assert SerialManipulator.from_robot(robot, "arm", base="body").joint_names == ("j1",)


def test_mimic_joints_in_the_chain_are_named() -> None:
    robot = hand_made(
        ["a", "b", "c"],
        [
            Joint("j1", "revolute", "a", "b", axis=Z),
            Joint("j2", "revolute", "b", "c", axis=Z, mimic=Mimic("j1", 2.0, 0.5)),
        ],
    )
    with pytest.raises(UnsupportedJointError) as caught:
        SerialManipulator.from_robot(robot)
    assert caught.value.joints == ("j2",)
    assert "joint 'j2' mimics joint 'j1' (value = 2·j1 + 0.5)" in str(caught.value)
    assert "independent" in str(caught.value)
    assert SerialManipulator.from_robot(robot, "b").joint_names == ("j1",)


def test_bb_arm_right_finger_mimics_the_left_one(arm: Robot) -> None:
    with pytest.raises(UnsupportedJointError) as caught:
        SerialManipulator.from_robot(arm, "right_finger", strict=False)
    assert caught.value.joints == ("right_finger_joint",)
    assert "'left_finger_joint'" in str(caught.value) and "'bb_arm'" in str(caught.value)


def test_a_mimic_outside_the_chain_does_not_matter(corpus_dir: Path) -> None:
    robot = load_urdf(corpus_dir / "moveit_resources/panda_description/urdf/panda.urdf")
    model = SerialManipulator.from_robot(robot, "panda_leftfinger", strict=False)
    assert model.joint_names[-1] == "panda_finger_joint1"
    with pytest.raises(UnsupportedJointError) as caught:
        SerialManipulator.from_robot(robot, "panda_rightfinger", strict=False)
    assert caught.value.joints == ("panda_finger_joint2",)


def test_serial_errors_are_typed() -> None:
    for cls in (NotSerialError, UnsupportedJointError, OffAxisJointError, InvalidTransform):
        assert issubclass(cls, SerialChainError)
        assert issubclass(cls, KinematicsError)
        assert issubclass(cls, BbRobotError)


# ------------------------------------------------------------------------------ strict / normalising
def test_x_axis_arm_strict_names_the_joint_and_axis(corpus_dir: Path) -> None:
    robot = load_urdf(corpus_dir / "synthetic" / "x_axis_arm.urdf")
    with pytest.raises(OffAxisJointError) as caught:
        SerialManipulator.from_robot(robot)
    assert caught.value.joint == "j1"
    assert caught.value.axis == (1.0, 0.0, 0.0)
    assert caught.value.axes == {"j1": (1.0, 0.0, 0.0), "j2": (0.0, 1.0, 0.0)}
    assert "joint 'j1' acts about (1, 0, 0)" in str(caught.value)
    assert "strict=False" in str(caught.value)
    assert caught.value.source == str(corpus_dir / "synthetic" / "x_axis_arm.urdf")
    assert str(caught.value).startswith(f"{corpus_dir / 'synthetic' / 'x_axis_arm.urdf'}: ")


def test_errors_of_robots_built_in_code_name_no_file() -> None:
    robot = Robot.assemble(
        "code_arm",
        [Link("a"), Link("b")],
        [Joint("j", "revolute", "a", "b", axis=(1.0, 0.0, 0.0))],
    )
    with pytest.raises(OffAxisJointError) as caught:
        SerialManipulator.from_robot(robot)
    assert caught.value.source is None
    assert str(caught.value).startswith("robot 'code_arm'")


def test_x_axis_arm_normalised_matches_forward_kinematics(corpus_dir: Path) -> None:
    robot = load_urdf(corpus_dir / "synthetic" / "x_axis_arm.urdf")
    model = SerialManipulator.from_robot(robot, strict=False)
    assert model.joint_names == ("j1", "j2") and model.actuations == (RZ, RZ)
    assert model.strict is False
    # Joint j1 about x: its frame is turned so that its z is the robot's x axis.
    poses = model.forward(np.zeros(2))
    np.testing.assert_allclose(poses.joints[0][:3, 2], (1.0, 0.0, 0.0), atol=1e-15)
    np.testing.assert_allclose(poses.joints[1][:3, 2], (0.0, 1.0, 0.0), atol=1e-15)
    q = np.vstack([np.zeros(2), sample(model, 16)])
    links, tip = reference_poses(robot, model, q)
    np.testing.assert_allclose(model.link_poses(q), links, atol=TOL)
    np.testing.assert_allclose(model.end_effector_pose(q), tip, atol=TOL)


def test_from_urdf_normalises_by_default_and_can_be_strict(corpus_dir: Path) -> None:
    path = corpus_dir / "synthetic" / "x_axis_arm.urdf"
    assert SerialManipulator.from_urdf(path).dof == 2
    with pytest.raises(OffAxisJointError):
        SerialManipulator.from_urdf(path, strict=True)


def test_a_z_axis_within_tolerance_passes_strict_mode_and_is_still_modelled_exactly() -> None:
    tilt = 0.5 * STRICT_AXIS_TOLERANCE
    robot = hand_made(["a", "b"], [Joint("j", "revolute", "a", "b", Origin((0.1, 0.0, 0.0)), axis=(tilt, 0.0, 1.0))])
    model = SerialManipulator.from_robot(robot)
    assert not np.array_equal(model.joints[0].offset_after, np.eye(4))
    q = sample(model, 5)
    links, _ = reference_poses(robot, model, q)
    np.testing.assert_allclose(model.link_poses(q), links, atol=1e-15)
    outside = hand_made(["a", "b"], [Joint("j", "revolute", "a", "b", axis=(3 * tilt, 0.0, 1.0))])
    with pytest.raises(OffAxisJointError):
        SerialManipulator.from_robot(outside)


def test_a_negative_z_axis_becomes_plus_z_with_a_flipped_frame() -> None:
    robot = hand_made(
        ["a", "b", "c"],
        [
            Joint("turn", "revolute", "a", "b", Origin((0.0, 0.0, 0.2)), axis=(0.0, 0.0, -1.0)),
            Joint("slide", "prismatic", "b", "c", Origin((0.3, 0.0, 0.0)), axis=(0.0, 0.0, -1.0)),
        ],
    )
    with pytest.raises(OffAxisJointError):
        SerialManipulator.from_robot(robot)
    model = SerialManipulator.from_robot(robot, strict=False)
    flip = np.diag([1.0, -1.0, -1.0, 1.0])
    np.testing.assert_array_equal(model.joints[0].offset_after, flip)
    np.testing.assert_array_equal(model.joints[0].offset_before[:3, :3], flip[:3, :3])
    # Positive q still turns the robot's joint the robot's way: about its -z.
    q = np.array([0.3, 0.1])
    links = model.link_poses(q)
    np.testing.assert_allclose(links[1][:3, 0], (math.cos(0.3), -math.sin(0.3), 0.0), atol=1e-15)
    np.testing.assert_allclose(links[2][:3, 3], links[1][:3, :3] @ (0.3, 0.0, -0.1) + links[1][:3, 3], atol=1e-15)
    ref_links, _ = reference_poses(robot, model, sample(model, 5))
    np.testing.assert_allclose(model.link_poses(sample(model, 5)), ref_links, atol=TOL)


@pytest.mark.parametrize(
    "axis",
    [(1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.6, 0.0, -0.8), (0.0, 0.0, -1.0), (1e-9, 0.0, -1.0), (0.36, 0.48, 0.8)],
)
def test_normalised_joint_frames_put_z_on_the_axis(axis: tuple[float, float, float]) -> None:
    robot = hand_made(
        ["a", "b"], [Joint("j", "revolute", "a", "b", Origin((0.1, 0.2, 0.3), (0.3, -0.2, 0.1)), axis=axis)]
    )
    model = SerialManipulator.from_robot(robot, strict=False)
    joint = model.joints[0]
    rotation = joint.offset_after[:3, :3].T  # the frame change R: joint' = joint · R
    unit = np.asarray(axis) / np.linalg.norm(axis)
    np.testing.assert_allclose(rotation @ (0.0, 0.0, 1.0), unit, atol=1e-15)
    np.testing.assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-15)
    assert np.linalg.det(rotation) == pytest.approx(1.0)
    np.testing.assert_array_equal(joint.offset_after[:3, 3], 0.0)
    links, _ = reference_poses(robot, model, sample(model, 8))
    np.testing.assert_allclose(model.link_poses(sample(model, 8)), links, atol=TOL)


# ------------------------------------------------------------------------------ FK against FK
@pytest.mark.parametrize(("relative", "tip", "base"), CORPUS_CHAINS)
def test_every_chain_frame_and_the_end_effector_match_forward_kinematics(
    corpus_dir: Path, relative: str, tip: str | None, base: str | None
) -> None:
    robot = load_urdf(corpus_dir / relative)
    model = SerialManipulator.from_robot(robot, tip, strict=False, base=base)
    q = np.vstack([np.zeros(model.dof), sample(model, 24)])
    links, end = reference_poses(robot, model, q)
    np.testing.assert_allclose(model.link_poses(q), links, atol=TOL, rtol=0)
    np.testing.assert_allclose(model.end_effector_pose(q), end, atol=TOL, rtol=0)
    for k in (0, 1, 5):
        single = model.forward(q[k])
        np.testing.assert_allclose(single.links, links[k], atol=TOL, rtol=0)
        np.testing.assert_allclose(single.end_effector, end[k], atol=TOL, rtol=0)


@pytest.mark.parametrize("tip", ["tcp", "tool0", "left_finger", "wrist_2_link"])
def test_bb_arm_chains_match_forward_kinematics(arm: Robot, tip: str) -> None:
    model = SerialManipulator.from_robot(arm, tip, strict=False)
    q = np.vstack([np.zeros(model.dof), sample(model, 24)])
    links, end = reference_poses(arm, model, q)
    np.testing.assert_allclose(model.link_poses(q), links, atol=TOL, rtol=0)
    np.testing.assert_allclose(model.end_effector_pose(q), end, atol=TOL, rtol=0)


def test_base_pose_places_every_frame_and_the_jacobian(arm: Robot) -> None:
    base_pose = origin_to_matrix(Origin((1.0, -2.0, 0.5), (0.1, 0.2, 0.3)))
    placed = SerialManipulator.from_robot(arm, "tcp", strict=False, base_pose=base_pose)
    model = placed.with_base_pose(None)
    np.testing.assert_array_equal(model.base_pose, np.eye(4))
    np.testing.assert_array_equal(model.with_base_pose(base_pose).base_pose, base_pose)
    q = sample(model, 6)
    np.testing.assert_allclose(placed.link_poses(q), base_pose @ model.link_poses(q), atol=TOL)
    np.testing.assert_allclose(placed.end_effector_pose(q), base_pose @ model.end_effector_pose(q), atol=TOL)
    links, end = reference_poses(arm, placed, q)
    np.testing.assert_allclose(placed.end_effector_pose(q), end, atol=TOL)
    rotation = base_pose[:3, :3]
    jacobian = model.jacobian(q)
    expected = np.concatenate([rotation @ jacobian[:, :3], rotation @ jacobian[:, 3:]], axis=1)
    np.testing.assert_allclose(placed.jacobian(q), expected, atol=TOL)


@pytest.mark.parametrize("pose", [np.eye(3), np.diag([1.0, 1.0, -1.0, 1.0]), np.full((4, 4), np.nan), "x"])
def test_a_base_pose_that_is_not_rigid_is_refused(arm: Robot, pose: object) -> None:
    with pytest.raises(InvalidTransform) as caught:
        SerialManipulator.from_robot(arm, "tcp", strict=False, base_pose=pose)  # type: ignore[arg-type]
    assert caught.value.argument == "base_pose"
    assert "'bb_arm'" in str(caught.value)


def test_bad_joint_values_are_refused(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tcp", strict=False)
    for q in (np.zeros(5), np.zeros((2, 7)), [0.0] * 5 + [math.nan], [[0.0], [0.0, 1.0]], "abc"):
        with pytest.raises(InvalidJointValue):
            model.forward(q)
        with pytest.raises(InvalidJointValue):
            model.jacobian(q)
    with pytest.raises(InvalidTransform):
        model.end_effector_pose(np.zeros(6), offset=np.eye(3))
    with pytest.raises(UnknownLink):
        model.jacobian(np.zeros(6), link="left_finger")


# ------------------------------------------------------------------------------ batches
def test_batch_results_equal_single_configurations(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "left_finger", strict=False, base_pose=np.diag([1.0, -1.0, -1.0, 1.0]))
    q = sample(model, 7)
    batch = model.forward(q)
    jacobians = model.jacobian(q)
    offset_jacobians = model.jacobian(q, link="wrist_1_link", offset=(0.1, 0.0, 0.2))
    assert batch.links.shape == (7, 8, 4, 4)
    assert batch.joints.shape == (7, 7, 4, 4)
    assert batch.end_effector.shape == (7, 4, 4)
    assert jacobians.shape == (7, 6, 7)
    for k in range(7):
        single = model.forward(q[k])
        np.testing.assert_allclose(single.links, batch.links[k], atol=1e-13, rtol=0)
        np.testing.assert_allclose(single.joints, batch.joints[k], atol=1e-13, rtol=0)
        np.testing.assert_allclose(single.end_effector, batch.end_effector[k], atol=1e-13, rtol=0)
        np.testing.assert_allclose(model.jacobian(q[k]), jacobians[k], atol=1e-13, rtol=0)
        np.testing.assert_allclose(
            model.jacobian(q[k], link="wrist_1_link", offset=(0.1, 0.0, 0.2)), offset_jacobians[k], atol=1e-13
        )


def test_frame_poses_name_every_chain_link_and_the_tip(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tcp", strict=False)
    q = sample(model, 3)
    named = model.frame_poses(q[0])
    assert list(named) == [*model.link_names, "tcp"]
    np.testing.assert_array_equal(named["tcp"], model.end_effector_pose(q[0]))
    batch = model.frame_poses(q)
    np.testing.assert_allclose(batch["wrist_2_link"], model.link_poses(q)[:, 5], atol=0)


# ------------------------------------------------------------------------------ Jacobian
def finite_difference_jacobian(
    model: SerialManipulator, q: np.ndarray, link: str | None = None, offset: np.ndarray | None = None
) -> np.ndarray:
    """Central differences of the point position (linear rows) and of the rotation (angular rows)."""
    step = 1e-6

    def pose(values: np.ndarray) -> np.ndarray:
        if link is None:
            target = model.end_effector_pose(values)
        else:
            target = model.frame_poses(values)[link]
        if offset is not None:
            target = target.copy()
            target[:3, 3] = target[:3, :3] @ offset + target[:3, 3]
        return target

    result = np.zeros((6, model.dof))
    for i in range(model.dof):
        delta = np.zeros(model.dof)
        delta[i] = step
        plus, minus = pose(q + delta), pose(q - delta)
        result[:3, i] = (plus[:3, 3] - minus[:3, 3]) / (2 * step)
        skew = (plus[:3, :3] - minus[:3, :3]) / (2 * step) @ pose(q)[:3, :3].T  # Ṙ Rᵀ = [ω]×
        result[3:, i] = (skew[2, 1], skew[0, 2], skew[1, 0])
    return result


@pytest.mark.parametrize(("tip", "link"), [("tcp", None), ("left_finger", None), ("tcp", "forearm_link")])
def test_jacobian_matches_finite_differences(arm: Robot, tip: str, link: str | None) -> None:
    model = SerialManipulator.from_robot(arm, tip, strict=False, base_pose=origin_to_matrix(Origin((0.2, 0, 0))))
    for q in sample(model, 5, seed=3):
        np.testing.assert_allclose(model.jacobian(q, link=link), finite_difference_jacobian(model, q, link), atol=1e-8)
        offset = np.array([0.05, -0.02, 0.1])
        np.testing.assert_allclose(
            model.jacobian(q, link=link, offset=offset),
            finite_difference_jacobian(model, q, link, offset),
            atol=1e-8,
        )


def test_jacobian_of_a_chain_link_has_zero_columns_beyond_it(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tcp", strict=False)
    q = sample(model, 2)
    jacobian = model.jacobian(q, link="forearm_link")
    np.testing.assert_array_equal(jacobian[:, :, 3:], 0.0)
    assert np.abs(jacobian[:, :, :3]).max() > 0.1
    np.testing.assert_array_equal(model.jacobian(q, link="base_link"), 0.0)
    np.testing.assert_array_equal(model.jacobian(q, link="tcp"), model.jacobian(q))


def test_jacobian_columns_for_rz_and_tz_joints(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "left_finger", strict=False)
    q = sample(model, 1)[0]
    poses = model.forward(q)
    jacobian = model.jacobian(q)
    tip = poses.end_effector[:3, 3]
    for i in range(6):
        z, origin = poses.joints[i][:3, 2], poses.joints[i][:3, 3]
        np.testing.assert_allclose(jacobian[:3, i], np.cross(z, tip - origin), atol=1e-15)
        np.testing.assert_allclose(jacobian[3:, i], z, atol=1e-15)
    np.testing.assert_allclose(jacobian[:3, 6], poses.joints[6][:3, 2], atol=1e-15)
    np.testing.assert_array_equal(jacobian[3:, 6], 0.0)


def test_end_effector_offset_as_point_or_transform(arm: Robot) -> None:
    model = SerialManipulator.from_robot(arm, "tool0", strict=False)
    q = sample(model, 3)
    # tool0 -> gripper_base (yaw 90°) -> tcp (0.10 along z).
    offset = origin_to_matrix(Origin((0.0, 0.0, 0.10), (0.0, 0.0, math.pi / 2)))
    tcp = SerialManipulator.from_robot(arm, "tcp", strict=False)
    np.testing.assert_allclose(model.end_effector_pose(q, offset), tcp.end_effector_pose(q), atol=TOL)
    np.testing.assert_allclose(model.end_effector_pose(q[0], offset), tcp.end_effector_pose(q[0]), atol=TOL)
    np.testing.assert_allclose(model.jacobian(q, offset=offset), tcp.jacobian(q), atol=TOL)
    np.testing.assert_allclose(model.jacobian(q, offset=(0.0, 0.0, 0.10)), tcp.jacobian(q), atol=TOL)

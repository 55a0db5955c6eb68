"""bb_robot.model.kinematics: forward kinematics against poses derived by hand.

Small robots are built here so every expected pose can be written down with a pencil
(planar arm, slider, tilted revolute joint, axis-angle identities); the bundled bb_arm is
checked at poses worked out from its URDF.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from helpers.robots import UR3E_JOINTS

from bb_robot.model.errors import InvalidJointValue, InvalidRobot, UnknownJoint
from bb_robot.model.geometry import Origin
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Joint, Link, Mimic, Robot

L1, L2 = 0.7, 0.4
Z = (0.0, 0.0, 1.0)


def robot(links: list[str], joints: list[Joint], name: str = "hand_made") -> Robot:
    return Robot.assemble(name, [Link(n) for n in links], joints)


def planar_arm() -> Robot:
    """Two revolute joints about z, links of length L1 and L2 along x, a fixed tip."""
    return robot(
        ["base", "upper", "fore", "tip"],
        [
            Joint("shoulder", "revolute", "base", "upper", axis=Z),
            Joint("elbow", "revolute", "upper", "fore", Origin((L1, 0.0, 0.0)), axis=Z),
            Joint("tip_joint", "fixed", "fore", "tip", Origin((L2, 0.0, 0.0))),
        ],
        "planar_arm",
    )


def rz(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def angle_about_z(rotation: np.ndarray) -> float:
    """The angle of a rotation known to be about z."""
    assert rotation[2, 2] == pytest.approx(1.0)
    return math.atan2(rotation[1, 0], rotation[0, 0])


def relative(poses: dict[str, np.ndarray], parent: str, child: str) -> np.ndarray:
    return np.linalg.inv(poses[parent]) @ poses[child]


# ------------------------------------------------------------------------ analytic poses


@pytest.mark.parametrize(("q1", "q2"), [(0.0, 0.0), (math.pi / 2, 0.0), (0.3, -1.1), (-2.5, 2.0), (math.pi, math.pi)])
def test_planar_two_link_arm_tip(q1: float, q2: float) -> None:
    fk = ForwardKinematics(planar_arm())
    poses = fk.poses({"shoulder": q1, "elbow": q2})
    tip = poses["tip"]
    assert tip[:3, 3] == pytest.approx(
        [L1 * math.cos(q1) + L2 * math.cos(q1 + q2), L1 * math.sin(q1) + L2 * math.sin(q1 + q2), 0.0],
        abs=1e-12,
    )
    np.testing.assert_allclose(tip[:3, :3], rz(q1 + q2), atol=1e-12)
    # the elbow sits at the end of the first link
    assert poses["fore"][:3, 3] == pytest.approx([L1 * math.cos(q1), L1 * math.sin(q1), 0.0])
    np.testing.assert_allclose(poses["upper"][:3, :3], rz(q1), atol=1e-12)


def test_root_pose_is_identity() -> None:
    poses = ForwardKinematics(planar_arm()).poses({"shoulder": 1.0, "elbow": 2.0})
    np.testing.assert_array_equal(poses["base"], np.eye(4))


def test_prismatic_joint_slides_along_its_axis_in_the_joint_frame() -> None:
    slider = robot(
        ["base", "carriage"],
        [
            Joint(
                "slide",
                "prismatic",
                "base",
                "carriage",
                Origin((0.5, 0.0, 0.2), (0.0, 0.0, math.pi / 2)),
                axis=(1.0, 0.0, 0.0),
            )
        ],
    )
    pose = ForwardKinematics(slider).poses({"slide": 0.3})["carriage"]
    # joint-frame x is parent y after the 90 degree yaw
    assert pose[:3, 3] == pytest.approx([0.5, 0.3, 0.2], abs=1e-12)
    np.testing.assert_allclose(pose[:3, :3], rz(math.pi / 2), atol=1e-12)
    back = ForwardKinematics(slider).poses({"slide": -0.1})["carriage"]
    assert back[:3, 3] == pytest.approx([0.5, -0.1, 0.2], abs=1e-12)


def test_revolute_axis_is_expressed_in_the_joint_frame() -> None:
    """Joint frame pitched 90 degrees: its z axis is the parent's x axis."""
    tilted = robot(
        ["base", "link", "tip"],
        [
            Joint("hinge", "revolute", "base", "link", Origin((0.0, 0.0, 1.0), (0.0, math.pi / 2, 0.0)), axis=Z),
            Joint("tip_joint", "fixed", "link", "tip", Origin((0.0, 1.0, 0.0))),
        ],
    )
    for q in (0.0, 0.4, -1.3, 2.9):
        tip = ForwardKinematics(tilted).poses({"hinge": q})["tip"]
        # (0, 1, 0) turned about +x by q, then lifted by the joint origin
        assert tip[:3, 3] == pytest.approx([0.0, math.cos(q), 1.0 + math.sin(q)], abs=1e-12)


def test_continuous_joint_turns_past_a_full_turn() -> None:
    wheel = robot(
        ["base", "wheel", "rim"],
        [
            Joint("spin", "continuous", "base", "wheel", axis=Z),
            Joint("rim_joint", "fixed", "wheel", "rim", Origin((0.2, 0.0, 0.0))),
        ],
    )
    fk = ForwardKinematics(wheel)
    q = 7.0  # beyond 2 pi
    rim = fk.poses({"spin": q})["rim"]
    assert rim[:3, 3] == pytest.approx([0.2 * math.cos(q), 0.2 * math.sin(q), 0.0], abs=1e-12)
    np.testing.assert_allclose(rim, fk.poses({"spin": q - 2 * math.pi})["rim"], atol=1e-12)


def test_fixed_joint_pose_is_its_origin() -> None:
    mounted = robot(
        ["base", "sensor"],
        [Joint("mount", "fixed", "base", "sensor", Origin((1.0, 2.0, 3.0), (0.0, 0.0, 0.5)))],
    )
    fk = ForwardKinematics(mounted)
    assert fk.joint_names == ()
    pose = fk.poses()["sensor"]
    assert pose[:3, 3] == pytest.approx([1.0, 2.0, 3.0])
    np.testing.assert_allclose(pose[:3, :3], rz(0.5), atol=1e-12)


def test_rotation_about_an_oblique_axis_fixes_the_axis_and_turns_by_the_angle() -> None:
    axis = np.array([1.0, 1.0, 1.0]) / math.sqrt(3.0)
    oblique = robot(["base", "body"], [Joint("j", "revolute", "base", "body", axis=tuple(axis))])
    fk = ForwardKinematics(oblique)
    for q in (0.2, 1.0, -2.4):
        rotation = fk.poses({"j": q})["body"][:3, :3]
        np.testing.assert_allclose(rotation @ axis, axis, atol=1e-12)
        assert np.trace(rotation) == pytest.approx(1.0 + 2.0 * math.cos(q))
        # the antisymmetric part is sin(q)·[axis]x: a right-handed turn of +q
        antisym = (rotation - rotation.T) / 2.0
        assert [antisym[2, 1], antisym[0, 2], antisym[1, 0]] == pytest.approx(list(math.sin(q) * axis))


def test_rotations_are_orthonormal_with_determinant_one(bb_arm: Robot) -> None:
    fk = ForwardKinematics(bb_arm)
    rng = np.random.default_rng(3)
    batch = rng.uniform(-3.0, 3.0, size=(40, len(fk.joint_names)))
    poses = fk.compute(batch)
    rotations = poses[..., :3, :3]
    gram = np.einsum("...ji,...jk->...ik", rotations, rotations)
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(3), gram.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0, atol=1e-12)
    np.testing.assert_array_equal(poses[..., 3, :], np.broadcast_to([0.0, 0.0, 0.0, 1.0], poses[..., 3, :].shape))


# --------------------------------------------------------------------------- the bb_arm


def test_bb_arm_at_zero_is_a_vertical_column(bb_arm: Robot) -> None:
    poses = ForwardKinematics(bb_arm).poses()
    heights = {
        "shoulder_link": 0.15,
        "upper_arm_link": 0.27,
        "forearm_link": 0.67,
        "wrist_1_link": 1.02,
        "wrist_2_link": 1.11,
        "wrist_3_link": 1.20,
        "tool0": 1.28,
        "gripper_base": 1.28,
        "tcp": 1.38,
    }
    for link, z in heights.items():
        assert poses[link][:3, 3] == pytest.approx([0.0, 0.0, z], abs=1e-12), link
    # the gripper is mounted with a 90 degree yaw
    np.testing.assert_allclose(poses["tcp"][:3, :3], rz(math.pi / 2), atol=1e-12)
    np.testing.assert_allclose(poses["tool0"][:3, :3], np.eye(3), atol=1e-12)


@pytest.mark.parametrize(("pan", "lift"), [(0.0, 0.5), (0.7, -0.9), (-2.0, 1.4)])
def test_bb_arm_pan_and_lift_swing_the_tcp_on_a_sphere(bb_arm: Robot, pan: float, lift: float) -> None:
    reach = 0.40 + 0.35 + 0.09 + 0.09 + 0.08 + 0.10  # shoulder_lift axis to tcp
    tcp = ForwardKinematics(bb_arm).poses({"shoulder_pan_joint": pan, "shoulder_lift_joint": lift})["tcp"][:3, 3]
    assert tcp == pytest.approx(
        [
            reach * math.sin(lift) * math.cos(pan),
            reach * math.sin(lift) * math.sin(pan),
            0.27 + reach * math.cos(lift),
        ],
        abs=1e-12,
    )


def test_bb_arm_fingers_open_symmetrically_through_the_mimic(bb_arm: Robot) -> None:
    fk = ForwardKinematics(bb_arm)
    assert "right_finger_joint" not in fk.joint_names
    assert fk.mimic_joints == ("right_finger_joint",)
    d = 0.03
    poses = fk.poses({"left_finger_joint": d})
    # gripper y (the finger axis) is world -x after the 90 degree mount yaw
    assert poses["left_finger"][:3, 3] == pytest.approx([-(0.01 + d), 0.0, 1.33], abs=1e-12)
    assert poses["right_finger"][:3, 3] == pytest.approx([0.01 + d, 0.0, 1.33], abs=1e-12)


# ------------------------------------------------------------------------------- mimics


def mimic_chain() -> Robot:
    """synthetic/mimic_chain.urdf rebuilt: j2 = 2·j1 + 0.1, j3 = −1·j2."""
    origin = Origin((0.0, 0.0, 0.1))
    return robot(
        ["a", "b", "c", "d"],
        [
            Joint("j1", "revolute", "a", "b", origin, Z),
            Joint("j2", "revolute", "b", "c", origin, Z, mimic=Mimic("j1", 2.0, 0.1)),
            Joint("j3", "revolute", "c", "d", origin, Z, mimic=Mimic("j2", -1.0, 0.0)),
        ],
    )


def check_mimic_chain(fk: ForwardKinematics) -> None:
    assert fk.joint_names == ("j1",)
    assert fk.mimic_joints == ("j2", "j3")
    for q1 in (0.0, 0.25, -0.8):
        poses = fk.poses({"j1": q1})
        assert angle_about_z(relative(poses, "a", "b")[:3, :3]) == pytest.approx(q1)
        assert angle_about_z(relative(poses, "b", "c")[:3, :3]) == pytest.approx(2 * q1 + 0.1)
        assert angle_about_z(relative(poses, "c", "d")[:3, :3]) == pytest.approx(-(2 * q1 + 0.1))


def test_mimic_of_a_mimic_resolves_transitively() -> None:
    check_mimic_chain(ForwardKinematics(mimic_chain()))


def test_mimic_chain_urdf(corpus_dir: Path) -> None:
    from bb_robot.urdf.builder import load_urdf

    check_mimic_chain(ForwardKinematics(load_urdf(corpus_dir / "synthetic" / "mimic_chain.urdf")))


def test_mimic_cycle_urdf_is_rejected(corpus_dir: Path) -> None:
    from bb_robot.urdf.builder import load_urdf

    with pytest.raises(InvalidRobot) as caught:
        load_urdf(corpus_dir / "synthetic" / "mimic_cycle.urdf")
    assert caught.value.kinds == {"mimic_cycle"}


def test_prismatic_mimic_with_multiplier_and_offset() -> None:
    twin = robot(
        ["base", "lead", "follower"],
        [
            Joint("lead_joint", "prismatic", "base", "lead", axis=(1.0, 0.0, 0.0)),
            Joint(
                "follow_joint",
                "prismatic",
                "base",
                "follower",
                axis=(0.0, 1.0, 0.0),
                mimic=Mimic("lead_joint", -0.5, 0.02),
            ),
        ],
    )
    poses = ForwardKinematics(twin).poses({"lead_joint": 0.2})
    assert poses["lead"][:3, 3] == pytest.approx([0.2, 0.0, 0.0])
    assert poses["follower"][:3, 3] == pytest.approx([0.0, -0.5 * 0.2 + 0.02, 0.0])


def test_mimic_declared_before_its_source_in_the_tree() -> None:
    """The follower is visited before the joint it follows: it still uses the source's value."""
    early = robot(
        ["base", "first", "second"],
        [
            Joint("follower", "revolute", "base", "first", axis=Z, mimic=Mimic("leader", 3.0)),
            Joint("leader", "revolute", "first", "second", axis=Z),
        ],
    )
    poses = ForwardKinematics(early).poses({"leader": 0.2})
    assert angle_about_z(poses["first"][:3, :3]) == pytest.approx(0.6)
    assert angle_about_z(relative(poses, "first", "second")[:3, :3]) == pytest.approx(0.2)


def test_mimic_of_a_floating_joint_is_refused_up_front() -> None:
    odd = robot(
        ["base", "free", "follower"],
        [
            Joint("float", "floating", "base", "free"),
            Joint("follow", "revolute", "base", "follower", axis=Z, mimic=Mimic("float")),
        ],
    )
    with pytest.raises(InvalidJointValue) as caught:
        ForwardKinematics(odd)
    assert "'follow'" in str(caught.value) and "'float'" in str(caught.value)


# --------------------------------------------------------------- floating and planar joints


def with_held_joints() -> Robot:
    return robot(
        ["base", "body", "arm", "slider"],
        [
            Joint("free", "floating", "base", "body", Origin((1.0, 2.0, 3.0), (0.0, 0.0, 0.3))),
            Joint("swing", "revolute", "body", "arm", Origin((1.0, 0.0, 0.0)), axis=Z),
            Joint("plane", "planar", "base", "slider", Origin((0.0, -1.0, 0.0)), axis=Z),
        ],
    )


def test_floating_and_planar_joints_are_reported_as_held() -> None:
    fk = ForwardKinematics(with_held_joints())
    assert fk.held_joints == ("free", "plane")
    assert fk.joint_names == ("swing",)
    assert fk.link_names == ("base", "body", "arm", "slider")


def test_held_joints_stay_at_their_origin_and_links_below_still_move() -> None:
    fk = ForwardKinematics(with_held_joints())
    poses = fk.poses({"swing": 0.5})
    assert poses["body"][:3, 3] == pytest.approx([1.0, 2.0, 3.0])
    np.testing.assert_allclose(poses["body"][:3, :3], rz(0.3), atol=1e-12)
    assert poses["slider"][:3, 3] == pytest.approx([0.0, -1.0, 0.0])
    # arm: 1 m along the body's x (yawed 0.3), turned by a further 0.5
    assert poses["arm"][:3, 3] == pytest.approx([1.0 + math.cos(0.3), 2.0 + math.sin(0.3), 3.0])
    np.testing.assert_allclose(poses["arm"][:3, :3], rz(0.8), atol=1e-12)


@pytest.mark.parametrize("joint", ["free", "plane"])
def test_setting_a_held_joint_is_an_invalid_joint_value(joint: str) -> None:
    with pytest.raises(InvalidJointValue) as caught:
        ForwardKinematics(with_held_joints()).poses({joint: 0.1})
    assert f"'{joint}'" in str(caught.value)


# --------------------------------------------------------------------------- batches


def test_batch_equals_each_configuration_alone(bb_arm: Robot) -> None:
    fk = ForwardKinematics(bb_arm)
    rng = np.random.default_rng(7)
    batch = rng.uniform(-2.0, 2.0, size=(16, len(fk.joint_names)))
    together = fk.compute(batch)
    assert together.shape == (16, len(bb_arm.links), 4, 4)
    for i, q in enumerate(batch):
        alone = fk.compute(q)
        assert alone.shape == (len(bb_arm.links), 4, 4)
        np.testing.assert_allclose(together[i], alone, atol=1e-14)


def test_batch_of_one_and_empty_batch(bb_arm: Robot) -> None:
    fk = ForwardKinematics(bb_arm)
    q = np.linspace(-1.0, 1.0, len(fk.joint_names))
    np.testing.assert_allclose(fk.compute(q[None, :])[0], fk.compute(q), atol=1e-15)
    assert fk.compute(np.zeros((0, len(fk.joint_names)))).shape == (0, len(bb_arm.links), 4, 4)


def test_compute_rows_follow_link_names_and_poses_is_keyed_by_link(bb_arm: Robot) -> None:
    fk = ForwardKinematics(bb_arm)
    assert fk.link_names == bb_arm.topology.link_order
    q = np.linspace(0.1, 0.7, len(fk.joint_names))
    rows = fk.compute(q)
    poses = fk.poses(dict(zip(fk.joint_names, q, strict=True)))
    assert list(poses) == list(fk.link_names)
    for i, name in enumerate(fk.link_names):
        np.testing.assert_array_equal(poses[name], rows[i])


def test_joint_names_are_independent_single_dof_joints_in_traversal_order(bb_arm: Robot) -> None:
    assert ForwardKinematics(bb_arm).joint_names == (*UR3E_JOINTS, "left_finger_joint")


def test_compute_accepts_lists_and_does_not_change_its_input() -> None:
    fk = ForwardKinematics(planar_arm())
    q = np.array([0.3, 0.4])
    fk.compute(q)
    np.testing.assert_array_equal(q, [0.3, 0.4])
    np.testing.assert_allclose(fk.compute([0.3, 0.4]), fk.compute(q))


def test_vector_places_named_values_and_zeros_elsewhere(bb_arm: Robot) -> None:
    fk = ForwardKinematics(bb_arm)
    q = fk.vector({"elbow_joint": 0.5, "left_finger_joint": 0.01})
    assert list(q) == [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.01]


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "q",
    [
        np.zeros(1),  # too few
        np.zeros(3),  # too many
        np.zeros((2, 3)),  # batch with wrong width
        np.zeros((2, 2, 2)),  # too many dimensions
        np.float64(0.0),  # a scalar
    ],
    ids=["short", "long", "wide-batch", "3d", "scalar"],
)
def test_wrong_shape_is_an_invalid_joint_value(q: np.ndarray) -> None:
    fk = ForwardKinematics(planar_arm())
    with pytest.raises(InvalidJointValue) as caught:
        fk.compute(q)
    assert "expected 2 joint values" in str(caught.value)
    assert "planar_arm" in str(caught.value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_value_is_an_invalid_joint_value_naming_the_joint(bad: float) -> None:
    fk = ForwardKinematics(planar_arm())
    with pytest.raises(InvalidJointValue) as caught:
        fk.compute([0.0, bad])
    assert "elbow" in str(caught.value) and "shoulder" not in str(caught.value)
    batch = np.zeros((5, 2))
    batch[3, 0] = bad
    with pytest.raises(InvalidJointValue) as caught:
        fk.compute(batch)
    assert "shoulder" in str(caught.value)
    with pytest.raises(InvalidJointValue):
        fk.poses({"shoulder": bad})


def test_poses_with_a_mimic_joint_name_is_an_invalid_joint_value(bb_arm: Robot) -> None:
    with pytest.raises(InvalidJointValue) as caught:
        ForwardKinematics(bb_arm).poses({"right_finger_joint": 0.01})
    assert "right_finger_joint" in str(caught.value) and "mimic" in str(caught.value)


def test_poses_with_a_fixed_joint_name_is_an_invalid_joint_value(bb_arm: Robot) -> None:
    with pytest.raises(InvalidJointValue) as caught:
        ForwardKinematics(bb_arm).poses({"tcp_joint": 0.0})
    assert "tcp_joint" in str(caught.value) and "fixed" in str(caught.value)


def test_poses_with_an_unknown_joint_name_is_unknown_joint(bb_arm: Robot) -> None:
    with pytest.raises(UnknownJoint) as caught:
        ForwardKinematics(bb_arm).poses({"tcp": 0.0})  # a link, not a joint
    assert caught.value.joint == "tcp"
    assert not isinstance(caught.value, InvalidJointValue)


@pytest.mark.parametrize(
    "q",
    [[[0.0, 1.0], [0.0]], ["a", "b"], [1 + 2j, 0.0], [{"shoulder": 1.0}, 0.0]],
    ids=["ragged-batch", "strings", "complex", "dict-inside"],
)
def test_input_that_is_not_an_array_of_numbers_is_an_invalid_joint_value(q: object) -> None:
    with pytest.raises(InvalidJointValue) as caught:
        ForwardKinematics(planar_arm()).compute(q)
    assert "planar_arm" in str(caught.value)


@pytest.mark.parametrize("value", ["x", None, [1.0, 2.0]], ids=["string", "none", "list"])
def test_poses_with_a_value_that_is_not_a_number_is_an_invalid_joint_value(value: object) -> None:
    with pytest.raises(InvalidJointValue) as caught:
        ForwardKinematics(planar_arm()).poses({"elbow": value})  # type: ignore[dict-item]
    assert "elbow" in str(caught.value)


@pytest.mark.parametrize("mode", ["auto", "numpy"])
def test_compute_writes_into_an_array_the_caller_owns(
    bb_arm: Robot, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bb_robot.model import compiled

    monkeypatch.setattr(compiled, "_mode", [mode])
    fk = ForwardKinematics(bb_arm)
    configurations = np.random.default_rng(3).uniform(-1.0, 1.0, (40, len(fk.joint_names)))
    out = np.full((40, len(fk.link_names), 4, 4), np.nan)
    assert fk.compute(configurations, out=out) is out
    np.testing.assert_allclose(out, fk.compute(configurations), atol=1e-12, rtol=0)
    one = np.empty((len(fk.link_names), 4, 4))
    assert fk.compute(configurations[5], out=one) is one
    np.testing.assert_allclose(one, out[5], atol=1e-12, rtol=0)


def test_compute_refuses_an_out_array_it_cannot_write(bb_arm: Robot) -> None:
    from bb_robot.model.errors import InvalidOutputArray

    fk = ForwardKinematics(bb_arm)
    q = np.zeros((3, len(fk.joint_names)))
    links = len(fk.link_names)
    read_only = np.empty((3, links, 4, 4))
    read_only.flags.writeable = False
    cases = {
        "has shape (2,": np.empty((2, links, 4, 4)),
        "dtype float32": np.empty((3, links, 4, 4), dtype=np.float32),
        "not C-contiguous": np.empty((3, links, 4, 4), order="F"),
        "read-only": read_only,
        "is a list": [[0.0]],
    }
    for message, out in cases.items():
        with pytest.raises(InvalidOutputArray, match=re.escape(message)) as raised:
            fk.compute(q, out=out)  # type: ignore[arg-type]
        assert "bb_arm" in str(raised.value)

"""bb_robot.urdf.builder: from the seed-000 IR to the robot model.

World anchors, undefined links, axes, limits, soft limits, transmissions, carried data,
and the structural files of the synthetic corpus (``synthetic_dir`` skips when absent).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest

from bb_robot.model.errors import InvalidRobot
from bb_robot.model.geometry import Box, Origin
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Dynamics, JointLimits, Mimic, Robot, Transmission
from bb_robot.urdf import DuplicateNameError, ir, parse_file, parse_string
from bb_robot.urdf.builder import build_robot, load_urdf

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"

LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'


def urdf(body: str, name: str = "r") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def build(body: str, **kwargs: bool) -> Robot:
    return build_robot(parse_string(urdf(body)), **kwargs)


def joint(name: str, parent: str, child: str, kind: str = "revolute", inner: str = LIMIT) -> str:
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{inner}</joint>'


def links(*names: str) -> str:
    return "".join(f'<link name="{n}"/>' for n in names)


ANCHORED = links("base", "arm") + joint("anchor", "world", "base", "fixed", "") + joint("j1", "base", "arm")


# --------------------------------------------------------------------------- the bb_arm


def test_bb_arm_builds() -> None:
    robot = load_urdf(BB_ARM)
    assert robot.name == "bb_arm"
    assert robot.root_link == "base_link"
    assert len(robot.links) == 12 and len(robot.joints) == 11 and len(robot.actuators) == 7
    assert robot.warnings == ()
    assert robot.source == str(BB_ARM)


# ------------------------------------------------------------------------ world anchors


def test_undefined_world_anchor_is_kept_as_the_root() -> None:
    robot = build(ANCHORED)
    assert robot.root_link == "world"
    assert "world" in robot.links and "anchor" in robot.joints
    assert robot.path_to("arm") == ("world", "anchor", "base", "j1", "arm")
    assert robot.links["world"].visuals == () and robot.links["world"].inertial is None
    assert not any("world" in w for w in robot.warnings)


def test_drop_world_removes_the_anchor_with_a_warning() -> None:
    robot = build(ANCHORED, drop_world=True)
    assert robot.root_link == "base"
    assert "world" not in robot.links and "anchor" not in robot.joints
    assert robot.path_to("arm") == ("base", "j1", "arm")
    assert any("'anchor'" in w and "drop_world" in w for w in robot.warnings)


def test_defined_world_link_is_kept_by_default() -> None:
    robot = build('<link name="world"/>' + ANCHORED)
    assert robot.root_link == "world"
    assert list(robot.links).count("world") == 1


def test_drop_world_also_drops_a_defined_world_link() -> None:
    """Real files (UR, sdformat tests) define ``<link name="world"/>``: drop_world must act on them too."""
    robot = build('<link name="world"/>' + ANCHORED, drop_world=True)
    assert robot.root_link == "base"
    assert "world" not in robot.links and "anchor" not in robot.joints
    assert any("'anchor'" in w and "drop_world" in w for w in robot.warnings)


def test_drop_world_on_the_ur3e_description(corpus_dir: Path) -> None:
    path = corpus_dir / "ur_description_ros2" / "ur3e.urdf"
    if not path.is_file():
        pytest.skip(f"{path} is not in the corpus")
    kept = load_urdf(path)
    assert kept.root_link == "world"
    dropped = load_urdf(path, drop_world=True)
    assert dropped.root_link == "base_link"
    assert "world" not in dropped.links
    assert len(dropped.links) == len(kept.links) - 1
    assert any("drop_world" in w for w in dropped.warnings)
    # the chain below is unchanged: same pose of the tool relative to base_link
    a, b = ForwardKinematics(kept), ForwardKinematics(dropped)
    q = np.linspace(-1.0, 1.0, len(b.joint_names))
    assert a.joint_names == b.joint_names
    pa, pb = a.poses(dict(zip(a.joint_names, q, strict=True))), b.poses(dict(zip(b.joint_names, q, strict=True)))
    np.testing.assert_allclose(np.linalg.inv(pa["base_link"]) @ pa["tool0"], pb["tool0"], atol=1e-12)


def test_world_inside_the_tree_is_an_ordinary_link() -> None:
    body = links("base", "world", "x") + joint("j", "base", "world") + joint("k", "world", "x")
    robot = build(body, drop_world=True)
    assert robot.root_link == "base"
    assert robot.path_to("x") == ("base", "j", "world", "k", "x")
    assert not any("drop_world" in w for w in robot.warnings)


def test_other_undefined_links_are_invalid_robot_naming_them() -> None:
    body = links("base", "arm") + joint("anchor", "ground", "base", "fixed", "") + joint("j1", "base", "arm")
    for drop_world in (False, True):
        with pytest.raises(InvalidRobot) as caught:
            build(body, drop_world=drop_world)
        # every defined link has a parent, so there is no root either
        assert caught.value.kinds == {"undefined_link", "no_root"}
        assert caught.value.problems[0].names == ("anchor", "ground")
        assert "'ground'" in str(caught.value) and "'anchor'" in str(caught.value)


def test_undefined_child_link_is_invalid_robot() -> None:
    with pytest.raises(InvalidRobot) as caught:
        build(links("base") + joint("j1", "base", "hand"))
    assert caught.value.kinds == {"undefined_link"}
    assert "'hand'" in str(caught.value)


def test_empty_robot_is_invalid_robot() -> None:
    with pytest.raises(InvalidRobot) as caught:
        build("")
    assert caught.value.kinds == {"no_root"}


# ---------------------------------------------------------------------------------- axes


@pytest.mark.parametrize(
    ("written", "unit"),
    [
        ("0 0 2", (0.0, 0.0, 1.0)),
        ("3 4 0", (0.6, 0.8, 0.0)),
        ("0 -0.5 0", (0.0, -1.0, 0.0)),
        ("1 0 0", (1.0, 0.0, 0.0)),
    ],
)
def test_axis_is_normalised(written: str, unit: tuple[float, float, float]) -> None:
    robot = build(links("a", "b") + joint("j", "a", "b", inner=f'<axis xyz="{written}"/>{LIMIT}'))
    assert robot.joints["j"].axis == pytest.approx(unit)
    assert math.fsum(c * c for c in robot.joints["j"].axis) == pytest.approx(1.0)


def test_a_long_axis_does_not_scale_the_motion() -> None:
    body = (
        links("a", "b", "c")
        + joint("turn", "a", "b", inner=f'<axis xyz="0 0 5"/>{LIMIT}')
        + joint("slide", "a", "c", "prismatic", f'<axis xyz="0 2 0"/>{LIMIT}')
    )
    poses = ForwardKinematics(build(body)).poses({"turn": 0.5, "slide": 0.25})
    assert math.atan2(poses["b"][1, 0], poses["b"][0, 0]) == pytest.approx(0.5)
    assert poses["c"][:3, 3] == pytest.approx([0.0, 0.25, 0.0])


def test_missing_axis_defaults_to_x() -> None:
    robot = build(links("a", "b") + joint("j", "a", "b"))
    assert robot.joints["j"].axis == (1.0, 0.0, 0.0)


def test_fixed_joint_ignores_a_written_axis() -> None:
    robot = build(links("a", "b") + joint("j", "a", "b", "fixed", '<axis xyz="0 0 1"/>'))
    assert robot.joints["j"].axis == (1.0, 0.0, 0.0)


def test_axis_of_a_hand_made_ir_with_zero_length_is_refused() -> None:
    doc = ir.Robot("r", [ir.Link("a"), ir.Link("b")], [ir.Joint("j", "revolute", "a", "b", axis=(0.0, 0.0, 0.0))])
    with pytest.raises(ValueError, match="'j'.*zero-length"):
        build_robot(doc)


# -------------------------------------------------------------------------------- limits


def test_revolute_limits_are_kept() -> None:
    robot = build(links("a", "b") + joint("j", "a", "b"))
    assert robot.joints["j"].limits == JointLimits(lower=-1.0, upper=1.0, velocity=2.0, effort=10.0)


def test_continuous_joint_has_no_position_limits() -> None:
    inner = LIMIT + '<safety_controller soft_lower_limit="-0.5" soft_upper_limit="0.5" k_position="1" k_velocity="2"/>'
    robot = build(links("a", "b") + joint("wheel", "a", "b", "continuous", inner))
    limits = robot.joints["wheel"].limits
    assert (limits.lower, limits.upper, limits.soft_lower, limits.soft_upper) == (None, None, None, None)
    assert (limits.velocity, limits.effort) == (2.0, 10.0)


def test_safety_controller_gives_soft_limits() -> None:
    robot = load_urdf(BB_ARM)
    limits = robot.joints["shoulder_pan_joint"].limits
    assert (limits.soft_lower, limits.soft_upper) == (-3.1, 3.1)
    assert (limits.lower, limits.upper) == (-3.14159, 3.14159)
    assert robot.joints["elbow_joint"].limits.soft_lower is None


def test_safety_controller_without_limit() -> None:
    inner = '<safety_controller soft_lower_limit="-0.2" soft_upper_limit="0.3" k_velocity="1"/>'
    limits = build(links("a", "b") + joint("j", "a", "b", inner=inner)).joints["j"].limits
    assert limits == JointLimits(soft_lower=-0.2, soft_upper=0.3)


def test_no_limit_and_no_safety_controller_is_no_limits() -> None:
    robot = build(links("a", "b") + joint("j", "a", "b", "fixed", "") + links("c") + joint("k", "a", "c", inner=""))
    assert robot.joints["j"].limits is None
    assert robot.joints["k"].limits is None


# ---------------------------------------------------------------------- transmissions


def test_transmissions_become_actuators_of_their_joints() -> None:
    robot = load_urdf(BB_ARM)
    assert robot.actuators["shoulder_pan_motor"].joint == "shoulder_pan_joint"
    assert robot.actuators["shoulder_pan_motor"].transmission == Transmission(reduction=100.0, offset=0.0)
    assert robot.joints["shoulder_pan_joint"].actuators == ("shoulder_pan_motor",)


def test_negative_reduction_keeps_its_sign_and_leaves_reversed_unset() -> None:
    transmission = load_urdf(BB_ARM).actuators["wrist_3_motor"].transmission
    assert transmission.reduction == -50.0
    assert transmission.reversed is None


TRANSMISSION = """
<transmission name="{name}">
  <type>transmission_interface/SimpleTransmission</type>
  <joint name="{joint}"><hardwareInterface>x</hardwareInterface>{offset}</joint>
  {actuator}
</transmission>
"""


def test_transmission_without_actuator_name_gets_joint_actuator() -> None:
    body = links("a", "b") + joint("j", "a", "b") + TRANSMISSION.format(name="t", joint="j", offset="", actuator="")
    robot = build(body)
    assert list(robot.actuators) == ["j_actuator"]
    assert robot.actuators["j_actuator"].joint == "j"
    assert robot.actuators["j_actuator"].transmission == Transmission(reduction=1.0, offset=0.0)
    assert robot.actuator_path("j_actuator") == ("a", "j", "j_actuator")


def test_transmission_offset_and_reduction_are_carried() -> None:
    actuator = '<actuator name="m"><mechanicalReduction>12.5</mechanicalReduction></actuator>'
    body = (
        links("a", "b")
        + joint("j", "a", "b")
        + TRANSMISSION.format(name="t", joint="j", offset="<offset>0.3</offset>", actuator=actuator)
    )
    robot = build(body)
    assert robot.actuators["m"].transmission == Transmission(reduction=12.5, offset=0.3)
    assert ("transmissions", "m", "offset") in robot.param_subscriptions


def test_transmission_on_an_undefined_joint_is_skipped_with_a_warning() -> None:
    body = links("a", "b") + joint("j", "a", "b") + TRANSMISSION.format(name="t", joint="nope", offset="", actuator="")
    robot = build(body)
    assert robot.actuators == {}
    assert any("transmission 't'" in w and "'nope'" in w for w in robot.warnings)


# ------------------------------------------------------------------------- carried data


def test_origin_dynamics_and_mimic_are_carried() -> None:
    inner = (
        '<origin xyz="0.1 0.2 0.3" rpy="0 0 1.5"/><axis xyz="0 0 1"/>'
        + LIMIT
        + '<dynamics damping="0.7" friction="0.2"/><mimic joint="j" multiplier="-2" offset="0.5"/>'
    )
    robot = build(links("a", "b", "c") + joint("j", "a", "b") + joint("k", "a", "c", inner=inner))
    k = robot.joints["k"]
    assert k.origin == Origin((0.1, 0.2, 0.3), (0.0, 0.0, 1.5))
    assert k.dynamics == Dynamics(damping=0.7, friction=0.2)
    assert k.mimic == Mimic("j", -2.0, 0.5)
    assert (k.parent_link, k.child_link, k.type) == ("a", "c", "revolute")


def test_missing_origin_is_the_identity() -> None:
    robot = build(links("a", "b") + joint("j", "a", "b"))
    assert robot.joints["j"].origin == Origin((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def test_all_visuals_collisions_and_inertial_are_carried() -> None:
    link = """
    <link name="a">
      <visual name="v1"><geometry><box size="1 2 3"/></geometry></visual>
      <visual name="v2"><geometry><sphere radius="0.5"/></geometry></visual>
      <collision name="c1"><geometry><box size="1 1 1"/></geometry></collision>
      <collision name="c2"><geometry><sphere radius="1"/></geometry></collision>
      <inertial><mass value="2.5"/><inertia ixx="1" iyy="2" izz="3" ixy="0" ixz="0" iyz="0"/></inertial>
    </link>"""
    robot = build(link)
    a = robot.links["a"]
    assert [v.name for v in a.visuals] == ["v1", "v2"]
    assert a.visuals[0].geometry == Box((1.0, 2.0, 3.0))
    assert [c.name for c in a.collisions] == ["c1", "c2"]
    assert a.inertial.mass == 2.5 and a.inertial.inertia.izz == 3.0


def test_document_warnings_are_kept() -> None:
    robot = build(links("a") + '<gazebo reference="a"><material>x</material></gazebo>')
    assert any("<gazebo" in w for w in robot.warnings)


def test_building_does_not_change_the_document() -> None:
    doc = parse_string(urdf('<link name="world"/>' + ANCHORED))
    before = copy.deepcopy(doc)
    build_robot(doc, drop_world=True)
    build_robot(doc)
    assert doc == before


# ------------------------------------------------------------------ the synthetic corpus


def structural_error(path: Path) -> InvalidRobot:
    with pytest.raises(InvalidRobot) as caught:
        load_urdf(path)
    assert caught.value.source == str(path)
    assert str(path) in str(caught.value)
    return caught.value


def test_cycle_urdf(synthetic_dir: Path) -> None:
    error = structural_error(synthetic_dir / "cycle.urdf")
    assert error.kinds == {"cycle", "no_root"}
    cycle = next(p for p in error.problems if p.kind == "cycle")
    assert set(cycle.names) == {"a", "b", "c"}
    assert all(f"'{n}'" in cycle.message for n in "abc")


def test_two_roots_urdf(synthetic_dir: Path) -> None:
    error = structural_error(synthetic_dir / "two_roots.urdf")
    assert error.kinds == {"multiple_roots"}
    assert error.problems[0].names == ("a", "c")
    assert "'a'" in error.problems[0].message and "'c'" in error.problems[0].message


def test_missing_link_urdf(synthetic_dir: Path) -> None:
    error = structural_error(synthetic_dir / "missing_link.urdf")
    assert error.kinds == {"undefined_link"}
    assert error.problems[0].names == ("ab", "ghost")
    assert "'ghost'" in error.problems[0].message


def test_duplicate_link_urdf_is_refused_by_the_parser(synthetic_dir: Path) -> None:
    with pytest.raises(DuplicateNameError) as caught:
        parse_file(synthetic_dir / "duplicate_link.urdf")
    assert "'a'" in str(caught.value)


def test_duplicate_link_in_a_hand_made_document_is_invalid_robot() -> None:
    """What duplicate_link.urdf would give if a parser let it through."""
    doc = ir.Robot(
        "synthetic",
        [ir.Link("a"), ir.Link("a"), ir.Link("b")],
        [ir.Joint("ab", "revolute", "a", "b", axis=(0.0, 0.0, 1.0))],
    )
    with pytest.raises(InvalidRobot) as caught:
        build_robot(doc)
    assert caught.value.kinds == {"duplicate_link"}
    assert "link 'a' is defined 2 times" in str(caught.value)


def test_mimic_cycle_urdf(synthetic_dir: Path) -> None:
    error = structural_error(synthetic_dir / "mimic_cycle.urdf")
    assert error.kinds == {"mimic_cycle"}
    assert set(error.problems[0].names) == {"j1", "j2"}
    assert "'j1'" in error.problems[0].message and "'j2'" in error.problems[0].message


def test_mimic_chain_urdf_builds(synthetic_dir: Path) -> None:
    robot = load_urdf(synthetic_dir / "mimic_chain.urdf")
    assert robot.joints["j2"].mimic == Mimic("j1", 2.0, 0.1)
    assert robot.joints["j3"].mimic == Mimic("j2", -1.0, 0.0)


def test_x_axis_arm_urdf_keeps_its_axes(synthetic_dir: Path) -> None:
    robot = load_urdf(synthetic_dir / "x_axis_arm.urdf")
    assert robot.joints["j1"].axis == (1.0, 0.0, 0.0)
    assert robot.joints["j2"].axis == (0.0, 1.0, 0.0)


def test_long_chain_1000_urdf(synthetic_dir: Path) -> None:
    robot = load_urdf(synthetic_dir / "long_chain_1000.urdf")
    assert len(robot.links) == 1001
    assert robot.max_depth == 1000
    assert robot.depth_of("l1000") == 1000
    deepest = robot.path_to("l1000")
    assert len(deepest) == 2001
    assert deepest[:3] == ("l0", "j0", "l1") and deepest[-2:] == ("j999", "l1000")
    assert robot.leaf_links() == ["l1000"]
    # forward kinematics through all 1000 joints: each origin is 0.1 m along z after a 0.1 rad roll
    pose = ForwardKinematics(robot).poses()["l1000"]
    expected = np.zeros(3)
    for i in range(1000):
        expected += 0.1 * np.array([0.0, -math.sin(0.1 * i), math.cos(0.1 * i)])
    assert pose[:3, 3] == pytest.approx(expected, abs=1e-9)

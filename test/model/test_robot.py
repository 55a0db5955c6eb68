"""bb_robot.model.robot (seed 003, ``BB.Robot``): representation, lookups, paths, parameters.

``tree`` is the hand-made branching robot of ``conftest.rover``; ``bb_arm`` is the
bundled model.  Expected values are read off the tree drawing and the URDF file.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from helpers.robots import BB_ARM_LINKS, UR3E_JOINTS

from bb_robot.model.errors import (
    InvalidParameterValue,
    NoParentJoint,
    NotAnAncestor,
    UnknownActuator,
    UnknownJoint,
    UnknownLink,
    UnknownParameter,
)
from bb_robot.model.robot import (
    ActuatorInfo,
    Joint,
    JointLimits,
    Link,
    ParamLocation,
    Robot,
    SensorInfo,
    Transmission,
)

BB_ARM_JOINTS = {
    *UR3E_JOINTS,
    "tool0_joint",
    "gripper_mount_joint",
    "left_finger_joint",
    "right_finger_joint",
    "tcp_joint",
}
BB_ARM_ACTUATORS = {
    "shoulder_pan_motor": "shoulder_pan_joint",
    "shoulder_lift_motor": "shoulder_lift_joint",
    "elbow_motor": "elbow_joint",
    "wrist_1_motor": "wrist_1_joint",
    "wrist_2_motor": "wrist_2_joint",
    "wrist_3_motor": "wrist_3_joint",
    "gripper_motor": "left_finger_joint",
}


def shared_name_robot() -> Robot:
    """``base -j1-> tool -tool-> tip``: the joint ``tool`` shares the name of the link above it."""
    return Robot.assemble(
        "clash",
        [Link("base"), Link("tool"), Link("tip")],
        [
            Joint("j1", "revolute", "base", "tool", axis=(0.0, 0.0, 1.0)),
            Joint("tool", "fixed", "tool", "tip"),
        ],
    )


# --------------------------------------------------------------------------- representation


def test_links_and_joints_are_flat_maps_keyed_by_name(bb_arm: Robot) -> None:
    assert set(bb_arm.links) == set(BB_ARM_LINKS)
    assert set(bb_arm.joints) == BB_ARM_JOINTS
    for name, link in bb_arm.links.items():
        assert link.name == name
    for name, joint in bb_arm.joints.items():
        assert joint.name == name


def test_actuators_map_holds_name_joint_and_transmission(bb_arm: Robot) -> None:
    assert {name: a.joint for name, a in bb_arm.actuators.items()} == BB_ARM_ACTUATORS
    for name, actuator in bb_arm.actuators.items():
        assert isinstance(actuator, ActuatorInfo)
        assert actuator.name == name
    assert bb_arm.actuators["elbow_motor"].transmission == Transmission(reduction=80.0, offset=0.0)
    assert bb_arm.actuators["gripper_motor"].transmission.reduction == pytest.approx(314.159)


def test_sensors_map_keeps_what_each_sensor_is_attached_to(tree: Robot) -> None:
    assert set(tree.sensors) == {"camera", "pan_encoder", "battery"}
    assert tree.sensors["camera"] == SensorInfo("camera", ("link", "sensor_head"))
    assert tree.sensors["pan_encoder"].attached_to == ("joint", "pan")
    assert tree.sensors["battery"].attached_to == ("robot", "")
    assert tree.sensors["battery"].transmission is None


def test_robot_without_actuators_or_sensors_has_empty_maps() -> None:
    robot = Robot.assemble("solo", [Link("only")], [])
    assert dict(robot.actuators) == {}
    assert dict(robot.sensors) == {}
    assert dict(robot.joints) == {}
    assert robot.root_link == "only"


@pytest.mark.parametrize("attribute", ["links", "joints", "actuators", "sensors", "param_subscriptions"])
def test_name_maps_are_read_only(tree: Robot, attribute: str) -> None:
    mapping = getattr(tree, attribute)
    key = next(iter(mapping))
    with pytest.raises(TypeError):
        mapping[key] = None
    with pytest.raises(TypeError):
        del mapping[key]
    assert key in getattr(tree, attribute)


def test_robot_and_its_parts_are_frozen(bb_arm: Robot) -> None:
    joint = bb_arm.joints["elbow_joint"]
    frozen = [
        (bb_arm, "name", "other"),
        (bb_arm, "root_link", "tcp"),
        (bb_arm.links["tcp"], "parent_joint", None),
        (joint, "origin", None),
        (joint.limits, "lower", 0.0),
        (joint.origin, "xyz", (0.0, 0.0, 0.0)),
        (bb_arm.actuators["elbow_motor"], "joint", "tcp_joint"),
        (bb_arm.actuators["elbow_motor"].transmission, "reduction", 1.0),
        (bb_arm.topology, "link_order", ()),
    ]
    for item, field, value in frozen:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(item, field, value)
    assert bb_arm.joints["elbow_joint"].limits.lower == -2.6


def test_sequences_inside_the_model_are_tuples(bb_arm: Robot) -> None:
    link = bb_arm.links["base_link"]
    assert isinstance(link.visuals, tuple) and isinstance(link.collisions, tuple)
    assert isinstance(link.child_joints, tuple)
    assert isinstance(bb_arm.joints["shoulder_pan_joint"].actuators, tuple)
    assert isinstance(bb_arm.warnings, tuple)
    assert isinstance(bb_arm.topology.paths["tcp"], tuple)


def test_physical_values_are_floats_in_si_units(bb_arm: Robot) -> None:
    pan = bb_arm.joints["shoulder_pan_joint"]
    # metres
    assert pan.origin.xyz == (0.0, 0.0, 0.15)
    # radians, rad/s, N·m
    assert (pan.limits.lower, pan.limits.upper) == (-3.14159, 3.14159)
    assert pan.limits.velocity == 2.0 and pan.limits.effort == 150.0
    # prismatic limits in metres and m/s, N
    finger = bb_arm.joints["left_finger_joint"].limits
    assert (finger.lower, finger.upper, finger.velocity, finger.effort) == (0.0, 0.04, 0.1, 40.0)
    # kilograms and kg·m²
    inertial = bb_arm.links["upper_arm_link"].inertial
    assert inertial.mass == 8.4
    # a solid cylinder of 8.4 kg, radius 0.055 m, length 0.40 m (models/bb_arm.urdf computes its inertias)
    assert inertial.inertia.ixx == pytest.approx(8.4 * (3 * 0.055**2 + 0.40**2) / 12)
    assert inertial.inertia.izz == pytest.approx(8.4 * 0.055**2 / 2)
    # rpy in radians
    assert bb_arm.joints["gripper_mount_joint"].origin.rpy == (0.0, 0.0, math.pi / 2)
    numbers = [
        *pan.origin.xyz,
        *pan.origin.rpy,
        pan.limits.lower,
        pan.limits.upper,
        pan.limits.velocity,
        pan.limits.effort,
        pan.dynamics.damping,
        pan.dynamics.friction,
        inertial.mass,
        inertial.inertia.ixx,
        inertial.inertia.ixy,
        *pan.axis,
    ]
    assert all(type(n) is float for n in numbers), numbers


def test_links_name_their_parent_joint_and_child_joints(bb_arm: Robot) -> None:
    for name, link in bb_arm.links.items():
        if link.parent_joint is None:
            assert name == bb_arm.root_link
        else:
            assert bb_arm.joints[link.parent_joint].child_link == name
        for joint in link.child_joints:
            assert bb_arm.joints[joint].parent_link == name
    for name, joint in bb_arm.joints.items():
        assert bb_arm.links[joint.child_link].parent_joint == name
        assert name in bb_arm.links[joint.parent_link].child_joints
    assert bb_arm.links["gripper_base"].child_joints == (
        "left_finger_joint",
        "right_finger_joint",
        "tcp_joint",
    )


def test_joints_list_the_actuators_that_drive_them(bb_arm: Robot, tree: Robot) -> None:
    assert bb_arm.joints["shoulder_pan_joint"].actuators == ("shoulder_pan_motor",)
    assert bb_arm.joints["left_finger_joint"].actuators == ("gripper_motor",)
    assert bb_arm.joints["right_finger_joint"].actuators == ()
    assert bb_arm.joints["tcp_joint"].actuators == ()
    assert tree.joints["left_wheel_joint"].actuators == ("wheel_motor",)


def test_joint_dof_by_type() -> None:
    dofs = {
        kind: Joint("j", kind, "a", "b").dof
        for kind in ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
    }
    assert dofs == {
        "revolute": 1,
        "continuous": 1,
        "prismatic": 1,
        "fixed": 0,
        "floating": 6,
        "planar": 3,
    }


def test_assemble_ignores_parent_and_child_references_passed_in() -> None:
    """Link references are derived from the joints, not trusted from the caller."""
    robot = Robot.assemble(
        "r",
        [Link("a", parent_joint="bogus", child_joints=("nope",)), Link("b")],
        [Joint("ab", "revolute", "a", "b")],
    )
    assert robot.links["a"].parent_joint is None
    assert robot.links["a"].child_joints == ("ab",)
    assert robot.links["b"].parent_joint == "ab"


# ------------------------------------------------------------------------------- lookups


def test_get_link_and_get_joint_return_the_named_item(bb_arm: Robot) -> None:
    assert bb_arm.get_link("tool0") is bb_arm.links["tool0"]
    assert bb_arm.get_joint("elbow_joint") is bb_arm.joints["elbow_joint"]
    assert bb_arm.get_joint("elbow_joint").type == "revolute"


def test_get_link_of_unknown_name_raises_unknown_link(bb_arm: Robot) -> None:
    with pytest.raises(UnknownLink) as caught:
        bb_arm.get_link("flange")
    assert caught.value.link == "flange"
    assert caught.value.robot == "bb_arm"
    assert caught.value.role is None


def test_get_joint_of_unknown_name_raises_unknown_joint(bb_arm: Robot) -> None:
    with pytest.raises(UnknownJoint) as caught:
        bb_arm.get_joint("knee_joint")
    assert caught.value.joint == "knee_joint"
    assert caught.value.robot == "bb_arm"


def test_link_and_joint_lookups_do_not_cross_kinds(bb_arm: Robot) -> None:
    with pytest.raises(UnknownLink):
        bb_arm.get_link("elbow_joint")
    with pytest.raises(UnknownJoint):
        bb_arm.get_joint("forearm_link")


def test_get_actuator(bb_arm: Robot) -> None:
    assert bb_arm.get_actuator("wrist_2_motor").joint == "wrist_2_joint"
    with pytest.raises(UnknownActuator) as caught:
        bb_arm.get_actuator("wrist_2_joint")
    assert caught.value.actuator == "wrist_2_joint"


def test_child_joints_in_declaration_order(tree: Robot) -> None:
    assert [j.name for j in tree.child_joints("chassis")] == ["mast", "left_wheel_joint", "arm_joint"]
    assert tree.child_joints("arm") == [tree.joints["gripper_joint"]]


def test_child_joints_of_a_leaf_is_an_empty_list(tree: Robot, bb_arm: Robot) -> None:
    assert tree.child_joints("gripper") == []
    assert bb_arm.child_joints("tcp") == []


def test_child_joints_of_unknown_link_raises_unknown_link(tree: Robot) -> None:
    with pytest.raises(UnknownLink) as caught:
        tree.child_joints("tail")
    assert caught.value.link == "tail"


def test_parent_joint_returns_the_joint_above(bb_arm: Robot, tree: Robot) -> None:
    assert bb_arm.parent_joint("tcp") is bb_arm.joints["tcp_joint"]
    assert tree.parent_joint("pan_link").name == "pan"
    assert tree.parent_joint("sensor_head").name == "mast"


def test_parent_joint_of_root_raises_no_parent_joint_not_unknown_link(tree: Robot) -> None:
    with pytest.raises(NoParentJoint) as caught:
        tree.parent_joint("chassis")
    assert not isinstance(caught.value, UnknownLink)
    assert caught.value.link == "chassis"
    assert caught.value.robot == "rover"


def test_parent_joint_of_unknown_link_raises_unknown_link(tree: Robot) -> None:
    with pytest.raises(UnknownLink):
        tree.parent_joint("tail")
    with pytest.raises(UnknownLink):  # a joint's name is not a link
        tree.parent_joint("pan")


def test_walking_up_with_parent_joint_ends_on_no_parent_joint(bb_arm: Robot) -> None:
    walked: list[str] = []
    link = "left_finger"
    while True:
        try:
            joint = bb_arm.parent_joint(link)
        except NoParentJoint:
            break
        walked.append(joint.name)
        link = joint.parent_link
    assert link == bb_arm.root_link
    assert walked == [
        "left_finger_joint",
        "gripper_mount_joint",
        "tool0_joint",
        "wrist_3_joint",
        "wrist_2_joint",
        "wrist_1_joint",
        "elbow_joint",
        "shoulder_lift_joint",
        "shoulder_pan_joint",
    ]


# ------------------------------------------------------------------------------- paths


def test_path_to_a_link_interleaves_links_and_joints_from_the_root(tree: Robot) -> None:
    assert tree.path_to("pan_link") == ("chassis", "mast", "sensor_head", "pan", "pan_link")
    assert tree.path_to("gripper") == ("chassis", "arm_joint", "arm", "gripper_joint", "gripper")
    assert tree.path_to("left_wheel") == ("chassis", "left_wheel_joint", "left_wheel")


def test_path_to_the_root_is_the_root_alone(tree: Robot) -> None:
    assert tree.path_to("chassis") == ("chassis",)


def test_path_to_a_joint_ends_at_the_joint(tree: Robot) -> None:
    assert tree.path_to("pan", kind="joint") == ("chassis", "mast", "sensor_head", "pan")
    assert tree.path_to("mast", kind="joint") == ("chassis", "mast")


def test_path_to_unknown_link_raises_unknown_link_as_target(tree: Robot) -> None:
    with pytest.raises(UnknownLink) as caught:
        tree.path_to("tail")
    assert caught.value.role == "target"
    with pytest.raises(UnknownLink):  # a joint name asked as a link
        tree.path_to("pan")


def test_path_to_unknown_joint_raises_unknown_joint(tree: Robot) -> None:
    with pytest.raises(UnknownJoint) as caught:
        tree.path_to("pan_link", kind="joint")
    assert caught.value.joint == "pan_link"


def test_path_to_equals_path_between_from_the_root(bb_arm: Robot, tree: Robot) -> None:
    for robot in (bb_arm, tree):
        for link in robot.links:
            assert robot.path_to(link) == robot.path_between(robot.root_link, link)
        for joint in robot.joints:
            assert robot.path_to(joint, kind="joint") == robot.path_between(robot.root_link, joint, target_kind="joint")


def test_path_between_seed_example(tree: Robot) -> None:
    assert tree.path_between("chassis", "sensor_head") == ("chassis", "mast", "sensor_head")


def test_path_between_starts_at_source_and_ends_at_target(bb_arm: Robot) -> None:
    assert bb_arm.path_between("forearm_link", "tool0") == (
        "forearm_link",
        "wrist_1_joint",
        "wrist_1_link",
        "wrist_2_joint",
        "wrist_2_link",
        "wrist_3_joint",
        "wrist_3_link",
        "tool0_joint",
        "tool0",
    )
    assert bb_arm.path_between("gripper_base", "right_finger") == (
        "gripper_base",
        "right_finger_joint",
        "right_finger",
    )


def test_path_between_is_a_suffix_of_the_target_path(bb_arm: Robot) -> None:
    for target in bb_arm.links:
        full = bb_arm.path_to(target)
        for source in full[::2]:  # every link above (and including) the target
            between = bb_arm.path_between(source, target)
            assert between[0] == source and between[-1] == target
            assert full[len(full) - len(between) :] == between


def test_path_between_a_link_and_itself_is_that_link(tree: Robot) -> None:
    assert tree.path_between("arm", "arm") == ("arm",)
    assert tree.path_between("chassis", "chassis") == ("chassis",)


def test_path_between_a_link_and_a_joint_below_it(tree: Robot) -> None:
    assert tree.path_between("arm", "gripper_joint", target_kind="joint") == ("arm", "gripper_joint")
    assert tree.path_between("chassis", "pan", target_kind="joint") == (
        "chassis",
        "mast",
        "sensor_head",
        "pan",
    )


def test_path_between_siblings_raises_not_an_ancestor_with_common_ancestor(tree: Robot) -> None:
    with pytest.raises(NotAnAncestor) as caught:
        tree.path_between("pan_link", "gripper")
    error = caught.value
    assert error.common_ancestor == "chassis"
    assert (error.source, error.target) == ("pan_link", "gripper")
    assert error.robot == "rover"


def test_not_an_ancestor_carries_the_nearest_not_the_root(bb_arm: Robot) -> None:
    with pytest.raises(NotAnAncestor) as caught:
        bb_arm.path_between("left_finger", "tcp")
    assert caught.value.common_ancestor == "gripper_base"
    # and the carried ancestor is a valid source for the same target
    assert bb_arm.path_between(caught.value.common_ancestor, "tcp") == (
        "gripper_base",
        "tcp_joint",
        "tcp",
    )


def test_path_between_upwards_raises_with_the_target_as_common_ancestor(bb_arm: Robot) -> None:
    with pytest.raises(NotAnAncestor) as caught:
        bb_arm.path_between("tcp", "forearm_link")
    assert caught.value.common_ancestor == "forearm_link"


def test_path_between_a_link_and_its_own_parent_joint_is_not_downwards(tree: Robot) -> None:
    with pytest.raises(NotAnAncestor) as caught:
        tree.path_between("gripper", "gripper_joint", target_kind="joint")
    assert caught.value.common_ancestor == "arm"


def test_path_between_unknown_source_or_target_names_the_role(tree: Robot) -> None:
    with pytest.raises(UnknownLink) as caught:
        tree.path_between("tail", "arm")
    assert (caught.value.link, caught.value.role) == ("tail", "source")
    with pytest.raises(UnknownLink) as caught:
        tree.path_between("chassis", "tail")
    assert (caught.value.link, caught.value.role) == ("tail", "target")
    with pytest.raises(UnknownLink) as caught:  # the source is always a link
        tree.path_between("mast", "pan_link")
    assert caught.value.role == "source"
    with pytest.raises(UnknownJoint):
        tree.path_between("chassis", "arm", target_kind="joint")


def test_every_not_an_ancestor_pair_carries_the_deepest_shared_link(bb_arm: Robot, tree: Robot) -> None:
    """Brute force: the carried ancestor is the deepest link on both root paths."""
    for robot in (bb_arm, tree):
        for source in robot.links:
            for target in robot.links:
                above_source = set(robot.path_to(source)[::2])
                above_target = robot.path_to(target)[::2]
                if source in above_target:
                    robot.path_between(source, target)
                    continue
                with pytest.raises(NotAnAncestor) as caught:
                    robot.path_between(source, target)
                shared = [link for link in above_target if link in above_source]
                assert caught.value.common_ancestor == shared[-1]


# ------------------------------------------------------------------------ depth and order


def test_depth_of_links_and_joints(tree: Robot) -> None:
    assert {name: tree.depth_of(name) for name in tree.links} == {
        "chassis": 0,
        "sensor_head": 1,
        "pan_link": 2,
        "left_wheel": 1,
        "arm": 1,
        "gripper": 2,
    }
    assert tree.depth_of("pan", kind="joint") == 2
    assert tree.depth_of("mast", kind="joint") == 1


def test_depth_of_unknown_names(tree: Robot) -> None:
    with pytest.raises(UnknownLink):
        tree.depth_of("tail")
    with pytest.raises(UnknownJoint):
        tree.depth_of("chassis", kind="joint")


def test_max_depth(bb_arm: Robot, tree: Robot) -> None:
    assert tree.max_depth == 2
    # base 0, shoulder 1, upper arm 2, forearm 3, wrists 4-6, tool0 7, gripper_base 8, fingers/tcp 9
    assert bb_arm.max_depth == 9
    assert Robot.assemble("solo", [Link("only")], []).max_depth == 0


def test_leaf_links_in_topological_order(bb_arm: Robot, tree: Robot) -> None:
    assert tree.leaf_links() == ["pan_link", "left_wheel", "gripper"]
    assert bb_arm.leaf_links() == ["left_finger", "right_finger", "tcp"]
    assert Robot.assemble("solo", [Link("only")], []).leaf_links() == ["only"]


def test_links_in_order_is_root_first_depth_first(tree: Robot) -> None:
    links = tree.links_in_order()
    assert all(isinstance(link, Link) for link in links)
    assert [link.name for link in links] == [
        "chassis",
        "sensor_head",
        "pan_link",
        "left_wheel",
        "arm",
        "gripper",
    ]


def test_joints_in_order_is_traversal_order(tree: Robot) -> None:
    joints = tree.joints_in_order()
    assert all(isinstance(joint, Joint) for joint in joints)
    assert [joint.name for joint in joints] == [
        "mast",
        "pan",
        "left_wheel_joint",
        "arm_joint",
        "gripper_joint",
    ]


def test_joints_in_order_puts_each_joint_after_the_joint_above_it(bb_arm: Robot) -> None:
    order = [joint.name for joint in bb_arm.joints_in_order()]
    assert sorted(order) == sorted(bb_arm.joints)
    for joint in bb_arm.joints_in_order():
        above = bb_arm.links[joint.parent_link].parent_joint
        if above is not None:
            assert order.index(above) < order.index(joint.name)


def test_root_link_is_a_plain_name_and_cannot_fail(bb_arm: Robot, tree: Robot) -> None:
    assert bb_arm.root_link == "base_link"
    assert tree.root_link == "chassis"
    assert isinstance(tree.root_link, str)
    assert tree.links[tree.root_link].parent_joint is None
    assert tree.links_in_order()[0].name == tree.root_link


def test_root_link_does_not_depend_on_declaration_order() -> None:
    robot = Robot.assemble(
        "r",
        [Link("c"), Link("b"), Link("a")],
        [Joint("bc", "fixed", "b", "c"), Joint("ab", "fixed", "a", "b")],
    )
    assert robot.root_link == "a"
    assert robot.path_to("c") == ("a", "ab", "b", "bc", "c")


# ------------------------------------------------------------------------------ actuators


def test_actuator_path_bb_arm_example(bb_arm: Robot) -> None:
    assert bb_arm.actuator_path("shoulder_pan_motor") == (
        "base_link",
        "shoulder_pan_joint",
        "shoulder_pan_motor",
    )


def test_actuator_path_seed_shape(tree: Robot) -> None:
    assert tree.actuator_path("pan_servo") == ("chassis", "mast", "sensor_head", "pan", "pan_servo")


def test_actuator_path_is_its_joint_path_plus_its_name(bb_arm: Robot) -> None:
    for name, actuator in bb_arm.actuators.items():
        assert bb_arm.actuator_path(name) == (*bb_arm.path_to(actuator.joint, kind="joint"), name)


def test_actuator_path_of_unknown_actuator(bb_arm: Robot) -> None:
    with pytest.raises(UnknownActuator) as caught:
        bb_arm.actuator_path("shoulder_pan_joint")  # a joint, not an actuator
    assert caught.value.actuator == "shoulder_pan_joint"
    assert caught.value.robot == "bb_arm"


# ----------------------------------------------------------------------------- parameters


def test_param_subscriptions_cover_movable_joint_limits_and_transmissions(bb_arm: Robot) -> None:
    movable = [*UR3E_JOINTS, "left_finger_joint"]
    expected = {
        ("joints", joint, "limit", field) for joint in movable for field in ("lower", "upper", "velocity", "effort")
    } | {("transmissions", actuator, field) for actuator in BB_ARM_ACTUATORS for field in ("reduction", "offset")}
    assert set(bb_arm.param_subscriptions) == expected


def test_param_subscriptions_leave_out_fixed_and_mimic_joints(bb_arm: Robot) -> None:
    joints = {key[1] for key in bb_arm.param_subscriptions if key[0] == "joints"}
    assert "tool0_joint" not in joints and "tcp_joint" not in joints  # fixed
    assert "right_finger_joint" not in joints  # mimics left_finger_joint


def test_param_subscriptions_include_continuous_joints_but_not_actuators_without_transmission(
    tree: Robot,
) -> None:
    keys = set(tree.param_subscriptions)
    assert ("joints", "left_wheel_joint", "limit", "velocity") in keys
    assert ("joints", "left_wheel_joint", "limit", "effort") in keys
    # A continuous joint has no position limits, so none can be set at run time either.
    assert ("joints", "left_wheel_joint", "limit", "lower") not in keys
    assert ("joints", "left_wheel_joint", "limit", "upper") not in keys
    assert ("transmissions", "pan_servo", "reduction") in keys
    assert not any(key[:2] == ("transmissions", "wheel_motor") for key in keys)


def test_param_subscriptions_locate_the_field_they_set(bb_arm: Robot) -> None:
    assert bb_arm.param_subscriptions[("joints", "elbow_joint", "limit", "upper")] == (
        ParamLocation("joint", "elbow_joint", ("limits", "upper")),
    )
    assert bb_arm.param_subscriptions[("transmissions", "elbow_motor", "reduction")] == (
        ParamLocation("actuator", "elbow_motor", ("transmission", "reduction")),
    )


def test_with_parameters_dotted_and_tuple_keys(bb_arm: Robot) -> None:
    updated = bb_arm.with_parameters(
        {
            "joints.elbow_joint.limit.upper": 1.2,
            ("joints", "elbow_joint", "limit", "velocity"): 0.5,
            "transmissions.elbow_motor.reduction": 120,
            "transmissions.wrist_1_motor.offset": 0.25,
        }
    )
    limits = updated.joints["elbow_joint"].limits
    assert (limits.lower, limits.upper, limits.velocity, limits.effort) == (-2.6, 1.2, 0.5, 100.0)
    assert updated.actuators["elbow_motor"].transmission.reduction == 120.0
    assert type(updated.actuators["elbow_motor"].transmission.reduction) is float
    assert updated.actuators["wrist_1_motor"].transmission.offset == 0.25
    assert updated.actuators["wrist_1_motor"].transmission.reduction == 50.0


def test_with_parameters_returns_a_new_robot_and_leaves_the_original(bb_arm: Robot) -> None:
    updated = bb_arm.with_parameters({"joints.shoulder_pan_joint.limit.lower": -1.0})
    assert updated is not bb_arm
    assert bb_arm.joints["shoulder_pan_joint"].limits.lower == -3.14159
    assert updated.joints["shoulder_pan_joint"].limits.lower == -1.0
    # untouched fields, other joints and the structure are carried over
    assert updated.joints["shoulder_pan_joint"].limits.soft_lower == -3.1
    assert updated.joints["elbow_joint"] is bb_arm.joints["elbow_joint"]
    assert updated.root_link == bb_arm.root_link
    assert updated.path_to("tcp") == bb_arm.path_to("tcp")
    assert updated.get_joint("shoulder_pan_joint").limits.lower == -1.0
    with pytest.raises(TypeError):
        updated.joints["x"] = None  # still read-only


def test_with_parameters_creates_limits_on_a_joint_without_any() -> None:
    robot = Robot.assemble("r", [Link("a"), Link("b")], [Joint("ab", "revolute", "a", "b")])
    assert robot.joints["ab"].limits is None
    updated = robot.with_parameters({"joints.ab.limit.effort": 7.0})
    assert updated.joints["ab"].limits == JointLimits(effort=7.0)


def test_with_parameters_rejects_unknown_keys_naming_them(bb_arm: Robot) -> None:
    with pytest.raises(UnknownParameter) as caught:
        bb_arm.with_parameters({"joints.tcp_joint.limit.upper": 1.0})
    assert caught.value.parameter == "joints.tcp_joint.limit.upper"
    assert "joints.tcp_joint.limit.upper" in str(caught.value)
    assert "bb_arm" in str(caught.value)
    assert "'joints.elbow_joint.limit.upper'" in str(caught.value)  # what to pass instead
    with pytest.raises(UnknownParameter):
        bb_arm.with_parameters({("joints", "nope", "limit", "upper"): 1.0})


@pytest.mark.parametrize("value", [math.nan, math.inf, "fast", None])
def test_with_parameters_rejects_values_that_are_not_finite_numbers(bb_arm: Robot, value: object) -> None:
    with pytest.raises(InvalidParameterValue) as caught:
        bb_arm.with_parameters({"joints.elbow_joint.limit.upper": value})  # type: ignore[dict-item]
    assert caught.value.parameter == "joints.elbow_joint.limit.upper"
    assert "elbow_joint" in str(caught.value) and "finite number" in str(caught.value)


# ------------------------------------------------------------------- a joint named as a link


def test_joint_sharing_a_link_name_is_kept_with_a_warning() -> None:
    robot = shared_name_robot()
    assert robot.get_link("tool").name == "tool"
    assert robot.get_joint("tool").child_link == "tip"
    assert any("'tool'" in w and "shares its name with a link" in w for w in robot.warnings)


def test_joint_sharing_a_link_name_paths_and_depths_say_which_kind() -> None:
    robot = shared_name_robot()
    assert robot.path_to("tool") == ("base", "j1", "tool")
    assert robot.path_to("tool", kind="joint") == ("base", "j1", "tool", "tool")
    assert robot.path_to("tip") == ("base", "j1", "tool", "tool", "tip")
    assert robot.depth_of("tool") == 1
    assert robot.depth_of("tool", kind="joint") == 2
    assert robot.path_between("tool", "tool") == ("tool",)
    assert robot.path_between("tool", "tool", target_kind="joint") == ("tool", "tool")
    assert robot.parent_joint("tip").name == "tool"
    assert [j.name for j in robot.child_joints("tool")] == ["tool"]


def test_robot_without_shared_names_has_no_warnings(bb_arm: Robot, tree: Robot) -> None:
    assert bb_arm.warnings == ()
    assert tree.warnings == ()


# ---------------------------------------------------------------------- seed type shapes


@pytest.mark.parametrize(
    ("cls", "seed", "extra"),
    [
        (
            Robot,
            {"actuators", "joints", "links", "name", "param_subscriptions", "root_link", "sensors", "topology"},
            {"warnings", "source"},
        ),
        (ActuatorInfo, {"name", "joint", "transmission"}, set()),
        (SensorInfo, {"name", "attached_to", "transmission"}, set()),
        (Transmission, {"reduction", "offset", "reversed"}, set()),
        (ParamLocation, {"kind", "name", "field"}, set()),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_types_have_the_seed_fields(cls: type, seed: set[str], extra: set[str]) -> None:
    assert {f.name for f in dataclasses.fields(cls)} == seed | extra


def test_transmission_fields_may_be_unset() -> None:
    assert Transmission() == Transmission(reduction=None, offset=None, reversed=None)

"""bb_robot.model.errors: typed errors carry the robot and the names, and say what to pass instead.

Errors are checked both as raised by a robot (the robot's name filled in) and constructed
directly (message wording and the listing of known names).
"""

from __future__ import annotations

import pytest

from bb_robot.errors import BbRobotError
from bb_robot.model.errors import (
    InvalidJointValue,
    InvalidRobot,
    KinematicsError,
    NoParentJoint,
    NotAnAncestor,
    TreeProblem,
    UnknownActuator,
    UnknownJoint,
    UnknownLink,
)
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Joint, Link, Robot

LOOKUP_ERRORS = (UnknownLink, UnknownJoint, UnknownActuator, NoParentJoint, NotAnAncestor)


def test_every_error_is_a_bb_robot_error() -> None:
    for cls in (*LOOKUP_ERRORS, KinematicsError, InvalidRobot, InvalidJointValue):
        assert issubclass(cls, BbRobotError)
    for cls in LOOKUP_ERRORS:
        assert issubclass(cls, KinematicsError)


def test_lookup_errors_are_distinct_types() -> None:
    """A caller can match on each one: none is a subclass of another."""
    for a in LOOKUP_ERRORS:
        for b in LOOKUP_ERRORS:
            if a is not b:
                assert not issubclass(a, b), (a, b)


def test_unknown_link_from_a_robot_names_robot_link_and_the_links_to_pass(tree: Robot) -> None:
    with pytest.raises(UnknownLink) as caught:
        tree.get_link("tail")
    message = str(caught.value)
    assert "robot 'rover'" in message and "'tail'" in message
    assert "pass one of its links" in message
    for link in tree.links:
        assert f"'{link}'" in message
    assert "'pan'" not in message  # joints are not offered as links


def test_unknown_link_role_appears_in_the_message(tree: Robot) -> None:
    with pytest.raises(UnknownLink) as caught:
        tree.path_between("tail", "arm")
    assert "no source link 'tail'" in str(caught.value)
    with pytest.raises(UnknownLink) as caught:
        tree.path_between("arm", "tail")
    assert "no target link 'tail'" in str(caught.value)
    assert caught.value.role == "target"


def test_unknown_joint_names_robot_and_the_joints_to_pass(tree: Robot) -> None:
    with pytest.raises(UnknownJoint) as caught:
        tree.get_joint("arm")  # a link
    error = caught.value
    assert (error.robot, error.joint) == ("rover", "arm")
    message = str(error)
    assert "robot 'rover' has no joint 'arm'" in message
    assert "pass one of its joints" in message
    for joint in tree.joints:
        assert f"'{joint}'" in message


def test_unknown_actuator_lists_the_actuators(tree: Robot) -> None:
    with pytest.raises(UnknownActuator) as caught:
        tree.actuator_path("pan")
    message = str(caught.value)
    assert "robot 'rover' has no actuator 'pan'" in message
    assert "'pan_servo'" in message and "'wheel_motor'" in message


def test_unknown_actuator_on_a_robot_without_actuators_says_how_to_add_one() -> None:
    robot = Robot.assemble("bare", [Link("a")], [])
    with pytest.raises(UnknownActuator) as caught:
        robot.actuator_path("motor")
    message = str(caught.value)
    assert "robot 'bare'" in message and "'motor'" in message
    assert "declares no actuators" in message and "<transmission>" in message


def test_no_parent_joint_names_robot_and_root_and_says_what_to_pass(tree: Robot) -> None:
    with pytest.raises(NoParentJoint) as caught:
        tree.parent_joint("chassis")
    error = caught.value
    assert (error.robot, error.link) == ("rover", "chassis")
    message = str(error)
    assert "'chassis'" in message and "robot 'rover'" in message and "root" in message
    assert "pass" in message and "below" in message


def test_not_an_ancestor_names_the_common_ancestor_to_pass(tree: Robot) -> None:
    with pytest.raises(NotAnAncestor) as caught:
        tree.path_between("gripper", "pan_link")
    error = caught.value
    assert (error.robot, error.source, error.target, error.common_ancestor) == (
        "rover",
        "gripper",
        "pan_link",
        "chassis",
    )
    message = str(error)
    assert "robot 'rover'" in message
    assert "'gripper' is not an ancestor of 'pan_link'" in message
    assert "common ancestor is link 'chassis'" in message
    assert "pass it" in message


def test_long_listings_are_shortened() -> None:
    known = [f"l{i}" for i in range(20)]
    message = str(UnknownLink("big", "x", known))
    assert "'l0'" in message and "'l11'" in message
    assert "'l12'" not in message
    assert "(8 more)" in message


def test_empty_listing_says_none() -> None:
    assert "(none)" in str(UnknownJoint("r", "j", []))


def test_invalid_robot_lists_every_problem_and_exposes_kinds() -> None:
    problems = [
        TreeProblem("cycle", ("a", "b"), "loop through 'a' and 'b'"),
        TreeProblem("duplicate_joint", ("j",), "joint 'j' twice"),
    ]
    error = InvalidRobot("r", problems, "/x/r.urdf")
    assert error.kinds == frozenset({"cycle", "duplicate_joint"})
    assert error.problems == tuple(problems)
    lines = str(error).splitlines()
    assert lines[0] == "robot 'r' (/x/r.urdf) is not a valid kinematic tree:"
    assert lines[1:] == ["  - loop through 'a' and 'b'", "  - joint 'j' twice"]


def test_invalid_joint_value_names_the_robot() -> None:
    robot = Robot.assemble("arm9", [Link("a"), Link("b")], [Joint("j", "revolute", "a", "b")])
    with pytest.raises(InvalidJointValue) as caught:
        ForwardKinematics(robot).compute([1.0, 2.0])
    assert caught.value.robot == "arm9"
    assert str(caught.value).startswith("robot 'arm9': ")

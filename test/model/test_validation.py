"""bb_robot.model.validation and Robot.assemble: a single tree, every offender named.

Each test builds a broken description by hand and checks the problem kinds and that the
messages name the links and joints involved.
"""

from __future__ import annotations

import pytest

from bb_robot.errors import BbRobotError
from bb_robot.model.errors import InvalidRobot, TreeProblem
from bb_robot.model.robot import ActuatorInfo, Joint, Link, Mimic, Robot, SensorInfo
from bb_robot.model.validation import find_problems


def links(*names: str) -> list[Link]:
    return [Link(n) for n in names]


def rev(name: str, parent: str, child: str, mimic: str | None = None) -> Joint:
    return Joint(
        name,
        "revolute",
        parent,
        child,
        axis=(0.0, 0.0, 1.0),
        mimic=Mimic(mimic) if mimic else None,
    )


def invalid(link_list: list[Link], joints: list[Joint], **kwargs: object) -> InvalidRobot:
    with pytest.raises(InvalidRobot) as caught:
        Robot.assemble("broken", link_list, joints, **kwargs)  # type: ignore[arg-type]
    return caught.value


def problem(error: InvalidRobot, kind: str) -> TreeProblem:
    found = [p for p in error.problems if p.kind == kind]
    assert len(found) == 1, error.problems
    return found[0]


def test_a_valid_tree_has_no_problems_or_warnings() -> None:
    problems, warnings = find_problems(["a", "b", "c"], [("ab", "a", "b"), ("ac", "a", "c")], {})
    assert problems == [] and warnings == []


def test_two_roots_name_both_roots() -> None:
    error = invalid(links("a", "b", "c", "d"), [rev("ab", "a", "b"), rev("cd", "c", "d")])
    assert error.kinds == {"multiple_roots"}
    found = problem(error, "multiple_roots")
    assert found.names == ("a", "c")
    assert "'a'" in found.message and "'c'" in found.message
    assert "'b'" not in found.message


def test_an_unconnected_link_is_a_second_root() -> None:
    error = invalid(links("a", "b", "stray"), [rev("ab", "a", "b")])
    assert problem(error, "multiple_roots").names == ("a", "stray")


def test_a_loop_without_root_names_the_links_around_it() -> None:
    error = invalid(links("a", "b", "c"), [rev("ab", "a", "b"), rev("bc", "b", "c"), rev("ca", "c", "a")])
    assert error.kinds == {"no_root", "cycle"}
    cycle = problem(error, "cycle")
    assert set(cycle.names) == {"a", "b", "c"}
    for name in ("'a'", "'b'", "'c'"):
        assert name in cycle.message


def test_no_root_because_the_tree_hangs_from_an_undefined_link_does_not_claim_a_loop() -> None:
    error = invalid(links("base", "arm"), [rev("anchor", "ground", "base"), rev("j1", "base", "arm")])
    assert error.kinds == {"no_root", "undefined_link"}
    message = problem(error, "no_root").message
    assert "loop" not in message
    assert "'ground'" in message


def test_no_root_of_a_loop_says_loop() -> None:
    error = invalid(links("a", "b"), [rev("ab", "a", "b"), rev("ba", "b", "a")])
    assert "loop" in problem(error, "no_root").message


def test_a_loop_beside_a_proper_root_is_still_a_cycle() -> None:
    error = invalid(
        links("root", "x", "y", "z"),
        [rev("rx", "root", "x"), rev("yz", "y", "z"), rev("zy", "z", "y")],
    )
    assert error.kinds == {"cycle"}
    assert set(problem(error, "cycle").names) == {"y", "z"}


def test_a_link_with_two_parents_names_it_and_both_joints() -> None:
    error = invalid(links("a", "b", "c"), [rev("ac", "a", "c"), rev("ab", "a", "b"), rev("bc", "b", "c")])
    found = problem(error, "multiple_parents")
    assert found.names == ("c", "ac", "bc")
    assert "'c'" in found.message and "'ac'" in found.message and "'bc'" in found.message


def test_self_loop_is_a_cycle() -> None:
    error = invalid(links("a", "b"), [rev("ab", "a", "b"), rev("bb", "b", "b")])
    assert "cycle" in error.kinds and "multiple_parents" in error.kinds


def test_undefined_child_link_names_joint_and_link() -> None:
    error = invalid(links("a"), [rev("ab", "a", "ghost")])
    assert error.kinds == {"undefined_link"}
    found = problem(error, "undefined_link")
    assert found.names == ("ab", "ghost")
    assert "'ab'" in found.message and "child link 'ghost'" in found.message


def test_undefined_parent_link_says_parent() -> None:
    error = invalid(links("b"), [rev("xb", "x", "b")])
    found = problem(error, "undefined_link")
    assert found.names == ("xb", "x")
    assert "parent link 'x'" in found.message


def test_duplicate_link_names() -> None:
    error = invalid(links("a", "a", "b"), [rev("ab", "a", "b")])
    assert error.kinds == {"duplicate_link"}
    found = problem(error, "duplicate_link")
    assert found.names == ("a",)
    assert "'a'" in found.message and "2 times" in found.message


def test_duplicate_joint_names() -> None:
    error = invalid(links("a", "b", "c"), [rev("j", "a", "b"), rev("j", "a", "c")])
    found = problem(error, "duplicate_joint")
    assert found.names == ("j",)
    assert "joint 'j'" in found.message


def test_a_joint_may_share_a_link_name_with_a_warning_only() -> None:
    problems, warnings = find_problems(["a", "b"], [("b", "a", "b")], {})
    assert problems == []
    assert len(warnings) == 1 and "'b'" in warnings[0]


def test_empty_robot_is_rejected_as_having_no_root() -> None:
    """Exactly one root: zero links is not a tree (regression: raised StopIteration)."""
    error = invalid([], [])
    assert error.kinds == {"no_root"}
    assert "no links" in problem(error, "no_root").message


def test_mimic_of_an_unknown_joint() -> None:
    error = invalid(links("a", "b"), [rev("ab", "a", "b", mimic="phantom")])
    found = problem(error, "unknown_mimic_source")
    assert found.names == ("ab", "phantom")
    assert "'phantom'" in found.message


def test_mimic_involving_a_fixed_joint_is_invalid() -> None:
    fixed = Joint("f", "fixed", "a", "c")
    error = invalid(links("a", "b", "c"), [rev("ab", "a", "b", mimic="f"), fixed])
    assert problem(error, "invalid_mimic").names == ("ab", "f")
    fixed_mimic = Joint("f", "fixed", "a", "c", mimic=Mimic("ab"))
    error = invalid(links("a", "b", "c"), [rev("ab", "a", "b"), fixed_mimic])
    assert problem(error, "invalid_mimic").names == ("f", "ab")


def test_two_joint_mimic_cycle_is_reported_once_naming_both() -> None:
    error = invalid(links("a", "b", "c"), [rev("j1", "a", "b", mimic="j2"), rev("j2", "b", "c", mimic="j1")])
    assert error.kinds == {"mimic_cycle"}
    found = problem(error, "mimic_cycle")
    assert set(found.names) == {"j1", "j2"}
    assert "'j1'" in found.message and "'j2'" in found.message


def test_mimic_of_itself_is_a_cycle() -> None:
    error = invalid(links("a", "b"), [rev("j1", "a", "b", mimic="j1")])
    assert problem(error, "mimic_cycle").names == ("j1",)


def test_joint_mimicking_into_a_cycle_reports_only_the_cycle() -> None:
    error = invalid(
        links("a", "b", "c", "d"),
        [rev("j1", "a", "b", mimic="j2"), rev("j2", "b", "c", mimic="j3"), rev("j3", "c", "d", mimic="j2")],
    )
    assert set(problem(error, "mimic_cycle").names) == {"j2", "j3"}


def test_mimic_chain_without_loop_is_valid() -> None:
    robot = Robot.assemble(
        "ok",
        links("a", "b", "c", "d"),
        [rev("j1", "a", "b"), rev("j2", "b", "c", mimic="j1"), rev("j3", "c", "d", mimic="j2")],
    )
    assert robot.joints["j3"].mimic == Mimic("j2")


def test_actuator_on_an_undefined_joint() -> None:
    error = invalid(links("a", "b"), [rev("ab", "a", "b")], actuators=[ActuatorInfo("m", "nope")])
    found = problem(error, "unknown_actuator_joint")
    assert found.names == ("m", "nope")
    assert "'m'" in found.message and "'nope'" in found.message


def test_duplicate_actuator_and_sensor_names() -> None:
    error = invalid(
        links("a", "b", "c"),
        [rev("ab", "a", "b"), rev("ac", "a", "c")],
        actuators=[ActuatorInfo("m", "ab"), ActuatorInfo("m", "ac")],
        sensors=[SensorInfo("s", ("link", "a")), SensorInfo("s", ("joint", "ab"))],
    )
    assert error.kinds == {"duplicate_actuator", "duplicate_sensor"}
    assert problem(error, "duplicate_actuator").names == ("m",)
    assert problem(error, "duplicate_sensor").names == ("s",)


def test_every_problem_is_reported_at_once() -> None:
    error = invalid(
        links("a", "a", "b", "c", "d"),
        [rev("ab", "a", "b"), rev("ab", "a", "ghost"), rev("cd", "c", "d", mimic="zz")],
    )
    assert error.kinds == {
        "duplicate_link",
        "duplicate_joint",
        "undefined_link",
        "multiple_roots",
        "unknown_mimic_source",
    }
    text = str(error)
    for message in (p.message for p in error.problems):
        assert message in text


def test_invalid_robot_message_names_robot_and_source() -> None:
    with pytest.raises(InvalidRobot) as caught:
        Robot.assemble("named", links("a", "b"), [], source="/tmp/named.urdf")
    error = caught.value
    assert isinstance(error, BbRobotError)
    assert error.robot == "named" and error.source == "/tmp/named.urdf"
    assert str(error).startswith("robot 'named' (/tmp/named.urdf) is not a valid kinematic tree")
    assert isinstance(error.problems, tuple)


@pytest.mark.parametrize(
    ("attached_to", "named"),
    [(("link", "ghost"), "link 'ghost'"), (("joint", "ghost"), "joint 'ghost'"), (("joint", "a"), "joint 'a'")],
    ids=["undefined-link", "undefined-joint", "link-name-as-joint"],
)
def test_sensor_attached_to_an_undefined_link_or_joint(attached_to: tuple[str, str], named: str) -> None:
    error = invalid(links("a", "b"), [rev("ab", "a", "b")], sensors=[SensorInfo("cam", attached_to)])  # type: ignore[arg-type]
    found = problem(error, "unknown_sensor_target")
    assert found.names == ("cam", attached_to[1])
    assert "'cam'" in found.message and named in found.message


def test_sensors_attached_to_a_link_a_joint_or_the_robot_are_valid() -> None:
    robot = Robot.assemble(
        "ok",
        links("a", "b"),
        [rev("ab", "a", "b")],
        sensors=[
            SensorInfo("cam", ("link", "b")),
            SensorInfo("enc", ("joint", "ab")),
            SensorInfo("imu", ("robot", "")),
        ],
    )
    assert set(robot.sensors) == {"cam", "enc", "imu"}

"""The actuators of the ``actuators`` backend without ROS: names and their reversible mapping to
ROS tokens, topic names and ROS's length limit (on real descriptions of the corpus), actuators
from transmissions and configuration, and the simple transmission's formulas."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from helpers.actuated_robot import ACTUATED_URDF, EXPECTED, JOINTS, WRIST_CONFIG

from bb_robot.driver.backends.actuator_topics import (
    TOPIC_NAME_MAX_LENGTH,
    ActuatorConfigError,
    SimpleTransmissions,
    TransmissionOverride,
    actuator_limits,
    actuator_topics,
    decode_token,
    encode_token,
    index_document,
    is_name_token,
    resolve_actuators,
)
from bb_robot.driver.commands.limits import from_robot
from bb_robot.driver.model import driven_joints
from bb_robot.model.robot import Robot
from bb_robot.urdf.builder import build_robot, load_urdf
from bb_robot.urdf.parser import parse_string

REPO_ROOT = Path(__file__).resolve().parents[3]


def actuated() -> Robot:
    return build_robot(parse_string(ACTUATED_URDF))


def wrist_override() -> dict[str, TransmissionOverride]:
    return {"wrist": TransmissionOverride(**WRIST_CONFIG)}  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ names
@pytest.mark.parametrize(
    ("name", "token"),
    [
        ("shoulder_pan_joint", "shoulder_pan_joint"),
        ("base_link-base_link_inertia", "base_link__2Dbase_link_inertia"),
        ("2nd.link", "__32nd__2Elink"),
        ("elbow motor", "elbow__20motor"),
        ("a__b", "a__5F_b"),
        ("_hidden", "_hidden"),
        ("trailing_", "trailing_"),
        ("x_5F", "x_5F"),
        ("é", "__C3__A9"),
    ],
)
def test_tokens(name: str, token: str) -> None:
    assert encode_token(name) == token
    assert is_name_token(token)
    assert decode_token(token) == name


def test_the_mapping_is_reversible_and_leaves_valid_tokens_alone() -> None:
    alphabet = "aZ09_-. /é__2D5F"
    rng = random.Random(6)
    for _ in range(20000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10)))
        token = encode_token(name)
        assert is_name_token(token), (name, token)
        assert decode_token(token) == name, (name, token)
        if is_name_token(name) and "__" not in name:
            assert token == name
    with pytest.raises(ValueError):
        encode_token("")
    with pytest.raises(ValueError, match="not a ROS name token"):
        decode_token("a-b")


def test_encoded_names_are_valid_ros_topic_names_and_the_limit_is_rmws() -> None:
    validation = pytest.importorskip("rclpy.validate_full_topic_name", reason="rclpy is not installed")
    for name in ("2nd.link", "elbow motor", "base_link-base_link_inertia", "a__b", "é"):
        validation.validate_full_topic_name(f"/ns/actuator/{encode_token(name)}/state")
    validation.validate_full_topic_name("/" + "a" * (TOPIC_NAME_MAX_LENGTH - 1))
    with pytest.raises(Exception, match="length"):
        validation.validate_full_topic_name("/" + "a" * TOPIC_NAME_MAX_LENGTH)


# ------------------------------------------------------------------------------ actuators
def test_actuators_of_the_bundled_arm_come_from_its_transmissions() -> None:
    robot = load_urdf(REPO_ROOT / "models" / "bb_arm.urdf")
    joints = driven_joints(robot)
    actuators = resolve_actuators(robot, joints)
    assert [a.joint for a in actuators] == list(joints)
    assert "right_finger_joint" not in joints  # a mimic joint: no actuator
    by_joint = {a.joint: a for a in actuators}
    assert len(actuators) == 7
    assert by_joint["shoulder_pan_joint"].name == "shoulder_pan_motor"
    assert by_joint["shoulder_pan_joint"].signed_reduction == 100.0
    assert by_joint["wrist_3_joint"].signed_reduction == -50.0  # URDF: a negative mechanicalReduction
    assert all(a.source == "urdf" for a in actuators)
    assert by_joint["elbow_joint"].path == robot.actuator_path("elbow_motor")


def test_actuators_from_transmissions_configuration_and_defaults() -> None:
    robot = actuated()
    defaults = resolve_actuators(robot, JOINTS)
    assert [(a.name, a.source) for a in defaults] == [
        ("shoulder_motor", "urdf"),
        ("elbow motor", "urdf"),
        ("wrist_actuator", "default"),
        ("slide_motor", "urdf"),
    ]
    assert defaults[2].signed_reduction == 1.0 and defaults[2].offset == 0.0
    assert defaults[2].path == ("base-plate", "shoulder", "l1", "elbow-joint", "2nd.link", "wrist", "wrist_actuator")
    named = resolve_actuators(robot, JOINTS, default_name="servo_{joint}")
    assert named[2].name == "servo_wrist"
    configured = resolve_actuators(robot, JOINTS, wrist_override())
    for actuator in configured:
        name, reduction, offset = EXPECTED[actuator.joint]
        assert (actuator.name, actuator.signed_reduction, actuator.offset) == (name, reduction, offset)
    assert configured[2].source == "config" and configured[2].reversed
    # Configuration overrides a URDF transmission too, field by field.
    shoulder = resolve_actuators(robot, JOINTS, {"shoulder": TransmissionOverride(reversed=True)})[0]
    assert (shoulder.name, shoulder.signed_reduction, shoulder.offset, shoulder.source) == (
        "shoulder_motor",
        -10.0,
        0.2,
        "config",
    )


@pytest.mark.parametrize(
    ("overrides", "default_name", "message"),
    [
        ({"slide_mimic": TransmissionOverride(reduction=2.0)}, "{joint}_actuator", "mimic joints get no actuator"),
        ({"nope": TransmissionOverride()}, "{joint}_actuator", "has no joint 'nope'"),
        ({"wrist": TransmissionOverride(reduction=0.0)}, "{joint}_actuator", "other than 0"),
        ({"wrist": TransmissionOverride(reduction=math.inf)}, "{joint}_actuator", "other than 0"),
        ({"wrist": TransmissionOverride(offset=math.nan)}, "{joint}_actuator", "must be finite"),
        ({"wrist": TransmissionOverride(actuator="slide_motor")}, "{joint}_actuator", "used by joints"),
    ],
)
def test_bad_configuration_is_named(
    overrides: dict[str, TransmissionOverride], default_name: str, message: str
) -> None:
    with pytest.raises(ActuatorConfigError, match=message):
        resolve_actuators(actuated(), JOINTS, overrides, default_name)


def test_a_default_name_without_the_joint_clashes_and_two_actuators_on_a_joint_are_refused() -> None:
    two_free = build_robot(
        parse_string(ACTUATED_URDF.replace('<joint name="slide"><offset>0.01</offset></joint>', '<joint name="x"/>'))
    )
    with pytest.raises(ActuatorConfigError, match="unique"):
        resolve_actuators(two_free, JOINTS, default_name="servo")
    doubled = ACTUATED_URDF.replace(
        "</robot>",
        '<transmission name="second"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="shoulder"/><actuator name="shoulder_motor_2"/></transmission></robot>',
    )
    with pytest.raises(ActuatorConfigError, match="exactly one actuator per joint"):
        resolve_actuators(build_robot(parse_string(doubled)), JOINTS)


# ------------------------------------------------------------------------------ topics
def test_path_and_joint_topics() -> None:
    actuators = resolve_actuators(actuated(), JOINTS, wrist_override())
    path = actuator_topics("/arm", actuators, "path")
    assert path[0].command == "/arm/actuator/base__2Dplate/shoulder/shoulder_motor"
    assert path[0].state == path[0].command + "/state"
    assert path[1].command == "/arm/actuator/base__2Dplate/shoulder/l1/elbow__2Djoint/elbow__20motor"
    assert path[2].command.endswith("/elbow__2Djoint/__32nd__2Elink/wrist/wrist_servo")
    assert [decode_token(t) for t in path[2].tokens] == list(actuators[2].path)
    joint = actuator_topics("/", actuators, "joint")
    assert [t.command for t in joint] == [
        "/actuator/shoulder/shoulder_motor",
        "/actuator/elbow__2Djoint/elbow__20motor",
        "/actuator/wrist/wrist_servo",
        "/actuator/slide/slide_motor",
    ]
    with pytest.raises(ActuatorConfigError, match="actuator_topic_style must be one of path, joint"):
        actuator_topics("/", actuators, "flat")


def test_a_name_too_long_fails_naming_it_and_suggesting_the_joint_style() -> None:
    actuators = resolve_actuators(actuated(), JOINTS)
    longest = max(len(t.state) for t in actuator_topics("/arm", actuators, "path"))
    with pytest.raises(ActuatorConfigError) as info:
        actuator_topics("/arm", actuators, "path", limit=longest - 1)
    text = str(info.value)
    assert "'slide_motor' (joint 'slide')" in text and f"has {longest} characters" in text
    assert "actuator_topic_style: joint" in text
    assert "shoulder_motor" not in text  # only the ones that do not fit
    namespace = "/" + "n" * 240
    with pytest.raises(ActuatorConfigError, match="shorten the namespace"):
        actuator_topics(namespace, actuators, "joint")


def test_the_bundled_arm_needs_the_joint_style() -> None:
    """bb_arm's gripper hangs 19 elements below the root: its path does not fit."""
    robot = load_urdf(REPO_ROOT / "models" / "bb_arm.urdf")
    actuators = resolve_actuators(robot, driven_joints(robot))
    with pytest.raises(ActuatorConfigError, match="'gripper_motor' \\(joint 'left_finger_joint'\\)"):
        actuator_topics("/", actuators, "path")
    assert max(len(t.state) for t in actuator_topics("/", actuators, "joint")) < 60


@pytest.mark.parametrize(
    ("relative", "count", "longest"),
    [
        ("ur_description_ros2/ur5e.urdf", 2, 275),  # wrist_2 and wrist_3
        ("franka_description/fr3_hand.urdf", 1, 282),  # the finger
        ("franka_description/multi_arm.urdf", 8, 448),  # two arms, four actuators each
    ],
)
def test_real_descriptions_exceed_the_limit_in_the_path_style(
    corpus_dir: Path, relative: str, count: int, longest: int
) -> None:
    robot = load_urdf(corpus_dir / relative)
    actuators = resolve_actuators(robot, driven_joints(robot))
    assert all(a.source == "default" for a in actuators)  # the corpus declares no transmissions
    lengths = {a.name: len("/actuator/" + "/".join(encode_token(e) for e in a.path) + "/state") for a in actuators}
    too_long = [name for name, length in lengths.items() if length > TOPIC_NAME_MAX_LENGTH]
    assert (len(too_long), max(lengths.values())) == (count, longest)
    with pytest.raises(ActuatorConfigError) as info:
        actuator_topics("/", actuators, "path")
    text = str(info.value)
    assert f"{count} actuator topic name(s) are longer than ROS's limit of 247 characters" in text
    for name in too_long:
        assert f"'{name}'" in text and f"has {lengths[name]} characters" in text
    assert "actuator_topic_style: joint" in text
    compact = actuator_topics("/", actuators, "joint")
    assert max(len(t.state) for t in compact) < 80


# ------------------------------------------------------------------------------ transmissions
def test_simple_transmission_formulas() -> None:
    actuators = resolve_actuators(actuated(), JOINTS, wrist_override())
    tx = SimpleTransmissions.of(actuators)
    q = np.array([0.7, 0.5, 1.0, 0.03])
    # actuator position = (joint position - offset) x reduction, the reduction's sign flipped when reversed
    np.testing.assert_allclose(tx.actuator_position(q), [5.0, -2.0, -4.5, 2.0])
    np.testing.assert_allclose(tx.actuator_velocity(np.ones(4)), [10.0, -4.0, -3.0, 100.0])
    np.testing.assert_allclose(tx.actuator_effort(np.full(4, 12.0)), [1.2, -3.0, -4.0, 0.12])
    np.testing.assert_allclose(tx.joint_position(np.array([5.0, -2.0, -4.5, 2.0])), q)
    np.testing.assert_allclose(tx.joint_velocity(np.array([10.0, -4.0, -3.0, 100.0])), np.ones(4))
    np.testing.assert_allclose(tx.joint_effort(np.array([1.2, -3.0, -4.0, 0.12])), np.full(4, 12.0))


def test_transmission_round_trips() -> None:
    rng = np.random.default_rng(3)
    reductions = rng.uniform(0.01, 500.0, 50) * rng.choice([-1.0, 1.0], 50)
    offsets = rng.uniform(-3.0, 3.0, 50)
    tx = SimpleTransmissions(reductions, offsets)
    for _ in range(20):
        values = rng.uniform(-10.0, 10.0, 50)
        np.testing.assert_allclose(tx.joint_position(tx.actuator_position(values)), values, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tx.actuator_position(tx.joint_position(values)), values, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(tx.joint_velocity(tx.actuator_velocity(values)), values, rtol=1e-12)
        np.testing.assert_allclose(tx.joint_effort(tx.actuator_effort(values)), values, rtol=1e-12)
    with pytest.raises(ValueError):
        SimpleTransmissions([1.0, 0.0], [0.0, 0.0])


# ------------------------------------------------------------------------------ the index
def test_index_document() -> None:
    robot = actuated()
    actuators = resolve_actuators(robot, JOINTS, wrist_override())
    topics = actuator_topics("/arm", actuators, "path")
    table = from_robot(robot, JOINTS)
    limits = [
        actuator_limits(a, table.lower[i], table.upper[i], table.velocity[i], table.effort[i])
        for i, a in enumerate(actuators)
    ]
    document = json.loads(json.dumps(index_document(robot.name, "/arm", "path", actuators, topics, limits)))
    assert document["actuator_topic_style"] == "path" and document["robot"] == "actuated"
    entries = {e["joint"]: e for e in document["actuators"]}
    assert "slide_mimic" not in entries
    shoulder = entries["shoulder"]
    assert shoulder["command_topic"] == topics[0].command and shoulder["state_topic"] == topics[0].state
    assert shoulder["path"] == list(actuators[0].path)
    assert shoulder["transmission"] == {
        "type": "simple",
        "reduction": 10.0,
        "offset": 0.2,
        "reversed": False,
        "signed_reduction": 10.0,
        "source": "urdf",
    }
    # Joint range [-2, 2] -> actuator [(-2 - 0.2) x 10, (2 - 0.2) x 10]
    assert shoulder["limits"] == pytest.approx(
        {
            "position_min": -22.0,
            "position_max": 18.0,
            "command_min": -22.0,
            "command_max": 18.0,
            "velocity": 15.0,
            "effort": 1.0,
        }
    )
    # The command range (soft limits, say [-1.5, 1.0]) through the transmission, for velocity commands' bound
    narrowed = actuator_limits(actuators[0], -2.0, 2.0, 1.5, 0.1, (-1.5, 1.0))
    assert (narrowed["command_min"], narrowed["command_max"]) == pytest.approx((-17.0, 8.0))
    # Reversed: the range swaps ends; a continuous joint has none.
    assert entries["elbow-joint"]["limits"]["position_min"] == pytest.approx(-6.0)
    assert entries["wrist"]["limits"]["position_min"] is None and entries["wrist"]["limits"]["velocity"] == 9.0

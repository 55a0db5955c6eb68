"""JointLimits: the model's limits, narrowed by a driver configuration, conservative defaults named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM
from helpers.robots import UR3E_JOINTS

from bb_robot.loading import load_file
from bb_robot.model.robot import Robot
from bb_robot.planning.errors import InvalidRequest, PlanningError
from bb_robot.planning.limits import DEFAULT_ACCELERATION, DEFAULT_VELOCITY, JointLimits, read_overrides

ARM_JOINTS = UR3E_JOINTS  # bb_arm's arm
CONFIG = Path(__file__).resolve().parents[2] / "config" / "bb_arm.yaml"


@pytest.fixture(scope="module")
def arm() -> Robot:
    return load_file(str(BUNDLED_ARM)).robot


def test_the_model_alone_gives_velocity_and_position_and_the_default_acceleration(arm: Robot) -> None:
    limits = JointLimits.from_robot(arm, ARM_JOINTS)
    assert limits.names == ARM_JOINTS
    assert limits.velocity.tolist() == [2.0, 2.0, 2.5, 3.0, 3.0, 3.0]
    assert limits.lower[2] == -2.6 and limits.upper[2] == 2.6
    assert limits.acceleration.tolist() == [DEFAULT_ACCELERATION["revolute"]] * 6
    assert limits.jerk is None
    assert dict(limits.defaulted) == {name: ("acceleration",) for name in ARM_JOINTS}


def test_the_driver_configuration_narrows_them(arm: Robot) -> None:
    overrides = read_overrides(CONFIG)
    assert overrides["elbow_joint"] == {"has_acceleration_limits": True, "max_acceleration": 5.0}
    limits = JointLimits.from_robot(arm, ARM_JOINTS, overrides)
    assert limits.acceleration.tolist() == [4.0, 4.0, 5.0, 8.0, 8.0, 8.0]
    assert limits.velocity.tolist() == [2.0, 2.0, 2.5, 3.0, 3.0, 3.0]
    assert dict(limits.defaulted) == {}


def test_an_override_never_widens_and_jerk_applies_where_given(arm: Robot) -> None:
    overrides = {
        "shoulder_pan_joint": {
            "has_velocity_limits": True,
            "max_velocity": 9.0,
            "has_jerk_limits": True,
            "max_jerk": 50,
        },
        "elbow_joint": {
            "has_velocity_limits": True,
            "max_velocity": 1.5,
            "has_position_limits": True,
            "min_position": -1.0,
        },
        "wrist_1_joint": {"has_velocity_limits": False, "max_velocity": 0.1},
        "left_finger_joint": {"has_velocity_limits": True, "max_velocity": 0.01},  # not planned: ignored
    }
    limits = JointLimits.from_robot(arm, ARM_JOINTS, overrides, source="limits.yaml")
    assert limits.velocity.tolist() == [2.0, 2.0, 1.5, 3.0, 3.0, 3.0]
    assert limits.lower[2] == -1.0 and limits.upper[2] == 2.6
    assert limits.jerk is not None and limits.jerk[0] == 50.0 and np.isinf(limits.jerk[1:]).all()
    assert limits.notes == (
        "limits.yaml.shoulder_pan_joint: max_velocity 9 would widen the model's velocity limit 2; kept 2",
    )


def test_a_joint_without_a_velocity_limit_gets_the_default_named(tmp_path: Path) -> None:
    urdf = tmp_path / "slider.urdf"
    urdf.write_text(
        '<robot name="slider"><link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="turn" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>'
        '<joint name="slide" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>'
        '<limit lower="0" upper="1" effort="1" velocity="0"/></joint></robot>'
    )
    limits = JointLimits.from_robot(load_file(str(urdf)).robot, ["turn", "slide"])
    assert limits.velocity.tolist() == [DEFAULT_VELOCITY["continuous"], DEFAULT_VELOCITY["prismatic"]]
    assert limits.acceleration.tolist() == [DEFAULT_ACCELERATION["continuous"], DEFAULT_ACCELERATION["prismatic"]]
    assert np.isinf(limits.lower[0]) and limits.upper[1] == 1.0
    assert dict(limits.defaulted) == {"turn": ("velocity", "acceleration"), "slide": ("velocity", "acceleration")}
    assert "turn: velocity 1 (default), acceleration 1 (default)" in limits.describe()


@pytest.mark.parametrize(
    ("joints", "overrides", "message"),
    [
        (["ghost_joint"], None, "robot 'bb_arm' has no joint 'ghost_joint'"),
        (["tool0_joint"], None, "joint 'tool0_joint' (fixed) cannot be planned"),
        (["right_finger_joint"], None, "joint 'right_finger_joint' (prismatic, a mimic) cannot be planned"),
        (
            ["elbow_joint"],
            {"elbow_joint": {"has_acceleration_limits": "yes"}},
            "joint_limits.elbow_joint.has_acceleration",
        ),
        (
            ["elbow_joint"],
            {"elbow_joint": {"has_acceleration_limits": True, "max_acceleration": float("nan")}},
            "finite",
        ),
        (["elbow_joint"], {"elbow_joint": [1, 2]}, "joint_limits.elbow_joint: expected a mapping"),
    ],
)
def test_what_cannot_be_used_is_refused_naming_it(arm: Robot, joints: list[str], overrides: dict, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(").replace(")", r"\)")):
        JointLimits.from_robot(arm, joints, overrides)


def test_scaling_and_the_files_read(arm: Robot, tmp_path: Path) -> None:
    limits = JointLimits.from_robot(arm, ARM_JOINTS, read_overrides(CONFIG))
    half = limits.scaled(0.5, 0.25)
    assert half.velocity.tolist() == (limits.velocity * 0.5).tolist()
    assert half.acceleration.tolist() == (limits.acceleration * 0.25).tolist()
    with pytest.raises(PlanningError, match="velocity_scale 1.5 is outside"):
        limits.scaled(1.5, 1.0)
    moveit = tmp_path / "joint_limits.yaml"
    moveit.write_text("joint_limits:\n  elbow_joint: {has_jerk_limits: true, max_jerk: 20.0}\n")
    assert read_overrides(moveit) == {"elbow_joint": {"has_jerk_limits": True, "max_jerk": 20.0}}
    (tmp_path / "bad.yaml").write_text("joint_limits: [1, 2]\n")
    with pytest.raises(InvalidRequest, match="bad.yaml: joint_limits is not a mapping"):
        read_overrides(tmp_path / "bad.yaml")
    with pytest.raises(InvalidRequest, match="missing.yaml: cannot read"):
        read_overrides(tmp_path / "missing.yaml")
    (tmp_path / "none.yaml").write_text("/**:\n  ros__parameters: {model: x}\n")
    assert read_overrides(tmp_path / "none.yaml") == {}

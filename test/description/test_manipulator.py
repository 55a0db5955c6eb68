"""The serial manipulator as JSON, and the tip pose."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from bb_robot.description.manipulator import FORMAT, TipPose, serial_description, serial_json
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import matrix_to_quaternion
from bb_robot.urdf.builder import load_urdf

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_json_carries_joints_actuations_limits_base_and_tip() -> None:
    robot = load_urdf(REPO_ROOT / "models" / "bb_arm.urdf")
    serial = SerialManipulator.from_robot(robot, "left_finger", strict=False)
    data = json.loads(serial_json(serial, "r/"))
    assert data["format"] == FORMAT and data["version"] == 1 and data["robot"] == "bb_arm"
    assert data["base_link"] == "r/base_link" and data["tip_link"] == "r/left_finger"
    assert [j["actuation"] for j in data["joints"]] == ["RZ"] * 6 + ["TZ"]
    assert [j["name"] for j in data["joints"]] == list(serial.joint_names)  # joint names carry no prefix
    for joint, spec in zip(serial.joints, data["joints"], strict=True):
        assert spec["lower"] == (joint.lower if math.isfinite(joint.lower) else None)
        assert spec["parent_link"] == "r/" + joint.parent_link
        assert np.array_equal(np.array(spec["offset_before"]), joint.offset_before)
    assert np.array_equal(np.array(data["tip_offset"]), serial.tip_offset)
    assert serial_description(serial) == json.loads(serial_json(serial))


def test_unbounded_limits_are_null() -> None:
    text = (
        '<robot name="c"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
        '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>'
    )
    from bb_robot.urdf.builder import build_robot
    from bb_robot.urdf.parser import parse_string

    serial = SerialManipulator.from_robot(build_robot(parse_string(text)), "b")
    joint = json.loads(serial_json(serial))["joints"][0]
    assert joint["lower"] is None and joint["upper"] is None and joint["velocity"] is None


def test_tip_pose_follows_the_merged_values() -> None:
    robot = load_urdf(REPO_ROOT / "models" / "bb_arm.urdf")
    serial = SerialManipulator.from_robot(robot, "tcp", strict=False)
    index = {name: 5 - i for i, name in enumerate(serial.joint_names)}  # any layout of the merged values
    tip = TipPose(serial, index)
    seen = np.zeros(6, dtype=bool)
    assert not tip.ready(seen)
    seen[:] = True
    assert tip.ready(seen)
    values = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    q = values[[index[name] for name in serial.joint_names]]
    expected = serial.end_effector_pose(q)
    translation, rotation = tip.pose(values)
    assert translation == tuple(expected[:3, 3]) and rotation == matrix_to_quaternion(expected[:3, :3])

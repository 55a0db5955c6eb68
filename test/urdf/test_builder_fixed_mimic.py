"""The URDF builder ignores a <mimic> on a fixed joint (as urdfdom, KDL and Pinocchio do)."""

from __future__ import annotations

import pytest

from bb_robot.model.errors import InvalidRobot
from bb_robot.urdf.builder import build_robot
from bb_robot.urdf.parser import parse_string

ARM = """<robot name="gripper">
  <link name="base"/><link name="finger"/><link name="pad"/>
  <joint name="drive" type="revolute">
    <parent link="base"/><child link="finger"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="0" effort="1" velocity="1"/>
  </joint>
  <joint name="pad_joint" type="{pad_type}">
    <parent link="finger"/><child link="pad"/><origin xyz="0 0 0.05"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="0" effort="1" velocity="1"/>
    <mimic joint="drive" multiplier="1.0" offset="0.0"/>
  </joint>
</robot>"""


def test_a_fixed_joint_with_a_mimic_loads_as_fixed_with_a_warning() -> None:
    robot = build_robot(parse_string(ARM.format(pad_type="fixed")))
    assert robot.joints["pad_joint"].type == "fixed"
    assert robot.joints["pad_joint"].mimic is None
    assert any("<mimic> of fixed joint(s) 'pad_joint'" in w for w in robot.warnings)


def test_a_revolute_mimic_is_kept() -> None:
    robot = build_robot(parse_string(ARM.format(pad_type="revolute")))
    mimic = robot.joints["pad_joint"].mimic
    assert mimic is not None and mimic.joint == "drive"
    assert not any("<mimic> of fixed" in w for w in robot.warnings)


def test_a_movable_joint_mimicking_a_fixed_one_is_still_rejected() -> None:
    text = ARM.format(pad_type="revolute").replace('type="revolute">', 'type="fixed">', 1)
    with pytest.raises(InvalidRobot) as caught:
        build_robot(parse_string(text))
    assert caught.value.kinds == {"invalid_mimic"}

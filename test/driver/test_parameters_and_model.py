"""The driver's parameter table (documented, well-formed), and choosing the driven joints."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.driver_rig import arm_robot

from bb_robot.driver.model import ModelError, driven_joints, mimic_joints, mimic_sources
from bb_robot.driver.parameters import JOINT_PARAMETERS, PARAMETERS, is_declared, spec
from bb_robot.urdf.builder import build_robot
from bb_robot.urdf.parser import parse_string

DOCS = Path(__file__).resolve().parents[2] / "docs" / "nodes" / "driver.md"


def test_every_parameter_is_described_and_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for item in PARAMETERS:
        assert item.description and item.type in ("string", "double", "integer", "bool", "string_array", "double_array")
        assert f"`{item.name}`" in text, f"{item.name} is not in docs/nodes/driver.md"
    for item in JOINT_PARAMETERS:
        assert item.description
        stem, _, key = item.name.rpartition(".")
        assert key in text, f"{item.name} is not in docs/nodes/driver.md"
    assert spec("rate").when == "activate" and spec("backend").read_only
    with pytest.raises(KeyError):
        spec("nope")


def test_is_declared() -> None:
    assert is_declared("rate") and is_declared("use_sim_time") and not is_declared("speed")
    assert is_declared("joint_limits.j1.max_acceleration", ["j1"])
    assert not is_declared("joint_limits.j9.max_acceleration", ["j1"])
    assert is_declared("joint_limits.anything.has_velocity_limits")  # joints unknown: any name
    assert not is_declared("joint_limits.j1.max_speed", ["j1"])
    assert is_declared("constraints.j1.goal", ["j1"]) and is_declared("constraints.goal_time")
    assert is_declared("joints.j1.limit.upper", ["j1"]) and not is_declared("joints.j1.limit.jerk", ["j1"])
    assert is_declared("transmissions.servo.reduction", actuators=["servo"])
    assert is_declared("sim.max_step", backend_parameters=["sim.max_step"])


def test_driven_joints_default_and_selection() -> None:
    robot = arm_robot()
    assert driven_joints(robot) == ("j1", "j2", "j3")
    assert driven_joints(robot, ["j3", "j1"]) == ("j3", "j1")
    assert mimic_joints(robot, ("j1", "j2", "j3"))["j3_mimic"].source == "j3"
    assert mimic_joints(robot, ("j1",)) == {}
    assert mimic_sources(robot) == {"j3_mimic": "j3"}


@pytest.mark.parametrize(
    ("requested", "message"),
    [(["j1", "j1"], "listed twice"), (["nope"], "has no joint 'nope'"), (["j3_mimic"], "mimics 'j3'")],
)
def test_bad_joint_selections(requested: list[str], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        driven_joints(arm_robot(), requested)


def test_fixed_joint_selection_and_nothing_to_drive() -> None:
    robot = build_robot(
        parse_string(
            '<robot name="r"><link name="a"/><link name="b"/>'
            '<joint name="f" type="fixed"><parent link="a"/><child link="b"/></joint></robot>',
            source="r.urdf",
        )
    )
    with pytest.raises(ModelError, match="no movable joint"):
        driven_joints(robot)
    with pytest.raises(ModelError, match="fixed joint"):
        driven_joints(robot, ["f"])


def test_mimic_chains_resolve_to_the_driven_source() -> None:
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    text = (
        '<robot name="m"><link name="a"/><link name="b"/><link name="c"/><link name="d"/>'
        f'<joint name="x" type="revolute"><parent link="a"/><child link="b"/>{limit}</joint>'
        f'<joint name="y" type="revolute"><parent link="b"/><child link="c"/>{limit}'
        '<mimic joint="x" multiplier="2" offset="0.1"/></joint>'
        f'<joint name="z" type="revolute"><parent link="c"/><child link="d"/>{limit}'
        '<mimic joint="y" multiplier="3" offset="0.2"/></joint></robot>'
    )
    robot = build_robot(parse_string(text, source="m.urdf"))
    mimic = mimic_joints(robot, driven_joints(robot))
    assert mimic["z"].source == "x" and mimic["z"].multiplier == 6 and mimic["z"].offset == pytest.approx(0.5)

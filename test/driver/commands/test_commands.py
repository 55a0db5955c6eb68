"""Checking and limiting commands (the sas arrays and JointState by name)."""

from __future__ import annotations

import math

import pytest
from helpers.driver_rig import JOINTS, arm_limits

from bb_robot.driver.commands.commands import CommandMode, CommandValidator, describe_clamped
from bb_robot.driver.errors import CommandRejected

SIM_MODES = frozenset({CommandMode.POSITION, CommandMode.VELOCITY})


def validator(policy: str = "clamp") -> CommandValidator:
    return CommandValidator(arm_limits(), SIM_MODES, policy=policy, backend="sim", mimic={"j3_mimic": "j3"})


def test_array_in_joint_order() -> None:
    command = validator().from_array(CommandMode.POSITION, [0.1, 0.2, 0.3], "/arm/set/target_joint_positions", 7)
    assert command.mode is CommandMode.POSITION and command.indices.tolist() == [0, 1, 2]
    assert command.values.tolist() == [0.1, 0.2, 0.3] and command.received_ns == 7 and not command.clamped


@pytest.mark.parametrize("data", [[0.1, 0.2], [0.1, 0.2, 0.3, 0.4], []])
def test_array_of_the_wrong_length_is_rejected_naming_the_order(data: list[float]) -> None:
    with pytest.raises(CommandRejected) as info:
        validator().from_array(CommandMode.POSITION, data, "/t", 0)
    assert info.value.kind == "length" and "j1, j2, j3" in info.value.reason


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_rejected(bad: float) -> None:
    with pytest.raises(CommandRejected) as info:
        validator().from_array(CommandMode.VELOCITY, [0.0, bad, 0.0], "/t", 0)
    assert info.value.kind == "non_finite" and "j2=" in info.value.reason


def test_clamp_policy_clamps_to_soft_limits_and_velocity_limits() -> None:
    command = validator().from_array(CommandMode.POSITION, [5.0, 100.0, -1.0], "/t", 0)
    assert command.values.tolist() == [1.8, 100.0, 0.0]  # soft limit, continuous, hard limit
    assert [c[0] for c in command.clamped] == ["j1", "j3"]
    assert "j1 5 → 1.8" in describe_clamped(command)
    velocity = validator().from_array(CommandMode.VELOCITY, [-9.0, 1.0, 0.3], "/t", 0)
    assert velocity.values.tolist() == [-1.5, 1.0, 0.25]


def test_reject_policy_rejects_the_whole_command() -> None:
    with pytest.raises(CommandRejected) as info:
        validator("reject").from_array(CommandMode.POSITION, [1.9, 0.0, 0.1], "/t", 0)
    assert info.value.kind == "limit" and "j1 1.9 outside [-1.8, 1.8]" in info.value.reason


def test_effort_is_refused_when_the_backend_lacks_it() -> None:
    with pytest.raises(CommandRejected) as info:
        validator().from_array(CommandMode.EFFORT, [0.0, 0.0, 0.0], "/t", 0)
    assert info.value.kind == "unsupported" and "backend 'sim' does not support effort" in info.value.reason
    with pytest.raises(CommandRejected, match="effort"):
        validator().from_joint_state(["j1"], [], [], [1.0], "/t", 0)


def test_joint_state_by_name_picks_position_then_velocity() -> None:
    v = validator()
    position = v.from_joint_state(["j3", "j1"], [0.2, -0.5], [0.0, 0.0], [], "/c", 0)
    assert position.mode is CommandMode.POSITION and position.indices.tolist() == [2, 0]
    velocity = v.from_joint_state(["j2"], [], [0.5], [], "/c", 0)
    assert velocity.mode is CommandMode.VELOCITY and velocity.values.tolist() == [0.5]


@pytest.mark.parametrize(
    ("names", "position", "velocity", "kind", "text"),
    [
        (["j1", "nope"], [0.0, 0.0], [], "unknown_joint", "unknown joint 'nope'"),
        (["j1", "j1"], [0.0, 0.0], [], "duplicate", "named twice"),
        (["j3_mimic"], [0.1], [], "mimic", "mimics 'j3'"),
        (["j1", "j2"], [0.0], [], "length", "2 names but 1 position"),
        (["j1"], [0.0], [0.0, 1.0], "length", "velocity"),
        ([], [], [], "empty", "no joint names"),
        (["j1"], [], [], "empty", "no position, velocity or effort"),
    ],
)
def test_joint_state_problems(
    names: list[str], position: list[float], velocity: list[float], kind: str, text: str
) -> None:
    with pytest.raises(CommandRejected) as info:
        validator().from_joint_state(names, position, velocity, [], "/c", 0)
    assert info.value.kind == kind and text in info.value.reason
    # the name lookup is cached: the same problem is found again
    with pytest.raises(CommandRejected):
        validator().from_joint_state(names, position, velocity, [], "/c", 0)


def test_update_limits_and_policy() -> None:
    v = validator()
    v.update(policy="reject")
    with pytest.raises(CommandRejected):
        v.from_array(CommandMode.POSITION, [1.9, 0.0, 0.1], "/t", 0)
    with pytest.raises(ValueError, match="limit_policy"):
        v.update(policy="ignore")
    assert JOINTS == v.names


# ------------------------------------------------------------------ clamp_near: absurd values refused
def test_clamp_near_clamps_within_the_margin_of_each_joint_type() -> None:
    v = validator("clamp_near")  # j1 revolute, soft limits +-1.8; j3 prismatic [0, 0.5]
    command = v.from_array(CommandMode.POSITION, [1.8 + 0.09, 0.0, 0.5 + 0.009], "/t", 0)
    assert command.values.tolist() == pytest.approx([1.8, 0.0, 0.5])
    assert [name for name, _, _ in command.clamped] == ["j1", "j3"]


@pytest.mark.parametrize(
    ("values", "joint"),
    [
        ([1.8 + 0.11, 0.0, 0.2], "j1 1.91 outside [-1.8, 1.8] by more than 0.1"),  # revolute: 0.1 rad
        ([0.0, 0.0, 0.5 + 0.011], "j3 0.511 outside [0, 0.5] by more than 0.01"),  # prismatic: 0.01 m
        ([1e300, 0.0, 0.2], "j1 1e+300"),  # garbage
        ([90.0, 0.0, 0.2], "j1 90 outside"),  # degrees for radians
    ],
)
def test_clamp_near_rejects_the_whole_command_beyond_the_margin(values: list[float], joint: str) -> None:
    with pytest.raises(CommandRejected) as info:
        validator("clamp_near").from_array(CommandMode.POSITION, values, "/t", 0)
    assert info.value.kind == "limit" and joint in info.value.reason and "unit mistake" in info.value.reason


def test_clamp_near_velocities_within_ten_percent_are_clamped_beyond_rejected() -> None:
    v = validator("clamp_near")  # j1 velocity limit 1.5
    assert v.from_array(CommandMode.VELOCITY, [1.6, 0.0, 0.0], "/t", 0).values[0] == pytest.approx(1.5)
    with pytest.raises(CommandRejected, match="j1 1.7 outside"):
        v.from_array(CommandMode.VELOCITY, [1.7, 0.0, 0.0], "/t", 0)


def test_clamp_at_any_distance_stays_available_and_margins_are_live() -> None:
    from bb_robot.driver.commands.limits import ClampMargins

    assert validator("clamp").from_array(CommandMode.POSITION, [1e300, 0.0, 0.2], "/t", 0).values[0] == 1.8
    v = validator("clamp_near")
    v.update(margins=ClampMargins(revolute=1.0))
    assert v.from_array(CommandMode.POSITION, [2.5, 0.0, 0.2], "/t", 0).values[0] == pytest.approx(1.8)

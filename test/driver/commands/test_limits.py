"""Joint limits: the model's, MoveIt-style overrides (tightening only), parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.driver_rig import JOINTS, arm_robot
from hypothesis import given, settings
from hypothesis import strategies as st

from bb_robot.driver.commands import limits as L
from bb_robot.driver.errors import LimitsFileError


def test_from_robot_reads_hard_soft_velocity_effort_and_no_acceleration() -> None:
    table = L.from_robot(arm_robot(), JOINTS)
    assert table.names == JOINTS
    assert table.lower.tolist() == [-2.0, -math.inf, 0.0]
    assert table.upper.tolist() == [2.0, math.inf, 0.5]
    assert table.command_lower.tolist() == [-1.8, -math.inf, 0.0]  # the soft limits narrow the range
    assert table.command_upper.tolist() == [1.8, math.inf, 0.5]
    assert table.velocity.tolist() == [1.5, 3.0, 0.25]
    assert table.effort.tolist() == [10.0, 5.0, 50.0]
    assert np.isinf(table.acceleration).all()
    assert "soft [-1.8, 1.8]" in table.describe("j1") and "acceleration none" in table.describe("j1")


def test_moveit_layout_is_parsed_and_acceleration_applied() -> None:
    data = {
        "default_velocity_scaling_factor": 0.1,
        "joint_limits": {
            "j1": {"has_acceleration_limits": True, "max_acceleration": 3.0, "has_jerk_limits": False, "max_jerk": 0},
            "j2": {"has_velocity_limits": True, "max_velocity": 1.0, "has_acceleration_limits": False},
            "not_driven": {"has_velocity_limits": True, "max_velocity": 1.0},
        },
    }
    overrides = L.parse_overrides(data, "limits.yaml")
    table = L.apply_overrides(L.from_robot(arm_robot(), JOINTS), overrides)
    assert table.acceleration[0] == 3.0 and math.isinf(table.acceleration[1])
    assert table.velocity.tolist() == [1.5, 1.0, 0.25]
    assert table.sources["j1"]["acceleration"] == "joint_limits"


def test_a_ros_parameters_file_is_accepted() -> None:
    data = {
        "/**": {"ros__parameters": {"joint_limits": {"j3": {"has_acceleration_limits": True, "max_acceleration": 2}}}}
    }
    assert L.parse_overrides(data, "params.yaml")["j3"].max_acceleration == 2.0


def test_overrides_only_tighten() -> None:
    warnings: list[str] = []
    overrides = {
        "j1": L.LimitOverride(
            has_velocity_limits=True, max_velocity=9.0, has_position_limits=True, min_position=-3.0, max_position=1.0
        ),
        "j3": L.LimitOverride(has_effort_limits=True, max_effort=10.0),
    }
    table = L.apply_overrides(L.from_robot(arm_robot(), JOINTS), overrides, warn=warnings.append)
    assert table.velocity[0] == 1.5  # 9 would widen: kept
    assert table.lower[0] == -2.0 and table.upper[0] == 1.0
    assert table.effort[2] == 10.0
    assert any("max_velocity 9 would widen" in w for w in warnings)
    assert any("min_position -3 would widen" in w for w in warnings)


def test_flag_without_value_and_inverted_range_are_ignored_with_a_warning() -> None:
    warnings: list[str] = []
    overrides = {
        "j1": L.LimitOverride(has_acceleration_limits=True),
        "j3": L.LimitOverride(has_position_limits=True, min_position=0.4, max_position=0.1),
    }
    table = L.apply_overrides(L.from_robot(arm_robot(), JOINTS), overrides, warn=warnings.append)
    assert math.isinf(table.acceleration[0]) and table.lower[2] == 0.0
    assert len(warnings) == 2


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"max_velocity": "fast"}, "expected a number"),
        ({"has_velocity_limits": 1}, "expected true or false"),
        ({"max_acceleration": -1.0}, "above 0"),
        ({"max_acceleration": float("inf")}, "finite"),
        ({"max_speed": 1.0}, "unknown key"),
    ],
)
def test_bad_values_name_the_file_and_key(entry: dict[str, object], message: str) -> None:
    with pytest.raises(LimitsFileError, match=message) as info:
        L.parse_overrides({"joint_limits": {"j1": entry}}, "x.yaml")
    assert "x.yaml: joint_limits.j1." in str(info.value)


def test_missing_mapping_and_unreadable_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LimitsFileError, match="no 'joint_limits' mapping"):
        L.parse_overrides({"limits": {}}, "x.yaml")
    with pytest.raises(LimitsFileError, match="cannot read"):
        L.load_overrides(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("joint_limits: [")
    with pytest.raises(LimitsFileError, match="not valid YAML"):
        L.load_overrides(bad)
    good = tmp_path / "good.yaml"
    good.write_text("joint_limits:\n  j2:\n    has_acceleration_limits: true\n    max_acceleration: 7.5\n")
    assert L.load_overrides(good)["j2"].max_acceleration == 7.5


def test_overrides_from_flat_parameters() -> None:
    values = {"joint_limits.j1.has_acceleration_limits": True, "joint_limits.j1.max_acceleration": 2.5, "other": 1}
    overrides = L.override_from_parameters(values, JOINTS)
    assert set(overrides) == {"j1"} and overrides["j1"].max_acceleration == 2.5


def _table(velocity: list[float], acceleration: list[float]) -> L.JointLimitTable:
    n = len(velocity)
    inf = np.full(n, np.inf)
    return L.JointLimitTable(
        tuple(f"j{i}" for i in range(n)), -inf, inf, -inf, inf, np.array(velocity), np.array(acceleration), inf
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(-3, 3), st.floats(-6, 6), st.floats(-3, 3), st.sampled_from([0.5, 1.5, 5.0, np.inf]),
            st.sampled_from([0.5, 3.0, 40.0, np.inf]),
        ),
        min_size=1, max_size=7,
    ),
    st.sampled_from([0.002, 0.005, 0.01]),
    st.integers(1, 7),
)  # fmt: skip
def test_the_compiled_approach_path_is_the_numpy_one_row_for_row(
    joints: list[tuple[float, float, float, float, float]], period: float, every: int
) -> None:
    """The collision guard's approach path (each position command it checks) from the numba kernel equals
    the numpy path exactly: the same rows, bit for bit, for joints with and without limits."""
    if L.approach_kernel() is None:
        pytest.skip("numba is not installed or fails to load: only the numpy path exists")
    positions, velocities, targets, velocity, acceleration = (np.array(column) for column in zip(*joints, strict=True))
    limits = _table(list(velocity), list(acceleration))
    compiled_rows = L.approach_path(positions, velocities, targets, limits, period, every=every, max_steps=5000)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(L, "_approach", [None])
        numpy_rows = L.approach_path(positions, velocities, targets, limits, period, every=every, max_steps=5000)
    np.testing.assert_array_equal(compiled_rows, numpy_rows)

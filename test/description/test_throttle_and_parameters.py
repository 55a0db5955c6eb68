"""Rate-limited warnings, and the node's parameter table."""

from __future__ import annotations

from pathlib import Path

from bb_robot.description.parameters import (
    PARAMETER_NAMES,
    PARAMETERS,
    RELOAD_PARAMETERS,
    default_model_dirs,
    spec,
)
from bb_robot.description.throttle import WarningThrottle


def test_throttle_counts_what_it_mutes_per_key() -> None:
    now = [0.0]
    throttle = WarningThrottle(5.0, clock=lambda: now[0])
    assert throttle.allow("a") == 0
    assert throttle.allow("a") is None and throttle.allow("a") is None
    assert throttle.allow("b") == 0
    now[0] = 5.0
    assert throttle.allow("a") == 2 and throttle.allow("a") is None


def test_the_issue_parameters_and_nothing_rclpy_declares_itself() -> None:
    assert PARAMETER_NAMES == {
        "model",
        "model_scope",
        "tip_link",
        "robot_description",
        "frame_prefix",
        "publish_frequency",
        "ignore_timestamp",
        "source_list",
        "model_dirs",
        # issue 13: where the robot stands in a TF tree shared with other robots
        "parent_frame",
        "base_pose",
    }
    assert "use_sim_time" not in PARAMETER_NAMES
    assert all(item.description.strip() for item in PARAMETERS)
    assert {item.name for item in PARAMETERS if item.read_only} == {"source_list", "model_dirs"}
    assert RELOAD_PARAMETERS <= PARAMETER_NAMES
    assert spec("publish_frequency").default == 0.0 and spec("source_list").default == ("joint_states",)


def test_default_model_dirs_is_the_share_models_directory() -> None:
    (directory,) = default_model_dirs()
    assert Path(directory).name == "models" and (Path(directory) / "bb_arm.urdf").is_file()

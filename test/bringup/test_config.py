"""Reading bringup parameter files: robots, model, backend, the joints they name."""

from __future__ import annotations

from pathlib import Path

import pytest

from bb_robot.bringup.config import BringupConfigError, read_config, robots_in

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"


def test_the_two_arm_file_names_two_robots() -> None:
    config = read_config(str(CONFIG_DIR / "bb_arm_pair.yaml"))
    assert config.robots == ("left", "right")
    assert config.model == "package://bb_robot/models/bb_arm.urdf"
    assert config.backend == "sim"
    assert "shoulder_pan_joint" in config.joints
    assert config.max_acceleration["elbow_joint"] == 5.0


def test_single_robot_files_name_none() -> None:
    for name in ("bb_arm.yaml", "bb_arm_actuators.yaml", "generic.yaml"):
        assert read_config(str(CONFIG_DIR / name)).robots == ()


def test_wildcards_and_plain_node_names_are_not_robots() -> None:
    data = {
        "/**/description": {"ros__parameters": {}},
        "description": {"ros__parameters": {}},
        "/a/b/description": {"ros__parameters": {}},
        "/a/b/driver": {"ros__parameters": {}},
        "/*/description": {"ros__parameters": {}},
    }
    assert robots_in(data) == ("a/b",)


def test_a_name_is_looked_up_in_config(tmp_path: Path) -> None:
    assert read_config("bb_arm.yaml").path.name == "bb_arm.yaml"
    with pytest.raises(BringupConfigError, match="no parameter file 'nope.yaml'"):
        read_config("nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("just: text\n")
    with pytest.raises(BringupConfigError, match="not a ROS 2 parameter file"):
        read_config(str(bad))

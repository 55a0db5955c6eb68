"""The locally built control_msgs (interfaces/control_msgs) matches ROS 2's: type hashes, constants.

The hashes were generated from ros-controls/control_msgs 6.8.0's own .action and .msg files
(the master branch, released to Kilted and Rolling); equal hashes mean a FollowJointTrajectory
client or server on a real ROS 2 graph (MoveIt, ros2_control) talks to the driver.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("control_msgs", reason="control_msgs is not built: run scripts/setup")

#: (interface file, type name suffix) → type hash of ``control_msgs/<file><suffix>``.
HASHES = {
    ("action/FollowJointTrajectory", ""): "RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0",
    (
        "action/FollowJointTrajectory",
        "_Goal",
    ): "RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    (
        "action/FollowJointTrajectory",
        "_Result",
    ): "RIHS01_8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
    (
        "action/FollowJointTrajectory",
        "_Feedback",
    ): "RIHS01_0bb018d181bdc6384dd75365480967bd1d6eaee4ef3dd597c64cd0b8bdc10867",
    ("msg/JointTolerance", ""): "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    ("msg/JointComponentTolerance", ""): "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
}


@pytest.mark.parametrize(("interface", "suffix"), sorted(HASHES))
def test_type_hashes_match_ros(interface: str, suffix: str) -> None:
    from ament_index_python.packages import get_package_share_directory

    description = Path(get_package_share_directory("control_msgs")) / f"{interface}.json"
    found = {
        h["type_name"]: h["hash_string"] for h in json.loads(description.read_text(encoding="utf-8"))["type_hashes"]
    }
    assert found[f"control_msgs/{interface}{suffix}"] == HASHES[(interface, suffix)]


def test_result_codes_and_fields() -> None:
    from control_msgs.action import FollowJointTrajectory

    from bb_robot.driver import errors

    result = FollowJointTrajectory.Result
    codes = (
        "SUCCESSFUL",
        "INVALID_GOAL",
        "INVALID_JOINTS",
        "OLD_HEADER_TIMESTAMP",
        "PATH_TOLERANCE_VIOLATED",
        "GOAL_TOLERANCE_VIOLATED",
    )
    assert [getattr(result, code) for code in codes] == [getattr(errors, code) for code in codes]
    assert "index" in FollowJointTrajectory.Feedback.get_fields_and_field_types()

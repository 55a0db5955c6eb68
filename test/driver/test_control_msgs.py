"""The locally built control_msgs (interfaces/control_msgs) matches ROS 2's: type hashes, constants.

The hashes were generated from ros-controls/control_msgs' own .action and .msg files, of the version
the distribution under test ships: 6.8.0 (the master branch, released to Kilted and Rolling) and
5.8.0 (the jazzy branch, released to Jazzy; generated with Jazzy's rosidl_adapter and
rosidl_generator_type_description from the branch's files). Equal hashes mean a FollowJointTrajectory
client or server on a real ROS 2 graph of that distribution (MoveIt, ros2_control) talks to the driver.
Jazzy's feedback lacks ``index`` and ``multi_dof_index``, so the feedback (and the action's own) hash
differs between the two; goal and result are the same (interfaces/control_msgs/README.md).
GripperCommand (action and message) is the same in both releases, so its hashes are too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.ros_distro import running_distro

pytest.importorskip("control_msgs", reason="control_msgs is not built: run scripts/setup")

#: (interface file, type name suffix) → type hash of ``control_msgs/<file><suffix>`` in Kilted.
KILTED_HASHES = {
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
    # GripperCommand: the same files on the master (6.8.0) and jazzy (5.8.0) branches.
    ("action/GripperCommand", ""): "RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84",
    ("action/GripperCommand", "_Goal"): "RIHS01_607d9f41eb241e1922e90f02125e87ae6bfb78f7f64a71dc92630263d01f8b6d",
    ("action/GripperCommand", "_Result"): "RIHS01_bf512d5aa6a0e4fe4d8be22b2ec4a1973c3d250fa1f65e47450322c25c45c0a0",
    ("action/GripperCommand", "_Feedback"): "RIHS01_8f7c520077bab528bb9161ee3b83c81eee1f8aecadb8922ce82c79d667a819c4",
    ("msg/GripperCommand", ""): "RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890",
}
#: The same in Jazzy (control_msgs 5.8.0): only the feedback, and so the action itself, differ.
JAZZY_HASHES = {
    **KILTED_HASHES,
    ("action/FollowJointTrajectory", ""): "RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6",
    (
        "action/FollowJointTrajectory",
        "_Feedback",
    ): "RIHS01_3fd0aaecf71725121ae1ff7f01098a5e0da581e672be18a6b2c286cb43d96b49",
}
HASHES = {"kilted": KILTED_HASHES, "jazzy": JAZZY_HASHES}
#: The feedback fields that only Kilted's FollowJointTrajectory has.
KILTED_ONLY_FEEDBACK = {"index", "multi_dof_index"}


def test_the_two_distributions_differ_in_the_feedback_only() -> None:
    differ = {key for key in KILTED_HASHES if KILTED_HASHES[key] != JAZZY_HASHES[key]}
    assert differ == {("action/FollowJointTrajectory", ""), ("action/FollowJointTrajectory", "_Feedback")}


@pytest.mark.parametrize(("interface", "suffix"), sorted(KILTED_HASHES))
def test_type_hashes_match_ros(interface: str, suffix: str) -> None:
    from ament_index_python.packages import get_package_share_directory

    description = Path(get_package_share_directory("control_msgs")) / f"{interface}.json"
    found = {
        h["type_name"]: h["hash_string"] for h in json.loads(description.read_text(encoding="utf-8"))["type_hashes"]
    }
    assert found[f"control_msgs/{interface}{suffix}"] == HASHES[running_distro()][(interface, suffix)]


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
    fields = set(FollowJointTrajectory.Feedback.get_fields_and_field_types())
    if running_distro() == "jazzy":
        assert not fields & KILTED_ONLY_FEEDBACK
    else:
        assert KILTED_ONLY_FEEDBACK <= fields

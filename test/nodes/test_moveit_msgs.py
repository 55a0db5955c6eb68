"""The locally built moveit_msgs 2.6.0 (scripts/build_interfaces, from ../shared/third_party/ros2/moveit/) in this venv.

Run in both venvs (the Jazzy profile takes every ``test/nodes/test_*.py``).  The messages import,
carry MoveIt's constants, and their type hashes (RIHS01) are those recorded in
docs/nodes/move_group.md: the same in Jazzy and Kilted, since every definition they reference is the
same in both (docs/distributions.md), and the same as Kilted's moveit_msgs 2.7.1, which only adds
``GetMultiStateValidity``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("moveit_msgs", reason="moveit_msgs is not built: run scripts/setup")

#: ``<package>/<interface>`` → its type hash, from the build (docs/nodes/move_group.md).
HASHES = {
    "moveit_msgs/action/MoveGroup": "RIHS01_8c41d70908a2d26b564ddac31e9710f697a753bbd2a4d229542f76271daefc0b",
    "moveit_msgs/action/ExecuteTrajectory": "RIHS01_e1ed3386f275fc8cea91cc78701074f892e78e583be2f8063eea5616dd1065fc",
    "moveit_msgs/srv/GetMotionPlan": "RIHS01_0e118e1d8d53d5fea8eea309fc06a58239fa0e617864127e7de8399ab7335b27",
    "moveit_msgs/srv/GetCartesianPath": "RIHS01_b19f501df5d378141d918199894c3ad24533e76021a880b15dc5d62fec8d7b1a",
    "moveit_msgs/srv/GetPositionIK": "RIHS01_054ed6f6f71a09b01b5246c5d80beb4dacc6f444f58df039849c76292933e9e3",
    "moveit_msgs/srv/GetPositionFK": "RIHS01_2f16ec361a135d84b85a29385abeb9eeb025e39c09038bd6b2826645edc7edad",
    "moveit_msgs/srv/GetStateValidity": "RIHS01_e9fcd24ae0fd8c2f16d4afe397efaf03427d1f899fe91ecf6cb7f7f1c6ca8720",
    "moveit_msgs/srv/GetPlanningScene": "RIHS01_7ed7e96238b902174d985b0eb739ea08c95377e8e46a6a9014c22497faf79cd2",
    "moveit_msgs/srv/ApplyPlanningScene": "RIHS01_8e6134783db0987c0acedbfd2f16f608a8f7a54e83a7bbb372e851af419f4d72",
    "moveit_msgs/msg/CollisionObject": "RIHS01_74b0acd6d56be032bf4f764b2c2633f50588b5fb2bd71e97206c59052747cf7e",
    "moveit_msgs/msg/AttachedCollisionObject": (
        "RIHS01_7fdfe7951a33a857f20fc42c9ed410a38d06dd0c209ac774ecea746dc487dc41"
    ),
    "moveit_msgs/msg/PlanningScene": "RIHS01_0f58540ad5eab4b9ea827d53b763c793d8cabd202b3b301fcee25afa4ce1bd80",
    "moveit_msgs/msg/DisplayTrajectory": "RIHS01_dd351cbd6d9986eb019306910ec09236a136a02dbc0b3465707cb62f2d56e22b",
    "moveit_msgs/msg/MoveItErrorCodes": "RIHS01_dcda8a9950cf6dd6ac221c2c0d2509f52f136afa0403dd19beacdf07e83e4a07",
    "moveit_msgs/msg/RobotState": "RIHS01_7c516dc15713e545cb2836c5ca745fbdcfcc10de4855a41c83e6b4bf1afc3f83",
    "moveit_msgs/msg/RobotTrajectory": "RIHS01_af1dc87fb94d13e5f233e9c210d2662fa06143a8b3c6aec47c57ad45074fcce8",
    "moveit_msgs/msg/MotionPlanRequest": "RIHS01_f82ed20da5f8f93146999c1a3cfe34b56b97fc10333b40cac69782a1210888d7",
    "moveit_msgs/msg/Constraints": "RIHS01_71718200459ae8fecdc4f2c9631215f7eba5ff686c701a32e231ba8b11b3592b",
    "octomap_msgs/msg/Octomap": "RIHS01_9891a19a05b70ec20aa8f45db3f8300b9ab80afff32c61c549d25087da9625b0",
    "object_recognition_msgs/msg/ObjectType": "RIHS01_5eb3ee3976403366d7c50d7dbee8bec96b3bced1e752674a7194a35841632134",
}


@pytest.mark.parametrize("name", sorted(HASHES))
def test_type_hashes(name: str) -> None:
    from ament_index_python.packages import get_package_share_directory

    package, interface = name.split("/", 1)
    description = Path(get_package_share_directory(package)) / f"{interface}.json"
    found = {
        h["type_name"]: h["hash_string"] for h in json.loads(description.read_text(encoding="utf-8"))["type_hashes"]
    }
    assert found[name] == HASHES[name]


def test_the_node_s_messages_import_with_moveit_s_constants() -> None:
    from moveit_msgs.action import ExecuteTrajectory, MoveGroup
    from moveit_msgs.msg import CollisionObject, MoveItErrorCodes
    from moveit_msgs.srv import GetCartesianPath, GetPositionIK
    from shape_msgs.msg import SolidPrimitive
    from visualization_msgs.msg import Marker

    from bb_robot.move_group.requests import Code

    for name in (
        "SUCCESS",
        "PLANNING_FAILED",
        "INVALID_GROUP_NAME",
        "INVALID_GOAL_CONSTRAINTS",
        "NO_IK_SOLUTION",
        "PREEMPTED",
    ):
        assert getattr(MoveItErrorCodes, name) == getattr(Code, name)
    assert (CollisionObject.ADD, CollisionObject.REMOVE, CollisionObject.APPEND, CollisionObject.MOVE) == (
        b"\x00",
        b"\x01",
        b"\x02",
        b"\x03",
    ) or (CollisionObject.ADD, CollisionObject.MOVE) == (0, 3)
    assert SolidPrimitive.BOX == 1 and Marker.ARROW == 0
    assert "message" in MoveItErrorCodes.get_fields_and_field_types()
    assert "planning_options" in MoveGroup.Goal.get_fields_and_field_types()
    assert "trajectory" in ExecuteTrajectory.Goal.get_fields_and_field_types()
    assert "fraction" in GetCartesianPath.Response.get_fields_and_field_types()
    assert "ik_request" in GetPositionIK.Request.get_fields_and_field_types()

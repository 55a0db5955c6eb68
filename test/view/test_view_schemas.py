"""ros2msg schemas (bb_robot.view.schemas) checked against an independent decoder: the schema
text must let mcap-ros2-support decode the bytes rclpy serialises, field for field."""

from __future__ import annotations

from pathlib import Path

import pytest

from bb_robot.view.schemas import (
    SEPARATOR,
    SchemaError,
    dependencies,
    full_type_name,
    msg_file_source,
    ros2msg_schema,
    split_type_name,
)

rclpy_serialization = pytest.importorskip("rclpy.serialization", reason="rclpy is not installed: run scripts/setup")
dynamic = pytest.importorskip("mcap_ros2._dynamic", reason="mcap-ros2-support is not installed")


def _messages() -> list[tuple[str, object]]:
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from geometry_msgs.msg import PoseStamped, TransformStamped
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    transform = TransformStamped(child_frame_id="tool0")
    transform.header.frame_id = "base_link"
    transform.header.stamp.sec, transform.header.stamp.nanosec = 12, 345
    transform.transform.translation.x, transform.transform.rotation.w = 0.25, 1.0
    status = DiagnosticStatus(level=b"\x01", name="driver: loop", message="ok", hardware_id="bb_arm")
    status.values = [KeyValue(key="rate", value="500")]
    pose = PoseStamped()
    pose.pose.position.z, pose.pose.orientation.w = 0.7, 1.0
    return [
        ("tf2_msgs/msg/TFMessage", TFMessage(transforms=[transform, transform])),
        (
            "sensor_msgs/msg/JointState",
            JointState(name=["a", "b"], position=[0.5, -1.5], velocity=[], effort=[2.0, 3.0]),
        ),
        ("std_msgs/msg/String", String(data="<robot name='x'/>")),
        ("diagnostic_msgs/msg/DiagnosticArray", DiagnosticArray(status=[status])),
        ("geometry_msgs/msg/PoseStamped", pose),
    ]


@pytest.mark.parametrize("type_name,message", _messages(), ids=lambda v: v if isinstance(v, str) else "")
def test_schema_decodes_rclpy_bytes_with_an_independent_decoder(type_name: str, message: object) -> None:
    schema = ros2msg_schema(type_name)
    decoded = dynamic.generate_dynamic(type_name, schema)[type_name](rclpy_serialization.serialize_message(message))

    def same(ours: object, theirs: object) -> None:
        fields = getattr(ours, "get_fields_and_field_types", None)
        if fields is None:
            if isinstance(ours, bytes):  # a ROS byte field
                assert ours == bytes([theirs]) if isinstance(theirs, int) else ours == theirs
            elif isinstance(ours, (list, tuple)) or hasattr(ours, "tolist"):
                ours_list = list(ours.tolist() if hasattr(ours, "tolist") else ours)
                assert len(ours_list) == len(theirs)
                for a, b in zip(ours_list, theirs, strict=True):
                    same(a, b)
            else:
                assert ours == theirs
            return
        for name in fields():
            same(getattr(ours, name), getattr(theirs, name))

    same(message, decoded)


def test_schema_layout_is_rosbag2s() -> None:
    schema = ros2msg_schema("tf2_msgs/msg/TFMessage")
    blocks = schema.split(SEPARATOR + "\n")
    assert blocks[0].startswith("geometry_msgs/TransformStamped[] transforms")
    names = [block.splitlines()[0] for block in blocks[1:]]
    assert names[0] == "MSG: geometry_msgs/TransformStamped"
    assert len(names) == len(set(names))  # each dependency once
    assert {"MSG: std_msgs/Header", "MSG: builtin_interfaces/Time", "MSG: geometry_msgs/Quaternion"} <= set(names)


def test_dependencies_of_fields_constants_arrays_and_bounded_strings() -> None:
    definition = """# a comment naming geometry_msgs/Pose
int32 KIND=3
string<=10 short
Header[] headers            # same package
other_pkg/Thing[<=4] things
uint8[16] raw
Header again
"""
    assert dependencies("pkg", definition) == [("pkg", "Header"), ("other_pkg", "Thing")]


def test_names_and_missing_definitions(tmp_path: Path) -> None:
    assert split_type_name("a/msg/B") == ("a", "B") == split_type_name("a/B")
    assert full_type_name("a/B") == "a/msg/B"
    with pytest.raises(SchemaError, match="expected package/msg/Type"):
        split_type_name("a/srv/B/C")
    with pytest.raises(SchemaError, match=r"no_pkg/msg/Nothing.*no Nothing.msg in share/no_pkg/msg"):
        ros2msg_schema("no_pkg/msg/Nothing")
    (tmp_path / "share" / "p" / "msg").mkdir(parents=True)
    (tmp_path / "share" / "p" / "msg" / "A.msg").write_text("B b\nq/C c\n")
    (tmp_path / "share" / "p" / "msg" / "B.msg").write_text("float64 x\n")
    with pytest.raises(SchemaError, match="q/msg/C"):
        ros2msg_schema("p/msg/A", msg_file_source([tmp_path]))

"""The Foxglove side of the view (bb_robot.view.bridge), without ROS: what a recording holds,
what is resent to a late subscriber, and clear errors when it cannot start."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

pytest.importorskip("foxglove", reason="foxglove-sdk is not installed")
from mcap.reader import make_reader  # noqa: E402

from bb_robot.view.bridge import FoxgloveBridge, ViewError, ViewOptions  # noqa: E402
from bb_robot.view.topics import TopicChoice  # noqa: E402

STATIC = TopicChoice("/tf_static", "tf2_msgs/msg/TFMessage", latched=True, best_effort=False)
DESCRIPTION = TopicChoice("/robot_description", "std_msgs/msg/String", latched=True, best_effort=False)
STATE = TopicChoice("/joint_states", "sensor_msgs/msg/JointState", latched=False, best_effort=False)


def test_recording_only_holds_what_was_published_once_with_schemas(tmp_path: Path) -> None:
    record = tmp_path / "run.mcap"
    bridge = FoxgloveBridge(ViewOptions(serve=False, record=record))
    assert bridge.url() is None and bridge.app_url() is None
    for choice, schema in ((STATIC, "# static\n"), (DESCRIPTION, "string data\n"), (STATE, "# state\n")):
        bridge.add(choice, schema)
    assert bridge.topics == ["/tf_static", "/robot_description", "/joint_states"]
    bridge.publish("/robot_description", b"old", 1)
    bridge.publish("/robot_description", b"new", 2)
    bridge.publish("/tf_static", b"a", 3)
    bridge.publish("/tf_static", b"b", 4)
    bridge.publish("/tf_static", b"a", 5)  # the same again: kept once, as the newest
    for i in range(5):
        bridge.publish("/joint_states", bytes([i]), 10 + i)
    bridge.publish("/not_bridged", b"x", 20)
    # no server: nothing to resend to, and nothing resent goes into the recording
    assert bridge.resend_latched(12345, 30) == 0
    bridge.remove("/joint_states")
    bridge.publish("/joint_states", b"late", 40)
    bridge.close()

    with record.open("rb") as stream:
        reader = make_reader(stream)
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
        assert summary is not None
        channels = {c.id: c for c in summary.channels.values()}
        got: dict[str, list[bytes]] = {}
        for _schema, channel, message in reader.iter_messages():
            got.setdefault(channels[channel.id].topic, []).append(message.data)
        for channel in channels.values():
            schema = summary.schemas[channel.schema_id]
            assert channel.message_encoding == "cdr" and schema.encoding == "ros2msg"
    assert got == {
        "/robot_description": [b"old", b"new"],
        "/tf_static": [b"a", b"b", b"a"],
        "/joint_states": [bytes([i]) for i in range(5)],
    }


def test_latched_messages_kept_for_late_subscribers(tmp_path: Path) -> None:
    bridge = FoxgloveBridge(ViewOptions(serve=True, port=0))
    try:
        url = bridge.url()
        assert url is not None and url.startswith("ws://127.0.0.1:") and not url.endswith(":0")
        bridge.add(STATIC, "# static\n")
        bridge.add(DESCRIPTION, "string data\n")
        bridge.add(STATE, "# state\n")
        for data in (b"a", b"b", b"a"):
            bridge.publish("/tf_static", data, 1)
        bridge.publish("/robot_description", b"old", 1)
        bridge.publish("/robot_description", b"new", 2)
        bridge.publish("/joint_states", b"s", 3)
        live = {topic: bridge._bridged[topic].live for topic in bridge.topics}  # noqa: SLF001 - channel ids
        assert bridge.resend_latched(live["/tf_static"].id(), 5) == 2  # b, then a (distinct, newest last)
        assert bridge._bridged["/tf_static"].latched == [b"b", b"a"]  # noqa: SLF001
        assert bridge.resend_latched(live["/robot_description"].id(), 5) == 1  # only the newest description
        assert bridge.resend_latched(live["/joint_states"].id(), 5) == 0  # not latched
    finally:
        bridge.close()


def test_errors_name_the_file_or_the_port(tmp_path: Path) -> None:
    existing = tmp_path / "run.mcap"
    existing.write_bytes(b"keep me")
    with pytest.raises(ViewError, match=r"run.mcap.*exists"):
        FoxgloveBridge(ViewOptions(serve=False, record=existing))
    assert existing.read_bytes() == b"keep me"
    with pytest.raises(ViewError, match="cannot create"):
        FoxgloveBridge(ViewOptions(serve=False, record=tmp_path / "no_dir" / "run.mcap"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ViewError, match=f"cannot serve on 127.0.0.1:{port}"):
            FoxgloveBridge(ViewOptions(serve=True, port=port))

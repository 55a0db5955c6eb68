"""The wire format: topic names, partitions, discovery datagrams, and our Discovery against gz.msgs'."""

from __future__ import annotations

import struct

import pytest

from bb_robot.gz import wire
from bb_robot.gz.messages import GzMessages
from bb_robot.gz.wire import DiscoveryType


@pytest.mark.parametrize(
    ("partition", "namespace", "topic", "expected"),
    [
        ("host:user", "", "/model/arm/cmd", "@/host:user@/model/arm/cmd"),
        ("/p", "", "/a/", "@/p@/a"),
        ("p/", "ns", "a", "@/p@/ns/a"),
        ("p", "/ns/", "/abs", "@/p@/abs"),
        ("", "", "/clock", "@@/clock"),
    ],
)
def test_fully_qualified_names_as_gz_transport_forms_them(
    partition: str, namespace: str, topic: str, expected: str
) -> None:
    assert wire.fully_qualified(partition, topic, namespace) == expected


@pytest.mark.parametrize("topic", ["", "/", "a b", "a//b", "a@b", "a~b", "a:=b"])
def test_invalid_topics_are_refused(topic: str) -> None:
    with pytest.raises(ValueError):
        wire.fully_qualified("p", topic)


def test_split_fully_qualified() -> None:
    assert wire.split_fully_qualified("@/host:user@/a/b") == ("/host:user", "/a/b")
    assert wire.split_fully_qualified("@@/clock") == ("", "/clock")
    assert wire.split_fully_qualified("/a/b") is None
    assert wire.split_fully_qualified("@/p@") is None
    assert wire.bare_partition("/host:user") == "host:user"


def test_default_partition(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GZ_PARTITION", "sim")
    assert wire.default_partition() == "sim"
    monkeypatch.delenv("GZ_PARTITION")
    monkeypatch.setenv("USER", "alice")
    host = wire.default_partition().split(":")[0]
    assert wire.default_partition() == f"{host}:alice" and host


def test_datagram_framing_is_a_host_order_length_then_the_message() -> None:
    message = wire.Discovery(version=10, process_uuid="p", type=int(DiscoveryType.HEARTBEAT))
    data = wire.encode_datagram(message)
    (length,) = struct.unpack("=H", data[:2])
    assert length == len(data) - 2
    decoded = wire.decode_datagram(data)
    assert decoded is not None and decoded.process_uuid == "p" and decoded.type == DiscoveryType.HEARTBEAT
    # ign-transport < 8 counted the prefix too: such datagrams are ignored, like the C++ side does.
    assert wire.decode_datagram(struct.pack("=H", length + 2) + data[2:]) is None
    assert wire.decode_datagram(b"\x05") is None
    assert wire.decode_datagram(struct.pack("=H", 3) + b"\xff\xff\xff") is None


def test_our_discovery_message_is_gz_msgs_discovery_on_the_wire(messages: GzMessages) -> None:
    """Field by field against gz.msgs10's own Discovery, both ways."""
    theirs_class = messages.message_class("gz.msgs.Discovery")
    ours = wire.Discovery(version=10, process_uuid="proc", type=int(DiscoveryType.NEW_CONNECTION))
    ours.flags.relay = True
    ours.pub.topic = "@/p@/t"
    ours.pub.address = "tcp://127.0.0.1:5555"
    ours.pub.process_uuid = "sub-proc"
    ours.pub.node_uuid = "node"
    ours.pub.scope = int(wire.Scope.HOST)
    ours.pub.msg_pub.ctrl = "pub-proc"
    ours.pub.msg_pub.msg_type = "gz.msgs.Model"
    ours.pub.msg_pub.msgs_per_sec = wire.UNTHROTTLED
    theirs = theirs_class.FromString(ours.SerializeToString())
    assert theirs.type == theirs_class.NEW_CONNECTION
    assert theirs.flags.relay and not theirs.flags.no_relay
    assert (theirs.pub.topic, theirs.pub.address, theirs.pub.process_uuid, theirs.pub.node_uuid) == (
        "@/p@/t",
        "tcp://127.0.0.1:5555",
        "sub-proc",
        "node",
    )
    assert theirs.pub.scope == theirs_class.Publisher.HOST
    assert (theirs.pub.msg_pub.ctrl, theirs.pub.msg_pub.msg_type) == ("pub-proc", "gz.msgs.Model")
    assert theirs.pub.msg_pub.msgs_per_sec == wire.UNTHROTTLED
    sub = theirs_class(version=10, process_uuid="x", type=theirs_class.SUBSCRIBE)
    sub.sub.topic = "@/p@/t"
    sub.header.stamp.sec = 5  # a field we leave out: kept as unknown, parsing still works
    back = wire.Discovery.FromString(sub.SerializeToString())
    assert (
        back.type == DiscoveryType.SUBSCRIBE
        and back.sub.topic == "@/p@/t"
        and back.WhichOneof("disc_contents") == "sub"
    )
    for kind in DiscoveryType:
        assert theirs_class.Type.Name(int(kind)) == kind.name

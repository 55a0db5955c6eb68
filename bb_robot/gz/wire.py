"""The gz-transport wire format: discovery datagrams, topic names and partitions.

Facts of the protocol that gz-transport 13 (Gazebo Harmonic) and ign-transport 11 share:

- discovery: UDP datagrams to the multicast group 239.255.0.7, port 10317 for messages (10318 for
  services, unused here); each datagram is a host-order ``uint16`` byte count followed by a
  ``Discovery`` protobuf message of wire ``version`` 10 (110 when topic statistics are enabled);
- topics on the wire are fully qualified: ``@<partition>@<topic>``, where the partition gets a
  leading ``/`` (``@/host:user@/model/arm/cmd``); the default partition is ``<hostname>:<username>``;
- data: ZeroMQ PUB/SUB, each message four frames (fully qualified topic, the sender's PUB address,
  the serialized payload, the payload's type name).

The ``Discovery`` message is defined here from its field numbers (gz.msgs.Discovery and
ignition.msgs.Discovery have the same ones), so discovery needs no gz.msgs10 install; the optional
``header`` field (1) is left out and kept as an unknown field if a peer ever sends one.
"""

from __future__ import annotations

import getpass
import os
import socket
import struct
from enum import IntEnum
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

from bb_robot.errors import BbRobotError

WIRE_VERSION = 10
# Peers with topic statistics enabled add 100 to the version (and a fifth data frame).
STATISTICS_VERSION_OFFSET = 100
MULTICAST_GROUP = "239.255.0.7"
MSG_DISCOVERY_PORT = 10317
SRV_DISCOVERY_PORT = 10318
# A discovery datagram: uint16 length (host order) + payload; receive buffers of this size.
MAX_DATAGRAM = 65536
LENGTH = struct.Struct("=H")
# The type name of a subscriber that accepts any type (gz-transport's kGenericMessageType).
GENERIC_MESSAGE_TYPE = "google.protobuf.Message"
# ADVERTISE's MessagePublisher.ctrl holds this (the C++ side writes the same placeholder).
UNUSED_CTRL = "unused"
# msgs_per_sec of an unthrottled publisher (uint64 max).
UNTHROTTLED = (1 << 64) - 1
MAX_NAME_LENGTH = 65535


class WireError(BbRobotError, ValueError):
    """A name or message gz-transport's wire cannot carry (the message names the topic)."""


class DiscoveryType(IntEnum):
    UNINITIALIZED = 0
    ADVERTISE = 1
    SUBSCRIBE = 2
    UNADVERTISE = 3
    HEARTBEAT = 4
    BYE = 5
    NEW_CONNECTION = 6
    END_CONNECTION = 7
    SUBSCRIBERS_REQ = 8  # gz-transport 13+
    SUBSCRIBERS_REP = 9  # gz-transport 13+


class Scope(IntEnum):
    PROCESS = 0
    HOST = 1
    ALL = 2


_T = descriptor_pb2.FieldDescriptorProto


def _field(
    message: descriptor_pb2.DescriptorProto, name: str, number: int, kind: int, type_name: str = "", oneof: int = -1
) -> None:
    field = message.field.add(name=name, number=number, type=kind, label=_T.LABEL_OPTIONAL)
    if type_name:
        field.type_name = type_name
    if oneof >= 0:
        field.oneof_index = oneof


def _discovery_file() -> descriptor_pb2.FileDescriptorProto:
    prefix = ".bb_robot.gz.wire.Discovery"
    file = descriptor_pb2.FileDescriptorProto(name="bb_robot/gz/wire/discovery.proto", package="bb_robot.gz.wire")
    file.syntax = "proto3"
    disc = file.message_type.add(name="Discovery")
    disc.oneof_decl.add(name="disc_contents")
    kind = disc.enum_type.add(name="Type")
    for value in DiscoveryType:
        kind.value.add(name=value.name, number=value.value)
    flags = disc.nested_type.add(name="Flags")
    _field(flags, "relay", 1, _T.TYPE_BOOL)
    _field(flags, "no_relay", 2, _T.TYPE_BOOL)
    sub = disc.nested_type.add(name="Subscriber")
    _field(sub, "topic", 1, _T.TYPE_STRING)
    pub = disc.nested_type.add(name="Publisher")
    pub.oneof_decl.add(name="pub_type")
    scope = pub.enum_type.add(name="Scope")
    for level in Scope:
        scope.value.add(name=level.name, number=level.value)
    msg_pub = pub.nested_type.add(name="MessagePublisher")
    _field(msg_pub, "ctrl", 1, _T.TYPE_STRING)
    _field(msg_pub, "msg_type", 2, _T.TYPE_STRING)
    _field(msg_pub, "throttled", 3, _T.TYPE_BOOL)
    _field(msg_pub, "msgs_per_sec", 4, _T.TYPE_UINT64)
    srv_pub = pub.nested_type.add(name="ServicePublisher")
    _field(srv_pub, "socket_id", 1, _T.TYPE_STRING)
    _field(srv_pub, "request_type", 2, _T.TYPE_STRING)
    _field(srv_pub, "response_type", 3, _T.TYPE_STRING)
    _field(pub, "topic", 1, _T.TYPE_STRING)
    _field(pub, "address", 2, _T.TYPE_STRING)
    _field(pub, "process_uuid", 3, _T.TYPE_STRING)
    _field(pub, "node_uuid", 4, _T.TYPE_STRING)
    _field(pub, "scope", 5, _T.TYPE_ENUM, f"{prefix}.Publisher.Scope")
    _field(pub, "msg_pub", 6, _T.TYPE_MESSAGE, f"{prefix}.Publisher.MessagePublisher", oneof=0)
    _field(pub, "srv_pub", 7, _T.TYPE_MESSAGE, f"{prefix}.Publisher.ServicePublisher", oneof=0)
    _field(disc, "version", 2, _T.TYPE_UINT32)
    _field(disc, "process_uuid", 3, _T.TYPE_STRING)
    _field(disc, "type", 4, _T.TYPE_ENUM, f"{prefix}.Type")
    _field(disc, "flags", 5, _T.TYPE_MESSAGE, f"{prefix}.Flags")
    _field(disc, "sub", 6, _T.TYPE_MESSAGE, f"{prefix}.Subscriber", oneof=0)
    _field(disc, "pub", 7, _T.TYPE_MESSAGE, f"{prefix}.Publisher", oneof=0)
    return file


_pool = descriptor_pool.DescriptorPool()
_pool.Add(_discovery_file())
#: The discovery message class (wire-compatible with gz.msgs.Discovery / ignition.msgs.Discovery).
Discovery: Any = message_factory.GetMessageClass(_pool.FindMessageTypeByName("bb_robot.gz.wire.Discovery"))


# ---------------------------------------------------------------------------------- datagrams


def encode_datagram(message: Message) -> bytes:
    """A discovery datagram: host-order uint16 payload length, then the serialized message.

    Args:
        message: A discovery message.

    Returns:
        The datagram.

    Raises:
        WireError: The message does not fit in one datagram (a ``ValueError``).
    """
    payload = message.SerializeToString()
    if len(payload) + LENGTH.size > MAX_DATAGRAM - 1:
        raise WireError(f"discovery message of {len(payload)} bytes is too large for one datagram")
    return LENGTH.pack(len(payload)) + payload


def decode_datagram(data: bytes) -> Any | None:
    """The ``Discovery`` message in ``data``, or ``None`` if the framing or the payload is invalid.

    Like the C++ side, a datagram whose length prefix is not exactly the rest of it (the framing of
    ign-transport < 8) is ignored.
    """
    if len(data) < LENGTH.size:
        return None
    (length,) = LENGTH.unpack_from(data)
    if length + LENGTH.size != len(data):
        return None
    message = Discovery()
    try:
        message.ParseFromString(data[LENGTH.size :])
    except DecodeError:
        return None
    return message


# -------------------------------------------------------------------------------------- topics


def is_valid_name(name: str) -> bool:
    """gz-transport's rule for namespaces and partitions (an empty one is valid)."""
    if not name:
        return True
    if len(name) > MAX_NAME_LENGTH or name == "/":
        return False
    return not any(bad in name for bad in ("~", " ", "//", "@", ":="))


def is_valid_topic(topic: str) -> bool:
    return bool(topic) and is_valid_name(topic)


def default_partition() -> str:
    """``GZ_PARTITION`` if set (even empty), else ``<hostname>:<username>`` like gz-transport."""
    configured = os.environ.get("GZ_PARTITION")
    if configured is not None:
        return configured
    return f"{socket.gethostname()}:{username()}"


def username() -> str:
    """``$USER``, else the account name (gz-transport's order)."""
    user = os.environ.get("USER")
    if user:
        return user
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry (some containers)
        return f"uid{os.getuid()}"


def fully_qualified(partition: str, topic: str, namespace: str = "") -> str:
    """``@/<partition>@<topic>`` as gz-transport forms it.

    A relative ``topic`` goes under ``namespace``; an absolute one (leading ``/``) does not.

    Args:
        partition: The partition (``GZ_PARTITION`` form, or with its leading ``/``).
        topic: The topic.
        namespace: The node's namespace, for a relative topic.

    Returns:
        The fully qualified name.

    Raises:
        WireError: A name is not valid, or the result is too long (a ``ValueError``).
    """
    if not is_valid_name(partition) or not is_valid_name(namespace) or not is_valid_topic(topic):
        raise WireError(f"invalid gz-transport name: partition {partition!r}, namespace {namespace!r}, topic {topic!r}")
    if partition and not partition.startswith("/"):
        partition = "/" + partition
    if partition.endswith("/"):
        partition = partition[:-1]
    if not namespace.endswith("/"):
        namespace += "/"
    if not namespace.startswith("/"):
        namespace = "/" + namespace
    if topic.endswith("/"):
        topic = topic[:-1]
    name = topic if topic.startswith("/") else namespace + topic
    full = f"@{partition}@{name}"
    if len(full) > MAX_NAME_LENGTH:
        raise WireError(f"topic name too long: {full[:80]}...")
    return full


def split_fully_qualified(full: str) -> tuple[str, str] | None:
    """``(partition, topic)`` of a fully qualified name (the partition with its leading ``/``), or ``None``."""
    first, last = full.find("@"), full.rfind("@")
    if first != 0 or first == last or last == len(full) - 1:
        return None
    partition, topic = full[first + 1 : last], full[last + 1 :]
    if not is_valid_name(partition) or not is_valid_topic(topic):
        return None
    return partition, topic


def bare_partition(partition: str) -> str:
    """A partition as users write it (``GZ_PARTITION``): without the leading ``/`` of the wire form."""
    return partition[1:] if partition.startswith("/") else partition

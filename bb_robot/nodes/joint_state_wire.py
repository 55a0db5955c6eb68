"""``sensor_msgs/JointState`` as bytes, for the bus bridge's 1200 commands and 1200 feedbacks a second.

rclpy turns every message taken into Python objects (the message, its header, its stamp, its
lists) and every message published back into C structures: about 20 µs each way on a quiet host,
several times that on a loaded one, for one number. The bridge needs one position from each
command and writes one position and velocity into each feedback, so it reads and writes the
serialised bytes instead (``take_message(..., raw=True)``, ``Publisher.publish(bytes)``):

- :func:`positions_of` reads the ``position`` field of a JointState in CDR (little-endian, the
  encoding ROS 2's middlewares use: a 4-byte encapsulation header, then the fields, each aligned
  to its size from the start of the data); ``None`` for anything else, which the caller then
  deserialises with rclpy;
- :class:`FeedbackWire` lays out a one-joint JointState once and writes the stamp, position and
  velocity into it at their offsets.

The node checks both against rclpy's own (de)serialiser when it starts (:func:`matches_rclpy`) and
uses message objects where they disagree; ``test/nodes/test_joint_state_wire.py`` compares them
over many messages.
"""

from __future__ import annotations

import struct

#: CDR's encapsulation: little-endian plain CDR (XCDR1), no options.
CDR_LE = b"\x00\x01\x00\x00"
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")
_F64 = struct.Struct("<d")


def _align(offset: int, size: int) -> int:
    return (offset + size - 1) // size * size


def positions_of(data: bytes) -> list[float] | None:
    """The ``position`` field of a serialised JointState, or ``None`` when ``data`` is not little-endian
    CDR or ends early (the caller deserialises it with rclpy then)."""
    if data[:2] != CDR_LE[:2]:
        return None
    body = memoryview(data)[4:]
    try:
        at = 8  # header.stamp: sec, nanosec
        at += 4 + _U32.unpack_from(body, at)[0]  # header.frame_id
        at = _align(at, 4)
        names = _U32.unpack_from(body, at)[0]
        at += 4
        for _ in range(names):
            at = _align(at, 4)
            at += 4 + _U32.unpack_from(body, at)[0]
        at = _align(at, 4)
        count = _U32.unpack_from(body, at)[0]
        at += 4
        if count:
            at = _align(at, 8)
        if at + 8 * count > len(body):
            return None
        return list(struct.unpack_from(f"<{count}d", body, at))
    except struct.error:
        return None


class FeedbackWire:
    """A one-joint JointState's bytes (``name``, one position, one velocity, no effort), rewritten per message.

    Args:
        name: the joint (the actuator's) name the message carries.
    """

    def __init__(self, name: str) -> None:
        body = bytearray(_STAMP.pack(0, 0))
        body += _U32.pack(1) + b"\x00"  # frame_id ""
        body += bytes(_align(len(body), 4) - len(body)) + _U32.pack(1)  # one name
        encoded = name.encode() + b"\x00"
        body += bytes(_align(len(body), 4) - len(body)) + _U32.pack(len(encoded)) + encoded
        offsets = []
        for _ in ("position", "velocity"):
            body += bytes(_align(len(body), 4) - len(body)) + _U32.pack(1)
            body += bytes(_align(len(body), 8) - len(body))
            offsets.append(len(CDR_LE) + len(body))
            body += _F64.pack(0.0)
        body += bytes(_align(len(body), 4) - len(body)) + _U32.pack(0)  # no effort
        self.name = name
        self._buffer = bytearray(CDR_LE + body)
        self._position, self._velocity = offsets

    def write(self, sec: int, nanosec: int, position: float, velocity: float) -> bytes:
        """The message's bytes with this stamp, position and velocity."""
        buffer = self._buffer
        _STAMP.pack_into(buffer, len(CDR_LE), sec, nanosec)
        _F64.pack_into(buffer, self._position, position)
        _F64.pack_into(buffer, self._velocity, velocity)
        return bytes(buffer)


class FeedbackMessage:
    """What :class:`FeedbackWire` does, with a message object: where the bytes do not match rclpy's.

    Args:
        name: the joint (the actuator's) name the message carries.
    """

    def __init__(self, name: str) -> None:
        from sensor_msgs.msg import JointState

        self.name = name
        self._message = JointState(name=[name])

    def write(self, sec: int, nanosec: int, position: float, velocity: float) -> object:
        """The message with this stamp, position and velocity."""
        message = self._message
        message.header.stamp.sec, message.header.stamp.nanosec = sec, nanosec
        message.position, message.velocity = [position], [velocity]
        return message


def matches_rclpy(name: str) -> bool:
    """Whether this rclpy's serialiser agrees with :func:`positions_of` and :class:`FeedbackWire` on a
    sample of ``name`` (the node uses message objects otherwise)."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    sample = JointState(name=[name], position=[0.125], velocity=[-2.5])
    sample.header.stamp.sec, sample.header.stamp.nanosec = 1_700_000_000, 123_456_789
    if positions_of(serialize_message(sample)) != [0.125]:
        return False
    back = deserialize_message(FeedbackWire(name).write(1_700_000_000, 123_456_789, 0.125, -2.5), JointState)
    return bool(
        back.name == [name] and list(back.position) == [0.125] and list(back.velocity) == [-2.5]
        and not back.effort and back.header.frame_id == ""
        and (back.header.stamp.sec, back.header.stamp.nanosec) == (1_700_000_000, 123_456_789)
    )  # fmt: skip


__all__ = ["CDR_LE", "FeedbackMessage", "FeedbackWire", "matches_rclpy", "positions_of"]

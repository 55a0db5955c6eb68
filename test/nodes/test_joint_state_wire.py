"""The bus bridge's JointState bytes (``bb_robot.nodes.joint_state_wire``) against rclpy's own serialiser.

The bridge reads each command's positions from its bytes and writes each feedback's bytes itself;
here both are compared with ``rclpy.serialization`` over generated messages of every shape (names,
frame ids and sequences of several lengths, so every alignment case comes up), on this
distribution's rclpy. The bus node tests (test_bus_node.py) carry them through DDS end to end.
"""

from __future__ import annotations

import math
import struct

from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from bb_robot.nodes.joint_state_wire import FeedbackWire, matches_rclpy, positions_of

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=0, max_size=13)
NUMBERS = st.floats(allow_nan=False, width=64)


@settings(max_examples=300, deadline=None)
@given(
    names=st.lists(NAMES, max_size=4),
    frame=NAMES,
    positions=st.lists(NUMBERS, max_size=4),
    velocities=st.lists(NUMBERS, max_size=3),
    efforts=st.lists(NUMBERS, max_size=3),
    stamp=st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(0, 999_999_999)),
)
def test_positions_are_read_from_any_joint_state_as_rclpy_serialises_it(
    names: list[str],
    frame: str,
    positions: list[float],
    velocities: list[float],
    efforts: list[float],
    stamp: tuple[int, int],
) -> None:
    message = JointState(name=names, position=positions, velocity=velocities, effort=efforts)
    message.header.frame_id = frame
    message.header.stamp.sec, message.header.stamp.nanosec = stamp
    assert positions_of(serialize_message(message)) == positions


@settings(max_examples=300, deadline=None)
@given(name=NAMES.filter(bool), position=NUMBERS, velocity=NUMBERS, stamp=st.tuples(st.integers(0, 2**31 - 1),
       st.integers(0, 999_999_999)))  # fmt: skip
def test_feedback_bytes_read_back_as_the_message_they_stand_for(
    name: str, position: float, velocity: float, stamp: tuple[int, int]
) -> None:
    wire = FeedbackWire(name)
    wire.write(1, 2, math.pi, -math.pi)  # the buffer is reused: an earlier message leaves nothing behind
    back = deserialize_message(wire.write(*stamp, position, velocity), JointState)
    assert back.name == [name] and list(back.position) == [position] and list(back.velocity) == [velocity]
    assert not back.effort and back.header.frame_id == ""
    assert (back.header.stamp.sec, back.header.stamp.nanosec) == stamp


def test_the_node_checks_its_bytes_against_rclpy_and_other_encodings_are_left_to_rclpy() -> None:
    assert matches_rclpy("shoulder_pan")
    big_endian = b"\x00\x00\x00\x00" + serialize_message(JointState(position=[1.0]))[4:]
    assert positions_of(big_endian) is None
    data = serialize_message(JointState(position=[1.0, 2.0]))
    assert positions_of(data[: data.index(struct.pack("<d", 2.0)) + 4]) is None  # cut short in its positions

"""TFMessage bytes written at located offsets read back, through rclpy, as the message they stand for."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from bb_robot.description.tf_wire import TfWire, Transform, WireLayoutError

serialization = pytest.importorskip("rclpy.serialization", reason="rclpy is not installed")
tf2_msgs = pytest.importorskip("tf2_msgs.msg", reason="tf2_msgs is not built: run scripts/setup")
from geometry_msgs.msg import TransformStamped  # noqa: E402


def serialize(transforms: Sequence[Transform]) -> bytes:
    message = tf2_msgs.TFMessage()
    for parent, child, sec, nanosec, v in transforms:
        t = TransformStamped()
        t.header.frame_id, t.child_frame_id = parent, child
        t.header.stamp.sec, t.header.stamp.nanosec = sec, nanosec
        tr, rot = t.transform.translation, t.transform.rotation
        tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w = (float(x) for x in v)
        message.transforms.append(t)
    return bytes(serialization.serialize_message(message))


def deserialize(data: bytes) -> list[Transform]:
    message = serialization.deserialize_message(data, tf2_msgs.TFMessage)
    result: list[Transform] = []
    for t in message.transforms:
        tr, rot = t.transform.translation, t.transform.rotation
        values = (tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w)
        result.append((t.header.frame_id, t.child_frame_id, t.header.stamp.sec, t.header.stamp.nanosec, values))
    return result


@pytest.mark.parametrize("count", [0, 1, 2, 7, 300])
def test_encoded_bytes_deserialise_to_the_values(count: int) -> None:
    # frame names of every length mod 8, so every padding case occurs
    frames = [("p" * (i % 9), f"child_{'x' * (i % 5)}{i}") for i in range(count)]
    wire = TfWire(frames, serialize, deserialize)
    rng = np.random.default_rng(count)
    for sec, nanosec in ((0, 0), (1_790_000_000, 999_999_999), (-5, 1)):
        rows = rng.normal(size=(count, 7))
        decoded = deserialize(wire.encode(sec, nanosec, rows))
        assert [(p, c) for p, c, *_ in decoded] == frames
        assert all(s == sec and n == nanosec for _, _, s, n, _ in decoded)
        assert np.array_equal(np.array([v for *_, v in decoded]).reshape(count, 7), rows)


def test_unicode_frame_names() -> None:
    frames = [("böse/wélt", "ünïcode_日本")]
    wire = TfWire(frames, serialize, deserialize)
    decoded = deserialize(wire.encode(3, 4, np.arange(7.0).reshape(1, 7)))
    assert decoded[0][:4] == ("böse/wélt", "ünïcode_日本", 3, 4)


def test_a_serialiser_that_does_not_carry_the_numbers_is_refused() -> None:
    def lossy(transforms: Sequence[Transform]) -> bytes:
        return serialize([(p, c, s, n, [0.0] * 7) for p, c, s, n, _ in transforms])

    with pytest.raises(WireLayoutError, match="value placeholder 0 found 0 times"):
        TfWire([("a", "b")], lossy, deserialize)


def test_a_layout_that_does_not_read_back_is_refused() -> None:
    def wrong(data: bytes) -> list[Transform]:
        return [(p, c, s, n, [0.0] * 7) for p, c, s, n, _ in deserialize(data)]

    with pytest.raises(WireLayoutError, match="deserialise to other values"):
        TfWire([("a", "b")], serialize, wrong)


def test_rows_as_tuples_or_as_an_array_give_the_same_bytes() -> None:
    frames = [(f"a{i}", f"b{i}") for i in range(5)]
    wire = TfWire(frames, serialize, deserialize)
    rows = np.random.default_rng(0).normal(size=(5, 7))
    as_array = wire.encode(1, 2, rows)
    as_tuples = wire.encode(1, 2, [tuple(float(v) for v in row) for row in rows])
    assert as_array == as_tuples
    decoded = deserialize(as_tuples)
    assert np.array_equal(np.array([v for *_, v in decoded]), rows)

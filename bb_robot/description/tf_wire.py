"""``tf2_msgs/TFMessage`` bytes written straight into a buffer: the /tf hot path without message objects.

Building a ``TFMessage`` from Python objects and having rclpy convert it costs far more than
the kinematics (on the development machine: about 50 µs to publish a 7-transform message
object, 5 µs to publish its bytes, 18 µs to set its 49 numbers).  :class:`TfWire` serialises,
once, a message holding the frames to publish and distinctive placeholder numbers, finds where
each number and each stamp landed in the bytes, and from then on writes new values at those
offsets through numpy views and publishes the bytes (``Publisher.publish(bytes)``).

Nothing here assumes a wire format: the offsets come from the middleware's own serialiser,
and the constructor writes other values and checks that the middleware's deserialiser reads
them back.  Where the placeholders cannot be found exactly once, or the check fails, it raises
:class:`WireLayoutError` and the caller publishes message objects instead.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from bb_robot.errors import BbRobotError

#: One transform: ``(parent frame, child frame, sec, nanosec, (tx, ty, tz, qx, qy, qz, qw))``.
Transform = tuple[str, str, int, int, Sequence[float]]
Serializer = Callable[[Sequence[Transform]], bytes]
Deserializer = Callable[[bytes], Sequence[Transform]]

_VALUES = 7
#: High 16 bits of the stamp placeholders (sec stays a positive int32, nanosec below 10**9).
_SEC_TAG = 0x5EC0
_NSEC_TAG = 0x3B00


_ROW = struct.Struct("<7d")


class WireLayoutError(BbRobotError):
    """The serialised layout could not be located or did not check out (the node then builds
    ``TFMessage`` objects instead)."""


def _sentinel(k: int, family: int) -> float:
    """Value placeholder number ``k`` of a family: ``2**(900 + family) · (1 + (k + 1) / 2**52)``,
    so its 12 sign-and-exponent bits tag the family and its low bits carry ``k + 1``."""
    return math.ldexp(1.0 + (k + 1) / 2**52, 900 + family)


def _candidates(data: bytes, width: int, tag: int, shift: int, count: int) -> list[set[int]]:
    """For each placeholder number ``0..count-1`` of one kind, the byte offsets where it occurs in ``data``.

    A placeholder is a ``width``-byte little-endian integer whose bits above ``shift`` equal
    ``tag`` and whose low bits carry its number, at any alignment.
    """
    dtype = {8: "<u8", 4: "<u4"}[width]
    low = (1 << shift) - 1
    found: list[set[int]] = [set() for _ in range(count)]
    for start in range(width):
        words = np.frombuffer(data, dtype=dtype, offset=start, count=(len(data) - start) // width)
        for hit in np.flatnonzero((words >> np.uint64(shift) if width == 8 else words >> np.uint32(shift)) == tag):
            number = (int(words[hit]) & low) - (1 if width == 8 else 0)
            if 0 <= number < count:
                found[number].add(start + int(hit) * width)
    return found


def _locate(first: list[set[int]], second: list[set[int]], what: str) -> npt.NDArray[np.intp]:
    """The one offset per placeholder that both serialisations agree on.

    The serialiser leaves padding bytes uninitialised, so a placeholder's bit pattern may turn up
    in padding by chance; it does not turn up at the same offset in two serialisations whose
    placeholders carry different tags.
    """
    offsets = np.empty(len(first), dtype=np.intp)
    for number, (a, b) in enumerate(zip(first, second, strict=True)):
        both = a & b
        if len(both) != 1:
            raise WireLayoutError(f"{what} placeholder {number} found {len(both)} times")
        offsets[number] = both.pop()
    return offsets


def _placeholders(
    frames: Sequence[tuple[str, str]], serialize: Serializer, family: int
) -> tuple[bytes, list[set[int]], list[set[int]], list[set[int]]]:
    count = len(frames)
    sample = [
        (
            parent,
            child,
            ((_SEC_TAG + family) << 16) + i,
            ((_NSEC_TAG + family) << 16) + i,
            [_sentinel(i * _VALUES + j, family) for j in range(_VALUES)],
        )
        for i, (parent, child) in enumerate(frames)
    ]
    data = serialize(sample)
    return (
        data,
        _candidates(data, 8, 1023 + 900 + family, 52, count * _VALUES),
        _candidates(data, 4, _SEC_TAG + family, 16, count),
        _candidates(data, 4, _NSEC_TAG + family, 16, count),
    )


class TfWire:
    """Writes ``TFMessage`` bytes for a fixed list of ``(parent, child)`` frame pairs.

    ``serialize`` turns a list of :data:`Transform` into the middleware's bytes and
    ``deserialize`` back (the node wraps ``rclpy.serialization`` and ``TFMessage``).  The check
    is by value, not byte for byte: the serialiser leaves alignment padding uninitialised.
    """

    def __init__(self, frames: Sequence[tuple[str, str]], serialize: Serializer, deserialize: Deserializer) -> None:
        self.frames = tuple(frames)
        count = len(self.frames)
        if count > 0xFFFF:
            raise WireLayoutError("too many transforms for distinct stamp placeholders")
        template, values, secs, nsecs = _placeholders(self.frames, serialize, 0)
        _, values2, secs2, nsecs2 = _placeholders(self.frames, serialize, 1)
        value_offsets = _locate(values, values2, "value").reshape(count, _VALUES)
        sec_offsets = _locate(secs, secs2, "sec")
        nsec_offsets = _locate(nsecs, nsecs2, "nanosec")
        base8 = int(value_offsets.flat[0]) % 8 if count else 0
        base4 = int(sec_offsets[0]) % 4 if count else 0
        if (value_offsets % 8 != base8).any() or (sec_offsets % 4 != base4).any() or (nsec_offsets % 4 != base4).any():
            raise WireLayoutError("numbers are not aligned alike")
        self._buffer = bytearray(template)
        size = len(self._buffer)
        self._f64 = np.frombuffer(self._buffer, dtype="<f8", offset=base8, count=(size - base8) // 8)
        self._u32 = np.frombuffer(self._buffer, dtype="<u4", offset=base4, count=(size - base4) // 4)
        self._value_index = (value_offsets - base8) // 8
        # Where each transform's 7 numbers are contiguous (they are in CDR), rows given as
        # tuples go in with one struct.pack_into each.
        self._row_offsets: list[int] | None = None
        if count and (value_offsets == value_offsets[:, :1] + 8 * np.arange(_VALUES)).all():
            self._row_offsets = [int(o) for o in value_offsets[:, 0]]
        self._sec_index = (sec_offsets - base4) // 4
        self._nsec_index = (nsec_offsets - base4) // 4
        self._check(deserialize)

    def _check(self, deserialize: Deserializer) -> None:
        rng = np.random.default_rng(7)
        rows = rng.uniform(-2.0, 2.0, (len(self.frames), _VALUES))
        sec, nanosec = 1_700_000_123, 456_789_012
        expected = [
            (p, c, sec, nanosec, [float(v) for v in row]) for (p, c), row in zip(self.frames, rows, strict=True)
        ]
        try:
            decoded = deserialize(self.encode(sec, nanosec, rows))
        except Exception as error:  # noqa: BLE001 - any failure means: do not use this layout
            raise WireLayoutError(f"the written bytes do not deserialise: {error}") from error
        actual = [(p, c, s, n, [float(v) for v in values]) for p, c, s, n, values in decoded]
        if actual != expected:
            raise WireLayoutError("the written bytes deserialise to other values")

    def encode(self, sec: int, nanosec: int, rows: npt.NDArray[np.float64] | Sequence[Sequence[float]]) -> bytes:
        """The message bytes with every transform stamped ``(sec, nanosec)`` and ``rows[i]`` as
        transform ``i``'s ``(tx, ty, tz, qx, qy, qz, qw)`` (an array, or a list of tuples)."""
        if isinstance(rows, np.ndarray) or self._row_offsets is None:
            self._f64[self._value_index] = rows
        else:
            pack, buffer = _ROW.pack_into, self._buffer
            for offset, row in zip(self._row_offsets, rows, strict=True):
                pack(buffer, offset, *row)
        self._u32[self._sec_index] = sec & 0xFFFFFFFF
        self._u32[self._nsec_index] = nanosec
        return bytes(self._buffer)

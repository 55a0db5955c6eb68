"""What both servo protocols share: frames, the codec interface and the packet error.

A *frame* is one packet as it travels on the wire, decoded: the servo ID, the code (the
instruction of an instruction packet, the error byte of a status packet) and the parameters.
:class:`Codec` is what the transport and the emulator use of a protocol; Feetech's
(:class:`bb_robot.buses.feetech.FeetechCodec`) and Dynamixel's
(:class:`bb_robot.buses.dynamixel.DynamixelCodec`) implement it.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bb_robot.errors import BbRobotError


class PacketError(BbRobotError):
    """A packet that cannot be built or decoded (a value out of its field's range, a bad frame)."""


class Instruction(enum.IntEnum):
    """Instruction codes; both protocols use the same numbers for these."""

    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83
    #: Dynamixel Protocol 2.0 only: one status packet answers for every servo.
    FAST_SYNC_READ = 0x8A


class Scan(enum.Enum):
    """What :meth:`Codec.scan` found at the front of a buffer."""

    FRAME = "frame"  #: a whole, valid frame
    CORRUPT = "corrupt"  #: a header whose frame fails its checksum or has an impossible length
    INCOMPLETE = "incomplete"  #: a header whose frame has not arrived in full
    NOTHING = "nothing"  #: no header in the buffer


@dataclass(frozen=True)
class Frame:
    """One decoded packet.

    Attributes:
        servo_id: the ID field (the broadcast ID for sync instructions).
        code: the instruction of an instruction packet; the error byte of a status packet.
        params: the parameters, after byte stuffing is removed.
    """

    servo_id: int
    code: int
    params: bytes


@dataclass(frozen=True)
class ScanResult:
    """The outcome of :meth:`Codec.scan`.

    Attributes:
        kind: what was found.
        frame: the frame when ``kind`` is :attr:`Scan.FRAME`.
        start: where the frame (or the bad header) starts in the buffer.
        end: where scanning can go on: after the frame, one byte after a corrupt header, the
            start of an incomplete frame, or the bytes that cannot start a header.
    """

    kind: Scan
    frame: Frame | None
    start: int
    end: int


def check_byte(value: int, what: str) -> int:
    """Return ``value`` when it fits an unsigned byte.

    Raises:
        PacketError: naming ``what`` and the value.
    """
    if not 0 <= value <= 0xFF:
        raise PacketError(f"{what} {value} does not fit one byte (0..255)")
    return value


class Codec(abc.ABC):
    """One protocol's packets: building, scanning, and the sizes a transaction expects.

    Attributes:
        name: ``"feetech"`` or ``"dynamixel"``.
        broadcast_id: the ID every servo listens to (0xFE in both protocols).
        max_id: the highest ID a servo may have.
    """

    name: str
    broadcast_id: int = 0xFE
    max_id: int = 0xFD

    # ------------------------------------------------------------------ framing
    @abc.abstractmethod
    def instruction(self, servo_id: int, instruction: int, params: bytes = b"") -> bytes:
        """Return the wire bytes of an instruction packet.

        Raises:
            PacketError: an ID, instruction or length that does not fit the packet.
        """

    @abc.abstractmethod
    def status(self, servo_id: int, error: int, params: bytes = b"") -> bytes:
        """Return the wire bytes of a status (reply) packet.

        Raises:
            PacketError: an ID, error byte or length that does not fit the packet.
        """

    @abc.abstractmethod
    def scan(self, buffer: bytes | bytearray, start: int = 0) -> ScanResult:
        """Find the first packet in ``buffer`` at or after ``start``."""

    @abc.abstractmethod
    def status_size(self, n_params: int) -> int:
        """Return the bytes of a status packet with ``n_params`` parameters (no stuffing)."""

    def status_code(self, frame: Frame) -> int | None:
        """Return the error byte of ``frame`` when it is a status packet, else ``None``."""
        return frame.code

    def decode_status(self, frame: Frame) -> tuple[int, bytes] | None:
        """Return ``(error byte, params)`` of a status frame, or ``None`` for any other frame."""
        return frame.code, frame.params

    def decode_instruction(self, frame: Frame) -> tuple[int, bytes] | None:
        """Return ``(instruction, params)`` of an instruction frame, or ``None`` for a status frame."""
        return frame.code, frame.params

    # ------------------------------------------------------------------ parameters
    @abc.abstractmethod
    def field(self, value: int) -> bytes:
        """Return an address or length field (one byte for Feetech, two for Dynamixel)."""

    @property
    @abc.abstractmethod
    def field_size(self) -> int:
        """The bytes of an address or length field."""

    def read_params(self, address: int, length: int) -> bytes:
        """Return the parameters of READ: address, length."""
        return self.field(address) + self.field(length)

    def write_params(self, address: int, data: bytes) -> bytes:
        """Return the parameters of WRITE: address, data."""
        return self.field(address) + bytes(data)

    def sync_read_params(self, address: int, length: int, ids: Sequence[int]) -> bytes:
        """Return the parameters of SYNC_READ: address, length, the IDs."""
        return self.field(address) + self.field(length) + bytes(check_byte(i, "servo ID") for i in ids)

    def sync_write_params(self, address: int, length: int, data: Mapping[int, bytes]) -> bytes:
        """Return the parameters of SYNC_WRITE: address, length, then each ID and its data.

        Raises:
            PacketError: data of a servo that is not ``length`` bytes long.
        """
        out = bytearray(self.field(address) + self.field(length))
        for servo_id, chunk in data.items():
            if len(chunk) != length:
                raise PacketError(f"sync write to servo {servo_id}: {len(chunk)} bytes of data, the block is {length}")
            out.append(check_byte(servo_id, "servo ID"))
            out += chunk
        return bytes(out)

    def split_address(self, params: bytes) -> tuple[int, int]:
        """Return ``(address, length)`` from the front of READ or SYNC_READ parameters.

        Raises:
            PacketError: parameters too short for both fields.
        """
        size = self.field_size
        if len(params) < 2 * size:
            raise PacketError(f"{self.name}: {len(params)} parameter bytes, an address and a length need {2 * size}")
        return int.from_bytes(params[:size], "little"), int.from_bytes(params[size : 2 * size], "little")

    # ------------------------------------------------------------------ status bits
    @abc.abstractmethod
    def describe_error(self, error: int) -> list[str]:
        """Return the names of the conditions a status packet's error byte reports."""

    @abc.abstractmethod
    def data_is_valid(self, error: int) -> bool:
        """Whether a status packet with this error byte carries valid data (alerts do, refusals not)."""

    def encode_value(self, value: int, size: int) -> bytes:
        """Return ``value`` as ``size`` little-endian bytes (two's complement when negative).

        Raises:
            PacketError: a value that does not fit ``size`` bytes.
        """
        lo, hi = -(1 << (8 * size - 1)), (1 << (8 * size)) - 1
        if not lo <= value <= hi:
            raise PacketError(f"{self.name}: value {value} does not fit {size} byte(s)")
        return (value % (1 << (8 * size))).to_bytes(size, "little")

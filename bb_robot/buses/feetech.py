"""Feetech protocol 0 (STS/SMS series, e.g. the SO-101's STS3215): packets and status bits.

An instruction packet is ``FF FF ID LEN INST P1 … PN CHK`` and a status packet
``FF FF ID LEN ERR P1 … PN CHK``: LEN counts the bytes after it (INST or ERR, the parameters
and CHK, so N + 2), and CHK is the complement of the low byte of the sum of ID, LEN, INST/ERR
and the parameters. Multi-byte values are little-endian (protocol 0; the SCS series' protocol 1
is big-endian and not supported). Addresses and lengths are one byte. There is no byte
stuffing: a receiver resynchronises on a failed checksum.
"""

from __future__ import annotations

from bb_robot.buses.packets import Codec, Frame, PacketError, Scan, ScanResult, check_byte

#: Status error bits of the STS series (the error byte of a status packet).
ERROR_BITS = {
    0x01: "input voltage out of range",
    0x02: "angle sensor",
    0x04: "overheating",
    0x08: "overcurrent",
    0x20: "overload",
}

HEADER = b"\xff\xff"


def checksum(body: bytes | bytearray | memoryview) -> int:
    """Return the checksum of the bytes between the header and the checksum (ID through parameters)."""
    return (~sum(body)) & 0xFF


class FeetechCodec(Codec):
    """Feetech protocol 0 (little-endian)."""

    name = "feetech"
    max_id = 0xFD

    @property
    def field_size(self) -> int:
        """Addresses and lengths are one byte."""
        return 1

    def field(self, value: int) -> bytes:
        """Return one byte.

        Raises:
            PacketError: a value above 255.
        """
        return bytes([check_byte(value, "address or length")])

    def _packet(self, servo_id: int, code: int, params: bytes) -> bytes:
        check_byte(servo_id, "servo ID")
        if servo_id == 0xFF:
            raise PacketError("servo ID 255 cannot be sent: 0xFF is the header byte")
        check_byte(code, "instruction or error")
        length = len(params) + 2
        if length > 0xFF:
            raise PacketError(f"feetech packet to servo {servo_id}: {len(params)} parameter bytes, at most 253 fit")
        body = bytes([servo_id, length, code]) + bytes(params)
        return HEADER + body + bytes([checksum(body)])

    def instruction(self, servo_id: int, instruction: int, params: bytes = b"") -> bytes:
        """Return ``FF FF ID LEN INST params CHK``.

        Raises:
            PacketError: an ID or instruction above 255, ID 255, or more than 253 parameter bytes.
        """
        return self._packet(servo_id, instruction, params)

    def status(self, servo_id: int, error: int, params: bytes = b"") -> bytes:
        """Return ``FF FF ID LEN ERR params CHK``.

        Raises:
            PacketError: as :meth:`instruction`.
        """
        return self._packet(servo_id, error, params)

    def status_size(self, n_params: int) -> int:
        """Header, ID, LEN, ERR, the parameters and CHK."""
        return 6 + n_params

    def scan(self, buffer: bytes | bytearray, start: int = 0) -> ScanResult:
        """Find the first packet at or after ``start``; see :class:`~bb_robot.buses.packets.ScanResult`."""
        size = len(buffer)
        at = start
        while True:
            head = buffer.find(HEADER, at)
            if head < 0:
                # A trailing FF may be the first half of the next header.
                keep = size - 1 if size > start and buffer[size - 1] == 0xFF else size
                return ScanResult(Scan.NOTHING, None, keep, keep)
            if head + 2 < size and buffer[head + 2] == 0xFF:  # FF FF FF…: the header starts later
                at = head + 1
                continue
            break
        if size < head + 4:
            return ScanResult(Scan.INCOMPLETE, None, head, head)
        length = buffer[head + 3]
        if length < 2:
            return ScanResult(Scan.CORRUPT, None, head, head + 1)
        end = head + 4 + length
        if size < end:
            return ScanResult(Scan.INCOMPLETE, None, head, head)
        body = buffer[head + 2 : end - 1]
        if checksum(body) != buffer[end - 1]:
            return ScanResult(Scan.CORRUPT, None, head, head + 1)
        frame = Frame(servo_id=buffer[head + 2], code=buffer[head + 4], params=bytes(buffer[head + 5 : end - 1]))
        return ScanResult(Scan.FRAME, frame, head, end)

    def describe_error(self, error: int) -> list[str]:
        """Return the names of the set error bits (unknown bits as ``bit N``)."""
        return [ERROR_BITS.get(1 << bit, f"bit {bit}") for bit in range(8) if error & (1 << bit)]

    def data_is_valid(self, error: int) -> bool:
        """Feetech's status bits report the servo's condition; the data is always the register's."""
        return True


FEETECH = FeetechCodec()

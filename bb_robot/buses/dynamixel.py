"""Dynamixel Protocol 2.0 (X series: XL330, XL430, XM430): packets, CRC-16, byte stuffing, status bits.

An instruction packet is ``FF FF FD 00 ID LEN_L LEN_H INST P1 … PN CRC_L CRC_H`` and a status
packet ``FF FF FD 00 ID LEN_L LEN_H 55 ERR P1 … PN CRC_L CRC_H``. LEN counts the bytes after it
(the instruction, the error byte of a status, the parameters as sent, and the CRC). The CRC is
CRC-16 with the polynomial 0x8005 (x¹⁶ + x¹⁵ + x² + 1), initial value 0, bits not reflected,
computed over every byte from the header to the last parameter as sent. Byte stuffing: wherever
``FF FF FD`` appears in the instruction and parameters, an ``FD`` is sent after it, so that the
header cannot appear inside a packet; LEN and the CRC count the stuffed bytes. Addresses and
lengths are two bytes, little-endian like every value.
"""

from __future__ import annotations

from bb_robot.buses.packets import Codec, Frame, PacketError, Scan, ScanResult, check_byte

HEADER = b"\xff\xff\xfd\x00"
#: The instruction code of a status packet.
STATUS = 0x55
#: Longest LEN the scanner accepts; a longer one is taken as a corrupt header.
MAX_LENGTH = 4096

#: The error numbers of a status packet's error byte (bits 0-6).
ERROR_NUMBERS = {
    1: "result fail",
    2: "instruction error",
    3: "CRC error",
    4: "data range error",
    5: "data length error",
    6: "data limit error",
    7: "access error",
}
#: Bit 7 of the error byte: the servo has a hardware error (Hardware Error Status says which).
ALERT = 0x80
#: The bits of the Hardware Error Status register (address 70).
HARDWARE_ERROR_BITS = {
    0x01: "input voltage",
    0x04: "overheating",
    0x08: "motor encoder",
    0x10: "electrical shock",
    0x20: "overload",
}


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_TABLE = _crc_table()


def crc16(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """Return the CRC-16 (poly 0x8005, MSB first, no final XOR) of ``data``, continuing from ``crc``."""
    table = _TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ byte) & 0xFF]
    return crc


def stuff(payload: bytes) -> bytes:
    """Return ``payload`` (instruction and parameters) with an ``FD`` after every ``FF FF FD``."""
    if b"\xff\xff\xfd" not in payload:
        return payload
    out = bytearray()
    for byte in payload:
        out.append(byte)
        if byte == 0xFD and len(out) >= 3 and out[-3] == 0xFF and out[-2] == 0xFF:
            out.append(0xFD)
    return bytes(out)


def unstuff(payload: bytes) -> bytes:
    """Return ``payload`` with the ``FD`` after every ``FF FF FD`` removed (the inverse of :func:`stuff`)."""
    if b"\xff\xff\xfd\xfd" not in payload:
        return payload
    out = bytearray()
    skip = False
    for index, byte in enumerate(payload):
        if skip:
            skip = False
            continue
        out.append(byte)
        if byte == 0xFD and len(out) >= 3 and out[-3] == 0xFF and out[-2] == 0xFF:
            if index + 1 < len(payload) and payload[index + 1] == 0xFD:
                skip = True
    return bytes(out)


class DynamixelCodec(Codec):
    """Dynamixel Protocol 2.0."""

    name = "dynamixel"
    max_id = 0xFC

    @property
    def field_size(self) -> int:
        """Addresses and lengths are two bytes."""
        return 2

    def field(self, value: int) -> bytes:
        """Return two little-endian bytes.

        Raises:
            PacketError: a value above 65535.
        """
        if not 0 <= value <= 0xFFFF:
            raise PacketError(f"address or length {value} does not fit two bytes (0..65535)")
        return value.to_bytes(2, "little")

    def _packet(self, servo_id: int, payload: bytes) -> bytes:
        check_byte(servo_id, "servo ID")
        if servo_id in (0xFD, 0xFF):
            raise PacketError(f"servo ID {servo_id} cannot be sent (0xFD and 0xFF are reserved)")
        body = stuff(payload)
        length = len(body) + 2
        if length > 0xFFFF:
            raise PacketError(f"dynamixel packet to servo {servo_id}: {length} bytes, LEN holds at most 65535")
        head = HEADER + bytes([servo_id]) + length.to_bytes(2, "little") + body
        return head + crc16(head).to_bytes(2, "little")

    def instruction(self, servo_id: int, instruction: int, params: bytes = b"") -> bytes:
        """Return ``FF FF FD 00 ID LEN INST params CRC``, stuffed.

        Raises:
            PacketError: an ID of 0xFD or 0xFF or above 255, an instruction above 255, a packet too long.
        """
        return self._packet(servo_id, bytes([check_byte(instruction, "instruction")]) + bytes(params))

    def status(self, servo_id: int, error: int, params: bytes = b"") -> bytes:
        """Return ``FF FF FD 00 ID LEN 55 ERR params CRC``, stuffed.

        Raises:
            PacketError: as :meth:`instruction`.
        """
        return self._packet(servo_id, bytes([STATUS, check_byte(error, "error byte")]) + bytes(params))

    def status_size(self, n_params: int) -> int:
        """Header (4), ID, LEN (2), 0x55, ERR, the parameters and the CRC (2), without stuffing."""
        return 11 + n_params

    def scan(self, buffer: bytes | bytearray, start: int = 0) -> ScanResult:
        """Find the first packet at or after ``start``; see :class:`~bb_robot.buses.packets.ScanResult`."""
        size = len(buffer)
        head = buffer.find(HEADER, start)
        if head < 0:
            # Keep a tail that may be the start of the next header.
            keep = size
            for tail in (3, 2, 1):
                if size - tail >= start and buffer[size - tail :] == HEADER[:tail]:
                    keep = size - tail
                    break
            return ScanResult(Scan.NOTHING, None, keep, keep)
        if size < head + 8:
            return ScanResult(Scan.INCOMPLETE, None, head, head)
        length = int.from_bytes(buffer[head + 5 : head + 7], "little")
        if not 3 <= length <= MAX_LENGTH or buffer[head + 4] in (0xFD, 0xFF):
            return ScanResult(Scan.CORRUPT, None, head, head + 1)
        end = head + 7 + length
        if size < end:
            return ScanResult(Scan.INCOMPLETE, None, head, head)
        if crc16(memoryview(buffer)[head : end - 2]) != int.from_bytes(buffer[end - 2 : end], "little"):
            return ScanResult(Scan.CORRUPT, None, head, head + 1)
        payload = unstuff(bytes(buffer[head + 7 : end - 2]))
        frame = Frame(servo_id=buffer[head + 4], code=payload[0], params=payload[1:])
        return ScanResult(Scan.FRAME, frame, head, end)

    def status_code(self, frame: Frame) -> int | None:
        """The error byte of a status frame (instruction 0x55 with an error byte), else ``None``."""
        return frame.params[0] if frame.code == STATUS and frame.params else None

    def decode_status(self, frame: Frame) -> tuple[int, bytes] | None:
        """Return ``(error byte, params)`` of a status frame, or ``None`` for an instruction frame."""
        if frame.code != STATUS or not frame.params:
            return None
        return frame.params[0], frame.params[1:]

    def decode_instruction(self, frame: Frame) -> tuple[int, bytes] | None:
        """Return ``(instruction, params)``, or ``None`` for a status frame."""
        return None if frame.code == STATUS else (frame.code, frame.params)

    def describe_error(self, error: int) -> list[str]:
        """Return the error number's name and ``hardware alert`` when bit 7 is set."""
        names = []
        number = error & 0x7F
        if number:
            names.append(ERROR_NUMBERS.get(number, f"error {number}"))
        if error & ALERT:
            names.append("hardware alert (read Hardware Error Status)")
        return names

    def data_is_valid(self, error: int) -> bool:
        """Only the alert bit may be set: an error number means the instruction was refused."""
        return error & 0x7F == 0


def describe_hardware_error(value: int) -> list[str]:
    """Return the names of the set bits of Hardware Error Status (address 70)."""
    return [HARDWARE_ERROR_BITS.get(1 << bit, f"bit {bit}") for bit in range(8) if value & (1 << bit)]


DYNAMIXEL = DynamixelCodec()

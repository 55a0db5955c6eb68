"""The Feetech and Dynamixel codecs against the protocols' published examples, and their round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bb_robot.buses.dynamixel import DYNAMIXEL, crc16, stuff, unstuff
from bb_robot.buses.feetech import FEETECH, checksum
from bb_robot.buses.packets import Frame, Instruction, PacketError, Scan


def h(text: str) -> bytes:
    return bytes.fromhex(text)


# ---------------------------------------------------------------- Feetech: the protocol manual's examples
def test_feetech_ping_and_its_reply_are_the_published_bytes() -> None:
    assert FEETECH.instruction(1, Instruction.PING) == h("FF FF 01 02 01 FB")
    assert FEETECH.status(1, 0) == h("FF FF 01 02 00 FC")


def test_feetech_read_of_present_position_1304() -> None:
    # READ ID 1, address 0x38 (present position), 2 bytes; the reply holds 0x0518 = 1304 little-endian.
    assert FEETECH.instruction(1, Instruction.READ, FEETECH.read_params(0x38, 2)) == h("FF FF 01 04 02 38 02 BE")
    found = FEETECH.scan(h("FF FF 01 04 00 18 05 DD"))
    assert found.kind is Scan.FRAME and found.frame == Frame(1, 0, h("18 05"))
    assert int.from_bytes(found.frame.params, "little") == 1304


def test_feetech_sync_write_and_read_layouts() -> None:
    write = FEETECH.instruction(
        0xFE, Instruction.SYNC_WRITE, FEETECH.sync_write_params(42, 2, {1: h("0008"), 2: h("E803")})
    )
    assert write[:7] == h("FF FF FE 0A 83 2A 02") and write[7:13] == h("01 00 08 02 E8 03")
    assert write[-1] == checksum(write[2:-1])
    read = FEETECH.instruction(0xFE, Instruction.SYNC_READ, FEETECH.sync_read_params(56, 2, [1, 2, 3]))
    assert read == h("FF FF FE 07 82 38 02 01 02 03") + bytes([checksum(h("FE 07 82 38 02 01 02 03"))])


def test_feetech_scan_rejects_a_bad_checksum_and_resynchronises() -> None:
    good = FEETECH.status(2, 0, h("0102"))
    bad = bytearray(FEETECH.status(1, 0, h("0304")))
    bad[5] ^= 0xFF
    buffer = b"\x00\x13" + bytes(bad) + good
    first = FEETECH.scan(buffer)
    assert first.kind is Scan.CORRUPT
    second = FEETECH.scan(buffer, first.end)
    assert second.kind is Scan.FRAME and second.frame == Frame(2, 0, h("0102"))


def test_feetech_scan_waits_for_an_incomplete_frame_and_keeps_a_trailing_ff() -> None:
    packet = FEETECH.status(3, 0, h("AABB"))
    assert FEETECH.scan(packet[:-1]).kind is Scan.INCOMPLETE
    nothing = FEETECH.scan(h("00 01 FF"))
    assert nothing.kind is Scan.NOTHING and nothing.end == 2  # the FF may start the next header


def test_feetech_refuses_what_does_not_fit() -> None:
    with pytest.raises(PacketError, match="servo ID 255"):
        FEETECH.instruction(0xFF, Instruction.PING)
    with pytest.raises(PacketError, match="253"):
        FEETECH.instruction(1, Instruction.WRITE, bytes(254))
    with pytest.raises(PacketError, match="servo 4: 1 bytes"):
        FEETECH.sync_write_params(42, 2, {4: b"\x00"})


def test_feetech_error_bits_are_named() -> None:
    assert FEETECH.describe_error(0x04 | 0x20) == ["overheating", "overload"]
    assert FEETECH.data_is_valid(0xFF)


@given(st.integers(0, 0xFD), st.integers(0, 0xFF), st.binary(max_size=253), st.binary(max_size=20))
def test_feetech_frames_round_trip_through_noise(servo_id: int, code: int, params: bytes, noise: bytes) -> None:
    packet = FEETECH.instruction(servo_id, code, params)
    buffer = noise.replace(b"\xff", b"\x00") + packet
    found = FEETECH.scan(buffer)
    assert found.kind is Scan.FRAME and found.frame == Frame(servo_id, code, params)
    assert found.end == len(buffer)


# ---------------------------------------------------------------- Dynamixel: ROBOTIS's Protocol 2.0 examples
@pytest.mark.parametrize(
    ("packet", "expected"),
    [
        (DYNAMIXEL.instruction(1, Instruction.PING), "FF FF FD 00 01 03 00 01 19 4E"),
        (DYNAMIXEL.status(1, 0, h("06 04 26")), "FF FF FD 00 01 07 00 55 00 06 04 26 65 5D"),
        (DYNAMIXEL.instruction(1, Instruction.READ, DYNAMIXEL.read_params(132, 4)),
         "FF FF FD 00 01 07 00 02 84 00 04 00 1D 15"),
        (DYNAMIXEL.status(1, 0, (166).to_bytes(4, "little")), "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0"),
        (DYNAMIXEL.instruction(1, Instruction.WRITE, DYNAMIXEL.write_params(116, (512).to_bytes(4, "little"))),
         "FF FF FD 00 01 09 00 03 74 00 00 02 00 00 CA 89"),
        (DYNAMIXEL.status(1, 0), "FF FF FD 00 01 04 00 55 00 A1 0C"),
        (DYNAMIXEL.instruction(0xFE, Instruction.SYNC_READ, DYNAMIXEL.sync_read_params(132, 4, [1, 2])),
         "FF FF FD 00 FE 09 00 82 84 00 04 00 01 02 CE FA"),
        (DYNAMIXEL.status(2, 0, (2079).to_bytes(4, "little")), "FF FF FD 00 02 08 00 55 00 1F 08 00 00 BA BE"),
        (DYNAMIXEL.instruction(0xFE, Instruction.SYNC_WRITE, DYNAMIXEL.sync_write_params(
            116, 4, {1: (150).to_bytes(4, "little"), 2: (170).to_bytes(4, "little")})),
         "FF FF FD 00 FE 11 00 83 74 00 04 00 01 96 00 00 00 02 AA 00 00 00 82 87"),
    ],
    ids=["ping", "ping-status", "read", "read-status", "write", "write-status", "sync-read", "sync-read-status-2",
         "sync-write"],
)  # fmt: skip
def test_dynamixel_packets_are_robotis_published_examples(packet: bytes, expected: str) -> None:
    assert packet == h(expected)
    found = DYNAMIXEL.scan(packet)
    assert found.kind is Scan.FRAME and found.end == len(packet)


def test_dynamixel_crc_matches_the_crc16_buypass_check_value() -> None:
    # CRC-16 with polynomial 0x8005, initial 0, unreflected, no final XOR: "123456789" -> 0xFEE8.
    assert crc16(b"123456789") == 0xFEE8


def test_dynamixel_crc_matches_the_vendor_sdk() -> None:
    dynamixel_sdk = pytest.importorskip("dynamixel_sdk")
    sdk = dynamixel_sdk.PacketHandler(2.0)
    for data in (b"", b"\xff\xff\xfd\x00\x01\x03\x00\x01", bytes(range(256))):
        assert crc16(data) == sdk.updateCRC(0, list(data), len(data))


def test_dynamixel_stuffing_inserts_fd_after_the_header_pattern() -> None:
    params = h("FF FF FD 10")
    packet = DYNAMIXEL.instruction(1, Instruction.WRITE, params)
    assert h("03 FF FF FD FD 10") in packet
    assert int.from_bytes(packet[5:7], "little") == 1 + 5 + 2  # LEN counts the stuffed byte
    found = DYNAMIXEL.scan(packet)
    assert found.frame == Frame(1, Instruction.WRITE, params)


@given(st.binary(max_size=300).map(lambda b: b.replace(b"\xfd", b"\xfd\xff\xff\xfd")[:300]))
def test_dynamixel_stuffing_round_trips(payload: bytes) -> None:
    stuffed = stuff(payload)
    assert unstuff(stuffed) == payload
    assert b"\xff\xff\xfd" not in stuffed.replace(b"\xff\xff\xfd\xfd", b"")


@given(st.integers(0, 0xFC), st.integers(0, 0xFF).filter(lambda c: c != 0x55), st.binary(max_size=200),
       st.binary(max_size=20))  # fmt: skip
def test_dynamixel_frames_round_trip_through_noise(servo_id: int, code: int, params: bytes, noise: bytes) -> None:
    packet = DYNAMIXEL.instruction(servo_id, code, params)
    buffer = noise.replace(b"\xff", b"\x00") + packet
    found = DYNAMIXEL.scan(buffer)
    assert found.kind is Scan.FRAME and found.frame == Frame(servo_id, code, params)
    assert DYNAMIXEL.decode_instruction(found.frame) == (code, params)


@given(st.integers(0, 0xFC), st.integers(0, 0xFF), st.binary(max_size=100))
def test_dynamixel_status_round_trips_and_a_flipped_byte_is_caught(servo_id: int, error: int, params: bytes) -> None:
    packet = DYNAMIXEL.status(servo_id, error, params)
    found = DYNAMIXEL.scan(packet)
    assert found.frame is not None and DYNAMIXEL.decode_status(found.frame) == (error, params)
    damaged = bytearray(packet)
    damaged[-3] ^= 0x01
    assert DYNAMIXEL.scan(bytes(damaged)).kind is not Scan.FRAME


def test_dynamixel_error_byte_names_and_validity() -> None:
    assert DYNAMIXEL.describe_error(0x87) == ["access error", "hardware alert (read Hardware Error Status)"]
    assert DYNAMIXEL.data_is_valid(0x80) and not DYNAMIXEL.data_is_valid(0x06)


def test_dynamixel_refuses_reserved_ids() -> None:
    with pytest.raises(PacketError, match="reserved"):
        DYNAMIXEL.instruction(0xFD, Instruction.PING)

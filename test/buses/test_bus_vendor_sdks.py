"""The vendors' own SDKs as reference clients of the emulator: our framing is the vendors'.

feetech-servo-sdk (``scservo_sdk``) and dynamixel-sdk (``dynamixel_sdk``) ping, read, write, sync
read and sync write the emulated servos over its pty exactly as they would real ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bb_robot.buses.emulator import BusEmulator

scservo_sdk = pytest.importorskip("scservo_sdk")
dynamixel_sdk = pytest.importorskip("dynamixel_sdk")


def opened(sdk: Any, path: str) -> Any:
    port = sdk.PortHandler(path)
    assert port.openPort() and port.setBaudRate(1_000_000)
    return port


@pytest.fixture
def feetech_port(so101: BusEmulator) -> Iterator[Any]:
    port = opened(scservo_sdk, so101.path)
    yield port
    port.closePort()


@pytest.fixture
def dynamixel_port(dxl: BusEmulator) -> Iterator[Any]:
    port = opened(dynamixel_sdk, dxl.path)
    yield port
    port.closePort()


def test_feetech_sdk_pings_reads_and_writes(so101: BusEmulator, feetech_port: Any) -> None:
    sdk = scservo_sdk.PacketHandler(0)
    assert sdk.ping(feetech_port, 1) == (777, scservo_sdk.COMM_SUCCESS, 0)
    assert sdk.ping(feetech_port, 9)[1] == scservo_sdk.COMM_RX_TIMEOUT
    assert sdk.read2ByteTxRx(feetech_port, 4, 56) == (2048, scservo_sdk.COMM_SUCCESS, 0)
    assert sdk.read2ByteTxRx(feetech_port, 6, 11) == (3470, scservo_sdk.COMM_SUCCESS, 0)
    assert sdk.write1ByteTxRx(feetech_port, 1, 40, 1) == (scservo_sdk.COMM_SUCCESS, 0)
    assert sdk.write2ByteTxRx(feetech_port, 1, 42, 2300) == (scservo_sdk.COMM_SUCCESS, 0)
    assert so101.servos[1].torque and so101.servos[1].peek("goal_position") == 2300


def test_feetech_sdk_sync_reads_and_writes(so101: BusEmulator, feetech_port: Any) -> None:
    sdk = scservo_sdk.PacketHandler(0)
    reader = scservo_sdk.GroupSyncRead(feetech_port, sdk, 9, 4)  # min and max position limits
    for servo_id in range(1, 7):
        assert reader.addParam(servo_id)
    assert reader.txRxPacket() == scservo_sdk.COMM_SUCCESS
    limits = [(reader.getData(i, 9, 2), reader.getData(i, 11, 2)) for i in range(1, 7)]
    assert limits == [(797, 3299), (910, 3186), (946, 3150), (967, 3129), (260, 3836), (2030, 3470)]
    writer = scservo_sdk.GroupSyncWrite(feetech_port, sdk, 46, 2)  # goal velocity
    for servo_id in range(1, 7):
        assert writer.addParam(servo_id, [servo_id * 10, 1])
    assert writer.txPacket() == scservo_sdk.COMM_SUCCESS
    assert sdk.read2ByteTxRx(feetech_port, 6, 46)[0] == 256 + 60
    assert [so101.servos[i].peek("goal_velocity") for i in range(1, 7)] == [256 + 10 * i for i in range(1, 7)]


def test_dynamixel_sdk_pings_reads_and_writes(dxl: BusEmulator, dynamixel_port: Any) -> None:
    sdk = dynamixel_sdk.PacketHandler(2.0)
    assert sdk.ping(dynamixel_port, 2) == (1060, dynamixel_sdk.COMM_SUCCESS, 0)
    found, result = sdk.broadcastPing(dynamixel_port)
    assert result == dynamixel_sdk.COMM_SUCCESS and sorted(found) == [1, 2, 3] and found[1][0] == 1060
    assert sdk.read4ByteTxRx(dynamixel_port, 3, 132) == (2048, dynamixel_sdk.COMM_SUCCESS, 0)
    assert sdk.write1ByteTxRx(dynamixel_port, 1, 64, 1) == (dynamixel_sdk.COMM_SUCCESS, 0)
    assert sdk.write4ByteTxRx(dynamixel_port, 1, 116, 2100) == (dynamixel_sdk.COMM_SUCCESS, 0)
    assert sdk.write1ByteTxRx(dynamixel_port, 1, 11, 4) == (dynamixel_sdk.COMM_SUCCESS, 7)  # EEPROM, torque on
    assert dxl.servos[1].peek("goal_position") == 2100 and dxl.servos[1].peek("operating_mode") == 3


def test_dynamixel_sdk_sync_reads_and_writes(dxl: BusEmulator, dynamixel_port: Any) -> None:
    sdk = dynamixel_sdk.PacketHandler(2.0)
    writer = dynamixel_sdk.GroupSyncWrite(dynamixel_port, sdk, 108, 8)  # profile acceleration and velocity
    for servo_id in (1, 2, 3):
        assert writer.addParam(servo_id, [servo_id, 0, 0, 0, 0xFD, 0xFF, 0xFF, 0])  # a stuffing-prone pattern too
    assert writer.txPacket() == dynamixel_sdk.COMM_SUCCESS
    reader = dynamixel_sdk.GroupSyncRead(dynamixel_port, sdk, 108, 8)
    for servo_id in (1, 2, 3):
        assert reader.addParam(servo_id)
    assert reader.txRxPacket() == dynamixel_sdk.COMM_SUCCESS
    assert [reader.getData(i, 108, 4) for i in (1, 2, 3)] == [1, 2, 3]
    assert [reader.getData(i, 112, 4) for i in (1, 2, 3)] == [0xFFFFFD] * 3
    assert dxl.servos[2].peek("profile_velocity") == 0xFFFFFD

"""Fixtures of the bus tests: emulators on a pseudo-terminal and Bus clients of them.

The emulators here answer at once (``timing=False``) and the clients allow a generous latency:
the tests check what is said on the wire and what is done with it, not how fast; the timing
model is measured by benchmarks/bench_bus.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.bus_helpers import LATENCY

from bb_robot.buses.dynamixel import DYNAMIXEL
from bb_robot.buses.emulator import BusEmulator
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.transport import Bus


@pytest.fixture
def so101() -> Iterator[BusEmulator]:
    """The SO-101's emulated servos, answering at once."""
    emulator = BusEmulator.so101(timing=False)
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture
def so101_bus(so101: BusEmulator) -> Iterator[Bus]:
    """A Feetech Bus on the SO-101 emulator's pty."""
    bus = Bus.open(so101.path, FEETECH, baud=1_000_000, latency=LATENCY, retries=3)
    yield bus
    bus.close()


@pytest.fixture
def dxl() -> Iterator[BusEmulator]:
    """Three emulated XL430-W250 servos (IDs 1, 2, 3) at 1 Mbaud, answering at once."""
    emulator = BusEmulator.dynamixel([1, 2, 3], "xl430-w250", timing=False)
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture
def dxl_bus(dxl: BusEmulator) -> Iterator[Bus]:
    """A Dynamixel Bus on the emulator's pty."""
    bus = Bus.open(dxl.path, DYNAMIXEL, baud=1_000_000, latency=LATENCY, retries=3)
    yield bus
    bus.close()

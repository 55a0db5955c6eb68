"""Helpers of the ``bb-robot calibrate`` tests: the script they play, what it implies, the emulator serving them.

:func:`so101_script` moves every SO-101 joint through :data:`SO101_TRAVEL` (shoulder_pan's across the
wrap point of the shipped calibration) and :func:`scripted_ends` says where each travel's ends are, in
the encoder's actual ticks, for comparison with the written calibration; :func:`serving` serves an
in-process emulator on a linked pty with its control socket.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

from bb_robot.buses.calibration import MotorCalibration, actual_from_present
from bb_robot.buses.emulator import BusEmulator
from bb_robot.buses.emulator_control import ControlServer
from bb_robot.buses.units import angle_to_ticks

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Where the script moves each SO-101 joint, in turn from its middle (radians, or present ticks "Nt"); no
#: step of half a turn or more (calibration_script's rule). shoulder_pan's last move crosses present 0 of the
#: shipped calibration (its middle reads 2048): the emulator moves a joint by the difference between the
#: number given and its present reading (0..4095), so -300t goes down across 0 (and back would be 4996t).
SO101_TRAVEL: dict[str, tuple[str, ...]] = {
    "shoulder_pan": ("2400t", "900t", "-300t"),
    "shoulder_lift": ("-1.6", "0", "1.5", "0"),
    "elbow_flex": ("-1.5", "0", "1.55", "0"),
    "wrist_flex": ("-1.2", "0", "1.6", "0"),
    "wrist_roll": ("-2.5", "-1", "1", "2.6", "0"),
    "gripper": ("-0.1", "1.7", "0"),
}


def so101_script() -> str:
    """The calibration script of :data:`SO101_TRAVEL`: Enter at mid-range, each joint through its positions, Enter."""
    lines = ["# time joint position", "0.1 enter"]
    t = 0.1
    for joint, positions in SO101_TRAVEL.items():
        for position in positions:
            t += 0.15
            lines.append(f"{t:.2f} {joint} {position}")
    lines.append(f"{t + 0.1:.2f} enter")
    return "\n".join(lines) + "\n"


def scripted_ends(shipped: Mapping[str, MotorCalibration]) -> dict[str, tuple[int, int]]:
    """Each joint's travel ends as encoder (actual) ticks, unwrapped around its middle, from the script's
    positions through the calibration the emulator started with (each servo at its middle, round(mid)).

    Radians become whole present ticks (``units.angle_to_ticks`` rounds, as the emulator's control socket
    does), so the ends are exact: a hand move ends exactly at its target and is read there."""
    out = {}
    for joint, positions in SO101_TRAVEL.items():
        calibration = shipped[joint]
        start = round(calibration.mid)
        presents = [
            int(text[:-1]) if text.endswith("t") else angle_to_ticks(float(text), calibration) for text in positions
        ]
        middle = actual_from_present(start, calibration.homing_offset, "feetech")
        actual = [middle + p - start for p in (*presents, start)]
        out[joint] = (min(actual), max(actual))
    return out


@contextlib.contextmanager
def serving(emulator: BusEmulator, directory: Path) -> Iterator[tuple[Path, Path]]:
    """Serve ``emulator`` on its pty, linked at ``directory/bus``, with its control socket open; yields
    (link, socket). The emulator is the product's, in this process; ``bb-robot calibrate`` reaches it as
    it would a USB adapter."""
    link, path = directory / "bus", directory / f"control-{uuid.uuid4().hex[:6]}"
    emulator.start(link)
    control = ControlServer(emulator, path)
    control.start()
    try:
        yield link, path
    finally:
        control.stop()
        emulator.stop()


def source_env() -> dict[str, str]:
    """This environment with the source tree first on ``PYTHONPATH``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}


def calibrate_command(*args: str | Path) -> list[str]:
    """``python -m bb_robot.cli calibrate ARGS``."""
    return [sys.executable, "-m", "bb_robot.cli", "calibrate", *map(str, args)]

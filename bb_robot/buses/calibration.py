"""Calibrations: LeRobot's JSON files, the homing-offset mapping, and choosing homing offsets.

A calibration gives each motor (by name) its bus ID, ``drive_mode`` (1: the joint turns the other
way), ``homing_offset`` and ``range_min`` / ``range_max``, the ends of its travel in the servo's
*present* ticks. This is LeRobot's file format (``{motor: {id, drive_mode, homing_offset,
range_min, range_max}}``), so an arm calibrated with LeRobot works as it is.

The homing offset moves the servo's present position against the encoder's *actual* reading
(``actual`` is where the magnet is, 0..4095 over one turn):

- Feetech: present = (actual − homing_offset) mod 4096, the offset sign-magnitude within ±2047;
- Dynamixel: present = (actual + homing_offset) mod 4096 (position mode, one turn).

The present position jumps between 4095 and 0 at the *wrap point*. A joint whose travel crosses
it reads as a jump of a whole turn; :func:`choose_homing` picks the offset that puts the middle of
the joint's travel at present 2048, as far from the wrap point as it can be.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bb_robot.errors import BbRobotError
from bb_robot.resources import share_directories

#: Encoder ticks per turn of every supported model.
RESOLUTION = 4096
#: Feetech's homing offset is sign-magnitude with the sign in bit 11.
FEETECH_OFFSET_LIMIT = 2047
#: Dynamixel X's homing offset limit (ticks, both signs).
DYNAMIXEL_OFFSET_LIMIT = 1_044_479
#: Ticks :func:`choose_homing` keeps between a joint's travel and the wrap point, by default.
DEFAULT_MARGIN = 16
FIELDS = ("id", "drive_mode", "homing_offset", "range_min", "range_max")


class CalibrationError(BbRobotError):
    """A calibration file or value that cannot be used, or offsets that cannot be chosen."""


@dataclass(frozen=True)
class MotorCalibration:
    """One motor's calibration (LeRobot's fields).

    Attributes:
        id: the servo's bus ID.
        drive_mode: 0, or 1 when the joint's positive direction is the servo's negative one.
        homing_offset: written to the servo's ``homing_offset`` register.
        range_min: the lowest present position of the joint's travel (ticks).
        range_max: the highest.
    """

    id: int
    drive_mode: int
    homing_offset: int
    range_min: int
    range_max: int

    @property
    def mid(self) -> float:
        """(range_min + range_max) / 2: the present position of joint angle 0."""
        return (self.range_min + self.range_max) / 2

    @property
    def sign(self) -> int:
        """+1, or −1 for ``drive_mode`` 1."""
        return -1 if self.drive_mode else 1


def offset_limit(protocol: str) -> int:
    """The largest homing offset magnitude of ``protocol`` (``feetech`` or ``dynamixel``)."""
    return FEETECH_OFFSET_LIMIT if protocol == "feetech" else DYNAMIXEL_OFFSET_LIMIT


def present_from_actual(actual: int, homing_offset: int, protocol: str) -> int:
    """The present position a servo reports at encoder reading ``actual`` with ``homing_offset``."""
    shift = -homing_offset if protocol == "feetech" else homing_offset
    return (actual + shift) % RESOLUTION


def actual_from_present(present: int, homing_offset: int, protocol: str) -> int:
    """The encoder reading (0..4095) at which a servo reports ``present`` with ``homing_offset``."""
    shift = homing_offset if protocol == "feetech" else -homing_offset
    return (present + shift) % RESOLUTION


def validate(motor: str, calibration: MotorCalibration, protocol: str = "feetech", *, source: str = "") -> None:
    """Check one motor's calibration.

    Raises:
        CalibrationError: an ID outside 0..253, a drive mode other than 0 or 1, an offset beyond
            the protocol's limit, or a range outside 0..4095 or empty; naming the file and motor.
    """
    where = f"{source}: " if source else ""
    problems = []
    if not 0 <= calibration.id <= 253:
        problems.append(f"id {calibration.id} is not a servo ID (0..253)")
    if calibration.drive_mode not in (0, 1):
        problems.append(f"drive_mode {calibration.drive_mode} is neither 0 nor 1")
    limit = offset_limit(protocol)
    if abs(calibration.homing_offset) > limit:
        problems.append(f"homing_offset {calibration.homing_offset} exceeds ±{limit} ({protocol})")
    if not 0 <= calibration.range_min < calibration.range_max <= RESOLUTION - 1:
        span = f"{calibration.range_min}..{calibration.range_max}"
        problems.append(f"range {span} is not an increasing range within 0..{RESOLUTION - 1}")
    if problems:
        raise CalibrationError(f"{where}motor '{motor}': {'; '.join(problems)}; recalibrate the joint or fix the file")


def load_calibration(path: str | Path, protocol: str = "feetech") -> dict[str, MotorCalibration]:
    """Read a LeRobot calibration file.

    Args:
        path: the JSON file.
        protocol: for the homing offset's limit.

    Returns:
        By motor name, in the file's order.

    Raises:
        CalibrationError: the file cannot be read or parsed, a motor lacks a field or has one that
            is not an integer, two motors share an ID, or a value fails :func:`validate`.
    """
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CalibrationError(f"{path}: cannot read the calibration file ({error})") from None
    if not isinstance(document, dict) or not document:
        raise CalibrationError(f"{path}: a calibration file is a JSON object of motors, {{motor: {{id, ...}}}}")
    out: dict[str, MotorCalibration] = {}
    for motor, entry in document.items():
        if not isinstance(entry, dict):
            raise CalibrationError(f"{path}: motor '{motor}' is not an object with the fields {', '.join(FIELDS)}")
        values = {}
        for name in FIELDS:
            value = entry.get(name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise CalibrationError(f"{path}: motor '{motor}': '{name}' is {value!r}, an integer is needed")
            values[name] = value
        calibration = MotorCalibration(**values)
        validate(motor, calibration, protocol, source=str(path))
        out[motor] = calibration
    ids = [c.id for c in out.values()]
    for motor, calibration in out.items():
        if ids.count(calibration.id) > 1:
            raise CalibrationError(f"{path}: motor '{motor}' shares ID {calibration.id} with another motor")
    return out


def save_calibration(path: str | Path, calibrations: Mapping[str, MotorCalibration]) -> None:
    """Write a LeRobot calibration file (fields in LeRobot's order, indented by 4).

    Raises:
        CalibrationError: the file cannot be written.
    """
    document = {motor: {name: getattr(c, name) for name in FIELDS} for motor, c in calibrations.items()}
    try:
        Path(path).write_text(json.dumps(document, indent=4) + "\n", encoding="utf-8")
    except OSError as error:
        raise CalibrationError(f"{path}: cannot write the calibration file ({error})") from None


def shipped_calibration(arm: str = "so101") -> Path:
    """Return the path of the calibration bb_robot ships for ``arm`` (``config/<arm>_calibration.json``).

    Raises:
        CalibrationError: no such file, naming the places searched.
    """
    searched = [directory / "config" / f"{arm}_calibration.json" for directory in share_directories()]
    for path in searched:
        if path.is_file():
            return path
    raise CalibrationError(f"no calibration shipped for arm '{arm}'; looked in: {', '.join(map(str, searched))}")


@dataclass(frozen=True)
class HomingChoice:
    """What :func:`choose_homing` chose.

    Attributes:
        homing_offset: the offset to write.
        range_min: the travel's lowest present position with that offset.
        range_max: its highest.
        margin: ticks between the travel and the wrap point, on the nearer side.
    """

    homing_offset: int
    range_min: int
    range_max: int
    margin: int


class Unwrapper:
    """Unwraps positions one at a time, as they are read: ``unwrapper(sample)`` returns it with
    whole-turn jumps removed (a step of more than half a turn from the previous sample is taken as
    a crossing of the wrap point, so samples must come at least twice per half turn of motion).

    Args:
        resolution: ticks per turn.
    """

    def __init__(self, resolution: int = RESOLUTION) -> None:
        self.resolution = resolution
        self.turns = 0
        self.previous: int | None = None

    def __call__(self, sample: int) -> int:
        """Return ``sample`` plus the whole turns crossed since the first sample."""
        if self.previous is not None:
            step = sample - self.previous
            if step > self.resolution // 2:
                self.turns -= 1
            elif step < -(self.resolution // 2):
                self.turns += 1
        self.previous = sample
        return sample + self.turns * self.resolution


def unwrap(samples: Sequence[int], resolution: int = RESOLUTION) -> list[int]:
    """Return ``samples`` (positions read in order during a motion) with whole-turn jumps removed
    (:class:`Unwrapper`)."""
    unwrapper = Unwrapper(resolution)
    return [unwrapper(sample) for sample in samples]


def choose_homing(
    travel: Sequence[int],
    *,
    protocol: str,
    current_offset: int = 0,
    motor: str = "",
    margin: int = DEFAULT_MARGIN,
) -> HomingChoice:
    """Choose a homing offset that keeps a joint's whole travel off the wrap point.

    Args:
        travel: present positions read, in order, while the joint was moved through its whole
            range (at least twice per half turn of motion), with ``current_offset`` in effect.
        protocol: ``feetech`` or ``dynamixel`` (the offset's sign and limit).
        current_offset: the homing offset the servo had while ``travel`` was read.
        motor: the motor's name, for messages.
        margin: ticks to keep between the travel's ends and the wrap point.

    Returns:
        The offset, which puts the middle of the travel at present 2048 (2047 where 2048 would
        need Feetech's unrepresentable −2048), and the travel's range with it.

    Raises:
        CalibrationError: no samples, or a travel too long to keep ``margin`` ticks from the wrap
            point on both sides (the message gives the travel in ticks and degrees).
    """
    name = f"motor '{motor}'" if motor else "the motor"
    if not travel:
        raise CalibrationError(f"{name}: no positions were recorded; move the joint through its range")
    actual = unwrap([actual_from_present(p, current_offset, protocol) for p in travel])
    low, high = min(actual), max(actual)
    span = high - low
    # Two ticks go to rounding: the middle of an odd span, and Feetech's -2048 written as -2047.
    if span > RESOLUTION - 3 - 2 * margin:
        raise CalibrationError(
            f"{name}: the joint travelled {span} ticks ({math.degrees(span * 2 * math.pi / RESOLUTION):.1f}°), "
            f"more than a turn less {2 * margin + 2} ticks of margin, so every homing offset leaves a position of its "
            "travel at the encoder's wrap point (where the reading jumps by a turn); calibrate it over less than a "
            f"turn, or treat it as a full-turn joint (range 0..{RESOLUTION - 1})"
        )
    centre = (low + high) // 2
    half = RESOLUTION // 2
    # Offsets are equal modulo a turn; take the representative within ±2048.
    raw = (centre - half) if protocol == "feetech" else (half - centre)
    offset = (raw + half) % RESOLUTION - half
    if (
        offset == -half and protocol == "feetech"
    ):  # -2048 cannot be written to a Feetech servo; one tick over is as good
        offset = -half + 1
    limit = offset_limit(protocol)
    if abs(offset) > limit:  # pragma: no cover - the representative is always within ±2047
        raise CalibrationError(f"{name}: homing offset {offset} exceeds ±{limit}")
    start = present_from_actual(low % RESOLUTION, offset, protocol)
    end = start + span
    if start < margin or end > RESOLUTION - 1 - margin:
        raise CalibrationError(
            f"{name}: the travel {start}..{end} with homing offset {offset} comes within {margin} ticks of the "
            "wrap point; move the joint through its range again"
        )
    return HomingChoice(offset, start, end, min(start, RESOLUTION - 1 - end))

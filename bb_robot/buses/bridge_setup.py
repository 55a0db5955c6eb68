"""What the bus bridge (``bb-robot bus``) is configured with, without ROS: servos, mappings, checks.

A :class:`ServoSpec` is one configured servo: its joint, bus ID, model, direction, calibration,
speed limit and how its ticks map to the joint (:class:`Mapping`: LeRobot's mid-range angle, or
the gripper's 0–100 onto the URDF joint's limits). :func:`servo_specs` builds them from the
``/**/bus`` section's values and checks them; :func:`latency_timer_warning` reads a USB serial
adapter's latency timer from Linux sysfs; :class:`CycleStats` keeps the loop's achieved rate and
p99 cycle time. docs/buses.md ("The bridge") describes the parameters.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Mapping as MappingType
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bb_robot.buses.calibration import RESOLUTION, CalibrationError, MotorCalibration, load_calibration
from bb_robot.buses.tables import Model, TableError, model
from bb_robot.buses.units import percent_to_angle, ticks_to_angle, ticks_to_percent
from bb_robot.errors import BbRobotError
from bb_robot.resources import find_config

#: The speed limit (rad/s at the joint) a servo gets when its ``speed_limit`` is 0: well below each
#: model's no-load speed (STS3215 5.2 rad/s, XL330 10 rad/s, XL430 6.1 rad/s, XM430 4.8 rad/s), so a
#: goal far away is approached, never jumped to.
DEFAULT_SPEED_LIMITS = {
    "sts3215": 2.0,
    "xl330-m288": 2.0,
    "xl330-m077": 2.0,
    "xl430-w250": 1.5,
    "xm430-w350": 1.5,
    "xm430-w210": 1.5,
}
#: Where Linux shows a USB serial adapter's latency timer (ms): ``/sys/bus/usb-serial/devices/<tty>/latency_timer``.
SYSFS_USB_SERIAL = Path("/sys/bus/usb-serial/devices")
MAPPINGS = ("angle", "percent")


class BridgeSetupError(BbRobotError):
    """A bus section that cannot be used (the message names the parameter, servo and value)."""


@dataclass(frozen=True)
class Mapping:
    """Ticks ↔ joint angle, linear: ``angle = offset + slope · ticks``.

    ``angle``: LeRobot's ``sign · (ticks − mid) · 2π / 4096`` times ``direction``; ``percent``: the
    0–100 of the calibrated range (LeRobot's gripper) onto ``limits`` (the URDF joint's).
    """

    offset: float
    slope: float

    @classmethod
    def of(
        cls, calibration: MotorCalibration, direction: int, kind: str, limits: tuple[float, float] | None
    ) -> Mapping:
        """The mapping of one servo.

        Raises:
            BridgeSetupError: a ``percent`` mapping without joint limits.
        """
        if kind == "percent":
            if limits is None:
                raise BridgeSetupError("a percent mapping needs the joint's limits")

            def convert(ticks: float) -> float:
                return percent_to_angle(ticks_to_percent(ticks, calibration), limits)

        else:

            def convert(ticks: float) -> float:
                return ticks_to_angle(ticks, calibration)

        at0, at1 = convert(0.0), convert(float(RESOLUTION))
        slope = (at1 - at0) / RESOLUTION
        return cls(direction * at0, direction * slope)

    def to_angle(self, ticks: float) -> float:
        """The joint angle (rad) at ``ticks``."""
        return self.offset + self.slope * ticks

    def to_ticks(self, angle: float) -> float:
        """The ticks (not rounded) at joint angle ``angle``."""
        return (angle - self.offset) / self.slope


@dataclass(frozen=True)
class ServoSpec:
    """One configured servo.

    Attributes:
        joint: the URDF joint it drives (the actuator index's ``joint``).
        id: its bus ID.
        model: its control table.
        direction: +1, or −1 to turn the joint the other way than the calibration says.
        calibration: its LeRobot calibration (where the range and the homing offset come from).
        calibration_file: the file it came from ("" for the default calibration).
        speed_limit: the largest joint speed its goals may ask for (rad/s).
        mapping: ``angle`` or ``percent`` (the gripper's 0–100 onto the joint's limits).
    """

    joint: str
    id: int
    model: Model
    direction: int
    calibration: MotorCalibration
    calibration_file: str
    speed_limit: float
    mapping: str = "angle"

    def mapping_for(self, limits: tuple[float, float] | None) -> Mapping:
        """Its :class:`Mapping` with the joint's limits (needed for ``percent``)."""
        return Mapping.of(self.calibration, self.direction, self.mapping, limits)


def calibration_path(name: str) -> Path:
    """The calibration file ``name``: an existing path, else a name under bb_robot's ``config/``.

    Raises:
        BridgeSetupError: no such file (the message lists where it looked).
    """
    found, searched = find_config(name)
    if found is not None:
        return found
    raise BridgeSetupError(
        f"no calibration file '{name}' (looked at {', '.join(map(str, searched))}); give the path of the arm's "
        "LeRobot calibration JSON"
    )


def default_calibration(servo_id: int, model_: Model) -> MotorCalibration:
    """The calibration of a servo without a file: no homing offset, its whole turn, mid at 2048 (1..4095)."""
    return MotorCalibration(servo_id, 0, 0, 1, model_.resolution - 1)


def servo_sections(values: MappingType[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``servos.<joint>.<name>`` parameters of a flattened bus section, per joint (for :func:`servo_specs`)."""
    servos: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        head, _, rest = str(key).partition(".")
        if head == "servos" and "." in rest:
            joint, _, name = rest.rpartition(".")
            servos.setdefault(joint, {})[name] = value
    return servos


def servo_specs(
    protocol: str, joints: Sequence[str], servos: MappingType[str, MappingType[str, Any]], calibration: str = ""
) -> tuple[ServoSpec, ...]:
    """The configured servos, checked.

    Args:
        protocol: ``feetech`` or ``dynamixel``.
        joints: the joints with a servo, in bus order.
        servos: per joint: ``id``, ``model``, ``direction``, ``calibration`` (a file; "" for
            ``calibration``), ``motor`` (its name in the file; "" for the joint's), ``speed_limit``
            (0 for the model's default), ``mapping``.
        calibration: the bus's calibration file ("" for none: each servo's whole turn).

    Returns:
        One :class:`ServoSpec` per joint.

    Raises:
        BridgeSetupError: an unknown model or protocol, an ID used twice, a direction other than ±1,
            a motor missing from its file, a calibration ID other than the configured one.
    """
    if protocol not in ("feetech", "dynamixel"):
        raise BridgeSetupError(f"protocol '{protocol}' is not feetech or dynamixel")
    if not joints:
        raise BridgeSetupError("the bus section names no joints: set joints and servos.<joint>.id, .model")
    files: dict[str, dict[str, MotorCalibration]] = {}
    specs: list[ServoSpec] = []
    seen: dict[int, str] = {}
    for joint in joints:
        given = dict(servos.get(joint) or {})
        where = f"servos.{joint}"
        try:
            table = model(str(given.get("model") or ""))
        except TableError as error:
            raise BridgeSetupError(f"{where}.model: {error}") from None
        if table.protocol != protocol:
            raise BridgeSetupError(f"{where}.model: {table.name} speaks {table.protocol}, the bus is {protocol}")
        servo_id = int(given.get("id", -1))
        if not 0 <= servo_id <= 252:
            raise BridgeSetupError(f"{where}.id: {servo_id} is not a servo ID (0..252)")
        if servo_id in seen:
            raise BridgeSetupError(f"{where}.id: ID {servo_id} is also {seen[servo_id]}'s; every servo needs its own")
        seen[servo_id] = joint
        direction = int(given.get("direction", 1))
        if direction not in (1, -1):
            raise BridgeSetupError(f"{where}.direction: {direction} is not 1 or -1")
        mapping = str(given.get("mapping") or "angle")
        if mapping not in MAPPINGS:
            raise BridgeSetupError(f"{where}.mapping: '{mapping}' is not one of {', '.join(MAPPINGS)}")
        file_name = str(given.get("calibration") or calibration)
        motor = str(given.get("motor") or joint)
        if file_name:
            if file_name not in files:
                try:
                    files[file_name] = load_calibration(calibration_path(file_name), protocol)
                except CalibrationError as error:
                    raise BridgeSetupError(f"{where}: {error}") from None
            found = files[file_name].get(motor)
            if found is None:
                raise BridgeSetupError(
                    f"{where}: calibration file {file_name} has no motor '{motor}' (it has "
                    f"{', '.join(files[file_name])}); set {where}.motor to its name there"
                )
            if found.id != servo_id:
                raise BridgeSetupError(
                    f"{where}.id: {servo_id}, but calibration file {file_name} gives motor '{motor}' ID {found.id}"
                )
        else:
            found = default_calibration(servo_id, table)
        speed = float(given.get("speed_limit", 0.0) or 0.0)
        if not math.isfinite(speed) or speed < 0:
            raise BridgeSetupError(f"{where}.speed_limit: {speed} is not a speed >= 0 (rad/s; 0: the model's default)")
        speed = speed or DEFAULT_SPEED_LIMITS.get(table.name, 1.5)
        specs.append(ServoSpec(joint, servo_id, table, direction, found, file_name, speed, mapping))
    return tuple(specs)


def latency_timer(port: str) -> int | None:
    """The latency timer (ms) of the USB serial adapter behind ``port`` (symbolic links followed), or
    ``None`` where there is none to read (not Linux, not a USB serial adapter, a pty)."""
    device = os.path.basename(os.path.realpath(port))
    path = SYSFS_USB_SERIAL / device / "latency_timer"
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def latency_timer_warning(port: str, timer: int | None = None) -> str | None:
    """What to say when the adapter's latency timer is above 1 ms (``timer``: read it when ``None``)."""
    timer = latency_timer(port) if timer is None else timer
    if timer is None or timer <= 1:
        return None
    device = os.path.basename(os.path.realpath(port))
    return (
        f"{port}: the USB adapter's latency timer is {timer} ms, so every read waits up to {timer} ms; set it to 1: "
        f"echo 1 | sudo tee {SYSFS_USB_SERIAL}/{device}/latency_timer (or a udev rule: "
        f'ATTR{{latency_timer}}="1"; docs/buses.md, "The latency timer")'
    )


class CycleStats:
    """The loop's cycles: achieved rate and p99 cycle time over the last ``window`` cycles."""

    def __init__(self, window: int = 2000) -> None:
        self.starts: deque[float] = deque(maxlen=window)
        self.durations: deque[float] = deque(maxlen=window)
        self.cycles = 0

    def record(self, start: float, duration: float) -> None:
        """One cycle that began at ``start`` (s, monotonic) and took ``duration`` s."""
        self.starts.append(start)
        self.durations.append(duration)
        self.cycles += 1

    def rate(self) -> float:
        """Cycles per second over the window (0 before two cycles)."""
        if len(self.starts) < 2 or self.starts[-1] <= self.starts[0]:
            return 0.0
        return (len(self.starts) - 1) / (self.starts[-1] - self.starts[0])

    def p99(self) -> float:
        """The 99th percentile of the cycle times (s; 0 before any)."""
        if not self.durations:
            return 0.0
        ordered = sorted(self.durations)
        return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


__all__ = [
    "DEFAULT_SPEED_LIMITS",
    "BridgeSetupError",
    "CycleStats",
    "Mapping",
    "ServoSpec",
    "calibration_path",
    "default_calibration",
    "latency_timer",
    "latency_timer_warning",
    "servo_sections",
    "servo_specs",
]

"""A calibration by hand (``bb-robot calibrate``), without ROS: what is read, chosen and written.

The steps, as LeRobot's calibration has them (docs/buses.md, "Calibration"):

1. :meth:`CalibrationSession.start`: every servo answers a ping (the missing ones are named with the
   baud tried), is of its configured model, and has its **torque turned off** (the arm can be
   moved by hand; it also falls under gravity). Each servo's homing offset is read: the present
   positions of the session are read with it.
2. The user puts the arm at mid-range: :meth:`~CalibrationSession.mark_middle` takes the latest
   reading as each joint's middle, where its travel starts.
3. The user moves each joint through its range while :meth:`~CalibrationSession.sample` reads
   every servo (one sync read) and keeps each joint's travel, unwrapped as it comes
   (:class:`~bb_robot.buses.calibration.Unwrapper`), so that a travel crossing the encoder's wrap
   point with the old offset reads as one piece; :meth:`~CalibrationSession.rows` gives the live
   table (positions shown with the middle at 2048, as they will read once calibrated).
4. :meth:`~CalibrationSession.choose`: each joint's homing offset and range from its travel
   (:func:`~bb_robot.buses.calibration.choose_homing`: the middle of the travel at present 2048,
   the wrap point outside it, the offset within ±2047); a *full-turn* joint (a wrist that turns
   freely) gets the offset that puts its step-2 middle at 2048 and the whole turn, 0..4095. Every
   joint that cannot be calibrated is named in one error, with its values; nothing is written then.
5. :meth:`~CalibrationSession.write`: the offsets and the position limits into each servo's
   EEPROM, only with its torque off, unlocked around the writes and read back
   (:func:`~bb_robot.buses.eeprom.write_eeprom`).

The caller saves the result as LeRobot's calibration JSON
(:func:`~bb_robot.buses.calibration.save_calibration`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from bb_robot.buses.calibration import (
    RESOLUTION,
    CalibrationError,
    MotorCalibration,
    Unwrapper,
    choose_homing,
    validate,
)
from bb_robot.buses.eeprom import write_eeprom
from bb_robot.buses.tables import Model, model_by_number
from bb_robot.buses.transport import Bus, BusError

_T = TypeVar("_T")

#: The least travel (ticks, about 3.5°) a joint must have been moved through: less is a joint forgotten in step 3.
MIN_TRAVEL = 40
#: The present position a joint's middle reads once calibrated.
MIDDLE = RESOLUTION // 2


@dataclass(frozen=True)
class Motor:
    """One servo to calibrate.

    Attributes:
        name: its motor name in the calibration file (LeRobot's names for the SO-101; the joint's).
        id: its bus ID.
        model: its control table.
        drive_mode: kept as given (LeRobot's field; bb_robot applies the sign, the servo does not).
        full_turn: a joint that turns freely: the whole turn 0..4095, the step-2 middle at 2048.
    """

    name: str
    id: int
    model: Model
    drive_mode: int = 0
    full_turn: bool = False

    @property
    def who(self) -> str:
        """How messages name it: ``servo 3 (elbow_flex)``."""
        return f"servo {self.id} ({self.name})"


@dataclass
class Travel:
    """One joint's readings: every distinct present position since the middle, and its unwrapped extremes."""

    unwrap: Unwrapper = field(default_factory=Unwrapper)
    samples: list[int] = field(default_factory=list)
    middle: int | None = None
    low: int = 0
    high: int = 0
    latest: int = 0

    def add(self, present: int) -> None:
        """One reading (present ticks)."""
        unwrapped = self.unwrap(present)
        self.latest = unwrapped
        if self.middle is None:
            return
        if not self.samples or self.samples[-1] != present:
            self.samples.append(present)
        self.low, self.high = min(self.low, unwrapped), max(self.high, unwrapped)

    def start(self) -> None:
        """The latest reading is the middle: the travel starts there."""
        self.middle = self.low = self.high = self.latest
        self.samples = [self.latest % RESOLUTION]

    def shown(self, unwrapped: int) -> int:
        """``unwrapped`` as the live table shows it: relative to the middle, which shows as 2048."""
        return unwrapped if self.middle is None else MIDDLE + unwrapped - self.middle


@dataclass(frozen=True)
class Row:
    """One line of the live table (ticks shown with the middle at 2048 once it is marked).

    Attributes:
        motor: the motor.
        position: where it is now (the present ticks before the middle is marked).
        low, high: the travel's ends so far (``None`` before the middle is marked).
        span_degrees: the travel in degrees.
    """

    motor: Motor
    position: int
    low: int | None
    high: int | None
    span_degrees: float


class CalibrationSession:
    """The servos of one bus being calibrated by hand (module docstring).

    Args:
        bus: the open bus.
        motors: the servos, in bus order.
        protocol: ``feetech`` or ``dynamixel`` (the homing offset's sign and limit).

    Raises:
        CalibrationError: no motors, two on one ID, or a full-turn joint named that is not one of them.
    """

    def __init__(self, bus: Bus, motors: Sequence[Motor], protocol: str) -> None:
        if not motors:
            raise CalibrationError(
                "no servos to calibrate: give --ids, or a parameter file whose bus section has joints"
            )
        ids = [m.id for m in motors]
        for motor in motors:
            if ids.count(motor.id) > 1:
                raise CalibrationError(f"{motor.who}: ID {motor.id} is given to two motors; every servo needs its own")
        self.bus = bus
        self.motors = tuple(motors)
        self.protocol = protocol
        self.offsets: dict[int, int] = {}
        self.travels = {m.id: Travel() for m in self.motors}
        self.middle_marked = False
        self._position = motors[0].model.block(["present_position"])

    # ------------------------------------------------------------------ step 1
    def start(self) -> None:
        """Find every servo, check its model, turn its torque off and read its homing offset.

        Raises:
            CalibrationError: servos that do not answer (their IDs, names and the baud tried),
                another model than configured; the bus's failures, naming the servo.
        """
        missing = []
        for motor in self.motors:
            reply = self._guard(motor, functools.partial(self.bus.ping, motor.id))
            if reply is None:
                missing.append(motor)
                continue
            number = reply.model_number
            if number is None:  # Feetech: the model number is a register
                number = self._guard(
                    motor, functools.partial(self.bus.read, motor.id, motor.model.register("model_number"))
                )
            if number != motor.model.model_number:
                found = model_by_number(self.protocol, number)
                raise CalibrationError(
                    f"{self.bus.name}: {motor.who} is model number {number} ({found.name if found else 'unknown'}), "
                    f"configured as {motor.model.name} ({motor.model.model_number}); fix the model or the ID"
                )
        if missing:
            raise CalibrationError(
                f"{self.bus.name}: servo ID(s) {', '.join(f'{m.id} ({m.name})' for m in missing)} did not answer a "
                f"ping at {self.bus.baud} baud; check the power supply, the cable to each, their IDs and their baud; "
                "nothing was written"
            )
        for motor in self.motors:
            self._guard(motor, functools.partial(self.bus.write, motor.id, motor.model.register("torque_enable"), 0))
            self.offsets[motor.id] = self._guard(
                motor, functools.partial(self.bus.read, motor.id, motor.model.register("homing_offset"))
            )
        self.sample()

    # ------------------------------------------------------------------ steps 2 and 3
    def sample(self) -> None:
        """Read every servo's present position (one sync read) into its travel.

        Raises:
            CalibrationError: a servo that did not answer within the bus's retries (named), or the port failing.
        """
        try:
            read = self.bus.sync_read([m.id for m in self.motors], self._position)
        except BusError as error:
            names = ", ".join(m.who for m in self.motors if m.id in error.servo_ids) or "the servos"
            raise CalibrationError(f"{error} ({names}); nothing was written") from None
        for servo_id, values in read.values.items():
            self.travels[servo_id].add(int(values["present_position"]) % RESOLUTION)

    def mark_middle(self) -> None:
        """Step 2's Enter: the latest reading is each joint's middle (and the start of its travel)."""
        for travel in self.travels.values():
            travel.start()
        self.middle_marked = True

    def rows(self) -> list[Row]:
        """The live table: each joint's position and, once the middle is marked, its travel so far."""
        out = []
        for motor in self.motors:
            travel = self.travels[motor.id]
            if not self.middle_marked:
                out.append(Row(motor, travel.latest % RESOLUTION, None, None, 0.0))
                continue
            span = math.degrees((travel.high - travel.low) * 2 * math.pi / RESOLUTION)
            out.append(
                Row(motor, travel.shown(travel.latest), travel.shown(travel.low), travel.shown(travel.high), span)
            )
        return out

    # ------------------------------------------------------------------ step 4
    def choose(self) -> dict[str, MotorCalibration]:
        """Each joint's calibration from its travel (module docstring, step 4).

        Returns:
            By motor name, in bus order.

        Raises:
            CalibrationError: the middle was never marked; one or more joints moved less than
                :data:`MIN_TRAVEL` ticks or over (nearly) a whole turn: every one named with its
                travel and what to do.
        """
        if not self.middle_marked:
            raise CalibrationError("the arm's middle was never marked (step 1's Enter); nothing was written")
        out: dict[str, MotorCalibration] = {}
        problems: list[str] = []
        for motor in self.motors:
            travel, offset = self.travels[motor.id], self.offsets[motor.id]
            try:
                if motor.full_turn:
                    middle = [int(travel.middle or 0) % RESOLUTION]
                    chosen = choose_homing(middle, protocol=self.protocol, current_offset=offset, motor=motor.name)
                    low, high = 0, RESOLUTION - 1
                else:
                    span = travel.high - travel.low
                    if span < MIN_TRAVEL:
                        raise CalibrationError(
                            f"motor '{motor.name}' (servo {motor.id}) moved {span} ticks "
                            f"({math.degrees(span * 2 * math.pi / RESOLUTION):.1f}°), less than {MIN_TRAVEL}: "
                            "move it through its whole range in step 2"
                        )
                    chosen = choose_homing(travel.samples, protocol=self.protocol, current_offset=offset,
                                           motor=motor.name)  # fmt: skip
                    low, high = chosen.range_min, chosen.range_max
                calibration = MotorCalibration(motor.id, motor.drive_mode, chosen.homing_offset, low, high)
                validate(motor.name, calibration, self.protocol)
            except CalibrationError as error:
                problems.append(str(error))
                continue
            out[motor.name] = calibration
        if problems:
            raise CalibrationError("cannot calibrate: " + "; ".join(problems) + "; nothing was written")
        return out

    # ------------------------------------------------------------------ step 5
    def write(self, calibrations: dict[str, MotorCalibration]) -> None:
        """Write each servo's homing offset and position limits to its EEPROM (torque off, unlocked, read back).

        Raises:
            CalibrationError: a servo whose torque is on, that refused or ignored the write, or did
                not answer (named; the servos before it were written).
        """
        for motor in self.motors:
            calibration = calibrations[motor.name]
            values = {
                "homing_offset": calibration.homing_offset,
                "min_position_limit": calibration.range_min,
                "max_position_limit": calibration.range_max,
            }
            self._guard(motor, functools.partial(write_eeprom, self.bus, motor.id, motor.model, values, who=motor.who))

    def torque_off(self) -> None:
        """Turn every servo's torque off again (best effort: a servo that does not answer is skipped)."""
        for motor in self.motors:
            try:
                self.bus.write(motor.id, motor.model.register("torque_enable"), 0)
            except BusError:
                continue

    def _guard(self, motor: Motor, call: Callable[[], _T]) -> _T:
        """``call()``, a bus failure as :class:`CalibrationError` naming ``motor``."""
        try:
            return call()
        except BusError as error:
            text = str(error)
            raise CalibrationError(text if motor.who in text else f"{motor.who}: {text}") from None


__all__ = ["MIDDLE", "MIN_TRAVEL", "CalibrationSession", "Motor", "Row", "Travel"]

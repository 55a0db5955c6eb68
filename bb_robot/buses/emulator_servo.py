"""One emulated servo: its register file, torque gating, homing-offset mapping and motion.

:class:`EmulatedServo` holds a model's registers (EEPROM and RAM) in a byte array, serves READ and
WRITE on them as the servo would, and moves its shaft: towards the goal along
:mod:`~bb_robot.buses.emulator_motion`'s profile while torque is on, by hand
(:meth:`EmulatedServo.move_by_hand`) while it is off. The shaft's position is kept as the
encoder's *actual* ticks; the present position comes out through the homing offset
(:func:`bb_robot.buses.calibration.present_from_actual`). Times are seconds on the caller's
clock: the servo has no clock of its own, so its motion can be checked at exact times.

Rules it keeps (docs/buses.md, "The emulator"):

- EEPROM registers are written only with torque off (and, on Feetech, with ``lock`` 0); a
  refused write leaves the register as it was (Dynamixel answers with an access error);
- goals outside the position limits: Feetech clamps them, Dynamixel refuses (data limit error);
- torque on sets the goal to the present position (the servo holds where it is);
- overheating sets the status bit (Feetech) or Hardware Error Status and the alert bit
  (Dynamixel), and turns torque off.
"""

from __future__ import annotations

from dataclasses import dataclass

from bb_robot.buses.calibration import actual_from_present, present_from_actual
from bb_robot.buses.dynamixel import ALERT
from bb_robot.buses.emulator_motion import INSTANT, Profile, plan, rest
from bb_robot.buses.tables import Area, Model, Register
from bb_robot.errors import BbRobotError

#: Where each protocol's RAM starts (everything below is EEPROM).
RAM_START = {"feetech": 40, "dynamixel": 64}
#: Dynamixel status error numbers the emulator sends.
DATA_LIMIT, ACCESS = 6, 7
#: Status bits for overheating.
FEETECH_OVERHEAT, DYNAMIXEL_OVERHEAT = 0x04, 0x04


class ServoError(BbRobotError):
    """An emulated servo asked for something it cannot do (a value its register cannot hold)."""


@dataclass
class Refusal:
    """A write the servo refused, and why (the emulator counts and reports them)."""

    servo_id: int
    address: int
    reason: str


class EmulatedServo:
    """A servo's registers and shaft.

    Args:
        model: the control table.
        servo_id: its ID (written to the ``id`` register).
        eeprom: register values over the model's defaults (calibration, limits, baud, ...).
        present: the present position to start at (ticks); the middle of the limits by default.
    """

    def __init__(self, model: Model, servo_id: int, eeprom: dict[str, int] | None = None, present: int | None = None):
        self.model = model
        self.protocol = model.protocol
        self.memory = bytearray(256)
        for name, value in {**model.defaults, **(eeprom or {}), "id": servo_id}.items():
            self.poke(name, value)
        if present is None:
            present = (self.peek("min_position_limit") + self.peek("max_position_limit")) // 2
        self.actual = float(actual_from_present(present, self.peek("homing_offset"), self.protocol))
        self.profile: Profile = rest(self.actual, 0.0)
        self.velocity = 0.0
        self.overheated = False
        self.refusals: list[Refusal] = []
        self._hand: tuple[float, float, float, float] | None = None  # t0, from, t1, to (actual ticks)

    # ------------------------------------------------------------------ registers by name
    def poke(self, name: str, value: int) -> None:
        """Set a register by name, bypassing every rule (set-up and the emulator's own registers).

        Raises:
            ServoError: a value the register cannot hold.
        """
        register = self.model.register(name)
        try:
            self.memory[register.address : register.address + register.size] = register.encode(value)
        except BbRobotError as error:
            raise ServoError(f"servo {self.servo_id if name != 'id' else value}: {error}") from None

    def peek(self, name: str) -> int:
        """A register's value by name."""
        register = self.model.register(name)
        return register.decode(self.memory[register.address : register.address + register.size])

    @property
    def servo_id(self) -> int:
        """The ``id`` register."""
        return self.memory[self.model.register("id").address]

    @property
    def torque(self) -> bool:
        """Whether torque is on."""
        return bool(self.peek("torque_enable"))

    @property
    def baud(self) -> int:
        """The baud rate the servo listens at (its ``baud_rate`` register)."""
        return self.model.baud_rates.get(self.peek("baud_rate"), 0)

    def present(self) -> float:
        """The present position (ticks, not rounded)."""
        whole = present_from_actual(int(self.actual // 1), self.peek("homing_offset"), self.protocol)
        return whole + (self.actual - self.actual // 1)

    # ------------------------------------------------------------------ motion
    def speed_limits(self) -> tuple[float, float]:
        """The profile's top speed (ticks/s) and acceleration (ticks/s²) from the registers."""
        top = self.model.no_load_speed
        speed: float
        if self.protocol == "feetech":
            speed = abs(self.peek("goal_velocity"))
            accel = self.peek("acceleration") * 100.0
        else:
            speed = self.peek("profile_velocity") * 0.229 * 4096 / 60
            accel = self.peek("profile_acceleration") * 214.577 * 4096 / 3600
        return (min(speed, top) if speed else top), (accel or INSTANT)

    def advance(self, t: float) -> None:
        """Move the shaft to where it is at time ``t``."""
        if self.torque:
            self.actual, self.velocity = self.profile.state(t)
        elif self._hand is not None:
            t0, start, t1, end = self._hand
            if t >= t1:
                self.actual, self.velocity, self._hand = end, 0.0, None
            else:
                fraction = max(0.0, (t - t0) / (t1 - t0))
                self.actual, self.velocity = start + fraction * (end - start), (end - start) / (t1 - t0)
        else:
            self.velocity = 0.0

    def _replan(self, t: float) -> None:
        self.advance(t)
        goal_present = self.peek("goal_position")
        target = self.actual + (goal_present - self.present())
        speed, accel = self.speed_limits()
        self.profile = plan(self.actual, self.velocity, target, speed, accel, t)

    def move_by_hand(self, present: float, t: float, duration: float = 0.0) -> bool:
        """Move the shaft by hand to ``present`` ticks, linearly over ``duration`` seconds from ``t``.

        Returns:
            ``False`` (and nothing moves) while torque is on: the servo holds against the hand.
        """
        self.advance(t)
        if self.torque:
            return False
        target = self.actual + (present - self.present())
        if duration <= 0:
            self.actual, self._hand = target, None
        else:
            self._hand = (t, self.actual, t + duration, target)
        return True

    def overheat(self, t: float) -> None:
        """Overheat: temperature over its limit, the status bits set, torque off."""
        self.advance(t)
        self.overheated = True
        self.poke("torque_enable", 0)
        self.profile = rest(self.actual, t)

    # ------------------------------------------------------------------ the protocol's view
    def error_byte(self) -> int:
        """The error byte of the next status packet (status bits, or Dynamixel's alert bit)."""
        if not self.overheated:
            return 0
        return FEETECH_OVERHEAT if self.protocol == "feetech" else ALERT

    def _refresh(self, t: float) -> None:
        self.advance(t)
        present = round(self.present()) % self.model.resolution
        velocity = round(self.velocity)
        moving = int(self.torque and self.profile.moving(t)) or int(abs(self.velocity) > 0)
        limit = self.peek("max_temperature_limit")
        values = {
            "present_position": present,
            "present_velocity": velocity if self.protocol == "feetech" else round(velocity * 60 / (0.229 * 4096)),
            "moving": moving,
            "present_temperature": limit + 5 if self.overheated else 30,
        }
        if self.protocol == "feetech":
            values["status"] = self.error_byte()
        else:
            values["hardware_error"] = DYNAMIXEL_OVERHEAT if self.overheated else 0
        for name, value in values.items():
            register = self.model.register(name)
            lo, hi = register.limits
            self.poke(name, max(lo, min(hi, value)))

    def read(self, address: int, length: int, t: float) -> bytes:
        """Serve READ: the bytes at ``address`` at time ``t`` (presents refreshed first)."""
        self._refresh(t)
        return bytes(self.memory[address : address + length])

    def write(self, address: int, data: bytes, t: float) -> int:
        """Serve WRITE at time ``t``; returns the status error byte (0, or Dynamixel's error number).

        A refused write changes nothing and is recorded in :attr:`refusals`.
        """
        self.advance(t)
        end = address + len(data)
        if end > len(self.memory):
            return self._refuse(address, "beyond the control table", DATA_LIMIT)
        touched = [r for r in self.model.registers.values() if r.address < end and address < r.address + r.size]
        for register in touched:
            if not register.writable:
                return self._refuse(address, f"{register.name} is read-only", ACCESS)
        if address < RAM_START[self.protocol]:
            if self.torque:
                return self._refuse(address, "EEPROM write while torque is on", ACCESS)
            if self.protocol == "feetech" and self.peek("lock"):
                return self._refuse(address, "EEPROM write while lock is 1", ACCESS)
        values = {r.name: r.decode(self._merged(r, address, data)) for r in touched}
        goal = values.get("goal_position")
        if goal is not None:
            low, high = self.peek("min_position_limit"), self.peek("max_position_limit")
            if not low <= goal <= high:
                if self.protocol == "dynamixel":
                    return self._refuse(address, f"goal {goal} outside the limits {low}..{high}", DATA_LIMIT)
                data = self._clamped(data, address, max(low, min(high, goal)))
        torque_was = self.torque
        self.memory[address:end] = data
        if self.overheated and self.torque:  # an overheated servo keeps torque off
            self.poke("torque_enable", 0)
        if self.torque and not torque_was:
            self.poke("goal_position", round(self.present()) % self.model.resolution)
            self.profile = rest(self.actual, t)
            self._hand = None
        elif self.torque and any(
            r.name in ("goal_position", "goal_velocity", "acceleration", "profile_velocity", "profile_acceleration")
            for r in touched
        ):
            self._replan(t)
        elif not self.torque and torque_was:
            self.profile = rest(self.actual, t)
        return 0

    def _merged(self, register: Register, address: int, data: bytes) -> bytes:
        current = bytearray(self.memory[register.address : register.address + register.size])
        for offset in range(register.size):
            at = register.address + offset - address
            if 0 <= at < len(data):
                current[offset] = data[at]
        return bytes(current)

    def _clamped(self, data: bytes, address: int, goal: int) -> bytes:
        register = self.model.register("goal_position")
        out = bytearray(data)
        at = register.address - address
        out[at : at + register.size] = register.encode(goal)
        return bytes(out)

    def _refuse(self, address: int, reason: str, number: int) -> int:
        self.refusals.append(Refusal(self.servo_id, address, reason))
        return number if self.protocol == "dynamixel" else 0

    def area_of(self, address: int) -> Area:
        """EEPROM or RAM, by address."""
        return Area.EEPROM if address < RAM_START[self.protocol] else Area.RAM

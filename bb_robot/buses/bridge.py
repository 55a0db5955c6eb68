"""The bus bridge's logic without ROS: start-up checks, one cycle, goals made safe, torque off.

``bb-robot bus`` (:mod:`bb_robot.nodes.bus`) serves the actuators backend's topics
(docs/nodes/actuators.md) for servos on one bus; everything it decides is here, so that it can be
tested over the emulator's pty without ROS:

- :meth:`Bridge.start` — ping every configured ID (naming the missing ones and the baud tried),
  check each model number, set the return delay to 0 where torque is off (EEPROM is never
  written while torque is on), compare the EEPROM (homing offset, position limits) with the
  calibration and name each difference, read the present positions and seed the goals with them.
- :meth:`Bridge.cycle` — one sync read (positions and velocities; a servo that does not answer
  gives no value that cycle), the goals (the latest command, clamped to the URDF's and the
  EEPROM's limits, whichever is narrower, each step capped at the servo's speed limit; on command
  silence ``hold`` where the servo is, or ``torque_off``), torque on at a servo's first command
  (its goal seeded first), one sync write.
- :meth:`Bridge.poll` — temperature, voltage and the hardware-error bits, less often.
- :meth:`Bridge.torque_off` — on exit, with retries.

A servo with a hardware error (overheating, overload, …) has its torque turned off and gets no
feedback from then on, so the driver's staleness rules take over (docs/buses.md, "The bridge").
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from bb_robot.buses.bridge_setup import Mapping as TickMapping
from bb_robot.buses.bridge_setup import ServoSpec
from bb_robot.buses.dynamixel import ALERT, describe_hardware_error
from bb_robot.buses.eeprom import write_eeprom
from bb_robot.buses.transport import Bus, BusError
from bb_robot.buses.units import TICK, to_si
from bb_robot.errors import BbRobotError

_T = TypeVar("_T")

SILENCE_ACTIONS = ("hold", "torque_off")
#: The latency allowance (s) per transaction while starting, and the tries after the first: start-up
#: is not time-critical, and a slow adapter or a loaded host must not make a servo look missing (a
#: missing servo is named after 5 × 0.1 s).
START_LATENCY = 0.1
START_RETRIES = 4
#: A gap between two cycles longer than this (s) is not made up for: the step cap uses at most this much time.
MAX_STEP_TIME = 0.02


class BridgeError(BbRobotError):
    """The bridge cannot start or go on (the message names the port, servo, joint, register and what to do).

    Attributes:
        kind: ``missing`` (servos that do not answer), ``model`` (another model), ``eeprom`` (EEPROM
            differs from the calibration), ``limits`` (no travel left), ``port`` (the port failed),
            ``bus`` (a transaction failed for good).
    """

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class ServoState:
    """What the bridge knows of one servo (ticks are present positions)."""

    spec: ServoSpec
    mapping: TickMapping
    #: The travel the goals are clamped to: the EEPROM's limits, narrowed by the URDF's.
    low: int = 0
    high: int = 4095
    eeprom_low: int = 0
    eeprom_high: int = 4095
    present: float = math.nan
    velocity: float = 0.0
    #: The goal last written (ticks, not rounded).
    goal: float = math.nan
    #: The latest position command (rad) and when it came (bridge clock; None: none yet).
    target: float = math.nan
    commanded_at: float | None = None
    torque: bool = False
    silenced: bool = False
    #: Status / Hardware Error bits last seen; a servo with one set is out of service.
    error_bits: int = 0
    #: Error bits seen once: a servo fails when the same bits come in two reads running (a late
    #: reply of another register taken for the status byte does not put a servo out of service).
    suspect_bits: int = 0
    failed: bool = False
    temperature: float = math.nan
    voltage: float = math.nan
    #: Whether this cycle's read answered (a servo that did not gets no feedback).
    fresh: bool = False
    missed: int = 0

    @property
    def angle(self) -> float:
        """The present joint angle (rad)."""
        return self.mapping.to_angle(self.present)

    @property
    def angular_velocity(self) -> float:
        """The present joint velocity (rad/s)."""
        return self.velocity * self.mapping.slope


@dataclass(frozen=True)
class Feedback:
    """One servo's measurement of this cycle."""

    joint: str
    position: float
    velocity: float


@dataclass
class BridgeEvents:
    """What happened since it was last taken: messages for the log (level, text)."""

    messages: list[tuple[str, str]] = field(default_factory=list)

    def say(self, level: str, text: str) -> None:
        self.messages.append((level, text))

    def take(self) -> list[tuple[str, str]]:
        taken, self.messages = self.messages, []
        return taken


class Bridge:
    """The servos of one bus, as the bridge drives them.

    Args:
        bus: the open bus.
        servos: the configured servos.
        silence_timeout: seconds without a command after which ``silence_action`` applies (0: never).
        silence_action: ``hold`` (the goal becomes where the servo is) or ``torque_off``.
        clock: the time (s) the silence and the step cap are measured with.
        max_step_time: the longest gap between two cycles a goal's step is allowed for (s): a
            stalled loop does not make up for the time it lost.
    """

    def __init__(
        self,
        bus: Bus,
        servos: Sequence[ServoSpec],
        *,
        silence_timeout: float = 0.25,
        silence_action: str = "hold",
        clock: Callable[[], float] = time.monotonic,
        max_step_time: float = MAX_STEP_TIME,
    ) -> None:
        if silence_action not in SILENCE_ACTIONS:
            raise BridgeError(f"silence_action '{silence_action}' is not one of {', '.join(SILENCE_ACTIONS)}", "usage")
        self.bus = bus
        self.silence_timeout = silence_timeout
        self.silence_action = silence_action
        self.clock = clock
        self.max_step_time = max_step_time
        self.events = BridgeEvents()
        self.servos = {s.joint: ServoState(s, s.mapping_for(None) if s.mapping == "angle" else _unit()) for s in servos}
        self.by_id = {state.spec.id: state for state in self.servos.values()}
        self.urdf_limits: dict[str, tuple[float, float]] = {}
        #: When set, goals are not written and torque is not turned on (a port back after a loss,
        #: until the driver is armed again).
        self.gated = False
        self._model = servos[0].model
        self._read = self._model.block(["present_position", "present_velocity"])
        self._write = self._model.block(["goal_position"])
        self._last_cycle: float | None = None

    # ------------------------------------------------------------------ start-up
    def start(self) -> list[str]:
        """The start-up checks (module docstring); returns warnings for the log.

        Raises:
            BridgeError: servos that do not answer (kind ``missing``), another model (``model``),
                EEPROM that differs from the calibration (``eeprom``), a bus failure.
        """
        bus = self.bus
        saved = bus.latency, bus.retries
        bus.latency, bus.retries = max(bus.latency, START_LATENCY), max(bus.retries, START_RETRIES)
        try:
            return self._start()
        finally:
            bus.latency, bus.retries = saved

    def _start(self) -> list[str]:
        bus, warnings = self.bus, []
        missing = []
        for state in self.servos.values():
            reply = self._guard(functools.partial(bus.ping, state.spec.id))
            if reply is None:
                missing.append(state)
            elif reply.model_number is not None and reply.model_number != state.spec.model.model_number:
                raise BridgeError(
                    f"{bus.name}: servo {state.spec.id} ({state.spec.joint}) is model number {reply.model_number}, "
                    f"configured as {state.spec.model.name} ({state.spec.model.model_number}); fix servos."
                    f"{state.spec.joint}.model or the ID",
                    "model",
                )
        if missing:
            names = ", ".join(f"{s.spec.id} ({s.spec.joint})" for s in missing)
            raise BridgeError(
                f"{bus.name}: servo ID(s) {names} did not answer a ping at {bus.baud} baud; check the power supply, "
                f"the cable to each, their IDs, and their baud (a new servo is at its factory baud: set it with the "
                f"vendor's tool or LeRobot's motor setup)",
                "missing",
            )
        for state in self.servos.values():
            warnings += self._start_servo(state)
        return warnings

    def _start_servo(self, state: ServoState) -> list[str]:
        spec, bus, table = state.spec, self.bus, state.spec.model
        warnings = []
        state.torque = bool(self._guard(lambda: bus.read(spec.id, table.register("torque_enable"))))
        delay = self._guard(lambda: bus.read(spec.id, table.register("return_delay")))
        if delay:
            if state.torque:
                warnings.append(
                    f"{bus.name}: servo {spec.id} ({spec.joint}) has return delay {delay} ({2 * delay} us) and torque "
                    "on: not changed (EEPROM is never written while torque is on); turn its torque off and restart"
                )
            else:
                self._write_eeprom(state, "return_delay", 0)
                warnings.append(f"{bus.name}: servo {spec.id} ({spec.joint}): return delay {2 * delay} us set to 0")
        eeprom = {
            name: self._guard(functools.partial(bus.read, spec.id, table.register(name)))
            for name in ("homing_offset", "min_position_limit", "max_position_limit")
        }
        if spec.calibration_file:
            expected = {
                "homing_offset": spec.calibration.homing_offset,
                "min_position_limit": spec.calibration.range_min,
                "max_position_limit": spec.calibration.range_max,
            }
            wrong = [
                f"{name} {eeprom[name]} (file: {value})" for name, value in expected.items() if eeprom[name] != value
            ]
            if wrong:
                raise BridgeError(
                    f"{bus.name}: servo {spec.id} ({spec.joint}): EEPROM differs from calibration file "
                    f"{spec.calibration_file}: {', '.join(wrong)}; the arm was calibrated otherwise: give its own "
                    "calibration file, or write this one to the servos (calibrate again)",
                    "eeprom",
                )
        state.eeprom_low, state.eeprom_high = int(eeprom["min_position_limit"]), int(eeprom["max_position_limit"])
        if state.eeprom_low >= state.eeprom_high:  # 0/0 (X series in multi-turn): the whole turn
            state.eeprom_low, state.eeprom_high = 0, table.resolution - 1
        self._clamp_range(state)
        state.present = float(self._guard(lambda: bus.read(spec.id, table.register("present_position"))))
        state.goal, state.target, state.commanded_at, state.silenced = state.present, math.nan, None, False
        state.error_bits, state.failed, state.missed = 0, False, 0
        return warnings

    def _write_eeprom(self, state: ServoState, name: str, value: int) -> None:
        """Write an EEPROM register of a servo whose torque is off (:func:`~bb_robot.buses.eeprom.write_eeprom`)."""
        spec = state.spec
        self._guard(lambda: write_eeprom(self.bus, spec.id, spec.model, {name: value},
                                         who=f"servo {spec.id} ({spec.joint})"))  # fmt: skip

    def set_limits(self, joint: str, lower: float | None, upper: float | None) -> None:
        """The URDF's limits of ``joint`` (from the actuator index): goals stay within them too."""
        state = self.servos.get(joint)
        if state is None or lower is None or upper is None:
            return
        self.urdf_limits[joint] = (float(lower), float(upper))
        if state.spec.mapping == "percent":
            state.mapping = state.spec.mapping_for((float(lower), float(upper)))
        self._clamp_range(state)

    def _clamp_range(self, state: ServoState) -> None:
        low, high = state.eeprom_low, state.eeprom_high
        limits = self.urdf_limits.get(state.spec.joint)
        if limits is not None:
            ends = sorted(state.mapping.to_ticks(value) for value in limits)
            low, high = max(low, math.ceil(ends[0] - 1e-6)), min(high, math.floor(ends[1] + 1e-6))
        if low > high:
            raise BridgeError(
                f"{self.bus.name}: servo {state.spec.id} ({state.spec.joint}): the URDF's limits "
                f"{limits} and the EEPROM's {state.eeprom_low}..{state.eeprom_high} ticks leave no travel; check the "
                "calibration and the servo's direction",
                "limits",
            )
        state.low, state.high = low, high

    # ------------------------------------------------------------------ commands
    def command(self, joint: str, position: float) -> None:
        """The latest position command (rad) of ``joint``; a value that is not finite is ignored."""
        state = self.servos.get(joint)
        if state is not None and math.isfinite(position):
            state.target, state.commanded_at, state.silenced = float(position), self.clock(), False

    # ------------------------------------------------------------------ the cycle
    def cycle(self, take_commands: Callable[[], None] | None = None) -> list[Feedback]:
        """Read, decide the goals, write; returns the feedback of the servos that answered.

        Args:
            take_commands: called between the read and the goals (the node's command topics): the goals
                then follow the newest commands, including those that came during the read's transaction.

        Raises:
            BridgeError: the port failed (kind ``port``): nothing more can be said to the servos.
        """
        now = self.clock()
        dt = 0.0 if self._last_cycle is None else now - self._last_cycle
        self._last_cycle = now
        states = [s for s in self.servos.values() if not s.failed]
        read = self._guard(lambda: self.bus.sync_read([s.spec.id for s in states], self._read, allow_missing=True))
        feedback = []
        for state in states:
            values = read.values.get(state.spec.id)
            state.fresh = values is not None
            if values is None:
                state.missed += 1
                if state.missed == 1:
                    self.events.say(
                        "warn", f"{self.bus.stats.last_error} (no feedback of {state.spec.joint} this cycle)"
                    )
                continue
            state.missed = 0
            state.present = float(values["present_position"])
            state.velocity = to_si(state.spec.model, "present_velocity", values["present_velocity"]) / TICK
            self._status(state, read.status.get(state.spec.id, 0))
            if not state.failed:
                feedback.append(Feedback(state.spec.joint, state.angle, state.angular_velocity))
        if take_commands is not None:
            take_commands()
        if not self.gated:
            self._goals(now, dt)
        return feedback

    def _status(self, state: ServoState, error: int) -> None:
        spec = state.spec
        if spec.model.protocol == "feetech":
            bits = error
        elif error & ALERT:
            bits = self._guard(lambda: self.bus.read(spec.id, spec.model.register("hardware_error"))) or ALERT
        else:
            bits = 0
        self._seen(state, bits)

    def _seen(self, state: ServoState, bits: int) -> None:
        """Error bits read from ``state``: the servo fails at the second read running that has them."""
        if bits and bits == state.suspect_bits and not state.failed:
            self._fail(state, bits)
        state.suspect_bits = bits

    def _fail(self, state: ServoState, bits: int) -> None:
        spec = state.spec
        state.error_bits, state.failed = bits, True
        names = ", ".join(self.describe(state)) or f"bits 0x{bits:02x}"
        off = self._torque(state, False)
        self.events.say(
            "error",
            f"{self.bus.name}: servo {spec.id} ({spec.joint}) reports a hardware error: {names}; its torque "
            f"{'is off' if off else 'could not be turned off'} and its feedback stops, so the driver's staleness "
            "rules take over (stale_action). Let it cool down / remove the load, power-cycle the servo and restart",
        )

    def describe(self, state: ServoState) -> list[str]:
        """The names of the error bits of ``state``."""
        if state.spec.model.protocol == "feetech":
            return self.bus.codec.describe_error(state.error_bits)
        return describe_hardware_error(state.error_bits & 0x7F) or (["alert"] if state.error_bits else [])

    def _goals(self, now: float, dt: float) -> None:
        dt = min(dt, self.max_step_time)
        goals: dict[int, dict[str, int]] = {}
        for state in self.servos.values():
            if state.failed or math.isnan(state.present):
                continue
            if state.commanded_at is None:
                continue  # never commanded: torque stays as it is, nothing is written
            silent = self.silence_timeout > 0 and now - state.commanded_at >= self.silence_timeout
            if silent and not state.silenced:
                state.silenced = True
                state.goal = state.present
                self.events.say(
                    "warn",
                    f"{state.spec.joint}: no command for {self.silence_timeout:g} s: "
                    + ("holding where it is" if self.silence_action == "hold" else "torque off (it may fall)"),
                )
                if self.silence_action == "torque_off":
                    self._torque(state, False)
            if state.silenced:
                if state.torque:
                    goals[state.spec.id] = {"goal_position": round(state.goal)}
                continue
            if not state.torque:
                state.goal = min(max(state.present, state.low), state.high)  # seeded before torque on
                self._write_goal(state)
                if not self._torque(state, True):
                    continue
            target = min(max(state.mapping.to_ticks(state.target), state.low), state.high)
            step = state.spec.speed_limit / abs(state.mapping.slope) * dt
            state.goal = min(max(target, state.goal - step), state.goal + step)
            goals[state.spec.id] = {"goal_position": round(state.goal)}
        if goals:
            self._guard(lambda: self.bus.sync_write(self._write, goals))

    def _write_goal(self, state: ServoState) -> None:
        self._guard(
            lambda: self.bus.write(state.spec.id, state.spec.model.register("goal_position"), round(state.goal))
        )

    def _torque(self, state: ServoState, on: bool) -> bool:
        """Turn torque on or off; True when the servo confirmed it."""
        try:
            self.bus.write(state.spec.id, state.spec.model.register("torque_enable"), int(on))
        except BusError as error:
            if error.kind == "port":
                raise BridgeError(str(error), "port") from None
            self.events.say("error", f"torque {'on' if on else 'off'}: {error}")
            return False
        state.torque = on
        return True

    # ------------------------------------------------------------------ polling, ending
    def poll(self) -> None:
        """Read each servo's temperature and voltage, and its error bits (Feetech's status register,
        Dynamixel's Hardware Error Status): one block read per servo."""
        errors = "status" if self._model.protocol == "feetech" else "hardware_error"
        block = self._model.block(["present_voltage", "present_temperature", errors])
        for state in self.servos.values():
            spec = state.spec
            try:
                values = self.bus.read_block(spec.id, block)
            except BusError as error:
                if error.kind == "port":
                    raise BridgeError(str(error), "port") from None
                continue
            state.voltage = to_si(spec.model, "present_voltage", values["present_voltage"])
            state.temperature = to_si(spec.model, "present_temperature", values["present_temperature"])
            self._seen(state, values[errors])

    def torque_off(self, attempts: int = 5) -> list[ServoState]:
        """Turn every servo's torque off, each up to ``attempts`` times; returns those that did not confirm."""
        left = list(self.servos.values())
        for _ in range(max(1, attempts)):
            still = []
            for state in left:
                try:
                    self.bus.write(state.spec.id, state.spec.model.register("torque_enable"), 0)
                    state.torque = False
                except BusError as error:
                    still.append(state)
                    if error.kind == "port":
                        return left
            left = still
            if not left:
                break
        return left

    def _guard(self, call: Callable[[], _T]) -> _T:
        """``call()``, its port failure as :class:`BridgeError` kind ``port``, other failures kind ``bus``."""
        try:
            return call()
        except BusError as error:
            raise BridgeError(str(error), "port" if error.kind == "port" else "bus") from None


def _unit() -> TickMapping:
    """A placeholder mapping for a percent servo before the joint's limits are known (0..4095 → 0..1 rad)."""
    return TickMapping(0.0, 1.0 / 4095)


def feedback_values(feedback: Sequence[Feedback]) -> Mapping[str, tuple[float, float]]:
    """Joint → (position, velocity) of ``feedback``."""
    return {f.joint: (f.position, f.velocity) for f in feedback}


__all__ = ["SILENCE_ACTIONS", "Bridge", "BridgeError", "Feedback", "ServoState", "feedback_values"]

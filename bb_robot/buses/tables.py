"""Control tables of the supported servo models, for the registers bb_robot uses.

Each :class:`Model` maps bb_robot's register names (the same name for the same meaning in every
model: ``goal_position``, ``present_position``, ``homing_offset``, …) to a :class:`Register`:
address, size, area (EEPROM keeps its value over a power cycle and is written only while torque
is off; RAM does not), access, and how a value is signed. :class:`Block` is a run of registers
read or written in one transaction. Addresses are from the vendors' published control tables
(Feetech's STS3215 memory table; ROBOTIS's e-Manual pages of the XL330, XL430 and XM430).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bb_robot.errors import BbRobotError


class TableError(BbRobotError):
    """A register, model or value the control tables do not have or cannot hold."""


class Area(enum.Enum):
    """Where a register lives."""

    EEPROM = "EEPROM"
    RAM = "RAM"


class Sign(enum.Enum):
    """How a register holds negative values."""

    UNSIGNED = "unsigned"
    TWOS = "two's complement"
    #: Feetech: the magnitude in the low bits, the sign in one bit (``Register.sign_bit``).
    MAGNITUDE = "sign-magnitude"


@dataclass(frozen=True)
class Register:
    """One register of a control table.

    Attributes:
        name: bb_robot's name (the same meaning has the same name in every model).
        address: the first byte's address.
        size: bytes (1, 2 or 4), little-endian.
        area: EEPROM or RAM.
        writable: whether the register may be written.
        sign: how negative values are held.
        sign_bit: the sign bit of a sign-magnitude register.
        unit: what one count is, for people (``docs/buses.md``).
    """

    name: str
    address: int
    size: int
    area: Area
    writable: bool
    sign: Sign = Sign.UNSIGNED
    sign_bit: int = 0
    unit: str = ""

    @property
    def limits(self) -> tuple[int, int]:
        """The smallest and largest value the register holds."""
        bits = 8 * self.size
        if self.sign is Sign.TWOS:
            return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if self.sign is Sign.MAGNITUDE:
            return -((1 << self.sign_bit) - 1), (1 << self.sign_bit) - 1
        return 0, (1 << bits) - 1

    def encode(self, value: int) -> bytes:
        """Return ``value`` as the register's bytes.

        Raises:
            TableError: a value outside :attr:`limits`, naming the register and its range.
        """
        lo, hi = self.limits
        if not lo <= value <= hi:
            raise TableError(f"register {self.name} (address {self.address}) holds {lo}..{hi}; {value} does not fit")
        if self.sign is Sign.MAGNITUDE:
            raw = abs(value) | ((1 << self.sign_bit) if value < 0 else 0)
        else:
            raw = value % (1 << (8 * self.size))
        return raw.to_bytes(self.size, "little")

    def decode(self, data: bytes | bytearray | memoryview) -> int:
        """Return the value of the register's bytes (exactly :attr:`size` of them)."""
        raw = int.from_bytes(data, "little")
        if self.sign is Sign.TWOS and raw >= 1 << (8 * self.size - 1):
            return raw - (1 << (8 * self.size))
        if self.sign is Sign.MAGNITUDE:
            magnitude = raw & ((1 << self.sign_bit) - 1)
            return -magnitude if raw & (1 << self.sign_bit) else magnitude
        return raw


@dataclass(frozen=True)
class Block:
    """Registers read or written together: one address range, one transaction.

    Attributes:
        registers: in address order.
        address: the first register's address.
        length: bytes from the first register's first byte to the last one's last byte.
        contiguous: whether the registers cover every byte of the range (needed to write it).
    """

    registers: tuple[Register, ...]
    address: int
    length: int
    contiguous: bool

    @property
    def names(self) -> tuple[str, ...]:
        """The registers' names, in address order."""
        return tuple(register.name for register in self.registers)

    def decode(self, data: bytes | bytearray | memoryview) -> dict[str, int]:
        """Return every register's value from the block's bytes.

        Raises:
            TableError: ``data`` not :attr:`length` bytes long.
        """
        if len(data) != self.length:
            raise TableError(f"block {self.names} is {self.length} bytes, got {len(data)}")
        out = {}
        for register in self.registers:
            at = register.address - self.address
            out[register.name] = register.decode(data[at : at + register.size])
        return out

    def encode(self, values: Mapping[str, int]) -> bytes:
        """Return the block's bytes from a value for each register.

        Raises:
            TableError: a register without a value, a value that does not fit, or a block with gaps.
        """
        if not self.contiguous:
            raise TableError(f"block {self.names} has gaps between its registers and cannot be written at once")
        missing = [name for name in self.names if name not in values]
        if missing:
            raise TableError(f"block {self.names}: no value for {', '.join(missing)}")
        return b"".join(register.encode(values[register.name]) for register in self.registers)


@dataclass(frozen=True)
class Model:
    """A servo model's control table and the facts the bus and the emulator need.

    Attributes:
        name: bb_robot's name (``sts3215``, ``xl330-m288``, ``xl430-w250``, ``xm430-w350``, …).
        protocol: ``"feetech"`` or ``"dynamixel"``.
        model_number: what the servo answers to a ping (Dynamixel) or holds at ``model_number``.
        registers: by name.
        baud_rates: the ``baud_rate`` register's value → bits per second.
        defaults: factory values of the registers the emulator starts from.
        no_load_speed: ticks per second at full speed (the emulator's top speed).
        resolution: encoder ticks per turn.
    """

    name: str
    protocol: str
    model_number: int
    registers: Mapping[str, Register]
    baud_rates: Mapping[int, int]
    defaults: Mapping[str, int] = field(default_factory=dict)
    no_load_speed: float = 3000.0
    resolution: int = 4096

    def register(self, name: str) -> Register:
        """Return the register called ``name``.

        Raises:
            TableError: naming the model and the registers it has.
        """
        try:
            return self.registers[name]
        except KeyError:
            raise TableError(
                f"servo model {self.name} has no register '{name}'; it has: {', '.join(sorted(self.registers))}"
            ) from None

    def block(self, names: Iterable[str]) -> Block:
        """Return the block of the named registers (any order; sorted by address).

        Raises:
            TableError: an unknown register name, or no names at all.
        """
        registers = sorted({self.register(name) for name in names}, key=lambda r: r.address)
        if not registers:
            raise TableError(f"servo model {self.name}: a block needs at least one register")
        start = registers[0].address
        end = max(r.address + r.size for r in registers)
        covered = sum(r.size for r in registers)
        return Block(tuple(registers), start, end - start, covered == end - start)

    def baud_code(self, baud: int) -> int:
        """Return the ``baud_rate`` register value of ``baud`` bits per second.

        Raises:
            TableError: a baud the model does not offer, listing those it does.
        """
        for code, rate in self.baud_rates.items():
            if rate == baud:
                return code
        raise TableError(f"servo model {self.name} offers no {baud} baud; it offers {sorted(self.baud_rates.values())}")


E, R = Area.EEPROM, Area.RAM
Row = tuple[str, int, int, Area, bool, Sign, int, str]


def _registers(rows: Sequence[Row]) -> dict[str, Register]:
    return {row[0]: Register(*row) for row in rows}


U, T, M = Sign.UNSIGNED, Sign.TWOS, Sign.MAGNITUDE

STS3215_ROWS: tuple[Row, ...] = (
    ("firmware_major", 0, 1, E, False, U, 0, ""),
    ("firmware_minor", 1, 1, E, False, U, 0, ""),
    ("model_number", 3, 2, E, False, U, 0, ""),
    ("id", 5, 1, E, True, U, 0, ""),
    ("baud_rate", 6, 1, E, True, U, 0, "code (baud_rates)"),
    ("return_delay", 7, 1, E, True, U, 0, "2 us"),
    ("status_return_level", 8, 1, E, True, U, 0, ""),
    ("min_position_limit", 9, 2, E, True, U, 0, "tick"),
    ("max_position_limit", 11, 2, E, True, U, 0, "tick"),
    ("max_temperature_limit", 13, 1, E, True, U, 0, "degC"),
    ("max_voltage_limit", 14, 1, E, True, U, 0, "0.1 V"),
    ("min_voltage_limit", 15, 1, E, True, U, 0, "0.1 V"),
    ("max_torque_limit", 16, 2, E, True, U, 0, "0.1 %"),
    ("p_coefficient", 21, 1, E, True, U, 0, ""),
    ("d_coefficient", 22, 1, E, True, U, 0, ""),
    ("i_coefficient", 23, 1, E, True, U, 0, ""),
    ("homing_offset", 31, 2, E, True, M, 11, "tick"),
    ("operating_mode", 33, 1, E, True, U, 0, "0 position, 1 velocity, 2 PWM, 3 step"),
    ("torque_enable", 40, 1, R, True, U, 0, ""),
    ("acceleration", 41, 1, R, True, U, 0, "100 tick/s^2 (0: no ramp)"),
    ("goal_position", 42, 2, R, True, M, 15, "tick"),
    ("goal_time", 44, 2, R, True, U, 0, "ms"),
    ("goal_velocity", 46, 2, R, True, M, 15, "tick/s (0: top speed)"),
    ("torque_limit", 48, 2, R, True, U, 0, "0.1 %"),
    ("lock", 55, 1, R, True, U, 0, "1: EEPROM locked"),
    ("present_position", 56, 2, R, False, M, 15, "tick"),
    ("present_velocity", 58, 2, R, False, M, 15, "tick/s"),
    ("present_load", 60, 2, R, False, M, 10, "0.1 %"),
    ("present_voltage", 62, 1, R, False, U, 0, "0.1 V"),
    ("present_temperature", 63, 1, R, False, U, 0, "degC"),
    ("status", 65, 1, R, False, U, 0, "error bits"),
    ("moving", 66, 1, R, False, U, 0, ""),
    ("present_current", 69, 2, R, False, M, 15, "6.5 mA"),
)

#: Registers every Dynamixel X model here shares (addresses of the X series' Protocol 2.0 table).
X_ROWS: tuple[Row, ...] = (
    ("model_number", 0, 2, E, False, U, 0, ""),
    ("firmware", 6, 1, E, False, U, 0, ""),
    ("id", 7, 1, E, True, U, 0, ""),
    ("baud_rate", 8, 1, E, True, U, 0, "code (baud_rates)"),
    ("return_delay", 9, 1, E, True, U, 0, "2 us"),
    ("drive_mode", 10, 1, E, True, U, 0, "bit 0: reverse"),
    ("operating_mode", 11, 1, E, True, U, 0, "3 position, 4 extended position, 1 velocity"),
    ("homing_offset", 20, 4, E, True, T, 0, "tick"),
    ("max_temperature_limit", 31, 1, E, True, U, 0, "degC"),
    ("max_voltage_limit", 32, 2, E, True, U, 0, "0.1 V"),
    ("min_voltage_limit", 34, 2, E, True, U, 0, "0.1 V"),
    ("velocity_limit", 44, 4, E, True, U, 0, "0.229 rev/min"),
    ("max_position_limit", 48, 4, E, True, U, 0, "tick"),
    ("min_position_limit", 52, 4, E, True, U, 0, "tick"),
    ("torque_enable", 64, 1, R, True, U, 0, ""),
    ("status_return_level", 68, 1, R, True, U, 0, ""),
    ("hardware_error", 70, 1, R, False, U, 0, "error bits"),
    ("goal_velocity", 104, 4, R, True, T, 0, "0.229 rev/min"),
    ("profile_acceleration", 108, 4, R, True, U, 0, "214.577 rev/min^2 (0: no ramp)"),
    ("profile_velocity", 112, 4, R, True, U, 0, "0.229 rev/min (0: top speed)"),
    ("goal_position", 116, 4, R, True, T, 0, "tick"),
    ("moving", 122, 1, R, False, U, 0, ""),
    ("present_velocity", 128, 4, R, False, T, 0, "0.229 rev/min"),
    ("present_position", 132, 4, R, False, T, 0, "tick"),
    ("present_voltage", 144, 2, R, False, U, 0, "0.1 V"),
    ("present_temperature", 146, 1, R, False, U, 0, "degC"),
)

#: Present Current (XL330: 1 mA; XM430: 2.69 mA) or, on the XL430, Present Load (0.1 %), both at 126.
CURRENT_1MA: Row = ("present_current", 126, 2, R, False, T, 0, "1 mA")
CURRENT_269: Row = ("present_current", 126, 2, R, False, T, 0, "2.69 mA")
LOAD: Row = ("present_load", 126, 2, R, False, T, 0, "0.1 %")

FEETECH_BAUDS = {0: 1_000_000, 1: 500_000, 2: 250_000, 3: 128_000, 4: 115_200, 5: 76_800, 6: 57_600, 7: 38_400}
DYNAMIXEL_BAUDS = {
    0: 9_600, 1: 57_600, 2: 115_200, 3: 1_000_000, 4: 2_000_000, 5: 3_000_000, 6: 4_000_000,
}  # fmt: skip

_STS_DEFAULTS = {
    "firmware_major": 3, "firmware_minor": 9, "model_number": 777, "id": 1, "baud_rate": 0, "return_delay": 0,
    "status_return_level": 1, "min_position_limit": 0, "max_position_limit": 4095, "max_temperature_limit": 70,
    "max_voltage_limit": 140, "min_voltage_limit": 40, "max_torque_limit": 1000, "p_coefficient": 32,
    "d_coefficient": 32, "i_coefficient": 0, "homing_offset": 0, "operating_mode": 0, "torque_limit": 1000,
    "lock": 1, "present_voltage": 120, "present_temperature": 30,
}  # fmt: skip


def _x_defaults(number: int, velocity_limit: int, temperature: int) -> dict[str, int]:
    return {
        "model_number": number, "firmware": 52, "id": 1, "baud_rate": 1, "return_delay": 250, "drive_mode": 0,
        "operating_mode": 3, "homing_offset": 0, "max_temperature_limit": temperature, "max_voltage_limit": 140,
        "min_voltage_limit": 60, "velocity_limit": velocity_limit, "max_position_limit": 4095,
        "min_position_limit": 0, "status_return_level": 2, "present_voltage": 120, "present_temperature": 30,
    }  # fmt: skip


def _rpm(rpm: float) -> float:
    return rpm * 4096 / 60


MODELS: dict[str, Model] = {
    "sts3215": Model("sts3215", "feetech", 777, _registers(STS3215_ROWS), FEETECH_BAUDS, _STS_DEFAULTS, _rpm(50.0)),
    "xl330-m288": Model(
        "xl330-m288", "dynamixel", 1200, _registers((*X_ROWS, CURRENT_1MA)), DYNAMIXEL_BAUDS,
        _x_defaults(1200, 445, 70), _rpm(103.0),
    ),
    "xl330-m077": Model(
        "xl330-m077", "dynamixel", 1190, _registers((*X_ROWS, CURRENT_1MA)), DYNAMIXEL_BAUDS,
        _x_defaults(1190, 1620, 70), _rpm(383.0),
    ),
    "xl430-w250": Model(
        "xl430-w250", "dynamixel", 1060, _registers((*X_ROWS, LOAD)), DYNAMIXEL_BAUDS,
        _x_defaults(1060, 265, 72), _rpm(57.0),
    ),
    "xm430-w350": Model(
        "xm430-w350", "dynamixel", 1020, _registers((*X_ROWS, CURRENT_269)), DYNAMIXEL_BAUDS,
        _x_defaults(1020, 200, 80), _rpm(46.0),
    ),
    "xm430-w210": Model(
        "xm430-w210", "dynamixel", 1030, _registers((*X_ROWS, CURRENT_269)), DYNAMIXEL_BAUDS,
        _x_defaults(1030, 330, 80), _rpm(77.0),
    ),
}  # fmt: skip


def model(name: str) -> Model:
    """Return the model called ``name`` (case-insensitive).

    Raises:
        TableError: naming the models there are.
    """
    try:
        return MODELS[name.lower()]
    except KeyError:
        raise TableError(f"unknown servo model '{name}'; known: {', '.join(sorted(MODELS))}") from None


def model_by_number(protocol: str, number: int) -> Model | None:
    """Return the model of ``protocol`` whose model number is ``number``, or ``None``."""
    for candidate in MODELS.values():
        if candidate.protocol == protocol and candidate.model_number == number:
            return candidate
    return None

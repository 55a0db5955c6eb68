"""Writing a servo's EEPROM safely: only with its torque off, unlocked around the writes, checked after.

EEPROM registers (homing offset, position limits, return delay, ID, baud) keep their value over a
power cycle, and both families refuse them while torque is on: Dynamixel answers with an access
error, Feetech ignores the write (and also while its ``lock`` register is 1). :func:`write_eeprom`
is the one way bb_robot writes them (the bridge's return delay, ``bb-robot calibrate``'s offsets
and limits): it reads the torque first and refuses when it is on, unlocks a Feetech servo for the
writes and locks it again as it was, and reads every value back, so that a write the servo
ignored is an error rather than a silent difference.
"""

from __future__ import annotations

from collections.abc import Mapping

from bb_robot.buses.tables import Area, Model
from bb_robot.buses.transport import Bus, BusError


def write_eeprom(bus: Bus, servo_id: int, model: Model, values: Mapping[str, int], *, who: str = "") -> None:
    """Write EEPROM registers of one servo whose torque is off, and check they hold the values.

    Args:
        bus: the open bus.
        servo_id: the servo's ID.
        model: its control table.
        values: register name → value, EEPROM registers only, written in this order.
        who: how messages name the servo (default ``servo <id>``), e.g. ``servo 3 (elbow_flex)``.

    Raises:
        BusError: kind ``usage`` for a register that is not in EEPROM; kind ``refused`` when the
            servo's torque is on (nothing is written) or a value read back differs from the one
            written; the bus's own errors (no reply, the port gone).
    """
    name = who or f"servo {servo_id}"
    registers = [model.register(register) for register in values]
    for register in registers:
        if register.area is not Area.EEPROM:
            raise BusError(f"{bus.name}: {name}: {register.name} is not an EEPROM register", port=bus.name,
                           kind="usage", servo_ids=(servo_id,), register=register.name)  # fmt: skip
    if bus.read(servo_id, model.register("torque_enable")):
        raise BusError(
            f"{bus.name}: {name}: {', '.join(values)} not written: its torque is on (EEPROM is written only with "
            "torque off); turn its torque off and try again",
            port=bus.name, kind="refused", servo_ids=(servo_id,),
        )  # fmt: skip
    lock = model.registers.get("lock")
    locked = bool(lock is not None and bus.read(servo_id, lock))
    if lock is not None and locked:
        bus.write(servo_id, lock, 0)
    try:
        for register in registers:
            bus.write(servo_id, register, values[register.name])
    finally:
        if lock is not None and locked:
            bus.write(servo_id, lock, 1)
    held = {register.name: bus.read(servo_id, register) for register in registers}
    wrong = [f"{n} reads {held[n]}, written {v}" for n, v in values.items() if held[n] != v]
    if wrong:
        raise BusError(
            f"{bus.name}: {name}: EEPROM write did not hold: {'; '.join(wrong)}; check that its torque is off and, "
            "on a Feetech servo, that its lock can be cleared (power-cycle it and try again)",
            port=bus.name, kind="refused", servo_ids=(servo_id,),
        )  # fmt: skip


__all__ = ["write_eeprom"]

"""Servo units to SI and back: joint angles, the gripper, speed, acceleration, load, current, voltage.

Joint angle (LeRobot's convention, which the SO-101's ``so101_new_calib.urdf`` assumes: each
joint's zero at the middle of its calibrated range)::

    angle = sign · (ticks − mid) · 2π / 4096,   mid = (range_min + range_max) / 2,
    sign = −1 if drive_mode == 1 else +1

The gripper: LeRobot reports it as 0..100 (0 at ``range_min``, 100 at ``range_max``, mirrored when
``drive_mode`` is 1); bb_robot maps that linearly onto the URDF joint's limits, 0 → lower and
100 → upper (the SO-101's ``gripper``: −0.174533 .. 1.74533 rad, 0 closed, 100 open).
"""

from __future__ import annotations

import math

from bb_robot.buses.calibration import RESOLUTION, MotorCalibration
from bb_robot.buses.tables import Model
from bb_robot.errors import BbRobotError

#: Radians per encoder tick.
TICK = 2 * math.pi / RESOLUTION
#: The SO-101 URDF's gripper limits (rad), for :func:`gripper_to_angle`.
SO101_GRIPPER_LIMITS = (-0.174533, 1.74533)
#: Dynamixel's velocity unit: 0.229 rev/min, in rad/s.
DYNAMIXEL_VELOCITY = 0.229 * 2 * math.pi / 60
#: Dynamixel's profile acceleration unit: 214.577 rev/min², in rad/s².
DYNAMIXEL_ACCELERATION = 214.577 * 2 * math.pi / 3600
#: Feetech's acceleration unit: 100 ticks/s², in rad/s².
FEETECH_ACCELERATION = 100 * TICK


class UnitError(BbRobotError):
    """A register without an SI conversion, or a gripper with empty limits."""


def ticks_to_angle(ticks: float, calibration: MotorCalibration) -> float:
    """Joint angle (rad) at present position ``ticks``."""
    return calibration.sign * (ticks - calibration.mid) * TICK


def angle_to_ticks(angle: float, calibration: MotorCalibration) -> int:
    """Present position (ticks, rounded) at joint angle ``angle`` (rad); not clamped to the range."""
    return round(calibration.mid + calibration.sign * angle / TICK)


def ticks_to_percent(ticks: float, calibration: MotorCalibration) -> float:
    """LeRobot's 0..100 of a gripper at ``ticks`` (mirrored for ``drive_mode`` 1)."""
    fraction = (ticks - calibration.range_min) / (calibration.range_max - calibration.range_min)
    return 100.0 * (1.0 - fraction if calibration.drive_mode else fraction)


def percent_to_ticks(percent: float, calibration: MotorCalibration) -> int:
    """Present position (ticks, rounded) of LeRobot's 0..100 ``percent``."""
    fraction = percent / 100.0
    if calibration.drive_mode:
        fraction = 1.0 - fraction
    return round(calibration.range_min + fraction * (calibration.range_max - calibration.range_min))


def percent_to_angle(percent: float, limits: tuple[float, float] = SO101_GRIPPER_LIMITS) -> float:
    """The URDF gripper joint's angle (rad) of LeRobot's ``percent``: 0 → lower limit, 100 → upper.

    Raises:
        UnitError: limits with ``lower >= upper``.
    """
    lower, upper = _check(limits)
    return lower + percent / 100.0 * (upper - lower)


def angle_to_percent(angle: float, limits: tuple[float, float] = SO101_GRIPPER_LIMITS) -> float:
    """LeRobot's 0..100 of the URDF gripper joint at ``angle`` (rad).

    Raises:
        UnitError: limits with ``lower >= upper``.
    """
    lower, upper = _check(limits)
    return 100.0 * (angle - lower) / (upper - lower)


def _check(limits: tuple[float, float]) -> tuple[float, float]:
    if not limits[0] < limits[1]:
        raise UnitError(f"gripper limits {limits[0]}..{limits[1]} rad are empty; lower must be below upper")
    return limits


def si_scale(model: Model, register: str) -> float:
    """SI units per register count of ``register`` of ``model``.

    Velocities in rad/s, accelerations in rad/s², load as a fraction of the servo's maximum
    torque, current in A, voltage in V, temperature in °C (as sensor_msgs/Temperature).

    Raises:
        UnitError: a register without a physical unit here (positions: use :func:`ticks_to_angle`).
    """
    feetech = model.protocol == "feetech"
    if register in ("present_velocity", "goal_velocity", "profile_velocity", "velocity_limit"):
        return TICK if feetech else DYNAMIXEL_VELOCITY
    if register in ("acceleration", "profile_acceleration"):
        return FEETECH_ACCELERATION if feetech else DYNAMIXEL_ACCELERATION
    if register in ("present_load", "torque_limit", "max_torque_limit"):
        return 0.001
    if register == "present_current":
        unit = model.register(register).unit
        return {"6.5 mA": 0.0065, "1 mA": 0.001, "2.69 mA": 0.00269}[unit]
    if register in ("present_voltage", "max_voltage_limit", "min_voltage_limit"):
        return 0.1
    if register in ("present_temperature", "max_temperature_limit"):
        return 1.0
    if register == "return_delay":
        return 2e-6
    raise UnitError(f"register '{register}' of {model.name} has no SI conversion here")


def to_si(model: Model, register: str, value: int) -> float:
    """``value`` of ``register`` in SI units (see :func:`si_scale`).

    Raises:
        UnitError: as :func:`si_scale`.
    """
    return value * si_scale(model, register)


def from_si(model: Model, register: str, value: float) -> int:
    """The register count nearest to the SI ``value`` (see :func:`si_scale`).

    Raises:
        UnitError: as :func:`si_scale`.
    """
    return round(value / si_scale(model, register))

"""Helpers of the driver's ROS-free tests: a small arm, its limits, a core on the simulator
driven by a simulated clock (no threads, no sleeping).

A module of its own (not conftest.py): test modules import it by a name no other test
directory uses, so running several test directories together cannot mix them up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from bb_robot.driver.backends.base import BackendContext
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands import limits as L
from bb_robot.driver.commands.commands import CommandMode, CommandValidator
from bb_robot.driver.core import CoreSettings, DriverCore
from bb_robot.model.robot import Robot
from bb_robot.urdf.builder import build_robot
from bb_robot.urdf.parser import parse_string

#: A three-joint arm: a revolute with soft limits, a continuous joint, a prismatic one with a mimic.
ARM_URDF = """<?xml version="1.0"?>
<robot name="arm3">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="l4"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10" velocity="1.5"/>
    <safety_controller soft_lower_limit="-1.8" soft_upper_limit="1.8" k_position="10" k_velocity="1"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><axis xyz="0 1 0"/>
    <limit effort="5" velocity="3"/></joint>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.5" effort="50" velocity="0.25"/></joint>
  <joint name="j3_mimic" type="prismatic"><parent link="l3"/><child link="l4"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.5" effort="50" velocity="0.25"/><mimic joint="j3" multiplier="1" offset="0"/></joint>
</robot>
"""
JOINTS = ("j1", "j2", "j3")
ACCELERATION = {"j1": 4.0, "j2": 6.0, "j3": 1.0}
PERIOD_NS = 2_000_000  # 500 Hz


def arm_robot() -> Robot:
    return build_robot(parse_string(ARM_URDF, source="arm3.urdf"))


def arm_limits(acceleration: bool = True) -> L.JointLimitTable:
    table = L.from_robot(arm_robot(), JOINTS)
    if acceleration:
        overrides = {
            j: L.LimitOverride(has_acceleration_limits=True, max_acceleration=a) for j, a in ACCELERATION.items()
        }
        table = L.apply_overrides(table, overrides)
    return table


@dataclass
class Clock:
    """A monotonic clock the tests advance."""

    now: int = 1_000_000_000_000

    def __call__(self) -> int:
        return self.now


@dataclass
class Rig:
    """A core on the simulator with a simulated clock."""

    core: DriverCore
    backend: SimBackend
    validator: CommandValidator
    clock: Clock
    logs: list[tuple[str, str]] = field(default_factory=list)

    def run(self, seconds: float) -> None:
        cycles = int(round(seconds * 1e9 / PERIOD_NS))
        self.clock.now = self.core.run_cycles(cycles, PERIOD_NS, self.clock.now)

    def positions(self, mode: CommandMode, values: list[float]) -> None:
        self.core.submit(self.validator.from_array(mode, values, "/test", self.clock.now))

    @property
    def state(self) -> tuple[np.ndarray, np.ndarray]:
        sample = self.core.snapshot.sample
        assert sample is not None
        return sample.positions, sample.velocities

    def logged(self, text: str) -> bool:
        return any(text in line for _, line in self.logs)


def make_rig(
    settings: CoreSettings | None = None,
    *,
    armed: bool = True,
    acceleration: bool = True,
    initial: list[float] | None = None,
    backend_class: type[SimBackend] = SimBackend,
) -> Rig:
    clock = Clock()
    limits = arm_limits(acceleration)
    context = BackendContext(
        arm_robot(), JOINTS, limits, 500.0, logging.getLogger("test"), {"initial_positions": initial or []}, clock=clock
    )
    backend = backend_class(context)
    backend.connect(1.0)
    logs: list[tuple[str, str]] = []
    core = DriverCore(
        backend,
        limits,
        settings or CoreSettings(command_timeout=0.0),
        log=lambda level, text: logs.append((level, text)),
        clock=clock,
        armed=armed,
    )
    core.active = True
    validator = CommandValidator(limits, backend.capabilities.modes, backend="sim", mimic={"j3_mimic": "j3"})
    rig = Rig(core, backend, validator, clock, logs)
    rig.run(0.01)
    return rig

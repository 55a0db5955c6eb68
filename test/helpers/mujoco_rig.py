"""Helpers of the MuJoCo backend's tests: a driver core on ``backend: mujoco`` in lockstep, run on the
simulated clock of :mod:`driver_rig` (no threads, no sleeping: every control cycle advances the
physics one period).

A module of its own (not conftest.py), named so that no other test directory has one like it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bb_robot.driver.backends.base import BackendContext
from bb_robot.driver.backends.mujoco import MujocoBackend
from bb_robot.driver.commands import limits as L
from bb_robot.driver.commands.commands import CommandMode, CommandValidator
from bb_robot.driver.core import CoreSettings, DriverCore
from bb_robot.mjcf import actuated_joints
from bb_robot.mjcf.bodies import SceneBody
from bb_robot.model.robot import Robot
from helpers.driver_rig import Clock

RATE = 500.0
PERIOD_NS = 2_000_000


@dataclass
class Rig:
    """A core on the MuJoCo backend, lockstep, with a simulated clock."""

    core: DriverCore
    backend: MujocoBackend
    validator: CommandValidator
    clock: Clock
    joints: tuple[str, ...]
    logs: list[tuple[str, str]] = field(default_factory=list)

    def run(self, seconds: float) -> None:
        cycles = int(round(seconds * 1e9 / PERIOD_NS))
        self.clock.now = self.core.run_cycles(cycles, PERIOD_NS, self.clock.now)

    def record(self, seconds: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Run ``seconds``, returning the simulated time, positions and velocities of every cycle."""
        times, positions, velocities = [], [], []
        for _ in range(int(round(seconds * 1e9 / PERIOD_NS))):
            self.clock.now = self.core.run_cycles(1, PERIOD_NS, self.clock.now)
            sample = self.sample
            times.append(self.backend.sim_time_ns() * 1e-9)
            positions.append(sample.positions.copy())
            velocities.append(sample.velocities.copy())
        return np.array(times), np.array(positions), np.array(velocities)

    def command(self, mode: CommandMode, values: Sequence[float]) -> None:
        self.core.submit(self.validator.from_array(mode, list(values), "/test", self.clock.now))

    @property
    def sample(self) -> Any:
        sample = self.core.snapshot.sample
        assert sample is not None
        return sample

    def arm(self, armed: bool = True) -> None:
        if armed:
            self.core.arm()
        else:
            self.core.disarm("test")


def make_rig(
    robot: Robot, options: Mapping[str, Any] | None = None, *, armed: bool = True, objects: Sequence[SceneBody] = ()
) -> Rig:
    """A lockstep rig on ``robot``'s default driven joints; ``options`` are ``mujoco.*`` parameters,
    ``objects`` the world's objects (as ``collision.world`` gives them)."""
    clock = Clock()
    joints = actuated_joints(robot)
    limits = L.from_robot(robot, joints)
    context = BackendContext(
        robot,
        joints,
        limits,
        RATE,
        logging.getLogger("test"),
        {"lockstep": True, **(options or {})},
        clock=clock,
        world_objects=lambda: tuple(objects),
    )
    backend = MujocoBackend(context)
    backend.connect(1.0)
    logs: list[tuple[str, str]] = []
    core = DriverCore(
        backend,
        limits,
        CoreSettings(command_timeout=0.0),
        log=lambda level, text: logs.append((level, text)),
        clock=clock,
        armed=armed,
    )
    core.active = True
    backend.set_armed(armed)  # as DriverCore.start does
    validator = CommandValidator(limits, backend.capabilities.modes, backend="mujoco")
    rig = Rig(core, backend, validator, clock, joints, logs)
    rig.run(PERIOD_NS * 1e-9)
    return rig

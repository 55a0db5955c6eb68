"""Helpers of the servo's ROS-free tests: bb_arm's driver core with a servo, on the simulator or
MuJoCo, on the simulated clock, recording every command written to the backend.

A module of its own (not conftest.py), named so that no other test directory has one like it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bb_robot.driver.backends.base import BackendCommand, BackendContext
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands import limits as L
from bb_robot.driver.core import CoreSettings, DriverCore
from bb_robot.driver.model import driven_joints
from bb_robot.driver.servo.servo import Servo
from bb_robot.driver.servo.servo_inputs import FrameNames, ServoSettings, check_pose, check_twist, stop_input
from bb_robot.model.robot import Robot
from bb_robot.urdf.builder import load_urdf
from helpers.driver_rig import Clock

ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
PERIOD_NS = 2_000_000
PERIOD = PERIOD_NS * 1e-9
#: A ready pose of bb_arm away from singularities (its zero pose is singular).
READY = [0.0, -1.2, 1.5, -1.9, -1.5708, 0.0]


def arm_robot() -> Robot:
    return load_urdf(ARM)


@dataclass
class Rig:
    """A core with a servo; ``written`` holds every (time, command) the backend received."""

    core: DriverCore
    servo: Servo
    clock: Clock
    frames: FrameNames
    written: list[tuple[int, BackendCommand]]
    logs: list[tuple[str, str]] = field(default_factory=list)

    def run(self, seconds: float, each: Callable[[], None] | None = None) -> None:
        for _ in range(int(round(seconds / PERIOD))):
            if each is not None:
                each()
            self.clock.now = self.core.run_cycles(1, PERIOD_NS, self.clock.now)

    def twist(self, linear: Any, angular: Any = (0.0, 0.0, 0.0), frame: str = "") -> None:
        self.core.submit(
            check_twist("/test/twist", self.frames, self.servo.settings, frame, linear, angular, self.clock.now)
        )

    def pose(self, matrix: np.ndarray, frame: str = "") -> None:
        quaternion = quaternion_of(matrix[:3, :3])
        self.core.submit(check_pose("/test/pose", self.frames, frame, list(matrix[:3, 3]), quaternion, self.clock.now))

    def stop(self, reason: str) -> None:
        self.core.submit(stop_input("/test/twist", reason, self.clock.now))

    @property
    def q(self) -> np.ndarray:
        sample = self.core.snapshot.sample
        assert sample is not None
        return sample.positions[self.servo.indices]

    def tool(self) -> np.ndarray:
        return self.servo.chain.end_effector_pose(self.q)

    def commands(self, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of the chain joints written since entry ``start``."""
        i = self.servo.indices
        entries = self.written[start:]
        return np.array([c.position[i] for _, c in entries]), np.array([c.velocity[i] for _, c in entries])


def quaternion_of(rotation: np.ndarray) -> tuple[float, float, float, float]:
    """x, y, z, w of a rotation matrix (via its rotation vector)."""
    from bb_robot.driver.servo.servo_math import rotation_vector

    vector = rotation_vector(rotation)
    angle = float(np.linalg.norm(vector))
    if angle < 1e-12:
        return (0.0, 0.0, 0.0, 1.0)
    axis = vector / angle
    s = np.sin(angle / 2)
    return (float(axis[0] * s), float(axis[1] * s), float(axis[2] * s), float(np.cos(angle / 2)))


def make_rig(
    settings: ServoSettings | None = None,
    *,
    backend: str = "sim",
    initial: list[float] | None = None,
    proximity: Callable[[], float] | None = None,
    acceleration: float | None = None,
    kernel: bool = True,
) -> Rig:
    """bb_arm's arm (and fingers) on ``backend`` (``"sim"`` or ``"mujoco"``, lockstep) with a servo to ``tcp``.

    ``kernel``: the servo's compiled cycle where it loads (``False``: its numpy path).
    """
    clock = Clock()
    robot = arm_robot()
    joints = driven_joints(robot)
    limits = L.from_robot(robot, joints)
    if acceleration is not None:
        overrides = {j: L.LimitOverride(has_acceleration_limits=True, max_acceleration=acceleration) for j in joints}
        limits = L.apply_overrides(limits, overrides)
    start = (initial if initial is not None else READY) + [0.0] * (len(joints) - 6)
    written: list[tuple[int, BackendCommand]] = []
    options: dict[str, Any] = {"initial_positions": start}
    backend_class: type[Any] = SimBackend
    if backend == "mujoco":
        from bb_robot.driver.backends.mujoco import MujocoBackend

        backend_class = MujocoBackend
        options = {"lockstep": True, "initial_positions": start}

    class Recorded(backend_class):
        def write(self, command: BackendCommand, now: int) -> None:
            written.append((now, command))
            super().write(command, now)

    context = BackendContext(robot, joints, limits, 500.0, logging.getLogger("test"), options, clock=clock)
    real = Recorded(context)
    real.connect(1.0)
    logs: list[tuple[str, str]] = []

    def log(level: str, text: str) -> None:
        logs.append((level, text))

    core = DriverCore(real, limits, CoreSettings(command_timeout=0.0), log=log, clock=clock, armed=True)
    core.active = True
    real.set_armed(True)
    servo = Servo(
        robot, joints, limits, settings or ServoSettings(tip="tcp"), log=log, proximity=proximity, kernel=kernel
    )
    core.servo = servo
    rig = Rig(core, servo, clock, servo.frames, written, logs)
    rig.run(0.02)
    return rig

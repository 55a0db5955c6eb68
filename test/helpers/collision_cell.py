"""The collision tests' cell: the bundled arm on the real core and simulator, a table (an SDF world) and a
post (YAML), the collision guard in the core's hooks, a clock the test advances.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from bb_robot.driver.backends.base import BackendContext
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands.commands import CommandMode, CommandValidator
from bb_robot.driver.commands.limits import from_robot
from bb_robot.driver.core import CoreSettings, DriverCore
from bb_robot.driver.guard.build import build_guard
from bb_robot.driver.guard.collision_guard import CollisionGuard, GuardSettings
from bb_robot.driver.model import driven_joints
from bb_robot.loading import load_file
from helpers.collision_robots import table_world
from helpers.driver_rig import PERIOD_NS, Clock

ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"

CELL = table_world()
POST = "obstacles:\n  - name: post\n    xyz: [0.0, 0.7, 0.3]\n    cylinder: {radius: 0.05, length: 0.6}\n"
#: Straight out at the shoulder's height, pointing along -x; shoulder_pan turns it about z.
OUT = [0.0, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0]


class Cell:
    """A core on the simulator, the bundled arm with its guard, a clock the test advances."""

    def __init__(
        self, world: str | None, settings: GuardSettings, robot: Path = ARM, initial: list[float] | None = None
    ) -> None:
        self.loaded = load_file(str(robot))
        self.joints = driven_joints(self.loaded.robot)
        self.clock = Clock()
        limits = from_robot(self.loaded.robot, self.joints)
        context = BackendContext(
            self.loaded.robot,
            self.joints,
            limits,
            500.0,
            logging.getLogger("test"),
            {"initial_positions": OUT if initial is None else initial},
            clock=self.clock,
        )
        backend = SimBackend(context)
        backend.connect(1.0)
        self.logs: list[tuple[str, str]] = []
        self.core = DriverCore(
            backend,
            limits,
            CoreSettings(command_timeout=0.0),
            log=lambda level, text: self.logs.append((level, text)),
            clock=self.clock,
            armed=True,
        )
        self.core.active = True
        guard = build_guard(
            self.loaded,
            self.joints,
            settings,
            500.0,
            world=world or "",
            log=self.core_log,
            velocity_limits=limits.velocity,
        )
        assert guard is not None
        self.guard: CollisionGuard = guard
        self.core.trajectory_check = guard.check_trajectory
        self.core.command_filter = guard.filter
        self.validator = CommandValidator(limits, backend.capabilities.modes, backend="sim")
        self.run(0.02)

    def core_log(self, level: str, text: str) -> None:
        self.logs.append((level, text))

    def run(self, seconds: float) -> None:
        """Run the loop, the checker measuring before each cycle (as its thread does while slowed)."""
        for _ in range(int(round(seconds * 1e9 / PERIOD_NS))):
            self.guard.step(self.clock.now)
            self.clock.now = self.core.run_cycles(1, PERIOD_NS, self.clock.now)

    def command(self, values: list[float]) -> None:
        self.core.submit(self.validator.from_array(CommandMode.POSITION, values, "/test", self.clock.now))

    @property
    def positions(self) -> np.ndarray:
        sample = self.core.snapshot.sample
        assert sample is not None
        return sample.positions

    def distance(self) -> float:
        """The distance between the arm and the post."""
        pairs = self.guard.model.pair_distances(self.guard.configuration(self.positions))
        return min(d for labels, d in pairs.items() if "world/post" in labels)


def make_cell(directory: Path) -> Cell:
    """A cell with its world files in ``directory``: slowing from 8 cm, stopping at 2 cm, 2 mm clearance."""
    world = directory / "cell.yaml"
    (directory / "table.sdf").write_text(CELL, encoding="utf-8")
    world.write_text("sdf: table.sdf\n" + POST, encoding="utf-8")
    return Cell(str(world), GuardSettings(clearance=0.002, slowdown_distance=0.08, stop_distance=0.02))

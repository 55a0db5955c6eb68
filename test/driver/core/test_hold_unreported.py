"""A joint held before its position was ever reported gets no hold target (NaN) until it reports,
then is held where it is — never at 0 (a simulator that starts after the driver would be pulled
there)."""

from __future__ import annotations

import logging

import numpy as np
from helpers.driver_rig import JOINTS, PERIOD_NS, Clock, arm_limits, arm_robot

from bb_robot.driver.backends.base import BackendContext, JointSample
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.core import CoreSettings, DriverCore


class LateBackend(SimBackend):
    """The simulator, but reporting nothing (NaN, stamp 0) until ``reporting`` is set."""

    reporting = False
    written: list[np.ndarray]

    def read(self, now_ns: int) -> JointSample:
        sample = super().read(now_ns)
        if self.reporting:
            return sample
        n = len(self.joint_names)
        return JointSample(np.full(n, np.nan), np.full(n, np.nan), None, np.zeros(n, dtype=np.int64), 0)

    def write(self, command, now_ns: int) -> None:  # type: ignore[no-untyped-def]
        self.written.append(command.position.copy())
        if not np.isnan(command.position).any():  # send nothing for a joint without a target
            super().write(command, now_ns)


def test_hold_waits_for_the_first_reported_position() -> None:
    clock = Clock()
    limits = arm_limits()
    context = BackendContext(
        arm_robot(), JOINTS, limits, 500.0, logging.getLogger("test"), {"initial_positions": [0.5, -1.0, 0.2]}
    )
    backend = LateBackend(context)
    backend.written = []
    backend.connect(1.0)
    core = DriverCore(backend, limits, CoreSettings(command_timeout=0.0), log=lambda *a: None, clock=clock, armed=True)
    core.active = True
    clock.now = core.run_cycles(5, PERIOD_NS, clock.now)
    assert all(np.isnan(p).all() for p in backend.written)  # nothing to hold yet
    backend.reporting = True
    clock.now = core.run_cycles(5, PERIOD_NS, clock.now)
    assert core.snapshot.modes == ("hold",) * len(JOINTS)
    np.testing.assert_allclose(backend.written[-1], [0.5, -1.0, 0.2])

"""The embedded simulator: position, velocity and trajectory tracking within the limits."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from helpers.driver_rig import ACCELERATION, JOINTS, PERIOD_NS, arm_limits, arm_robot, make_rig

from bb_robot.driver.backends.base import BackendCommand, BackendContext
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.errors import BackendError

VMAX = np.array([1.5, 3.0, 0.25])
AMAX = np.array([ACCELERATION[j] for j in JOINTS])


def trace(rig, seconds: float) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    positions, velocities = [], []
    for _ in range(int(seconds * 1e9 / PERIOD_NS)):
        rig.run(PERIOD_NS * 1e-9)
        p, v = rig.state
        positions.append(p.copy())
        velocities.append(v.copy())
    return np.array(positions), np.array(velocities)


def test_position_targets_are_reached_within_velocity_and_acceleration_limits() -> None:
    rig = make_rig()
    rig.positions(CommandMode.POSITION, [1.5, -2.0, 0.4])
    positions, velocities = trace(rig, 4.0)
    assert np.allclose(positions[-1], [1.5, -2.0, 0.4], atol=1e-12) and np.allclose(velocities[-1], 0.0)
    assert (np.abs(velocities) <= VMAX + 1e-9).all()
    accelerations = np.diff(velocities, axis=0) / (PERIOD_NS * 1e-9)
    assert (np.abs(accelerations) <= AMAX + 1e-6).all()
    # No overshoot: each joint approaches its target from one side.
    assert positions[:, 0].max() <= 1.5 + 1e-12 and positions[:, 1].min() >= -2.0 - 1e-12
    assert (np.abs(velocities[:, 0]) >= 1.5 - 1e-9).any()  # it did cruise at the limit


def test_velocity_commands_accelerate_within_limits_and_stop_at_the_soft_limit() -> None:
    rig = make_rig()
    rig.positions(CommandMode.VELOCITY, [1.0, -2.0, 0.2])
    positions, velocities = trace(rig, 0.1)
    accelerations = np.diff(velocities, axis=0) / (PERIOD_NS * 1e-9)
    assert (np.abs(accelerations) <= AMAX + 1e-6).all()
    positions, velocities = trace(rig, 4.0)
    assert velocities[-1][0] == pytest.approx(0.0) and positions[-1][0] == pytest.approx(1.8, abs=1e-3)
    assert positions[:, 0].max() <= 1.8 + 1e-6  # the soft limit holds (the core slows the command)
    assert velocities[-1][1] == pytest.approx(-2.0)  # continuous: keeps going
    assert positions[-1][2] <= 0.5 and velocities[-1][2] == pytest.approx(0.0)


def test_a_feasible_trajectory_is_tracked_closely() -> None:
    rig = make_rig()
    trajectory = rig.core.prepare_trajectory(
        JOINTS,
        [
            TrajectoryPoint(1.0, [0.3, 0.5, 0.05]),
            TrajectoryPoint(2.0, [0.6, 1.5, 0.1]),
            TrajectoryPoint(3.5, [0.0, 0.0, 0.0]),
        ],
    )
    execution = rig.core.execute(trajectory)
    worst = 0.0
    while not execution.done.is_set():
        rig.run(PERIOD_NS * 1e-9)
        feedback = execution.feedback
        if feedback is not None:
            worst = max(worst, float(np.abs(feedback.desired[0] - feedback.actual[0]).max()))
    assert worst < 1e-3
    assert np.allclose(rig.state[0], 0.0, atol=1e-6)


def test_effort_is_unsupported_and_samples_carry_no_effort() -> None:
    rig = make_rig()
    assert CommandMode.EFFORT not in rig.backend.capabilities.modes
    assert rig.core.snapshot.sample is not None and rig.core.snapshot.sample.efforts is None


def test_initial_positions_clamped_into_range_and_checked() -> None:
    rig = make_rig(initial=[5.0, 1.0, 0.1])
    assert rig.state[0].tolist() == [1.8, 1.0, 0.1]
    context = BackendContext(
        arm_robot(), JOINTS, arm_limits(), 500.0, logging.getLogger("t"), {"initial_positions": [1.0]}
    )
    with pytest.raises(BackendError, match="1 values for 3 joints"):
        SimBackend(context).connect(1.0)


def test_a_long_gap_is_not_integrated_and_read_needs_connect() -> None:
    context = BackendContext(arm_robot(), JOINTS, arm_limits(), 500.0, logging.getLogger("t"))
    sim = SimBackend(context)
    with pytest.raises(BackendError, match="not connected"):
        sim.read(0)
    sim.connect(1.0)
    sim.read(0)
    n = len(JOINTS)
    sim.write(
        BackendCommand(
            np.full(n, int(CommandMode.VELOCITY), np.int8),
            np.full(n, np.nan),
            np.array([1.0, 1.0, 0.1]),
            np.zeros(n),
            np.full(n, np.nan),
        ),
        0,
    )
    sample = sim.read(1_500_000_000)  # 1.5 s later (over max_gap): a gap, not a step
    assert np.allclose(sample.positions, 0.0) and sim.gaps == 1
    sample = sim.read(1_510_000_000)
    assert (sample.positions > 0).all() and (sample.stamps == 1_510_000_000).all()
    assert sim.health().connected
    sim.disconnect()
    assert not sim.health().connected

"""``stale_action``: what the core does when the backend stops reporting joints (a frozen or dead
servo bridge, a cut network), on the simulator whose feedback is frozen, with a simulated clock.

Asserted as states and their order: the joints go stale, the goal is aborted naming them, every
joint holds and commands are refused (``hold``) or the driver disarms (``disarm``); when the
joints report again nothing queued is applied (no jump), and no joint ever moved faster than its
velocity limit between two consecutive samples.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.driver_rig import PERIOD_NS, Rig, make_rig

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.core import CoreSettings
from bb_robot.driver.errors import CommandRejected
from bb_robot.driver.timing.staleness import StaleWatch


class FrozenFeedbackSim(SimBackend):
    """The simulator behind a bridge that can freeze: while ``frozen`` it reports its last sample
    (stamps ageing) and nothing moves, as a SIGSTOPped bridge process."""

    frozen = False
    _last: JointSample | None = None

    def read(self, now_ns: int) -> JointSample:
        if self.frozen and self._last is not None:
            return self._last
        self._last = super().read(now_ns)
        return self._last


def run_checked(rig: Rig, seconds: float, samples: list[JointSample]) -> None:
    """Run cycle by cycle, keeping each new sample (by stamp)."""
    for _ in range(int(round(seconds * 1e9 / PERIOD_NS))):
        rig.clock.now = rig.core.run_cycles(1, PERIOD_NS, rig.clock.now)
        sample = rig.core.snapshot.sample
        if sample is not None and (not samples or sample.stamp_ns != samples[-1].stamp_ns):
            samples.append(sample)


def assert_within_velocity_limits(rig: Rig, samples: list[JointSample]) -> None:
    limits = rig.core.limits.velocity
    for before, after in zip(samples, samples[1:], strict=False):
        dt = (after.stamp_ns - before.stamp_ns) * 1e-9
        moved = np.abs(after.positions - before.positions)
        assert np.all(moved <= limits * dt * (1 + 1e-6) + 1e-9), (moved, limits * dt)


@pytest.mark.parametrize("action", ["hold", "disarm"])
def test_a_stale_joint_aborts_the_goal_and_holds_without_a_burst(action: str) -> None:
    settings = CoreSettings(command_timeout=0.0, stale_timeout=0.1, stale_action=action)
    rig = make_rig(settings, backend_class=FrozenFeedbackSim)
    backend = rig.backend
    assert isinstance(backend, FrozenFeedbackSim)
    samples: list[JointSample] = []
    execution = rig.core.execute(
        rig.core.prepare_trajectory(("j1", "j2", "j3"), [TrajectoryPoint(2.0, [1.0, 1.0, 0.2])])
    )
    run_checked(rig, 0.5, samples)
    moving = rig.state
    assert np.abs(moving[1]).max() > 0.1, "the goal moves the joints"
    assert execution.outcome is None

    backend.frozen = True  # the bridge stops
    frozen_at = rig.state[0].copy()
    run_checked(rig, 0.3, samples)
    # State 1: the joints are stale, the goal aborted naming them, and (disarm) the driver disarmed.
    assert set(rig.core.snapshot.stale) == {"j1", "j2", "j3"}
    assert execution.outcome is not None and execution.outcome.status == "aborted"
    assert "stale" in execution.outcome.message and "j1" in execution.outcome.message
    assert rig.logged("stale_timeout")
    expected_state = "disarmed" if action == "disarm" else "armed"
    assert rig.core.arming.state.value == expected_state
    with pytest.raises(CommandRejected) as refused:
        rig.positions(CommandMode.POSITION, [-1.0, -1.0, 0.0])
    assert refused.value.kind == ("disarmed" if action == "disarm" else "stale")

    backend.frozen = False  # the bridge resumes
    run_checked(rig, 1.0, samples)
    # State 2: fresh again; nothing queued was applied; the joints hold near where they froze.
    assert rig.core.snapshot.stale == ()
    positions, velocities = rig.state
    assert np.allclose(velocities, 0.0, atol=1e-9)
    assert np.abs(positions - frozen_at).max() < 0.3, (positions, frozen_at)  # braked, never sent to -1
    assert_within_velocity_limits(rig, samples)
    if action == "hold":
        rig.positions(CommandMode.POSITION, [0.0, 0.0, 0.0])  # accepted again
        run_checked(rig, 2.0, samples)
        assert np.allclose(rig.state[0], 0.0, atol=1e-6)
    else:
        assert rig.core.arming.state.value == "disarmed"  # stays disarmed until ~/arm
        with pytest.raises(CommandRejected):
            rig.positions(CommandMode.POSITION, [0.0, 0.0, 0.0])
    assert_within_velocity_limits(rig, samples)


def test_stale_watch_reports_each_change_once() -> None:
    watch = StaleWatch()
    assert watch.update(("a",)) is None  # stale before every joint was ever fresh: no action
    assert not watch.holding
    assert watch.update(()) is None
    change = watch.update(("a",))
    assert change is not None and change.new == ("a",) and watch.holding
    assert watch.update(("a",)) is None
    change = watch.update(("a", "b"))
    assert change is not None and change.new == ("b",)
    change = watch.update(())
    assert change is not None and change.recovered and not watch.holding
    assert watch.events == 2
    watch.restart()  # a new activation: old values at its start are no fault
    assert watch.update(("a",)) is None and not watch.holding
    assert watch.update((), reported_since_start=False) is None  # fresh, but from before the start
    assert watch.update(("a",)) is None and not watch.holding
    assert watch.update(()) is None and watch.ready
    assert watch.update(("a",)) is not None and watch.holding

"""The core without ROS: commands, arming, the watchdog, trajectories and goals, staleness, failures."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
from helpers.driver_rig import JOINTS, PERIOD_NS, Clock, arm_limits, arm_robot, make_rig

from bb_robot.driver.backends.base import Backend, BackendCommand, BackendContext, Capabilities, Health, JointSample
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.limits import LimitOverride, apply_overrides
from bb_robot.driver.commands.tolerances import ToleranceDefaults
from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.core import CoreSettings, DriverCore, replace_settings
from bb_robot.driver.errors import INVALID_GOAL, PATH_TOLERANCE_VIOLATED, SUCCESSFUL, BackendError, CommandRejected
from bb_robot.driver.state.arming import ArmState

TOLERANCES = ToleranceDefaults({j: 0.05 for j in JOINTS}, {j: 0.01 for j in JOINTS}, 0.01, 1.0)


def test_refused_while_inactive_or_disarmed_with_the_reason() -> None:
    rig = make_rig(armed=False)
    with pytest.raises(CommandRejected) as info:
        rig.positions(CommandMode.POSITION, [0.5, 0.0, 0.0])
    assert info.value.kind == "disarmed" and "call ~/arm" in info.value.reason
    assert rig.core.arm() == (True, "armed")
    rig.positions(CommandMode.POSITION, [0.5, 0.0, 0.0])
    rig.core.active = False
    with pytest.raises(CommandRejected, match="not active"):
        rig.positions(CommandMode.POSITION, [0.5, 0.0, 0.0])


def test_disarming_stops_the_joints_where_they_can_brake() -> None:
    rig = make_rig()
    rig.positions(CommandMode.VELOCITY, [1.0, 0.0, 0.0])
    rig.run(1.0)
    position, velocity = rig.state
    assert velocity[0] == pytest.approx(1.0)
    rig.core.disarm("test")
    rig.run(1.0)
    stopped, velocity = rig.state
    # Braking at 4 rad/s^2 from 1 rad/s takes 0.125 m... rad: it stops about there, not back where it was.
    assert velocity[0] == 0.0 and stopped[0] == pytest.approx(position[0] + 1.0 / 8.0, abs=0.01)
    assert rig.core.snapshot.arm_state is ArmState.DISARMED and rig.core.snapshot.modes[0] == "hold"


def test_watchdog_holds_after_command_timeout() -> None:
    rig = make_rig(CoreSettings(command_timeout=0.2))
    rig.positions(CommandMode.VELOCITY, [0.5, 0.0, 0.0])
    rig.run(0.15)
    assert rig.state[1][0] == pytest.approx(0.5)
    rig.run(0.3)
    assert rig.state[1][0] == 0.0 and rig.core.snapshot.modes[0] == "hold"
    assert rig.logged("watchdog: no command for 0.2 s") and rig.core.arming.armed
    rig.positions(CommandMode.VELOCITY, [0.5, 0.0, 0.0])  # a new command resumes
    rig.run(0.2)
    assert rig.state[1][0] == pytest.approx(0.5)


def test_a_kept_command_outlives_its_stream_and_the_watchdog() -> None:
    """``keep_command`` (a gripper goal that ended: the grasp keeps squeezing) holds the command's own
    target once its stream stops; the same stream without it is stopped short by the watchdog."""
    target = [1.5, 0.0, 0.0]  # 1 s of travel at j1's 1.5 rad/s: far from done when the 0.2 s timeout passes
    kept = make_rig(CoreSettings(command_timeout=0.2))
    kept.positions(CommandMode.POSITION, target)
    kept.core.keep_command(JOINTS, target)
    kept.run(2.0)
    assert not kept.logged("watchdog") and kept.core.snapshot.modes[0] == "hold"
    assert kept.state[0][0] == pytest.approx(1.5, abs=1e-3)
    stream = make_rig(CoreSettings(command_timeout=0.2))
    stream.positions(CommandMode.POSITION, target)
    stream.run(2.0)
    assert stream.logged("watchdog: no command for 0.2 s") and stream.state[0][0] < 1.0
    # only a command still in place is kept: one replaced since (here by a velocity command) is not
    replaced = make_rig(CoreSettings(command_timeout=0.2))
    replaced.positions(CommandMode.POSITION, target)
    replaced.positions(CommandMode.VELOCITY, [0.5, 0.0, 0.0])
    replaced.core.keep_command(JOINTS, target)
    replaced.run(0.1)
    assert replaced.core.snapshot.modes[0] == "velocity"
    with pytest.raises(ValueError, match="joint\\(s\\) nope not driven"):
        replaced.core.keep_command(["nope"], [0.0])


def test_watchdog_can_disarm() -> None:
    rig = make_rig(CoreSettings(command_timeout=0.1, watchdog_action="disarm"))
    rig.positions(CommandMode.VELOCITY, [0.5, 0.0, 0.0])
    rig.run(0.3)
    assert rig.core.arming.state is ArmState.DISARMED and "watchdog" in rig.core.arming.reason
    assert rig.state[1][0] == 0.0


def test_an_executing_trajectory_is_a_live_command_for_the_watchdog() -> None:
    rig = make_rig(CoreSettings(command_timeout=0.1))
    trajectory = rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(1.0, [0.3, 0.3, 0.05])])
    execution = rig.core.execute(trajectory)
    rig.run(1.2)
    assert execution.outcome is not None and execution.outcome.code == SUCCESSFUL
    assert not rig.logged("watchdog") and np.allclose(rig.state[0], [0.3, 0.3, 0.05], atol=1e-6)
    assert rig.core.snapshot.modes == ("hold", "hold", "hold")  # holds the last point


def test_a_new_trajectory_preempts_the_active_one() -> None:
    rig = make_rig()
    first = rig.core.execute(
        rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(2.0, [1.0, 1.0, 0.1])]), source="first"
    )
    rig.run(0.5)
    second = rig.core.execute(
        rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(2.0, [0.0, 0.0, 0.0])]), source="second"
    )
    rig.run(0.01)
    assert (
        first.outcome is not None
        and first.outcome.code == INVALID_GOAL
        and "preempted by a new trajectory from second" in first.outcome.message
    )
    rig.run(2.5)
    assert second.outcome is not None and second.outcome.status == "succeeded"
    assert np.allclose(rig.state[0], 0.0, atol=1e-6)


def test_a_command_on_a_trajectory_joint_preempts_it() -> None:
    rig = make_rig()
    execution = rig.core.execute(rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(2.0, [1.0, 1.0, 0.1])]))
    rig.run(0.5)
    rig.positions(CommandMode.POSITION, [0.0, 0.0, 0.0])
    rig.run(0.01)
    assert execution.outcome is not None and "preempted by a position command on /test" in execution.outcome.message


def test_cancel_holds_and_reports_canceled() -> None:
    rig = make_rig()
    execution = rig.core.execute(rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(2.0, [1.0, 1.0, 0.1])]))
    rig.run(0.8)
    rig.core.cancel(execution, "client")
    rig.run(1.0)
    assert execution.outcome is not None and execution.outcome.status == "canceled"
    _, velocity = rig.state
    assert np.allclose(velocity, 0.0) and rig.core.snapshot.modes == ("hold", "hold", "hold")


def test_goal_with_tolerances_succeeds_or_aborts_on_path_violation() -> None:
    rig = make_rig()
    trajectory = rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(1.5, [0.6, 0.5, 0.1])])
    execution = rig.core.execute(trajectory, TOLERANCES.for_joints(JOINTS))
    rig.run(2.0)
    assert execution.outcome is not None and execution.outcome.code == SUCCESSFUL
    # Now slow j1 down under the trajectory's feet: it falls behind and the path tolerance trips.
    trajectory = rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(1.5, [0.0, 0.0, 0.0])])
    execution = rig.core.execute(trajectory, TOLERANCES.for_joints(JOINTS))
    rig.run(0.2)
    slow = apply_overrides(arm_limits(), {"j1": LimitOverride(has_velocity_limits=True, max_velocity=0.05)})
    rig.core.set_limits(slow)
    rig.run(1.5)
    assert execution.outcome is not None and execution.outcome.code == PATH_TOLERANCE_VIOLATED
    assert "joint 'j1' position error" in execution.outcome.message and rig.logged("aborted")


def test_velocity_commands_are_slowed_to_stop_at_the_soft_limit() -> None:
    rig = make_rig()
    rig.positions(CommandMode.VELOCITY, [1.5, 0.0, 0.0])
    rig.run(3.0)
    position, velocity = rig.state
    assert position[0] == pytest.approx(1.8, abs=1e-9) and velocity[0] == 0.0


def test_live_limit_change_applies_to_the_next_cycle() -> None:
    rig = make_rig()
    rig.core.set_limits(
        apply_overrides(arm_limits(), {"j1": LimitOverride(has_velocity_limits=True, max_velocity=0.2)})
    )
    rig.positions(CommandMode.POSITION, [1.0, 0.0, 0.0])
    rig.run(1.0)
    assert abs(rig.state[1][0]) == pytest.approx(0.2)
    assert rig.backend.limits.velocity[0] == 0.2


def test_command_latency_is_measured() -> None:
    rig = make_rig()
    rig.positions(CommandMode.POSITION, [0.1, 0.0, 0.0])
    rig.run(0.004)
    latency = rig.core.command_latency()
    assert latency is not None and latency[0] >= 0


def test_settings_helper() -> None:
    settings = replace_settings(CoreSettings(), command_timeout=1.0, trajectory_start_tolerance=0.1)
    assert settings.command_timeout == 1.0 and settings.trajectory.start_tolerance == 0.1


# ------------------------------------------------------------------ a backend that misbehaves
class PartialBackend(Backend):
    """Reports only some joints at first; can go silent or fail on demand."""

    name = "partial"

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.seen = np.array([True, True, False])
        self.silent_since: int | None = None
        self.fail = False
        self.healthy = True
        self.armed: list[bool] = []

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(frozenset({CommandMode.POSITION, CommandMode.VELOCITY}))

    def connect(self, timeout: float) -> None:
        pass

    def disconnect(self) -> None:
        pass

    def read(self, now_ns: int) -> JointSample:
        if self.fail:
            raise BackendError("the bus is down")
        stamp = now_ns if self.silent_since is None else self.silent_since
        stamps = np.where(self.seen, stamp, 0)
        stamps[0] = now_ns  # j1 always fresh
        return JointSample(np.zeros(3), np.zeros(3), None, stamps.astype(np.int64), now_ns)

    def write(self, command: BackendCommand, now_ns: int) -> None:
        pass

    def health(self) -> Health:
        return Health(connected=self.healthy, message="ok" if self.healthy else "cable unplugged")

    def set_armed(self, armed: bool) -> None:
        self.armed.append(armed)


def partial_core() -> tuple[DriverCore, PartialBackend, Clock]:
    clock = Clock()
    limits = arm_limits()
    backend = PartialBackend(BackendContext(arm_robot(), JOINTS, limits, 500.0, logging.getLogger("t"), clock=clock))
    core = DriverCore(backend, limits, CoreSettings(command_timeout=0.0, stale_timeout=0.05), clock=clock, armed=True)
    core.active = True
    return core, backend, clock


def test_every_joint_must_be_seen_and_stale_joints_are_flagged() -> None:
    core, backend, clock = partial_core()
    clock.now = core.run_cycles(5, PERIOD_NS, clock.now)
    assert not core.snapshot.all_seen
    backend.seen[:] = True
    clock.now = core.run_cycles(5, PERIOD_NS, clock.now)
    assert core.snapshot.all_seen and core.snapshot.stale == ()
    backend.silent_since = clock.now
    clock.now = core.run_cycles(50, PERIOD_NS, clock.now)
    assert core.snapshot.stale == ("j2", "j3")
    with pytest.raises(Exception, match="stale"):  # stale_action hold: refused while they are stale
        core.prepare_trajectory(JOINTS, [TrajectoryPoint(1.0, [0, 0, 0])])
    backend.silent_since = None
    with pytest.raises(Exception, match="not reported every joint"):
        backend.seen[2] = False
        clock.now = core.run_cycles(1, PERIOD_NS, clock.now)
        core.prepare_trajectory(JOINTS, [TrajectoryPoint(1.0, [0, 0, 0])])


def test_a_failing_backend_puts_the_driver_in_error_until_reset() -> None:
    core, backend, clock = partial_core()
    backend.seen[:] = True
    clock.now = core.run_cycles(2, PERIOD_NS, clock.now)
    backend.fail = True
    clock.now = core.run_cycles(3, PERIOD_NS, clock.now)
    assert core.arming.state is ArmState.ERROR and "the bus is down" in core.arming.reason
    assert core.arm()[0] is False
    assert core.reset()[0] is False  # still failing
    backend.fail = False
    clock.now = core.run_cycles(200, PERIOD_NS, clock.now)
    ok, text = core.reset()
    assert ok and core.arming.state is ArmState.DISARMED, text
    assert core.arm()[0]
    clock.now = core.run_cycles(1, PERIOD_NS, clock.now)
    assert backend.armed == [False, True]


def test_an_unhealthy_backend_is_an_error() -> None:
    core, backend, clock = partial_core()
    backend.seen[:] = True
    backend.healthy = False
    clock.now = core.run_cycles(2, PERIOD_NS, clock.now)
    assert core.arming.state is ArmState.ERROR and "cable unplugged" in core.arming.reason
    assert core.reset() == (False, "cannot reset: cable unplugged")


def test_a_reset_right_after_the_cause_went_is_judged_on_a_fresh_health() -> None:
    # The loop asks the backend for its health every 0.2 s.  A bus back 60 ms before the reset (in
    # CI: the bridge's port reopened, then the client's reset) was refused on the poll from before.
    limits = arm_limits()
    backend = PartialBackend(BackendContext(arm_robot(), JOINTS, limits, 500.0, logging.getLogger("t")))
    backend.seen[:] = True
    backend.healthy = False
    core = DriverCore(backend, limits, CoreSettings(command_timeout=0.0), armed=True)
    core.active = True
    core.start(500.0)
    try:
        deadline = time.monotonic() + 10.0
        while core.arming.state is not ArmState.ERROR and time.monotonic() < deadline:
            time.sleep(0.001)
        assert core.arming.state is ArmState.ERROR, "the loop never polled the health"  # unplugged
        backend.healthy = True  # plugged in again, before the next poll
        assert core.reset() == (True, "reset: disarmed")
    finally:
        core.stop()

"""The core's inbox: every kind of message is handled with a sample of the joints and without one
(the backend's read failed), and none is dropped without saying so."""

from __future__ import annotations

import typing
from collections.abc import Callable

import numpy as np
import pytest
from helpers.driver_rig import JOINTS, PERIOD_NS, Rig, arm_limits, arm_robot, make_rig

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands import limits as L
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.cycle.execution import Execution
from bb_robot.driver.cycle.inbox import (
    CancelExecution,
    ExecuteTrajectory,
    HoldAll,
    InboxMessage,
    KeepCommand,
    ServoInput,
    SetLimits,
    SetRobot,
    SubmitCommand,
)
from bb_robot.driver.errors import BackendError
from bb_robot.driver.servo.servo import Servo
from bb_robot.driver.servo.servo_inputs import ServoSettings, check_twist


class FlakySim(SimBackend):
    """The simulator, whose reads fail while ``failing``."""

    failing = False

    def read(self, now_ns: int) -> JointSample:
        if self.failing:
            raise BackendError("the bus is down")
        return super().read(now_ns)


def rig() -> Rig:
    return make_rig(backend_class=FlakySim, initial=[0.2, 0.1, 0.1])


def cycle(rig: Rig, *, sample: bool) -> None:
    """One cycle, in which the backend gives a sample or fails to."""
    backend = rig.backend
    assert isinstance(backend, FlakySim)
    backend.failing = not sample
    rig.clock.now = rig.core.run_cycles(1, PERIOD_NS, rig.clock.now)


def modes(rig: Rig) -> tuple[str, ...]:
    return rig.core.snapshot.modes


def start_trajectory(rig: Rig) -> Execution:
    trajectory = rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(2.0, [0.5, 0.5, 0.2])])
    execution = rig.core.execute(trajectory, source="test")
    cycle(rig, sample=True)
    assert execution.started and modes(rig) == ("trajectory",) * 3
    return execution


# ------------------------------------------------------------------ one check per kind and state
def submit_command(rig: Rig, sample: bool) -> None:
    rig.positions(CommandMode.POSITION, [0.4, 0.3, 0.2])
    cycle(rig, sample=sample)
    if sample:
        assert modes(rig) == ("position",) * 3
        return
    assert modes(rig) == ("hold",) * 3  # dropped: the joints keep what they did
    assert any(level == "warning" and "dropped" in text for level, text in rig.logs)
    cycle(rig, sample=True)
    assert rig.logged("the backend gives joint states again (1 command(s) dropped meanwhile)")


def execute_trajectory(rig: Rig, sample: bool) -> None:
    trajectory = rig.core.prepare_trajectory(JOINTS, [TrajectoryPoint(2.0, [0.5, 0.5, 0.2])])
    execution = rig.core.execute(trajectory, source="test")
    cycle(rig, sample=sample)
    if sample:
        assert execution.started and execution.outcome is None and modes(rig) == ("trajectory",) * 3
        return
    assert not execution.started
    assert execution.outcome is not None and execution.outcome.status == "aborted"
    assert "no joint state" in execution.outcome.message
    assert rig.logged("trajectory from test aborted: the backend gave no joint state")


def cancel_execution(rig: Rig, sample: bool) -> None:
    execution = start_trajectory(rig)
    rig.core.cancel(execution, "canceled by the test")
    cycle(rig, sample=sample)
    assert execution.outcome is not None and execution.outcome.status == "canceled"
    assert execution.outcome.message == "canceled by the test"
    assert rig.core.execution is None
    cycle(rig, sample=True)
    assert modes(rig) == ("hold",) * 3


def hold_all(rig: Rig, sample: bool) -> None:
    rig.positions(CommandMode.VELOCITY, [0.5, 0.5, 0.1])
    cycle(rig, sample=True)
    assert modes(rig) == ("velocity",) * 3
    rig.core.hold_all("told to hold")
    cycle(rig, sample=sample)
    if not sample:
        assert rig.logged("told to hold: every joint holds where the backend next reports it")
        cycle(rig, sample=True)
    assert modes(rig) == ("hold",) * 3
    # Each joint holds a finite position, within the command range.
    rig.run(0.5)
    positions, velocities = rig.state
    assert np.all(np.isfinite(positions)) and np.allclose(velocities, 0.0, atol=1e-6)


def keep_command(rig: Rig, sample: bool) -> None:
    target = [0.4, 0.3, 0.2]
    rig.positions(CommandMode.POSITION, target)
    cycle(rig, sample=True)
    rig.core.keep_command(JOINTS, target)
    cycle(rig, sample=sample)
    if not sample:  # the failed read faulted the driver: nothing is kept, every joint holds where it is
        assert rig.core.arming.state.value == "error"
        cycle(rig, sample=True)
        assert modes(rig) == ("hold",) * 3
        return
    assert modes(rig) == ("hold",) * 3  # kept: held at the command's own target
    rig.run(2.0)
    np.testing.assert_allclose(rig.state[0], target, atol=1e-3)


def set_limits(rig: Rig, sample: bool) -> None:
    tighter = L.apply_overrides(arm_limits(), {"j1": L.LimitOverride(has_velocity_limits=True, max_velocity=0.5)})
    rig.core.set_limits(tighter)
    cycle(rig, sample=sample)
    assert rig.core.limits is tighter and rig.backend.limits is tighter


def set_robot(rig: Rig, sample: bool) -> None:
    robot = arm_robot()
    rig.core.set_robot(robot)
    cycle(rig, sample=sample)
    assert rig.backend.robot is robot


def servo_input(rig: Rig, sample: bool) -> None:
    servo = rig.core.servo = Servo(arm_robot(), JOINTS, rig.core.limits, ServoSettings(tip="l3"), log=rig.core._log)
    twist = check_twist("/twist", servo.frames, servo.settings, "", (0.0, 0.0, 0.05), (0, 0, 0), rig.clock.now)
    rig.core.submit(twist)
    cycle(rig, sample=sample)
    if sample:
        assert modes(rig) == ("servo",) * 3 and servo.status.state == "tracking"
        return
    assert modes(rig) == ("hold",) * 3 and servo.status.state == "idle"
    assert rig.logged("a servo input on /twist arrived while the backend gives no joint state: dropped")


CHECKS: dict[type, Callable[[Rig, bool], None]] = {
    ServoInput: servo_input,
    SubmitCommand: submit_command,
    ExecuteTrajectory: execute_trajectory,
    CancelExecution: cancel_execution,
    HoldAll: hold_all,
    KeepCommand: keep_command,
    SetLimits: set_limits,
    SetRobot: set_robot,
}


def test_every_kind_of_message_has_a_check() -> None:
    assert set(typing.get_args(InboxMessage)) == set(CHECKS)


@pytest.mark.parametrize("sample", [True, False], ids=["with a sample", "without a sample"])
@pytest.mark.parametrize("kind", list(CHECKS), ids=lambda kind: kind.__name__)
def test_each_kind_is_handled_in_each_state(kind: type, sample: bool) -> None:
    test_rig = rig()
    CHECKS[kind](test_rig, sample)


def test_a_failed_read_faults_the_driver_but_the_inbox_is_still_emptied() -> None:
    test_rig = rig()
    rig_core = test_rig.core
    test_rig.positions(CommandMode.POSITION, [0.4, 0.3, 0.2])
    rig_core.hold_all("deactivated")
    cycle(test_rig, sample=False)
    assert rig_core.arming.state.value == "error"
    cycle(test_rig, sample=True)
    assert modes(test_rig) == ("hold",) * 3  # the hold queued after the command wins

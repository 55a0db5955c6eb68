"""The gripper goal's pure logic: goals refused before anything moves, reached and stalled judged from states."""

from __future__ import annotations

import math

import pytest

from bb_robot.driver.commands.gripper import GripperSettings, GripperWatch, check_goal
from bb_robot.driver.errors import CommandRejected

SETTINGS = GripperSettings(("left_finger_joint",), tolerance=0.001, stall_time=0.3, stall_motion=0.0005)
RANGE = [(0.0, 0.04)]


@pytest.mark.parametrize(
    ("position", "effort", "said"),
    [
        (math.nan, 1.0, "not a finite number"),
        (0.01, -1.0, "max_effort -1"),
        (0.01, math.inf, "max_effort inf"),
        (0.05, 1.0, "outside joint 'left_finger_joint''s range"),
    ],
)
def test_senseless_goals_are_refused_naming_the_value(position: float, effort: float, said: str) -> None:
    with pytest.raises(CommandRejected, match=said):
        check_goal(position, effort, SETTINGS.joints, RANGE)


def test_no_gripper_joints_refuses_every_goal() -> None:
    with pytest.raises(CommandRejected, match="gripper.joints"):
        check_goal(0.01, 1.0, (), [])


def test_reached_when_within_the_tolerance() -> None:
    watch = GripperWatch(0.02, 0.0, SETTINGS, 0.0)
    assert not watch.update(0.0, [0.04], None).done
    state = watch.update(0.1, [0.0205], None)
    assert state.reached_goal and not state.stalled


def test_stalled_when_the_fingers_stop_short() -> None:
    watch = GripperWatch(0.0, 0.0, SETTINGS, 0.0)
    for k, position in enumerate([0.04, 0.03, 0.02, 0.02, 0.02]):
        state = watch.update(0.1 * k, [position], None)
    assert not state.stalled  # still for 0.2 s only
    state = watch.update(0.55, [0.0201], None)
    assert state.stalled and not state.reached_goal


def test_stalled_at_max_effort_once_stopped_for_the_squeeze_time() -> None:
    watch = GripperWatch(0.0, 5.0, SETTINGS, 0.0)
    assert not watch.update(0.0, [0.04], [6.0]).stalled  # moving: the effort of the acceleration
    assert not watch.update(0.05, [0.03], [6.0]).stalled
    assert not watch.update(0.06, [0.03], [-6.0]).stalled  # stopped for 10 ms only
    assert watch.update(0.1, [0.0302], [-6.0]).stalled  # for 50 ms (squeeze_time 40 ms)


def test_a_goal_starting_at_max_effort_is_not_stalled_before_the_fingers_had_time_to_move() -> None:
    # a position actuator's force saturates the moment the goal starts; two states 3 ms apart (a
    # monitor that ran twice in a burst, a loaded host) have barely moved: not a stall
    watch = GripperWatch(0.0, 1.0, SETTINGS, 0.0)
    assert not watch.update(0.0, [0.04], [0.0]).stalled
    assert not watch.update(0.003, [0.0399], [-4.8]).stalled
    assert not watch.update(0.006, [0.0397], [-4.8]).stalled
    # then moving (more than stall_motion over the squeeze time), and the push on the cube's faces
    assert not watch.update(0.05, [0.03], [-4.8]).stalled
    assert not watch.update(0.1, [0.021], [-4.8]).stalled
    assert not watch.update(0.12, [0.0209], [-4.8]).stalled
    state = watch.update(0.15, [0.0208], [-4.8])
    assert state.stalled and not state.reached_goal and state.position == 0.0208

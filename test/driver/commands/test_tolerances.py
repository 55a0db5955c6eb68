"""FollowJointTrajectory tolerances: resolving a goal's against the defaults, and watching a goal."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.driver_rig import JOINTS, arm_limits

from bb_robot.driver.commands.tolerances import GoalMonitor, JointToleranceSpec, ToleranceDefaults, resolve_tolerances
from bb_robot.driver.commands.trajectory import TrajectoryPoint, build_trajectory
from bb_robot.driver.errors import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    INVALID_JOINTS,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    TrajectoryRejected,
)

S = 1_000_000_000
DEFAULTS = ToleranceDefaults(
    trajectory={"j1": 0.1}, goal={"j1": 0.02, "j2": 0.05}, stopped_velocity=0.01, goal_time=0.5
)


def test_defaults_per_joint() -> None:
    tolerances = DEFAULTS.for_joints(JOINTS)
    assert tolerances.path.position.tolist() == [0.1, 0.0, 0.0]
    assert tolerances.goal.position.tolist() == [0.02, 0.05, 0.0]
    assert tolerances.goal.velocity.tolist() == [0.01] * 3 and tolerances.goal_time == 0.5


def test_zero_keeps_minus_one_erases_positive_replaces() -> None:
    tolerances = resolve_tolerances(
        DEFAULTS.for_joints(JOINTS),
        JOINTS,
        path=[JointToleranceSpec("j1", position=0.0, velocity=0.3), JointToleranceSpec("j3", position=0.01)],
        goal=[JointToleranceSpec("j2", position=-1.0, velocity=-1.0)],
        goal_time=0.0,
    )
    assert tolerances.path.position.tolist() == [0.1, 0.0, 0.01]
    assert tolerances.path.velocity.tolist() == [0.3, 0.0, 0.0]
    assert tolerances.goal.position.tolist() == [0.02, 0.0, 0.0] and tolerances.goal.velocity[1] == 0.0
    assert tolerances.goal_time == 0.5  # 0 keeps the default
    assert resolve_tolerances(DEFAULTS.for_joints(JOINTS), JOINTS, goal_time=-1.0).goal_time == 0.0


def test_illegal_tolerances_reject_the_goal() -> None:
    with pytest.raises(TrajectoryRejected) as info:
        resolve_tolerances(DEFAULTS.for_joints(JOINTS), JOINTS, path=[JointToleranceSpec("j1", position=-0.5)])
    assert info.value.code == INVALID_GOAL and "-0.5" in info.value.reason
    with pytest.raises(TrajectoryRejected) as info:
        resolve_tolerances(DEFAULTS.for_joints(JOINTS), JOINTS, goal=[JointToleranceSpec("elbow", position=0.1)])
    assert info.value.code == INVALID_JOINTS and "'elbow'" in info.value.reason


def _monitor(goal_time: float = 0.5) -> GoalMonitor:
    trajectory = build_trajectory(
        JOINTS, [TrajectoryPoint(1.0, [0.5, 0.0, 0.0])], arm_limits(), np.zeros(3), np.zeros(3), start_ns=0, now_ns=0
    )
    defaults = ToleranceDefaults({"j1": 0.1}, {"j1": 0.02}, 0.01, goal_time)
    return GoalMonitor(trajectory, defaults.for_joints(JOINTS))


def test_path_tolerance_violation_names_the_joint() -> None:
    monitor = _monitor()
    desired = monitor.trajectory.sample_at(0.5)
    assert monitor.check(S // 2, desired[0], desired[1], desired[0] + 0.05, desired[1]) is None
    outcome = monitor.check(S // 2, desired[0], desired[1], desired[0] + np.array([0.2, 0, 0]), desired[1])
    assert outcome is not None and outcome.code == PATH_TOLERANCE_VIOLATED and outcome.status == "aborted"
    assert "joint 'j1' position error -0.2" in outcome.message


def test_goal_succeeds_within_tolerance_or_aborts_after_goal_time() -> None:
    monitor = _monitor()
    final = np.array([0.5, 0.0, 0.0])
    outcome = monitor.check(S, final, np.zeros(3), final + 0.01, np.zeros(3))
    assert outcome is not None and outcome.code == SUCCESSFUL and outcome.status == "succeeded"
    assert monitor.check(S + S // 4, final, np.zeros(3), final + 0.05, np.zeros(3)) is None  # still in goal time
    late = monitor.check(2 * S, final, np.zeros(3), final + 0.05, np.zeros(3))
    assert late is not None and late.code == GOAL_TOLERANCE_VIOLATED and "goal_time_tolerance 0.5" in late.message
    moving = monitor.check(S, final, np.zeros(3), final, np.array([0.02, 0, 0]))
    assert moving is None  # velocity above stopped_velocity_tolerance: not yet


def test_goal_time_zero_waits_without_limit() -> None:
    monitor = _monitor(goal_time=0.0)
    final = np.array([0.5, 0.0, 0.0])
    assert monitor.check(100 * S, final, np.zeros(3), final + 1.0, np.zeros(3)) is None

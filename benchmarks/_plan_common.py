"""What bench_plan and its constrained problems (``_plan_constrained``) share: a party's results, and
OMPL's joint space and validity checker (ours' single-state check, the same scene and matrix)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bb_robot.collision.matrix import joint_bounds
from bb_robot.planning.validity import StateChecker


@dataclass
class Run:
    """One party's results on one set of problems."""

    solved: int = 0
    asked: int = 0
    plan: list[float] = field(default_factory=list)
    simplify: list[float] = field(default_factory=list)
    timing: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    short: list[float] = field(default_factory=list)
    duration: list[float] = field(default_factory=list)
    #: The constrained problems' judge: the hand's largest tilt along each path (rad).
    tilt: list[float] = field(default_factory=list)
    within_1s: int = 0
    within_1s_cpu: int = 0
    contacts: int = 0
    exact_refusals: int = 0
    check_path_refusals: int = 0
    check_path_runs: int = 0
    limit_violations: int = 0


def ompl_joint_space(checker: StateChecker) -> Any:
    """OMPL's ``RealVectorStateSpace`` of the checker's joints, bounded by the model's limits."""
    from ompl import base as ob
    from ompl import util

    util.setLogLevel(util.LOG_WARN)
    n = len(checker.joints)
    lower, upper = joint_bounds(checker.model.robot, checker.joints)
    space = ob.RealVectorStateSpace(n)
    bounds = ob.RealVectorBounds(n)
    for i in range(n):
        bounds.setLow(i, float(lower[i]))
        bounds.setHigh(i, float(upper[i]))
    space.setBounds(bounds)
    return space


def ompl_validity(checker: StateChecker) -> Callable[[object], bool]:
    """OMPL's state validity checker: ours' single-state check (:meth:`StateChecker.valid`)."""
    n = len(checker.joints)
    buffer = np.empty(n)

    def valid(state: object) -> bool:
        for i in range(n):
            buffer[i] = state[i]  # type: ignore[index]
        return checker.valid(buffer)

    return valid

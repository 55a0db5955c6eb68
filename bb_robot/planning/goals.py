"""Goals: joint values, or a link's pose within position and orientation tolerances (a goal region).

- :class:`JointGoal` — values of some joints; the planned joints it does not name keep their start
  values.
- :class:`PoseGoal` — a link's pose in the robot's root frame, reached within
  ``position_tolerance`` (m) and ``orientation_tolerance`` (rad).  Inverse kinematics
  (:meth:`SerialManipulator.inverse <bb_robot.model.serial.SerialManipulator.inverse>`) runs from
  several seeds: the start first, then seeded random configurations within the limits.  Every
  distinct collision-free solution is kept (up to ``keep``): the planner's goal tree starts from
  all of them, so the goal is a region, not one configuration.

:func:`goal_configurations` turns a goal into those configurations, or says why there are none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from bb_robot.errors import BbRobotError
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix
from bb_robot.planning.errors import GoalInCollision, InvalidRequest, NoIkSolution, PlanningError
from bb_robot.planning.validity import StateChecker


@dataclass(frozen=True)
class JointGoal:
    """Joint values to reach.

    Attributes:
        values: joint name → value (rad or m); at least one.
    """

    values: Mapping[str, float]


@dataclass(frozen=True)
class PoseGoal:
    """A link's pose to reach, within tolerances.

    Attributes:
        link: the link (the tip of the chain solved for).
        pose: its 4×4 pose in the robot's root frame.
        position_tolerance: metres.
        orientation_tolerance: radians (the angle between the orientations); ``None``: position only.
        seeds: inverse-kinematics attempts at most (the start, then random seeds).
        keep: distinct valid configurations kept at most.
    """

    link: str
    pose: Matrix = field(repr=False)
    position_tolerance: float = 1e-3
    orientation_tolerance: float | None = 1e-2
    seeds: int = 24
    keep: int = 6


#: Two solutions nearer than this (C-space, rad) count as one.
DISTINCT = 0.05


def _joint_goal(goal: JointGoal, checker: StateChecker, start: Matrix) -> Matrix:
    if not goal.values:
        raise InvalidRequest("the goal names no joint: give at least one joint value (or a pose goal)")
    x = start.copy()
    for name, value in goal.values.items():
        if name not in checker.joints:
            known = checker.model.fk.joint_names
            where = "is not planned (planned joints: " if name in known else "is not a joint of the robot ("
            raise InvalidRequest(f"goal joint '{name}' {where}{', '.join(checker.joints)}); name only planned joints")
        number = float(value)
        if not math.isfinite(number):
            raise InvalidRequest(f"goal joint '{name}' has the value {value}; give a finite number")
        x[checker.joints.index(name)] = number
    return x


def _check_bounds(x: Matrix, checker: StateChecker, lower: Matrix, upper: Matrix, what: str) -> None:
    for name, value, low, high in zip(checker.joints, x, lower, upper, strict=True):
        if not low - 1e-9 <= value <= high + 1e-9:
            raise InvalidRequest(
                f"{what} joint '{name}' = {value:.6g} is outside its limits [{low:.6g}, {high:.6g}]; "
                "give a value within them"
            )


def _pose_goal(
    goal: PoseGoal, checker: StateChecker, start: Matrix, lower: Matrix, upper: Matrix, rng: np.random.Generator
) -> list[Matrix]:
    robot = checker.model.robot
    if goal.link not in robot.links:
        raise InvalidRequest(f"pose goal: robot '{robot.name}' has no link '{goal.link}'")
    target = np.asarray(goal.pose, dtype=float)
    if target.shape != (4, 4) or not np.isfinite(target).all():
        raise InvalidRequest(f"pose goal for '{goal.link}': needs a finite 4×4 pose, got {target.tolist()}")
    for label, value in (
        ("position_tolerance", goal.position_tolerance),
        ("orientation_tolerance", goal.orientation_tolerance),
    ):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InvalidRequest(f"pose goal for '{goal.link}': {label} must be a positive number, got {value}")
    try:
        chain = SerialManipulator.from_robot(robot, tip=goal.link, strict=False)
    except BbRobotError as error:
        raise InvalidRequest(f"pose goal for '{goal.link}': no serial chain reaches it: {error}") from None
    missing = [j for j in chain.joint_names if j not in checker.joints]
    if missing:
        raise InvalidRequest(
            f"pose goal for '{goal.link}': the chain's joints {missing} are not planned; plan them (joints=...)"
        )
    columns = np.array([checker.joints.index(j) for j in chain.joint_names], dtype=np.intp)
    low, high = lower[columns], upper[columns]
    solutions: list[Matrix] = []
    seeds = [np.clip(start[columns], low, high)]
    seeds += [low + (high - low) * rng.random(columns.size) for _ in range(max(goal.seeds - 1, 0))]
    found_any: Matrix | None = None
    for seed in seeds:
        try:
            solution = chain.inverse(
                target,
                seed=seed,
                position_tolerance=goal.position_tolerance,
                rotation_tolerance=goal.orientation_tolerance,
                timeout=None,
                max_restarts=0,
                rng=rng,
                lower=low,
                upper=high,
            )
        except BbRobotError as error:
            raise InvalidRequest(f"pose goal for '{goal.link}': {error}") from None
        if not solution.success:
            continue
        x = start.copy()
        x[columns] = solution.q
        found_any = x if found_any is None else found_any
        if any(float(np.linalg.norm(x - other)) < DISTINCT for other in solutions):
            continue
        if checker.valid(x):
            solutions.append(x)
            if len(solutions) >= goal.keep:
                break
    if solutions:
        return solutions
    if found_any is None:
        raise NoIkSolution(
            f"no configuration puts '{goal.link}' at the goal pose within {goal.position_tolerance} m and "
            f"{goal.orientation_tolerance} rad ({len(seeds)} inverse-kinematics attempts within the joint limits); "
            "check that the pose is within reach, or widen the tolerances"
        )
    contact = checker.first_contact(found_any)
    if contact is None:  # pragma: no cover - valid() said no
        raise PlanningError(f"pose goal for '{goal.link}': every solution is refused by the collision check")
    raise GoalInCollision(contact.links, contact.distance, checker.clearance, count=2)


def goal_configurations(
    goal: JointGoal | PoseGoal | Mapping[str, float],
    checker: StateChecker,
    start: npt.ArrayLike,
    lower: Sequence[float] | Matrix,
    upper: Sequence[float] | Matrix,
    rng: np.random.Generator,
) -> list[Matrix]:
    """The goal configurations of the planned joints, each valid.

    Args:
        goal: a :class:`JointGoal`, a :class:`PoseGoal`, or joint values (a mapping).
        checker: the planned joints and their validity.
        start: the planned joints' start values.
        lower: their lower bounds.
        upper: their upper bounds.
        rng: the inverse kinematics' random seeds.

    Returns:
        One configuration (a joint goal) or several (a pose goal), each valid.

    Raises:
        InvalidRequest: an empty goal, an unknown or unplanned joint, a non-finite value, a value
            outside the limits, an unknown link, a malformed pose.
        GoalInCollision: the goal (every solution of a pose goal) is in collision; names the pair.
        NoIkSolution: no configuration reaches the pose.
    """
    x_start = np.asarray(start, dtype=float)
    low, high = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if isinstance(goal, PoseGoal):
        return _pose_goal(goal, checker, x_start, low, high, rng)
    joint_goal = goal if isinstance(goal, JointGoal) else JointGoal(dict(goal))
    x = _joint_goal(joint_goal, checker, x_start)
    _check_bounds(x, checker, low, high, "goal")
    if not checker.valid(x):
        contact = checker.first_contact(x)
        if contact is not None:
            raise GoalInCollision(contact.links, contact.distance, checker.clearance)
        raise GoalInCollision(("?", "?"), 0.0, checker.clearance)  # pragma: no cover - valid() said no
    return [x]

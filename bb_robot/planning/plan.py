"""``plan()``: a collision-free, simplified, timed motion from a start to a goal, in one call.

The steps (docs/planning.md):

1. the request is checked: finite values, known joints, a goal that names something, scaling
   factors in [0, 1] (0 means 1, as in MoveIt); a malformed request raises :class:`InvalidRequest`;
2. the start and the goal configurations are checked (:mod:`bb_robot.planning.goals`: a pose goal
   becomes several inverse-kinematics solutions, a goal region);
3. RRT-Connect (:mod:`bb_robot.planning.rrt`) searches, every edge proven whole by
   :class:`~bb_robot.planning.validity.StateChecker` (compiled: sphere trees cull, GJK's lower bound
   on the parts' own hulls decides, continuously along the edge);
4. the path is shortened until no shortcut helps (:mod:`bb_robot.planning.shortcut`);
5. the last check (:func:`bb_robot.planning.exact.final_check`): the scene's model (coal) at every
   waypoint, every segment proven again, coal along any segment that proof leaves undecided;
6. the path is timed (:func:`bb_robot.planning.timing.time_path`): exactly on the checked polyline.

A request that has no plan returns a :class:`PlanResult` with ``success`` false and its ``error``
(start or goal in collision naming the pair, no IK solution, the iteration limit or timeout);
an approximate path is never returned as a success.  Repeatable: the same scene, request and seed
give the same path (the search and the shortcuts are bounded by iterations; ``timeout`` only stops
a search that would otherwise go on, and that search fails).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.collision.matrix import joint_bounds
from bb_robot.collision.scene import Scene
from bb_robot.errors import BbRobotError
from bb_robot.model.robot import Robot
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.serial_chain import default_tip
from bb_robot.model.transforms import Matrix
from bb_robot.planning.errors import (
    InvalidRequest,
    PathCheckFailed,
    PlanningError,
    PlanningTimeout,
    StartInCollision,
)
from bb_robot.planning.exact import final_check
from bb_robot.planning.goals import JointGoal, PoseGoal, goal_configurations
from bb_robot.planning.limits import JointLimits
from bb_robot.planning.rrt import rrt_connect
from bb_robot.planning.shortcut import path_length, simplify
from bb_robot.planning.timing import Trajectory, checked_scale, time_path
from bb_robot.planning.validity import StateChecker

#: Iterations of the search at most (each: one extension and one connection attempt).
MAX_ITERATIONS = 20_000
#: The longest edge one extension adds, as a fraction of the C-space's extent (its diagonal).
STEP_FRACTION = 0.05

Goal = JointGoal | PoseGoal | Mapping[str, float]


@dataclass
class PlanResult:
    """What :func:`plan` found.

    Attributes:
        success: a path was found, passed the exact check and was timed.
        error: why not (``None`` on success): :class:`~bb_robot.planning.errors.StartInCollision`,
            :class:`~bb_robot.planning.errors.GoalInCollision`, :class:`~bb_robot.planning.errors.NoIkSolution`,
            :class:`~bb_robot.planning.errors.PlanningTimeout`, :class:`~bb_robot.planning.errors.PathCheckFailed`.
        joints: the planned joints (the columns of the paths).
        start: every coordinate's start value (:attr:`ForwardKinematics.joint_names` order).
        raw_path: ``(k, len(joints))`` the search's path (empty without one).
        simplified_path: the shortened path (what was checked and timed).
        trajectory: the timed trajectory (``None`` without a path).
        goals: the goal configurations the search started from.
        planning_seconds: checking the request, the goals and searching.
        simplifying_seconds: shortening and the final exact check.
        timing_seconds: time parameterisation.
        raw_length: C-space length of ``raw_path`` (rad).
        simplified_length: of ``simplified_path``.
        iterations: the search's iterations.
        clearance: the clearance the path keeps (m; 0 asked is checked as 10 µm).
        checks: the checker's counters (states, edges, samples, exact queries, sub-paths).
    """

    success: bool
    error: PlanningError | None
    joints: tuple[str, ...]
    start: Matrix
    raw_path: Matrix
    simplified_path: Matrix
    trajectory: Trajectory | None
    goals: list[Matrix] = field(default_factory=list)
    planning_seconds: float = 0.0
    simplifying_seconds: float = 0.0
    timing_seconds: float = 0.0
    raw_length: float = 0.0
    simplified_length: float = 0.0
    iterations: int = 0
    clearance: float = 0.0
    checks: dict[str, int] = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        """Planning, simplifying and timing together."""
        return self.planning_seconds + self.simplifying_seconds + self.timing_seconds


def default_joints(robot: Robot) -> tuple[str, ...]:
    """The joints planned by default: the movable, non-mimic joints of the chain to :func:`default_tip`.

    The joints of other branches (a gripper's fingers) are not planned: they keep their start
    values.  Where that chain cannot be built (a mimic joint in it), every movable non-mimic joint.

    Args:
        robot: the model.

    Returns:
        Joint names, root first.
    """
    from bb_robot.model.kinematics import ForwardKinematics

    coordinates = ForwardKinematics(robot).joint_names
    try:
        chain = SerialManipulator.from_robot(robot, default_tip(robot), strict=False)
    except BbRobotError:
        return coordinates
    return tuple(j for j in chain.joint_names if j in coordinates)


def command_range(
    robot: Robot, joints: Sequence[str], lower: Matrix, upper: Matrix, limits: JointLimits
) -> tuple[Matrix, Matrix]:
    """Where the plan's goals and samples may lie: the model's bounds narrowed as the driver narrows its commands.

    The driver stops each joint at the end of its command range: its ``<safety_controller>`` soft
    limits where narrower than ``<limit>`` (the bundled arm's shoulder_pan: ±3.1 of ±π), and a
    parameter file's position limits.  A goal beyond them could be planned but never reached. The
    start is still accepted anywhere within the model's limits.

    Args:
        robot: the model.
        joints: the planned joints.
        lower: their bounds from the model (:func:`bb_robot.collision.matrix.joint_bounds`).
        upper: see ``lower``.
        limits: the planned joints' limits (a parameter file's position limits narrow them).

    Returns:
        ``(lower, upper)``, each at least as narrow as given (where a narrowing would leave no range,
        the given bound is kept).
    """
    low, high = np.maximum(lower, limits.lower), np.minimum(upper, limits.upper)
    for i, name in enumerate(joints):
        given = robot.joints[name].limits
        if given is not None and robot.joints[name].type != "continuous":
            if given.soft_lower is not None:
                low[i] = max(low[i], given.soft_lower)
            if given.soft_upper is not None:
                high[i] = min(high[i], given.soft_upper)
    empty = low >= high
    return np.where(empty, lower, low), np.where(empty, upper, high)


def default_value(robot: Robot, joint: str) -> float:
    """A joint's default: 0, or the middle of its range where 0 is outside its limits."""
    limits = robot.joints[joint].limits
    if limits is None or limits.lower is None or limits.upper is None or limits.lower <= 0.0 <= limits.upper:
        return 0.0
    return (limits.lower + limits.upper) / 2


def _start_vector(robot: Robot, names: Sequence[str], start: Mapping[str, float] | npt.ArrayLike) -> Matrix:
    """Every coordinate's start value from a mapping (others at their defaults) or a full vector."""
    if isinstance(start, Mapping):
        values = {name: default_value(robot, name) for name in names}
        for name, value in start.items():
            if name not in values:
                raise InvalidRequest(
                    f"start joint '{name}' is not a joint of robot '{robot.name}' that moves "
                    f"(its joints: {', '.join(names)})"
                )
            number = float(value)
            if not math.isfinite(number):
                raise InvalidRequest(f"start joint '{name}' has the value {value}; give a finite number")
            values[name] = number
        return np.array([values[name] for name in names])
    vector = np.asarray(start, dtype=float)
    if vector.shape != (len(names),):
        raise InvalidRequest(
            f"start needs {len(names)} values (joints {', '.join(names)}) or a mapping of names, "
            f"got shape {vector.shape}"
        )
    bad = [names[int(i)] for i in np.flatnonzero(~np.isfinite(vector))]
    if bad:
        raise InvalidRequest(f"start joint '{bad[0]}' has a non-finite value; give a finite number")
    return vector.copy()


def _failure(error: PlanningError, joints: tuple[str, ...], start: Matrix, began: float, **more: Any) -> PlanResult:
    empty = np.zeros((0, len(joints)))
    return PlanResult(
        False, error, joints, start, empty, empty, None, planning_seconds=time.perf_counter() - began, **more
    )


def plan(
    scene: Scene,
    start: Mapping[str, float] | npt.ArrayLike,
    goal: Goal,
    *,
    seed: int = 0,
    timeout: float = 1.0,
    velocity_scale: float = 1.0,
    acceleration_scale: float = 1.0,
    clearance: float = 0.0,
    joints: Sequence[str] | None = None,
    max_iterations: int = MAX_ITERATIONS,
    path_constraints: Any = None,
    limits: JointLimits | None = None,
    command_range_only: bool = True,
) -> PlanResult:
    """Plan a collision-free, simplified and timed motion (module docstring).

    Args:
        scene: the robot, its world and run-time objects, as they are now.
        start: every coordinate's value (:attr:`ForwardKinematics.joint_names` order), or a mapping of
            some (the others at 0, or mid-range where 0 is outside the limits).
        goal: a :class:`~bb_robot.planning.goals.JointGoal`, a mapping of joint values, or a
            :class:`~bb_robot.planning.goals.PoseGoal`.
        seed: seeds every random draw: the same seed gives the same path.
        timeout: seconds; only a limit (the search is bounded by ``max_iterations``), counted from the
            checker's construction (the sphere model of a robot part is built once per process: about
            0.5 s for a 7-joint arm's meshes, not counted).
        velocity_scale: a factor on the velocity limits in [0, 1] (0 means 1).
        acceleration_scale: a factor on the acceleration (and jerk) limits in [0, 1] (0 means 1).
        clearance: the least distance kept between checked pairs (m, ≥ 0).
        joints: the planned joints (default :func:`default_joints`); the others keep their start values.
        max_iterations: the search's iterations at most.
        path_constraints: an orientation constraint
            (:class:`bb_robot.planning.constraints.OrientationConstraint`) kept along the whole path.
        limits: the planned joints' limits (default: the model's, :meth:`JointLimits.from_robot`).
        command_range_only: keep goals and samples inside the range the driver commands
            (:func:`command_range`: ``<safety_controller>`` soft limits and ``limits``' positions), so
            the plan can be executed; ``False`` plans within the model's ``<limit>`` alone, as
            planners judged on benchmark problems do (MotionBenchMaker's Panda goals lie past its soft
            limits).

    Returns:
        The result; ``success`` false with its ``error`` when there is no plan.

    Raises:
        InvalidRequest: a malformed request (a non-finite value, an unknown joint or link, an empty
            goal, a value outside the limits, a scaling factor outside [0, 1], a bad timeout or clearance).
    """
    began = time.perf_counter()
    velocity = checked_scale(velocity_scale, "velocity_scale")
    acceleration = checked_scale(acceleration_scale, "acceleration_scale")
    if not (isinstance(timeout, (int, float)) and timeout > 0 and not math.isnan(timeout)):
        raise InvalidRequest(f"timeout must be a positive number of seconds, got {timeout}")
    if not (isinstance(max_iterations, int) and max_iterations > 0):
        raise InvalidRequest(f"max_iterations must be a positive integer, got {max_iterations}")
    model = scene.model
    robot, names = model.robot, model.fk.joint_names
    full_start = _start_vector(robot, names, start)
    planned = tuple(default_joints(robot) if joints is None else joints)
    if not planned:
        raise InvalidRequest(f"no joint to plan: robot '{robot.name}' has no movable joint in the chosen set")
    checker = StateChecker(model, planned, full_start, clearance)
    # the timeout bounds the search, not the sphere model built once per robot part and process
    prepared = time.perf_counter()
    lower, upper = joint_bounds(robot, planned)
    x_start = full_start[checker.active]
    for name, value, low, high in zip(planned, x_start, lower, upper, strict=True):
        if not low - 1e-9 <= value <= high + 1e-9:
            raise InvalidRequest(
                f"start joint '{name}' = {value:.6g} is outside its limits [{low:.6g}, {high:.6g}]; "
                "give a value within them"
            )
    timing_limits = limits if limits is not None else JointLimits.from_robot(robot, planned)
    if tuple(timing_limits.names) != planned:
        raise InvalidRequest(f"limits are for joints {list(timing_limits.names)}, the plan's are {list(planned)}")
    if command_range_only:
        lower, upper = command_range(robot, planned, lower, upper, timing_limits)
    rng = np.random.default_rng(seed)
    if not checker.valid(x_start):
        contact = checker.first_contact(x_start)
        pair, distance = (contact.links, contact.distance) if contact else (("?", "?"), 0.0)
        return _failure(StartInCollision(pair, distance, checker.clearance), planned, full_start, began)
    try:
        goals = goal_configurations(goal, checker, x_start, lower, upper, rng)
    except InvalidRequest:
        raise
    except PlanningError as error:
        return _failure(error, planned, full_start, began, clearance=checker.clearance)
    deadline = prepared + float(timeout)
    if path_constraints is not None:
        return _constrained(
            checker, x_start, goals, path_constraints, lower, upper, seed, timeout, max_iterations, began,
            timing_limits, velocity, acceleration, full_start,
        )  # fmt: skip
    step = STEP_FRACTION * float(np.linalg.norm(upper - lower))
    search = rrt_connect(
        x_start, goals, checker, lower, upper, rng, step=step, max_iterations=max_iterations, deadline=deadline
    )
    planned_at = time.perf_counter()
    if search.path is None:
        timeout_error = PlanningTimeout(search.reason, search.iterations, planned_at - began)
        return _failure(timeout_error, planned, full_start, began, goals=goals, iterations=search.iterations)
    return _finish(
        checker, search.path, None, rng, began, planned_at, timing_limits, velocity, acceleration, full_start,
        goals, search.iterations,
    )  # fmt: skip


def _finish(
    checker: StateChecker,
    raw: Matrix,
    simplified: Matrix | None,
    rng: np.random.Generator,
    began: float,
    planned_at: float,
    timing_limits: JointLimits,
    velocity: float,
    acceleration: float,
    full_start: Matrix,
    goals: list[Matrix],
    iterations: int,
) -> PlanResult:
    """Shorten (unless done), check exactly, time; the result."""
    path = simplify(raw, checker, rng) if simplified is None else simplified
    verdict = final_check(checker, path)
    simplified_at = time.perf_counter()
    common: dict[str, Any] = {
        "goals": goals,
        "planning_seconds": planned_at - began,
        "simplifying_seconds": simplified_at - planned_at,
        "raw_length": path_length(raw),
        "simplified_length": path_length(path),
        "iterations": iterations,
        "clearance": checker.clearance,
        "checks": dict(vars(checker.counts)),
    }
    if not verdict.ok:
        contact = verdict.contact
        pair, distance = (contact.links, contact.distance) if contact else (("?", "?"), 0.0)
        error = PathCheckFailed(pair, distance, checker.clearance)
        return PlanResult(False, error, checker.joints, full_start, raw, path, None, **common)
    trajectory = time_path(path, timing_limits, velocity_scale=velocity, acceleration_scale=acceleration)
    common["timing_seconds"] = time.perf_counter() - simplified_at
    return PlanResult(True, None, checker.joints, full_start, raw, path, trajectory, **common)


def _constrained(
    checker: StateChecker,
    x_start: Matrix,
    goals: list[Matrix],
    constraint: Any,
    lower: Matrix,
    upper: Matrix,
    seed: int,
    timeout: float,
    max_iterations: int,
    began: float,
    timing_limits: JointLimits,
    velocity: float,
    acceleration: float,
    full_start: Matrix,
) -> PlanResult:
    """A plan keeping an orientation constraint: :func:`bb_robot.planning.constraints.plan_constrained`."""
    from bb_robot.planning.constraints import plan_constrained

    try:
        found = plan_constrained(
            checker, x_start, goals, constraint, lower=lower, upper=upper, seed=seed,
            timeout=max(timeout - (time.perf_counter() - began), 1e-3), max_iterations=max_iterations,
        )  # fmt: skip
    except InvalidRequest:
        raise
    except PlanningError as error:
        return _failure(error, checker.joints, full_start, began, goals=goals)
    planned_at = time.perf_counter()
    return _finish(
        checker, found.raw, found.simplified, np.random.default_rng(seed), began, planned_at, timing_limits,
        velocity, acceleration, full_start, goals, found.iterations,
    )  # fmt: skip

"""MoveIt's constraints as the planner's goals, and its error codes: what :mod:`~bb_robot.move_group.requests`
translates.

- :class:`Code`: the ``moveit_msgs/MoveItErrorCodes`` values (moveit_msgs 2.6.0);
- :func:`goal_list`: each ``Constraints`` of ``goal_constraints`` as a
  :class:`~bb_robot.planning.goals.JointGoal` (joint constraints, at their positions) or a
  :class:`~bb_robot.planning.goals.PoseGoal` (one position constraint whose region is one box or
  sphere, its centre the target and its smallest half-size or radius the position tolerance, with
  at most one orientation constraint on the same link, its smallest axis tolerance the orientation
  tolerance: at least as strict as asked; all three tolerances at pi or more leave the orientation
  free).  Anything else is refused with ``INVALID_GOAL_CONSTRAINTS`` naming it: visibility
  constraints, joint and pose constraints mixed, a ``target_point_offset``, meshes or several
  primitives as a region, an orientation constraint alone;
- :func:`path_constraint`: at most one orientation constraint, kept along the whole path
  (:class:`~bb_robot.planning.constraints.OrientationConstraint`); other path constraints refused;
- :func:`solve_ik`: ``GetPositionIK`` from the request's state, then random seeds.

Frames: empty or the robot's root link (the planning frame), or any robot link, placed where the
start state puts it; anything else is ``FRAME_TRANSFORM_FAILURE``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from bb_robot.errors import BbRobotError
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix
from bb_robot.move_group.groups import Group
from bb_robot.move_group.scene_updates import UpdateRefused, pose_of
from bb_robot.planning.errors import PlanningError
from bb_robot.planning.goals import JointGoal, PoseGoal

if TYPE_CHECKING:
    from bb_robot.collision.scene import Scene
    from bb_robot.planning.constraints import OrientationConstraint


class MoveGroupCore(Protocol):
    """What the translation needs of :class:`bb_robot.move_group.requests.MoveGroupCore`."""

    scene: Scene
    names: tuple[str, ...]
    seed: int

    def link_pose(self, link: str, q: Matrix | None = None) -> Matrix:
        """A link's pose in the root frame at ``q``."""

    def start_state(self, robot_state: Mapping[str, Any] | None, where: str = "start_state") -> Matrix:
        """Every coordinate of a ``RobotState``."""

    def group(self, name: str) -> Group:
        """The group a request names."""


class Code:
    """``moveit_msgs/MoveItErrorCodes`` values."""

    SUCCESS = 1
    UNDEFINED = 0
    FAILURE = 99999
    PLANNING_FAILED = -1
    INVALID_MOTION_PLAN = -2
    CONTROL_FAILED = -4
    TIMED_OUT = -6
    PREEMPTED = -7
    START_STATE_IN_COLLISION = -10
    GOAL_IN_COLLISION = -12
    GOAL_CONSTRAINTS_VIOLATED = -14
    INVALID_GROUP_NAME = -15
    INVALID_GOAL_CONSTRAINTS = -16
    INVALID_ROBOT_STATE = -17
    INVALID_LINK_NAME = -18
    INVALID_OBJECT_NAME = -19
    FRAME_TRANSFORM_FAILURE = -21
    ROBOT_STATE_STALE = -23
    COMMUNICATION_FAILURE = -25
    START_STATE_INVALID = -26
    NO_IK_SOLUTION = -31


class Refused(PlanningError):
    """A request refused before planning, with the ``MoveItErrorCodes`` value that names why.

    Attributes:
        code: the value.
    """

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(message)


def pose(data: Mapping[str, Any] | None, where: str) -> Matrix:
    """A ``geometry_msgs/Pose`` mapping as a 4×4 pose (raises :class:`Refused` for a non-finite one)."""
    try:
        return pose_of(data, where)
    except UpdateRefused as error:
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, str(error)) from None


def frame_of(core: MoveGroupCore, frame: str, q: Matrix, where: str) -> Matrix:
    """The pose of ``frame`` in the root frame at ``q`` (module docstring).

    Raises:
        Refused: ``FRAME_TRANSFORM_FAILURE`` for a frame that is no robot link.
    """
    root = core.scene.robot_model.robot.root_link
    if frame in ("", root):
        return np.eye(4)
    try:
        return core.link_pose(frame, q)
    except KeyError:
        raise Refused(
            Code.FRAME_TRANSFORM_FAILURE,
            f"{where}: frame '{frame}' is neither the planning frame '{root}' nor a robot link",
        ) from None


def workspace_box(data: Mapping[str, Any] | None, root: str) -> tuple[Matrix, Matrix] | None:
    """``WorkspaceParameters`` as a box in the root frame, or ``None`` when it is empty (all zero).

    Raises:
        Refused: a frame other than the root, non-finite corners, a min above a max.
    """
    if not data:
        return None
    low = np.array([float((data.get("min_corner") or {}).get(k, 0.0)) for k in "xyz"])
    high = np.array([float((data.get("max_corner") or {}).get(k, 0.0)) for k in "xyz"])
    if not (low.any() or high.any()):
        return None
    frame = str((data.get("header") or {}).get("frame_id", ""))
    if frame not in ("", root):
        raise Refused(
            Code.FRAME_TRANSFORM_FAILURE, f"workspace_parameters: frame '{frame}' is not the planning frame '{root}'"
        )
    if not (np.isfinite(low).all() and np.isfinite(high).all() and (low <= high).all()):
        raise Refused(
            Code.INVALID_MOTION_PLAN, f"workspace_parameters: corners {low.tolist()} / {high.tolist()} are not a box"
        )
    return low, high


def _joint_goal(group: Group, items: Sequence[Mapping[str, Any]], where: str) -> JointGoal:
    values: dict[str, float] = {}
    for index, item in enumerate(items):
        name = str(item.get("joint_name", ""))
        value = float(item.get("position", math.nan))
        if name not in group.joints:
            raise Refused(
                Code.INVALID_GOAL_CONSTRAINTS,
                f"{where}.joint_constraints[{index}]: '{name}' is not a joint of group '{group.name}' "
                f"({', '.join(group.joints)})",
            )
        if not math.isfinite(value):
            raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}.joint_constraints[{index}]: '{name}' = {value}")
        values[name] = value
    return JointGoal(values)


def _region(core: MoveGroupCore, item: Mapping[str, Any], q: Matrix, where: str) -> tuple[str, Matrix, float]:
    """A position constraint's link, target point (root frame) and tolerance."""
    link = str(item.get("link_name", ""))
    if link not in core.scene.robot_model.robot.links:
        raise Refused(Code.INVALID_LINK_NAME, f"{where}.link_name: the robot has no link '{link}'")
    offset = item.get("target_point_offset") or {}
    if any(float(offset.get(k, 0.0)) for k in "xyz"):
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}.target_point_offset: only a zero offset is supported")
    region = item.get("constraint_region") or {}
    primitives = list(region.get("primitives") or [])
    poses = list(region.get("primitive_poses") or [])
    if region.get("meshes") or len(primitives) != 1 or len(poses) != 1:
        raise Refused(
            Code.INVALID_GOAL_CONSTRAINTS,
            f"{where}.constraint_region: needs exactly one box or sphere primitive with its pose "
            f"(got {len(primitives)} primitives, {len(poses)} poses, {len(region.get('meshes') or [])} meshes)",
        )
    kind = int(primitives[0].get("type", 0))
    dimensions = [float(d) for d in primitives[0].get("dimensions") or []]
    if kind == 1 and len(dimensions) == 3:
        tolerance = min(dimensions) / 2
    elif kind == 2 and len(dimensions) == 1:
        tolerance = dimensions[0]
    else:
        raise Refused(
            Code.INVALID_GOAL_CONSTRAINTS,
            f"{where}.constraint_region: a BOX (3 dimensions) or SPHERE (1) region is supported, "
            f"got type {kind} {dimensions}",
        )
    if not (math.isfinite(tolerance) and tolerance > 0):
        raise Refused(
            Code.INVALID_GOAL_CONSTRAINTS, f"{where}.constraint_region: dimensions {dimensions} must be positive"
        )
    frame = frame_of(core, str((item.get("header") or {}).get("frame_id", "")), q, f"{where}.header.frame_id")
    target = frame @ pose(poses[0], f"{where}.constraint_region.primitive_poses[0]")
    return link, target, tolerance


def orientation(
    core: MoveGroupCore, item: Mapping[str, Any], q: Matrix, where: str
) -> tuple[str, Matrix, tuple[float, float, float]]:
    """An orientation constraint's link, rotation (root frame) and axis tolerances.

    Raises:
        Refused: an unknown link or frame, a zero or non-finite quaternion, bad tolerances.
    """
    link = str(item.get("link_name", ""))
    if link not in core.scene.robot_model.robot.links:
        raise Refused(Code.INVALID_LINK_NAME, f"{where}.link_name: the robot has no link '{link}'")
    quaternion = item.get("orientation") or {}
    values = [float(quaternion.get(k, 0.0)) for k in "xyzw"]
    norm = math.sqrt(sum(v * v for v in values))
    if not (math.isfinite(norm) and norm > 1e-9):
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}.orientation: {values} is not a rotation")
    rotation = pose({"orientation": dict(zip("xyzw", values, strict=True))}, f"{where}.orientation")
    frame = frame_of(core, str((item.get("header") or {}).get("frame_id", "")), q, f"{where}.header.frame_id")
    tolerances = tuple(float(item.get(f"absolute_{a}_axis_tolerance", 0.0)) for a in "xyz")
    if not all(math.isfinite(t) and t > 0 for t in tolerances):
        raise Refused(
            Code.INVALID_GOAL_CONSTRAINTS, f"{where}: axis tolerances must be positive, got {list(tolerances)}"
        )
    return link, frame @ rotation, (tolerances[0], tolerances[1], tolerances[2])


def _goal(core: MoveGroupCore, group: Group, q: Matrix, data: Mapping[str, Any], where: str) -> JointGoal | PoseGoal:
    joint_items = list(data.get("joint_constraints") or [])
    positions = list(data.get("position_constraints") or [])
    orientations = list(data.get("orientation_constraints") or [])
    if data.get("visibility_constraints"):
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}.visibility_constraints: not supported")
    if joint_items and (positions or orientations):
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}: joint and pose constraints together are not supported")
    if joint_items:
        return _joint_goal(group, joint_items, where)
    if not positions:
        what = (
            "an orientation constraint alone is not supported: add a position constraint"
            if orientations
            else "is empty"
        )
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}: {what}")
    if len(positions) > 1 or len(orientations) > 1:
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}: at most one position and one orientation constraint")
    link, target, position_tolerance = _region(core, positions[0], q, f"{where}.position_constraints[0]")
    angle: float | None = None
    if orientations:
        other, rotation, tolerances = orientation(core, orientations[0], q, f"{where}.orientation_constraints[0]")
        if other != link:
            raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{where}: position on '{link}' but orientation on '{other}'")
        target = target.copy()
        target[:3, :3] = rotation[:3, :3]
        angle = None if min(tolerances) >= math.pi else min(tolerances)
    return PoseGoal(link, target, position_tolerance, angle)


def goal_list(
    core: MoveGroupCore,
    group: Group,
    q: Matrix,
    items: Sequence[Mapping[str, Any]],
    workspace: tuple[Matrix, Matrix] | None,
) -> list[JointGoal | PoseGoal]:
    """Each of ``goal_constraints`` as a goal (module docstring).

    Raises:
        Refused: ``INVALID_GOAL_CONSTRAINTS`` (none given, or what the module docstring lists),
            ``INVALID_LINK_NAME``, ``FRAME_TRANSFORM_FAILURE``, a pose goal outside the workspace.
    """
    if not items:
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, "goal_constraints: empty; give joint or pose constraints")
    found = [_goal(core, group, q, item, f"goal_constraints[{i}]") for i, item in enumerate(items)]
    for index, goal in enumerate(found):
        if isinstance(goal, PoseGoal) and workspace is not None:
            point = np.asarray(goal.pose)[:3, 3]
            if not ((workspace[0] <= point).all() and (point <= workspace[1]).all()):
                raise Refused(
                    Code.INVALID_GOAL_CONSTRAINTS,
                    f"goal_constraints[{index}]: the target {point.round(4).tolist()} is outside workspace_parameters",
                )
    return found


def path_constraint(
    core: MoveGroupCore, group: Group, q: Matrix, data: Mapping[str, Any] | None
) -> OrientationConstraint | None:
    """The path constraints as the planner's (module docstring); ``None`` when there are none.

    Raises:
        Refused: ``INVALID_GOAL_CONSTRAINTS`` naming what is not supported, or as :func:`orientation`.
    """
    from bb_robot.planning.constraints import OrientationConstraint

    if not data:
        return None
    for key in ("joint_constraints", "position_constraints", "visibility_constraints"):
        if data.get(key):
            raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"path_constraints.{key}: not supported (orientation only)")
    items = list(data.get("orientation_constraints") or [])
    if not items:
        return None
    if len(items) > 1:
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, "path_constraints: at most one orientation constraint")
    link, rotation, tolerances = orientation(core, items[0], q, "path_constraints.orientation_constraints[0]")
    clipped = (min(tolerances[0], math.pi), min(tolerances[1], math.pi / 2 - 1e-6), min(tolerances[2], math.pi))
    try:
        return OrientationConstraint(link, rotation[:3, :3], clipped)
    except PlanningError as error:
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"path_constraints: {error}") from None


#: Random seeds ``GetPositionIK`` tries after the request's state.
IK_SEEDS = 24


def solve_ik(core: MoveGroupCore, request: Mapping[str, Any]) -> dict[str, float]:
    """``GetPositionIK`` (see :meth:`MoveGroupCore.ik`)."""
    ik = request
    group = core.group(str(ik.get("group_name", "")))
    q = core.start_state(ik.get("robot_state"), "ik_request.robot_state")
    if ik.get("ik_link_names") or ik.get("pose_stamped_vector"):
        raise Refused(Code.INVALID_LINK_NAME, "ik_request: several links at once are not supported; give ik_link_name")
    constraints = ik.get("constraints") or {}
    if any(
        constraints.get(k)
        for k in ("joint_constraints", "position_constraints", "orientation_constraints", "visibility_constraints")
    ):
        raise Refused(Code.INVALID_GOAL_CONSTRAINTS, "ik_request.constraints: not supported; send empty constraints")
    link = str(ik.get("ik_link_name", "")) or group.tip
    robot = core.scene.robot_model.robot
    if link not in robot.links:
        raise Refused(Code.INVALID_LINK_NAME, f"ik_request.ik_link_name: the robot has no link '{link}'")
    stamped = ik.get("pose_stamped") or {}
    frame = frame_of(
        core, str((stamped.get("header") or {}).get("frame_id", "")), q, "ik_request.pose_stamped.header.frame_id"
    )
    target = frame @ pose(stamped.get("pose"), "ik_request.pose_stamped.pose")
    timeout_data = ik.get("timeout") or {}
    timeout = float(timeout_data.get("sec", 0)) + float(timeout_data.get("nanosec", 0)) * 1e-9
    timeout = timeout if timeout > 0 else 1.0
    try:
        chain = SerialManipulator.from_robot(robot, tip=link, strict=False)
    except BbRobotError as error:
        raise Refused(Code.INVALID_LINK_NAME, f"ik_request.ik_link_name: no chain reaches '{link}': {error}") from None
    outside = [j for j in chain.joint_names if j not in group.joints]
    if outside:
        raise Refused(
            Code.INVALID_GROUP_NAME,
            f"ik_request: joints {outside} of the chain to '{link}' are not in group '{group.name}'",
        )
    columns = [core.names.index(j) for j in chain.joint_names]
    lower, upper = chain_bounds(chain)
    rng = np.random.default_rng(core.seed)
    deadline = time.perf_counter() + timeout
    seeds = [np.clip(q[columns], lower, upper)]
    reached = 0
    for attempt in range(IK_SEEDS + 1):
        if attempt and time.perf_counter() > deadline:
            break
        seed = seeds[0] if attempt == 0 else lower + (upper - lower) * rng.random(len(columns))
        try:
            solution = chain.inverse(target, seed=seed, timeout=None, max_restarts=0, rng=rng, lower=lower, upper=upper)
        except BbRobotError as error:
            raise Refused(Code.NO_IK_SOLUTION, f"ik_request: {error}") from None
        if not solution.success:
            continue
        reached += 1
        x = q.copy()
        x[columns] = solution.q
        if ik.get("avoid_collisions") and core.scene.colliding(x):
            continue
        return dict(zip(core.names, (float(v) for v in x), strict=True))
    why = f"; {reached} solutions were in collision" if reached else ""
    raise Refused(
        Code.NO_IK_SOLUTION,
        f"no configuration puts '{link}' at the pose within the joint limits ({attempt + 1} attempts{why})",
    )


def chain_bounds(chain: SerialManipulator) -> tuple[Matrix, Matrix]:
    """A chain's joint bounds (continuous joints: ±2π)."""
    lower = np.array(
        [j.lower if j.lower is not None and math.isfinite(j.lower) else -2 * math.pi for j in chain.joints]
    )
    upper = np.array([j.upper if j.upper is not None and math.isfinite(j.upper) else 2 * math.pi for j in chain.joints])
    return lower, upper

"""MoveIt's ``move_group`` requests as plain data, answered by the planner: the node's logic without ROS.

:class:`MoveGroupCore` takes a request's fields as mappings (the node converts each message with
its field names; poses as ``{position: {x, y, z}, orientation: {x, y, z, w}}``) and answers with
an :class:`Outcome` (``MoveItErrorCodes`` value, message, trajectory) or raises :class:`Refused`
with the code that names what is wrong.  What it does, as MoveIt does it (docs/nodes/move_group.md):

- **groups**: the SRDF's, else the driven chain (:mod:`bb_robot.move_group.groups`); an empty
  ``group_name`` is the default group, an unknown one ``INVALID_GROUP_NAME``;
- **start state**: the current joint states (:meth:`MoveGroupCore.set_joint_states`) with the
  request's ``joint_state`` over them (``is_diff`` or not: joints not named keep their current
  values); unknown joints and non-finite values are ``INVALID_ROBOT_STATE``;
- **goals** (:mod:`bb_robot.move_group.moveit_goals`): joint constraints, or a position constraint
  (a box or sphere region) with an orientation constraint (absolute axis tolerances); each of
  ``goal_constraints`` is an alternative, tried in turn;
- ``allowed_planning_time`` (0: ``planning.timeout``), ``num_planning_attempts`` (seeds tried in
  turn within that time), the scaling factors (0 means 1), ``planner_id`` (one planner: any other
  id is planned with it and :attr:`Outcome.warnings` names it), ``workspace_parameters`` (a pose
  goal outside the box is refused).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bb_robot.collision.scene import Scene
from bb_robot.errors import BbRobotError
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix
from bb_robot.move_group import moveit_goals as goals
from bb_robot.move_group.groups import Group
from bb_robot.move_group.moveit_goals import Code, Refused
from bb_robot.move_group.scene_updates import SceneUpdater
from bb_robot.planning.cartesian import cartesian_path
from bb_robot.planning.errors import (
    GoalInCollision,
    InvalidRequest,
    NoIkSolution,
    PathCheckFailed,
    PlanningError,
    PlanningTimeout,
    StartInCollision,
)
from bb_robot.planning.limits import JointLimits
from bb_robot.planning.plan import plan
from bb_robot.planning.timing import Trajectory
from bb_robot.planning.validity import DRIVER_CLEARANCE

__all__ = ["Code", "MoveGroupCore", "Outcome", "Refused", "error_code"]

#: The planner's name (``planner_id``s other than these are planned with it, with a warning).
PLANNER_IDS = ("", "RRTConnect", "RRTConnectkConfigDefault", "bb_robot")


@dataclass
class Outcome:
    """A planning service's answer.

    Attributes:
        code: the ``MoveItErrorCodes`` value.
        message: why, when not ``SUCCESS``.
        start: the start state (joint name → value, every coordinate).
        trajectory: the timed trajectory of the group's joints (``None`` without a plan).
        planning_time: seconds spent.
        fraction: a Cartesian path's share achieved.
        warnings: what the request asked that is not done as asked (an unknown planner id).
        group: the group planned.
    """

    code: int
    message: str = ""
    start: dict[str, float] = field(default_factory=dict)
    trajectory: Trajectory | None = None
    planning_time: float = 0.0
    fraction: float = 0.0
    warnings: list[str] = field(default_factory=list)
    group: str = ""


def error_code(error: PlanningError) -> int:
    """The ``MoveItErrorCodes`` value of a planner's error."""
    if isinstance(error, Refused):
        return error.code
    table: list[tuple[type[PlanningError], int]] = [
        (StartInCollision, Code.START_STATE_IN_COLLISION),
        (GoalInCollision, Code.GOAL_IN_COLLISION),
        (NoIkSolution, Code.NO_IK_SOLUTION),
        (PlanningTimeout, Code.PLANNING_FAILED),
        (PathCheckFailed, Code.INVALID_MOTION_PLAN),
        (InvalidRequest, Code.INVALID_MOTION_PLAN),
    ]
    for kind, code in table:
        if isinstance(error, kind):
            return code
    found = getattr(error, "code", None)
    return found if isinstance(found, int) else Code.FAILURE


def _scale(value: Any, label: str) -> float:
    number = float(value or 0.0)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise Refused(Code.INVALID_MOTION_PLAN, f"{label} must be in [0, 1] (0 means 1), got {value}")
    return number


class MoveGroupCore:
    """The planner behind MoveIt's interface, on one scene.

    Args:
        scene: the robot, its configured world and the run-time objects.
        groups: the planning groups by name.
        default_group: the group an empty ``group_name`` means.
        limits: per group name, the limits its plans are timed with.
        clearance: the least distance a plan keeps (m).
        timeout: the planning time when a request gives none (s).
        seed: the first random seed (attempt ``k`` uses ``seed + k``).
    """

    def __init__(
        self,
        scene: Scene,
        groups: Mapping[str, Group],
        default_group: str,
        limits: Mapping[str, JointLimits],
        *,
        clearance: float = DRIVER_CLEARANCE,
        timeout: float = 5.0,
        seed: int = 0,
    ) -> None:
        self.scene = scene
        self.groups = dict(groups)
        self.default_group = default_group
        self.limits = dict(limits)
        self.clearance = clearance
        self.timeout = timeout
        self.seed = seed
        self.names: tuple[str, ...] = tuple(scene.robot_model.fk.joint_names)
        self._current: dict[str, float] = {}
        self.updates = SceneUpdater(scene, self.link_pose, self.current)

    # ------------------------------------------------------------------ state
    def set_joint_states(self, names: Sequence[str], positions: Sequence[float]) -> None:
        """Take a ``joint_states`` message: the values of the model's joints it names (others ignored)."""
        for name, value in zip(names, positions, strict=False):
            if name in self.names and math.isfinite(float(value)):
                self._current[name] = float(value)

    @property
    def has_state(self) -> bool:
        """Whether every joint of the model has had a value from ``joint_states``."""
        return all(name in self._current for name in self.names)

    def current(self) -> Matrix:
        """The current configuration (joints never heard of at 0 or mid-range)."""
        from bb_robot.planning.plan import default_value

        robot = self.scene.robot_model.robot
        return np.array([self._current.get(n, default_value(robot, n)) for n in self.names])

    def start_state(self, robot_state: Mapping[str, Any] | None, where: str = "start_state") -> Matrix:
        """Every coordinate of a ``RobotState``: the current state with the message's joints over it.

        Raises:
            Refused: ``INVALID_ROBOT_STATE`` for an unknown joint, a non-finite value, mismatched
                lengths or attached objects in the state; ``ROBOT_STATE_STALE`` when joint states
                never came and the message does not give every joint.
        """
        state = robot_state or {}
        joint_state = state.get("joint_state") or {}
        names = list(joint_state.get("name") or [])
        positions = list(joint_state.get("position") or [])
        if len(names) != len(positions):
            raise Refused(
                Code.INVALID_ROBOT_STATE, f"{where}.joint_state: {len(names)} names but {len(positions)} positions"
            )
        if state.get("attached_collision_objects"):
            raise Refused(
                Code.INVALID_ROBOT_STATE,
                f"{where}.attached_collision_objects: not taken in a request; attach objects on "
                "/attached_collision_object or with apply_planning_scene first",
            )
        md = state.get("multi_dof_joint_state") or {}
        if md.get("joint_names"):
            raise Refused(Code.INVALID_ROBOT_STATE, f"{where}.multi_dof_joint_state: the robot has no multi-DOF joint")
        if not self.has_state and not set(self.names) <= set(names):
            missing = [n for n in self.names if n not in self._current and n not in names]
            raise Refused(
                Code.ROBOT_STATE_STALE,
                f"no joint_states received yet for {', '.join(missing)}; start the driver, or give every "
                f"joint in {where}",
            )
        q = self.current()
        robot = self.scene.robot_model.robot
        for name, value in zip(names, positions, strict=True):
            if name not in self.names and name in robot.joints:
                continue  # a mimic joint (it follows its leader), as joint_states carries it
            if name not in self.names:
                raise Refused(
                    Code.INVALID_ROBOT_STATE,
                    f"{where}.joint_state: '{name}' is not a joint of robot '{self.scene.robot_model.robot.name}'",
                )
            number = float(value)
            if not math.isfinite(number):
                raise Refused(
                    Code.INVALID_ROBOT_STATE, f"{where}.joint_state: '{name}' = {value}; give a finite number"
                )
            q[self.names.index(name)] = number
        return q

    def link_pose(self, link: str, q: Matrix | None = None) -> Matrix:
        """A link's pose in the root frame at ``q`` (default: the current state); ``KeyError`` for an unknown link."""
        fk = self.scene.robot_model.fk
        index = fk.link_names.index(link) if link in fk.link_names else None
        if index is None:
            raise KeyError(link)
        return np.asarray(fk.compute(self.current() if q is None else q)[index])

    def group(self, name: str) -> Group:
        """The group a request names (empty: the default).

        Raises:
            Refused: ``INVALID_GROUP_NAME``, naming the groups there are.
        """
        found = self.groups.get(name or self.default_group)
        if found is None:
            raise Refused(
                Code.INVALID_GROUP_NAME, f"group '{name}' does not exist (groups: {', '.join(self.groups) or 'none'})"
            )
        return found

    # ------------------------------------------------------------------ planning
    def plan(self, request: Mapping[str, Any]) -> Outcome:
        """Answer a ``MotionPlanRequest`` (module docstring); never raises for a request's content.

        Args:
            request: the message as a mapping.

        Returns:
            The outcome: ``SUCCESS`` with the trajectory, or the code and message of why not.
        """
        began = time.perf_counter()
        warnings: list[str] = []
        try:
            group = self.group(str(request.get("group_name", "")))
            q = self.start_state(request.get("start_state"))
            for key in ("planner_id", "pipeline_id"):
                value = str(request.get(key, ""))
                if value not in PLANNER_IDS and value not in ("ompl", "bb_robot"):
                    warnings.append(f"{key} '{value}' is not known here: planned with bb_robot's RRT-Connect")
            velocity = _scale(request.get("max_velocity_scaling_factor"), "max_velocity_scaling_factor")
            acceleration = _scale(request.get("max_acceleration_scaling_factor"), "max_acceleration_scaling_factor")
            timeout = float(request.get("allowed_planning_time") or 0.0) or self.timeout
            if not (math.isfinite(timeout) and timeout > 0):
                raise Refused(Code.INVALID_MOTION_PLAN, f"allowed_planning_time must be positive, got {timeout}")
            attempts = int(request.get("num_planning_attempts") or 0)
            if attempts < 0:
                raise Refused(Code.INVALID_MOTION_PLAN, f"num_planning_attempts must be >= 0, got {attempts}")
            for key in ("trajectory_constraints", "reference_trajectories"):
                given = request.get(key)
                if given and (given.get("constraints") if isinstance(given, Mapping) else given):
                    raise Refused(Code.INVALID_GOAL_CONSTRAINTS, f"{key}: not supported; send an empty one")
            workspace = goals.workspace_box(request.get("workspace_parameters"), self.scene.robot_model.robot.root_link)
            targets = goals.goal_list(self, group, q, request.get("goal_constraints") or [], workspace)
            constraint = goals.path_constraint(self, group, q, request.get("path_constraints"))
        except Refused as refused:
            return Outcome(refused.code, str(refused), warnings=warnings, planning_time=time.perf_counter() - began)
        start = dict(zip(self.names, (float(v) for v in q), strict=True))
        deadline = began + timeout
        last: PlanningError | None = None
        for target in targets:
            for attempt in range(max(attempts, 1)):
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    break
                try:
                    result = plan(
                        self.scene, q, target, seed=self.seed + attempt, timeout=remaining,
                        velocity_scale=velocity, acceleration_scale=acceleration, clearance=self.clearance,
                        joints=group.joints, path_constraints=constraint, limits=self.limits[group.name],
                    )  # fmt: skip
                except PlanningError as error:
                    last = error
                    break
                if result.success:
                    return Outcome(
                        Code.SUCCESS,
                        "",
                        start,
                        result.trajectory,
                        time.perf_counter() - began,
                        1.0,
                        warnings,
                        group.name,
                    )
                last = result.error
                if not isinstance(last, PlanningTimeout):
                    break  # a collision or IK verdict does not change with the seed
        if last is None:
            last = PlanningTimeout(f"allowed_planning_time {timeout:g} s spent", 0, time.perf_counter() - began)
        return Outcome(error_code(last), str(last), start, None, time.perf_counter() - began, 0.0, warnings, group.name)

    def cartesian(self, request: Mapping[str, Any]) -> Outcome:
        """Answer a ``GetCartesianPath`` request: the tool along straight lines through the waypoints.

        Returns:
            ``SUCCESS`` with the fraction achieved (which may be below 1), or the code of why not.
        """
        began = time.perf_counter()
        try:
            group = self.group(str(request.get("group_name", "")))
            q = self.start_state(request.get("start_state"))
            link = str(request.get("link_name", "")) or group.tip
            if link not in self.scene.robot_model.robot.links:
                raise Refused(Code.INVALID_LINK_NAME, f"link_name: the robot has no link '{link}'")
            frame = goals.frame_of(self, (request.get("header") or {}).get("frame_id", ""), q, "header.frame_id")
            waypoints = [frame @ goals.pose(w, f"waypoints[{i}]") for i, w in enumerate(request.get("waypoints") or [])]
            if not waypoints:
                raise Refused(Code.INVALID_GOAL_CONSTRAINTS, "waypoints: give at least one pose")
            max_step = float(request.get("max_step") or 0.0)
            jump = float(request.get("jump_threshold") or 0.0)
            if not (math.isfinite(max_step) and max_step > 0 and math.isfinite(jump) and jump >= 0):
                raise Refused(
                    Code.INVALID_MOTION_PLAN, f"max_step must be > 0 and jump_threshold >= 0, got {max_step}, {jump}"
                )
            path = request.get("path_constraints") or {}
            if any(
                path.get(k)
                for k in (
                    "joint_constraints",
                    "position_constraints",
                    "orientation_constraints",
                    "visibility_constraints",
                )
            ):
                raise Refused(Code.INVALID_GOAL_CONSTRAINTS, "path_constraints: not supported for Cartesian paths")
            velocity = _scale(request.get("max_velocity_scaling_factor"), "max_velocity_scaling_factor")
            acceleration = _scale(request.get("max_acceleration_scaling_factor"), "max_acceleration_scaling_factor")
            chain = SerialManipulator.from_robot(self.scene.robot_model.robot, tip=link, strict=False)
            joints = [j for j in chain.joint_names if j in group.joints]
            limits = (
                JointLimits.from_robot(self.scene.robot_model.robot, joints)
                if tuple(joints) != group.joints
                else self.limits[group.name]
            )
            result = cartesian_path(
                self.scene, q, waypoints, max_step=max_step, jump_threshold=jump,
                avoid_collisions=bool(request.get("avoid_collisions", True)), tip=link, joints=joints,
                clearance=self.clearance, limits=limits, velocity_scale=velocity, acceleration_scale=acceleration,
            )  # fmt: skip
        except Refused as refused:
            return Outcome(refused.code, str(refused), planning_time=time.perf_counter() - began)
        except PlanningError as error:
            return Outcome(error_code(error), str(error), planning_time=time.perf_counter() - began)
        except BbRobotError as error:
            return Outcome(Code.INVALID_LINK_NAME, str(error), planning_time=time.perf_counter() - began)
        start = dict(zip(self.names, (float(v) for v in q), strict=True))
        message = result.stop or ""
        return Outcome(
            Code.SUCCESS,
            message,
            start,
            result.trajectory,
            time.perf_counter() - began,
            result.fraction,
            [],
            group.name,
        )

    # ------------------------------------------------------------------ kinematics and checks
    def fk(self, frame: str, links: Sequence[str], robot_state: Mapping[str, Any] | None) -> list[Matrix]:
        """``GetPositionFK``: each link's pose in ``frame`` (empty: the root link).

        Raises:
            Refused: ``INVALID_LINK_NAME``, ``FRAME_TRANSFORM_FAILURE``, ``INVALID_ROBOT_STATE``.
        """
        q = self.start_state(robot_state, "robot_state")
        base = np.linalg.inv(goals.frame_of(self, frame, q, "header.frame_id"))
        poses = []
        for link in links:
            try:
                poses.append(base @ self.link_pose(link, q))
            except KeyError:
                raise Refused(Code.INVALID_LINK_NAME, f"fk_link_names: the robot has no link '{link}'") from None
        return poses

    def ik(self, request: Mapping[str, Any]) -> dict[str, float]:
        """``GetPositionIK``: joint values putting the link at the pose, from the request's state.

        Returns:
            Every coordinate's value (the group's solved, the others as given).

        Raises:
            Refused: ``NO_IK_SOLUTION`` (naming the attempts), ``INVALID_GROUP_NAME``,
                ``INVALID_LINK_NAME``, ``FRAME_TRANSFORM_FAILURE``, ``INVALID_ROBOT_STATE``.
        """
        return goals.solve_ik(self, request)

    def contacts(self, robot_state: Mapping[str, Any] | None, group_name: str = "") -> list[tuple[str, str, float]]:
        """``GetStateValidity``: the pairs in contact at the state (empty: valid), and the joint limits.

        Returns:
            ``(body 1, body 2, depth)`` per contact; a joint outside its limits is reported as
            ``(joint, "joint limits", excess)``.

        Raises:
            Refused: ``INVALID_ROBOT_STATE``, ``INVALID_GROUP_NAME``.
        """
        if group_name:
            self.group(group_name)
        q = self.start_state(robot_state, "robot_state")
        found = [(c.links[0], c.links[1], max(-float(c.distance), 0.0)) for c in self.scene.colliding(q)]
        robot = self.scene.robot_model.robot
        for name, value in zip(self.names, q, strict=True):
            limits = robot.joints[name].limits
            if (
                limits is None
                or limits.lower is None
                or limits.upper is None
                or robot.joints[name].type == "continuous"
            ):
                continue
            excess = max(limits.lower - value, value - limits.upper)
            if excess > 1e-9:
                found.append((name, "joint limits", float(excess)))
        return found

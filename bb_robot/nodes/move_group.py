"""The move_group node: MoveIt's actions, services and topics on bb_robot's planner (``ros2 run bb_robot move_group``).

What it serves, its parameters and error codes: docs/nodes/move_group.md.  This module is the rclpy
layer: parameters, the interfaces, message conversion; the requests are answered by
:class:`bb_robot.move_group.requests.MoveGroupCore` (no ROS), plans are executed through the
driver's ``FollowJointTrajectory`` (:mod:`bb_robot.nodes.move_group_execution`).

Every request is answered: a hostile or malformed one gets a ``MoveItErrorCodes`` value and a
message, the node stays up and nothing moves.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from geometry_msgs.msg import PoseStamped
from moveit_msgs.action import ExecuteTrajectory, MoveGroup
from moveit_msgs.msg import (
    AttachedCollisionObject,
    CollisionObject,
    ContactInformation,
    DisplayTrajectory,
    PlanningScene,
)
from moveit_msgs.srv import (
    ApplyPlanningScene,
    GetCartesianPath,
    GetMotionPlan,
    GetPlanningScene,
    GetPositionFK,
    GetPositionIK,
    GetStateValidity,
)
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from bb_robot.common.parameters import initial_value
from bb_robot.driver.model import load_model_file, load_model_text
from bb_robot.errors import BbRobotError
from bb_robot.loading import LoadedModel
from bb_robot.move_group.moveit_goals import Code, Refused
from bb_robot.move_group.parameters import PARAMETERS
from bb_robot.move_group.requests import MoveGroupCore, Outcome
from bb_robot.move_group.scene_updates import UpdateRefused, apply_planning_scene
from bb_robot.move_group.setup import build_core
from bb_robot.nodes import move_group_messages as messages
from bb_robot.nodes.move_group_execution import TrajectoryExecutor
from bb_robot.nodes.spin import spin_node
from bb_robot.ros.parameters import declared_value, descriptor
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS

NODE_NAME = "move_group"


class StartupError(BbRobotError):
    """The node cannot start (its message says why)."""


class MoveGroupNode(Node):
    """MoveIt's move_group interface on bb_robot's planner (module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare the parameters and the interfaces; load the robot (its file, or robot_description).

        Raises:
            StartupError: the model file, the SRDF, the world or the limits file cannot be used.
        """
        super().__init__(NODE_NAME, **kwargs)
        for spec in PARAMETERS:
            self.declare_parameter(
                spec.name, declared_value(spec) if spec.default is not None else initial_value(spec), descriptor(spec)
            )
        self.core: MoveGroupCore | None = None
        self._scene_dirty = False
        self._last_scene = 0.0
        self._executor_client = TrajectoryExecutor(
            self, self._text("execution.action"), float(self._value("execution.server_timeout"))
        )
        self._scene_publisher = self.create_publisher(PlanningScene, "monitored_planning_scene", LATCHED_QOS)
        self._display = self.create_publisher(DisplayTrajectory, "display_planned_path", DEFAULT_QOS)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, DEFAULT_QOS)
        self.create_subscription(CollisionObject, "collision_object", self._on_collision_object, DEFAULT_QOS)
        self.create_subscription(
            AttachedCollisionObject, "attached_collision_object", self._on_attached_object, DEFAULT_QOS
        )
        self.create_subscription(PlanningScene, "planning_scene", self._on_planning_scene, DEFAULT_QOS)
        self.create_subscription(String, "trajectory_execution_event", self._on_execution_event, DEFAULT_QOS)
        self.create_service(GetPositionFK, "compute_fk", self._guarded(self._compute_fk, GetPositionFK))
        self.create_service(GetPositionIK, "compute_ik", self._guarded(self._compute_ik, GetPositionIK))
        self.create_service(GetStateValidity, "check_state_validity", self._guarded(self._validity, GetStateValidity))
        self.create_service(GetPlanningScene, "get_planning_scene", self._guarded(self._get_scene, GetPlanningScene))
        self.create_service(
            ApplyPlanningScene, "apply_planning_scene", self._guarded(self._apply_scene, ApplyPlanningScene)
        )
        self.create_service(GetMotionPlan, "plan_kinematic_path", self._guarded(self._plan_service, GetMotionPlan))
        self.create_service(
            GetCartesianPath, "compute_cartesian_path", self._guarded(self._cartesian, GetCartesianPath)
        )
        self._move_action = ActionServer(
            self, MoveGroup, "move_action", execute_callback=self._move_goal,
            goal_callback=lambda goal: GoalResponse.ACCEPT, cancel_callback=self._cancel,
        )  # fmt: skip
        self._execute_action = ActionServer(
            self, ExecuteTrajectory, "execute_trajectory", execute_callback=self._execute_goal,
            goal_callback=lambda goal: GoalResponse.ACCEPT, cancel_callback=self._cancel,
        )  # fmt: skip
        period = float(self._value("scene.publish_period"))
        self.create_timer(max(period, 0.01), self._publish_scene)
        self._description = None
        model = self._text("model")
        if model:
            try:
                loaded = load_model_file(model, self._dirs())
            except BbRobotError as error:
                raise StartupError(f"model '{model}': {error}") from None
            self._start(loaded)
        else:
            self._description = self.create_subscription(String, "robot_description", self._on_description, LATCHED_QOS)
            self.get_logger().info("waiting for robot_description")

    # ------------------------------------------------------------------ set-up
    def _value(self, name: str) -> Any:
        return self.get_parameter(name).value

    def _text(self, name: str) -> str:
        return str(self._value(name) or "")

    def _dirs(self) -> tuple[str, ...]:
        return tuple(self._value("model_dirs") or ())

    def _on_description(self, message: String) -> None:
        if self._description is None:
            return
        self.destroy_subscription(self._description)
        self._description = None
        try:
            self._start(load_model_text(message.data))
        except BbRobotError as error:
            self.get_logger().error(f"cannot plan for robot_description: {error}")

    def _start(self, loaded: LoadedModel) -> None:
        began = time.perf_counter()
        try:
            self.core = build_core(
                loaded, search_dirs=self._dirs(), srdf=self._text("collision.srdf"),
                world=self._text("collision.world"), group_name=self._text("planning.group_name"),
                tip=self._text("planning.tip"), limits_file=self._text("planning.joint_limits_file"),
                clearance=float(self._value("collision.clearance")), timeout=float(self._value("planning.timeout")),
                seed=int(self._value("planning.seed")), log=self._log_info,
            )  # fmt: skip
        except BbRobotError as error:
            raise StartupError(str(error)) from None
        self._scene_dirty = True
        self.get_logger().info(
            f"planning for robot '{loaded.robot.name}' ready in {time.perf_counter() - began:.2f} s; "
            f"groups: {', '.join(self.core.groups)}"
        )

    def _log_info(self, text: str) -> None:
        self.get_logger().info(text)

    # ------------------------------------------------------------------ guards
    def _guarded(self, handler: Callable[[Any, Any], Any], service: Any) -> Callable[[Any, Any], Any]:
        """A service callback that answers every request: an unexpected error is logged, the response default."""

        def call(request: Any, response: Any) -> Any:
            try:
                return handler(request, response)
            except Exception as error:  # noqa: BLE001 - the node stays up whatever a request holds
                self.get_logger().error(f"{service.__name__}: {error}\n{traceback.format_exc()}")
                if hasattr(response, "error_code"):
                    response.error_code = messages.error_code(Code.FAILURE, f"internal error: {error}")
                return response

        return call

    def _ready(self) -> MoveGroupCore:
        if self.core is None:
            raise Refused(Code.ROBOT_STATE_STALE, "the robot is not known yet (waiting for robot_description)")
        return self.core

    # ------------------------------------------------------------------ topics in
    def _on_joint_states(self, message: JointState) -> None:
        if self.core is not None:
            self.core.set_joint_states(list(message.name), list(message.position))

    def _scene_update(self, what: str, apply: Callable[[MoveGroupCore], None]) -> bool:
        try:
            core = self._ready()
            apply(core)
        except (Refused, UpdateRefused) as refused:
            self.get_logger().warning(f"{what} refused ({refused.code}): {refused}")
            return False
        except BbRobotError as error:
            self.get_logger().warning(f"{what} refused: {error}")
            return False
        self._scene_dirty = True
        return True

    def _on_collision_object(self, message: CollisionObject) -> None:
        data = messages.to_data(message)
        self._scene_update("collision_object", lambda core: core.updates.collision_object(data))

    def _on_attached_object(self, message: AttachedCollisionObject) -> None:
        data = messages.to_data(message)
        self._scene_update("attached_collision_object", lambda core: core.updates.attached_object(data))

    def _on_planning_scene(self, message: PlanningScene) -> None:
        self._apply_planning_scene(message)

    def _apply_planning_scene(self, message: PlanningScene) -> bool:
        data = messages.to_data(message)

        def apply(core: MoveGroupCore) -> None:
            for warning in apply_planning_scene(core.updates, data):
                self.get_logger().info(warning)

        return self._scene_update("planning_scene", apply)

    def _on_execution_event(self, message: String) -> None:
        if message.data.strip().lower() == "stop":
            count = self._executor_client.stop()
            self.get_logger().info(f"trajectory_execution_event 'stop': {count} execution(s) cancelled")

    def _publish_scene(self) -> None:
        if self.core is None or not self._scene_dirty:
            return
        self._scene_dirty = False
        self._scene_publisher.publish(messages.planning_scene(self.core, "bb_robot"))

    # ------------------------------------------------------------------ services
    def _compute_fk(self, request: GetPositionFK.Request, response: GetPositionFK.Response) -> GetPositionFK.Response:
        try:
            core = self._ready()
            frame = request.header.frame_id or core.scene.robot_model.robot.root_link
            poses = core.fk(frame, list(request.fk_link_names), messages.to_data(request.robot_state))
        except Refused as refused:
            response.error_code = messages.error_code(refused.code, str(refused))
            return response
        for link, pose in zip(request.fk_link_names, poses, strict=True):
            stamped = PoseStamped(pose=messages.pose_message(pose))
            stamped.header.frame_id = frame
            stamped.header.stamp = self.get_clock().now().to_msg()
            response.pose_stamped.append(stamped)
            response.fk_link_names.append(link)
        response.error_code = messages.error_code(Code.SUCCESS)
        return response

    def _compute_ik(self, request: GetPositionIK.Request, response: GetPositionIK.Response) -> GetPositionIK.Response:
        try:
            core = self._ready()
            values = core.ik(messages.to_data(request.ik_request))
        except Refused as refused:
            response.error_code = messages.error_code(refused.code, str(refused))
            return response
        response.solution = messages.robot_state(values)
        response.error_code = messages.error_code(Code.SUCCESS)
        return response

    def _validity(
        self, request: GetStateValidity.Request, response: GetStateValidity.Response
    ) -> GetStateValidity.Response:
        try:
            core = self._ready()
            found = core.contacts(messages.to_data(request.robot_state), request.group_name)
        except Refused as refused:
            self.get_logger().warning(f"check_state_validity refused: {refused}")
            response.valid = False
            return response
        response.valid = not found
        for first, second, depth in found:
            contact = ContactInformation(contact_body_1=first, contact_body_2=second, depth=depth)
            contact.body_type_1 = (
                ContactInformation.ROBOT_ATTACHED if first.startswith("attached/") else ContactInformation.ROBOT_LINK
            )
            contact.body_type_2 = (
                ContactInformation.WORLD_OBJECT if second.startswith("world/") else ContactInformation.ROBOT_LINK
            )
            contact.header.frame_id = core.scene.robot_model.robot.root_link
            response.contacts.append(contact)
        return response

    def _get_scene(
        self, request: GetPlanningScene.Request, response: GetPlanningScene.Response
    ) -> GetPlanningScene.Response:
        if self.core is not None:
            response.scene = messages.planning_scene(self.core, "bb_robot")
        return response

    def _apply_scene(
        self, request: ApplyPlanningScene.Request, response: ApplyPlanningScene.Response
    ) -> ApplyPlanningScene.Response:
        response.success = self._apply_planning_scene(request.scene)
        return response

    def _respond_plan(self, outcome: Outcome) -> None:
        for warning in outcome.warnings:
            self.get_logger().warning(warning)
        if outcome.code != Code.SUCCESS:
            self.get_logger().warning(f"plan refused or failed ({outcome.code}): {outcome.message}")

    def _plan_service(self, request: GetMotionPlan.Request, response: GetMotionPlan.Response) -> GetMotionPlan.Response:
        outcome = self._plan(request.motion_plan_request)
        answer = response.motion_plan_response
        answer.error_code = messages.error_code(outcome.code, outcome.message)
        answer.group_name = outcome.group
        answer.planning_time = outcome.planning_time
        answer.trajectory_start = messages.robot_state(outcome.start, self.core)
        answer.trajectory = messages.robot_trajectory(outcome.trajectory)
        return response

    def _plan(self, request: Any) -> Outcome:
        try:
            core = self._ready()
        except Refused as refused:
            return Outcome(refused.code, str(refused))
        outcome = core.plan(messages.to_data(request))
        self._respond_plan(outcome)
        if outcome.code == Code.SUCCESS and outcome.trajectory is not None:
            display = DisplayTrajectory(model_id=core.scene.robot_model.robot.name)
            display.trajectory_start = messages.robot_state(outcome.start, core)
            display.trajectory.append(messages.robot_trajectory(outcome.trajectory))
            self._display.publish(display)
        return outcome

    def _cartesian(
        self, request: GetCartesianPath.Request, response: GetCartesianPath.Response
    ) -> GetCartesianPath.Response:
        try:
            core = self._ready()
        except Refused as refused:
            response.error_code = messages.error_code(refused.code, str(refused))
            return response
        outcome = core.cartesian(messages.to_data(request))
        self._respond_plan(outcome)
        response.error_code = messages.error_code(outcome.code, outcome.message)
        response.fraction = float(outcome.fraction)
        response.start_state = messages.robot_state(outcome.start, core)
        response.solution = messages.robot_trajectory(outcome.trajectory)
        return response

    # ------------------------------------------------------------------ actions
    def _cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        self._executor_client.stop()
        return CancelResponse.ACCEPT

    async def _move_goal(self, goal_handle: ServerGoalHandle) -> MoveGroup.Result:
        goal = goal_handle.request
        result = MoveGroup.Result()
        goal_handle.publish_feedback(MoveGroup.Feedback(state="PLANNING"))
        diff = goal.planning_options.planning_scene_diff
        if diff.world.collision_objects or diff.robot_state.attached_collision_objects:
            result.error_code = messages.error_code(
                Code.INVALID_MOTION_PLAN,
                "planning_options.planning_scene_diff with objects is not taken: apply it with "
                "apply_planning_scene first",
            )
            goal_handle.abort()
            return result
        outcome = self._plan(goal.request)
        result.planning_time = outcome.planning_time
        result.trajectory_start = messages.robot_state(outcome.start, self.core)
        result.planned_trajectory = messages.robot_trajectory(outcome.trajectory)
        if outcome.code != Code.SUCCESS or goal.planning_options.plan_only:
            result.error_code = messages.error_code(outcome.code, outcome.message)
            goal_handle.publish_feedback(MoveGroup.Feedback(state="IDLE"))
            (goal_handle.succeed if outcome.code == Code.SUCCESS else goal_handle.abort)()
            return result
        goal_handle.publish_feedback(MoveGroup.Feedback(state="MONITOR"))
        code, message = await self._executor_client.execute(self._complete(result.planned_trajectory.joint_trajectory))
        result.error_code = messages.error_code(code, message)
        if code == Code.SUCCESS:
            result.executed_trajectory = result.planned_trajectory
        goal_handle.publish_feedback(MoveGroup.Feedback(state="IDLE"))
        self._finish(goal_handle, code)
        return result

    async def _execute_goal(self, goal_handle: ServerGoalHandle) -> ExecuteTrajectory.Result:
        goal = goal_handle.request
        result = ExecuteTrajectory.Result()
        trajectory = goal.trajectory.joint_trajectory
        problem = self._trajectory_problem(goal.trajectory)
        if problem:
            result.error_code = messages.error_code(Code.INVALID_MOTION_PLAN, problem)
            goal_handle.abort()
            return result
        goal_handle.publish_feedback(ExecuteTrajectory.Feedback(state="MONITOR"))
        code, message = await self._executor_client.execute(self._complete(trajectory))
        result.error_code = messages.error_code(code, message)
        goal_handle.publish_feedback(ExecuteTrajectory.Feedback(state="IDLE"))
        self._finish(goal_handle, code)
        return result

    def _complete(self, trajectory: Any) -> Any:
        """The trajectory with the robot's other joints held where they are (the driver takes whole goals)."""
        if self.core is None:
            return trajectory
        values = dict(zip(self.core.names, (float(v) for v in self.core.current()), strict=True))
        return messages.held_too(trajectory, values, self.core.names)

    def _trajectory_problem(self, trajectory: Any) -> str:
        if trajectory.multi_dof_joint_trajectory.points:
            return "multi_dof_joint_trajectory: the robot has no multi-DOF joint"
        names = list(trajectory.joint_trajectory.joint_names)
        if self.core is not None:
            unknown = [n for n in names if n not in self.core.names]
            if unknown:
                return f"joint_trajectory: '{unknown[0]}' is not a joint of the robot"
        if not trajectory.joint_trajectory.points:
            return "joint_trajectory: no points"
        return ""

    def _finish(self, goal_handle: ServerGoalHandle, code: int) -> None:
        if code == Code.SUCCESS:
            goal_handle.succeed()
        elif code == Code.PREEMPTED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()

    def destroy_node(self) -> None:
        """Destroy the action servers and client, then the node."""
        self._move_action.destroy()
        self._execute_action.destroy()
        self._executor_client.destroy()
        super().destroy_node()


def main(args: Sequence[str] | None = None) -> int:
    """Run the node until SIGINT or SIGTERM; exit status 1 when it cannot start."""
    return spin_node(MoveGroupNode, NODE_NAME, (StartupError,), args)


if __name__ == "__main__":
    sys.exit(main())

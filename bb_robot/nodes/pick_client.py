"""The ROS side of ``bb-robot up --demo-pick``: MoveIt's public interfaces, as a pick and place client uses them.

:class:`PickClient` adds to the node of an :class:`~bb_robot.nodes.up_client.UpClient` (its
executor spins them on its thread) what a MoveIt pick and place needs:

- ``move_action`` (a pose goal, planned only: :meth:`PickClient.plan`), ``compute_cartesian_path``
  (:meth:`PickClient.cartesian`) and ``execute_trajectory`` (:meth:`PickClient.execute`) of the
  move_group node;
- the driver's ``control_msgs/GripperCommand`` action, ``driver/gripper_cmd`` (:meth:`PickClient.gripper`);
- the planning scene's topics: ``/collision_object`` (the cube where it is measured),
  ``/planning_scene`` (the hand and the table allowed to touch it), ``/attached_collision_object``
  (attach, detach); each change is waited for in ``monitored_planning_scene``;
- ``/tf`` and ``/tf_static`` (:class:`~bb_robot.bringup.pick.Frames`: the cube's measured pose,
  ``object/cube``, and the tool's, ``tcp``), and the driver's ``/diagnostics`` (the backend's values:
  the wall's contact counts on mujoco).

Every goal and request is sent from the executor's thread (``executor.create_task``), for the
reason :meth:`UpClient._send_in_executor <bb_robot.nodes.up_client.UpClient._send_in_executor>`
gives (Jazzy's rclpy 7.1 drops a goal response that races its sending thread).  The results come
back as plain data or messages, and the demo (:mod:`bb_robot.cli.up_pick`) never imports rclpy.

The driver takes whole goals (every joint): a trajectory planned for the arm is executed with the
gripper joints at their last gripper command (:meth:`PickClient.execute`), not where they are
measured, so that a grasp keeps squeezing while the arm moves (the move_group node would hold them
where they are, and a finger resting on the cube would then push no more).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from bb_robot.bringup.pick import Frames
from bb_robot.model.transforms import Matrix, matrix_to_quaternion, quaternion_to_matrix
from bb_robot.nodes.up_client import STREAM_QOS, UpClient

__all__ = ["ActionOutcome", "PickClient"]

#: The scene topics' QoS (the move_group node's: reliable, volatile, depth 10).
SCENE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
#: ``monitored_planning_scene``'s (reliable, transient local, depth 1).
MONITORED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: ``/tf_static``'s.
STATIC_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@dataclass
class ActionOutcome:
    """A goal's or a request's end, filled in from the executor's thread (:attr:`done` set last)."""

    done: threading.Event = field(default_factory=threading.Event)
    accepted: bool = True
    status: int = 0
    result: Any = None
    error: str = ""
    feedback: list[Any] = field(default_factory=list)

    def wait(self, timeout: float, stop: threading.Event | None = None) -> bool:
        """Wait until done (True), ``timeout`` s or ``stop`` (False)."""
        deadline = time.monotonic() + timeout
        while not self.done.wait(0.02):
            if time.monotonic() > deadline or (stop is not None and stop.is_set()):
                return False
        return True


def _pose_message(pose: Matrix) -> Any:
    from geometry_msgs.msg import Pose

    message = Pose()
    message.position.x, message.position.y, message.position.z = (float(v) for v in pose[:3, 3])
    o = message.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in matrix_to_quaternion(pose[:3, :3]))
    return message


def _matrix(translation: Any, rotation: Any) -> Matrix:
    pose = np.eye(4)
    pose[:3, :3] = quaternion_to_matrix((rotation.x, rotation.y, rotation.z, rotation.w))
    pose[:3, 3] = (translation.x, translation.y, translation.z)
    return pose


class PickClient:
    """The pick and place interfaces of one robot, on ``up``'s node (see the module docstring).

    Args:
        up: the running client (its node and executor).
        root: the robot's root link (the frame of every pose here).
        gripper_joints: the driver's ``gripper.joints``.
    """

    def __init__(self, up: UpClient, root: str, gripper_joints: Sequence[str]) -> None:
        from control_msgs.action import GripperCommand
        from diagnostic_msgs.msg import DiagnosticArray
        from moveit_msgs.action import ExecuteTrajectory, MoveGroup
        from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, PlanningScene
        from moveit_msgs.srv import GetCartesianPath
        from tf2_msgs.msg import TFMessage

        self.up, self.root, self.gripper_joints = up, root, tuple(gripper_joints)
        node = up.node
        self.frames = Frames()
        self.lock = threading.Lock()
        self.scene: Any = None
        self.scene_count = 0
        self.backend_values: dict[str, str] = {}
        #: The gripper joints' last command (``None``: none sent yet; the trajectories then hold them
        #: where they are measured).
        self.finger_command: float | None = None
        self._subscriptions = [
            node.create_subscription(TFMessage, "/tf", lambda m: self._on_tf(m, False), STREAM_QOS),
            node.create_subscription(TFMessage, "/tf_static", lambda m: self._on_tf(m, True), STATIC_QOS),
            node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, STREAM_QOS),
            node.create_subscription(PlanningScene, "/monitored_planning_scene", self._on_scene, MONITORED_QOS),
        ]
        self.collision_objects = node.create_publisher(CollisionObject, "/collision_object", SCENE_QOS)
        self.attached_objects = node.create_publisher(AttachedCollisionObject, "/attached_collision_object", SCENE_QOS)
        self.planning_scene = node.create_publisher(PlanningScene, "/planning_scene", SCENE_QOS)
        self.move_action: Any = ActionClient(node, MoveGroup, "/move_action")
        self.execute_action: Any = ActionClient(node, ExecuteTrajectory, "/execute_trajectory")
        self.gripper_action: Any = ActionClient(node, GripperCommand, "/driver/gripper_cmd")
        self.cartesian_service: Any = node.create_client(GetCartesianPath, "/compute_cartesian_path")
        self._types = (MoveGroup, ExecuteTrajectory, GripperCommand, GetCartesianPath)

    # ---------------------------------------------------------------- callbacks
    def _on_tf(self, message: Any, static: bool) -> None:
        with self.lock:
            for t in message.transforms:
                stamp = t.header.stamp.sec + t.header.stamp.nanosec * 1e-9
                pose = _matrix(t.transform.translation, t.transform.rotation)
                self.frames.add(t.header.frame_id, t.child_frame_id, stamp, pose, static)

    def _on_diagnostics(self, message: Any) -> None:
        for status in message.status:
            if status.name.endswith("driver: backend"):
                with self.lock:
                    self.backend_values = {value.key: value.value for value in status.values}

    def _on_scene(self, message: Any) -> None:
        with self.lock:
            self.scene, self.scene_count = message, self.scene_count + 1

    # ---------------------------------------------------------------- readiness
    def missing(self) -> list[str]:
        """The servers not ready yet (their names)."""
        waiting = [
            (self.move_action.server_is_ready(), "/move_action"),
            (self.execute_action.server_is_ready(), "/execute_trajectory"),
            (self.gripper_action.server_is_ready(), "/driver/gripper_cmd"),
            (self.cartesian_service.service_is_ready(), "/compute_cartesian_path"),
            (self.collision_objects.get_subscription_count() > 0, "/collision_object (no subscriber)"),
            (self.attached_objects.get_subscription_count() > 0, "/attached_collision_object (no subscriber)"),
            (self.planning_scene.get_subscription_count() > 0, "/planning_scene (no subscriber)"),
        ]
        return [name for ready, name in waiting if not ready]

    # ---------------------------------------------------------------- measured state
    def pose(self, frame: str, stamp: float | None = None, within: float = float("inf")) -> Matrix | None:
        """``frame``'s pose in the root link from /tf (latest, or at ``stamp``)."""
        with self.lock:
            return self.frames.pose(frame, self.root, stamp, within)

    def latest(self, frame: str) -> float | None:
        """The stamp of ``frame``'s newest dynamic transform."""
        with self.lock:
            return self.frames.latest(frame)

    def pairs_since(
        self, cube: str, tool: str, since: float, within: float, lag: float = 0.1
    ) -> tuple[list[tuple[Matrix, Matrix]], float]:
        """The (tool, cube) poses of each ``cube`` transform stamped after ``since``, paired with the
        tool's pose of the same moment (each link within ``within`` s), and the stamp to continue from.

        Only transforms ``lag`` s older than the newest are taken: the tool's of that moment (from
        another node) have arrived by then.  A cube transform without such a tool pose is skipped.
        """
        pairs: list[tuple[Matrix, Matrix]] = []
        with self.lock:
            kept = list(self.frames.dynamic.get(cube, ()))
            if not kept:
                return pairs, since
            cut = kept[-1][0] - lag
            last = since
            for stamp, _, _ in kept:
                if stamp <= since or stamp > cut:
                    continue
                last = stamp
                cube_pose = self.frames.pose(cube, self.root, stamp, within)
                tool_pose = self.frames.pose(tool, self.root, stamp, within)
                if cube_pose is not None and tool_pose is not None:
                    pairs.append((tool_pose, cube_pose))
        return pairs, last

    def backend(self) -> dict[str, str]:
        """The driver's latest backend diagnostic values."""
        with self.lock:
            return dict(self.backend_values)

    # ---------------------------------------------------------------- the scene
    def scene_shows(self, check: Callable[[Any], bool]) -> bool:
        """Whether the latest ``monitored_planning_scene`` passes ``check``."""
        with self.lock:
            scene = self.scene
        return scene is not None and check(scene)

    def add_box(self, name: str, pose: Matrix, size: Sequence[float]) -> None:
        """Add a box to the scene's world at ``pose`` (``/collision_object``, ADD)."""
        from moveit_msgs.msg import CollisionObject
        from shape_msgs.msg import SolidPrimitive

        message = CollisionObject(id=name, operation=CollisionObject.ADD)
        message.header.frame_id = self.root
        message.pose = _pose_message(np.eye(4))
        message.primitives.append(SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[float(s) for s in size]))
        message.primitive_poses.append(_pose_message(pose))
        self.collision_objects.publish(message)

    def allow(self, name: str, others: Sequence[str]) -> None:
        """Allow ``name`` to touch each of ``others`` (``/planning_scene``, a diff with matrix entries)."""
        from moveit_msgs.msg import AllowedCollisionEntry, PlanningScene

        names = [name, *others]
        message = PlanningScene(is_diff=True)
        message.robot_state.is_diff = True
        matrix = message.allowed_collision_matrix
        matrix.entry_names = names
        matrix.entry_values = [
            AllowedCollisionEntry(enabled=[(i == 0) != (j == 0) for j in range(len(names))]) for i in range(len(names))
        ]
        self.planning_scene.publish(message)

    def attach(self, name: str, link: str, touch_links: Sequence[str]) -> None:
        """Attach the scene's object ``name`` to ``link`` where it is (``/attached_collision_object``, ADD)."""
        from moveit_msgs.msg import AttachedCollisionObject

        message = AttachedCollisionObject(link_name=link, touch_links=list(touch_links))
        message.object.id, message.object.operation = name, message.object.ADD
        message.object.header.frame_id = link
        self.attached_objects.publish(message)

    def detach(self, name: str, link: str) -> None:
        """Detach ``name``: it stays in the world where it is (``/attached_collision_object``, REMOVE)."""
        from moveit_msgs.msg import AttachedCollisionObject

        message = AttachedCollisionObject(link_name=link)
        message.object.id, message.object.operation = name, message.object.REMOVE
        self.attached_objects.publish(message)

    # ---------------------------------------------------------------- goals and requests
    def _send_goal(self, action: Any, goal: Any) -> ActionOutcome:
        outcome = ActionOutcome()

        def on_result(future: Any) -> None:
            answer = future.result()
            outcome.status, outcome.result = int(answer.status), answer.result
            outcome.done.set()

        def on_goal(future: Any) -> None:
            handle = future.result()
            if handle is None or not handle.accepted:
                outcome.accepted, outcome.error = False, "the goal was refused"
                outcome.done.set()
                return
            handle.get_result_async().add_done_callback(on_result)

        def send() -> None:
            try:
                action.send_goal_async(goal, feedback_callback=outcome.feedback.append).add_done_callback(on_goal)
            except Exception as error:  # noqa: BLE001 - (rclpy's errors have no common base)
                outcome.accepted, outcome.error = False, f"sending the goal failed: {error}"
                outcome.done.set()

        self.up.executor.create_task(send)
        return outcome

    def plan(
        self, group: str, link: str, pose: Matrix, tolerance: float, angle: float, seconds: float
    ) -> ActionOutcome:
        """A ``move_action`` pose goal for ``link``, planned only (``plan_only``); executed by :meth:`execute`."""
        from bb_robot.nodes.up_client import pose_move_goal

        goal = pose_move_goal(
            group, self.root, link, pose[:3, 3].tolist(), list(matrix_to_quaternion(pose[:3, :3])), tolerance, angle,
            seconds,
        )  # fmt: skip
        goal.planning_options.plan_only = True
        return self._send_goal(self.move_action, goal)

    def cartesian(self, group: str, link: str, waypoints: Sequence[Matrix], max_step: float) -> ActionOutcome:
        """``compute_cartesian_path``: ``link`` along straight lines through ``waypoints`` from the current
        state, avoiding collisions (:attr:`ActionOutcome.result` the response)."""
        request = self._types[3].Request()
        request.header.frame_id = self.root
        request.start_state.is_diff = True
        request.group_name, request.link_name = group, link
        request.waypoints = [_pose_message(w) for w in waypoints]
        request.max_step, request.jump_threshold, request.avoid_collisions = float(max_step), 0.0, True
        outcome = ActionOutcome()

        def done(future: Any) -> None:
            outcome.result = future.result()
            if outcome.result is None:
                outcome.error = "no response"
            outcome.done.set()

        def send() -> None:
            try:
                self.cartesian_service.call_async(request).add_done_callback(done)
            except Exception as error:  # noqa: BLE001
                outcome.error = f"the request failed: {error}"
                outcome.done.set()

        self.up.executor.create_task(send)
        return outcome

    def execute(self, trajectory: Any) -> ActionOutcome:
        """``execute_trajectory`` of a planned ``RobotTrajectory``, the gripper joints at their last command."""
        from moveit_msgs.action import ExecuteTrajectory

        goal = ExecuteTrajectory.Goal()
        goal.trajectory = trajectory
        command = self.finger_command
        joints = [j for j in self.gripper_joints if j not in trajectory.joint_trajectory.joint_names]
        if command is not None and joints:
            path = goal.trajectory.joint_trajectory
            path.joint_names = [*path.joint_names, *joints]
            for point in path.points:
                point.positions = [*point.positions, *([command] * len(joints))]
                if len(point.velocities):
                    point.velocities = [*point.velocities, *([0.0] * len(joints))]
                if len(point.accelerations):
                    point.accelerations = [*point.accelerations, *([0.0] * len(joints))]
        return self._send_goal(self.execute_action, goal)

    def gripper(self, position: float, max_effort: float) -> ActionOutcome:
        """A ``GripperCommand`` goal to the driver's ``gripper_cmd``."""
        from control_msgs.action import GripperCommand

        goal = GripperCommand.Goal()
        goal.command.position, goal.command.max_effort = float(position), float(max_effort)
        self.finger_command = float(position)
        return self._send_goal(self.gripper_action, goal)

    def close(self) -> None:
        """Destroy the action clients (the node is ``up``'s)."""
        for action in (self.move_action, self.execute_action, self.gripper_action):
            action.destroy()

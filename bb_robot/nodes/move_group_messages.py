"""Messages of the move_group node: moveit_msgs in and out of the plain data :mod:`bb_robot.move_group.requests` takes.

:func:`to_data` turns any ROS message into mappings and lists by its field names (so the planning
layer never sees a ROS type); the builders turn results back into messages: poses, robot states,
trajectories (the knots of a timed trajectory, as ``bb-robot plan -o`` writes them), error codes and
the planning scene.
"""

from __future__ import annotations

import array
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point, Pose, Quaternion
from moveit_msgs.msg import (
    AllowedCollisionEntry,
    AttachedCollisionObject,
    CollisionObject,
    MoveItErrorCodes,
    PlanningScene,
    RobotState,
    RobotTrajectory,
)
from sensor_msgs.msg import JointState
from shape_msgs.msg import Mesh, MeshTriangle, SolidPrimitive
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from bb_robot.model.transforms import Matrix, matrix_to_quaternion
from bb_robot.move_group.requests import MoveGroupCore
from bb_robot.move_group.scene_updates import ObjectRecord
from bb_robot.planning.timing import Trajectory


def to_data(message: Any) -> Any:
    """A ROS message as plain data: mappings by field name, lists for arrays, numbers and strings as they are."""
    if hasattr(message, "get_fields_and_field_types"):
        return {name: to_data(getattr(message, name)) for name in message.get_fields_and_field_types()}
    if isinstance(message, list | tuple | array.array | np.ndarray):
        return [to_data(item) for item in message]
    if isinstance(message, bytes) and len(message) == 1:
        return message[0]
    return message


def pose_message(matrix: Matrix) -> Pose:
    """A 4×4 pose as ``geometry_msgs/Pose``."""
    x, y, z, w = matrix_to_quaternion(np.asarray(matrix)[:3, :3])
    position = np.asarray(matrix)[:3, 3]
    return Pose(
        position=Point(x=float(position[0]), y=float(position[1]), z=float(position[2])),
        orientation=Quaternion(x=float(x), y=float(y), z=float(z), w=float(w)),
    )


def error_code(code: int, message: str = "", source: str = "bb_robot move_group") -> MoveItErrorCodes:
    """A ``MoveItErrorCodes`` with its message (moveit_msgs 2.4+ carries one)."""
    return MoveItErrorCodes(val=int(code), message=message, source=source)


def robot_state(values: Mapping[str, float], core: MoveGroupCore | None = None) -> RobotState:
    """A ``RobotState`` of joint values (with the attached objects of ``core``'s scene)."""
    state = RobotState(joint_state=JointState(name=list(values), position=[float(v) for v in values.values()]))
    if core is not None:
        state.attached_collision_objects = [
            attached_message(name, record, core.scene.robot_model.robot.root_link)
            for name, record in core.updates.records.items()
            if record.link
        ]
    return state


def _duration(seconds: float) -> Duration:
    nanoseconds = round(float(seconds) * 1e9)
    return Duration(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def joint_trajectory(trajectory: Trajectory) -> JointTrajectory:
    """The trajectory's knots as a ``JointTrajectory``: the driver's cubic through them is the timed motion.

    Accelerations only where the timing is smooth (a jump of acceleration would make a quintic overshoot).
    """
    k = trajectory.knots
    points = [
        JointTrajectoryPoint(
            positions=[float(v) for v in p],
            velocities=[float(v) for v in v_],
            accelerations=[float(v) for v in a] if trajectory.smooth else [],
            time_from_start=_duration(t),
        )
        for t, p, v_, a in zip(
            trajectory.times[k], trajectory.positions[k], trajectory.velocities[k], trajectory.accelerations[k],
            strict=True,
        )
    ]  # fmt: skip
    return JointTrajectory(joint_names=list(trajectory.names), points=points)


def robot_trajectory(trajectory: Trajectory | None) -> RobotTrajectory:
    """A ``RobotTrajectory`` (empty for ``None``)."""
    return RobotTrajectory(
        joint_trajectory=joint_trajectory(trajectory) if trajectory is not None else JointTrajectory()
    )


def _shape_messages(record: ObjectRecord, message: CollisionObject) -> None:
    for _, data, local in record.shapes:
        if data.get("kind") == "primitive":
            message.primitives.append(
                SolidPrimitive(type=int(data["type"]), dimensions=[float(d) for d in data.get("dimensions") or []])
            )
            message.primitive_poses.append(pose_message(local))
        else:
            mesh = Mesh(
                vertices=[Point(x=float(v["x"]), y=float(v["y"]), z=float(v["z"])) for v in data.get("vertices") or []],
                triangles=[
                    MeshTriangle(vertex_indices=[int(i) for i in t["vertex_indices"]])
                    for t in data.get("triangles") or []
                ],
            )
            message.meshes.append(mesh)
            message.mesh_poses.append(pose_message(local))


def collision_message(name: str, record: ObjectRecord, frame: str) -> CollisionObject:
    """A run-time object as the ``CollisionObject`` that adds it (in ``frame``: the root, or its link)."""
    message = CollisionObject(id=name, pose=pose_message(record.pose), operation=CollisionObject.ADD)
    message.header.frame_id = frame
    _shape_messages(record, message)
    return message


def attached_message(name: str, record: ObjectRecord, root: str) -> AttachedCollisionObject:
    """An attached object as the ``AttachedCollisionObject`` that attaches it."""
    return AttachedCollisionObject(
        link_name=record.link,
        object=collision_message(name, record, record.link or root),
        touch_links=list(record.touch_links),
    )


def planning_scene(core: MoveGroupCore, name: str, diff: bool = False) -> PlanningScene:
    """The scene as a ``PlanningScene``: the current state with its attached objects, the run-time world objects.

    The configured obstacles (``collision.world``) are not repeated: they are fixed, and the view
    shows them from the same file.
    """
    root = core.scene.robot_model.robot.root_link
    values = dict(zip(core.names, (float(v) for v in core.current()), strict=True))
    scene = PlanningScene(name=name, robot_model_name=core.scene.robot_model.robot.name, is_diff=diff)
    scene.robot_state = robot_state(values, core)
    scene.world.collision_objects = [
        collision_message(n, record, root) for n, record in core.updates.records.items() if not record.link
    ]
    # The run-time allowances (a hand allowed to touch the object it closes on), for the driver's guard.
    pairs = sorted(core.scene.runtime_allowed)
    names = sorted({name for pair in pairs for name in pair})
    matrix = scene.allowed_collision_matrix
    matrix.entry_names = names
    matrix.entry_values = [
        AllowedCollisionEntry(enabled=[(a, b) in pairs or (b, a) in pairs for b in names]) for a in names
    ]
    return scene


def held_too(message: JointTrajectory, values: Mapping[str, float], joints: Sequence[str]) -> JointTrajectory:
    """``message`` with each of ``joints`` it leaves out held at its value in ``values``.

    The driver refuses a goal that leaves out some of its joints (``allow_partial_joints_goal``):
    the fingers are not planned with the arm, and keep where they are.
    """
    missing = [j for j in joints if j not in message.joint_names and j in values]
    if not missing:
        return message
    out = JointTrajectory(header=message.header, joint_names=[*message.joint_names, *missing])
    for point in message.points:
        out.points.append(
            JointTrajectoryPoint(
                positions=[*point.positions, *(float(values[j]) for j in missing)],
                velocities=[*point.velocities, *([0.0] * len(missing))] if len(point.velocities) else [],
                accelerations=[*point.accelerations, *([0.0] * len(missing))] if len(point.accelerations) else [],
                time_from_start=point.time_from_start,
            )
        )
    return out

"""The view's part of planning: the move_group node's scene and plans, drawn for Foxglove.

:class:`PlanningDisplay` follows two topics of the move_group node (relative: the view's namespace):

- ``monitored_planning_scene`` (``moveit_msgs/PlanningScene``; reliable, transient local, depth 1,
  as published): each message is the whole scene, its run-time world objects and the attached
  ones in ``robot_state``.  Read with the driver's conversion and bounds (``to_data``,
  :func:`~bb_robot.move_group.scene_updates.oversized`, the shapes of
  :func:`~bb_robot.move_group.scene_updates.object_shapes`), drawn by
  :func:`bb_robot.view.planning.objects_scene` on the channel ``<namespace>/scene_objects``.
- ``display_planned_path`` (``moveit_msgs/DisplayTrajectory``; reliable, volatile, depth 10): each
  plan's tool path by forward kinematics (:func:`bb_robot.view.planning.tool_path`), on the channel
  ``<namespace>/planned_path``; a new plan replaces the last.

Both need the robot (its root link, its kinematics); messages that come first wait for it, the
newest of each kept.  Nothing a message holds stops the view: what cannot be drawn is logged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot
from bb_robot.model.serial_chain import default_tip
from bb_robot.move_group.scene_updates import UpdateRefused, object_shapes, oversized, pose_of
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS
from bb_robot.view.bridge import FoxgloveBridge
from bb_robot.view.planning import DrawingError, SceneObject, objects_scene, path_scene, tool_path

SCENE_TOPIC, PATH_TOPIC = "monitored_planning_scene", "display_planned_path"
#: The Foxglove channels (relative: the view's namespace).
OBJECTS_CHANNEL, PATH_CHANNEL = "scene_objects", "planned_path"
#: ``moveit_msgs/CollisionObject.REMOVE``: such an entry of a whole scene adds nothing.
REMOVE = 1
LogFunction = Callable[[str, str], None]


def scene_objects(data: Any) -> tuple[list[SceneObject], list[str]]:
    """The run-time objects of a ``PlanningScene`` given as plain data (``to_data``).

    World objects stay in their header's frame (the move_group node gives the root link); an
    attached object is in its header's frame, else its link's (the move_group node gives the link).

    Args:
        data: the message as mappings and lists.

    Returns:
        The objects, and why each object left out is refused (its shapes or pose).
    """
    found: list[tuple[dict[str, Any], str, bool]] = [
        (item, f"world.collision_objects[{i}]", False)
        for i, item in enumerate((data.get("world") or {}).get("collision_objects") or [])
    ]
    for i, item in enumerate((data.get("robot_state") or {}).get("attached_collision_objects") or []):
        found.append(({**(item.get("object") or {}), "link": item.get("link_name", "")}, f"attached[{i}]", True))
    objects, problems = [], []
    for thing, where, attached in found:
        if int(thing.get("operation", 0) or 0) == REMOVE:
            continue
        name = str(thing.get("id", ""))
        frame = str((thing.get("header") or {}).get("frame_id", "")) or (str(thing["link"]) if attached else "")
        try:
            shapes = object_shapes(thing, f"{where} '{name}'")
            pose = pose_of(thing.get("pose"), f"{where} '{name}'.pose")
        except UpdateRefused as error:
            problems.append(str(error))
            continue
        objects.append(SceneObject(name, frame, pose, tuple((s, local) for s, _, local in shapes), attached))
    return objects, problems


class PlanningDisplay:
    """Draws the move_group node's scene and plans (module docstring).

    Args:
        node: the view node.
        bridge: its Foxglove bridge.
        prefix: the description's frame prefix.
        tip: the tool link of the path (``""``: the deepest tool frame, as the move_group node's default).
        log: ``log(level, text)``.

    Raises:
        ImportError: moveit_msgs is not installed (the caller says so).
    """

    def __init__(self, node: Any, bridge: FoxgloveBridge, prefix: str, tip: str, log: LogFunction) -> None:
        from moveit_msgs.msg import DisplayTrajectory, PlanningScene  # only where planning is shown

        from bb_robot.nodes.move_group_messages import to_data

        self._to_data = to_data
        self._bridge, self._prefix, self._tip, self._log = bridge, prefix, tip, log
        self._robot: Robot | None = None
        self._fk: ForwardKinematics | None = None
        self._waiting: dict[str, Any] = {}
        self._channels = {name: node.resolve_topic_name(name) for name in (OBJECTS_CHANNEL, PATH_CHANNEL)}
        # Both channels from the start, empty: a client that connects later finds them in the server's
        # first advertisement (a channel advertised to a connected client can refuse its subscription
        # for a moment: docs/view.md, "A panel that stays empty").
        bridge.add_scene(self._channels[OBJECTS_CHANNEL], objects_scene([], "", "", 0)[0])
        bridge.add_scene(self._channels[PATH_CHANNEL], path_scene(np.zeros((0, 3)), "", 0))
        node.create_subscription(PlanningScene, SCENE_TOPIC, self._on_scene, LATCHED_QOS)
        node.create_subscription(DisplayTrajectory, PATH_TOPIC, self._on_plan, DEFAULT_QOS)

    def robot(self, robot: Robot) -> None:
        """The robot is known: draw what waited for it.

        Args:
            robot: the model (root link, kinematics, tool).
        """
        tip = self._tip or default_tip(robot)
        if tip not in robot.links:
            self._log("error", f"the planned path is not shown: the robot has no link '{tip}' (planning.tip)")
        self._robot, self._fk, self._tip = robot, ForwardKinematics(robot), tip
        scene, plan = self._waiting.pop(SCENE_TOPIC, None), self._waiting.pop(PATH_TOPIC, None)
        if scene is not None:
            self._on_scene(scene)
        if plan is not None:
            self._on_plan(plan)

    def _on_scene(self, message: Any) -> None:
        if self._robot is None:
            self._waiting[SCENE_TOPIC] = message
            return
        reason = oversized(message)
        if reason:
            self._log("warning", f"{SCENE_TOPIC}: not drawn: {reason}")
            return
        if message.is_diff:
            self._log("warning", f"{SCENE_TOPIC}: a diff is not drawn (the move_group node sends whole scenes)")
            return
        objects, problems = scene_objects(self._to_data(message))
        update, more = objects_scene(objects, self._robot.root_link, self._prefix, time.time_ns())
        for problem in problems + more:
            self._log("warning", f"{SCENE_TOPIC}: not drawn: {problem}")
        self._bridge.add_scene(self._channels[OBJECTS_CHANNEL], update)

    def _on_plan(self, message: Any) -> None:
        if self._robot is None or self._fk is None:
            self._waiting[PATH_TOPIC] = message
            return
        if self._tip not in self._robot.links:
            return
        start = message.trajectory_start.joint_state
        values = dict(zip(start.name, (float(v) for v in start.position), strict=False))
        try:
            pieces = []
            for part in message.trajectory:
                trajectory = part.joint_trajectory
                points = [list(point.positions) for point in trajectory.points]
                pieces.append(tool_path(self._fk, self._tip, values, list(trajectory.joint_names), points))
                if points:  # the next piece starts where this one ends
                    values.update(zip(trajectory.joint_names, points[-1], strict=False))
        except DrawingError as error:
            self._log("warning", f"{PATH_TOPIC}: not drawn: {error}")
            return
        positions = np.concatenate(pieces) if pieces else np.zeros((0, 3))
        frame = self._prefix + self._robot.root_link
        self._bridge.add_scene(self._channels[PATH_CHANNEL], path_scene(positions, frame, time.time_ns()))


def show_planning(node: Any, bridge: FoxgloveBridge, prefix: str, tip: str, log: LogFunction) -> PlanningDisplay | None:
    """A :class:`PlanningDisplay`, or ``None`` without moveit_msgs (logged) or without a server.

    Args:
        node: the view node.
        bridge: its Foxglove bridge.
        prefix: the description's frame prefix.
        tip: the path's tool link (``""``: the default).
        log: ``log(level, text)``.

    Returns:
        The display, or ``None``.
    """
    if bridge.server is None:
        return None
    try:
        return PlanningDisplay(node, bridge, prefix, tip, log)
    except ImportError as error:
        log("info", f"planning is not shown: moveit_msgs cannot be imported ({error})")
        return None

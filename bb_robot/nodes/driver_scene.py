"""The driver's part of the one scene: the run-time objects the move_group node publishes reach the collision guard.

The move_group node publishes the whole scene, each time it changes, on ``monitored_planning_scene``
(``moveit_msgs/PlanningScene``, ``is_diff`` false: the run-time world objects, the attached ones in
``robot_state``; reliable, transient local, depth 1, so a driver started or restarted later gets the
latest at once).  :class:`SceneFollower` subscribes to it with the same QoS and applies each message
to the guard's :class:`~bb_robot.collision.scene.Scene` with the move_group node's own rules
(:func:`bb_robot.move_group.scene_updates.apply_planning_scene`): configured obstacles cannot be
removed, replaced or moved, and the verified matrix cannot be allowed away.  The guard then checks
trajectories, position commands and streamed motion (the servo's too) against the new scene
(:meth:`~bb_robot.driver.guard.collision_guard.CollisionGuard.follow`).

A message is applied on a thread of its own, never in the executor's (a model with meshes takes
a while to build); only the newest message waits, so a flood costs one build at a time.  A
message over the scene's bounds (objects, shapes, mesh vertices) is refused whole before it is
converted; a refused object is logged with its code and the rest applied.  Nothing here raises
into the executor or moves the arm.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.guard.collision_guard import CollisionGuard
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.transforms import Matrix
from bb_robot.move_group.scene_updates import SceneUpdater, UpdateRefused, apply_planning_scene, oversized
from bb_robot.ros.qos import LATCHED_QOS

#: The topic followed (relative: the driver's namespace, as the move_group node's).
SCENE_TOPIC = "monitored_planning_scene"
LogFunction = Callable[[str, str], None]
WarnFunction = Callable[[object, str], None]


class SceneFollower:
    """Follows ``monitored_planning_scene`` into the guard's scene (module docstring).

    Args:
        node: the driver node.
        guard: the collision guard (its ``scene`` is changed).
        sample: the joints' latest state (``None``: not known yet), where link frames are placed.
        log: ``log(level, text)``.
        warn: ``warn(key, text)``, throttled per key.
    """

    def __init__(
        self,
        node: Any,
        guard: CollisionGuard,
        sample: Callable[[], JointSample | None],
        log: LogFunction,
        warn: WarnFunction,
    ) -> None:
        from moveit_msgs.msg import PlanningScene  # only where a scene is followed

        from bb_robot.nodes.move_group_messages import to_data

        self._to_data = to_data
        self._guard = guard
        self._sample = sample
        self._log = log
        self._warn = warn
        scene = guard.scene
        assert scene is not None
        # Its own kinematics: the guard's model computes in the threads that check trajectories.
        self._fk = ForwardKinematics(scene.robot_model.robot)
        self._updates = SceneUpdater(scene, self._link_pose, self._configuration)
        self._topic = f"{node.get_namespace().rstrip('/')}/{SCENE_TOPIC}"
        self._newest: Any = None
        self._last: Any = None
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="bb_robot-scene", daemon=True)
        self._thread.start()
        self._node = node
        self._subscription = node.create_subscription(PlanningScene, SCENE_TOPIC, self._on_scene, LATCHED_QOS)

    # ------------------------------------------------------------------ where links are
    def _configuration(self) -> Matrix:
        sample = self._sample()
        positions = sample.positions if sample is not None else np.zeros(len(self._guard.joints))
        return self._guard.configuration(positions)

    def _link_pose(self, link: str) -> Matrix:
        fk = self._fk
        if link not in fk.link_names:
            raise KeyError(link)
        return np.asarray(fk.compute(self._configuration())[fk.link_names.index(link)])

    # ------------------------------------------------------------------ messages
    def _on_scene(self, message: Any) -> None:
        """The executor's callback: keep the newest message for the thread (never raises)."""
        with self._wake:
            self._newest = message
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._newest is None and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                message, self._newest = self._newest, None
            try:
                self.apply(message)
            except Exception as error:  # noqa: BLE001 - a message must never end the driver
                self._log("error", f"{self._topic}: could not apply the scene: {error!r}; the guard keeps the last one")

    def apply(self, message: Any) -> None:
        """Apply one ``PlanningScene`` to the guard's scene, and the guard follows it.

        Args:
            message: the message.
        """
        reason = oversized(message)
        if reason:
            self._warn(("scene", "size"), f"{self._topic}: scene refused, nothing changed: {reason}")
            return
        data = self._to_data(message)
        if data == self._last:
            return
        self._last = data
        scene = self._updates.scene
        version = scene.version
        refused: list[UpdateRefused] = []
        apply_planning_scene(self._updates, data, refused)
        for error in refused:
            self._warn(("scene", str(error)), f"{self._topic}: refused ({error.code}): {error}")
        if scene.version == version:
            return
        generation = self._guard.follow(scene.model)
        names = sorted(self._updates.records)
        self._log(
            "info",
            f"{self._topic}: the collision guard checks {len(names)} run-time object(s)"
            + (f" ({', '.join(names)})" if names else "")
            + f", scene {generation}",
        )

    def close(self) -> None:
        """Stop following (cleanup): the subscription and the thread end."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        try:
            self._node.destroy_subscription(self._subscription)
        except Exception:  # noqa: BLE001 - best effort while releasing
            pass
        self._thread.join(timeout=5.0)


def follow_scene(
    node: Any,
    guard: CollisionGuard | None,
    sample: Callable[[], JointSample | None],
    log: LogFunction,
    warn: WarnFunction,
) -> SceneFollower | None:
    """A :class:`SceneFollower` of the guard's scene, or ``None`` without a guard or without moveit_msgs (logged).

    Args:
        node: the driver node.
        guard: the collision guard.
        sample: the joints' latest state.
        log: ``log(level, text)``.
        warn: ``warn(key, text)``.

    Returns:
        The follower, or ``None``.
    """
    if guard is None or guard.scene is None:
        return None
    try:
        return SceneFollower(node, guard, sample, log, warn)
    except ImportError as error:
        log("info", f"run-time collision objects are not followed: moveit_msgs cannot be imported ({error})")
        return None

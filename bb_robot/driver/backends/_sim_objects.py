"""The ``sim`` backend's objects: fingers that stop where they meet one, and objects the fingers carry.

The kinematic simulator has no forces, so a grasp is modelled by contact alone.  The objects are
those of the driver's ``collision.world`` (:attr:`BackendContext.world_objects
<bb_robot.driver.backends.base.BackendContext>`); the movable ones (those with a mass) take part:

- **the fingers stop where they meet an object**: the fingers are the child links of the driver's
  ``gripper.joints`` and of the joints that mimic them.  After each read's integration, when the
  gripper joints' motion brought a finger into an object (a signed distance below zero that the
  motion made deeper), the gripper joints are moved back along their motion to where the first
  finger touches (a bisection, to 1 µm), and stopped.  A closing command then stands still short of
  its goal: the gripper action judges it stalled;
- **an object held by the fingers follows the hand**: when every finger touches an object (within
  :data:`TOUCH`), it is held: from then on its pose is fixed in the frame of the fingers' parent
  link (the hand), however the arm moves, until a finger leaves it (the fingers open).  It then
  stays where it was released: nothing falls in a kinematic simulation.

Static objects (a table, a wall) never move and stop nothing here (the collision guard keeps the
arm off them).  Geometry and distances are coal's (:mod:`bb_robot.collision`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from bb_robot.collision.shapes import Part, coal_module, robot_parts
from bb_robot.collision.world import body_parts
from bb_robot.driver.backends.base import BackendContext, ObjectPoses
from bb_robot.driver.errors import BackendError
from bb_robot.errors import BbRobotError
from bb_robot.mjcf.bodies import SceneBody
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot
from bb_robot.model.transforms import Matrix, matrix_to_quaternion

#: A finger within this of an object (m) touches it.
TOUCH = 1e-3
#: Bisection steps when a finger went into an object (a 2 mm step is placed to 1 µm).
BISECTIONS = 12
#: A finger this near an object (m) rests on it: a motion further in is undone whole, not bisected.
RESTING = 1e-5


@dataclass
class _Object:
    name: str
    pose: Matrix
    parts: tuple[Part, ...]  # in the object's frame
    #: While held: its pose in the hand's frame.
    held: Matrix | None = None


class SimObjects:
    """The objects of one simulated robot (see the module docstring).

    Args:
        robot: The robot model.
        joints: The driven joints, in the driver's order.
        gripper: The gripper joints (``gripper.joints``).
        bodies: The world's objects.
        source: The model's file (relative mesh paths).
    """

    def __init__(
        self, robot: Robot, joints: Sequence[str], gripper: Sequence[str], bodies: Sequence[SceneBody], source: str
    ) -> None:
        self._coal = coal_module()
        self._request, self._result = self._coal.DistanceRequest(), self._coal.DistanceResult()
        self._fk = ForwardKinematics(robot)
        self._coordinates = np.array([self._fk.joint_names.index(j) for j in joints], dtype=np.intp)
        self._gripper = np.array([list(joints).index(j) for j in gripper], dtype=np.intp)
        followers = {j.name for j in robot.joints_in_order() if j.mimic is not None and j.mimic.joint in gripper}
        finger_links = {robot.get_joint(j).child_link for j in (*gripper, *followers)}
        # (the robot's geometry only where something can be grasped: meshes take a while to read)
        graspable = bool(finger_links) and any(body.movable for body in bodies)
        parts = robot_parts(robot, source) if graspable else ()
        self._fingers = tuple(p for p in parts if p.link in finger_links)
        self._finger_links = tuple(sorted({p.link for p in self._fingers}))
        hands = {robot.get_joint(j).parent_link for j in gripper}
        self._hand = self._fk.link_names.index(sorted(hands)[0]) if hands else -1
        self._link_index = {name: self._fk.link_names.index(name) for name in self._finger_links}
        self.names = tuple(body.name for body in bodies)
        self._all = [np.array(body.pose, dtype=float) for body in bodies]
        self._objects = [
            (k, _Object(body.name, self._all[k], body_parts([replace(body, pose=np.eye(4))], body.source or source)))
            for k, body in enumerate(bodies)
            if body.movable
        ]
        self._poses = self._snapshot(0)
        #: Where the fingers last stopped on an object (the driven joints) and the way they were going.
        self._blocked: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, context: BackendContext) -> SimObjects | None:
        """The objects of a simulator's context, or ``None`` when its world has none.

        Args:
            context: The backend's context (robot, driven joints, ``gripper_joints``, ``world_objects``).

        Returns:
            The objects, or ``None``.

        Raises:
            BackendError: the world's objects cannot be read or used (naming the file, the object).
        """
        try:
            bodies = context.world_objects()
            if not bodies:
                return None
            return cls(context.robot, context.joint_names, context.gripper_joints, bodies, context.model_source or "")
        except BbRobotError as error:
            raise BackendError(f"the objects of collision.world cannot be simulated: {error}") from None

    @property
    def active(self) -> bool:
        """Whether anything can happen: gripper joints with finger geometry, and movable objects."""
        return bool(len(self._gripper) and self._fingers and self._objects)

    def held(self) -> tuple[str, ...]:
        """The objects the fingers hold."""
        return tuple(o.name for _, o in self._objects if o.held is not None)

    def poses(self) -> ObjectPoses:
        """Every object's latest pose (static ones where the world puts them)."""
        return self._poses

    # ------------------------------------------------------------------ the loop thread
    def constrain(self, start: np.ndarray, positions: np.ndarray, velocities: np.ndarray, now_ns: int) -> None:
        """After a read's integration from ``start`` to ``positions``: stop the fingers at objects, carry the held ones.

        Args:
            start: The driven joints' positions before the integration.
            positions: After it; the gripper joints are moved back where a finger meets an object (in place).
            velocities: Their velocities; a stopped gripper joint's is set to 0 (in place).
            now_ns: The driver's clock, for the poses' stamp.
        """
        if not self.active:
            return
        g = self._gripper
        moving = bool(np.any(positions[g] != start[g]))
        holding = any(o.held is not None for _, o in self._objects)
        if not moving and not holding:
            return  # nothing can be grasped, released or carried
        if moving and self._still_blocked(start, positions, holding):
            positions[g], velocities[g], moving = start[g], 0.0, False
        if moving:
            moved = positions[g].copy()
            before = self._clearance(self._with(positions, start[g]))
            after = self._clearance(positions)
            if after < 0.0 and after < before:
                floor = min(before, 0.0)
                low, high = 0.0, 1.0  # the fraction of the gripper's motion that is allowed
                for _ in range(BISECTIONS if before > RESTING else 0):  # (resting on it: no motion)
                    middle = 0.5 * (low + high)
                    if self._clearance(self._with(positions, start[g] + middle * (moved - start[g]))) >= floor:
                        low = middle
                    else:
                        high = middle
                positions[g] = start[g] + low * (moved - start[g])
                velocities[g] = 0.0
                self._blocked = (positions.copy(), np.sign(moved - start[g]))
                moving = low > 0.0
        self._carry(positions, moving)
        self._poses = self._snapshot(now_ns)

    def _still_blocked(self, start: np.ndarray, positions: np.ndarray, holding: bool) -> bool:
        """Whether the fingers push on, from where an object stopped them, the way it stopped them
        (nothing to measure: the contact is where it was; an object not held stays where it is only
        while the arm does too)."""
        if self._blocked is None:
            return False
        where, direction = self._blocked
        g = self._gripper
        same_place = np.array_equal(start[g], where[g]) and (holding or np.array_equal(start, where))
        if same_place and np.array_equal(np.sign(positions[g] - start[g]), direction):
            return True
        self._blocked = None
        return False

    # ------------------------------------------------------------------ geometry
    def _with(self, positions: np.ndarray, gripper: np.ndarray) -> np.ndarray:
        q = positions.copy()
        q[self._gripper] = gripper
        return q

    def _links(self, positions: np.ndarray) -> np.ndarray:
        q = np.zeros(len(self._fk.joint_names))
        q[self._coordinates] = positions
        return np.asarray(self._fk.compute(q))

    def _distance(self, part: Part, pose: Matrix, other: Part, other_pose: Matrix) -> float:
        a, b = pose @ part.local, other_pose @ other.local
        coal = self._coal
        self._result.clear()
        return float(
            coal.distance(
                part.hull,
                coal.Transform3s(a[:3, :3], a[:3, 3]),
                other.hull,
                coal.Transform3s(b[:3, :3], b[:3, 3]),
                self._request,
                self._result,
            )
        )

    def _finger_distances(self, links: np.ndarray, item: _Object) -> dict[str, float]:
        """Each finger link's distance to an object."""
        nearest: dict[str, float] = {}
        for finger in self._fingers:
            pose = links[self._link_index[finger.link]]
            for part in item.parts:
                d = self._distance(finger, pose, part, item.pose)
                nearest[finger.link] = min(nearest.get(finger.link, np.inf), d)
        return nearest

    def _clearance(self, positions: np.ndarray) -> float:
        """The smallest signed distance between a finger and a movable object at ``positions``."""
        links = self._links(positions)
        return min((min(self._finger_distances(links, o).values()) for _, o in self._objects), default=np.inf)

    def _carry(self, positions: np.ndarray, moving: bool) -> None:
        """Grasp what every finger touches, release what one left (only when the fingers moved: a
        still hand keeps what it holds), and move the held objects with the hand."""
        links = self._links(positions)
        hand = links[self._hand]
        for k, item in self._objects:
            if moving:
                touching = all(d <= TOUCH for d in self._finger_distances(links, item).values())
            else:
                touching = item.held is not None
            if item.held is not None and not touching:
                item.held = None  # released where it is
            elif item.held is None and touching:
                item.held = np.linalg.inv(hand) @ item.pose
            if item.held is not None:
                item.pose = hand @ item.held
                self._all[k] = item.pose

    def _snapshot(self, now_ns: int) -> ObjectPoses:
        positions = np.array([pose[:3, 3] for pose in self._all]).reshape(-1, 3)
        quaternions = np.array([matrix_to_quaternion(pose[:3, :3]) for pose in self._all]).reshape(-1, 4)
        return ObjectPoses(self.names, positions, quaternions, now_ns)

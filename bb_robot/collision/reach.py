"""Which joints move two links relative to each other, and how a distance between them changes with those joints.

Two links' relative pose depends only on the joints on the kinematic path between them: up from
each link to their common ancestor.  Joints above the common ancestor move both links alike.  A
mimic joint on that path is driven by its source joint, so the source counts as on the path
(followed through chains of mimics).  Floating and planar joints are held (the kinematics keep
them at identity), so they move nothing.

:class:`PairReach` holds the path of one link pair: the independent coordinates
(:attr:`~bb_robot.model.kinematics.ForwardKinematics.joint_names` indices) that move the pair, and
each path joint's motion, from which :meth:`PairReach.gradient` gives the derivative of the
distance between two points, one fixed on each link, along a direction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot
from bb_robot.model.transforms import Matrix

#: Joint types with one coordinate; the others are fixed (no motion) or held (floating, planar).
MOVING = ("revolute", "continuous", "prismatic")


def joints_above(robot: Robot, link: str) -> list[str]:
    """The joints from ``link`` up to the root link, nearest first.

    Args:
        robot: the model.
        link: a link of the model.

    Returns:
        The joint names (empty for the root link).
    """
    joints = []
    current = robot.links[link].parent_joint
    while current is not None:
        joints.append(current)
        current = robot.links[robot.joints[current].parent_link].parent_joint
    return joints


def driving_joint(robot: Robot, name: str) -> tuple[str, float]:
    """The independent joint that drives joint ``name`` and the factor it drives it by (mimics followed).

    Args:
        robot: the model.
        name: a joint of the model.

    Returns:
        ``(source, multiplier)``: ``(name, 1.0)`` for a joint that mimics none.
    """
    joint, factor = robot.joints[name], 1.0
    while joint.mimic is not None:
        factor *= joint.mimic.multiplier
        joint = robot.joints[joint.mimic.joint]
    return joint.name, factor


def path_joints(robot: Robot, first: str, second: str) -> tuple[list[str], list[str]]:
    """The moving joints between each link of a pair and their common ancestor.

    Args:
        robot: the model.
        first: one link.
        second: the other link.

    Returns:
        ``(joints above first, joints above second)``, each up to (not past) the common ancestor,
        only revolute, continuous and prismatic joints.
    """
    above_first, above_second = joints_above(robot, first), joints_above(robot, second)
    shared = set(above_first) & set(above_second)
    return (
        [j for j in above_first if j not in shared and robot.joints[j].type in MOVING],
        [j for j in above_second if j not in shared and robot.joints[j].type in MOVING],
    )


@dataclass(frozen=True)
class PairReach:
    """The joints that move one link pair relative to each other, and their motion.

    Attributes:
        coordinates: the independent coordinates (indices into the kinematics' ``joint_names``)
            that move the pair, sorted; mimic joints' sources included.
        links: for each path joint, the index of its child link in the kinematics' ``link_names``
            (the child link's frame is the joint's frame).
        axes: each path joint's unit axis in that frame, ``(joints, 3)``.
        prismatic: whether each path joint slides (else it turns).
        driven: each path joint's coordinate index.
        factors: what each path joint's motion counts for: its mimic multiplier, negated for the
            joints above the pair's first link (moving the first link moves it away from the second).
        first_side: which path joints are above the first link.
    """

    coordinates: tuple[int, ...]
    links: np.ndarray
    axes: Matrix
    prismatic: np.ndarray
    driven: np.ndarray
    factors: Matrix
    first_side: np.ndarray

    @classmethod
    def of(cls, fk: ForwardKinematics, first: str, second: str) -> PairReach:
        """The reach of links ``first`` and ``second`` of ``fk``'s robot.

        Args:
            fk: the robot's kinematics.
            first: one link.
            second: the other link.

        Returns:
            The pair's reach.
        """
        robot = fk.robot
        coordinate = {name: i for i, name in enumerate(fk.joint_names)}
        link_index = {name: i for i, name in enumerate(fk.link_names)}
        links, axes, prismatic, driven, factors, first_side = [], [], [], [], [], []
        for side, joints in zip((True, False), path_joints(robot, first, second), strict=True):
            for name in joints:
                joint = robot.joints[name]
                source, factor = driving_joint(robot, name)
                if source not in coordinate:  # a mimic of a held joint: the kinematics refuse it earlier
                    continue
                links.append(link_index[joint.child_link])
                axes.append(np.asarray(joint.axis, dtype=float))
                prismatic.append(joint.type == "prismatic")
                driven.append(coordinate[source])
                factors.append(-factor if side else factor)
                first_side.append(side)
        return cls(
            tuple(sorted(set(driven))),
            np.array(links, dtype=np.intp),
            np.array(axes, dtype=float).reshape(-1, 3),
            np.array(prismatic, dtype=bool),
            np.array(driven, dtype=np.intp),
            np.array(factors, dtype=float),
            np.array(first_side, dtype=bool),
        )

    def gradient(self, frames: Matrix, point_first: Matrix, point_second: Matrix, normal: Matrix, size: int) -> Matrix:
        """The derivative of ``normal · (point_second − point_first)`` with each point fixed on its link.

        Args:
            frames: every link's pose, ``(links, 4, 4)``, at the configuration.
            point_first: the point on the first link, in the root frame.
            point_second: the point on the second link, in the root frame.
            normal: the direction (unit, from the first link towards the second).
            size: the number of coordinates.

        Returns:
            The derivative with respect to each coordinate, ``(size,)``; 0 for coordinates off the path.
        """
        result = np.zeros(size)
        if self.driven.size == 0:
            return result
        placed = frames[self.links]
        axes = np.einsum("jab,jb->ja", placed[:, :3, :3], self.axes)
        points = np.where(self.first_side[:, None], point_first, point_second)
        velocities = np.where(self.prismatic[:, None], axes, np.cross(axes, points - placed[:, :3, 3]))
        np.add.at(result, self.driven, self.factors * (velocities @ normal))
        return result

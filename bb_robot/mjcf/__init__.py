"""MuJoCo's MJCF from the robot model (:mod:`bb_robot.mjcf.writer`); no MuJoCo needed to write it."""

from bb_robot.mjcf.meshes import READABLE_SUFFIXES, default_resolver
from bb_robot.mjcf.writer import MjcfDocument, MjcfOptions, MjcfWriteError, actuated_joints, robot_to_mjcf

__all__ = [
    "READABLE_SUFFIXES",
    "MjcfDocument",
    "MjcfOptions",
    "MjcfWriteError",
    "actuated_joints",
    "default_resolver",
    "robot_to_mjcf",
]

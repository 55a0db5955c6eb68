"""The serial manipulator as the node publishes it (JSON), and the pose of its tip.

``~/serial_manipulator`` is a ``std_msgs/String`` holding one JSON object (no ROS message type
carries a chain's joints, actuation types and limits; JSON keeps it readable by any client):

.. code-block:: json

    {"format": "bb_robot/serial_manipulator", "version": 1,
     "robot": "bb_arm", "base_link": "left/base_link", "tip_link": "left/tcp",
     "frame_prefix": "left/",
     "joints": [{"name": "shoulder_pan_joint", "type": "revolute", "actuation": "RZ",
                 "axis": [0, 0, 1], "parent_link": "left/base_link", "child_link": "left/shoulder_link",
                 "lower": -6.28, "upper": 6.28, "velocity": 3.14, "effort": 150.0,
                 "offset_before": [[...4x4...]], "offset_after": [[...4x4...]]}, ...],
     "tip_offset": [[...4x4...]]}

Frame names carry ``frame_prefix``; joint names do not (they are the names joint-state
messages use).  Limits the description does not give are ``null`` (JSON has no infinity).
``actuation`` is ``"RZ"`` (revolute, continuous: rotation about +z of the joint frame) or
``"TZ"`` (prismatic: translation along it); ``axis`` is the joint's axis as the description
writes it; ``offset_before``/``offset_after``/``tip_offset`` are the model's constant 4×4
transforms (``docs/serial.md``): the pose of the tip in the base link frame is
``Π (offset_before[i] · A(q_i) · offset_after[i]) · tip_offset``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix, matrix_to_quaternion

FORMAT = "bb_robot/serial_manipulator"
VERSION = 1


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _matrix(matrix: Matrix) -> list[list[float]]:
    return [[float(v) for v in row] for row in np.asarray(matrix)]


def serial_description(serial: SerialManipulator, frame_prefix: str = "") -> dict[str, Any]:
    """The JSON-ready description of ``serial`` (see the module docs)."""
    joints = []
    for joint in serial.joints:
        joints.append(
            {
                "name": joint.name,
                "type": joint.joint_type,
                "actuation": joint.actuation,
                "axis": [float(c) for c in joint.axis],
                "parent_link": frame_prefix + joint.parent_link,
                "child_link": frame_prefix + joint.child_link,
                "lower": _finite(joint.lower),
                "upper": _finite(joint.upper),
                "velocity": _finite(joint.velocity),
                "effort": _finite(joint.effort),
                "offset_before": _matrix(joint.offset_before),
                "offset_after": _matrix(joint.offset_after),
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "robot": serial.robot_name,
        "base_link": frame_prefix + serial.base_link,
        "tip_link": frame_prefix + serial.tip_link,
        "frame_prefix": frame_prefix,
        "joints": joints,
        "tip_offset": _matrix(serial.tip_offset),
    }


def serial_json(serial: SerialManipulator, frame_prefix: str = "") -> str:
    """:func:`serial_description` as compact JSON text."""
    return json.dumps(serial_description(serial, frame_prefix), separators=(",", ":"), allow_nan=False)


class TipPose:
    """The pose of the serial manipulator's tip in its base link frame, from merged joint values.

    ``coordinate_index`` maps joint names to indices of the merged values (the node's
    :class:`~bb_robot.description.joint_states.JointStateMerger`); every chain joint is one
    of them (a serial manipulator has no mimic, floating or planar joint).
    """

    def __init__(self, serial: SerialManipulator, coordinate_index: Mapping[str, int]) -> None:
        self.serial = serial.with_base_pose(None)
        self.base_link = serial.base_link
        self.tip_link = serial.tip_link
        self._index = np.array([coordinate_index[name] for name in serial.joint_names], dtype=np.intp)

    def ready(self, seen: npt.NDArray[np.bool_]) -> bool:
        """Whether every chain joint has been seen."""
        return bool(seen[self._index].all()) if len(self._index) else True

    def pose(
        self, values: npt.NDArray[np.float64]
    ) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
        """``(translation, quaternion (x, y, z, w))`` of the tip in the base link frame."""
        matrix = self.serial.end_effector_pose(values[self._index])
        x, y, z = (float(v) for v in matrix[:3, 3])
        return (x, y, z), matrix_to_quaternion(matrix[:3, :3])

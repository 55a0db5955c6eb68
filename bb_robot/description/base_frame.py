"""Where a robot stands in a shared frame: the description node's ``parent_frame`` and ``base_pose``.

Several robots in one TF tree (REP 105) each hang from one common frame, e.g. ``world`` →
``left/base_link`` and ``world`` → ``right/base_link``.  The description node publishes that
transform on ``/tf_static`` when ``parent_frame`` is set; this module computes it (pure Python).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bb_robot.description.tf_plan import Quaternion, Vec3, rpy_to_quaternion
from bb_robot.errors import BbRobotError

#: ``parent frame, child frame, translation, rotation (x, y, z, w)``.
BaseTransform = tuple[str, str, Vec3, Quaternion]


class BaseFrameError(BbRobotError):
    """``parent_frame`` or ``base_pose`` cannot place the robot (the message says which and why)."""


def check_base_pose(pose: Sequence[float]) -> tuple[float, float, float, float, float, float]:
    """Return ``pose`` as ``(x, y, z, roll, pitch, yaw)``.

    Args:
        pose: metres and radians, fixed-axis roll, pitch, yaw as in URDF's ``<origin>``.

    Returns:
        The six values as floats.

    Raises:
        BaseFrameError: not six finite numbers.
    """
    values = tuple(float(v) for v in pose)
    if len(values) != 6:
        raise BaseFrameError(f"parameter 'base_pose' needs 6 values [x, y, z, roll, pitch, yaw], got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise BaseFrameError(f"parameter 'base_pose' must be finite, got {list(values)}")
    x, y, z, roll, pitch, yaw = values
    return (x, y, z, roll, pitch, yaw)


def base_transform(parent_frame: str, pose: Sequence[float], child_frame: str) -> BaseTransform | None:
    """The transform ``parent_frame`` → ``child_frame`` (the robot's prefixed top frame) at ``pose``.

    Args:
        parent_frame: the shared frame (not prefixed); empty: the robot is not placed (``None``).
        pose: ``(x, y, z, roll, pitch, yaw)`` of ``child_frame`` in ``parent_frame``.
        child_frame: the robot's top frame as published (``frame_prefix`` included).

    Returns:
        ``(parent, child, translation, quaternion xyzw)``, or ``None`` when ``parent_frame`` is empty.

    Raises:
        BaseFrameError: a bad pose, or a parent frame that is the robot's own top frame.
    """
    if not parent_frame:
        return None
    x, y, z, roll, pitch, yaw = check_base_pose(pose)
    if parent_frame.strip("/") == child_frame.strip("/"):
        raise BaseFrameError(
            f"parameter 'parent_frame' is '{parent_frame}', the robot's own top frame: "
            "set a frame_prefix (e.g. 'left/') or another parent frame"
        )
    return (parent_frame, child_frame, (x, y, z), rpy_to_quaternion((roll, pitch, yaw)))

"""Rigid transforms as numpy arrays: URDF origins in, homogeneous matrices, quaternions out.

Conventions: ``rpy`` are fixed-axis roll, pitch, yaw (R = Rz(yaw)·Ry(pitch)·Rx(roll)),
as in URDF and SDFormat; quaternions are ``(x, y, z, w)`` as in ROS messages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bb_robot.model.geometry import Origin

Matrix = npt.NDArray[np.float64]


def rpy_to_matrix(rpy: Sequence[float]) -> Matrix:
    """Return the 3×3 rotation matrix of fixed-axis roll, pitch, yaw angles."""
    roll, pitch, yaw = rpy
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def origin_to_matrix(origin: Origin | None) -> Matrix:
    """Return the 4×4 homogeneous matrix of an origin (identity for ``None``)."""
    matrix = np.eye(4)
    if origin is not None:
        matrix[:3, :3] = rpy_to_matrix(origin.rpy)
        matrix[:3, 3] = origin.xyz
    return matrix


def matrix_to_rpy(rotation: Matrix) -> tuple[float, float, float]:
    """Return fixed-axis roll, pitch, yaw of a 3×3 rotation (yaw = 0 at the pitch = ±90° singularity)."""
    r = rotation
    pitch = math.atan2(-r[2, 0], math.hypot(r[0, 0], r[1, 0]))
    if math.isclose(abs(pitch), math.pi / 2, abs_tol=1e-12):
        return math.atan2(-r[1, 2], r[1, 1]), pitch, 0.0
    return math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])


def matrix_to_quaternion(rotation: Matrix) -> tuple[float, float, float, float]:
    """Return the unit quaternion ``(x, y, z, w)`` of a 3×3 rotation, with ``w >= 0``."""
    r = rotation
    trace = r[0, 0] + r[1, 1] + r[2, 2]
    if trace > 0.0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, s / 4)
    elif r[0, 0] >= r[1, 1] and r[0, 0] >= r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = (s / 4, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s)
    elif r[1, 1] >= r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = ((r[0, 1] + r[1, 0]) / s, s / 4, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = ((r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, s / 4, (r[1, 0] - r[0, 1]) / s)
    x, y, z, w = (float(c) for c in q)
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    sign = -1.0 if w < 0 else 1.0
    return (sign * x / norm, sign * y / norm, sign * z / norm, sign * w / norm)


def quaternion_to_matrix(quaternion: Sequence[float]) -> Matrix:
    """Return the 3×3 rotation of a unit quaternion ``(x, y, z, w)`` (normalised first; it must not be zero)."""
    x, y, z, w = (float(c) for c in quaternion)
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def skew(v: Sequence[float]) -> Matrix:
    """Return the 3×3 cross-product matrix ``[v]×``."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])

"""``T(xyz, rpy)``: the homogeneous transform the SDF tests write expected poses with."""

from __future__ import annotations

import numpy as np

from bb_robot.model.transforms import rpy_to_matrix


def T(
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0), rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, :3] = rpy_to_matrix(rpy)
    matrix[:3, 3] = xyz
    return matrix

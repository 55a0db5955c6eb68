"""Pinocchio's configuration vector for joint values of a serial chain (the FK tests and the benchmarks).

A revolute joint without limits is continuous in Pinocchio: two entries, ``(cos q, sin q)``;
every other joint takes its value as it is.  Joints not in the chain stay at ``pin.neutral``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bb_robot.model.serial import SerialManipulator


def pin_configuration(model: Any, chain: SerialManipulator, q: np.ndarray) -> np.ndarray:
    """Pinocchio's ``q`` for ``model`` with the chain's joints at ``q`` (in the chain's order)."""
    import pinocchio as pin

    result = pin.neutral(model)
    for name, value in zip(chain.joint_names, q, strict=True):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:
            result[joint.idx_q : joint.idx_q + 2] = (math.cos(value), math.sin(value))
        else:
            result[joint.idx_q] = value
    return result

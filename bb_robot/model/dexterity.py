"""How well a serial chain can move its tool at a configuration: the reach and the singularity measure.

The measure is the inverse condition number ``σ_min / σ_max`` of the chain's Jacobian with its
linear rows divided by the chain's reach, so that metres and radians weigh alike: 1 for a tool
that moves equally well in every direction, 0 at a singularity.  The Cartesian servo slows and
stops by it (``docs/nodes/servo.md``), and ``bb-robot up --demo-cartesian`` picks its ready pose
by it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from bb_robot.model.serial import SerialManipulator

FloatArray = npt.NDArray[np.float64]

#: The smallest reach used to scale the linear rows (m): a chain of tiny links still gets a finite scale.
MIN_REACH = 0.05


def reach(chain: SerialManipulator) -> float:
    """The length of the chain: its joints' and tip's distances in a row, at the zero configuration.

    Args:
        chain: the chain.

    Returns:
        The sum of the distances from each joint frame to the next and to the tip (m), at least
        :data:`MIN_REACH`.
    """
    zero = np.zeros(chain.dof)
    points = np.vstack([chain.link_poses(zero)[:, :3, 3], chain.end_effector_pose(zero)[:3, 3]])
    return max(float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum()), MIN_REACH)


def singularity_measure(jacobian: npt.ArrayLike, scale: float) -> float:
    """The inverse condition number of a Jacobian whose linear rows are divided by ``scale``.

    Args:
        jacobian: ``(6, n)`` (linear rows first), or ``(3, n)``: the linear rows alone (a chain
            that tracks position only).
        scale: the chain's :func:`reach` (m).

    Returns:
        ``σ_min / σ_max`` over ``min(rows, n)`` singular values: 0 singular, 1 isotropic.
    """
    scaled = np.array(jacobian, dtype=float)
    scaled[:3] /= scale
    values = np.linalg.svd(scaled, compute_uv=False)
    if values[0] <= 0.0:
        return 0.0
    return float(values[min(scaled.shape) - 1] / values[0])

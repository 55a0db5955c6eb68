"""The placement step of :class:`bb_robot.collision.model.CollisionModel`, compiled by numba.

Imported only by :func:`bb_robot.collision.model.placement_kernel`, which falls back to the numpy
path of ``CollisionModel._placed`` when numba is missing or fails, or with ``BB_ROBOT_KERNEL=numpy``.
:func:`place` does in one call what that path does with five numpy operations on tiny arrays,
each of which costs more in numpy's dispatch than in arithmetic: every part's pose (its link's
frame times the part's local pose), each checked pair's squared distance between the
bounding-sphere centres, and the pairs whose spheres overlap.  The narrow phase stays coal's.

One signature, compiled (or loaded from numba's cache) at import: no argument of another type
can make numba compile during a check.  The forward pass is :mod:`bb_robot.model._frames_numba`'s.
"""

from __future__ import annotations

import numba
import numpy as np

from bb_robot.model._frames_numba import _decode, _scratch_frames, one_decoded

_F2, _F3, _I1, _F1 = numba.float64[:, ::1], numba.float64[:, :, ::1], numba.intp[::1], numba.float64[::1]
SIGNATURE = numba.intp(_F1, _F1, _F1, _I1, _F3, _F2, _I1, _I1, _F1, _F3, _F2, _F1, _I1)


@numba.njit(SIGNATURE, cache=True, nogil=True, boundscheck=False)
def place(
    code: np.ndarray,
    q: np.ndarray,
    work: np.ndarray,
    link_of: np.ndarray,
    local: np.ndarray,
    centers: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    reach2: np.ndarray,
    rotations: np.ndarray,
    translations: np.ndarray,
    squared: np.ndarray,
    candidates: np.ndarray,
) -> int:  # pragma: no cover - compiled; compared with the numpy path in test/collision/test_model.py
    """Write every part's pose into ``poses`` and each pair's squared centre distance into ``squared``.

    Args:
        code: the model's compiled forward kinematics (``ForwardKinematics.program``): frame ``i``
            is link ``i``.
        q: one configuration (C-contiguous, its arity).
        work: scratch of the program's size.
        link_of: ``(parts,)``: each part's link (its index in ``frames``).
        local: ``(parts, 4, 4)``: each part's pose in its link's frame.
        centers: ``(parts, 4)``: each part's bounding-sphere centre in its link's frame (``w`` = 1).
        first, second: ``(pairs,)``: the checked pairs' parts.
        reach2: ``(pairs,)``: the square of the sum of each pair's bounding-sphere radii.
        rotations, translations: ``(parts, 3, 3)``, ``(parts, 3)``: each part's pose, written.
        squared: ``(pairs,)``: the squared distance of each pair's centres, written.
        candidates: ``(pairs,)``: the pairs whose spheres overlap, in order, written first.

    Returns:
        How many candidates were written; -1 when ``q`` is not finite (nothing is written).
    """
    frames = _scratch_frames(code, work)
    if not one_decoded(code, _decode(code), q, work, frames):
        return -1
    parts = link_of.shape[0]
    world = np.empty((parts, 3))
    for p in range(parts):
        f = frames[link_of[p]]  # [R | t] row by row, then 0 0 0 1
        m = local[p]
        for r in range(3):
            x, y, z, d = f[4 * r], f[4 * r + 1], f[4 * r + 2], f[4 * r + 3]
            for c in range(3):
                rotations[p, r, c] = x * m[0, c] + y * m[1, c] + z * m[2, c]
            translations[p, r] = x * m[0, 3] + y * m[1, 3] + z * m[2, 3] + d
            world[p, r] = x * centers[p, 0] + y * centers[p, 1] + z * centers[p, 2] + d
    count = 0
    for k in range(first.shape[0]):
        i, j = first[k], second[k]
        dx = world[i, 0] - world[j, 0]
        dy = world[i, 1] - world[j, 1]
        dz = world[i, 2] - world[j, 2]
        squared[k] = dx * dx + dy * dy + dz * dz
        if squared[k] <= reach2[k]:
            candidates[count] = k
            count += 1
    return count

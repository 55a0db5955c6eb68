"""The placement step of :class:`bb_robot.collision.model.CollisionModel`, compiled by numba.

Imported only by :func:`bb_robot.collision.model.placement_kernel`, which falls back to the numpy
path of ``CollisionModel._placed`` when numba is missing or fails, or with ``BB_ROBOT_KERNEL=numpy``.
:func:`place` does in one call what that path does with five numpy operations on tiny arrays,
each of which costs more in numpy's dispatch than in arithmetic: every part's pose (its link's
frame times the part's local pose), each checked pair's squared distance between the
bounding-sphere centres, and the pairs that may touch: their spheres overlap and their bounding
boxes (aligned with their links, :func:`_boxes_apart`) are not apart.  The narrow phase stays coal's.

One signature, compiled (or loaded from numba's cache) at import: no argument of another type
can make numba compile during a check.  The forward pass is :mod:`bb_robot.model._frames_numba`'s.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bb_robot.model import _frames_numba
from bb_robot.model._frames_numba import _decode, _scratch_frames, one_decoded
from bb_robot.model.compiled import compile_cached

_F2, _F3, _I1, _F1 = numba.float64[:, ::1], numba.float64[:, :, ::1], numba.intp[::1], numba.float64[::1]
SIGNATURE = numba.intp(_F1, _F1, _F1, _I1, _F3, _F2, _F2, _F2, _I1, _I1, _F1, _F3, _F2, _F1, _I1)
#: Added to the boxes' rotation terms against rounding (Gottschalk et al.'s epsilon).
_EPSILON = 1e-9


@numba.njit(inline="always", boundscheck=False)
def _boxes_apart(
    frames: np.ndarray, a: int, b: int, ca: np.ndarray, ea: np.ndarray, cb: np.ndarray, eb: np.ndarray
) -> bool:  # pragma: no cover - compiled
    """Whether two boxes in link frames ``a`` and ``b`` are apart: the separating-axis test of two
    oriented boxes (the 15 axes: each box's 3 face normals and their 9 cross products).

    ``frames`` rows are 4×4 poses row by row; box ``ca ± ea`` is in frame ``a``, ``cb ± eb`` in ``b``.
    """
    fa, fb = frames[a], frames[b]
    r = np.empty((3, 3))  # R_a^T R_b
    absr = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            v = fa[i] * fb[j] + fa[4 + i] * fb[4 + j] + fa[8 + i] * fb[8 + j]
            r[i, j] = v
            absr[i, j] = abs(v) + _EPSILON
    # the centres in the root frame, then their difference in frame a
    d = np.empty(3)
    for k in range(3):
        pa = fa[4 * k] * ca[0] + fa[4 * k + 1] * ca[1] + fa[4 * k + 2] * ca[2] + fa[4 * k + 3]
        pb = fb[4 * k] * cb[0] + fb[4 * k + 1] * cb[1] + fb[4 * k + 2] * cb[2] + fb[4 * k + 3]
        d[k] = pb - pa
    t = np.empty(3)
    for i in range(3):
        t[i] = fa[i] * d[0] + fa[4 + i] * d[1] + fa[8 + i] * d[2]
    for i in range(3):  # a's axes
        if abs(t[i]) > ea[i] + eb[0] * absr[i, 0] + eb[1] * absr[i, 1] + eb[2] * absr[i, 2]:
            return True
    for j in range(3):  # b's axes
        projected = abs(t[0] * r[0, j] + t[1] * r[1, j] + t[2] * r[2, j])
        if projected > ea[0] * absr[0, j] + ea[1] * absr[1, j] + ea[2] * absr[2, j] + eb[j]:
            return True
    for i in range(3):  # a_i x b_j
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            reach_a = ea[i1] * absr[i2, j] + ea[i2] * absr[i1, j]
            reach_b = eb[j1] * absr[i, j2] + eb[j2] * absr[i, j1]
            if abs(t[i2] * r[i1, j] - t[i1] * r[i2, j]) > reach_a + reach_b:
                return True
    return False


@numba.njit(cache=True, nogil=True, boundscheck=False)
def place(
    code: np.ndarray,
    q: np.ndarray,
    work: np.ndarray,
    link_of: np.ndarray,
    local: np.ndarray,
    centers: np.ndarray,
    box_centers: np.ndarray,
    box_halves: np.ndarray,
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
        box_centers, box_halves: ``(parts, 3)``: each part's bounding box in its link's frame
            (aligned with it); a half extent of inf: no box (the pair is a candidate by its spheres).
        first, second: ``(pairs,)``: the checked pairs' parts.
        reach2: ``(pairs,)``: the square of the sum of each pair's bounding-sphere radii.
        rotations, translations: ``(parts, 3, 3)``, ``(parts, 3)``: each part's pose, written.
        squared: ``(pairs,)``: the squared distance of each pair's centres, written.
        candidates: ``(pairs,)``: the pairs whose spheres overlap and whose boxes are not apart, in
            order, written first.

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
        if squared[k] > reach2[k]:
            continue
        if math.isfinite(box_halves[i, 0]) and math.isfinite(box_halves[j, 0]):
            if _boxes_apart(
                frames, link_of[i], link_of[j], box_centers[i], box_halves[i], box_centers[j], box_halves[j]
            ):
                continue
        candidates[count] = k
        count += 1
    return count


compile_cached(place, SIGNATURE, [__file__, _frames_numba.__file__])

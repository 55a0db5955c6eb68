"""The batched forward pass of :mod:`bb_robot.model.compiled`, compiled by numba.

Imported only by :func:`bb_robot.model.compiled.kernel`, which falls back to
the numpy path when numba is missing or fails.  One function,
:func:`fill_frames`, whose arguments :class:`bb_robot.model.compiled.Program`
lays out.  It walks the configurations one after the other, writing each
one's frames to consecutive memory (the result's own layout), so the parent
a step reads was written a moment before and is still in the L1 cache.
Compiled code is cached on disk (numba's ``cache``): a process that finds the
cache loads it in milliseconds.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import uint64

# Step kinds: column 0 of a program's integer row (bb_robot.model.compiled).
_FIXED, _REVOLUTE, _PRISMATIC, _REVOLUTE_AXIS, _TRANSLATION, _AXIS = 0, 1, 2, 3, 4, 5


@numba.njit(cache=True, nogil=True, boundscheck=False)
def fill_frames(
    root: np.ndarray,
    ints: np.ndarray,
    constants: np.ndarray,
    values: np.ndarray,
    cos: np.ndarray,
    sin: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled; tested through bb_robot.model.compiled
    """Write every entry of ``out`` ``(B, count, 16)``: frame 0 is ``root``, each step writes its child.

    Args:
        root: Frame 0's ``[R | t]``, 12 values row by row.
        ints: Per step: kind, parent, child, slot, and the columns ``i, j, k`` of an axis rotation.
        constants: Per step: its 3×10 constant block row by row, then the axis sign.
        values: ``(B, slots)``: the value of each moving step's coordinate (prismatic steps read it).
        cos: ``(B, slots)``: cosines of ``values`` (revolute steps read them).
        sin: ``(B, slots)``: sines of ``values``.
        out: The frames, each ``[R | t]`` then the bottom row ``0 0 0 1``.
    """
    batch = out.shape[0]
    count = out.shape[1]
    steps = ints.shape[0]
    for b in range(batch):
        o = out[b]
        for f in range(count):
            o[f, 12] = 0.0
            o[f, 13] = 0.0
            o[f, 14] = 0.0
            o[f, 15] = 1.0
        for e in range(12):
            o[0, e] = root[e]
        vb = values[b]
        cb = cos[b]
        sb = sin[b]
        for s in range(steps):
            kind = ints[s, 0]
            p = o[uint64(ints[s, 1])]
            h = o[uint64(ints[s, 2])]
            slot = uint64(ints[s, 3])
            k = constants[s]
            if kind == _AXIS or kind == _REVOLUTE_AXIS:
                # (P · R) · Rot(sign·e_k, v): columns i, j of P·R mix, column k stays.
                i = uint64(ints[s, 4])
                j = uint64(ints[s, 5])
                c = uint64(ints[s, 6])
                cv = cb[slot]
                sv = sb[slot] * k[30]
                for r in range(3):
                    m0 = p[4 * r]
                    m1 = p[4 * r + 1]
                    m2 = p[4 * r + 2]
                    if kind == _AXIS:  # R is the identity
                        a = p[4 * r + i]
                        d = p[4 * r + j]
                        h[4 * r + c] = p[4 * r + c]
                    else:
                        a = m0 * k[i] + m1 * k[10 + i] + m2 * k[20 + i]
                        d = m0 * k[j] + m1 * k[10 + j] + m2 * k[20 + j]
                        h[4 * r + c] = m0 * k[c] + m1 * k[10 + c] + m2 * k[20 + c]
                    h[4 * r + i] = a * cv + d * sv
                    h[4 * r + j] = d * cv - a * sv
                    h[4 * r + 3] = m0 * k[9] + m1 * k[19] + m2 * k[29] + p[4 * r + 3]
            elif kind == _REVOLUTE:  # local rotation C + cos·A + sin·B
                cv = cb[slot]
                sv = sb[slot]
                l00 = k[0] + cv * k[3] + sv * k[6]
                l01 = k[1] + cv * k[4] + sv * k[7]
                l02 = k[2] + cv * k[5] + sv * k[8]
                l10 = k[10] + cv * k[13] + sv * k[16]
                l11 = k[11] + cv * k[14] + sv * k[17]
                l12 = k[12] + cv * k[15] + sv * k[18]
                l20 = k[20] + cv * k[23] + sv * k[26]
                l21 = k[21] + cv * k[24] + sv * k[27]
                l22 = k[22] + cv * k[25] + sv * k[28]
                for r in range(3):
                    m0 = p[4 * r]
                    m1 = p[4 * r + 1]
                    m2 = p[4 * r + 2]
                    h[4 * r] = m0 * l00 + m1 * l10 + m2 * l20
                    h[4 * r + 1] = m0 * l01 + m1 * l11 + m2 * l21
                    h[4 * r + 2] = m0 * l02 + m1 * l12 + m2 * l22
                    h[4 * r + 3] = m0 * k[9] + m1 * k[19] + m2 * k[29] + p[4 * r + 3]
            elif kind == _TRANSLATION:  # a fixed step whose rotation is the identity
                for r in range(3):
                    h[4 * r] = p[4 * r]
                    h[4 * r + 1] = p[4 * r + 1]
                    h[4 * r + 2] = p[4 * r + 2]
                    h[4 * r + 3] = p[4 * r] * k[9] + p[4 * r + 1] * k[19] + p[4 * r + 2] * k[29] + p[4 * r + 3]
            else:  # fixed [R | t], or prismatic [R | R·u | · | t] moved by v·R·u
                v = vb[slot] if kind == _PRISMATIC else 0.0
                t0 = k[9] + v * k[3]
                t1 = k[19] + v * k[13]
                t2 = k[29] + v * k[23]
                for r in range(3):
                    m0 = p[4 * r]
                    m1 = p[4 * r + 1]
                    m2 = p[4 * r + 2]
                    h[4 * r] = m0 * k[0] + m1 * k[10] + m2 * k[20]
                    h[4 * r + 1] = m0 * k[1] + m1 * k[11] + m2 * k[21]
                    h[4 * r + 2] = m0 * k[2] + m1 * k[12] + m2 * k[22]
                    h[4 * r + 3] = m0 * t0 + m1 * t1 + m2 * t2 + p[4 * r + 3]

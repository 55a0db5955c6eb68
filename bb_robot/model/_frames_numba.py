"""The forward pass of :mod:`bb_robot.model.compiled`, compiled by numba.

Imported only by :func:`bb_robot.model.compiled.kernels`, which falls back to
the pure-Python paths when numba is missing or fails.  Two entry points share
one loop over the steps (:func:`_forward`):

- :func:`fill_frames`, a batch: configurations one after the other, each
  one's frames written to consecutive memory (the result's own layout), so the
  parent a step reads was written a moment before and is still in L1 cache;
- :func:`one_configuration`, one configuration: every frame, or one of them.

Every constant is in one float64 array, the *code* that
:func:`bb_robot.model.compiled.program` packs (its layout is described there):
each argument costs the call about 45 ns, so a call takes few.  Compiled code
is cached on disk (numba's ``cache``); a process that finds the cache loads it
in milliseconds.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# Step kinds (the first integer of a step); the same numbers as in bb_robot.model.compiled.
_FIXED, _REVOLUTE, _PRISMATIC, _REVOLUTE_AXIS, _TRANSLATION, _AXIS = 0, 1, 2, 3, 4, 5
# The code's layout: a header, the root's [R | t], then per step 7 integers and 31 constants,
# then per slot (column, multiplier, offset).
_HEADER, _ROOT, _STEP = 3, 12, 38


@numba.njit(inline="always", boundscheck=False)
def _decode(code: np.ndarray) -> np.ndarray:
    """The steps' integers (kind, parent, child, slot, i, j, k), converted once per call."""
    steps = int(code[1])
    ints = np.empty((steps, 7), dtype=np.int64)
    for s in range(steps):
        base = _HEADER + _ROOT + _STEP * s
        for e in range(7):
            ints[s, e] = int(code[base + e])
    return ints


@numba.njit(inline="always", boundscheck=False)
def _forward(
    code: np.ndarray, ints: np.ndarray, o: np.ndarray, v: np.ndarray, cos: np.ndarray, sin: np.ndarray
) -> None:
    """Write every frame of one configuration into ``o`` ``(count, 16)`` from slot values, cosines, sines."""
    for e in range(12):
        o[0, e] = code[_HEADER + e]
    o[0, 12] = 0.0
    o[0, 13] = 0.0
    o[0, 14] = 0.0
    o[0, 15] = 1.0
    for s in range(ints.shape[0]):
        kind = ints[s, 0]
        p = o[ints[s, 1]]
        h = o[ints[s, 2]]
        slot = ints[s, 3]
        base = _HEADER + _ROOT + _STEP * s
        k = code[base + 7 : base + _STEP]
        h[12] = 0.0
        h[13] = 0.0
        h[14] = 0.0
        h[15] = 1.0
        if kind == _AXIS or kind == _REVOLUTE_AXIS:
            # (P · R) · Rot(sign·e_k, v): columns i, j of P·R mix, column k stays.
            i = ints[s, 4]
            j = ints[s, 5]
            c = ints[s, 6]
            cv = cos[slot]
            sv = sin[slot] * k[30]
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
            cv = cos[slot]
            sv = sin[slot]
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
            value = v[slot] if kind == _PRISMATIC else 0.0
            t0 = k[9] + value * k[3]
            t1 = k[19] + value * k[13]
            t2 = k[29] + value * k[23]
            for r in range(3):
                m0 = p[4 * r]
                m1 = p[4 * r + 1]
                m2 = p[4 * r + 2]
                h[4 * r] = m0 * k[0] + m1 * k[10] + m2 * k[20]
                h[4 * r + 1] = m0 * k[1] + m1 * k[11] + m2 * k[21]
                h[4 * r + 2] = m0 * k[2] + m1 * k[12] + m2 * k[22]
                h[4 * r + 3] = m0 * t0 + m1 * t1 + m2 * t2 + p[4 * r + 3]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def fill_frames(
    code: np.ndarray, values: np.ndarray, cos: np.ndarray, sin: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled; tested through bb_robot.model.compiled
    """Write every entry of ``out`` ``(B, count, 16)``.

    Args:
        code: The packed program.
        values: ``(B, slots)``: each moving step's value (prismatic steps read it).
        cos: ``(B, slots)``: cosines of ``values`` (revolute steps read them).
        sin: ``(B, slots)``: sines of ``values``.
        out: The frames, each ``[R | t]`` then the bottom row ``0 0 0 1``.
    """
    ints = _decode(code)
    for b in range(out.shape[0]):
        _forward(code, ints, out[b], values[b], cos[b], sin[b])


@numba.njit(inline="always", boundscheck=False)
def _one(code: np.ndarray, q: np.ndarray, work: np.ndarray, frames: np.ndarray) -> bool:
    """Write every frame of configuration ``q`` into ``frames`` ``(count, 16)``; ``False`` if ``q`` is not finite."""
    return one_decoded(code, _decode(code), q, work, frames)


@numba.njit(inline="always", boundscheck=False)
def one_decoded(code: np.ndarray, ints: np.ndarray, q: np.ndarray, work: np.ndarray, frames: np.ndarray) -> bool:
    """:func:`_one` with the steps' integers already decoded (a caller running many forward passes)."""
    steps = int(code[1])
    slots = int(code[2])
    for x in q:
        if not math.isfinite(x):
            return False
    table = _HEADER + _ROOT + _STEP * steps
    v = work[0:slots]
    cos = work[slots : 2 * slots]
    sin = work[2 * slots : 3 * slots]
    for s in range(slots):
        x = q[int(code[table + 3 * s])] * code[table + 3 * s + 1] + code[table + 3 * s + 2]
        v[s] = x
        cos[s] = math.cos(x)
        sin[s] = math.sin(x)
    _forward(code, ints, frames, v, cos, sin)
    return True


@numba.njit(inline="always", boundscheck=False)
def _scratch_frames(code: np.ndarray, work: np.ndarray) -> np.ndarray:
    """The part of ``work`` after the slot values that holds ``(count, 16)`` frames."""
    count = int(code[0])
    slots = int(code[2])
    return work[3 * slots : 3 * slots + 16 * count].reshape(count, 16)


@numba.njit(cache=True, boundscheck=False)
def one_configuration(
    code: np.ndarray, q: np.ndarray, work: np.ndarray, out: np.ndarray, index: int
) -> bool:  # pragma: no cover - compiled; tested through bb_robot.model.compiled
    """Write the frames of configuration ``q`` into ``out``; ``False`` (nothing written) if ``q`` is not finite.

    Args:
        code: The packed program.
        q: The configuration, C-contiguous.
        work: Scratch of at least ``3 · slots + 16 · count`` values.
        out: ``(count, 4, 4)`` for every frame (``index < 0``), else ``(4, 4)`` for frame ``index``.
        index: The one frame to write, or -1 for all of them.

    Returns:
        Whether ``q`` was finite.
    """
    if index < 0:
        return _one(code, q, work, out.reshape(int(code[0]), 16))
    frames = _scratch_frames(code, work)
    if not _one(code, q, work, frames):
        return False
    out.reshape(16)[:] = frames[index]
    return True


@numba.njit(cache=True, boundscheck=False)
def jacobian(
    code: np.ndarray, spec: np.ndarray, q: np.ndarray, work: np.ndarray, out: np.ndarray
) -> bool:  # pragma: no cover - compiled; tested through bb_robot.model.compiled
    """Write the 6×n geometric Jacobian of configuration ``q`` into ``out``; ``False`` if ``q`` is not finite.

    Args:
        code: The packed program.
        spec: The frame whose origin the Jacobian is for, then per column the frame whose +z is
            the joint axis and 1 for a prismatic joint (0 revolute).
        q: The configuration, C-contiguous.
        work: As :func:`one_configuration`.
        out: ``(6, n)``: rows ``vx, vy, vz, wx, wy, wz`` in the frame of the root.

    Returns:
        Whether ``q`` was finite.
    """
    frames = _scratch_frames(code, work)
    if not _one(code, q, work, frames):
        return False
    target = frames[int(spec[0])]
    jacobian_at(frames, spec, target[3], target[7], target[11], out)
    return True


@numba.njit(inline="always", boundscheck=False)
def jacobian_at(frames: np.ndarray, spec: np.ndarray, px: float, py: float, pz: float, out: np.ndarray) -> None:
    """Write the 6×n geometric Jacobian of point ``(px, py, pz)`` (in the root's frame) into ``out``.

    ``frames`` ``(count, 16)`` are one configuration's; ``spec`` as :func:`jacobian` (its first
    entry, the target frame, is not read: the point is given).
    """
    for c in range(out.shape[1]):
        f = frames[int(spec[1 + 2 * c])]
        ax = f[2]
        ay = f[6]
        az = f[10]
        if spec[2 + 2 * c] != 0.0:  # prismatic: [z; 0]
            out[0, c] = ax
            out[1, c] = ay
            out[2, c] = az
            out[3, c] = 0.0
            out[4, c] = 0.0
            out[5, c] = 0.0
        else:  # revolute: [z × (p − o); z]
            dx = px - f[3]
            dy = py - f[7]
            dz = pz - f[11]
            out[0, c] = ay * dz - az * dy
            out[1, c] = az * dx - ax * dz
            out[2, c] = ax * dy - ay * dx
            out[3, c] = ax
            out[4, c] = ay
            out[5, c] = az

"""One servo cycle as one compiled call: :mod:`bb_robot.driver.servo.servo_math` compiled by numba.

Imported only by :func:`bb_robot.driver.servo.chain.load_kernel`, which falls back to the numpy path
when numba is missing, fails, or ``BB_ROBOT_KERNEL=numpy`` is set.  :func:`cycle` runs the forward
kinematics of :mod:`bb_robot.model._frames_numba` (the measured tool pose, every frame at the
setpoint, the Jacobian) and :mod:`~bb_robot.driver.servo.servo_math`'s steps, which are compiled here
from their own code with four functions bound to the loops below: numba's ``np.linalg`` and
``@`` call SciPy's LAPACK and BLAS, which bb_robot does not require.

:func:`cycle` is cached on disk (numba's ``cache``), and dropped from it when this file,
:mod:`~bb_robot.driver.servo.servo_math` or the forward pass changed
(:func:`bb_robot.model.compiled.compile_cached`).
"""

from __future__ import annotations

import math
import types
from typing import Any

import numba
import numpy as np

from bb_robot.driver.servo import servo_math
from bb_robot.model import _frames_numba
from bb_robot.model._frames_numba import _decode, _scratch_frames, jacobian_at, one_decoded
from bb_robot.model.compiled import compile_cached

_OPTIONS: dict[str, Any] = {"nogil": True, "error_model": "numpy", "boundscheck": False}
#: One-sided Jacobi: sweeps at most, and the relative size below which two columns count as orthogonal.
_SWEEPS, _ORTHOGONAL = 30, 1e-15


@numba.njit(**_OPTIONS)
def matvec(a: np.ndarray, x: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``a @ x``."""
    out = np.zeros(a.shape[0])
    for r in range(a.shape[0]):
        total = 0.0
        for c in range(a.shape[1]):
            total += a[r, c] * x[c]
        out[r] = total
    return out


@numba.njit(**_OPTIONS)
def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``a @ b``."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for r in range(a.shape[0]):
        for c in range(b.shape[1]):
            total = 0.0
            for k in range(a.shape[1]):
                total += a[r, k] * b[k, c]
            out[r, c] = total
    return out


@numba.njit(**_OPTIONS)
def singular_values(a: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """The singular values of ``a``, largest first: one-sided Jacobi (Hestenes) on its shorter side.

    The columns of ``a`` (or of ``aᵀ`` when ``a`` is wide) are rotated in pairs until each two
    are orthogonal; the singular values are then their norms.  Accurate to rounding even for
    tiny singular values, which the eigenvalues of ``a aᵀ`` are not.
    """
    b = a.copy() if a.shape[0] >= a.shape[1] else a.T.copy()
    m, n = b.shape
    for _ in range(_SWEEPS):
        rotated = False
        for i in range(n - 1):
            for j in range(i + 1, n):
                alpha = beta = gamma = 0.0
                for k in range(m):
                    alpha += b[k, i] * b[k, i]
                    beta += b[k, j] * b[k, j]
                    gamma += b[k, i] * b[k, j]
                if abs(gamma) <= _ORTHOGONAL * math.sqrt(alpha * beta) or gamma == 0.0:
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for k in range(m):
                    x, y = b[k, i], b[k, j]
                    b[k, i] = c * x - s * y
                    b[k, j] = s * x + c * y
        if not rotated:
            break
    values = np.empty(n)
    for j in range(n):
        total = 0.0
        for k in range(m):
            total += b[k, j] * b[k, j]
        values[j] = math.sqrt(total)
    return np.sort(values)[::-1].copy()


@numba.njit(**_OPTIONS)
def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``x`` with ``a x = b``: Gaussian elimination with partial pivoting."""
    n = a.shape[0]
    m = a.copy()
    x = b.copy()
    for col in range(n):
        pivot = col
        for r in range(col + 1, n):
            if abs(m[r, col]) > abs(m[pivot, col]):
                pivot = r
        if pivot != col:
            for c in range(n):
                m[col, c], m[pivot, c] = m[pivot, c], m[col, c]
            x[col], x[pivot] = x[pivot], x[col]
        for r in range(col + 1, n):
            factor = m[r, col] / m[col, col]
            for c in range(col, n):
                m[r, c] -= factor * m[col, c]
            x[r] -= factor * x[col]
    for r in range(n - 1, -1, -1):
        total = x[r]
        for c in range(r + 1, n):
            total -= m[r, c] * x[c]
        x[r] = total / m[r, r]
    return x


def _compile() -> dict[str, Any]:
    """servo_math's functions compiled, with the four above in place of its numpy linear algebra.

    Each function is rebuilt from its code object over a namespace where the names it calls are
    the compiled ones; numba compiles it at its first call (here: inside :func:`cycle`'s).
    """
    namespace = dict(vars(servo_math))
    namespace.update(matvec=matvec, matmul=matmul, singular_values=singular_values, solve=solve)
    for name, value in vars(servo_math).items():
        if isinstance(value, types.FunctionType) and value.__module__ == servo_math.__name__:
            if name in ("matvec", "matmul", "singular_values", "solve", "settings_vector"):
                continue
            clone = types.FunctionType(value.__code__, namespace, name, value.__defaults__)
            namespace[name] = numba.njit(**_OPTIONS)(clone)
    return namespace


@numba.njit(**_OPTIONS)
def _forward(code: np.ndarray, ints: np.ndarray, q: np.ndarray, work: np.ndarray, frames: np.ndarray) -> None:
    """The forward pass as a call of its own (inlined at each of :func:`cycle`'s three uses it compiled slowly)."""
    one_decoded(code, ints, q, work, frames)  # pragma: no cover - compiled


_COMPILED = _compile()
_start = _COMPILED["start"]
_probe = _COMPILED["probe"]
_finish = _COMPILED["finish"]
_conditioning = _COMPILED["conditioning"]


_F1, _F2, _I1 = numba.float64[::1], numba.float64[:, ::1], numba.intp[::1]
_I, _F = numba.int64, numba.float64
#: :func:`cycle`'s one signature: compiled (or loaded from the cache) when this module is imported,
#: so that no argument of another type can make numba compile inside the control loop (it raises).
SIGNATURE = numba.void(
    _F1, _F1, _I, _I, _F1, _F1, _I1, _F1, _F1, _F1, _F2, _I, _F2, _F1, _F2, _F1, _F, _I, _F, _F, _F, _F1, _F1
)


@numba.njit(cache=True, **_OPTIONS)
def cycle(
    code: np.ndarray,
    spec: np.ndarray,
    tip: int,
    frame: int,
    work: np.ndarray,
    positions: np.ndarray,
    indices: np.ndarray,
    targets: np.ndarray,
    feedforward: np.ndarray,
    state: np.ndarray,
    limits: np.ndarray,
    mode: int,
    rotation: np.ndarray,
    values: np.ndarray,
    target: np.ndarray,
    stream: np.ndarray,
    since: float,
    rows: int,
    reach: float,
    proximity: float,
    period: float,
    s: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled; tested against the numpy path in test/driver/servo/test_servo_math.py
    """One cycle of :meth:`bb_robot.driver.servo.servo.Servo.update` (the numpy path's steps in order).

    Args:
        code, spec, tip: the chain's compiled program, its tip Jacobian spec and tip frame index.
        frame: the twist frame's index among the program's frames, or -1: ``rotation`` is given.
        work: scratch of the program's size.
        positions: every driven joint's measured position (NaN: the joint's setpoint is used).
        indices: the chain's joints among them.
        targets, feedforward: every driven joint's position target and velocity feed-forward;
            the chain's are written here.
        state: ``[q (n), qd (n), twist (6), smoothed (6), reference (16)]``, changed.
        limits: ``(4, n)``: command range low and high, velocity and acceleration limits.
        mode, rotation, values, target, stream, since: the input (:func:`servo_math.tool_velocity`).
        rows, reach, proximity, period, s: as in :mod:`~bb_robot.driver.servo.servo_math`.
        out: ``[scale, measure, why, still]`` written here.
    """
    n = indices.shape[0]
    q = state[:n]
    qd = state[n : 2 * n]
    twist = state[2 * n : 2 * n + 6]
    smoothed = state[2 * n + 6 : 2 * n + 12]
    reference = state[2 * n + 12 : 2 * n + 28].reshape(4, 4)
    measured = np.empty(n)
    for k in range(n):
        x = positions[indices[k]]
        measured[k] = x if math.isfinite(x) else q[k]
    ints = _decode(code)
    frames = _scratch_frames(code, work)
    _forward(code, ints, measured, work, frames)
    current = frames[tip].copy().reshape(4, 4)
    _forward(code, ints, q, work, frames)
    if frame >= 0:
        rotation = frames[frame].copy().reshape(4, 4)[:3, :3].copy()
    jacobian = np.empty((6, n))
    f = frames[tip]
    jacobian_at(frames, spec, f[3], f[7], f[11], jacobian)
    free, measure, damped = _start(
        mode,
        current,
        rotation,
        values,
        target,
        stream,
        since,
        reference,
        smoothed,
        twist,
        jacobian[:rows].copy(),
        reach,
        period,
        s,
    )
    ahead = math.nan
    point = _probe(q, free, measure, s)
    if point.shape[0] > 0:
        _forward(code, ints, point, work, frames)
        f = frames[tip]
        jacobian_at(frames, spec, f[3], f[7], f[11], jacobian)
        ahead = _conditioning(jacobian[:rows].copy(), reach)[1]
    scale, why, still = _finish(
        free,
        measure,
        ahead,
        damped,
        q,
        qd,
        twist,
        reference,
        limits[0],
        limits[1],
        limits[2],
        limits[3],
        proximity,
        period,
        s,
    )
    for k in range(n):
        targets[indices[k]] = q[k]
        feedforward[indices[k]] = qd[k]
    out[0] = scale
    out[1] = measure
    out[2] = why
    out[3] = 1.0 if still else 0.0


compile_cached(cycle, SIGNATURE, [__file__, servo_math.__file__, _frames_numba.__file__])

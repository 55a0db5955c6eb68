"""The approach path of :func:`bb_robot.driver.commands.limits.approach_path`, compiled by numba.

Imported only by :func:`bb_robot.driver.commands.limits.approach_kernel`, which falls back to the
numpy path when numba is missing or fails, or with ``BB_ROBOT_KERNEL=numpy``.  The collision guard
builds this path for every position command it checks (leader-follower teleop: 200 a second, on the
driver's executor thread).  In numpy each step costs a dozen calls on arrays of six values, and a
joint braking from its velocity limit takes a hundred steps or more: 65 % of the driver's time per
command on the SO-101 (py-spy, issue 39).  :func:`approach` takes the same steps with the same
floating-point operations in the same order, joint by joint, so the two paths give the same rows.

One signature, compiled (or loaded from numba's cache) at import.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bb_robot.model.compiled import compile_cached

_F1, _B1 = numba.float64[::1], numba.boolean[::1]
SIGNATURE = numba.float64[:, ::1](_F1, _F1, _F1, _F1, _F1, _B1, numba.float64, numba.intp, numba.intp)
#: Rows allocated at first (grown by doubling when a path needs more).
_FIRST_ROWS = 64


@numba.njit(inline="always", boundscheck=False)
def _braking_speed(distance: float, accel: float, finite: bool, dt: float) -> float:  # pragma: no cover - compiled
    """:func:`~bb_robot.driver.commands.limits.braking_speeds` for one joint."""
    if not math.isfinite(distance):
        return math.inf
    if not finite:
        return distance / dt
    step = accel * dt
    full = math.floor(math.sqrt(0.25 + 2.0 * distance / (step * dt)) - 0.5)
    remainder = distance - step * dt * full * (full + 1) / 2
    if remainder < 0:
        full = full - 1
        remainder = distance - step * dt * full * (full + 1) / 2
    return full * step + max(remainder, 0.0) / ((full + 1) * dt)


@numba.njit(inline="always", boundscheck=False)
def _appended(rows: np.ndarray, count: int, row: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``rows`` with ``row`` as its row ``count`` (a copy twice as large when it is full)."""
    if count == rows.shape[0]:
        grown = np.empty((2 * count, rows.shape[1]))
        grown[:count] = rows
        rows = grown
    rows[count] = row
    return rows


@numba.njit(cache=True, boundscheck=False)
def approach(
    positions: np.ndarray,
    velocities: np.ndarray,
    targets: np.ndarray,
    velocity_limits: np.ndarray,
    accelerations: np.ndarray,
    finite: np.ndarray,
    period: float,
    every: int,
    max_steps: int,
) -> np.ndarray:  # pragma: no cover - compiled
    """The rows of the approach path (the start, one row in ``every`` steps, the end).

    Args:
        positions: where the joints are.
        velocities: their velocities (already clipped to their limits, NaN as 0).
        targets: their targets.
        velocity_limits: their velocity limits.
        accelerations: their acceleration limits (1 where not ``finite``).
        finite: whether each has an acceleration limit.
        period: the step (s).
        every: keep one row in ``every`` steps.
        max_steps: stop after this many steps.
    """
    n = positions.shape[0]
    p = positions.copy()
    v = velocities.copy()
    rows = np.empty((_FIRST_ROWS, n))
    rows[0] = p
    count = 1
    for step in range(1, max_steps + 1):
        moving = False
        for j in range(n):
            if abs(targets[j] - p[j]) > 1e-9 or abs(v[j]) > 1e-9:
                moving = True
                break
        if not moving:
            break
        for j in range(n):
            error = targets[j] - p[j]
            distance = abs(error)
            approach_speed = min(distance / period, _braking_speed(distance, accelerations[j], finite[j], period))
            desired = min(max(math.copysign(approach_speed, error), -velocity_limits[j]), velocity_limits[j])
            change = accelerations[j] * period if finite[j] else math.inf
            v[j] = v[j] + min(max(desired - v[j], -change), change)
            p[j] = p[j] + v[j] * period
        if step % every == 0:
            rows = _appended(rows, count, p)
            count += 1
    for j in range(n):
        if rows[count - 1, j] != p[j]:  # the end, unless it is the last row kept
            rows = _appended(rows, count, p)
            count += 1
            break
    return rows[:count].copy()


compile_cached(approach, SIGNATURE, [__file__])

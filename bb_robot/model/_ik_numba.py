"""One attempt of :mod:`bb_robot.model.ik`'s solver, compiled by numba.

Imported only through :func:`bb_robot.model.compiled.kernels`, which falls back to the
numpy path of :mod:`bb_robot.model.ik` when numba is missing or fails.  :func:`attempt`
runs the damped least-squares (Levenberg-Marquardt) iterations of one start configuration,
with the joint limits as bounds, exactly as :func:`bb_robot.model.ik.numpy_attempt` does
with numpy; the forward pass and the Jacobian columns are :mod:`bb_robot.model._frames_numba`'s.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bb_robot.model._frames_numba import _decode, _scratch_frames, jacobian_at, one_decoded

# The damping of the first step, its bounds, and its factors after a step that did not or did lower the cost;
# the same constants as in bb_robot.model.ik.
_DAMPING, _DAMPING_MIN, _DAMPING_MAX, _UP, _DOWN = 1e-1, 1e-12, 1e3, 3.0, 0.4
_TURN = 2.0 * math.pi
# An attempt this many tolerances from the target at its last step is converging: it may take up to
# _LONGER times the steps (near a singular configuration convergence is slow, but it converges).
_NEAR, _LONGER = 100.0, 4
# A range this much short of a whole turn still counts as one (URDF limits such as ±3.14159); a
# value wrapped across it then lands at most this far outside and is clamped.
_TURN_SLACK = 1e-3
# The scratch floats of _pose_error: the tool rotation (9), the error rotation (9).
_SCRATCH = 18


@numba.njit(inline="always", boundscheck=False)
def _pose_error(
    code: np.ndarray,
    ints: np.ndarray,
    work: np.ndarray,
    frames: np.ndarray,
    q: np.ndarray,
    tip: int,
    target: np.ndarray,
    tool: np.ndarray,
    e: np.ndarray,
    point: np.ndarray,
    s: np.ndarray,
) -> tuple[float, float]:
    """The forward pass of ``q``, then the error twist ``e`` (target minus reached) and the tool point.

    Returns the position error (m) and the rotation error (rad, the angle of ``R_target^T R``).
    ``e`` is ``[p_target - p, log(R_target R^T)]`` in the root's frame.
    """
    one_decoded(code, ints, q, work, frames)
    f = frames[tip]
    for r in range(3):  # the tool pose: F · tool
        point[r] = f[4 * r] * tool[3] + f[4 * r + 1] * tool[7] + f[4 * r + 2] * tool[11] + f[4 * r + 3]
        for c in range(3):
            s[3 * r + c] = f[4 * r] * tool[c] + f[4 * r + 1] * tool[4 + c] + f[4 * r + 2] * tool[8 + c]
    for r in range(3):  # E = R_target · R^T
        for c in range(3):
            s[9 + 3 * r + c] = (
                target[4 * r] * s[3 * c] + target[4 * r + 1] * s[3 * c + 1] + target[4 * r + 2] * s[3 * c + 2]
            )
    for r in range(3):
        e[r] = target[4 * r + 3] - point[r]
    position = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    wx = 0.5 * (s[9 + 7] - s[9 + 5])
    wy = 0.5 * (s[9 + 2] - s[9 + 6])
    wz = 0.5 * (s[9 + 3] - s[9 + 1])
    sine = math.sqrt(wx * wx + wy * wy + wz * wz)
    cosine = 0.5 * (s[9] + s[9 + 4] + s[9 + 8] - 1.0)
    angle = math.atan2(sine, cosine)
    if sine > 1e-9:
        scale = angle / sine
        e[3] = wx * scale
        e[4] = wy * scale
        e[5] = wz * scale
    elif cosine > 0.0:  # no rotation error: the first-order term is exact
        e[3] = wx
        e[4] = wy
        e[5] = wz
    else:  # half a turn: the axis is the largest column of E + I
        best = 0
        for c in range(1, 3):
            if s[9 + 4 * c] > s[9 + 4 * best]:
                best = c
        ax = s[9 + best] + (1.0 if best == 0 else 0.0)
        ay = s[9 + 3 + best] + (1.0 if best == 1 else 0.0)
        az = s[9 + 6 + best] + (1.0 if best == 2 else 0.0)
        norm = math.sqrt(ax * ax + ay * ay + az * az)
        e[3] = angle * ax / norm
        e[4] = angle * ay / norm
        e[5] = angle * az / norm
    return position, angle


@numba.njit(inline="always", boundscheck=False)
def _cholesky_solve(m: np.ndarray, b: np.ndarray, free: np.ndarray, out: np.ndarray) -> bool:
    """Solve ``m · out = b`` over the free coordinates (``m`` positive definite, overwritten); others get 0."""
    n = b.shape[0]
    for i in range(n):
        if not free[i]:
            continue
        for j in range(i + 1):
            if not free[j]:
                continue
            total = m[i, j]
            for k in range(j):
                if free[k]:
                    total -= m[i, k] * m[j, k]
            if i == j:
                if total <= 0.0:
                    return False
                m[i, i] = math.sqrt(total)
            else:
                m[i, j] = total / m[j, j]
    for i in range(n):  # forward substitution: L · y = b
        if not free[i]:
            out[i] = 0.0
            continue
        total = b[i]
        for k in range(i):
            if free[k]:
                total -= m[i, k] * out[k]
        out[i] = total / m[i, i]
    for i in range(n - 1, -1, -1):  # back substitution: L^T · x = y
        if not free[i]:
            continue
        total = out[i]
        for k in range(i + 1, n):
            if free[k]:
                total -= m[k, i] * out[k]
        out[i] = total / m[i, i]
    return True


# Called only by solve, compiled into it (and cached with it): no cache of its own.
@numba.njit(boundscheck=False)
def attempt(
    code: np.ndarray,
    spec: np.ndarray,
    work: np.ndarray,
    q: np.ndarray,
    target: np.ndarray,
    tool: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    tolerances: np.ndarray,
    max_iterations: int,
    stats: np.ndarray,
) -> None:  # pragma: no cover - compiled; tested through bb_robot.model.ik
    """Run Levenberg-Marquardt iterations from ``q`` until the tolerances are met or it stalls.

    Args:
        code: The chain's packed program (:func:`bb_robot.model.compiled.program`).
        spec: Its Jacobian spec (:func:`bb_robot.model.compiled.jacobian_spec`); ``spec[0]`` is the tip frame.
        work: Scratch as :func:`bb_robot.model._frames_numba.one_configuration`'s.
        q: The start configuration, within ``lower``, ``upper``; overwritten by the best one reached.
        target: The target pose's first three rows, ``[R | t]`` row by row (12 values).
        tool: The tool offset from the tip frame, the same way.
        lower: Per joint the lowest value (``-inf`` for none).
        upper: Per joint the highest value.
        tolerances: The position tolerance (m) and the rotation tolerance (rad; negative: position only).
        max_iterations: At most this many steps (four times as many while within 100 tolerances of the target).
        stats: Written: position error, rotation error, steps taken, and 1.0 when within the tolerances.
    """
    n = q.shape[0]
    rows = 3 if tolerances[1] < 0.0 else 6
    tip = int(spec[0])
    frames = _scratch_frames(code, work)
    ints = _decode(code)
    s = np.empty(_SCRATCH)
    e = np.empty(6)
    trial_e = np.empty(6)
    point = np.empty(3)
    jac = np.empty((6, n))
    a = np.empty((n, n))
    m = np.empty((n, n))
    g = np.empty(n)
    dq = np.empty(n)
    trial = np.empty(n)
    free = np.empty(n, dtype=np.bool_)
    turns = np.empty(n, dtype=np.bool_)  # a revolute joint whose range spans a whole turn: it wraps
    for i in range(n):
        turns[i] = spec[2 + 2 * i] == 0.0 and upper[i] - lower[i] >= _TURN - _TURN_SLACK
    position, angle = _pose_error(code, ints, work, frames, q, tip, target, tool, e, point, s)
    jacobian_at(frames, spec, point[0], point[1], point[2], jac)
    cost = 0.0
    for r in range(rows):
        cost += e[r] * e[r]
    damping = _DAMPING
    fresh = True  # the normal equations are for the current q
    steps = 0
    while not (position <= tolerances[0] and (rows == 3 or angle <= tolerances[1])) and (
        steps < max_iterations
        or (  # within a hundred tolerances: converging, worth up to _LONGER times the steps
            steps < _LONGER * max_iterations
            and position < _NEAR * tolerances[0]
            and (rows == 3 or angle < _NEAR * tolerances[1])
        )
    ):
        steps += 1
        if fresh:
            for i in range(n):
                total = 0.0
                for r in range(rows):
                    total += jac[r, i] * e[r]
                g[i] = total
                for j in range(i + 1):
                    total = 0.0
                    for r in range(rows):
                        total += jac[r, i] * jac[r, j]
                    a[i, j] = total
                    a[j, i] = total
            fresh = False
        for i in range(n):
            free[i] = True
        solved = True
        for _ in range(2):  # a joint at a limit that the step pushes further out is held there
            for i in range(n):
                for j in range(n):
                    m[i, j] = a[i, j]
                m[i, i] += damping
            solved = _cholesky_solve(m, g, free, dq)
            held = False
            for i in range(n):
                if (
                    solved
                    and free[i]
                    and not turns[i]
                    and ((dq[i] > 0.0 and q[i] >= upper[i]) or (dq[i] < 0.0 and q[i] <= lower[i]))
                ):
                    free[i] = False
                    held = True
            if not held:
                break
        if not solved:  # rounding made the damped matrix indefinite: damp more
            damping *= _UP
            if damping > _DAMPING_MAX:
                break
            continue
        for i in range(n):
            x = q[i] + dq[i]
            if turns[i]:  # a whole turn back into the range: the same pose
                if x > upper[i]:
                    x -= _TURN * math.ceil((x - upper[i]) / _TURN)
                elif x < lower[i]:
                    x += _TURN * math.ceil((lower[i] - x) / _TURN)
            trial[i] = min(max(x, lower[i]), upper[i])
        trial_position, trial_angle = _pose_error(code, ints, work, frames, trial, tip, target, tool, trial_e, point, s)
        trial_cost = 0.0
        for r in range(rows):
            trial_cost += trial_e[r] * trial_e[r]
        if trial_cost < cost:
            for i in range(n):
                q[i] = trial[i]
            for r in range(6):
                e[r] = trial_e[r]
            cost, position, angle = trial_cost, trial_position, trial_angle
            jacobian_at(frames, spec, point[0], point[1], point[2], jac)
            fresh = True
            damping = max(damping * _DOWN, _DAMPING_MIN)
        else:
            damping *= _UP
            if damping > _DAMPING_MAX:
                break
    stats[0] = position
    stats[1] = angle
    stats[2] = steps
    stats[3] = 1.0 if position <= tolerances[0] and (rows == 3 or angle <= tolerances[1]) else 0.0


# Outcomes of solve(): the request was solved or not (see stats), or an input is refused (the Python checks say why).
_DONE, _BAD_TARGET, _BAD_SEED = 0, 1, 2


@numba.njit(cache=True, boundscheck=False)
def solve(
    code: np.ndarray,
    spec: np.ndarray,
    work: np.ndarray,
    target: np.ndarray,
    tool: np.ndarray,
    seed: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    tolerances: np.ndarray,
    max_iterations: int,
    randoms: np.ndarray,
    best: np.ndarray,
    stats: np.ndarray,
) -> int:  # pragma: no cover - compiled; tested through bb_robot.model.ik
    """Check a request, then run :func:`attempt` from the seed (``stats[4] == 0``) and from each restart.

    Args:
        code: As :func:`attempt`.
        spec: As :func:`attempt`; its prismatic flags also say which joints turn.
        work: As :func:`attempt`.
        target: The 4×4 target pose, C-contiguous.
        tool: As :func:`attempt`.
        seed: The seed; clipped onto the limits when it misses them by at most ``tolerances[2]``.
        lower: As :func:`attempt`.
        upper: As :func:`attempt`.
        tolerances: Position (m), rotation (rad; negative: position only), the seed's slack,
            the target's orthonormality tolerance and its last row's.
        max_iterations: Steps of one attempt.
        randoms: ``(k, n)`` uniform draws in [0, 1): restart ``r`` starts at ``low + randoms[r] · (high - low)``
            per joint, the range being the limits or, where unbounded, pi either side of the seed.
        best: The best configuration so far (written; read when ``stats[4] > 0``).
        stats: Read and written: position error, rotation error and score (the worst residual as a
            multiple of its tolerance) of ``best``, steps so far, attempts so far.

    Returns:
        0 when the attempts ran (``stats[2] <= 1`` when solved), 1 for a target that is not a finite
        rigid transform, 2 for a seed that is not finite or outside its limits.
    """
    n = seed.shape[0]
    for r in range(4):
        for c in range(4):
            if not math.isfinite(target[r, c]):
                return _BAD_TARGET
    if (
        abs(target[3, 0]) > tolerances[4]
        or abs(target[3, 1]) > tolerances[4]
        or abs(target[3, 2]) > tolerances[4]
        or abs(target[3, 3] - 1.0) > tolerances[4]
    ):
        return _BAD_TARGET
    for i in range(3):
        for j in range(3):
            dot = target[0, i] * target[0, j] + target[1, i] * target[1, j] + target[2, i] * target[2, j]
            if abs(dot - (1.0 if i == j else 0.0)) > tolerances[3]:
                return _BAD_TARGET
    determinant = (
        target[0, 0] * (target[1, 1] * target[2, 2] - target[1, 2] * target[2, 1])
        - target[0, 1] * (target[1, 0] * target[2, 2] - target[1, 2] * target[2, 0])
        + target[0, 2] * (target[1, 0] * target[2, 1] - target[1, 1] * target[2, 0])
    )
    if determinant < 0.0:
        return _BAD_TARGET
    start = np.empty(n)
    for i in range(n):
        x = seed[i]
        if not math.isfinite(x) or x < lower[i] - tolerances[2] or x > upper[i] + tolerances[2]:
            return _BAD_SEED
        start[i] = min(max(x, lower[i]), upper[i])
    flat = np.empty(12)
    for r in range(3):
        for c in range(4):
            flat[4 * r + c] = target[r, c]
    q = np.empty(n)
    attempt_stats = np.empty(4)
    rounds = randoms.shape[0] + (1 if stats[4] == 0.0 else 0)
    for k in range(rounds):
        if stats[4] == 0.0:
            for i in range(n):
                q[i] = start[i]
        else:
            row = randoms[k - rounds + randoms.shape[0]]
            for i in range(n):
                low = lower[i] if math.isfinite(lower[i]) else start[i] - math.pi
                high = upper[i] if math.isfinite(upper[i]) else start[i] + math.pi
                q[i] = low + row[i] * (high - low)
        attempt(code, spec, work, q, flat, tool, lower, upper, tolerances, max_iterations, attempt_stats)
        score = attempt_stats[0] / tolerances[0]
        if tolerances[1] >= 0.0:
            score = max(score, attempt_stats[1] / tolerances[1])
        stats[3] += attempt_stats[2]
        stats[4] += 1.0
        if stats[4] == 1.0 or score < stats[2]:
            stats[0] = attempt_stats[0]
            stats[1] = attempt_stats[1]
            stats[2] = score
            for i in range(n):
                best[i] = q[i]
        if score <= 1.0:
            break
    for i in range(n):  # an unbounded revolute joint: whole turns to within pi of the seed
        if spec[2 + 2 * i] == 0.0 and not math.isfinite(lower[i]) and not math.isfinite(upper[i]):
            delta = best[i] - start[i]
            best[i] = start[i] + (delta - 2.0 * math.pi * math.floor(delta / (2.0 * math.pi) + 0.5))
    return _DONE

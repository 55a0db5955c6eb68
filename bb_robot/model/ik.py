"""Inverse kinematics of a serial manipulator: ``SerialManipulator.inverse`` and ``inverse_many``.

``docs/ik.md`` describes the solver; in short:

Attempts
    One attempt is a damped least-squares (Levenberg-Marquardt) descent from a start
    configuration on the error twist ``[p_target - p, log(R_target R^T)]`` (world axes), each
    step clamped to the joint limits; a joint at a limit that the step pushes further out is
    held there and the step solved again without it.  The damping falls after a step that
    lowers the squared error and rises after one that does not; the attempt ends when the
    tolerances are met, after :data:`MAX_ITERATIONS` steps, or when the damping passes its bound
    (a local minimum, or a limit in the way).
Restarts
    The first attempt starts at the seed; each further one at a configuration drawn uniformly
    within the limits (an unbounded joint: within pi of the seed) by ``rng``, until one attempt
    succeeds, ``timeout`` has passed or ``max_restarts`` restarts were made.  The first solution
    is returned: the attempts begin at the seed, so a solution in its basin wins.
Limits
    Every configuration tried is within the (narrowed) limits, so the result is too, solved or
    not.  A continuous joint (no limits) comes back within pi of the seed.

The attempt runs compiled (:mod:`bb_robot.model._ik_numba`) when numba is available
(:func:`bb_robot.model.compiled.kernels`; an inverse-kinematics solve counts as a batch), else
with numpy (:func:`numpy_attempt`): the same iterations to rounding.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from bb_robot.model import compiled
from bb_robot.model.errors import InvalidIkArgument, InvalidIkSeed, InvalidIkTarget, InvalidTransform
from bb_robot.model.serial_chain import offset_matrix
from bb_robot.model.transforms import Matrix

#: The default time budget of one solve (s): TRAC-IK's.
DEFAULT_TIMEOUT: Final = 0.005
#: Steps of one attempt before a restart.
MAX_ITERATIONS: Final = 25
#: A seed this far outside a limit (rad or m) is clipped onto it; further out it is refused.
SEED_SLACK: Final = 1e-6
#: A target rotation R with ``|R^T R - I|`` above this (any entry) is refused.
ORTHONORMAL_TOLERANCE: Final = 1e-6
#: A target whose last row is further than this from 0 0 0 1 (any entry) is refused.
LAST_ROW_TOLERANCE: Final = 1e-9
# The damping constants (the same in bb_robot.model._ik_numba): first, lowest, highest, factors up and down.
_DAMPING, _DAMPING_MIN, _DAMPING_MAX, _UP, _DOWN = 1e-1, 1e-12, 1e3, 3.0, 0.4
# Attempts near the target go on (_NEAR tolerances); revolute ranges this short of a turn still wrap (as in _ik_numba).
_NEAR, _LONGER, _TURN_SLACK = 100.0, 4, 1e-3
_EYE3 = np.eye(3)
_NO_TOOL = np.eye(4)[:3].ravel()
_NO_TOOL.flags.writeable = False


@dataclass(frozen=True, eq=False)
class IkSolution:
    """The result of :meth:`SerialManipulator.inverse <bb_robot.model.serial.SerialManipulator.inverse>`.

    ``q`` is in ``joint_names`` order, within the limits whether or not ``success``;
    ``position_error`` (m) and ``rotation_error`` (rad, the angle of ``R_target^T R``) are
    the residuals of ``q``; ``iterations`` counts the steps of every attempt, ``restarts`` the
    attempts after the first; ``elapsed`` is the solve's time (s).
    """

    q: Matrix
    success: bool
    position_error: float
    rotation_error: float
    iterations: int
    restarts: int
    elapsed: float


@dataclass(frozen=True)
class Chain:
    """What the solver needs of a serial manipulator (built by ``SerialManipulator._ik_chain``)."""

    robot: str
    joint_names: tuple[str, ...]
    lower: Matrix
    upper: Matrix
    revolute: npt.NDArray[np.bool_]  # per joint: rotates (RZ), so that 2 pi is a full turn
    pose: Callable[[Matrix], Matrix]  # the tip frame's pose of q
    jacobian: Callable[[Matrix], Matrix]  # the tip frame's 6×n Jacobian of q
    program: Callable[[], compiled.Program]
    spec: Callable[[], Matrix]  # compiled.jacobian_spec of the tip


@dataclass(frozen=True)
class _Request:
    """One solve's checked inputs."""

    target: Matrix  # (12,): [R | t] row by row
    tool: Matrix  # (12,)
    seed: Matrix
    lower: Matrix
    upper: Matrix
    tolerances: Matrix  # (position, rotation or -1)


def inverse(
    chain: Chain,
    target: npt.ArrayLike,
    *,
    seed: npt.ArrayLike | None = None,
    offset: npt.ArrayLike | None = None,
    position_tolerance: float = 1e-5,
    rotation_tolerance: float | None = 1e-5,
    timeout: float | None = DEFAULT_TIMEOUT,
    max_restarts: int | None = None,
    rng: np.random.Generator | int | None = None,
    lower: npt.ArrayLike | None = None,
    upper: npt.ArrayLike | None = None,
) -> IkSolution:
    """Solve for a configuration whose end-effector pose is ``target``; arguments as ``SerialManipulator.inverse``.

    Raises:
        InvalidIkTarget: ``target`` is not a finite 4×4 rigid transform (rotation orthonormal
            within :data:`ORTHONORMAL_TOLERANCE`, determinant +1, last row 0 0 0 1).
        InvalidIkSeed: ``seed`` has the wrong length, a non-finite value, or a value more than
            :data:`SEED_SLACK` outside the (narrowed) limits.
        InvalidIkArgument: the limits, tolerances, timeout, restarts or ``rng`` cannot be used.
        InvalidTransform: ``offset`` is not a 4×4 transform nor a point.
    """
    kernels = _ready_kernels(chain)  # before the clock starts: loading compiled code is not the solve's time
    start = time.perf_counter()
    low, high = narrowed_limits(chain, lower, upper)
    tolerances = _tolerances(chain.robot, position_tolerance, rotation_tolerance)
    _budget(chain.robot, timeout, max_restarts)
    checked = checked_rng(chain.robot, rng)
    deadline = math.inf if timeout is None else start + timeout
    if kernels is None:
        request = _Request(
            target=_target(chain.robot, target),
            tool=_tool(chain.robot, offset),
            seed=checked_seed(chain, seed, low, high),
            lower=low,
            upper=high,
            tolerances=tolerances,
        )
        return _numpy_solve(chain, request, start, deadline, max_restarts, checked)
    return _compiled_solve(
        chain,
        kernels,
        target,
        seed,
        _tool(chain.robot, offset),
        (low, high, tolerances),
        start,
        deadline,
        max_restarts,
        checked,
    )


def inverse_many(
    chain: Chain,
    targets: npt.ArrayLike,
    seeds: npt.ArrayLike | None = None,
    *,
    rng: np.random.Generator | int | None = None,
    **options: object,
) -> list[IkSolution]:
    """Solve each of ``targets`` ``(B, 4, 4)``; ``seeds`` is ``None``, one ``(n,)`` or ``(B, n)``.

    One random generator (from ``rng``) serves every solve in turn; other options as :func:`inverse`,
    each solve with its own ``timeout``.  Raises as :func:`inverse`.
    """
    try:
        poses = np.asarray(targets, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidIkTarget(chain.robot, f"is not an array of numbers ({error})") from None
    if poses.ndim != 3 or poses.shape[1:] != (4, 4):
        raise InvalidIkTarget(chain.robot, f"batch has shape {poses.shape}, not (B, 4, 4)")
    starts: list[npt.ArrayLike | None] = [None] * len(poses)
    if seeds is not None:
        array = np.asarray(seeds, dtype=float)
        if array.ndim == 1:
            starts = [array] * len(poses)
        elif array.ndim == 2 and array.shape[0] == len(poses):
            starts = list(array)
        else:
            raise InvalidIkSeed(chain.robot, f"batch has shape {array.shape}, not ({len(poses)}, {len(chain.lower)})")
    checked = checked_rng(chain.robot, rng)
    random = checked if isinstance(checked, np.random.Generator) else np.random.default_rng(checked)
    return [inverse(chain, pose, seed=start, rng=random, **options) for pose, start in zip(poses, starts, strict=True)]  # type: ignore[arg-type]


# ------------------------------------------------------------------------ the search
_warm: list[bool] = []  # set once the compiled solver has run in this process


def _ready_kernels(chain: Chain) -> compiled.Kernels | None:
    """The compiled kernels (``None``: the numpy path), loaded and run once first.

    A solve is hundreds of forward passes: worth numba even where one configuration stays in
    Python (``batch`` mode).  The first call in a process loads the compiled solver from numba's
    cache (or compiles it): a tiny solve of the chain's zero-iteration attempt does it here.
    """
    kernels = compiled.kernels(compiled.MIN_BATCH)
    if kernels is not None and not _warm:
        prog, n = chain.program(), len(chain.joint_names)
        seed = default_seed(chain.lower, chain.upper)
        tolerances = np.array([1.0, 1.0, SEED_SLACK, ORTHONORMAL_TOLERANCE, LAST_ROW_TOLERANCE])
        pose = np.eye(4)
        empty = np.empty((0, n))
        work = np.empty_like(prog.work)
        _ik_solve(
            kernels,
            prog.code,
            chain.spec(),
            work,
            pose,
            _NO_TOOL,
            seed,
            chain.lower,
            chain.upper,
            tolerances,
            0,
            empty,
            np.empty(n),
            np.zeros(5),
        )
        _warm.append(True)
    return kernels


def _read_only(array: Matrix) -> Matrix:
    """A read-only view of ``array`` (no copy)."""
    view = array.view()
    view.flags.writeable = False
    return view


def _ik_solve(
    kernels: compiled.Kernels,
    code: Matrix,
    spec: Matrix,
    work: Matrix,
    pose: Matrix,
    tool: Matrix,
    seed: Matrix,
    low: Matrix,
    high: Matrix,
    tolerances: Matrix,
    iterations: int,
    randoms: Matrix,
    best: Matrix,
    stats: Matrix,
) -> int:
    """:func:`bb_robot.model._ik_numba.solve` with the arrays it only reads passed read-only.

    numba compiles one specialisation per argument type, and a read-only array (a chain's limits,
    a frozen pose) is another type than a writable one: passing every input read-only keeps the
    one signature ``bb-robot kernels`` compiles at install, whatever the caller passes.
    """
    return int(
        kernels.ik_solve(
            code,
            spec,
            work,
            _read_only(pose),
            _read_only(tool),
            _read_only(seed),
            _read_only(low),
            _read_only(high),
            _read_only(tolerances),
            iterations,
            randoms,
            best,
            stats,
        )
    )


#: Restarts drawn and run per call of the compiled solver, between looks at the clock.
RESTART_BLOCK: Final = 8


def _compiled_solve(
    chain: Chain,
    kernels: compiled.Kernels,
    target: npt.ArrayLike,
    seed: npt.ArrayLike | None,
    tool: Matrix,
    limits: tuple[Matrix, Matrix, Matrix],
    start: float,
    deadline: float,
    max_restarts: int | None,
    rng: np.random.Generator | int | None,
) -> IkSolution:
    """The search by :func:`bb_robot.model._ik_numba.solve`, which checks the target and seed too
    (the Python checks then say what is wrong)."""
    low, high, tolerances = limits
    n = len(chain.joint_names)
    try:
        pose = np.ascontiguousarray(target, dtype=float)
        start_q = default_seed(low, high) if seed is None else np.ascontiguousarray(seed, dtype=float)
    except (TypeError, ValueError):
        pose = start_q = np.zeros(0)  # the checks below say why
    if pose.shape != (4, 4):
        _target(chain.robot, target)
    if start_q.shape != (n,):
        checked_seed(chain, seed, low, high)
    prog = chain.program()
    spec = chain.spec()
    work = np.empty_like(prog.work)
    best = np.empty(n)
    stats = np.zeros(5)  # position error, rotation error, score, steps, attempts
    randoms = np.empty((0, n))
    random: np.random.Generator | None = None  # made at the first restart: fresh entropy costs a system call
    while True:
        status = _ik_solve(
            kernels,
            prog.code,
            spec,
            work,
            pose,
            tool,
            start_q,
            low,
            high,
            tolerances,
            MAX_ITERATIONS,
            randoms,
            best,
            stats,
        )
        if status == 1:
            _target(chain.robot, pose)  # raises, saying why
            raise InvalidIkTarget(chain.robot, "is not a rigid transform")
        if status == 2:
            checked_seed(chain, start_q, low, high)  # raises, saying why
            raise InvalidIkSeed(chain.robot, "is outside the limits")
        restarts = int(stats[4]) - 1
        left = RESTART_BLOCK if max_restarts is None else min(RESTART_BLOCK, max_restarts - restarts)
        if stats[2] <= 1.0 or left <= 0 or time.perf_counter() >= deadline:
            break
        if random is None:
            random = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        randoms = random.random((left, n))
    return IkSolution(
        q=best,
        success=bool(stats[2] <= 1.0),
        position_error=float(stats[0]),
        rotation_error=float(stats[1]),
        iterations=int(stats[3]),
        restarts=restarts,
        elapsed=time.perf_counter() - start,
    )


def _numpy_solve(
    chain: Chain,
    request: _Request,
    start: float,
    deadline: float,
    max_restarts: int | None,
    rng: np.random.Generator | int | None,
) -> IkSolution:
    """The search with numpy: the seed, then restarts drawn as the compiled solver draws them."""
    best_q, best = request.seed.copy(), (math.inf, math.inf, math.inf)
    iterations, restarts = 0, 0
    q = request.seed.copy()
    random: np.random.Generator | None = None
    while True:
        stats = numpy_attempt(chain, q, request, deadline)
        iterations += int(stats[2])
        score = _score(stats, request.tolerances)
        if score < best[0]:
            best_q, best = q.copy(), (score, float(stats[0]), float(stats[1]))
        if stats[3] or (max_restarts is not None and restarts >= max_restarts) or time.perf_counter() >= deadline:
            break
        restarts += 1
        if random is None:
            random = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
            span_low, span_high = _restart_ranges(request)
        q = span_low + random.random(len(q)) * (span_high - span_low)
    return IkSolution(
        q=_wrapped(chain, best_q, request),
        success=best[0] <= 1.0,
        position_error=best[1],
        rotation_error=best[2],
        iterations=iterations,
        restarts=restarts,
        elapsed=time.perf_counter() - start,
    )


def _score(stats: tuple[float, float, int, float], tolerances: Matrix) -> float:
    """The worst residual as a multiple of its tolerance: at most 1 when solved."""
    position = float(stats[0]) / float(tolerances[0])
    return position if tolerances[1] < 0.0 else max(position, float(stats[1]) / float(tolerances[1]))


def _restart_ranges(request: _Request) -> tuple[Matrix, Matrix]:
    """Where restarts are drawn: within the limits; a joint unbounded on a side, within pi of the seed there."""
    low = np.where(np.isfinite(request.lower), request.lower, request.seed - math.pi)
    high = np.where(np.isfinite(request.upper), request.upper, request.seed + math.pi)
    return low, high


def _wrapped(chain: Chain, q: Matrix, request: _Request) -> Matrix:
    """``q`` with each unbounded revolute joint turned by whole turns to within pi of the seed, then clipped."""
    free = chain.revolute & np.isinf(request.lower) & np.isinf(request.upper)
    if free.any():
        delta = q[free] - request.seed[free]
        q = q.copy()
        q[free] = request.seed[free] + (delta - 2.0 * math.pi * np.round(delta / (2.0 * math.pi)))
    result: Matrix = np.minimum(np.maximum(q, request.lower), request.upper)
    return result


def numpy_attempt(chain: Chain, q: Matrix, request: _Request, deadline: float) -> tuple[float, float, int, float]:
    """One attempt with numpy, as :func:`bb_robot.model._ik_numba.attempt`; ``q`` is overwritten by the best reached.

    Also stops at ``deadline`` (a :func:`time.perf_counter` value).  Returns the position error,
    the rotation error, the steps taken and 1.0 when within the tolerances (else 0.0).
    """
    rows = 3 if request.tolerances[1] < 0.0 else 6
    tol_p, tol_r = float(request.tolerances[0]), float(request.tolerances[1])

    def solved(position: float, angle: float) -> bool:
        return position <= tol_p and (rows == 3 or angle <= tol_r)

    def more(steps: int, position: float, angle: float) -> bool:  # as _ik_numba.attempt: converging, go on
        near = position < _NEAR * tol_p and (rows == 3 or angle < _NEAR * tol_r)
        return steps < MAX_ITERATIONS or (steps < _LONGER * MAX_ITERATIONS and near)

    e, position, angle, jac = _numpy_error(chain, q, request, jacobian=True)
    cost = float(e[:rows] @ e[:rows])
    damping, steps, fresh = _DAMPING, 0, True
    a = g = np.zeros(0)
    n = len(q)
    span = request.upper - request.lower
    turns = chain.revolute & (span >= 2.0 * math.pi - _TURN_SLACK)  # these wrap by whole turns
    while not solved(position, angle) and more(steps, position, angle) and time.perf_counter() < deadline:
        steps += 1
        if fresh:
            a, g = jac[:rows].T @ jac[:rows], jac[:rows].T @ e[:rows]
            fresh = False
        free = np.ones(n, dtype=bool)
        dq = np.zeros(n)
        for _ in range(2):  # a joint at a limit that the step pushes further out is held there
            sub = a[np.ix_(free, free)] + damping * np.eye(int(free.sum()))
            dq[:] = 0.0
            dq[free] = np.linalg.solve(sub, g[free])
            held = free & ~turns & (((dq > 0.0) & (q >= request.upper)) | ((dq < 0.0) & (q <= request.lower)))
            if not held.any():
                break
            free &= ~held
        trial = q + dq
        if turns.any():  # a whole turn back into the range: the same pose
            over = turns & (trial > request.upper)
            under = turns & (trial < request.lower)
            trial[over] -= 2.0 * math.pi * np.ceil((trial[over] - request.upper[over]) / (2.0 * math.pi))
            trial[under] += 2.0 * math.pi * np.ceil((request.lower[under] - trial[under]) / (2.0 * math.pi))
        trial = np.minimum(np.maximum(trial, request.lower), request.upper)
        trial_e, trial_position, trial_angle, _ = _numpy_error(chain, trial, request, jacobian=False)
        trial_cost = float(trial_e[:rows] @ trial_e[:rows])
        if trial_cost < cost:
            q[:] = trial
            e, cost, position, angle = trial_e, trial_cost, trial_position, trial_angle
            jac = _numpy_error(chain, q, request, jacobian=True)[3]
            fresh = True
            damping = max(damping * _DOWN, _DAMPING_MIN)
        else:
            damping *= _UP
            if damping > _DAMPING_MAX:
                break
    return position, angle, steps, 1.0 if solved(position, angle) else 0.0


def _numpy_error(chain: Chain, q: Matrix, request: _Request, *, jacobian: bool) -> tuple[Matrix, float, float, Matrix]:
    """The error twist of ``q``, its position and rotation errors, and the tool point's Jacobian (if asked)."""
    frame = chain.pose(q)
    tool = request.tool.reshape(3, 4)
    rotation = frame[:3, :3] @ tool[:, :3]
    point = frame[:3, :3] @ tool[:, 3] + frame[:3, 3]
    target = request.target.reshape(3, 4)
    e = np.empty(6)
    e[:3] = target[:, 3] - point
    e[3:], angle = rotation_log(target[:, :3] @ rotation.T)
    jac = np.zeros((6, len(q)))
    if jacobian:
        jac = chain.jacobian(q).copy()
        r = point - frame[:3, 3]  # the tool point's velocity: v + ω × r
        jac[:3] += np.cross(jac[3:].T, r).T
    return e, float(np.linalg.norm(e[:3])), angle, jac


def rotation_log(rotation: Matrix) -> tuple[Matrix, float]:
    """The rotation vector (axis times angle) of a rotation matrix, and its angle in [0, pi]."""
    w = 0.5 * np.array(
        [rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0], rotation[1, 0] - rotation[0, 1]]
    )
    sine = float(np.linalg.norm(w))
    cosine = 0.5 * (float(np.trace(rotation)) - 1.0)
    angle = math.atan2(sine, cosine)
    if sine > 1e-9:
        return w * (angle / sine), angle
    if cosine > 0.0:
        return w, angle
    best = int(np.argmax(np.diag(rotation)))  # half a turn: the axis is the largest column of R + I
    axis = rotation[:, best] + np.eye(3)[best]
    return axis * (angle / float(np.linalg.norm(axis))), angle


# ------------------------------------------------------------------------ checks
def _target(robot: str, target: npt.ArrayLike) -> Matrix:
    try:
        pose = np.array(target, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidIkTarget(robot, f"is not an array of numbers ({error})") from None
    if pose.shape != (4, 4):
        raise InvalidIkTarget(robot, f"has shape {pose.shape}, not (4, 4)")
    if not np.isfinite(pose).all():
        raise InvalidIkTarget(robot, f"has non-finite entries: {pose.tolist()}")
    if np.abs(pose[3] - (0.0, 0.0, 0.0, 1.0)).max() > LAST_ROW_TOLERANCE:
        raise InvalidIkTarget(robot, f"has last row {pose[3].tolist()}, not [0, 0, 0, 1]")
    rotation = pose[:3, :3]
    deviation = float(np.abs(rotation.T @ rotation - _EYE3).max())
    (a, b, c), (d, e, f), (g, h, i) = rotation.tolist()
    determinant = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if deviation > ORTHONORMAL_TOLERANCE or determinant < 0.0:
        raise InvalidIkTarget(
            robot,
            f"rotation is not a rotation: |R^T R - I| = {deviation:.3g} (at most {ORTHONORMAL_TOLERANCE:g}), "
            f"det R = {determinant:.6g} (must be +1)",
        )
    return np.ascontiguousarray(pose[:3]).ravel()


def _tool(robot: str, offset: npt.ArrayLike | None) -> Matrix:
    if offset is None:
        return _NO_TOOL
    matrix = offset_matrix(robot, offset)
    rotation = matrix[:3, :3]
    if not np.allclose(rotation.T @ rotation, np.eye(3), atol=ORTHONORMAL_TOLERANCE) or np.linalg.det(rotation) < 0:
        raise InvalidTransform(robot, "offset", "is not a rigid transform")
    return np.ascontiguousarray(matrix[:3]).ravel()


def _vector(chain: Chain, argument: str, values: npt.ArrayLike) -> Matrix:
    """``values`` as a float vector of the chain's length (:class:`InvalidIkArgument` otherwise)."""
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidIkArgument(chain.robot, argument, f"is not an array of numbers ({error})") from None
    if array.shape != (len(chain.joint_names),):
        raise InvalidIkArgument(
            chain.robot, argument, f"has shape {array.shape}, not ({len(chain.joint_names)},): one value per joint"
        )
    if np.isnan(array).any():
        raise InvalidIkArgument(chain.robot, argument, f"has NaN for joint(s) {_names(chain, np.isnan(array))}")
    return array


def _names(chain: Chain, mask: npt.NDArray[np.bool_]) -> str:
    return ", ".join(f"'{chain.joint_names[i]}'" for i in np.flatnonzero(mask))


def narrowed_limits(chain: Chain, lower: npt.ArrayLike | None, upper: npt.ArrayLike | None) -> tuple[Matrix, Matrix]:
    """The chain's limits narrowed by ``lower`` and ``upper`` (each ``None`` or one value per joint).

    Raises :class:`InvalidIkArgument` for a wrong shape, NaN, or a joint whose range becomes empty.
    """
    low = chain.lower if lower is None else np.maximum(chain.lower, _vector(chain, "lower", lower))
    high = chain.upper if upper is None else np.minimum(chain.upper, _vector(chain, "upper", upper))
    empty = low > high
    if empty.any():
        details = ", ".join(f"'{chain.joint_names[i]}' [{low[i]:g}, {high[i]:g}]" for i in np.flatnonzero(empty))
        raise InvalidIkArgument(chain.robot, "lower/upper", f"leaves no value for joint(s) {details}")
    return np.ascontiguousarray(low, dtype=float), np.ascontiguousarray(high, dtype=float)


def default_seed(lower: Matrix, upper: Matrix) -> Matrix:
    """The middle of each joint's range; 0 (clipped into the range) where a side is unbounded."""
    bounded = np.isfinite(lower) & np.isfinite(upper)
    middle = np.zeros(len(lower))
    middle[bounded] = 0.5 * (lower[bounded] + upper[bounded])
    result: Matrix = np.clip(middle, lower, upper)
    return result


def checked_seed(chain: Chain, seed: npt.ArrayLike | None, lower: Matrix, upper: Matrix) -> Matrix:
    """The seed (default :func:`default_seed`), clipped onto limits it misses by at most :data:`SEED_SLACK`.

    Raises :class:`InvalidIkSeed` for a wrong length, a non-finite value or a value further out.
    """
    if seed is None:
        return default_seed(lower, upper)
    try:
        q = np.array(seed, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidIkSeed(chain.robot, f"is not an array of numbers ({error})") from None
    n = len(chain.joint_names)
    if q.shape != (n,):
        raise InvalidIkSeed(chain.robot, f"has shape {q.shape}, not ({n},): one value per joint of {chain.joint_names}")
    if not np.isfinite(q).all():
        raise InvalidIkSeed(chain.robot, f"has non-finite values for joint(s) {_names(chain, ~np.isfinite(q))}")
    outside = (q < lower - SEED_SLACK) | (q > upper + SEED_SLACK)
    if outside.any():
        details = ", ".join(
            f"'{chain.joint_names[i]}' = {q[i]:g} not in [{lower[i]:g}, {upper[i]:g}]" for i in np.flatnonzero(outside)
        )
        raise InvalidIkSeed(chain.robot, f"is outside the limits by more than {SEED_SLACK:g}: {details}")
    result: Matrix = np.minimum(np.maximum(q, lower), upper)
    return result


def _tolerances(robot: str, position: float, rotation: float | None) -> Matrix:
    for name, value in (("position_tolerance", position), ("rotation_tolerance", rotation)):
        if value is None and name == "rotation_tolerance":
            continue
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0.0:
            raise InvalidIkArgument(robot, name, f"is {value!r}; pass a positive finite number")
    rotation_value = -1.0 if rotation is None else float(rotation)
    return np.array([float(position), rotation_value, SEED_SLACK, ORTHONORMAL_TOLERANCE, LAST_ROW_TOLERANCE])


def _budget(robot: str, timeout: float | None, max_restarts: int | None) -> None:
    if timeout is not None and (not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0):
        raise InvalidIkArgument(robot, "timeout", f"is {timeout!r}; pass a positive number of seconds or None")
    if max_restarts is not None and (not isinstance(max_restarts, int) or max_restarts < 0):
        raise InvalidIkArgument(robot, "max_restarts", f"is {max_restarts!r}; pass a whole number >= 0 or None")
    if timeout is None and max_restarts is None:
        raise InvalidIkArgument(robot, "timeout", "and max_restarts are both None: the search would never end")


def checked_rng(robot: str, rng: np.random.Generator | int | None) -> np.random.Generator | int | None:
    """``rng`` when it is a :class:`numpy.random.Generator`, an int >= 0 (a seed) or ``None`` (fresh entropy)."""
    if rng is None or isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return int(rng)
    raise InvalidIkArgument(robot, "rng", f"is {rng!r}; pass a numpy.random.Generator, an int >= 0 or None")


__all__: Sequence[str] = ["DEFAULT_TIMEOUT", "IkSolution", "inverse", "inverse_many"]

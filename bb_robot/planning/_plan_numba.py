"""The planner's broad phase, compiled by numba: sphere trees against obstacles and each other, along an edge.

Imported only by :func:`bb_robot.planning.validity.edge_kernel` (``bb-robot kernels`` compiles it
at install).  :func:`check_edge` samples the straight joint-space segment ``q0 → q1`` so that no
link moves more than ``resolution`` metres between two samples (the motion bound of
:class:`bb_robot.collision.path.MotionBound`), and at each sample places the robot's sphere trees
by the forward kinematics (:mod:`bb_robot.model._frames_numba`'s pass) and tests every checked
pair hierarchically: a tree node is opened only when its sphere, grown by the clearance and by
half the pair's approach per step, reaches the obstacle (box, sphere, cylinder, half-space) or the
other tree's node.  A sample is *clear* when no pair of leaves reaches: then, since each point of a
link is within half a step's motion of its place at the nearer sample, the whole interval half a
step to each side of it is clear by the clearance.  Otherwise it is *maybe*, for the exact model
to decide.

One signature, compiled (or loaded from numba's cache) at import; the model's arrays are read-only.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bb_robot.model import _frames_numba
from bb_robot.model._frames_numba import _decode, _scratch_frames, one_decoded
from bb_robot.model.compiled import compile_cached

_BOX, _SPHERE, _CYLINDER, _HALFSPACE = 0, 1, 2, 3
#: Pairs of nodes waiting in a traversal (a tree of depth d needs at most 2·d per side; generous).
_STACK = 256

_R1 = numba.types.Array(numba.float64, 1, "C", readonly=True)
_R2 = numba.types.Array(numba.float64, 2, "C", readonly=True)
_R3 = numba.types.Array(numba.float64, 3, "C", readonly=True)
_RI1 = numba.types.Array(numba.intp, 1, "C", readonly=True)
_RI2 = numba.types.Array(numba.intp, 2, "C", readonly=True)
_W1 = numba.float64[::1]
SIGNATURE = numba.intp(
    _R1, _W1, _W1, _W1, numba.float64, numba.float64, _R2, _R1, _RI2, _RI1, _RI1, _RI1, _R3, _R2, _R2, _RI2, _R2,
    numba.intp, numba.uint8[::1], _W1, numba.intp[::1],
)  # fmt: skip
NEAR_SIGNATURE = numba.intp(
    _R1, _W1, _W1, numba.float64, _R2, _R1, _RI2, _RI1, _RI1, _RI1, _R3, _R2, _R2, _RI2, _W1, numba.intp[::1],
    numba.float64[:, ::1],
)  # fmt: skip


@numba.njit(inline="always", boundscheck=False)
def _obstacle_gap(kind: int, pose: np.ndarray, dims: np.ndarray, x: float, y: float, z: float) -> float:
    """The distance from point ``(x, y, z)`` (root frame) to an obstacle (0 inside; signed for a half-space)."""
    if kind == _HALFSPACE:
        return float(dims[0] * x + dims[1] * y + dims[2] * z - dims[3])
    dx, dy, dz = x - pose[0, 3], y - pose[1, 3], z - pose[2, 3]
    if kind == _SPHERE:
        return float(math.sqrt(dx * dx + dy * dy + dz * dz) - dims[0])
    # the point in the obstacle's frame: R^T d
    lx = pose[0, 0] * dx + pose[1, 0] * dy + pose[2, 0] * dz
    ly = pose[0, 1] * dx + pose[1, 1] * dy + pose[2, 1] * dz
    lz = pose[0, 2] * dx + pose[1, 2] * dy + pose[2, 2] * dz
    if kind == _CYLINDER:
        radial = max(math.sqrt(lx * lx + ly * ly) - dims[0], 0.0)
        axial = max(abs(lz) - dims[1], 0.0)
        return math.sqrt(radial * radial + axial * axial)
    ox = max(abs(lx) - dims[0], 0.0)
    oy = max(abs(ly) - dims[1], 0.0)
    oz = max(abs(lz) - dims[2], 0.0)
    return math.sqrt(ox * ox + oy * oy + oz * oz)


@numba.njit(inline="always", boundscheck=False)
def _place(frames: np.ndarray, frame: int, center: np.ndarray, out: np.ndarray) -> None:
    f = frames[frame]
    for r in range(3):
        out[r] = f[4 * r] * center[0] + f[4 * r + 1] * center[1] + f[4 * r + 2] * center[2] + f[4 * r + 3]


@numba.njit(inline="always", boundscheck=False)
def _tree_meets_obstacle(
    frames: np.ndarray,
    frame: int,
    root: int,
    grow: float,
    node_center: np.ndarray,
    node_radius: np.ndarray,
    node_child: np.ndarray,
    kind: int,
    pose: np.ndarray,
    dims: np.ndarray,
    stack: np.ndarray,
    point: np.ndarray,
) -> bool:
    """Whether some leaf of a tree, grown by ``grow``, reaches an obstacle."""
    top = 0
    stack[0] = root
    while top >= 0:
        node = stack[top]
        top -= 1
        _place(frames, frame, node_center[node], point)
        if _obstacle_gap(kind, pose, dims, point[0], point[1], point[2]) > node_radius[node] + grow:
            continue
        if node_child[node, 0] < 0:
            return True
        if top + 2 >= stack.shape[0]:
            return True  # deeper than the stack: undecided, so not clear
        stack[top + 1] = node_child[node, 1]
        stack[top + 2] = node_child[node, 0]
        top += 2
    return False


@numba.njit(inline="always", boundscheck=False)
def _trees_meet(
    frames: np.ndarray,
    frame_a: int,
    root_a: int,
    frame_b: int,
    root_b: int,
    grow: float,
    node_center: np.ndarray,
    node_radius: np.ndarray,
    node_child: np.ndarray,
    stack: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
) -> bool:
    """Whether some leaf of tree a and some leaf of tree b come within ``grow`` of each other."""
    top = 0
    stack[0, 0] = root_a
    stack[0, 1] = root_b
    while top >= 0:
        a = stack[top, 0]
        b = stack[top, 1]
        top -= 1
        _place(frames, frame_a, node_center[a], pa)
        _place(frames, frame_b, node_center[b], pb)
        dx, dy, dz = pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]
        reach = node_radius[a] + node_radius[b] + grow
        if dx * dx + dy * dy + dz * dz > reach * reach:
            continue
        leaf_a = node_child[a, 0] < 0
        leaf_b = node_child[b, 0] < 0
        if leaf_a and leaf_b:
            return True
        if top + 2 >= stack.shape[0]:
            return True
        if leaf_b or (not leaf_a and node_radius[a] >= node_radius[b]):
            stack[top + 1, 0] = node_child[a, 1]
            stack[top + 1, 1] = b
            stack[top + 2, 0] = node_child[a, 0]
            stack[top + 2, 1] = b
        else:
            stack[top + 1, 0] = a
            stack[top + 1, 1] = node_child[b, 1]
            stack[top + 2, 0] = a
            stack[top + 2, 1] = node_child[b, 0]
        top += 2
    return False


@numba.njit(inline="always", boundscheck=False)
def _hits(
    frames: np.ndarray,
    grow: np.ndarray,
    clearance: float,
    node_center: np.ndarray,
    node_radius: np.ndarray,
    node_child: np.ndarray,
    part_root: np.ndarray,
    part_frame: np.ndarray,
    obstacle_kind: np.ndarray,
    obstacle_pose: np.ndarray,
    obstacle_sphere: np.ndarray,
    obstacle_dims: np.ndarray,
    pairs: np.ndarray,
    roots: np.ndarray,
    stack1: np.ndarray,
    stack2: np.ndarray,
    out: np.ndarray,
    first_only: bool,
) -> int:
    """The pairs (indices) whose trees, grown by ``grow[k] + clearance``, meet at the placed ``frames``.

    Each part's root sphere is placed once (``roots``, written) and tested first against the
    obstacle's bounding sphere or the other part's root: most pairs end there.
    """
    pa = np.empty(3)
    pb = np.empty(3)
    for p in range(part_root.shape[0]):
        _place(frames, part_frame[p], node_center[part_root[p]], roots[p])
    count = 0
    for k in range(pairs.shape[0]):
        a = pairs[k, 0]
        b = pairs[k, 1]
        reach = node_radius[part_root[a]] + grow[k] + clearance
        if pairs[k, 2] == 1:
            dx = roots[a, 0] - obstacle_sphere[b, 0]
            dy = roots[a, 1] - obstacle_sphere[b, 1]
            dz = roots[a, 2] - obstacle_sphere[b, 2]
            limit = reach + obstacle_sphere[b, 3]
            if dx * dx + dy * dy + dz * dz > limit * limit:
                continue
            meets = _tree_meets_obstacle(
                frames, part_frame[a], part_root[a], grow[k] + clearance, node_center, node_radius, node_child,
                obstacle_kind[b], obstacle_pose[b], obstacle_dims[b], stack1, pa,
            )  # fmt: skip
        else:
            dx = roots[a, 0] - roots[b, 0]
            dy = roots[a, 1] - roots[b, 1]
            dz = roots[a, 2] - roots[b, 2]
            limit = reach + node_radius[part_root[b]]
            if dx * dx + dy * dy + dz * dz > limit * limit:
                continue
            meets = _trees_meet(
                frames, part_frame[a], part_root[a], part_frame[b], part_root[b], grow[k] + clearance,
                node_center, node_radius, node_child, stack2, pa, pb,
            )  # fmt: skip
        if meets:
            out[count] = k
            count += 1
            if first_only:
                return count
    return count


@numba.njit(inline="always", boundscheck=False)
def _order(steps: int, out: np.ndarray) -> None:
    """Samples ``0 .. steps`` coarse to fine: both ends, then the middle, then the middles of the halves."""
    out[0] = 0
    if steps == 0:
        return
    out[1] = steps
    count = 2
    stride = 1
    while stride * 2 <= steps:
        stride *= 2
    while stride >= 1:
        i = stride
        while i < steps:
            if (i // stride) % 2 == 1:
                out[count] = i
                count += 1
            i += stride
        stride //= 2


@numba.njit(cache=True, nogil=True, boundscheck=False)
def check_edge(
    code: np.ndarray,
    work: np.ndarray,
    q0: np.ndarray,
    q1: np.ndarray,
    resolution: float,
    clearance: float,
    node_center: np.ndarray,
    node_radius: np.ndarray,
    node_child: np.ndarray,
    part_root: np.ndarray,
    part_frame: np.ndarray,
    obstacle_kind: np.ndarray,
    obstacle_pose: np.ndarray,
    obstacle_sphere: np.ndarray,
    obstacle_dims: np.ndarray,
    pairs: np.ndarray,
    pair_reach: np.ndarray,
    begin: int,
    flags: np.ndarray,
    grow: np.ndarray,
    info: np.ndarray,
) -> int:  # pragma: no cover - compiled; its verdicts are tested in test/planning/test_validity.py
    """Flag the samples of ``q0 → q1`` clear (0) or maybe (1), coarse to fine; stop at a maybe one.

    Args:
        code: the model's forward-kinematics program (``ForwardKinematics.program().code``).
        work: its scratch (writable, one caller at a time).
        q0, q1: full configurations (C-contiguous, the FK's arity).
        resolution: the most any pair may approach between two samples (m, > 0).
        clearance: every sphere is grown by this (m).
        node_center ... obstacle_dims, pairs: :class:`bb_robot.planning.spheres.PackedSpheres`.
        pair_reach: ``(pairs, coordinates)``: how far each pair's two geometries can approach each
            other per radian (or metre) of each coordinate (m).
        begin: the place in the coarse-to-fine order to start at (0 at first; after a maybe sample
            at place ``p``, ``p + 1`` resumes).
        flags: written, one per sample (at least ``steps + 1``), for the places checked.
        grow: ``(pairs,)`` written: how far each pair approaches in one step (m); each pair's
            spheres are grown by half of it.
        info: ``(2,)`` written: the number of steps, and the maybe sample's index (-1: none).

    Returns:
        The place of the maybe sample in the order (resume at it plus one), or -1 when every
        sample from ``begin`` on is clear; ``-2`` when ``flags`` is too short (``info[0]`` steps).
        A non-finite configuration is a maybe sample (the exact model then refuses it).
    """
    n = q0.shape[0]
    count = pairs.shape[0]
    largest = 0.0
    for k in range(count):
        m = 0.0
        for j in range(n):
            m += pair_reach[k, j] * abs(q1[j] - q0[j])
        grow[k] = m
        largest = max(largest, m)
    steps = 0
    if largest > 0.0:
        steps = int(math.ceil(largest / resolution))
    info[0] = steps
    info[1] = -1
    if steps + 1 > flags.shape[0]:
        return -2
    half = np.empty(count)
    for k in range(count):
        grow[k] = grow[k] / steps if steps > 0 else 0.0
        half[k] = 0.5 * grow[k]
    order = np.empty(steps + 1, dtype=np.intp)
    _order(steps, order)
    frames = _scratch_frames(code, work)
    ints = _decode(code)
    q = np.empty(n)
    out = np.empty(1, dtype=np.intp)
    roots = np.empty((part_root.shape[0], 3))
    stack1 = np.empty(_STACK, dtype=np.intp)
    stack2 = np.empty((_STACK, 2), dtype=np.intp)
    for place in range(begin, steps + 1):
        s = order[place]
        t = s / steps if steps > 0 else 0.0
        for j in range(n):
            q[j] = q0[j] + t * (q1[j] - q0[j])
        hit = 1
        if one_decoded(code, ints, q, work, frames):
            hit = _hits(
                frames, half, clearance, node_center, node_radius, node_child, part_root, part_frame,
                obstacle_kind, obstacle_pose, obstacle_sphere, obstacle_dims, pairs, roots, stack1, stack2, out,
                True,
            )  # fmt: skip
        flags[s] = 1 if hit > 0 else 0
        if hit > 0:
            info[1] = s
            return place
    return -1


@numba.njit(cache=True, nogil=True, boundscheck=False)
def pairs_near(
    code: np.ndarray,
    work: np.ndarray,
    q: np.ndarray,
    clearance: float,
    node_center: np.ndarray,
    node_radius: np.ndarray,
    node_child: np.ndarray,
    part_root: np.ndarray,
    part_frame: np.ndarray,
    obstacle_kind: np.ndarray,
    obstacle_pose: np.ndarray,
    obstacle_sphere: np.ndarray,
    obstacle_dims: np.ndarray,
    pairs: np.ndarray,
    grow: np.ndarray,
    out: np.ndarray,
    frames_out: np.ndarray,
) -> int:  # pragma: no cover - compiled; tested through bb_robot.planning.validity
    """The pairs whose trees, grown by ``grow[k] + clearance``, meet at ``q``; the frames of ``q``.

    Args:
        code, work, node_center ... pairs: as :func:`check_edge`.
        q: a full configuration.
        clearance: every sphere is grown by this (m).
        grow: ``(pairs,)`` each pair's own growth (m).
        out: ``(pairs,)`` written: the indices of the pairs that meet, first.
        frames_out: ``(links, 16)`` written: every link's pose at ``q``, row by row.

    Returns:
        How many pairs meet; -1 when ``q`` is not finite.
    """
    frames = _scratch_frames(code, work)
    if not one_decoded(code, _decode(code), q, work, frames):
        return -1
    frames_out[:, :] = frames
    roots = np.empty((part_root.shape[0], 3))
    stack1 = np.empty(_STACK, dtype=np.intp)
    stack2 = np.empty((_STACK, 2), dtype=np.intp)
    return _hits(
        frames, grow, clearance, node_center, node_radius, node_child, part_root, part_frame,
        obstacle_kind, obstacle_pose, obstacle_sphere, obstacle_dims, pairs, roots, stack1, stack2, out, False,
    )  # fmt: skip


compile_cached(check_edge, SIGNATURE, [__file__, _frames_numba.__file__])
compile_cached(pairs_near, NEAR_SIGNATURE, [__file__, _frames_numba.__file__])

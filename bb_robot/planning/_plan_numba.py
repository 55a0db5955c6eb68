"""The planner's validity check, compiled by numba: sphere trees cull, exact convex distances decide.

Imported only by :func:`bb_robot.planning.validity.edge_kernel` (``bb-robot kernels`` compiles it
at install).  :func:`edge_free` answers whether the straight joint-space segment ``q0 → q1`` keeps
every checked pair at least ``clearance`` apart *continuously* (a configuration is the segment with
``q0 = q1``):

- **Intervals.**  The segment is cut into intervals so that no pair approaches by more than
  ``resolution`` within one (``pair_reach``: per coordinate, how far a pair's geometries approach
  each other per radian or metre: :class:`bb_robot.collision.path.MotionBound`'s bound).  An
  interval is *proven* at its centre: within the interval every pair has approached by at most
  ``m_k · h`` (``h`` its half width, ``m_k`` the pair's approach over the whole segment), so a pair
  is free over the interval when its distance at the centre is at least ``clearance + m_k · h``.
- **Spheres first.**  Each robot part's sphere tree (:mod:`bb_robot.planning.spheres`, holding every
  point of the part), grown by ``clearance + m_k · h``, is tested hierarchically against the
  obstacle (box, sphere, cylinder, half-space) or the other part's tree; most pairs end at the roots.
- **Exact distances where the spheres cannot tell.**  The pair's convex hulls (a robot part: its
  hull's vertices in its link frame, plus a radius for a sphere; an obstacle: its primitive) are
  measured by GJK.  Only its *lower bound* is trusted: for any direction ``u``, no point of
  ``A − B`` is nearer the origin than ``min u · (A − B)``, which the support functions give
  exactly, so the bound holds however the iteration went.  Its iterate's norm is an upper bound:
  below the clearance, the configuration is in contact and the segment refused at once.
- **Otherwise split.**  An interval neither proven nor refused is halved (half the margin), up to a
  budget of evaluations, past which the segment is refused (never unsafe).  The first intervals go
  coarse to fine, all before any half: a blocked segment is refused after a few evaluations.

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
_STACK = 256  # nodes waiting in a traversal (a tree of depth d needs at most 2·d per side; generous)
_R1 = numba.types.Array(numba.float64, 1, "C", readonly=True)
_R2 = numba.types.Array(numba.float64, 2, "C", readonly=True)
_R3 = numba.types.Array(numba.float64, 3, "C", readonly=True)
_RI1 = numba.types.Array(numba.intp, 1, "C", readonly=True)
_RI2 = numba.types.Array(numba.intp, 2, "C", readonly=True)
_W1 = numba.float64[::1]
SIGNATURE = numba.intp(
    _R1, _W1, _W1, _W1, numba.float64, numba.float64, _R2, _R1, _RI2, _RI1, _RI1, _RI1, _R3, _R2, _R2, _RI2, _R2,
    _R2, _RI1, _R1, _RI1, _RI1, numba.float64[:, ::1], numba.intp, numba.intp[::1],
)  # fmt: skip
_GJK_ITERATIONS = 64  # at most (it converges in far fewer on hulls of a few hundred vertices)
_PENDING = 4096  # halves waiting beside the first intervals at most (past it: refused, never unsafe)


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
def _part_support(
    frames: np.ndarray, frame: int, hull_vertex: np.ndarray, first: int, last: int, margin: float,
    adjacency_start: np.ndarray, adjacency: np.ndarray, hints: np.ndarray, part: int,
    dx: float, dy: float, dz: float, out: np.ndarray,
) -> None:  # fmt: skip
    """The point of a placed robot part farthest along ``(dx, dy, dz)`` (root frame), into ``out``.

    Along the hull's edges from the part's last answer (``hints``) while a neighbour is farther: on
    a convex polytope the vertex no neighbour improves on is the farthest; without edges, every
    vertex is scanned.
    """
    f = frames[frame]
    lx = f[0] * dx + f[4] * dy + f[8] * dz
    ly = f[1] * dx + f[5] * dy + f[9] * dz
    lz = f[2] * dx + f[6] * dy + f[10] * dz
    best = first
    if adjacency_start[first] == adjacency_start[last]:
        top = -math.inf
        for v in range(first, last):
            s = lx * hull_vertex[v, 0] + ly * hull_vertex[v, 1] + lz * hull_vertex[v, 2]
            if s > top:
                top = s
                best = v
    else:
        best = hints[part] if first <= hints[part] < last else first
        top = lx * hull_vertex[best, 0] + ly * hull_vertex[best, 1] + lz * hull_vertex[best, 2]
        for _ in range(last - first):
            step = best
            for e in range(adjacency_start[best], adjacency_start[best + 1]):
                u = adjacency[e]
                s = lx * hull_vertex[u, 0] + ly * hull_vertex[u, 1] + lz * hull_vertex[u, 2]
                if s > top:
                    top = s
                    step = u
            if step == best:
                break
            best = step
        hints[part] = best
    _place(frames, frame, hull_vertex[best], out)
    if margin > 0.0:
        norm = math.sqrt(dx * dx + dy * dy + dz * dz)
        if norm > 0.0:
            out[0] += margin * dx / norm
            out[1] += margin * dy / norm
            out[2] += margin * dz / norm


@numba.njit(inline="always", boundscheck=False)
def _obstacle_support(
    kind: int, pose: np.ndarray, dims: np.ndarray, dx: float, dy: float, dz: float, out: np.ndarray
) -> None:
    """The point of an obstacle (box, sphere, cylinder) farthest along ``(dx, dy, dz)``, into ``out``."""
    if kind == _SPHERE:
        norm = math.sqrt(dx * dx + dy * dy + dz * dz)
        scale = dims[0] / norm if norm > 0.0 else 0.0
        out[0] = pose[0, 3] + scale * dx
        out[1] = pose[1, 3] + scale * dy
        out[2] = pose[2, 3] + scale * dz
        return
    lx = pose[0, 0] * dx + pose[1, 0] * dy + pose[2, 0] * dz
    ly = pose[0, 1] * dx + pose[1, 1] * dy + pose[2, 1] * dz
    lz = pose[0, 2] * dx + pose[1, 2] * dy + pose[2, 2] * dz
    if kind == _CYLINDER:
        radial = math.sqrt(lx * lx + ly * ly)
        px = dims[0] * lx / radial if radial > 0.0 else 0.0
        py = dims[0] * ly / radial if radial > 0.0 else 0.0
        pz = dims[1] if lz >= 0.0 else -dims[1]
    else:
        px = dims[0] if lx >= 0.0 else -dims[0]
        py = dims[1] if ly >= 0.0 else -dims[1]
        pz = dims[2] if lz >= 0.0 else -dims[2]
    for r in range(3):
        out[r] = pose[r, 0] * px + pose[r, 1] * py + pose[r, 2] * pz + pose[r, 3]


@numba.njit(inline="always", boundscheck=False)
def _det3(g: np.ndarray, b: np.ndarray, column: int) -> float:
    """The determinant of the 3×3 ``g`` with its column ``column`` replaced by ``b`` (-1: none)."""
    c0 = (b[0], b[1], b[2]) if column == 0 else (g[0, 0], g[1, 0], g[2, 0])
    c1 = (b[0], b[1], b[2]) if column == 1 else (g[0, 1], g[1, 1], g[2, 1])
    c2 = (b[0], b[1], b[2]) if column == 2 else (g[0, 2], g[1, 2], g[2, 2])
    # c0 · (c1 × c2)
    return float(
        c0[0] * (c1[1] * c2[2] - c1[2] * c2[1])
        - c0[1] * (c1[0] * c2[2] - c1[2] * c2[0])
        + c0[2] * (c1[0] * c2[1] - c1[1] * c2[0])
    )


@numba.njit(inline="always", boundscheck=False)
def _closest(
    points: np.ndarray, n: int, v: np.ndarray, scratch: np.ndarray, g: np.ndarray, b: np.ndarray, index: np.ndarray
) -> int:
    """The point of the hull of ``points[:n]`` (n ≤ 4) nearest the origin into ``v``; the points that
    span it are moved to the front and their count returned (0: the origin is inside)."""
    best = math.inf
    best_mask = 0
    bx = by = bz = 0.0
    for mask in range(1, 1 << n):
        k = 0
        for i in range(n):
            if mask & (1 << i):
                index[k] = i
                k += 1
        p0 = points[index[0]]
        # x = p0 + sum_i l_i e_i, e_i = p_i - p0; the Gram system G l = -E p0
        for i in range(1, k):
            for c in range(3):
                scratch[i - 1, c] = points[index[i], c] - p0[c]
        l1 = l2 = l3 = 0.0
        ok = True
        if k == 2:
            gram = scratch[0, 0] ** 2 + scratch[0, 1] ** 2 + scratch[0, 2] ** 2
            right = -(scratch[0, 0] * p0[0] + scratch[0, 1] * p0[1] + scratch[0, 2] * p0[2])
            if gram <= 1e-30:
                ok = False
            else:
                l1 = right / gram
        elif k >= 3:
            m = k - 1
            for i in range(m):
                b[i] = -(scratch[i, 0] * p0[0] + scratch[i, 1] * p0[1] + scratch[i, 2] * p0[2])
                for j in range(m):
                    g[i, j] = (
                        scratch[i, 0] * scratch[j, 0] + scratch[i, 1] * scratch[j, 1] + scratch[i, 2] * scratch[j, 2]
                    )
            if m == 2:
                det = g[0, 0] * g[1, 1] - g[0, 1] * g[1, 0]
                if abs(det) <= 1e-24 * (g[0, 0] * g[1, 1] + 1e-300):
                    ok = False
                else:
                    l1 = (b[0] * g[1, 1] - g[0, 1] * b[1]) / det
                    l2 = (g[0, 0] * b[1] - b[0] * g[1, 0]) / det
            else:
                det = _det3(g, b, -1)
                if abs(det) <= 1e-24 * (g[0, 0] * g[1, 1] * g[2, 2] + 1e-300):
                    ok = False
                else:
                    l1, l2, l3 = _det3(g, b, 0) / det, _det3(g, b, 1) / det, _det3(g, b, 2) / det
        if not ok or l1 < 0.0 or l2 < 0.0 or l3 < 0.0 or l1 + l2 + l3 > 1.0:
            continue
        x, y, z = p0[0], p0[1], p0[2]
        for i in range(k - 1):
            weight = l1 if i == 0 else (l2 if i == 1 else l3)
            x += weight * scratch[i, 0]
            y += weight * scratch[i, 1]
            z += weight * scratch[i, 2]
        d = x * x + y * y + z * z
        if d < best:
            best = d
            best_mask = mask
            bx, by, bz = x, y, z
    v[0] = bx
    v[1] = by
    v[2] = bz
    if best_mask == 0:  # degenerate beyond repair: keep the nearest point alone
        nearest = 0
        for i in range(n):
            a, b2 = points[i], points[nearest]
            if a[0] * a[0] + a[1] * a[1] + a[2] * a[2] < b2[0] * b2[0] + b2[1] * b2[1] + b2[2] * b2[2]:
                nearest = i
        v[:] = points[nearest]
        points[0] = v
        return 1
    k = 0
    for i in range(n):
        if best_mask & (1 << i):
            for c in range(3):
                points[k, c] = points[i, c]
            k += 1
    if k == 4:
        return 0
    return k


@numba.njit(boundscheck=False)
def _gjk(
    frames: np.ndarray,
    part: int,
    other: int,
    obstacle: bool,
    part_frame: np.ndarray,
    hull_vertex: np.ndarray,
    hull_start: np.ndarray,
    hull_margin: np.ndarray,
    adjacency_start: np.ndarray,
    adjacency: np.ndarray,
    hints: np.ndarray,
    obstacle_kind: np.ndarray,
    obstacle_pose: np.ndarray,
    obstacle_dims: np.ndarray,
    enough: float,
    contact: float,
    bounds: np.ndarray,
    points: np.ndarray,
    scratch: np.ndarray,
    g: np.ndarray,
    index: np.ndarray,
    start: np.ndarray,
) -> None:
    """A lower and an upper bound of the distance between a robot part and an obstacle or another part.

    Stops as soon as the lower bound reaches ``enough`` or the upper bound falls below ``contact``.
    ``bounds`` is written: (lower, upper).  A lower bound ≤ 0 means the two may touch.  ``points``
    ``(7, 3)``, ``scratch`` ``(3, 3)``, ``g`` ``(4, 3)`` and ``index`` ``(4,)`` are scratch.
    ``start`` ``(3,)``: the direction to begin with (the pair's last one: at a nearby configuration
    its first lower bound often suffices), written with the last one.
    """
    fa = part_frame[part]
    if obstacle and obstacle_kind[other] == _HALFSPACE:
        dims = obstacle_dims[other]
        sa = points[4]
        _part_support(
            frames, fa, hull_vertex, hull_start[part], hull_start[part + 1], hull_margin[part], adjacency_start,
            adjacency, hints, part, -dims[0], -dims[1], -dims[2], sa,
        )  # fmt: skip
        gap = dims[0] * sa[0] + dims[1] * sa[1] + dims[2] * sa[2] - dims[3]
        bounds[0] = gap
        bounds[1] = gap
        return
    v = points[4]
    sa = points[5]
    sb = points[6]
    b = g[3]
    first_a, last_a, margin_a = hull_start[part], hull_start[part + 1], hull_margin[part]
    fb = 0
    first_b = last_b = 0
    margin_b = 0.0
    if not obstacle:
        fb = part_frame[other]
        first_b, last_b, margin_b = hull_start[other], hull_start[other + 1], hull_margin[other]
    n = 0
    dx, dy, dz = start[0], start[1], start[2]
    if dx * dx + dy * dy + dz * dz <= 1e-24:
        dx, dy, dz = 1.0, 0.0, 0.0
    lower = -math.inf
    upper = math.inf
    for _ in range(_GJK_ITERATIONS):
        # w = support of A − B along -d: s_A(-d) − s_B(d)
        _part_support(
            frames, fa, hull_vertex, first_a, last_a, margin_a, adjacency_start, adjacency, hints, part, -dx, -dy,
            -dz, sa,
        )  # fmt: skip
        if obstacle:
            _obstacle_support(obstacle_kind[other], obstacle_pose[other], obstacle_dims[other], dx, dy, dz, sb)
        else:
            _part_support(
                frames, fb, hull_vertex, first_b, last_b, margin_b, adjacency_start, adjacency, hints, other, dx, dy,
                dz, sb,
            )  # fmt: skip
        wx, wy, wz = sa[0] - sb[0], sa[1] - sb[1], sa[2] - sb[2]
        # any direction d bounds the distance from below: no point of A − B is nearer than d·w/|d|
        norm = math.sqrt(dx * dx + dy * dy + dz * dz)
        bound = (dx * wx + dy * wy + dz * wz) / norm
        if bound > lower:
            lower = bound
        if lower >= enough or (n > 0 and upper - lower <= 1e-9 + 1e-7 * upper):
            break
        if n > 0:
            repeated = False
            for i in range(n):
                if points[i, 0] == wx and points[i, 1] == wy and points[i, 2] == wz:
                    repeated = True
            if repeated:
                break
        points[n, 0] = wx
        points[n, 1] = wy
        points[n, 2] = wz
        n = _closest(points, n + 1, v, scratch, g, b, index)
        dx, dy, dz = v[0], v[1], v[2]
        # v is a convex combination of points of A − B, so |v| bounds the distance from above whatever
        # the rounding; only a v at the origin is a contact (a flat tetrahedron "holding" the origin is not)
        upper = min(upper, math.sqrt(dx * dx + dy * dy + dz * dz))
        if upper <= 1e-12:
            lower = min(lower, 0.0)
            upper = 0.0
            break
        if n == 0:
            break
        if upper < contact:
            break
    if dx * dx + dy * dy + dz * dz > 1e-24:
        start[0] = dx
        start[1] = dy
        start[2] = dz
    bounds[0] = lower
    bounds[1] = upper


@numba.njit(inline="always", boundscheck=False)
def _prove(
    frames: np.ndarray,
    h: float,
    approach: np.ndarray,
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
    hull_vertex: np.ndarray,
    hull_start: np.ndarray,
    hull_margin: np.ndarray,
    adjacency_start: np.ndarray,
    adjacency: np.ndarray,
    hints: np.ndarray,
    roots: np.ndarray,
    stack1: np.ndarray,
    stack2: np.ndarray,
    bounds: np.ndarray,
    gjk_points: np.ndarray,
    gjk_scratch: np.ndarray,
    gjk_g: np.ndarray,
    gjk_index: np.ndarray,
    directions: np.ndarray,
    info: np.ndarray,
) -> int:
    """Whether every pair keeps ``clearance + approach[k] · h`` at the placed ``frames``.

    Returns:
        1: proven; 0: some pair is nearer than the clearance here (contact); 2: undecided (split).
    """
    pa = np.empty(3)
    pb = np.empty(3)
    for p in range(part_root.shape[0]):
        _place(frames, part_frame[p], node_center[part_root[p]], roots[p])
    result = 1
    for k in range(pairs.shape[0]):
        a = pairs[k, 0]
        b = pairs[k, 1]
        need = clearance + approach[k] * h
        reach = node_radius[part_root[a]] + need
        obstacle = pairs[k, 2] == 1
        if obstacle:
            if obstacle_kind[b] != _HALFSPACE:
                dx = roots[a, 0] - obstacle_sphere[b, 0]
                dy = roots[a, 1] - obstacle_sphere[b, 1]
                dz = roots[a, 2] - obstacle_sphere[b, 2]
                limit = reach + obstacle_sphere[b, 3]
                if dx * dx + dy * dy + dz * dz > limit * limit:
                    continue
            meets = _tree_meets_obstacle(
                frames, part_frame[a], part_root[a], need, node_center, node_radius, node_child,
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
                frames, part_frame[a], part_root[a], part_frame[b], part_root[b], need,
                node_center, node_radius, node_child, stack2, pa, pb,
            )  # fmt: skip
        if not meets:
            continue
        info[1] += 1
        _gjk(
            frames, a, b, obstacle, part_frame, hull_vertex, hull_start, hull_margin, adjacency_start, adjacency,
            hints, obstacle_kind, obstacle_pose,
            obstacle_dims, need, clearance, bounds, gjk_points, gjk_scratch, gjk_g, gjk_index, directions[k],
        )  # fmt: skip
        if bounds[0] >= need:
            continue
        if bounds[1] < clearance:
            info[2] = k
            return 0
        result = 2
        if h <= 0.0:
            # a configuration (no interval): the lower bound had converged short of the clearance
            info[2] = k
            return 0
    return result


@numba.njit(inline="always", boundscheck=False)
def _order(count: int, out: np.ndarray) -> None:
    """Indices ``0 .. count-1`` coarse to fine: both ends (the last first), the middle, the middles of the halves."""
    last = count - 1
    out[0] = last  # the far end first: an extension is usually blocked there, its near end is a tree node
    if last == 0:
        return
    out[1] = 0
    filled = 2
    stride = 1
    while stride * 2 <= last:
        stride *= 2
    while stride >= 1:
        i = stride
        while i < last:
            if (i // stride) % 2 == 1:
                out[filled] = i
                filled += 1
            i += stride
        stride //= 2


@numba.njit(cache=True, nogil=True, boundscheck=False)
def edge_free(
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
    hull_vertex: np.ndarray,
    hull_start: np.ndarray,
    hull_margin: np.ndarray,
    adjacency_start: np.ndarray,
    adjacency: np.ndarray,
    directions: np.ndarray,
    budget: int,
    info: np.ndarray,
) -> int:  # pragma: no cover - compiled; its verdicts are tested in test/planning/test_plan.py
    """Whether every configuration of ``q0 → q1`` keeps every pair ``clearance`` apart (module docstring).

    Args:
        code: the model's forward-kinematics program (``ForwardKinematics.program().code``).
        work: its scratch (writable, one caller at a time).
        q0, q1: full configurations (C-contiguous, the FK's arity); equal for one configuration.
        resolution: the most any pair may approach within one first interval (m, > 0).
        clearance: the least distance kept (m, > 0).
        node_center ... pairs, pair_reach, hull_vertex ... adjacency: the arrays of
            :class:`bb_robot.planning.spheres.PackedSpheres` (``pairs`` and ``pair_reach`` may be a
            subset of its rows).
        directions: ``(pairs, 3)`` each pair's last GJK direction (written; zeros at first): where
            to begin the next time (only speed depends on it, never the verdict's soundness).
        budget: configurations evaluated at most; past it the segment is refused.
        info: ``(3,)`` written: configurations evaluated, exact distance queries, the pair in
            contact (-1: none).

    Returns:
        1: free throughout; 0: some configuration is nearer than the clearance (or not finite);
        -1: undecided within the budget (refuse it).
    """
    n = q0.shape[0]
    count = pairs.shape[0]
    approach = np.empty(count)
    largest = 0.0
    for k in range(count):
        m = 0.0
        for j in range(n):
            m += pair_reach[k, j] * abs(q1[j] - q0[j])
        approach[k] = m
        largest = max(largest, m)
    intervals = 1
    if largest > 0.0:
        intervals = max(1, int(math.ceil(largest / resolution)))
    info[0] = 0
    info[1] = 0
    info[2] = -1
    order = np.empty(intervals, dtype=np.intp)
    _order(intervals, order)
    frames = _scratch_frames(code, work)
    ints = _decode(code)
    q = np.empty(n)
    roots = np.empty((part_root.shape[0], 3))
    stack1 = np.empty(_STACK, dtype=np.intp)
    stack2 = np.empty((_STACK, 2), dtype=np.intp)
    bounds = np.empty(2)
    gjk_points = np.empty((7, 3))
    gjk_scratch = np.empty((3, 3))
    gjk_g = np.empty((4, 3))
    gjk_index = np.empty(4, dtype=np.intp)
    hints = np.full(part_root.shape[0], -1, dtype=np.intp)
    single = largest <= 0.0
    # Breadth first: every first interval (coarse to fine) before any half, so that a blocked segment is
    # refused at its contact before the search splits near-misses elsewhere.  A ring of pending intervals.
    capacity = intervals + _PENDING
    low = np.empty(capacity)
    high = np.empty(capacity)
    for place in range(intervals):
        low[place] = order[place] / intervals
        high[place] = (order[place] + 1) / intervals
    head = 0
    count = intervals
    while count > 0:
        a = low[head]
        b = high[head]
        head = (head + 1) % capacity
        count -= 1
        c = 0.5 * (a + b)
        h = 0.0 if single else 0.5 * (b - a)
        info[0] += 1
        if info[0] > budget:
            return -1
        for j in range(n):
            q[j] = q0[j] + c * (q1[j] - q0[j])
        if not one_decoded(code, ints, q, work, frames):
            return 0
        status = _prove(
            frames, h, approach, clearance, node_center, node_radius, node_child, part_root, part_frame,
            obstacle_kind, obstacle_pose, obstacle_sphere, obstacle_dims, pairs, hull_vertex, hull_start,
            hull_margin, adjacency_start, adjacency, hints, roots, stack1, stack2, bounds, gjk_points, gjk_scratch,
            gjk_g, gjk_index, directions, info,
        )  # fmt: skip
        if status == 0:
            return 0
        if status == 2:
            if count + 2 > capacity or largest * h < 1e-9:
                return -1
            tail = (head + count) % capacity
            low[tail] = a
            high[tail] = c
            tail = (tail + 1) % capacity
            low[tail] = c
            high[tail] = b
            count += 2
    return 1


compile_cached(edge_free, SIGNATURE, [__file__, _frames_numba.__file__])

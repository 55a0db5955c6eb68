"""The RRT-Connect search loop, compiled by numba around the planner's edge check.

Imported only by :func:`bb_robot.planning.rrt.search_kernel` (``bb-robot kernels`` compiles it at
install).  :func:`connect_steps` runs a block of iterations of :func:`bb_robot.planning.rrt.rrt_connect`
(the same algorithm: extend one tree towards a sample by at most ``step``, connect the other to the
new node, the trees swapping roles each iteration) with no Python between them: the nearest node is
a linear scan, every edge is :func:`bb_robot.planning._plan_numba.edge_free` on the full
configuration (the unplanned coordinates at ``base``).  The samples are drawn by the caller (one
``numpy.random.Generator``, a block at a time), so the search stays repeatable; the caller checks
its deadline between blocks and grows the trees' arrays before each.

One signature, compiled (or loaded from numba's cache) at import.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bb_robot.model import _frames_numba
from bb_robot.model.compiled import compile_cached
from bb_robot.planning import _plan_numba
from bb_robot.planning._plan_numba import _R1, _R2, _R3, _RI1, _RI2, _W1, edge_free

_W2 = numba.float64[:, ::1]
_I1 = numba.intp[::1]
SIGNATURE = numba.intp(
    # the edge check's arguments, as edge_free takes them (q0 and q1 excepted)
    _R1, _W1, numba.float64, numba.float64, _R2, _R1, _RI2, _RI1, _RI1, _RI1, _R3, _R2, _R2, _RI2, _R2,
    _R2, _RI1, _R1, _RI1, _RI1, _W2, numba.intp, _I1,
    # the search: base, active, both trees' nodes and parents, their counts, the samples, step, first
    # iteration, out, tally
    _R1, _RI1, _W2, _I1, _W2, _I1, _I1, _R2, numba.float64, numba.intp, _I1, _I1,
    # the goal tree's local samples: probability, spread, the draws (choice, normals), the bounds
    numba.float64, numba.float64, _R2, _R2, _R1, _R1,
)  # fmt: skip


@numba.njit(inline="always", boundscheck=False)
def _nearest(nodes: np.ndarray, count: int, target: np.ndarray) -> tuple[int, float]:
    """The index of the node nearest ``target`` (the first of equals) and its squared distance."""
    best, best_d = 0, math.inf
    n = target.shape[0]
    for i in range(count):
        d = 0.0
        for j in range(n):
            t = nodes[i, j] - target[j]
            d += t * t
        if d < best_d:
            best, best_d = i, d
    return best, best_d


@numba.njit(cache=True, nogil=True, boundscheck=False)
def connect_steps(
    code: np.ndarray,
    work: np.ndarray,
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
    base: np.ndarray,
    active: np.ndarray,
    nodes_a: np.ndarray,
    parent_a: np.ndarray,
    nodes_b: np.ndarray,
    parent_b: np.ndarray,
    counts: np.ndarray,
    samples: np.ndarray,
    step: float,
    first: int,
    out: np.ndarray,
    tally: np.ndarray,
    local: float,
    spread: float,
    choice: np.ndarray,
    normals: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> int:  # pragma: no cover - compiled; tested against the Python search in test/planning/test_rrt.py
    """Run iterations ``first``, ``first + 1``, ... of RRT-Connect, one per row of ``samples``.

    Args:
        code ... info: as :func:`bb_robot.planning._plan_numba.edge_free` takes them.
        base: every coordinate's value (the unplanned ones kept).
        active: the planned coordinates' indices in ``base``.
        nodes_a, parent_a: the start tree (rows ``< counts[0]`` used; parent -1 at a root).
        nodes_b, parent_b: the goal tree (``counts[1]``).
        counts: ``(2,)`` the trees' sizes (updated).  The caller leaves room for every row this call may
            add: at most ``samples.shape[0] * (2 + span / step)``.
        samples: ``(k, len(active))`` the iterations' targets.
        step: the longest edge one extension adds.
        first: the number of the first iteration (odd: the start tree extends first).
        out: ``(3,)`` written on success: which tree extended (0 start, 1 goal), its new node, the
            other tree's node that reached it.
        tally: ``(4,)`` added to: edges checked, configurations evaluated, exact queries, undecided edges.
        local: the probability that the goal tree's target is a local sample instead of ``samples``' row:
            one of its nodes (``choice[row, 1]`` picks it) moved by ``spread · normals[row]``, within
            ``lower`` and ``upper``.
        spread: see ``local``.
        choice: ``(k, 2)`` uniform draws in [0, 1): whether local (``< local``), and which node.
        normals: ``(k, len(active))`` standard normal draws.
        lower, upper: the sampling bounds.

    Returns:
        The iteration that joined the trees, or 0 when none of these did.
    """
    n = active.shape[0]
    q0 = base.copy()
    q1 = base.copy()
    new = np.empty(n)
    near_target = np.empty(n)
    for row in range(samples.shape[0]):
        iteration = first + row
        grow = 0 if iteration % 2 else 1
        # ---- extend the growing tree towards the sample
        nodes = nodes_a if grow == 0 else nodes_b
        parent = parent_a if grow == 0 else parent_b
        target = samples[row]
        if counts[grow] < counts[1 - grow] and choice[row, 0] < local:
            pick = min(int(choice[row, 1] * counts[grow]), counts[grow] - 1)
            for j in range(n):
                near_target[j] = min(max(nodes[pick, j] + spread * normals[row, j], lower[j]), upper[j])
            target = near_target
        near, d2 = _nearest(nodes, counts[grow], target)
        distance = math.sqrt(d2)
        if distance <= step:
            for j in range(n):
                new[j] = target[j]
        else:
            for j in range(n):
                new[j] = nodes[near, j] + (target[j] - nodes[near, j]) * (step / distance)
        if distance == 0.0:
            continue
        for j in range(n):
            q0[active[j]] = nodes[near, j]
            q1[active[j]] = new[j]
        verdict = edge_free(
            code, work, q0, q1, resolution, clearance, node_center, node_radius, node_child, part_root, part_frame,
            obstacle_kind, obstacle_pose, obstacle_sphere, obstacle_dims, pairs, pair_reach, hull_vertex,
            hull_start, hull_margin, adjacency_start, adjacency, directions, budget, info,
        )  # fmt: skip
        tally[0] += 1
        tally[1] += info[0]
        tally[2] += info[1]
        if verdict < 0:
            tally[3] += 1
        if verdict != 1:
            continue
        added = counts[grow]
        for j in range(n):
            nodes[added, j] = new[j]
        parent[added] = near
        counts[grow] = added + 1
        # ---- connect the other tree to the new node, step by step, until it reaches it or is trapped
        other = 1 - grow
        onodes = nodes_a if other == 0 else nodes_b
        oparent = parent_a if other == 0 else parent_b
        goal = nodes[added]
        while True:
            near, d2 = _nearest(onodes, counts[other], goal)
            distance = math.sqrt(d2)
            if distance == 0.0:
                out[0], out[1], out[2] = grow, added, near
                return iteration
            reached = distance <= step
            for j in range(n):
                value = goal[j] if reached else onodes[near, j] + (goal[j] - onodes[near, j]) * (step / distance)
                q0[active[j]] = onodes[near, j]
                q1[active[j]] = value
                new[j] = value
            verdict = edge_free(
                code, work, q0, q1, resolution, clearance, node_center, node_radius, node_child, part_root,
                part_frame, obstacle_kind, obstacle_pose, obstacle_sphere, obstacle_dims, pairs, pair_reach,
                hull_vertex, hull_start, hull_margin, adjacency_start, adjacency, directions, budget, info,
            )  # fmt: skip
            tally[0] += 1
            tally[1] += info[0]
            tally[2] += info[1]
            if verdict < 0:
                tally[3] += 1
            if verdict != 1:
                break
            index = counts[other]
            for j in range(n):
                onodes[index, j] = new[j]
            oparent[index] = near
            counts[other] = index + 1
            if reached:
                out[0], out[1], out[2] = grow, added, index
                return iteration
    return 0


compile_cached(connect_steps, SIGNATURE, [__file__, _plan_numba.__file__, _frames_numba.__file__])

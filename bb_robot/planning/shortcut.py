"""Path simplification: shortcuts until none helps, every new edge checked whole.

A search's path zigzags.  :func:`simplify` shortens it in three moves, each keeping only edges
:meth:`~bb_robot.planning.validity.StateChecker.edge_valid` accepts:

1. **Vertices out** (:func:`drop_vertices`): from each waypoint, the farthest later waypoint it sees
   directly replaces everything between them; repeated until no waypoint can go.
2. **Shortcuts between any two points** (:func:`shortcut_points`): two points drawn on the path
   (anywhere along its segments, by arc length) are joined directly when that edge is valid and
   shorter; this straightens corners that no waypoint removal can.  Rounds of draws continue until a
   whole round shortens the path by less than :data:`GAIN` (relative), bounded by ``max_rounds``.
3. Vertices out again, and waypoints on a straight line merged.

Repeatable: the draws come from the caller's generator, and the work is bounded by counts, not
time.  The length is the C-space (Euclidean, radians) length of the polyline.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from bb_robot.model.transforms import Matrix
from bb_robot.planning.validity import StateChecker

#: A round of shortcuts that shortens the path by less than this fraction ends the shortcutting.
GAIN = 1e-3
#: Draws per round of :func:`shortcut_points`.
DRAWS = 16
#: Rounds at most.
ROUNDS = 4


def path_length(path: npt.ArrayLike) -> float:
    """The C-space length of a polyline (sum of its segments' Euclidean lengths)."""
    rows = np.asarray(path, dtype=float)
    if rows.shape[0] < 2:
        return 0.0
    return float(np.linalg.norm(np.diff(rows, axis=0), axis=1).sum())


def drop_vertices(path: Matrix, checker: StateChecker) -> Matrix:
    """Remove waypoints: from each kept one, jump to the farthest later waypoint in direct view.

    Args:
        path: ``(k, n)``, each edge valid.
        checker: edge validity.

    Returns:
        The path with waypoints removed (its ends kept).
    """
    kept = [0]
    i, last = 0, path.shape[0] - 1
    while i < last:
        j = last
        while j > i + 1 and not checker.edge_valid(path[i], path[j]):
            j -= 1
        kept.append(j)
        i = j
    return path[kept]


def _point_at(path: Matrix, cumulative: Matrix, s: float) -> tuple[int, Matrix]:
    """The segment index holding arc length ``s`` and the point there."""
    index = int(np.searchsorted(cumulative, s, side="right")) - 1
    index = min(max(index, 0), path.shape[0] - 2)
    length = cumulative[index + 1] - cumulative[index]
    t = 0.0 if length <= 0 else (s - cumulative[index]) / length
    return index, path[index] + t * (path[index + 1] - path[index])


def shortcut_points(
    path: Matrix, checker: StateChecker, rng: np.random.Generator, draws: int = DRAWS, max_rounds: int = ROUNDS
) -> Matrix:
    """Join pairs of points drawn along the path where the direct edge is valid (see the module docstring).

    Args:
        path: ``(k, n)``, each edge valid.
        checker: edge validity.
        rng: the draws.
        draws: pairs drawn per round.
        max_rounds: rounds at most.

    Returns:
        The shortened path.
    """
    for _ in range(max_rounds):
        before = path_length(path)
        if path.shape[0] < 3 or before <= 0.0:
            return path
        for _ in range(draws):
            if path.shape[0] < 3:
                break
            cumulative = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
            total = cumulative[-1]
            a, b = np.sort(rng.random(2) * total)
            first, p = _point_at(path, cumulative, float(a))
            second, r = _point_at(path, cumulative, float(b))
            if second <= first:  # on one segment: nothing to gain
                continue
            saved = (b - a) - float(np.linalg.norm(r - p))
            if saved <= 1e-9 * total or not checker.edge_valid(p, r):
                continue
            path = np.vstack([path[: first + 1], p[None], r[None], path[second + 1 :]])
            path = _merge_repeats(path)
        if before - path_length(path) < GAIN * before:
            break
    return path


def _merge_repeats(path: Matrix) -> Matrix:
    keep = np.ones(path.shape[0], dtype=bool)
    keep[1:] = np.linalg.norm(np.diff(path, axis=0), axis=1) > 1e-12
    keep[-1] = True
    return path[keep]


def merge_collinear(path: Matrix, tolerance: float = 1e-9) -> Matrix:
    """Drop waypoints that lie on the straight line between their neighbours (the path is unchanged)."""
    path = _merge_repeats(path)
    if path.shape[0] < 3:
        return path
    keep = [0]
    for i in range(1, path.shape[0] - 1):
        a, b, c = path[keep[-1]], path[i], path[i + 1]
        ab, bc = b - a, c - b
        cross = float(np.linalg.norm(ab) * np.linalg.norm(bc) - ab @ bc)
        if cross > tolerance:
            keep.append(i)
    keep.append(path.shape[0] - 1)
    return path[keep]


def simplify(path: npt.ArrayLike, checker: StateChecker, rng: np.random.Generator) -> Matrix:
    """Shorten a valid path until no shortcut helps (module docstring).

    Args:
        path: ``(k, n)`` waypoints of the planned joints, each edge valid.
        checker: edge validity.
        rng: the draws of :func:`shortcut_points`.

    Returns:
        The simplified path, from the same start to the same end, each edge valid.
    """
    rows = _merge_repeats(np.array(path, dtype=float))
    if rows.shape[0] < 3:
        return rows
    rows = drop_vertices(rows, checker)
    for _ in range(ROUNDS):
        length = path_length(rows)
        rows = shortcut_points(rows, checker, rng)
        rows = drop_vertices(rows, checker)
        rows = merge_collinear(rows)
        if length - path_length(rows) < GAIN * length or rows.shape[0] < 3:
            break
    return rows

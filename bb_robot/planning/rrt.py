"""Bidirectional RRT (RRT-Connect, Kuffner and LaValle 2000) over the planned joints, bounded by iterations.

Two trees grow towards each other: one from the start, one from every goal configuration at once
(a goal *region*: the tree has several roots, and the path ends at whichever it reaches).  Each
iteration draws a configuration uniformly within the joints' bounds, *extends* one tree towards it
by at most ``step`` (radians of C-space distance), and then *connects* the other tree to the new
node as far as it goes; the trees swap roles each iteration.  Every edge added is checked whole
(:meth:`~bb_robot.planning.validity.StateChecker.edge_valid`).

The pieces are kept separate (:class:`Tree`, :func:`extend`, :func:`connect`) so another planner
can reuse them: the constrained planner passes ``project(q) -> q | None``, which moves a
configuration onto its constraint (or refuses it) before it is checked and added.

Repeatable: the draws come from one ``numpy.random.Generator``; the search ends after
``max_iterations`` iterations (or at ``deadline``, only a limit: a search that ends there fails).
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.model.transforms import Matrix
from bb_robot.planning.validity import StateChecker

#: ``project(q) -> q | None``: a configuration moved onto a constraint, or ``None`` when it cannot be.
Projection = Callable[[Matrix], Matrix | None]


class Growth(enum.Enum):
    """What an extension did."""

    REACHED = "reached"  # the tree now holds the target
    ADVANCED = "advanced"  # a new node towards it
    TRAPPED = "trapped"  # nothing added


class Tree:
    """Configurations joined by parent links, with their roots (parent -1).

    Args:
        roots: the first configurations (a start, or every goal configuration).
        capacity: nodes reserved at first (the arrays grow as needed).
    """

    def __init__(self, roots: Sequence[npt.ArrayLike], capacity: int = 256) -> None:
        first = np.atleast_2d(np.asarray(roots, dtype=float))
        self.dimension = first.shape[1]
        self.nodes = np.empty((max(capacity, first.shape[0]), self.dimension))
        self.parent = np.empty(self.nodes.shape[0], dtype=np.intp)
        self.count = 0
        for row in first:
            self.add(row, -1)

    def add(self, q: npt.ArrayLike, parent: int) -> int:
        """Add a node; returns its index."""
        if self.count == self.nodes.shape[0]:
            self.nodes = np.vstack([self.nodes, np.empty_like(self.nodes)])
            self.parent = np.concatenate([self.parent, np.empty_like(self.parent)])
        self.nodes[self.count] = q
        self.parent[self.count] = parent
        self.count += 1
        return self.count - 1

    def nearest(self, q: Matrix) -> int:
        """The index of the node nearest ``q`` (Euclidean; the first of equals)."""
        difference = self.nodes[: self.count] - q
        return int(np.einsum("ij,ij->i", difference, difference).argmin())

    def branch(self, index: int) -> Matrix:
        """The configurations from node ``index`` up to its root, ``(k, n)``."""
        rows = []
        while index >= 0:
            rows.append(index)
            index = int(self.parent[index])
        return self.nodes[rows].copy()


def steer(origin: Matrix, target: Matrix, step: float) -> Matrix:
    """``target``, or the point ``step`` from ``origin`` towards it when it is farther."""
    difference = target - origin
    distance = math.sqrt(float(difference @ difference))
    if distance <= step:
        return target
    return origin + difference * (step / distance)


def extend(
    tree: Tree, target: Matrix, step: float, checker: StateChecker, project: Projection | None = None
) -> tuple[Growth, int]:
    """Grow ``tree`` from its node nearest ``target`` by at most ``step`` towards it.

    Args:
        tree: the tree.
        target: the configuration aimed at.
        step: the longest new edge (C-space distance).
        checker: validity of the new edge (its end included).
        project: moves the new configuration onto a constraint first (``None``: none).

    Returns:
        What happened, and the new node's index (-1 when trapped).
    """
    near = tree.nearest(target)
    origin = tree.nodes[near]
    new = steer(origin, target, step)
    if project is not None:
        moved = project(new)
        if moved is None:
            return Growth.TRAPPED, -1
        new = moved
    if (new is not target or project is not None) and np.array_equal(new, origin):
        return Growth.TRAPPED, -1
    if not checker.edge_valid(origin, new):
        return Growth.TRAPPED, -1
    index = tree.add(new, near)
    reached = new is target or np.array_equal(new, target)
    return (Growth.REACHED if reached else Growth.ADVANCED), index


def connect(
    tree: Tree, target: Matrix, step: float, checker: StateChecker, project: Projection | None = None
) -> tuple[Growth, int]:
    """Extend ``tree`` towards ``target`` again and again until it reaches it or is trapped.

    Returns:
        ``REACHED`` with the node holding ``target``; otherwise the last status and node (-1 if none).
    """
    last = -1
    while True:
        status, index = extend(tree, target, step, checker, project)
        if status is not Growth.ADVANCED:
            return status, (index if status is Growth.REACHED else last)
        last = index


@dataclass(frozen=True)
class Search:
    """The outcome of :func:`rrt_connect`.

    Attributes:
        path: ``(k, n)`` from the start to a goal configuration, or ``None``.
        iterations: iterations made.
        nodes: nodes in both trees.
        reason: why it ended without a path (``""`` when it found one).
    """

    path: Matrix | None
    iterations: int
    nodes: int
    reason: str = ""


def rrt_connect(
    start: Matrix,
    goals: Sequence[Matrix],
    checker: StateChecker,
    lower: Matrix,
    upper: Matrix,
    rng: np.random.Generator,
    *,
    step: float,
    max_iterations: int,
    deadline: float = math.inf,
    project: Projection | None = None,
) -> Search:
    """Search a path from ``start`` to any of ``goals`` (each already valid).

    Args:
        start: the planned joints' start values.
        goals: goal configurations (the goal tree's roots).
        checker: edge validity.
        lower: the planned joints' lower bounds (where samples are drawn).
        upper: their upper bounds.
        rng: the draws.
        step: the longest edge an extension adds.
        max_iterations: iterations at most.
        deadline: a ``time.perf_counter()`` value past which the search gives up (only a limit).
        project: as in :func:`extend`.

    Returns:
        The search's outcome.
    """
    # The straight line first: many problems need nothing more.
    for goal in goals:
        if checker.edge_valid(start, goal):
            return Search(np.vstack([start, goal]), 0, 1 + len(goals))
    trees = [Tree([start]), Tree(goals)]
    span = upper - lower
    for iteration in range(1, max_iterations + 1):
        if time.perf_counter() > deadline:
            return Search(None, iteration - 1, trees[0].count + trees[1].count, "the timeout was reached")
        grow, other = (trees[0], trees[1]) if iteration % 2 else (trees[1], trees[0])
        sample = lower + span * rng.random(span.shape[0])
        status, new = extend(grow, sample, step, checker, project)
        if status is Growth.TRAPPED:
            continue
        status, meet = connect(other, grow.nodes[new], step, checker, project)
        if status is Growth.REACHED:
            from_grow, from_other = grow.branch(new)[::-1], other.branch(meet)[1:]
            path = np.vstack([from_grow, from_other])
            if grow is trees[1]:
                path = path[::-1]
            return Search(path, iteration, trees[0].count + trees[1].count)
    return Search(None, max_iterations, trees[0].count + trees[1].count, "the iteration limit was reached")

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

**Compiled.** Without a projection, :func:`rrt_connect` runs its iterations in one numba kernel
(:mod:`bb_robot.planning._rrt_numba`, around the checker's compiled edge check), :data:`BLOCK`
iterations per call: the draws of a block are made at once from the same generator, and the deadline
is checked between blocks.  Python's nearest-node search, steering and the checker's calls were about
half of an iteration's time on MotionBenchMaker's UR5 cage problems.

**Local samples for the smaller tree.**  In the compiled search, an iteration of the tree with fewer
nodes aims, with probability :data:`LOCAL_PROBABILITY`, at one of its own nodes moved by a normal draw
of :data:`LOCAL_SPREAD` steps per joint (within the bounds) instead of a uniform sample.  A tree rooted
in a trap (a goal reached through a cage's window) fails almost every extension towards uniform
samples, which lie outside, and stays small (about 40 nodes against the start tree's 1,000 on the UR5's
cages); the local samples grow it out of the trap, and the other tree's connections then meet it.
Uniform samples remain (every other iteration, and a fifth of the smaller tree's), so the search keeps
its Voronoi bias and its probabilistic completeness.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.model.transforms import Matrix
from bb_robot.planning.validity import StateChecker, required_kernels

#: Iterations per call of the compiled search (the deadline is checked between calls).
BLOCK = 64
#: The compiled search's local samples: the probability that the smaller tree's target is one of its own
#: nodes moved by a normal draw (per joint) of :data:`LOCAL_SPREAD` steps, instead of a uniform sample.
LOCAL_PROBABILITY = 0.8
#: Their spread, in steps (the standard deviation per joint).
LOCAL_SPREAD = 2.0

_search: list[Any] = []


def search_kernel() -> Any:
    """The compiled search loop (the module :mod:`bb_robot.planning._rrt_numba`), loaded once.

    Raises:
        PlanningError: numba is missing or cannot compile it.
    """
    return required_kernels(_search, "bb_robot.planning._rrt_numba", "search loop", 20.0)


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

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` more nodes (the arrays grow, doubling, as needed)."""
        size = self.nodes.shape[0]
        while size < self.count + rows:
            size *= 2
        if size > self.nodes.shape[0]:
            nodes = np.empty((size, self.dimension))
            nodes[: self.count] = self.nodes[: self.count]
            parent = np.empty(size, dtype=np.intp)
            parent[: self.count] = self.parent[: self.count]
            self.nodes, self.parent = nodes, parent

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
    local: float = LOCAL_PROBABILITY,
    spread: float = LOCAL_SPREAD,
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
        project: as in :func:`extend`; with one, the search runs in Python, on uniform samples alone.
        local: without ``project`` (the compiled search): the probability that an iteration of the tree
            with fewer nodes aims at a *local* sample, one of its own nodes moved by a normal draw of
            ``spread`` steps per joint, instead of a uniform one (0: uniform samples only).
        spread: see ``local`` (in steps).

    Returns:
        The search's outcome.
    """
    # The straight line first: many problems need nothing more.
    for goal in goals:
        if checker.edge_valid(start, goal):
            return Search(np.vstack([start, goal]), 0, 1 + len(goals))
    trees = [Tree([start]), Tree(goals)]
    span = upper - lower
    if project is None and checker.always is None:
        return _compiled(trees, checker, lower, upper, rng, step, max_iterations, deadline, local, spread)
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


def _compiled(
    trees: list[Tree],
    checker: StateChecker,
    lower: Matrix,
    upper: Matrix,
    rng: np.random.Generator,
    step: float,
    max_iterations: int,
    deadline: float,
    local: float,
    spread: float,
) -> Search:
    """:func:`rrt_connect`'s iterations in the compiled kernel, :data:`BLOCK` at a time."""
    kernel = search_kernel().connect_steps
    arguments = checker.kernel_arguments()
    span = upper - lower
    roots = np.vstack([trees[0].nodes[: trees[0].count], trees[1].nodes[: trees[1].count], lower, upper])
    extent = float(np.linalg.norm(roots.max(axis=0) - roots.min(axis=0)))
    per_iteration = 2 + math.ceil(extent / step)  # one extension, then at most this many connection steps
    counts = np.array([trees[0].count, trees[1].count], dtype=np.intp)
    out = np.zeros(3, dtype=np.intp)
    tally = np.zeros(4, dtype=np.intp)
    done = 0
    joined = 0
    try:
        while done < max_iterations:
            if time.perf_counter() > deadline:
                return Search(None, done, int(counts.sum()), "the timeout was reached")
            block = min(BLOCK, max_iterations - done)
            samples = lower + span * rng.random((block, span.shape[0]))
            choice = rng.random((block, 2))
            normals = rng.standard_normal((block, span.shape[0]))
            for tree in trees:
                tree.reserve(block * per_iteration)
            joined = int(
                kernel(
                    *arguments,
                    trees[0].nodes,
                    trees[0].parent,
                    trees[1].nodes,
                    trees[1].parent,
                    counts,
                    samples,
                    float(step),
                    done + 1,
                    out,
                    tally,
                    local,
                    spread * step,
                    choice,
                    normals,
                    lower,
                    upper,
                )  # fmt: skip
            )
            trees[0].count, trees[1].count = int(counts[0]), int(counts[1])
            if joined:
                break
            done += block
    finally:
        checker.add_counts(tally)
    if not joined:
        return Search(None, max_iterations, int(counts.sum()), "the iteration limit was reached")
    grow, other = trees[int(out[0])], trees[1 - int(out[0])]
    path = np.vstack([grow.branch(int(out[1]))[::-1], other.branch(int(out[2]))[1:]])
    if out[0] == 1:
        path = path[::-1]
    return Search(path, joined, int(counts.sum()))

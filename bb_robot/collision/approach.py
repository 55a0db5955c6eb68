"""Link pairs sampled over their own joints, and a search for each pair's closest approach.

:func:`survey` decides, for each link pair asked about, whether it can touch:

1. **Sampling.** A pair's relative pose depends only on the joints on the path between its two
   links (:mod:`bb_robot.collision.reach`), so each pair is sampled over those joints alone, the
   others at the default configuration.  Pairs moved by the same joints share their samples.
   Configurations are uniform within the bounds given, drawn from
   ``numpy.random.default_rng(seed)`` group after group in a fixed order: the same seed gives the
   same counts.  Contact is decided on the triangle meshes.
2. **Search.** For each pair sampling never found in contact, the pair's distance is minimised
   over its joints, starting from the samples where it came closest (measured between convex
   hulls; the :data:`CANDIDATES` samples whose bounding spheres came nearest are measured, the
   :data:`STARTS` nearest of them are starts).  Each step is projected gradient descent on the
   signed distance between the pair's hulls, the gradient from the nearest points' motion: a step
   aims just past contact (:data:`AIM`), is capped (:data:`MAX_STEP`) and halved until the
   distance drops.  Where the hulls meet, the triangle meshes are asked for contact: contact found
   is a *witness*, with the penetration depth coal reports.  Each start runs at most
   :data:`ITERATIONS` steps, so the search is bounded by iterations, not by time, and has no
   randomness beyond the samples it starts from.

A pair neither sampling nor the search found in contact has a *margin*: the smallest distance the
search measured (between hulls, a lower bound of the meshes' distance; between meshes where the
hulls overlapped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bb_robot.collision.model import CollisionModel, LinkPair, link_pair
from bb_robot.collision.reach import PairReach
from bb_robot.model.transforms import Matrix

#: Samples (nearest bounding spheres first) whose hull distance is measured to choose the starts.
CANDIDATES = 32
#: Starts of the descent per pair (the nearest of the candidates).
STARTS = 4
#: Steps per start at most.
ITERATIONS = 40
#: How far past contact (m) a step aims: contact found is this deep or so, not grazing.
AIM = 0.005
#: The longest step (radians or metres, the norm over the pair's coordinates).
MAX_STEP = 0.5
#: Halvings of a step that does not bring the pair nearer before a start ends.
HALVINGS = 6


@dataclass(frozen=True)
class Finding:
    """What sampling and the search found for one link pair.

    Attributes:
        pair: the two links, sorted.
        count: samples in contact.
        samples: samples drawn for the pair.
        witness: a configuration in contact (full coordinate vector), the first sample in contact or
            the search's; ``None`` when none was found.
        depth: the penetration depth at ``witness`` (m; 0 without a witness).
        searched: the witness was found by the search (sampling never saw the pair in contact).
        margin: for a pair never found in contact, the smallest distance measured (m); else ``None``.
    """

    pair: LinkPair
    count: int
    samples: int
    witness: Matrix | None = None
    depth: float = 0.0
    searched: bool = False
    margin: float | None = None

    @property
    def fraction(self) -> float:
        """The fraction of samples in contact."""
        return self.count / self.samples if self.samples else 0.0


class PairProbe:
    """One link pair's distance, its gradient, and exact contact, at any configuration.

    Args:
        model: the robot's collision model (its parts are used; its matrix is not).
        pair: the two links, sorted.
    """

    def __init__(self, model: CollisionModel, pair: LinkPair) -> None:
        from bb_robot.collision.shapes import coal_module

        coal = coal_module()
        self.pair = pair
        self.fk = model.fk
        self.reach = PairReach.of(model.fk, *pair)
        self.size = len(model.fk.joint_names)
        link_index = {name: i for i, name in enumerate(model.fk.link_names)}
        first = [p for p in model.parts if p.link == pair[0]]
        second = [p for p in model.parts if p.link == pair[1]]
        self._parts = [(a, b) for a in first for b in second]
        self._links = (link_index[pair[0]], link_index[pair[1]])
        self._hull = [coal.ComputeDistance(a.hull, b.hull) for a, b in self._parts]
        self._exact = [coal.ComputeCollision(a.exact, b.exact) for a, b in self._parts]
        self._exact_distance = [coal.ComputeDistance(a.exact, b.exact) for a, b in self._parts]
        self._coal = coal
        self._request = coal.DistanceRequest()
        self._contact_request = coal.CollisionRequest()
        self._contact_request.enable_contact = True
        self._contact_request.num_max_contacts = 64

    def _transforms(self, frames: Matrix, index: int) -> tuple[Any, Any]:
        a, b = self._parts[index]
        pose_a = frames[self._links[0]] @ a.local
        pose_b = frames[self._links[1]] @ b.local
        transform = self._coal.Transform3s
        return transform(pose_a[:3, :3], pose_a[:3, 3]), transform(pose_b[:3, :3], pose_b[:3, 3])

    def measure(self, q: Matrix) -> tuple[float, Matrix]:
        """The pair's signed distance between convex hulls at ``q`` and its gradient.

        Args:
            q: a full coordinate vector.

        Returns:
            ``(distance, gradient)``: negative where the hulls overlap (coal's penetration depth); the
            gradient with respect to every coordinate (0 off the pair's path).
        """
        frames = np.asarray(self.fk.compute(q))
        best, best_result = np.inf, None
        for index, functor in enumerate(self._hull):
            result = self._coal.DistanceResult()
            distance = functor(*self._transforms(frames, index), self._request, result)
            if distance < best:
                best, best_result = float(distance), result
        assert best_result is not None
        first, second = best_result.getNearestPoint1(), best_result.getNearestPoint2()
        normal = np.asarray(best_result.normal, dtype=float)
        gradient = self.reach.gradient(frames, np.asarray(first), np.asarray(second), normal, self.size)
        return best, gradient

    def touching(self, q: Matrix) -> float | None:
        """The penetration depth of the pair's triangle meshes at ``q`` (m), or ``None`` when they do not touch."""
        frames = np.asarray(self.fk.compute(q))
        depth: float | None = None
        for index, functor in enumerate(self._exact):
            result = self._coal.CollisionResult()
            if functor(*self._transforms(frames, index), self._contact_request, result):
                deepest = max((abs(c.penetration_depth) for c in result.getContacts()), default=0.0)
                depth = max(depth or 0.0, float(deepest))
        return depth

    def mesh_distance(self, q: Matrix) -> float:
        """The distance between the pair's triangle meshes at ``q`` (m; for meshes apart)."""
        frames = np.asarray(self.fk.compute(q))
        distances = [
            functor(*self._transforms(frames, index), self._request, self._coal.DistanceResult())
            for index, functor in enumerate(self._exact_distance)
        ]
        return float(max(min(distances), 0.0))

    def search(self, starts: Iterable[Matrix], lower: Matrix, upper: Matrix) -> Finding:
        """Minimise the pair's distance from each start (see the module docstring).

        Args:
            starts: full coordinate vectors to descend from.
            lower: each coordinate's lower bound.
            upper: each coordinate's upper bound.

        Returns:
            A finding with a witness (``searched``) when contact was found, else with the margin;
            ``count`` and ``samples`` 0.
        """
        coordinates = np.array(self.reach.coordinates, dtype=np.intp)
        low, high = lower[coordinates], upper[coordinates]
        margin = np.inf
        for start in starts:
            q = np.array(start, dtype=float)
            distance, gradient = self.measure(q)
            for _ in range(ITERATIONS):
                if distance <= 0.0:
                    depth = self.touching(q)
                    if depth is not None:
                        return Finding(self.pair, 0, 0, q, depth, searched=True)
                    margin = min(margin, self.mesh_distance(q))
                else:
                    margin = min(margin, distance)
                step = self._step(q[coordinates], gradient[coordinates], distance, low, high)
                if step is None:
                    break
                for _ in range(HALVINGS):
                    trial = q.copy()
                    trial[coordinates] = np.clip(q[coordinates] + step, low, high)
                    trial_distance, trial_gradient = self.measure(trial)
                    if trial_distance < distance:
                        q, distance, gradient = trial, trial_distance, trial_gradient
                        break
                    step = step / 2
                else:
                    break
            if distance > 0.0:
                margin = min(margin, distance)
        return Finding(self.pair, 0, 0, margin=float(margin) if np.isfinite(margin) else None)

    @staticmethod
    def _step(values: Matrix, gradient: Matrix, distance: float, low: Matrix, high: Matrix) -> Matrix | None:
        """The descent step at one configuration (``None``: no direction lowers the distance within the bounds)."""
        free = gradient.copy()
        free[(values <= low) & (gradient > 0.0)] = 0.0
        free[(values >= high) & (gradient < 0.0)] = 0.0
        squared = float(free @ free)
        if squared < 1e-12:
            return None
        step = -(max(distance, 0.0) + AIM) * free / squared
        length = float(np.linalg.norm(step))
        return step * (MAX_STEP / length) if length > MAX_STEP else step


def _groups(model: CollisionModel, pairs: Iterable[LinkPair]) -> dict[tuple[int, ...], list[LinkPair]]:
    """The pairs by the coordinates that move them, in a fixed order."""
    groups: dict[tuple[int, ...], list[LinkPair]] = {}
    for pair in sorted(set(pairs)):
        groups.setdefault(PairReach.of(model.fk, *pair).coordinates, []).append(pair)
    return dict(sorted(groups.items()))


def _only(model: CollisionModel, pairs: Sequence[LinkPair]) -> CollisionModel:
    """A model of the same parts that checks only ``pairs``."""
    links = model.links_with_geometry
    wanted = set(pairs)
    every = {link_pair(a, b) for i, a in enumerate(links) for b in links[i + 1 :]}
    return CollisionModel(model.robot, model.parts, every - wanted)


def survey(
    model: CollisionModel,
    pairs: Iterable[LinkPair],
    samples: int,
    seed: int,
    bounds: tuple[Matrix, Matrix],
    default: Matrix,
    *,
    chunk: int = 500,
    search: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> dict[LinkPair, Finding]:
    """Sample each pair over its own joints, then search the pairs never in contact (module docstring).

    Args:
        model: the robot's collision model (its parts; its matrix is ignored).
        pairs: the link pairs to decide (sorted names).
        samples: random configurations per pair (at least 1).
        seed: the random generator's seed.
        bounds: ``(lower, upper)`` of each coordinate.
        default: the configuration the joints off a pair's path stay at.
        chunk: configurations per batch (memory against speed).
        search: search for the closest approach of the pairs never in contact.
        progress: called with ``(done, total)`` samples after each batch (``total``: samples times groups).

    Returns:
        Each pair's finding.

    Raises:
        ValueError: ``samples`` is below 1.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    lower, upper = bounds
    groups = _groups(model, pairs)
    rng = np.random.default_rng(seed)
    total, done = samples * len(groups), 0
    findings: dict[LinkPair, Finding] = {}
    for coordinates, members in groups.items():
        columns = np.array(coordinates, dtype=np.intp)
        checked = _only(model, members)
        order = checked.pairs
        counts = dict.fromkeys(order, 0)
        first: dict[LinkPair, Matrix] = {}
        nearest_gaps = np.full((0, len(order)), np.inf)
        nearest_q = np.zeros((0, len(order), default.size))
        drawn = 0
        while drawn < samples:
            size = min(chunk, samples - drawn) if columns.size else 1
            batch = np.repeat(default[None, :], size, axis=0)
            batch[:, columns] = rng.uniform(lower[columns], upper[columns], size=(size, columns.size))
            found, gaps = checked.contacts_batch(batch)
            weight = 1 if columns.size else samples
            for index, contacts in enumerate(found):
                for pair in contacts:
                    counts[pair] += weight
                    first.setdefault(pair, batch[index])
            # keep each pair's CANDIDATES samples whose bounding spheres came nearest
            gaps_all = np.concatenate((nearest_gaps, gaps))
            q_all = np.concatenate((nearest_q, np.repeat(batch[:, None, :], len(order), axis=1)))
            keep = np.argsort(gaps_all, axis=0, kind="stable")[:CANDIDATES]
            nearest_gaps = np.take_along_axis(gaps_all, keep, axis=0)
            nearest_q = np.take_along_axis(q_all, keep[:, :, None], axis=0)
            drawn += size if columns.size else samples
            done += size if columns.size else samples
            if progress is not None:
                progress(done, total)
        for k, pair in enumerate(order):
            if counts[pair]:
                witness = first[pair]
                depth = PairProbe(model, pair).touching(witness) or 0.0
                findings[pair] = Finding(pair, counts[pair], samples, witness, depth)
            elif not search:
                findings[pair] = Finding(pair, 0, samples)
            else:
                findings[pair] = _search(model, pair, nearest_q[:, k], (lower, upper), samples)
    return findings


def _search(
    model: CollisionModel, pair: LinkPair, candidates: Matrix, bounds: tuple[Matrix, Matrix], samples: int
) -> Finding:
    """The search's finding for one pair never in contact in its samples, from its nearest samples."""
    probe = PairProbe(model, pair)
    measured = sorted(((probe.measure(q)[0], index) for index, q in enumerate(candidates)), key=lambda m: m)
    starts = [candidates[index] for _, index in measured[:STARTS]]
    found = probe.search(starts, *bounds)
    return Finding(pair, 0, samples, found.witness, found.depth, found.searched, found.margin)

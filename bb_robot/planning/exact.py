"""The exact model's last word on a planned path: coal's hull distances, every checked pair, continuously.

:func:`check_planned_path` checks a polyline of the planned joints against the scene's
:class:`~bb_robot.collision.model.CollisionModel` (its parts' convex hulls, its obstacles, its
allowed-collision matrix: the pairs :func:`bb_robot.planning.spheres.checked_part_pairs` gives, which
are the model's own rule) by **conservative advancement per pair**, with
:class:`~bb_robot.collision.path.MotionBound`'s bound:

- along a segment ``q(t) = q0 + t (q1 − q0)``, pair ``k``'s two geometries approach each other by
  at most ``m_k · Δt`` (``m_k``: for an obstacle, the part's motion bound; for two parts, their
  motions relative to their common ancestor, over the joints between them only; the same bound as
  :attr:`PackedSpheres.pair_reach <bb_robot.planning.spheres.PackedSpheres.pair_reach>`);
- a pair measured at ``t`` at distance ``d ≥ clearance`` (its bounding spheres' gap where that
  already suffices, else coal's hull distance) is free until ``t + (d − clearance) / m_k``, and is
  measured again only then;
- the pairs no planned joint moves were measured once when the checker was built
  (:attr:`StateChecker.always <bb_robot.planning.validity.StateChecker.always>`).

:func:`~bb_robot.collision.path.check_path` advances every pair by the nearest pair's distance and
every link's motion; per pair, the close but steady pairs of a wrist (1.5–3 cm, whatever the arm
does) no longer hold back the others, and the check costs milliseconds instead of seconds.  Both
are conservative: a path accepted here keeps the clearance at every point of every segment.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.collision.model import CollisionModel, Contact
from bb_robot.collision.path import PathVerdict
from bb_robot.collision.reach import driving_joint, path_joints
from bb_robot.model.transforms import Matrix
from bb_robot.planning.validity import StateChecker

#: Measurements along one path at most; a path that needs more (it runs along the clearance for
#: long) is refused (never unsafe: the planner then reports it).
MAX_STEPS = 20_000


class ExactPairs:
    """Hull distances of chosen part pairs, through coal (the geometry :class:`CollisionModel` measures).

    Args:
        model: the collision model.
        pairs: ``(pairs, 3)``: first part, second part or obstacle, 1 when the second is an obstacle.
    """

    def __init__(self, model: CollisionModel, pairs: npt.NDArray[np.intp]) -> None:
        from bb_robot.collision.shapes import coal_module

        coal = coal_module()
        self._coal = coal
        parts, obstacles = model.parts, model.obstacles
        link_index = {name: i for i, name in enumerate(model.fk.link_names)}
        self._pairs = pairs
        self._parts = parts
        self._frame = [link_index[p.frame or p.link] for p in parts]
        self._local = [np.asarray(p.local, dtype=float) for p in parts]
        self._functors: dict[int, Any] = {}
        self._obstacle_transforms = []
        for part in obstacles:
            transform = coal.Transform3s()
            transform.setTransform(np.ascontiguousarray(part.local[:3, :3]), np.ascontiguousarray(part.local[:3, 3]))
            self._obstacle_transforms.append(transform)
        self._obstacles = obstacles
        self._part_transforms = [coal.Transform3s() for _ in parts]
        self._request = coal.DistanceRequest()
        self._result = coal.DistanceResult()

    def _functor(self, k: int) -> Any:
        functor = self._functors.get(k)
        if functor is None:
            i, j, obstacle = (int(v) for v in self._pairs[k])
            other = self._obstacles[j] if obstacle else self._parts[j]
            functor = self._coal.ComputeDistance(self._parts[i].hull, other.hull)
            self._functors[k] = functor
        return functor

    def _placed(self, frames: Matrix, part: int) -> Any:
        pose = frames[self._frame[part]].reshape(4, 4) @ self._local[part]
        transform = self._part_transforms[part]
        transform.setTransform(np.ascontiguousarray(pose[:3, :3]), np.ascontiguousarray(pose[:3, 3]))
        return transform

    def distances(self, frames: Matrix, hits: npt.NDArray[np.intp]) -> Matrix:
        """The hull distance of each pair of ``hits`` with the links at ``frames`` ``(links, 4, 4)``."""
        result = np.empty(hits.size)
        placed: dict[int, Any] = {}
        for index, k in enumerate(hits.tolist()):
            i, j, obstacle = (int(v) for v in self._pairs[k])
            first = placed.get(i)
            if first is None:
                first = placed[i] = self._placed(frames, i)
            if obstacle:
                second = self._obstacle_transforms[j]
            else:
                second = placed.get(j)
                if second is None:
                    second = placed[j] = self._placed(frames, j)
            self._result.clear()
            result[index] = self._functor(k)(first, second, self._request, self._result)
        return result


class _LocalBound:
    """A tighter approach rate of each pair near a configuration: the distance from each joint's axis.

    Over ``[t, t + Δ]`` a point ``p`` of a part turns about joint ``j``'s axis at the distance
    ``ρ_j``, which at ``t`` is at most the part's bounding sphere's distance from the axis plus its
    radius, and can only grow by the part's motion relative to joint ``j`` (at most the pair's
    whole rate ``m`` times the time).  So the pair approaches by at most
    ``Σ_j |Δq_j| ρ_j(t) · Δ + Σ_j |Δq_j| · m · Δ² / 2``.  Pairs moved by a mimic or prismatic joint
    keep the plain rate alone.
    """

    def __init__(self, checker: StateChecker) -> None:
        model, packed = checker.model, checker.packed
        robot, fk = model.robot, model.fk
        link_index = {name: i for i, name in enumerate(fk.link_names)}
        planned = list(checker.joints)
        self.child = np.array([link_index[robot.joints[j].child_link] for j in planned], dtype=np.intp)
        axes = np.array([robot.joints[j].axis for j in planned], dtype=float).reshape(-1, 3)
        self.axis = axes / np.maximum(np.linalg.norm(axes, axis=1, keepdims=True), 1e-300)
        revolute = np.array([robot.joints[j].type in ("revolute", "continuous") for j in planned])
        count = packed.pairs.shape[0]
        self.moves_a = np.zeros((count, len(planned)))
        self.moves_b = np.zeros((count, len(planned)))
        self.usable = np.ones(count, dtype=bool)
        parts = model.parts
        for k, (i, j, obstacle) in enumerate(packed.pairs.tolist()):
            a = parts[i].frame or parts[i].link
            b = robot.root_link if obstacle else (parts[j].frame or parts[j].link)
            for joints, moves in zip(path_joints(robot, a, b), (self.moves_a, self.moves_b), strict=True):
                for joint in joints:
                    source, _ = driving_joint(robot, joint)
                    if source not in planned:
                        continue
                    column = planned.index(source)
                    if source != joint or not revolute[column]:
                        self.usable[k] = False
                    moves[k, column] = 1.0

    def rates(
        self, frames: Matrix, centers: Matrix, radii: Matrix, pairs: npt.NDArray[np.intp], chosen: npt.NDArray[np.intp],
        step: Matrix,
    ) -> Matrix:  # fmt: skip
        """Each pair's approach rate at ``frames`` (per unit of t; ``step``: the planned joints' ``|Δq|``).

        Args:
            frames: ``(links, 4, 4)``.
            centers: ``(parts, 3)`` the parts' bounding-sphere centres there.
            radii: ``(parts,)`` their radii.
            pairs: the checked pairs.
            chosen: the indices of the pairs wanted.
            step: ``(planned,)`` each planned joint's change over the segment (absolute).

        Returns:
            ``(pairs,)``: ``Σ_j |Δq_j| ρ_j`` (inf for a pair this bound does not apply to).
        """
        origins = frames[self.child, :3, 3]
        axes = np.einsum("jab,jb->ja", frames[self.child, :3, :3], self.axis)
        picked = pairs[chosen]
        rate = np.zeros(chosen.size)
        for column, moves in ((0, self.moves_a), (1, self.moves_b)):
            parts = picked[:, column] if column == 0 else np.where(picked[:, 2] == 1, 0, picked[:, 1])
            o = centers[parts][:, None, :] - origins[None, :, :]  # (chosen, joints, 3)
            a = axes[None, :, :]
            cx = o[..., 1] * a[..., 2] - o[..., 2] * a[..., 1]
            cy = o[..., 2] * a[..., 0] - o[..., 0] * a[..., 2]
            cz = o[..., 0] * a[..., 1] - o[..., 1] * a[..., 0]
            across = np.sqrt(cx * cx + cy * cy + cz * cz) + radii[parts][:, None]
            rate += (moves[chosen] * across) @ step
        return np.asarray(np.where(self.usable[chosen], rate, np.inf))


def _local(checker: StateChecker) -> _LocalBound:
    found = getattr(checker, "_local_bound", None)
    if found is None:
        found = _LocalBound(checker)
        checker._local_bound = found  # type: ignore[attr-defined]  # built once per checker
    return found


def _exact(checker: StateChecker) -> ExactPairs:
    found = getattr(checker, "_exact_pairs", None)
    if found is None:
        found = ExactPairs(checker.model, checker.packed.pairs)
        checker._exact_pairs = found  # type: ignore[attr-defined]  # built once per checker
    return found


def check_planned_path(checker: StateChecker, path: npt.ArrayLike) -> PathVerdict:
    """Whether a polyline of the planned joints keeps the checker's clearance everywhere (module docstring).

    Args:
        checker: the planner's checker (its model, planned joints, base configuration, clearance).
        path: ``(k, len(checker.joints))`` waypoints, followed linearly.

    Returns:
        The verdict: ``ok``; else the segment (``index``) and the pair found nearer than the clearance.
    """
    rows = np.atleast_2d(np.asarray(path, dtype=float))
    if checker.always is not None:
        return PathVerdict(False, 0, checker.always, checker.always.distance, 0)
    packed, model, clearance = checker.packed, checker.model, checker.clearance
    pairs = packed.pairs
    exact = _exact(checker)
    roots = packed.part_root
    radius = packed.node_radius[roots]
    local_center = packed.node_center[roots]
    first, second, obstacle = pairs[:, 0], pairs[:, 1], pairs[:, 2] == 1
    as_obstacle, as_part = np.where(obstacle, second, 0), np.where(obstacle, 0, second)
    other_radius = np.where(obstacle, packed.obstacle_sphere[as_obstacle, 3], radius[as_part])
    reach = packed.pair_reach
    local = _local(checker)
    checks, nearest, budget = 0, math.inf, MAX_STEPS

    def placed(frames: Matrix) -> Matrix:
        centers = np.einsum("kij,kj->ki", frames[packed.part_frame][:, :3, :3], local_center)
        return np.asarray(centers + frames[packed.part_frame][:, :3, 3])

    def free_for(frames: Matrix, centers: Matrix, chosen: npt.NDArray[np.intp], margin: Matrix) -> Matrix:
        """How long (in t) each chosen pair stays free, by the larger of the two bounds."""
        plain = rate[chosen]
        near = local.rates(frames, centers, radius, pairs, chosen, step)
        second = 0.5 * float(step.sum()) * plain
        with np.errstate(divide="ignore", invalid="ignore"):
            coarse = np.where(plain > 0.0, margin / plain, np.inf)
            fine = np.where(second > 0.0, 2 * margin / (near + np.sqrt(near * near + 4 * second * margin)), np.inf)
        return np.asarray(np.maximum(coarse, np.where(np.isfinite(near), fine, 0.0)))

    for s in range(rows.shape[0] - 1):
        q0, q1 = checker.full(rows[s]), checker.full(rows[s + 1])
        rate = reach @ np.abs(q1 - q0)  # each pair's approach per unit of t
        step = np.abs(q1 - q0)[checker.active]
        # every pair at the segment's start: the bounding spheres' gap where it carries the pair to the
        # end, else coal's distance
        frames = model.fk.compute(q0)
        checks += 1
        centers = placed(frames)
        other = np.where(obstacle[:, None], packed.obstacle_sphere[as_obstacle, :3], centers[as_part])
        distance = np.linalg.norm(centers[first] - other, axis=1) - radius[first] - other_radius
        measure = np.flatnonzero(~(distance - clearance >= rate))
        if measure.size:
            distance[measure] = exact.distances(frames, measure)
        nearest = min(nearest, float(distance.min(initial=math.inf)))
        low = int(np.argmin(distance)) if distance.size else -1
        if low >= 0 and distance[low] < clearance:
            return PathVerdict(False, s, _contact(checker, low, float(distance[low])), nearest, checks)
        # each pair is free until its approach has used up its distance less the clearance
        due = free_for(frames, centers, np.arange(pairs.shape[0]), distance - clearance)
        t = float(due.min(initial=np.inf))
        while t < 1.0:
            budget -= 1
            if budget < 0:
                k = int(np.argmin(due))
                return PathVerdict(False, s, _contact(checker, k, clearance), nearest, checks)
            measure = np.flatnonzero(due <= t)
            frames = model.fk.compute(q0 + t * (q1 - q0))
            checks += 1
            distance = exact.distances(frames, measure)
            nearest = min(nearest, float(distance.min()))
            low = int(np.argmin(distance))
            if distance[low] < clearance:
                return PathVerdict(
                    False, s, _contact(checker, int(measure[low]), float(distance[low])), nearest, checks
                )
            due[measure] = t + free_for(frames, placed(frames), measure, distance - clearance)
            t = float(due.min())
    return PathVerdict(True, -1, None, nearest, checks)


def final_check(checker: StateChecker, path: npt.ArrayLike) -> PathVerdict:
    """The planner's last check of its final path: coal at every waypoint, the compiled proof between them.

    Each waypoint is measured by the scene's model itself (coal: contact on the meshes where the
    model checks them, then the hull distances against the clearance); each segment is proven again
    by :meth:`StateChecker.edge_valid` (the exact hull distances, compiled, conservative), which also
    covers the edges the simplifier merged, and where that proof does not conclude, by
    :func:`check_planned_path` on that segment.  :func:`check_planned_path` (coal along every segment)
    is the independent continuous check the tests and the benchmark run on every plan.

    Args:
        checker: the planner's checker.
        path: ``(k, len(checker.joints))`` waypoints.

    Returns:
        The verdict (``index``: the waypoint or segment refused).
    """
    rows = np.atleast_2d(np.asarray(path, dtype=float))
    for index, row in enumerate(rows):
        contact = checker.first_contact(row)
        if contact is not None:
            return PathVerdict(False, index, contact, contact.distance, index + 1)
    for index in range(rows.shape[0] - 1):
        if not checker.edge_valid(rows[index], rows[index + 1]):
            # the compiled proof gave up (its budget) or refused: coal along the segment decides
            verdict = check_planned_path(checker, rows[index : index + 2])
            if verdict.ok:
                continue
            middle = 0.5 * (rows[index] + rows[index + 1])
            contact = checker.first_contact(middle) or checker.model.nearest(checker.full(middle))
            found = contact or Contact(("?", "?"), 0.0, ("?", "?"))
            return PathVerdict(False, index, found, found.distance, rows.shape[0])
    return PathVerdict(True, -1, None, math.inf, rows.shape[0])


def _contact(checker: StateChecker, k: int, distance: float) -> Contact:
    i, j, obstacle = (int(v) for v in checker.packed.pairs[k])
    a = checker.model.parts[i]
    b = checker.model.obstacles[j] if obstacle else checker.model.parts[j]
    links = (a.link, b.link) if a.link <= b.link else (b.link, a.link)
    return Contact(links, distance, (a.label, b.label))

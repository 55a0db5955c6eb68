"""Is a configuration, or a straight joint-space edge, free: spheres first, the exact model where they cannot tell.

:class:`StateChecker` answers for the *planned joints* (a subset of the model's coordinates; the
others stay at the start's values):

- :meth:`StateChecker.valid` — one configuration;
- :meth:`StateChecker.edge_valid` — the whole straight segment between two, continuously: no point
  of it comes nearer than the clearance, not only its samples;
- :meth:`StateChecker.first_contact` — the pair that makes a configuration invalid.

**Two stages.**  The compiled broad phase (:mod:`bb_robot.planning._plan_numba`) samples an edge so
that no link moves more than :data:`RESOLUTION` between samples and tests the robot's sphere trees
(:mod:`bb_robot.planning.spheres`), grown by the clearance and by half a step's motion, against the
obstacles and each other.  A sample it finds clear is clear, with the half steps around it.  Where
it cannot tell ("maybe"), the exact model decides: the scene's
:class:`~bb_robot.collision.model.CollisionModel` (coal, the allowed-collision matrix), measuring the
nearest distance ``d`` at the sample.  Moving ``j`` steps, two links approach each other by at most
``j · m`` (``m`` the most any checked pair approaches in one step: an obstacle pair by the link's
motion, two links by their motions relative to their common ancestor), so from the frontier of
what is proven the edge advances by ``(d - clearance) / m`` steps and measures again (conservative
advancement, with :func:`~bb_robot.collision.path.check_path`'s bound per pair) until the broad
phase clears the samples again.  An edge that needs more than :data:`MAX_EXACT` measurements (it
grazes an obstacle for long) is refused.  So an edge found valid keeps the clearance along its
whole length: the planner's final :func:`check_path` of the path never meets a surprise, and still
has the last word.

**Clearance 0** means contact-free; it is checked as :data:`MIN_CLEARANCE` (10 µm), since the
continuous check needs a positive distance to advance by.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.collision.model import CollisionModel, Contact
from bb_robot.collision.reach import driving_joint, path_joints
from bb_robot.collision.scene import Scene
from bb_robot.model import compiled
from bb_robot.model.transforms import Matrix
from bb_robot.planning.errors import InvalidRequest, PlanningError
from bb_robot.planning.spheres import PackedSpheres, checked_part_pairs, pack

#: The most any link moves between two samples of the broad phase (m).
RESOLUTION = 0.02
#: Clearance 0 is checked as this (m): contact-free, with a positive distance to advance by.
MIN_CLEARANCE = 1e-5
#: A sample the exact model measures covers this many steps to each side at most (its distance
#: query then needs only the pairs within ``clearance + 2 · m · LOOKAHEAD``).
LOOKAHEAD = 4.0
#: Exact distance queries one edge may take; an edge that needs more (it grazes an obstacle for
#: long) is refused: never unsafe, and the search finds another way.
MAX_EXACT = 200

_kernel: list[Any] = []


def edge_kernel() -> Any:
    """The compiled broad phase (the module :mod:`bb_robot.planning._plan_numba`), loaded once.

    Raises:
        PlanningError: numba is missing or cannot compile it (the planner needs it).
    """
    if not _kernel:
        module = compiled.import_kernels("bb_robot.planning._plan_numba", "the planner's sphere check", 15.0)
        if module is None:
            raise PlanningError(
                "the planner needs numba for its sphere check (bb_robot.planning._plan_numba), and it does not "
                "load: run scripts/setup, or `bb-robot kernels` to see why"
            )
        _kernel.append(module)
    return _kernel[0]


@dataclass
class CheckCounts:
    """What a :class:`StateChecker` has done (for reports and benchmarks).

    Attributes:
        states: single configurations checked.
        edges: edges checked.
        samples: broad-phase samples.
        exact: exact distance queries.
    """

    states: int = 0
    edges: int = 0
    samples: int = 0
    exact: int = 0


class StateChecker:
    """Validity of configurations and edges of the planned joints (see the module docstring).

    Args:
        scene: the scene (its model as it is now), or a collision model.
        joints: the planned joints, in the order the configurations give them (default: every
            coordinate of the model, :attr:`ForwardKinematics.joint_names`).
        base: values of every coordinate, in :attr:`ForwardKinematics.joint_names` order; the joints
            not planned keep them (default: zeros).
        clearance: the least distance kept (m, ≥ 0; 0 is checked as :data:`MIN_CLEARANCE`).
        resolution: the broad phase's largest link motion between samples (m).

    Attributes:
        model: the collision model checked against.
        joints: the planned joints.
        clearance: the clearance as checked (at least :data:`MIN_CLEARANCE`).
        counts: the work done so far.

    Raises:
        InvalidRequest: an unknown joint, a repeated one, a bad ``base`` or clearance.
    """

    def __init__(
        self,
        scene: Scene | CollisionModel,
        joints: Sequence[str] | None = None,
        base: npt.ArrayLike | None = None,
        clearance: float = 0.0,
        resolution: float = RESOLUTION,
    ) -> None:
        self.model: CollisionModel = scene.model if isinstance(scene, Scene) else scene
        names = self.model.fk.joint_names
        self.joints: tuple[str, ...] = tuple(names if joints is None else joints)
        unknown = [j for j in self.joints if j not in names]
        if unknown:
            raise InvalidRequest(
                f"joint '{unknown[0]}' is not a coordinate of robot '{self.model.robot.name}' "
                f"(its joints: {', '.join(names)})"
            )
        if len(set(self.joints)) != len(self.joints):
            raise InvalidRequest(f"the planned joints name a joint twice: {list(self.joints)}")
        if not (math.isfinite(clearance) and clearance >= 0.0):
            raise InvalidRequest(f"clearance must be a finite distance ≥ 0 m, got {clearance}")
        if not (math.isfinite(resolution) and resolution > 0.0):
            raise InvalidRequest(f"resolution must be a finite distance > 0 m, got {resolution}")
        self.active = np.array([names.index(j) for j in self.joints], dtype=np.intp)
        full = np.zeros(len(names)) if base is None else np.asarray(base, dtype=float).copy()
        if full.shape != (len(names),) or not np.isfinite(full).all():
            raise InvalidRequest(f"base configuration needs {len(names)} finite values, got {full.tolist()}")
        self.base = full
        self.clearance = max(float(clearance), MIN_CLEARANCE)
        self.resolution = float(resolution)
        self.counts = CheckCounts()
        moving, fixed = self._split_pairs()
        self.packed: PackedSpheres = pack(self.model, moving)
        #: A pair no planned joint moves, nearer than the clearance: nothing is valid (its Contact).
        self.always: Contact | None = self._fixed_contact(fixed)
        kernels = edge_kernel()
        self._check_edge, self._pairs_near = kernels.check_edge, kernels.pairs_near
        program = self.model.fk.program()
        self._code = np.ascontiguousarray(program.code.copy())
        self._code.setflags(write=False)
        self._work = np.empty_like(program.work)
        self._flags = np.zeros(1024, dtype=np.uint8)
        count = self.packed.pairs.shape[0]
        self._rate = np.zeros(count)  # each pair's approach per step of the last edge
        self._grow = np.zeros(count)
        self._hit = np.zeros(count, dtype=np.intp)
        self._frames = np.zeros((len(self.model.fk.link_names), 16))
        p = self.packed
        self._trees = (p.node_center, p.node_radius, p.node_child, p.part_root, p.part_frame)
        self._world = (p.obstacle_kind, p.obstacle_pose, p.obstacle_sphere, p.obstacle_dims, p.pairs)
        self._info = np.zeros(2, dtype=np.intp)
        self._exact = _ExactPairs(self.model, p.pairs)

    def _split_pairs(self) -> tuple[list[tuple[int, int, bool]], list[tuple[int, int, bool]]]:
        """The checked part pairs some planned joint moves relative to each other, and the others.

        A pair no planned joint moves keeps its distance through the whole plan: it is measured
        once (:attr:`always`), not at every sample.
        """
        robot, planned = self.model.robot, set(self.joints)
        parts, obstacles = self.model.parts, self.model.obstacles

        def movers(link: str, other: str) -> set[str]:
            first, second = path_joints(robot, link, other)
            return {driving_joint(robot, j)[0] for j in first + second}

        moving: list[tuple[int, int, bool]] = []
        fixed: list[tuple[int, int, bool]] = []
        for i, j, obstacle in checked_part_pairs(self.model):
            a = parts[i].frame or parts[i].link
            b = robot.root_link if obstacle else (parts[j].frame or parts[j].link)
            (moving if movers(a, b) & planned else fixed).append((i, j, obstacle))
        del obstacles
        return moving, fixed

    def _fixed_contact(self, fixed: Sequence[tuple[int, int, bool]]) -> Contact | None:
        """The nearest of the pairs no planned joint moves, if nearer than the clearance (at :attr:`base`)."""
        if not fixed:
            return None
        wanted = set()
        parts, obstacles = self.model.parts, self.model.obstacles
        for i, j, obstacle in fixed:
            wanted.add(tuple(sorted((parts[i].label, (obstacles[j] if obstacle else parts[j]).label))))
        nearest: Contact | None = None
        for labels, distance in self.model.pair_distances(self.base).items():
            if tuple(sorted(labels)) in wanted and distance < self.clearance:
                if nearest is None or distance < nearest.distance:
                    nearest = self._label_contact(labels, distance)
        return nearest

    def _label_contact(self, labels: tuple[str, str], distance: float) -> Contact:
        by_label = {p.label: p.link for p in self.model.parts + self.model.obstacles}
        a, b = by_label[labels[0]], by_label[labels[1]]
        return Contact((a, b) if a <= b else (b, a), distance, labels)

    # ------------------------------------------------------------------ configurations
    def full(self, x: npt.ArrayLike) -> Matrix:
        """The model's whole configuration for planned-joint values ``x`` (the others at :attr:`base`).

        Args:
            x: values of :attr:`joints`.

        Returns:
            ``(n_coordinates,)``, C-contiguous.
        """
        q = self.base.copy()
        q[self.active] = x
        return q

    def _broad(self, q0: Matrix, q1: Matrix) -> tuple[int, Any] | None:
        """The broad phase along ``q0 → q1``, coarse to fine; each sample it cannot clear is measured at once.

        Returns:
            ``None`` when a measured sample is nearer than the clearance (the edge is invalid); else
            the number of steps and each sample's flag (1: the spheres could not clear it).
        """
        place = 0
        while True:
            place = int(
                self._check_edge(self._code, self._work, q0, q1, self.resolution, self.clearance, *self._trees,
                                 *self._world, self.packed.pair_reach, place, self._flags, self._rate, self._info)
            )  # fmt: skip
            steps = int(self._info[0])
            if place == -2:
                self._flags = np.zeros(2 * (steps + 1), dtype=np.uint8)
                place = 0
                continue
            if place == -1:
                self.counts.samples += steps + 1
                return steps, self._flags[: steps + 1]
            sample = int(self._info[1])
            t = sample / steps if steps > 0 else 0.0
            if not self._state_free(q0 + t * (q1 - q0)):
                self.counts.samples += place + 1
                return None
            place += 1

    def _near(self, q: Matrix, grow: Matrix) -> int:
        """The pairs whose spheres, grown by ``grow`` and the clearance, meet at ``q`` (into ``_hit``).

        The links' frames at ``q`` are left in ``_frames``.
        """
        return int(
            self._pairs_near(self._code, self._work, q, self.clearance, *self._trees, *self._world, grow,
                             self._hit, self._frames)
        )  # fmt: skip

    def _state_free(self, q: Matrix) -> bool:
        """One configuration: the spheres, then the exact distance of the pairs they cannot clear."""
        self._grow[:] = 0.0
        count = self._near(q, self._grow)
        if count < 0:
            return False
        if count == 0:
            return True
        self.counts.exact += 1
        return bool(self._exact.distances(self._frames, self._hit[:count]).min() >= self.clearance)

    def valid(self, x: npt.ArrayLike) -> bool:
        """Whether planned-joint values ``x`` are free by the clearance.

        Args:
            x: values of :attr:`joints` (non-finite values are never valid).

        Returns:
            ``True`` when free.
        """
        self.counts.states += 1
        q = self.full(x)
        if self.always is not None or not np.isfinite(q).all():
            return False
        return self._state_free(q)

    def first_contact(self, x: npt.ArrayLike) -> Contact | None:
        """The pair that makes ``x`` invalid (in contact, or nearer than the clearance), or ``None``.

        Args:
            x: values of :attr:`joints`.

        Returns:
            The pair and its distance (0 or less for contact; hull distance otherwise).
        """
        if self.always is not None:
            return self.always
        q = self.full(x)
        touching = self.model.colliding(q, first=True)
        if touching:
            return touching[0]
        return self.model.nearest(q, self.clearance)

    # ------------------------------------------------------------------ edges
    def edge_valid(self, x0: npt.ArrayLike, x1: npt.ArrayLike) -> bool:
        """Whether the straight segment between planned-joint values ``x0`` and ``x1`` keeps the clearance throughout.

        Args:
            x0: values of :attr:`joints` at one end.
            x1: at the other.

        Returns:
            ``True`` when every configuration of the segment (not only samples) is free.
        """
        self.counts.edges += 1
        q0, q1 = self.full(x0), self.full(x1)
        if self.always is not None or not (np.isfinite(q0).all() and np.isfinite(q1).all()):
            return False
        broad = self._broad(q0, q1)
        if broad is None:
            return False
        steps, flags = broad
        if steps == 0 or not flags.any():
            return True
        delta = (q1 - q0) / steps
        rate, grow, clearance = self._rate, self._grow, self.clearance
        covered = 0.0  # [0, covered] (in steps) is known free
        budget = MAX_EXACT
        for s in range(steps + 1):
            end = min(s + 0.5, float(steps))
            if covered >= end:
                continue
            if not flags[s]:
                covered = end  # the broad phase clears [s - 1/2, s + 1/2], and covered >= s - 1/2
                continue
            # Conservative advancement from the frontier t to end: a pair whose spheres at t, grown by
            # its approach until end, stay apart is free until end; each other pair is measured, and
            # is free until its approach has used up its distance less the clearance.
            t = covered
            while t < end:
                budget -= 1
                if budget < 0:
                    return False  # grazing: too near for too long to prove cheaply; refused (never unsafe)
                np.multiply(rate, end - t, out=grow)
                count = self._near(q0 + t * delta, grow)
                if count == 0:
                    t = end
                    break
                hit = self._hit[:count]
                self.counts.exact += 1
                distances = self._exact.distances(self._frames, hit)
                if distances.min() < clearance:
                    return False
                rates = rate[hit]
                with np.errstate(divide="ignore"):
                    reach = np.where(rates > 0.0, (distances - clearance) / rates, np.inf)
                t = min(end, t + float(reach.min()))
            covered = end
        return True

    def path_valid(self, path: npt.ArrayLike) -> bool:
        """Whether every edge of a path (rows of planned-joint values) is valid.

        Args:
            path: ``(n, len(joints))``.

        Returns:
            ``True`` when each consecutive pair is :meth:`edge_valid`.
        """
        rows = np.asarray(path, dtype=float)
        return all(self.edge_valid(rows[i], rows[i + 1]) for i in range(rows.shape[0] - 1))


class _ExactPairs:
    """Hull distances of chosen part pairs, through coal (the geometry :class:`CollisionModel` measures)."""

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
        """The hull distance of each pair of ``hits`` with the links at ``frames`` ``(links, 16)``."""
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

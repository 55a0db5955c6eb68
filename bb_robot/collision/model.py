"""The collision model of one robot: its parts placed by forward kinematics, and the queries.

:class:`CollisionModel` places every :class:`~bb_robot.collision.shapes.Part` with the model's
:class:`~bb_robot.model.kinematics.ForwardKinematics` and answers, for one configuration or a
batch:

- :meth:`CollisionModel.colliding` — the checked link pairs in contact (convex hulls by default,
  triangle meshes with ``exact=True``);
- :meth:`CollisionModel.nearest` — the nearest checked pair and its distance (hulls).

How the work reaches coal in batches: the bounding spheres of all checked part pairs are
compared in one numpy pass, so only the pairs whose spheres overlap (for contact) or that can
still beat the nearest distance found (for distance) are handed to coal's narrow phase, each
through a prepared ``ComputeCollision`` / ``ComputeDistance`` functor.  A pair whose spheres are
apart cannot touch, so culling never changes an answer.

Which pairs are checked: every pair of parts on different links, minus the pairs the
allowed-collision matrix disables (:meth:`CollisionModel.with_allowed`) — and always minus parts
of the same link.  World obstacles (:mod:`bb_robot.collision.world`) join as parts of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.collision.shapes import Part, coal_module
from bb_robot.model import compiled
from bb_robot.model.batch import contiguous_vector
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot
from bb_robot.model.transforms import Matrix

LinkPair = tuple[str, str]
#: Two parts whose relative rotation and translation (m) differ by no more than this between two
#: configurations stand as they stood (:meth:`CollisionModel.pair_moves`): the forward kinematics' own
#: rounding is about 1e-15; a picometre is no motion.
SAME_PLACEMENT = 1e-12

_kernel: list[Callable[..., int] | None] = []  # empty until first needed


def placement_kernel() -> Callable[..., int] | None:
    """The compiled placement step (:func:`bb_robot.collision._placement_numba.place`), or ``None``.

    ``None`` with ``BB_ROBOT_KERNEL=numpy``, or when numba is missing or fails (logged once): the
    numpy path gives the same poses and distances.  Like the servo's cycle it is used even where
    the nodes keep one configuration's kinematics in Python: a driver's collision guard checks
    many times a second.
    """
    if compiled.mode() == "numpy":
        return None
    if not _kernel:
        module = compiled.import_kernels(
            "bb_robot.collision._placement_numba",
            "the collision placement kernel",
            compiled.KERNEL_SECONDS["placement"],
        )
        _kernel.append(module.place if module is not None else None)
    return _kernel[0]


def link_pair(a: str, b: str) -> LinkPair:
    """The pair of two link names in canonical (sorted) order."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True)
class Contact:
    """A checked pair of links closest together (or in contact).

    Attributes:
        links: the two links, sorted.
        distance: the distance between their geometries in metres (0 for a contact found by
            :meth:`CollisionModel.colliding`; negative, a penetration depth, from :meth:`CollisionModel.nearest`).
        parts: the two parts' labels.
    """

    links: LinkPair
    distance: float
    parts: tuple[str, str]


class CollisionModel:
    """Collision geometry of one robot (and optional static obstacles), placed by its FK.

    Args:
        robot: the model.
        parts: the robot's parts (:func:`bb_robot.collision.shapes.robot_parts`), and those of objects
            attached to its links (their ``frame`` names the link).
        disabled: link pairs never checked (the allowed-collision matrix's disabled pairs).
        obstacles: static parts fixed in the root frame (``link`` names the obstacle);
            their ``local`` is their pose in the root link's frame.
    """

    def __init__(
        self,
        robot: Robot,
        parts: Sequence[Part],
        disabled: Iterable[LinkPair] = (),
        obstacles: Sequence[Part] = (),
    ) -> None:
        self.robot = robot
        self.fk = ForwardKinematics(robot)
        self.parts: tuple[Part, ...] = tuple(parts)
        self.obstacles: tuple[Part, ...] = tuple(obstacles)
        self.disabled: frozenset[LinkPair] = frozenset(link_pair(*p) for p in disabled)
        everything = self.parts + self.obstacles
        link_index = {name: i for i, name in enumerate(self.fk.link_names)}
        robot_links = len(self.parts)
        # Obstacles sit on the root link (index 0 of the FK's link order).
        self._link_of = np.array(
            [link_index[p.frame or p.link] for p in self.parts] + [0] * len(self.obstacles), dtype=np.intp
        )
        self._local = np.ascontiguousarray(np.array([p.local for p in everything], dtype=float).reshape(-1, 4, 4))
        self._centers = np.ascontiguousarray(
            np.array([np.append(p.center, 1.0) for p in everything], dtype=float).reshape(-1, 4)
        )
        self._radii = np.array([p.radius for p in everything])
        first, second = [], []
        for i in range(len(everything)):
            for j in range(i + 1, len(everything)):
                a, b = everything[i], everything[j]
                if a.link == b.link or (i >= robot_links and j >= robot_links):
                    continue
                if link_pair(a.link, b.link) in self.disabled:
                    continue
                first.append(i)
                second.append(j)
        self._first = np.array(first, dtype=np.intp)
        self._second = np.array(second, dtype=np.intp)
        self._reach = self._radii[self._first] + self._radii[self._second]
        self._reach2 = self._reach**2
        # centre differences of all pairs in one product: row k is +1 at first[k], -1 at second[k].
        self._difference = np.zeros((len(first), len(everything)))
        self._difference[np.arange(len(first)), self._first] = 1.0
        self._difference[np.arange(len(first)), self._second] = -1.0
        self._centers3 = np.ascontiguousarray(self._centers[:, :, None])
        self._ones3 = np.ones(3)
        self._first_list: list[int] = self._first.tolist()
        self._second_list: list[int] = self._second.tolist()
        coal = coal_module()
        self._coal = coal
        self._collide_hull = [
            coal.ComputeCollision(everything[i].hull, everything[j].hull) for i, j in zip(first, second, strict=True)
        ]
        self._collide_exact = [
            coal.ComputeCollision(everything[i].exact, everything[j].exact) for i, j in zip(first, second, strict=True)
        ]
        self._distance = [
            coal.ComputeDistance(everything[i].hull, everything[j].hull) for i, j in zip(first, second, strict=True)
        ]
        # Yes/no contact, as Pinocchio asks it: no contact points or penetration depth (EPA), and
        # GJK may stop as soon as the shapes are known to be apart.
        self._link_pairs = [
            link_pair(everything[i].link, everything[j].link) for i, j in zip(first, second, strict=True)
        ]
        # One coal transform per part and one result of each kind, set in place for each query:
        # building them anew costs more than the narrow phase of most pairs.  (So a model is not
        # shared between threads.)
        self._transforms = [coal.Transform3s() for _ in everything]
        self._collision_result = coal.CollisionResult()
        self._distance_result = coal.DistanceResult()
        self._collision_request = coal.CollisionRequest()
        self._collision_request.enable_contact = False
        self._collision_request.distance_upper_bound = 1e-6
        self._distance_request = coal.DistanceRequest()
        self._everything = everything
        self._arity = len(self.fk.joint_names)
        self._checked_parts: list[int] = sorted(set(first) | set(second))
        self._outputs: tuple[Matrix, Matrix, Matrix, npt.NDArray[np.intp]] = ()  # type: ignore[assignment]
        #: Each pair's Contact at distance 0 (what colliding returns), made once.
        self._touching = [self._contact(k, 0.0) for k in range(len(first))]
        # Each part's bounding box in its link's frame, aligned with it (the compiled placement's
        # second cull); inf where a part has no points (the floor).
        self._box_centers = np.zeros((len(everything), 3))
        self._box_halves = np.full((len(everything), 3), np.inf)
        for index, part in enumerate(everything):
            if part.points.size:
                low, high = part.points.min(axis=0), part.points.max(axis=0)
                self._box_centers[index], self._box_halves[index] = (low + high) / 2, (high - low) / 2
        self._program: compiled.Program | None = None
        self._work = np.empty(0)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickle as what built it: another process builds the same model (the same pairs, in the same order).

        Mesh parts' convex hulls pickle as their vertices (:mod:`bb_robot.collision.portable`).
        """
        from bb_robot.collision import portable

        portable.register()
        return (CollisionModel, (self.robot, self.parts, self.disabled, self.obstacles))

    # ------------------------------------------------------------------ structure
    @property
    def pairs(self) -> tuple[LinkPair, ...]:
        """The checked link pairs, sorted, each once."""
        parts = self._everything
        first, second = self._first.tolist(), self._second.tolist()
        return tuple(sorted({link_pair(parts[i].link, parts[j].link) for i, j in zip(first, second, strict=True)}))

    @property
    def links_with_geometry(self) -> tuple[str, ...]:
        """The robot's links that have collision geometry, in link order."""
        return tuple(dict.fromkeys(p.link for p in self.parts))

    def with_allowed(self, disabled: Iterable[LinkPair]) -> CollisionModel:
        """The same model with ``disabled`` link pairs left out (in addition to none else).

        Args:
            disabled: the pairs the allowed-collision matrix disables.

        Returns:
            A new model; parts and obstacles are shared.
        """
        return CollisionModel(self.robot, self.parts, disabled, self.obstacles)

    def with_obstacles(self, obstacles: Sequence[Part]) -> CollisionModel:
        """The same model with static ``obstacles`` (fixed in the root frame) replacing any it had."""
        return CollisionModel(self.robot, self.parts, self.disabled, obstacles)

    # ------------------------------------------------------------------ placement
    def placements(self, q: npt.ArrayLike) -> Matrix:
        """Every part's 4×4 pose in the root frame for one configuration, robot parts then obstacles.

        Args:
            q: joint coordinates in :attr:`ForwardKinematics.joint_names` order.

        Returns:
            An array ``(n_parts, 4, 4)``.

        Raises:
            InvalidJointValue: a wrong shape or a non-finite value.
        """
        frames = self.fk.compute(q)
        return np.asarray(frames[self._link_of] @ self._local)

    def _placed(self, q: npt.ArrayLike) -> tuple[Matrix, Matrix, Matrix, list[int]]:
        """Every part's rotation and translation; each checked pair's squared distance between
        bounding-sphere centres; the pairs that may touch (the candidates for contact).

        With the compiled kernel the arrays are the model's own, overwritten by the next query.
        """
        kernel = placement_kernel()
        if kernel is not None and contiguous_vector(q, self._arity):
            program = self._program or self._make_program()
            rotations, translations, squared, candidates = self._outputs  # reused: one query at a time
            count = kernel(
                program.code,
                q,
                self._work,
                self._link_of,
                self._local,
                self._centers,
                self._box_centers,
                self._box_halves,
                self._first,
                self._second,
                self._reach2,
                rotations,
                translations,
                squared,
                candidates,
            )
            if count >= 0:
                return rotations, translations, squared, candidates[:count].tolist()
        return self._numpy_placed(q)  # also what raises for a non-finite value or a wrong shape

    def _make_program(self) -> compiled.Program:
        self._program = self.fk.program()
        self._work = np.empty_like(self._program.work)  # the model's own scratch (one thread at a time)
        parts, pairs = len(self._everything), self._first.size
        self._outputs = (np.empty((parts, 3, 3)), np.empty((parts, 3)), np.empty(pairs), np.empty(pairs, dtype=np.intp))
        return self._program

    def _numpy_placed(self, q: npt.ArrayLike) -> tuple[Matrix, Matrix, Matrix, list[int]]:
        """:meth:`_placed` with numpy (without the compiled kernel)."""
        placed = self.fk.compute(q)[self._link_of]
        between = self._difference @ (placed[:, :3] @ self._centers3)[:, :, 0]
        poses = placed @ self._local
        squared = np.square(between) @ self._ones3
        rotations, translations = self._split(poses)
        return rotations, translations, squared, np.flatnonzero(squared <= self._reach2).tolist()

    @staticmethod
    def _split(poses: Matrix) -> tuple[Matrix, Matrix]:
        """Rotations and translations of 4×4 poses, each C-contiguous (what coal takes fastest)."""
        return np.ascontiguousarray(poses[..., :3, :3]), np.ascontiguousarray(poses[..., :3, 3])

    def _place(self, rotations: Matrix, translations: Matrix, pairs: Sequence[int] | None = None) -> list[Any]:
        """Set the coal transforms of the parts of ``pairs`` (every checked part for ``None``)."""
        transforms = self._transforms
        if pairs is None:
            parts: Iterable[int] = self._checked_parts
        else:
            first, second = self._first_list, self._second_list
            parts = {first[k] for k in pairs} | {second[k] for k in pairs}
        for i in parts:
            transforms[i].setTransform(rotations[i], translations[i])
        return transforms

    def _contacts(
        self, rotations: Matrix, translations: Matrix, pairs: Sequence[int], exact: bool, first: bool
    ) -> list[int]:
        """The pairs (indices) among ``pairs`` in contact with the parts placed so."""
        if not pairs:
            return []
        transforms = self._place(rotations, translations, pairs)
        functors = self._collide_exact if exact else self._collide_hull
        request, result = self._collision_request, self._collision_result
        first_part, second_part = self._first_list, self._second_list
        found = []
        for k in pairs:
            result.clear()
            if functors[k](transforms[first_part[k]], transforms[second_part[k]], request, result):
                found.append(k)
                if first:
                    break
        return found

    # ------------------------------------------------------------------ queries
    def colliding(self, q: npt.ArrayLike, exact: bool = False, first: bool = False) -> list[Contact]:
        """The checked pairs in contact at one configuration.

        Args:
            q: joint coordinates in :attr:`ForwardKinematics.joint_names` order.
            exact: compare triangle meshes instead of their convex hulls.
            first: stop at the first pair in contact.

        Returns:
            One :class:`Contact` per part pair in contact (``distance`` 0).

        Raises:
            InvalidJointValue: a wrong shape or a non-finite value.
        """
        rotations, translations, _, candidates = self._placed(q)
        found = self._contacts(rotations, translations, candidates, exact, first)
        touching = self._touching
        return [touching[k] for k in found]

    def _contact(self, k: int, distance: float) -> Contact:
        a, b = self._everything[int(self._first[k])], self._everything[int(self._second[k])]
        return Contact(link_pair(a.link, b.link), distance, (a.label, b.label))

    def in_collision(self, q: npt.ArrayLike, exact: bool = False) -> bool:
        """Whether any checked pair is in contact at ``q`` (stops at the first); see :meth:`colliding`."""
        return bool(self.colliding(q, exact=exact, first=True))

    def nearest(self, q: npt.ArrayLike, limit: float = np.inf) -> Contact | None:
        """The nearest checked pair at ``q`` and its distance, between convex hulls.

        Pairs whose bounding spheres are farther apart than the best distance found so far (or
        than ``limit``) are not computed: they cannot be nearer.

        Args:
            q: joint coordinates in :attr:`ForwardKinematics.joint_names` order.
            limit: distances beyond this do not matter (``None`` is returned if every pair is farther).

        Returns:
            The nearest :class:`Contact`, or ``None`` when no checked pair is within ``limit``
            (or there is no checked pair).

        Raises:
            InvalidJointValue: a wrong shape or a non-finite value.
        """
        k, distance = self.nearest_pair(q, limit)
        return None if k < 0 else self._contact(k, distance)

    def nearest_pair(self, q: npt.ArrayLike, limit: float = np.inf) -> tuple[int, float]:
        """:meth:`nearest` as the pair's index and its distance (``(-1, limit)`` when none is within ``limit``).

        The index names the pair through :meth:`pair_contact`, in this model or in any model built
        from the same parts, matrix and obstacles (a pickled copy in another process).
        """
        if self._first.size == 0:
            return -1, float(limit)
        rotations, translations, squared, _ = self._placed(q)
        gaps = np.sqrt(squared) - self._reach
        order = np.argsort(gaps)
        candidates = order[: int(np.searchsorted(gaps[order], limit))].tolist()
        if not candidates:
            return -1, float(limit)
        transforms = self._place(rotations, translations)
        best, best_k = float(limit), -1
        request, result = self._distance_request, self._distance_result
        first_part, second_part, functors = self._first_list, self._second_list, self._distance
        for k in candidates:
            if gaps[k] >= best:
                break
            result.clear()
            distance = functors[k](transforms[first_part[k]], transforms[second_part[k]], request, result)
            if distance < best:
                best, best_k = distance, k
        return best_k, float(best)

    def pair_moves(self, k: int, q: npt.ArrayLike, other: npt.ArrayLike) -> bool:
        """Whether checked pair ``k``'s two parts stand otherwise relative to each other at ``other`` than at ``q``.

        A motion that leaves them as they are (the joints it moves are not between their links) does not
        change their distance, though coal measures it up to its tolerance (1 µm) apart at two poses.

        Args:
            k: the pair (an index :meth:`nearest_pair` gave).
            q: one configuration.
            other: the other.

        Returns:
            True when their relative rotation or translation differs by more than :data:`SAME_PLACEMENT`.
        """
        i, j = self._first_list[k], self._second_list[k]

        def relative(configuration: npt.ArrayLike) -> tuple[Matrix, Matrix]:
            rotations, translations, _, _ = self._placed(configuration)  # (the model's own arrays: used at once)
            inverse = rotations[i].T
            return inverse @ rotations[j], inverse @ (translations[j] - translations[i])

        rotation, translation = relative(q)
        other_rotation, other_translation = relative(other)
        return bool(
            np.max(np.abs(rotation - other_rotation)) > SAME_PLACEMENT
            or np.max(np.abs(translation - other_translation)) > SAME_PLACEMENT
        )

    def pair_contact(self, k: int, distance: float) -> Contact:
        """The :class:`Contact` of checked pair ``k`` (an index :meth:`nearest_pair` gave) at ``distance``.

        Raises:
            IndexError: no such pair.
        """
        if not 0 <= k < self._first.size:
            raise IndexError(f"collision model of '{self.robot.name}': no checked pair {k} (it has {self._first.size})")
        return self._contact(k, distance)

    def pair_frames(self) -> list[tuple[str | None, str | None]]:
        """Each checked pair's two frames, in pair order: the link a part moves with, ``None`` for an obstacle."""
        robot = len(self.parts)

        def frame(i: int) -> str | None:
            return None if i >= robot else (self.parts[i].frame or self.parts[i].link)

        return [(frame(i), frame(j)) for i, j in zip(self._first_list, self._second_list, strict=True)]

    def pair_lower_distances(self, q: npt.ArrayLike, within: float) -> npt.NDArray[np.float64]:
        """Each checked pair's distance at ``q``, in pair order, or a lower bound of it: the hulls' distance where
        their bounding spheres are less than ``within`` apart, else the gap between the spheres (no coal query).

        Args:
            q: the configuration.
            within: sphere gaps (m) below which the distance is measured.

        Returns:
            ``(n_pairs,)`` metres.
        """
        rotations, translations, squared, _ = self._placed(q)
        distances = np.sqrt(squared) - self._reach
        near = np.flatnonzero(distances < within).tolist()
        if near:
            transforms = self._place(rotations, translations, near)
            request, result = self._distance_request, self._distance_result
            for k in near:
                result.clear()
                distances[k] = self._distance[k](
                    transforms[self._first_list[k]], transforms[self._second_list[k]], request, result
                )
        return np.asarray(distances, dtype=float)

    def pair_distances(self, q: npt.ArrayLike) -> dict[tuple[str, str], float]:
        """Every checked part pair's hull distance at ``q``, keyed by the parts' labels (for tests and reports)."""
        rotations, translations, _, _ = self._placed(q)
        every = list(range(self._first.size))
        transforms = self._place(rotations, translations)
        result: dict[tuple[str, str], float] = {}
        for k in every:
            i, j = int(self._first[k]), int(self._second[k])
            self._distance_result.clear()
            value = self._distance[k](transforms[i], transforms[j], self._distance_request, self._distance_result)
            result[(self._everything[i].label, self._everything[j].label)] = float(value)
        return result

    def colliding_batch(self, q: npt.ArrayLike, exact: bool = True) -> list[frozenset[LinkPair]]:
        """The link pairs in contact for each configuration of a batch (one FK pass for all).

        Args:
            q: ``(batch, n)`` joint coordinates.
            exact: compare triangle meshes (the default here: the collision matrix needs contact, not hulls).

        Returns:
            One set of link pairs per configuration.

        Raises:
            InvalidJointValue: a wrong shape or a non-finite value.
        """
        return self.contacts_batch(q, exact)[0]

    def contacts_batch(self, q: npt.ArrayLike, exact: bool = True) -> tuple[list[frozenset[LinkPair]], Matrix]:
        """:meth:`colliding_batch`, and how near each checked link pair's bounding spheres come in each configuration.

        Args:
            q: ``(batch, n)`` joint coordinates.
            exact: compare triangle meshes.

        Returns:
            One set of link pairs in contact per configuration, and ``(batch, len(pairs))``: for each
            checked link pair (:attr:`pairs` order), the smallest gap between the bounding spheres of
            its parts (negative where they overlap): a lower bound of the pair's distance.

        Raises:
            InvalidJointValue: a wrong shape or a non-finite value.
        """
        frames = np.asarray(self.fk.compute(np.atleast_2d(np.asarray(q, dtype=float))))
        placed = frames[:, self._link_of]
        centers = np.einsum("bpij,pj->bpi", placed[:, :, :3], self._centers)
        gaps = np.linalg.norm(centers[:, self._first] - centers[:, self._second], axis=2) - self._reach
        nothing: frozenset[LinkPair] = frozenset()
        results = [nothing] * frames.shape[0]
        # Only the configurations where some pair's spheres overlap reach coal, with their parts placed then.
        samples, pairs = np.nonzero(gaps <= 0.0)
        bounds = np.flatnonzero(np.diff(samples)) + 1
        firsts = samples[np.append(0, bounds)] if samples.size else samples
        for sample_pairs, sample in zip(np.split(pairs, bounds), firsts, strict=False):
            rotations, translations = self._split(placed[sample] @ self._local)
            found = self._contacts(rotations, translations, sample_pairs.tolist(), exact, False)
            results[int(sample)] = frozenset(self._link_pairs[k] for k in found)
        order, starts = self._pair_groups()
        link_gaps = np.minimum.reduceat(gaps[:, order], starts, axis=1) if starts.size else gaps[:, :0]
        return results, link_gaps

    def _pair_groups(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """The part pairs ordered by their link pair (:attr:`pairs` order) and where each link pair starts."""
        index = {pair: i for i, pair in enumerate(self.pairs)}
        keys = np.array([index[pair] for pair in self._link_pairs], dtype=np.intp)
        order = np.argsort(keys, kind="stable")
        starts = np.flatnonzero(np.diff(np.concatenate(([-1], keys[order])))) if keys.size else keys
        return order.astype(np.intp), starts.astype(np.intp)

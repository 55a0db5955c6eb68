"""Is a configuration, or a straight joint-space edge, free: spheres first, the exact model where they cannot tell.

:class:`StateChecker` answers for the *planned joints* (a subset of the model's coordinates; the
others stay at the start's values):

- :meth:`StateChecker.valid` — one configuration;
- :meth:`StateChecker.edge_valid` — the whole straight segment between two, continuously: no point
  of it comes nearer than the clearance, not only its samples;
- :meth:`StateChecker.first_contact` — the pair that makes a configuration invalid.

**One compiled check** (:mod:`bb_robot.planning._plan_numba`, :func:`edge_kernel`): the edge is cut
into intervals within which no checked pair approaches by more than :data:`RESOLUTION` (each pair's
own bound: an obstacle pair by its part's motion, two parts by their motions relative to their
common ancestor, :class:`~bb_robot.collision.path.MotionBound`'s bound); an interval is proven at
its centre when every pair keeps the clearance plus its approach over the half interval, first by
the sphere trees (:mod:`bb_robot.planning.spheres`), then by GJK's lower bound on the parts' own
hulls (the geometry :class:`~bb_robot.collision.model.CollisionModel` measures, never smaller);
undecided intervals are halved, up to :data:`MAX_EVALUATIONS`.  So an edge found valid keeps the
clearance at every point; a configuration is the same test with both ends equal.  Pairs that one
or two planned joints move relative to each other and that stay apart over those joints' whole
ranges (a wrist's neighbours) are proven once when the checker is built (:attr:`StateChecker.steady`).
The scene's model itself (coal) answers :meth:`StateChecker.first_contact`, and checks the final
path (:func:`bb_robot.planning.exact.final_check`).

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

from bb_robot.collision.matrix import joint_bounds
from bb_robot.collision.model import CollisionModel, Contact
from bb_robot.collision.reach import driving_joint, path_joints
from bb_robot.collision.scene import Scene
from bb_robot.model import compiled
from bb_robot.model.transforms import Matrix
from bb_robot.planning.errors import InvalidRequest, PlanningError
from bb_robot.planning.spheres import PackedSpheres, checked_part_pairs, pack

#: The most any link moves between two samples of the broad phase (m).
RESOLUTION = 0.05
#: Clearance 0 is checked as this (m): contact-free, with a positive distance to advance by.
MIN_CLEARANCE = 1e-5
#: The clearance of plans meant for the driver (m): its default ``collision.clearance`` (2 mm) plus a
#: 1 mm margin, so that its guard accepts every plan (the default of ``bb-robot plan``, of Cartesian
#: paths and of the move_group node; test/cli/test_plan_command.py checks it against the driver's).
DRIVER_CLEARANCE = 0.003
#: Two-joint steady pairs (:meth:`StateChecker._steady_pairs`) are proven at the clearance plus at
#: most this (m): the most the pair approaches within half a cell of the second joint's range.
STEADY_MARGIN = 0.005
#: Steady-pair proofs by robot part pair, joints, ranges and clearance (the parts' shapes kept alive).
_STEADY: dict[tuple[Any, ...], tuple[Any, Any, bool]] = {}
#: Configurations one edge may evaluate; an edge that needs more (it grazes something for long)
#: is refused: never unsafe, and the search finds another way.
MAX_EVALUATIONS = 20_000

_kernel: list[Any] = []


def edge_kernel() -> Any:
    """The compiled broad phase (the module :mod:`bb_robot.planning._plan_numba`), loaded once.

    Raises:
        PlanningError: numba is missing or cannot compile it (the planner needs it).
    """
    return required_kernels(_kernel, "bb_robot.planning._plan_numba", "sphere check", 15.0)


def required_kernels(cache: list[Any], module: str, what: str, seconds: float) -> Any:
    """A compiled module the planner cannot do without, imported (and compiled if need be) once into ``cache``.

    Args:
        cache: the caller's one-element cache (empty until the first call).
        module: the module's name.
        what: what it is, for messages ("sphere check": "the planner's sphere check").
        seconds: about how long compiling it takes, said while it compiles.

    Returns:
        The module.

    Raises:
        PlanningError: numba is missing or cannot compile it.
    """
    if not cache:
        loaded = compiled.import_kernels(module, f"the planner's {what}", seconds)
        if loaded is None:
            raise PlanningError(
                f"the planner needs numba for its {what} ({module}), and it does not load: run scripts/setup, "
                "or `bb-robot kernels` to see why"
            )
        cache.append(loaded)
    return cache[0]


@dataclass
class CheckCounts:
    """What a :class:`StateChecker` has done (for reports and benchmarks).

    Attributes:
        states: single configurations checked.
        edges: edges checked.
        samples: configurations evaluated (placed and tested).
        exact: exact (GJK) distance queries.
        undecided: edges refused because they could not be proven within the budget.
    """

    states: int = 0
    edges: int = 0
    samples: int = 0
    exact: int = 0
    undecided: int = 0


class StateChecker:
    """Validity of configurations and edges of the planned joints (see the module docstring).

    Args:
        scene: the scene (its model as it is now), or a collision model.
        joints: the planned joints, in the order the configurations give them (default: every
            coordinate of the model, :attr:`ForwardKinematics.joint_names`).
        base: values of every coordinate, in :attr:`ForwardKinematics.joint_names` order; the joints
            not planned keep them (default: zeros).
        clearance: the least distance kept (m, ≥ 0; 0 is checked as :data:`MIN_CLEARANCE`).
        resolution: the most any pair may approach within one interval of an edge before it is
            split (m; default :data:`RESOLUTION`).

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
        resolution: float | None = None,
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
        resolution = RESOLUTION if resolution is None else resolution
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
        self._edge_free = edge_kernel().edge_free
        program = self.model.fk.program()
        self._code = np.ascontiguousarray(program.code.copy())
        self._code.setflags(write=False)
        self._work = np.empty_like(program.work)
        self._info = np.zeros(3, dtype=np.intp)
        p = self.packed
        self._arrays = (
            p.node_center, p.node_radius, p.node_child, p.part_root, p.part_frame, p.obstacle_kind, p.obstacle_pose,
            p.obstacle_sphere, p.obstacle_dims, p.pairs, p.pair_reach, p.hull_vertex, p.hull_start, p.hull_margin,
            p.hull_adjacency_start, p.hull_adjacency, np.zeros((p.pairs.shape[0], 3)), MAX_EVALUATIONS, self._info,
        )  # fmt: skip
        #: The pairs proven apart by the clearance over their joints' whole ranges (not checked again).
        self.steady: npt.NDArray[np.intp] = self._steady_pairs()
        if self.steady.size:
            keep = np.setdiff1d(np.arange(p.pairs.shape[0]), self.steady)
            pairs, reach = np.ascontiguousarray(p.pairs[keep]), np.ascontiguousarray(p.pair_reach[keep])
            pairs.setflags(write=False)
            reach.setflags(write=False)
            directions = np.zeros((keep.size, 3))
            self._arrays = (*self._arrays[:9], pairs, reach, *self._arrays[11:16], directions, *self._arrays[17:])

    def _steady_pairs(self) -> npt.NDArray[np.intp]:
        """The pairs of two robot parts that one or two planned joints move relative to each other and
        that stay apart by the clearance over those joints' whole ranges (a wrist's steady neighbours).

        One joint: the segment across its range is proven by the compiled check, that pair alone.
        Two: segments across the first joint's range at the middles of cells of the second's range,
        each proven at the clearance plus the most the pair can approach within half a cell
        (:data:`STEADY_MARGIN`): every configuration of the two joints is then within half a cell of
        a proven one.  Proven once per robot, pair, joints, ranges and clearance (cached).
        """
        p, active = self.packed, self.active
        lower, upper = joint_bounds(self.model.robot, self.joints)
        steady = []
        for k in range(p.pairs.shape[0]):
            if p.pairs[k, 2] == 1:
                continue
            moving = np.flatnonzero(p.pair_reach[k] > 0.0)
            planned = [int(np.flatnonzero(active == c)[0]) for c in moving if c in active]
            if not 1 <= len(planned) <= 2 or len(planned) != moving.size:
                continue
            key = (
                id(self.model.parts[p.pairs[k, 0]].hull), id(self.model.parts[p.pairs[k, 1]].hull),
                p.pairs[k, :2].tobytes(), p.pair_reach[k].tobytes(), self.model.fk.joint_names,
                tuple(planned), lower[planned].tobytes(), upper[planned].tobytes(), self.clearance,
            )  # fmt: skip
            found = _STEADY.get(key)
            if found is None:
                found = (self.model.parts[p.pairs[k, 0]].hull, self.model.parts[p.pairs[k, 1]].hull,
                         self._proven_apart(k, planned, lower, upper))  # fmt: skip
                _STEADY[key] = found
            if found[2]:
                steady.append(k)
        return np.array(steady, dtype=np.intp)

    def _proven_apart(self, k: int, planned: list[int], lower: Matrix, upper: Matrix) -> bool:
        p = self.packed
        pairs = np.ascontiguousarray(p.pairs[k : k + 1])
        pairs.setflags(write=False)
        reach_row = p.pair_reach[k : k + 1]
        reach = np.ascontiguousarray(reach_row)
        reach.setflags(write=False)
        arrays = (*self._arrays[:9], pairs, reach, *self._arrays[11:16], np.zeros((1, 3)), *self._arrays[17:])
        columns = self.active[planned]
        sweep, across = (
            (planned[0], None) if len(planned) == 1 else sorted(planned, key=lambda c: -reach_row[0, self.active[c]])
        )
        rate = 0.0 if across is None else float(reach_row[0, self.active[across]])
        cells = 1 if across is None else max(1, math.ceil(rate * (upper[across] - lower[across]) / (2 * STEADY_MARGIN)))
        if cells > 512:
            return False
        del columns
        for cell in range(cells):
            q0, q1 = self.base.copy(), self.base.copy()
            q0[self.active[sweep]], q1[self.active[sweep]] = lower[sweep], upper[sweep]
            margin = 0.0
            if across is not None:
                width = (upper[across] - lower[across]) / cells
                q0[self.active[across]] = q1[self.active[across]] = lower[across] + (cell + 0.5) * width
                margin = rate * width / 2
            verdict = self._edge_free(self._code, self._work, q0, q1, self.resolution, self.clearance + margin, *arrays)
            if int(verdict) != 1:
                return False
        return True

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

    def kernel_arguments(self) -> tuple[Any, ...]:
        """The compiled search's first arguments (:func:`bb_robot.planning._rrt_numba.connect_steps`): the
        edge check's (its ends excepted), the base configuration and the planned coordinates."""
        base = self.base.copy()
        base.setflags(write=False)
        active = np.ascontiguousarray(self.active)
        active.setflags(write=False)
        return (self._code, self._work, self.resolution, self.clearance, *self._arrays, base, active)

    def add_counts(self, tally: npt.ArrayLike) -> None:
        """Add a compiled search's work (edges, configurations, exact queries, undecided edges) to :attr:`counts`."""
        edges, samples, exact, undecided = (int(v) for v in np.asarray(tally))
        self.counts.edges += edges
        self.counts.samples += samples
        self.counts.exact += exact
        self.counts.undecided += undecided

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

    def _free(self, q0: Matrix, q1: Matrix) -> bool:
        """The compiled check of ``q0 → q1`` (one configuration when they are equal); counts its work."""
        verdict = int(self._edge_free(self._code, self._work, q0, q1, self.resolution, self.clearance, *self._arrays))
        self.counts.samples += int(self._info[0])
        self.counts.exact += int(self._info[1])
        self.counts.undecided += verdict < 0
        return verdict == 1

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
        return self._free(q, q)

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
        if self.always is not None:
            return False
        q0, q1 = self.full(x0), self.full(x1)
        return self._free(q0, q1)  # a non-finite value: the kinematics refuse it, and so does the kernel

    def path_valid(self, path: npt.ArrayLike) -> bool:
        """Whether every edge of a path (rows of planned-joint values) is valid.

        Args:
            path: ``(n, len(joints))``.

        Returns:
            ``True`` when each consecutive pair is :meth:`edge_valid`.
        """
        rows = np.asarray(path, dtype=float)
        return all(self.edge_valid(rows[i], rows[i + 1]) for i in range(rows.shape[0] - 1))

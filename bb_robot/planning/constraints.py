"""Orientation path constraints: one link's orientation within tolerances about each axis along the whole path.

:class:`OrientationConstraint` (MoveIt's ``moveit_msgs/OrientationConstraint`` with its default
parameterisation, XYZ Euler angles): the link's orientation ``R`` stays within ``tolerance = (x, y,
z)`` radians of the reference ``R_ref``, measured as the angles ``e = (a, b, c)`` with ``R_refᵀ R =
Rx(a) · Ry(b) · Rz(c)``: ``|e_i| ≤ tolerance_i`` for each axis.  "Keep the cup upright" is the
hand level within 0.1 rad about x and y, and any angle about z (a tolerance of ``pi``): the angles
about x and y measure the tilt whatever the turn about z, which a rotation vector does not (near
a half turn about z its x and y parts blow up).  The tolerance about y must stay below pi / 2
(the angles' singularity).

:func:`plan_constrained` plans with it by *projection*:

- a configuration is moved onto the constraint by Gauss-Newton steps on ``e`` (the link's angular
  Jacobian, turned into the reference's axes and into Euler-angle rates), into the inner box
  ``|e_i| ≤ tolerance_i / 2``, within the joint limits; states already inside the checked box are
  kept as they are;
- a bidirectional tree search (RRT-Connect, as OMPL's projected state spaces and CBiRRT do): a
  random configuration is projected, and each tree grows towards it (then towards the other tree)
  in steps of :data:`STEP` radians, each step projected;
- every edge is checked for the constraint along its whole length: the orientation at samples no
  more than :data:`SPACING` apart in the sum of the joints' changes (a link turns by at most that
  sum between two samples, so half of it bounds the change to the nearest sample) must be within
  ``tolerance - MARGIN``; and for collisions by the planner's
  :meth:`~bb_robot.planning.validity.StateChecker.edge_valid`;
- the path found is shortcut (a straight edge between two of its configurations replaces what is
  between when both checks pass), bounded by iterations, not time.

Repeatable: the random draws come from ``numpy.random.default_rng(seed)``; the search is bounded by
``max_iterations``, the timeout only limits it.  A constraint that cannot be handled is refused,
never ignored: an unknown link, a tolerance that is negative, not finite or above pi, a start that
violates it, goals that all violate it, a link no planned joint turns while the start violates it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from bb_robot.errors import BbRobotError
from bb_robot.model.robot import Robot
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import quaternion_to_matrix
from bb_robot.planning.errors import InvalidRequest, PlanningError, PlanningTimeout
from bb_robot.planning.validity import StateChecker

FloatArray = npt.NDArray[np.float64]

#: The longest step of a tree's growth (joint space, L2, rad or m).
STEP = 0.15
#: The largest sum of the joints' changes between two orientation checks of an edge (rad).
SPACING = 0.01
#: How far inside the tolerance the orientation must be at an edge's samples (rad): covers the half
#: spacing between them times the Euler angles' gain (below 1.5 while ``|a|, |b| < 0.45`` rad).
MARGIN = 0.008
#: Gauss-Newton iterations of one projection.
PROJECTION_ITERATIONS = 30
#: Shortcut attempts on the path found.
SHORTCUTS = 200


@dataclass(frozen=True, eq=False)
class OrientationConstraint:
    """One link's orientation kept within ``tolerance`` (rad about x, y, z) of ``orientation``.

    Attributes:
        link: the constrained link.
        orientation: the reference orientation, a 3×3 rotation in the robot's root frame (or a unit
            quaternion ``(x, y, z, w)``, turned into one).
        tolerance: the largest Euler angle about each axis of the reference (rad, in [0, pi]; pi
            leaves that axis free; below pi / 2 about y).
    """

    link: str
    orientation: FloatArray
    tolerance: tuple[float, float, float] = field(default=(0.1, 0.1, math.pi))

    def __post_init__(self) -> None:
        given = np.asarray(self.orientation, dtype=float)
        if given.shape == (4,):
            norm = float(np.linalg.norm(given))
            if not (math.isfinite(norm) and abs(norm - 1.0) < 1e-3):
                raise InvalidRequest(
                    f"orientation constraint on '{self.link}': {given.tolist()} is not a unit quaternion"
                )
            given = np.asarray(quaternion_to_matrix(tuple(given / norm)))
        elif given.shape == (4, 4):
            given = given[:3, :3]
        if (
            given.shape != (3, 3)
            or not np.isfinite(given).all()
            or not np.allclose(given.T @ given, np.eye(3), atol=1e-6)
        ):
            raise InvalidRequest(
                f"orientation constraint on '{self.link}': the reference orientation must be a rotation "
                f"(3×3 orthonormal, or a unit quaternion x y z w), got {np.asarray(self.orientation).tolist()}"
            )
        tolerance = tuple(float(t) for t in self.tolerance)
        if (
            len(tolerance) != 3
            or not all(math.isfinite(t) and 0.0 <= t <= math.pi for t in tolerance)
            or (tolerance[1] >= math.pi / 2)
        ):
            raise InvalidRequest(
                f"orientation constraint on '{self.link}': tolerance must be three angles in [0, pi] rad "
                f"(about x, y, z; below pi / 2 about y), got {list(self.tolerance)}"
            )
        if min(tolerance) <= 2 * MARGIN:
            raise InvalidRequest(
                f"orientation constraint on '{self.link}': tolerance {list(tolerance)} is too tight to plan in "
                f"(each must exceed {2 * MARGIN} rad); widen it, or use a pose goal instead"
            )
        given = given.copy()
        given.setflags(write=False)
        object.__setattr__(self, "orientation", given)
        object.__setattr__(self, "tolerance", tolerance)


def xyz_euler(rotations: FloatArray) -> FloatArray:
    """The XYZ Euler angles ``(a, b, c)`` of rotations ``(..., 3, 3)`` (``R = Rx(a) · Ry(b) · Rz(c)``): ``(..., 3)``."""
    r = np.asarray(rotations)
    b = np.arcsin(np.clip(r[..., 0, 2], -1.0, 1.0))
    a = np.arctan2(-r[..., 1, 2], r[..., 2, 2])
    c = np.arctan2(-r[..., 0, 1], r[..., 0, 0])
    out: FloatArray = np.stack([a, b, c], axis=-1)
    return out


def _euler_rates(angles: FloatArray) -> FloatArray:
    """``M⁻¹`` with ``ω = M · (ȧ, ḃ, ċ)``, ``ω`` the angular velocity in the reference's axes."""
    a, b = float(angles[0]), float(angles[1])
    m = np.array(
        [
            [1.0, 0.0, math.sin(b)],
            [0.0, math.cos(a), -math.sin(a) * math.cos(b)],
            [0.0, math.sin(a), math.cos(a) * math.cos(b)],
        ]
    )
    out: FloatArray = np.linalg.inv(m)
    return out


class ConstraintModel:
    """The constraint's orientation error and projection for the planned joints.

    Args:
        robot: the model.
        joints: the planned joints (the order of the configurations ``x``).
        base: every coordinate's value in ``coordinates`` order; the joints not planned keep them.
        coordinates: the model's coordinates (:attr:`ForwardKinematics.joint_names`).
        constraint: the constraint.

    Raises:
        InvalidRequest: the link is not in the robot, or no chain reaches it.
    """

    def __init__(
        self,
        robot: Robot,
        joints: Sequence[str],
        base: FloatArray,
        coordinates: Sequence[str],
        constraint: OrientationConstraint,
    ) -> None:
        if constraint.link not in robot.links:
            raise InvalidRequest(
                f"orientation constraint: robot '{robot.name}' has no link '{constraint.link}'; "
                f"its links: {', '.join(robot.links)}"
            )
        try:
            self.chain = SerialManipulator.from_robot(robot, constraint.link, strict=False)
        except BbRobotError as error:
            raise InvalidRequest(f"orientation constraint on '{constraint.link}': {error}") from None
        self.constraint = constraint
        self.tolerance = np.array(constraint.tolerance)
        self.reference_t = np.ascontiguousarray(constraint.orientation.T)
        joints = tuple(joints)
        self.chain_q = np.array([base[list(coordinates).index(name)] for name in self.chain.joint_names])
        #: For each chain joint, its index among the planned joints (-1: held at its base value).
        self.column = np.array([joints.index(name) if name in joints else -1 for name in self.chain.joint_names])
        self.moving = self.column >= 0
        self.n = len(joints)

    def _chain(self, x: FloatArray) -> FloatArray:
        x = np.asarray(x, dtype=float)
        q = np.broadcast_to(self.chain_q, (*x.shape[:-1], self.chain_q.shape[0])).copy()
        q[..., self.moving] = x[..., self.column[self.moving]]
        return q

    def errors(self, x: npt.ArrayLike) -> FloatArray:
        """The error of configurations ``x`` ``(..., n)``: the XYZ Euler angles of ``R_refᵀ R``, ``(..., 3)``."""
        poses = np.asarray(self.chain.end_effector_pose(self._chain(np.asarray(x, dtype=float))))
        return xyz_euler(self.reference_t @ poses[..., :3, :3])

    def satisfied(self, x: npt.ArrayLike, margin: float = 0.0) -> bool:
        """Whether ``x`` (one configuration or a batch) keeps every component within ``tolerance - margin``."""
        return bool(np.all(np.abs(self.errors(x)) <= self.tolerance - margin))

    def edge_satisfied(self, x0: FloatArray, x1: FloatArray) -> bool:
        """Whether the whole straight edge keeps the constraint (samples :data:`SPACING` apart, :data:`MARGIN`)."""
        samples = max(1, math.ceil(float(np.abs(x1 - x0).sum()) / SPACING))
        t = np.linspace(0.0, 1.0, samples + 1)[:, None]
        return self.satisfied(x0 + t * (x1 - x0), MARGIN)

    def residual(self, x: FloatArray, band: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The constraint as equations, ``0`` within ``band`` (rad about each axis) of the reference.

        Args:
            x: one configuration of the planned joints ``(n,)``.
            band: the half-width of the zero band about each axis ``(3,)``.

        Returns:
            The error ``e`` (:meth:`errors`), the residual ``e - clip(e, -band, band)``, and the
            error's Jacobian ``(3, n)`` (the residual's outside the band; inside it, the residual's is 0).
        """
        q = self._chain(x)
        e = self._error(q)
        return e, e - np.clip(e, -band, band), self._error_jacobian(q, e)

    def _error(self, q: FloatArray) -> FloatArray:
        """The error (:meth:`errors`) at chain configuration ``q``."""
        pose = np.asarray(self.chain.end_effector_pose(q))
        return xyz_euler(self.reference_t @ pose[:3, :3])

    def _error_jacobian(self, q: FloatArray, e: FloatArray) -> FloatArray:
        """The error's Jacobian ``(3, n)`` at chain configuration ``q`` (error ``e``), per planned joint."""
        angular = np.asarray(self.chain.jacobian(q))[3:]  # world axes
        gain = _euler_rates(e) @ self.reference_t @ angular  # ė per chain joint
        jacobian = np.zeros((3, self.n))
        jacobian[:, self.column[self.moving]] = gain[:, self.moving]
        return jacobian

    def project(self, x: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray | None:
        """``x`` moved onto the constraint (module docstring), or ``None`` when the projection does not converge."""
        x = np.clip(np.asarray(x, dtype=float), lower, upper)
        inner = self.tolerance / 2.0
        for _ in range(PROJECTION_ITERATIONS):
            q = self._chain(x)
            e = self._error(q)
            if np.all(np.abs(e) <= self.tolerance - MARGIN):
                return x  # no Jacobian for the configuration kept
            residual, jacobian = e - np.clip(e, -inner, inner), self._error_jacobian(q, e)
            step, *_ = np.linalg.lstsq(jacobian, -residual, rcond=1e-8)
            if not np.isfinite(step).all() or not np.any(step):
                return None
            x = np.clip(x + step, lower, upper)
        return x if self.satisfied(x, MARGIN) else None


@dataclass(frozen=True, eq=False)
class ConstrainedPath:
    """The outcome of :func:`plan_constrained`.

    Attributes:
        raw: ``(K, n)`` the path the search found (planned joints), start first, a goal last.
        simplified: ``(L, n)`` after shortcutting; every edge keeps the constraint and the clearance.
        iterations: the search's iterations.
        seconds: the time it took.
    """

    raw: FloatArray
    simplified: FloatArray
    iterations: int
    seconds: float


class _Tree:
    def __init__(self, roots: Sequence[FloatArray]) -> None:
        self.nodes = [np.asarray(r, dtype=float) for r in roots]
        self.parent = [-1] * len(self.nodes)
        self._array = np.asarray(self.nodes)

    def nearest(self, x: FloatArray) -> int:
        if self._array.shape[0] != len(self.nodes):
            self._array = np.asarray(self.nodes)
        return int(np.argmin(((self._array - x) ** 2).sum(axis=1)))

    def add(self, x: FloatArray, parent: int) -> int:
        self.nodes.append(x)
        self.parent.append(parent)
        return len(self.nodes) - 1

    def branch(self, index: int) -> list[FloatArray]:
        out = []
        while index >= 0:
            out.append(self.nodes[index])
            index = self.parent[index]
        return out  # from the node to its root


def plan_constrained(
    checker: StateChecker,
    start: npt.ArrayLike,
    goals: Sequence[npt.ArrayLike],
    constraint: OrientationConstraint,
    *,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    seed: int = 0,
    timeout: float = 5.0,
    max_iterations: int = 20000,
) -> ConstrainedPath:
    """A collision-free path of the planned joints from ``start`` to one of ``goals`` keeping ``constraint``.

    Args:
        checker: the planner's validity checker (its planned joints, base configuration and clearance).
        start: the planned joints' start values.
        goals: goal configurations (the planned joints); those violating the constraint are left out.
        constraint: the orientation constraint.
        lower: the planned joints' lower limits.
        upper: their upper limits.
        seed: seeds the random draws (same seed, same path).
        timeout: seconds; only a limit (the search is bounded by ``max_iterations``).
        max_iterations: the search's iterations at most.

    Returns:
        The path (module docstring).

    Raises:
        InvalidRequest: a constraint that cannot be handled (module docstring), a goal list that is empty.
        PlanningError: the start or every goal violates the constraint (naming the error found).
        PlanningTimeout: no path within ``max_iterations`` or ``timeout``.
    """
    began = time.perf_counter()
    low, high = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    model = ConstraintModel(checker.model.robot, checker.joints, checker.base, checker.model.fk.joint_names, constraint)
    x_start = np.asarray(start, dtype=float)
    error = model.errors(x_start)
    if not model.satisfied(x_start, MARGIN):
        raise PlanningError(
            f"the start violates the orientation constraint on '{constraint.link}': its error about x, y, z is "
            f"{np.round(error, 4).tolist()} rad, tolerance {list(constraint.tolerance)} (less {MARGIN} rad checked "
            "along edges); start from an orientation within it, or widen the tolerance"
        )
    if not goals:
        raise InvalidRequest("plan_constrained: no goal configuration given")
    kept = [np.asarray(g, dtype=float) for g in goals if model.satisfied(np.asarray(g, dtype=float), MARGIN)]
    if not kept:
        first = model.errors(np.asarray(goals[0], dtype=float))
        raise PlanningError(
            f"the goal violates the orientation constraint on '{constraint.link}': its error about x, y, z is "
            f"{np.round(first, 4).tolist()} rad, tolerance {list(constraint.tolerance)}; choose a goal within it"
        )
    kept = [g for g in kept if checker.valid(g)] or kept  # the collision verdict on goals is the caller's
    rng = np.random.default_rng(seed)
    trees = (_Tree([x_start]), _Tree(kept))
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        if time.perf_counter() - began > timeout:
            break
        sample = model.project(rng.uniform(low, high), low, high)
        if sample is None:
            continue
        grow, other = trees[(iteration + 1) % 2], trees[iteration % 2]
        _, new = _extend(grow, sample, model, checker, low, high)
        if new < 0:
            continue
        joined, meet = _extend(other, grow.nodes[new], model, checker, low, high)
        if joined:
            head, tail = grow.branch(new), other.branch(meet)
            rows = head[::-1] + tail[1:]
            raw = np.asarray(rows[::-1] if grow is trees[1] else rows)
            simplified = _shortcut(raw, model, checker, rng)
            return ConstrainedPath(raw, simplified, iteration, time.perf_counter() - began)
    raise PlanningTimeout(
        f"no path keeping the orientation of '{constraint.link}' within {list(constraint.tolerance)} rad",
        iteration,
        time.perf_counter() - began,
    )


def _extend(
    tree: _Tree, target: FloatArray, model: ConstraintModel, checker: StateChecker, low: FloatArray, high: FloatArray
) -> tuple[bool, int]:
    """Grow ``tree`` from its nearest node towards ``target`` in projected steps; (reached, last node added or -1)."""
    index = tree.nearest(target)
    x = tree.nodes[index]
    last = -1
    for _ in range(200):
        direction = target - x
        distance = float(np.linalg.norm(direction))
        if distance < 1e-9:
            return True, index if last < 0 else last
        candidate = target if distance <= STEP else x + direction * (STEP / distance)
        projected = model.project(candidate, low, high)
        if projected is None or float(np.linalg.norm(target - projected)) >= distance - 1e-9:
            break  # off the constraint, or no nearer
        if not (model.edge_satisfied(x, projected) and checker.edge_valid(x, projected)):
            break
        index = tree.add(projected, index)
        last, x = index, projected
    return False, last


def _shortcut(path: FloatArray, model: ConstraintModel, checker: StateChecker, rng: np.random.Generator) -> FloatArray:
    """Replace stretches of ``path`` by straight edges that keep both checks (:data:`SHORTCUTS` attempts)."""
    rows = list(path)
    for _ in range(SHORTCUTS):
        if len(rows) < 3:
            break
        i, j = sorted(rng.choice(len(rows), 2, replace=False))
        if j - i < 2:
            continue
        if model.edge_satisfied(rows[i], rows[j]) and checker.edge_valid(rows[i], rows[j]):
            rows = rows[: i + 1] + rows[j:]
    return np.asarray(rows)

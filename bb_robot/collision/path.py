"""Checking a joint-space path with a guarantee between the checks (conservative advancement).

A path is a sequence of configurations (rows), followed linearly from one to the next: what the
driver commands cycle by cycle.  :func:`check_path` measures the nearest distance ``d`` at a
configuration, then skips ahead to the farthest configuration that no point of any link's
geometry can reach ``d / 2`` before (two links may approach each other, each moving half), and
measures again.  So no obstacle thinner than what is measured can be crossed between checks.

The bound (:class:`MotionBound`): a point of link ``L`` moves, for a change ``Δq_j`` of a
revolute joint ``j`` above ``L``, at most ``|Δq_j| · R_j(L)``, where ``R_j(L)`` is the longest
reach from joint ``j``'s origin to a point of ``L``'s geometry: the lengths of the joint
origins between them (plus prismatic travel) and the farthest geometry point of ``L`` from its
own frame.  A prismatic joint moves it by at most ``|Δq_j|``.  Summed over the joints above
``L``, this bounds the motion along any path whose joints vary by at most those amounts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.collision.model import CollisionModel, Contact
from bb_robot.model.transforms import Matrix


class MotionBound:
    """How far each link's geometry can move per unit of each joint coordinate (see the module docstring).

    Args:
        model: the collision model.

    Attributes:
        reach: ``(n_links_with_parts, n_coordinates)``: metres per radian (or metre) of each coordinate.
    """

    def __init__(self, model: CollisionModel) -> None:
        robot, fk = model.robot, model.fk
        coordinate = {name: i for i, name in enumerate(fk.joint_names)}
        extent: dict[str, float] = {}
        for part in model.parts:
            farthest = float(np.sqrt((part.points**2).sum(axis=1).max())) if part.points.size else 0.0
            frame = part.frame or part.link  # an attached object moves with its link
            extent[frame] = max(extent.get(frame, 0.0), farthest)
        self.links: tuple[str, ...] = tuple(extent)
        self.reach = np.zeros((len(self.links), len(fk.joint_names)))
        #: Link -> (joint, coordinate, metres per unit of it) of each joint above it: the terms of its row of ``reach``.
        self.terms: dict[str, list[tuple[str, int, float]]] = {link: [] for link in self.links}
        for row, link in enumerate(self.links):
            # Walk up from the link: ``arm`` is the reach from the current joint's origin to the link's points.
            arm = extent[link]
            name = link
            while name != robot.root_link:
                joint = robot.parent_joint(name)
                source, scale = self._driver(model, joint.name)
                if source is not None:
                    index = coordinate[source]
                    amount = abs(scale) if joint.type == "prismatic" else abs(scale) * arm
                    if joint.type in ("prismatic", "revolute", "continuous"):
                        self.reach[row, index] += amount
                        self.terms[link].append((joint.name, index, amount))
                if joint.type == "prismatic" and joint.limits is not None:
                    lower, upper = joint.limits.lower or 0.0, joint.limits.upper or 0.0
                    arm += max(abs(lower), abs(upper))
                arm += math.dist(joint.origin.xyz if joint.origin else (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
                name = joint.parent_link

    @staticmethod
    def _driver(model: CollisionModel, name: str) -> tuple[str | None, float]:
        """The coordinate driving joint ``name`` and its multiplier (mimics followed), or ``(None, 0)``."""
        joints = model.robot.joints
        joint, scale = joints[name], 1.0
        while joint.mimic is not None:
            scale *= joint.mimic.multiplier
            joint = joints[joint.mimic.joint]
        if joint.type not in ("revolute", "continuous", "prismatic"):
            return None, 0.0
        return joint.name, scale

    def between(self, first: str | None, second: str | None) -> npt.NDArray[np.float64]:
        """How far the geometry of link ``first`` can move relative to that of ``second`` (``None``: a static
        obstacle), per unit of each coordinate: a joint above both moves them together and counts nothing, so
        their distance changes by at most the sum of the others' terms.

        Args:
            first: one link (a key of ``terms``), or ``None``.
            second: the other.

        Returns:
            ``(n_coordinates,)`` metres per radian (or metre).
        """
        a, b = self.terms.get(first or "", []), self.terms.get(second or "", [])
        common = {name for name, _, _ in a} & {name for name, _, _ in b}
        out = np.zeros(self.reach.shape[1])
        for name, index, amount in a + b:
            if name not in common:
                out[index] += amount
        return out

    def along(self, path: Matrix) -> Matrix:
        """Cumulative motion bound of every link along a path: ``(n_configurations, n_links)``, 0 at the start."""
        steps = np.abs(np.diff(path, axis=0))
        moved = np.vstack([np.zeros((1, self.reach.shape[0])), np.cumsum(steps @ self.reach.T, axis=0)])
        return np.asarray(moved)


@dataclass(frozen=True)
class PathVerdict:
    """The outcome of :func:`check_path`.

    Attributes:
        ok: no checked pair comes within ``clearance`` anywhere on the path.
        index: the first configuration (row) found too close; ``-1`` when ``ok``.
        contact: the pair found too close there (``None`` when ``ok``).
        nearest: the smallest distance measured along the path (``inf`` if nothing was measured).
        checks: how many configurations were measured.
    """

    ok: bool
    index: int
    contact: Contact | None
    nearest: float
    checks: int


def check_path(model: CollisionModel, path: npt.ArrayLike, clearance: float = 0.001) -> PathVerdict:
    """Check a path (configurations followed linearly) for contact, with the guarantee of the module docstring.

    Args:
        model: the collision model (its disabled pairs and obstacles as they are).
        path: ``(n, n_coordinates)`` configurations in :attr:`ForwardKinematics.joint_names` order.
        clearance: a measured distance below this is refused (metres, > 0: it also bounds the work).

    Returns:
        The verdict.

    Raises:
        ValueError: ``clearance`` is not positive.
        InvalidJointValue: a configuration of a wrong shape or with a non-finite value.
    """
    if not clearance > 0.0:
        raise ValueError(f"clearance must be > 0, got {clearance}")
    configurations = np.atleast_2d(np.asarray(path, dtype=float))
    moved = MotionBound(model).along(configurations)
    last = configurations.shape[0] - 1
    row, current, travelled = 0, configurations[0], moved[0]
    checks, nearest = 0, math.inf
    while True:
        contact = model.nearest(current)
        checks += 1
        if contact is None:  # nothing is checked
            break
        nearest = min(nearest, contact.distance)
        if contact.distance < clearance:
            return PathVerdict(False, row, contact, nearest, checks)
        if row == last:
            break
        # How far the links can have moved from here to each later row; non-decreasing along the path.
        ahead = (moved[row + 1 :] - travelled).max(axis=1)
        half = contact.distance / 2
        safe = int(np.searchsorted(ahead, half, side="left"))  # later rows reached moving less than d/2
        if safe > 0:
            row += safe
            current, travelled = configurations[row], moved[row]
        else:  # the next row is too far: stop within this segment, where the bound allows
            fraction = half / float(ahead[0])
            current = current + fraction * (configurations[row + 1] - current)
            travelled = travelled + fraction * (moved[row + 1] - travelled)
    return PathVerdict(True, -1, None, nearest, checks)

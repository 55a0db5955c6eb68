"""Forward kinematics: the pose of every link for one or many joint configurations.

:class:`ForwardKinematics` precomputes, per joint in traversal order, the
constant parts of its transform, then evaluates whole batches of
configurations with numpy (one pass over the joints, vectorised over the
batch).  Revolute, continuous, prismatic and fixed joints are driven; mimic
joints follow their source (chains resolved transitively); floating and
planar joints are listed in :attr:`ForwardKinematics.held_joints` and held at
their origin, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.model.errors import InvalidJointValue, UnknownJoint
from bb_robot.model.robot import SINGLE_DOF_TYPES, Robot
from bb_robot.model.transforms import Matrix, origin_to_matrix, skew

_FIXED, _REVOLUTE, _PRISMATIC = 0, 1, 2


@dataclass(frozen=True)
class _Step:
    """One joint's contribution: child pose = parent pose · local(q)."""

    parent: int
    child: int
    kind: int
    coordinate: int  # index into q, -1 when the joint does not move
    multiplier: float
    offset: float
    # For revolute: local rotation = c·A + s·B + (1 − c)·C, translation t.
    # For prismatic: local rotation = A, translation = t + d·u.
    a: Matrix
    b: Matrix
    c: Matrix
    t: Matrix
    u: Matrix


class ForwardKinematics:
    """Forward kinematics of one robot.

    ``joint_names`` are the independent coordinates, in traversal order: every
    revolute, continuous or prismatic joint that is not a mimic.  ``link_names``
    is the order of links in results (topological, root first).
    """

    def __init__(self, robot: Robot) -> None:
        """Precompute the joint steps; raises :class:`InvalidJointValue` when a
        mimic joint follows a floating or planar joint."""
        self.robot = robot
        self.link_names: tuple[str, ...] = robot.topology.link_order
        order = robot.topology.joint_order
        self.joint_names: tuple[str, ...] = tuple(
            j for j in order if robot.joints[j].type in SINGLE_DOF_TYPES and robot.joints[j].mimic is None
        )
        self.held_joints: tuple[str, ...] = tuple(
            j for j in order if robot.joints[j].type in ("floating", "planar")
        )
        self.mimic_joints: tuple[str, ...] = tuple(
            j for j in order if robot.joints[j].mimic is not None
        )
        self._coordinate = {name: i for i, name in enumerate(self.joint_names)}
        link_index = {name: i for i, name in enumerate(self.link_names)}
        self._steps = tuple(self._step(j, link_index) for j in order)

    def _resolve(self, name: str) -> tuple[int, float, float]:
        """Return ``(coordinate, multiplier, offset)`` driving joint ``name``, following mimics."""
        multiplier, offset = 1.0, 0.0
        joint = self.robot.joints[name]
        while joint.mimic is not None:
            # value = m·source + o; compose with what is already accumulated.
            offset += multiplier * joint.mimic.offset
            multiplier *= joint.mimic.multiplier
            joint = self.robot.joints[joint.mimic.joint]
        if joint.type not in SINGLE_DOF_TYPES:
            raise InvalidJointValue(
                self.robot.name,
                f"joint '{name}' mimics {joint.type} joint '{joint.name}'; "
                "only revolute, continuous and prismatic joints can be mimicked",
            )
        return self._coordinate[joint.name], multiplier, offset

    def _step(self, name: str, link_index: Mapping[str, int]) -> _Step:
        joint = self.robot.joints[name]
        origin = origin_to_matrix(joint.origin)
        rot, t = origin[:3, :3], origin[:3, 3].copy()
        axis = np.asarray(joint.axis, dtype=float)
        zero = np.zeros((3, 3))
        parent, child = link_index[joint.parent_link], link_index[joint.child_link]
        if joint.type not in SINGLE_DOF_TYPES:
            return _Step(parent, child, _FIXED, -1, 0.0, 0.0, rot, zero, zero, t, np.zeros(3))
        coordinate, multiplier, offset = self._resolve(name)
        if joint.type == "prismatic":
            return _Step(
                parent, child, _PRISMATIC, coordinate, multiplier, offset,
                rot, zero, zero, t, rot @ axis,
            )  # fmt: skip
        return _Step(
            parent, child, _REVOLUTE, coordinate, multiplier, offset,
            rot - rot @ np.outer(axis, axis), rot @ skew(axis), rot @ np.outer(axis, axis),
            t, np.zeros(3),
        )  # fmt: skip

    # ------------------------------------------------------------------ compute
    def compute(self, q: npt.ArrayLike) -> Matrix:
        """Return link poses in the root link frame for configurations ``q``.

        ``q`` has shape ``(n,)`` or ``(batch, n)`` with ``n = len(joint_names)``;
        the result has shape ``(n_links, 4, 4)`` or ``(batch, n_links, 4, 4)``,
        links in :attr:`link_names` order.  Raises :class:`InvalidJointValue` for
        a wrong shape or a non-finite value.
        """
        values = np.asarray(q, dtype=float)
        single = values.ndim == 1
        batch = values.reshape(1, -1) if single else values
        n = len(self.joint_names)
        if batch.ndim != 2 or batch.shape[1] != n:
            raise InvalidJointValue(
                self.robot.name,
                f"expected {n} joint values ({', '.join(self.joint_names)}), got shape {values.shape}",
            )
        if not np.isfinite(batch).all():
            bad = sorted({self.joint_names[i] for i in np.nonzero(~np.isfinite(batch))[1]})
            raise InvalidJointValue(self.robot.name, f"non-finite value for joint(s) {', '.join(bad)}")
        count = batch.shape[0]
        n_links = len(self.link_names)
        rotations = np.empty((n_links, count, 3, 3))
        positions = np.empty((n_links, count, 3))
        rotations[0] = np.eye(3)
        positions[0] = 0.0
        for step in self._steps:
            r_parent, p_parent = rotations[step.parent], positions[step.parent]
            if step.kind == _REVOLUTE:
                angle = batch[:, step.coordinate] * step.multiplier + step.offset
                local = (
                    step.c
                    + np.cos(angle)[:, None, None] * step.a
                    + np.sin(angle)[:, None, None] * step.b
                )
                np.matmul(r_parent, local, out=rotations[step.child])
                positions[step.child] = r_parent @ step.t + p_parent
            elif step.kind == _PRISMATIC:
                distance = batch[:, step.coordinate] * step.multiplier + step.offset
                translation = step.t + distance[:, None] * step.u
                np.matmul(r_parent, step.a, out=rotations[step.child])
                positions[step.child] = (
                    np.einsum("bij,bj->bi", r_parent, translation) + p_parent
                )
            else:
                np.matmul(r_parent, step.a, out=rotations[step.child])
                positions[step.child] = r_parent @ step.t + p_parent
        poses = np.zeros((count, n_links, 4, 4))
        poses[:, :, :3, :3] = rotations.transpose(1, 0, 2, 3)
        poses[:, :, :3, 3] = positions.transpose(1, 0, 2)
        poses[:, :, 3, 3] = 1.0
        return poses[0] if single else poses

    def poses(self, values: Mapping[str, float] | None = None) -> dict[str, Matrix]:
        """Return each link's 4×4 pose in the root frame for named joint values.

        Joints not named are at 0; mimic joints follow their source.  Raises
        :class:`UnknownJoint` for an unknown name and :class:`InvalidJointValue`
        for a value given to a mimic, fixed, floating or planar joint.
        """
        result = self.compute(self.vector(values or {}))
        return {name: result[i] for i, name in enumerate(self.link_names)}

    def vector(self, values: Mapping[str, float]) -> Matrix:
        """Return the coordinate vector for named joint values (others 0); errors as :meth:`poses`."""
        q = np.zeros(len(self.joint_names))
        for name, value in values.items():
            index = self._coordinate.get(name)
            if index is None:
                joint = self.robot.get_joint(name)  # raises UnknownJoint
                reason = "a mimic joint follows its source" if joint.mimic else f"a {joint.type} joint has no single coordinate"
                raise InvalidJointValue(self.robot.name, f"cannot set joint '{name}': {reason}")
            q[index] = value
        return q

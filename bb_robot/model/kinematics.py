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

from bb_robot.model.errors import InvalidJointValue
from bb_robot.model.robot import SINGLE_DOF_TYPES, Robot
from bb_robot.model.transforms import Matrix, origin_to_matrix, skew

_FIXED, _REVOLUTE, _PRISMATIC, _REVOLUTE_AXIS = 0, 1, 2, 3


@dataclass(frozen=True)
class _Step:
    """One joint's contribution: child pose = parent pose · local(q).

    ``block`` is a 3×K matrix of the joint's constant parts, multiplied by the
    parent rotation in one matrix product for the whole batch:

    - fixed (and held) joints, K = 4: ``[R | t]``;
    - revolute, K = 10: ``[C | A | B | t]`` with local rotation
      ``C + cos(θ)·A + sin(θ)·B`` (Rodrigues' formula premultiplied by R);
    - prismatic, K = 5: ``[R | u | t]`` with local translation ``t + d·u``;
    - revolute about a coordinate axis ``±e_k`` of the joint frame (most real
      joints), K = 4: ``[R | t]``; the rotation about ``e_k`` only mixes
      columns ``i, j`` (``i, j, k`` cyclic) of the product: a 3×4 instead of
      a 3×10 product and fewer passes over the batch (about 20% less time
      per configuration on a 7-DOF arm, benchmarks/bench_urdf.py).

    The origin translation ``t`` is always the last column.
    """

    parent: int
    child: int
    kind: int
    coordinate: int  # index into q, -1 when the joint does not move
    multiplier: float
    offset: float
    block: Matrix
    columns: tuple[int, int, int] = (0, 1, 2)  # _REVOLUTE_AXIS: (i, j, k), axis ±e_k
    sign: float = 1.0  # _REVOLUTE_AXIS: -1.0 for an axis along -e_k

    @property
    def block_t(self) -> Matrix:
        """The transposed block, shape (K, 3): left factor of the batch-last product."""
        return self.block.T


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
        self.held_joints: tuple[str, ...] = tuple(j for j in order if robot.joints[j].type in ("floating", "planar"))
        self.mimic_joints: tuple[str, ...] = tuple(j for j in order if robot.joints[j].mimic is not None)
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
        rot, t = origin[:3, :3], origin[:3, 3:4]
        axis: Matrix = np.asarray(joint.axis, dtype=float)
        parent, child = link_index[joint.parent_link], link_index[joint.child_link]
        if joint.type not in SINGLE_DOF_TYPES:
            return _Step(parent, child, _FIXED, -1, 0.0, 0.0, np.hstack([rot, t]))
        coordinate, multiplier, offset = self._resolve(name)
        if joint.type == "prismatic":
            block = np.hstack([rot, (rot @ axis)[:, None], t])
            return _Step(parent, child, _PRISMATIC, coordinate, multiplier, offset, block)
        nonzero = np.flatnonzero(axis)
        if len(nonzero) == 1 and abs(axis[nonzero[0]]) == 1.0:
            k = int(nonzero[0])
            columns = ((k + 1) % 3, (k + 2) % 3, k)
            block = np.hstack([rot, t])
            sign = float(axis[k])
            return _Step(parent, child, _REVOLUTE_AXIS, coordinate, multiplier, offset, block, columns, sign)
        along = rot @ np.outer(axis, axis)
        block = np.hstack([along, rot - along, rot @ skew(joint.axis), t])
        return _Step(parent, child, _REVOLUTE, coordinate, multiplier, offset, block)

    # ------------------------------------------------------------------ compute
    def compute(self, q: npt.ArrayLike) -> Matrix:
        """Return link poses in the root link frame for configurations ``q``.

        ``q`` has shape ``(n,)`` or ``(batch, n)`` with ``n = len(joint_names)``;
        the result has shape ``(n_links, 4, 4)`` or ``(batch, n_links, 4, 4)``
        (a strided view of batch-last storage; ``np.ascontiguousarray`` it if
        needed), links in :attr:`link_names` order.  Raises :class:`InvalidJointValue` for
        a wrong (or ragged) shape, a value that is not a number, or a non-finite value.
        """
        n = len(self.joint_names)
        try:
            values = np.asarray(q, dtype=float)
        except (TypeError, ValueError) as error:
            raise InvalidJointValue(
                self.robot.name,
                f"expected an array of numbers of shape ({n},) or (batch, {n}) "
                f"({', '.join(self.joint_names)}): {error}",
            ) from None
        single = values.ndim == 1
        batch = values.reshape(1, -1) if single else values
        if batch.ndim != 2 or batch.shape[1] != n:
            raise InvalidJointValue(
                self.robot.name,
                f"expected {n} joint values ({', '.join(self.joint_names)}), got shape {values.shape}",
            )
        if not np.isfinite(batch).all():
            bad = sorted({self.joint_names[i] for i in np.nonzero(~np.isfinite(batch))[1]})
            raise InvalidJointValue(self.robot.name, f"non-finite value for joint(s) {', '.join(bad)}")
        count = batch.shape[0]
        # Batch-last layout: frames[link, i, k, :] is one contiguous row over the
        # batch, so the product with a joint's constant block is three small matrix
        # multiplies and the angle terms are contiguous vector operations.  The
        # result is a transposed view of it: no copy.
        frames = np.empty((len(self.link_names), 4, 4, count))
        frames[:, 3, :3] = 0.0
        frames[:, 3, 3] = 1.0
        frames[0, :3] = np.eye(4)[:3, :, None]
        for step in self._steps:
            product = np.matmul(step.block_t, frames[step.parent, :3, :3])  # (3, K, count)
            rotation = frames[step.child, :3, :3]
            position = frames[step.child, :3, 3]
            np.add(product[:, -1], frames[step.parent, :3, 3], out=position)
            if step.kind == _REVOLUTE_AXIS:
                # (parent R · R) · Rot(e_k, θ): column i' = cos·m_i + sin·m_j,
                # column j' = cos·m_j − sin·m_i, column k unchanged.
                angle = batch[:, step.coordinate] * step.multiplier + step.offset
                cos, sin = np.cos(angle), np.sin(angle)
                if step.sign < 0.0:
                    np.negative(sin, out=sin)
                i, j, k = step.columns
                first, second = product[:, i], product[:, j]
                np.multiply(first, cos, out=rotation[:, i])
                rotation[:, i] += second * sin
                np.multiply(second, cos, out=rotation[:, j])
                rotation[:, j] -= first * sin
                rotation[:, k] = product[:, k]
            elif step.kind == _REVOLUTE:
                angle = batch[:, step.coordinate] * step.multiplier + step.offset
                np.multiply(product[:, 3:6], np.cos(angle), out=rotation)
                rotation += product[:, 0:3]
                rotation += product[:, 6:9] * np.sin(angle)
            else:
                rotation[...] = product[:, 0:3]
                if step.kind == _PRISMATIC:
                    distance = batch[:, step.coordinate] * step.multiplier + step.offset
                    position += product[:, 3] * distance
        poses = frames.transpose(3, 0, 1, 2)
        return np.ascontiguousarray(poses[0]) if single else poses

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
                reason = (
                    "a mimic joint follows its source"
                    if joint.mimic
                    else f"a {joint.type} joint has no single coordinate"
                )
                raise InvalidJointValue(self.robot.name, f"cannot set joint '{name}': {reason}")
            try:
                q[index] = value
            except (TypeError, ValueError):
                raise InvalidJointValue(self.robot.name, f"joint '{name}' needs a number, got {value!r}") from None
        return q

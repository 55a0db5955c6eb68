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

from bb_robot.model import compiled
from bb_robot.model.batch import (
    FIXED,
    PRISMATIC,
    REVOLUTE,
    Motion,
    Step,
    apply_step,
    as_batch,
    contiguous_vector,
    empty_frames,
    make_step,
    one_configuration,
)
from bb_robot.model.errors import InvalidJointValue, InvalidOutputArray
from bb_robot.model.robot import SINGLE_DOF_TYPES, Robot
from bb_robot.model.transforms import Matrix, origin_to_matrix
from bb_robot.model.unrolled import Unrolled, unrolled_frames


@dataclass(frozen=True)
class _Step:
    """One joint's contribution: child pose = parent pose · local(q).

    ``step`` holds the joint's constant block (:class:`bb_robot.model.batch.Step`:
    fixed and held joints are :data:`~bb_robot.model.batch.FIXED` steps; a
    revolute joint about ``±e_k`` of its frame, most real joints, takes the
    cheaper :data:`~bb_robot.model.batch.REVOLUTE_AXIS` path, about 20% less
    time per configuration on a 7-DOF arm, benchmarks/bench_urdf.py).
    """

    step: Step
    coordinate: int  # index into q, -1 when the joint does not move
    multiplier: float
    offset: float


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
        self._unrolled: Unrolled | None | bool = False  # built on the first one-configuration call
        self._compiled: compiled.Program | None = None  # built on the first compiled call

    def _one(self) -> Unrolled | None:
        """The straight-line function of one configuration (:mod:`bb_robot.model.unrolled`), built once."""
        if self._unrolled is False:
            motions = [Motion(s.step, s.coordinate, s.multiplier, s.offset) for s in self._steps]
            count = len(self.link_names)
            self._unrolled = unrolled_frames(np.eye(4), count, motions, len(self.joint_names), range(count))
        assert self._unrolled is not True
        return self._unrolled

    def program(self) -> compiled.Program:
        """The steps packed for compiled code (:mod:`bb_robot.model.compiled`), built once: frame ``i``
        of its forward pass is link :attr:`link_names` ``[i]`` (for a kernel that runs it itself)."""
        return self._program()

    def _program(self) -> compiled.Program:
        """The steps packed for compiled code (:mod:`bb_robot.model.compiled`), built once."""
        if self._compiled is None:
            motions = [Motion(s.step, s.coordinate, s.multiplier, s.offset) for s in self._steps]
            self._compiled = compiled.program(np.eye(4), len(self.link_names), motions, len(self.joint_names))
        return self._compiled

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
        parent, child = link_index[joint.parent_link], link_index[joint.child_link]
        if joint.type not in SINGLE_DOF_TYPES:
            return _Step(make_step(parent, child, FIXED, origin), -1, 0.0, 0.0)
        coordinate, multiplier, offset = self._resolve(name)
        kind = PRISMATIC if joint.type == "prismatic" else REVOLUTE
        return _Step(make_step(parent, child, kind, origin, joint.axis), coordinate, multiplier, offset)

    # ------------------------------------------------------------------ compute
    def compute(self, q: npt.ArrayLike, out: Matrix | None = None) -> Matrix:
        """Return link poses in the root link frame for configurations ``q``.

        ``q`` has shape ``(n,)`` or ``(batch, n)`` with ``n = len(joint_names)``;
        the result has shape ``(n_links, 4, 4)`` or ``(batch, n_links, 4, 4)``,
        links in :attr:`link_names` order.  With numba installed the result
        comes from compiled code (:mod:`bb_robot.model.compiled`; a
        C-contiguous array); otherwise from generated Python for one
        configuration or numpy for a batch (then a strided view of batch-last
        storage: ``np.ascontiguousarray`` it if you need contiguous memory).
        Raises :class:`InvalidJointValue` for a wrong (or ragged) shape, a
        value that is not a number, or a non-finite value.

        ``out``, an array the caller owns, receives the poses instead of a new array (and is
        returned): C-contiguous, writeable, float64, of the result's shape.  For a batch the
        compiled kernel writes straight into it, so repeated calls allocate nothing; without
        numba the result is computed, then copied in.  Raises :class:`InvalidOutputArray` for
        an ``out`` of another shape, dtype or layout, or read-only.
        """
        if out is not None:
            return self._compute_into(q, out)
        n = len(self.joint_names)
        if contiguous_vector(q, n) and (functions := compiled.kernels(0)) is not None:
            poses = compiled.one(functions, self._program(), q)
            if poses is not None:
                return poses
        values = one_configuration(q, n)
        if values is not None and (function := self._one()) is not None:
            return function(values)
        batch, single = as_batch(self.robot.name, q, self.joint_names)
        if single and (function := self._one()) is not None:
            return function(batch[0].tolist())
        if not single and (functions := compiled.kernels(batch.shape[0])) is not None:
            return compiled.frames(functions, self._program(), batch)
        # Batch-last layout (bb_robot.model.batch): frames[link, i, k, :] is one
        # contiguous row over the batch, so the product with a joint's constant
        # block is three small matrix multiplies and the angle terms are
        # contiguous vector operations.  The result is a transposed view of it: no copy.
        frames = empty_frames(len(self.link_names), batch.shape[0])
        frames[0, :3] = np.eye(4)[:3, :, None]
        columns = np.ascontiguousarray(batch.T)  # one contiguous row per coordinate
        for step in self._steps:
            value = None if step.coordinate < 0 else columns[step.coordinate]
            if value is not None and (step.multiplier != 1.0 or step.offset != 0.0):
                value = value * step.multiplier + step.offset
            apply_step(frames, step.step, value)
        poses = frames.transpose(3, 0, 1, 2)
        return np.ascontiguousarray(poses[0]) if single else poses

    def _compute_into(self, q: npt.ArrayLike, out: Matrix) -> Matrix:
        """:meth:`compute` writing into ``out``, checked first."""
        batch, single = as_batch(self.robot.name, q, self.joint_names)
        count = len(self.link_names)
        shape = (count, 4, 4) if single else (batch.shape[0], count, 4, 4)
        if not isinstance(out, np.ndarray):
            raise InvalidOutputArray(self.robot.name, f"is a {type(out).__name__}, not a numpy array of shape {shape}")
        problems = []
        if out.shape != shape:
            problems.append(f"has shape {out.shape}, not {shape} (configurations, links, 4, 4)")
        if out.dtype != np.float64:
            problems.append(f"has dtype {out.dtype}, not float64")
        if not out.flags.c_contiguous:
            problems.append("is not C-contiguous (np.ascontiguousarray, or np.empty of the shape)")
        if not out.flags.writeable:
            problems.append("is read-only")
        if problems:
            raise InvalidOutputArray(self.robot.name, "; ".join(problems))
        if not single and (functions := compiled.kernels(batch.shape[0])) is not None:
            compiled.frames(functions, self._program(), batch, out)
        else:
            out[...] = self.compute(batch[0] if single else batch)
        return out

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

"""The serial-manipulator model: one chain of RZ / TZ joints from a base link to a tip frame.

:meth:`SerialManipulator.from_robot` extracts the chain from a
:class:`~bb_robot.model.robot.Robot` (URDF, or SDF converted to URDF
convention); :meth:`SerialManipulator.from_urdf` loads a file first.  The
model computes, for one configuration ``q`` of shape ``(n,)`` or a batch of
shape ``(B, n)``, the pose of every chain frame and of the end effector, and
the geometric Jacobian.  ``docs/serial.md`` states the conventions; in short:

Frames
    ``W`` the model (world) frame; ``base_pose`` places the base link in it.
    ``L_0`` is the base link, ``L_i`` (i = 1…n) the child link of joint i-1
    (the robot's own link frames).  ``J_i`` is joint i's frame *after* its
    motion, whose +z is the actuation axis.  ``E`` is the tip (end-effector)
    frame, the tip link's frame.

Offsets
    ``W_T_J_i = W_T_L_i · offset_before[i] · A_i(q_i)`` with ``A_i`` a rotation
    about z (``"RZ"``) or translation along z (``"TZ"``);
    ``W_T_L_{i+1} = W_T_J_i · offset_after[i]``; ``W_T_E = W_T_L_n · tip_offset``.
    ``offset_before[i]`` merges the fixed joints between ``L_i`` and joint i,
    joint i's origin and, in normalising mode, the frame change that makes its
    axis +z; ``offset_after[i]`` undoes that frame change (the identity when
    the robot's axis already is +z, always so in strict mode).

Jacobian
    Geometric, 6×n, rows ``(vx, vy, vz, wx, wy, wz)``: the linear velocity of
    the end effector's origin (or of a point offset from it) then the angular
    velocity, both expressed in ``W`` (Pinocchio's ``LOCAL_WORLD_ALIGNED``).
    ``W`` is the base link frame when ``base_pose`` is the identity.

Pure Python and numpy; batches reuse the batch-last products of
:mod:`bb_robot.model.batch` that :class:`~bb_robot.model.kinematics.ForwardKinematics`
uses too.

Reading a file is not this layer's job: :meth:`SerialManipulator.from_urdf` calls the hook
:data:`URDF_LOADER`, which :mod:`bb_robot.loading` (the one loading path, layers above)
registers; the package root has it imported on the first call (:mod:`bb_robot.hooks`), so
``SerialManipulator.from_urdf(path)`` works whatever was imported before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

from bb_robot.hooks import Hook
from bb_robot.model import compiled, ik
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
from bb_robot.model.errors import KinematicsError, OffAxisJointError, UnknownLink
from bb_robot.model.geometry import Vec3
from bb_robot.model.robot import Robot
from bb_robot.model.serial_chain import (
    EZ,
    check_joints,
    checked_pose,
    limits_of,
    offset_matrix,
    rotation_onto,
    unit_axis,
    walk,
)
from bb_robot.model.transforms import Matrix, origin_to_matrix
from bb_robot.model.unrolled import Unrolled, unrolled_frames, unrolled_jacobian


class UrdfLoader(Protocol):
    """The signature of :data:`URDF_LOADER`: a URDF or xacro file's validated robot."""

    def __call__(
        self, path: str | PathLike[str], *, xacro_args: Mapping[str, str] | None = None, drop_world: bool = False
    ) -> Robot: ...


#: Reads a URDF or xacro file for :meth:`SerialManipulator.from_urdf`; registered by
#: :mod:`bb_robot.loading` (``load_urdf_robot``).
URDF_LOADER: Hook[UrdfLoader] = Hook("load_urdf_robot")

#: How a joint of the model moves: rotation about +z or translation along +z of its joint frame.
Actuation = Literal["RZ", "TZ"]
RZ: Final = "RZ"
TZ: Final = "TZ"
#: Robot joint types and the actuation each becomes.
ACTUATION_OF: Mapping[str, Actuation] = {"revolute": RZ, "continuous": RZ, "prismatic": TZ}
#: Strict mode accepts a unit axis within this distance of +z (and still models it exactly).
STRICT_AXIS_TOLERANCE: Final = 1e-6


def _frozen(matrix: npt.ArrayLike) -> Matrix:
    array = np.array(matrix, dtype=float)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class SerialJoint:
    """One actuated joint of a :class:`SerialManipulator`.

    - ``offset_before``: 4×4 from the previous chain link frame (``parent_link``:
      the base link, or the child link of the previous joint) to this joint's
      frame at zero; it includes the fixed joints ``fixed_before``.
    - ``actuation``: ``"RZ"`` (revolute, continuous) or ``"TZ"`` (prismatic),
      about / along +z of the joint frame.
    - ``offset_after``: 4×4 from the joint frame after motion to ``child_link``'s
      frame (a pure rotation; the identity unless normalising mode re-expressed the axis).
    - ``lower`` / ``upper``: position limits (±inf for continuous joints and
      where the robot has none); ``velocity``, ``effort``: inf where the robot has none.
    - ``joint_type`` and ``axis``: the robot joint's type and unit axis (in the
      robot's joint frame, before any re-expression).
    """

    name: str
    actuation: Actuation
    offset_before: Matrix
    offset_after: Matrix
    lower: float
    upper: float
    velocity: float
    effort: float
    parent_link: str
    child_link: str
    joint_type: str
    axis: Vec3
    fixed_before: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class SerialPoses:
    """Poses from one forward pass, in the model frame ``W``.

    Shapes for ``q`` of shape ``(n,)``; a batch ``(B, n)`` prefixes ``B``:
    ``links`` ``(n + 1, 4, 4)`` (base link, then each joint's child link),
    ``joints`` ``(n, 4, 4)`` (joint frames after motion, +z the axis),
    ``end_effector`` ``(4, 4)``.
    """

    links: Matrix
    joints: Matrix
    end_effector: Matrix


class SerialManipulator:
    """A serial chain of RZ / TZ joints; build with :meth:`from_robot` or :meth:`from_urdf`.

    Immutable: :meth:`with_base_pose` returns a copy placed elsewhere.
    """

    def __init__(
        self,
        robot_name: str,
        base_link: str,
        joints: Sequence[SerialJoint],
        tip_link: str,
        tip_offset: npt.ArrayLike | None = None,
        base_pose: npt.ArrayLike | None = None,
        *,
        tip_fixed: Sequence[str] = (),
        strict: bool = True,
    ) -> None:
        """Assemble a model from its parts (normally called by :meth:`from_robot`).

        Raises :class:`InvalidTransform` when ``base_pose`` or ``tip_offset`` is not a rigid transform.
        """
        self.robot_name = robot_name
        self.base_link = base_link
        self.joints: tuple[SerialJoint, ...] = tuple(joints)
        self.tip_link = tip_link
        self.tip_offset: Matrix = _frozen(checked_pose(robot_name, "tip_offset", tip_offset))
        self.base_pose: Matrix = _frozen(checked_pose(robot_name, "base_pose", base_pose))
        self.tip_fixed: tuple[str, ...] = tuple(tip_fixed)
        self.strict = strict
        self.joint_names: tuple[str, ...] = tuple(j.name for j in self.joints)
        #: The chain links: the base link, then the child link of each joint.
        self.link_names: tuple[str, ...] = (base_link, *(j.child_link for j in self.joints))
        self.actuations: tuple[Actuation, ...] = tuple(j.actuation for j in self.joints)
        self.lower_limits: Matrix = _frozen([j.lower for j in self.joints])
        self.upper_limits: Matrix = _frozen([j.upper for j in self.joints])
        self.velocity_limits: Matrix = _frozen([j.velocity for j in self.joints])
        self.effort_limits: Matrix = _frozen([j.effort for j in self.joints])
        self._prismatic = np.array([a == TZ for a in self.actuations], dtype=bool)
        self._is_prismatic = tuple(a == TZ for a in self.actuations)
        self._ik: ik.Chain | None = None  # what the inverse kinematics needs, built on first use
        self._plan()

    # ------------------------------------------------------------------ building
    @classmethod
    def from_robot(
        cls,
        robot: Robot,
        tip: str | None = None,
        *,
        strict: bool = True,
        base: str | None = None,
        base_pose: npt.ArrayLike | None = None,
    ) -> SerialManipulator:
        """Return the serial manipulator of ``robot`` from ``base`` (default: the root link).

        Fixed joints are merged into offsets and never count as branches.
        Without ``tip``, each movable joint reached from the current chain link
        through fixed joints only must be alone (else :class:`NotSerialError`
        naming the competing joints and tips to pass); the chain ends at the
        last movable joint, and the tip is the last link of the unique fixed
        path after it (a flange or tool frame): where that path branches or
        ends, there.  With ``tip``, the chain is ``robot.path_between(base, tip)``
        (:class:`UnknownLink`, :class:`NotAnAncestor` propagate) and other
        branches are ignored.

        Revolute and continuous joints become ``"RZ"``, prismatic ``"TZ"``;
        floating, planar or other types and mimic joints in the chain raise
        :class:`UnsupportedJointError` naming each.  In ``strict`` mode every
        axis must be +z of its joint frame (within :data:`STRICT_AXIS_TOLERANCE`),
        else :class:`OffAxisJointError` naming each; with ``strict=False`` any
        axis is re-expressed as +z by a change of the joint frame.
        """
        try:
            return cls._from_robot(robot, tip, strict=strict, base=base, base_pose=base_pose)
        except KinematicsError as error:
            raise error.in_file(robot.source) from None

    @classmethod
    def _from_robot(
        cls,
        robot: Robot,
        tip: str | None,
        *,
        strict: bool,
        base: str | None,
        base_pose: npt.ArrayLike | None,
    ) -> SerialManipulator:
        base_link = robot.root_link if base is None else robot.get_link(base).name
        if tip is None:
            path, tip_link = walk(robot, base_link)
        else:
            trail = robot.path_between(base_link, tip)
            path, tip_link = [robot.joints[name] for name in trail[1::2]], tip
        check_joints(robot.name, path)
        if strict:
            off = {
                j.name: j.axis
                for j in path
                if j.type in ACTUATION_OF
                and float(np.linalg.norm(unit_axis(robot.name, j) - EZ)) > STRICT_AXIS_TOLERANCE
            }
            if off:
                raise OffAxisJointError(robot.name, off, STRICT_AXIS_TOLERANCE)

        joints: list[SerialJoint] = []
        offset = np.eye(4)
        merged: list[str] = []
        previous = base_link
        for joint in path:
            if joint.type == "fixed":
                offset = offset @ origin_to_matrix(joint.origin)
                merged.append(joint.name)
                continue
            axis = unit_axis(robot.name, joint)
            frame = np.eye(4)
            frame[:3, :3] = rotation_onto(axis)
            joints.append(
                SerialJoint(
                    name=joint.name,
                    actuation=ACTUATION_OF[joint.type],
                    offset_before=_frozen(offset @ origin_to_matrix(joint.origin) @ frame),
                    offset_after=_frozen(frame.T),
                    parent_link=previous,
                    child_link=joint.child_link,
                    joint_type=joint.type,
                    axis=(float(axis[0]), float(axis[1]), float(axis[2])),
                    fixed_before=tuple(merged),
                    **limits_of(joint),
                )
            )
            offset, merged, previous = np.eye(4), [], joint.child_link
        return cls(
            robot.name,
            base_link,
            joints,
            tip_link,
            offset,
            base_pose,
            tip_fixed=merged,
            strict=strict,
        )

    @classmethod
    def from_urdf(
        cls,
        path: str | PathLike[str],
        tip: str | None = None,
        *,
        strict: bool = False,
        base: str | None = None,
        base_pose: npt.ArrayLike | None = None,
        xacro_args: Mapping[str, str] | None = None,
        drop_world: bool = False,
    ) -> SerialManipulator:
        """Load a URDF (or xacro) file and return its serial manipulator.

        Normalising (``strict=False``) by default: URDF axes are rarely all +z.
        Other arguments as :meth:`from_robot` and :func:`bb_robot.urdf.builder.load_urdf`.
        The file is read by :func:`bb_robot.loading.load_file` (through :data:`URDF_LOADER`):
        its root element decides between URDF and xacro; an SDF file is refused.

        Raises:
            LoadError: the file cannot be read, or is SDF.
            BbRobotError: the URDF parser's and xacro's typed errors, ``InvalidRobot``, and
                :meth:`from_robot`'s.
        """
        robot = URDF_LOADER.function(path, xacro_args=xacro_args, drop_world=drop_world)
        return cls.from_robot(robot, tip, strict=strict, base=base, base_pose=base_pose)

    def with_base_pose(self, base_pose: npt.ArrayLike | None) -> SerialManipulator:
        """Return a copy of this model whose base link sits at ``base_pose`` in the model frame."""
        return SerialManipulator(
            self.robot_name,
            self.base_link,
            self.joints,
            self.tip_link,
            self.tip_offset,
            base_pose,
            tip_fixed=self.tip_fixed,
            strict=self.strict,
        )

    def __getstate__(self) -> dict[str, object]:
        """Pickle without the generated functions (rebuilt on first use)."""
        state = self.__dict__.copy()
        state["_generated"] = {}
        state["_ik"] = None
        return state

    # ---------------------------------------------------------------- properties
    @property
    def dof(self) -> int:
        """The number of joints (coordinates)."""
        return len(self.joints)

    def __len__(self) -> int:
        return len(self.joints)

    def __repr__(self) -> str:
        return (
            f"SerialManipulator({self.robot_name!r}, {self.base_link!r} -> {self.tip_link!r}, "
            f"joints={list(self.joint_names)!r}, actuations={''.join(a[0] for a in self.actuations)})"
        )

    # ------------------------------------------------------------------ compute
    def forward(self, q: npt.ArrayLike) -> SerialPoses:
        """Return the poses of every chain link, joint frame and the end effector for ``q``.

        ``q`` has shape ``(n,)`` or ``(B, n)``; batched results are strided
        views of one batch-last buffer (``np.ascontiguousarray`` them if
        needed).  Raises :class:`~bb_robot.model.errors.InvalidJointValue` for
        a wrong shape or a non-finite value.
        """
        n = self.dof
        if (frames := self._compiled(q, -1)) is not None:
            return SerialPoses(frames[self._links], frames[self._joint_frames], frames[self._tip])
        batch, values = self._input(q)
        if values is not None:
            poses = self._one("forward", values)  # links, joint frames, tip
            return SerialPoses(poses[: n + 1], poses[n + 1 : 2 * n + 1], poses[2 * n + 1])
        frames = self._frames(batch).transpose(3, 0, 1, 2)
        return SerialPoses(frames[:, self._links], frames[:, self._joint_frames], frames[:, self._tip])

    def link_poses(self, q: npt.ArrayLike) -> Matrix:
        """Return the poses of :attr:`link_names` in ``W``: shape ``(n + 1, 4, 4)`` or ``(B, n + 1, 4, 4)``."""
        if (frames := self._compiled(q, -1)) is not None:
            return frames[self._links]
        batch, values = self._input(q)
        if values is not None:
            return self._one("forward", values)[: self.dof + 1]
        result: Matrix = self._frames(batch)[self._links].transpose(3, 0, 1, 2)
        return result

    def end_effector_pose(self, q: npt.ArrayLike, offset: npt.ArrayLike | None = None) -> Matrix:
        """Return the end-effector pose in ``W``: shape ``(4, 4)`` or ``(B, 4, 4)``.

        ``offset`` (a 4×4 transform, or a point as 3 numbers) places the end
        effector relative to the tip frame: the result is ``W_T_E · offset``.
        Batched results are strided views (``np.ascontiguousarray`` them if needed).
        """
        values = None
        if (compiled_pose := self._compiled(q, self._tip)) is not None:  # the common case first: one row
            pose: Matrix = compiled_pose
        elif (values := one_configuration(q, self.dof)) is not None and (function := self._unrolled("tip")) is not None:
            pose = function(values)
        else:
            batch, values = self._input(q)
            if values is not None:
                pose = self._one("tip", values)
            else:
                pose = self._frames(batch)[self._tip].transpose(2, 0, 1)
        if offset is None:
            return pose
        result: Matrix = pose @ offset_matrix(self.robot_name, offset)
        return result

    def frame_poses(self, q: npt.ArrayLike) -> dict[str, Matrix]:
        """Return the pose of every chain link and of the tip, by name, for one configuration or a batch."""
        poses = self.forward(q)
        result = {name: poses.links[..., i, :, :] for i, name in enumerate(self.link_names)}
        result[self.tip_link] = poses.end_effector
        return result

    def jacobian(self, q: npt.ArrayLike, *, link: str | None = None, offset: npt.ArrayLike | None = None) -> Matrix:
        """Return the geometric Jacobian in ``W``: shape ``(6, n)`` or ``(B, 6, n)``.

        Rows are the linear velocity of a point then the angular velocity,
        both in ``W`` axes (Pinocchio's ``LOCAL_WORLD_ALIGNED``).  The point is
        the origin of the end effector, or of chain link ``link`` (one of
        :attr:`link_names` or the tip link; joints beyond it get zero columns),
        moved by ``offset`` (a 4×4 whose translation is used, or 3 numbers) in
        that frame.  Column i: ``[z_i × (p - o_i); z_i]`` for RZ and
        ``[z_i; 0]`` for TZ, with ``z_i``, ``o_i`` the axis and origin of joint i in ``W``.
        """
        if link is None and offset is None:  # the common case first: the end effector, one float64 row
            if (compiled_jacobian := self._compiled_jacobian(q)) is not None:
                return compiled_jacobian
            values = one_configuration(q, self.dof)
            if values is not None and (function := self._unrolled("jacobian")) is not None:
                return function(values)
        columns, frame = self._jacobian_target(link)
        point = None if offset is None else offset_matrix(self.robot_name, offset)[:3, 3]
        batch, values = self._input(q)
        if values is not None and frame is None and point is None:
            function = self._unrolled("jacobian")
            if function is not None:
                return function(values)
        if batch.shape[0] == 1 and values is not None:  # other targets: the batched code on one row
            return np.ascontiguousarray(self._jacobian_batch(batch, columns, frame, point)[0])
        return self._jacobian_batch(batch, columns, frame, point)

    def _jacobian_batch(self, batch: Matrix, columns: int, frame: int | None, point: Matrix | None) -> Matrix:
        """The Jacobians of configurations ``batch`` ``(B, n)``, shape ``(B, 6, n)``; arguments as :meth:`jacobian`."""
        frames = self._frames(batch)
        target = frames[self._tip] if frame is None else frames[self._links][frame]  # (4, 4, B)
        p = target[:3, 3] if point is None else np.einsum("ijb,j->ib", target[:3, :3], point) + target[:3, 3]
        moving = frames[self._joint_frames][:columns]  # a view
        z = moving[:, :3, 2]  # (c, 3, B): axes
        d = p - moving[:, :3, 3]  # (c, 3, B): from each joint origin to the point
        result = np.empty((6, self.dof, batch.shape[0]))
        result[:, columns:] = 0.0
        # Linear rows: z × d for RZ joints (TZ columns are overwritten below).
        for row, (a, b) in enumerate(((1, 2), (2, 0), (0, 1))):
            np.multiply(z[:, a], d[:, b], out=result[row, :columns])
            result[row, :columns] -= z[:, b] * d[:, a]
        result[3:, :columns] = z.transpose(1, 0, 2)
        for i in np.flatnonzero(self._prismatic[:columns]):
            result[:3, i] = z[i]
            result[3:, i] = 0.0
        return result.transpose(2, 0, 1)

    def inverse(
        self,
        target: npt.ArrayLike,
        *,
        seed: npt.ArrayLike | None = None,
        offset: npt.ArrayLike | None = None,
        position_tolerance: float = 1e-5,
        rotation_tolerance: float | None = 1e-5,
        timeout: float | None = ik.DEFAULT_TIMEOUT,
        max_restarts: int | None = None,
        rng: np.random.Generator | int | None = None,
        lower: npt.ArrayLike | None = None,
        upper: npt.ArrayLike | None = None,
    ) -> ik.IkSolution:
        """Return a configuration whose :meth:`end_effector_pose` (with ``offset``) is ``target``.

        The solver (:mod:`bb_robot.model.ik`, ``docs/ik.md``) descends from ``seed`` by damped least
        squares within the joint limits, then restarts from random configurations until a solution
        is within both tolerances, ``timeout`` has passed or ``max_restarts`` restarts were made.

        Args:
            target: The 4×4 end-effector pose in the model frame (base pose and ``offset`` included).
            seed: The start configuration (default: the middle of each joint's range, 0 for a
                continuous joint); a value at most 1e-6 outside its limits is clipped onto them.
            offset: A tool-centre point from the tip frame: a 4×4 transform or a point (3 numbers).
            position_tolerance: The largest position error accepted (m).
            rotation_tolerance: The largest rotation error accepted (rad); ``None`` solves position only.
            timeout: The time budget (s); ``None`` for no time limit (``max_restarts`` then bounds the search).
            max_restarts: At most this many random restarts (``None``: as many as the timeout allows).
            rng: The random generator of the restarts, or an int seeding one (reproducible restarts).
            lower: Per joint a lower limit narrowing the model's (for example a driver's command range).
            upper: Per joint an upper limit narrowing the model's.

        Returns:
            An :class:`~bb_robot.model.ik.IkSolution`: ``q`` is within the (narrowed) limits whether
            or not it succeeded (on failure the best configuration found), continuous joints within
            pi of the seed.

        Raises:
            InvalidIkTarget: ``target`` is not a finite rigid 4×4 (rotation orthonormal within 1e-6).
            InvalidIkSeed: ``seed`` has the wrong length, a non-finite value or one outside the limits.
            InvalidIkArgument: limits, tolerances, timeout, restarts or ``rng`` that cannot be used.
            InvalidTransform: ``offset`` is neither a rigid 4×4 nor a point.
        """
        return ik.inverse(
            self._ik_chain(),
            target,
            seed=seed,
            offset=offset,
            position_tolerance=position_tolerance,
            rotation_tolerance=rotation_tolerance,
            timeout=timeout,
            max_restarts=max_restarts,
            rng=rng,
            lower=lower,
            upper=upper,
        )

    def inverse_many(
        self,
        targets: npt.ArrayLike,
        seeds: npt.ArrayLike | None = None,
        *,
        rng: np.random.Generator | int | None = None,
        **options: object,
    ) -> list[ik.IkSolution]:
        """Solve :meth:`inverse` for each of ``targets`` ``(B, 4, 4)``, one random generator throughout.

        ``seeds`` is ``None``, one seed ``(n,)`` for every target, or ``(B, n)``; ``options`` are
        :meth:`inverse`'s keyword arguments.  Returns one solution per target; raises as :meth:`inverse`.
        """
        return ik.inverse_many(self._ik_chain(), targets, seeds, rng=rng, **options)

    # ------------------------------------------------------------------ internals
    def _ik_chain(self) -> ik.Chain:
        """What :mod:`bb_robot.model.ik` needs of this model, built on first use."""
        if self._ik is None:
            self._ik = ik.Chain(
                robot=self.robot_name,
                joint_names=self.joint_names,
                lower=np.ascontiguousarray(self.lower_limits),
                upper=np.ascontiguousarray(self.upper_limits),
                revolute=~self._prismatic,
                pose=self.end_effector_pose,
                jacobian=self.jacobian,
                program=self._compiled_program,
                spec=self._tip_jacobian_spec,
            )
        return self._ik

    def _plan(self) -> None:
        """Lay out the batch-last frames and the steps that fill them.

        Frame 0 is the base link.  When every ``offset_after`` is the identity
        (always in strict mode), joint frame i is link frame i + 1: frames
        ``0 … n``.  Otherwise links and joint frames alternate (``L_0, J_0,
        L_1, J_1, …``).  Either way links and joint frames are slices of the
        frames, so results are views, not gathered copies.  The tip frame
        follows when ``tip_offset`` is not the identity, else it is the last link.
        """
        n = self.dof
        compact = all(np.array_equal(j.offset_after, np.eye(4)) for j in self.joints)
        stride = 1 if compact else 2
        steps: list[tuple[Step, int]] = []  # (step, coordinate or -1)
        for i, joint in enumerate(self.joints):
            link, frame = stride * i, stride * i + 1
            kind = REVOLUTE if joint.actuation == RZ else PRISMATIC
            steps.append((make_step(link, frame, kind, np.asarray(joint.offset_before), EZ), i))
            if not compact:
                steps.append((make_step(frame, frame + 1, FIXED, np.asarray(joint.offset_after)), -1))
        count = stride * n + 1
        self._links = slice(0, count, stride)
        self._joint_frames = slice(1, count, stride)
        self._tip = count - 1
        if not np.array_equal(self.tip_offset, np.eye(4)):
            steps.append((make_step(count - 1, count, FIXED, np.asarray(self.tip_offset)), -1))
            self._tip = count
            count += 1
        self._steps = tuple(steps)
        self._frame_count = count
        self._generated: dict[str, Unrolled | None] = {}  # one-configuration code, built on first use
        self._program: compiled.Program | None = None  # compiled code's program, built on first use
        self._jacobian_spec: Matrix | None = None

    def _frames(self, batch: Matrix) -> Matrix:
        """Return the batch-last frames ``(count, 4, 4, B)`` for configurations ``batch`` ``(B, n)``."""
        frames = empty_frames(self._frame_count, batch.shape[0])
        frames[0] = self.base_pose[:, :, None]
        columns = np.ascontiguousarray(batch.T)  # one contiguous row per coordinate
        for step, coordinate in self._steps:
            apply_step(frames, step, None if coordinate < 0 else columns[coordinate])
        return frames

    def _input(self, q: npt.ArrayLike) -> tuple[Matrix, list[float] | None]:
        """Return ``(batch, values)``: ``q`` as ``(B, n)``, and its floats when it is one configuration."""
        values = one_configuration(q, self.dof)
        if values is not None:
            return np.asarray(q).reshape(1, -1), values
        batch, single = as_batch(self.robot_name, q, self.joint_names)
        return batch, (batch[0].tolist() if single else None)

    def _unrolled(self, what: str) -> Unrolled | None:
        """The generated one-configuration function (:mod:`bb_robot.model.unrolled`) for ``what``.

        ``"forward"``: the links, then the joint frames, then the tip; ``"tip"``: the tip;
        ``"jacobian"``: the end effector's Jacobian.  Built on first use; ``None`` for a very long chain.
        """
        if what not in self._generated:
            frames = range(self._frame_count)
            motions = [Motion(step, coordinate) for step, coordinate in self._steps]
            if what == "jacobian":
                function = unrolled_jacobian(self.base_pose, len(frames), motions, self._axes(), self._tip)
            else:
                outputs = [*frames[self._links], *frames[self._joint_frames], self._tip]
                outputs = [self._tip] if what == "tip" else outputs
                function = unrolled_frames(
                    self.base_pose, len(frames), motions, self.dof, outputs, single=what == "tip"
                )
            self._generated[what] = function
        return self._generated[what]

    def _compiled(self, q: npt.ArrayLike, index: int) -> Matrix | None:
        """Frame ``index``'s pose (every frame's for -1) by compiled code (:mod:`bb_robot.model.compiled`).

        ``None`` unless ``q`` is one C-contiguous float64 configuration, compiled code is in use
        for one configuration, and ``q`` is finite; the caller then takes the Python paths.
        """
        if not contiguous_vector(q, self.dof) or (functions := compiled.kernels(0)) is None:
            return None
        return compiled.one(functions, self._compiled_program(), q, index)

    def _axes(self) -> list[tuple[int, bool]]:
        """Per Jacobian column: the frame whose +z is the joint's axis, and whether the joint is prismatic."""
        return list(zip(range(self._frame_count)[self._joint_frames], self._is_prismatic, strict=True))

    def _compiled_program(self) -> compiled.Program:
        if self._program is None:
            motions = [Motion(step, coordinate) for step, coordinate in self._steps]
            self._program = compiled.program(self.base_pose, self._frame_count, motions, self.dof)
        return self._program

    def compiled_parts(self, link: str) -> tuple[compiled.Program, Matrix, int, int]:
        """For a kernel that runs this chain's kinematics itself: the program, the tip's Jacobian spec,
        the tip's frame and ``link``'s (a chain link or the tip; -1 for another link) among the program's frames."""
        frames = range(self._frame_count)
        index = self._tip if link == self.tip_link else -1
        if link in self.link_names:
            index = frames[self._links][self.link_names.index(link)]
        return self._compiled_program(), self._tip_jacobian_spec(), self._tip, index

    def _compiled_jacobian(self, q: npt.ArrayLike) -> Matrix | None:
        """The end effector's Jacobian by compiled code; ``None`` as for :meth:`_compiled`."""
        if not contiguous_vector(q, self.dof) or (functions := compiled.kernels(0)) is None:
            return None
        return compiled.jacobian(functions, self._compiled_program(), self._tip_jacobian_spec(), q)

    def _tip_jacobian_spec(self) -> Matrix:
        if self._jacobian_spec is None:
            self._jacobian_spec = compiled.jacobian_spec(self._tip, self._axes())
        return self._jacobian_spec

    def _one(self, what: str, values: list[float]) -> Matrix:
        """The poses of one configuration that ``_unrolled(what)`` gives (batched code if none).

        ``(k, 4, 4)`` for ``"forward"``, ``(4, 4)`` for ``"tip"``.
        """
        function = self._unrolled(what)
        if function is not None:
            return function(values)
        frames = self._frames(np.array([values]))[..., 0]
        if what == "tip":
            return np.ascontiguousarray(frames[self._tip])
        return np.concatenate([frames[self._links], frames[self._joint_frames], frames[None, self._tip]])

    def _jacobian_target(self, link: str | None) -> tuple[int, int | None]:
        """Return (number of joints moving the target, chain-link index or None for the end effector)."""
        if link is None or link == self.tip_link:
            return self.dof, None
        if link in self.link_names:
            index = self.link_names.index(link)
            return index, index
        raise UnknownLink(self.robot_name, link, [*self.link_names, self.tip_link])

"""Batched rigid-transform products shared by the kinematics models.

Both :class:`bb_robot.model.kinematics.ForwardKinematics` (every link of a tree)
and :class:`bb_robot.model.serial.SerialManipulator` (one chain) evaluate whole
batches of configurations the same way:

- frames are stored **batch-last**, ``frames[f, i, k, :]`` being one contiguous
  row over the batch (:func:`empty_frames`);
- each :class:`Step` ``child = parent · local(value)`` has a constant 3×K
  block, multiplied by the parent rotation in one matrix product for the whole
  batch (:func:`apply_step`); the value terms are contiguous vector operations.

This module also checks joint-value input (:func:`as_batch`) so that both
models reject bad input with the same :class:`InvalidJointValue` messages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeGuard

import numpy as np
import numpy.typing as npt

from bb_robot.model.errors import InvalidJointValue
from bb_robot.model.transforms import Matrix, skew

#: Rotation entries smaller than this are taken as exactly 0 where that saves work: rounding
#: residues such as the 6.1e-17 of ``cos(π/2)`` in URDF ``rpy``.  It is about one unit in the last
#: place of 1.0 (2.2e-16), so dropping such a term changes a result by no more than its rounding.
ROUNDING_RESIDUE = 2.5e-16

#: Step kinds: a constant transform, a rotation about an axis, a translation along one,
#: and a rotation about a coordinate axis ``±e_k`` (most real joints, all serial-model joints).
FIXED, REVOLUTE, PRISMATIC, REVOLUTE_AXIS = 0, 1, 2, 3


@dataclass(frozen=True)
class Step:
    """One step ``frames[child] = frames[parent] · origin · motion(v)`` of a batched product.

    ``block`` is a 3×K matrix of the step's constant parts, multiplied by the
    parent rotation in one matrix product for the whole batch.  With ``R``,
    ``t`` the rotation and translation of ``origin``:

    - :data:`FIXED`, K = 4: ``[R | t]``;
    - :data:`REVOLUTE`, K = 10: ``[C | A | B | t]``, local rotation
      ``C + cos(v)·A + sin(v)·B`` (Rodrigues' formula premultiplied by ``R``);
    - :data:`PRISMATIC`, K = 5: ``[R | u | t]``, local translation ``t + v·u``;
    - :data:`REVOLUTE_AXIS`, about ``sign·e_k``, K = 4: ``[R | t]``; the
      rotation about ``e_k`` only mixes columns ``i, j`` (``i, j, k`` cyclic,
      held in ``columns``) of the product, so a batch costs less than half the
      arithmetic and memory of the general case.

    The translation ``t`` is always the last column.  Build with :func:`make_step`.

    ``permutation`` is set when ``R`` is a signed permutation (up to
    :data:`ROUNDING_RESIDUE`; most real joint origins: rpy of multiples of
    π/2): column c of ``R`` is ``sign · e_source``, held as ``(source, sign)``,
    so the product with the parent rotation is a choice of its columns, no
    multiplication; ``translation`` then lists the nonzero ``(index, value)``
    of ``t`` (and, for :data:`PRISMATIC`, ``along`` those of ``R·u``).
    """

    parent: int
    child: int
    kind: int
    block: Matrix
    columns: tuple[int, int, int] = (0, 1, 2)
    sign: float = 1.0
    permutation: tuple[tuple[int, float], ...] | None = None
    translation: tuple[tuple[int, float], ...] = ()
    along: tuple[tuple[int, float], ...] = ()

    @property
    def block_t(self) -> Matrix:
        """The transposed block, shape (K, 3): left factor of the batch-last product."""
        return self.block.T


@dataclass(frozen=True)
class Motion:
    """One step of a chain or tree: ``step`` driven by ``q[coordinate] · multiplier + offset``.

    ``coordinate`` is -1 for a step that does not move (a :data:`~bb_robot.model.batch.FIXED` step).
    """

    step: Step
    coordinate: int = -1
    multiplier: float = 1.0
    offset: float = 0.0


def make_step(parent: int, child: int, kind: int, origin: Matrix, axis: Sequence[float] | Matrix = (0, 0, 1)) -> Step:
    """Return the step from frame ``parent`` to ``child`` through the 4×4 ``origin`` and a motion.

    ``kind`` is :data:`FIXED`, :data:`REVOLUTE` or :data:`PRISMATIC`; ``axis``
    is a unit vector in the frame ``origin`` leads to (ignored for
    :data:`FIXED`).  A revolute step about exactly ``±e_k`` becomes
    :data:`REVOLUTE_AXIS`.
    """
    rot, t = origin[:3, :3], origin[:3, 3:4]
    if kind == FIXED:
        return _with_permutation(Step(parent, child, FIXED, np.hstack([rot, t])))
    u: Matrix = np.asarray(axis, dtype=float)
    if kind == PRISMATIC:
        return _with_permutation(Step(parent, child, PRISMATIC, np.hstack([rot, (rot @ u)[:, None], t])), u)
    nonzero = np.flatnonzero(u)
    if len(nonzero) == 1 and abs(u[nonzero[0]]) == 1.0:
        k = int(nonzero[0])
        columns = ((k + 1) % 3, (k + 2) % 3, k)
        return _with_permutation(Step(parent, child, REVOLUTE_AXIS, np.hstack([rot, t]), columns, float(u[k])))
    along = rot @ np.outer(u, u)
    return Step(parent, child, REVOLUTE, np.hstack([along, rot - along, rot @ skew(tuple(u)), t]))


def _with_permutation(step: Step, axis: Matrix | None = None) -> Step:
    """``step`` with ``permutation`` and ``translation`` (and ``along`` for ``axis``) when its rotation allows."""
    rotation = step.block[:, :3]
    snapped = np.where(np.abs(rotation) < ROUNDING_RESIDUE, 0.0, rotation)
    if not (np.count_nonzero(snapped, axis=0) == 1).all() or not (np.abs(snapped).sum(axis=0) == 1.0).all():
        return step
    sources = np.abs(snapped).argmax(axis=0)
    permutation = tuple((int(e), float(snapped[e, c])) for c, e in enumerate(sources))
    translation = tuple((int(e), float(x)) for e, x in enumerate(step.block[:, -1]) if x != 0.0)
    along = () if axis is None else tuple((int(e), float(x)) for e, x in enumerate(snapped @ axis) if x != 0.0)
    return replace(step, permutation=permutation, translation=translation, along=along)


def sincos(angles: Matrix) -> tuple[Matrix, Matrix]:
    """Return ``(cos(angles), sin(angles))`` as new arrays, through ``t = tan(angles / 2)``.

    ``cos = (1 − t)(1 + t) / (1 + t²)`` and ``sin = 2t / (1 + t²)``.  numpy
    evaluates ``tan`` in SIMD registers but ``sin`` and ``cos`` one value at a
    time (on this project's machines about 1.3 ns against 9 ns a value,
    docs/benchmarks.md), so this is about four times faster than ``np.cos`` and
    ``np.sin`` for a batch.  It agrees with them to a few units in the last
    place over the whole float range (``test/model/test_batch.py``); near
    ``angles = ±π``, where ``t`` is large, ``sin = 2t / (1 + t²)`` keeps its
    relative accuracy, and ``(1 − t)(1 + t)`` avoids the cancellation of ``1 − t²``
    near ``t = 1``.  ``angles`` must be finite (callers check: :func:`as_batch`).
    """
    t = np.tan(np.multiply(angles, 0.5))
    scale = np.multiply(t, t)
    scale += 1.0
    np.divide(1.0, scale, out=scale)
    cos = np.subtract(1.0, t)
    cos *= t + 1.0
    cos *= scale
    t *= 2.0
    t *= scale
    return cos, t


def empty_frames(count: int, batch: int) -> Matrix:
    """Return uninitialised batch-last frames of shape ``(count, 4, 4, batch)`` with bottom rows ``0 0 0 1``."""
    frames = np.empty((count, 4, 4, batch))
    frames[:, 3, :3] = 0.0
    frames[:, 3, 3] = 1.0
    return frames


def apply_step(frames: Matrix, step: Step, value: Matrix | None) -> None:
    """Set ``frames[step.child] = frames[step.parent] · local(value)`` for the whole batch.

    ``value`` has one entry per batch element (unused, may be ``None``, for :data:`FIXED`).
    """
    if step.permutation is not None:
        _apply_permutation(frames, step, value)
        return
    product = np.matmul(step.block_t, frames[step.parent, :3, :3])  # (3, K, batch)
    rotation = frames[step.child, :3, :3]
    position = frames[step.child, :3, 3]
    np.add(product[:, -1], frames[step.parent, :3, 3], out=position)
    if step.kind == REVOLUTE_AXIS:
        assert value is not None
        # (parent R · R) · Rot(e_k, v): column i' = cos·m_i + sin·m_j,
        # column j' = cos·m_j − sin·m_i, column k unchanged.
        cos, sin = sincos(value)
        if step.sign < 0.0:
            np.negative(sin, out=sin)
        i, j, k = step.columns
        first, second = product[:, i], product[:, j]
        np.multiply(first, cos, out=rotation[:, i])
        rotation[:, i] += second * sin
        np.multiply(second, cos, out=rotation[:, j])
        rotation[:, j] -= first * sin
        rotation[:, k] = product[:, k]
    elif step.kind == REVOLUTE:
        assert value is not None
        cos, sin = sincos(value)
        np.multiply(product[:, 3:6], cos, out=rotation)
        rotation += product[:, 0:3]
        rotation += product[:, 6:9] * sin
    else:
        rotation[...] = product[:, 0:3]
        if step.kind == PRISMATIC:
            assert value is not None
            position += product[:, 3] * value


def _apply_permutation(frames: Matrix, step: Step, value: Matrix | None) -> None:
    """:func:`apply_step` when the step's rotation is a signed permutation: columns of the parent, no product."""
    assert step.permutation is not None
    parent = frames[step.parent, :3, :3]  # parent[:, e] is column e over the batch, (3, batch)
    rotation = frames[step.child, :3, :3]
    position = frames[step.child, :3, 3]
    position[...] = frames[step.parent, :3, 3]
    for e, x in step.translation:
        position += parent[:, e] * x
    if step.kind != REVOLUTE_AXIS:
        for c, (e, sign) in enumerate(step.permutation):
            np.multiply(parent[:, e], sign, out=rotation[:, c])
        if step.kind == PRISMATIC:
            assert value is not None
            for e, x in step.along:
                position += parent[:, e] * (value * x)
        return
    assert value is not None
    # Columns i, j of parent · R are ±parent[:, a], ±parent[:, b]; rotating about e_k mixes them.
    i, j, k = step.columns
    (a, sign_a), (b, sign_b), (g, sign_g) = (step.permutation[c] for c in (i, j, k))
    cos, sin = sincos(value)
    sin *= step.sign
    first, second = parent[:, a], parent[:, b]
    np.multiply(first, cos if sign_a > 0 else -cos, out=rotation[:, i])
    rotation[:, i] += second * (sin if sign_b > 0 else -sin)
    np.multiply(second, cos if sign_b > 0 else -cos, out=rotation[:, j])
    rotation[:, j] -= first * (sin if sign_a > 0 else -sin)
    np.multiply(parent[:, g], sign_g, out=rotation[:, k])


def as_batch(robot: str, q: npt.ArrayLike, joint_names: Sequence[str]) -> tuple[Matrix, bool]:
    """Return ``(batch, single)``: ``q`` as a float array of shape ``(count, n)``, and whether it was one vector.

    ``q`` has shape ``(n,)`` or ``(count, n)`` with ``n = len(joint_names)``.
    Raises :class:`InvalidJointValue` naming ``robot`` for a wrong (or ragged)
    shape, a value that is not a number, or a non-finite value.
    """
    n = len(joint_names)
    try:
        values = np.asarray(q, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidJointValue(
            robot,
            f"expected an array of numbers of shape ({n},) or (batch, {n}) ({', '.join(joint_names)}): {error}",
        ) from None
    single = values.ndim == 1
    batch = values.reshape(1, -1) if single else values
    if batch.ndim != 2 or batch.shape[1] != n:
        raise InvalidJointValue(
            robot,
            f"expected {n} joint values ({', '.join(joint_names)}), got shape {values.shape}",
        )
    if not np.isfinite(batch).all():
        bad = sorted({joint_names[int(i)] for i in np.nonzero(~np.isfinite(batch))[1]})
        raise InvalidJointValue(robot, f"non-finite value for joint(s) {', '.join(bad)}")
    return batch, single


def one_configuration(q: npt.ArrayLike, n: int) -> list[float] | None:
    """Return ``q`` as a list of ``n`` floats when it is a finite float64 vector of that length, else ``None``.

    The cheap check for the one-configuration paths; anything else (lists,
    batches, bad values, other dtypes) goes through :func:`as_batch`, which
    converts or raises the error.
    """
    if type(q) is not np.ndarray or q.dtype is not _FLOAT64 or q.shape != (n,):
        return None
    values: list[float] = q.tolist()
    # A sum is finite only when every term is (an overflow to inf just takes the slow path).
    return values if math.isfinite(sum(values)) else None


def contiguous_vector(q: object, n: int) -> TypeGuard[Matrix]:
    """Whether ``q`` is a C-contiguous float64 array of shape ``(n,)``: what compiled code takes as it is."""
    return type(q) is np.ndarray and q.dtype is _FLOAT64 and q.shape == (n,) and q.flags.c_contiguous


_FLOAT64 = np.dtype(np.float64)  # numpy's float64 dtype is one object: `is` is the quick test

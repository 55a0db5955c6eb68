"""Batched rigid-transform products shared by the kinematics models.

Both :class:`bb_robot.model.kinematics.ForwardKinematics` (every link of a tree)
and :class:`bb_robot.model.serial.SerialManipulator` (one chain) evaluate whole
batches of configurations the same way:

- frames are stored **batch-last**, ``frames[f, i, k, :]`` being one contiguous
  row over the batch (:func:`empty_frames`);
- each step ``child = parent · local(value)`` has a constant 3×K block
  (:func:`step_block`), multiplied by the parent rotation in one matrix product
  for the whole batch (:func:`apply_step`); the value terms are contiguous
  vector operations.

This module also checks joint-value input (:func:`as_batch`) so that both
models reject bad input with the same :class:`InvalidJointValue` messages.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bb_robot.model.errors import InvalidJointValue
from bb_robot.model.transforms import Matrix, skew

#: Step kinds: a constant transform, a rotation about an axis, a translation along one.
FIXED, REVOLUTE, PRISMATIC = 0, 1, 2


def step_block(kind: int, origin: Matrix, axis: Sequence[float] | Matrix) -> Matrix:
    """Return the 3×K constant block of ``local(v) = origin · motion(v)``.

    ``axis`` is a unit vector in the frame ``origin`` leads to (ignored for
    :data:`FIXED`).  With ``R``, ``t`` the rotation and translation of ``origin``:

    - :data:`FIXED`, K = 4: ``[R | t]``;
    - :data:`REVOLUTE`, K = 10: ``[C | A | B | t]``, local rotation
      ``C + cos(v)·A + sin(v)·B`` (Rodrigues' formula premultiplied by ``R``);
    - :data:`PRISMATIC`, K = 5: ``[R | u | t]``, local translation ``t + v·u``.

    The translation ``t`` is always the last column.
    """
    rot, t = origin[:3, :3], origin[:3, 3:4]
    if kind == FIXED:
        return np.hstack([rot, t])
    u: Matrix = np.asarray(axis, dtype=float)
    if kind == PRISMATIC:
        return np.hstack([rot, (rot @ u)[:, None], t])
    along = rot @ np.outer(u, u)
    return np.hstack([along, rot - along, rot @ skew(tuple(u)), t])


def empty_frames(count: int, batch: int) -> Matrix:
    """Return uninitialised batch-last frames of shape ``(count, 4, 4, batch)`` with bottom rows ``0 0 0 1``."""
    frames = np.empty((count, 4, 4, batch))
    frames[:, 3, :3] = 0.0
    frames[:, 3, 3] = 1.0
    return frames


def apply_step(
    frames: Matrix,
    parent: int,
    child: int,
    block_t: Matrix,
    kind: int,
    value: Matrix | None,
) -> None:
    """Set ``frames[child] = frames[parent] · local(value)`` for the whole batch.

    ``block_t`` is the transposed :func:`step_block` (shape K×3, the left factor
    of the batch-last product); ``value`` has one entry per batch element
    (unused, may be ``None``, for :data:`FIXED`).
    """
    product = np.matmul(block_t, frames[parent, :3, :3])  # (3, K, batch)
    rotation = frames[child, :3, :3]
    position = frames[child, :3, 3]
    np.add(product[:, -1], frames[parent, :3, 3], out=position)
    if kind == REVOLUTE:
        assert value is not None
        np.multiply(product[:, 3:6], np.cos(value), out=rotation)
        rotation += product[:, 0:3]
        rotation += product[:, 6:9] * np.sin(value)
    else:
        rotation[...] = product[:, 0:3]
        if kind == PRISMATIC:
            assert value is not None
            position += product[:, 3] * value


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
        bad = sorted({joint_names[i] for i in np.nonzero(~np.isfinite(batch))[1]})
        raise InvalidJointValue(robot, f"non-finite value for joint(s) {', '.join(bad)}")
    return batch, single

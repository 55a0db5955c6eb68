"""The batched forward pass as one compiled kernel, when numba is installed.

:mod:`bb_robot.model.batch` evaluates a batch with numpy: a dozen array
operations per step, each streaming whole rows of the batch through memory.
Here :func:`program` lays the same steps out as two arrays, and
:func:`frames` runs :func:`bb_robot.model._frames_numba.fill_frames` on them:
one compiled loop over the configurations that writes each configuration's
frames once, to consecutive memory.  Sines and cosines come from
:func:`bb_robot.model.batch.sincos`, the numpy path's own, so both paths
multiply the same numbers.

numba is optional: :func:`kernel` returns ``None`` when it is not installed,
when ``BB_ROBOT_KERNEL=numpy`` is set, or when loading the kernel fails
(logged once), and callers take the numpy path, which gives the same results
to rounding (``test/model/test_compiled.py`` compares the two on every robot
of the bench).  numba is imported on the first batch of at least
:data:`MIN_BATCH` configurations, never for one configuration: the nodes
never load it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.model.batch import FIXED, PRISMATIC, REVOLUTE, REVOLUTE_AXIS, ROUNDING_RESIDUE, Motion, sincos
from bb_robot.model.transforms import Matrix

_log = logging.getLogger(__name__)

#: The environment variable choosing the batch path: ``auto`` (numba when installed; the
#: default) or ``numpy`` (never numba).
ENVIRONMENT = "BB_ROBOT_KERNEL"

#: Batches smaller than this take the numpy path (loading numba is not worth it for them).
MIN_BATCH = 16

# Step kinds of Program.ints[:, 0]; the same numbers as in bb_robot.model._frames_numba.
_FIXED, _REVOLUTE, _PRISMATIC, _REVOLUTE_AXIS, _TRANSLATION, _AXIS = 0, 1, 2, 3, 4, 5

#: fill_frames(root, ints, constants, values, cos, sin, out): the arrays of a Program and a batch.
Kernel = Callable[..., None]

Indices = npt.NDArray[np.int64]

_loaded: list[Kernel | None] = []  # empty until the first call of kernel()


@dataclass(frozen=True)
class Program:
    """Steps laid out for :func:`bb_robot.model._frames_numba.fill_frames`.

    ``ints`` has one row per step: kind, parent frame, child frame, slot (the
    column of the values a moving step reads; 0 for a step that does not
    move), and for a rotation about ``±e_k`` the columns ``i, j, k`` it mixes
    and keeps.  ``constants`` has the step's 3×10 block row by row
    (``[R | · | · | t]`` fixed, ``[C | A | B | t]`` revolute: local rotation
    ``C + cos·A + sin·B``, ``[R | R·u | · | t]`` prismatic, ``[R | · | · | t]``
    about an axis) and the axis sign.  Slot ``s`` is driven by
    ``q[columns[s]] · multipliers[s] + offsets[s]``.
    """

    root: Matrix
    count: int
    ints: Indices
    constants: Matrix
    columns: Indices
    multipliers: Matrix
    offsets: Matrix
    direct: bool  # slot s is q[s] for every s: q is used as it is


def program(root: Matrix, count: int, motions: Sequence[Motion], arity: int) -> Program:
    """Return the :class:`Program` of ``motions`` (each parent before its child).

    Args:
        root: The 4×4 pose of frame 0.
        count: The number of frames.
        motions: The steps.
        arity: How many values a configuration has.

    Returns:
        The program; a step's slot is its place among the moving steps.
    """
    ints = np.zeros((len(motions), 7), dtype=np.int64)
    constants = np.zeros((len(motions), 31))
    columns: list[int] = []
    multipliers: list[float] = []
    offsets: list[float] = []
    for index, motion in enumerate(motions):
        step = motion.step
        block = constants[index, :30].reshape(3, 10)  # a view: filled in place
        block[:, 9] = step.block[:, -1]
        slot = 0
        if step.kind == FIXED or motion.coordinate < 0:
            rotation = step.block[:, 0:3]
            kind = _TRANSLATION if _is_identity(rotation) else _FIXED
            block[:, 0:3] = rotation
        else:
            slot = len(columns)
            columns.append(motion.coordinate)
            multipliers.append(motion.multiplier)
            offsets.append(motion.offset)
            if step.kind == PRISMATIC:
                kind = _PRISMATIC
                block[:, 0:4] = step.block[:, 0:4]
            elif step.kind == REVOLUTE:
                kind = _REVOLUTE
                block[:, 0:9] = step.block[:, 0:9]
            else:
                assert step.kind == REVOLUTE_AXIS
                rotation = step.block[:, 0:3]
                kind = _AXIS if _is_identity(rotation) else _REVOLUTE_AXIS
                block[:, 0:3] = rotation
                ints[index, 4:7] = step.columns
                constants[index, 30] = step.sign
        ints[index, 0:4] = (kind, step.parent, step.child, slot)
    direct = columns == list(range(arity)) and all(m == 1.0 for m in multipliers) and not any(offsets)
    return Program(
        root=np.ascontiguousarray(root[:3, :4]).ravel(),
        count=count,
        ints=ints,
        constants=constants,
        columns=np.array(columns, dtype=np.int64),
        multipliers=np.array(multipliers),
        offsets=np.array(offsets),
        direct=direct,
    )


def _is_identity(rotation: Matrix) -> bool:
    """Whether ``rotation`` is the identity up to rounding residues (as the numpy path treats it)."""
    return bool((np.abs(rotation - np.eye(3)) < ROUNDING_RESIDUE).all())


def kernel() -> Kernel | None:
    """The compiled kernel, or ``None`` (numba missing, ``BB_ROBOT_KERNEL=numpy``, or loading failed)."""
    if not _loaded:
        _loaded.append(_load())
    return _loaded[0]


def _load() -> Kernel | None:
    choice = os.environ.get(ENVIRONMENT, "auto").strip().lower()
    if choice == "numpy":
        return None
    if choice not in ("auto", ""):
        _log.warning("%s=%r is neither 'auto' nor 'numpy'; using 'auto'", ENVIRONMENT, choice)
    try:
        from bb_robot.model._frames_numba import fill_frames
    except ModuleNotFoundError as error:
        if error.name in ("numba", "llvmlite"):  # not installed: the numpy path, quietly
            return None
        _log.warning("numba could not load the batch kernel (%s); using numpy", error)
        return None
    except Exception as error:  # noqa: BLE001 - numba can fail in many ways; the numpy path still works
        _log.warning("numba could not load the batch kernel (%s: %s); using numpy", type(error).__name__, error)
        return None
    function: Kernel = fill_frames
    return function


def frames(function: Kernel, prog: Program, batch: Matrix) -> Matrix:
    """Return the poses ``(B, count, 4, 4)`` (C-contiguous) of configurations ``batch`` ``(B, arity)``.

    ``batch`` must be finite (:func:`bb_robot.model.batch.as_batch` checks).
    """
    if prog.direct:
        values = np.ascontiguousarray(batch)
    else:
        values = batch[:, prog.columns] * prog.multipliers
        values += prog.offsets
    cos, sin = sincos(values)
    out = np.empty((batch.shape[0], prog.count, 16))
    function(prog.root, prog.ints, prog.constants, values, cos, sin, out)
    return out.reshape(batch.shape[0], prog.count, 4, 4)

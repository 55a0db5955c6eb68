"""Forward kinematics of one configuration as straight-line Python, specialised per robot.

For one configuration, numpy's per-call overhead (a dozen small array
operations per joint) costs far more than the arithmetic.  This module
writes, once per model, a Python function that evaluates the same products
as :mod:`bb_robot.model.batch` on plain floats: every constant of every joint
is a float literal in the code, entries that are exactly 0, 1 or −1 are
folded away, and each frame entry is a local variable.  The function is
compiled with :func:`compile` from source this module generates (no text from
the robot file reaches the source: only float literals and indices).  It
packs its results with :mod:`struct` into a new buffer that becomes the
returned array (about half the cost of ``np.array`` on a tuple of floats).

:func:`unrolled_frames` returns, for a sequence of :class:`Motion` steps, a
function ``f(q)`` giving the 4×4 poses of chosen frames, shape ``(k, 4, 4)``;
:func:`unrolled_jacobian` one giving the geometric Jacobian, shape ``(6, n)``.
Both return ``None`` for models larger than :data:`MAX_UNROLLED_STEPS` (the
code would be long to compile for little gain); callers then use the batched
numpy path.  With numba installed, one configuration given as a float64
vector is computed by :mod:`bb_robot.model.compiled` instead.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Sequence

import numpy as np

from bb_robot.model.batch import FIXED, PRISMATIC, REVOLUTE, REVOLUTE_AXIS, ROUNDING_RESIDUE, Motion, Step
from bb_robot.model.transforms import Matrix

#: Models with more steps than this are not unrolled (compile time grows with the code).
MAX_UNROLLED_STEPS = 400

#: A generated function: joint values (a list of floats) in, a new writable float64 array out.
Unrolled = Callable[[Sequence[float]], Matrix]

_IDENTIFIER = re.compile(r"\b[vq][0-9]+\b")

Term = float | str  # a constant, or the name of a local variable / an expression


def _negated(term: Term) -> Term:
    if isinstance(term, float):
        return -term
    return term[1:] if term.startswith("-") else f"-{term}"


class _Writer:
    """Accumulates the lines of the generated function and folds constants.

    A non-constant :data:`Term` is always a local's name or its negation ``-name``.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count = 0

    def assign(self, expression: str) -> str:
        """Bind ``expression`` to a new local and return its name."""
        self._count += 1
        name = f"v{self._count}"
        self.lines.append(f"    {name} = {expression}")
        return name

    @staticmethod
    def _product(a: Term, b: Term) -> tuple[bool, str] | float:
        """``a·b`` as a constant, or ``(negative, expression)``."""
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(a, float):
            a, b = b, a
        assert isinstance(a, str)
        negative = a.startswith("-")
        a = a.lstrip("-")
        if isinstance(b, float):
            if b == 0.0:
                return 0.0
            if abs(b) == 1.0:
                return (negative != (b < 0.0), a)
            return (negative != (b < 0.0), f"{a} * {abs(b)!r}")
        if b.startswith("-"):
            negative, b = not negative, b[1:]
        return (negative, f"{a} * {b}")

    def dot(self, pairs: Sequence[tuple[Term, Term]], constant: float = 0.0) -> Term:
        """Return ``Σ a·b (+ constant)``, constants folded: a constant, a name or ``-name``."""
        terms: list[tuple[bool, str]] = []
        folded = constant
        for a, b in pairs:
            term = self._product(a, b)
            if isinstance(term, float):
                folded += term
            else:
                terms.append(term)
        if not terms:
            return folded
        if folded != 0.0:
            terms.append((folded < 0.0, repr(abs(folded))))
        terms.sort(key=lambda term: term[0])  # a positive term first where there is one
        negative, first = terms[0]
        if len(terms) == 1 and first.isidentifier():
            return f"-{first}" if negative else first
        expression = ("-" if negative else "") + first
        expression += "".join(f" {'-' if minus else '+'} {text}" for minus, text in terms[1:])
        return self.assign(expression)


_Frame = list[Term]  # the 12 entries of [R | t], row by row


def _rotation_entry(x: float) -> float:
    """A rotation entry, exactly 0 when it is a rounding residue (``cos(π/2)`` is 6.1e-17, not 0)."""
    return 0.0 if abs(x) < ROUNDING_RESIDUE else float(x)


def _affine_constants(matrix: Matrix) -> _Frame:
    return [_rotation_entry(x) if c < 3 else float(x) for row in matrix[:3] for c, x in enumerate(row)]


def _compose(w: _Writer, a: _Frame, b: _Frame) -> _Frame:
    """Return the entries of ``a · b`` (3×4 affine rows)."""
    out: _Frame = []
    for r in range(3):
        row = a[4 * r : 4 * r + 4]
        for c in range(4):
            pairs = [(row[0], b[c]), (row[1], b[4 + c]), (row[2], b[8 + c])]
            if c == 3:
                pairs.append((row[3], 1.0))
            out.append(w.dot(pairs))
    return out


def _local(w: _Writer, motion: Motion, value: Term) -> _Frame:
    """Return the entries of the step's local transform ``origin · motion(value)``.

    Not for a :data:`REVOLUTE_AXIS` step: :func:`_rotated` rotates the parent's product with the
    origin instead, which takes fewer operations.
    """
    step = motion.step
    last = step.block.shape[1] - 1  # translations in the last column, rotation terms before it
    block = [[float(x) if c == last else _rotation_entry(x) for c, x in enumerate(row)] for row in step.block]
    if step.kind == FIXED:
        return [block[r][c] for r in range(3) for c in range(4)]
    if step.kind == PRISMATIC:  # [R | u | t]: translation t + value·u
        out: _Frame = []
        for r in range(3):
            out.extend(block[r][0:3])
            out.append(w.dot([(value, block[r][3])], block[r][4]))
        return out
    cos: Term = w.assign(f"cos({value})")
    sin: Term = w.assign(f"sin({value})")
    assert step.kind == REVOLUTE  # [C | A | B | t]: rotation C + cos·A + sin·B
    out = []
    for r in range(3):
        m = block[r]
        out.extend(w.dot([(m[3 + c], cos), (m[6 + c], sin)], m[c]) for c in range(3))
        out.append(m[9])
    return out


def _motions(w: _Writer, root: Matrix, count: int, motions: Sequence[Motion]) -> list[_Frame]:
    """Emit the code of every step; return each frame's 12 entries (frame 0 is ``root``)."""
    frames: list[_Frame] = [[] for _ in range(count)]
    frames[0] = _affine_constants(root)
    for motion in motions:
        value: Term = 0.0
        if motion.coordinate >= 0:
            value = w.dot([(f"q{motion.coordinate}", motion.multiplier)], motion.offset)
        parent = frames[motion.step.parent]
        if motion.step.kind == REVOLUTE_AXIS:
            frames[motion.step.child] = _rotated(
                w, motion.step, _compose(w, parent, _affine_constants(motion.step.block)), value
            )
        else:
            frames[motion.step.child] = _compose(w, parent, _local(w, motion, value))
    return frames


def _rotated(w: _Writer, step: Step, frame: _Frame, value: Term) -> _Frame:
    """Return the entries of ``frame · Rot(sign·e_k, value)`` for a :data:`REVOLUTE_AXIS` step.

    ``frame`` is already the parent times the step's origin.  Rotating about
    ``e_k`` mixes columns ``i`` and ``j`` only: four products a row, fewer
    than multiplying the parent by the rotated origin (about a fifth fewer
    operations on a 7-DOF arm).
    """
    cos: Term = w.assign(f"cos({value})")
    sin: Term = w.assign(f"sin({value})")
    i, j, _ = step.columns
    s_j = sin if step.sign > 0 else _negated(sin)
    out = list(frame)
    for r in range(3):
        a, d = frame[4 * r + i], frame[4 * r + j]
        out[4 * r + i] = w.dot([(a, cos), (d, s_j)])
        out[4 * r + j] = w.dot([(d, cos), (a, _negated(s_j))])
    return out


def _needed(lines: Sequence[str], result: Sequence[Term]) -> list[str]:
    """The assignments ``result`` depends on, in order (a Jacobian needs no rotation of its target)."""
    wanted = {x.lstrip("-") for x in result if isinstance(x, str)}
    kept: list[str] = []
    for line in reversed(lines):
        name, expression = line.strip().split(" = ", 1)
        if name in wanted:
            kept.append(line)
            wanted.update(_IDENTIFIER.findall(expression))
    return kept[::-1]


def _function(w: _Writer, arity: int, result: Sequence[Term], shape: tuple[int, ...]) -> Unrolled:
    """Compile the function returning ``result`` as a float64 array of ``shape``."""
    assert math.prod(shape) == len(result)
    names = "".join(f"q{i}, " for i in range(arity))
    header = [f"def unrolled({'q'}):", f"    ({names}) = q"] if arity else ["def unrolled(q):"]
    body = ", ".join(repr(x) if isinstance(x, float) else x for x in result)
    returned = f"    return ndarray({shape!r}, FLOAT64, bytearray(pack({body})))"
    source = "\n".join([*header, *_needed(w.lines, result), returned])
    packer = struct.Struct(f"={len(result)}d")
    namespace: dict[str, object] = {
        "cos": math.cos,
        "sin": math.sin,
        "pack": packer.pack,
        "ndarray": np.ndarray,
        "FLOAT64": np.dtype(np.float64),
    }
    exec(compile(source, "<bb_robot.model.unrolled>", "exec"), namespace)  # noqa: S102 - generated from floats
    function: Unrolled = namespace["unrolled"]  # type: ignore[assignment]
    return function


def unrolled_frames(
    root: Matrix, count: int, motions: Sequence[Motion], arity: int, outputs: Sequence[int], *, single: bool = False
) -> Unrolled | None:
    """Return ``f(q)`` giving the 4×4 poses of frames ``outputs``: shape ``(len(outputs), 4, 4)``.

    Args:
        root: The 4×4 pose of frame 0.
        count: The number of frames.
        motions: The steps, in an order where each parent is computed before its child.
        arity: The number of joint values ``q`` holds.
        outputs: The frames to return, in order.
        single: Return the one frame of ``outputs`` as shape ``(4, 4)``.

    Returns:
        The generated function, or ``None`` when there are more than :data:`MAX_UNROLLED_STEPS` steps.
    """
    if len(motions) > MAX_UNROLLED_STEPS:
        return None
    w = _Writer()
    frames = _motions(w, root, count, motions)
    result: list[Term] = []
    for index in outputs:
        entries = frames[index]
        result.extend([*entries[0:4], *entries[4:8], *entries[8:12], 0.0, 0.0, 0.0, 1.0])
    if single:
        assert len(outputs) == 1
    return _function(w, arity, result, (4, 4) if single else (len(outputs), 4, 4))


def unrolled_jacobian(
    root: Matrix,
    count: int,
    motions: Sequence[Motion],
    axes: Sequence[tuple[int, bool]],
    target: int,
) -> Unrolled | None:
    """Return ``f(q)`` giving the 6×n geometric Jacobian (row by row) at the origin of frame ``target``.

    Args:
        root, count, motions: As :func:`unrolled_frames`; ``len(axes)`` values in ``q``.
        axes: Per column, the frame whose +z is the joint axis and whether the joint is prismatic.
        target: The frame whose origin the Jacobian is for.

    Returns:
        The generated function (rows ``vx, vy, vz, wx, wy, wz`` in the frame of ``root``), or
        ``None`` when there are more than :data:`MAX_UNROLLED_STEPS` steps.
    """
    if len(motions) > MAX_UNROLLED_STEPS:
        return None
    w = _Writer()
    frames = _motions(w, root, count, motions)
    p = frames[target]
    columns: list[list[Term]] = []
    for frame, prismatic in axes:
        f = frames[frame]
        ax, ay, az = f[2], f[6], f[10]
        if prismatic:
            columns.append([ax, ay, az, 0.0, 0.0, 0.0])
            continue
        dx, dy, dz = (w.dot([(p[3 + 4 * r], 1.0), (f[3 + 4 * r], -1.0)]) for r in range(3))
        linear = [
            w.dot([(ay, dz), (az, _negated(dy))]),
            w.dot([(az, dx), (ax, _negated(dz))]),
            w.dot([(ax, dy), (ay, _negated(dx))]),
        ]
        columns.append([*linear, ax, ay, az])
    result = [columns[c][r] for r in range(6) for c in range(len(axes))]
    return _function(w, len(axes), result, (6, len(axes)))

"""Forward kinematics as compiled code, when numba is installed.

:mod:`bb_robot.model.batch` evaluates a batch with numpy: a dozen array
operations per step, each streaming whole rows of the batch through memory;
:mod:`bb_robot.model.unrolled` evaluates one configuration as generated Python,
where each floating-point operation costs an interpreter step.
:func:`program` packs the same steps into one float64 array, the *code*, and
:mod:`bb_robot.model._frames_numba` runs it compiled: :func:`frames` for a
batch (one loop over the configurations, each one's frames written once, to
consecutive memory; sines and cosines from :func:`bb_robot.model.batch.sincos`,
the numpy path's own, a cache-sized block of configurations at a time) and
:func:`one` for one configuration.

numba is optional.  :func:`kernels` returns ``None`` when it is not installed,
when ``BB_ROBOT_KERNEL=numpy`` is set, or when loading the kernels fails
(logged once), and callers take the pure-Python paths, which give the same
results to rounding (``test/model/test_compiled.py`` compares them on every
robot of example-robot-data).  numba is imported on first use, which costs a
process about 0.3 s and 100 MB; a process that computes kinematics rarely
(the nodes, where rclpy dominates every message, and the command line) calls
``default_mode("batch")`` so that one configuration stays in Python and only a
batch of at least :data:`MIN_BATCH` configurations loads numba.

The code's layout: ``count, steps, slots``; the root's ``[R | t]`` (12 values);
per step 7 integers (kind, parent frame, child frame, slot, and for a rotation
about ``±e_k`` the columns ``i, j, k`` it mixes and keeps) and 31 constants
(the 3×10 block row by row: ``[R | · | · | t]`` fixed, ``[C | A | B | t]``
revolute, local rotation ``C + cos·A + sin·B``, ``[R | R·u | · | t]``
prismatic, ``[R | · | · | t]`` about an axis; then the axis sign); per slot
``column, multiplier, offset``: slot ``s`` is driven by
``q[column] · multiplier + offset``.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.model.batch import FIXED, PRISMATIC, REVOLUTE, REVOLUTE_AXIS, ROUNDING_RESIDUE, Motion, sincos
from bb_robot.model.transforms import Matrix

_log = logging.getLogger(__name__)

#: The environment variable choosing where compiled code is used: ``auto`` (batches and one
#: configuration; the default), ``batch`` (batches only) or ``numpy`` (never).
ENVIRONMENT = "BB_ROBOT_KERNEL"
MODES = ("auto", "batch", "numpy")

#: Batches smaller than this take the numpy path in ``batch`` mode (loading numba is not worth it).
MIN_BATCH = 16
#: About how long each module of kernels takes numba to compile (s; measured with an empty cache on a
#: 2-core Intel Xeon host, 2026-12-05: ``NUMBA_CACHE_DIR=$(mktemp -d) bb-robot kernels``), for the
#: line that says a compile is coming.
KERNEL_SECONDS = {"frames": 12.0, "ik": 10.0, "servo": 25.0, "placement": 3.0, "approach": 4.0}

#: Slot values per block of :func:`frames` (256 KB an array: sines, cosines and their temporaries
#: fit the 2 MB L2 cache of a core; 16k to 128k values measured alike, smaller blocks pay numpy's
#: per-call cost more often).
BLOCK_VALUES = 32_768

# Step kinds, the first integer of a step; the same numbers as in bb_robot.model._frames_numba.
_FIXED, _REVOLUTE, _PRISMATIC, _REVOLUTE_AXIS, _TRANSLATION, _AXIS = 0, 1, 2, 3, 4, 5
_HEADER, _ROOT, _STEP = 3, 12, 38


@dataclass(frozen=True)
class Kernels:
    """The compiled functions of :mod:`bb_robot.model._frames_numba`."""

    fill_frames: Callable[..., None]
    one_configuration: Callable[..., bool]
    jacobian: Callable[..., bool]
    ik_solve: Callable[..., int]  # bb_robot.model._ik_numba.solve


@dataclass(frozen=True)
class Program:
    """The packed code of a kinematic tree (layout in the module docstring), and scratch for one configuration."""

    code: Matrix
    count: int
    slots: int
    columns: npt.NDArray[np.int64]
    multipliers: Matrix
    offsets: Matrix
    direct: bool  # slot s is q[s] for every s: a batch is used as it is
    work: Matrix  # scratch of one_configuration (used with the interpreter lock held)

    @property
    def kinds(self) -> tuple[int, ...]:
        """Each step's kind (0 fixed, 1 revolute, 2 prismatic, 3 about an axis, 4 a translation,
        5 about an axis from the parent's own frame), in order."""
        steps = int(self.code[1])
        return tuple(int(self.code[_HEADER + _ROOT + _STEP * s]) for s in range(steps))


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
    steps = np.zeros((len(motions), _STEP))
    columns: list[int] = []
    multipliers: list[float] = []
    offsets: list[float] = []
    for index, motion in enumerate(motions):
        step = motion.step
        row = steps[index]
        block = row[7:37].reshape(3, 10)  # a view: filled in place
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
                row[4:7] = step.columns
                row[37] = step.sign
        row[0:4] = (kind, step.parent, step.child, slot)
    table = np.array([columns, multipliers, offsets], dtype=float).T
    header = [count, len(motions), len(columns)]
    code = np.concatenate([header, np.ascontiguousarray(root[:3, :4]).ravel(), steps.ravel(), table.ravel()])
    direct = columns == list(range(arity)) and all(m == 1.0 for m in multipliers) and not any(offsets)
    return Program(
        code=code,
        count=count,
        slots=len(columns),
        columns=np.array(columns, dtype=np.int64),
        multipliers=np.array(multipliers),
        offsets=np.array(offsets),
        direct=direct,
        work=np.empty(3 * len(columns) + 16 * count),
    )


def _is_identity(rotation: Matrix) -> bool:
    """Whether ``rotation`` is the identity up to rounding residues (as the numpy path treats it)."""
    return bool((np.abs(rotation - np.eye(3)) < ROUNDING_RESIDUE).all())


_mode: list[str] = []  # the chosen mode, once read or chosen
_loaded: list[Kernels | None] = []  # empty until the kernels are first needed


def choose(mode: str) -> None:
    """Choose for this process where compiled code is used: ``auto``, ``batch`` or ``numpy`` (see :data:`MODES`).

    Overrides ``BB_ROBOT_KERNEL``.  Raises :class:`ValueError` naming the modes for another value.
    """
    if mode not in MODES:
        raise ValueError(f"kernel mode {mode!r}: expected one of {', '.join(MODES)}")
    _mode[:] = [mode]


def default_mode(mode: str) -> None:
    """Choose ``mode`` for this process unless ``BB_ROBOT_KERNEL`` chooses one; see :func:`choose`."""
    if not os.environ.get(ENVIRONMENT, "").strip():
        choose(mode)


def mode() -> str:
    """The mode in force: the one chosen, else ``BB_ROBOT_KERNEL``, else ``auto``."""
    if not _mode:
        value = os.environ.get(ENVIRONMENT, "auto").strip().lower() or "auto"
        if value not in MODES:
            _log.warning("%s=%r is not one of %s; using 'auto'", ENVIRONMENT, value, ", ".join(MODES))
            value = "auto"
        _mode.append(value)
    return _mode[0]


def kernels(batch: int) -> Kernels | None:
    """The compiled kernels for a call on ``batch`` configurations (0: one configuration given as a vector).

    ``None`` when the mode leaves such a call to Python, or numba is missing or failed to load.
    """
    chosen = mode()
    if chosen == "numpy" or (chosen == "batch" and batch < MIN_BATCH):
        return None
    if not _loaded:
        _loaded.append(_load())
    return _loaded[0]


def import_kernels(module: str, what: str, seconds: float = 0.0) -> ModuleType | None:
    """Import a module of numba kernels (compiling or loading them), or ``None`` to take the numpy path.

    ``None`` when numba or llvmlite is not installed (quietly), or when the import fails in any
    other way (logged, naming ``what``).  The caller decides whether the mode allows kernels.
    When a kernel of the module is not in numba's cache, one line is logged as its compile starts:
    what compiles and about how long it takes (``bb-robot kernels``, which scripts/setup runs,
    compiles every kernel at install).

    Args:
        module: the module's full name.
        what: what it holds, for the log line ("the servo's cycle").
        seconds: about how long its kernels take to compile (CPU seconds on a 2-core host).

    Returns:
        The module, or ``None``.
    """
    try:
        _announce_compiles(module, what, seconds)
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name in ("numba", "llvmlite"):  # not installed: the pure-Python paths, quietly
            return None
        _log.warning("numba could not load %s (%s); using numpy", what, error)
    except Exception as error:  # noqa: BLE001 - numba can fail in many ways; the numpy paths still work
        _log.warning("numba could not load %s (%s: %s); using numpy", what, type(error).__name__, error)
    return None


#: Kernel module → (what it holds, about how many seconds it compiles in), for the announcement.
_KERNEL_MODULES: dict[str, tuple[str, float]] = {}
#: The modules whose compile was announced, and how deep numba is in nested compiles now.
_announced: set[str] = set()
_depth = [0]


def _announce_compiles(module: str, what: str, seconds: float) -> None:
    """Log one line when numba starts compiling (a cache miss) a kernel of ``module``, once per module.

    numba triggers its ``numba:compile`` event only when a function is not in its cache; a kernel's
    compile compiles the functions it calls too (nested events): only the outermost is announced.
    Raises ``ModuleNotFoundError`` when numba is not installed.
    """
    from numba.core import event

    if not _KERNEL_MODULES:  # the first kernel module: listen once for the whole process

        class Announcer(event.Listener):
            def on_start(self, started: Any) -> None:
                _compile_started((started.data or {}).get("dispatcher"))

            def on_end(self, ended: Any) -> None:
                _depth[0] = max(0, _depth[0] - 1)

        event.register("numba:compile", Announcer())
    _KERNEL_MODULES[module] = (what, seconds)


def _compile_started(dispatcher: Any) -> None:
    _depth[0] += 1
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "")
    if _depth[0] == 1 and module in _KERNEL_MODULES and module not in _announced:
        _announced.add(module)
        what, seconds = _KERNEL_MODULES[module]
        _log.warning(
            "compiling %s with numba: about %.0f s, once (cached for the next run; "
            "`bb-robot kernels` compiles every kernel, scripts/setup runs it at install)",
            what,
            seconds,
        )


def _load() -> Kernels | None:
    frames_kernels = import_kernels("bb_robot.model._frames_numba", "the kinematics kernels", KERNEL_SECONDS["frames"])
    ik_kernels = (
        import_kernels("bb_robot.model._ik_numba", "the inverse kinematics kernel", KERNEL_SECONDS["ik"])
        if frames_kernels
        else None
    )
    if frames_kernels is None or ik_kernels is None:
        return None
    return Kernels(
        frames_kernels.fill_frames, frames_kernels.one_configuration, frames_kernels.jacobian, ik_kernels.solve
    )


def frames(functions: Kernels, prog: Program, batch: Matrix, out: Matrix | None = None) -> Matrix:
    """Return the poses ``(B, count, 4, 4)`` (C-contiguous) of configurations ``batch`` ``(B, arity)``.

    ``batch`` must be finite (:func:`bb_robot.model.batch.as_batch` checks).  ``out``, when
    given, is a C-contiguous float64 array of ``B · count · 16`` values the poses are written into
    (and returned, reshaped); the caller checks it.
    """
    out = np.empty((batch.shape[0], prog.count, 16)) if out is None else out.reshape(batch.shape[0], prog.count, 16)
    rows = block_rows(prog.slots)
    for start in range(0, batch.shape[0], rows):
        part = batch[start : start + rows]
        if prog.direct:
            values = np.ascontiguousarray(part)
        else:
            values = part[:, prog.columns] * prog.multipliers
            values += prog.offsets
        cos, sin = sincos(values)
        functions.fill_frames(prog.code, values, cos, sin, out[start : start + rows])
    return out.reshape(batch.shape[0], prog.count, 4, 4)


def block_rows(slots: int) -> int:
    """How many configurations :func:`frames` takes at a time: :data:`BLOCK_VALUES` values, at least 16.

    The slot values, their sines and cosines and numpy's temporaries for them then stay in
    the core's cache between the trigonometry and the kernel that reads them; over a whole
    batch at once they stream through memory (a 200-joint chain, 10,000 configurations:
    16 MB an array), which made Talos and the 200-link chain about a sixth slower
    (docs/benchmarks.md).
    """
    return max(MIN_BATCH, BLOCK_VALUES // max(slots, 1))


def jacobian_spec(target: int, axes: Sequence[tuple[int, bool]]) -> Matrix:
    """The ``spec`` of :func:`jacobian`: the frame whose origin the Jacobian is for, and per column
    the frame whose +z is the joint axis and whether the joint is prismatic."""
    return np.array([target, *(x for frame, prismatic in axes for x in (frame, float(prismatic)))], dtype=float)


def jacobian(functions: Kernels, prog: Program, spec: Matrix, q: Matrix) -> Matrix | None:
    """Return the geometric Jacobian ``(6, n)`` of configuration ``q`` (rows ``vx, vy, vz, wx, wy, wz``).

    ``q`` as for :func:`one`; ``None`` when it has a non-finite value.
    """
    out = np.empty((6, (len(spec) - 1) // 2))
    return out if functions.jacobian(prog.code, spec, q, prog.work, out) else None


def one(functions: Kernels, prog: Program, q: Matrix, index: int = -1) -> Matrix | None:
    """Return the poses ``(count, 4, 4)`` of configuration ``q``, or frame ``index``'s ``(4, 4)``.

    ``q`` must be a C-contiguous float64 vector of the program's arity.  Returns
    ``None`` when it has a non-finite value (the caller's checks then say which).
    """
    out = np.empty((prog.count, 4, 4) if index < 0 else (4, 4))
    return out if functions.one_configuration(prog.code, q, prog.work, out, index) else None


def compile_cached(dispatcher: Any, signature: Any, sources: Sequence[str | os.PathLike[str]]) -> None:
    """Compile a numba function for ``signature`` alone, from numba's cache while its code is unchanged.

    numba checks its cache against the file that defines the function only; a kernel that
    inlines functions of other files (``sources``) would keep running their old code after they
    changed.  So the cache files of ``dispatcher`` are deleted when the digest of ``sources``
    differs from the one stamped beside them.  Afterwards the function compiles nothing more:
    an argument of another type raises ``TypeError`` instead of compiling (inside a control loop).

    Args:
        dispatcher: the ``numba.njit(cache=True)`` function, not yet compiled.
        signature: its one signature.
        sources: every file whose code it compiles (its own included).
    """
    digest = hashlib.sha256(b"".join(Path(source).read_bytes() for source in sources)).hexdigest()
    cache = getattr(dispatcher, "_cache", None)  # numba's FunctionCache (not public API: checked)
    index = getattr(getattr(cache, "_cache_file", None), "_index_name", None)
    directory = getattr(cache, "_cache_path", None)
    stamp = Path(directory) / f"{index}.sources" if directory and index else None
    current = ""
    if stamp is not None:
        try:
            current = stamp.read_text(encoding="ascii")
        except OSError:
            current = ""
        if current != digest:
            base = str(index).rsplit(".", 2)[0]  # <module>.<function>-<line>
            for stale in Path(str(directory)).glob(f"{glob.escape(base)}.*.nb[ic]"):
                stale.unlink(missing_ok=True)
    dispatcher.compile(signature)
    dispatcher.disable_compile()
    if stamp is not None and current != digest:
        try:
            stamp.write_text(digest, encoding="ascii")
        except OSError:  # a read-only cache: numba then compiles every time, which is correct
            pass

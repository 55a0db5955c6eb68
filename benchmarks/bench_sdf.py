#!/usr/bin/env python3
"""SDF loading against libsdformat 12, and the SDF-loaded UR3e's FK and Jacobian against Pinocchio.

Run ``python benchmarks/bench_sdf.py [--quick] [--no-docs] [--only TEXT]``.  In one run:

(a) every ``*.sdf`` of the shared corpus (``../shared/corpus``, the include resources among
    them), with the corpus README's resource paths, loaded by

    - *ours: read+resolve*: ``resolve(read_document(path))``: parsing, include expansion and
      both frame graphs of the whole file built, checked and resolved (every world pose).
      This is the work ``sdf::Root::Load`` does (parse, includes, frame graphs built and
      validated), so it is the comparison the target is about;
    - *ours: load_from_file*: the entry point users call: the above plus model selection,
      conversion to the robot model and the serial model (strict; ``strict=False`` when an
      axis is not +z; without the serial model when the chain branches; nothing when the file
      holds no kinematic model);
    - *libsdformat 12*: ``sdf::Root::Load`` in the C++ helper ``test/sdf/libsdformat/sdf_poses``
      (``--time N``: N loads in one process, so process start-up is not counted; the helper
      reports their mean and minimum).

    Repetitions interleave the parties: each round times ours, then runs the helper.  Files
    libsdformat rejects are timed for bb_robot only, and it is never given the include cycles
    it hangs on (``LIBSDFORMAT_HANGS``).  Every party reads the files from disk on every load.
(b) the UR3e of ``sas_robot_driver_gazebo/sdf/ur3e_world.sdf`` (three levels of includes):
    ``SerialManipulator.end_effector_pose``, ``forward`` and ``jacobian`` per call against
    Pinocchio on the same kinematics (the loaded robot exported with
    ``bb_robot.urdf.writer.robot_to_urdf``, read by ``pinocchio.buildModelFromXML``).

Prints a Markdown report and rewrites the ``bench_sdf`` section of ``docs/benchmarks.md``
(``--no-docs`` leaves it alone).  The target (within 3× of libsdformat) is reported as met or
MISSED, never asserted.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402  (puts the repository root and test/ on sys.path)
import numpy as np  # noqa: E402
from helpers import libsdformat_reference as reference  # noqa: E402
from helpers.pinocchio_configuration import pin_configuration  # noqa: E402

from bb_robot.model.errors import OffAxisJointError, SerialChainError  # noqa: E402
from bb_robot.model.serial import SerialManipulator  # noqa: E402
from bb_robot.sdf import SdfError, SdfLoadResult, load_from_file, read_document, resolve  # noqa: E402
from bb_robot.urdf.writer import robot_to_urdf  # noqa: E402

try:
    import pinocchio as pin
except ImportError:  # pragma: no cover - reported in the output
    pin = None

SECTION = "bench_sdf"
CORPUS_DIR = _common.CORPUS_DIR  # ../shared/corpus beside the repository (test/robot_files.py)
TARGET_RATIO = 3.0
UR3E_WORLD = "sas_robot_driver_gazebo/sdf/ur3e_world.sdf"
UR3E_SCOPE = "ur3e::ur3e_position_controller::ur3e"
RESOURCE_PATHS = tuple(CORPUS_DIR / name for name in reference.CORPUS_RESOURCE_DIRS)
NO_ENVIRONMENT: dict[str, str] = {}  # GZ_SIM_RESOURCE_PATH / SDF_PATH of this shell do not count
READ = "ours: read+resolve"
LOAD = "ours: load_from_file"


@dataclass
class Settings:
    quick: bool
    rounds: int  # interleaved rounds per file
    helper_runs: int  # loads per helper invocation (one round)
    sample_seconds: float  # one sample of ours lasts about this long (several calls if fast)
    fk_repeat: int

    @classmethod
    def make(cls, quick: bool) -> Settings:
        if quick:
            return cls(True, 2, 2, 0.01, 5)
        return cls(False, 7, 4, 0.05, 25)


def _short(error: BaseException) -> str:
    """The first line of an error, without the corpus prefix, cut at 150 characters."""
    text = " ".join(str(error).strip().splitlines()[:1]).replace(f"{CORPUS_DIR}/", "")
    return f"{type(error).__name__}: {text[:150]}{'…' if len(text) > 150 else ''}"


def _libsdformat_reason(error: reference.LibsdformatError) -> str:
    message = error.errors[0]["message"] if error.errors else str(error).splitlines()[0]
    message = " ".join(str(message).split()).replace(f"{CORPUS_DIR}/", "")
    return message[:150] + ("…" if len(message) > 150 else "")


# ------------------------------------------------------------------------------ (a) loading
@dataclass
class FileRow:
    label: str
    kib: float  # every file read (the includes too), as bb_robot read them
    files: int | None
    ours: dict[str, list[float]] = field(default_factory=dict)
    ours_error: str | None = None  # read+resolve rejected the file (then timed to the error)
    load_kind: str = "—"  # what load_from_file built
    load_error: str | None = None
    lib_means: list[float] = field(default_factory=list)
    lib_mins: list[float] = field(default_factory=list)
    lib_status: str = "ok"  # ok, rejects, hangs, unavailable
    lib_error: str | None = None

    @property
    def ours_median(self) -> float | None:
        return _common.median(self.ours[READ]) if self.ours.get(READ) else None

    @property
    def load_median(self) -> float | None:
        return _common.median(self.ours[LOAD]) if self.ours.get(LOAD) else None

    @property
    def lib_median(self) -> float | None:
        return _common.median(self.lib_means) if self.lib_means else None


def _read_resolve(path: Path) -> Callable[[], object]:
    def run() -> object:
        return resolve(read_document(path, resource_paths=RESOURCE_PATHS, environ=NO_ENVIRONMENT))

    return run


def _rejecting(function: Callable[[], object]) -> Callable[[], object]:
    """``function`` timed up to the SdfError it raises (how long a rejection takes)."""

    def run() -> object:
        try:
            return function()
        except SdfError as error:
            return error

    return run


def _load_variant(path: Path) -> tuple[Callable[[], object] | None, str, str | None]:
    """The ``load_from_file`` call to time, what it builds, and why it builds less (or nothing)."""
    variants: list[tuple[str, dict[str, Any]]] = [
        ("robot + serial", {}),
        ("robot + serial (strict=False)", {"strict": False}),
        ("robot only (build_serial=False)", {"build_serial": False}),
    ]
    reason: str | None = None
    for kind, options in variants:

        def run(options: dict[str, Any] = options) -> SdfLoadResult:
            return load_from_file(path, resource_paths=RESOURCE_PATHS, environ=NO_ENVIRONMENT, **options)

        try:
            run()
        except OffAxisJointError as error:
            reason = reason or _short(error)
            continue
        except SerialChainError as error:
            reason = reason or _short(error)
            if options.get("build_serial") is False:
                return None, "fails", reason
            continue
        except Exception as error:  # noqa: BLE001 - a file without a robot is a result
            return None, "fails", reason or _short(error)
        return run, kind, reason
    return None, "fails", reason


def bench_file(path: Path, helper: Path | None, unavailable: str | None, settings: Settings) -> FileRow:
    relative = path.relative_to(CORPUS_DIR).as_posix()
    row = FileRow(relative, path.stat().st_size / 1024, None)

    read = _read_resolve(path)
    try:
        graph = read()
    except SdfError as error:
        row.ours_error = _short(error)
        read = _rejecting(read)
    else:
        files = graph.document.files  # type: ignore[attr-defined]
        row.files = len(files)
        row.kib = sum(Path(name).stat().st_size for name in files) / 1024
    parties: dict[str, Callable[[], object]] = {READ: read}
    if row.ours_error is None:
        load, row.load_kind, row.load_error = _load_variant(path)
        if load is not None:
            parties[LOAD] = load
    calls = {
        name: _common.calls_per_sample(function, settings.sample_seconds, 1000) for name, function in parties.items()
    }

    if relative in reference.LIBSDFORMAT_HANGS:
        row.lib_status = "hangs"
    elif helper is None:
        row.lib_status, row.lib_error = "unavailable", unavailable
    row.ours = {name: [] for name in parties}
    _common.freeze_heap()
    for _ in range(settings.rounds):
        for name, function in parties.items():
            row.ours[name].append(_common.time_calls(function, calls[name]))
        if row.lib_status != "ok" or helper is None:
            continue
        try:
            timing = reference.time_load(helper, path, RESOURCE_PATHS, settings.helper_runs)
        except reference.LibsdformatError as error:
            row.lib_status = "hangs" if error.timed_out else "rejects"
            row.lib_error = _libsdformat_reason(error)
            continue
        row.lib_means.append(float(timing["mean_seconds"]))
        row.lib_mins.append(float(timing["min_seconds"]))
    return row


def _ratio(row: FileRow, ours: float | None) -> float | None:
    lib = row.lib_median
    return ours / lib if ours is not None and lib else None


def _lib_cell(row: FileRow) -> str:
    if row.lib_means:
        return f"{_common.format_seconds(row.lib_median)} (min {_common.format_seconds(min(row.lib_mins))})"
    return {"rejects": "rejects¹", "hangs": "hangs² (not run)", "unavailable": "—"}.get(row.lib_status, "—")


def _ours_cell(row: FileRow, name: str) -> str:
    samples = row.ours.get(name)
    if not samples:
        return "—"
    cell = _common.format_spread(samples)
    return f"rejects¹ in {cell}" if name == READ and row.ours_error else cell


def _format_ratio(numerator: float | None, denominator: float | None) -> str:
    """``0.0231×`` (three significant digits: bb_robot is often far below 1×); ``—`` when missing."""
    if numerator is None or not denominator:
        return "—"
    return f"{numerator / denominator:.3g}×"


def _geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def load_report(rows: list[FileRow]) -> tuple[str, list[tuple[str, str]]]:
    """The table of (a) with its notes, and the target lines."""
    headers = [
        "file",
        "files",
        "KiB",
        READ,
        LOAD,
        "load_from_file builds",
        "libsdformat 12 `Root::Load`",
        "read+resolve ÷ lib",
        "load_from_file ÷ lib",
    ]
    table_rows = []
    for row in rows:
        load_ratio = _ratio(row, row.load_median)
        table_rows.append(
            [
                f"`{row.label}`",
                row.files if row.files is not None else "—",
                f"{row.kib:.1f}",
                _ours_cell(row, READ),
                _ours_cell(row, LOAD),
                row.load_kind if row.ours_error is None else "—",
                _lib_cell(row),
                _format_ratio(row.ours_median, row.lib_median) if row.ours_error is None else "—",
                _format_ratio(row.load_median, row.lib_median) if load_ratio is not None else "—",
            ]
        )
    table = _common.markdown_table(headers, table_rows, align="lrrrrlrrr")

    notes = ["¹ Rejections (each party checked once before timing):", ""]
    for row in rows:
        if row.ours_error:
            notes.append(f"- `{row.label}`, bb_robot: {row.ours_error}")
        if row.lib_status == "rejects":
            notes.append(f"- `{row.label}`, libsdformat 12: {row.lib_error}")
    notes += [
        "",
        "² Include cycles (`LIBSDFORMAT_HANGS` in `test/sdf/libsdformat_reference.py`): libsdformat 12 never "
        "returns from them, so it is not run; bb_robot's time is the time to report the cycle.",
        "",
        "Why `load_from_file` builds less than the full robot + serial model, or nothing:",
        "",
    ]
    notes += [f"- `{row.label}` ({row.load_kind}): {row.load_error}" for row in rows if row.load_error]
    timed = [row for row in rows if row.lib_median is not None]
    if timed:
        fastest = min(timed, key=lambda row: row.lib_median or 0.0)
        notes += [
            "",
            f"libsdformat 12's fastest file in this run is `{fastest.label}` ({fastest.kib:.1f} KiB): "
            f"{_lib_cell(fastest)} per load.  A `perf` profile of the helper on "
            "`sdformat/test/sdf/rotations_in_quaternions.sdf` (0.2 KiB, 20 loads; taken once, outside this "
            "script) put about three quarters of the samples under `sdf::init` (`initFile`, `initXml`, "
            "`initDoc`): every `Root::Load` builds its element description from libsdformat's own "
            "specification again before it reads the file.  That fixed cost per load, not the file's "
            "content, dominates libsdformat's times on small files.",
        ]

    targets: list[tuple[str, str]] = []
    ur3e = next((row for row in rows if row.label == UR3E_WORLD), None)
    if ur3e is not None and ur3e.ours_median is not None and ur3e.lib_median is not None:
        ratio = ur3e.ours_median / ur3e.lib_median
        targets.append(
            (
                "met" if ratio <= TARGET_RATIO else "MISSED",
                f"UR3e world `{UR3E_WORLD}` ({ur3e.files} files): ours read+resolve "
                f"{_common.format_spread(ur3e.ours[READ])}, load_from_file "
                f"{_common.format_spread(ur3e.ours[LOAD]) if ur3e.ours.get(LOAD) else '—'}; libsdformat 12 "
                f"{_lib_cell(ur3e)}: ours ÷ libsdformat {ratio:.3g}× read+resolve, "
                f"{_format_ratio(ur3e.load_median, ur3e.lib_median)} load_from_file (target ≤ {TARGET_RATIO:g}×)",
            )
        )
    for name, status in ((READ, "target"), (LOAD, "info")):
        pairs = [
            (row.label, _common.median(row.ours[name]) / row.lib_median)  # type: ignore[operator]
            for row in rows
            if row.ours_error is None and row.ours.get(name) and row.lib_median
        ]
        if not pairs:
            targets.append(("MISSED" if status == "target" else "info", f"{name}: no file both load to compare"))
            continue
        within = sum(ratio <= TARGET_RATIO for _, ratio in pairs)
        worst_label, worst = max(pairs, key=lambda pair: pair[1])
        best_label, best = min(pairs, key=lambda pair: pair[1])
        line = (
            f"{name} within {TARGET_RATIO:g}× of libsdformat 12 on {within} of {len(pairs)} files both load; "
            f"ours ÷ libsdformat: geometric mean {_geometric_mean([r for _, r in pairs]):.3g}×, "
            f"worst {worst:.3g}× (`{worst_label}`), best {best:.3g}× (`{best_label}`)"
        )
        if status == "target":
            targets.append(("met" if within == len(pairs) else "MISSED", line))
        else:
            targets.append(("info", line))
    return table + "\n\n" + "\n".join(notes), targets


# ------------------------------------------------------------------------------ (b) FK, Jacobian
def _bounds(chain: SerialManipulator) -> tuple[np.ndarray, np.ndarray]:
    """Joint limits, with ±π where a limit is infinite."""
    low = np.where(np.isfinite(chain.lower_limits), chain.lower_limits, -math.pi)
    high = np.where(np.isfinite(chain.upper_limits), chain.upper_limits, math.pi)
    return low, high


def bench_kinematics(settings: Settings) -> list[str]:
    """The lines of section (b)."""
    path = CORPUS_DIR / UR3E_WORLD
    result = load_from_file(path, UR3E_SCOPE, resource_paths=RESOURCE_PATHS, environ=NO_ENVIRONMENT)
    chain = result.serial
    assert chain is not None
    lines = [
        f"Arm: `corpus:{UR3E_WORLD}`, `load_from_file(path, '{UR3E_SCOPE}', resource_paths=...)`: "
        f"{chain.dof} joints ({''.join(a[0] for a in chain.actuations)}), base `{chain.base_link}`, tip "
        f"`{chain.tip_link}`.  Pinocchio loads the same robot exported as URDF "
        "(`robot_to_urdf(result.robot)`, then `pinocchio.buildModelFromXML`), so both compute the same "
        "kinematics; its root is the base link, so its world is our base frame (`serial.base_pose` is "
        "applied to its results before comparing).  *ours* is a call with `q` of shape "
        f"({chain.dof},).  Pinocchio: `forwardKinematics` + `updateFramePlacements` (every frame of the "
        "model), and `computeFrameJacobian(..., LOCAL_WORLD_ALIGNED)` (which runs the forward pass "
        "itself).  *ours ÷ pin* above 1× means Pinocchio is faster.",
        "",
    ]
    rng = np.random.default_rng(7)
    low, high = _bounds(chain)
    q = rng.uniform(low, high)
    parties: dict[str, Callable[[], object]] = {
        "ours: end_effector_pose": lambda: chain.end_effector_pose(q),
        "ours: forward (all frames)": lambda: chain.forward(q),
        "ours: jacobian": lambda: chain.jacobian(q),
    }
    if pin is not None:
        model = pin.buildModelFromXML(robot_to_urdf(result.robot))
        data = model.createData()
        frame = model.getFrameId(chain.tip_link, pin.BODY)
        qp = pin_configuration(model, chain, q)
        forward, frames, jacobian = pin.forwardKinematics, pin.updateFramePlacements, pin.computeFrameJacobian
        world = pin.LOCAL_WORLD_ALIGNED

        def pin_fk() -> None:
            forward(model, data, qp)
            frames(model, data)

        def pin_jacobian() -> object:
            return jacobian(model, data, qp, frame, world)

        parties["pin: fk+frames"] = pin_fk
        parties["pin: computeFrameJacobian"] = pin_jacobian

        base = np.asarray(chain.base_pose)
        rotate = np.kron(np.eye(2), base[:3, :3])
        worst_pose = worst_jacobian = 0.0
        for c in (q, *rng.uniform(low, high, size=(50, chain.dof))):
            cp = pin_configuration(model, chain, c)
            forward(model, data, cp)
            frames(model, data)
            pose = base @ data.oMf[frame].homogeneous
            worst_pose = max(worst_pose, float(np.abs(chain.end_effector_pose(c) - pose).max()))
            reference_jacobian = rotate @ jacobian(model, data, cp, frame, world)
            columns = [model.joints[model.getJointId(n)].idx_v for n in chain.joint_names]
            worst_jacobian = max(
                worst_jacobian, float(np.abs(chain.jacobian(c) - reference_jacobian[:, columns]).max())
            )
        lines += [
            f"Largest difference from Pinocchio over 51 configurations: end-effector pose {worst_pose:.1e}, "
            f"Jacobian {worst_jacobian:.1e}.",
            "",
        ]
    else:
        lines += ["Pinocchio (`pin`) is not installed: not compared.", ""]

    calls = {
        name: _common.calls_per_sample(function, settings.sample_seconds, 100_000) for name, function in parties.items()
    }
    samples = _common.interleaved(parties, settings.fk_repeat, calls)

    def cost(name: str) -> str:
        return _common.format_spread(samples[name]) if name in samples else "—"

    def ratio(ours: str, peer: str) -> str:
        if peer not in samples:
            return "—"
        return _common.format_ratio(_common.median(samples[ours]), _common.median(samples[peer]))

    rows = [
        [
            "end-effector pose",
            cost("ours: end_effector_pose"),
            cost("pin: fk+frames"),
            ratio("ours: end_effector_pose", "pin: fk+frames"),
        ],
        [
            "all chain frames (`forward`)",
            cost("ours: forward (all frames)"),
            cost("pin: fk+frames"),
            ratio("ours: forward (all frames)", "pin: fk+frames"),
        ],
        [
            f"geometric Jacobian (6×{chain.dof})",
            cost("ours: jacobian"),
            cost("pin: computeFrameJacobian"),
            ratio("ours: jacobian", "pin: computeFrameJacobian"),
        ],
    ]
    lines.append(_common.markdown_table(["quantity", "ours (per call)", "Pinocchio (per call)", "ours ÷ pin"], rows))
    return lines


# ------------------------------------------------------------------------------ main
def _helper() -> tuple[Path | None, str | None]:
    """The built libsdformat helper (cached beside the tests' copy), or why there is none."""
    venv = _common.REPO_ROOT / ".venv"
    cache = venv / "cache" / "libsdformat" if venv.is_dir() else Path(tempfile.mkdtemp(prefix="bench_sdf-"))
    try:
        return reference.build_helper(cache), None
    except (reference.HelperUnavailable, RuntimeError) as error:
        return None, str(error).splitlines()[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    parser.add_argument(
        "--only", metavar="TEXT", help="only the corpus files whose path contains TEXT (implies --no-docs)"
    )
    args = parser.parse_args(argv)
    settings = Settings.make(args.quick)

    files = sorted(CORPUS_DIR.rglob("*.sdf")) if CORPUS_DIR.is_dir() else []
    if args.only:
        files = [f for f in files if args.only in f.relative_to(CORPUS_DIR).as_posix()]
    if not files:
        print(f"no SDF files in the shared corpus ({CORPUS_DIR})", file=sys.stderr)
        return 1
    machine = _common.machine_summary(("numpy", "pin"))
    print(f"machine: {machine}", file=sys.stderr)
    helper, unavailable = _helper()
    if helper is None:
        print(f"libsdformat 12 helper unavailable: {unavailable}", file=sys.stderr)

    print("(a) loading", file=sys.stderr)
    rows = []
    for number, path in enumerate(files, 1):
        print(f"  [{number}/{len(files)}] {path.relative_to(CORPUS_DIR)}", file=sys.stderr, flush=True)
        rows.append(bench_file(path, helper, unavailable, settings))
    table, targets = load_report(rows)
    print("(b) FK and Jacobian", file=sys.stderr)
    kinematics = bench_kinematics(settings)

    mode = "--quick" if settings.quick else "full run"
    lines = [
        "## SDF loading against libsdformat 12 (`benchmarks/bench_sdf.py`)",
        "",
        f"Run {_common.timestamp()} ({mode}: {settings.rounds} interleaved rounds per file; in each, bb_robot "
        f"is timed over calls lasting about {settings.sample_seconds * 1e3:g} ms together and libsdformat over "
        f"{settings.helper_runs} loads in one helper process; {settings.fk_repeat} samples per party for "
        "FK and Jacobian).",
        "",
        f"Machine: {machine}.",
    ]
    if helper is None:
        lines += ["", f"**libsdformat 12 was not compared**: {unavailable}."]
    lines += ["", "### Targets", ""]
    for status, text in targets:
        lines.append(f"- **{status}**: {text}" if status != "info" else f"- {text}")
    lines += [
        "",
        "### (a) Load time per file",
        "",
        f"Every `*.sdf` of `corpus:` (`{CORPUS_DIR}`), include resources too, with the corpus README's "
        "resource paths (`CORPUS_RESOURCE_DIRS`; the shell's `GZ_SIM_RESOURCE_PATH`/`SDF_PATH` are "
        f"ignored by all).  *{READ}* is `resolve(read_document(path, resource_paths=...))`: the file and its "
        "includes parsed, expanded, and both frame graphs (pose and attached-to) built, checked and resolved "
        "to a world pose per frame: the counterpart of `sdf::Root::Load`, which parses, expands includes "
        "and builds and validates its frame graphs.  "
        f"*{LOAD}* is the entry point: the same plus model selection, conversion to the robot model and "
        "the serial model (the *builds* column says which call was timed).  *libsdformat 12* is "
        "`sdf::Root::Load` in the C++ helper (`test/sdf/libsdformat/sdf_poses --time N`), timed inside "
        "the process (no start-up); the cell is the median over rounds of the helper's mean per load, "
        "and the smallest single load.  bb_robot cells are the median over rounds of the time per call "
        "(minimum in brackets).  Ratios are ours ÷ libsdformat on medians: below 1× bb_robot is faster; "
        f"the target is ≤ {TARGET_RATIO:g}×.  *files* counts the files bb_robot read (the file and its "
        "includes) and *KiB* their size.  Files declaring SDF 1.10+ are given to libsdformat 12 as they "
        "are (it reads them with its 1.9 specification, warning on stderr).",
        "",
        table,
        "",
        "### (b) The UR3e's serial FK and Jacobian against Pinocchio",
        "",
        *kinematics,
        "",
        f"Load average at the end: {_common.load_average()}.",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if not args.no_docs and not args.only:
        page = _common.rewrite_doc_section(SECTION, report)
        print(f"wrote the {SECTION} section of {page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""URDF parsing: bb_robot next to urdf_parser_py, yourdfpy and Pinocchio.

Run ``python benchmarks/bench_urdf.py [--quick]``.  In one run, on the same files:

(a) parse time of every real URDF of the shared corpus and of PyPI example-robot-data, plus
    the synthetic 1000-link chain: bb_robot's ``parse_string`` (what ``parse_file`` does after
    reading) and parse + build (``load_urdf`` without the read), ``urdf_parser_py``
    (``URDF.from_xml_string``), ``yourdfpy`` (``URDF.load`` without meshes or scene graph) and,
    for reference, Pinocchio's ``buildModelFromXML`` (C++ urdfdom parse plus its model).  Every
    party parses the same in-memory document (the file is read once, before timing), so file
    IO is excluded for all alike;
(b) the 1000-link chain: parse + build, with and without the file read.

Forward kinematics against Pinocchio is ``benchmarks/bench_fk.py``.

Prints a Markdown report and rewrites the ``bench_urdf`` section of ``docs/benchmarks.md``
(``--no-docs`` to leave it alone).  Targets (from the issue) are reported as met or missed,
never asserted.
"""

from __future__ import annotations

import argparse
import io
import logging
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402  (puts the repository root on sys.path)

from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402
from bb_robot.urdf.builder import build_robot, load_urdf  # noqa: E402
from bb_robot.urdf.parser import parse_string  # noqa: E402

SECTION = "bench_urdf"
CHAIN = "long_chain_1000.urdf"
PARSE_TARGET_PARTY = "urdf_parser_py"
CHAIN_TARGET_SECONDS = 0.100


@dataclass
class Settings:
    quick: bool
    parse_repeat: int
    chain_repeat: int
    sample_seconds: float  # a timing sample lasts at least this long (several calls if fast)

    @classmethod
    def make(cls, quick: bool) -> Settings:
        if quick:
            return cls(True, 3, 5, 0.002)
        return cls(False, 15, 21, 0.005)


# ------------------------------------------------------------------------------ peers
def _optional(module: str) -> Any:
    """The module, or ``None`` when it is not installed."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        return None


pin = _optional("pinocchio")
upp_urdf = _optional("urdf_parser_py.urdf")
yourdfpy = _optional("yourdfpy")

if upp_urdf is not None:  # it prints every unknown element and attribute to stderr
    import urdf_parser_py.xml_reflection.core as _upp_core

    _upp_core.on_error = lambda _message: None
logging.getLogger("yourdfpy").setLevel(logging.CRITICAL)


def _short(error: BaseException, path: Path | None = None) -> str:
    text = str(error)
    if path is not None:  # the file is named by the row already
        text = text.replace(f" ({path})", "").replace(str(path), path.name)
    text = " ".join(text.split()).split(" at line ")[0]
    return f"{type(error).__name__}: {text[:160]}{'…' if len(text) > 160 else ''}"


# ------------------------------------------------------------------------------ (a) parsing
PARTIES = ("ours: parse", "ours: parse+build", "urdf_parser_py", "yourdfpy", "Pinocchio (C++)")


@dataclass
class ParseRow:
    label: str
    kib: float
    links: int | None
    seconds: dict[str, float | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _parse_parties(path: Path, data: bytes) -> dict[str, Callable[[], object]]:
    source = str(path)
    parties: dict[str, Callable[[], object]] = {
        "ours: parse": lambda: parse_string(data, source=source),
        "ours: parse+build": lambda: build_robot(parse_string(data, source=source)),
    }
    if upp_urdf is not None:
        parties["urdf_parser_py"] = lambda: upp_urdf.URDF.from_xml_string(data)
    if yourdfpy is not None:
        parties["yourdfpy"] = lambda: yourdfpy.URDF.load(
            io.BytesIO(data),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    if pin is not None:
        text = data.decode("utf-8")
        parties["Pinocchio (C++)"] = lambda: pin.buildModelFromXML(text)
    return parties


def bench_parsing(files: list[Path], settings: Settings) -> list[ParseRow]:
    rows = []
    for number, path in enumerate(files, 1):
        label = _common.robot_label(path)
        print(f"  [{number}/{len(files)}] {label}", file=sys.stderr, flush=True)
        data = path.read_bytes()
        row = ParseRow(label, len(data) / 1024, None)
        parties = _parse_parties(path, data)
        working: dict[str, Callable[[], object]] = {}
        calls: dict[str, int] = {}
        with _common.quiet_stderr():
            for name, function in parties.items():
                try:
                    result = function()
                except Exception as error:  # noqa: BLE001 - a peer's refusal is a result
                    row.errors[name] = _short(error, path)
                    continue
                if name == "ours: parse":
                    row.links = len(result.links)  # type: ignore[attr-defined]
                working[name] = function
                calls[name] = _common.calls_per_sample(function, settings.sample_seconds, 200)
            samples = _common.interleaved(working, settings.parse_repeat, calls, warmup=0)
        for name in PARTIES:
            row.seconds[name] = _common.median(samples[name]) if name in samples else None
        rows.append(row)
    return rows


def _geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def parse_report(rows: list[ParseRow]) -> tuple[str, list[tuple[str, str]]]:
    """The table of (a), its notes, and the target lines."""
    headers = [
        "robot",
        "KiB",
        "links",
        *PARTIES,
        "urdf_parser_py ÷ ours",
        "yourdfpy ÷ ours",
    ]
    table_rows = []
    for row in rows:
        ours = row.seconds["ours: parse"]
        cells: list[object] = [f"`{row.label}`", f"{row.kib:.0f}", row.links or "—"]
        for name in PARTIES:
            cells.append(_common.format_seconds(row.seconds[name]) if name not in row.errors else "fails¹")
        cells.append(_common.format_ratio(row.seconds["urdf_parser_py"], ours))
        cells.append(_common.format_ratio(row.seconds["yourdfpy"], ours))
        table_rows.append(cells)
    table = _common.markdown_table(headers, table_rows)

    notes = ["¹ Refusals (each party checked once before timing):", ""]
    for row in rows:
        for name, error in row.errors.items():
            notes.append(f"- `{row.label}`, {name}: {error}")
    if len(notes) == 2:
        notes = ["No party refused any file."]

    targets: list[tuple[str, str]] = []
    for peer in ("urdf_parser_py", "yourdfpy", "Pinocchio (C++)"):
        for ours_name in ("ours: parse", "ours: parse+build"):
            pairs = [
                (row.label, row.seconds[peer], row.seconds[ours_name])
                for row in rows
                if row.seconds[peer] is not None and row.seconds[ours_name] is not None
            ]
            if not pairs:
                continue
            ratios = [theirs / ours for _, theirs, ours in pairs]  # type: ignore[operator]
            faster = sum(r > 1 for r in ratios)
            lowest, lowest_label = min(zip(ratios, (p[0] for p in pairs), strict=True))
            line = (
                f"{ours_name} vs {peer}: faster on {faster} of {len(pairs)} files both load; "
                f"{peer} ÷ ours: geometric mean {_geometric_mean(ratios):.2f}×, "
                f"lowest {lowest:.2f}× (`{lowest_label}`)"
            )
            if peer == PARSE_TARGET_PARTY and ours_name == "ours: parse":
                targets.insert(0, ("met" if faster == len(pairs) else "MISSED", line))
            else:
                targets.append(("info", line))
    return table + "\n\n" + "\n".join(notes), targets


# ------------------------------------------------------------------------------ (d) chain
def bench_chain(path: Path, settings: Settings) -> tuple[list[list[object]], list[tuple[str, str]]]:
    data = path.read_bytes()
    source = str(path)
    parties: dict[str, Callable[[], object]] = {
        "parse_string (in memory)": lambda: parse_string(data, source=source),
        "parse + build (in memory)": lambda: build_robot(parse_string(data, source=source)),
        "load_urdf(path): read + parse + build": lambda: load_urdf(path),
        "load_urdf(path) + ForwardKinematics": lambda: ForwardKinematics(load_urdf(path)),
    }
    samples = _common.interleaved(parties, settings.chain_repeat)
    rows: list[list[object]] = [
        [
            name,
            _common.format_seconds(_common.median(s)),
            _common.format_seconds(min(s)),
            _common.format_seconds(max(s)),
        ]
        for name, s in samples.items()
    ]
    load = _common.median(samples["load_urdf(path): read + parse + build"])
    ok = load < CHAIN_TARGET_SECONDS
    return rows, [
        (
            "met" if ok else "MISSED",
            f"1000-link chain `load_urdf` (read + parse + build) median "
            f"{_common.format_seconds(load)} (target < 100 ms)",
        )
    ]


# ------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)
    settings = Settings.make(args.quick)

    machine = _common.machine_summary(("numpy", "pin", "urdf-parser-py", "yourdfpy"))
    caveats = _common.environment_caveats()
    print(f"machine: {machine}", file=sys.stderr)
    if "OPENBLAS_CORETYPE" in os.environ:
        print(
            f"note: OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} is set: OpenBLAS uses "
            "that core type's kernels, not the ones it would pick for this CPU",
            file=sys.stderr,
        )
    missing = [n for n, m in (("pin", pin), ("urdf-parser-py", upp_urdf), ("yourdfpy", yourdfpy)) if m is None]

    chain = _common.CORPUS_DIR / "synthetic" / CHAIN
    files = _common.corpus_urdfs(include_synthetic=(CHAIN,)) + _common.example_robot_data_urdfs()
    if not files:
        print("no robot files: neither the shared corpus nor example-robot-data", file=sys.stderr)
        return 1

    print("(a) parsing", file=sys.stderr)
    parse_rows = bench_parsing(files, settings)
    parse_table, parse_targets = parse_report(parse_rows)
    print("(b) 1000-link chain", file=sys.stderr)
    chain_rows, chain_targets = bench_chain(chain, settings) if chain.is_file() else ([], [])

    mode = "--quick" if settings.quick else "full run"
    lines = [
        "## URDF parsing (`benchmarks/bench_urdf.py`)",
        "",
        f"Run {_common.timestamp()} ({mode}: median of {settings.parse_repeat} samples per "
        f"file and party for parsing, {settings.chain_repeat} for the chain).  Forward "
        "kinematics against Pinocchio: `benchmarks/bench_fk.py`, its own section.",
        "",
        f"Machine: {machine}.",
    ]
    if "OPENBLAS_CORETYPE" in os.environ:
        lines += [
            "",
            f"**Caveat:** `OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}` was set, so "
            "OpenBLAS ran that core type's kernels rather than the ones it would pick for this "
            "CPU; numpy matrix products (batched FK) may differ elsewhere.",
        ]
    elif caveats:
        lines += ["", f"Environment overrides in effect: {', '.join(caveats)}."]
    if missing:
        lines += ["", f"Not installed, so not compared: {', '.join(missing)}."]

    lines += ["", "### Targets", ""]
    for status, text in parse_targets + chain_targets:
        lines.append(f"- **{status}**: {text}" if status != "info" else f"- {text}")

    lines += [
        "",
        "### (a) Parse time per file",
        "",
        "Every party parses the same bytes, read from the file once before timing (no file IO "
        "in any number).  *ours: parse* is `parse_string` (the URDF intermediate "
        "representation, what `parse_file` returns); *parse+build* adds `build_robot` (the "
        "validated model: what `load_urdf` returns); *urdf_parser_py* is "
        "`URDF.from_xml_string`; *yourdfpy* is `URDF.load` with `build_scene_graph`, "
        "`load_meshes` and `load_collision_meshes` off; *Pinocchio (C++)* is "
        "`buildModelFromXML` (urdfdom's C++ parser and Pinocchio's model), for reference.  "
        "Ratios above 1× mean bb_robot's parse is faster.  Garbage collection runs before each "
        "sample and stays on during it.",
        "",
        parse_table,
        "",
        "### (b) The 1000-link chain (`synthetic/long_chain_1000.urdf`)",
        "",
        _common.markdown_table(["step", "median", "min", "max"], chain_rows),
    ]
    lines += ["", f"Load average at the end: {_common.load_average()}."]
    report = "\n".join(lines) + "\n"
    print(report)
    if not args.no_docs:
        page = _common.rewrite_doc_section(SECTION, report)
        print(f"wrote the {SECTION} section of {page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Helpers shared by bb_robot's benchmark scripts: timing, robot files, Markdown, the docs page.

Every benchmark script in this directory:

- puts the repository root on ``sys.path`` (``import _common`` does it), so it measures the
  ``bb_robot`` of this checkout, not an installed copy;
- times with :func:`time.perf_counter`, *interleaving* the parties being compared (each
  repetition runs every party once, in turn), so that a busy machine slows all of them alike,
  and reports the median;
- prints a Markdown report and rewrites its own section of ``docs/benchmarks.md`` between
  ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` (:func:`rewrite_doc_section`).

Numbers are measurements on one machine, never assertions: tests hold no wall-clock thresholds.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gc
import importlib.metadata
import math
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

DOCS_PAGE = REPO_ROOT / "docs" / "benchmarks.md"

# Environment variables that change what numpy/BLAS or the interpreter do: reported if set.
ENVIRONMENT_CAVEATS = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "PYTHONOPTIMIZE",
    "PYTHONMALLOC",
)


# ------------------------------------------------------------------------------ timing
@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence C++ chatter (urdfdom's console_bridge writes to file descriptor 2)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def kinematics_in_python() -> Iterator[None]:
    """bb_robot's kinematics without compiled code (``BB_ROBOT_KERNEL=numpy``: what runs without
    numba, and in the nodes for one configuration) for the block, then the mode that was in force."""
    from bb_robot.model import compiled

    previous = compiled.mode()
    compiled.choose("numpy")
    try:
        yield
    finally:
        compiled.choose(previous)


def freeze_heap() -> None:
    """Collect garbage, then move every surviving object (modules, test data) to the
    collector's permanent generation: later collections, timed or not, only scan what the
    code being measured allocates.  Call after the setup and before timing."""
    gc.collect()
    gc.freeze()


def time_calls(
    function: Callable[[], object], number: int = 1, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds per call of ``function`` over ``number`` back-to-back calls, by ``clock``.

    A garbage collection runs first (outside the timing; cheap once :func:`freeze_heap` ran)
    so each sample starts from the same heap; the collector stays enabled while timing, so a
    party pays for its own garbage.  ``clock`` is wall time by default; ``time.process_time``
    (this process's CPU time, all its threads) leaves out the time other work on a shared
    machine takes the CPU away.
    """
    gc.collect()
    start = clock()
    for _ in range(number):
        function()
    return (clock() - start) / number


def calls_per_sample(function: Callable[[], object], seconds: float, cap: int) -> int:
    """How many calls make a sample of about ``seconds`` (one warm call measured), at most ``cap``."""
    once = time_calls(function)
    return max(1, min(cap, math.ceil(seconds / max(once, 1e-9))))


def interleaved(
    parties: Mapping[str, Callable[[], object]],
    repeat: int,
    number: int | Mapping[str, int] = 1,
    warmup: int = 1,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Time every party ``repeat`` times, in turn; return seconds per call, per party.

    ``number`` calls make one sample (per party if a mapping).  ``warmup`` untimed rounds
    come first (imports, caches, first-touch page faults are not what is measured).
    ``clock`` as :func:`time_calls`.
    """

    def count(name: str) -> int:
        return number if isinstance(number, int) else number[name]

    freeze_heap()

    for _ in range(warmup):
        for function in parties.values():
            function()
    samples: dict[str, list[float]] = {name: [] for name in parties}
    for _ in range(repeat):
        for name, function in parties.items():
            samples[name].append(time_calls(function, count(name), clock))
    return samples


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def format_seconds(seconds: float | None) -> str:
    """``12.3 µs``, ``4.56 ms``, ``1.23 s`` (three significant digits); ``—`` for ``None``."""
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale or unit == "µs":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    raise AssertionError("unreachable")


def format_spread(samples: Sequence[float], scale: float = 1.0) -> str:
    """``median (min …)`` of ``samples`` divided by ``scale``: the minimum shows what the
    code costs when nothing else competes for the CPU."""
    return f"{format_seconds(median(samples) / scale)} (min {format_seconds(min(samples) / scale)})"


def load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "unknown"


def format_ratio(numerator: float | None, denominator: float | None) -> str:
    """``3.2×`` for numerator / denominator; ``—`` when either is missing."""
    if numerator is None or denominator is None or denominator == 0:
        return "—"
    ratio = numerator / denominator
    return f"{ratio:.2f}×" if ratio < 10 else f"{ratio:.1f}×"


# ------------------------------------------------------------------------------ robot files
# One place finds them for tests and benchmarks (test/helpers/robot_files.py, test/ on sys.path above);
# the benchmark scripts use them as _common.CORPUS_DIR, _common.robot_label, ...
from helpers.robot_files import CORPUS_DIR as CORPUS_DIR  # noqa: E402
from helpers.robot_files import corpus_urdfs as corpus_urdfs  # noqa: E402
from helpers.robot_files import example_robot_data_urdfs as example_robot_data_urdfs  # noqa: E402
from helpers.robot_files import robot_label as robot_label  # noqa: E402


# ------------------------------------------------------------------------------ the machine
def package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.machine()


def environment_caveats() -> list[str]:
    """``NAME=value`` for each set variable of :data:`ENVIRONMENT_CAVEATS`."""
    return [f"{name}={os.environ[name]}" for name in ENVIRONMENT_CAVEATS if name in os.environ]


def machine_summary(packages: Sequence[str] = ("numpy", "pin")) -> str:
    """One line: CPUs, CPU model, Python and package versions, load, caveats."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 0
    parts = [
        f"{usable} CPU(s) usable (nproc), {os.cpu_count()} online",
        cpu_model(),
        f"Python {platform.python_version()}",
        *(f"{name} {package_version(name)}" for name in packages),
    ]
    parts.append(f"load average {load_average()} at start")
    caveats = environment_caveats()
    parts.append("environment: " + (", ".join(caveats) if caveats else "no BLAS/thread overrides"))
    return "; ".join(parts)


# ------------------------------------------------------------------------------ Markdown
def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]], align: str | None = None) -> str:
    """A GitHub Markdown table; ``align`` has one of ``l``/``r``/``c`` per column (default:
    first column left, others right)."""
    if align is None:
        align = "l" + "r" * (len(headers) - 1)
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(str(h) for h in headers) + " |",
        "|" + "|".join(marks[a] for a in align) + "|",
    ]
    for row in rows:
        cells = [str(cell).replace("|", "\\|").replace("\n", " ") for cell in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def timestamp() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


# ------------------------------------------------------------------------------ docs page
DOCS_HEADER = """\
# Benchmarks

Measured performance of bb_robot next to other tools that do the same job.  Each section
below is written by one script of `benchmarks/` and rewritten whenever it runs:

```sh
.venv/bin/python benchmarks/bench_urdf.py            # full run (one to two minutes)
.venv/bin/python benchmarks/bench_urdf.py --quick    # fewer repetitions, a smoke test
```

(`scripts/setup` installs the peers compared with: Pinocchio (`pin`), example-robot-data,
urdf_parser_py and yourdfpy.)  The scripts import `bb_robot` from this checkout.

These numbers are **measured, not asserted**: they describe one run on one machine (each
section names the machine: usable CPUs as `nproc` counts them, the CPU model from
`/proc/cpuinfo`, the Python, numpy and Pinocchio versions, the load average, and any
BLAS/thread environment override such as `OPENBLAS_CORETYPE`).  Tests hold no wall-clock
thresholds.  Parties are timed in turn within each repetition, so a busy machine slows
all of them alike; medians are reported (with minima where noted).  Each section gives
the load average at its start and end: near the CPU count, other work competed for the
CPUs, and the minima say more about the code than the medians.
"""


def report_head(title: str, run: str, machine: str, targets: Iterable[tuple[str, str]]) -> list[str]:
    """The first lines of a benchmark's section: its title, how it ran, the machine, the verdicts.

    Args:
        title: the section's heading (without ``## ``).
        run: the sentence(s) after "Run <timestamp> " (what mode, what clock).
        machine: :func:`machine_summary`'s line.
        targets: ``(status, text)`` per verdict, listed under "Targets".

    Returns:
        Markdown lines, ending with a blank line.
    """
    return [
        f"## {title}",
        "",
        f"Run {timestamp()} {run}",
        "",
        f"Machine: {machine}.",
        "",
        "### Targets",
        "",
        *(f"- **{status}**: {text}" for status, text in targets),
        "",
    ]


def rewrite_doc_section(name: str, body: str, page: Path = DOCS_PAGE) -> Path:
    """Put ``body`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in ``page``.

    The page is created with :data:`DOCS_HEADER` if it does not exist; a missing section is
    appended; text outside the markers is left as it is.
    """
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.strip()}\n{end}"
    text = page.read_text(encoding="utf-8") if page.exists() else DOCS_HEADER
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _match: block, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    return page

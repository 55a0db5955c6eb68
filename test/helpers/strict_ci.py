"""Strict skipping under ``CI=true``: a skip CI does not accept becomes a failure naming what is missing.

A pytest plugin (``test/conftest.py`` loads it; ``-p helpers.strict_ci`` elsewhere): its hooks apply
:func:`fail_unaccepted_skip` to every test and collection report.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator

import pytest

CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}

#: Skip reasons that CI accepts, each with why (kept in step with docs/testing.md).
CI_ACCEPTED_SKIPS: tuple[tuple[str, str], ...] = (
    # Cannot be installed here: PyPI's bindings ship without their C++ libraries.
    (r"libsdformat 14|sdformat14", "the sdformat14 bindings need libsdformat14, which no registry here ships"),
    (r"gz\.transport13 imports here", "only where Gazebo Harmonic's own library is installed"),
    (r"root can read any file", "a permission test, meaningless as root (CI runs as root)"),
    (r"real-time scheduling is not permitted", "SCHED_FIFO is refused by the kernel of some machines"),
    # Expectations written down per file.
    (r"on purpose|rejects it as expected|rejects the original", "a file rejected on purpose, listed per file"),
    (
        r"(urdf_parser_py|Pinocchio|libsdformat 12|libsdformat 14 and bb_robot) "
        r"(cannot|refuses|both refuse|reads SDF up to)",
        "a peer that cannot read a file, so there is nothing to compare with",
    ),
    (r"^nothing to compare: ", "a file with nothing to compare, listed per file"),
    (r"known difference", "a documented difference from a peer, listed per file"),
    (r"has no driver section", "a config file for the description node only"),
)
_ACCEPTED = [(re.compile(pattern), why) for pattern, why in CI_ACCEPTED_SKIPS]


def accepted_in_ci(reason: str) -> bool:
    """Whether a skip with ``reason`` is one CI accepts (see :data:`CI_ACCEPTED_SKIPS`)."""
    return any(pattern.search(reason) for pattern, _ in _ACCEPTED)


def skip_reason(longrepr: object) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def fail_unaccepted_skip(report: pytest.TestReport | pytest.CollectReport, *, ci: bool | None = None) -> None:
    """Turn ``report`` from skipped into failed when running under CI and its reason is not accepted.

    Args:
        report: a test or collection report, changed in place.
        ci: whether this is a CI run (default: the ``CI`` environment variable).
    """
    ci = CI if ci is None else ci
    if not (ci and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = skip_reason(report.longrepr)
    if accepted_in_ci(reason):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"CI=true: this would have been skipped ({reason}), but under CI everything scripts/setup "
        "installs, and the shared corpus, must be present. Install what is missing; if the skip is an "
        "expectation rather than a missing part, add its reason to CI_ACCEPTED_SKIPS in test/helpers/strict_ci.py "
        "and to docs/testing.md."
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, object, None]:
    outcome = yield
    fail_unaccepted_skip(outcome.get_result())  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, object, None]:
    outcome = yield
    fail_unaccepted_skip(outcome.get_result())  # type: ignore[attr-defined]


def pytest_report_header() -> str:
    return f"CI={'true: skips fail unless accepted (test/helpers/strict_ci.py)' if CI else 'false'}"

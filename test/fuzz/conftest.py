"""Hypothesis profiles of the fuzz tests, and the outcome counts that ``scripts/fuzz`` reports.

``BB_ROBOT_FUZZ_PROFILE`` picks the profile: ``ci`` (default; derandomised, 500 cases per
target, what ``scripts/test`` and CI run) or ``fuzz`` (random, ``BB_ROBOT_FUZZ_EXAMPLES`` cases
per target, default 100,000; what ``scripts/fuzz`` runs).  With ``BB_ROBOT_FUZZ_REPORT`` set to a
path, the outcome counts of the session are written there as JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.fuzz_outcomes import OUTCOMES
from hypothesis import HealthCheck, settings

_SLOW_INPUT = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile(
    "ci", max_examples=500, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW_INPUT
)
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("BB_ROBOT_FUZZ_EXAMPLES", "100000")),
    database=None,
    deadline=None,
    suppress_health_check=_SLOW_INPUT,
)
settings.load_profile(os.environ.get("BB_ROBOT_FUZZ_PROFILE", "ci"))


@pytest.fixture(scope="session", autouse=True)
def _write_fuzz_report() -> Iterator[None]:
    yield
    target = os.environ.get("BB_ROBOT_FUZZ_REPORT")
    if target:
        Path(target).write_text(json.dumps(OUTCOMES.report(), indent=2, sort_keys=True) + "\n")

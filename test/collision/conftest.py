"""Every collision test gets an empty matrix and verification cache of its own (``BB_ROBOT_CACHE_DIR``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("BB_ROBOT_CACHE_DIR", str(cache))
    return cache

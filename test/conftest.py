"""Fixtures shared by bb_robot's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# CI and the developers' machines lay the shared corpus of robot descriptions beside the clone.
CORPUS_DIR = REPO_ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The root of the bb_robot repository (where package.xml is)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared corpus of robot descriptions; tests that need it skip where it is absent."""
    if not CORPUS_DIR.is_dir():
        pytest.skip(f"no shared corpus at {CORPUS_DIR}")
    return CORPUS_DIR

"""The test tree itself: pytest's default (prepend) import mode needs unique module basenames."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TEST_DIR = Path(__file__).resolve().parent


def test_test_module_basenames_are_unique() -> None:
    names = Counter(path.name for path in TEST_DIR.rglob("test_*.py"))
    clashes = sorted(name for name, count in names.items() if count > 1)
    assert not clashes, f"test modules with the same basename in different folders: {clashes}; rename one"

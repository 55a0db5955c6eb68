"""Fixtures of the SDF tests: libsdformat 12 as the reference for any SDF version.

``libsdformat`` (session, in ``test/conftest.py`` with ``corpus_resource_paths``, so that the command
line's tests use them too) is the C++ helper ``libsdformat/sdf_poses.cc``, compiled once (cached in
``.venv/cache/libsdformat/`` by source and library version) and called as
``libsdformat(path, resource_paths=()) -> dict``; ``libsdformat_19`` (here) loads files that declare
SDF 1.10+ through a relabelled-1.9 copy, or skips when they use something 1.9 lacks. Both skip the
test with the reason when the helper cannot be built (no ``g++``, ``pkg-config`` or
``libsdformat-dev``: run ``scripts/setup``). The output format is in ``libsdformat/README.md``; the
functions behind them are in ``libsdformat_reference.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers.libsdformat_reference import (
    SPEC_VERSION,
    Libsdformat,
    declared_version,
    included_files,
    newer_features,
    relabelled_copy,
)

LoadAs19 = Callable[..., dict[str, Any]]


@pytest.fixture
def libsdformat_19(libsdformat: Libsdformat, tmp_path: Path) -> LoadAs19:
    """Like ``libsdformat``, for files of any SDF version: ``libsdformat_19(path, resource_paths=())``.

    When ``path`` or a file it includes declares SDF 1.10 or newer, loads a copy of the tree with
    those files relabelled 1.9 (``relabelled_copy``); the result then also has ``"source_file"`` (the
    original path) and ``"relabelled"`` (the copies whose label changed). When they use a feature
    1.9 lacks (``newer_features``: mimic, world joints, ...), skips the test with the list.
    """
    counter = itertools.count()

    def load(path: Path | str, resource_paths: Sequence[Path | str] = ()) -> dict[str, Any]:
        path = Path(path)
        features = newer_features(path, resource_paths)
        if features:
            pytest.skip(f"libsdformat 12 reads SDF up to 1.9; {path.name} uses newer features: " + "; ".join(features))
        versions = [declared_version(file) for file in included_files(path, resource_paths)]
        if all(version is None or version <= SPEC_VERSION for version in versions):
            return libsdformat(path, resource_paths)
        copy = relabelled_copy(path, resource_paths, tmp_path / f"relabelled-{next(counter)}")
        result = libsdformat(copy.path, copy.resource_paths)
        result["source_file"] = str(path.resolve())
        result["relabelled"] = [str(file) for file in copy.relabelled]
        return result

    return load

"""Fixtures of the SDF tests: libsdformat 12 as the reference, and the corpus's resource paths.

``libsdformat`` (session) is the C++ helper ``libsdformat/sdf_poses.cc``, compiled once (cached in
``.venv/cache/libsdformat/`` by source and library version) and called as
``libsdformat(path, resource_paths=()) -> dict``; ``libsdformat_19`` loads files that declare SDF
1.10+ through a relabelled-1.9 copy, or skips when they use something 1.9 lacks. Both skip the test
with the reason when the helper cannot be built (no ``g++``, ``pkg-config`` or ``libsdformat-dev``:
run ``scripts/setup``). The output format is in ``libsdformat/README.md``; the functions behind them
are in ``libsdformat_reference.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from libsdformat_reference import (
    CORPUS_RESOURCE_DIRS,
    SPEC_VERSION,
    HelperUnavailable,
    Libsdformat,
    declared_version,
    included_files,
    newer_features,
    relabelled_copy,
)

REPO_ROOT = Path(__file__).resolve().parents[2]

LoadAs19 = Callable[..., dict[str, Any]]


@pytest.fixture(scope="session")
def corpus_resource_paths(corpus_dir: Path) -> tuple[Path, ...]:
    """The corpus's include resource directories, as its README lists them."""
    return tuple(corpus_dir / name for name in CORPUS_RESOURCE_DIRS)


@pytest.fixture(scope="session")
def libsdformat(tmp_path_factory: pytest.TempPathFactory) -> Libsdformat:
    """libsdformat 12 through the C++ helper: ``libsdformat(path, resource_paths=(), *, timeout=20.0)``.

    Returns the helper's JSON as a dict; raises ``LibsdformatError`` (``.errors``: libsdformat's error
    list; ``.timed_out``) when libsdformat rejects the file or does not answer in time.
    ``libsdformat.time_load(path, resource_paths, runs)`` gives seconds per load.
    """
    venv = REPO_ROOT / ".venv"
    cache = venv / "cache" / "libsdformat" if venv.is_dir() else tmp_path_factory.mktemp("libsdformat")
    try:
        return Libsdformat.build(cache)
    except HelperUnavailable as unavailable:
        pytest.skip(f"libsdformat 12 reference unavailable: {unavailable}")


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

"""Where the real robot files used by tests and benchmarks are.

- The shared corpus (``../shared/corpus`` beside the repository; CI lays it there).
- The URDFs shipped by PyPI ``example-robot-data`` (installed by ``scripts/setup``).

Both lists are empty where the files are absent; callers skip with a reason.
"""

from __future__ import annotations

import importlib.metadata
import site
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: ../shared/corpus beside the repository, resolved: the loaders name files by their real paths, so a
#: ../shared that is a symbolic link must not make the expected paths differ from the named ones.
CORPUS_DIR = (Path(__file__).resolve().parents[2].parent / "shared" / "corpus").resolve()


def corpus_urdfs(include_synthetic: Iterable[str] = ()) -> list[Path]:
    """The real robot URDFs of the shared corpus (``../shared/corpus``), plus the named
    files of ``synthetic/`` (the rest of it are hostile inputs, not robots)."""
    if not CORPUS_DIR.is_dir():
        return []
    wanted = set(include_synthetic)
    return sorted(path for path in CORPUS_DIR.rglob("*.urdf") if path.parent.name != "synthetic" or path.name in wanted)


def example_robot_data_urdfs() -> list[Path]:
    """The URDFs shipped by PyPI ``example-robot-data`` (``<prefix>/share/example-robot-data/
    robots/...``, under ``cmeel.prefix`` for the wheel), found through the installed package's
    file list, else by looking under the usual prefixes; empty when it is not installed."""
    found: set[Path] = set()
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for file in dist.files or []:
            if file.name.endswith(".urdf"):
                path = Path(str(dist.locate_file(file))).resolve()
                if path.is_file():
                    found.add(path)
    if not found:
        prefixes = [Path(sys.prefix), *(Path(p) for p in site.getsitepackages())]
        prefixes += [p / "cmeel.prefix" for p in prefixes]
        for prefix in prefixes:
            robots = prefix / "share" / "example-robot-data" / "robots"
            if robots.is_dir():
                found.update(p.resolve() for p in robots.rglob("*.urdf"))
    return sorted(found)


def robot_label(path: Path) -> str:
    """``corpus:franka_description/fr3_hand.urdf``, ``erd:panda_description/urdf/panda.urdf``."""
    text = path.as_posix()
    if "/example-robot-data/robots/" in text:
        return "erd:" + text.split("/example-robot-data/robots/", 1)[1]
    if "/shared/corpus/" in text:
        return "corpus:" + text.split("/shared/corpus/", 1)[1]
    return path.name


def urdf_params() -> list[Any]:
    """The real robot URDFs (:func:`corpus_urdfs` and :func:`example_robot_data_urdfs`) as pytest
    parameters labelled by :func:`robot_label`, or one skipped parameter where neither is here."""
    import pytest

    paths = corpus_urdfs() + example_robot_data_urdfs()
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason="neither the corpus nor example-robot-data is here"))]
    return [pytest.param(path, id=robot_label(path)) for path in paths]


# Files our builder rejects on purpose (checked: each still fails with this problem, so a
# change of behaviour shows up as a test failure rather than a silent skip).
REJECTED_BY_US = {
    "alex_description/urdf/alex_psyonic_hands.urdf": (
        "which is not a joint of this robot",
        "joints mimic 'index_q1', 'middle_q1', ... which the file does not define "
        "(Pinocchio with mimic=True refuses it too)",
    ),
    "ur_description/urdf/ur3.urdf": (
        "has no links",
        "an empty <robot> placeholder without name or links (urdfdom refuses it too)",
    ),
}

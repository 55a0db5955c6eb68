"""MotionBenchMaker's problems from the shared corpus (``../shared/corpus/mbm``), read in place, never copied in."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from helpers.robot_files import CORPUS_DIR

#: The MBM folder of the shared corpus.
MBM_DIR = CORPUS_DIR / "mbm"
#: The seven problem sets, as the archives name them (``<set>_<robot>``).
SETS = ("table_pick", "table_under_pick", "box", "bookshelf_small", "bookshelf_tall", "bookshelf_thin", "cage")


def mbm_robot(robot: str) -> tuple[Path, Path]:
    """``(urdf, srdf)`` of an MBM robot (``panda``, ``ur5``); skips where the corpus is absent."""
    urdf, srdf = MBM_DIR / robot / f"{robot}.urdf", MBM_DIR / robot / f"{robot}.srdf"
    if not urdf.is_file():
        pytest.skip(f"the MotionBenchMaker corpus is not at {MBM_DIR}")
    return urdf, srdf


def mbm_scenes(robot: str, numbers: range, target: Path) -> list[Path]:
    """Extract ``sceneNNNN.yaml`` of each set for ``numbers`` from the robot's archive into ``target``.

    Returns:
        The extracted files, by set then number.
    """
    mbm_robot(robot)
    wanted = {f"problems/{name}_{robot}/scene{n:04d}.yaml" for name in SETS for n in numbers}
    with tarfile.open(MBM_DIR / robot / "problems.tar.bz2") as archive:
        members = [m for m in archive.getmembers() if m.name in wanted]
        archive.extractall(target, members=members, filter="data")
    return sorted(target / m.name for m in members)

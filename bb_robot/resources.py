"""Where bb_robot's installed share files (bundled models, config, launch files) live.

Looked up, in order: the ament index (a colcon or ROS install, found through
``AMENT_PREFIX_PATH``), ``<sys.prefix>/share/bb_robot`` (a ``pip install``), and
the source tree (running from a checkout).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "bb_robot"
DEFAULT_MODEL = "bb_arm.urdf"


def share_directories() -> list[Path]:
    """Return the candidate share directories of bb_robot, most specific first."""
    candidates: list[Path] = []
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix and (Path(prefix) / "share/ament_index/resource_index/packages" / PACKAGE).is_file():
            candidates.append(Path(prefix) / "share" / PACKAGE)
    candidates.append(Path(sys.prefix) / "share" / PACKAGE)
    candidates.append(Path(__file__).resolve().parent.parent)
    return candidates


def bundled_model(name: str = DEFAULT_MODEL) -> Path:
    """Return the path of a model shipped in ``models/``.

    Raises ``FileNotFoundError`` listing the places searched.
    """
    searched = [directory / "models" / name for directory in share_directories()]
    for path in searched:
        if path.is_file():
            return path
    raise FileNotFoundError(f"bundled model '{name}' not found; looked in: {', '.join(str(p) for p in searched)}")


def find_config(name: str) -> tuple[Path | None, list[Path]]:
    """A file given by path, else by name under bb_robot's ``config/`` (parameter files, calibrations).

    Args:
        name: a path (``~`` expanded), or a name relative to the share directories' ``config/``.

    Returns:
        ``(the file, or None, every place looked at)``: the caller raises its own error naming them.
    """
    given = Path(name).expanduser()
    if given.is_file():
        return given.resolve(), [given]
    searched = [given]
    if not given.is_absolute():
        for share in share_directories():
            candidate = share / "config" / name
            searched.append(candidate)
            if candidate.is_file():
                return candidate, searched
    return None, searched

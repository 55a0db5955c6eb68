"""Where a robot's allowed-collision matrix comes from when none is given: beside the model, or a cache.

Computing a matrix takes tens of seconds (10,000 samples), so nothing computes one silently:

- :func:`companion_srdf`: ``<model>.srdf`` beside the model file (the bundled models ship theirs);
- :func:`cache_path`: a cache keyed by the description's content (the SHA-256 of the URDF text
  the robot was built from), written by ``bb-robot collisions`` and by the driver when
  ``collision.compute_matrix`` is true.  The directory is ``$BB_ROBOT_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/bb_robot/collision``, else ``~/.cache/bb_robot/collision``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from bb_robot.collision.errors import SrdfError
from bb_robot.collision.matrix import ALGORITHM_VERSION, CollisionMatrix
from bb_robot.collision.srdf import write_srdf


def cache_directory() -> Path:
    """The cache directory (see the module docstring); not created here."""
    explicit = os.environ.get("BB_ROBOT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bb_robot" / "collision"


def description_key(description: str | bytes) -> str:
    """The cache key of a description: the SHA-256 of the algorithm's version and the description's text (UTF-8).

    The version (:data:`~bb_robot.collision.matrix.ALGORITHM_VERSION`) makes matrices an older
    algorithm computed miss: they are computed again.
    """
    data = description.encode("utf-8") if isinstance(description, str) else description
    return hashlib.sha256(f"bb_robot collision matrix, algorithm {ALGORITHM_VERSION}\n".encode() + data).hexdigest()


def cache_path(description: str | bytes) -> Path:
    """The cache file of a description's matrix (it may not exist)."""
    return cache_directory() / f"{description_key(description)}.srdf"


def store(matrix: CollisionMatrix, description: str | bytes) -> Path:
    """Write a matrix into the cache under the description's key.

    Args:
        matrix: the computed matrix.
        description: the description's text.

    Returns:
        The file written.

    Raises:
        SrdfError: the cache directory or file cannot be written.
    """
    path = cache_path(description)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SrdfError(str(path.parent), f"cannot create the cache directory: {error.strerror or error}") from None
    write_srdf(matrix, path, description)
    return path


def companion_srdf(source: str | os.PathLike[str] | None) -> Path | None:
    """``<model>.srdf`` beside a model file, when there is one (``None`` for text or no such file)."""
    if not source:
        return None
    candidate = Path(source).with_suffix(".srdf")
    return candidate if candidate.is_file() else None

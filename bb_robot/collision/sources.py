"""A loaded description's collision model and allowed-collision matrix, as the CLI and the driver get them.

:func:`collision_model` builds the parts of a :class:`~bb_robot.loading.model.LoadedModel` (meshes
relative to its file).  :func:`find_matrix` decides where the matrix comes from, in this order:

1. an SRDF named by the caller (``--srdf``, ``collision.srdf``);
2. ``<model>.srdf`` beside the model file (the bundled models ship theirs); for a description
   given as text (the driver reading ``robot_description``), an SRDF in the search directories
   beside a URDF with exactly that text;
3. the cache entry of the description's content (:mod:`bb_robot.collision.cache`);
4. computed now, when the caller allows it (``collision.compute_matrix``), and cached;
5. otherwise only the pairs that need no sampling: ``Adjacent`` and ``Default``.  The origin says
   so, for a log line: nothing is computed for tens of seconds without being asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bb_robot.collision.cache import cache_path, companion_srdf, store
from bb_robot.collision.matrix import DEFAULT_SAMPLES, CollisionMatrix, compute_matrix
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import read_srdf
from bb_robot.loading import LoadedModel

#: The kinds of :class:`~bb_robot.loading.model.LoadedModel` read from a file (text has no directory).
FILE_KINDS = ("urdf", "xacro", "sdf")


def collision_model(loaded: LoadedModel, search_dirs: Sequence[str] = ()) -> CollisionModel:
    """The collision model of a loaded description, no pair disabled yet.

    Args:
        loaded: the description.
        search_dirs: more directories for mesh files.

    Returns:
        The model.

    Raises:
        CollisionUnavailable: coal is missing.
        MeshUnreadable: a mesh is not found or not readable (naming the link and the file).
    """
    source = loaded.source if loaded.kind in FILE_KINDS else None
    return CollisionModel(loaded.robot, robot_parts(loaded.robot, source, search_dirs))


def same_text_srdf(description: str, directories: Sequence[str]) -> Path | None:
    """An ``X.srdf`` in ``directories`` whose ``X.urdf`` has exactly the text ``description`` (or ``None``)."""
    for directory in directories:
        for srdf in sorted(Path(directory).glob("*.srdf")):
            urdf = srdf.with_suffix(".urdf")
            try:
                if urdf.is_file() and urdf.read_text(encoding="utf-8") == description:
                    return srdf
            except (OSError, UnicodeDecodeError):
                continue
    return None


@dataclass(frozen=True)
class MatrixSource:
    """A matrix and where it came from.

    Attributes:
        matrix: the disabled pairs.
        origin: ``"srdf"``, ``"beside the model"``, ``"cache"``, ``"computed"`` or ``"partial"``.
        path: the file read or written (``None`` for ``"partial"``).
    """

    matrix: CollisionMatrix
    origin: str
    path: str | None

    @property
    def read_from(self) -> str | None:
        """The SRDF file the matrix was read from (``None``: computed, or partial): what is verified before use."""
        return self.path if self.origin in ("srdf", "beside the model", "cache") else None

    def describe(self) -> str:
        """One sentence for a log line."""
        count = len(self.matrix.disabled)
        if self.origin == "partial":
            return (
                f"allowed-collision matrix: only adjacent and default-pose pairs ({count} disabled): no SRDF, no "
                "cached matrix; run `bb-robot collisions FILE` or set collision.compute_matrix: true for the full one"
            )
        if self.origin == "computed":
            samples = self.matrix.samples
            return f"allowed-collision matrix computed ({samples} samples, {count} disabled), cached in {self.path}"
        return f"allowed-collision matrix from {self.path} ({self.origin}, {count} disabled)"


def find_matrix(
    loaded: LoadedModel,
    model: CollisionModel,
    srdf: str | None = None,
    compute: bool = False,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    search_dirs: Sequence[str] = (),
) -> MatrixSource:
    """Find the robot's allowed-collision matrix (the order of the module docstring).

    Args:
        loaded: the description (its file and text key the companion SRDF and the cache).
        model: its collision model.
        srdf: an SRDF file to read; it wins over everything else.
        compute: compute (and cache) the matrix when nothing is found.
        samples: random configurations when computing.
        seed: the random seed when computing.
        progress: called while computing with ``(done, samples)``.
        search_dirs: where an SRDF beside a URDF of the same text is looked for (``model_dirs``).

    Returns:
        The matrix and its origin.

    Raises:
        SrdfError: an SRDF (given, beside the model or cached) that cannot be read or names a
            link the robot does not have; a cache that cannot be written.
    """
    links = loaded.robot.links
    if srdf:
        return MatrixSource(read_srdf(srdf, links), "srdf", srdf)
    description = loaded.description
    beside = companion_srdf(loaded.source) if loaded.kind in FILE_KINDS else same_text_srdf(description, search_dirs)
    if beside is not None:
        return MatrixSource(read_srdf(beside, links), "beside the model", str(beside))
    cached = cache_path(description)
    if cached.is_file():
        return MatrixSource(read_srdf(cached, links), "cache", str(cached))
    if compute:
        matrix = compute_matrix(model, samples=samples, seed=seed, progress=progress)
        return MatrixSource(matrix, "computed", str(store(matrix, description)))
    return MatrixSource(compute_matrix(model, samples=0), "partial", None)


def checked_model(
    loaded: LoadedModel, search_dirs: Sequence[str] = (), srdf: str | None = None, compute: bool = False
) -> tuple[CollisionModel, MatrixSource]:
    """The robot's collision model with its allowed-collision matrix applied, as the driver checks it.

    Args:
        loaded: the description.
        search_dirs: where meshes and a companion SRDF are looked for (``model_dirs``).
        srdf: ``collision.srdf``: an SRDF file that wins over everything else.
        compute: ``collision.compute_matrix``: compute (and cache) the matrix when none is found.

    Returns:
        The model (the matrix's disabled pairs left out) and where the matrix came from.

    Raises:
        CollisionError: as :func:`collision_model` and :func:`find_matrix`.
    """
    model = collision_model(loaded, search_dirs)
    found = find_matrix(loaded, model, srdf, compute, search_dirs=search_dirs)
    return model.with_allowed(found.matrix.disabled), found

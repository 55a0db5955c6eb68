"""Where a robot's mesh files are on this machine, for an MJCF document.

An MJCF document names mesh files by path; MuJoCo reads them relative to the document's
directory (or its ``meshdir``).  The writer writes absolute paths instead, so that the document
loads with ``MjModel.from_xml_path`` from any directory.

:func:`default_resolver` finds a mesh URI as the rest of bb_robot does:

- ``package://pkg/rest``: ``rest`` in the share directory of ROS package ``pkg`` (the ament
  index, when ``ament_index_python`` is importable), else ``pkg/rest`` in the search
  directories below;
- ``model://name/rest``, a relative path: ``name/rest`` (the path) in the directory of the
  model file, then in ``search_dirs``, then in ``GZ_SIM_RESOURCE_PATH`` and ``SDF_PATH``
  (:func:`bb_robot.sdf.resources.resolve_resource`);
- ``file:///abs/path``, ``/abs/path``: that file.

MuJoCo reads STL, OBJ and MSH meshes (:data:`READABLE_SUFFIXES`); any other format (COLLADA
``.dae``, ...) is reported and left out of the document.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from bb_robot.sdf.resources import resolve_resource, search_directories, split_uri

#: Mesh formats MuJoCo reads (lower-case suffixes).
READABLE_SUFFIXES: tuple[str, ...] = (".stl", ".obj", ".msh")

#: ``resolver(uri, link)``: the absolute path of the mesh ``uri`` of link ``link``, or ``None``.
MeshResolver = Callable[[str, str], Path | None]


def _package_share(package: str) -> Path | None:
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:  # pragma: no cover - comes with every ROS install and the venv
        return None
    try:
        return Path(get_package_share_directory(package))
    except (LookupError, ValueError, OSError):  # OSError: no AMENT_PREFIX_PATH in this environment
        return None


def default_resolver(source: str | os.PathLike[str] | None, search_dirs: Sequence[str] = ()) -> MeshResolver:
    """A resolver for the meshes of the model read from ``source`` (see the module docstring).

    Args:
        source: The model file (its directory is searched first); ``None`` when unknown.
        search_dirs: More directories to search, in order, before the environment's.

    Returns:
        A function from a mesh URI (and the link that has it, unused here) to the absolute path of
        an existing file, or ``None``.
    """
    base = Path(source).resolve().parent if source else None
    directories = search_directories(list(search_dirs))

    def resolve(uri: str, link: str = "") -> Path | None:
        scheme, rest = split_uri(uri)
        if scheme == "package":
            package, _, inner = rest.partition("/")
            share = _package_share(package) if package else None
            if share is not None and (share / inner).is_file():
                return (share / inner).resolve()
        found = resolve_resource(uri, base, directories)
        return found if found is not None and found.is_file() else None

    return resolve


def readable(path: Path) -> bool:
    """Whether MuJoCo reads a mesh file of this format."""
    return path.suffix.lower() in READABLE_SUFFIXES

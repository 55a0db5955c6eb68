"""Where an SDF ``<include><uri>`` (or a mesh URI) points on this machine.

Search order for a relative or ``model://`` URI (never the current directory):

1. the directory of the file that holds the URI;
2. the ``resource_paths`` the caller passed, in order;
3. each directory of ``GZ_SIM_RESOURCE_PATH``, then of ``SDF_PATH``
   (``os.pathsep``-separated; empty entries skipped).

``model://name/sub/path`` and a plain ``name/sub/path`` look for ``name/sub/path`` in each
directory.  What is found may be a file (``model://ur3e_position_controller.sdf``) or a
model directory: then its ``model.config`` (or the deprecated ``manifest.xml``) names the
file: of its ``<sdf version="...">`` entries the highest version this loader reads
(:data:`SUPPORTED_VERSION`) wins, else the first entry.  ``file://`` URIs and absolute
paths are used as they are.  ``http://`` and ``https://`` URIs (Gazebo Fuel) are refused
with an :class:`~bb_robot.sdf.errors.IncludeError`: nothing is ever downloaded.
Other schemes (``package://pkg/path``) are searched like ``model://``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from bb_robot.sdf.errors import IncludeError
from bb_robot.xmlsafe import Node, XmlError, parse_xml, read_document

#: The newest SDFormat version this loader reads.
SUPPORTED_VERSION: tuple[int, int] = (1, 12)

#: Environment variables whose directories are searched, in this order.
RESOURCE_PATH_VARIABLES: tuple[str, ...] = ("GZ_SIM_RESOURCE_PATH", "SDF_PATH")

NETWORK_SCHEMES: tuple[str, ...] = ("http://", "https://")


def parse_version(text: str) -> tuple[int, int] | None:
    """Return ``(major, minor)`` of a version string like ``"1.11"``, or ``None``."""
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return int(parts[0]), int(parts[1])


def search_directories(
    resource_paths: Sequence[str | os.PathLike[str]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Path, ...]:
    """Return the resource directories: ``resource_paths``, then the environment's, without repeats."""
    env = os.environ if environ is None else environ
    found: list[Path] = []
    for entry in resource_paths or ():
        found.append(Path(entry))
    for variable in RESOURCE_PATH_VARIABLES:
        for entry in env.get(variable, "").split(os.pathsep):
            if entry:
                found.append(Path(entry))
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return tuple(unique)


@dataclass(frozen=True)
class ResolvedUri:
    """The file an include URI stands for: ``path`` (absolute), and ``directory`` when the
    URI named a model directory whose ``model.config`` chose the file."""

    uri: str
    path: Path
    directory: Path | None = None
    warnings: tuple[str, ...] = ()


def split_uri(uri: str) -> tuple[str, str]:
    """Return ``(scheme, rest)``: ``("model", "ur3e/meshes/a.stl")``; ``("", text)`` without a scheme."""
    text = uri.strip()
    index = text.find("://")
    if index <= 0:
        return "", text
    return text[:index].lower(), text[index + 3 :]


def candidate_paths(uri: str, base_dir: Path | None, directories: Sequence[Path]) -> list[Path]:
    """Return the paths ``uri`` may stand for, in search order (``[]`` for a network URI)."""
    scheme, rest = split_uri(uri)
    if scheme in ("http", "https"):
        return []
    if scheme == "file":
        # file:///abs/path, or file://relative (read against the file's directory)
        text = unquote(rest)
        if text.startswith("/") or Path(text).is_absolute():
            return [Path(text)]
        return [base_dir / text] if base_dir is not None else []
    text = rest.lstrip("/") if scheme else rest
    if not scheme and Path(text).is_absolute():
        return [Path(text)]
    roots = ([base_dir] if base_dir is not None else []) + [d for d in directories if d != base_dir]
    return [root / text for root in roots]


def resolve_resource(uri: str, base_dir: Path | None, directories: Sequence[Path]) -> Path | None:
    """Return the first existing path ``uri`` stands for (a file or a directory), or ``None``.

    For mesh and other resource URIs; no ``model.config`` lookup.  Network URIs give ``None``.
    """
    for path in candidate_paths(uri, base_dir, directories):
        if path.exists():
            return path.resolve()
    return None


def resolve_include(
    uri: str,
    base_dir: Path | None,
    directories: Sequence[Path],
    *,
    source: str | None = None,
    line: int | None = None,
) -> ResolvedUri:
    """Return the SDF file an ``<include><uri>`` stands for.

    Args:
        uri: The URI as written (``model://``, relative, absolute, ``file://``).
        base_dir: The including file's directory (searched first), or ``None``.
        directories: The resource directories searched next.
        source: The including file, for errors.
        line: The ``<uri>`` line, for errors.

    Returns:
        The file and the warnings of finding it.

    Raises:
        IncludeError: ``kind="network"`` for http(s) URIs, ``"missing"`` (listing
            the directories searched) when nothing exists, ``"bad_config"`` for a model
            directory without a usable ``model.config``.
    """
    scheme, _ = split_uri(uri)
    if not uri.strip():
        raise IncludeError(
            "the <uri> is empty",
            kind="missing",
            uri=uri,
            source=source,
            line=line,
            hint="Write the model to include, e.g. <uri>model://my_robot</uri>.",
        )
    if scheme in ("http", "https"):
        raise IncludeError(
            "network URIs (Gazebo Fuel) are not fetched",
            kind="network",
            uri=uri,
            source=source,
            line=line,
            hint="Download the model once (e.g. `gz fuel download -u <url>`) and include it "
            "as model://<name> with its directory on GZ_SIM_RESOURCE_PATH or in resource_paths.",
        )
    candidates = candidate_paths(uri, base_dir, directories)
    for path in candidates:
        if path.is_file():
            return ResolvedUri(uri, path.resolve())
        if path.is_dir():
            chosen, warnings = model_file_in_directory(path, uri=uri, source=source, line=line)
            return ResolvedUri(uri, chosen.resolve(), path.resolve(), warnings)
    searched = [str(p) for p in candidates]
    raise IncludeError(
        "cannot be found; looked for: " + ", ".join(searched),
        kind="missing",
        uri=uri,
        searched=searched,
        source=source,
        line=line,
        hint="Add the directory that holds it to resource_paths or to "
        + " or ".join(RESOURCE_PATH_VARIABLES)
        + " (relative and model:// URIs are searched in the including file's directory, "
        "then there), or fix the URI.",
    )


def _read_config(path: Path, uri: str, source: str | None, line: int | None) -> Node:
    try:
        root = parse_xml(read_document(path), str(path))
    except XmlError as error:
        raise IncludeError(
            f"the model directory's {path.name} cannot be read: {error.problem}",
            kind="bad_config",
            uri=uri,
            source=source,
            line=line,
        ) from None
    assert root is not None
    return root


def model_file_in_directory(
    directory: Path, *, uri: str = "", source: str | None = None, line: int | None = None
) -> tuple[Path, tuple[str, ...]]:
    """Return the SDF file a model directory's ``model.config`` names, and warnings.

    Of the ``<sdf version="...">`` entries, the highest version not newer than
    :data:`SUPPORTED_VERSION` wins; when none qualifies (or none has a version), the first.
    """
    warnings: list[str] = []
    config = directory / "model.config"
    if not config.is_file():
        legacy = directory / "manifest.xml"
        if not legacy.is_file():
            raise IncludeError(
                f"names the directory {directory}, which holds no model.config",
                kind="bad_config",
                uri=uri,
                source=source,
                line=line,
                hint="Point the URI at the .sdf file itself, or add a model.config naming it.",
            )
        config = legacy
        warnings.append(f"{legacy}: manifest.xml is deprecated; rename it model.config")
    root = _read_config(config, uri, source, line)
    entries = [child for child in root.children if child.tag == "sdf"] if root.tag == "model" else []
    if not entries or not entries[0].text.strip():
        raise IncludeError(
            f"{config} names no SDF file (no <model><sdf>file.sdf</sdf></model>)",
            kind="bad_config",
            uri=uri,
            source=source,
            line=line,
        )
    best, best_version = entries[0], (0, 0)
    for entry in entries:
        version = parse_version(entry.attrib.get("version", ""))
        if version is None:
            continue
        if version > SUPPORTED_VERSION:
            warnings.append(f"{config}: ignoring the SDF {version[0]}.{version[1]} entry (newer than this loader)")
            continue
        if version > best_version and entry.text.strip():
            best, best_version = entry, version
    chosen = directory / best.text.strip()
    if not chosen.is_file():
        raise IncludeError(
            f"{config} names {best.text.strip()}, which does not exist in {directory}",
            kind="bad_config",
            uri=uri,
            source=source,
            line=line,
        )
    return chosen, tuple(warnings)

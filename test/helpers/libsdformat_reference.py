"""libsdformat 12 as the reference for bb_robot's SDF loader, through the C++ helper ``sdf_poses``.

The helper (``test/sdf/libsdformat/sdf_poses.cc``; its output format is in ``test/sdf/libsdformat/README.md``) loads an
SDF file with ``sdf::Root::Load`` and prints every model, link, joint and frame pose as libsdformat
resolves it. This module builds it, runs it, and prepares files for it:

- :func:`build_helper` compiles it with ``g++`` and ``pkg-config sdformat12`` into a cache directory,
  once per source/library/compiler version (:class:`HelperUnavailable` says what is missing);
- :func:`run` / :func:`time_load` call it with a timeout (libsdformat 12 never returns from an
  include cycle) and raise :class:`LibsdformatError` with libsdformat's error list;
- :func:`newer_features` finds what a file (and everything it includes) uses that SDF 1.9 lacks, and
  :func:`relabelled_copy` copies a file and its resource directories, relabelling 1.10+ as 1.9;
- :func:`entities` and :func:`pose_matrix` flatten the output for comparisons.

No pytest here: the fixtures of ``conftest.py`` and the benchmarks both use it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from helpers.cxx_build import build_cached
from helpers.robot_files import CORPUS_DIR

HELPER_SOURCE = Path(__file__).resolve().parents[1] / "sdf" / "libsdformat" / "sdf_poses.cc"
PKG_CONFIG_MODULE = "sdformat12"
# The newest SDFormat specification libsdformat 12 knows.
SPEC_VERSION = (1, 9)
# Seconds: libsdformat 12 loads the corpus's biggest world in well under one; it hangs on include cycles.
TIMEOUT = 20.0
# Resource-path variables the helper reads; run() removes them so that only resource_paths count.
RESOURCE_ENV = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH")


# The shared corpus of robot descriptions, beside the repository (CI has it there too).
# What GZ_SIM_RESOURCE_PATH would hold for the corpus (its README), in this order.
CORPUS_RESOURCE_DIRS = (
    "sas_robot_driver_gazebo/sdf",
    "gz_sim/test/worlds/models",
    "sdformat/test/integration/model",
    "sdformat/test/integration/model/nested_include",
    "synthetic/resources",
)
# Include cycles: libsdformat 12 never returns from these. Never hand them to the helper.
LIBSDFORMAT_HANGS = (
    "synthetic/sdf_include_cycle.sdf",
    "synthetic/resources/self_include/model.sdf",
)

# Corpus SDF files libsdformat 12.3 rejects (the corpus README marks them "libsdformat12: error"),
# with a piece of the error it gives.
LIBSDFORMAT_REJECTS = {
    "gz_sim/test/worlds/model_nested_include.sdf": "Unable to find uri[https://fuel",  # Fuel URI
    # model://frame.sdf is found nowhere else, so libsdformat takes its own spec file frame.sdf.
    "sas_robot_driver_gazebo/sdf/iiwa14_world.sdf": "Unable to read file[/usr/share//sdformat12/1.9/frame.sdf]",
    "sdformat/test/sdf/bad_syntax_pose.sdf": "Error reading element <pose>",
    "sdformat/test/sdf/empty_noversion.sdf": "Unable to read file",
    "sdformat/test/sdf/includes_missing_model.sdf": "Unable to find uri[missing_model]",
    "sdformat/test/sdf/invalid_xml_syntax.sdf": "Unable to read file",
    "sdformat/test/sdf/joint_axis_xyz_normalization.sdf": "The norm of the xyz vector cannot be zero",
    "sdformat/test/sdf/joint_child_world.sdf": "invalid child link [world]",
    "sdformat/test/sdf/joint_invalid_child.sdf": "Child frame with name[invalid]",
    "sdformat/test/sdf/joint_invalid_parent.sdf": "parent frame with name[invalid]",
    "sdformat/test/sdf/joint_invalid_parent_same_as_child.sdf": "must specify different frame names",
    "sdformat/test/sdf/joint_invalid_self_child.sdf": "FrameAttachedToGraph cycle detected",
    "sdformat/test/sdf/joint_nested_parent_child.sdf": "parent frame with name[M1::__model__]",
    "sdformat/test/sdf/model_duplicate_links.sdf": "link with name[link] already exists",
    "sdformat/test/sdf/model_frame_invalid_attached_to_cycle.sdf": "FrameAttachedToGraph cycle detected",
    "sdformat/test/sdf/model_invalid_canonical_link.sdf": "canonical_link with name[link3] not found",
    "sdformat/test/sdf/model_invalid_frame_relative_to_cycle.sdf": "PoseRelativeToGraph cycle detected",
    "sdformat/test/sdf/model_invalid_reserved_names.sdf": "The supplied link name [world] is reserved",
    "sdformat/test/sdf/model_without_links.sdf": "A model must have at least one link",
    "sdformat/test/sdf/root_duplicate_models.sdf": "model with name[robot1] already exists",
    "sdformat/test/sdf/root_multiple_models.sdf": "Root object can only contain one model",
    "synthetic/sdf_include_missing.sdf": "Unable to find uri[model://does_not_exist]",
}


def corpus_sdfs() -> list[Path]:
    """Every ``*.sdf`` of the corpus (include resources too) except those libsdformat hangs on."""
    if not CORPUS_DIR.is_dir():
        return []
    hangs = {CORPUS_DIR / name for name in LIBSDFORMAT_HANGS}
    return sorted(path for path in CORPUS_DIR.rglob("*.sdf") if path not in hangs)


class HelperUnavailable(RuntimeError):
    """The helper cannot be built here (no compiler, no pkg-config, no libsdformat 12); the reason."""


class LibsdformatError(RuntimeError):
    """libsdformat rejected a file, or the helper failed: ``errors`` holds libsdformat's error list.

    Each error is a dict with ``code`` (``sdf::ErrorCode`` as an int), ``message``, ``file``,
    ``line`` and ``xml_path`` (the last three may be None). ``timed_out`` is True when the helper was
    killed after the timeout (libsdformat 12 hangs on include cycles).
    """

    def __init__(
        self,
        path: Path,
        message: str,
        errors: Sequence[dict[str, Any]] = (),
        stderr: str = "",
        *,
        timed_out: bool = False,
    ) -> None:
        self.path = path
        self.errors = list(errors)
        self.stderr = stderr
        self.timed_out = timed_out
        lines = [f"libsdformat 12 on {path}: {message}"]
        lines += [f"  [{error['code']}] {error['message']}" for error in self.errors]
        if stderr.strip():
            lines.append("  stderr:\n" + "\n".join("    " + line for line in stderr.strip().splitlines()))
        super().__init__("\n".join(lines))


# ---------------------------------------------------------------------------------------- building


def build_helper(cache_dir: Path) -> Path:
    """Compile ``sdf_poses.cc`` into ``cache_dir`` (reused while source, library and compiler match).

    Raises :class:`HelperUnavailable` when ``g++``, ``pkg-config`` or ``sdformat12.pc`` is missing
    (``scripts/setup`` installs them: Debian ``g++``, ``pkg-config``, ``libsdformat-dev``) and
    ``RuntimeError`` when the compiler fails.
    """
    return build_cached(
        HELPER_SOURCE,
        PKG_CONFIG_MODULE,
        cache_dir,
        what="the libsdformat helper",
        library="libsdformat 12",
        debian_package="libsdformat-dev",
        unavailable=HelperUnavailable,
        optimisation="-O2",
    )


def _invoke(
    helper: Path, path: Path, resource_paths: Iterable[Path | str], extra: Sequence[str], timeout: float
) -> subprocess.CompletedProcess[str]:
    path = Path(path).resolve()
    args = [str(helper)]
    for directory in resource_paths:
        args += ["-p", str(Path(directory).resolve())]
    args += [*extra, str(path)]
    # libsdformat writes a log to $HOME/.sdformat/ and, failing everything else, looks for a URI in
    # the current directory: both go to directories of their own next to the helper.
    home = helper.parent / "home"
    empty = helper.parent / "empty"
    home.mkdir(exist_ok=True)
    empty.mkdir(exist_ok=True)
    env = {name: value for name, value in os.environ.items() if name not in RESOURCE_ENV}
    env["HOME"] = str(home)
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=empty, env=env)
    except subprocess.TimeoutExpired as timeout_error:
        stderr = timeout_error.stderr or b""
        raise LibsdformatError(
            path,
            f"no answer in {timeout:g} s (libsdformat 12 hangs on include cycles)",
            stderr=stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr,
            timed_out=True,
        ) from None


def _check(result: subprocess.CompletedProcess[str], path: Path) -> dict[str, Any]:
    path = Path(path).resolve()
    if result.returncode in (0, 1, 3):
        try:
            document: dict[str, Any] = json.loads(result.stdout)
        except json.JSONDecodeError:
            raise LibsdformatError(path, "the helper printed no JSON", stderr=result.stderr) from None
        if result.returncode == 0:
            return document
        if result.returncode == 1:
            raise LibsdformatError(path, "load errors", document.get("errors", []), result.stderr)
        raise LibsdformatError(
            path, "loaded, but some pose could not be resolved", document.get("resolve_errors", []), result.stderr
        )
    raise LibsdformatError(path, f"the helper exited with status {result.returncode}", stderr=result.stderr)


def run(
    helper: Path, path: Path | str, resource_paths: Iterable[Path | str] = (), *, timeout: float = TIMEOUT
) -> dict[str, Any]:
    """libsdformat's resolved poses of ``path`` (the helper's JSON as a dict).

    ``model://NAME`` looks in ``resource_paths`` in order; relative URIs in the loaded file's
    directory, then there. The environment's resource-path variables are ignored.
    """
    return _check(_invoke(helper, Path(path), resource_paths, (), timeout), Path(path))


def time_load(
    helper: Path, path: Path | str, resource_paths: Iterable[Path | str] = (), runs: int = 20, *, timeout: float = 120.0
) -> dict[str, Any]:
    """Seconds libsdformat 12 takes per ``sdf::Root::Load`` of ``path`` (``mean_seconds``, ``min_seconds``,
    ``max_seconds`` over ``runs`` loads after a first, checked one), measured inside the helper."""
    return _check(_invoke(helper, Path(path), resource_paths, ("--time", str(runs)), timeout), Path(path))


# ------------------------------------------------------------------- versions, includes, relabelling


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``"1.11"`` -> ``(1, 11)``; None for a missing or malformed version."""
    if not text or not re.fullmatch(r"\d+(\.\d+)*", text.strip()):
        return None
    return tuple(int(part) for part in text.strip().split("."))


def declared_version(path: Path) -> tuple[int, ...] | None:
    """The ``version`` attribute of the file's ``<sdf>`` root, or None (not XML, not SDF, no version)."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None
    return parse_version(root.get("version")) if root.tag == "sdf" else None


def _model_config_file(directory: Path) -> Path | None:
    """The SDF file named by ``directory/model.config``, chosen as libsdformat 12 chooses it: the highest
    ``<sdf version>`` it can read, else the first."""
    try:
        config = ET.parse(directory / "model.config").getroot()
    except (ET.ParseError, OSError):
        return None
    entries = [entry for entry in config.findall("sdf") if (entry.text or "").strip()]
    if not entries:
        return None
    readable = [entry for entry in entries if (parse_version(entry.get("version")) or (0,)) <= SPEC_VERSION]
    best = max(readable, key=lambda entry: parse_version(entry.get("version")) or (0,)) if readable else entries[0]
    return directory / (best.text or "").strip()


def resolve_uri(uri: str, top_dir: Path, resource_paths: Sequence[Path]) -> Path | None:
    """The file an ``<include><uri>`` names, found as the helper finds it (None if nowhere or remote)."""
    uri = uri.strip()
    if re.match(r"https?://", uri):
        return None
    candidates: list[Path] = []
    if uri.startswith("model://"):
        candidates += [Path(directory) / uri[len("model://") :] for directory in resource_paths]
    name = uri.split("://", 1)[1] if "://" in uri else uri
    if name.startswith("/"):
        candidates.append(Path(name))
    else:
        candidates += [Path(directory) / name for directory in (top_dir, *resource_paths)]
    for candidate in candidates:
        if candidate.is_dir():
            return _model_config_file(candidate)
        if candidate.is_file():
            return candidate
    return None


def included_files(path: Path, resource_paths: Sequence[Path | str] = ()) -> list[Path]:
    """``path`` and every file it includes, transitively (each once; cycles end; unresolvable URIs are
    left out, libsdformat reports those itself)."""
    path = Path(path).resolve()
    paths = [Path(directory).resolve() for directory in resource_paths]
    seen: list[Path] = []
    pending = [path]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.append(current)
        try:
            root = ET.parse(current).getroot()
        except (ET.ParseError, OSError):
            continue
        for include in root.iter("include"):
            uri = include.findtext("uri")
            found = resolve_uri(uri, path.parent, paths) if uri else None
            if found is not None:
                pending.append(found.resolve())
    return seen


def _features_of(root: ET.Element) -> Iterator[tuple[tuple[int, int], str]]:
    """(the SDF version that introduced it, what) for each post-1.9 feature in one document."""
    for world in root.iter("world"):
        if world.find("joint") is not None:
            yield (1, 10), "//world/joint"
        if any(include.get("merge") == "true" for include in world.findall("include")):
            yield (1, 10), '//world/include[@merge="true"]'
    for joint in root.iter("joint"):
        if joint.find("screw_thread_pitch") is not None:
            yield (1, 10), "//joint/screw_thread_pitch"
        for axis in ("axis", "axis2"):
            if joint.find(f"{axis}/mimic") is not None:
                yield (1, 11), f"//joint/{axis}/mimic"
    for plugin in root.iter("plugin"):
        if plugin.get("name") is None:
            yield (1, 10), "//plugin without a name"
    for inertial in root.iter("inertial"):
        if inertial.get("auto") is not None:
            yield (1, 11), "//inertial/@auto"
        for child in ("density", "auto_inertia_params"):
            if inertial.find(child) is not None:
                yield (1, 11), f"//inertial/{child}"
    for collision in root.iter("collision"):
        for child in ("density", "auto_inertia_params"):
            if collision.find(child) is not None:
                yield (1, 11), f"//collision/{child}"
    for element in root.iter():
        if element.tag == "model_state":
            yield (1, 12), "//model_state"


def newer_features(path: Path, resource_paths: Sequence[Path | str] = ()) -> list[str]:
    """What ``path`` and the files it includes use that their declared SDF version has and 1.9 lacks.

    Empty: a relabelled-1.9 copy means the same to libsdformat 12. Each item reads
    ``"<file>: <feature> (SDF <version>)"``. The 1.10 change of default joint limits (infinite instead
    of +-1e16 and -1) is not a feature: the copy gets libsdformat 12's defaults.
    """
    found: list[str] = []
    for file in included_files(path, resource_paths):
        version = declared_version(file)
        if version is None or version <= SPEC_VERSION:
            continue
        root = ET.parse(file).getroot()
        for since, feature in _features_of(root):
            item = f"{file}: {feature} (SDF {since[0]}.{since[1]})"
            if since <= version and item not in found:
                found.append(item)
    return found


_SDF_TAG = re.compile(r"""(<sdf\b[^>]*?\bversion\s*=\s*)(["'])([^"']*)\2""")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def relabel_text(text: str, *, every: bool = False) -> str:
    """``text`` with the ``version`` of its ``<sdf>`` tag (of every one, with ``every``, for
    ``model.config``) set to 1.9 where it is newer. Nothing else changes; tags in comments stay."""
    comments = [match.span() for match in _COMMENT.finditer(text)]
    pieces: list[str] = []
    last = 0
    for match in _SDF_TAG.finditer(text):
        if any(start <= match.start() < end for start, end in comments):
            continue
        version = parse_version(match.group(3))
        if version is not None and version > SPEC_VERSION:
            pieces += [text[last : match.start(3)], "1.9"]
            last = match.end(3)
        if not every:
            break
    return "".join(pieces) + text[last:]


@dataclasses.dataclass(frozen=True)
class Relabelled:
    """A relabelled copy: load ``path`` with ``resource_paths``; ``relabelled`` lists the copied files
    whose version changed."""

    path: Path
    resource_paths: tuple[Path, ...]
    relabelled: tuple[Path, ...]


def relabelled_copy(path: Path, resource_paths: Sequence[Path | str], dest: Path) -> Relabelled:
    """Copy ``path``'s directory and each resource directory into ``dest`` (``dest/0``, ``dest/1``, ...)
    and relabel every SDF file and ``model.config`` there that declares a version above 1.9 as 1.9.

    Included files come from the copies too, so a whole include tree is relabelled. The copy keeps
    the directory layout, so relative and ``model://`` URIs resolve as in the original.
    """
    path = Path(path).resolve()
    sources = [path.parent, *(Path(directory).resolve() for directory in resource_paths)]
    copies: list[Path] = []
    relabelled: list[Path] = []
    for index, source in enumerate(sources):
        copy = dest / str(index)
        shutil.copytree(source, copy, symlinks=False)
        copies.append(copy)
        for file in sorted(copy.rglob("*")):
            if file.suffix == ".sdf" or file.name == "model.config":
                text = file.read_text(encoding="utf-8")
                new = relabel_text(text, every=file.name == "model.config")
                if new != text:
                    file.write_text(new, encoding="utf-8")
                    relabelled.append(file)
    return Relabelled(copies[0] / path.name, tuple(copies[1:]), tuple(relabelled))


# ------------------------------------------------------------------------------------ the output


def pose_matrix(pose: Sequence[float]) -> np.ndarray:
    """The 4x4 homogeneous matrix of a helper pose ``[x, y, z, qw, qx, qy, qz]``.

    The quaternion is normalised first (a raw pose keeps the file's quaternion, which may be off
    unit by its rounding; a zero quaternion is the identity, as in ignition::math).
    """
    x, y, z, w, qx, qy, qz = (float(value) for value in pose)
    norm = math.sqrt(w * w + qx * qx + qy * qy + qz * qz)
    w, qx, qy, qz = (w / norm, qx / norm, qy / norm, qz / norm) if norm > 0 else (1.0, 0.0, 0.0, 0.0)
    matrix = np.eye(4)
    matrix[:3, :3] = [
        [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * w), 2 * (qx * qz + qy * w)],
        [2 * (qx * qy + qz * w), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * w)],
        [2 * (qx * qz - qy * w), 2 * (qy * qz + qx * w), 1 - 2 * (qx * qx + qy * qy)],
    ]
    matrix[:3, 3] = [x, y, z]
    return matrix


def pose_error(a: Sequence[float], b: Sequence[float]) -> float:
    """The largest absolute difference between the 4x4 matrices of two poses (quaternion sign free)."""
    return float(np.max(np.abs(pose_matrix(a) - pose_matrix(b))))


def models(result: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every model of a helper result, depth first, parents before their nested models."""
    stack = [model for world in result.get("worlds", []) for model in world["models"]]
    if result.get("model"):
        stack.append(result["model"])
    stack.reverse()
    while stack:
        model = stack.pop()
        yield model
        stack.extend(reversed(model["models"]))


def entities(result: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every model, link, joint and frame of a helper result by ``(kind, scoped name)``.

    ``kind`` is ``"model"``, ``"link"``, ``"joint"``, ``"frame"`` or ``"world_frame"``; the scoped name
    is ``model::nested::name`` (world names are not part of it). Each value is the helper's object.
    """
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for world in result.get("worlds", []):
        for frame in world["frames"]:
            found["world_frame", frame["name"]] = frame
    for model in models(result):
        found["model", model["scope"]] = model
        for kind in ("link", "joint", "frame"):
            for item in model[kind + "s"]:
                found[kind, f"{model['scope']}::{item['name']}"] = item
    return found


def is_finite_pose(pose: Sequence[float]) -> bool:
    """Seven finite numbers with a unit quaternion (to 1e-9)."""
    return (
        len(pose) == 7
        and all(math.isfinite(value) for value in pose)
        and abs(math.fsum(value * value for value in pose[3:]) - 1) < 1e-9
    )


class Libsdformat:
    """The built helper as a callable: ``libsdformat(path, resource_paths=()) -> dict`` (see :func:`run`)."""

    def __init__(self, helper: Path, timeout: float = TIMEOUT) -> None:
        self.helper = helper
        self.timeout = timeout

    @classmethod
    def build(cls, cache_dir: Path) -> Libsdformat:
        """Build (or reuse) the helper in ``cache_dir``; raises :class:`HelperUnavailable`."""
        return cls(build_helper(cache_dir))

    def __call__(
        self, path: Path | str, resource_paths: Iterable[Path | str] = (), *, timeout: float | None = None
    ) -> dict[str, Any]:
        return run(self.helper, path, resource_paths, timeout=self.timeout if timeout is None else timeout)

    def time_load(self, path: Path | str, resource_paths: Iterable[Path | str] = (), runs: int = 20) -> dict[str, Any]:
        """Seconds per ``sdf::Root::Load`` (see :func:`time_load`)."""
        return time_load(self.helper, path, resource_paths, runs)

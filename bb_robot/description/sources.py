"""Where the description node's model comes from, and loading it.

Resolution (:func:`resolve_model_path`) of the ``model`` parameter:

- ``package://pkg/rest``: ``rest`` under the share directory of ROS package ``pkg`` (the
  ament index; bb_robot itself is also found from a source checkout);
- ``model://name/rest``: ``name/rest`` under the first of ``model_dirs`` that has it (a
  directory, e.g. ``model://ur3e``, means the SDF file its ``model.config`` names, else
  ``model.sdf``); Gazebo's resource path variables are *not* searched;
- ``file:///abs/path`` and ``/abs/path``: that file;
- a relative path: looked up in ``model_dirs``, in order (not in the current directory).

Whatever the form, the file (after resolving symbolic links) must lie inside one of
``model_dirs``; otherwise :class:`ModelPathError` names the path and the directories.  Any
peer on the DDS graph can set the node's parameters, and xacro evaluates the expressions of
the files it expands: ``model_dirs`` is the list of directories whose files are trusted.  A
xacro file in them may still include other files (``$(find pkg)``): trusting a xacro file
means trusting what it includes.

Loading (:func:`load_model`, :func:`load_description_text`) is :mod:`bb_robot.loading`'s (the
root element decides the format: an ``.sdf`` file whose root is ``<robot>`` is URDF) and gives a
:class:`~bb_robot.loading.LoadedModel`: the validated :class:`~bb_robot.model.robot.Robot`, the
text to publish as ``robot_description`` (for URDF and xacro the input text itself, never a
re-serialisation; an SDF robot converted to URDF) and, for a model in an SDF world, the
placement of its root.  What is the node's own is here: ``model_dirs`` and the URI forms, and
refusing SDF text in the ``robot_description`` parameter.  The TF plan and the serial
manipulator come later (:func:`bb_robot.description.core.prepare`), so that the node can
publish ``robot_description`` as soon as the file is parsed and validated.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from bb_robot.errors import BbRobotError
from bb_robot.loading import LoadedModel, LoadError, RootPlacement, load_file, load_text, root_element

PackageShare = Callable[[str], str]

#: Label of a model given as text in the ``robot_description`` parameter.
PARAMETER_SOURCE = "<robot_description parameter>"

#: The model cannot be used: ``str(error)`` says which one and why (the loading path's error).
ModelSourceError = LoadError

__all__ = [
    "PARAMETER_SOURCE",
    "LoadedModel",
    "ModelPathError",
    "ModelSourceError",
    "PackageShare",
    "RootPlacement",
    "ament_package_share",
    "load_description_text",
    "load_model",
    "resolve_model_path",
]


class ModelPathError(ModelSourceError):
    """The ``model`` parameter does not name a usable file inside ``model_dirs``.

    ``model`` is the parameter's value, ``path`` the file it resolved to (``None`` if it did not
    resolve), ``model_dirs`` the configured directories.
    """

    def __init__(self, model: str, problem: str, model_dirs: Sequence[str], path: Path | None = None) -> None:
        self.model = model
        self.path = path
        self.model_dirs = tuple(model_dirs)
        self.problem = problem
        dirs = ", ".join(f"'{d}'" for d in self.model_dirs) or "none"
        resolved = f" (resolved to '{path}')" if path is not None and str(path) != model else ""
        super().__init__(f"model '{model}'{resolved}: {problem}; model_dirs: [{dirs}]")


# ------------------------------------------------------------------------------ resolution
def ament_package_share(package: str) -> str:
    """Share directory of a ROS package: the ament index, else (bb_robot only) its source tree.

    Raises :class:`LookupError` when the package is not found.
    """
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:  # pragma: no cover - ament_index_python comes with every ROS install
        pass
    else:
        try:
            return str(get_package_share_directory(package))
        except (LookupError, ValueError):  # PackageNotFoundError is a KeyError
            pass
    if package == "bb_robot":
        from bb_robot.resources import share_directories

        for directory in share_directories():
            if (directory / "package.xml").is_file():
                return str(directory)
    raise LookupError(f"ROS package '{package}' was not found (AMENT_PREFIX_PATH)")


def _inside(path: Path, directories: Sequence[Path]) -> bool:
    for directory in directories:
        try:
            path.relative_to(directory)
        except ValueError:
            continue
        return True
    return False


def _real_dirs(model_dirs: Sequence[str]) -> list[Path]:
    return [Path(os.path.realpath(os.path.expanduser(d))) for d in model_dirs if d]


def _split_uri(model: str, scheme: str) -> tuple[str, str]:
    rest = model[len(scheme) :]
    head, _, tail = rest.partition("/")
    return head, tail


def _model_directory_file(directory: Path) -> Path | None:
    """The SDF file of a Gazebo model directory: what ``model.config`` names, else ``model.sdf``."""
    config = directory / "model.config"
    if config.is_file():
        from bb_robot.xmlsafe import parse_xml, read_document

        try:
            root = parse_xml(read_document(config), str(config))
        except BbRobotError:
            root = None
        if root is not None:
            for child in root.children:
                if child.tag == "sdf" and child.text.strip():
                    return directory / child.text.strip()
    default = directory / "model.sdf"
    return default if default.is_file() else None


def resolve_model_path(
    model: str,
    model_dirs: Sequence[str],
    *,
    package_share: PackageShare = ament_package_share,
) -> Path:
    """Return the real path of the file ``model`` names, which must lie inside ``model_dirs``.

    Raises :class:`ModelPathError` naming the path and the directories when it does not
    resolve, does not exist, or lies outside every directory of ``model_dirs``.
    """
    dirs = _real_dirs(model_dirs)
    if not dirs:
        raise ModelPathError(model, "no model directory is configured (set model_dirs)", model_dirs)
    candidate: Path | None = None
    if model.startswith("package://"):
        package, rest = _split_uri(model, "package://")
        if not package or not rest:
            raise ModelPathError(model, "a package URI reads package://<package>/<path>", model_dirs)
        try:
            candidate = Path(package_share(package)) / rest
        except LookupError as error:
            raise ModelPathError(model, str(error), model_dirs) from None
    elif model.startswith("model://"):
        name, rest = _split_uri(model, "model://")
        if not name:
            raise ModelPathError(model, "a model URI reads model://<model>[/<path>]", model_dirs)
        for directory in dirs:
            if (directory / name).exists():
                candidate = directory / name / rest if rest else directory / name
                break
        if candidate is None:
            raise ModelPathError(model, f"no directory '{name}' in model_dirs", model_dirs)
    elif model.startswith("file://"):
        candidate = Path(model[len("file://") :])
    elif os.path.isabs(os.path.expanduser(model)):
        candidate = Path(os.path.expanduser(model))
    else:
        for directory in dirs:
            if (directory / model).exists():
                candidate = directory / model
                break
        if candidate is None:
            raise ModelPathError(model, "not found in model_dirs (relative paths are looked up there)", model_dirs)
    real = Path(os.path.realpath(candidate))
    if not _inside(real, dirs):
        raise ModelPathError(
            model,
            "the file is outside every directory of model_dirs, so it is not loaded "
            "(add its directory to model_dirs at start-up to allow it)",
            model_dirs,
            real,
        )
    if real.is_dir():
        found = _model_directory_file(real)
        if found is None:
            raise ModelPathError(model, "a directory without model.config or model.sdf", model_dirs, real)
        real = Path(os.path.realpath(found))
        if not _inside(real, dirs):
            raise ModelPathError(model, "its model.config names a file outside model_dirs", model_dirs, real)
    if not real.is_file():
        raise ModelPathError(model, "no such file", model_dirs, real)
    return real


# ------------------------------------------------------------------------------ loading
def load_description_text(text: str) -> LoadedModel:
    """Load URDF text (the ``robot_description`` parameter): plain URDF only, never xacro or SDF.

    Raises:
        ModelSourceError: SDF text.
        BbRobotError: the URDF parser's typed errors, :class:`~bb_robot.model.errors.InvalidRobot`.
    """
    if root_element(text.encode("utf-8", "replace")) == "sdf":
        raise ModelSourceError(
            f"{PARAMETER_SOURCE}: SDF text is not accepted here; put the SDF file in model_dirs and set model"
        )
    return load_text(text, source=PARAMETER_SOURCE)


def load_model(
    model: str,
    model_dirs: Sequence[str],
    *,
    model_scope: str = "",
    package_share: PackageShare = ament_package_share,
) -> LoadedModel:
    """Resolve ``model`` (see :func:`resolve_model_path`) and load it with
    :func:`bb_robot.loading.load_file` (the root element decides the format).

    URDF: the file's text is published as is; xacro: the expanded text; SDF: the selected model
    (``model_scope``) converted to URDF, its includes searched in the including file's
    directory, then in ``model_dirs``, then in ``GZ_SIM_RESOURCE_PATH`` / ``SDF_PATH`` of the
    node's environment; in a world, the robot's root link is placed in the world frame
    (``world``) by a :class:`RootPlacement`.  ``model_scope`` with a URDF or xacro file is an
    error.

    Raises:
        ModelSourceError: :class:`ModelPathError`, ``model_scope`` for URDF, a URDF file that is
            not UTF-8 text.
        BbRobotError: the parsers' typed errors, :class:`~bb_robot.model.errors.InvalidRobot`.
    """
    path = resolve_model_path(model, model_dirs, package_share=package_share)
    loaded = load_file(path, scope=model_scope, resource_paths=list(model_dirs))
    loaded.description  # noqa: B018 - written now, so that a model that cannot be published fails to load
    return loaded

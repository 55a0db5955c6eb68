"""Loading a file or text into a :class:`~bb_robot.loading.model.LoadedModel`: the dispatch.

:func:`load_file` finds the format (:mod:`bb_robot.loading.formats`) and hands the file to its
loader: URDF to :mod:`bb_robot.urdf`, xacro to xacro then :mod:`bb_robot.urdf`, SDF models and
worlds to :mod:`bb_robot.sdf`.  :func:`load_text` reads URDF text.  :func:`read_urdf` is the
URDF half without building the model, for callers that report on the document itself
(``bb-robot check``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bb_robot.loading.formats import Format, LoadError, format_from, read_head, root_element
from bb_robot.loading.model import LoadedModel, RootPlacement
from bb_robot.model.robot import Robot

if TYPE_CHECKING:
    from bb_robot.sdf.loader import SdfLoadResult
    from bb_robot.urdf import ir

#: The label of text loaded without one.
TEXT_SOURCE = "<string>"


class ScopeNotApplicableError(LoadError):
    """A model scope was given for a URDF or xacro file (scopes select a model of an SDF file).

    Args:
        path: the file.
        scope: the scope given.
        format: the file's format.
    """

    def __init__(self, path: str, scope: str, format: Format) -> None:
        self.path = path
        self.scope = scope
        self.format = format
        super().__init__(f"{path}: model_scope '{scope}' applies to SDF files only; this is {format.upper()}")


@dataclass(frozen=True)
class UrdfDocument:
    """A URDF or xacro file parsed, not yet built into a model.

    Attributes:
        text: what was parsed: the file's bytes, or xacro's expansion.
        label: the name messages give the text (``path``, or ``path (xacro output)``).
        document: the parsed intermediate representation (``document.source`` is the path).
    """

    text: str | bytes
    label: str
    document: ir.Robot


def read_urdf(
    path: str,
    format: Format,
    xacro_args: Mapping[str, str] | None = None,
    *,
    data: bytes | None = None,
) -> UrdfDocument:
    """Read and parse a URDF (``format="urdf"``) or xacro (``"xacro"``) file.

    Args:
        path: the file.
        format: ``"urdf"`` or ``"xacro"`` (see :func:`~bb_robot.loading.formats.format_from`).
        xacro_args: xacro's ``name:=value`` arguments; for a URDF file, ignored with a warning.
        data: URDF: the file's bytes when they were read already.

    Returns:
        The text, its label and the parsed document.

    Raises:
        UrdfError: the parser's and xacro's typed errors (:mod:`bb_robot.urdf.errors`).
    """
    from bb_robot.urdf import expand_xacro, parse_string
    from bb_robot.urdf.xml_safe import read_document

    if format == "xacro":
        text: str | bytes = expand_xacro(path, xacro_args)
        label = f"{path} (xacro output)"
        document = parse_string(text, source=label)
        document.source = path
        return UrdfDocument(text, label, document)
    if data is None:
        data = read_document(path)
    document = parse_string(data, source=path)
    if xacro_args:
        document.warnings.append(
            f"{path}: xacro arguments ({', '.join(sorted(xacro_args))}) were ignored: the file is not a .xacro file"
        )
    return UrdfDocument(data, path, document)


def load_file(
    path: str | os.PathLike[str],
    *,
    scope: str = "",
    resource_paths: Sequence[str | os.PathLike[str]] = (),
    xacro_args: Mapping[str, str] | None = None,
    drop_world: bool = False,
    environ: Mapping[str, str] | None = None,
) -> LoadedModel:
    """Load a URDF, xacro or SDF (model or world) file; the format rule of
    :mod:`bb_robot.loading.formats` decides which.

    Args:
        path: the file.
        scope: SDF: the model to load (``a::b::c``); empty: the loader's choice
            (:func:`load_sdf`).  Given for a URDF or xacro file, an error.
        resource_paths: SDF: directories searched for includes after the including file's
            directory and before ``GZ_SIM_RESOURCE_PATH`` / ``SDF_PATH``.
        xacro_args: xacro: the expansion's arguments (URDF: ignored with a warning; SDF: ignored).
        drop_world: URDF and xacro: remove the world anchor joints
            (:func:`bb_robot.urdf.builder.build_robot`); for SDF an error.
        environ: SDF: where ``GZ_SIM_RESOURCE_PATH`` and ``SDF_PATH`` are read (default ``os.environ``).

    Returns:
        The loaded model; ``source`` is ``path`` as given.

    Raises:
        ModelFileError: the file cannot be read at all.
        ScopeNotApplicableError: ``scope`` for a URDF or xacro file.
        LoadError: ``drop_world`` for an SDF file.
        BbRobotError: the loaders' typed errors (``UrdfError``, ``SdfError``, ``InvalidRobot``).
    """
    from bb_robot.urdf.xml_safe import read_document

    name = os.fspath(path)
    head = read_head(name)
    # A <robot> is read whole: for the xacro rule, and the URDF parser reads these bytes.
    data = read_document(name) if root_element(head) == "robot" and not name.lower().endswith(".xacro") else None
    format = format_from(name, head, data)
    if format == "sdf":
        if drop_world:
            raise LoadError(f"{name}: drop_world applies to URDF and xacro files; this is SDF")
        return loaded_sdf(name, load_sdf(name, scope, resource_paths, environ=environ))
    if scope:
        raise ScopeNotApplicableError(name, scope, format)
    from bb_robot.urdf.builder import build_robot

    urdf = read_urdf(name, format, xacro_args, data=data)
    robot = build_robot(urdf.document, drop_world=drop_world)
    return LoadedModel(robot, urdf.text, format, name, warnings=tuple(robot.warnings))


def load_text(text: str, *, source: str = TEXT_SOURCE) -> LoadedModel:
    """Load URDF text (never xacro, which reads files, or SDF).

    Args:
        text: the URDF document.
        source: the name messages give the text.

    Returns:
        The loaded model, of kind ``"string"``; ``text`` and ``description`` are ``text`` itself.

    Raises:
        LoadError: the text's root is ``<sdf>``.
        BbRobotError: the URDF parser's typed errors, ``InvalidRobot``.
    """
    from bb_robot.urdf import parse_string
    from bb_robot.urdf.builder import build_robot

    if root_element(text.encode("utf-8", "replace")) == "sdf":
        raise LoadError(f"{source}: SDF text is not accepted here; load the SDF from a file")
    robot = build_robot(parse_string(text, source=source))
    return LoadedModel(robot, text, "string", source, warnings=robot.warnings)


def load_sdf(
    path: str,
    scope: str = "",
    resource_paths: Sequence[str | os.PathLike[str]] = (),
    *,
    environ: Mapping[str, str] | None = None,
) -> SdfLoadResult:
    """:func:`bb_robot.sdf.load_from_file` without the serial model.

    A model file none of whose models has a movable joint (a static object, a sensor rig) is
    loaded as its root model, with a warning, rather than refused: its links and frames can
    still be checked, drawn and placed.  A world without a kinematic model is refused.

    Raises:
        SdfError: the SDF loader's typed errors.
    """
    from bb_robot.sdf import ScopeError, load_from_file, load_from_model, read_document

    paths = list(resource_paths)
    try:
        return load_from_file(path, scope, resource_paths=paths, build_serial=False, environ=environ)
    except ScopeError as error:
        if scope or error.kind != "none":
            raise
        document = read_document(path, resource_paths=paths, environ=environ)
        root = document.model
        if root is None or not any(model.links for model in root.walk()):
            raise
        result = load_from_model(document, root.scoped_name, build_serial=False)
        note = f"{path}: no model has a movable joint; loaded the file's model '{root.scoped_name}'"
        return replace(result, warnings=(*result.warnings, note))


def loaded_sdf(path: str, result: SdfLoadResult) -> LoadedModel:
    """The loaded-model value of an SDF loader's result for the file ``path``."""
    return LoadedModel(
        result.robot,
        None,
        "sdf",
        path,
        placement=root_placement(result),
        scope=result.source_scope,
        warnings=tuple(result.warnings),
        sdf=result,
    )


def root_placement(result: SdfLoadResult) -> RootPlacement | None:
    """Where the robot's root link sits in the world of an SDF world file; ``None`` for a model file.

    A model joined to the world by a joint of its own has the world frame as its root link
    already: ``None`` too.
    """
    import numpy as np

    from bb_robot.model.kinematics import ForwardKinematics

    robot = result.robot
    if result.world.name is None or robot.root_link == "world":
        return None
    root_pose = result.base_pose  # the canonical link in the world
    canonical = result.canonical_link
    if canonical is not None and canonical != robot.root_link and canonical in robot.links:
        # the root's world pose at the SDF's own (zero) joint positions
        root_pose = root_pose @ np.linalg.inv(ForwardKinematics(robot).poses()[canonical])
    elif canonical is None or canonical not in robot.links:
        root_pose = result.model_pose
    return RootPlacement("world", np.array(root_pose, dtype=float))


def load_urdf_robot(
    path: str | os.PathLike[str],
    *,
    xacro_args: Mapping[str, str] | None = None,
    drop_world: bool = False,
) -> Robot:
    """The robot of a URDF or xacro file, through :func:`load_file` (``SerialManipulator.from_urdf``).

    Raises:
        LoadError: the file is SDF (``bb_robot.sdf.load_from_file(path).serial`` builds its chain).
        BbRobotError: as :func:`load_file`.
    """
    loaded = load_file(path, xacro_args=xacro_args, drop_world=drop_world)
    if loaded.kind == "sdf":
        raise LoadError(
            f"{os.fspath(path)}: an SDF file, not URDF or xacro "
            "(bb_robot.sdf.load_from_file(path).serial is its serial manipulator)"
        )
    return loaded.robot

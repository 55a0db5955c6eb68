"""Entry points of the SDF loader.

* :func:`load_from_file` — the recommended one: a ``<model>`` or ``<world>`` file.
* :func:`load_from_sdf_file` — a file whose root is a ``<model>`` (a world is refused).
* :func:`load_from_model` — an :class:`~bb_robot.sdf.document.SdfModel` already read (with
  :func:`~bb_robot.sdf.document.read_document`), or a document and a scope.

Each returns an :class:`SdfLoadResult`: the :class:`~bb_robot.model.robot.Robot`, the
serial-manipulator model built from it (``serial``; pass ``build_serial=False`` to skip
it, e.g. for a tree or a model whose axes are not +z in strict mode), joint and link
names, the selected scope, the world's facts and the warnings; ``result.to_urdf()`` (or
:func:`sdf_to_urdf`) writes the robot as URDF.  See ``docs/sdf.md``.

Writing URDF needs the URDF writer, and ``sdf/`` does not import ``urdf/``: the export lives
above both (:mod:`bb_robot.loading.sdf_urdf`) and is called through the hook
:data:`SDF_TO_URDF`, which the package root has :mod:`bb_robot.loading` register on first use
(:mod:`bb_robot.hooks`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from bb_robot.hooks import Hook
from bb_robot.model.robot import SINGLE_DOF_TYPES, Robot
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix
from bb_robot.sdf.convert import ConvertedModel, convert_model, select_model
from bb_robot.sdf.document import SdfDocument, SdfModel, SdfPlugin, read_document
from bb_robot.sdf.errors import SdfStructureError
from bb_robot.sdf.frames import FrameGraph, resolve
from bb_robot.sdf.resources import resolve_resource

MeshUris = Literal["keep", "file"]
#: The values ``mesh_uris`` accepts.
MESH_URI_MODES: tuple[MeshUris, ...] = ("keep", "file")


@dataclass(frozen=True, eq=False)
class WorldInfo:
    """What a Gazebo backend needs from the file.

    ``name`` is the world's name (``None`` for a model file); ``models`` every model's
    scoped name, in document order; ``plugins`` each model's ``<plugin>`` elements
    (including those written in the ``<include>`` that brought it in), by scoped name;
    ``world_plugins`` the world's own.
    """

    name: str | None
    models: tuple[str, ...]
    plugins: Mapping[str, tuple[SdfPlugin, ...]]
    world_plugins: tuple[SdfPlugin, ...] = ()


@dataclass(frozen=True, eq=False)
class SdfLoadResult:
    """The loaded kinematic model.

    * ``robot``: the :class:`Robot` (URDF convention; names relative to ``source_scope``);
    * ``serial``: ``SerialManipulator.from_robot(robot, tip, strict=strict,
      base=canonical_link, base_pose=base_pose)``, or ``None`` with ``build_serial=False``;
    * ``joint_names``: the independent movable joints (revolute, continuous, prismatic;
      not mimic) in traversal order; ``link_names``: the SDF links in topological order
      (the robot also has links for ``<frame>``\\ s and off-axis joints, see ``converted``);
    * ``source_scope``: the selected model's scoped name (``a::b::c``);
    * ``scoped_names``: relative name → full scoped name of each SDF link, joint, frame and
      nested model;
    * ``model_pose``: the selected model frame in the world; ``base_pose``: the canonical
      link in the world; ``canonical_link``: its (relative) name;
    * ``world``: :class:`WorldInfo`; ``warnings``: every warning, ``file:line: ...``;
    * ``document``, ``frames``, ``converted``: the layers underneath, for more detail.

    :meth:`to_urdf` exports the robot as URDF; :meth:`resolve_uri` finds a mesh file.
    """

    robot: Robot
    serial: SerialManipulator | None
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    source_scope: str
    scoped_names: Mapping[str, str]
    model_pose: Matrix
    base_pose: Matrix
    canonical_link: str | None
    world: WorldInfo
    warnings: tuple[str, ...]
    document: SdfDocument
    frames: FrameGraph
    converted: ConvertedModel

    def resolve_uri(self, uri: str, link: str | None = None) -> Path | None:
        """The file a mesh (or other resource) URI of ``link`` points to, or ``None``.

        Searched like an include (``model://``, relative, ``file://``, absolute; never the
        network): from the directory of the file that declared ``link`` (default: the loaded
        file's), then the resource paths and ``GZ_SIM_RESOURCE_PATH`` / ``SDF_PATH`` of the load.
        """
        base = self.converted.link_directories.get(link) if link is not None else None
        if base is None and self.document.path:
            base = Path(self.document.path).parent
        return resolve_resource(uri, base, self.document.resource_paths)

    def to_urdf(
        self,
        *,
        mesh_uris: MeshUris = "keep",
        strict_uris: bool = False,
        unknown_limit: float | None = None,
    ) -> str:
        """The robot as URDF text, to publish as ``robot_description``.

        ``mesh_uris="keep"`` keeps mesh and texture URIs as the SDF wrote them; ``"file"``
        writes each one :meth:`resolve_uri` finds as an absolute ``file://`` URI (one it
        cannot find stays as written, or raises with ``strict_uris=True``).  ``unknown_limit``
        (``None``: the URDF writer's default, 1e16) is written for a limit URDF requires and
        the SDF leaves unlimited.  Written by :func:`bb_robot.loading.sdf_urdf.sdf_to_urdf`
        through the hook :data:`SDF_TO_URDF`.

        Raises:
            ValueError: another ``mesh_uris``.
            UrdfWriteError: ``strict_uris=True`` and a mesh URI that is not found.
        """
        return SDF_TO_URDF.function(self, mesh_uris=mesh_uris, strict_uris=strict_uris, unknown_limit=unknown_limit)


class SdfToUrdf(Protocol):
    """The signature of the SDF → URDF export (:data:`SDF_TO_URDF`)."""

    def __call__(
        self,
        result: SdfLoadResult,
        *,
        mesh_uris: MeshUris = "keep",
        strict_uris: bool = False,
        unknown_limit: float | None = None,
    ) -> str: ...


#: The SDF → URDF export, registered by :mod:`bb_robot.loading` (see the module docstring).
SDF_TO_URDF: Hook[SdfToUrdf] = Hook("sdf_to_urdf")


#: ``sdf_to_urdf(result, *, mesh_uris="keep", strict_uris=False, unknown_limit=None)``: the robot
#: of ``result`` as URDF text, :meth:`SdfLoadResult.to_urdf` called as a function.
sdf_to_urdf = SdfLoadResult.to_urdf


def _world_info(document: SdfDocument) -> WorldInfo:
    models = document.models()
    return WorldInfo(
        name=document.world.name if document.world is not None else None,
        models=tuple(m.scoped_name for m in models),
        plugins={m.scoped_name: m.plugins for m in models},
        world_plugins=document.world.plugins if document.world is not None else (),
    )


def _result(
    document: SdfDocument,
    graph: FrameGraph,
    model: SdfModel,
    choice_warnings: Sequence[str],
    *,
    tip: str | None,
    strict: bool,
    build_serial: bool,
) -> SdfLoadResult:
    converted = convert_model(graph, model, (*document.warnings_for(model.scoped_name), *choice_warnings))
    robot = converted.robot
    canonical = converted.canonical_link
    base_pose = converted.model_pose
    if canonical is not None and canonical in robot.links:
        base_pose = graph.world_pose(converted.scoped_names[canonical], "link")
    serial = None
    if build_serial:
        base = canonical if canonical is not None and canonical in robot.links else None
        serial = SerialManipulator.from_robot(robot, tip, strict=strict, base=base, base_pose=base_pose)
    joint_names = tuple(
        j
        for j in robot.topology.joint_order
        if robot.joints[j].type in SINGLE_DOF_TYPES and robot.joints[j].mimic is None
    )
    return SdfLoadResult(
        robot=robot,
        serial=serial,
        joint_names=joint_names,
        link_names=converted.sdf_links,
        source_scope=converted.scope,
        scoped_names=converted.scoped_names,
        model_pose=np.array(converted.model_pose),
        base_pose=np.array(base_pose),
        canonical_link=canonical,
        world=_world_info(document),
        warnings=converted.warnings,
        document=document,
        frames=graph,
        converted=converted,
    )


def load_from_file(
    path: str | os.PathLike[str],
    model_scope: str = "",
    *,
    resource_paths: Sequence[str | os.PathLike[str]] | None = None,
    tip: str | None = None,
    strict: bool = True,
    build_serial: bool = True,
    environ: Mapping[str, str] | None = None,
) -> SdfLoadResult:
    """Load the kinematic model of an SDF model or world file.

    ``model_scope`` (``"a::b::c"``) selects a model; empty: the most deeply nested model
    with links and a movable joint (see :func:`~bb_robot.sdf.convert.select_model`).
    ``resource_paths`` are searched for includes after the including file's directory and
    before ``GZ_SIM_RESOURCE_PATH`` / ``SDF_PATH`` (read from ``environ``, default
    ``os.environ``).  ``tip`` and ``strict`` go to the serial model.  Raises an
    :class:`~bb_robot.sdf.errors.SdfError` (file, XML, include, frame, scope problems),
    :class:`~bb_robot.model.errors.InvalidRobot`, or the serial model's errors.
    """
    document = read_document(path, resource_paths=resource_paths, environ=environ)
    graph = resolve(document)
    model, notes = select_model(document, model_scope)
    return _result(document, graph, model, notes, tip=tip, strict=strict, build_serial=build_serial)


def load_from_sdf_file(
    path: str | os.PathLike[str],
    *,
    resource_paths: Sequence[str | os.PathLike[str]] | None = None,
    tip: str | None = None,
    strict: bool = True,
    build_serial: bool = True,
    environ: Mapping[str, str] | None = None,
) -> SdfLoadResult:
    """Load a file whose root is a ``<model>``: that model is the robot (no selection).

    A ``<world>`` file is an :class:`SdfStructureError` (use :func:`load_from_file`).
    """
    document = read_document(path, resource_paths=resource_paths, environ=environ)
    if document.model is None:
        raise SdfStructureError(
            "this is a <world> file, not a <model> file",
            source=document.path,
            element="world",
            name=document.world.name if document.world is not None else None,
            hint="Use load_from_file(path, model_scope=...) for worlds.",
        )
    graph = resolve(document)
    return _result(document, graph, document.model, (), tip=tip, strict=strict, build_serial=build_serial)


def load_from_model(
    model: SdfModel | SdfDocument,
    model_scope: str = "",
    *,
    tip: str | None = None,
    strict: bool = True,
    build_serial: bool = True,
) -> SdfLoadResult:
    """Build the result from an already-read model or document.

    An :class:`SdfModel` is loaded on its own (as the root model of a document of its
    own: its ``<pose>`` places it in the world); an :class:`SdfDocument` goes through the
    same selection as :func:`load_from_file`.
    """
    if isinstance(model, SdfDocument):
        document = model
        chosen, notes = select_model(document, model_scope)
    else:
        source = model.where.source
        if model.pose.relative_to:
            # detached from its parent, the model has nothing its pose could refer to
            model = replace(model, pose=replace(model.pose, relative_to=""))
        document = SdfDocument(
            path=source,
            version=model.version,
            world=None,
            model=model,
            warnings=(),
            files=(source,) if source else (),
        )
        chosen, notes = model, ()
        if model_scope:
            chosen, notes = select_model(document, model_scope)
    graph = resolve(document)
    return _result(document, graph, chosen, notes, tip=tip, strict=strict, build_serial=build_serial)

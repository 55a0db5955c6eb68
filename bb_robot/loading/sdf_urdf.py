"""Export a loaded SDF model as URDF (to publish it as ``robot_description``).

This is the one place that knows both SDF and URDF: ``sdf/`` and ``urdf/`` do not import each
other.  :func:`sdf_to_urdf` is registered as the hook
:data:`bb_robot.sdf.loader.SDF_TO_URDF` when :mod:`bb_robot.loading` is imported (which the
first call of ``SdfLoadResult.to_urdf`` or ``bb_robot.sdf.sdf_to_urdf`` does, see
:mod:`bb_robot.hooks`), so those calls work as documented.

:func:`sdf_to_urdf` writes the converted robot (``result.robot``) with :func:`bb_robot.urdf.writer.robot_to_urdf`:
links, joints, limits, mimic, visual and collision geometry, materials and inertials, and
the links and fixed joints the conversion added for ``<frame>``\\ s, off-axis joints and free
links (``docs/sdf.md``).  The URDF's root is the robot's root link; where it sits in the
world is ``result.converted.root_pose_in_world`` (URDF has no place for it).

Mesh and texture URIs are written as the SDF has them (``mesh_uris="keep"``) or, with
``mesh_uris="file"``, as absolute ``file://`` URIs of the files they point to, each looked
up by :meth:`SdfLoadResult.resolve_uri` from the directory of the file that declared its
link (so a relative URI in an included model finds that model's meshes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

from bb_robot.model.geometry import Geometry, Mesh, Visual
from bb_robot.model.robot import Link, Robot
from bb_robot.sdf.loader import MESH_URI_MODES, MeshUris, SdfLoadResult
from bb_robot.urdf.writer import UNKNOWN_LIMIT, resolve_to_file_uris, robot_to_urdf

__all__ = ["sdf_to_urdf"]


def sdf_to_urdf(
    result: SdfLoadResult,
    *,
    mesh_uris: MeshUris = "keep",
    strict_uris: bool = False,
    unknown_limit: float | None = None,
) -> str:
    """Return the robot of ``result`` as URDF text.

    ``mesh_uris="keep"`` writes every mesh and texture URI as the SDF has it
    (``model://ur3e/meshes/base.dae``); ``"file"`` writes the ones
    :meth:`~bb_robot.sdf.loader.SdfLoadResult.resolve_uri` finds as absolute ``file://``
    URIs and keeps the others as written, or, with ``strict_uris=True``, raises
    :class:`~bb_robot.urdf.writer.UrdfWriteError` naming the first it cannot find.
    ``unknown_limit`` is written for an effort or velocity limit URDF requires and the SDF
    leaves unlimited (``None``: the writer's :data:`~bb_robot.urdf.writer.UNKNOWN_LIMIT`, 1e16;
    see :mod:`bb_robot.urdf.writer`).  Raises ``ValueError`` for another ``mesh_uris``.
    """
    if mesh_uris not in MESH_URI_MODES:
        raise ValueError(f"mesh_uris={mesh_uris!r}: pass one of {', '.join(repr(m) for m in MESH_URI_MODES)}")
    robot = result.robot
    if mesh_uris == "file":
        robot = _with_file_uris(result, strict_uris)
    return robot_to_urdf(robot, unknown_limit=UNKNOWN_LIMIT if unknown_limit is None else unknown_limit)


def _with_file_uris(result: SdfLoadResult, strict: bool) -> Robot:
    """``result.robot`` with every resource URI of each link mapped from that link's directory."""
    links: dict[str, Link] = {}
    for name, link in result.robot.links.items():
        to_file = resolve_to_file_uris(_resolver(result, name), strict=strict)
        links[name] = dataclasses.replace(
            link,
            visuals=tuple(_visual(v, to_file) for v in link.visuals),
            collisions=tuple(dataclasses.replace(c, geometry=_geometry(c.geometry, to_file)) for c in link.collisions),
        )
    return dataclasses.replace(result.robot, links=MappingProxyType(links))


def _resolver(result: SdfLoadResult, link: str) -> Callable[[str], Path | None]:
    def resolve(uri: str) -> Path | None:
        return result.resolve_uri(uri, link)

    return resolve


def _visual(visual: Visual, to_file: Callable[[str], str]) -> Visual:
    material = visual.material
    if material is not None and material.texture is not None:
        material = dataclasses.replace(material, texture=to_file(material.texture))
    return dataclasses.replace(visual, geometry=_geometry(visual.geometry, to_file), material=material)


def _geometry(geometry: Geometry | None, to_file: Callable[[str], str]) -> Geometry | None:
    if isinstance(geometry, Mesh):
        return dataclasses.replace(geometry, filename=to_file(geometry.filename))
    return geometry

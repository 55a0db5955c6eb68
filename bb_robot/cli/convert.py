"""``bb-robot convert``: SDF (or URDF, xacro) to URDF, URDF or SDF to Python, and either to MJCF.

``--to urdf`` writes the robot model with the URDF writer (:func:`bb_robot.urdf.writer.robot_to_urdf`;
for SDF through :meth:`SdfLoadResult.to_urdf <bb_robot.sdf.loader.SdfLoadResult.to_urdf>`, which
can turn mesh URIs into absolute ``file://`` URIs).  A URDF or xacro input is written back out
in the writer's canonical form (a xacro file expanded).

``--to python`` writes Python source that rebuilds the robot with the authoring API
(:mod:`bb_robot.authoring`), through its importer (:mod:`bb_robot.authoring.importer`); run as a
script, the source prints the URDF.

``--to mjcf`` writes MuJoCo's MJCF (:func:`bb_robot.mjcf.robot_to_mjcf`): mesh URIs resolved to
absolute paths (an SDF's as its loader finds them, per link; ``package://`` through the ament
index), so the document loads with ``mujoco.MjModel.from_xml_path`` from any directory; what MJCF
cannot carry (unreadable or missing meshes, planar joints) is reported as warnings.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from bb_robot.cli import common
from bb_robot.loading import LoadedModel, read_urdf

JSON_SHAPE = (
    '{"from": "urdf|sdf", "to": "urdf|python|mjcf", "robot", "source_scope", "output": path or null, '
    '"text": the converted text when there is no -o (else null), "warnings": [...]}'
)


def to_urdf(loaded: LoadedModel, *, mesh_uris: str) -> str:
    """The loaded robot as URDF text (SDF: mesh URIs kept or made absolute ``file://`` URIs)."""
    if loaded.sdf is not None:
        return loaded.sdf.to_urdf(mesh_uris="file" if mesh_uris == "file" else "keep")
    if mesh_uris == "file":
        raise common.UsageError("--mesh-uris file applies to SDF input (URDF mesh URIs are written as they are)")
    from bb_robot.urdf.writer import robot_to_urdf

    return robot_to_urdf(loaded.robot)


def to_python(loaded: LoadedModel, xacro_args: dict[str, str]) -> str:
    """Python source rebuilding the loaded robot with the authoring API.

    A URDF or xacro file goes through :func:`bb_robot.authoring.importer.python_source_for` of
    the file's intermediate representation (:func:`bb_robot.loading.read_urdf`: what was written,
    as written, as :func:`~bb_robot.authoring.importer.import_urdf` does); an SDF robot through
    :func:`~bb_robot.authoring.importer.python_source_for` of the robot model's representation,
    as :func:`~bb_robot.authoring.importer.import_sdf` does, for the model this command loaded.
    """
    from bb_robot.authoring.importer import python_source_for
    from bb_robot.urdf.writer import model_to_ir

    if loaded.kind in ("urdf", "xacro"):
        return python_source_for(read_urdf(loaded.source, loaded.kind, xacro_args or None).document)
    return python_source_for(model_to_ir(loaded.robot), source=loaded.source, scope=common.source_scope(loaded))


def to_mjcf(loaded: LoadedModel, resource_paths: list[str]) -> tuple[str, tuple[str, ...]]:
    """The loaded robot as MJCF text, and the writer's warnings."""
    from pathlib import Path as _Path

    from bb_robot.mjcf import MjcfOptions, default_resolver, robot_to_mjcf

    fallback = default_resolver(loaded.source, resource_paths)
    sdf = loaded.sdf

    def resolve(uri: str, link: str) -> _Path | None:
        found = sdf.resolve_uri(uri, link) if sdf is not None else None
        return found.resolve() if found is not None and found.is_file() else fallback(uri, link)

    document = robot_to_mjcf(loaded.robot, MjcfOptions(mesh_resolver=resolve))
    return document.text, document.warnings


def run(args: argparse.Namespace) -> int:
    output = args.output
    common.refuse_to_overwrite(output, args.file)
    loaded = common.load_from_args(args)
    warnings = tuple(loaded.warnings)
    if args.to == "urdf":
        text = to_urdf(loaded, mesh_uris=args.mesh_uris)
    elif args.to == "mjcf":
        if args.mesh_uris != "keep":
            raise common.UsageError("--mesh-uris applies to --to urdf (MJCF always names meshes by absolute path)")
        text, written = to_mjcf(loaded, list(args.resource_path))
        warnings += written
    else:
        if args.mesh_uris != "keep":
            raise common.UsageError("--mesh-uris applies to --to urdf")
        text = to_python(loaded, common.parse_xacro_args(args.xacro_arg))
    for warning in warnings:
        common.warn(warning)
    if output is not None:
        Path(output).write_text(text, encoding="utf-8")
    if args.json:
        data: dict[str, Any] = {
            "from": loaded.format,
            "to": args.to,
            "robot": loaded.robot.name,
            "source_scope": common.source_scope(loaded),
            "output": output,
            "text": None if output is not None else text,
            "warnings": list(warnings),
        }
        common.print_json(data)
    elif output is None:
        sys.stdout.write(text)
    else:
        print(f"wrote {output}: robot '{loaded.robot.name}' as {args.to} ({os.path.getsize(output)} bytes)")
    return common.EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "convert",
        help="convert SDF to URDF, URDF or SDF to Python (authoring API), either to MuJoCo MJCF",
        description="Convert a robot description: --to urdf writes URDF (from SDF, or a URDF/xacro "
        "rewritten in canonical form); --to python writes Python source that rebuilds the robot "
        "with bb_robot's authoring API; --to mjcf writes MuJoCo's MJCF (meshes by absolute path). "
        "The result goes to -o OUT, or to stdout.",
    )
    common.add_input_options(parser)
    parser.add_argument("--to", required=True, choices=("urdf", "python", "mjcf"), help="the output format")
    parser.add_argument("-o", "--output", metavar="OUT", help="file to write (default: stdout)")
    parser.add_argument(
        "--mesh-uris",
        choices=("keep", "file"),
        default="keep",
        help="SDF to URDF: keep mesh URIs as the SDF wrote them (default), or write each one found as an "
        "absolute file:// URI",
    )
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)

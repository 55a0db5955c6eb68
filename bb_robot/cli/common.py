"""What every ``bb-robot`` command shares: exit codes, loading any description, options, output.

:func:`load` reads a URDF, xacro, SDF model or SDF world file into a :class:`Loaded`; the
format is detected from the root element (``<robot>`` or ``<sdf>``), else from the file's
extension.  Commands raise :class:`UsageError` for option values that cannot be used (exit
2) and let :class:`~bb_robot.errors.BbRobotError` through for descriptions that cannot be
used (exit 1); :func:`bb_robot.cli.main` turns both into a message.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Literal

from bb_robot.errors import BbRobotError
from bb_robot.loading import LoadedModel, ModelFileError, ScopeNotApplicableError, load_file
from bb_robot.model.transforms import Matrix, matrix_to_quaternion

EXIT_OK: Final = 0
EXIT_INPUT: Final = 1
EXIT_USAGE: Final = 2

#: The description language a command reports: xacro is URDF.
Format = Literal["urdf", "sdf"]

#: The file named on the command line cannot be read at all (missing, a directory, ...).
InputFileError = ModelFileError


class UsageError(BbRobotError):
    """An option value, or a combination of options, that cannot be used (exit code 2)."""


class InputError(BbRobotError):
    """A description that loaded but cannot be used for what the command was asked (exit code 1)."""


# ------------------------------------------------------------------------------- loading
def load(
    path: str | os.PathLike[str],
    *,
    scope: str | None = None,
    resource_paths: Sequence[str] = (),
    xacro_args: Mapping[str, str] | None = None,
) -> LoadedModel:
    """Load a URDF, xacro or SDF (model or world) file with :func:`bb_robot.loading.load_file`.

    Args:
        path: the file; its root element decides the format (:mod:`bb_robot.loading`).
        scope: selects the SDF model (default: the loader's choice).
        resource_paths: searched for SDF includes (a URDF ignores them).
        xacro_args: go to xacro (a warning for URDF and SDF).

    Raises:
        UsageError: ``scope`` for a URDF or xacro file.
        BbRobotError: the loaders' errors, for a description that cannot be used.
    """
    name = os.fspath(path)
    try:
        loaded = load_file(name, scope=scope or "", resource_paths=list(resource_paths), xacro_args=xacro_args)
    except ScopeNotApplicableError:
        raise UsageError(f"--scope selects a model of an SDF file; {name} is URDF") from None
    if loaded.kind == "sdf" and xacro_args:
        return replace(loaded, warnings=(*loaded.warnings, f"{name}: --xacro-arg ignored: the file is SDF, not xacro"))
    return loaded


def source_scope(loaded: LoadedModel) -> str | None:
    """The selected SDF model's scoped name; ``None`` for URDF (JSON ``null``)."""
    return loaded.scope if loaded.kind == "sdf" else None


def explain(error: BaseException) -> str:
    """``str(error)``, with the command-line option to use where the message names an API argument."""
    from bb_robot.sdf.errors import SdfError

    text = str(error).rstrip()
    if isinstance(error, SdfError):
        if "model_scope" in text:
            text += " (on the command line: --scope SCOPE)"
        elif "resource_paths" in text:
            text += " (on the command line: --resource-path DIR)"
    return text


# ------------------------------------------------------------------------------- options
def add_input_options(parser: argparse.ArgumentParser, *, file_help: str | None = None) -> None:
    """Add FILE, ``--scope``, ``--resource-path`` and ``--xacro-arg`` to a command."""
    parser.add_argument(
        "file",
        metavar="FILE",
        help=file_help or "robot description: URDF, xacro, SDF model or SDF world (detected from the root element)",
    )
    add_source_options(parser)


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--scope``, ``--resource-path`` and ``--xacro-arg`` (FILE added by the caller)."""
    parser.add_argument(
        "--scope",
        metavar="S",
        help="SDF: the model to use, as its full scoped name (a::b::c); default: the most deeply "
        "nested model with a movable joint",
    )
    parser.add_argument(
        "--resource-path",
        action="append",
        default=[],
        metavar="DIR",
        help="SDF: a directory searched for <include> URIs (repeatable), after the including file's "
        "directory and before GZ_SIM_RESOURCE_PATH and SDF_PATH",
    )
    parser.add_argument(
        "--xacro-arg",
        action="append",
        default=[],
        metavar="NAME:=VALUE",
        help="xacro: an argument for the expansion (repeatable)",
    )


def add_json_option(parser: argparse.ArgumentParser, shape: str) -> None:
    """Add ``--json``, documenting the shape of its output."""
    parser.add_argument("--json", action="store_true", help=f"print JSON for scripts: {shape}")


def add_joint_option(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable ``--joint NAME=VALUE`` (read with :func:`parse_joint_values`)."""
    parser.add_argument(
        "--joint",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="joint value in rad or m (repeatable); unnamed joints are 0, mimic joints follow their source",
    )


def load_from_args(args: argparse.Namespace, path: str | None = None) -> LoadedModel:
    """:func:`load` with the input options of :func:`add_input_options`."""
    return load(
        path if path is not None else args.file,
        scope=args.scope,
        resource_paths=args.resource_path,
        xacro_args=parse_xacro_args(args.xacro_arg),
    )


def parse_xacro_args(items: Sequence[str]) -> dict[str, str]:
    """``NAME:=VALUE`` items as a mapping (:class:`UsageError` for a malformed one)."""
    values: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            raise UsageError(f"--xacro-arg expects NAME:=VALUE, got '{item}'")
        values[name] = value
    return values


def parse_joint_values(items: Sequence[str], option: str = "--joint") -> dict[str, float]:
    """``NAME=VALUE`` items (radians or metres) of ``option`` as a mapping.

    The value is after the last ``=``; a missing name, a value that is not a finite number
    or a joint given twice is a :class:`UsageError` naming ``option``.
    """
    values: dict[str, float] = {}
    for item in items:
        name, sep, text = item.rpartition("=")
        try:
            if not sep or not name:
                raise ValueError
            value = float(text)
        except ValueError:
            raise UsageError(f"{option} expects NAME=VALUE with a number, got '{item}'") from None
        if not math.isfinite(value):
            raise UsageError(f"{option} {name}: the value must be a finite number, got '{text}'")
        if name in values:
            raise UsageError(f"{option} {name} is given more than once")
        values[name] = value
    return values


# -------------------------------------------------------------------------------- output
def refuse_to_overwrite(output: str | None, source: str) -> None:
    """A :class:`UsageError` when ``-o OUTPUT`` is the input file itself."""
    if output is not None and Path(output).exists() and Path(output).resolve() == Path(source).resolve():
        raise UsageError(f"-o {output} is the input file; write the output elsewhere")


def finite_or_none(value: float | None) -> float | None:
    """``value`` as a float, or ``None`` when it is missing, infinite or NaN (JSON ``null``)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def pose_json(pose: Matrix) -> dict[str, list[float]]:
    """``{"xyz": [x, y, z], "quat_xyzw": [x, y, z, w]}`` of a 4×4 pose (unit quaternion, w ≥ 0)."""
    xyz = [float(c) + 0.0 for c in pose[:3, 3]]  # + 0.0 turns -0.0 into 0.0
    quat = [c + 0.0 for c in matrix_to_quaternion(pose[:3, :3])]
    return {"xyz": xyz, "quat_xyzw": quat}


_NUMBER_ARRAY = re.compile(r"\[\s+((?:-?[\d.eE+-]+|null)(?:,\s+(?:-?[\d.eE+-]+|null))*)\s+\]")


def to_json(data: Any) -> str:
    """``data`` as strict JSON (no NaN or Infinity: ``ValueError``), indented, number arrays on one line."""
    text = json.dumps(data, allow_nan=False, indent=2, ensure_ascii=False)
    return _NUMBER_ARRAY.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)


def print_json(data: Any) -> None:
    """Print :func:`to_json` of ``data`` on stdout."""
    print(to_json(data))


def warn(text: str) -> None:
    """Print ``warning: text`` on stderr."""
    print(f"warning: {text}", file=sys.stderr)


def number(value: float) -> str:
    """A short human form of a number: 6 significant digits, ``0`` for zero, ``inf`` kept."""
    return f"{value:.6g}" if value != 0 else "0"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()) -> str:
    """Rows aligned under their headers, columns two spaces apart (``right``: right-aligned columns)."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])

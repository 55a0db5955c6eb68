"""``bb-robot chain``: the serial manipulator of a description, as a table (or JSON).

The chain is :meth:`SerialManipulator.from_robot <bb_robot.model.serial.SerialManipulator.from_robot>`
(``docs/serial.md``): for an SDF model it starts at the canonical link, placed where the world
puts it, as the SDF loader does.  SDF input is strict by default (every actuation about +z of
its joint frame, the SDF loader's rule); URDF and xacro input normalise by default (any axis is
re-expressed as +z), as the serial model does for URDF.  ``--strict`` / ``--normalise`` override.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from bb_robot.cli import common
from bb_robot.loading import LoadedModel
from bb_robot.model.errors import NotSerialError, OffAxisJointError
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix, matrix_to_rpy

JSON_SHAPE = (
    '{"base", "tip", "joints": [{"name", "type": "RZ|TZ", "lower", "upper", "velocity", "effort"}], '
    '"source_scope"} (infinite or missing limits are null; source_scope is null for URDF)'
)


def normalising(loaded: LoadedModel, choice: bool | None) -> bool:
    """Whether to normalise axes: as asked, else for URDF/xacro input but not for SDF (the SDF loader's rule)."""
    return choice if choice is not None else loaded.sdf is None


def build(loaded: LoadedModel, *, tip: str | None, base: str | None, normalise: bool) -> SerialManipulator:
    """The serial manipulator of a loaded description (SDF: from the canonical link, placed in the world)."""
    robot = loaded.robot
    base_pose = None
    if loaded.sdf is not None and base is None:
        canonical = loaded.sdf.canonical_link
        if canonical is not None and canonical in robot.links:
            base, base_pose = canonical, loaded.sdf.base_pose
    try:
        return SerialManipulator.from_robot(robot, tip, strict=not normalise, base=base, base_pose=base_pose)
    except OffAxisJointError as error:
        raise common.InputError(f"{error} (on the command line: --normalise)") from None
    except NotSerialError as error:
        raise common.InputError(f"{error} (on the command line: --tip LINK)") from None


def chain_json(serial: SerialManipulator, source_scope: str | None) -> dict[str, Any]:
    """The documented ``--json`` shape."""
    return {
        "base": serial.base_link,
        "tip": serial.tip_link,
        "joints": [
            {
                "name": j.name,
                "type": j.actuation,
                "lower": common.finite_or_none(j.lower),
                "upper": common.finite_or_none(j.upper),
                "velocity": common.finite_or_none(j.velocity),
                "effort": common.finite_or_none(j.effort),
            }
            for j in serial.joints
        ],
        "source_scope": source_scope,
    }


def _fixed(value: float) -> str:
    """Six decimals without trailing zeros (offsets are read, not copied: the JSON has every digit)."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _xyz(matrix: Matrix) -> str:
    return " ".join(_fixed(float(c)) for c in matrix[:3, 3])


def _rpy(matrix: Matrix) -> str:
    return " ".join(_fixed(a) for a in matrix_to_rpy(matrix[:3, :3]))


def _limit(value: float) -> str:
    return common.number(value) if np.isfinite(value) else "-"


def format_chain(serial: SerialManipulator) -> str:
    """The chain as a table: per joint its actuation, offsets and limits; then the tip offset."""
    turned = any(not np.allclose(j.offset_after, np.eye(4), rtol=0.0, atol=1e-15) for j in serial.joints)
    merged = any(j.fixed_before for j in serial.joints)
    headers = ["#", "joint", "type", "offset xyz (m)", "offset rpy (rad)"]
    if turned:
        headers.append("after rpy (rad)")
    headers += ["lower", "upper", "velocity", "effort"]
    if merged:
        headers.append("merged fixed joints")
    rows = []
    for i, j in enumerate(serial.joints):
        row = [str(i), j.name, j.actuation, _xyz(j.offset_before), _rpy(j.offset_before)]
        if turned:
            row.append(_rpy(j.offset_after))
        row += [_limit(j.lower), _limit(j.upper), _limit(j.velocity), _limit(j.effort)]
        if merged:
            row.append(", ".join(j.fixed_before))
        rows.append(row)
    text = common.table(headers, rows, right=(0,))
    tip = (
        f"tip offset ({serial.link_names[-1]} → {serial.tip_link}): "
        f"xyz {_xyz(serial.tip_offset)}  rpy {_rpy(serial.tip_offset)}"
    )
    if serial.tip_fixed:
        tip += f"  (fixed joints {', '.join(serial.tip_fixed)})"
    lines = [text, "", tip]
    if not np.array_equal(serial.base_pose, np.eye(4)):
        lines.append(f"base pose in the world: xyz {_xyz(serial.base_pose)}  rpy {_rpy(serial.base_pose)}")
    lines.append("limits: '-' means none (unbounded or unknown)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    loaded = common.load_from_args(args)
    normalise = normalising(loaded, args.normalise)
    serial = build(loaded, tip=args.tip, base=args.base, normalise=normalise)
    for warning in loaded.warnings:
        common.warn(warning)
    if args.json:
        common.print_json(chain_json(serial, common.source_scope(loaded)))
        return common.EXIT_OK
    scope = f", model '{common.source_scope(loaded)}'" if common.source_scope(loaded) else ""
    mode = "normalised: each axis re-expressed as +z" if normalise else "strict: every axis +z"
    print(
        f"serial chain of robot '{serial.robot_name}' ({args.file}{scope}): "
        f"'{serial.base_link}' → '{serial.tip_link}', {serial.dof} joints ({mode})"
    )
    print()
    print(format_chain(serial))
    return common.EXIT_OK


def add_chain_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--tip``, ``--base`` and ``--normalise`` / ``--strict`` (read by :func:`build` and :func:`normalising`)."""
    parser.add_argument(
        "--tip", metavar="L", help="end-effector link (needed where movable joints branch; the error lists tips)"
    )
    parser.add_argument(
        "--base", metavar="L", help="first link of the chain (default: the root; SDF: the canonical link)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--normalise",
        "--normalize",
        dest="normalise",
        action="store_const",
        const=True,
        help="re-express every joint axis as +z by turning its joint frame (the default for URDF and xacro)",
    )
    mode.add_argument(
        "--strict",
        dest="normalise",
        action="store_const",
        const=False,
        help="every joint must act about +z of its own frame (the default for SDF)",
    )


def from_args(args: argparse.Namespace, loaded: LoadedModel) -> SerialManipulator:
    """The serial manipulator that :func:`add_chain_options`' options select in a loaded description."""
    return build(loaded, tip=args.tip, base=args.base, normalise=normalising(loaded, args.normalise))


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "chain",
        help="print the serial manipulator: actuation types, offsets, limits",
        description="Print the serial-manipulator model of a description (docs/serial.md): each joint's "
        "actuation (RZ: rotation about +z, TZ: translation along +z of its joint frame), its offset from "
        "the previous chain link, and its limits. Fixed joints are merged into the offsets.",
    )
    common.add_input_options(parser)
    add_chain_options(parser)
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)

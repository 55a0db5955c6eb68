"""The ``bb-robot`` command line.

Exit codes: 0 success; 1 the description could not be loaded or used (the
message names the file, element, link or joint); 2 wrong usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bb_robot.errors import BbRobotError
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Joint, Robot
from bb_robot.model.transforms import matrix_to_quaternion, matrix_to_rpy
from bb_robot.resources import bundled_model
from bb_robot.urdf.builder import load_urdf

EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2


def default_tip(robot: Robot) -> str:
    """Return the end-effector link assumed when none is named.

    The deepest leaf hung on a fixed joint (a tool or TCP frame) wins; a robot
    without one gives its deepest leaf.  Ties go to the first in tree order.
    """
    leaves = robot.leaf_links()
    tools = [
        link
        for link in leaves
        if (joint := robot.links[link].parent_joint) is not None and robot.joints[joint].type == "fixed"
    ]
    pool = tools or leaves
    return max(pool, key=lambda link: robot.topology.depth[link])


def format_tree(robot: Robot) -> str:
    """Return the kinematic tree as indented text: each joint with its type and axis."""
    lines = [robot.root_link]
    stack: list[tuple[Joint, str, bool]] = []

    def push_children(link: str, indent: str) -> None:
        children = robot.child_joints(link)
        stack.extend((joint, indent, i == len(children) - 1) for i, joint in reversed(list(enumerate(children))))

    push_children(robot.root_link, "")
    while stack:  # iterative: chains thousands of links deep are fine
        joint, indent, last = stack.pop()
        lines.append(f"{indent}{'└─' if last else '├─'} {_describe(joint)} → {joint.child_link}")
        push_children(joint.child_link, indent + ("   " if last else "│  "))
    return "\n".join(lines)


def _describe(joint: Joint) -> str:
    parts: list[str] = [joint.type]
    if joint.dof:
        parts.append("axis " + " ".join(_number(c) for c in joint.axis))
    if joint.mimic is not None:
        parts.append(f"mimics {joint.mimic.joint}")
    if joint.actuators:
        parts.append("actuator " + ", ".join(joint.actuators))
    return f"{joint.name} [{'; '.join(parts)}]"


def _number(value: float) -> str:
    return f"{value:.6g}" if value != 0 else "0"


def _parse_joint_values(items: Sequence[str]) -> dict[str, float]:
    values: dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            values[name] = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--joint expects NAME=VALUE with a number, got '{item}'") from None
    return values


def _show(args: argparse.Namespace) -> int:
    path = Path(args.file) if args.file else bundled_model()
    robot = load_urdf(path)
    fk = ForwardKinematics(robot)
    tip = args.tip or default_tip(robot)
    robot.get_link(tip)
    values = _parse_joint_values(args.joint)
    pose = fk.poses(values)[tip]
    movable = [j for j in robot.joints.values() if j.dof]
    mimics = sum(1 for j in movable if j.mimic is not None)
    print(
        f"robot '{robot.name}' ({path}): {len(robot.links)} links, {len(robot.joints)} joints, "
        f"{len(movable)} movable ({mimics} mimic), {len(robot.actuators)} actuators"
    )
    print()
    print(format_tree(robot))
    for warning in robot.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for held in fk.held_joints:
        print(f"note: {robot.joints[held].type} joint '{held}' is held at its origin", file=sys.stderr)
    xyz = pose[:3, 3] + 0.0  # + 0.0 turns -0.0 into 0.0 for printing
    rpy = [angle + 0.0 for angle in matrix_to_rpy(pose[:3, :3])]
    quat = matrix_to_quaternion(pose[:3, :3])
    configuration = ", ".join(f"{k}={v:g}" for k, v in values.items()) or "all joints at 0"
    print()
    print(f"end effector '{tip}' in '{robot.root_link}' ({configuration}):")
    print(f"  xyz  = {xyz[0]: .6f} {xyz[1]: .6f} {xyz[2]: .6f}  m")
    print(f"  rpy  = {rpy[0]: .6f} {rpy[1]: .6f} {rpy[2]: .6f}  rad")
    print(f"  quat = {quat[0]: .6f} {quat[1]: .6f} {quat[2]: .6f} {quat[3]: .6f}  (x y z w)")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``bb-robot`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="bb-robot",
        description="Inspect robot descriptions (URDF, xacro) with bb_robot.",
        epilog="Exit codes: 0 success, 1 bad input (the message says where), 2 wrong usage.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    show = commands.add_parser(
        "show",
        help="print a robot's kinematic tree and its end-effector pose",
        description="Print the kinematic tree of a URDF/xacro file (default: the bundled "
        "bb_arm) and the pose of its end effector in the root link frame.",
    )
    show.add_argument("file", nargs="?", help="URDF or xacro file (default: bundled bb_arm.urdf)")
    show.add_argument("--tip", help="end-effector link (default: the deepest tool frame)")
    show.add_argument(
        "--joint",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="joint value in rad or m (repeatable); unnamed joints are 0",
    )
    show.set_defaults(handler=_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bb-robot``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    except (BbRobotError, OSError) as error:
        print(f"bb-robot: error: {error}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())

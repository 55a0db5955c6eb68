"""``bb-robot show``: a robot's kinematic tree and the pose of its end effector."""

from __future__ import annotations

import argparse
import sys

from bb_robot.cli import common
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Joint, Robot
from bb_robot.model.serial_chain import default_tip
from bb_robot.model.transforms import matrix_to_quaternion, matrix_to_rpy

#: Joint types whose axis means something (floating joints have none; planar: the plane's normal).
AXIS_TYPES = frozenset({"revolute", "continuous", "prismatic", "planar"})
JSON_SHAPE = '{"robot", "root", "tip", "joints": {name: value}, "xyz": [x, y, z], "quat_xyzw": [x, y, z, w]}'


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
        lines.append(f"{indent}{'└─' if last else '├─'} {describe_joint(joint)} → {joint.child_link}")
        push_children(joint.child_link, indent + ("   " if last else "│  "))
    return "\n".join(lines)


def describe_joint(joint: Joint) -> str:
    """``name [type; axis x y z; mimics j; actuator a]``."""
    parts: list[str] = [joint.type]
    if joint.type in AXIS_TYPES:
        parts.append("axis " + " ".join(common.number(c) for c in joint.axis))
    if joint.mimic is not None:
        parts.append(f"mimics {joint.mimic.joint}")
    if joint.actuators:
        parts.append("actuator " + ", ".join(joint.actuators))
    return f"{joint.name} [{'; '.join(parts)}]"


def summary(robot: Robot) -> str:
    """``N links, N joints, N movable (N mimic), N actuators``."""
    movable = [j for j in robot.joints.values() if j.dof]
    mimics = sum(1 for j in movable if j.mimic is not None)
    return (
        f"{len(robot.links)} links, {len(robot.joints)} joints, "
        f"{len(movable)} movable ({mimics} mimic), {len(robot.actuators)} actuators"
    )


def run(args: argparse.Namespace) -> int:
    from bb_robot.resources import bundled_model

    values = common.parse_joint_values(args.joint)
    path = args.file or str(bundled_model())
    loaded = common.load_from_args(args, path)
    robot = loaded.robot
    fk = ForwardKinematics(robot)
    tip = args.tip or default_tip(robot)
    robot.get_link(tip)
    pose = fk.poses(values)[tip]
    for warning in loaded.warnings:
        common.warn(warning)
    for held in fk.held_joints:
        print(f"note: {robot.joints[held].type} joint '{held}' is held at its origin", file=sys.stderr)
    if args.json:
        common.print_json(
            {"robot": robot.name, "root": robot.root_link, "tip": tip, "joints": values, **common.pose_json(pose)}
        )
        return common.EXIT_OK
    scope = f", model '{common.source_scope(loaded)}'" if common.source_scope(loaded) else ""
    print(f"robot '{robot.name}' ({path}{scope}): {summary(robot)}")
    print()
    print(format_tree(robot))
    xyz = pose[:3, 3] + 0.0  # + 0.0 turns -0.0 into 0.0 for printing
    rpy = [angle + 0.0 for angle in matrix_to_rpy(pose[:3, :3])]
    quat = matrix_to_quaternion(pose[:3, :3])
    configuration = ", ".join(f"{k}={v:g}" for k, v in values.items()) or "all joints at 0"
    print()
    print(f"end effector '{tip}' in '{robot.root_link}' ({configuration}):")
    print(f"  xyz  = {xyz[0]: .6f} {xyz[1]: .6f} {xyz[2]: .6f}  m")
    print(f"  rpy  = {rpy[0]: .6f} {rpy[1]: .6f} {rpy[2]: .6f}  rad")
    print(f"  quat = {quat[0]: .6f} {quat[1]: .6f} {quat[2]: .6f} {quat[3]: .6f}  (x y z w)")
    return common.EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "show",
        help="print a robot's kinematic tree and its end-effector pose",
        description="Print the kinematic tree of a robot description (default: the bundled bb_arm) "
        "and the pose of its end effector in the root link frame.",
    )
    parser.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="URDF, xacro, SDF model or SDF world (default: the bundled bb_arm.urdf)",
    )
    common.add_source_options(parser)
    parser.add_argument("--tip", metavar="LINK", help="end-effector link (default: the deepest tool frame)")
    common.add_joint_option(parser)
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)

"""``bb-robot fk``: the pose of every link (and SDF frame) in the root link's frame.

Joints not named are at 0; mimic joints follow their source; floating and planar joints are
held at their origin (a note says so).  For an SDF model the robot's links include a link for
each ``<frame>`` (and for the frame of an off-axis joint), named after it (``docs/sdf.md``), so
their poses are listed too.
"""

from __future__ import annotations

import argparse
import sys

from bb_robot.cli import common
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.transforms import matrix_to_rpy

JSON_SHAPE = (
    '{"root": link, "frames": {name: {"xyz": [x, y, z], "quat_xyzw": [x, y, z, w]}}} '
    "(metres, in the root link's frame, unit quaternion with w >= 0)"
)


def run(args: argparse.Namespace) -> int:
    values = common.parse_joint_values(args.joint)
    loaded = common.load_from_args(args)
    robot = loaded.robot
    fk = ForwardKinematics(robot)
    poses = fk.poses(values)
    for warning in loaded.warnings:
        common.warn(warning)
    for held in fk.held_joints:
        print(f"note: {robot.joints[held].type} joint '{held}' is held at its origin", file=sys.stderr)
    if args.json:
        common.print_json({"root": robot.root_link, "frames": {name: common.pose_json(poses[name]) for name in poses}})
        return common.EXIT_OK
    sdf_frames = set(loaded.sdf.converted.frame_links) if loaded.sdf is not None else set()
    rows = []
    for name, pose in poses.items():
        xyz = " ".join(f"{float(c) + 0.0: .6f}" for c in pose[:3, 3])
        rpy = " ".join(f"{a + 0.0: .6f}" for a in matrix_to_rpy(pose[:3, :3]))
        quat = " ".join(f"{c: .6f}" for c in common.pose_json(pose)["quat_xyzw"])
        rows.append([name + (" (frame)" if name in sdf_frames else ""), xyz, rpy, quat])
    configuration = ", ".join(f"{k}={v:g}" for k, v in values.items()) or "all joints at 0"
    scope = f", model '{common.source_scope(loaded)}'" if common.source_scope(loaded) else ""
    print(f"robot '{robot.name}' ({args.file}{scope}): poses in '{robot.root_link}' ({configuration})")
    print()
    print(common.table(["frame", "xyz (m)", "rpy (rad)", "quat (x y z w)"], rows))
    return common.EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "fk",
        help="print the pose of every link and SDF frame for joint values",
        description="Forward kinematics: the pose of every link (and SDF frame) in the root link's frame. "
        "Joints not named are at 0; mimic joints follow their source.",
    )
    common.add_input_options(parser)
    common.add_joint_option(parser)
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)

"""``bb-robot plan``: a collision-free, simplified, timed motion of a robot's chain, from a start to a goal.

The robot is FILE with its allowed-collision matrix (found as the driver finds it:
:func:`bb_robot.collision.sources.checked_model`), in the world ``--world`` names (any
:mod:`bb_robot.collision.world` file, MoveIt PlanningScene YAML and ``.scene`` included).  The
planned joints are the chain to ``--tip`` (default: ``bb-robot show``'s end effector, the deepest
tool frame); other joints (fingers) keep their start values.  The goal is joint values (``--to``,
the joints not named keep their start values) or the tip's pose (``--xyz`` and ``--rpy`` /
``--quat``).  The planner is :func:`bb_robot.planning.plan.plan` at ``--clearance`` (default: the
driver's ``collision.clearance`` plus 1 mm, :data:`~bb_robot.planning.validity.DRIVER_CLEARANCE`,
so the driver accepts the plan).
The velocity and acceleration limits are the model's, narrowed by ``--config``'s ``joint_limits``
(a driver parameter file, or MoveIt's ``joint_limits.yaml``), with conservative defaults where
neither gives one (named on stderr).

Exit 0 when planned; 1 when not (the cause named) or for an input that cannot be used; 2 for wrong
usage.  ``-o`` writes the trajectory as a ``trajectory_msgs/JointTrajectory`` in YAML (flow style,
so it can be pasted into ``ros2 action send_goal``; docs/cli.md).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from bb_robot.cli import common
from bb_robot.cli.ik import target_pose
from bb_robot.cli.show import default_tip
from bb_robot.collision.scene import Scene
from bb_robot.collision.sources import checked_model
from bb_robot.collision.world import load_world
from bb_robot.model.serial import SerialManipulator
from bb_robot.planning.errors import InvalidRequest
from bb_robot.planning.goals import JointGoal, PoseGoal
from bb_robot.planning.limits import JointLimits, read_overrides
from bb_robot.planning.plan import PlanResult, plan
from bb_robot.planning.timing import Trajectory
from bb_robot.planning.validity import DRIVER_CLEARANCE

#: The position tolerance of a pose goal (m) and its orientation tolerance (rad).
POSE_TOLERANCE = (1e-4, 1e-3)

JSON_SHAPE = (
    '{"success", "error": message|null, "cause": error type|null, "robot", "tip", "joints": [names], '
    '"start": {joint: value}, "clearance" (m), "seed", "timings": {"planning", "simplifying", "timing", "total"} (s), '
    '"lengths": {"raw", "simplified"} (C-space), "iterations", "waypoints": [[...], ...], '
    '"trajectory": {"joint_names", "duration", "period", "peak_velocity_ratio", "peak_acceleration_ratio", '
    '"peak_jerk", "peak_jerk_ratio", "points": [{"time", "positions", "velocities", "accelerations"}]}|null, '
    '"limits": {joint: {"velocity", "acceleration", "jerk", "defaulted": [...]}}, "output": path|null}'
)


def _values(groups: list[list[str]] | None, option: str) -> dict[str, float]:
    items = [item for group in groups or [] for item in group]
    return common.parse_joint_values(items, option)


def planned_joints(robot: Any, tip: str) -> tuple[SerialManipulator, tuple[str, ...]]:
    """The chain to ``tip`` and its joints (the planned ones)."""
    if tip not in robot.links:
        raise InvalidRequest(f"robot '{robot.name}' has no link '{tip}' (--tip); its links: {', '.join(robot.links)}")
    chain = SerialManipulator.from_robot(robot, tip, strict=False)
    return chain, tuple(chain.joint_names)


def trajectory_json(trajectory: Trajectory) -> dict[str, Any]:
    """The trajectory as the ``--json`` shape's ``trajectory``."""
    return {
        "joint_names": list(trajectory.names),
        "duration": trajectory.duration,
        "period": trajectory.period,
        "peak_velocity_ratio": trajectory.peak_velocity_ratio,
        "peak_acceleration_ratio": trajectory.peak_acceleration_ratio,
        "peak_jerk": trajectory.peak_jerk,
        "peak_jerk_ratio": trajectory.peak_jerk_ratio,
        "points": [
            {"time": float(t), "positions": p.tolist(), "velocities": v.tolist(), "accelerations": a.tolist()}
            for t, p, v, a in zip(
                trajectory.times, trajectory.positions, trajectory.velocities, trajectory.accelerations, strict=True
            )
        ],
    }


def joint_trajectory_message(trajectory: Trajectory) -> dict[str, Any]:
    """A ``trajectory_msgs/JointTrajectory`` as a mapping of its fields: the trajectory's knots.

    The knots are the samples where a phase of the timing starts or ends (waypoints included);
    between two the motion is one polynomial of degree ≤ 3, which a driver's cubic through the knots'
    positions and velocities reproduces exactly (:attr:`Trajectory.knots`), so the message is short
    (tens of points, where the samples at the period are thousands).  Accelerations are given only
    where the acceleration is continuous (:attr:`Trajectory.smooth`): a driver's quintic through a
    jump of acceleration overshoots the limit (:mod:`bb_robot.planning.timing`).
    """
    points = []
    k = trajectory.knots
    for t, p, v, a in zip(
        trajectory.times[k], trajectory.positions[k], trajectory.velocities[k], trajectory.accelerations[k], strict=True
    ):
        nanoseconds = round(float(t) * 1e9)
        points.append(
            {
                "positions": p.tolist(),
                "velocities": v.tolist(),
                "accelerations": a.tolist() if trajectory.smooth else [],
                "effort": [],
                "time_from_start": {"sec": nanoseconds // 1_000_000_000, "nanosec": nanoseconds % 1_000_000_000},
            }
        )
    return {
        "header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""},
        "joint_names": list(trajectory.names),
        "points": points,
    }


def write_trajectory(path: str, trajectory: Trajectory) -> None:
    """Write ``trajectory`` to ``path`` as a JointTrajectory YAML document (flow style: one JSON object)."""
    import json

    text = json.dumps(joint_trajectory_message(trajectory), allow_nan=False, separators=(", ", ": "))
    Path(path).write_text(text + "\n", encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    start_values = _values(args.start, "--from")
    goal_values = _values(args.to, "--to")
    if args.to is None and args.xyz is None:
        raise common.UsageError("give a goal: --to NAME=VALUE ... or --xyz X Y Z")
    if (args.rpy is not None or args.quat is not None) and args.xyz is None:
        raise common.UsageError("--rpy and --quat orient a pose goal: give --xyz with them")
    target = target_pose(args.xyz, args.rpy, args.quat) if args.xyz is not None else None
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise common.UsageError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    clearance = DRIVER_CLEARANCE if args.clearance is None else args.clearance
    if not (math.isfinite(clearance) and clearance >= 0):
        raise common.UsageError(f"--clearance must be a distance >= 0 m, got {clearance}")
    if args.seed < 0:
        raise common.UsageError(f"--seed must be a whole number >= 0, got {args.seed}")
    common.refuse_to_overwrite(args.output, args.file)
    loaded = common.load_from_args(args)
    for warning in loaded.warnings:
        common.warn(warning)
    robot = loaded.robot
    model, _ = checked_model(loaded, args.resource_path)
    world = load_world(args.world, robot) if args.world else None
    scene = Scene(model, world)
    for warning in scene.warnings:
        common.warn(warning)
    tip = args.tip or default_tip(robot)
    _, joints = planned_joints(robot, tip)
    overrides = read_overrides(args.config) if args.config else None
    limits = JointLimits.from_robot(robot, joints, overrides, source=args.config or "joint_limits")
    for note in limits.notes:
        common.warn(note)
    if limits.defaulted and not args.json:
        common.warn(
            "no acceleration limit in the model"
            + (f" or {args.config}" if args.config else " (give the driver's parameter file with --config)")
            + f" for {', '.join(limits.defaulted)}: timed with the conservative defaults (docs/planning.md)"
        )
    goal: JointGoal | PoseGoal
    if target is not None:
        position_only = args.rpy is None and args.quat is None
        goal = PoseGoal(tip, target, POSE_TOLERANCE[0], None if position_only else POSE_TOLERANCE[1])
    else:
        goal = JointGoal(goal_values)
    result = plan(
        scene,
        start_values,
        goal,
        seed=args.seed,
        timeout=args.timeout,
        clearance=clearance,
        joints=joints,
        limits=limits,
    )
    if result.success and result.trajectory is not None and args.output:
        write_trajectory(args.output, result.trajectory)
    if args.json:
        common.print_json(result_json(result, robot.name, tip, args, limits, tuple(scene.model.fk.joint_names)))
    else:
        print_result(result, robot.name, tip, args)
    return common.EXIT_OK if result.success else common.EXIT_INPUT


def result_json(
    result: PlanResult,
    robot: str,
    tip: str,
    args: argparse.Namespace,
    limits: JointLimits,
    coordinates: tuple[str, ...],
) -> dict[str, Any]:
    """The documented ``--json`` shape."""
    names = result.joints
    start = {name: float(v) for name, v in zip(coordinates, result.start, strict=True)}
    return {
        "success": result.success,
        "error": None if result.error is None else str(result.error),
        "cause": None if result.error is None else type(result.error).__name__,
        "robot": robot,
        "tip": tip,
        "joints": list(names),
        "start": start,
        "clearance": result.clearance,
        "seed": args.seed,
        "timings": {
            "planning": result.planning_seconds,
            "simplifying": result.simplifying_seconds,
            "timing": result.timing_seconds,
            "total": result.total_seconds,
        },
        "lengths": {"raw": result.raw_length, "simplified": result.simplified_length},
        "iterations": result.iterations,
        "waypoints": [row.tolist() for row in result.simplified_path],
        "trajectory": None if result.trajectory is None else trajectory_json(result.trajectory),
        "limits": {
            name: {
                "velocity": float(limits.velocity[i]),
                "acceleration": float(limits.acceleration[i]),
                "jerk": None if limits.jerk is None else common.finite_or_none(float(limits.jerk[i])),
                "defaulted": list(limits.defaulted.get(name, ())),
            }
            for i, name in enumerate(limits.names)
        },
        "output": args.output if result.success else None,
    }


def print_result(result: PlanResult, robot: str, tip: str, args: argparse.Namespace) -> None:
    """The human-readable report."""
    where = f"robot '{robot}' ({args.file}), chain to '{tip}' ({len(result.joints)} joints)"
    if not result.success:
        print(f"NOT planned: {where}: {result.error}")
        return
    trajectory = result.trajectory
    assert trajectory is not None
    print(f"planned: {where}, clearance {result.clearance * 1000:g} mm, seed {args.seed}")
    print(
        f"time: planning {result.planning_seconds * 1e3:.2f} ms, "
        f"simplifying {result.simplifying_seconds * 1e3:.2f} ms, "
        f"timing {result.timing_seconds * 1e3:.2f} ms ({result.iterations} iterations)"
    )
    print(
        f"path: {result.raw_path.shape[0]} → {result.simplified_path.shape[0]} waypoints, C-space length "
        f"{result.raw_length:.4g} → {result.simplified_length:.4g}"
    )
    jerk = "" if trajectory.peak_jerk_ratio is None else f", jerk {trajectory.peak_jerk_ratio:.3f}"
    print(
        f"trajectory: {trajectory.duration:.3f} s, {len(trajectory)} points every {trajectory.period * 1e3:g} ms; "
        f"peak of the limits: velocity {trajectory.peak_velocity_ratio:.3f}, acceleration "
        f"{trajectory.peak_acceleration_ratio:.3f}{jerk}"
    )
    print()
    rows = [
        [name, *(f"{float(v) + 0.0: .4f}" for v in result.simplified_path[:, i])]
        for i, name in enumerate(result.joints)
    ]
    headers = ["joint", *(f"wp {k}" for k in range(result.simplified_path.shape[0]))]
    print(common.table(headers, rows))
    if args.output:
        print(f"\nwrote {args.output} (trajectory_msgs/JointTrajectory)")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "plan",
        help="plan a collision-free, timed motion from a start to joint values or a tip pose",
        description="Plan a motion of the chain to --tip that keeps --clearance from itself and the world "
        "(--world), shorten it and time it within the joints' limits. Exit 0 when planned, 1 when not "
        "(the cause is printed).",
        epilog="Exit codes: 0 planned, 1 not planned (or bad input), 2 wrong usage.",
    )
    common.add_input_options(parser)
    parser.add_argument(
        "--from",
        dest="start",
        nargs="+",
        action="append",
        metavar="NAME=VALUE",
        help="start value of a joint (repeatable); the others at 0, or mid-range where 0 is outside the limits",
    )
    goal = parser.add_mutually_exclusive_group()
    goal.add_argument(
        "--to",
        nargs="+",
        action="append",
        metavar="NAME=VALUE",
        help="goal value of a joint (repeatable); joints not named keep their start values",
    )
    goal.add_argument("--xyz", nargs=3, type=float, metavar=("X", "Y", "Z"), help="goal position of the tip (m)")
    orientation = parser.add_mutually_exclusive_group()
    orientation.add_argument(
        "--rpy", nargs=3, type=float, metavar=("R", "P", "Y"), help="goal orientation of the tip: roll, pitch, yaw"
    )
    orientation.add_argument(
        "--quat", nargs=4, type=float, metavar=("X", "Y", "Z", "W"), help="goal orientation: a unit quaternion"
    )
    parser.add_argument("--tip", metavar="L", help="the chain's end link (default: bb-robot show's end effector)")
    parser.add_argument(
        "--world", metavar="W", help="obstacles: an SDF world, a YAML file, a MoveIt PlanningScene YAML or .scene"
    )
    parser.add_argument(
        "--config",
        metavar="YAML",
        help="the driver's parameter file (or MoveIt's joint_limits.yaml): its joint_limits narrow the model's",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="random seed (default 0): same seed, same path"
    )
    parser.add_argument(
        "--timeout", type=float, default=1.0, metavar="T", help="give up after T seconds (default 1; only a limit)"
    )
    parser.add_argument(
        "--clearance",
        type=float,
        default=None,
        metavar="M",
        help=f"the least distance kept (m; default {DRIVER_CLEARANCE:g}: the driver's collision.clearance + 1 mm)",
    )
    parser.add_argument(
        "-o", dest="output", metavar="FILE", help="write the trajectory as a trajectory_msgs/JointTrajectory YAML"
    )
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)

"""``bb-robot ik``: joint values that put a chain's tip at a pose (inverse kinematics).

The chain is ``bb-robot chain``'s (the same ``--tip``, ``--base``, ``--normalise`` / ``--strict``
and model options); the target is in the chain's base frame (for SDF, the world the model is
placed in, as ``bb-robot chain`` reports); the solver is
:meth:`SerialManipulator.inverse <bb_robot.model.serial.SerialManipulator.inverse>`
(``docs/ik.md``) with its defaults: 1e-5 m and 1e-5 rad, 5 ms (``--timeout``), seeded at the
middle of each joint's range unless ``--initial`` says otherwise.  Exit 0 when solved; 1 when not (the
residuals and the nearest pose reached are printed) or for a description that cannot be used;
2 for wrong usage.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from bb_robot.cli import chain, common
from bb_robot.model.errors import IkError, UnknownJoint
from bb_robot.model.ik import DEFAULT_TIMEOUT, IkSolution, default_seed
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix, matrix_to_rpy, quaternion_to_matrix, rpy_to_matrix

JSON_SHAPE = (
    '{"success", "base", "tip", "joints": {name: value}, "position_error" (m), "rotation_error" (rad), '
    '"iterations", "restarts", "elapsed" (s), "position_only", "target": {"xyz", "quat_xyzw"}, '
    '"reached": {"xyz", "quat_xyzw"}} (metres and unit quaternions in the base link\'s frame)'
)
#: A quaternion whose norm is further than this from 1 is refused (it is normalised otherwise).
QUATERNION_TOLERANCE = 1e-3


def target_pose(xyz: list[float], rpy: list[float] | None, quat: list[float] | None) -> Matrix:
    """The 4×4 target of ``--xyz`` and ``--rpy`` or ``--quat`` (x y z w); :class:`UsageError` for a bad one."""
    values = [*xyz, *(rpy or []), *(quat or [])]
    if not all(math.isfinite(v) for v in values):
        raise common.UsageError(f"the target must be finite numbers, got {values}")
    pose = np.eye(4)
    pose[:3, 3] = xyz
    if rpy is not None:
        pose[:3, :3] = rpy_to_matrix(rpy)
    elif quat is not None:
        norm = math.sqrt(sum(c * c for c in quat))
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise common.UsageError(f"--quat {' '.join(map(str, quat))} is not a unit quaternion (norm {norm:.6g})")
        pose[:3, :3] = quaternion_to_matrix(quat)
    return pose


def initial_seed(serial: SerialManipulator, values: dict[str, float]) -> Matrix | None:
    """The seed: the solver's default with the ``--initial`` values put in (``None`` when there are none)."""
    if not values:
        return None
    seed = default_seed(serial.lower_limits, serial.upper_limits)
    for name, value in values.items():
        if name not in serial.joint_names:
            raise UnknownJoint(serial.robot_name, name, serial.joint_names)
        seed[serial.joint_names.index(name)] = value
    return seed


def solution_json(
    serial: SerialManipulator, solution: IkSolution, target: Matrix, position_only: bool
) -> dict[str, Any]:
    """The documented ``--json`` shape."""
    return {
        "success": solution.success,
        "base": serial.base_link,
        "tip": serial.tip_link,
        "joints": {name: float(v) for name, v in zip(serial.joint_names, solution.q, strict=True)},
        "position_error": solution.position_error,
        "rotation_error": solution.rotation_error,
        "iterations": solution.iterations,
        "restarts": solution.restarts,
        "elapsed": solution.elapsed,
        "position_only": position_only,
        "target": common.pose_json(target),
        "reached": common.pose_json(serial.end_effector_pose(solution.q)),
    }


def _pose_text(pose: Matrix) -> str:
    xyz = " ".join(f"{float(c) + 0.0:.6f}" for c in pose[:3, 3])
    rpy = " ".join(f"{a + 0.0:.6f}" for a in matrix_to_rpy(pose[:3, :3]))
    return f"xyz {xyz}  rpy {rpy}"


def run(args: argparse.Namespace) -> int:
    initial = common.parse_joint_values(args.initial, "--initial")
    if args.random_seed is not None and args.random_seed < 0:
        raise common.UsageError(f"--random-seed must be a whole number >= 0, got {args.random_seed}")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise common.UsageError(f"--timeout must be a number of seconds > 0, got {args.timeout}")
    target = target_pose(args.xyz, args.rpy, args.quat)
    loaded = common.load_from_args(args)
    serial = chain.from_args(args, loaded)
    for warning in loaded.warnings:
        common.warn(warning)
    try:
        solution = serial.inverse(
            target,
            seed=initial_seed(serial, initial),
            rng=args.random_seed,
            timeout=args.timeout,
            rotation_tolerance=None if args.rpy is None and args.quat is None else 1e-5,
        )
    except IkError as error:
        raise common.InputError(str(error)) from None
    if args.json:
        common.print_json(solution_json(serial, solution, target, args.rpy is None and args.quat is None))
        return common.EXIT_OK if solution.success else common.EXIT_INPUT
    verdict = "solved" if solution.success else "NOT solved"
    print(
        f"{verdict}: robot '{serial.robot_name}' ({args.file}), '{serial.base_link}' → '{serial.tip_link}', "
        f"{solution.iterations} iterations, {solution.restarts} restarts, {solution.elapsed * 1e3:.2f} ms"
    )
    print()
    rows = [[name, f"{float(v) + 0.0: .6f}"] for name, v in zip(serial.joint_names, solution.q, strict=True)]
    print(common.table(["joint", "value (rad or m)"], rows))
    print()
    position_only = args.rpy is None and args.quat is None
    note = " (position only: no --rpy or --quat)" if position_only else ""
    print(f"position error: {solution.position_error:.3g} m   rotation error: {solution.rotation_error:.3g} rad{note}")
    print(f"target:  {_pose_text(target)}")
    print(f"reached: {_pose_text(serial.end_effector_pose(solution.q))}")
    if not solution.success:
        print("the residuals exceed the tolerances (1e-5 m, 1e-5 rad): the values above reach the nearest pose found")
    return common.EXIT_OK if solution.success else common.EXIT_INPUT


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "ik",
        help="solve the joint values that put the tip of a chain at a pose",
        description="Inverse kinematics of the serial chain that `bb-robot chain` shows: joint values, within "
        "the limits, whose tip pose is the target (in the chain's base frame) within 1e-5 m and 1e-5 rad "
        "(without --rpy or --quat: the position only). "
        "Exit 0 when solved, 1 when not (the residuals and the nearest pose reached are printed).",
        epilog="Exit codes: 0 solved, 1 not solved or bad input, 2 wrong usage.",
    )
    common.add_input_options(parser)
    chain.add_chain_options(parser)
    parser.add_argument(
        "--xyz", nargs=3, type=float, required=True, metavar=("X", "Y", "Z"), help="target position (m)"
    )
    orientation = parser.add_mutually_exclusive_group()
    orientation.add_argument(
        "--rpy", nargs=3, type=float, metavar=("R", "P", "Y"), help="target orientation: roll, pitch, yaw (rad)"
    )
    orientation.add_argument(
        "--quat", nargs=4, type=float, metavar=("X", "Y", "Z", "W"), help="target orientation: unit quaternion"
    )
    parser.add_argument(
        "--initial",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="start value of a joint (repeatable); others start at the middle of their range (0 when unbounded)",
    )
    parser.add_argument(
        "--random-seed", type=int, default=None, metavar="N", help="seed of the random restarts (reproducible runs)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"the search's time budget (default {DEFAULT_TIMEOUT:g}, the solver's; a slow host may need more)",
    )
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)

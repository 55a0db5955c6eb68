"""Cartesian paths: the tool along straight lines through poses, as MoveIt's ``computeCartesianPath``.

:func:`cartesian_path` moves a chain's tip from where the start configuration puts it through each
pose in turn, along the straight line between two poses (the position linearly, the orientation by
slerp), in steps of at most ``max_step`` metres (and ``max_rotation_step`` radians).  Each step's
configuration is the inverse kinematics of that pose started from the previous step's
configuration, with no random restart: the nearest solution, as the arm would move.  The path
stops short, and says why, at the first of:

- a step the inverse kinematics cannot reach (within 1e-5 m and 1e-5 rad, and the joint limits);
- a jump in joint space (MoveIt's relative test, ``jump_threshold``): a step whose joint-space
  distance (the sum of the joints' absolute changes) is more than ``jump_threshold`` times the mean
  step of the path computed; the path is cut before it.  As in MoveIt, paths of fewer than
  :data:`MIN_STEPS_FOR_JUMP_TEST` steps are not tested, and a threshold of 0 disables the test;
- with ``avoid_collisions``, the first place where the exact check
  (:func:`bb_robot.collision.path.check_path`, the scene's model at ``clearance``) finds the arm
  too near: the path ends at the last configuration from which the whole path so far is clear.

``fraction`` is the share of the steps achieved (1.0: every pose reached), as MoveIt reports it.
The joint path is then timed by :func:`bb_robot.planning.timing.time_path` (at rest at each step's
configuration, so the motion stays exactly on the checked polyline between the steps).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.collision.matrix import default_configuration
from bb_robot.collision.path import check_path
from bb_robot.collision.scene import Scene
from bb_robot.errors import BbRobotError
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import matrix_to_quaternion, quaternion_to_matrix
from bb_robot.planning.errors import InvalidRequest, StartInCollision
from bb_robot.planning.limits import JointLimits
from bb_robot.planning.timing import Trajectory, time_path
from bb_robot.planning.validity import DRIVER_CLEARANCE

FloatArray = npt.NDArray[np.float64]

#: Paths with fewer steps than this are not tested for jumps (MoveIt's ``MIN_STEPS_FOR_JUMP_THRESH``).
MIN_STEPS_FOR_JUMP_TEST = 10
#: The clearance of the exact check when none is given (m).
DEFAULT_CLEARANCE = DRIVER_CLEARANCE
#: The largest orientation change of one step when none is given (rad).
DEFAULT_ROTATION_STEP = 0.05


@dataclass(frozen=True, eq=False)
class CartesianResult:
    """What :func:`cartesian_path` achieved.

    Attributes:
        names: every joint coordinate of the scene's model, the columns of ``path``.
        joints: the joints that move (the chain's, or those asked), the columns of ``trajectory``.
        path: ``(K, len(names))`` configurations, the first the start; one per step achieved.
        poses: ``(K, 4, 4)`` the tip's pose at each configuration.
        fraction: the share of the steps achieved, in [0, 1].
        stop: why the path stops short (``None`` when ``fraction`` is 1): names the step and the cause.
        trajectory: ``path`` timed (the moving joints' columns), at rest at each step.
        tip: the tip link.
    """

    names: tuple[str, ...]
    joints: tuple[str, ...]
    path: FloatArray
    poses: FloatArray
    fraction: float
    stop: str | None
    trajectory: Trajectory
    tip: str


def start_configuration(scene: Scene, start: Mapping[str, float] | npt.ArrayLike | None) -> FloatArray:
    """The start as every coordinate of the scene's model: a full array, or values by name over the default.

    Args:
        scene: the scene.
        start: ``None`` (the default configuration: each joint at 0, or mid-range where 0 is outside
            its limits), a mapping joint → value (the others at the default), or an array in
            ``scene.model.fk.joint_names`` order.

    Returns:
        The configuration.

    Raises:
        InvalidRequest: an unknown joint, a value that is not finite, an array of the wrong length.
    """
    names = tuple(scene.model.fk.joint_names)
    robot = scene.robot_model.robot
    if start is None or isinstance(start, Mapping):
        q = np.array(default_configuration(robot, names), dtype=float)
        for name, value in (start or {}).items():
            if name not in names:
                raise InvalidRequest(
                    f"start: robot '{robot.name}' has no joint '{name}'; its joints: {', '.join(names)}"
                )
            q[names.index(name)] = float(value)
    else:
        q = np.array(start, dtype=float)
        if q.shape != (len(names),):
            raise InvalidRequest(f"start has shape {q.shape}, expected ({len(names)},) for the joints {names}")
    bad = [name for name, value in zip(names, q, strict=True) if not math.isfinite(value)]
    if bad:
        raise InvalidRequest(f"start: joint '{bad[0]}' is {q[names.index(bad[0])]}; give a finite value")
    return q


def _slerp(q0: FloatArray, q1: FloatArray, s: float) -> FloatArray:
    """Spherical interpolation of unit quaternions (x y z w), the shorter way round."""
    dot = float(q0 @ q1)
    if dot < 0.0:
        q1, dot = -q1, -dot
    if dot > 0.9999995:
        out = q0 + s * (q1 - q0)
        return np.asarray(out / np.linalg.norm(out))
    angle = math.acos(min(dot, 1.0))
    return np.asarray((math.sin((1 - s) * angle) * q0 + math.sin(s * angle) * q1) / math.sin(angle))


def interpolate_poses(
    start: FloatArray, poses: Sequence[FloatArray], max_step: float, max_rotation_step: float
) -> tuple[FloatArray, int]:
    """The poses of every step from ``start`` through ``poses``: ``(S, 4, 4)`` (``start`` excluded), and S.

    Args:
        start: the 4×4 pose the path starts at.
        poses: the 4×4 poses to pass through, in turn.
        max_step: the longest translation of one step (m).
        max_rotation_step: the largest rotation of one step (rad).

    Returns:
        The steps' poses and their number; each segment has ``ceil(max(translation / max_step,
        rotation / max_rotation_step))`` steps, at least one.
    """
    out: list[FloatArray] = []
    previous = start
    for target in poses:
        q0 = np.array(matrix_to_quaternion(previous[:3, :3]))
        q1 = np.array(matrix_to_quaternion(target[:3, :3]))
        angle = 2.0 * math.acos(min(abs(float(q0 @ q1)), 1.0))
        distance = float(np.linalg.norm(target[:3, 3] - previous[:3, 3]))
        steps = max(1, math.ceil(max(distance / max_step, angle / max_rotation_step) - 1e-9))
        for k in range(1, steps + 1):
            s = k / steps
            pose = np.eye(4)
            pose[:3, 3] = previous[:3, 3] + s * (target[:3, 3] - previous[:3, 3])
            pose[:3, :3] = quaternion_to_matrix(tuple(_slerp(q0, q1, s))) if k < steps else target[:3, :3]
            out.append(pose)
        previous = target
    return np.asarray(out).reshape(-1, 4, 4), len(out)


def jump_index(path: FloatArray, threshold: float) -> int:
    """MoveIt's relative jump test: the first step longer than ``threshold`` times the mean step, or -1.

    Args:
        path: ``(K, n)`` configurations (the start first).
        threshold: the factor; 0 disables the test.

    Returns:
        The index of the first configuration reached by a jump (the path is cut before it), or -1.
    """
    steps = path.shape[0] - 1
    if threshold <= 0.0 or steps < MIN_STEPS_FOR_JUMP_TEST:
        return -1
    distances = np.abs(np.diff(path, axis=0)).sum(axis=1)
    over = np.flatnonzero(distances > threshold * distances.mean())
    return int(over[0]) + 1 if over.size else -1


def _checked_poses(poses: Sequence[npt.ArrayLike] | npt.ArrayLike) -> list[FloatArray]:
    array = np.asarray(poses, dtype=float)
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[1:] != (4, 4) or array.shape[0] == 0:
        raise InvalidRequest(f"poses: expected one or more 4×4 poses, got an array of shape {array.shape}")
    for i, pose in enumerate(array):
        rotation = pose[:3, :3]
        if not np.isfinite(pose).all():
            raise InvalidRequest(f"poses[{i}] is not finite: {pose.tolist()}")
        if not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-6) or not np.allclose(pose[3], [0, 0, 0, 1]):
            raise InvalidRequest(f"poses[{i}] is not a rigid transform (its rotation is not orthonormal)")
    return list(array)


def chain_for(scene: Scene, tip: str | None) -> SerialManipulator:
    """The serial chain of the scene's robot to ``tip`` (default: the unambiguous chain).

    Raises:
        InvalidRequest: an unknown tip, or a robot whose chain branches without one (the message
            lists the tips).
    """
    robot = scene.robot_model.robot
    if tip is not None and tip not in robot.links:
        raise InvalidRequest(f"robot '{robot.name}' has no link '{tip}'; its links: {', '.join(robot.links)}")
    try:
        return SerialManipulator.from_robot(robot, tip, strict=False)
    except BbRobotError as error:
        raise InvalidRequest(str(error)) from None


def cartesian_path(
    scene: Scene,
    start: Mapping[str, float] | npt.ArrayLike | None,
    poses: Sequence[npt.ArrayLike] | npt.ArrayLike,
    *,
    max_step: float,
    jump_threshold: float,
    avoid_collisions: bool = True,
    tip: str | None = None,
    joints: Sequence[str] | None = None,
    clearance: float = DEFAULT_CLEARANCE,
    max_rotation_step: float = DEFAULT_ROTATION_STEP,
    limits: JointLimits | None = None,
    velocity_scale: float = 1.0,
    acceleration_scale: float = 1.0,
) -> CartesianResult:
    """Move the tip along straight lines through ``poses`` (see the module docstring).

    Args:
        scene: the robot and its world.
        start: the start configuration (:func:`start_configuration`'s forms).
        poses: 4×4 poses of the tip in the robot's root frame, passed in turn.
        max_step: the longest translation of one step (m, > 0).
        jump_threshold: MoveIt's relative jump threshold (≥ 0; 0: no test).
        avoid_collisions: stop where the exact check finds the arm nearer than ``clearance``.
        tip: the chain's tip link (default: the unambiguous chain, :func:`chain_for`).
        joints: the chain's joints that may move (default: all of them); the others keep their start values.
        clearance: the exact check's clearance (m, > 0).
        max_rotation_step: the largest rotation of one step (rad, > 0).
        limits: the moving joints' limits, to time the path (default: the model's,
            :meth:`JointLimits.from_robot`).
        velocity_scale: :func:`time_path`'s factor in [0, 1] (0 means 1).
        acceleration_scale: :func:`time_path`'s factor in [0, 1] (0 means 1).

    Returns:
        The :class:`CartesianResult`.

    Raises:
        InvalidRequest: a malformed start, pose or option, an unknown tip or joint.
        StartInCollision: the start in collision (or nearer than ``clearance``) when
            ``avoid_collisions``, naming the pair; as :func:`~bb_robot.planning.plan.plan` reports it.
    """
    for label, value in (("max_step", max_step), ("max_rotation_step", max_rotation_step), ("clearance", clearance)):
        if not (math.isfinite(value) and value > 0):
            raise InvalidRequest(f"{label} must be a positive number, got {value}")
    if not (math.isfinite(jump_threshold) and jump_threshold >= 0):
        raise InvalidRequest(f"jump_threshold must be a number >= 0 (0: no jump test), got {jump_threshold}")
    targets = _checked_poses(poses)
    q_start = start_configuration(scene, start)
    chain = chain_for(scene, tip)
    names = tuple(scene.model.fk.joint_names)
    moving = tuple(chain.joint_names) if joints is None else tuple(joints)
    for name in moving:
        if name not in chain.joint_names:
            raise InvalidRequest(
                f"joint '{name}' is not in the chain to '{chain.tip_link}' ({', '.join(chain.joint_names)})"
            )
    if not moving:
        raise InvalidRequest("joints: no joint to move; name joints of the chain, or none for all of them")
    columns = [names.index(name) for name in chain.joint_names]
    seed = q_start[columns]
    lower, upper = np.array(chain.lower_limits, dtype=float), np.array(chain.upper_limits, dtype=float)
    for i, name in enumerate(chain.joint_names):
        if name not in moving:
            lower[i] = upper[i] = seed[i]
    if avoid_collisions:
        verdict = check_path(scene.model, q_start[None], clearance)
        if not verdict.ok and verdict.contact is not None:
            raise StartInCollision(verdict.contact.links, verdict.contact.distance, clearance)
    steps, total = interpolate_poses(chain.end_effector_pose(seed), targets, max_step, max_rotation_step)
    path = [q_start]
    stop: str | None = None
    current = seed
    for k, target in enumerate(steps):
        solution = chain.inverse(target, seed=current, timeout=None, max_restarts=0, rng=0, lower=lower, upper=upper)
        if not solution.success:
            stop = (
                f"step {k + 1} of {total}: no inverse kinematics solution near the previous configuration "
                f"(position error {solution.position_error:.2g} m, rotation error {solution.rotation_error:.2g} rad)"
            )
            break
        current = np.asarray(solution.q, dtype=float)
        q = path[-1].copy()
        q[columns] = current
        path.append(q)
    configurations = np.asarray(path)
    cut = jump_index(configurations, jump_threshold)
    if cut > 0:
        stop = f"step {cut} of {total}: a jump in joint space (more than {jump_threshold:g} times the mean step)"
        configurations = configurations[:cut]
    if avoid_collisions and configurations.shape[0] > 1:
        configurations, reason = _clear_prefix(scene, configurations, clearance)
        if reason is not None:
            stop = f"step {configurations.shape[0]} of {total}: {reason}"
    achieved = configurations.shape[0] - 1
    move = [names.index(name) for name in moving]
    timing_limits = limits or JointLimits.from_robot(scene.robot_model.robot, moving)
    trajectory = time_path(
        configurations[:, move],
        timing_limits,
        velocity_scale=velocity_scale,
        acceleration_scale=acceleration_scale,
    )
    return CartesianResult(
        names=names,
        joints=moving,
        path=configurations,
        poses=np.asarray(chain.end_effector_pose(configurations[:, columns])).reshape(-1, 4, 4),
        fraction=achieved / total if total else 1.0,
        stop=stop if achieved < total else None,
        trajectory=trajectory,
        tip=chain.tip_link,
    )


def _clear_prefix(scene: Scene, path: FloatArray, clearance: float) -> tuple[FloatArray, str | None]:
    """The longest start of ``path`` (whole rows) that the exact check passes, and why it stops (``None``: all)."""
    verdict = check_path(scene.model, path, clearance)
    if verdict.ok:
        return path, None
    contact = verdict.contact
    reason = "collision"
    if contact is not None:
        reason = (
            f"'{contact.links[0]}' and '{contact.links[1]}' would come {max(contact.distance, 0.0) * 1000:.1f} mm "
            f"apart (clearance {clearance * 1000:g} mm)"
        )
    end = verdict.index + 1  # the rows before the row, or the segment after it, found too near
    while end > 1:
        kept = path[:end]
        if check_path(scene.model, kept, clearance).ok:
            return kept, reason
        end -= 1
    return path[:1], reason

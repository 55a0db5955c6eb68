"""Extracting a serial chain from a robot, and the small checks of :mod:`bb_robot.model.serial`.

:func:`walk` finds the chain below a base link when no tip is given; :func:`check_joints`
refuses joints the serial model cannot actuate; :func:`rotation_onto` turns a joint frame so
that its axis is +z; :func:`checked_pose` and :func:`offset_matrix` check the 4×4 arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from bb_robot.model.errors import InvalidTransform, NotSerialError, UnsupportedJointError
from bb_robot.model.robot import Joint, Robot
from bb_robot.model.transforms import Matrix

#: Robot joint types the serial model actuates.
ACTUATED_TYPES: Final = ("revolute", "continuous", "prismatic")

EZ = np.array([0.0, 0.0, 1.0])
_HALF_TURN_X = np.diag([1.0, -1.0, -1.0])


def default_tip(robot: Robot) -> str:
    """The end-effector link assumed when none is named (``bb-robot show``/``ik``/``plan``, the planner,
    the move_group node's default group).

    The deepest leaf hung on a fixed joint (a tool or TCP frame) wins; a robot without one gives its
    deepest leaf; ties go to the first in tree order.  A gripper's fingers (leaves on moving joints)
    are so not chosen where a tool frame exists.

    Args:
        robot: the model.

    Returns:
        The link's name.
    """
    leaves = robot.leaf_links()
    tools = [
        link
        for link in leaves
        if (joint := robot.links[link].parent_joint) is not None and robot.joints[joint].type == "fixed"
    ]
    return max(tools or leaves, key=lambda link: robot.topology.depth[link])


def walk(robot: Robot, base: str) -> tuple[list[Joint], str]:
    """Return the joints of the chain from ``base`` (movable and merged fixed ones) and the tip link."""
    path: list[Joint] = []
    link = base
    while True:
        reached = movable_below(robot, link)
        if not reached:
            break
        if len(reached) > 1:
            names = [joint.name for joint, _ in reached]
            raise NotSerialError(robot.name, link, names, tip_suggestions(robot, link, names))
        joint, fixed = reached[0]
        path.extend(fixed)
        path.append(joint)
        link = joint.child_link
    # Only fixed joints remain below: follow them while they do not branch.
    while len(children := robot.child_joints(link)) == 1:
        path.append(children[0])
        link = children[0].child_link
    return path, link


def movable_below(robot: Robot, link: str) -> list[tuple[Joint, list[Joint]]]:
    """Return each movable joint reached from ``link`` through fixed joints only, with those fixed joints."""
    found: list[tuple[Joint, list[Joint]]] = []
    stack: list[tuple[str, list[Joint]]] = [(link, [])]
    while stack:
        current, fixed = stack.pop()
        for joint in reversed(robot.child_joints(current)):
            if joint.type == "fixed":
                stack.append((joint.child_link, [*fixed, joint]))
            else:
                found.append((joint, fixed))
    order = {name: i for i, name in enumerate(robot.topology.joint_order)}
    return sorted(found, key=lambda item: order[item[0].name])


def tip_suggestions(robot: Robot, link: str, competing: Sequence[str]) -> list[str]:
    """Links to pass as tip: the ends of the fixed paths below ``link``, then the competing joints' child links."""
    ends: list[str] = []
    stack = [link]
    while stack:
        current = stack.pop()
        fixed = [j for j in robot.child_joints(current) if j.type == "fixed"]
        if not fixed and current != link:
            ends.append(current)
        stack.extend(j.child_link for j in reversed(fixed))
    return ends + [robot.joints[name].child_link for name in competing]


def check_joints(robot: str, path: Sequence[Joint]) -> None:
    reasons: dict[str, str] = {}
    for joint in path:
        if joint.type == "fixed":
            continue
        if joint.type not in ACTUATED_TYPES:
            reasons[joint.name] = (
                f"is a {joint.type} joint; only revolute, continuous (RZ) and prismatic (TZ) joints are actuated"
            )
        elif joint.mimic is not None:
            reasons[joint.name] = (
                f"mimics joint '{joint.mimic.joint}' "
                f"(value = {joint.mimic.multiplier:g}·{joint.mimic.joint} + {joint.mimic.offset:g})"
            )
    if reasons:
        raise UnsupportedJointError(robot, reasons)


# ------------------------------------------------------------------------ small math
def unit_axis(robot: str, joint: Joint) -> Matrix:
    axis = np.asarray(joint.axis, dtype=float)
    norm = float(np.linalg.norm(axis))
    if not norm > 0.0 or not math.isfinite(norm):
        raise UnsupportedJointError(robot, {joint.name: f"has an invalid axis {joint.axis}"})
    result: Matrix = axis / norm
    return result


#: Below this, an axis's z component is rounding noise (axes are unit vectors).
_AXIS_Z_TOLERANCE = 1e-12


def rotation_onto(axis: Matrix) -> Matrix:
    """Return the rotation ``R`` with ``R · e_z = axis`` used to re-express a joint frame.

    The identity for +z; for an axis with ``z >= 0`` the least rotation (about
    ``e_z × axis``); for ``z < 0`` a half turn about x (y and z flipped) then
    the least rotation onto the axis mirrored into ``z > 0``; so -z gives
    ``diag(1, -1, -1)`` exactly.  An axis whose z is within ``_AXIS_Z_TOLERANCE`` of zero
    counts as ``z >= 0``: the same axis computed along two paths (rounding differing in the
    last bit) must give the same frame, not frames half a turn apart.
    """
    if np.array_equal(axis, EZ):
        return np.eye(3)
    if axis[2] < -_AXIS_Z_TOLERANCE:
        return _HALF_TURN_X @ rotation_onto(_HALF_TURN_X @ axis)
    x, y, z = (float(c) for c in axis)
    # Rodrigues with v = e_z × axis = (-y, x, 0), cos = z: R = I + [v]× + [v]×² / (1 + cos).
    v = np.array([[0.0, 0.0, x], [0.0, 0.0, y], [-x, -y, 0.0]])
    rotation: Matrix = np.eye(3) + v + (v @ v) / (1.0 + z)
    return rotation


def limits_of(joint: Joint) -> dict[str, float]:
    limits = joint.limits
    lower = limits.lower if limits is not None and limits.lower is not None else None
    upper = limits.upper if limits is not None and limits.upper is not None else None
    if joint.type == "continuous":
        lower = upper = None
    return {
        "lower": -math.inf if lower is None else float(lower),
        "upper": math.inf if upper is None else float(upper),
        "velocity": math.inf if limits is None or limits.velocity is None else float(limits.velocity),
        "effort": math.inf if limits is None or limits.effort is None else float(limits.effort),
    }


def checked_pose(robot: str, argument: str, pose: npt.ArrayLike | None) -> Matrix:
    if pose is None:
        return np.eye(4)
    try:
        matrix = np.array(pose, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidTransform(robot, argument, f"is not an array of numbers ({error})") from None
    if matrix.shape != (4, 4):
        raise InvalidTransform(robot, argument, f"has shape {matrix.shape}, not (4, 4)")
    if not np.isfinite(matrix).all():
        raise InvalidTransform(robot, argument, "has non-finite entries")
    rotation = matrix[:3, :3]
    if (
        not np.allclose(matrix[3], (0.0, 0.0, 0.0, 1.0), atol=1e-9)
        or not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-6)
        or np.linalg.det(rotation) < 0.0
    ):
        raise InvalidTransform(robot, argument, "is not a rigid transform")
    return matrix


def offset_matrix(robot: str, offset: npt.ArrayLike) -> Matrix:
    try:
        array = np.array(offset, dtype=float)
    except (TypeError, ValueError) as error:
        raise InvalidTransform(robot, "offset", f"is not an array of numbers ({error})") from None
    if array.shape == (3,):
        matrix = np.eye(4)
        matrix[:3, 3] = array
        return matrix
    if array.shape != (4, 4):
        raise InvalidTransform(robot, "offset", f"has shape {array.shape}, not (4, 4) nor a point (3,)")
    if not np.isfinite(array).all():
        raise InvalidTransform(robot, "offset", "has non-finite entries")
    return array

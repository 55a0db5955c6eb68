"""Typed errors of the robot model: failed lookups and invalid robot structures.

Every error carries the robot's name and the offending names as attributes,
and its message says what to pass or change instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bb_robot.errors import BbRobotError

NodeKind = Literal["link", "joint"]


def _listing(names: Iterable[str], limit: int = 12) -> str:
    """Return ``names`` quoted and comma-separated, shortened after ``limit`` entries."""
    items = [f"'{n}'" for n in names]
    if len(items) > limit:
        return ", ".join(items[:limit]) + f", … ({len(items) - limit} more)"
    return ", ".join(items) if items else "(none)"


class KinematicsError(BbRobotError):
    """A lookup on a valid robot failed.

    ``source`` is the description file the robot came from, once
    :meth:`in_file` has named it (``None`` for robots built in code).
    """

    def __init__(self, robot: str, message: str) -> None:
        super().__init__(message)
        self.robot = robot
        self.source: str | None = None

    def in_file(self, source: str | None) -> KinematicsError:
        """Name ``source`` at the start of the message (once); returns this error, to re-raise."""
        if source and self.source is None:
            self.source = source
            self.args = (f"{source}: {self.args[0]}", *self.args[1:])
        return self


class UnknownLink(KinematicsError):
    """A link name that the robot does not have.

    ``role`` says which argument named it: ``"source"`` or ``"target"`` for
    path queries, ``None`` for single-link lookups.
    """

    def __init__(
        self,
        robot: str,
        link: str,
        known: Sequence[str],
        role: Literal["source", "target"] | None = None,
    ) -> None:
        what = f"{role} link" if role else "link"
        super().__init__(
            robot,
            f"robot '{robot}' has no {what} '{link}'; pass one of its links: {_listing(known)}",
        )
        self.link = link
        self.role = role


class UnknownJoint(KinematicsError):
    """A joint name that the robot does not have."""

    def __init__(self, robot: str, joint: str, known: Sequence[str]) -> None:
        super().__init__(
            robot,
            f"robot '{robot}' has no joint '{joint}'; pass one of its joints: {_listing(known)}",
        )
        self.joint = joint


class UnknownActuator(KinematicsError):
    """An actuator name that the robot does not have."""

    def __init__(self, robot: str, actuator: str, known: Sequence[str]) -> None:
        hint = (
            f"pass one of its actuators: {_listing(known)}"
            if known
            else "it declares no actuators (add a <transmission> to the description)"
        )
        super().__init__(robot, f"robot '{robot}' has no actuator '{actuator}'; {hint}")
        self.actuator = actuator


class UnknownParameter(KinematicsError):
    """A runtime parameter name that is bound to nothing in the robot."""

    def __init__(self, robot: str, parameter: str, known: Sequence[str]) -> None:
        super().__init__(
            robot,
            f"robot '{robot}' has no parameter '{parameter}'; pass one of: {_listing(known)}",
        )
        self.parameter = parameter


class InvalidParameterValue(KinematicsError):
    """A runtime parameter given a value that is not a finite number."""

    def __init__(self, robot: str, parameter: str, value: object) -> None:
        super().__init__(
            robot,
            f"robot '{robot}': parameter '{parameter}' needs a finite number, got {value!r}",
        )
        self.parameter = parameter
        self.value = value


class NoParentJoint(KinematicsError):
    """The root link was asked for its parent joint: a signal to stop walking up."""

    def __init__(self, robot: str, link: str) -> None:
        super().__init__(
            robot,
            f"link '{link}' is the root of robot '{robot}' and has no parent joint; "
            "stop walking up here, or pass a link below it",
        )
        self.link = link


class NotAnAncestor(KinematicsError):
    """A path was asked from a node that is not above its target.

    ``common_ancestor`` is the nearest link above both: the source to pass instead.
    """

    def __init__(self, robot: str, source: str, target: str, common_ancestor: str) -> None:
        super().__init__(
            robot,
            f"in robot '{robot}', '{source}' is not an ancestor of '{target}'; "
            f"their nearest common ancestor is link '{common_ancestor}': "
            f"pass it (or another link above '{target}') as the source",
        )
        self.source = source
        self.target = target
        self.common_ancestor = common_ancestor


ProblemKind = Literal[
    "no_root",
    "multiple_roots",
    "cycle",
    "multiple_parents",
    "undefined_link",
    "duplicate_link",
    "duplicate_joint",
    "unknown_mimic_source",
    "mimic_cycle",
    "invalid_mimic",
    "unknown_actuator_joint",
    "duplicate_actuator",
    "duplicate_sensor",
    "unknown_sensor_target",
]


@dataclass(frozen=True)
class TreeProblem:
    """One offence against the single-tree rule: its kind, the names involved, and a sentence."""

    kind: ProblemKind
    names: tuple[str, ...]
    message: str


class InvalidRobot(BbRobotError):
    """A robot description that cannot form a single kinematic tree.

    ``problems`` lists every offence found (not only the first), each naming
    the links or joints involved; ``source`` is the file, when there is one.
    """

    def __init__(self, robot: str, problems: Sequence[TreeProblem], source: str | None = None) -> None:
        where = f" ({source})" if source else ""
        lines = "\n".join(f"  - {p.message}" for p in problems)
        super().__init__(f"robot '{robot}'{where} is not a valid kinematic tree:\n{lines}")
        self.robot = robot
        self.problems = tuple(problems)
        self.source = source

    @property
    def kinds(self) -> frozenset[ProblemKind]:
        """The kinds of problem found, for callers that branch on them."""
        return frozenset(p.kind for p in self.problems)


class InvalidJointValue(BbRobotError):
    """A joint configuration that forward kinematics cannot use (wrong name, shape or value)."""

    def __init__(self, robot: str, message: str) -> None:
        super().__init__(f"robot '{robot}': {message}")
        self.robot = robot


# ------------------------------------------------------------------ serial manipulators
def _axis_text(axis: Sequence[float]) -> str:
    return "(" + ", ".join(f"{float(c):.6g}" for c in axis) + ")"


class SerialChainError(KinematicsError):
    """A robot (or its part between base and tip) that cannot be a serial-manipulator model."""


class NotSerialError(SerialChainError):
    """Two or more movable joints branch below a link of the chain and no tip link chose between them.

    ``link`` is the chain link below which they branch (through fixed joints,
    which never count as branches); ``joints`` are the competing movable joints;
    ``tips`` are links to pass as ``tip`` instead.
    """

    def __init__(self, robot: str, link: str, joints: Sequence[str], tips: Sequence[str]) -> None:
        super().__init__(
            robot,
            f"robot '{robot}' is not a serial chain: below link '{link}' the movable joints "
            f"{_listing(joints)} branch (fixed joints are merged and never count); "
            f"pass tip=<link> to choose the chain, e.g. {_listing(tips)}",
        )
        self.link = link
        self.joints = tuple(joints)
        self.tips = tuple(tips)


class UnsupportedJointError(SerialChainError):
    """Joints in the chain that a serial manipulator cannot have (floating, planar, mimic…).

    ``reasons`` maps every such joint, in chain order, to why; ``joint`` is the first.
    """

    def __init__(self, robot: str, reasons: Mapping[str, str]) -> None:
        lines = "; ".join(f"joint '{name}' {why}" for name, why in reasons.items())
        super().__init__(
            robot,
            f"robot '{robot}' cannot be a serial manipulator: {lines}; "
            "its joints must be revolute, continuous, prismatic (or fixed, merged into offsets) "
            "and independent: pass another tip (or base) to leave them out of the chain",
        )
        self.reasons = dict(reasons)
        self.joints = tuple(reasons)
        self.joint = self.joints[0]


class OffAxisJointError(SerialChainError):
    """Strict mode found joints that do not act about +z of their joint frame.

    ``axes`` maps every such joint, in chain order, to its unit axis; ``joint``
    and ``axis`` are the first of them.
    """

    def __init__(self, robot: str, axes: Mapping[str, Sequence[float]], tolerance: float) -> None:
        listed = "; ".join(f"joint '{name}' acts about {_axis_text(axis)}" for name, axis in axes.items())
        super().__init__(
            robot,
            f"robot '{robot}': {listed} in its joint frame, not about +z (0, 0, 1) (tolerance {tolerance:g}); "
            "a strict serial model needs every actuation about +z: "
            "pass strict=False to re-express each axis as +z by a change of the joint frame",
        )
        self.axes = {name: tuple(float(c) for c in axis) for name, axis in axes.items()}
        self.joint = next(iter(axes))
        self.axis = self.axes[self.joint]
        self.tolerance = tolerance


class InvalidTransform(SerialChainError):
    """A transform argument (``base_pose``, an end-effector ``offset``) that is not a finite rigid 4×4.

    ``argument`` names it.
    """

    def __init__(self, robot: str, argument: str, reason: str) -> None:
        super().__init__(
            robot,
            f"robot '{robot}': {argument} {reason}; pass a 4×4 rigid transform "
            "(orthonormal rotation with determinant +1, last row 0 0 0 1)"
            + (", or a point (x, y, z)" if argument == "offset" else ", or None for the identity"),
        )
        self.argument = argument


class IkError(KinematicsError):
    """An inverse-kinematics request (:mod:`bb_robot.model.ik`) that cannot be solved as asked."""


class InvalidIkTarget(IkError):
    """The target pose is not a finite rigid transform (shape, non-finite entries, rotation not orthonormal)."""

    def __init__(self, robot: str, reason: str) -> None:
        super().__init__(robot, f"robot '{robot}': inverse kinematics target {reason}")
        self.reason = reason


class InvalidIkSeed(IkError):
    """The seed has the wrong length, a non-finite value, or a value outside the joint's limits."""

    def __init__(self, robot: str, reason: str) -> None:
        super().__init__(robot, f"robot '{robot}': inverse kinematics seed {reason}")
        self.reason = reason


class InvalidIkArgument(IkError):
    """Limits, tolerances, timeout, restarts or random generator that cannot be used."""

    def __init__(self, robot: str, argument: str, reason: str) -> None:
        super().__init__(robot, f"robot '{robot}': inverse kinematics argument '{argument}' {reason}")
        self.argument = argument
        self.reason = reason


class InvalidOutputArray(KinematicsError):
    """An ``out`` array a result cannot be written into: wrong shape, dtype, layout, or read-only."""

    def __init__(self, robot: str, reason: str) -> None:
        super().__init__(robot, f"robot '{robot}': out {reason}")
        self.reason = reason

"""Typed errors of the robot model: failed lookups and invalid robot structures.

Every error carries the robot's name and the offending names as attributes,
and its message says what to pass or change instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
    """A lookup on a valid robot failed."""

    def __init__(self, robot: str, message: str) -> None:
        super().__init__(message)
        self.robot = robot


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

"""The driver's errors: each one's message says what was wrong and, where it helps, what to do."""

from __future__ import annotations

from bb_robot.errors import BbRobotError


class DriverError(BbRobotError):
    """Base class of the driver's errors."""


class CommandRejected(DriverError):
    """A command that is not executed; nothing of it is applied.

    ``kind`` names the problem (for rate-limited warnings and tests): ``"length"``,
    ``"non_finite"``, ``"unknown_joint"``, ``"duplicate"``, ``"mimic"``, ``"empty"``,
    ``"unsupported"``, ``"limit"``, ``"disarmed"``, ``"inactive"``, ``"collision"``.
    """

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(reason)


class TrajectoryRejected(DriverError):
    """A trajectory that is not executed.

    ``code`` is the ``control_msgs/FollowJointTrajectory`` result code that fits
    (:data:`INVALID_GOAL`, :data:`INVALID_JOINTS` or :data:`OLD_HEADER_TIMESTAMP`).
    """

    def __init__(self, code: int, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(reason)


class BackendError(DriverError):
    """A backend cannot connect or has failed."""


class LimitsFileError(DriverError):
    """A joint-limits YAML file that cannot be used (the message names the file and the key)."""


# control_msgs/action/FollowJointTrajectory result codes (kept here so the core needs no ROS).
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5

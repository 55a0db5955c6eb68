"""What ``bb-robot up`` knows about the robots it brought up, as plain data (no ROS types).

:class:`bb_robot.nodes.up_client.UpClient` fills these in from what it receives; the command line
shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Pauses between successive joint states' stamps that :attr:`RobotView.joint_state_pauses` notes (s).
NOTED_PAUSE = 0.03
#: How many of the latest it keeps.
PAUSES_KEPT = 32


@dataclass
class RobotView:
    """What is known about one robot (namespace ``namespace``), as plain data."""

    namespace: str
    description_at: float | None = None
    description_size: int = 0
    lifecycle: str = "unknown"
    configured_at: float | None = None
    active_at: float | None = None
    arm_state: str = "unknown"
    armed_at: float | None = None
    first_tf_at: float | None = None
    joint_names: tuple[str, ...] = ()
    positions: tuple[float, ...] = ()
    #: ``header.stamp`` of the latest joint state (s).
    joint_state_stamp: float = 0.0
    #: The latest pauses between joint states longer than :data:`NOTED_PAUSE`: ``(stamp after, seconds)``.
    joint_state_pauses: tuple[tuple[float, float], ...] = ()
    velocities: tuple[float, ...] = ()
    tip: tuple[float, ...] | None = None
    tip_frame: str = ""
    tf_rate: float = 0.0
    joint_state_rate: float = 0.0
    warnings: tuple[str, ...] = ()
    #: When the latest /diagnostics arrived (monotonic s; 0: none yet).
    diagnostics_at: float = 0.0
    #: How often the driver's servo saw a stream of poses fall silent (its /diagnostics; -1: unknown).
    stream_silences: int = -1


@dataclass
class GoalProgress:
    """A FollowJointTrajectory goal as the client sees it."""

    accepted: bool | None = None
    feedback_count: int = 0
    last_error: tuple[str, ...] = ()
    done: bool = False
    error_code: int | None = None
    error_string: str = ""
    status: int | None = None
    rejected_reason: str = ""
    final_positions: dict[str, float] = field(default_factory=dict)


@dataclass
class MoveProgress:
    """A MoveIt ``move_action`` (``moveit_msgs/action/MoveGroup``) goal as the client sees it.

    Attributes:
        accepted: whether the server took the goal (``None``: no answer yet).
        done: a result came, or the goal could not be sent.
        status: the goal's final ``GoalStatus``.
        error_code: the result's ``MoveItErrorCodes`` value (1: success).
        error_message: the result's error message.
        states: each feedback state as it came: ``(monotonic s, state)`` (``PLANNING``, ``MONITOR``, ``IDLE``).
        planning_time: the result's ``planning_time`` (s).
        planned_points: points of the planned trajectory.
        planned_duration: its last point's ``time_from_start`` (s).
        executed_points: points of the executed trajectory.
        finished_at: when the result came (monotonic s).
        rejected_reason: why no goal ran (not accepted, no server).
    """

    accepted: bool | None = None
    done: bool = False
    status: int | None = None
    error_code: int | None = None
    error_message: str = ""
    states: tuple[tuple[float, str], ...] = ()
    planning_time: float = 0.0
    planned_points: int = 0
    planned_duration: float = 0.0
    executed_points: int = 0
    finished_at: float = 0.0
    rejected_reason: str = ""

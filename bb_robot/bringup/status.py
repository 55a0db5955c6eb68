"""What ``bb-robot up`` knows about the robots it brought up, as plain data (no ROS types).

:class:`bb_robot.nodes.up_client.UpClient` fills these in from what it receives; the command line
shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    velocities: tuple[float, ...] = ()
    tip: tuple[float, ...] | None = None
    tip_frame: str = ""
    tf_rate: float = 0.0
    joint_state_rate: float = 0.0
    warnings: tuple[str, ...] = ()


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

"""A gripper goal (``control_msgs/GripperCommand``): checked, then watched until it ends.

The goal's ``position`` is the position every joint of ``gripper.joints`` is commanded to (the
bundled arm's ``left_finger_joint``: metres of each finger's stroke; mimic joints follow), its
``max_effort`` the effort (N or N·m) at which the fingers count as stalled where the backend reports
effort (0: no effort threshold).  :func:`check_goal` refuses a goal that makes no sense (NaN, a
negative effort, a position outside a joint's range) before anything moves.  :class:`GripperWatch`
judges each measured state of a goal that runs:

- **reached_goal**: every gripper joint within ``tolerance`` of the goal;
- **stalled**: not reached, and either the measured effort is at ``max_effort`` (where reported and
  ``max_effort`` > 0) while the fingers moved less than ``stall_motion`` during the last
  ``squeeze_time`` seconds, or they moved less than ``stall_motion`` during the last ``stall_time``
  seconds (they met an object, or a backend without effort feedback holds them).  Motion is judged
  over time, never between two states however close: a position actuator's force saturates the
  moment a goal starts, while the fingers have not yet moved.

Both end the goal; a stalled grasp keeps its command, so the fingers keep squeezing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from bb_robot.driver.errors import CommandRejected

__all__ = ["GripperSettings", "GripperState", "GripperWatch", "check_goal"]


@dataclass(frozen=True)
class GripperSettings:
    """How a gripper goal is judged (the driver's ``gripper.*`` parameters).

    Attributes:
        joints: The joints the goal commands (``gripper.joints``).
        tolerance: Reached within this of the goal (joint units).
        stall_time: Seconds without motion after which the fingers count as stalled.
        stall_motion: Less motion than this (joint units) during ``stall_time``: not moving.
        squeeze_time: At ``max_effort``, less than ``stall_motion`` during this long (s): stalled.
    """

    joints: tuple[str, ...]
    tolerance: float = 0.001
    stall_time: float = 0.3
    stall_motion: float = 0.0005
    squeeze_time: float = 0.04


@dataclass(frozen=True)
class GripperState:
    """One judged state of a running goal (the action's feedback, and at the end its result).

    Attributes:
        position: The first gripper joint's measured position.
        effort: Its measured effort (NaN: the backend reports none).
        stalled: The fingers stopped short of the goal (see the module docstring).
        reached_goal: Every gripper joint is within the tolerance of the goal.
    """

    position: float
    effort: float
    stalled: bool
    reached_goal: bool

    @property
    def done(self) -> bool:
        """Whether the goal has ended (reached or stalled)."""
        return self.stalled or self.reached_goal


def check_goal(
    position: float, max_effort: float, joints: Sequence[str], ranges: Sequence[tuple[float, float]]
) -> None:
    """Refuse a goal that makes no sense, before anything moves.

    Args:
        position: The goal's position.
        max_effort: The goal's ``max_effort``.
        joints: The gripper joints (``gripper.joints``).
        ranges: Each joint's command range (lower, upper).

    Raises:
        CommandRejected: No gripper joints, a non-finite position or effort, a negative effort, or a
            position outside a joint's range (the message names the joint and the value).
    """
    if not joints:
        raise CommandRejected("empty", "no gripper joints: set the driver's gripper.joints parameter")
    if not math.isfinite(position):
        raise CommandRejected("non_finite", f"gripper position {position} is not a finite number")
    if not math.isfinite(max_effort) or max_effort < 0.0:
        raise CommandRejected(
            "non_finite" if not math.isfinite(max_effort) else "limit",
            f"gripper max_effort {max_effort} must be a finite number ≥ 0 (0: no effort threshold)",
        )
    for joint, (lower, upper) in zip(joints, ranges, strict=True):
        if not lower <= position <= upper:
            raise CommandRejected(
                "limit", f"gripper position {position:g} is outside joint '{joint}''s range [{lower:g}, {upper:g}]"
            )


class GripperWatch:
    """Watches one running goal (see the module docstring).

    Args:
        goal: The commanded position.
        max_effort: The goal's ``max_effort`` (0: no effort threshold).
        settings: Tolerance and stall detection.
        start_s: When the goal started (seconds, any monotonic clock).
    """

    def __init__(self, goal: float, max_effort: float, settings: GripperSettings, start_s: float) -> None:
        self.goal, self.max_effort, self.settings = goal, max_effort, settings
        self._since_s = start_s
        self._since_position: float | None = None

    def update(self, now_s: float, positions: Sequence[float], efforts: Sequence[float] | None) -> GripperState:
        """Judge a measured state of the gripper joints.

        Args:
            now_s: The time of the measurement (the clock of ``start_s``).
            positions: Each gripper joint's position.
            efforts: Each one's effort (``None`` or NaN: not reported).

        Returns:
            The judged state.
        """
        settings = self.settings
        position = float(positions[0])
        effort = float(efforts[0]) if efforts is not None and len(efforts) else math.nan
        reached = all(abs(float(p) - self.goal) <= settings.tolerance for p in positions)
        if self._since_position is None or abs(position - self._since_position) >= settings.stall_motion:
            self._since_s, self._since_position = now_s, position
        # within stall_motion of where they last moved to: for squeeze_time at max_effort, or stall_time
        stopped = now_s - self._since_s >= settings.squeeze_time
        still = now_s - self._since_s >= settings.stall_time
        squeezing = self.max_effort > 0.0 and math.isfinite(effort) and abs(effort) >= self.max_effort and stopped
        return GripperState(position, effort, not reached and (still or squeezing), reached)

"""Re-export: :class:`~bb_robot.common.throttle.WarningThrottle` moved to :mod:`bb_robot.common.throttle`."""

from bb_robot.common.throttle import WarningThrottle

__all__ = ["WarningThrottle"]

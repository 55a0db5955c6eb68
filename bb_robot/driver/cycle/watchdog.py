"""The command watchdog's decision: whether the joints in a streaming mode have heard no command for
longer than ``command_timeout`` (what the core then does, hold or disarm, is its own)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.driver.cycle.setpoints import ModeMasks


@dataclass(frozen=True)
class WatchdogTrip:
    """The watchdog fired: ``commanded`` are the joints in a streaming mode (position, velocity,
    effort), ``what`` says why, ``moving`` whether any of them was moving or driven."""

    commanded: npt.NDArray[np.intp]
    what: str
    moving: bool


def watchdog_trip(
    timeout: float, masks: ModeMasks, last_command: int | None, velocities: npt.NDArray[np.float64], now: int
) -> WatchdogTrip | None:
    """Whether the watchdog fires at ``now``.

    Args:
        timeout: ``command_timeout`` in seconds (0 or less: never).
        masks: Which joints are in which mode.
        last_command: When the last command arrived (monotonic ns; ``None``: never).
        velocities: The joints' measured velocities (NaN where unknown).
        now: The cycle's time (monotonic ns).

    Returns:
        The trip, or ``None`` while commands are fresh or no joint streams.
    """
    if timeout <= 0:
        return None
    commanded = masks.pos | masks.vel | masks.eff
    if not commanded.any():
        return None
    age = (now - last_command) * 1e-9 if last_command is not None else None
    if age is not None and age < timeout:
        return None
    moving = (np.abs(np.nan_to_num(velocities)) > 1e-3) | masks.vel | masks.eff
    return WatchdogTrip(
        np.flatnonzero(commanded), f"no command for {timeout:g} s (command_timeout)", bool(moving[commanded].any())
    )

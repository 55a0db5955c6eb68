"""What the driver does when a joint goes stale (``stale_action``).

A joint is stale when the backend's latest value of it is older than ``stale_timeout``: a servo
bridge that froze or died, a cut network, a simulator that stopped.  The driver then cannot know
where the joint is, so it must not go on moving it on old information.  On the cycle a joint goes
stale the core (:class:`bb_robot.driver.core.DriverCore`) takes ``stale_action``:

- ``hold``: a running trajectory or goal is aborted (its result names the stale joints), every
  joint holds where it was last reported, and commands and goals are refused while any joint is
  stale; once every joint reports again, commands are accepted again (the joints keep holding
  until one arrives).  Nothing queued meanwhile is applied later: no burst.
- ``disarm``: the same, and the driver disarms; ``~/arm`` is needed once the joints report again.

:class:`StaleWatch` follows which joints are stale from cycle to cycle and says when that
changes; it holds no ROS and no backend.  It acts only once every joint has reported since the
loop started: at activation the latest values may be older than ``stale_timeout`` (the executor
thread was busy configuring and activating, and took no feedback meanwhile), which is no fault.
"""

from __future__ import annotations

from dataclasses import dataclass

STALE_ACTIONS = ("hold", "disarm")


@dataclass(frozen=True)
class StaleChange:
    """A change of the stale joints at one cycle.

    Attributes:
        stale: The joints stale now.
        new: The joints that went stale at this cycle.
        recovered: Whether every joint reports again (none is stale any more).
    """

    stale: tuple[str, ...]
    new: tuple[str, ...]
    recovered: bool

    def describe(self, timeout: float) -> str:
        """A sentence for the log and a goal's result."""
        return f"joint(s) {', '.join(self.new)} stale: no value from the backend for {timeout:g} s (stale_timeout)"

    def log_line(self, timeout: float, action: str) -> tuple[str, str]:
        """The level and text the driver logs for this change under ``stale_action`` ``action``."""
        if self.recovered:
            return "info", "every joint reports again: commands are accepted again (the joints hold until one)"
        return "warning", f"{self.describe(timeout)}: {'disarming' if action == 'disarm' else 'every joint holds'}"


class StaleWatch:
    """The stale joints of the last cycle, and whether commands are refused because of them."""

    def __init__(self) -> None:
        self.stale: tuple[str, ...] = ()
        #: Since a joint went stale and until every joint reports again: commands are refused.
        self.holding = False
        #: How often joints went stale since the driver was created.
        self.events = 0
        #: Whether every joint has reported since the loop started.
        self.ready = False

    def restart(self) -> None:
        """The loop starts (activation): wait for every joint to be fresh before acting again."""
        self.stale, self.holding, self.ready = (), False, False

    def update(self, stale: tuple[str, ...], reported_since_start: bool = True) -> StaleChange | None:
        """Take this cycle's stale joints; returns the change, or ``None`` when nothing changed.

        Args:
            stale: The joints stale at this cycle.
            reported_since_start: Whether every joint has reported since the loop started.

        Returns:
            The change, or ``None`` (also until every joint has reported since the start).
        """
        previous = self.stale
        self.stale = stale
        if not self.ready:
            self.ready = reported_since_start and not stale
            return None
        new = tuple(name for name in stale if name not in previous)
        if new:
            self.holding = True
            self.events += 1
            return StaleChange(stale, new, recovered=False)
        if previous and not stale:
            self.holding = False
            return StaleChange((), (), recovered=True)
        return None

    def reason(self) -> str:
        """Why commands are refused (for :class:`~bb_robot.driver.errors.CommandRejected`)."""
        return (
            f"joint(s) {', '.join(self.stale)} stale (the backend reports no value for them): every joint holds "
            "until they report again (stale_action)"
        )

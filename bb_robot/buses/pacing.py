"""Absolute deadlines at a fixed period, for the loops that read and write a bus (the bridge's, the
leader's): a late cycle does not shift the ones after it, and a loop more than a period behind
starts again from now rather than running cycles back to back to catch up."""

from __future__ import annotations

import time
from collections.abc import Callable


class Deadlines:
    """The deadlines of a loop at ``period`` seconds (0: no pacing), from the first call on.

    Args:
        period: Seconds between two cycles (0 or less: every :meth:`wait` returns at once).
        clock: Monotonic seconds (a test's clock in tests).
    """

    def __init__(self, period: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.period = period
        self.clock = clock
        self.deadline = clock()

    def wait(self, sleep: Callable[[float], object] = time.sleep) -> None:
        """Sleep (with ``sleep``) until the next deadline; when more than a period behind, start again from now."""
        if self.period <= 0:
            return
        self.deadline += self.period
        delay = self.deadline - self.clock()
        if delay > 0:
            sleep(delay)
        elif delay < -self.period:
            self.deadline = self.clock()


__all__ = ["Deadlines"]

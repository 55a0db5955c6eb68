"""Rate-limited warnings: at most one per key and period, with a count of the ones held back."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable


class WarningThrottle:
    """Decides whether a warning for ``key`` may be logged now.

    :meth:`allow` returns ``None`` while the key is muted (the warning is counted), else the
    number of warnings for that key muted since the last one logged.
    """

    def __init__(self, period: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.period = period
        self._clock = clock
        self._last: dict[Hashable, float] = {}
        self._muted: dict[Hashable, int] = {}

    def allow(self, key: Hashable) -> int | None:
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self.period:
            self._muted[key] = self._muted.get(key, 0) + 1
            return None
        self._last[key] = now
        return self._muted.pop(key, 0)

"""Message rates counted from the arrival times of the messages one process receives.

The figure ``bb-robot up`` shows for ``/tf`` and ``joint_states`` is what arrived here, not what a
parameter says should be sent: a publisher that stalls shows as a falling rate.
"""

from __future__ import annotations

from collections import deque
from threading import Lock


class RateCounter:
    """Arrival times (seconds, one monotonic clock) of the messages of one topic over a window.

    Thread-safe: a ROS callback thread adds, the display thread reads.
    """

    def __init__(self, window: float = 2.0) -> None:
        """Args:
        window: seconds of history the rate is computed over.
        """
        if window <= 0:
            raise ValueError(f"window must be positive, got {window}")
        self.window = window
        self._times: deque[float] = deque()
        self._total = 0
        self._lock = Lock()

    def add(self, stamp: float) -> None:
        """Count one message that arrived at ``stamp``."""
        with self._lock:
            self._times.append(stamp)
            self._total += 1
            self._trim(stamp)

    @property
    def total(self) -> int:
        """Messages counted since the start."""
        return self._total

    def rate(self, now: float) -> float:
        """Messages per second over the window that ends at ``now``.

        Args:
            now: the current time on the clock of :meth:`add`.

        Returns:
            ``(n - 1) / (last - first)`` for the n >= 2 messages inside the window (the interval
            they span, so a steady stream of f Hz gives f whatever the window); 0.0 with fewer
            than two, or once the newest message is older than the window.
        """
        with self._lock:
            self._trim(now)
            times = list(self._times)
        if len(times) < 2 or times[-1] <= times[0]:
            return 0.0
        return (len(times) - 1) / (times[-1] - times[0])

    def _trim(self, now: float) -> None:
        while self._times and self._times[0] <= now - self.window:
            self._times.popleft()

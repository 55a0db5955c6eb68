"""A fixed-rate loop on absolute deadlines, and its timing statistics.

Cycle ``k`` is due at ``start + k * period`` (the monotonic clock): a late cycle does not
push the later ones back, so the loop does not drift.  When the loop falls more than one
period behind (a cycle overran, or the process was not scheduled), the missed cycles are
skipped, counted in :attr:`LoopStats.skipped`, and the schedule continues on its grid: the
lag stays under one period instead of growing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: How many recent cycles the statistics cover.
WINDOW = 2048


@dataclass(frozen=True)
class CycleInfo:
    """What a cycle knows about itself: its index on the grid, when it was due, when it began."""

    index: int
    deadline_ns: int
    start_ns: int
    period_ns: int


@dataclass(frozen=True)
class LoopStats:
    """Timing over the last :data:`WINDOW` cycles (seconds), and totals since the start."""

    rate: float
    cycles: int
    skipped: int
    period_mean: float
    period_std: float
    period_max_deviation: float
    lag_last: float
    lag_p99: float
    lag_max: float
    step_mean: float
    step_max: float


class RateLoop:
    """Calls ``step(info)`` every ``1 / rate`` seconds in the calling thread until :meth:`stop`."""

    def __init__(self, rate: float, clock: Callable[[], int] = time.monotonic_ns) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be above 0, not {rate}")
        self.rate = float(rate)
        self.period_ns = int(round(1e9 / rate))
        self._clock = clock
        self._stop = threading.Event()
        self._starts = np.zeros(WINDOW, dtype=np.int64)
        self._lags = np.zeros(WINDOW, dtype=np.int64)
        self._steps = np.zeros(WINDOW, dtype=np.int64)
        self.cycles = 0
        self.skipped = 0

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self, step: Callable[[CycleInfo], None]) -> None:
        _reduce_timer_slack()
        clock, period = self._clock, self.period_ns
        origin = clock()
        k = 0
        while not self._stop.is_set():
            deadline = origin + k * period
            now = clock()
            if now < deadline:
                time.sleep((deadline - now) * 1e-9)
                now = clock()
            lag = now - deadline
            if lag >= period:
                missed = lag // period
                self.skipped += int(missed)
                k += int(missed)
                deadline = origin + k * period
                lag = now - deadline
            slot = self.cycles % WINDOW
            self._starts[slot] = now
            self._lags[slot] = lag
            step(CycleInfo(k, deadline, now, period))
            self._steps[slot] = clock() - now
            self.cycles += 1
            k += 1

    def stats(self) -> LoopStats:
        n = min(self.cycles, WINDOW)
        if n == 0:
            return LoopStats(self.rate, 0, self.skipped, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        last = (self.cycles - 1) % WINDOW

        def ordered(values: np.ndarray) -> np.ndarray:
            """The window's values, oldest first, in seconds."""
            window = values[:n] if self.cycles <= WINDOW else np.roll(values, -(self.cycles % WINDOW))
            return window.astype(np.float64) * 1e-9

        starts, lags, steps = ordered(self._starts), ordered(self._lags), ordered(self._steps)
        periods = np.diff(starts)
        nominal = 1.0 / self.rate
        return LoopStats(
            rate=self.rate,
            cycles=self.cycles,
            skipped=self.skipped,
            period_mean=float(periods.mean()) if len(periods) else nominal,
            period_std=float(periods.std()) if len(periods) else 0.0,
            period_max_deviation=float(np.abs(periods - nominal).max()) if len(periods) else 0.0,
            lag_last=float(self._lags[last]) * 1e-9,
            lag_p99=float(np.percentile(lags, 99)),
            lag_max=float(lags.max()),
            step_mean=float(steps.mean()),
            step_max=float(steps.max()),
        )


_PR_SET_TIMERSLACK = 29


def _reduce_timer_slack() -> None:
    """Ask Linux to wake this thread within 1 µs of its deadline (the default slack is 50 µs)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_TIMERSLACK, 1000, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the default slack it is
        pass

"""A fixed-rate loop on absolute deadlines, and its timing statistics.

Cycle ``k`` is due at ``start + k * period`` (the monotonic clock): a late cycle does not
push the later ones back, so the loop does not drift.  When the loop falls a whole period or
more behind (a cycle overran, or the thread was not scheduled), the missed cycles are
skipped, counted in :attr:`LoopStats.skipped`, and the loop sleeps until the next point of
its grid: the lag stays under one period instead of growing, and the thread sleeps in every
cycle (it never monopolises a CPU, which matters under real-time scheduling).

Real-time scheduling: with ``priority`` above 0 the loop thread asks Linux for
``SCHED_FIFO`` at that priority (as ros2_control's controller manager does); where that is
not permitted (no ``CAP_SYS_NICE``, no ``rtprio`` limit) it runs with normal priority and
:attr:`RateLoop.scheduling` says why.  On a loaded machine this is the difference between a
few skipped cycles in ten thousand and one in ten.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
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

    def __init__(
        self,
        rate: float,
        clock: Callable[[], int] = time.monotonic_ns,
        priority: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be above 0, not {rate}")
        self.rate = float(rate)
        self.period_ns = int(round(1e9 / rate))
        self._clock = clock
        self._sleep = sleep
        self._stop = threading.Event()
        self._starts = np.zeros(WINDOW, dtype=np.int64)
        self._lags = np.zeros(WINDOW, dtype=np.int64)
        self._steps = np.zeros(WINDOW, dtype=np.int64)
        self.cycles = 0
        self.skipped = 0
        self.priority = priority
        #: How the loop thread is scheduled (set when :meth:`run` starts).
        self.scheduling = "not started"

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self, step: Callable[[CycleInfo], None]) -> None:
        _reduce_timer_slack()
        self.scheduling = request_realtime(self.priority)
        clock, period = self._clock, self.period_ns
        origin = clock()
        k = 0
        while not self._stop.is_set():
            deadline = origin + k * period
            now = clock()
            if now - deadline >= period:
                # A period or more behind: skip to the next point of the grid and sleep until it.
                missed = (now - deadline) // period + 1
                self.skipped += int(missed)
                k += int(missed)
                deadline = origin + k * period
            if now < deadline:
                self._sleep((deadline - now) * 1e-9)
                now = clock()
            lag = now - deadline
            slot = self.cycles % WINDOW
            self._starts[slot] = now
            self._lags[slot] = lag
            step(CycleInfo(k, deadline, now, period))
            self._steps[slot] = clock() - now
            self.cycles += 1
            k += 1

    def stats(self) -> LoopStats:
        """Statistics of the last completed cycles (safe to call from another thread: the slot the
        loop may be writing is left out)."""
        cycles = self.cycles
        n = min(cycles, WINDOW - 1)
        if n == 0:
            return LoopStats(self.rate, 0, self.skipped, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        slots = np.arange(cycles - n, cycles) % WINDOW

        def window(values: np.ndarray) -> np.ndarray:
            return values[slots].astype(np.float64) * 1e-9

        starts, lags, steps = window(self._starts), window(self._lags), window(self._steps)
        periods = np.diff(starts)
        nominal = 1.0 / self.rate
        return LoopStats(
            rate=self.rate,
            cycles=cycles,
            skipped=self.skipped,
            period_mean=float(periods.mean()) if len(periods) else nominal,
            period_std=float(periods.std()) if len(periods) else 0.0,
            period_max_deviation=float(np.abs(periods - nominal).max()) if len(periods) else 0.0,
            lag_last=float(lags[-1]),
            lag_p99=float(np.percentile(lags, 99)),
            lag_max=float(lags.max()),
            step_mean=float(steps.mean()),
            step_max=float(steps.max()),
        )

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """Start times (ns) and lags (ns) of the last completed cycles, oldest first."""
        cycles = self.cycles
        n = min(cycles, WINDOW - 1)
        slots = np.arange(cycles - n, cycles) % WINDOW
        return self._starts[slots].copy(), self._lags[slots].copy()


_PR_SET_TIMERSLACK = 29


def request_realtime(priority: int) -> str:
    """Ask for ``SCHED_FIFO`` at ``priority`` for the calling thread; say what was granted."""
    if priority <= 0:
        return "normal (real-time scheduling not requested)"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return f"normal (SCHED_FIFO {priority} not permitted: {reason})"
    return f"SCHED_FIFO {priority}"


def _reduce_timer_slack() -> None:
    """Ask Linux to wake this thread within 1 µs of its deadline (the default slack is 50 µs)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_TIMERSLACK, 1000, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the default slack it is
        pass

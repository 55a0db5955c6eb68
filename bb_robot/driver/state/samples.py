"""Passing every new joint sample on to one listener (the driver node's ``publish_rate`` 0).

From the backend's own thread as each sample arrives where the backend offers it
(:meth:`~bb_robot.driver.backends.base.Backend.watch_samples`), else from the core's loop thread
after each cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from bb_robot.driver.backends.base import Backend, JointSample
from bb_robot.driver.timing.loop import request_realtime

#: ``listener(sample, all_seen, stale)``: a new sample; whether every joint was ever reported;
#: the joints whose value is older than ``stale_timeout``.
SampleListener = Callable[[JointSample, bool, tuple[str, ...]], None]
LogFunction = Callable[[str, str], None]


def freshness(
    names: tuple[str, ...], sample: JointSample | None, now: int, stale_timeout: float
) -> tuple[bool, tuple[str, ...]]:
    """Whether every joint of ``sample`` was ever reported, and the names of the stale ones.

    Args:
        names: The joints, in the sample's order.
        sample: The sample (``None``: none yet).
        now: Now, on the sample's clock (ns).
        stale_timeout: Seconds after which a value is stale (0: never).

    Returns:
        ``(all_seen, stale)``.
    """
    if sample is None:
        return False, ()
    seen = sample.stamps > 0
    stale: tuple[str, ...] = ()
    if stale_timeout > 0:
        old = seen & ((now - sample.stamps) > int(stale_timeout * 1e9))
        if old.any():
            stale = tuple(names[i] for i in np.flatnonzero(old))
    return bool(seen.all()), stale


class SampleFanout:
    """The core's sample listener and the thread that calls it.

    Args:
        names: The driven joints.
        backend: The backend, asked whether it passes samples on itself.
        clock: The driver's monotonic clock (ns).
        stale_timeout: The current ``stale_timeout`` (seconds), read at each sample.
        log: ``log(level, text)``.
    """

    def __init__(
        self,
        names: tuple[str, ...],
        backend: Backend,
        clock: Callable[[], int],
        stale_timeout: Callable[[], float],
        log: LogFunction,
    ) -> None:
        self._names = names
        self._backend = backend
        self._clock = clock
        self._stale_timeout = stale_timeout
        self._log = log
        self._listener: SampleListener | None = None
        self.in_loop = False
        #: Real-time priority for the threads that pass samples on (0: leave them alone), and those seen.
        self.thread_priority = 0
        self._threads: set[int] = set()

    def watch(self, listener: SampleListener | None) -> None:
        """Call ``listener`` with every new sample (``None``: stop); see the module docstring."""
        self._listener = listener
        offered = self._backend.watch_samples(self._forward if listener is not None else None)
        self.in_loop = listener is not None and not offered

    @property
    def from_backend(self) -> bool:
        """Whether the listener is called by the backend as samples arrive (not after each cycle)."""
        return self._listener is not None and not self.in_loop

    def after_cycle(self, sample: JointSample | None, all_seen: bool, stale: tuple[str, ...]) -> None:
        """The loop's end of a cycle: pass ``sample`` on unless the backend does."""
        listener = self._listener
        if listener is not None and self.in_loop and sample is not None:
            self._notify(listener, sample, all_seen, stale)

    def _forward(self, sample: JointSample) -> None:
        listener = self._listener
        if listener is None:
            return
        if self.thread_priority and threading.get_ident() not in self._threads:
            # Like the executor thread: a thread publishing samples while the loop runs real-time
            # gets the lowest real-time priority, so that ordinary processes do not preempt it while
            # it holds the interpreter lock (it still yields to the loop).
            self._threads.add(threading.get_ident())
            request_realtime(self.thread_priority)
        all_seen, stale = freshness(self._names, sample, self._clock(), self._stale_timeout())
        self._notify(listener, sample, all_seen, stale)

    def _notify(self, listener: SampleListener, sample: JointSample, all_seen: bool, stale: tuple[str, ...]) -> None:
        try:
            listener(sample, all_seen, stale)
        except Exception as error:  # noqa: BLE001 - a listener never stops the loop nor the backend
            self._log("warning", f"the joint-state listener failed: {error!r}")

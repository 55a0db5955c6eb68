"""Helpers of the bus tests (test/buses): a clock the test moves, and the client's latency allowance."""

from __future__ import annotations

#: Seconds a client waits beyond the wire time in the bus tests: far above any scheduling delay of a
#: busy machine (the emulators there answer at once; the timing model is measured by benchmarks/bench_bus.py).
LATENCY = 0.25


class ManualClock:
    """A clock the test moves, for the emulated servos' motion at exact times."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

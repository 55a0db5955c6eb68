"""Skipped control cycles as a figure a reader can judge: a count, a share, and a recent share.

A loop on absolute deadlines skips the cycles it fell a whole period behind on
(:mod:`bb_robot.driver.timing.loop`).  A few over hours are harmless; many in a short time mean the
machine cannot keep the rate.  So the driver's ``/diagnostics`` (and ``bb-robot up``'s live view,
which shows its warnings) give the count and share since activation and **warn only when more than
1 % of the cycles due in the last 10 s were skipped** — the fleet benchmark's failure line
(``benchmarks/bench_fleet.py``, ``SKIPPED_LIMIT``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

#: The window of the recent share (seconds).
RECENT_WINDOW = 10.0
#: A recent share above this is a warning.
SKIPPED_WARN_SHARE = 0.01


@dataclass(frozen=True)
class SkipFigures:
    """Skipped cycles since activation and over the recent window.

    Attributes:
        skipped: Skipped cycles since activation.
        share: Their share of the cycles due (run + skipped) since activation.
        recent_skipped: Skipped in the last :data:`RECENT_WINDOW` seconds (as far as observed).
        recent_share: Their share of the cycles due in that window.
    """

    skipped: int
    share: float
    recent_skipped: int
    recent_share: float

    @property
    def warn(self) -> bool:
        """Whether the recent share is above :data:`SKIPPED_WARN_SHARE`."""
        return self.recent_share > SKIPPED_WARN_SHARE

    def describe(self) -> str:
        """E.g. ``9 cycles skipped since activation (0.01 %), 0 in the last 10 s``."""
        return (
            f"{self.skipped} cycles skipped since activation ({100 * self.share:.2g} %), "
            f"{self.recent_skipped} in the last {RECENT_WINDOW:g} s ({100 * self.recent_share:.2g} %)"
        )


class SkipWindow:
    """Totals (cycles run, cycles skipped) observed over time; the share over the recent window.

    Fed with the loop's running totals whenever they are read (the diagnostics do, once a second);
    totals that go down (a new activation) start it afresh.
    """

    def __init__(self, window: float = RECENT_WINDOW) -> None:
        self.window = window
        self._history: deque[tuple[float, int, int]] = deque()

    def add(self, now: float, cycles: int, skipped: int, rate: float = 0.0) -> SkipFigures:
        """Take the totals at ``now`` (seconds, monotonic); returns the figures.

        Args:
            now: When the totals were read.
            cycles: Cycles run since activation.
            skipped: Cycles skipped since activation.
            rate: The loop's rate (Hz): the recent share is taken of at least a whole window's
                cycles, so that the start-up's few skipped cycles in the first second after
                activation are not 1 % of "the last 10 s" (0: of the cycles observed).

        Returns:
            The figures since activation and over the recent window.
        """
        history = self._history
        if history and (cycles < history[-1][1] or skipped < history[-1][2]):
            history.clear()
        history.append((now, cycles, skipped))
        while len(history) > 1 and now - history[1][0] >= self.window:
            history.popleft()
        # history[0]: the newest reading at least a window old (or the oldest there is).
        _, old_cycles, old_skipped = history[0]
        recent_cycles, recent_skipped = cycles - old_cycles, skipped - old_skipped
        if len(history) == 1:  # the first reading since activation: its totals are all there is
            recent_cycles, recent_skipped = cycles, skipped
        due = cycles + skipped
        recent_due = max(recent_cycles + recent_skipped, rate * self.window)
        return SkipFigures(
            skipped=skipped,
            share=skipped / due if due else 0.0,
            recent_skipped=recent_skipped,
            recent_share=recent_skipped / recent_due if recent_due else 0.0,
        )


#: A control cycle that takes more than this share of its period, on average, leaves too little of
#: a CPU for the rest of the process (command intake, publishing, the executor): say so.
BUSY_SHARE = 0.4
#: A share of skipped cycles since activation above this is said too (start-up included).
SKIPPED_ADVICE_SHARE = 0.05
#: Rates offered instead, highest first: the first whose cycle takes at most a quarter of its period.
_OFFERED_RATES = (1000.0, 500.0, 250.0, 200.0, 125.0, 100.0, 50.0, 25.0, 10.0)


def rate_advice(rate: float, step_mean: float, skipped_share: float) -> str | None:
    """What to tell a user whose machine cannot keep the control rate comfortably, measured.

    Args:
        rate: The loop's rate (Hz).
        step_mean: The mean time of one cycle's work (s), as measured.
        skipped_share: The share of the cycles due since activation that were skipped.

    Returns:
        ``None`` when the cycle takes at most :data:`BUSY_SHARE` of its period and at most
        :data:`SKIPPED_ADVICE_SHARE` of the cycles were skipped; else a sentence, e.g. ``"this
        machine runs the control cycle in 0.96 ms: at 500 Hz that is 48 % of one CPU, 52 % left
        for the rest; 7 % of the cycles were skipped; rate: 200 would leave 81 %"``.
    """
    busy = step_mean * rate
    if busy <= BUSY_SHARE and skipped_share <= SKIPPED_ADVICE_SHARE:
        return None
    text = (
        f"this machine runs the control cycle in {step_mean * 1e3:.2f} ms: at {rate:g} Hz that is "
        f"{100 * busy:.0f} % of one CPU, {100 * max(0.0, 1 - busy):.0f} % left for the rest"
    )
    if skipped_share > SKIPPED_ADVICE_SHARE:
        text += f"; {100 * skipped_share:.0f} % of the cycles were skipped"
    offered = next((r for r in _OFFERED_RATES if r < rate and step_mean * r <= 0.25), None)
    if offered is not None:
        text += f"; rate: {offered:g} would leave {100 * (1 - step_mean * offered):.0f} %"
    return text

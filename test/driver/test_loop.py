"""The fixed-rate loop: absolute deadlines, skipping instead of falling behind, statistics."""

from __future__ import annotations

import threading
import time

from bb_robot.driver.loop import CycleInfo, RateLoop


def run_for(loop: RateLoop, seconds: float, step) -> None:  # type: ignore[no-untyped-def]
    thread = threading.Thread(target=loop.run, args=(step,))
    thread.start()
    time.sleep(seconds)
    loop.stop()
    thread.join(5)
    assert not thread.is_alive()


def test_cycles_follow_the_grid() -> None:
    loop = RateLoop(200.0)
    infos: list[CycleInfo] = []
    run_for(loop, 0.5, infos.append)
    assert 80 <= loop.cycles <= 101  # a busy machine may skip a few, never run more
    assert all(b.deadline_ns - a.deadline_ns >= a.period_ns for a, b in zip(infos, infos[1:], strict=False))
    assert all((info.deadline_ns - infos[0].deadline_ns) % info.period_ns == 0 for info in infos)  # no drift
    stats = loop.stats()
    assert stats.cycles == loop.cycles and stats.lag_max < 0.1


def test_an_overrun_skips_cycles_and_lag_stays_under_a_period() -> None:
    loop = RateLoop(1000.0)
    lags: list[int] = []

    def step(info: CycleInfo) -> None:
        lags.append(info.start_ns - info.deadline_ns)
        if len(lags) == 20:
            time.sleep(0.02)  # twenty periods late, once

    run_for(loop, 0.3, step)
    assert loop.skipped >= 15
    assert max(lags) < loop.period_ns + 5_000_000  # never a growing backlog (and scheduling noise)
    assert loop.stats().skipped == loop.skipped


def test_rate_must_be_positive() -> None:
    try:
        RateLoop(0.0)
    except ValueError as error:
        assert "above 0" in str(error)
    else:
        raise AssertionError("RateLoop(0) accepted")

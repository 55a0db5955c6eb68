"""The fixed-rate loop on a simulated clock: the grid, skipping instead of falling behind, statistics."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from bb_robot.driver.timing.loop import CycleInfo, RateLoop


class FakeTime:
    """A clock that only moves when the loop sleeps or a step says it took time."""

    def __init__(self) -> None:
        self.now = 10_000_000_000

    def clock(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += int(round(seconds * 1e9)) + 20_000  # wakes 20 µs late


def run(loop: RateLoop, fake: FakeTime, step: Callable[[CycleInfo], None], cycles: int) -> list[CycleInfo]:
    infos: list[CycleInfo] = []

    def record(info: CycleInfo) -> None:
        infos.append(info)
        step(info)
        if len(infos) >= cycles:
            loop.stop()

    loop.run(record)
    return infos


def test_cycles_follow_the_grid_without_drift() -> None:
    fake = FakeTime()
    loop = RateLoop(500.0, fake.clock, sleep=fake.sleep)
    infos = run(loop, fake, lambda info: None, 100)
    assert [i.index for i in infos] == list(range(100))
    origin = infos[0].deadline_ns
    assert all(info.deadline_ns == origin + info.index * 2_000_000 for info in infos)
    assert all(info.start_ns - info.deadline_ns == 20_000 for info in infos[1:])
    stats = loop.stats()
    assert stats.cycles == 100 and stats.skipped == 0
    assert abs(stats.period_mean - 0.002) < 1e-6 and stats.lag_max == 20e-6


def test_an_overrun_skips_cycles_and_the_lag_stays_under_a_period() -> None:
    fake = FakeTime()
    loop = RateLoop(1000.0, fake.clock, sleep=fake.sleep)

    def step(info: CycleInfo) -> None:
        if info.index == 10:
            fake.now += 20_500_000  # one cycle takes 20.5 periods

    infos = run(loop, fake, step, 30)
    assert loop.skipped == 20
    assert infos[11].index == 31  # the next cycle runs on the grid, not late
    assert max(info.start_ns - info.deadline_ns for info in infos) < loop.period_ns
    assert loop.stats().skipped == 20


def test_real_time_request_and_real_clock() -> None:
    loop = RateLoop(1000.0, priority=0)
    thread = threading.Thread(target=loop.run, args=(lambda info: None,))
    thread.start()
    time.sleep(0.05)
    loop.stop()
    thread.join(5)
    assert loop.cycles > 0 and loop.scheduling.startswith("normal")
    assert RateLoop(1000.0, priority=10).scheduling == "not started"


def test_rate_must_be_positive() -> None:
    try:
        RateLoop(0.0)
    except ValueError as error:
        assert "above 0" in str(error)
    else:
        raise AssertionError("RateLoop(0) accepted")

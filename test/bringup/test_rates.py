"""RateCounter: rates from known arrival times."""

from __future__ import annotations

import threading

import pytest

from bb_robot.bringup.rates import RateCounter


def test_a_steady_stream_gives_its_frequency() -> None:
    counter = RateCounter(window=2.0)
    for i in range(301):  # 100 Hz for 3 s
        counter.add(10.0 + i * 0.01)
    assert counter.rate(13.0) == pytest.approx(100.0)
    assert counter.total == 301


def test_the_window_forgets_old_messages() -> None:
    counter = RateCounter(window=1.0)
    for i in range(11):  # 10 Hz for 1 s, then silence
        counter.add(i * 0.1)
    assert counter.rate(1.0) == pytest.approx(10.0)
    for i in range(5):  # 50 Hz burst later
        counter.add(5.0 + i * 0.02)
    assert counter.rate(5.08) == pytest.approx(50.0)
    assert counter.rate(7.0) == 0.0  # the burst is older than the window


def test_fewer_than_two_messages_give_zero() -> None:
    counter = RateCounter()
    assert counter.rate(0.0) == 0.0
    counter.add(1.0)
    assert counter.rate(1.5) == 0.0


def test_an_irregular_stream_gives_its_mean_rate() -> None:
    counter = RateCounter(window=10.0)
    stamps = [0.0, 0.1, 0.15, 0.45, 0.5, 1.0]
    for stamp in stamps:
        counter.add(stamp)
    assert counter.rate(1.0) == pytest.approx(5 / 1.0)


def test_adding_from_threads_counts_every_message() -> None:
    counter = RateCounter(window=1000.0)

    def add(offset: float) -> None:
        for i in range(1000):
            counter.add(offset + i * 0.001)

    threads = [threading.Thread(target=add, args=(k * 0.0001,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.total == 4000


def test_a_window_must_be_positive() -> None:
    with pytest.raises(ValueError):
        RateCounter(window=0.0)

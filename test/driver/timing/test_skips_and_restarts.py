"""Skipped cycles as count, share and recent share (warning only above 1 % in the last 10 s), and
the respawn counter a restarted driver reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bb_robot.driver.state.restarts import record_start
from bb_robot.driver.timing.skips import RECENT_WINDOW, SkipWindow, rate_advice


def test_a_few_skipped_cycles_are_figures_not_a_warning() -> None:
    window = SkipWindow()
    figures = window.add(0.0, 500, 9, rate=500.0)  # the demo's "9 cycles skipped" at start-up
    assert figures.skipped == 9 and figures.share == pytest.approx(9 / 509)
    assert figures.recent_share == pytest.approx(9 / 5000) and not figures.warn  # of a whole window's cycles
    assert SkipWindow().add(0.0, 500, 9).warn  # without the rate: 1.8 % of the cycles observed
    for second in range(1, 12):
        figures = window.add(float(second), 500 + 500 * second, 9)
    assert figures.recent_skipped == 0 and figures.recent_share == 0.0 and not figures.warn
    assert "9 cycles skipped since activation" in figures.describe()
    assert f"0 in the last {RECENT_WINDOW:g} s" in figures.describe()


def test_more_than_one_percent_in_the_last_ten_seconds_warns() -> None:
    window = SkipWindow()
    cycles = skipped = 0
    for second in range(30):
        cycles += 495 if 20 <= second < 25 else 500
        skipped += 5 if 20 <= second < 25 else 0  # exactly 1 %: no warning
        figures = window.add(float(second), cycles, skipped)
        assert not figures.warn, (second, figures)
    # 40 more in one second: with the 4 x 5 of seconds 21-24, 60 of the last 10 s's 5000 (1.2 %)
    figures = window.add(30.0, cycles + 460, skipped + 40)
    assert figures.warn and figures.recent_skipped == 60
    for second in range(31, 42):
        figures = window.add(float(second), cycles + 460 + 500 * (second - 30), skipped + 40)
    assert not figures.warn  # out of the window again


def test_a_new_activation_starts_afresh() -> None:
    window = SkipWindow()
    window.add(0.0, 10000, 500)
    figures = window.add(1.0, 500, 0)
    assert figures.skipped == 0 and not figures.warn


def test_the_first_start_under_a_parent_is_not_a_restart_the_next_ones_are(tmp_path: Path) -> None:
    parent = os.getpid()
    assert record_start("/arm/driver", parent, tmp_path) == 0
    assert record_start("/arm/driver", parent, tmp_path) == 1
    assert record_start("/arm/driver", parent, tmp_path) == 2
    assert record_start("/other/driver", parent, tmp_path) == 0  # another node
    # Another parent process (another launch): a first start again.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert record_start("/arm/driver", child.pid, tmp_path) == 0
    finally:
        child.kill()
        child.wait()


def test_an_unwritable_directory_counts_as_a_first_start(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "dir"
    assert record_start("/driver", os.getpid(), missing) == 0
    assert record_start("/driver", os.getpid(), missing) == 0


# ------------------------------------------------------------------ rate advice
def test_a_comfortable_loop_gets_no_advice() -> None:
    # 0.2 ms per cycle at 500 Hz: 10 % of a CPU; 1 % skipped (start-up).
    assert rate_advice(500.0, 0.0002, 0.01) is None


def test_a_slow_machine_is_told_its_cycle_time_and_a_lower_rate() -> None:
    # The slow host of issue 33 under load: about 1 ms per cycle at 500 Hz.
    advice = rate_advice(500.0, 0.00096, 0.0)
    assert advice is not None
    assert "0.96 ms" in advice and "at 500 Hz that is 48 % of one CPU, 52 % left for the rest" in advice
    # The highest offered rate whose cycle takes at most a quarter of its period: 250 Hz would be 24 %.
    assert advice.endswith("rate: 250 would leave 76 %")


def test_skipped_cycles_alone_are_said_with_their_share() -> None:
    advice = rate_advice(500.0, 0.0003, 0.2)
    assert advice is not None and "20 % of the cycles were skipped" in advice


def test_no_lower_rate_is_offered_when_none_would_leave_enough() -> None:
    advice = rate_advice(10.0, 0.05, 0.0)  # 50 ms per cycle: even 10 Hz is half a CPU
    assert advice is not None and "rate:" not in advice

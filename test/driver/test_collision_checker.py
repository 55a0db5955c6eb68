"""The collision checker in a process of its own (bb_robot.driver.collision_checker): a real child process,
real pipes.

It measures what the guard measures in its own process; streamed motion through it stops short of
the post; and when it is killed, frozen, or cannot start, streamed motion stops and the guard says
why.  When the driver dies, it ends too.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.collision_cell import ARM, OUT, Cell, make_cell
from helpers.driver_rig import PERIOD_NS
from helpers.processes import ended, wait_until_ended

from bb_robot.driver.collision_checker import (
    CheckerError,
    CheckerProcess,
    Measurement,
    Measurer,
    heading_format,
    pack_verdict,
    serve,
    unpack_verdict,
)
from bb_robot.driver.collision_guard import LATE_AFTER

TOWARDS_POST = [-math.pi / 2, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0]


@pytest.fixture
def cell(tmp_path: Path) -> Cell:
    return make_cell(tmp_path)


def live(cell: Cell, seconds: float) -> None:
    """Run the loop in real time (each cycle then a period's sleep), the checker process answering as it does."""
    for _ in range(int(round(seconds * 1e9 / PERIOD_NS))):
        cell.clock.now = cell.core.run_cycles(1, PERIOD_NS, cell.clock.now)
        time.sleep(PERIOD_NS * 1e-9)


def test_the_process_measures_what_this_process_measures(cell: Cell) -> None:
    measurer = Measurer(cell.guard.model, cell.joints, cell.guard.settings)
    checker = CheckerProcess(measurer)
    checker.start()
    try:
        rng = np.random.default_rng(7)
        headings = [(np.array(OUT), np.array(TOWARDS_POST))]
        for pan in np.linspace(-math.pi / 2 + 0.05, -math.pi / 2 + 0.4, 8):  # at the post, near it, clear of it
            at = np.array([pan, -math.pi / 2, 0, 0, 0, 0, 0])
            headings.append((at, at - [0.05, 0, 0, 0, 0, 0, 0]))
        headings += [(rng.uniform(-2, 2, 7), rng.uniform(-2, 2, 7)) for _ in range(12)]
        for stamp, (position, target) in enumerate(headings, start=1):
            assert checker.send(stamp, position, target)
            deadline = time.monotonic() + 20.0
            answer = None
            while answer is None or answer[0] != stamp:
                assert time.monotonic() < deadline, f"no verdict for heading {stamp}"
                answer = checker.receive() or answer
                time.sleep(0.001)
            here = measurer.measure(position, target)
            assert answer[1] == here, (stamp, answer, here)
        assert any(m.pair >= 0 for m in [measurer.measure(p, t) for p, t in headings])
        assert any(measurer.measure(p, t).scale < 1.0 for p, t in headings)
    finally:
        checker.close()


def test_streamed_motion_through_the_process_stops_short_of_the_post(cell: Cell) -> None:
    cell.guard.start()
    try:
        cell.command(TOWARDS_POST)
        distances = []
        for _ in range(60):  # 3 s
            live(cell, 0.05)
            distances.append(cell.distance())
        assert min(distances) >= 0.02 - 0.005, "stopped short of the stop distance (within the braking of a cycle)"
        assert distances[-1] < 0.08, "it did approach"
        verdict = cell.guard.verdict
        assert verdict is not None and verdict.nearest is not None and "world/post" in verdict.nearest.links
        level, message, values = cell.guard.diagnostics(cell.clock.now)
        assert level == "warn" and "world/post" in message and values["checker"] == f"process {cell.guard.checker_pid}"
    finally:
        cell.guard.stop()
    assert cell.guard.checker_pid is None


def test_a_killed_checker_stops_streamed_motion_and_says_so(cell: Cell) -> None:
    cell.guard.start()
    pid = cell.guard.checker_pid
    assert pid is not None
    try:
        live(cell, 0.1)
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        before = cell.positions.copy()
        cell.command([0.5, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0])  # away from everything: free to move
        live(cell, 0.5)
        np.testing.assert_allclose(cell.positions, before, atol=1e-6)
        level, message, _ = cell.guard.diagnostics(cell.clock.now)
        assert level == "error" and f"collision checker process (pid {pid}) exited" in message, message
        assert any("collision checker failed" in text and str(pid) in text for _, text in cell.logs), cell.logs
    finally:
        cell.guard.stop()


def test_a_frozen_checker_stops_streamed_motion_until_it_answers_again(cell: Cell) -> None:
    cell.guard.start()
    pid = cell.guard.checker_pid
    assert pid is not None
    try:
        cell.command([0.8, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0])  # away from everything
        live(cell, 0.2)
        os.kill(pid, signal.SIGSTOP)
        live(cell, LATE_AFTER + 0.1)
        held = cell.positions.copy()
        live(cell, 0.2)
        np.testing.assert_allclose(cell.positions, held, atol=1e-3)
        level, message, _ = cell.guard.diagnostics(cell.clock.now)
        assert level == "warn" and "checker late" in message, message
        os.kill(pid, signal.SIGCONT)
        live(cell, 0.3)
        assert cell.positions[0] > held[0] + 0.05, "moving again once it answers"
        level, message, _ = cell.guard.diagnostics(cell.clock.now)
        assert level == "ok", message
    finally:
        os.kill(pid, signal.SIGCONT)
        cell.guard.stop()


def test_the_checker_ends_when_the_driver_is_killed() -> None:
    script = (
        "import sys, time\n"
        "from bb_robot.loading import load_file\n"
        "from bb_robot.collision.sources import collision_model\n"
        "from bb_robot.driver.collision_checker import CheckerProcess, GuardSettings, Measurer\n"
        "from bb_robot.driver.model import driven_joints\n"
        f"loaded = load_file({str(ARM)!r})\n"
        "checker = CheckerProcess(Measurer(collision_model(loaded), driven_joints(loaded.robot), GuardSettings()))\n"
        "checker.start()\n"
        "print(checker.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ARM.parents[1]), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert driver.stdout is not None
        pid = int(driver.stdout.readline())
        assert not ended(pid)
    finally:
        driver.kill()
        driver.wait()
    wait_until_ended(pid, "the collision checker of a killed driver")


def test_the_checker_ends_quietly_when_the_driver_closes_its_verdicts(cell: Cell) -> None:
    """A driver that stops closes the verdict pipe while a heading is on its way: exit 0, no traceback.

    ``serve`` runs on real pipes, in a thread of this process, as it runs in the checker process.
    """
    measurer = Measurer(cell.guard.model, cell.joints, cell.guard.settings)
    source_read, source_write = os.pipe()
    sink_read, sink_write = os.pipe()
    ended_with: list[object] = []

    def checker() -> None:
        try:
            ended_with.append(serve(source_read, sink_write))
        except BaseException as error:  # noqa: BLE001 - what the checker process would die of
            ended_with.append(error)

    thread = threading.Thread(target=checker, daemon=True)
    thread.start()
    try:
        payload = pickle.dumps(measurer, protocol=pickle.HIGHEST_PROTOCOL)
        os.write(source_write, struct.pack("<Q", len(payload)) + payload)
        ready, size = b"", len(pack_verdict(0, None))
        while len(ready) < size:
            ready += os.read(sink_read, size - len(ready))
        assert unpack_verdict(ready)[2] == ""
        os.close(sink_read)  # the driver stops: it closes the verdicts first
        heading = heading_format(len(cell.joints)).pack(1, *OUT, *TOWARDS_POST)
        os.write(source_write, heading)
        thread.join(20.0)
        assert ended_with == [0], ended_with  # before: BrokenPipeError, a traceback in the driver's log
    finally:
        os.close(source_write)
        thread.join(20.0)
        os.close(source_read)
        os.close(sink_write)


class Unreadable(Measurer):
    """A measurer the checker process cannot unpickle (its class lives in this test module)."""

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Unreadable, (self.model, self.joints, self.settings))


def test_a_checker_that_cannot_build_its_model_fails_start_saying_why(cell: Cell) -> None:
    checker = CheckerProcess(Unreadable(cell.guard.model, cell.joints, cell.guard.settings))
    with pytest.raises(CheckerError) as failed:
        checker.start()
    text = str(failed.value)
    assert "could not build the collision model" in text and "test_collision_checker" in text, text
    assert checker.pid is None


def test_the_records() -> None:
    measured = Measurement(3, 0.0125, 0.01, 0.25)
    assert unpack_verdict(pack_verdict(42, measured)) == (42, measured, "")
    stamp, found, failure = unpack_verdict(pack_verdict(7, None, "ValueError('x')" * 40))
    assert (stamp, found) == (7, None) and failure.startswith("ValueError('x')") and len(failure) <= 216
    assert heading_format(7).size == 8 + 14 * 8
    with pytest.raises(CheckerError, match="driver joints, not 300"):
        heading_format(300)

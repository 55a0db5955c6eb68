"""The collision checker in a process of its own (bb_robot.driver.guard.collision_checker): a real child process,
real pipes.

It measures what the guard measures in its own process; streamed motion through it stops short of
the post; when it is frozen, or cannot start, streamed motion stops and the guard says why; when it
is killed, it is restarted (at most once a second and five times a minute), streamed motion waiting
for the new one's first verdict.  When the driver dies, it ends too.
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
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers.collision_cell import ARM, OUT, Cell, make_cell
from helpers.driver_rig import PERIOD_NS
from helpers.processes import ended, wait_until_ended

from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.errors import TrajectoryRejected
from bb_robot.driver.guard.collision_checker import (
    START_TIMEOUT,
    CheckerError,
    CheckerProcess,
    Measurement,
    Measurer,
    RestartBudget,
    heading_format,
    pack_verdict,
    serve,
    unpack_verdict,
)
from bb_robot.driver.guard.collision_guard import LATE_AFTER

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


#: Panned to -1 rad, towards the post but not within the slowdown distance of anything: a streamed motion.
SWING = [-1.0, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0]
PAN = 0
SECOND = 1_000_000_000


def live_until(cell: Cell, done: Callable[[], bool], what: str, each: Callable[[], None] | None = None) -> None:
    """Run the loop in real time, a cycle at a time, until ``done()`` (``each()`` after every cycle).

    Bounded: it fails naming ``what`` after ``START_TIMEOUT`` (what a checker may take to start), a bound
    on the wait, not a measure of anything.
    """
    deadline = time.monotonic() + START_TIMEOUT
    while not done():
        assert time.monotonic() < deadline, f"{what}: not within {START_TIMEOUT:g} s"
        live(cell, PERIOD_NS * 1e-9)
        if each is not None:
            each()


def wait_until_wholly_ended(pid: int) -> None:
    """Wait until process ``pid`` has ended with all its threads: only then are its pipes closed (its first
    thread turns zombie while the others may still be closing them)."""
    deadline = time.monotonic() + 10.0
    while True:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields["State"].strip().startswith("Z") and fields["Threads"].strip() == "1":
            return
        assert time.monotonic() < deadline, f"the killed collision checker (pid {pid}) still runs after 10 s"
        time.sleep(0.001)


def test_the_restart_budget_allows_one_restart_a_second_and_five_a_minute() -> None:
    now = [0]
    budget = RestartBudget(lambda: now[0])
    assert budget.decide() == "now"
    for count in range(1, 6):
        assert budget.spend() == count
        assert budget.decide() == ("later" if count < 5 else "never"), "within a second of the last"
        now[0] += SECOND - 1
        assert budget.decide() == ("later" if count < 5 else "never")
        now[0] += 1
        assert budget.decide() == ("now" if count < 5 else "never"), "a second after the last"
    now[0] += 55 * SECOND - 1
    assert budget.decide() == "never", "five within the minute"
    now[0] += 1
    assert budget.decide() == "now", "the first of them is a minute old"
    assert budget.spend() == 5
    now[0] += 60 * SECOND
    assert budget.decide() == "now"
    budget.spend()
    assert budget.decide() == "later"
    budget.reset()
    assert budget.decide() == "now"


def test_a_killed_checker_is_restarted_and_motion_waits_for_its_first_verdict(cell: Cell) -> None:
    """A checker killed during a streamed motion is restarted; from the cycle that finds it dead to the new
    checker's first verdict, the joints stay where they are and trajectories are refused; the motion then
    resumes.  At most one restart a second; the sixth death within a minute leaves the guard down, until it
    is stopped and started again (the driver deactivated and activated).
    """
    restarts_clock = [0]  # the restarts' own clock, advanced by hand: a second between two deaths
    cell.guard.restart_budget.clock = lambda: restarts_clock[0]
    step = float(cell.core.limits.velocity[PAN]) * PERIOD_NS * 1e-9  # the most a joint moves in a cycle
    cell.guard.start()
    try:
        cell.command(SWING)
        for kill in range(1, 7):
            pid = cell.guard.checker_pid
            assert pid is not None
            moving_from = float(cell.positions[PAN])
            live_until(cell, lambda f=moving_from: cell.positions[PAN] < f - 0.05, f"moving before kill {kill}")
            before = cell.positions.copy()
            os.kill(pid, signal.SIGKILL)
            wait_until_wholly_ended(pid)
            if kill != 4:
                restarts_clock[0] += SECOND
            live(cell, PERIOD_NS * 1e-9)  # the cycle that finds it dead: it stops streamed motion
            held = cell.positions.copy()
            assert np.abs(held - before).max() <= step + 1e-12, "the command of the cycle before the kill, no more"
            assert cell.guard.unavailable, f"kill {kill}: the cycle after the process ended finds it dead"

            def still(held: np.ndarray = held) -> None:
                """The joints where they were, and commanded there, unless this cycle brought the first verdict."""
                np.testing.assert_array_equal(cell.positions, held)
                desired = cell.core.snapshot.desired
                assert desired is not None
                if cell.guard.verdict is None:
                    np.testing.assert_array_equal(desired, held)

            still()
            if kill == 6:
                break
            with pytest.raises(TrajectoryRejected, match="collision checker restarts") as refused:
                cell.core.prepare_trajectory(cell.joints, [TrajectoryPoint(1.0, list(held))])
            assert f"pid {pid}" in refused.value.reason, refused.value.reason
            level, message, _ = cell.guard.diagnostics(cell.clock.now)
            assert level == "warn" and f"pid {pid}" in message and "trajectories are refused" in message, message
            if kill == 4:  # a second has not passed since restart 3: the restart waits, the joints with it
                for _ in range(25):
                    live(cell, PERIOD_NS * 1e-9)
                    still()
                assert cell.guard.restart_count == 3
                level, message, values = cell.guard.diagnostics(cell.clock.now)
                assert level == "warn" and "restart due" in message, message
                restarts_clock[0] += SECOND
            live_until(cell, lambda: cell.guard.verdict is not None, f"the first verdict after kill {kill}", still)
            new = cell.guard.checker_pid
            assert new is not None and new != pid and not ended(new)
            assert cell.guard.restart_count == kill
            level, message, values = cell.guard.diagnostics(cell.clock.now)
            assert level != "error" and "checker" not in message and "refused" not in message, message  # its verdict's
            assert values["checker restarts"] == kill and values["checker"] == f"process {new}"
            restart = str(values[f"checker restart {kill}"])
            assert f"(pid {pid}) exited with code -9" in restart and f"restarted as process {new}" in restart, restart
            cell.core.prepare_trajectory(cell.joints, [TrajectoryPoint(1.0, list(held))])  # accepted again
        # The sixth death within a minute: the guard stays down, also once the minute has passed.
        restarts_clock[0] += 60 * SECOND
        for _ in range(25):
            live(cell, PERIOD_NS * 1e-9)
            still()
        assert cell.guard.restart_count == 5 and cell.guard.verdict is None
        level, message, values = cell.guard.diagnostics(cell.clock.now)
        assert level == "error" and "guard down" in message and "after 5 restarts within a minute" in message, message
        assert f"pid {pid}" in message and "deactivate and activate" in message, message
        with pytest.raises(TrajectoryRejected, match="collision guard: down"):
            cell.core.prepare_trajectory(cell.joints, [TrajectoryPoint(1.0, list(held))])
        assert any(level == "error" and "collision guard down" in text for level, text in cell.logs), cell.logs
        # Deactivated and activated: a new checker, and motion.
        cell.guard.stop()
        cell.guard.start()
        assert cell.guard.restart_count == 0 and not cell.guard.unavailable
        live_until(cell, lambda: cell.positions[PAN] < held[PAN] - 0.05, "moving after a new activation")
    finally:
        cell.guard.stop()
    assert cell.guard.checker_pid is None


def test_a_frozen_checker_stops_streamed_motion_until_it_answers_again(cell: Cell) -> None:
    cell.guard.start()
    pid = cell.guard.checker_pid
    assert pid is not None
    try:
        cell.command([0.8, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0])  # away from everything
        live(cell, 0.05)
        os.kill(pid, signal.SIGSTOP)
        live(cell, LATE_AFTER + 0.1)
        held = cell.positions.copy()
        assert held[0] < 0.8 - 0.1, "stopped short of the target, with room to move on"
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
        "from bb_robot.driver.guard.collision_checker import CheckerProcess, GuardSettings, Measurer\n"
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


def test_a_robot_with_mesh_collision_geometry_is_measured_by_the_process_as_here() -> None:
    # The shipped SO-101 (models/so101: every link's collision geometry an STL): coal cannot pickle
    # a mesh's convex hull itself, and the checker process learns its measurer as a pickle.
    from bb_robot.collision.sources import collision_model
    from bb_robot.driver.guard.collision_checker import GuardSettings
    from bb_robot.driver.model import driven_joints
    from bb_robot.loading import load_file

    loaded = load_file(str(ARM.parents[1] / "models" / "so101" / "so101_new_calib.urdf"))
    model = collision_model(loaded)
    assert any(type(part.hull).__name__ == "ConvexBase" for part in model.parts)
    joints = driven_joints(loaded.robot)
    measurer = Measurer(model, joints, GuardSettings())
    checker = CheckerProcess(measurer)
    checker.start()
    try:
        rng = np.random.default_rng(3)
        n = len(joints)
        headings = [(rng.uniform(-1.5, 1.5, n), rng.uniform(-1.5, 1.5, n)) for _ in range(10)]
        for stamp, (position, target) in enumerate(headings, start=1):
            assert checker.send(stamp, position, target)
            deadline = time.monotonic() + 30.0
            answer = None
            while answer is None or answer[0] != stamp:
                assert time.monotonic() < deadline, f"no verdict for heading {stamp}"
                answer = checker.receive() or answer
                time.sleep(0.001)
            got, here = answer[1], measurer.measure(position, target)
            # the hull rebuilt from its vertices is the same polytope; GJK and EPA may differ in the last bits
            assert got is not None and (got.pair, got.generation) == (here.pair, here.generation), stamp
            for name in ("distance", "ahead", "scale"):
                assert getattr(got, name) == pytest.approx(getattr(here, name), abs=1e-6), (stamp, name)
        assert any(measurer.measure(p, t).pair >= 0 for p, t in headings)  # some headings meet something
    finally:
        checker.close()

"""The two paths that do not wait for a control cycle: immediate commands (written by the thread
that submits them) and sample watching (every new sample handed to a listener, from the
backend's own thread where it has one, else from the loop thread after each cycle)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers.driver_rig import JOINTS, PERIOD_NS, arm_limits, arm_robot, make_rig

from bb_robot.driver.backends.base import BackendCommand, BackendContext, JointSample
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands.commands import CommandMode, CommandValidator
from bb_robot.driver.core import CoreSettings, DriverCore

#: A loop this slow cannot be what writes a command within the test's few milliseconds.
SLOW_RATE = 0.5


class RecordingSim(SimBackend):
    """The simulator, remembering which thread wrote which j1 position target."""

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.writes: list[tuple[str, float]] = []

    def write(self, command: BackendCommand, now_ns: int) -> None:
        super().write(command, now_ns)
        self.writes.append((threading.current_thread().name, float(command.position[0])))


class ReceivingSim(SimBackend):
    """The simulator whose samples also "arrive" on a thread of its own (as Gazebo's do)."""

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.listener: Callable[[JointSample], None] | None = None

    def watch_samples(self, listener: Callable[[JointSample], None] | None) -> bool:
        self.listener = listener
        return True

    def arrive(self, sample: JointSample) -> None:
        if self.listener is not None:
            self.listener(sample)


def started_core(
    backend_class: type[SimBackend], settings: CoreSettings, priority: int = 0
) -> tuple[DriverCore, Any, CommandValidator]:
    limits = arm_limits()
    backend = backend_class(BackendContext(arm_robot(), JOINTS, limits, SLOW_RATE, logging.getLogger("t")))
    backend.connect(1.0)
    core = DriverCore(backend, limits, settings, armed=True)
    core.start(SLOW_RATE, priority)
    deadline = time.monotonic() + 10.0
    while core.snapshot.cycle < 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert core.snapshot.cycle >= 1, "the loop did not run its first cycle"
    validator = CommandValidator(limits, backend.capabilities.modes, backend="sim")
    return core, backend, validator


def submit_position(core: DriverCore, validator: CommandValidator, j1: float) -> None:
    core.submit(validator.from_array(CommandMode.POSITION, [j1, 0.0, 0.1], "/test", time.monotonic_ns()))


def test_an_immediate_command_is_written_by_the_thread_that_submits_it() -> None:
    core, backend, validator = started_core(RecordingSim, CoreSettings(command_timeout=0.0, immediate_commands=True))
    try:
        cycles = core.snapshot.cycle
        submit_position(core, validator, 0.7)
        # Written before submit returned, by this thread (a cycle would write from the loop's).
        assert (threading.current_thread().name, 0.7) in backend.writes
        latency = core.command_latency()
        assert latency is not None and latency[2] > 0
        # The loop keeps sending it.
        deadline = time.monotonic() + 10.0
        while core.snapshot.cycle == cycles and time.monotonic() < deadline:
            time.sleep(0.005)
        assert ("bb_robot-driver-loop", 0.7) in backend.writes
    finally:
        core.stop(settle_timeout=0.1)


def test_without_immediate_commands_the_loop_writes_the_command() -> None:
    core, backend, validator = started_core(RecordingSim, CoreSettings(command_timeout=0.0))
    try:
        submit_position(core, validator, 0.7)
        deadline = time.monotonic() + 10.0
        while ("bb_robot-driver-loop", 0.7) not in backend.writes and time.monotonic() < deadline:
            time.sleep(0.005)
        assert ("bb_robot-driver-loop", 0.7) in backend.writes
        mine = threading.current_thread().name
        assert all(thread != mine for thread, _ in backend.writes)  # only the loop writes
    finally:
        core.stop(settle_timeout=0.1)


def test_an_immediate_command_is_refused_like_any_other() -> None:
    core, backend, validator = started_core(RecordingSim, CoreSettings(command_timeout=0.0, immediate_commands=True))
    try:
        core.disarm("test")
        with pytest.raises(Exception, match="disarmed"):
            submit_position(core, validator, 0.7)
        assert all(value != 0.7 for _, value in backend.writes)
    finally:
        core.stop(settle_timeout=0.1)


def test_a_backend_read_by_the_loop_has_its_samples_passed_on_after_each_cycle() -> None:
    rig = make_rig()
    seen: list[tuple[int, bool, tuple[str, ...], str]] = []
    rig.core.watch_samples(
        lambda sample, all_seen, stale: seen.append((sample.stamp_ns, all_seen, stale, threading.current_thread().name))
    )
    assert not rig.core.samples_from_backend
    before = rig.clock.now
    rig.run(10 * PERIOD_NS * 1e-9)
    assert len(seen) == 10
    assert [stamp for stamp, *_ in seen] == [before + k * PERIOD_NS for k in range(10)]
    assert all(all_seen and stale == () for _, all_seen, stale, _ in seen)
    rig.core.watch_samples(None)
    rig.run(5 * PERIOD_NS * 1e-9)
    assert len(seen) == 10


def test_a_backend_with_its_own_thread_passes_its_samples_on_as_they_arrive() -> None:
    core, backend, _ = started_core(ReceivingSim, CoreSettings(command_timeout=0.0, stale_timeout=0.05))
    seen: list[tuple[JointSample, bool, tuple[str, ...], str]] = []
    try:
        core.watch_samples(
            lambda sample, all_seen, stale: seen.append((sample, all_seen, stale, threading.current_thread().name))
        )
        assert core.samples_from_backend and backend.listener is not None
        # Stamps a minute ahead are fresh and 1000 s behind (or at 1 ns, on a machine up for less
        # than that: 0 would mean never reported) are stale however late this thread runs
        # (stale_timeout 0.05 s): the outcome does not depend on the machine's load.
        now = time.monotonic_ns()
        ahead, behind = now + 60_000_000_000, max(now - 1_000_000_000_000, 1)
        fresh = JointSample(np.array([0.1, 0.2, 0.3]), np.zeros(3), None, np.array([ahead, ahead, ahead]), now)
        old = JointSample(np.zeros(3), np.zeros(3), None, np.array([ahead, behind, 0]), now)
        for sample in (fresh, old):
            thread = threading.Thread(target=backend.arrive, args=(sample,), name="bus-reader")
            thread.start()
            thread.join()
        assert [(s, a, st, t) for s, a, st, t in seen] == [
            (fresh, True, (), "bus-reader"),
            (old, False, ("j2",), "bus-reader"),
        ]
    finally:
        core.stop(settle_timeout=0.1)
    assert backend.listener is None  # stopping the loop drops the listener


def test_a_thread_passing_samples_on_gets_real_time_priority_with_the_loop() -> None:
    core, backend, _ = started_core(ReceivingSim, CoreSettings(command_timeout=0.0), priority=10)
    policies: list[int] = []
    try:
        if not core.scheduling.startswith("SCHED_FIFO"):
            pytest.skip(f"real-time scheduling is not permitted here: {core.scheduling}")
        core.watch_samples(lambda sample, all_seen, stale: policies.append(os.sched_getscheduler(0)))
        now = time.monotonic_ns()
        sample = JointSample(np.zeros(3), np.zeros(3), None, np.array([now, now, now]), now)
        thread = threading.Thread(target=backend.arrive, args=(sample,), name="bus-reader")
        thread.start()
        thread.join()
        assert policies == [os.SCHED_FIFO]
        assert os.sched_getscheduler(0) == os.SCHED_OTHER  # this thread was not touched
    finally:
        core.stop(settle_timeout=0.1)


def test_a_failing_listener_is_logged_and_does_not_stop_the_loop() -> None:
    rig = make_rig()

    def broken(sample: JointSample, all_seen: bool, stale: tuple[str, ...]) -> None:
        raise RuntimeError("subscriber gone")

    rig.core.watch_samples(broken)
    cycles = rig.core.snapshot.cycle
    rig.run(3 * PERIOD_NS * 1e-9)
    assert rig.core.snapshot.cycle == cycles + 3
    assert rig.logged("the joint-state listener failed: RuntimeError('subscriber gone')")

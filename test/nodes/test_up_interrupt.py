"""A Ctrl-C at any stage of ``bb-robot up`` ends every process cleanly (issue 33).

``bb-robot up --demo-cartesian`` runs as real processes (the command from this source tree, the
launch, the installed nodes, the driver's collision checker process); SIGINT goes to the
command's process group, as a terminal sends it, once the stage is reached, each stage waited for
by its own line (the command's output, or the launch output the nodes write to), never by a sleep:

- ``starting``: the launch has just started the nodes (they are importing their modules);
- ``configuring``: the driver read its allowed-collision matrix (its numba kernels load next);
- ``activating``: the driver logged that it is configured (its activation, with the collision
  checker process's start, comes next, in the same callback);
- ``armed``: the driver is armed (the demo searches its ready pose);
- ``demo``: the tool draws its circle (100 pose commands a second through the driver).

Each time: exit status 0, "interrupted: shutting down", no ``[FATAL]`` line, no Python traceback
and no ``KeyboardInterrupt`` in the output or in the launch output, every node "finished cleanly"
(no "process has died", no SIGTERM needed), and no process left (every pid seen below the
command, the checker process included, has ended).  Before the fix, the activation case ended
with ``[FATAL] [driver]: Exception in 'timers' callback`` and the traceback from the checker's
start; the starting case with two ``KeyboardInterrupt`` tracebacks and "process has died".
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from helpers.bringup_helpers import Launched, require_launch, up_command

pytestmark = pytest.mark.timeout(300)

#: Generous: a busy 2-core machine (the stages take seconds there, the shutdown too).
TIMEOUT = 120.0
#: What no clean shutdown prints.
UNCLEAN = ("FATAL", "Traceback", "KeyboardInterrupt", "Error occurred at", "process has died", "'SIGTERM'")

#: stage → (where its line is: "output" or "launch", the line)
STAGES = {
    "starting": ("launch", "driver-2]: process started with pid"),
    "configuring": ("launch", "[driver]: allowed-collision matrix"),
    "activating": ("launch", "[driver]: configured:"),
    "armed": ("output", "driver armed"),
    "demo": ("output", "drawing a 5 cm circle"),
}


def _launch_log(run: Launched, timeout: float = TIMEOUT) -> Path:
    """The launch output of ``run``'s launch process (its standard output, read from /proc)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.watch()
        try:
            children = psutil.Process(run.process.pid).children(recursive=True)
        except psutil.Error:
            children = []
        for child in children:
            try:
                if "bb_robot.nodes.bringup_launch" in child.cmdline():
                    return Path(os.readlink(f"/proc/{child.pid}/fd/1"))
            except (psutil.Error, OSError):
                continue
        assert run.process.poll() is None, f"bb-robot up ended before it started the launch:\n{run.log()}"
        time.sleep(0.02)
    raise AssertionError(f"no launch process below {run.command} within {timeout} s:\n{run.log()}")


def _wait_until(run: Launched, reached: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not reached():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s:\n{run.log()}"
        assert run.process.poll() is None, f"{what}: bb-robot up ended first:\n{run.log()}"
        run.watch()
        time.sleep(0.02)


@pytest.mark.parametrize("stage", list(STAGES))
def test_ctrl_c_at_any_stage_ends_everything_cleanly(stage: str, tmp_path: Path) -> None:
    require_launch()
    run = Launched(up_command("--demo-cartesian", "--timeout", str(TIMEOUT)), tmp_path / "up.log")
    launch_log: list[Path] = []

    def launch_output() -> str:
        return launch_log[0].read_text(errors="replace") if launch_log and launch_log[0].exists() else ""

    try:
        launch_log.append(_launch_log(run))
        where, line = STAGES[stage]
        source = launch_output if where == "launch" else run.log
        _wait_until(run, lambda: line in source(), f"the stage '{stage}' ({line!r} in the {where} output)")
        run.interrupt(signal.SIGINT, group=True)
        status = run.wait(TIMEOUT)
    finally:
        left = run.stop()
    output, launched = run.log(), launch_output()
    report = f"--- bb-robot up:\n{output}\n--- launch output ({launch_log}):\n{launched}"
    assert status == 0, report
    assert "interrupted: shutting down" in output, report
    for text in UNCLEAN:
        assert text not in output and text not in launched, f"{text!r} after a Ctrl-C while {stage}:\n{report}"
    assert "had to end processes" not in output, report
    assert launched.count("process has finished cleanly") >= 2, report
    assert left == [], f"processes left running: {left}\n{report}"
    assert len(run.seen) >= 4, f"too few processes seen ({run.seen}): not the stage it says\n{report}"

"""``bb-robot up``'s watch of a driver process: lost when it ends, restarted when another runs; and the
process tree it reads, looked at once per :data:`~bb_robot.cli.up_process.SCAN_PERIOD` unless asked afresh."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from bb_robot.cli import up_process
from bb_robot.cli.up_process import DriverWatch, ProcessTree


def test_a_driver_lost_and_respawned_is_said_in_order() -> None:
    watch = DriverWatch()
    assert watch.update(None) is None  # not started yet: nothing to say
    assert watch.update(100) is None  # the first process
    assert watch.warnings() == ()
    event = watch.update(None)
    assert event == "driver lost: its process 100 ended" and watch.lost and watch.losses == 1
    assert watch.warnings() == ("driver lost: its process ended",)
    event = watch.update(200)
    assert event is not None and "driver restarted (process 200, restart 1)" in event and "disarmed" in event
    assert not watch.lost and watch.restarts == 1 and watch.losses == 1
    assert "restarted 1 time(s)" in watch.warnings()[0]
    assert watch.update(200) is None
    # Replaced without a gap seen in between: a restart too.
    assert watch.update(300) is not None and watch.restarts == 2


_LAUNCH = r"""
import os, subprocess, sys, time
# A node as launch_ros starts it, which forks a child that has not exec'd yet (it still shows the
# node's command line, as the driver's collision checker does for a moment at its start).
node = subprocess.Popen([sys.executable, "-c", '''
import os, sys, time
if os.fork() == 0:
    time.sleep(60)
    os._exit(0)
print("forked", flush=True)
time.sleep(60)
''', "--ros-args", "-r", "__node:=driver", "-r", "__ns:=/arm"], stdout=sys.stdout)
time.sleep(60)
"""


def test_a_process_a_node_forks_is_not_taken_for_the_node() -> None:
    launch = subprocess.Popen([sys.executable, "-c", _LAUNCH], stdout=subprocess.PIPE, text=True)
    try:
        assert launch.stdout is not None and launch.stdout.readline().strip() == "forked"
        watched = ProcessTree(launch.pid)
        root = psutil.Process(launch.pid)
        nodes = [p for p in root.children(recursive=True) if "__node:=driver" in p.cmdline()]
        assert len(nodes) == 2  # the node and its forked child, both with the node's command line
        node = next(p for p in nodes if p.ppid() == launch.pid)
        assert watched.node_pids("driver") == {"arm": node.pid}
        assert watched.node_pids("description") == {}
    finally:
        for process in psutil.Process(launch.pid).children(recursive=True):
            process.kill()
        launch.kill()
        launch.wait()


_STARTS_A_NODE_ON_A_LINE = r"""
import subprocess, sys, time
print("ready", flush=True)
sys.stdin.readline()
node = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--ros-args", "-r", "__node:=driver"])
print("started", flush=True)
time.sleep(60)
"""


def test_the_tree_is_looked_at_once_per_period_and_afresh_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(up_process, "SCAN_PERIOD", 3600.0)  # no second look but the asked-for one
    launch = subprocess.Popen(
        [sys.executable, "-c", _STARTS_A_NODE_ON_A_LINE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert launch.stdin is not None and launch.stdout is not None
        assert launch.stdout.readline().strip() == "ready"
        tree = ProcessTree(launch.pid)
        assert tree.node_pids("driver") == {}
        launch.stdin.write("go\n")
        launch.stdin.flush()
        assert launch.stdout.readline().strip() == "started"
        node = psutil.Process(launch.pid).children()[0]
        # Popen returns once the child's exec has begun; its command line shows a moment later.
        deadline = time.monotonic() + 30.0
        while "__node:=driver" not in node.cmdline():
            assert time.monotonic() < deadline, f"the child never showed its command line: {node.cmdline()}"
            time.sleep(0.01)
        assert tree.node_pids("driver") == {}  # the look from before it started
        assert tree.node_processes(fresh=True) == {node.pid: node.cmdline()}
        assert tree.node_pids("driver") == {"": node.pid}
    finally:
        for process in psutil.Process(launch.pid).children(recursive=True):
            process.kill()
        launch.kill()
        launch.wait()


def test_a_tree_whose_top_is_gone_has_no_processes() -> None:
    gone = psutil.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    tree = ProcessTree(gone.pid)
    assert tree.children(fresh=True) is None
    assert tree.node_processes() == {} and tree.node_pids("driver") == {}

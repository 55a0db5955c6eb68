"""Helpers of the bringup tests (test_bringup_launch.py, test_up.py): real launches, the real ``ros2``
command as an independent client, and checks that no process is left behind.

- :func:`require_launch` skips where ROS 2's launch and ``ros2`` are not installed, and FAILS
  under ``CI=true`` (there, scripts/setup must have installed them).
- :class:`Launched` runs ``ros2 launch bb_robot <file> ...`` (or ``bb-robot up ...``) in a
  process group of its own, as a terminal would, remembers every process below it, and stops it
  with SIGINT to the group (what Ctrl-C in a terminal does).
- :func:`ros2` runs the ``ros2`` command; :func:`ros2_until` repeats it until its output says
  what is expected (discovery takes a moment; no fixed sleeps).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Generous: CI machines are busy, and each ros2 call starts a Python process and waits for discovery.
TIMEOUT = 60.0


def require_launch() -> str:
    """The path of ``ros2``; skips (fails under ``CI=true``) when launch or ros2cli is missing."""
    missing = [m for m in ("launch_ros", "ros2launch", "ros2cli") if importlib.util.find_spec(m) is None]
    command = shutil.which("ros2")
    if command is None:
        missing.append("the ros2 command")
    if missing:
        message = f"not installed: {', '.join(missing)} (scripts/setup installs them from ../shared/third_party/ros2/)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    assert command is not None
    return command


def environment(**extra: str) -> dict[str, str]:
    """This test session's environment (domain id, log dir, discovery range), plus ``extra``."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
    env.update(extra)
    return env


class Launched:
    """A command that starts nodes (``ros2 launch``, ``bb-robot up``) in a process group of its own."""

    def __init__(self, command: Sequence[str], log_path: Path, env: dict[str, str] | None = None) -> None:
        self.command = list(command)
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            self.command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env or environment(),
            cwd=REPO_ROOT,
            start_new_session=True,
        )
        self.seen: dict[int, float] = {}
        self.watch()

    def running(self) -> bool:
        """Whether the command still runs (watching its processes first)."""
        self.watch()
        return self.process.poll() is None

    def watch(self) -> None:
        """Remember every process below the command now."""
        try:
            root = psutil.Process(self.process.pid)
            for process in [root, *root.children(recursive=True)]:
                self.seen.setdefault(process.pid, process.create_time())
        except psutil.Error:
            pass

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, text: str, timeout: float = TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.watch()
            log = self.log()
            if text in log:
                return log
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not in the output of {self.command} within {timeout} s:\n{self.log()}")

    def alive(self) -> list[int]:
        """The pids seen below the command that still run (not counting zombies)."""
        alive = []
        for pid, created in self.seen.items():
            try:
                process = psutil.Process(pid)
                if process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(pid)
            except psutil.Error:
                continue
        return alive

    def wait(self, timeout: float = TIMEOUT) -> int:
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self.watch()
            time.sleep(0.1)
        return self.process.wait(max(deadline - time.monotonic(), 0.1))

    def interrupt(self, sig: int = signal.SIGINT, group: bool = True) -> None:
        """Ctrl-C as a terminal sends it (to the whole group), or ``sig`` to the command alone."""
        self.watch()
        if self.process.poll() is None:
            if group:
                os.killpg(self.process.pid, sig)
            else:
                self.process.send_signal(sig)

    def stop(self) -> list[int]:
        """Interrupt, wait; returns the pids still running afterwards (then ends them: no leak)."""
        self.interrupt()
        try:
            self.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        deadline = time.monotonic() + 10
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = self.alive()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self._log.close()
        return left


def ros2(*args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run the real ``ros2`` command (this session's environment)."""
    return subprocess.run(
        [shutil.which("ros2") or "ros2", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment(),
        cwd=REPO_ROOT,
    )


#: Longest one ``ros2`` call of :func:`ros2_until` may take before it is given up and made again:
#: a call whose discovery went wrong (seen once in CI: an echo that heard nothing for 60 s) is
#: retried with a new process instead of using up the whole timeout.
ATTEMPT_TIMEOUT = 20.0


def ros2_until(args: Sequence[str], accept: Callable[[str], bool], what: str, timeout: float = TIMEOUT) -> str:
    """Repeat ``ros2 args`` until ``accept(stdout)``; returns that output."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        attempt = min(max(deadline - time.monotonic(), 5.0), ATTEMPT_TIMEOUT)
        try:
            result = ros2(*args, timeout=attempt)
        except subprocess.TimeoutExpired as expired:
            last = f"(no answer within {attempt:.0f} s; partial output: {expired.stdout!r} {expired.stderr!r})"
            continue
        last = result.stdout + result.stderr
        if accept(result.stdout):
            return result.stdout
        time.sleep(0.2)
    raise AssertionError(f"{what}: `ros2 {' '.join(args)}` never gave the expected answer; last:\n{last}")


def lifecycle_state(node: str, state: str, timeout: float = TIMEOUT) -> str:
    """Wait until ``ros2 lifecycle get <node>`` says ``state``."""
    return ros2_until(
        ["lifecycle", "get", node, "--no-daemon"],
        lambda out: out.strip().startswith(state),
        f"{node} {state}",
        timeout,
    )


def stop_daemon() -> None:
    """End the ros2 daemon that commands without ``--no-daemon`` (send_goal) start."""
    ros2("daemon", "stop", timeout=30)


def up_command(*args: str) -> list[str]:
    """``bb-robot up`` from this source tree (the launch and nodes run from the installed package)."""
    return [sys.executable, "-m", "bb_robot.cli", "up", *args]


def up_recording_joint_states(probe: Any, args: Sequence[str], log: Path) -> tuple[int, str, list[Any]]:
    """Run ``bb-robot up ARGS`` to its end while ``probe`` (a ``helpers.nodes.Probe``) keeps every
    /joint_states message; checks that it ended, that every message was taken (the last is the
    last published) and that no process was left behind.

    Returns:
        ``(exit status, output, joint states)``.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    states: list[Any] = []
    probe.node.create_subscription(
        JointState, "/joint_states", states.append, QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
    )
    run = Launched(up_command(*args), log)

    def ended() -> bool:
        run.watch()
        return run.process.poll() is not None

    assert probe.spin_until(ended, timeout=240), run.log()
    assert probe.spin_until_quiet(lambda: len(states)), f"joint states still arriving: {len(states)}"
    status = run.wait()
    output = run.log()
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"
    return status, output, states


@contextmanager
def launches(tmp_path: Path) -> Iterator[Callable[..., Launched]]:
    """``start(*ros2_launch_args, env=None)``: ``ros2 launch bb_robot ...``, each logged under
    ``tmp_path``; at the end all are stopped, each one's output printed (pytest shows it for a failed
    test) and every process they started checked gone."""
    ros2_command = require_launch()
    started: list[Launched] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Launched:
        run = Launched([ros2_command, "launch", "bb_robot", *args], tmp_path / f"launch_{len(started)}.log", env)
        started.append(run)
        return run

    leftovers: list[str] = []
    try:
        yield start
    finally:
        # also when the test failed: a launch left running (a driver, a description node) would
        # answer in the next tests' ROS domain and fail them too
        for run in started:
            left = run.stop()
            print(f"--- {' '.join(run.command)}\n{run.log()[-20000:]}")
            if left:
                leftovers.append(f"processes left running after {run.command}: {left}\n{run.log()}")
        stop_daemon()
    assert not leftovers, "\n".join(leftovers)

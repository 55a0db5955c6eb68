"""The launch process of ``bb-robot up``: ``python -m bb_robot.nodes.bringup_launch`` as a child.

It runs in a session of its own, so a Ctrl-C in the terminal reaches ``bb-robot up`` only, which
then shuts the launch down with SIGINT (launch's clean shutdown: every node is signalled and
waited for).  It starts with SIGINT blocked, which it unblocks once it can take it
(:mod:`bb_robot.nodes.bringup_launch`): a Ctrl-C right after the start is not lost, and does not
end the interpreter while it imports, with a traceback.  For the same reason the SIGINT waits
(:data:`NODE_START_TIMEOUT` at most) until every node the launch started has initialised ROS:
before that, a Python node is still importing its modules, and a SIGINT would end it with a
``KeyboardInterrupt`` traceback; after it, the node's own handler ends it cleanly, also in the
middle of starting (docs/bringup.md, "Shutting down").  Every process seen below it is
remembered, and any still running after the launch has ended is terminated, so that nothing is
left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil  # type: ignore[import-untyped]

#: The module that runs launch/bringup.launch.py through launch's LaunchService.
RUNNER = "bb_robot.nodes.bringup_launch"
#: How long :meth:`BringupProcess.stop` waits for a node still starting (its interpreter's imports:
#: seconds on a slow host) before it sends SIGINT anyway.
NODE_START_TIMEOUT = 30.0
#: Seconds between two looks at the process tree below the launch while the system runs (a look
#: reads every process's /proc entry; ``bb-robot up`` looked 40 times a second before: docs/bringup.md,
#: "On a slow host"). A node or a restarted driver is seen within this time; :meth:`BringupProcess.stop`
#: always looks afresh.
SCAN_PERIOD = 0.5


def handles_sigterm(pid: int) -> bool:
    """Whether process ``pid`` catches SIGTERM (``/proc/<pid>/status``), which a ROS node does once it has
    initialised ROS (rclpy and rclcpp install their handler then; Python does not by itself).  True for a
    process that is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    caught = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


class ProcessTree:
    """The processes below one process (the launch), looked at no more often than every
    :data:`SCAN_PERIOD` unless asked for a fresh look.

    Args:
        pid: The process at the top.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._scanned: tuple[float, list[psutil.Process]] | None = None  # (when, the processes below it)
        self._nodes: tuple[list[psutil.Process], dict[int, list[str]]] | None = None  # the node processes of a scan

    def children(self, fresh: bool = False) -> list[psutil.Process] | None:
        """The processes below the launch, as seen at most :data:`SCAN_PERIOD` ago (``fresh``: now);
        ``None`` when the launch process is gone."""
        now = time.monotonic()
        if fresh or self._scanned is None or now - self._scanned[0] >= SCAN_PERIOD:
            try:
                self._scanned = (now, psutil.Process(self.pid).children(recursive=True))
            except psutil.Error:
                self._scanned = None
                return None
        return self._scanned[1]

    def node_processes(self, fresh: bool = False) -> dict[int, list[str]]:
        """The ROS node processes below the launch (``__node:=`` on their command line): pid → arguments.

        A process a node itself starts (the driver's collision checker) shows the node's command
        line between its fork and its exec; it is below a match, so it is left out (it was taken
        for a restarted driver on a slow host).
        """
        children = self.children(fresh)
        if children is None:
            return {}
        if self._nodes is not None and self._nodes[0] is children:
            return self._nodes[1]
        matches: dict[int, tuple[int, list[str]]] = {}  # pid: (parent pid, arguments)
        for process in children:
            try:
                if process.status() == psutil.STATUS_ZOMBIE:
                    continue
                arguments = process.cmdline()
                parent = process.ppid()
            except psutil.Error:
                continue
            if any(argument.startswith("__node:=") for argument in arguments):
                matches[process.pid] = (parent, arguments)
        nodes = {pid: arguments for pid, (parent, arguments) in matches.items() if parent not in matches}
        self._nodes = (children, nodes)
        return nodes

    def node_pids(self, node: str) -> dict[str, int]:
        """The running processes below the launch that run ROS node ``node``, by namespace ("" for none).

        launch_ros starts a node with ``-r __node:=<name>`` and ``-r __ns:=<namespace>``.
        """
        found: dict[str, int] = {}
        for pid, arguments in self.node_processes().items():
            if f"__node:={node}" in arguments:
                namespace = next((a[len("__ns:=") :] for a in arguments if a.startswith("__ns:=")), "")
                found[namespace.strip("/")] = pid
        return found


class BringupProcess:
    """The launch system running ``bringup.launch.py`` with ``arguments`` (``name → value``)."""

    def __init__(self, arguments: Mapping[str, str], env: Mapping[str, str] | None = None) -> None:
        self.log_path = Path(tempfile.mkdtemp(prefix="bb_robot_up_")) / "launch.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        command = [sys.executable, "-m", RUNNER, *(f"{name}:={value}" for name, value in arguments.items())]
        child_env = dict(os.environ if env is None else env)
        child_env["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
        child_env["PYTHONUNBUFFERED"] = "1"
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # the child's mask (see above)
        try:
            self.process = subprocess.Popen(
                command, stdout=self._log, stderr=subprocess.STDOUT, env=child_env, start_new_session=True
            )
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        self.seen: dict[int, float] = {}  # pid → its create_time (a reused pid is another process)
        self.tree = ProcessTree(self.process.pid)
        self.watch()

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def watch(self, fresh: bool = False) -> None:
        """Remember the launch process and every process below it (as seen at most
        :data:`SCAN_PERIOD` ago; ``fresh``: now)."""
        children = self.tree.children(fresh)
        if children is None:
            return
        if self.process.pid not in self.seen:
            try:
                self.seen[self.process.pid] = psutil.Process(self.process.pid).create_time()
            except psutil.Error:
                return
        for process in children:
            try:
                self.seen.setdefault(process.pid, process.create_time())
            except psutil.Error:
                continue

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def errors(self, limit: int = 5) -> list[str]:
        """The last error lines of the launch output (launch's own and the nodes')."""
        lines = [line for line in self.log().splitlines() if "ERROR" in line or "Error" in line or "error:" in line]
        return lines[-limit:]

    def node_pids(self, node: str) -> dict[str, int]:
        """The processes below the launch running ROS node ``node``, by namespace (:meth:`ProcessTree.node_pids`)."""
        return self.tree.node_pids(node)

    def starting_nodes(self) -> list[int]:
        """The ROS node processes below the launch that have not initialised ROS yet (:func:`handles_sigterm`)."""
        return [pid for pid in self.tree.node_processes(fresh=True) if not handles_sigterm(pid)]

    def alive_children(self) -> list[psutil.Process]:
        """Processes seen below the launch (or the launch itself) that are still running."""
        alive = []
        for pid, created in self.seen.items():
            try:
                process = psutil.Process(pid)
                if process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(process)
            except psutil.Error:
                continue
        return alive

    def stop(self, timeout: float = 30.0) -> list[int]:
        """SIGINT to the launch and wait; then end whatever is left.

        Returns:
            The pids that had to be terminated or killed after the launch ended (empty when the
            shutdown was clean).
        """
        self.watch(fresh=True)
        deadline = time.monotonic() + NODE_START_TIMEOUT
        while self.running() and self.starting_nodes() and time.monotonic() < deadline:
            time.sleep(0.05)  # (see the module docstring)
        self.watch(fresh=True)
        if self.running():
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        left = self.alive_children()
        for process in left:
            try:
                process.terminate()
            except psutil.Error:
                pass
        _, still = psutil.wait_procs(left, timeout=5)
        for process in still:
            try:
                process.kill()
            except psutil.Error:
                pass
        self._log.close()
        return [process.pid for process in left]


@dataclass
class DriverWatch:
    """The driver process of one robot, as seen below the launch: lost when the process that ran
    ends, restarted when another one appears (``respawn``).

    Attributes:
        pid: The driver's process (``None``: none seen yet, or lost).
        lost: Whether the driver process ended since it was seen (until another one runs).
        losses: How often it ended.
        restarts: How often another one appeared after one ended.
    """

    pid: int | None = None
    lost: bool = False
    losses: int = 0
    restarts: int = 0

    def update(self, pid: int | None) -> str | None:
        """Take the pid seen now; returns what changed, for the log (``None``: nothing)."""
        if pid == self.pid:
            return None
        previous, self.pid = self.pid, pid
        if pid is None:
            self.lost, self.losses = True, self.losses + 1
            return f"driver lost: its process {previous} ended"
        if previous is not None or self.lost:
            self.lost, self.restarts = False, self.restarts + 1
            return f"driver restarted (process {pid}, restart {self.restarts}): it comes back disarmed"
        return None

    def warnings(self) -> Sequence[str]:
        """What the live view shows about it."""
        if self.lost:
            return ("driver lost: its process ended",)
        if self.restarts:
            return (f"driver restarted {self.restarts} time(s): disarmed; a goal it ran was lost",)
        return ()

"""The driver node as a child process, for the benchmarks that measure it from outside.

``bench_driver.py``, ``bench_gazebo.py`` and ``bench_actuators.py`` each start
``python -m bb_robot.nodes.driver`` with a parameters file, talk to it over ROS from their own
process and read its ``/diagnostics`` and CPU time.  What they share is here:

- :func:`start_driver` writes the parameters file, starts the node in a random namespace on a
  given ROS domain (traffic kept on this machine, unbuffered log in a file) and puts this
  process on the same domain; :class:`DriverProcess` is the running node (its log, CPU time,
  :meth:`~DriverProcess.stop`);
- :func:`cpu_seconds` reads any process's user + system time;
- :func:`loop_status` finds the driver's ``<node>: control loop`` status among received
  ``diagnostic_msgs/DiagnosticArray`` messages;
- :func:`make_executor` makes rclpy's events executor (as the driver uses), where available;
- :func:`target_stream` streams sas target arrays with sequence numbers at a fixed rate.

Imported as ``import _driver_process``, as ``_common`` (the scripts run as
``python benchmarks/bench_x.py``, which puts this directory on ``sys.path``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import _common
import numpy as np

if TYPE_CHECKING:
    from rclpy.executors import Executor


def cpu_seconds(pid: int) -> float:
    """The user + system CPU time (s) process ``pid`` has used so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


class DriverProcess:
    """A driver node started by :func:`start_driver`, writing its output to :attr:`log_path`."""

    def __init__(
        self, process: subprocess.Popen[bytes], namespace: str, workdir: Path, log_path: Path, log_file: IO[bytes]
    ) -> None:
        self.process = process
        #: The node's namespace, ``/bench<random>``: its topics are ``<namespace>/...``.
        self.namespace = namespace
        self.workdir = workdir
        self.log_path = log_path
        self._log_file = log_file  # the child's stdout and stderr, closed by stop()

    @property
    def pid(self) -> int:
        """The child process's id."""
        return self.process.pid

    @property
    def alive(self) -> bool:
        """True while the child process runs."""
        return self.process.poll() is None

    def log(self) -> str:
        """What the node has written to stdout and stderr so far."""
        return self.log_path.read_text()

    def cpu_seconds(self) -> float:
        """The node's user + system CPU time (s) so far."""
        return cpu_seconds(self.process.pid)

    def wait_for(
        self, condition: Callable[[], object], timeout: float, failure: str, step: Callable[[], object]
    ) -> None:
        """Call ``step`` (spin an executor, sleep) until ``condition()`` is true; return None.

        Raises :class:`RuntimeError` with ``failure`` and the node's log when that takes more
        than ``timeout`` seconds or the node exits first.
        """
        deadline = time.monotonic() + timeout
        while not condition():
            step()
            if time.monotonic() > deadline or not self.alive:
                raise RuntimeError(f"{failure}:\n{self.log()}")

    def stop(self, interrupt_wait: float = 20.0, terminate_wait: float = 10.0) -> int | None:
        """End the node: SIGINT (its clean shutdown), waiting up to ``interrupt_wait`` s for it
        to exit, then SIGTERM, up to ``terminate_wait`` s, then SIGKILL; close the log file.

        Returns the exit status (``None`` if even SIGKILL did not end it within 5 s).
        """
        try:
            for sig, wait in ((signal.SIGINT, interrupt_wait), (signal.SIGTERM, terminate_wait)):
                if self.process.poll() is not None:
                    break
                self.process.send_signal(sig)
                try:
                    self.process.wait(wait)
                except subprocess.TimeoutExpired:
                    continue
            if self.process.poll() is None:
                self.process.kill()
                try:
                    self.process.wait(5.0)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            self._log_file.close()
        return self.process.returncode


def start_driver(
    parameters: Mapping[str, Any],
    *,
    workdir: Path,
    domain: int,
    extra_pythonpath: Iterable[Path | str] = (),
    extra_env: Mapping[str, str] | None = None,
    namespace: str | None = None,
    node_name: str | None = None,
) -> DriverProcess:
    """Start ``python -m bb_robot.nodes.driver`` with ``parameters`` for every node (``/**``).

    In ``workdir`` it writes ``driver.yaml`` (parameters; JSON, which is YAML) and the node's log
    ``driver.log``.  The child's environment is this process's with ``ROS_DOMAIN_ID=domain``,
    ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, ``RCUTILS_LOGGING_BUFFERED_STREAM=0``, the
    repository root and ``extra_pythonpath`` before the ``PYTHONPATH``, ``ROS_LOG_DIR``
    ``<workdir>/ros_log`` unless set, and then ``extra_env``.  This process joins the same
    domain and discovery range (``os.environ``; ``ROS_LOG_DIR`` too, unless set): create its
    rclpy context after this call.

    Returns the running :class:`DriverProcess`, in ``namespace`` (default ``/bench<random>``),
    named ``node_name`` (default: the node's own name).
    """
    return start_node(
        "bb_robot.nodes.driver",
        parameters,
        workdir=workdir,
        domain=domain,
        extra_pythonpath=extra_pythonpath,
        extra_env=extra_env,
        namespace=namespace,
        node_name=node_name,
        log_name="driver.log",
    )


def start_node(
    module: str,
    parameters: Mapping[str, Any],
    *,
    workdir: Path,
    domain: int,
    extra_pythonpath: Iterable[Path | str] = (),
    extra_env: Mapping[str, str] | None = None,
    namespace: str | None = None,
    node_name: str | None = None,
    log_name: str = "node.log",
    program_args: Sequence[str] = (),
    remap_namespace: bool = True,
) -> DriverProcess:
    """Start ``python -m <module>`` (a bb_robot node) as :func:`start_driver` describes.

    The parameters file is ``<log_name stem>.yaml`` in ``workdir``, so that several nodes can
    share one directory.  ``program_args`` come before ``--ros-args``; with
    ``remap_namespace=False`` the nodes keep the namespaces they choose (``bb_robot.nodes.fleet``).
    """
    params = workdir / f"{Path(log_name).stem}.yaml"
    params.write_text(json.dumps({"/**": {"ros__parameters": dict(parameters)}}))
    env = dict(os.environ)
    env.update(
        ROS_DOMAIN_ID=str(domain),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        PYTHONPATH=os.pathsep.join(
            [str(_common.REPO_ROOT), *(str(p) for p in extra_pythonpath), env.get("PYTHONPATH", "")]
        ),
        RCUTILS_LOGGING_BUFFERED_STREAM="0",
    )
    env.setdefault("ROS_LOG_DIR", str(workdir / "ros_log"))
    env.update(extra_env or {})
    namespace = namespace or f"/bench{random.randrange(1 << 30)}"
    log_path = workdir / log_name
    log = open(log_path, "wb")  # noqa: SIM115 - closed by DriverProcess.stop
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", module, *program_args, "--ros-args"]
            + (["-r", f"__ns:={namespace}"] if remap_namespace else [])
            + ([] if node_name is None else ["-r", f"__node:={node_name}"])
            + ["--params-file", str(params)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    except BaseException:
        log.close()
        raise
    os.environ.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    os.environ.setdefault("ROS_LOG_DIR", str(workdir / "ros_log"))
    return DriverProcess(process, namespace, workdir, log_path, log)


def loop_status(messages: Sequence[Any], node: str | None = None) -> tuple[dict[str, str], float]:
    """The latest ``<node>: control loop`` status in ``messages`` (``DiagnosticArray``s, oldest
    first; any node's if ``node`` is None).

    Returns its values (key → value) and its message's stamp in seconds; ``({}, 0.0)`` if none.
    """
    suffix = ": control loop"
    for array in reversed(messages):
        for status in array.status:
            if (status.name == f"{node}{suffix}") if node is not None else status.name.endswith(suffix):
                stamp = array.header.stamp.sec + array.header.stamp.nanosec * 1e-9
                return {kv.key: kv.value for kv in status.values}, stamp
    return {}, 0.0


def make_executor(context: Any) -> Executor:
    """Returns rclpy's C++ events executor for ``context`` (a fraction of the Python executor's
    cost per message; the driver uses it), or a ``SingleThreadedExecutor`` where it is missing."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        from rclpy.executors import SingleThreadedExecutor

        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)


def target_stream(
    publisher: Any, rate: float, count: int, first: float, step: float, width: int
) -> tuple[threading.Thread, np.ndarray]:
    """A thread, not started, that publishes ``count`` sas targets (``std_msgs/Float64MultiArray``)
    on ``publisher`` from a :class:`~bb_robot.driver.timing.loop.RateLoop` at ``rate``: target ``k``
    (1 to ``count``) is ``first + k * step`` for the first of ``width`` joints, 0 for the others.

    Returns the thread and the array (``count + 1`` long) in which it stores each target's
    ``time.monotonic_ns()`` just before its publish (index ``k``; 0 for those not sent).
    """
    from std_msgs.msg import Float64MultiArray

    from bb_robot.driver.timing.loop import CycleInfo, RateLoop

    published = np.zeros(count + 1, dtype=np.int64)
    data = [first] + [0.0] * (width - 1)
    loop = RateLoop(rate)
    message = Float64MultiArray()

    def send(info: CycleInfo) -> None:
        k = info.index + 1
        if k > count:
            loop.stop()
            return
        data[0] = first + k * step
        message.data = data
        published[k] = time.monotonic_ns()
        publisher.publish(message)

    return threading.Thread(target=loop.run, args=(send,)), published

"""The node tests' tools: a node run as a child process, and an rclpy node in the test process.

- :class:`NodeProcess` runs a node as a subprocess (by default the description node, ``python -m
  bb_robot.nodes.description`` from this source tree; ``module=`` / ``node=`` choose another,
  e.g. the driver) with parameters written to a YAML file; it is stopped with SIGINT, then
  SIGTERM, never SIGKILL (a killed process leaves ``/dev/shm/fastdds_*`` behind).
- :class:`Probe` is an rclpy node in the test process with helpers that spin until a condition
  holds or a generous timeout passes (discovery takes from 20 ms to a few seconds): no fixed sleeps.

The fixtures that make them (``start_node``, ``probe``) and the session's ROS environment
(domain id, discovery range, log directory, Fast DDS profile) live in ``test/nodes/conftest.py``,
which pytest imports before any node test; rclpy is imported here only inside :class:`Probe`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]

#: How long to wait for discovery, a message or a process; generous: CI machines are busy.
TIMEOUT = 30.0
#: What rclpy's action server logs when the middleware could not deliver a response (the client's
#: reader not matched in time, ros2/rmw_fastrtps#467): the goal's answer is lost, not refused.
LOST_RESPONSE = "client will not receive response"


#: Timing for a loaded CI machine (a feedback gap of 0.25 s was seen at a load of 7 on 2 cores):
#: given to drivers whose test is not about timing, on top of a shipped file's tighter values.
LOADED_MACHINE_TIMING: dict[str, Any] = {"stale_timeout": 1.0, "actuators": {"feedback_timeout": 2.0}}


def node_overrides(path: Path, node: str, values: dict[str, Any]) -> Path:
    """Write a parameter file at ``path`` that overrides ``values`` for ``node`` when given after
    a shipped file, and return ``path``.

    rcl merges the files' sections by their key and gives a node the sections it matches in the
    order the keys first appeared, so a later ``/**`` section lands before a shipped file's
    ``/**/driver`` and loses to it: the override is keyed as the shipped files key their nodes.
    """
    path.write_text(json.dumps({f"/**/{node}": {"ros__parameters": values}}))
    return path


def _stop_with_parent() -> None:
    """In the child: get SIGTERM (not SIGKILL, which leaks shared memory) if the test process dies."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class NodeProcess:
    """A node (default: the description node) running as a child process; its output goes to
    ``log_path``.  ``pythonpath`` adds directories to the child's ``PYTHONPATH``; ``python`` and
    ``environment`` run it with another interpreter and environment (another distribution's venv:
    ``helpers.ros_distro.venv_environment``).  ``program_args`` come before ``--ros-args``; with
    ``remap_namespace=False`` the nodes keep the namespaces they choose (``namespace`` then only
    names the log and parameter files)."""

    def __init__(
        self,
        namespace: str,
        parameters: dict[str, Any],
        directory: Path,
        args: tuple[str, ...] = (),
        *,
        module: str = "bb_robot.nodes.description",
        node: str = "description",
        pythonpath: tuple[str, ...] = (),
        python: str = sys.executable,
        environment: dict[str, str] | None = None,
        program_args: tuple[str, ...] = (),
        remap_namespace: bool = True,
    ) -> None:
        self.namespace = namespace
        self.name = f"{namespace}/{node}"
        # Named by namespace and node, so that several nodes can share a namespace.
        stem = f"{namespace.strip('/').replace('/', '_')}_{node}"
        params_file = directory / f"{stem}_params.yaml"
        # JSON is YAML: every string is quoted and escaped, whatever it holds.
        params_file.write_text(json.dumps({"/**": {"ros__parameters": parameters}}))
        self.log_path = directory / f"{stem}.log"
        env = dict(os.environ if environment is None else environment)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), *pythonpath, env.get("PYTHONPATH", "")) if p)
        env["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
        command = [
            python,
            "-m",
            module,
            *program_args,
            "--ros-args",
            *(("-r", f"__ns:={namespace}") if remap_namespace else ()),
            "--params-file",
            str(params_file),
            *args,
        ]
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=directory, preexec_fn=_stop_with_parent
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_for_log(self, text: str, timeout: float = TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log()
            if text in log:
                return log
            if not self.alive():
                break
            time.sleep(0.02)
        raise AssertionError(f"{text!r} not in the node's output within {timeout} s:\n{self.log()}")

    def wait_for_exit(self, timeout: float = TIMEOUT) -> int:
        return self.process.wait(timeout)

    def stop(self) -> int | None:
        """SIGINT, then SIGTERM; returns the exit status (``None`` if it would not stop)."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            if self.process.poll() is not None:
                break
            self.process.send_signal(sig)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                continue
        self._log.close()
        return self.process.poll()


#: The type of the ``start_node`` fixture: ``start_node(parameters, namespace=None, args=(), **options)``.
StartNode = Callable[..., NodeProcess]


class Probe:
    """An rclpy node in the test process, spun on demand."""

    def __init__(self, context: Any) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self.context = context
        self.node = rclpy.create_node(f"probe_{uuid.uuid4().hex[:8]}", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)

    def spin_until(self, condition: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self.executor.spin_once(timeout_sec=0.02)
        return condition()

    def spin_until_quiet(self, received: Callable[[], int], quiet: float = 1.0, timeout: float = TIMEOUT) -> bool:
        """Keep receiving until ``received()`` (a count) has not grown for ``quiet`` seconds.

        What a busy test process has not taken yet is still in its readers' queues when the
        publishers have gone: this takes it before the test looks at what arrived.
        """
        seen, since = received(), time.monotonic()

        def quiet_now() -> bool:
            nonlocal seen, since
            if received() != seen:
                seen, since = received(), time.monotonic()
            return time.monotonic() - since >= quiet

        return self.spin_until(quiet_now, timeout)

    def spin_for(self, seconds: float) -> None:
        """Keep receiving for ``seconds`` (to check that something does NOT arrive)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)

    def subscribe(self, msg_type: Any, topic: str, qos: Any) -> list[Any]:
        """Subscribe; the returned list fills with the messages as they arrive (while spinning)."""
        return self.subscription(msg_type, topic, qos)[0]

    def subscription(self, msg_type: Any, topic: str, qos: Any) -> tuple[list[Any], Any]:
        received: list[Any] = []
        return received, self.node.create_subscription(msg_type, topic, received.append, qos)

    def wait_for_subscribers(self, publisher: Any, count: int = 1, timeout: float = TIMEOUT) -> None:
        assert self.spin_until(lambda: publisher.get_subscription_count() >= count, timeout), (
            f"no subscriber on {publisher.topic_name} within {timeout} s"
        )

    def wait_for_acked(self, publisher: Any, timeout: float = TIMEOUT) -> None:
        """Spin until every message ``publisher`` (reliable) has sent is acknowledged by every matched
        subscription: each is then in its reader's queue, if not yet taken by its node."""
        from rclpy.duration import Duration

        assert self.spin_until(lambda: publisher.wait_for_all_acked(Duration(seconds=0)), timeout), (
            f"messages on {publisher.topic_name} not acknowledged within {timeout} s"
        )

    def set_parameters(self, node_name: str, values: dict[str, Any], timeout: float = TIMEOUT) -> list[Any]:
        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient

        client = AsyncParameterClient(self.node, node_name)
        try:
            assert self.spin_until(lambda: client.services_are_ready(), timeout), (
                f"no parameter services of {node_name}"
            )
            parameters = [Parameter(name, value=value) for name, value in values.items()]
            answer = self.answer(lambda: client.set_parameters(parameters), "set_parameters", timeout)
            return list(answer.results)
        finally:
            client.destroy() if hasattr(client, "destroy") else None

    def call_client(self, node_name: str, method: str, *args: Any, timeout: float = TIMEOUT) -> Any:
        from rclpy.parameter_client import AsyncParameterClient

        client = AsyncParameterClient(self.node, node_name)
        assert self.spin_until(lambda: client.services_are_ready(), timeout), f"no parameter services of {node_name}"
        return self.answer(lambda: getattr(client, method)(*args), method, timeout)

    def answer(self, send: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
        """The result of the future ``send()`` returns, sending again if no answer comes.

        A service can read requests before DDS has matched its reply path, so an answer can be
        lost; the requests sent this way are idempotent (parameter sets and queries).
        """
        attempts = 3
        for _ in range(attempts):
            future = send()
            if self.spin_until(future.done, timeout / attempts):
                return future.result()
        raise AssertionError(f"{what} did not answer {attempts} requests")

    def destroy(self) -> None:
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()

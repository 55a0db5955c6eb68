"""Running a node: the executor, its thread's scheduling, and a clean-up that survives a second SIGINT."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from bb_robot.driver.loop import request_realtime
from bb_robot.model import compiled


def executor_thread_scheduling(priority: int) -> str:
    """While the loop runs with real-time priority, put the calling (executor) thread at the
    lowest real-time priority; ``priority`` 0 puts it back to normal.

    Python threads share one interpreter lock: a loop thread at high priority still waits for
    whichever thread holds it, and an ordinary thread holding it can be preempted by any other
    process for milliseconds (priority inversion).  At real-time priority 1 the executor thread
    still yields to the loop thread, but no longer to ordinary processes.

    Args:
        priority: The loop's real-time priority (0: none).

    Returns:
        How the thread is scheduled now, for diagnostics.
    """
    if priority > 0:
        return request_realtime(1)
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError, ValueError) as error:
        return f"normal ({getattr(error, 'strerror', None) or error})"
    return "normal"


def make_executor() -> Executor:
    """rclpy's C++ events executor where this rclpy has it, else the single-threaded one."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:  # pragma: no cover - rclpy before Kilted
        return SingleThreadedExecutor()
    return EventsExecutor()


def uninterrupted(step: Callable[[], object]) -> None:
    """Run a clean-up step to its end even if a second SIGINT arrives meanwhile."""
    for _ in range(3):
        try:
            step()
            return
        except KeyboardInterrupt:
            continue


#: ``add(node, release)``: put ``node`` on the executor; ``release`` (or nothing) runs before it is destroyed.
AddNode = Callable[[Node, Callable[[], object] | None], None]


def serve(start: Callable[[AddNode], None]) -> None:
    """Spin the nodes ``start`` adds on one executor until SIGINT, SIGTERM or rclpy's shutdown.

    ``start(add)`` builds the nodes (after ``rclpy.init``) and adds each with ``add(node,
    release)``.  Whatever happens, each added node is then released (``release()``, e.g. a
    driver's backend) and destroyed, newest first, and the executor and rclpy are shut down,
    each step to its end even if a second SIGINT arrives.  An error ``start`` raises (a node
    that cannot start) is raised on after that clean-up.

    Before ``start``, the process is set up for drivers' control loops: a short switch interval
    lets a loop thread take the interpreter soon after it wakes, even while the executor thread
    runs Python code (the default is 5 ms); and kinematics of one configuration stay in Python
    (``compiled.default_mode("batch")``: no numba in a node process, where rclpy dominates).

    Args:
        start: Builds and adds the nodes.
    """
    sys.setswitchinterval(0.0005)
    compiled.default_mode("batch")
    executor = make_executor()
    added: list[tuple[Node, Callable[[], object] | None]] = []

    def add(node: Node, release: Callable[[], object] | None) -> None:
        added.append((node, release))
        executor.add_node(node)

    try:
        start(add)
        # spin_once in a loop, not spin(): the events executor's spin() does not return on SIGINT.
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.2)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for node, release in reversed(added):
            if release is not None:
                uninterrupted(release)
            uninterrupted(node.destroy_node)
        for step in (executor.shutdown, rclpy.try_shutdown):
            uninterrupted(step)

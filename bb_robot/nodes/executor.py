"""Running a node: the executor, its thread's scheduling, and a clean-up that survives a second SIGINT."""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from bb_robot.common.throttle import WarningThrottle
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

#: Failures of the executor itself (not of a callback), one after the other with no successful
#: spin between them, after which it is taken as unusable and the process ends (exit status 1).
UNUSABLE_AFTER = 20
#: rclpy runs a pending coroutine task (a FollowJointTrajectory goal awaiting its end) again on every
#: spin, so while one is pending ``spin_once`` returns at once, over and over: a busy loop that took
#: a whole core (at real-time priority 1 beside a driver's loop) and the interpreter lock from the
#: loop thread.  After :data:`SPIN_BURST` returns in a row that did not wait (wall time within
#: :data:`SPIN_WAITED` of the thread's CPU time: it never blocked for work), the executor thread
#: naps :data:`SPIN_NAP` seconds.  A real backlog of messages is still taken at thousands per
#: second; a message that arrives during a nap waits at most the nap.
SPIN_WAITED, SPIN_BURST, SPIN_NAP = 0.0001, 5, 0.002


def nap(seconds: float) -> None:
    """The executor thread's nap (its own name, so that a test sees each one)."""
    time.sleep(seconds)


def failed_callback(error: BaseException) -> tuple[str, str] | None:
    """Which node and callback raised ``error``, from its traceback.

    Args:
        error: An exception that came out of ``spin_once``.

    Returns:
        ``(node, callback)``: the node's fully qualified name (or ``"a node of this process"`` for
        a callback that is not a node's method) and the callback's qualified name with its file
        and line; ``None`` when no frame outside rclpy is in the traceback (the executor failed).
    """
    node_name: str | None = None
    callback: str | None = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        module = frame.f_globals.get("__name__", "")
        if module == "rclpy" or module.startswith("rclpy."):
            continue
        owner = frame.f_locals.get("self")
        if callback is None or isinstance(owner, Node):
            code = frame.f_code
            callback = f"{code.co_qualname} ({code.co_filename}:{line})"
            if isinstance(owner, Node):
                node_name = owner.get_fully_qualified_name()
                break
    if callback is None:
        return None
    return node_name or "a node of this process", callback


def serve(start: Callable[[AddNode], None], make: Callable[[], Executor] = make_executor) -> int:
    """Spin the nodes ``start`` adds on one executor until SIGINT, SIGTERM or rclpy's shutdown.

    ``start(add)`` builds the nodes (after ``rclpy.init``) and adds each with ``add(node,
    release)``.  Whatever happens, each added node is then released (``release()``, e.g. a
    driver's backend) and destroyed, newest first, and the executor and rclpy are shut down,
    each step to its end even if a second SIGINT arrives.  An error ``start`` raises (a node
    that cannot start) is raised on after that clean-up.

    A callback that raises does not end the process (with several arms in it, every arm would
    go): the error is logged naming the node and the callback, at most once per callback and
    error type every 5 s with a count, and spinning goes on.  Only an executor that keeps failing
    by itself (:data:`UNUSABLE_AFTER` errors from rclpy's own code, one after the other) ends it,
    with exit status 1 and the reason in the log.

    Before ``start``, the process is set up for drivers' control loops: a short switch interval
    lets a loop thread take the interpreter soon after it wakes, even while the executor thread
    runs Python code (the default is 5 ms); and kinematics of one configuration stay in Python
    (``compiled.default_mode("batch")``: no numba in a node process, where rclpy dominates; a
    driver whose Cartesian servo is enabled loads it for the servo's compiled cycle).

    Args:
        start: Builds and adds the nodes.
        make: Makes the executor (default: :func:`make_executor`).

    Returns:
        The exit status: 0 after a signal or rclpy's shutdown, 1 when the executor became unusable.
    """
    sys.setswitchinterval(0.0005)
    compiled.default_mode("batch")
    executor = make()
    added: list[tuple[Node, Callable[[], object] | None]] = []
    logger = rclpy.logging.get_logger("bb_robot.serve")
    throttle = WarningThrottle(5.0)
    status = 0

    def add(node: Node, release: Callable[[], object] | None) -> None:
        added.append((node, release))
        executor.add_node(node)

    try:
        start(add)
        failures = quick = 0
        # spin_once in a loop, not spin(): the events executor's spin() does not return on SIGINT.
        while rclpy.ok():
            try:
                wall, cpu = time.perf_counter(), time.thread_time()
                executor.spin_once(timeout_sec=0.2)
                waited = (time.perf_counter() - wall) - (time.thread_time() - cpu) > SPIN_WAITED
                quick = 0 if waited else quick + 1
                if quick >= SPIN_BURST:  # spinning on a pending task, not waiting for work: nap
                    quick = 0
                    nap(SPIN_NAP)
            except (KeyboardInterrupt, ExternalShutdownException):
                raise
            except Exception as error:  # noqa: BLE001 - one callback's error must not end every node
                if not rclpy.ok():
                    break
                where = failed_callback(error)
                if where is None:
                    failures += 1
                    if failures >= UNUSABLE_AFTER:
                        logger.fatal(
                            f"the executor failed {failures} times in a row ({type(error).__name__}: {error}); "
                            "it is unusable, stopping every node of this process"
                        )
                        status = 1
                        break
                    where = ("the executor", "rclpy's own code")
                node_name, callback = where
                muted = throttle.allow((node_name, callback, type(error).__name__))
                if muted is not None:
                    detail = "".join(traceback.format_exception_only(error)).strip()
                    repeated = f" (and {muted} times since the last report)" if muted else ""
                    logger.error(f"{callback} of {node_name} raised {detail}{repeated}; the other callbacks go on")
                continue
            failures = 0
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for node, release in reversed(added):
            if release is not None:
                uninterrupted(release)
            uninterrupted(node.destroy_node)
        for step in (executor.shutdown, rclpy.try_shutdown):
            uninterrupted(step)
    return status

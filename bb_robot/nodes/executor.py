"""Running a node: the executor, its thread's scheduling, what SIGINT does, and a clean-up that survives a
second SIGINT.

SIGINT in a served process asks it to stop (:func:`stop_requested`); it raises ``KeyboardInterrupt``
only inside an :func:`interruptible` section (the node's start, a driver's configure and
activation), which ends what it was doing and releases it.  Anywhere else, above all inside a
callback that rclpy's events executor runs, a ``KeyboardInterrupt`` would escape through the
executor's C++ code, which logs it as ``[FATAL] Exception in '...' callback`` with the
traceback; instead the callback runs to its end and the process stops after it (rclpy's own
handler has shut its context down meanwhile and woken the executor).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import get_current_signal_handlers_options, install_signal_handlers, uninstall_signal_handlers

from bb_robot.common.throttle import WarningThrottle
from bb_robot.driver.timing.loop import request_realtime
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


def make_executor(context: Context | None = None) -> Executor:
    """rclpy's C++ events executor where this rclpy has it, else the single-threaded one.

    Args:
        context: The rclpy context its nodes belong to (default: rclpy's default context).

    Returns:
        The executor.
    """
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:  # pragma: no cover - rclpy before Kilted
        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)


#: Set by SIGINT in a process :func:`serve` runs (or by :func:`request_stop`): the process stops.
_stop = threading.Event()
#: The threads inside an :func:`interruptible` section, and how deep.
_interruptible: dict[int, int] = {}


def request_stop() -> None:
    """Ask :func:`serve` to stop (what SIGINT does; a node that swallowed a ``KeyboardInterrupt`` calls it)."""
    _stop.set()


def stop_requested() -> bool:
    """Whether SIGINT (or :func:`request_stop`) asked this process to stop."""
    return _stop.is_set()


@contextmanager
def interruptible() -> Iterator[None]:
    """A section of the calling thread where SIGINT raises ``KeyboardInterrupt`` (the caller handles it).

    Entered after a stop was requested, it raises at once: a transition that follows an
    interrupted one does not start.  A SIGINT that comes while the garbage collector runs a
    finalizer in the section (where Python would print the exception and drop it) raises when the
    section ends.  Signal handlers run in the main thread, so a section in
    another thread is not interrupted (its work ends, then the process stops).

    Raises:
        KeyboardInterrupt: on SIGINT within, or on entry after one.
    """
    if _stop.is_set():
        raise KeyboardInterrupt
    me = threading.get_ident()
    _interruptible[me] = _interruptible.get(me, 0) + 1
    try:
        yield
    finally:
        depth = _interruptible.pop(me) - 1
        if depth:
            _interruptible[me] = depth
        deferred = me in _deferred  # (cleared however the section ends)
        _deferred.discard(me)
    if deferred:  # a SIGINT came inside a finalizer, where raising would have been dropped
        raise KeyboardInterrupt


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _stop.set()
    me = threading.get_ident()
    if _interruptible.get(me):
        if _in_finalizer(frame):
            # Python prints an exception raised in a finalizer ("Exception ignored in", with its
            # traceback) and drops it: the section raises it when it ends instead.
            _deferred.add(me)
            return
        raise KeyboardInterrupt


#: The threads whose SIGINT came inside a finalizer: their section raises ``KeyboardInterrupt`` on leaving.
_deferred: set[int] = set()
_FINALIZER_CODE = weakref.finalize.__call__.__code__


def _in_finalizer(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside a ``weakref.finalize`` callback or a ``__del__`` method (the garbage
    collector can run one at any point of a section: seen under a slow host's Ctrl-C)."""
    while frame is not None:
        if frame.f_code is _FINALIZER_CODE or frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def listen_for_sigint() -> None:
    """Make SIGINT request a stop (:func:`stop_requested`), raising ``KeyboardInterrupt`` only in an
    :func:`interruptible` section; rclpy's own handler (installed by ``rclpy.init``) keeps running
    first, shutting its contexts down and waking their executors.

    Then unblock SIGINT: a process started with it blocked (``env --block-signal=INT``, so that a
    SIGINT during its imports does not end it with a traceback) takes a SIGINT that came meanwhile
    now, in this handler.
    """
    if threading.current_thread() is not threading.main_thread():
        return  # (signal handlers belong to the main thread; a test may serve from another one)
    options = get_current_signal_handlers_options()
    uninstall_signal_handlers()  # rclpy's handler calls the one it found when installed:
    signal.signal(signal.SIGINT, _on_sigint)  # this one, once it is installed again below
    install_signal_handlers(options)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def spin_waited(wall: float, cpu: float) -> bool:
    """Whether a spin that began at ``time.perf_counter()`` ``wall`` and ``time.thread_time()`` ``cpu``
    waited for work: its wall time exceeds its thread's CPU time by more than :data:`SPIN_WAITED`
    (a thread preempted meanwhile counts as waiting too)."""
    return (time.perf_counter() - wall) - (time.thread_time() - cpu) > SPIN_WAITED


def end_context(context: Context | None = None) -> None:
    """Shut ``context`` down (default: rclpy's default context) and finalize it now (never raises).

    A shut-down context still holds its middleware participant until the context object is
    destroyed.  Left to the end of the process, Fast DDS deletes the participant from a static
    destructor while the participant's own threads still run, and that corrupted the heap: the Jazzy
    driver died with SIGABRT ("malloc_consolidate(): unaligned fastbin chunk detected") or SIGSEGV
    after a clean Ctrl-C, in 1 of 5 runs of test_up_interrupt.  Destroying the context here, after
    its nodes and executors, deletes the participant and joins its threads first.
    """
    shut: Callable[[], object] = context.try_shutdown if context is not None else rclpy.try_shutdown
    if context is None:  # (rclpy.try_shutdown also lets a later rclpy.init make a new default context)
        context = rclpy.get_default_context()
    for step in (shut, context.destroy):
        try:
            uninterrupted(step)
        except Exception:  # noqa: BLE001 - best effort while the process ends
            pass


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

    SIGINT asks the process to stop (:func:`listen_for_sigint`); it interrupts ``start`` and the
    :func:`interruptible` sections only, never a callback half-way (see the module docstring).  An
    error ``start`` raises after a SIGINT (its rclpy context was shut down under it) is a stop too.

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
    _stop.clear()
    added: list[tuple[Node, Callable[[], object] | None]] = []
    logger = rclpy.logging.get_logger("bb_robot.serve")
    throttle = WarningThrottle(5.0)
    status = 0
    made: list[Executor] = []  # (made within the try: a SIGINT right after rclpy.init ends the process quietly)

    def add(node: Node, release: Callable[[], object] | None) -> None:
        added.append((node, release))
        made[0].add_node(node)

    try:
        with interruptible():
            listen_for_sigint()  # (inside: a SIGINT held back while the process started is taken here)
            made.append(make())
            start(add)
        executor = made[0]
        failures = quick = 0
        # spin_once in a loop, not spin(): the events executor's spin() does not return on SIGINT.
        while rclpy.ok() and not _stop.is_set():
            try:
                wall, cpu = time.perf_counter(), time.thread_time()
                executor.spin_once(timeout_sec=0.2)
                waited = spin_waited(wall, cpu)
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
    except Exception:
        # A node that failed to start because SIGINT shut rclpy's context down meanwhile (rclpy's
        # handler runs first, and a call into rcl can fail before ours raises): a stop, not an error.
        if not (_stop.is_set() or not rclpy.ok()):
            raise
    finally:
        for node, release in reversed(added):
            if release is not None:
                uninterrupted(release)
            uninterrupted(node.destroy_node)
        for executor in made:
            uninterrupted(executor.shutdown)
        end_context()
    return status

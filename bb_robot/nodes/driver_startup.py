"""The driver node's start-up: its timed steps, its backend, and what SIGINT during it does.

A slow host made ``bb-robot up`` give up on a driver that was still configuring (issue 33); the
log now says where the time went.  :class:`StepTimes` records the steps of configure and
activate as laps of one clock; the driver logs every step at debug level and one info line with
the total and the slowest steps (``configured in 1.9 s (servo 1.1 s, placement kernel 0.5 s)``).

Configure and activate run in the executor thread (with ``autostart``, both in one timer
callback), for seconds on a slow host.  They are :func:`~bb_robot.nodes.executor.interruptible`:
SIGINT raises ``KeyboardInterrupt`` in them, the driver releases what the transition made
(:func:`interrupted`: the checker process ended, the backend disconnected) and the process
stops, with no error logged; the transition that would follow does not start.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterable, Sequence

from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.node import Node

from bb_robot.collision.world import model_world
from bb_robot.driver.backends.base import Backend, BackendContext
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.core import DriverCore
from bb_robot.loading import LoadedModel
from bb_robot.model.robot import Robot
from bb_robot.nodes.driver_parameters import DriverParameters
from bb_robot.nodes.executor import request_stop, stop_requested, uninterrupted
from bb_robot.ros.backend_host import RosBackendHost

__all__ = [
    "SLOWEST_SHOWN",
    "StepTimes",
    "autostart",
    "connect_backend",
    "interrupted",
    "log_steps",
    "stopping",
    "wait_for_loop",
]

#: The info line names at most this many steps, the slowest first, each at least a tenth of the total.
SLOWEST_SHOWN = 3
#: Whether the transitions under way are :func:`autostart`'s.
_AUTOSTART = contextvars.ContextVar("_AUTOSTART", default=False)


class StepTimes:
    """The steps of one transition, each timed from the end of the one before.

    Args:
        done: What the transition reached, for the summary: ``configured``, ``active``.
        clock: Seconds, monotonic (tests pass their own).
    """

    def __init__(self, done: str, clock: Callable[[], float] = time.perf_counter) -> None:
        self.done = done
        self._clock = clock
        self._start = self._last = clock()
        #: ``(step, seconds)`` in order.
        self.steps: list[tuple[str, float]] = []

    def lap(self, step: str, parts: Iterable[tuple[str, float]] = ()) -> None:
        """The time since the last lap was ``step``; ``parts`` (``(name, seconds)``, measured within it
        by someone else) are recorded as steps of their own, ``step`` keeping the rest."""
        now = self._clock()
        rest = now - self._last
        for name, seconds in parts:
            self.steps.append((name, seconds))
            rest -= seconds
        self.steps.append((step, max(rest, 0.0)))
        self._last = now

    @property
    def total(self) -> float:
        """Seconds from the start to the last lap."""
        return self._last - self._start

    def detail(self) -> str:
        """Every step, in order (the debug line)."""
        steps = ", ".join(f"{name} {seconds:.3f} s" for name, seconds in self.steps)
        return f"{self.done} in {self.total:.3f} s: {steps}"

    def summary(self) -> str:
        """The total and the slowest steps (the info line)."""
        slowest = sorted(self.steps, key=lambda step: -step[1])[:SLOWEST_SHOWN]
        named = [f"{name} {seconds:.1f} s" for name, seconds in slowest if seconds >= max(0.1 * self.total, 0.05)]
        return f"{self.done} in {self.total:.1f} s" + (f" ({', '.join(named)})" if named else "")


def log_steps(node: Node, steps: StepTimes) -> None:
    """Every step at debug level, the total and the slowest at info level."""
    node.get_logger().debug(steps.detail())
    node.get_logger().info(steps.summary())


def stopping(node: Node) -> bool:
    """Whether the node's process is stopping: SIGINT came, or its rclpy context was shut down."""
    return stop_requested() or not node.context.ok()


def interrupted(release: Callable[[], object]) -> TransitionCallbackReturn:
    """A transition that SIGINT interrupted (or that failed because the process is stopping): release
    what it made and let the process stop.

    Nothing is logged: rclpy's context is shut down by now, and a log line would only add rclpy's
    complaint that it cannot reach ``/rosout``.  Under :func:`autostart` the ``KeyboardInterrupt``
    goes on, out of rclpy's transition, which would otherwise try to publish its outcome on the
    shut-down context and log "Failed to complete transition" as an error; a transition asked for
    through the lifecycle service fails instead (rclpy's service callback must not raise).

    Raises:
        KeyboardInterrupt: under :func:`autostart`.
    """
    request_stop()
    uninterrupted(release)
    if _AUTOSTART.get():
        raise KeyboardInterrupt
    return TransitionCallbackReturn.FAILURE


def autostart(node: LifecycleNode) -> None:
    """Configure, then activate (the ``autostart`` timer's callback); a failure is logged as an error,
    unless the process is stopping (SIGINT during either: the driver stops, quietly)."""
    token = _AUTOSTART.set(True)
    try:
        if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            failure = "configure failed; the node stays unconfigured"
        elif node.trigger_activate() != TransitionCallbackReturn.SUCCESS:
            failure = "activate failed; the node stays inactive"
        else:
            return
    except KeyboardInterrupt:
        return  # (from interrupted(): released, the process stops)
    except Exception:
        # rclpy's own bookkeeping of a transition (its state, its event) on a context SIGINT shut down:
        # the executor would log it as a fatal callback error.
        if stopping(node):
            return
        raise
    finally:
        _AUTOSTART.reset(token)
    if not stopping(node):
        node.get_logger().error(f"autostart: {failure}")


def connect_backend(
    node: Node,
    backend_class: type[Backend],
    parameters: DriverParameters,
    backend_parameters: Sequence[str],
    robot: Robot,
    joints: tuple[str, ...],
    limits: JointLimitTable,
    loaded: LoadedModel,
) -> Backend:
    """Create the session's backend and connect it (up to ``connect_timeout``).

    Raises:
        BackendError: it could not connect (the message says why).
    """
    backend = backend_class(
        BackendContext(
            robot=robot,
            joint_names=joints,
            limits=limits,
            rate=parameters.number("rate"),
            logger=node.get_logger(),
            options=parameters.backend_options(backend_parameters),
            model_source=loaded.source if loaded.kind != "string" else None,
            host=RosBackendHost(node),
            model_scope=loaded.scope,
            model_dirs=tuple(parameters.texts("model_dirs")),
            world_objects=lambda: (
                model_world(loaded, parameters.text("collision.world"), parameters.texts("model_dirs")).bodies
            ),
            gripper_joints=tuple(parameters.texts("gripper.joints")),
        )
    )
    backend.connect(parameters.number("connect_timeout"))
    return backend


def wait_for_loop(core: DriverCore, timeout: float = 0.1) -> None:
    """Wait (at most ``timeout``) until the loop thread has reported its scheduling, which it does as it starts."""
    deadline = time.monotonic() + timeout
    while core.scheduling == "not started" and time.monotonic() < deadline:
        time.sleep(0.001)

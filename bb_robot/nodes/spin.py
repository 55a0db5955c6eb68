"""Running a node as a program: start it, spin until SIGINT or SIGTERM, shut down cleanly.

The ``main`` of the description and view nodes: a node that cannot start raises its start-up
error, which is logged as fatal and gives exit status 1.  The node spins on a single-threaded
executor through :func:`~bb_robot.nodes.executor.serve`: a callback that raises is logged and
the node goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from bb_robot.nodes.executor import AddNode, serve


def spin_node(
    make_node: Callable[[], Node],
    name: str,
    startup_errors: tuple[type[Exception], ...],
    args: Sequence[str] | None = None,
) -> int:
    """Run ``make_node()`` until SIGINT or SIGTERM, then destroy it and shut rclpy down.

    Args:
        make_node: builds the node (after ``rclpy.init``).
        name: the logger name for a start-up failure.
        startup_errors: the errors that mean "cannot start" (logged, exit status 1).
        args: command-line arguments for ``rclpy.init`` (default: ``sys.argv``).

    Returns:
        The exit status: 0, or 1 when the node could not start or its executor became unusable.
    """
    rclpy.init(args=None if args is None else list(args))

    def start(add: AddNode) -> None:
        add(make_node(), None)

    try:
        return serve(start, SingleThreadedExecutor)
    except startup_errors as error:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {error}")
        return 1

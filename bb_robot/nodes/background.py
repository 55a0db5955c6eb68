"""A node in a context of its own, spun by a daemon thread: for commands whose own work runs in the main
thread (``bb-robot teleop``'s keyboard and screen, ``bb-robot teleop --leader``'s loop on the leader's bus)."""

from __future__ import annotations

import threading

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from bb_robot.nodes.executor import end_context


class BackgroundNode:
    """``node``, in a context of its own, spun by a daemon thread until :meth:`close`.

    Args:
        name: the node's name.
        thread: the spinning thread's name.
        signals: whether rclpy installs its SIGINT / SIGTERM handlers (``False``: the command's own
            handlers stay).
    """

    def __init__(self, name: str, thread: str, signals: bool = True) -> None:
        self.context = rclpy.context.Context()
        if signals:
            rclpy.init(context=self.context)
        else:
            rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node(name, context=self.context)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name=thread, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            while self.context.ok():
                self._executor.spin_once(timeout_sec=0.05)
        except Exception:  # noqa: BLE001 - shutting down
            pass

    def close(self) -> None:
        """Destroy the node and its context (never raises)."""
        try:
            self._executor.shutdown(timeout_sec=0.5)
            self.node.destroy_node()
            rclpy.shutdown(context=self.context)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
        self._thread.join(1.0)
        end_context(self.context)  # (its middleware participant deleted now, not at exit)

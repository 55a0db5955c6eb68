"""The bus bridge's command topics, taken by its loop thread once a cycle rather than by the executor.

The driver sends a position command per servo every cycle (``actuators.command_rate``, 200 Hz for
the SO-101: 1200 messages a second). Through rclpy's executor each message costs a round of its
own (the wait set rebuilt, the message taken, the callback called): hundreds of µs of Python
each, most of the bridge's CPU (docs/benchmarks.md, the bridge). The topics keep only their
latest message (depth 1) and the loop uses only the latest command of each joint, so the loop
takes them itself in each cycle, between its read and its write (so that what came during the
read is written), from subscriptions on a hidden node of its own (``_<bridge>_commands``) that no
executor spins: a few µs a topic. It takes them as bytes and
reads their positions from those (:mod:`bb_robot.nodes.joint_state_wire`), without building
message objects. Every command goes through the same check as before
(:meth:`bb_robot.buses.bridge.Bridge.command`: finite positions only; other modes held, with a
warning).

Where ``take_message`` does not work as this rclpy's executor uses it, the subscriptions move to
the bridge's own node and its executor takes them, as before (a warning says so).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from bb_robot.nodes.joint_state_wire import matches_rclpy, positions_of
from bb_robot.ros.qos import LATEST_BEST_EFFORT_QOS

#: What is done with a command: ``(joint, its positions)``.
Handler = Callable[[str, Sequence[float]], None]


class CommandTopics:
    """The command subscriptions of the configured joints.

    Args:
        owner: the bridge's node (its name, namespace and context; the fallback's home).
        handle: called with each command taken (joint, its positions).
    """

    def __init__(self, owner: Node, handle: Handler) -> None:
        self.owner = owner
        self.handle = handle
        self.direct = True
        #: Whether commands are taken as bytes and their positions read from them (joint_state_wire).
        self.raw = matches_rclpy("joint")
        self.node: Node | None = rclpy.create_node(
            f"_{owner.get_name()}_commands", namespace=owner.get_namespace(), context=owner.context,
            use_global_arguments=False, start_parameter_services=False, enable_rosout=False,
        )  # fmt: skip
        self.subscriptions: list[tuple[str, Any]] = []

    def replace(self, topics: dict[str, str]) -> None:
        """Subscribe to ``topics`` (joint → command topic) instead of the previous ones (under the loop's lock)."""
        self._drop()
        for joint, topic in topics.items():
            if self.direct and self.node is not None:
                sub = self.node.create_subscription(JointState, topic, _untaken, LATEST_BEST_EFFORT_QOS)
            else:
                sub = self.owner.create_subscription(JointState, topic, self._deliverer(joint), LATEST_BEST_EFFORT_QOS)
            self.subscriptions.append((joint, sub))

    def _deliverer(self, joint: str) -> Callable[[Any], None]:
        """The executor's callback for ``joint``'s commands (the fallback): hands each to ``handle``."""

        def deliver(msg: Any) -> None:
            self.handle(joint, msg.position)

        return deliver

    def take(self) -> None:
        """Hand the latest command of each joint that has a new one to ``handle`` (from the loop thread)."""
        if not self.direct:
            return
        for joint, sub in self.subscriptions:
            try:
                with sub.handle:
                    taken = sub.handle.take_message(JointState, self.raw)
            except Exception as error:  # noqa: BLE001 - another rclpy: let the executor take them
                self._fall_back(error)
                return
            if taken is None:
                continue
            if not self.raw:
                self.handle(joint, taken[0].position)
                continue
            positions = positions_of(taken[0])
            if positions is None:  # not little-endian CDR: rclpy's deserialiser reads it
                positions = deserialize_message(taken[0], JointState).position
            self.handle(joint, positions)

    def discard(self) -> None:
        """Take and drop the commands waiting (the port came back: only commands from now on count)."""
        handle = self.handle
        self.handle = _dropped
        try:
            self.take()
        finally:
            self.handle = handle

    def _fall_back(self, error: BaseException) -> None:
        topics = {joint: sub.topic_name for joint, sub in self.subscriptions}
        self.owner.get_logger().warning(
            f"taking commands in the loop failed ({error!r}); the executor takes them from now on (more CPU)"
        )
        self._drop()
        self.direct = False
        self.replace(topics)

    def _drop(self) -> None:
        for _, sub in self.subscriptions:
            (self.node if self.direct and self.node is not None else self.owner).destroy_subscription(sub)
        self.subscriptions = []

    def destroy(self) -> None:
        """Drop the subscriptions and the hidden node."""
        self._drop()
        if self.node is not None:
            self.node.destroy_node()
            self.node = None


def _dropped(_joint: str, _positions: Sequence[float]) -> None:
    """What :meth:`CommandTopics.discard` does with a command: nothing."""


def _untaken(_: JointState) -> None:
    """The hidden node's callback: never called (no executor spins that node)."""


__all__ = ["CommandTopics"]

"""The driver node's command inputs: the sas ``<robot>/set/*`` topics, ``~/joint_commands`` and
``~/joint_trajectory``, checked and handed to the core (in the executor thread)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence

from builtin_interfaces.msg import Time
from rclpy.node import Node
from rclpy.subscription import Subscription
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from bb_robot.driver.commands.commands import CommandMode, CommandValidator, JointCommand, describe_clamped
from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.core import DriverCore
from bb_robot.driver.errors import CommandRejected, TrajectoryRejected
from bb_robot.driver.model import ModelError
from bb_robot.ros.qos import DEFAULT_QOS, LATEST_RELIABLE_QOS

#: ``warn(key, text)``: a rate-limited warning (one per key and period).
Warn = Callable[[object, str], None]


def trajectory_points(points: Sequence[JointTrajectoryPoint]) -> list[TrajectoryPoint]:
    """A ``trajectory_msgs/JointTrajectory``'s points for the core."""
    return [
        TrajectoryPoint(
            p.time_from_start.sec + p.time_from_start.nanosec * 1e-9,
            p.positions,
            p.velocities,
            p.accelerations,
            p.effort,
        )
        for p in points
    ]


def start_ns(node: Node, stamp: Time) -> int | None:
    """A trajectory's header stamp on the monotonic clock (``None`` for a zero stamp: start now)."""
    if stamp.sec == 0 and stamp.nanosec == 0:
        return None
    offset = stamp.sec * 1_000_000_000 + stamp.nanosec - node.get_clock().now().nanoseconds
    return int(time.monotonic_ns() + offset)


def resolve(node: Node, name: str) -> str:
    """``name`` resolved on ``node`` (as given when it cannot be; only for messages)."""
    try:
        return str(node.resolve_topic_name(name))
    except Exception:  # noqa: BLE001 - only for messages
        return name


class CommandInputs:
    """The command subscriptions of one configured session.

    Args:
        node: The driver node.
        prefix: The sas topics' prefix (``robot_name``, or the robot's name).
        core: The session's core.
        validator: Checks commands against the limits and the backend's modes.
        warn: Rate-limited warnings.
        check: A last check of a validated command before the core takes it (the collision guard's
            path check of position commands); raises :class:`CommandRejected`.

    Raises:
        ModelError: The prefix makes no valid topic name.
    """

    def __init__(
        self,
        node: Node,
        prefix: str,
        core: DriverCore,
        validator: CommandValidator,
        warn: Warn,
        check: Callable[[JointCommand], None] | None = None,
    ) -> None:
        self._node, self._core, self._validator, self._warn = node, core, validator, warn
        self._check = check
        self._subscriptions: list[Subscription] = []
        for suffix, mode in (
            ("target_joint_positions", CommandMode.POSITION),
            ("target_joint_velocities", CommandMode.VELOCITY),
            ("target_joint_forces", CommandMode.EFFORT),
        ):
            topic = f"{prefix}/set/{suffix}"
            try:
                resolved = str(node.resolve_topic_name(topic))
            except Exception as error:  # noqa: BLE001 - rclpy raises several types for a bad name
                self.close()
                raise ModelError(f"'{topic}' is not a valid topic name ({error}); set robot_name") from None
            self._subscriptions.append(
                node.create_subscription(
                    Float64MultiArray,
                    topic,
                    functools.partial(self._on_array, mode=mode, topic=resolved),
                    LATEST_RELIABLE_QOS,
                )
            )
        commands, trajectories = resolve(node, "~/joint_commands"), resolve(node, "~/joint_trajectory")
        self._subscriptions.append(
            node.create_subscription(
                JointState, "~/joint_commands", lambda msg: self._on_joint_commands(msg, commands), DEFAULT_QOS
            )
        )
        self._subscriptions.append(
            node.create_subscription(
                JointTrajectory, "~/joint_trajectory", lambda msg: self._on_trajectory(msg, trajectories), DEFAULT_QOS
            )
        )

    def _submit(self, make: Callable[[], JointCommand], topic: str) -> None:
        try:
            command = make()
            if self._check is not None:
                self._check(command)
            self._core.submit(command)
        except CommandRejected as error:
            self._warn((topic, error.kind), f"rejected a command on '{topic}': {error.reason}")
            return
        if command.clamped:
            self._warn((topic, "clamped"), f"command on '{topic}': {describe_clamped(command)}")

    def _on_array(self, msg: Float64MultiArray, mode: CommandMode, topic: str) -> None:
        self._submit(lambda: self._validator.from_array(mode, msg.data, topic, time.monotonic_ns()), topic)

    def _on_joint_commands(self, msg: JointState, topic: str) -> None:
        self._submit(
            lambda: self._validator.from_joint_state(
                msg.name, msg.position, msg.velocity, msg.effort, topic, time.monotonic_ns()
            ),
            topic,
        )

    def _on_trajectory(self, msg: JointTrajectory, topic: str) -> None:
        core = self._core
        try:
            source = f"'{topic}'"
            trajectory = core.prepare_trajectory(
                msg.joint_names,
                trajectory_points(msg.points),
                start_ns=start_ns(self._node, msg.header.stamp),
                source=source,
            )
            core.execute(trajectory, None, source)
        except (TrajectoryRejected, CommandRejected) as error:
            self._warn((topic, "trajectory", str(error)), f"rejected a trajectory on '{topic}': {error}")

    def close(self) -> None:
        """Destroy the subscriptions (never raises)."""
        subscriptions, self._subscriptions = self._subscriptions, []
        destroy_subscriptions(self._node, subscriptions)


def destroy_subscriptions(node: Node, subscriptions: Sequence[Subscription]) -> None:
    """Destroy ``subscriptions`` of ``node`` (never raises: best effort while releasing)."""
    for subscription in subscriptions:
        try:
            node.destroy_subscription(subscription)
        except Exception:  # noqa: BLE001 - best effort while releasing
            pass

"""The driver's backends' ports (:class:`~bb_robot.driver.backends.host.BackendHost`) on an rclpy node.

The driver node gives each backend a :class:`RosBackendHost` of itself; the backend opens its
topics, parameters, ``/clock`` and graph queries through it and never imports ROS.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rosgraph_msgs.msg import Clock as ClockMessage
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from bb_robot.common.parameters import ParameterSpec, ParameterValue
from bb_robot.driver.backends.host import ActuatorCommand, JointStateLike
from bb_robot.driver.commands.commands import EFFORT_MODE as _EFFORT
from bb_robot.driver.commands.commands import HOLD_MODE as _HOLD
from bb_robot.driver.commands.commands import POSITION_MODE as _POSITION
from bb_robot.driver.commands.commands import VELOCITY_MODE as _VELOCITY
from bb_robot.driver.errors import BackendError
from bb_robot.ros.parameters import descriptor
from bb_robot.ros.qos import CLOCK_QOS, LATCHED_QOS, LATEST_BEST_EFFORT_QOS, LATEST_RELIABLE_QOS


class _Closer(Protocol):
    def __call__(self) -> object: ...


class _Handle:
    """A port that is closed by calling ``closer`` once."""

    def __init__(self, closer: _Closer) -> None:
        self._closer: _Closer | None = closer

    def close(self) -> None:
        closer, self._closer = self._closer, None
        if closer is None:
            return
        try:
            closer()
        except Exception:  # noqa: BLE001 - best effort while releasing
            pass


class _JointCommands:
    """One ``sensor_msgs/JointState`` publisher per actuator; each message is kept and reused."""

    def __init__(self, node: Node, topics: Sequence[str], names: Sequence[str]) -> None:
        self._node = node
        self._publishers: list[Publisher] = []
        self._messages: list[JointState] = []
        #: The mode each message's arrays are shaped for (-1: none yet).
        self._shapes: list[int] = []
        for topic, name in zip(topics, names, strict=True):
            self._publishers.append(node.create_publisher(JointState, topic, LATEST_RELIABLE_QOS))
            self._messages.append(JointState(name=[name]))
            self._shapes.append(-1)

    def send(self, commands: Sequence[ActuatorCommand]) -> None:
        node = self._node
        if not commands or not node.context.ok():
            return  # ROS is shutting down (SIGINT reached rclpy before the driver stopped its loop)
        stamp = node.get_clock().now().to_msg()
        shapes, messages, publishers = self._shapes, self._messages, self._publishers
        try:
            for i, mode, value, feed in commands:
                msg = messages[i]
                # The arrays keep their length while the mode does: then only their values change
                # (assigning a list goes through the message's checks, a few times slower).
                if mode == _POSITION or mode == _HOLD:
                    if shapes[i] != _POSITION:
                        msg.position, msg.velocity, msg.effort = [value], [feed], []
                        shapes[i] = _POSITION
                    else:
                        msg.position[0], msg.velocity[0] = value, feed
                elif mode == _VELOCITY:
                    if shapes[i] != _VELOCITY:
                        msg.position, msg.velocity, msg.effort = [], [value], []
                        shapes[i] = _VELOCITY
                    else:
                        msg.velocity[0] = value
                elif mode == _EFFORT:
                    if shapes[i] != _EFFORT:
                        msg.position, msg.velocity, msg.effort = [], [], [value]
                        shapes[i] = _EFFORT
                    else:
                        msg.effort[0] = value
                else:
                    continue
                msg.header.stamp = stamp
                publishers[i].publish(msg)
        except Exception:
            if not node.context.ok():
                return  # ROS shut down between the check above and a publish
            raise

    def subscriber_count(self, index: int) -> int:
        try:
            return int(self._publishers[index].get_subscription_count())
        except Exception as error:  # noqa: BLE001 - the graph may be unavailable while shutting down
            raise BackendError(f"subscriber count of {self._publishers[index].topic_name}: {error!r}") from None

    def close(self) -> None:
        publishers, self._publishers = self._publishers, []
        for publisher in publishers:
            _Handle(lambda p=publisher: self._node.destroy_publisher(p)).close()
        self._messages, self._shapes = [], []


class _Text:
    def __init__(self, node: Node, topic: str) -> None:
        self._node = node
        self._publisher: Publisher | None = node.create_publisher(String, topic, LATCHED_QOS)

    def publish(self, text: str) -> None:
        if self._publisher is not None:
            self._publisher.publish(String(data=text))

    def close(self) -> None:
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            _Handle(lambda: self._node.destroy_publisher(publisher)).close()


class _Clock:
    def __init__(self, node: Node) -> None:
        self._node = node
        self._publisher: Publisher | None = node.create_publisher(ClockMessage, "/clock", CLOCK_QOS)

    def publish(self, time_ns: int) -> None:
        publisher = self._publisher
        if publisher is None:
            return
        message = ClockMessage()
        message.clock.sec, message.clock.nanosec = divmod(int(time_ns), 1_000_000_000)
        try:
            publisher.publish(message)
        except Exception:  # noqa: BLE001 - the node is going away
            pass

    def close(self) -> None:
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            _Handle(lambda: self._node.destroy_publisher(publisher)).close()


class RosBackendHost:
    """:class:`~bb_robot.driver.backends.host.BackendHost` on the driver's rclpy node.

    Args:
        node: The driver node; every port is an entity of it (except :meth:`wait_for`'s helper node).
    """

    def __init__(self, node: Node) -> None:
        self._node = node
        #: The joint-state subscriptions open now: (topic, callback), for :meth:`wait_for`.
        self._inputs: list[tuple[str, Callable[[JointStateLike], None]]] = []
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)  # (not /clock under use_sim_time)

    @property
    def namespace(self) -> str:
        return str(self._node.get_namespace())

    @property
    def node_name(self) -> str:
        return str(self._node.get_fully_qualified_name())

    def now_ns(self) -> int:
        return int(self._node.get_clock().now().nanoseconds)

    def open_joint_commands(self, topics: Sequence[str], names: Sequence[str]) -> _JointCommands:
        return _JointCommands(self._node, topics, names)

    def subscribe_joint_states(self, topic: str, callback: Callable[[JointStateLike], None]) -> _Handle:
        node = self._node
        subscription = node.create_subscription(JointState, topic, callback, LATEST_BEST_EFFORT_QOS)
        entry = (topic, callback)
        self._inputs.append(entry)

        def close() -> None:
            if entry in self._inputs:
                self._inputs.remove(entry)
            node.destroy_subscription(subscription)

        return _Handle(close)

    def open_latched_text(self, topic: str) -> _Text:
        return _Text(self._node, topic)

    def open_clock(self) -> _Clock:
        return _Clock(self._node)

    def other_publishers(self, topic: str) -> list[str]:
        node = self._node
        try:
            infos = node.get_publishers_info_by_topic(topic)
        except Exception as error:  # noqa: BLE001 - the graph may be unavailable while shutting down
            raise BackendError(f"publishers of {topic}: {error!r}") from None
        me = (node.get_name(), node.get_namespace())
        others = [f"{info.node_namespace.rstrip('/')}/{info.node_name}" for info in infos]
        mine = [(info.node_name, info.node_namespace) == me for info in infos]
        if True in mine:
            others.pop(mine.index(True))
        return others

    def every(self, period: float, callback: Callable[[], None]) -> _Handle:
        node = self._node
        timer = node.create_timer(period, callback, clock=self._steady)
        return _Handle(lambda: node.destroy_timer(timer))

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        """The node's executor is busy running the caller (configure): a node of its own with its own
        executor subscribes to the same topics meanwhile."""
        node = self._node
        waiter = rclpy.create_node(
            f"_backend_wait_{uuid.uuid4().hex[:8]}",
            context=node.context,
            start_parameter_services=False,
            enable_rosout=False,
        )
        executor = SingleThreadedExecutor(context=node.context)
        steady = self._steady
        try:
            executor.add_node(waiter)
            for topic, callback in self._inputs:
                waiter.create_subscription(JointState, topic, callback, LATEST_BEST_EFFORT_QOS)
            deadline = steady.now().nanoseconds + int(timeout * 1e9)
            while True:
                if condition():
                    return True
                remaining = (deadline - steady.now().nanoseconds) * 1e-9
                if remaining <= 0:
                    return False
                executor.spin_once(timeout_sec=min(0.05, remaining))
        finally:
            executor.remove_node(waiter)
            waiter.destroy_node()
            executor.shutdown()

    def declare_parameters(self, specs: Sequence[ParameterSpec]) -> Mapping[str, ParameterValue]:
        node = self._node
        values: dict[str, ParameterValue] = {}
        for spec in specs:
            if not node.has_parameter(spec.name):
                node.declare_parameter(spec.name, spec.default, descriptor(spec))
            values[spec.name] = node.get_parameter(spec.name).value
        return values

    def parameter_overrides(self, prefix: str) -> list[str]:
        overrides = getattr(self._node, "_parameter_overrides", {}) or {}
        return [str(key) for key in overrides if str(key).startswith(prefix)]

    def undeclare_parameters(self, names: Sequence[str]) -> None:
        node = self._node
        for name in names:
            try:
                if node.has_parameter(name):
                    node.undeclare_parameter(name)
            except Exception:  # noqa: BLE001 - never raises
                pass

    def guard_parameters(self, guard: Callable[[str], str | None]) -> _Handle:
        node = self._node

        def check(parameters: Sequence[Parameter]) -> SetParametersResult:
            for parameter in parameters:
                reason = guard(parameter.name)
                if reason is not None:
                    return SetParametersResult(successful=False, reason=reason)
            return SetParametersResult(successful=True)

        node.add_on_set_parameters_callback(check)
        return _Handle(lambda: node.remove_on_set_parameters_callback(check))

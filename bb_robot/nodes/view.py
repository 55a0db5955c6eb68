"""The view node: the running robot in Foxglove, and recordings (``ros2 run bb_robot view``).

What it shows, its parameters and how to connect: ``docs/view.md``.  This module is the rclpy
layer: parameters, the look at the ROS graph and raw subscriptions whose serialized messages go
to :class:`bb_robot.view.bridge.FoxgloveBridge` untouched.  The rest (topics, schemas, assets,
the Foxglove server and the MCAP file) is :mod:`bb_robot.view`, without ROS.
"""

from __future__ import annotations

import functools
import importlib
import ipaddress
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from bb_robot.collision.world import model_world
from bb_robot.description.parameters import default_model_dirs
from bb_robot.driver.model import load_model_file, load_model_text
from bb_robot.errors import BbRobotError
from bb_robot.loading import LoadedModel
from bb_robot.nodes.spin import spin_node
from bb_robot.nodes.view_planning import show_planning
from bb_robot.ros.qos import LATCHED_QOS
from bb_robot.view.assets import AssetResolver
from bb_robot.view.bridge import FoxgloveBridge, ViewOptions
from bb_robot.view.obstacles import obstacle_scene
from bb_robot.view.parameters import PARAMETERS, ViewParameter
from bb_robot.view.schemas import SchemaError, ros2msg_schema, split_type_name
from bb_robot.view.topics import PublisherQos, TopicChoice, choose_topics

NODE_NAME = "view"
#: Depth of a subscription to a volatile topic.
VOLATILE_DEPTH = 100

_TYPES = {
    "string": ParameterType.PARAMETER_STRING,
    "integer": ParameterType.PARAMETER_INTEGER,
    "double": ParameterType.PARAMETER_DOUBLE,
    "bool": ParameterType.PARAMETER_BOOL,
    "string_array": ParameterType.PARAMETER_STRING_ARRAY,
}


class StartupError(BbRobotError):
    """The node cannot start (its message says why)."""


def _descriptor(spec: ViewParameter) -> ParameterDescriptor:
    descriptor = ParameterDescriptor(
        name=spec.name, type=_TYPES[spec.type], description=spec.description, read_only=True
    )
    if spec.range is not None and spec.type == "integer":
        descriptor.integer_range = [IntegerRange(from_value=int(spec.range[0]), to_value=int(spec.range[1]), step=1)]
    elif spec.range is not None:
        descriptor.floating_point_range = [FloatingPointRange(from_value=spec.range[0], to_value=spec.range[1])]
    return descriptor


def subscription_qos(choice: TopicChoice) -> QoSProfile:
    """The QoS matching ``choice``'s publishers (latched: transient local, keeping what is resent)."""
    return QoSProfile(
        depth=max(choice.latch_depth, 1) if choice.latched else VOLATILE_DEPTH,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.BEST_EFFORT if choice.best_effort else ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if choice.latched else DurabilityPolicy.VOLATILE,
    )


def message_class(type_name: str) -> Any:
    """The Python class of a ROS message type (``package/msg/Type``).

    Raises:
        SchemaError: the package's Python messages are not installed.
    """
    package, name = split_type_name(type_name)
    try:
        return getattr(importlib.import_module(f"{package}.msg"), name)
    except (ImportError, AttributeError):
        raise SchemaError(f"message type '{type_name}': its Python package '{package}' is not installed") from None


class ViewNode(Node):
    """Bridges the configured ROS topics that exist to Foxglove clients and an MCAP file."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare the parameters, start the server and the recording, look at the graph.

        Raises:
            StartupError: the server cannot listen or the recording cannot be created.
        """
        super().__init__(NODE_NAME, **kwargs)
        for spec in PARAMETERS:
            default = spec.default if spec.default is not None else default_model_dirs()
            self.declare_parameter(
                spec.name, list(default) if isinstance(default, tuple) else default, _descriptor(spec)
            )
        value = self.get_parameter
        record = value("record").value
        options = ViewOptions(
            serve=value("serve").value,
            host=value("host").value,
            port=value("port").value,
            record=Path(record).expanduser().resolve() if record else None,
        )
        if not options.serve and options.record is None:
            raise StartupError("serve is false and record is empty: nothing to do")
        self._wanted: list[str] = []
        for topic in value("topics").value or ():
            try:
                self._wanted.append(self.resolve_topic_name(topic))
            except Exception as error:  # noqa: BLE001 - rclpy's name validation errors
                raise StartupError(f"topics: '{topic}' is not a valid ROS topic name ({error})") from None
        self._assets = AssetResolver(tuple(value("model_dirs").value or ()))
        try:
            self._bridge = FoxgloveBridge(options, self._assets.fetch)
        except BbRobotError as error:
            raise StartupError(str(error)) from None
        self._subscriptions_by_topic: dict[str, Any] = {}
        self._reported: set[str] = set()
        self._announce(options)
        self._robot_subscription: Any = None
        self._planning = show_planning(
            self, self._bridge, value("frame_prefix").value, value("planning.tip").value, self._log
        )
        self._follow_robot()
        self._discover()
        self.create_timer(value("discovery_period").value, self._discover)

    def _announce(self, options: ViewOptions) -> None:
        url = self._bridge.url()
        if url is not None:
            print(
                f"Foxglove: open {url} (Open connection → Foxglove WebSocket), or {self._bridge.app_url()}; "
                "layout: config/foxglove/bb_robot.json",
                flush=True,
            )
            self.get_logger().info(f"serving {self._wanted} on {url} (unauthenticated)")
            if not _is_loopback(options.host):
                self.get_logger().warning(
                    f"host {options.host}: the view is shared beyond this machine WITHOUT authentication: anyone "
                    "who reaches the port sees the robot's topics and can fetch the mesh files in model_dirs"
                )
        if options.record is not None:
            print(f"recording to {options.record}", flush=True)
            self.get_logger().info(f"recording {self._wanted} to {options.record}")

    # ------------------------------------------------------------------ the robot: obstacles and planning
    def _follow_robot(self) -> None:
        """Get the robot (its file, or robot_description) for ``collision.world`` and the planning display."""
        value = self.get_parameter
        if not value("collision.world").value and self._planning is None:
            return
        model = value("model").value
        if model:
            try:
                loaded = load_model_file(model, tuple(value("model_dirs").value or ()), value("model_scope").value)
            except BbRobotError as error:
                self.get_logger().error(f"collision.world and plans are not shown: model '{model}': {error}")
                return
            self._robot_known(loaded)
            return
        self._robot_subscription = self.create_subscription(
            String, "robot_description", self._on_description, LATCHED_QOS
        )

    def _on_description(self, message: String) -> None:
        """The first robot_description: the robot the obstacles are placed around (later ones: ignored)."""
        if self._robot_subscription is None:
            return
        self.destroy_subscription(self._robot_subscription)
        self._robot_subscription = None
        try:
            loaded = load_model_text(message.data)
        except BbRobotError as error:
            self.get_logger().error(f"collision.world and plans are not shown: robot_description: {error}")
            return
        self._robot_known(loaded)

    def _robot_known(self, loaded: LoadedModel) -> None:
        if self.get_parameter("collision.world").value:
            self._serve_world(loaded)
        if self._planning is not None:
            self._planning.robot(loaded.robot)

    def _log(self, level: str, text: str) -> None:
        getattr(self.get_logger(), level)(text)

    def _serve_world(self, loaded: LoadedModel) -> None:
        value = self.get_parameter
        path = value("collision.world").value
        try:
            world = model_world(loaded, path, tuple(value("model_dirs").value or ()))
        except BbRobotError as error:  # the view shows what it can; the driver refuses to configure
            self.get_logger().error(f"collision.world is not shown: {error}")
            return
        topic = self.resolve_topic_name("collision_world")
        frame = value("frame_prefix").value + loaded.robot.root_link
        self._bridge.add_scene(topic, obstacle_scene(world, frame))
        self.get_logger().info(f"showing collision.world {path}: {len(world.parts)} obstacle parts on {topic}")

    # ------------------------------------------------------------------ the graph
    def _discover(self) -> None:
        types = {name: list(found) for name, found in self.get_topic_names_and_types()}
        publishers = {
            topic: [
                PublisherQos(
                    reliable=info.qos_profile.reliability == ReliabilityPolicy.RELIABLE,
                    transient_local=info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL,
                )
                for info in self.get_publishers_info_by_topic(topic)
            ]
            for topic in self._wanted
            if topic in types
        }
        choices, notes = choose_topics(self._wanted, types, publishers)
        for note in notes:
            self._report_once(note)
        current = {choice.topic: choice for choice in choices}
        for topic in list(self._subscriptions_by_topic):
            if current.get(topic) != self._bridge.choice(topic):
                self._drop(topic)
        for choice in choices:
            if choice.topic not in self._subscriptions_by_topic:
                self._bridge_topic(choice)

    def _bridge_topic(self, choice: TopicChoice) -> None:
        try:
            schema = ros2msg_schema(choice.type_name)
            cls = message_class(choice.type_name)
        except SchemaError as error:
            self._report_once(f"topic '{choice.topic}' is not shown: {error}")
            return
        self._bridge.add(choice, schema)
        topic = choice.topic
        self._subscriptions_by_topic[topic] = self.create_subscription(
            cls,
            topic,
            functools.partial(self._forward, topic),
            subscription_qos(choice),
            raw=True,
        )
        self.get_logger().info(
            f"showing {topic} ({choice.type_name}{', latched' if choice.latched else ''}"
            f"{', best effort' if choice.best_effort else ''})"
        )

    def _drop(self, topic: str) -> None:
        subscription = self._subscriptions_by_topic.pop(topic)
        self.destroy_subscription(subscription)
        self._bridge.remove(topic)
        self.get_logger().info(f"no longer showing {topic} (its publishers are gone or changed)")

    def _forward(self, topic: str, data: bytes) -> None:
        """Hand one serialised message of ``topic`` to the Foxglove bridge (server and recording)."""
        self._bridge.publish(topic, data, time.time_ns())

    def _report_once(self, text: str) -> None:
        if text not in self._reported:
            self._reported.add(text)
            self.get_logger().warning(text)

    def destroy_node(self) -> None:
        """Stop the server and finish the recording, then destroy the node."""
        self._bridge.close()
        super().destroy_node()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(args: Sequence[str] | None = None) -> int:
    """Run the node until SIGINT or SIGTERM (the recording is then finished); exit status 1 when it cannot start."""
    return spin_node(ViewNode, NODE_NAME, (StartupError,), args)


if __name__ == "__main__":
    sys.exit(main())

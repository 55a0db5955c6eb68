"""The description node: publishes a robot's description and its TF (``ros2 run bb_robot description``).

What it does, its parameters and topics: ``docs/nodes/description.md``.  This module is the
thin ROS layer: parameters, publishers, subscriptions and timers.  The decisions (loading and
``model_dirs``, merging and validating joint states, which transforms to publish and their
values, the serial manipulator) are made in :mod:`bb_robot.description`, which the tests
exercise without ROS.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos_overriding_options import QoSOverridingOptions
from std_msgs.msg import String

from bb_robot.common.collector import settle_collector
from bb_robot.common.parameters import initial_value
from bb_robot.common.throttle import WarningThrottle
from bb_robot.description.base_frame import base_transform, check_base_pose
from bb_robot.description.parameters import PARAMETERS, RELOAD_PARAMETERS
from bb_robot.description.sources import LoadedModel, load_description_text, load_model
from bb_robot.description.timing import process_age
from bb_robot.errors import BbRobotError
from bb_robot.nodes.spin import spin_node
from bb_robot.ros.parameters import descriptor
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS, TF_QOS

if TYPE_CHECKING:
    from geometry_msgs.msg import TransformStamped
    from rclpy.subscription import Subscription
    from rclpy.timer import Timer
    from sensor_msgs.msg import JointState

    from bb_robot.description.core import IntArray, JointStateTf, PreparedModel
    from bb_robot.description.manipulator import TipPose
    from bb_robot.description.tf_wire import TfWire, Transform

# Imported after the first robot_description publication (they bring numpy and the message
# packages with arrays): see DescriptionNode.__init__.

NODE_NAME = "description"
#: At most this many queued joint-state messages are taken per executor round (see _on_joint_states).
DRAIN_LIMIT = 100
#: Seconds between checks for ~/tip_pose subscribers (the pose is computed only when there are some).
TIP_LISTENER_CHECK = 1.0

# QoS (bb_robot.ros.qos): ``robot_description``, ``/tf_static`` and ``~/serial_manipulator`` LATCHED_QOS,
# ``/tf`` TF_QOS (what tf2 listeners request).
#: Joint-state subscriptions (overridable with the ``qos_overrides.<topic>.subscription.*`` parameters).
JOINT_STATE_QOS = TF_QOS
#: ``~/tip_pose``.
TIP_POSE_QOS = DEFAULT_QOS
#: Parameters that place the robot in a shared frame (bb_robot.description.base_frame).
BASE_PARAMETERS = frozenset({"parent_frame", "base_pose"})


class StartupError(BbRobotError):
    """The node cannot start (its message says why)."""


class DescriptionNode(Node):
    """Publishes ``robot_description``, ``/tf_static``, ``/tf``, ``~/serial_manipulator`` and ``~/tip_pose``."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare the parameters, publish ``robot_description`` as early as possible, then the rest.

        Raises :class:`StartupError` when the configured model cannot be loaded.
        """
        super().__init__(NODE_NAME, **kwargs)
        for spec in PARAMETERS:
            self.declare_parameter(spec.name, initial_value(spec), descriptor(spec))
        self._model_dirs: tuple[str, ...] = tuple(self.get_parameter("model_dirs").value or ())
        self._frame_prefix: str = self.get_parameter("frame_prefix").value
        self._ignore_timestamp: bool = self.get_parameter("ignore_timestamp").value
        self._frequency: float = self.get_parameter("publish_frequency").value
        try:
            check_base_pose(self.get_parameter("base_pose").value)
        except BbRobotError as error:
            raise StartupError(str(error)) from None
        # No QoS event handlers on the publishers: each is one more entity the executor waits on
        # for every message (a subscriber with incompatible QoS still reports it on its side).
        quiet = PublisherEventCallbacks(use_default_callbacks=False)
        self._description_pub = self.create_publisher(String, "robot_description", LATCHED_QOS, event_callbacks=quiet)

        # 1. the model, and robot_description as soon as the file is parsed and validated
        model = self.get_parameter("model").value
        text = self.get_parameter("robot_description").value
        if model and text:
            raise StartupError("both model and robot_description are set: set one of them")
        active = "model" if model else "robot_description" if text else None
        loaded: LoadedModel | None = None
        if active is not None:
            try:
                loaded = self._load_source(active, self._config())
            except BbRobotError as error:
                raise StartupError(str(error)) from None
            except Exception as error:  # noqa: BLE001 - reported like the others, with its type
                raise StartupError(f"{type(error).__name__}: {error}") from error
            self._description_pub.publish(String(data=loaded.description))
            age = process_age()
            self.get_logger().info(
                f"published robot_description of '{loaded.robot.name}' ({loaded.kind}, {loaded.source})"
                + (f" {age:.3f} s after process start" if age is not None else "")
            )

        # 2. everything else
        from geometry_msgs.msg import PoseStamped, TransformStamped
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        from bb_robot.description.joint_states import RejectedMessage

        self._TFMessage = TFMessage
        self._TransformStamped = TransformStamped
        self._PoseStamped = PoseStamped
        self._Rejected = RejectedMessage
        self._static_pub = self.create_publisher(TFMessage, "/tf_static", LATCHED_QOS, event_callbacks=quiet)
        self._tf_pub = self.create_publisher(TFMessage, "/tf", TF_QOS, event_callbacks=quiet)
        self._serial_pub = self.create_publisher(String, "~/serial_manipulator", LATCHED_QOS, event_callbacks=quiet)
        self._tip_pub = self.create_publisher(PoseStamped, "~/tip_pose", TIP_POSE_QOS, event_callbacks=quiet)

        self._throttle = WarningThrottle(5.0)
        self._prepared: PreparedModel | None = None
        self._state: JointStateTf | None = None
        self._active: str | None = None
        self._pending: tuple[str | None, PreparedModel] | None = None
        self._wires: dict[bytes, TfWire | None] = {}
        self._last_edges: IntArray | None = None
        self._last_wire: TfWire | None = None
        self._tip_checked = -float("inf")
        self._tip_listeners = 0
        self._last_publish = -float("inf")
        self._pending_stamp: int | None = None
        self._pending_updated: set[int] = set()
        self._timer: Timer | None = None
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        if loaded is None:
            self.get_logger().warning(
                "no model: set the parameter 'model' (a file in model_dirs "
                f"{list(self._model_dirs)}) or 'robot_description' (URDF text); waiting for one"
            )
        else:
            from bb_robot.description.core import prepare

            try:
                prepared = prepare(loaded, self.get_parameter("tip_link").value)
            except BbRobotError as error:
                raise StartupError(str(error)) from None
            self._apply(active, prepared, publish_description=False)

        self._topics = tuple(self.get_parameter("source_list").value or ())
        self._JointState = JointState
        self._drain = True
        self._subscriptions_js: dict[str, Subscription] = {}
        for topic in self._topics:
            self._subscriptions_js[topic] = self.create_subscription(
                JointState,
                topic,
                functools.partial(self._on_joint_states, topic=topic),
                JOINT_STATE_QOS,
                qos_overriding_options=QoSOverridingOptions.with_default_policies(),
            )
        self._configure_timer()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)

    # ------------------------------------------------------------------ loading
    def _config(self, changes: dict[str, Any] | None = None) -> dict[str, Any]:
        config = {name: self.get_parameter(name).value for name in RELOAD_PARAMETERS}
        config.update({k: v for k, v in (changes or {}).items() if k in RELOAD_PARAMETERS})
        return config

    def _load_source(self, active: str, config: dict[str, Any]) -> LoadedModel:
        if active == "model":
            return load_model(config["model"], self._model_dirs, model_scope=config["model_scope"])
        return load_description_text(config["robot_description"])

    def _load(self, active: str, config: dict[str, Any]) -> PreparedModel:
        from bb_robot.description.core import prepare

        return prepare(self._load_source(active, config), config["tip_link"])

    def _apply(self, active: str | None, prepared: PreparedModel, *, publish_description: bool = True) -> None:
        """Make ``prepared`` the current model and publish what is latched about it."""
        for warning in prepared.loaded.warnings:
            self.get_logger().warning(warning)
        held = prepared.held_warning()
        if held:
            self.get_logger().warning(held)
        from bb_robot.description.core import JointStateTf

        self._active = active
        self._prepared = prepared
        self._state = JointStateTf(prepared.plan, self._state)
        self._clear_wires()
        if publish_description:
            self._description_pub.publish(String(data=prepared.loaded.description))
        self._publish_latched_frames()
        settle_collector()  # the model out of the collector's full passes between two messages

    def _publish_latched_frames(self) -> None:
        """``/tf_static`` and ``~/serial_manipulator`` (both carry frame names)."""
        from bb_robot.description.core import static_transforms

        prepared = self._prepared
        if prepared is None:
            return
        stamp = self.get_clock().now().to_msg()
        message = self._TFMessage()
        transforms = static_transforms(prepared, self._frame_prefix)
        placement = prepared.loaded.placement
        top = self._frame_prefix + (placement.parent if placement is not None else prepared.loaded.robot.root_link)
        try:
            base = base_transform(self.get_parameter("parent_frame").value, self.get_parameter("base_pose").value, top)
        except BbRobotError as error:
            base = None
            self.get_logger().error(f"not publishing the robot's base transform: {error}")
        if base is not None:
            transforms.insert(0, base)
        for parent, child, translation, rotation in transforms:
            message.transforms.append(
                self._transform(parent, child, stamp.sec, stamp.nanosec, (*translation, *rotation))
            )
        self._static_pub.publish(message)
        self._serial_pub.publish(String(data=prepared.serial_text(self._frame_prefix)))

    # -------------------------------------------------------------- parameters
    def _on_set_parameters(self, parameters: Sequence[Parameter]) -> SetParametersResult:
        changes = {p.name: p.value for p in parameters}
        self._pending = None
        if "base_pose" in changes:
            try:
                check_base_pose(changes["base_pose"])
            except BbRobotError as error:
                return SetParametersResult(successful=False, reason=str(error))
        if not RELOAD_PARAMETERS & changes.keys():
            return SetParametersResult(successful=True)
        config = self._config(changes)
        if changes.get("model") and changes.get("robot_description"):
            return SetParametersResult(successful=False, reason="set model or robot_description, not both")
        active = self._active
        if changes.get("model"):
            active = "model"
        elif changes.get("robot_description"):
            active = "robot_description"
        if active == "model" and not config["model"]:
            active = "robot_description" if config["robot_description"] else None
        elif active == "robot_description" and not config["robot_description"]:
            active = "model" if config["model"] else None
        if active is None:
            if self._active is not None:
                return SetParametersResult(
                    successful=False,
                    reason="cannot clear the model in use: set another model or robot_description instead",
                )
            return SetParametersResult(successful=True)
        try:
            prepared = self._load(active, config)
        except Exception as error:  # noqa: BLE001 - whatever fails, the node keeps its model and runs on
            reason = str(error) if isinstance(error, BbRobotError) else f"{type(error).__name__}: {error}"
            self.get_logger().error(f"rejected the new parameters, keeping the current model: {reason}")
            return SetParametersResult(successful=False, reason=reason)
        self._pending = (active, prepared)
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, parameters: Sequence[Parameter]) -> None:
        names = {p.name for p in parameters}
        if "frame_prefix" in names:
            self._frame_prefix = self.get_parameter("frame_prefix").value
            self._clear_wires()
        if "ignore_timestamp" in names:
            self._ignore_timestamp = self.get_parameter("ignore_timestamp").value
        if "publish_frequency" in names:
            self._frequency = self.get_parameter("publish_frequency").value
            self._configure_timer()
        pending, self._pending = self._pending, None
        if pending is not None:
            active, prepared = pending
            self._apply(active, prepared)
            loaded = prepared.loaded
            self.get_logger().info(f"reloaded: '{prepared.robot_name}' ({loaded.kind}, {loaded.source})")
        elif "frame_prefix" in names or BASE_PARAMETERS & names:
            self._publish_latched_frames()

    def _configure_timer(self) -> None:
        if self._timer is not None:
            self.destroy_timer(self._timer)
            self._timer = None
        if self._frequency > 0.0:
            self._timer = self.create_timer(1.0 / self._frequency, self._on_timer, clock=self._steady)

    # ------------------------------------------------------------ joint states
    def _on_joint_states(self, msg: JointState, topic: str) -> None:
        """Handle the message the executor took, then the ones already waiting behind it.

        One round through rclpy's executor costs about 200 µs of Python per message, seven times
        the node's own work; taking the queued messages here (at most :data:`DRAIN_LIMIT`, so
        parameter requests and timers still get their turn) lets a node that fell behind catch
        up instead of losing messages once the queue (depth 100) overflows.  Each message is
        still handled, and answered on /tf, on its own and in order.
        """
        self._on_joint_state(msg, topic)
        if not self._drain:
            return
        subscription = self._subscriptions_js.get(topic)
        if subscription is None:
            return
        try:
            handle = subscription.handle
            for _ in range(DRAIN_LIMIT):
                with handle:
                    taken = handle.take_message(self._JointState, False)
                if taken is None:
                    return
                self._on_joint_state(taken[0], topic)
        except Exception as error:  # noqa: BLE001 - another rclpy: fall back to one message per round
            self._drain = False
            self.get_logger().warning(f"taking queued joint states directly failed ({error!r}); not doing it again")

    def _on_joint_state(self, msg: JointState, topic: str) -> None:
        state = self._state
        if state is None:
            return
        try:
            try:
                updated = state.merge(msg.name, msg.position, len(msg.velocity), len(msg.effort))
            except self._Rejected as error:
                self._warn(
                    (topic, error.kind), f"rejected a JointState message on '{self._topic_name(topic)}': {error}"
                )
                return
            if not len(updated):
                return
            if self._ignore_timestamp:
                stamp = self.get_clock().now().nanoseconds
            else:
                stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            if self._frequency <= 0.0:
                self._publish_tf(state, stamp, updated)
                return
            self._pending_stamp = stamp
            self._pending_updated.update(int(i) for i in updated)
            if time.monotonic() - self._last_publish >= 1.0 / self._frequency:
                self._flush(state)
        except Exception as error:  # noqa: BLE001 - a bad message must never stop the node
            self._warn(("error", topic), f"failed to handle a JointState message on '{topic}': {error!r}")

    def _on_timer(self) -> None:
        state = self._state
        if state is not None and self._pending_stamp is not None:
            if time.monotonic() - self._last_publish >= 0.999 / self._frequency:
                self._flush(state)

    def _flush(self, state: JointStateTf) -> None:
        stamp, self._pending_stamp = self._pending_stamp, None
        import numpy as np

        updated = np.array(sorted(self._pending_updated), dtype=np.intp)
        self._pending_updated.clear()
        if stamp is not None:
            self._publish_tf(state, stamp, updated)

    def _publish_tf(self, state: JointStateTf, stamp: int, updated: IntArray) -> None:
        publication = state.publication(stamp, updated)
        if publication is None:
            return
        edges, rows = publication
        sec, nanosec = divmod(stamp, 1_000_000_000)
        wire = self._wire(state, edges)
        if wire is not None:
            self._tf_pub.publish(wire.encode(sec, nanosec, rows))
        else:
            values = rows if isinstance(rows, list) else rows.tolist()
            frames = self._frames(state, edges)
            message = self._TFMessage(
                transforms=[
                    self._transform(parent, child, sec, nanosec, row)
                    for (parent, child), row in zip(frames, values, strict=True)
                ]
            )
            self._tf_pub.publish(message)
        now = time.monotonic()
        self._last_publish = now
        tip = self._prepared.tip if self._prepared is not None else None
        if tip is None:
            return
        if now - self._tip_checked > TIP_LISTENER_CHECK:  # asking rmw costs as much as the kinematics
            self._tip_checked = now
            self._tip_listeners = self._tip_pub.get_subscription_count()
        if self._tip_listeners and tip.ready(state.seen):
            self._publish_tip(tip, state, sec, nanosec)

    def _publish_tip(self, tip: TipPose, state: JointStateTf, sec: int, nanosec: int) -> None:
        (x, y, z), (qx, qy, qz, qw) = tip.pose(state.values)
        pose = self._PoseStamped()
        pose.header.frame_id = self._frame_prefix + tip.base_link
        pose.header.stamp.sec = sec
        pose.header.stamp.nanosec = nanosec
        position, orientation = pose.pose.position, pose.pose.orientation
        position.x, position.y, position.z = x, y, z
        orientation.x, orientation.y, orientation.z, orientation.w = qx, qy, qz, qw
        self._tip_pub.publish(pose)

    def _frames(self, state: JointStateTf, edges: IntArray) -> list[tuple[str, str]]:
        plan, prefix = state.plan, self._frame_prefix
        return [(prefix + plan.movable_parents[i], prefix + plan.movable_children[i]) for i in edges.tolist()]

    def _wire(self, state: JointStateTf, edges: IntArray) -> TfWire | None:
        if edges is self._last_edges:  # the usual case: the same array of every seen edge
            return self._last_wire
        key = edges.tobytes()
        if key in self._wires:
            self._last_edges, self._last_wire = edges, self._wires[key]
            return self._last_wire
        if len(self._wires) >= 32:
            self._clear_wires()
        from bb_robot.description.tf_wire import TfWire, WireLayoutError

        try:
            wire: TfWire | None = TfWire(self._frames(state, edges), self._serialize, self._deserialize)
        except WireLayoutError as error:
            self.get_logger().warning(f"publishing /tf as message objects (slower): {error}")
            wire = None
        self._wires[key] = wire
        self._last_edges, self._last_wire = edges, wire
        return wire

    # ------------------------------------------------------------------ helpers
    def _clear_wires(self) -> None:
        self._wires.clear()
        self._last_edges, self._last_wire = None, None

    def _transform(self, parent: str, child: str, sec: int, nanosec: int, values: Sequence[float]) -> TransformStamped:
        t = self._TransformStamped()
        t.header.frame_id = parent
        t.child_frame_id = child
        t.header.stamp.sec = sec
        t.header.stamp.nanosec = nanosec
        translation, rotation = t.transform.translation, t.transform.rotation
        translation.x, translation.y, translation.z = values[0], values[1], values[2]
        rotation.x, rotation.y, rotation.z, rotation.w = values[3], values[4], values[5], values[6]
        return t

    def _serialize(self, transforms: Sequence[Transform]) -> bytes:
        from rclpy.serialization import serialize_message

        message = self._TFMessage(transforms=[self._transform(p, c, s, n, v) for p, c, s, n, v in transforms])
        data: bytes = serialize_message(message)
        return data

    def _deserialize(self, data: bytes) -> list[Transform]:
        from rclpy.serialization import deserialize_message

        message = deserialize_message(data, self._TFMessage)
        result: list[Transform] = []
        for t in message.transforms:
            tr, rot = t.transform.translation, t.transform.rotation
            values = (tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w)
            result.append((t.header.frame_id, t.child_frame_id, t.header.stamp.sec, t.header.stamp.nanosec, values))
        return result

    def _topic_name(self, topic: str) -> str:
        try:
            return str(self.resolve_topic_name(topic))
        except Exception:  # noqa: BLE001 - only for the message
            return topic

    def _warn(self, key: object, text: str) -> None:
        muted = self._throttle.allow(key)
        if muted is None:
            return
        suffix = f" ({muted} more since the last warning)" if muted else ""
        self.get_logger().warning(text + suffix)


def main(args: Sequence[str] | None = None) -> int:
    """Run the node until SIGINT or SIGTERM; exit status 1 when it cannot start."""
    return spin_node(DescriptionNode, NODE_NAME, (StartupError,), args)


if __name__ == "__main__":
    sys.exit(main())

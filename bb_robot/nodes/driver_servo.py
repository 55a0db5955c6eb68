"""The driver node's Cartesian servo inputs: ``~/twist_commands`` and ``~/pose_commands``, checked and
handed to the core (in the executor thread), and the servo's ``/diagnostics`` status.

A rejected message (NaN, inf, an unknown frame, a speed beyond 10x the maximum) is named in a
rate-limited warning (topic and field) and the tool decelerates as for a stale input.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.node import Node
from rclpy.subscription import Subscription

from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.core import DriverCore
from bb_robot.driver.cycle.inbox import ServoInput
from bb_robot.driver.errors import CommandRejected
from bb_robot.driver.guard.collision_guard import CollisionGuard
from bb_robot.driver.servo.servo import STREAM_SILENCES, Servo
from bb_robot.driver.servo.servo_inputs import (
    SERVO_PARAMETERS,
    ServoError,
    ServoInputError,
    ServoSettings,
    check_pose,
    check_twist,
    servo_settings,
    stop_input,
)
from bb_robot.model.robot import Robot
from bb_robot.nodes.driver_commands import Warn, destroy_subscriptions, resolve
from bb_robot.ros.qos import DEFAULT_QOS


def settings_from(value: Callable[[str], object], namespace: str) -> ServoSettings:
    """The servo's settings from the ``servo.*`` parameters (an empty frame prefix: the namespace).

    Args:
        value: a parameter's value by name.
        namespace: the node's namespace.

    Returns:
        The settings.
    """
    settings = servo_settings({spec.name: value(spec.name) for spec in SERVO_PARAMETERS})
    if not settings.frame_prefix and namespace.strip("/"):
        settings = dataclasses.replace(settings, frame_prefix=namespace.strip("/"))
    return settings


def make_servo(
    value: Callable[[str], object],
    robot: Robot,
    limits: JointLimitTable,
    guard: CollisionGuard | None,
    log: Callable[[str, str], None],
    namespace: str = "",
) -> tuple[Servo | None, str]:
    """The session's servo from the ``servo.*`` parameters, or why there is none.

    Args:
        value: a parameter's value by name.
        robot: the model.
        limits: the driven joints' effective limits.
        guard: the collision guard, whose proximity scale the servo applies.
        log: the driver's log.
        namespace: the node's namespace: the frame prefix when ``servo.frame_prefix`` is empty
            (as ``bb-robot up`` and bb_arm_pair set the description's ``frame_prefix``).

    Returns:
        ``(servo, "")`` or ``(None, reason)``.

    Raises:
        ServoError: ``servo.enable`` is true and ``servo.tip`` names no usable chain, or is empty where
            the driven tree branches (the message names the candidates).
    """
    if not value("servo.enable"):
        return None, "servo.enable is false"
    settings = settings_from(value, namespace)

    def proximity() -> float:
        verdict = guard.verdict if guard is not None else None
        return verdict.scale if verdict is not None else 1.0

    try:
        servo = Servo(robot, limits.names, limits, settings, log=log, proximity=proximity if guard else None)
    except ServoError as error:
        raise ServoError(f"{error}; set servo.tip to the link to move, or servo.enable to false") from None
    log("info", servo.describe())
    return servo, ""


class ServoInputs:
    """The servo's subscriptions of one configured session.

    Args:
        node: The driver node.
        core: The session's core.
        servo: Its servo.
        warn: Rate-limited warnings.
    """

    def __init__(self, node: Node, core: DriverCore, servo: Servo, warn: Warn) -> None:
        self._node, self._core, self._servo, self._warn = node, core, servo, warn
        twists, poses = resolve(node, "~/twist_commands"), resolve(node, "~/pose_commands")
        on_twist, on_pose = (lambda m: self._on_twist(m, twists)), (lambda m: self._on_pose(m, poses))
        self._subscriptions: list[Subscription] = [
            node.create_subscription(TwistStamped, "~/twist_commands", on_twist, DEFAULT_QOS),
            node.create_subscription(PoseStamped, "~/pose_commands", on_pose, DEFAULT_QOS),
        ]

    def _submit(self, make: Callable[[], ServoInput], topic: str) -> None:
        try:
            message = make()
        except ServoInputError as error:
            self._warn((topic, "rejected", str(error)), f"rejected a message: {error}; the tool decelerates to a stop")
            message = stop_input(topic, str(error), time.monotonic_ns())
        try:
            self._core.submit(message)
        except CommandRejected as error:
            self._warn((topic, error.kind), f"rejected a command on '{topic}': {error.reason}")

    def _on_twist(self, msg: TwistStamped, topic: str) -> None:
        servo = self._servo
        linear, angular = msg.twist.linear, msg.twist.angular
        self._submit(
            lambda: check_twist(
                topic,
                servo.frames,
                servo.settings,
                msg.header.frame_id,
                (linear.x, linear.y, linear.z),
                (angular.x, angular.y, angular.z),
                time.monotonic_ns(),
            ),
            topic,
        )

    def _on_pose(self, msg: PoseStamped, topic: str) -> None:
        p, q, frame = msg.pose.position, msg.pose.orientation, msg.header.frame_id
        frames = self._servo.frames
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        clock = self._node.get_clock().now().nanoseconds  # the ROS clock (/clock under use_sim_time)
        received = time.monotonic_ns()
        self._submit(
            lambda: check_pose(topic, frames, frame, (p.x, p.y, p.z), (q.x, q.y, q.z, q.w), received, stamp, clock),
            topic,
        )

    def close(self) -> None:
        """Destroy the subscriptions (never raises)."""
        subscriptions, self._subscriptions = self._subscriptions, []
        destroy_subscriptions(self._node, subscriptions)


def servo_status(node: str, servo: Servo | None, off_reason: str, hardware: str) -> DiagnosticStatus:
    """The ``<node>: servo`` status: idle, tracking, slowed or halted, and why.

    Args:
        node: The node's name.
        servo: The servo (``None``: off).
        off_reason: Why there is none.
        hardware: The hardware id of the driver's statuses.

    Returns:
        OK when idle or tracking, WARN when slowed or halted (or off for a reason other than the parameter).
    """
    status = DiagnosticStatus(name=f"{node}: servo", hardware_id=hardware)
    if servo is None:
        status.level = DiagnosticStatus.OK if off_reason == "servo.enable is false" else DiagnosticStatus.WARN
        status.message = f"off: {off_reason}"
        return status
    now = servo.status
    status.level = DiagnosticStatus.OK if now.state in ("idle", "tracking") else DiagnosticStatus.WARN
    status.message = now.state + (f": {now.reason}" if now.reason else "")
    chain = servo.chain
    values = {
        "state": now.state,
        "reason": now.reason,
        "input": now.mode or "none",
        "speed scale": f"{now.scale:.3f}",
        "singularity measure": f"{now.singularity:.4f}",
        "chain": f"{chain.base_link} -> {chain.tip_link} ({chain.dof} joints)",
        "tracks": "position only" if now.position_only else "position and orientation",
        "pose stamps rejected": str(now.stamps_rejected),
        STREAM_SILENCES: str(now.stream_silences),
    }
    status.values = [KeyValue(key=key, value=value) for key, value in values.items()]
    return status

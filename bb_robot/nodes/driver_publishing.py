"""What a configured driver publishes about its joints: ``joint_states``, the sas topics, the limits."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from rclpy.node import Node
from rclpy.publisher import Publisher
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.limits import JointLimitTable
from bb_robot.driver.model import Mimic
from bb_robot.ros.qos import DEFAULT_QOS, LATCHED_QOS, LATEST_RELIABLE_QOS


class JointStatePublishers:
    """``joint_states``, ``<robot>/get/joint_states`` and ``<robot>/get/joint_positions_min|max``.

    Samples are published from the executor (the publish timer) or a backend's thread
    (``publish_rate`` 0), once each.

    Args:
        node: The driver node.
        prefix: The sas topics' prefix (``robot_name``, or the robot's name).
        joints: The driven joints.
        mimic: The mimic joints published with them.
    """

    def __init__(self, node: Node, prefix: str, joints: tuple[str, ...], mimic: Mapping[str, Mimic]) -> None:
        self._node = node
        self._joints = joints
        self._mimic = dict(mimic)
        self._lock = threading.Lock()
        self._publishers: dict[str, Publisher] = {
            "sas_state": node.create_publisher(JointState, f"{prefix}/get/joint_states", LATEST_RELIABLE_QOS),
            "sas_min": node.create_publisher(Float64MultiArray, f"{prefix}/get/joint_positions_min", LATCHED_QOS),
            "sas_max": node.create_publisher(Float64MultiArray, f"{prefix}/get/joint_positions_max", LATCHED_QOS),
            "joint_states": node.create_publisher(JointState, "joint_states", DEFAULT_QOS),
        }
        self._last_stamp = -1
        self._limits_published_ns = 0
        self._limits: JointLimitTable | None = None

    def publish_limits(self, limits: JointLimitTable) -> None:
        """Publish (latched) the joints' position limits."""
        self._limits = limits
        self._limits_published_ns = time.monotonic_ns()
        self._publishers["sas_min"].publish(Float64MultiArray(data=limits.lower.tolist()))
        self._publishers["sas_max"].publish(Float64MultiArray(data=limits.upper.tolist()))

    def publish_sample(self, sample: JointSample, stale: tuple[str, ...]) -> None:
        """Publish ``sample`` on joint_states and the sas topic, once per sample (any thread)."""
        with self._lock:
            if not self._publishers or sample.stamp_ns == self._last_stamp:
                return
            self._last_stamp = sample.stamp_ns
            age = time.monotonic_ns() - sample.stamp_ns
            self._publish_joint_states(sample, stale, self._node.get_clock().now().nanoseconds - age)
            if self._limits is not None and sample.stamp_ns - self._limits_published_ns >= 1_000_000_000:
                # Latched, and also repeated once a second for clients that subscribe volatile (sas).
                self.publish_limits(self._limits)

    def _publish_joint_states(self, sample: JointSample, stale: tuple[str, ...], stamp_ns: int) -> None:
        names = list(self._joints)
        positions = sample.positions.tolist()
        velocities = sample.velocities.tolist()
        efforts = sample.efforts.tolist() if sample.efforts is not None else None
        index = {name: i for i, name in enumerate(names)}
        for name, mimic in self._mimic.items():
            i = index[mimic.source]
            names.append(name)
            positions.append(mimic.multiplier * positions[i] + mimic.offset)
            velocities.append(mimic.multiplier * velocities[i])
            if efforts is not None:
                efforts.append(float("nan"))
        n = len(self._joints)
        if not stale:
            sas = JointState(name=names[:n], position=positions[:n], velocity=velocities[:n])
            if efforts is not None:
                sas.effort = efforts[:n]
            sas.header.stamp.sec, sas.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
            self._publishers["sas_state"].publish(sas)
        else:
            gone = set(stale) | {name for name, mimic in self._mimic.items() if mimic.source in stale}
            keep = [i for i, name in enumerate(names) if name not in gone]
            names = [names[i] for i in keep]
            positions = [positions[i] for i in keep]
            velocities = [velocities[i] for i in keep]
            efforts = [efforts[i] for i in keep] if efforts is not None else None
        if names:
            msg = JointState(name=names, position=positions, velocity=velocities)
            if efforts is not None:
                msg.effort = efforts
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
            self._publishers["joint_states"].publish(msg)

    def close(self) -> None:
        """Destroy the publishers (not while a backend thread publishes a sample; never raises)."""
        with self._lock:
            publishers, self._publishers = self._publishers, {}
            for publisher in publishers.values():
                try:
                    self._node.destroy_publisher(publisher)
                except Exception:  # noqa: BLE001 - best effort while releasing
                    pass

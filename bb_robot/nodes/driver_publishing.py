"""What a configured driver publishes about its joints: ``joint_states``, the sas topics, the limits
(and the poses of the objects its backend simulates, on ``/tf``).

At ``publish_rate`` above 0 the samples are published by a thread of their own
(:class:`PublishThread`), not by an executor timer: a callback that takes long in the executor
thread (a trajectory checked for collisions as a goal arrives, a configure) must not hold back
``joint_states``, and rclpy's events executor runs its timers from a thread at normal priority,
which a busy machine delays.  On a slow 2-core host, publishing from the executor left gaps of
150 ms between stamps while a goal was checked (docs/benchmarks.md, "The driver's streams on a
slow host").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from rclpy.node import Node
from rclpy.publisher import Publisher
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from bb_robot.driver.backends.base import Backend, JointSample
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.model import Mimic
from bb_robot.driver.timing.loop import RateLoop
from bb_robot.nodes.driver_objects import ObjectFrames
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
        backend: The backend, whose objects' poses (if it simulates any) go on ``/tf`` with each
            sample (:class:`~bb_robot.nodes.driver_objects.ObjectFrames`).
        root_link: The robot's root link, their parent frame.
    """

    def __init__(
        self,
        node: Node,
        prefix: str,
        joints: tuple[str, ...],
        mimic: Mapping[str, Mimic],
        backend: Backend | None = None,
        root_link: str = "",
    ) -> None:
        self._node = node
        self._objects = ObjectFrames.of(node, backend, root_link)
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
        #: The largest gap between the stamps of successive published samples (ns): since the last
        #: :meth:`take_gaps`, and since :meth:`restart_gaps` (activation); the stamp they count from.
        self._gap_recent = self._gap_total = 0
        self._gap_from = -1
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
            if self._gap_from >= 0:
                gap = sample.stamp_ns - self._gap_from
                self._gap_recent = max(self._gap_recent, gap)
                self._gap_total = max(self._gap_total, gap)
            self._last_stamp = self._gap_from = sample.stamp_ns
            age = time.monotonic_ns() - sample.stamp_ns
            self._publish_joint_states(sample, stale, self._node.get_clock().now().nanoseconds - age)
            if self._objects is not None:
                self._objects.publish(age)
            if self._limits is not None and sample.stamp_ns - self._limits_published_ns >= 1_000_000_000:
                # Latched, and also repeated once a second for clients that subscribe volatile (sas).
                self.publish_limits(self._limits)

    def restart_gaps(self) -> None:
        """Count the stamp gaps afresh from the next sample (at activation: a pause while inactive is none)."""
        with self._lock:
            self._gap_recent = self._gap_total = 0
            self._gap_from = -1

    def take_gaps(self) -> tuple[float, float]:
        """The largest gap between the stamps of successive published samples (s): since the last
        call, and since :meth:`restart_gaps` (0 before two samples); the first is then reset."""
        with self._lock:
            recent, self._gap_recent = self._gap_recent, 0
            return recent * 1e-9, self._gap_total * 1e-9

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
            objects, self._objects = self._objects, None
            if objects is not None:
                objects.close()
            for publisher in publishers.values():
                try:
                    self._node.destroy_publisher(publisher)
                except Exception:  # noqa: BLE001 - best effort while releasing
                    pass


class PublishThread:
    """Calls ``publish()`` at ``rate`` on a thread of its own, on absolute deadlines (a late call
    does not push the later ones back; calls more than a period late are skipped).

    Args:
        rate: Calls per second (``publish_rate``).
        priority: Real-time priority asked for the thread (0: none; where Linux refuses it, normal).
        publish: What to call; it must not raise (the driver's publish logs its own errors).
    """

    def __init__(self, rate: float, priority: int, publish: Callable[[], None]) -> None:
        self._loop = RateLoop(rate, priority=priority)
        self._publish = publish
        self._thread = threading.Thread(target=self._run, name="bb_robot-driver-publish", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self._loop.run(lambda info: self._publish())

    @property
    def scheduling(self) -> str:
        """How the thread is scheduled (``"not started"`` until it runs)."""
        return self._loop.scheduling

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the thread and wait for its last call to end (at most ``timeout`` seconds)."""
        self._loop.stop()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

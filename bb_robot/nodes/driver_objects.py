"""Where the world's objects are: each object's measured pose on ``/tf`` as ``object/<name>``.

A backend that simulates the objects of ``collision.world`` (``mujoco``: MuJoCo's body poses;
``sim``: the kinematic poses, an object carried by closed fingers following the hand) hands their
latest poses over as one value (:meth:`~bb_robot.driver.backends.base.Backend.object_poses`).
:class:`ObjectFrames` publishes them with the joint states, at most :data:`RATE` times a second,
as transforms from the robot's root link (the world frame of docs/collision.md) to
``object/<name>``, stamped with the node's clock at the measurement: a test, the view and the user
see where the things really are, not where they were commanded.
"""

from __future__ import annotations

import time

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from tf2_msgs.msg import TFMessage

from bb_robot.driver.backends.base import Backend, ObjectPoses
from bb_robot.mjcf.bodies import OBJECT_PREFIX
from bb_robot.ros.qos import TF_QOS

__all__ = ["RATE", "ObjectFrames"]

#: At most this many object transforms a second (Hz).
RATE = 50.0


class ObjectFrames:
    """``/tf`` of one backend's objects (see the module docstring).

    Args:
        node: The driver node.
        backend: The backend (its :meth:`object_poses`).
        root_link: The robot's root link: the transforms' parent frame.
    """

    def __init__(self, node: Node, backend: Backend, root_link: str) -> None:
        self._node, self._backend, self._root = node, backend, root_link
        self._publisher = node.create_publisher(TFMessage, "/tf", TF_QOS)
        self._last_ns: int | None = None

    @classmethod
    def of(cls, node: Node, backend: Backend | None, root_link: str) -> ObjectFrames | None:
        """The frames of ``backend``'s objects, or ``None`` when it simulates none.

        Args:
            node: The driver node.
            backend: The connected backend (``None``: none).
            root_link: The robot's root link.

        Returns:
            The publisher of the frames, or ``None``.
        """
        if backend is None or backend.object_poses() is None:
            return None
        return cls(node, backend, root_link)

    def publish(self, age_ns: int) -> None:
        """Publish the objects' latest poses, unless they were published less than 1/:data:`RATE` ago.

        Args:
            age_ns: How old the joint states published with them are (ns): their age when the
                poses carry no measurement time of their own.
        """
        now = time.monotonic_ns()
        if self._last_ns is not None and now - self._last_ns < 1e9 / RATE:
            return
        poses = self._backend.object_poses()
        if poses is None:
            return
        self._last_ns = now
        # Stamped when they were measured: the backend may have read (and measured) again since
        # the joint states being published, and an object carried at 1 m/s moves 1 mm a millisecond.
        if poses.stamp_ns > 0:
            age_ns = time.monotonic_ns() - poses.stamp_ns
        self._publisher.publish(self.message(poses, self._node.get_clock().now().nanoseconds - age_ns))

    def message(self, poses: ObjectPoses, stamp_ns: int) -> TFMessage:
        """The transforms of ``poses``, stamped ``stamp_ns``.

        Args:
            poses: The objects' poses.
            stamp_ns: The stamp (the node's clock, ns).

        Returns:
            One transform per object, ``<root link>`` → ``object/<name>``.
        """
        message = TFMessage()
        sec, nanosec = divmod(stamp_ns, 1_000_000_000)
        for name, position, quaternion in zip(poses.names, poses.positions, poses.quaternions, strict=True):
            transform = TransformStamped()
            transform.header.stamp.sec, transform.header.stamp.nanosec = sec, nanosec
            transform.header.frame_id, transform.child_frame_id = self._root, f"{OBJECT_PREFIX}{name}"
            t, r = transform.transform.translation, transform.transform.rotation
            t.x, t.y, t.z = (float(v) for v in position)
            r.x, r.y, r.z, r.w = (float(v) for v in quaternion)
            message.transforms.append(transform)
        return message

    def close(self) -> None:
        """Destroy the publisher (never raises)."""
        try:
            self._node.destroy_publisher(self._publisher)
        except Exception:  # noqa: BLE001 - best effort while releasing
            pass

"""Gazebo Harmonic's transport and messages from Python, without Gazebo: ROS-free and typed.

- :mod:`bb_robot.gz.messages`: ``gz.msgs10`` message classes (fast protobuf, no Gazebo install);
- :mod:`bb_robot.gz.api`: the :class:`GzTransport` interface and :func:`create_transport`;
- :mod:`bb_robot.gz.builtin`: this project's gz-transport client (discovery v10, ZeroMQ);
- :mod:`bb_robot.gz.official`: an adapter over Gazebo Harmonic's ``gz.transport13`` bindings;
- :mod:`bb_robot.gz.wire`, :mod:`bb_robot.gz.discovery`, :mod:`bb_robot.gz.net`: the protocol.

See ``docs/gazebo-transport.md``.
"""

from bb_robot.gz.api import (
    Diagnostics,
    GzPublisher,
    GzSubscription,
    GzTransport,
    MessageInfo,
    MessageType,
    create_transport,
)
from bb_robot.gz.messages import GzMessages, GzMessagesUnavailable, default_messages, message_class

__all__ = [
    "Diagnostics",
    "GzMessages",
    "GzMessagesUnavailable",
    "GzPublisher",
    "GzSubscription",
    "GzTransport",
    "MessageInfo",
    "MessageType",
    "create_transport",
    "default_messages",
    "message_class",
]

"""Gazebo Harmonic's transport and messages from Python, without Gazebo: ROS-free and typed.

- :mod:`bb_robot.gz.messages`: ``gz.msgs10`` message classes (fast protobuf, no Gazebo install);
- :mod:`bb_robot.gz.api`: :func:`create_transport`, and the interface re-exported;
- :mod:`bb_robot.gz.interface`: the :class:`GzTransport` interface, its handles and errors;
  :mod:`bb_robot.gz.diagnostics`: what a transport reports (:class:`Diagnostics`);
- :mod:`bb_robot.gz.builtin`: this project's gz-transport client (discovery v10, ZeroMQ), with
  :mod:`bb_robot.gz.handles` (its publishers and subscriptions), :mod:`bb_robot.gz.publishing`
  (the XPUB socket), :mod:`bb_robot.gz.delivery` (received messages to subscriptions) and
  :mod:`bb_robot.gz.diagnosis` (the problems it finds);
- :mod:`bb_robot.gz.official`: an adapter over Gazebo Harmonic's ``gz.transport13`` bindings;
- :mod:`bb_robot.gz.wire`, :mod:`bb_robot.gz.discovery`, :mod:`bb_robot.gz.net`: the protocol.

Transport only: which topics a Gazebo world uses is :mod:`bb_robot.gzsim`'s business.

See ``docs/gazebo-transport.md``.
"""

from bb_robot.gz.api import create_transport
from bb_robot.gz.diagnostics import Diagnostics
from bb_robot.gz.interface import (
    GzPublisher,
    GzSubscription,
    GzTransport,
    GzTransportError,
    MessageInfo,
    MessageType,
)
from bb_robot.gz.messages import (
    GzMessages,
    GzMessagesError,
    GzMessagesUnavailable,
    default_messages,
    message_class,
)
from bb_robot.gz.wire import WireError

__all__ = [
    "Diagnostics",
    "GzMessages",
    "GzMessagesError",
    "GzMessagesUnavailable",
    "GzPublisher",
    "GzSubscription",
    "GzTransport",
    "GzTransportError",
    "MessageInfo",
    "MessageType",
    "WireError",
    "create_transport",
    "default_messages",
    "message_class",
]

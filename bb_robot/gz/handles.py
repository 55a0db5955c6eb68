"""The built-in transport's handles: :class:`BuiltinPublisher` and :class:`BuiltinSubscription`.

Each handle keeps what its side of a topic needs (the publisher: its four ZeroMQ frames, its
discovery record, the latest message for late subscribers; the subscription: its callback,
class and counters) and reaches the transport only through the functions it was given, so
:mod:`bb_robot.gz.builtin` builds on this module and not the other way round.
"""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf.message import Message

from bb_robot.gz import wire
from bb_robot.gz.discovery import PublisherInfo
from bb_robot.gz.interface import GzPublisher, GzSubscription, MessageCallback
from bb_robot.gz.wire import Scope


class BuiltinPublisher(GzPublisher):
    """An advertised topic of the built-in transport.

    Args:
        topic: The topic as given (without partition).
        full_topic: Its fully qualified name (``@/<partition>@<topic>``).
        type_name: The message type it is advertised with.
        resend: Keep the latest message and send it again to each new subscriber.
        address: The transport's ZeroMQ address.
        process_uuid: The transport's process UUID.
        node_uuid: The transport's node UUID.
        send: Sends one serialized message of this publisher (the transport's data socket).
        connected: Whether a subscriber of the fully qualified topic is connected.
    """

    def __init__(
        self,
        topic: str,
        full_topic: str,
        type_name: str,
        resend: bool,
        *,
        address: str,
        process_uuid: str,
        node_uuid: str,
        send: Callable[[BuiltinPublisher, bytes], None],
        connected: Callable[[str], bool],
    ) -> None:
        self.topic = topic
        self.full_topic = full_topic
        self.type_name = type_name
        self.resend_latest = resend
        self._send = send
        self._connected = connected
        self.frames = [full_topic.encode(), address.encode(), b"", type_name.encode()]
        self.latest: bytes | None = None
        self.sent = 0
        self.info = PublisherInfo(
            topic=full_topic,
            address=address,
            process_uuid=process_uuid,
            node_uuid=node_uuid,
            type_name=type_name,
            scope=Scope.ALL,
            ctrl=wire.UNUSED_CTRL,
        )

    def publish_raw(self, data: bytes) -> None:
        self._send(self, data)

    def has_connections(self) -> bool:
        return self._connected(self.full_topic)


class BuiltinSubscription(GzSubscription):
    """A subscription of the built-in transport.

    Args:
        topic: The topic as given (without partition).
        full_topic: Its fully qualified name.
        type_name: The type subscribed to (``google.protobuf.Message``: every type).
        callback: Called with each message (or its bytes) and its info.
        message_class: The class to decode with (``None``: by the received type name, or raw).
        raw: Hand the serialized bytes to the callback.
        unsubscribe: Ends this subscription in the transport.
    """

    def __init__(
        self,
        topic: str,
        full_topic: str,
        type_name: str,
        callback: MessageCallback,
        message_class: type[Message] | None,
        raw: bool,
        *,
        unsubscribe: Callable[[BuiltinSubscription], None],
    ) -> None:
        self.topic = topic
        self.full_topic = full_topic
        self.type_name = type_name
        self.callback = callback
        self.message_class = message_class
        self.raw = raw
        self.generic = type_name == wire.GENERIC_MESSAGE_TYPE
        self._unsubscribe = unsubscribe
        self.count = 0
        self.last_ns = 0
        self.active = True

    @property
    def received(self) -> int:
        return self.count

    def accepts(self, type_name: str) -> bool:
        """Whether a message of ``type_name`` is delivered to this subscription."""
        return self.generic or type_name == self.type_name

    def cancel(self) -> None:
        self._unsubscribe(self)

"""The small interface the Gazebo backend programs against: :class:`GzTransport` and its handles.

Implemented by :class:`~bb_robot.gz.builtin.BuiltinTransport` and
:class:`~bb_robot.gz.official.OfficialTransport`; :func:`bb_robot.gz.api.create_transport`
picks one.  This module imports neither (nor anything of this project but the errors and
:mod:`bb_robot.gz.diagnostics`), so both build on it without an import circle.

Messages are protobuf messages; a message type is given as a class or as its full type name
(``"gz.msgs.Double"``).  Type names must match the peer's exactly: Gazebo Harmonic uses
``gz.msgs.*``, ign-transport 11 ``ignition.msgs.*``.  Callbacks run on a background thread of
the transport: keep them short (store the latest value).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, Self

from google.protobuf.message import Message

from bb_robot.errors import BbRobotError
from bb_robot.gz.diagnostics import Diagnostics


class GzTransportError(BbRobotError):
    """Base of the transport's errors; the message names the topic, type or address concerned."""


class GzUsageError(GzTransportError, ValueError):
    """A request the transport refuses: a topic advertised with two types, an unknown
    implementation, a subscription the implementation cannot make."""


class GzMessageTypeError(GzTransportError, TypeError):
    """A message published on a topic advertised with another type."""


class GzClosedError(GzTransportError, RuntimeError):
    """The transport was used after :meth:`GzTransport.close`."""


class GzNetworkError(GzTransportError, OSError):
    """The transport's sockets cannot be set up on the configured address or interfaces."""


MessageType = type[Message] | str


class Logger(Protocol):
    """What the transport logs through (a ``logging.Logger`` or the driver's ROS logger)."""

    def debug(self, message: str) -> object: ...
    def info(self, message: str) -> object: ...
    def warning(self, message: str) -> object: ...
    def error(self, message: str) -> object: ...


def type_name_of(message_type: MessageType) -> str:
    """The full protobuf type name of a message class, or the name itself."""
    if isinstance(message_type, str):
        return message_type
    return str(message_type.DESCRIPTOR.full_name)


@dataclass(frozen=True)
class MessageInfo:
    """What came with a received message: topic (without partition), partition, type, sender, time."""

    topic: str
    partition: str
    type_name: str
    publisher_address: str
    received_ns: int


#: ``callback(message, info)``: the message is an instance of the subscribed class, of the class the
#: type name gives, or ``bytes`` with ``raw=True``; callers annotate it as the class they expect.
MessageCallback = Callable[[Any, MessageInfo], None]


class GzPublisher(ABC):
    """An advertised topic: publish messages of its type (``topic`` as given, without partition)."""

    topic: str  # as given (without partition)
    type_name: str

    def publish(self, message: Message) -> None:
        """Send ``message``; never blocks.

        Args:
            message: A message of :attr:`type_name`.

        Raises:
            GzMessageTypeError: ``message`` is of another type (a ``TypeError``).
        """
        name = message.DESCRIPTOR.full_name
        if name != self.type_name:
            raise GzMessageTypeError(f"{self.topic} is advertised as {self.type_name}, not {name}")
        self.publish_raw(message.SerializeToString())

    @abstractmethod
    def publish_raw(self, data: bytes) -> None:
        """Send an already serialized message of :attr:`type_name`."""

    @abstractmethod
    def has_connections(self) -> bool:
        """Whether a subscriber of this type has connected (built-in: it sent NEW_CONNECTION and its
        ZeroMQ filter has reached us, so what is published now reaches it)."""


class GzSubscription(ABC):
    """A subscription: its callback runs for each message of its type on its topic."""

    topic: str
    type_name: str

    @property
    @abstractmethod
    def received(self) -> int:
        """Messages delivered so far."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop delivering (idempotent)."""


class GzTransport(ABC):
    """Publish and subscribe to gz-transport topics in one partition."""

    implementation: str
    partition: str

    @abstractmethod
    def advertise(self, topic: str, message_type: MessageType) -> GzPublisher:
        """Advertise ``topic`` with ``message_type``.

        Args:
            topic: The topic (without partition).
            message_type: A message class or its full type name.

        Returns:
            The publisher; advertising again with the same type returns the same one.

        Raises:
            GzUsageError: ``topic`` is already advertised with another type (a ``ValueError``).
            GzClosedError: The transport is closed.
        """

    def publish(self, topic: str, message: Message) -> None:
        """Publish ``message`` on ``topic``, advertising it with the message's type on first use."""
        self.advertise(topic, type(message)).publish(message)

    @abstractmethod
    def subscribe(
        self, topic: str, message_type: MessageType, callback: MessageCallback, *, raw: bool = False
    ) -> GzSubscription:
        """Call ``callback(message, info)`` for each message of ``message_type`` on ``topic``.

        Args:
            topic: The topic (without partition).
            message_type: A message class or its full type name; ``"google.protobuf.Message"``
                accepts every type.
            callback: Called on the transport's thread with the message and its
                :class:`MessageInfo`.
            raw: Hand the serialized ``bytes`` instead of a message (no class needed).

        Returns:
            The subscription (``cancel()`` ends it).

        Raises:
            GzUsageError: The implementation cannot subscribe so (a ``ValueError``).
            GzClosedError: The transport is closed.
        """

    @abstractmethod
    def topic_list(self) -> list[str]:
        """Topics advertised by other processes in this partition (without the partition)."""

    @abstractmethod
    def publishers(self, topic: str) -> list[tuple[str, str]]:
        """``(type name, address)`` of the remote publishers of ``topic`` in this partition."""

    def wait_for_publishers(self, topic: str, timeout: float, type_name: str | None = None) -> bool:
        """Wait for a remote publisher of ``topic``.

        Args:
            topic: The topic (without partition).
            timeout: Seconds to wait at most.
            type_name: Only a publisher of this type counts (default: any).

        Returns:
            Whether one appeared in time.
        """
        deadline = time.monotonic() + timeout
        while True:
            if any(type_name is None or found == type_name for found, _ in self.publishers(topic)):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    @abstractmethod
    def diagnostics(self) -> Diagnostics:
        """What the transport sees, with diagnosed problems (partition / type-name mismatches)."""

    @abstractmethod
    def close(self) -> None:
        """Stop: unadvertise, unsubscribe, say BYE, free sockets (idempotent)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

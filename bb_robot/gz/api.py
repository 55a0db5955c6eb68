"""The small interface the Gazebo backend programs against: :class:`GzTransport` and its handles.

Two implementations sit behind it (:func:`create_transport`):

- ``builtin`` (:class:`~bb_robot.gz.builtin.BuiltinTransport`, the default): this project's own
  client of the gz-transport wire protocol (pyzmq + UDP), needing no Gazebo library;
- ``official`` (:class:`~bb_robot.gz.official.OfficialTransport`): a thin adapter over Gazebo
  Harmonic's ``gz.transport13`` Python bindings, imported only when chosen.

Messages are protobuf messages (:mod:`bb_robot.gz.messages` gives the ``gz.msgs10`` classes); a
message type is given as a class or as its full type name (``"gz.msgs.Double"``). Type names must
match the peer's exactly: Gazebo Harmonic uses ``gz.msgs.*``, ign-transport 11 ``ignition.msgs.*``.
Callbacks run on a background thread of the transport: keep them short (store the latest value).
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

from google.protobuf.message import Message

MessageType = type[Message] | str


class Logger(Protocol):
    """What the transport logs through (a ``logging.Logger`` or the driver's ROS logger)."""

    def debug(self, message: str) -> Any: ...
    def info(self, message: str) -> Any: ...
    def warning(self, message: str) -> Any: ...
    def error(self, message: str) -> Any: ...


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


MessageCallback = Callable[[Any, MessageInfo], None]


class GzPublisher(ABC):
    """An advertised topic: publish messages of its type."""

    topic: str  # as given (without partition)
    type_name: str

    @abstractmethod
    def publish(self, message: Message) -> None:
        """Send ``message`` (its type must be :attr:`type_name`, else ``TypeError``); never blocks."""

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


@dataclass(frozen=True)
class TopicSeen:
    """A topic seen in discovery traffic (any partition).

    ``role`` is ``publisher`` (ADVERTISE), ``subscriber`` (a gz-transport 13 SUBSCRIBERS_REP) or
    ``request`` (a SUBSCRIBE: someone asked for publishers; type unknown); ``age`` is seconds since
    last heard; ``address`` the publisher's ZeroMQ address or the requester's IP.
    """

    partition: str
    topic: str
    type_name: str
    role: str
    process_uuid: str
    address: str
    age: float


@dataclass(frozen=True)
class AdvertisedTopic:
    topic: str
    type_name: str
    subscribers: int  # remote subscribers that sent NEW_CONNECTION
    sent: int


@dataclass(frozen=True)
class SubscribedTopic:
    topic: str
    type_name: str
    publishers: int  # connected remote publishers
    received: int
    last_age: float | None  # seconds since the last message, None before the first


@dataclass(frozen=True)
class PeerSeen:
    process_uuid: str
    ip: str
    age: float
    partitions: tuple[str, ...]


@dataclass(frozen=True)
class Diagnostics:
    """A snapshot of what the transport knows, and the problems it diagnoses from it."""

    implementation: str
    partition: str
    process_uuid: str = ""
    host: str = ""
    interfaces: tuple[str, ...] = ()
    relays: tuple[str, ...] = ()
    advertised: tuple[AdvertisedTopic, ...] = ()
    subscriptions: tuple[SubscribedTopic, ...] = ()
    seen: tuple[TopicSeen, ...] = ()
    peers: tuple[PeerSeen, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def format(self) -> str:
        """A human-readable report (for logs and the command line)."""
        lines = [
            f"gz transport: {self.implementation}, partition {self.partition!r}"
            + (f", host {self.host}, interfaces {', '.join(self.interfaces)}" if self.host else "")
            + (f", relays {', '.join(self.relays)}" if self.relays else "")
        ]
        for pub in self.advertised:
            lines.append(f"  publishes {pub.topic} [{pub.type_name}]: {pub.subscribers} subscribers, {pub.sent} sent")
        for sub in self.subscriptions:
            age = "never" if sub.last_age is None else f"{sub.last_age:.2f} s ago"
            lines.append(
                f"  subscribes {sub.topic} [{sub.type_name}]: {sub.publishers} publishers, "
                f"{sub.received} received, last {age}"
            )
        if self.peers:
            lines.append(f"  peers: {len(self.peers)}")
            for peer in self.peers:
                lines.append(f"    {peer.process_uuid} at {peer.ip}, partitions {list(peer.partitions)}")
        if self.seen:
            lines.append("  topics seen:")
            for seen in sorted(self.seen, key=lambda s: (s.partition, s.topic, s.role)):
                lines.append(
                    f"    [{seen.partition}] {seen.topic} {seen.role} {seen.type_name or '?'} ({seen.address})"
                )
        for problem in self.problems:
            lines.append(f"  PROBLEM: {problem}")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines)


class GzTransport(ABC):
    """Publish and subscribe to gz-transport topics in one partition."""

    implementation: str
    partition: str

    @abstractmethod
    def advertise(self, topic: str, message_type: MessageType) -> GzPublisher:
        """Advertise ``topic`` with ``message_type``; advertising it again with the same type returns
        the same publisher, with another type raises ``ValueError``."""

    def publish(self, topic: str, message: Message) -> None:
        """Publish ``message`` on ``topic``, advertising it with the message's type on first use."""
        self.advertise(topic, type(message)).publish(message)

    @abstractmethod
    def subscribe(
        self, topic: str, message_type: MessageType, callback: MessageCallback, *, raw: bool = False
    ) -> GzSubscription:
        """Call ``callback(message, info)`` for each message of ``message_type`` on ``topic``.

        With ``raw=True`` the callback gets the serialized ``bytes`` instead of a message (no class
        needed); ``message_type`` ``"google.protobuf.Message"`` accepts every type.
        """

    @abstractmethod
    def topic_list(self) -> list[str]:
        """Topics advertised by other processes in this partition (without the partition)."""

    @abstractmethod
    def publishers(self, topic: str) -> list[tuple[str, str]]:
        """``(type name, address)`` of the remote publishers of ``topic`` in this partition."""

    def wait_for_publishers(self, topic: str, timeout: float, type_name: str | None = None) -> bool:
        """Wait up to ``timeout`` s for a remote publisher of ``topic`` (of ``type_name`` if given)."""
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


IMPLEMENTATIONS: Sequence[str] = ("builtin", "official")


def create_transport(
    implementation: str = "builtin",
    *,
    partition: str | None = None,
    logger: Logger | None = None,
    **options: Any,
) -> GzTransport:
    """A transport by name: ``builtin`` (default) or ``official`` (``gz.transport13``, if importable).

    ``partition`` defaults to ``GZ_PARTITION``, else ``<hostname>:<username>``. Other keyword
    options go to the implementation (see :class:`~bb_robot.gz.builtin.BuiltinTransport`).
    """
    log: Logger = logger if logger is not None else logging.getLogger("bb_robot.gz")
    if implementation == "builtin":
        from bb_robot.gz.builtin import BuiltinTransport

        return BuiltinTransport(partition=partition, logger=log, **options)
    if implementation == "official":
        from bb_robot.gz.official import OfficialTransport

        return OfficialTransport(partition=partition, logger=log, **options)
    raise ValueError(f"unknown gz transport {implementation!r}; choose one of {', '.join(IMPLEMENTATIONS)}")

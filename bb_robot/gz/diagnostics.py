"""What a transport knows and the problems it diagnoses from it (:class:`Diagnostics`).

Plain values, filled in by each :class:`~bb_robot.gz.interface.GzTransport` implementation
and formatted for logs and ``python -m bb_robot.gz diagnose``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    """A topic this transport publishes."""

    topic: str
    type_name: str
    subscribers: int  # remote subscribers that sent NEW_CONNECTION
    sent: int


@dataclass(frozen=True)
class SubscribedTopic:
    """A topic this transport subscribes to."""

    topic: str
    type_name: str
    publishers: int  # connected remote publishers
    received: int
    last_age: float | None  # seconds since the last message, None before the first


@dataclass(frozen=True)
class PeerSeen:
    """Another gz-transport process heard from in discovery (``age``: seconds since last heard)."""

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

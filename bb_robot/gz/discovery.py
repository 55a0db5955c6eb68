"""gz-transport's message discovery over UDP: who publishes what, where, and who is alive.

:class:`DiscoveryService` runs one background thread that

- receives discovery datagrams on the discovery port (multicast group joined on every discovery
  interface; ``SO_REUSEPORT`` so several processes on one host share the port), drops our own and
  those of another wire version (remembered for diagnostics), and forwards relayed ones like the C++
  side does (``GZ_RELAY``: multicast → unicast relays with the RELAY flag; relayed → multicast with
  NO_RELAY, the sender becoming a relay);
- keeps every remote publisher it hears about, in *every* partition (the transport uses the ones in
  its own partition and diagnoses the others), and the time each process was last heard from;
- every heartbeat interval (1 s) sends HEARTBEAT and re-sends ADVERTISE for each local publisher;
- drops a process silent for longer than the silence interval (3 s), or at once on its BYE;
- answers SUBSCRIBE for a topic we publish with ADVERTISE.

Events go to a :class:`DiscoveryListener` (the transport), called on the discovery thread.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bb_robot.gz import wire
from bb_robot.gz.interface import GzNetworkError
from bb_robot.gz.wire import DiscoveryType, Scope

HEARTBEAT_INTERVAL = 1.0
SILENCE_INTERVAL = 3.0
ACTIVITY_INTERVAL = 0.1

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PublisherInfo:
    """A message publisher as discovery describes it (also a NEW_CONNECTION's or a subscriber's).

    ``topic`` is fully qualified; ``partition`` (bare, as in ``GZ_PARTITION``) and ``name`` are its
    parts. For NEW_CONNECTION / END_CONNECTION ``process_uuid`` and ``node_uuid`` are the subscriber's
    and ``ctrl`` names the publisher's process.
    """

    topic: str
    address: str
    process_uuid: str
    node_uuid: str
    type_name: str
    scope: Scope = Scope.ALL
    ctrl: str = ""
    partition: str = ""
    name: str = ""

    @classmethod
    def from_message(cls, message: Any) -> PublisherInfo:
        pub = message.pub
        parts = wire.split_fully_qualified(pub.topic)
        partition, name = (wire.bare_partition(parts[0]), parts[1]) if parts else ("", pub.topic)
        try:
            scope = Scope(pub.scope)
        except ValueError:
            scope = Scope.ALL
        return cls(
            topic=pub.topic,
            address=pub.address,
            process_uuid=pub.process_uuid,
            node_uuid=pub.node_uuid,
            type_name=pub.msg_pub.msg_type,
            scope=scope,
            ctrl=pub.msg_pub.ctrl,
            partition=partition,
            name=name,
        )

    def fill(self, message: Any) -> None:
        pub = message.pub
        pub.topic = self.topic
        pub.address = self.address
        pub.process_uuid = self.process_uuid
        pub.node_uuid = self.node_uuid
        pub.scope = int(self.scope)
        pub.msg_pub.ctrl = self.ctrl
        pub.msg_pub.msg_type = self.type_name
        pub.msg_pub.throttled = False
        pub.msg_pub.msgs_per_sec = wire.UNTHROTTLED


@dataclass
class PeerInfo:
    """A remote process heard from: its address, when, and which partitions its topics were in."""

    process_uuid: str
    ip: str
    last_seen: float
    partitions: set[str] = field(default_factory=set)


@dataclass
class SubscribeSighting:
    """A SUBSCRIBE request seen (any partition): who asked for which fully qualified topic, when."""

    topic: str
    partition: str
    name: str
    process_uuid: str
    ip: str
    last_seen: float


class DiscoveryListener(Protocol):
    def on_publisher(self, publisher: PublisherInfo) -> None: ...
    def on_publisher_gone(self, publisher: PublisherInfo) -> None: ...
    def on_process_gone(self, process_uuid: str) -> None: ...
    def on_new_connection(self, connection: PublisherInfo) -> None: ...
    def on_end_connection(self, connection: PublisherInfo) -> None: ...
    def on_subscribe(self, sighting: SubscribeSighting) -> None: ...
    def on_subscribers_request(self) -> None: ...
    def on_subscriber(self, subscriber: PublisherInfo) -> None: ...


class DiscoveryService:
    """The discovery side of one gz-transport "process" (one process UUID)."""

    def __init__(
        self,
        process_uuid: str,
        listener: DiscoveryListener,
        *,
        interfaces: Iterable[str],
        relays: Iterable[str] = (),
        group: str = wire.MULTICAST_GROUP,
        port: int = wire.MSG_DISCOVERY_PORT,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        silence_interval: float = SILENCE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.process_uuid = process_uuid
        self.listener = listener
        self.group = group
        self.port = port
        self.heartbeat_interval = heartbeat_interval
        self.silence_interval = silence_interval
        self.interfaces = list(interfaces)
        self._clock = clock
        self._lock = threading.RLock()
        self._local: dict[tuple[str, str], PublisherInfo] = {}  # (topic, node uuid) -> ours
        self._remote: dict[str, dict[tuple[str, str], PublisherInfo]] = {}  # process -> (topic, node) -> pub
        self._peers: dict[str, PeerInfo] = {}
        self._subscribes: dict[tuple[str, str], SubscribeSighting] = {}
        self._versions: dict[tuple[int, str], tuple[int, float]] = {}  # (version, ip) -> (count, last)
        self._relays: list[str] = []
        self._sent = 0
        self._received = 0
        self._sockets = self._open_sockets()
        for relay in relays:
            self._add_relay(relay)
        self._wake_r, self._wake_w = os.pipe()
        self._stop = False
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ sockets

    def _open_sockets(self) -> list[socket.socket]:
        sockets: list[socket.socket] = []
        try:
            for address in self.interfaces:
                sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
                sockets.append(sock)
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(address))
                membership = socket.inet_aton(self.group) + socket.inet_aton(address)
                sockets[0].setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
            receiver = sockets[0]
            receiver.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if hasattr(socket, "SO_REUSEPORT"):
                receiver.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            receiver.bind(("", self.port))
            receiver.setblocking(False)
        except OSError as error:
            for sock in sockets:
                sock.close()
            raise GzNetworkError(
                f"gz discovery: cannot use interfaces {self.interfaces} for {self.group}:{self.port}: {error} "
                "(set GZ_IP to an address of this host whose interface supports multicast)"
            ) from error
        return sockets

    def _add_relay(self, ip: str) -> None:
        with self._lock:
            if ip not in self._relays:
                self._relays.append(ip)

    @property
    def relays(self) -> list[str]:
        with self._lock:
            return list(self._relays)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gz-discovery", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the thread, send BYE and close the sockets (idempotent)."""
        if self._stop:
            return
        self._stop = True
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self.send(DiscoveryType.BYE)
        for sock in self._sockets:
            sock.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    # ------------------------------------------------------------------ sending

    def new_message(self, kind: DiscoveryType) -> Any:
        message = wire.Discovery()
        message.version = wire.WIRE_VERSION
        message.type = int(kind)
        message.process_uuid = self.process_uuid
        return message

    def send(self, kind: DiscoveryType, publisher: PublisherInfo | None = None, topic: str = "") -> None:
        """Send one discovery message to the multicast group and, flagged RELAY, to every relay."""
        message = self.new_message(kind)
        if publisher is not None:
            publisher.fill(message)
        elif kind == DiscoveryType.SUBSCRIBE:
            message.sub.topic = topic
        self._send_multicast(message)
        message.flags.relay = True
        self._send_unicast(message)

    def _send_multicast(self, message: Any) -> None:
        data = wire.encode_datagram(message)
        for sock in self._sockets:
            try:
                sock.sendto(data, (self.group, self.port))
                self._sent += 1
            except OSError as error:  # EPERM/ENOBUFS are transient (the C++ side ignores them too)
                log.debug("gz discovery: multicast send failed: %s", error)

    def _send_unicast(self, message: Any) -> None:
        relays = self.relays
        if not relays:
            return
        data = wire.encode_datagram(message)
        for relay in relays:
            try:
                self._sockets[0].sendto(data, (relay, self.port))
            except OSError as error:
                log.debug("gz discovery: unicast send to relay %s failed: %s", relay, error)

    # ------------------------------------------------------------------ local publishers

    def advertise(self, publisher: PublisherInfo) -> None:
        with self._lock:
            self._local[(publisher.topic, publisher.node_uuid)] = publisher
        if publisher.scope != Scope.PROCESS:
            self.send(DiscoveryType.ADVERTISE, publisher)

    def unadvertise(self, publisher: PublisherInfo) -> None:
        with self._lock:
            self._local.pop((publisher.topic, publisher.node_uuid), None)
        if publisher.scope != Scope.PROCESS:
            self.send(DiscoveryType.UNADVERTISE, publisher)

    def discover(self, topic: str) -> list[PublisherInfo]:
        """Ask for publishers of ``topic`` (SUBSCRIBE) and return those known already."""
        self.send(DiscoveryType.SUBSCRIBE, topic=topic)
        return self.publishers(topic)

    # ------------------------------------------------------------------ queries

    def publishers(self, topic: str | None = None) -> list[PublisherInfo]:
        """Known remote publishers (of ``topic``, fully qualified, or all), every partition."""
        with self._lock:
            return [
                pub for table in self._remote.values() for pub in table.values() if topic is None or pub.topic == topic
            ]

    def peers(self) -> list[PeerInfo]:
        with self._lock:
            return [
                PeerInfo(peer.process_uuid, peer.ip, peer.last_seen, set(peer.partitions))
                for peer in self._peers.values()
            ]

    def subscribe_sightings(self) -> list[SubscribeSighting]:
        with self._lock:
            return [
                SubscribeSighting(s.topic, s.partition, s.name, s.process_uuid, s.ip, s.last_seen)
                for s in self._subscribes.values()
            ]

    def foreign_versions(self, within: float = 10.0) -> list[tuple[int, str, int]]:
        """``(version, ip, datagrams)`` of discovery traffic of another wire version (ignored), heard
        from in the last ``within`` seconds."""
        now = self._clock()
        with self._lock:
            return [
                (version, ip, count)
                for (version, ip), (count, last) in sorted(self._versions.items())
                if now - last <= within
            ]

    def counters(self) -> tuple[int, int]:
        return self._sent, self._received

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        next_heartbeat = self._clock()
        next_activity = self._clock()
        receiver = self._sockets[0]
        receiver_fd = receiver.fileno()
        while not self._stop:
            now = self._clock()
            timeout = max(0.0, min(next_heartbeat, next_activity) - now)
            try:
                readable, _, _ = select.select([receiver_fd, self._wake_r], [], [], timeout)
            except (OSError, ValueError):
                break
            if self._stop:
                break
            if receiver_fd in readable:
                self._receive_all(receiver)
            now = self._clock()
            if now >= next_heartbeat:
                self._heartbeat()
                next_heartbeat = now + self.heartbeat_interval
            if now >= next_activity:
                self._expire(now)
                next_activity = now + ACTIVITY_INTERVAL

    def _receive_all(self, receiver: socket.socket) -> None:
        for _ in range(1000):
            try:
                data, (ip, _port) = receiver.recvfrom(wire.MAX_DATAGRAM)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                log.debug("gz discovery: receive failed: %s", error)
                return
            try:
                self.dispatch(data, ip)
            except Exception:  # a bug in a listener must not stop discovery
                log.exception("gz discovery: handling a datagram from %s failed", ip)

    def _heartbeat(self) -> None:
        self.send(DiscoveryType.HEARTBEAT)
        with self._lock:
            local = list(self._local.values())
        for publisher in local:
            if publisher.scope != Scope.PROCESS:
                self.send(DiscoveryType.ADVERTISE, publisher)

    def _expire(self, now: float) -> None:
        with self._lock:
            expired = [uuid for uuid, peer in self._peers.items() if now - peer.last_seen > self.silence_interval]
            for uuid in expired:
                self._forget(uuid)
            stale = [key for key, s in self._subscribes.items() if now - s.last_seen > 60.0]
            for key in stale:
                del self._subscribes[key]
        for uuid in expired:
            log.debug("gz discovery: process %s silent for %.1f s, dropped", uuid, self.silence_interval)
            self.listener.on_process_gone(uuid)

    def _forget(self, process_uuid: str) -> None:
        self._peers.pop(process_uuid, None)
        self._remote.pop(process_uuid, None)

    def dispatch(self, data: bytes, ip: str) -> None:
        """Handle one received datagram from ``ip`` (public for tests)."""
        message = wire.decode_datagram(data)
        if message is None:
            return
        if message.version != wire.WIRE_VERSION:
            with self._lock:
                count, _ = self._versions.get((message.version, ip), (0, 0.0))
                self._versions[(message.version, ip)] = (count + 1, self._clock())
            return
        sender = message.process_uuid
        if sender == self.process_uuid:
            return
        self._received += 1
        if message.HasField("flags") and message.flags.relay:
            # From a unicast peer: pass it on to the multicast group (it comes back to us there).
            message.flags.relay = False
            message.flags.no_relay = True
            self._send_multicast(message)
            self._add_relay(ip)
            return
        if not (message.HasField("flags") and message.flags.no_relay) and self.relays:
            forward = wire.Discovery()
            forward.CopyFrom(message)
            forward.flags.relay = True
            self._send_unicast(forward)
        local_sender = ip in self.interfaces or ip.startswith("127.")
        now = self._clock()
        with self._lock:
            peer = self._peers.get(sender)
            if peer is None:
                peer = self._peers[sender] = PeerInfo(sender, ip, now)
            peer.last_seen = now
            peer.ip = ip
        kind = message.type
        if kind == DiscoveryType.ADVERTISE:
            publisher = PublisherInfo.from_message(message)
            if not message.pub.HasField("msg_pub") or not _in_scope(publisher.scope, local_sender):
                return
            with self._lock:
                peer.partitions.add(publisher.partition)
                table = self._remote.setdefault(sender, {})
                key = (publisher.topic, publisher.node_uuid)
                known = table.get(key)
                table[key] = publisher
            if known != publisher:
                self.listener.on_publisher(publisher)
        elif kind == DiscoveryType.SUBSCRIBE:
            topic = message.sub.topic
            parts = wire.split_fully_qualified(topic)
            partition, name = (wire.bare_partition(parts[0]), parts[1]) if parts else ("", topic)
            sighting = SubscribeSighting(topic, partition, name, sender, ip, now)
            with self._lock:
                peer.partitions.add(partition)
                self._subscribes[(topic, sender)] = sighting
                answers = [pub for (t, _), pub in self._local.items() if t == topic]
            for publisher in answers:
                if _in_scope(publisher.scope, local_sender):
                    self.send(DiscoveryType.ADVERTISE, publisher)
            self.listener.on_subscribe(sighting)
        elif kind == DiscoveryType.UNADVERTISE:
            publisher = PublisherInfo.from_message(message)
            if not _in_scope(publisher.scope, local_sender):
                return
            with self._lock:
                removed = self._remote.get(sender, {}).pop((publisher.topic, publisher.node_uuid), None)
            if removed is not None:
                self.listener.on_publisher_gone(removed)
        elif kind == DiscoveryType.BYE:
            with self._lock:
                self._forget(sender)
            self.listener.on_process_gone(sender)
        elif kind == DiscoveryType.NEW_CONNECTION:
            self.listener.on_new_connection(PublisherInfo.from_message(message))
        elif kind == DiscoveryType.END_CONNECTION:
            self.listener.on_end_connection(PublisherInfo.from_message(message))
        elif kind == DiscoveryType.SUBSCRIBERS_REQ:
            self.listener.on_subscribers_request()
        elif kind == DiscoveryType.SUBSCRIBERS_REP:
            subscriber = PublisherInfo.from_message(message)
            with self._lock:
                peer.partitions.add(subscriber.partition)
            self.listener.on_subscriber(subscriber)
        # HEARTBEAT: the activity update above is all.


def _in_scope(scope: Scope, local_sender: bool) -> bool:
    return scope == Scope.ALL or (scope == Scope.HOST and local_sender)

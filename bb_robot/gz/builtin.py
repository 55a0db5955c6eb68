"""The built-in gz-transport client: discovery over UDP, data over ZeroMQ (pyzmq), no Gazebo library.

Behaviour, as on the wire with gz-transport 13 / ign-transport 11:

- **publishing**: one ZeroMQ XPUB socket bound to ``tcp://<host>:*`` (a SUB peer sees a PUB);
  each advertised topic is announced with ADVERTISE and re-announced with every 1 s heartbeat;
  a message is four frames (fully qualified topic, our address, payload, type name). Messages go
  out as soon as ZeroMQ has a matching subscription filter (the C++ publisher additionally waits for
  the subscriber's NEW_CONNECTION; ZeroMQ filters by topic either way, and a subscriber of another
  type discards them). NEW_CONNECTION / END_CONNECTION addressed to us are recorded as remote
  subscribers (:meth:`BuiltinPublisher.has_connections`).
- **slow joiner**: XPUB reports each subscriber's filter the moment it reaches us; a publisher with
  ``resend_latest`` (the default) then sends its latest message again, so a late subscriber gets
  the current value without waiting for the next publication. The socket sends it to every
  subscriber of the topic: the ones that had it take it again.
- **subscribing**: SUBSCRIBE asks publishers to announce themselves; for each publisher of the
  topic in our partition with the same type name (or when subscribed as
  ``google.protobuf.Message``) the SUB socket connects to its address, adds the topic filter and
  sends NEW_CONNECTION with ``ctrl`` = the publisher's process UUID and the publisher's exact type
  name — the handshake without which a C++ publisher sends nothing. Messages are decoded and handed
  to callbacks on the data thread ``gz-data``.
- **peers going away**: BYE, UNADVERTISE or 3 s of silence remove a publisher and disconnect from
  it; a restarted peer is a new process and is connected to afresh.
- **diagnosis**: discovery traffic of every partition is kept; a subscription whose topic is
  published only in another partition, or with another type name, and a topic we publish that is
  requested from another partition or by a subscriber that never connects, are reported by
  :meth:`BuiltinTransport.diagnostics` and logged once as warnings.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from queue import Empty, SimpleQueue
from typing import Literal

import zmq
from google.protobuf.message import Message

from bb_robot.gz import net, wire
from bb_robot.gz.delivery import deliver
from bb_robot.gz.diagnosis import ProblemLog, TransportView, find_problems, topics_seen
from bb_robot.gz.diagnostics import AdvertisedTopic, Diagnostics, PeerSeen, SubscribedTopic
from bb_robot.gz.discovery import (
    HEARTBEAT_INTERVAL,
    SILENCE_INTERVAL,
    DiscoveryService,
    PublisherInfo,
    SubscribeSighting,
)
from bb_robot.gz.handles import BuiltinPublisher, BuiltinSubscription
from bb_robot.gz.interface import (
    GzClosedError,
    GzNetworkError,
    GzTransport,
    GzUsageError,
    Logger,
    MessageCallback,
    MessageType,
    type_name_of,
)
from bb_robot.gz.messages import GzMessages, default_messages
from bb_robot.gz.publishing import PublishSocket
from bb_robot.gz.wire import DiscoveryType

__all__ = ["BuiltinPublisher", "BuiltinSubscription", "BuiltinTransport"]

POLL_MS = 20
#: What the data thread is asked to do with its sockets: connect to a publisher, disconnect from
#: an address, drop a fully qualified topic's filter, or stop.
_Command = (
    tuple[Literal["connect"], PublisherInfo]
    | tuple[Literal["disconnect", "unsubscribe"], str]
    | tuple[Literal["stop"], None]
)
DEFAULT_HWM = 1000


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        number = int(value)
    except ValueError:
        return default
    return number if number >= 0 else default


class BuiltinTransport(GzTransport):
    """This project's gz-transport client (see the module docstring for the behaviour).

    Args:
        partition: ``GZ_PARTITION`` by default, else ``<hostname>:<username>``.
        namespace: Prefixes relative topic names.
        ip: The host address and discovery interface (default ``GZ_IP``).
        relays: Unicast discovery relays (default ``GZ_RELAY``, colon-separated).
        messages: Message classes for subscriptions given by type name (default
            :func:`~bb_robot.gz.messages.default_messages`, loaded only when needed).
        logger: Where to log (default: the ``bb_robot.gz`` logger).
        multicast_group: Default ``GZ_DISCOVERY_MULTICAST_IP``, else 239.255.0.7.
        discovery_port: Default ``GZ_DISCOVERY_MSG_PORT``, else 10317.
        heartbeat_interval: Seconds between discovery heartbeats.
        silence_interval: Seconds of silence after which a peer is forgotten.

    Raises:
        WireError: The partition or namespace is not a valid name (a ``ValueError``).
        GzNetworkError: The data or discovery sockets cannot be set up (an ``OSError``).
    """

    implementation = "builtin"

    def __init__(
        self,
        *,
        partition: str | None = None,
        namespace: str = "",
        ip: str | None = None,
        relays: str | list[str] | None = None,
        messages: GzMessages | None = None,
        logger: Logger | None = None,
        multicast_group: str | None = None,
        discovery_port: int | None = None,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        silence_interval: float = SILENCE_INTERVAL,
    ) -> None:
        self.partition = partition if partition is not None else wire.default_partition()
        self.namespace = namespace
        wire.fully_qualified(self.partition, "/check", namespace)  # WireError (a ValueError) for an invalid partition
        self.log: Logger = logger if logger is not None else logging.getLogger("bb_robot.gz")
        self._messages = messages
        self.process_uuid = str(uuid.uuid4())
        self.node_uuid = str(uuid.uuid4())
        self.host = net.host_address(ip)
        interfaces = net.discovery_interfaces(ip)
        relay_list = net.relay_addresses(relays) if not isinstance(relays, list) else list(relays)
        group = multicast_group or os.environ.get("GZ_DISCOVERY_MULTICAST_IP") or wire.MULTICAST_GROUP
        port = discovery_port or _env_int("GZ_DISCOVERY_MSG_PORT", wire.MSG_DISCOVERY_PORT)

        self._lock = threading.RLock()
        self._publishers: dict[str, BuiltinPublisher] = {}
        self._subs: dict[str, list[BuiltinSubscription]] = {}
        self._connections: dict[tuple[str, str, str], PublisherInfo] = {}  # (topic, process, node) -> remote pub
        self._address_refs: dict[str, int] = {}
        self._filters: set[str] = set()  # SUB topic filters set (data thread only)
        self._connected: set[str] = set()  # addresses the SUB socket is connected to (data thread only)
        self._remote_subscribers: dict[str, dict[tuple[str, str], PublisherInfo]] = {}
        self._ever_connected: set[tuple[str, str]] = set()  # (topic, subscriber process) that sent NEW_CONNECTION
        self._reported_subscribers: dict[tuple[str, str, str], tuple[PublisherInfo, float]] = {}
        self._problems = ProblemLog(self.log)
        self._commands: SimpleQueue[_Command] = SimpleQueue()
        self._closed = False
        self._started = time.monotonic()

        self._context = zmq.Context()
        try:
            self._publish = PublishSocket(self._context, self.host, _env_int("GZ_TRANSPORT_SNDHWM", DEFAULT_HWM))
            self.address = self._publish.address
            self._sub = self._context.socket(zmq.SUB)
            self._sub.setsockopt(zmq.LINGER, 0)
            self._sub.setsockopt(zmq.RCVHWM, _env_int("GZ_TRANSPORT_RCVHWM", DEFAULT_HWM))
        except zmq.ZMQError as error:
            self._context.destroy(linger=0)
            raise GzNetworkError(f"gz transport: cannot bind tcp://{self.host}:* ({error}); check GZ_IP") from error
        self._wake_r, self._wake_w = os.pipe()
        try:
            self.discovery = DiscoveryService(
                self.process_uuid,
                self,
                interfaces=interfaces,
                relays=relay_list,
                group=group,
                port=port,
                heartbeat_interval=heartbeat_interval,
                silence_interval=silence_interval,
            )
        except OSError:
            self._context.destroy(linger=0)
            os.close(self._wake_r)
            os.close(self._wake_w)
            raise
        self._data_thread = threading.Thread(target=self._data_loop, name="gz-data", daemon=True)
        self._data_thread.start()
        self.discovery.start()
        self.log.debug(
            f"gz transport: partition {self.partition!r}, host {self.host}, data at {self.address}, "
            f"discovery {group}:{port} on {', '.join(interfaces)}"
            + (f", relays {', '.join(relay_list)}" if relay_list else "")
        )

    # ------------------------------------------------------------------------------ helpers

    @property
    def messages(self) -> GzMessages:
        if self._messages is None:
            self._messages = default_messages()
        return self._messages

    def full_name(self, topic: str) -> str:
        return wire.fully_qualified(self.partition, topic, self.namespace)

    def _bare(self) -> str:
        return wire.bare_partition(self.partition)

    def _command(self, command: _Command) -> None:
        self._commands.put(command)
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def _check_open(self) -> None:
        if self._closed:
            raise GzClosedError("gz transport is closed")

    # ------------------------------------------------------------------------------ publishing

    def advertise(self, topic: str, message_type: MessageType, *, resend_latest: bool = True) -> BuiltinPublisher:
        """See :meth:`GzTransport.advertise`; ``resend_latest`` re-sends the latest message when a
        new subscriber's filter arrives (the slow joiner's current value). One PUB socket serves every
        subscriber of the topic, so the ones that had it already take it a second time."""
        self._check_open()
        type_name = type_name_of(message_type)
        full = self.full_name(topic)
        with self._lock:
            existing = self._publishers.get(full)
            if existing is not None:
                if existing.type_name != type_name:
                    raise GzUsageError(f"{topic} is already advertised as {existing.type_name}, not {type_name}")
                return existing
            publisher = BuiltinPublisher(
                topic,
                full,
                type_name,
                resend_latest,
                address=self.address,
                process_uuid=self.process_uuid,
                node_uuid=self.node_uuid,
                send=self._publish.send,
                connected=self._has_connections,
            )
            self._publishers[full] = publisher
        self.discovery.advertise(publisher.info)
        self._update_problems()
        return publisher

    def unadvertise(self, topic: str) -> None:
        """Stop publishing ``topic`` (UNADVERTISE); nothing happens if it is not advertised."""
        with self._lock:
            publisher = self._publishers.pop(self.full_name(topic), None)
        if publisher is not None:
            self.discovery.unadvertise(publisher.info)

    def _has_connections(self, full_topic: str) -> bool:
        """A subscriber registered (NEW_CONNECTION, so of our type) and its filter reached our socket."""
        with self._lock:
            if not self._remote_subscribers.get(full_topic):
                return False
        return self._publish.has_filter(full_topic)

    # ------------------------------------------------------------------------------ subscribing

    def subscribe(
        self, topic: str, message_type: MessageType, callback: MessageCallback, *, raw: bool = False
    ) -> BuiltinSubscription:
        self._check_open()
        type_name = type_name_of(message_type)
        message_class: type[Message] | None = None
        if not raw:
            if not isinstance(message_type, str):
                message_class = message_type
            elif type_name != wire.GENERIC_MESSAGE_TYPE:
                message_class = self.messages.message_class(type_name)
        full = self.full_name(topic)
        subscription = BuiltinSubscription(
            topic, full, type_name, callback, message_class, raw, unsubscribe=self._unsubscribe
        )
        with self._lock:
            self._subs.setdefault(full, []).append(subscription)
        for publisher in self.discovery.discover(full):
            self.on_publisher(publisher)
        self._update_problems()
        return subscription

    def _unsubscribe(self, subscription: BuiltinSubscription) -> None:
        with self._lock:
            if not subscription.active:
                return
            subscription.active = False
            remaining = [s for s in self._subs.get(subscription.full_topic, []) if s is not subscription]
            if remaining:
                self._subs[subscription.full_topic] = remaining
                return
            self._subs.pop(subscription.full_topic, None)
            dropped = [key for key in self._connections if key[0] == subscription.full_topic]
            connections = [self._connections.pop(key) for key in dropped]
        for connection in connections:
            self._release(connection.address)
            self.discovery.send(DiscoveryType.END_CONNECTION, self._connection_info(connection))
        if not self._closed:
            self._command(("unsubscribe", subscription.full_topic))

    def _connection_info(self, publisher: PublisherInfo) -> PublisherInfo:
        """The NEW_CONNECTION / END_CONNECTION we send to ``publisher``'s process."""
        return PublisherInfo(
            topic=publisher.topic,
            address=publisher.address,
            process_uuid=self.process_uuid,
            node_uuid=self.node_uuid,
            type_name=publisher.type_name,
            scope=publisher.scope,
            ctrl=publisher.process_uuid,
        )

    def _release(self, address: str) -> None:
        with self._lock:
            count = self._address_refs.get(address, 0) - 1
            if count > 0:
                self._address_refs[address] = count
                return
            self._address_refs.pop(address, None)
        self._command(("disconnect", address))

    # ------------------------------------------------------------------------------ discovery events

    def on_publisher(self, publisher: PublisherInfo) -> None:
        if publisher.process_uuid == self.process_uuid or self._closed:
            return
        with self._lock:
            subs = self._subs.get(publisher.topic)
            if not subs:
                self._update_problems()
                return
            if not any(sub.accepts(publisher.type_name) for sub in subs):
                self._update_problems()
                return
            key = (publisher.topic, publisher.process_uuid, publisher.node_uuid)
            known = self._connections.get(key)
            if known is not None and known.address == publisher.address:
                return
            self._connections[key] = publisher
            if known is not None:
                self._release(known.address)
            self._address_refs[publisher.address] = self._address_refs.get(publisher.address, 0) + 1
        self.log.info(f"gz transport: connecting to {publisher.name} [{publisher.type_name}] at {publisher.address}")
        self._command(("connect", publisher))
        self._update_problems()

    def on_publisher_gone(self, publisher: PublisherInfo) -> None:
        with self._lock:
            removed = self._connections.pop((publisher.topic, publisher.process_uuid, publisher.node_uuid), None)
        if removed is not None:
            self.log.info(f"gz transport: publisher of {removed.name} at {removed.address} went away")
            self._release(removed.address)
        self._update_problems()

    def on_process_gone(self, process_uuid: str) -> None:
        with self._lock:
            dropped = [key for key in self._connections if key[1] == process_uuid]
            connections = [self._connections.pop(key) for key in dropped]
            for table in self._remote_subscribers.values():
                for key in [k for k in table if k[0] == process_uuid]:
                    del table[key]
            for reported in [k for k in self._reported_subscribers if k[1] == process_uuid]:
                del self._reported_subscribers[reported]
        for connection in connections:
            self.log.info(f"gz transport: publisher of {connection.name} at {connection.address} went away")
            self._release(connection.address)
        self._update_problems()

    def on_new_connection(self, connection: PublisherInfo) -> None:
        if connection.ctrl != self.process_uuid:
            return
        with self._lock:
            self._remote_subscribers.setdefault(connection.topic, {})[
                (connection.process_uuid, connection.node_uuid)
            ] = connection
            self._ever_connected.add((connection.topic, connection.process_uuid))
        self._update_problems()

    def on_end_connection(self, connection: PublisherInfo) -> None:
        if connection.ctrl and connection.ctrl != self.process_uuid:
            return
        with self._lock:
            self._remote_subscribers.get(connection.topic, {}).pop(
                (connection.process_uuid, connection.node_uuid), None
            )

    def on_subscribe(self, sighting: SubscribeSighting) -> None:
        self._update_problems()

    def on_subscribers_request(self) -> None:
        with self._lock:
            subs = [sub for subs in self._subs.values() for sub in subs]
        for sub in subs:
            self.discovery.send(
                DiscoveryType.SUBSCRIBERS_REP,
                PublisherInfo(sub.full_topic, self.address, self.process_uuid, self.node_uuid, sub.type_name),
            )

    def on_subscriber(self, subscriber: PublisherInfo) -> None:
        with self._lock:
            key = (subscriber.topic, subscriber.process_uuid, subscriber.node_uuid)
            self._reported_subscribers[key] = (subscriber, time.monotonic())
        self._update_problems()

    def request_subscribers(self) -> None:
        """Ask gz-transport 13 peers for their subscriptions (SUBSCRIBERS_REQ; their replies show in
        :meth:`diagnostics`, with type names). ign-transport 11 peers do not know the request and
        print "Unknown message type [8]"; so this is sent only when asked for."""
        self.discovery.send(DiscoveryType.SUBSCRIBERS_REQ, PublisherInfo("", "", self.process_uuid, "", ""))

    # ------------------------------------------------------------------------------ the data thread

    def _data_loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self._sub, zmq.POLLIN)
        poller.register(self._wake_r, zmq.POLLIN)
        while True:
            try:
                events = dict(poller.poll(POLL_MS))
            except zmq.ZMQError:
                break
            if self._wake_r in events:
                os.read(self._wake_r, 4096)
            # Receive before running commands: polling a SUB socket reads the first frame of the
            # next message ahead (libzmq's xsub has_in), and disconnecting its publisher before the
            # rest is read makes libzmq abort the process (fq.cpp "!_more"). _receive() reads
            # until none is left, so a disconnect never falls inside a message.
            if self._sub in events:
                self._receive()
            if not self._run_commands():
                break
            self._publish.drain(self._publishers.get)

    def _run_commands(self) -> bool:
        """Run the queued socket commands; ``False`` once asked to stop."""
        while True:
            try:
                command = self._commands.get_nowait()
            except Empty:
                return True
            try:
                match command:
                    case ("stop", _):
                        return False
                    case ("connect", PublisherInfo() as publisher):
                        self._connect(publisher)
                    case ("disconnect", str() as address):
                        self._disconnect(address)
                    case ("unsubscribe", str() as topic):
                        self._drop_filter(topic)
            except zmq.ZMQError as error:
                self.log.warning(f"gz transport: {command[0]} failed: {error}")

    def _connect(self, publisher: PublisherInfo) -> None:
        """Connect the SUB socket to ``publisher``, filter its topic, and send NEW_CONNECTION."""
        with self._lock:
            if self._address_refs.get(publisher.address, 0) <= 0:
                return  # gone again before we got here
            first = publisher.address not in self._connected
        if first:
            self._sub.connect(publisher.address)
            self._connected.add(publisher.address)
        if publisher.topic not in self._filters:
            self._sub.setsockopt(zmq.SUBSCRIBE, publisher.topic.encode())
            self._filters.add(publisher.topic)
        self.discovery.send(DiscoveryType.NEW_CONNECTION, self._connection_info(publisher))

    def _disconnect(self, address: str) -> None:
        """Disconnect the SUB socket from ``address`` unless a connection uses it again."""
        with self._lock:
            in_use = self._address_refs.get(address, 0) > 0
        if not in_use and address in self._connected:
            self._connected.discard(address)
            self._sub.disconnect(address)

    def _drop_filter(self, topic: str) -> None:
        """Remove the SUB socket's filter of ``topic`` unless it is subscribed again."""
        with self._lock:
            wanted = topic in self._subs
        if not wanted and topic in self._filters:
            self._filters.discard(topic)
            self._sub.setsockopt(zmq.UNSUBSCRIBE, topic.encode())

    def _receive(self) -> None:
        for _ in range(1000):
            try:
                frames = self._sub.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(frames) < 4:
                continue
            topic = frames[0].decode(errors="replace")
            with self._lock:
                subs = list(self._subs.get(topic, ()))
            if not subs:
                continue
            deliver(topic, frames, subs, self._class_for, self._problems, self.log)

    def _class_for(self, type_name: str) -> type[Message] | None:
        try:
            return self.messages.message_class(type_name)
        except Exception:
            self._problem(f"unknown:{type_name}", f"no message class for {type_name}: cannot decode it")
            return None

    # ------------------------------------------------------------------------------ queries

    def topic_list(self) -> list[str]:
        bare = self._bare()
        return sorted({pub.name for pub in self.discovery.publishers() if pub.partition == bare})

    def publishers(self, topic: str) -> list[tuple[str, str]]:
        full = self.full_name(topic)
        return [(pub.type_name, pub.address) for pub in self.discovery.publishers(full)]

    def wait_for_subscribers(self, topic: str, timeout: float) -> bool:
        """Wait for a subscriber of ``topic`` that data reaches (see ``has_connections``).

        Args:
            topic: An advertised topic.
            timeout: Seconds to wait at most.

        Returns:
            Whether one connected in time.
        """
        deadline = time.monotonic() + timeout
        full = self.full_name(topic)
        while not self._has_connections(full):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    # ------------------------------------------------------------------------------ diagnosis

    def _problem(self, key: str, text: str) -> None:
        self._problems.report(key, text)

    def _update_problems(self) -> None:
        """Recompute the diagnosable problems; log new ones (warning) and resolved ones (info)."""
        with self._lock:
            view = TransportView(
                partition=self._bare(),
                process_uuid=self.process_uuid,
                started=self._started,
                subscriptions={topic: list(items) for topic, items in self._subs.items()},
                publishers=dict(self._publishers),
                ever_connected=frozenset(self._ever_connected),
                reported=list(self._reported_subscribers.values()),
            )
        found = find_problems(
            view,
            self.discovery.publishers(),
            self.discovery.subscribe_sightings(),
            self.discovery.foreign_versions(),
            time.monotonic(),
        )
        self._problems.update(found)

    def problems(self) -> list[str]:
        """The problems diagnosed now (also logged once each as warnings)."""
        self._update_problems()
        return self._problems.current()

    def diagnostics(self) -> Diagnostics:
        problems = tuple(self.problems())
        now = time.monotonic()
        with self._lock:
            reported = list(self._reported_subscribers.values())
        seen = topics_seen(self.discovery.publishers(), self.discovery.subscribe_sightings(), reported, now)
        with self._lock:
            advertised = tuple(
                AdvertisedTopic(p.topic, p.type_name, len(self._remote_subscribers.get(full, {})), p.sent)
                for full, p in self._publishers.items()
            )
            subscriptions = []
            for full, subs in self._subs.items():
                count = sum(1 for key in self._connections if key[0] == full)
                for sub in subs:
                    last = None if not sub.last_ns else (time.monotonic_ns() - sub.last_ns) / 1e9
                    subscriptions.append(SubscribedTopic(sub.topic, sub.type_name, count, sub.received, last))
        peers = tuple(
            PeerSeen(peer.process_uuid, peer.ip, now - peer.last_seen, tuple(sorted(peer.partitions)))
            for peer in self.discovery.peers()
        )
        notes: list[str] = []
        if not peers and now - self._started > 2 * HEARTBEAT_INTERVAL:
            notes.append(
                "no other gz-transport process heard from: is the simulator running, multicast allowed between "
                "the containers/hosts (else set GZ_RELAY), GZ_IP an address of the right interface?"
            )
        return Diagnostics(
            implementation=self.implementation,
            partition=self.partition,
            process_uuid=self.process_uuid,
            host=self.host,
            interfaces=tuple(self.discovery.interfaces),
            relays=tuple(self.discovery.relays),
            advertised=advertised,
            subscriptions=tuple(subscriptions),
            seen=tuple(seen),
            peers=peers,
            problems=problems,
            notes=tuple(notes),
        )

    # ------------------------------------------------------------------------------ shutdown

    def close(self) -> None:
        if self._closed:
            return
        with self._lock:
            subs = [sub for items in self._subs.values() for sub in items]
            publishers = list(self._publishers.values())
        for sub in subs:
            self._unsubscribe(sub)
        for publisher in publishers:
            self.discovery.unadvertise(publisher.info)
        self._closed = True
        self._publish.stop()
        self.discovery.close()  # sends BYE
        self._command(("stop", None))
        self._data_thread.join(timeout=5.0)
        self._publish.close()
        self._sub.close(linger=0)
        self._context.term()
        os.close(self._wake_r)
        os.close(self._wake_w)

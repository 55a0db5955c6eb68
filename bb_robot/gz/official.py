"""A thin :class:`~bb_robot.gz.interface.GzTransport` adapter over Gazebo Harmonic's ``gz.transport13``.

For machines with Gazebo Harmonic installed (``gz_transport: official``). ``gz.transport13`` is
imported only when this class is instantiated; it reads ``GZ_IP``, ``GZ_RELAY`` … itself.

The adapter calls the pybind11 module ``gz.transport13._transport`` (the C++ ``Node`` as bound:
``advertise(topic, msg_type_name, options)``, ``subscribe_raw(topic, callback(bytes, info),
msg_type, options)``, ``Publisher.publish_raw(msg_data, msg_type)``), not the package's Python
wrapper, whose ``Node.advertise`` takes a protobuf class instead of a type name.  The real binding
does not load on the machines this project is tested on (PyPI's ``gazebo-py-bindings`` ships it
without ``libgz-transport13``); the tests run the adapter through a stand-in module with those
signatures, built on the built-in client, against the C++ peer (``test/gz/test_gz_official.py``).

What it cannot do that the built-in client does: see other partitions (so no partition-mismatch
diagnosis), report remote publishers' addresses, or re-send the latest message to a late subscriber.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from typing import Any

from google.protobuf.message import Message

from bb_robot.gz import wire
from bb_robot.gz.diagnostics import Diagnostics
from bb_robot.gz.interface import (
    GzPublisher,
    GzSubscription,
    GzTransport,
    GzUsageError,
    Logger,
    MessageCallback,
    MessageInfo,
    MessageType,
    type_name_of,
)
from bb_robot.gz.messages import GzMessages, default_messages

MODULE = "gz.transport13"
#: The pybind11 module inside it (``BINDINGS_MODULE_NAME`` of gz-transport 13's CMake).
BINDING = f"{MODULE}._transport"


def available() -> str | None:
    """``None`` if ``gz.transport13`` imports, else why not."""
    try:
        importlib.import_module(BINDING)
    except Exception as error:  # ImportError, or a binding whose shared library is missing
        return f"{MODULE} does not import: {error}"
    return None


class OfficialPublisher(GzPublisher):
    """A ``gz.transport13`` publisher handle for one topic and type."""

    def __init__(self, handle: Any, topic: str, type_name: str) -> None:
        self._handle = handle
        self.topic = topic
        self.type_name = type_name

    def publish_raw(self, data: bytes) -> None:
        self._handle.publish_raw(data, self.type_name)

    def has_connections(self) -> bool:
        return bool(self._handle.has_connections())


class OfficialSubscription(GzSubscription):
    """A subscription made through ``gz.transport13`` (cancelled by unsubscribing its topic)."""

    def __init__(self, transport: OfficialTransport, topic: str, type_name: str) -> None:
        self._transport = transport
        self.topic = topic
        self.type_name = type_name
        self.count = 0
        self.active = True

    @property
    def received(self) -> int:
        return self.count

    def cancel(self) -> None:
        self._transport._unsubscribe(self)


class OfficialTransport(GzTransport):
    """:class:`~bb_robot.gz.interface.GzTransport` over ``gz.transport13`` (see the module docstring).

    Args:
        partition: ``GZ_PARTITION`` by default, else ``<hostname>:<username>``.
        namespace: Prefixes relative topic names.
        messages: Message classes for subscriptions given by type name (default
            :func:`~bb_robot.gz.messages.default_messages`, loaded only when needed).
        logger: Where to log (default: the ``bb_robot.gz`` logger).

    Raises:
        ImportError: ``gz.transport13`` does not import (or its shared library is missing).
    """

    implementation = "official"

    def __init__(
        self,
        *,
        partition: str | None = None,
        namespace: str = "",
        messages: GzMessages | None = None,
        logger: Logger | None = None,
    ) -> None:
        module = importlib.import_module(BINDING)
        self._module = module
        self.partition = partition if partition is not None else wire.default_partition()
        options = module.NodeOptions()
        options.partition = self.partition
        if namespace:
            options.namespace = namespace
        self._node = module.Node(options)
        self._messages = messages
        self._log: Logger = logger if logger is not None else logging.getLogger("bb_robot.gz")
        self._lock = threading.Lock()
        self._publishers: dict[str, OfficialPublisher] = {}
        self._subs: dict[str, list[OfficialSubscription]] = {}

    @property
    def messages(self) -> GzMessages:
        if self._messages is None:
            self._messages = default_messages()
        return self._messages

    def advertise(self, topic: str, message_type: MessageType) -> OfficialPublisher:
        type_name = type_name_of(message_type)
        with self._lock:
            existing = self._publishers.get(topic)
            if existing is not None:
                if existing.type_name != type_name:
                    raise GzUsageError(f"{topic} is already advertised as {existing.type_name}, not {type_name}")
                return existing
            handle = self._node.advertise(topic, type_name, self._module.AdvertiseMessageOptions())
            if not handle.valid():
                raise GzUsageError(f"gz.transport13 refused to advertise {topic} [{type_name}]")
            publisher = self._publishers[topic] = OfficialPublisher(handle, topic, type_name)
            return publisher

    def subscribe(
        self, topic: str, message_type: MessageType, callback: MessageCallback, *, raw: bool = False
    ) -> OfficialSubscription:
        type_name = type_name_of(message_type)
        cls: type[Message] | None = None
        if not raw:
            if type_name == wire.GENERIC_MESSAGE_TYPE:
                # gz.transport13's Python MessageInfo exposes no type name to decode by.
                raise GzUsageError(f"{topic}: the official transport needs a concrete type (or raw=True) to subscribe")
            cls = message_type if not isinstance(message_type, str) else self.messages.message_class(type_name)
        subscription = OfficialSubscription(self, topic, type_name)

        def deliver(data: bytes, info: Any) -> None:
            # Runs on gz-transport's C++ thread: an exception escaping into it would end the process.
            if not subscription.active:
                return
            now = time.monotonic_ns()
            try:
                payload: Any = data if cls is None else cls.FromString(data)
                subscription.count += 1
                callback(payload, MessageInfo(topic, self.partition, type_name, "", now))
            except Exception as error:  # noqa: BLE001 - reported, never raised into C++
                self._log.warning(f"gz transport (official): {topic}: a message was not handled: {error!r}")

        if not self._node.subscribe_raw(topic, deliver, type_name, self._module.SubscribeOptions()):
            raise GzUsageError(f"gz.transport13 refused to subscribe to {topic} [{type_name}]")
        with self._lock:
            self._subs.setdefault(topic, []).append(subscription)
        return subscription

    def _unsubscribe(self, subscription: OfficialSubscription) -> None:
        subscription.active = False
        with self._lock:
            remaining = [s for s in self._subs.get(subscription.topic, []) if s is not subscription]
            if remaining:
                self._subs[subscription.topic] = remaining
                return
            self._subs.pop(subscription.topic, None)
        self._node.unsubscribe(subscription.topic)

    def topic_list(self) -> list[str]:
        return sorted(str(topic) for topic in self._node.topic_list())

    def publishers(self, topic: str) -> list[tuple[str, str]]:
        publishers, _subscribers = self._node.topic_info(topic)
        return [(str(pub.msg_type_name), "") for pub in publishers]  # the binding exposes no address

    def diagnostics(self) -> Diagnostics:
        return Diagnostics(
            implementation=self.implementation,
            partition=self.partition,
            notes=(
                "gz.transport13 sees only its own partition: partition mismatches cannot be diagnosed; "
                "use gz_transport: builtin to diagnose",
            ),
        )

    def close(self) -> None:
        with self._lock:
            topics = list(self._subs)
            self._subs.clear()
            self._publishers.clear()
        for topic in topics:
            self._node.unsubscribe(topic)
        self._node = None

"""A stand-in for gz-transport 13's pybind11 module ``gz.transport13._transport``.

For the tests of :mod:`bb_robot.gz.official` on machines without Gazebo Harmonic (Debian has no
``libgz-transport13``; PyPI's ``gazebo-py-bindings`` ships the binding without it).  It has the
binding's classes, method names, argument order and return values as gz-transport 13 declares
them (``python/src/transport/_gz_transport_pybind11.cc``): ``Node(NodeOptions)``,
``advertise(topic, msg_type_name, options) -> Node.Publisher`` (an invalid publisher when the
node already advertises the topic), ``Publisher.publish_raw(msg_data, msg_type) -> bool`` (false
for another type), ``valid()``, ``has_connections()``, ``subscribe_raw(topic, callback(bytes,
MessageInfo), msg_type, options) -> bool``, ``unsubscribe(topic) -> bool``, ``topic_list()``,
``topic_info(topic) -> (publishers, subscribers)`` of ``MessagePublisher``.  The messages travel
through this project's built-in gz-transport client, so what the adapter sends reaches real
gz-transport peers (the tests' C++ ign-transport 11 peer).  It reads ``GZ_IP`` and
``GZ_PARTITION`` as the library does.

It is only as good as that interface: the real binding's behaviour inside the library (threads,
the GIL, its own discovery) is not reproduced.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from bb_robot.gz import wire
from bb_robot.gz.builtin import BuiltinTransport

#: ``msgs_per_sec`` when not throttled (``kUnthrottled``, the largest uint64).
UNTHROTTLED = 2**64 - 1


class _Throttle:
    """``msgs_per_sec`` and ``throttled``, as both option classes of the binding have them."""

    msgs_per_sec = UNTHROTTLED

    @property
    def throttled(self) -> bool:
        return self.msgs_per_sec != UNTHROTTLED


class AdvertiseOptions:
    def __init__(self) -> None:
        self.scope = 2  # Scope::ALL


class AdvertiseMessageOptions(AdvertiseOptions, _Throttle):
    pass


class SubscribeOptions(_Throttle):
    pass


class NodeOptions:
    def __init__(self) -> None:
        self.namespace = ""
        self.partition = wire.default_partition()


class MessageInfo:
    """Opaque in the binding (no attributes)."""


class MessagePublisher:
    def __init__(self, msg_type_name: str, ctrl: str = "") -> None:
        self.msg_type_name = msg_type_name
        self.ctrl = ctrl
        self.options = AdvertiseMessageOptions()


class Node:
    class Publisher:
        def __init__(self, handle: Any = None, msg_type: str = "") -> None:
            self._handle = handle
            self._type = msg_type

        def valid(self) -> bool:
            return self._handle is not None

        def publish_raw(self, msg_data: bytes, msg_type: str) -> bool:
            if self._handle is None or msg_type != self._type:
                return False
            self._handle.publish_raw(bytes(msg_data))
            return True

        def has_connections(self) -> bool:
            return self._handle is not None and bool(self._handle.has_connections())

    def __init__(self, options: NodeOptions | None = None) -> None:
        options = options if options is not None else NodeOptions()
        self._transport = BuiltinTransport(
            partition=options.partition, namespace=options.namespace, ip=os.environ.get("GZ_IP") or None
        )
        self._advertised: set[str] = set()
        self._subscriptions: dict[str, list[Any]] = {}

    def advertise(self, topic: str, msg_type_name: str, options: AdvertiseMessageOptions) -> Node.Publisher:
        if topic in self._advertised:
            return Node.Publisher()
        self._advertised.add(topic)
        return Node.Publisher(self._transport.advertise(topic, msg_type_name), msg_type_name)

    def subscribe_raw(
        self, topic: str, callback: Callable[[bytes, MessageInfo], None], msg_type: str, options: SubscribeOptions
    ) -> bool:
        def deliver(payload: bytes, info: Any) -> None:
            callback(bytes(payload), MessageInfo())

        self._subscriptions.setdefault(topic, []).append(self._transport.subscribe(topic, msg_type, deliver, raw=True))
        return True

    def unsubscribe(self, topic: str) -> bool:
        subscriptions = self._subscriptions.pop(topic, [])
        for subscription in subscriptions:
            subscription.cancel()
        return bool(subscriptions)

    def advertised_topics(self) -> list[str]:
        return sorted(self._advertised)

    def subscribed_topics(self) -> list[str]:
        return sorted(self._subscriptions)

    def topic_list(self) -> list[str]:
        return self._transport.topic_list()

    def topic_info(self, topic: str) -> tuple[list[MessagePublisher], list[MessagePublisher]]:
        publishers = [MessagePublisher(type_name) for type_name, _address in self._transport.publishers(topic)]
        return publishers, []

    def __del__(self) -> None:
        transport = getattr(self, "_transport", None)
        if transport is not None:
            transport.close()

"""An independent Foxglove WebSocket client for the tests: the protocol written here from its
published description (the ``foxglove.websocket.v1`` specification, which subprotocol
``foxglove.sdk.v1`` keeps), not the SDK's own client.

The ``websockets`` library carries the WebSocket frames; everything above them is here: the
subprotocol offer, the JSON operations (``serverInfo``, ``advertise``, ``unadvertise``,
``status``; ``subscribe``, ``fetchAsset``) and the binary messages, each a 1-byte opcode and
little-endian fields (Message Data ``0x01``: subscription id uint32, log time uint64, payload;
Fetch Asset Response ``0x04``: request id uint32, status uint8, error length uint32, error,
data).

A subscription the server answers with the error status ``Unknown channel ID: N`` while channel
N is advertised is sent again (at most :data:`RESUBSCRIBE_LIMIT` times).  foxglove-sdk's server
queues a channel's advertisement to a client before it records the channel for that client (its
0.26 source; 0.30.3 behaves so here), so a client that subscribes in the instant after the
advertisement can be told the channel is unknown: one ``bb-robot up --view`` run in five, beside
other tests, lost its ``/joint_states`` subscription so.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

SUBPROTOCOL = "foxglove.sdk.v1"
OP_MESSAGE_DATA = 0x01
OP_FETCH_ASSET_RESPONSE = 0x04
_MESSAGE_HEADER = struct.Struct("<BIQ")
_ASSET_HEADER = struct.Struct("<BIBI")
#: How often one subscription is sent again after an "Unknown channel ID" status.
RESUBSCRIBE_LIMIT = 5
_UNKNOWN_CHANNEL = re.compile(r"Unknown channel ID: (\d+)")


@dataclass(frozen=True)
class Received:
    """One Message Data: the channel's topic, the log time and the payload, and when it came (monotonic)."""

    topic: str
    log_time: int
    payload: bytes
    arrived: float


@dataclass(frozen=True)
class AssetAnswer:
    """A Fetch Asset Response: ``ok`` with ``data``, or the server's ``error``."""

    ok: bool
    error: str
    data: bytes


class ProtocolError(AssertionError):
    """The server sent something the specification does not allow."""


class FoxgloveTestClient:
    """Connects, reads everything the server sends on a thread, and offers waits on it."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self.connected_at = time.monotonic()
        self.ws: ClientConnection = connect(
            url,
            subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
            open_timeout=timeout,
            max_size=None,
        ).__enter__()  # closed in close()
        if self.ws.subprotocol != SUBPROTOCOL:
            raise ProtocolError(f"server chose subprotocol {self.ws.subprotocol!r}, not {SUBPROTOCOL}")
        self.server_info: dict[str, Any] | None = None
        self.channels: dict[int, dict[str, Any]] = {}
        self.statuses: list[dict[str, Any]] = []
        self.messages: list[Received] = []
        self.assets: dict[int, AssetAnswer] = {}
        self.errors: list[str] = []
        self._subscriptions: dict[int, int] = {}  # subscription id -> channel id
        self.resubscribed: list[int] = []  # channel ids subscribed again (see the module's docstring)
        self._next_id = 1
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ reading
    def _read(self) -> None:
        try:
            for frame in self.ws:
                with self._lock:
                    try:
                        if isinstance(frame, str):
                            self._on_json(json.loads(frame))
                        else:
                            self._on_binary(bytes(frame))
                    except (ProtocolError, ValueError, struct.error) as error:
                        self.errors.append(str(error))
                    self._lock.notify_all()
        except ConnectionClosed:
            pass

    def _on_json(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "serverInfo":
            self.server_info = message
        elif op == "advertise":
            for channel in message["channels"]:
                self.channels[int(channel["id"])] = channel
        elif op == "unadvertise":
            for channel_id in message["channelIds"]:
                self.channels.pop(int(channel_id), None)
        elif op == "status":
            self.statuses.append(message)
            self._resubscribe(message)
        elif not isinstance(op, str):
            raise ProtocolError(f"JSON message without op: {message}")

    def _on_binary(self, frame: bytes) -> None:
        opcode = frame[0]
        if opcode == OP_MESSAGE_DATA:
            _, subscription, log_time = _MESSAGE_HEADER.unpack_from(frame)
            channel_id = self._subscriptions.get(subscription)
            if channel_id is None:
                raise ProtocolError(f"Message Data for unknown subscription {subscription}")
            topic = self.channels.get(channel_id, {}).get("topic", f"<channel {channel_id}>")
            self.messages.append(Received(topic, log_time, frame[_MESSAGE_HEADER.size :], time.monotonic()))
        elif opcode == OP_FETCH_ASSET_RESPONSE:
            _, request, status, length = _ASSET_HEADER.unpack_from(frame)
            start = _ASSET_HEADER.size
            error = frame[start : start + length].decode("utf-8")
            self.assets[request] = AssetAnswer(status == 0, error, frame[start + length :])
        else:
            raise ProtocolError(f"unknown binary opcode 0x{opcode:02x}")

    def _resubscribe(self, status: dict[str, Any]) -> None:
        """Send a subscription again that the server refused for an advertised channel (called locked)."""
        unknown = _UNKNOWN_CHANNEL.fullmatch(str(status.get("message", "")))
        if unknown is None or status.get("level") != 2:
            return
        channel_id = int(unknown.group(1))
        mine = [s for s, c in self._subscriptions.items() if c == channel_id]
        if channel_id in self.channels and mine and self.resubscribed.count(channel_id) < RESUBSCRIBE_LIMIT:
            self.resubscribed.append(channel_id)
            self._send({"op": "subscribe", "subscriptions": [{"id": s, "channelId": channel_id} for s in mine]})

    # ------------------------------------------------------------------ requests
    def _send(self, message: dict[str, Any]) -> None:
        self.ws.send(json.dumps(message))

    def channel_id(self, topic: str) -> int:
        with self._lock:
            for channel_id, channel in self.channels.items():
                if channel["topic"] == topic:
                    return channel_id
        raise KeyError(topic)

    def subscribe(self, *topics: str) -> None:
        """Subscribe to the advertised channels of ``topics``."""
        subscriptions = []
        with self._lock:
            for topic in topics:
                channel_id = self.channel_id(topic)
                self._subscriptions[self._next_id] = channel_id
                subscriptions.append({"id": self._next_id, "channelId": channel_id})
                self._next_id += 1
        self._send({"op": "subscribe", "subscriptions": subscriptions})

    def fetch_asset(self, uri: str, timeout: float = 30.0) -> AssetAnswer:
        with self._lock:
            request = self._next_id
            self._next_id += 1
        self._send({"op": "fetchAsset", "uri": uri, "requestId": request})
        assert self.wait_for(lambda: request in self.assets, timeout), f"no Fetch Asset Response for {uri}"
        return self.assets[request]

    # ------------------------------------------------------------------ waiting
    def wait_for(self, condition: Callable[[], bool], timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(min(left, 0.1))
            return True

    def wait_for_topics(self, *topics: str, timeout: float = 30.0) -> None:
        ok = self.wait_for(lambda: set(topics) <= {c["topic"] for c in self.channels.values()}, timeout)
        assert ok, f"channels {topics} not advertised within {timeout} s; have {self.topics()}"

    def topics(self) -> list[str]:
        with self._lock:
            return sorted(c["topic"] for c in self.channels.values())

    def received(self, topic: str) -> list[Received]:
        with self._lock:
            return [m for m in self.messages if m.topic == topic]

    def close(self) -> None:
        self.ws.close()
        self._reader.join(5)


def decode_protobuf(schema_name: str, schema: bytes, payload: bytes) -> Any:
    """Decode a protobuf message with the google.protobuf runtime from its advertised schema alone.

    Args:
        schema_name: the message's full name (``foxglove.SceneUpdate``).
        schema: the schema: a serialized ``FileDescriptorSet`` (the advertise message carries it
            base64-encoded; decode that first).
        payload: the message.

    Returns:
        The decoded message (a dynamic protobuf class).
    """
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    files = descriptor_pb2.FileDescriptorSet.FromString(schema)
    pool = descriptor_pool.DescriptorPool()
    pending = list(files.file)
    while pending:  # add each file after the files it imports
        added = [f for f in pending if all(pool_has(pool, d) for d in f.dependency)]
        if not added:
            raise ProtocolError(f"schema {schema_name}: unresolvable imports in {[f.name for f in pending]}")
        for f in added:
            pool.Add(f)
            pending.remove(f)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema_name))
    return cls.FromString(payload)


def scene_updates(client: FoxgloveTestClient, topic: str) -> list[Any]:
    """Every ``foxglove.SceneUpdate`` ``client`` received on ``topic``, decoded from the advertised schema alone."""
    channel = client.channels[client.channel_id(topic)]
    assert (channel["encoding"], channel["schemaName"]) == ("protobuf", "foxglove.SceneUpdate")
    schema = base64.b64decode(channel["schema"])
    return [decode_protobuf("foxglove.SceneUpdate", schema, m.payload) for m in client.received(topic)]


def newest_entities(client: FoxgloveTestClient, topic: str) -> dict[str, Any]:
    """The entities of the newest scene update on ``topic``, by id (each update replaces the last whole)."""
    found = scene_updates(client, topic)
    return {entity.id: entity for entity in found[-1].entities} if found else {}


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a server to listen on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def connect_when_listening(url: str, alive: Callable[[], bool], timeout: float = 120.0) -> FoxgloveTestClient:
    """A client of the server at ``url``, once it listens (it starts with the other nodes).

    Args:
        url: ``ws://host:port``.
        alive: whether the command serving it still runs (called while waiting; may watch its output).
        timeout: seconds to wait.

    Raises:
        OSError: no server listened within ``timeout``, or the command ended first.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            return FoxgloveTestClient(url, timeout=5.0)
        except OSError:
            if time.monotonic() > deadline or not alive():
                raise
            time.sleep(0.2)


def pool_has(pool: Any, name: str) -> bool:
    try:
        pool.FindFileByName(name)
    except KeyError:
        return False
    return True

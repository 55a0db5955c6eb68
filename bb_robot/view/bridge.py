"""The Foxglove side of the view: WebSocket server, MCAP recording, channels and latching.

One channel per bridged ROS topic, named like the topic, with message encoding ``cdr`` (the
ROS message's serialized bytes, passed through untouched) and a ``ros2msg`` schema named with
the type's full name — what Foxglove's 3D panel needs to draw the URDF from
``/robot_description`` and move it with ``/tf``, what ``mcap-ros2-support`` decodes and what
rosbag2's MCAP storage reads.

The server and the recording use separate SDK contexts, each with its own copy of every
channel: a client that subscribes to a latched channel (``/robot_description``,
``/tf_static``) is sent the kept latched messages at once, and that resend goes to the live
clients of that channel only, never into the recording.  The SDK sends to each client from its
own queue and drops a slow client's oldest data (``message_backlog_size``), so clients, slow
or gone, cost the process that feeds them little and never the robot: the view is its own
process, off the control path.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import foxglove
from foxglove.channels import SceneUpdateChannel
from foxglove.mcap import MCAPWriteOptions
from foxglove.websocket import ServerListener

from bb_robot.errors import BbRobotError
from bb_robot.view.schemas import MESSAGE_ENCODING, SCHEMA_ENCODING
from bb_robot.view.topics import TopicChoice

if TYPE_CHECKING:
    from foxglove.messages import SceneUpdate
    from foxglove.websocket import ChannelView, Client, WebSocketServer

#: What the server calls itself in its serverInfo message.
SERVER_NAME = "bb_robot"
#: The MCAP profile of ROS 2 recordings (cdr messages, ros2msg schemas), what rosbag2 writes.
MCAP_PROFILE = "ros2"
#: Messages buffered per client before its oldest data is dropped.
CLIENT_BACKLOG = 1024


class ViewError(BbRobotError):
    """The server or the recording cannot start (port in use, file exists, ...); the message says which."""


@dataclass
class _Bridged:
    choice: TopicChoice
    live: foxglove.Channel | None
    record: foxglove.Channel | None
    latched: list[bytes] = field(default_factory=list)


@dataclass(frozen=True)
class ViewOptions:
    """Where to serve and record.

    ``serve``: run the WebSocket server on ``host``:``port`` (0: any free port);
    ``record``: an MCAP file to write (``None``: no recording); it must not exist yet.
    """

    serve: bool = True
    host: str = "127.0.0.1"
    port: int = 8765
    record: Path | None = None


class FoxgloveBridge:
    """Serves and records ROS topics as Foxglove channels (see the module's docstring)."""

    def __init__(self, options: ViewOptions, asset_handler: Callable[[str], bytes] | None = None) -> None:
        """Start the server and open the recording that ``options`` ask for.

        Args:
            options: what to serve and record.
            asset_handler: the bytes of an asset URI (raises to refuse it); ``None``: no assets.

        Raises:
            ViewError: the server cannot listen (address in use, bad host) or the recording
                cannot be created (exists, no such directory).
        """
        self._lock = threading.Lock()
        self._bridged: dict[str, _Bridged] = {}
        self._by_live_id: dict[int, _Bridged] = {}
        self._scenes: dict[int, tuple[SceneUpdateChannel, SceneUpdate]] = {}
        self._scene_channels: dict[str, SceneUpdateChannel] = {}
        self.options = options
        self.server: WebSocketServer | None = None
        self._writer: foxglove.MCAPWriter | None = None
        self._live = foxglove.Context() if options.serve else None
        self._record = foxglove.Context() if options.record is not None else None
        if options.record is not None:
            if options.record.exists():
                raise ViewError(f"record '{options.record}': the file exists; give a new name (nothing is overwritten)")
            try:
                self._writer = foxglove.open_mcap(
                    options.record, context=self._record, writer_options=MCAPWriteOptions(profile=MCAP_PROFILE)
                )
            except Exception as error:  # noqa: BLE001 - the SDK raises its own error types
                raise ViewError(f"record '{options.record}': cannot create the MCAP file: {error}") from error
        if options.serve:
            try:
                self.server = foxglove.start_server(
                    name=SERVER_NAME,
                    host=options.host,
                    port=options.port,
                    server_listener=_LatchListener(self),
                    asset_handler=asset_handler,
                    context=self._live,
                    message_backlog_size=CLIENT_BACKLOG,
                )
            except Exception as error:  # noqa: BLE001 - the SDK raises its own error types
                self.close()
                raise ViewError(
                    f"cannot serve on {options.host}:{options.port}: {error} (is another view running? choose "
                    "another port)"
                ) from error

    # ------------------------------------------------------------------ channels
    @property
    def topics(self) -> list[str]:
        """The topics bridged now."""
        with self._lock:
            return list(self._bridged)

    def choice(self, topic: str) -> TopicChoice | None:
        """How ``topic`` is bridged, or ``None``."""
        with self._lock:
            bridged = self._bridged.get(topic)
        return bridged.choice if bridged else None

    def add(self, choice: TopicChoice, schema_text: str) -> None:
        """Advertise ``choice.topic`` (to the clients and the recording)."""
        schema = foxglove.Schema(name=choice.type_name, encoding=SCHEMA_ENCODING, data=schema_text.encode())
        live = record = None
        if self._live is not None:
            live = foxglove.Channel(choice.topic, schema=schema, message_encoding=MESSAGE_ENCODING, context=self._live)
        if self._record is not None:
            record = foxglove.Channel(
                choice.topic, schema=schema, message_encoding=MESSAGE_ENCODING, context=self._record
            )
        bridged = _Bridged(choice, live, record)
        with self._lock:
            self._bridged[choice.topic] = bridged
            if live is not None:
                self._by_live_id[live.id()] = bridged

    def remove(self, topic: str) -> None:
        """Unadvertise ``topic`` (its publishers are gone)."""
        with self._lock:
            bridged = self._bridged.pop(topic, None)
            if bridged is not None and bridged.live is not None:
                self._by_live_id.pop(bridged.live.id(), None)
        if bridged is not None:
            for channel in (bridged.live, bridged.record):
                if channel is not None:
                    channel.close()

    def publish(self, topic: str, data: bytes, log_time_ns: int) -> None:
        """Send one serialized message of ``topic`` to the clients and the recording."""
        with self._lock:
            bridged = self._bridged.get(topic)
            if bridged is None:
                return
            depth = bridged.choice.latch_depth
            if depth:
                if data in bridged.latched:
                    bridged.latched.remove(data)
                bridged.latched.append(data)
                del bridged.latched[:-depth]
        if bridged.live is not None:
            bridged.live.log(data, log_time=log_time_ns)
        if bridged.record is not None:
            bridged.record.log(data, log_time=log_time_ns)

    def add_scene(self, topic: str, update: SceneUpdate) -> None:
        """Serve ``update`` on channel ``topic`` (``foxglove.SceneUpdate``), sent again to each client that subscribes.

        A later update of the same topic goes out on the same channel and is the one kept for the
        clients that subscribe afterwards (so each update should hold the whole picture).  Live
        only: the recording stays a ROS 2 file (cdr messages, what rosbag2 reads), and this
        message is not a ROS message.  Without a server, nothing is done.
        """
        if self._live is None:
            return
        with self._lock:
            channel = self._scene_channels.get(topic)
            if channel is None:
                channel = self._scene_channels[topic] = SceneUpdateChannel(topic, context=self._live)
            self._scenes[channel.id()] = (channel, update)
            channel.log(update, log_time=time.time_ns())

    def resend_latched(self, channel_id: int, log_time_ns: int) -> int:
        """Send the kept latched messages of a live channel again; returns how many."""
        with self._lock:
            scene = self._scenes.get(channel_id)
            if scene is not None:  # under the lock: never after a newer update of that scene
                scene[0].log(scene[1], log_time=log_time_ns)
                return 1
            bridged = self._by_live_id.get(channel_id)
            messages = list(bridged.latched) if bridged is not None else []
        if bridged is None or bridged.live is None:
            return 0
        for data in messages:
            bridged.live.log(data, log_time=log_time_ns)
        return len(messages)

    # ------------------------------------------------------------------ the rest
    def url(self) -> str | None:
        """``ws://host:port`` of the server, or ``None`` without one."""
        if self.server is None:
            return None
        host = self.options.host
        shown = f"[{host}]" if ":" in host else host
        return f"ws://{shown}:{self.server.port}"

    def app_url(self) -> str | None:
        """The Foxglove web app's URL that opens this server, or ``None`` without one."""
        return self.server.app_url() if self.server is not None else None

    def close(self) -> None:
        """Stop the server and finish the recording (its summary, so that readers can index it)."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class _LatchListener(ServerListener):
    """Server callbacks: a new subscription to a latched channel gets its kept messages at once."""

    def __init__(self, bridge: FoxgloveBridge) -> None:
        self._bridge = bridge

    def on_subscribe(self, client: Client, channel: ChannelView) -> None:
        self._bridge.resend_latched(channel.id, time.time_ns())

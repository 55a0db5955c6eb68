"""The built-in transport's publishing side on the wire: one ZeroMQ XPUB socket.

Every advertised topic is sent through it as four frames (fully qualified topic, our address,
payload, type name).  XPUB reports each subscriber's topic filter the moment it reaches us
(:meth:`PublishSocket.drain`, on the data thread): that counts the subscribers data reaches, and
a publisher with ``resend_latest`` sends its latest message again then, so a late subscriber
gets the current value without waiting for the next publication.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import zmq
import zmq.backend

from bb_robot.gz.handles import BuiltinPublisher

# pyzmq's send_multipart() spends ~5 µs per message in Python (flag enums, checks); the socket's
# own send(), called frame by frame with plain-integer flags, ~1 µs.  A driver sends one message
# per joint and control cycle.
_send_frame = zmq.backend.Socket.send
_MORE = int(zmq.SNDMORE | zmq.NOBLOCK)
_LAST = int(zmq.NOBLOCK)


def _send_frames(socket: zmq.Socket[Any], frames: list[bytes]) -> None:
    """Send ``frames`` as one multipart message without blocking (what ``send_multipart`` does)."""
    last = len(frames) - 1
    for i, frame in enumerate(frames):
        _send_frame(socket, frame, _MORE if i < last else _LAST)


class PublishSocket:
    """The XPUB socket, bound to ``tcp://<host>:*``; thread-safe.

    Args:
        context: The transport's ZeroMQ context.
        host: The address to bind to.
        high_water_mark: Messages queued per subscriber before ZeroMQ drops (``GZ_TRANSPORT_SNDHWM``).

    Raises:
        zmq.ZMQError: The socket cannot be bound (the transport reports it as a network error).
    """

    def __init__(self, context: zmq.Context[Any], host: str, high_water_mark: int) -> None:
        self._socket = context.socket(zmq.XPUB)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.setsockopt(zmq.SNDHWM, high_water_mark)
        self._socket.setsockopt(zmq.XPUB_VERBOSE, 1)
        self._socket.bind(f"tcp://{host}:*")
        #: The ZeroMQ address subscribers connect to.
        self.address = self._socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self._lock = threading.Lock()
        self._filters: dict[bytes, int] = {}  # fully qualified topic -> subscribers whose filter reached us
        self._open = True

    def send(self, publisher: BuiltinPublisher, data: bytes) -> None:
        """Send one serialized message of ``publisher``; dropped at the high-water mark or once stopped."""
        frames = publisher.frames
        with self._lock:
            if not self._open:
                return
            if publisher.resend_latest:
                publisher.latest = data
            frames[2] = data
            try:
                _send_frames(self._socket, frames)
                publisher.sent += 1
            except zmq.Again:  # high-water mark: ZeroMQ drops, like the C++ side
                pass

    def has_filter(self, full_topic: str) -> bool:
        """Whether a subscriber's filter for ``full_topic`` has reached the socket."""
        return self._filters.get(full_topic.encode(), 0) > 0

    def drain(self, publisher_of: Callable[[str], BuiltinPublisher | None]) -> None:
        """Read the subscription notices; re-send the latest message to a new subscriber.

        Args:
            publisher_of: The publisher of a fully qualified topic, if we advertise it.
        """
        with self._lock:
            if not self._open:
                return
            while True:
                try:
                    notice = self._socket.recv(zmq.NOBLOCK)
                except zmq.Again:
                    return
                if not notice:
                    continue
                topic = bytes(notice[1:])
                if notice[0] == 1:
                    self._filters[topic] = self._filters.get(topic, 0) + 1
                    publisher = publisher_of(topic.decode(errors="replace"))
                    if publisher is not None and publisher.latest is not None:
                        frames = list(publisher.frames)
                        frames[2] = publisher.latest
                        try:
                            _send_frames(self._socket, frames)
                            publisher.sent += 1
                        except zmq.Again:
                            pass
                elif notice[0] == 0:
                    self._filters[topic] = max(0, self._filters.get(topic, 0) - 1)

    def stop(self) -> None:
        """Send nothing more (the transport is closing)."""
        with self._lock:
            self._open = False

    def close(self) -> None:
        """Stop and close the socket (after the data thread has ended)."""
        with self._lock:
            self._open = False
            self._socket.close(linger=0)

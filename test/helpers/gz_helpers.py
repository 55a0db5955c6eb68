"""Helpers shared by the Gazebo transport tests (a module of its own: test files never import from conftest)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from bb_robot.gz.api import MessageInfo
from bb_robot.gz.builtin import BuiltinTransport
from helpers.cpp_peer import Peer

LOOPBACK = "127.0.0.1"
#: How long ``wait_until`` waits by default; generous: CI machines are busy (a wait returns once its state holds).
TIMEOUT = 30.0

TransportFactory = Callable[..., BuiltinTransport]
PeerFactory = Callable[..., Peer]


def wait_until(predicate: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class Inbox:
    """A subscription callback that keeps every (message, info)."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, MessageInfo]] = []
        self.lock = threading.Lock()

    def __call__(self, message: Any, info: MessageInfo) -> None:
        with self.lock:
            self.items.append((message, info))

    def values(self) -> list[Any]:
        with self.lock:
            return [m for m, _ in self.items]

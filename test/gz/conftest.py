"""Fixtures for the Gazebo transport tests: loopback only, a partition of its own per test.

Every transport here uses ``127.0.0.1`` (our ``ip=``, the C++ peers' ``IGN_IP``) and a partition
named after this session and test, so parallel runs and earlier tests' lingering processes never
cross-talk (a process is forgotten only 3 s after its last heartbeat).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cpp_peer import Peer, PeerUnavailable, build_peer
from helpers.gz_helpers import LOOPBACK, PeerFactory, TransportFactory

from bb_robot.gz.builtin import BuiltinTransport
from bb_robot.gz.messages import GzMessages, GzMessagesUnavailable, load_messages

SESSION = uuid.uuid4().hex[:8]
_counter = itertools.count()
CACHE_DIR = Path(__file__).resolve().parents[2] / ".venv" / "cache" / "gz_peer"


@pytest.fixture
def partition() -> str:
    return f"bb_robot_test_{SESSION}_{next(_counter)}"


@pytest.fixture(scope="session")
def messages() -> GzMessages:
    try:
        return load_messages(("descriptor set", "distribution"))
    except GzMessagesUnavailable as error:
        pytest.skip(str(error))


@pytest.fixture
def transport_factory(partition: str, messages: GzMessages) -> Iterator[TransportFactory]:
    """Makes built-in transports on loopback in the test's partition (closed at the end)."""
    made: list[BuiltinTransport] = []

    def make(**options: object) -> BuiltinTransport:
        options.setdefault("partition", partition)
        options.setdefault("ip", LOOPBACK)
        options.setdefault("relays", [])
        options.setdefault("messages", messages)
        transport = BuiltinTransport(**options)  # type: ignore[arg-type]
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()


@pytest.fixture(scope="session")
def peer_binary() -> Path:
    try:
        return build_peer(CACHE_DIR)
    except PeerUnavailable as error:
        pytest.skip(str(error))


@pytest.fixture
def peer_factory(peer_binary: Path, partition: str) -> Iterator[PeerFactory]:
    """Starts C++ peers (``gz_peer`` arguments) in the test's partition, stopped at the end."""
    started: list[Peer] = []

    def start(*args: str, partition_override: str | None = None) -> Peer:
        peer = Peer(peer_binary, args, partition_override or partition)
        started.append(peer)
        assert peer.wait_line("READY", 10.0), f"the C++ peer did not start: {peer.lines}"
        return peer

    yield start
    for peer in started:
        peer.stop()

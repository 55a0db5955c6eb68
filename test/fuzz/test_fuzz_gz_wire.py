"""Fuzzing the gz-transport discovery decoder: datagrams as a hostile peer on the network sends them.

Cases are well-formed ``Discovery`` messages with generated fields (any type, odd topics, partitions
and type names, huge strings, unknown scopes, relay flags) and byte mutations of them (cut,
spliced, wrong length prefix).  :meth:`DiscoveryService.dispatch` must never raise: a datagram it
cannot use is dropped; a well-formed ADVERTISE in scope reaches the listener as a publisher.
"""

from __future__ import annotations

import socket

import pytest
from helpers.fuzz_outcomes import OUTCOMES
from hypothesis import given
from hypothesis import strategies as st

from bb_robot.gz import wire
from bb_robot.gz.discovery import DiscoveryService, PublisherInfo, SubscribeSighting

names = st.one_of(
    st.sampled_from(("", "/", "@", "@@", "@/a@/b", "@/host:user@/model/arm/cmd", "/model/arm/joint_state")),
    st.text(max_size=30),
    st.integers(60_000, 70_000).map(lambda n: "x" * n),
)


class _Recorder:
    """A discovery listener that records what it is told (the real callbacks' contract)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def on_publisher(self, publisher: PublisherInfo) -> None:
        self.events.append(("publisher", publisher))

    def on_publisher_gone(self, publisher: PublisherInfo) -> None:
        self.events.append(("gone", publisher))

    def on_process_gone(self, process_uuid: str) -> None:
        self.events.append(("bye", process_uuid))

    def on_new_connection(self, connection: PublisherInfo) -> None:
        self.events.append(("connect", connection))

    def on_end_connection(self, connection: PublisherInfo) -> None:
        self.events.append(("disconnect", connection))

    def on_subscribe(self, sighting: SubscribeSighting) -> None:
        self.events.append(("subscribe", sighting))

    def on_subscribers_request(self) -> None:
        self.events.append(("subscribers?", None))

    def on_subscriber(self, subscriber: PublisherInfo) -> None:
        self.events.append(("subscriber", subscriber))


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def port() -> int:
    """A UDP port of the tests' own for the discovery services (never started: dispatch is called directly)."""
    return _free_udp_port()


@st.composite
def datagrams(draw: st.DrawFn) -> tuple[bytes, bool]:
    """``(datagram, well_formed)``: an encoded Discovery message, possibly mutated afterwards."""
    message = wire.Discovery()
    message.version = draw(st.sampled_from((wire.WIRE_VERSION, wire.WIRE_VERSION + 100, 0, 8, 2**31 - 1)))
    message.process_uuid = draw(st.sampled_from(("peer-a", "peer-b", "fuzz-process", "")) | st.text(max_size=8))
    message.type = draw(st.integers(0, 12))
    message.pub.topic = draw(names)
    message.pub.address = draw(st.sampled_from(("tcp://127.0.0.1:5555", "", "tcp://[::1]:1", "junk")))
    message.pub.process_uuid = message.process_uuid
    message.pub.node_uuid = draw(st.text(max_size=8))
    message.pub.scope = draw(st.integers(0, 2**31 - 1))
    if draw(st.booleans()):
        message.pub.msg_pub.msg_type = draw(st.sampled_from(("gz.msgs.Double", "")) | st.text(max_size=20))
        message.pub.msg_pub.ctrl = draw(st.text(max_size=8))
    if draw(st.booleans()):
        message.sub.topic = draw(names)
    if draw(st.booleans()):
        message.flags.relay = draw(st.booleans())
        message.flags.no_relay = draw(st.booleans())
    payload = message.SerializeToString()
    if len(payload) + wire.LENGTH.size >= wire.MAX_DATAGRAM:
        payload = payload[: wire.MAX_DATAGRAM - 8]
    data = wire.LENGTH.pack(len(payload)) + payload
    if draw(st.booleans()):
        return data, True
    at = draw(st.integers(0, len(data)))
    kind = draw(st.sampled_from(("cut", "insert", "flip", "prefix")))
    if kind == "cut":
        data = data[:at]
    elif kind == "insert":
        data = data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    elif kind == "flip" and data:
        i = min(at, len(data) - 1)
        data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
    else:
        data = draw(st.binary(max_size=2)) + data
    return data, False


@given(datagrams())
def test_any_datagram_is_handled_or_dropped_never_raised(port: int, case: tuple[bytes, bool]) -> None:
    data, well_formed = case
    recorder = _Recorder()
    discovery = DiscoveryService("fuzz-process", recorder, interfaces=["127.0.0.1"], port=port)  # fresh: no state
    try:
        OUTCOMES.run("gz_wire", lambda: discovery.dispatch(data, "127.0.0.1"), (), f"datagram {data[:64]!r}...")
    finally:
        discovery.close()
    decoded = wire.decode_datagram(data)
    if decoded is None or decoded.version != wire.WIRE_VERSION or decoded.process_uuid == "fuzz-process":
        assert recorder.events == [], "a datagram that does not decode, or our own, reached the listener"
    elif decoded.HasField("flags") and decoded.flags.relay:
        assert recorder.events == [], "a relayed datagram is passed on to the group, not handled here"
    elif well_formed and decoded.type == wire.DiscoveryType.BYE:
        assert recorder.events == [("bye", decoded.process_uuid)]

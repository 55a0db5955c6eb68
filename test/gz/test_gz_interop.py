"""Interop with the real C++ transport (ign-transport 11 from Debian: the wire protocol of Gazebo
Harmonic's gz-transport 13), through the test peer ``peer/gz_peer.cc`` and ``ign-transport-topic``.

The peer publishes and subscribes raw, with Harmonic's type names (``gz.msgs.*``). Everything runs on
loopback in a partition of the test's own.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest
from helpers.cpp_peer import TOPIC_TOOL, ign_env
from helpers.gz_helpers import Inbox, PeerFactory, TransportFactory, wait_until

from bb_robot.gz.messages import GzMessages

TIMEOUT = 8.0


def model_with_joints(messages: GzMessages, count: int = 7, offset: float = 0.0) -> object:
    model = messages.new("gz.msgs.Model", name="ur3e")
    model.header.stamp.sec = 12
    for index in range(count):
        joint = model.joint.add(name=f"joint_{index}")
        joint.axis1.position = offset + 0.1 * index
        joint.axis1.velocity = -0.2 * index
        joint.axis1.force = 1.5
    return model


def test_our_publisher_reaches_a_cpp_subscriber_with_the_harmonic_type_name(
    transport_factory: TransportFactory, peer_factory: PeerFactory, messages: GzMessages
) -> None:
    peer = peer_factory("sub", "/model/ur3e/joint/shoulder_pan_joint/0/cmd_pos", "gz.msgs.Double")
    transport = transport_factory()
    publisher = transport.advertise("/model/ur3e/joint/shoulder_pan_joint/0/cmd_pos", "gz.msgs.Double")
    # The C++ subscriber registers with NEW_CONNECTION (ctrl = our process UUID, our exact type name).
    assert wait_until(publisher.has_connections, TIMEOUT), transport.diagnostics().format()
    for value in (0.5, 0.75, 1.0):
        publisher.publish(messages.new("gz.msgs.Double", data=value))
    assert peer.wait_for(lambda lines: sum(line.startswith("MSG ") for line in lines) >= 3, TIMEOUT), peer.lines
    received = peer.messages()
    assert {type_name for type_name, _ in received} == {"gz.msgs.Double"}
    values = [messages.parse("gz.msgs.Double", payload).data for _, payload in received]
    assert values[-3:] == [0.5, 0.75, 1.0]


def test_cpp_model_publisher_reaches_our_subscriber(
    transport_factory: TransportFactory, peer_factory: PeerFactory, messages: GzMessages
) -> None:
    topic = "/world/ur3e_world/model/ur3e/joint_state"
    peer = peer_factory("pub", topic, "gz.msgs.Model", "10")
    model = model_with_joints(messages)
    peer.send(model.SerializeToString())
    transport = transport_factory()
    inbox = Inbox()
    transport.subscribe(topic, "gz.msgs.Model", inbox)
    # The C++ publisher sends nothing before our NEW_CONNECTION: it reports it, then data flows.
    assert peer.wait_line("CONNECTED", TIMEOUT), peer.lines
    assert wait_until(lambda: len(inbox.values()) >= 3, TIMEOUT), transport.diagnostics().format()
    received = inbox.values()[-1]
    assert received == model
    assert [joint.name for joint in received.joint] == [f"joint_{i}" for i in range(7)]
    assert received.joint[6].axis1.position == pytest.approx(0.6)
    assert inbox.items[-1][1].type_name == "gz.msgs.Model"


def test_ign_topic_tool_lists_our_topic(transport_factory: TransportFactory, partition: str) -> None:
    if not TOPIC_TOOL.is_file():
        pytest.skip(f"{TOPIC_TOOL} missing; run scripts/setup (Debian ignition-transport-cli)")
    transport = transport_factory()
    transport.advertise("/bb_robot/listed", "gz.msgs.Double")
    result = subprocess.run([str(TOPIC_TOOL), "-l"], capture_output=True, text=True, timeout=20, env=ign_env(partition))
    assert "/bb_robot/listed" in result.stdout.split(), result
    info = subprocess.run(
        [str(TOPIC_TOOL), "-i", "-t", "/bb_robot/listed"],
        capture_output=True,
        text=True,
        timeout=20,
        env=ign_env(partition),
    )
    assert transport.address in info.stdout and "gz.msgs.Double" in info.stdout, info


def test_ign_topic_tool_echoes_our_harmonic_messages_with_our_descriptor_set(
    transport_factory: TransportFactory, partition: str, messages: GzMessages
) -> None:
    """The descriptor set scripts/setup writes is also ign-transport's IGN_DESCRIPTOR_PATH."""
    if not TOPIC_TOOL.is_file():
        pytest.skip(f"{TOPIC_TOOL} missing; run scripts/setup (Debian ignition-transport-cli)")
    if messages.source.kind != "descriptor set" or not Path(messages.source.location).is_file():
        pytest.skip(f"the messages come from {messages.source}, not a descriptor set file")
    transport = transport_factory()
    publisher = transport.advertise("/echoed", "gz.msgs.Model")
    stop = threading.Event()

    def stream() -> None:
        while not stop.is_set():
            publisher.publish(model_with_joints(messages, count=2))
            time.sleep(0.02)

    thread = threading.Thread(target=stream, daemon=True)
    thread.start()
    env = ign_env(partition)
    env["IGN_DESCRIPTOR_PATH"] = str(Path(messages.source.location).parent)
    try:
        result = subprocess.run(
            [str(TOPIC_TOOL), "-e", "-t", "/echoed", "-n", "1"], capture_output=True, text=True, timeout=20, env=env
        )
    finally:
        stop.set()
        thread.join()
    assert 'name: "ur3e"' in result.stdout and 'name: "joint_1"' in result.stdout, result
    assert "Unable" not in result.stderr, result.stderr


def test_partition_mismatch_with_the_cpp_side_is_diagnosed(
    transport_factory: TransportFactory, peer_factory: PeerFactory, partition: str, messages: GzMessages
) -> None:
    other = partition + "_gazebo"
    publisher = peer_factory("pub", "/joint_state", "gz.msgs.Model", "20", partition_override=other)
    publisher.send(model_with_joints(messages).SerializeToString())
    transport = transport_factory()
    inbox = Inbox()
    transport.subscribe("/joint_state", "gz.msgs.Model", inbox)
    transport.advertise("/cmd_pos", "gz.msgs.Double")
    peer_factory("sub", "/cmd_pos", "gz.msgs.Double", partition_override=other)
    assert wait_until(lambda: any("/joint_state" in p and repr(other) in p for p in transport.problems()), TIMEOUT)
    assert wait_until(lambda: any("/cmd_pos" in p and repr(other) in p for p in transport.problems()), TIMEOUT)
    assert inbox.values() == []
    assert any(
        s.partition == other and s.topic == "/joint_state" and s.type_name == "gz.msgs.Model"
        for s in transport.diagnostics().seen
    )


def test_type_name_mismatch_with_the_cpp_side_is_diagnosed(
    transport_factory: TransportFactory, peer_factory: PeerFactory, messages: GzMessages
) -> None:
    """ign-transport 11 users name types ignition.msgs.*: silent non-delivery, diagnosed here."""
    publisher = peer_factory("pub", "/state", "ignition.msgs.Model", "20")
    publisher.send(model_with_joints(messages).SerializeToString())
    transport = transport_factory()
    transport.subscribe("/state", "gz.msgs.Model", Inbox())
    transport.advertise("/cmd", "gz.msgs.Double").publish(messages.new("gz.msgs.Double", data=1.0))
    subscriber = peer_factory("sub", "/cmd", "ignition.msgs.Double")
    assert wait_until(lambda: any("sends ignition.msgs.Model" in p for p in transport.problems()), TIMEOUT)
    # The C++ subscriber asked for /cmd but, its type differing, never sends NEW_CONNECTION.
    assert wait_until(lambda: any("/cmd" in p and "never connected" in p for p in transport.problems()), TIMEOUT)
    assert not publisher.wait_line("CONNECTED", 0.1)
    assert subscriber.messages() == []


def test_reconnect_after_the_cpp_peers_restart(
    transport_factory: TransportFactory, peer_factory: PeerFactory, messages: GzMessages
) -> None:
    transport = transport_factory()
    inbox = Inbox()
    transport.subscribe("/state", "gz.msgs.Model", inbox)
    command = transport.advertise("/cmd", "gz.msgs.Double")
    command.publish(messages.new("gz.msgs.Double", data=1.0))
    for generation in range(2):
        publisher = peer_factory("pub", "/state", "gz.msgs.Model", "10")
        publisher.send(model_with_joints(messages, offset=float(generation)).SerializeToString())
        subscriber = peer_factory("sub", "/cmd", "gz.msgs.Double")
        assert wait_until(
            lambda g=generation: bool(inbox.values()) and inbox.values()[-1].joint[0].axis1.position == float(g),
            TIMEOUT,
        ), transport.diagnostics().format()
        # The latest command reaches the new subscriber without another publish (re-sent on its filter).
        assert subscriber.wait_for(lambda lines: any(line.startswith("MSG ") for line in lines), TIMEOUT)
        assert messages.parse("gz.msgs.Double", subscriber.messages()[-1][1]).data == 1.0
        # A crash: no BYE. The publisher is dropped after 3 s of silence or replaced by the new one.
        publisher.kill()
        subscriber.kill()
    assert wait_until(lambda: len(transport.publishers("/state")) == 0, 5.0)


def test_slow_joiner_streaming_commands_arrive(
    transport_factory: TransportFactory, peer_factory: PeerFactory, messages: GzMessages
) -> None:
    """Streaming at a control rate: once connected, every command after the first few arrives."""
    transport = transport_factory()
    publisher = transport.advertise("/cmd", "gz.msgs.Double")
    peer = peer_factory("sub", "/cmd", "gz.msgs.Double")
    sent = 0
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and len(peer.messages()) < 50:
        publisher.publish(messages.new("gz.msgs.Double", data=float(sent)))
        sent += 1
        time.sleep(0.002)
    values = [messages.parse("gz.msgs.Double", payload).data for _, payload in peer.messages()]
    assert len(values) >= 50
    # Nothing lost once connected: consecutive values, a re-sent latest one at most repeated once.
    distinct = [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]
    assert distinct == [distinct[0] + i for i in range(len(distinct))], values

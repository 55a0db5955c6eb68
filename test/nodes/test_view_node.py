"""The view node over real DDS and a real WebSocket: description, driver and view run as child
processes; an independent Foxglove client (test/nodes/foxglove_client.py, written from the
protocol's description) and the MCAP readers (``mcap`` + ``mcap-ros2-support``) check what it
serves and records."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("foxglove", reason="foxglove-sdk is not installed")
pytest.importorskip("websockets", reason="websockets is not installed")

from helpers.description_oracle import compose, edges  # noqa: E402
from helpers.foxglove_client import FoxgloveTestClient  # noqa: E402
from helpers.nodes import TIMEOUT, NodeProcess, Probe, StartNode  # noqa: E402
from helpers.robots import UR3E_JOINTS  # noqa: E402
from helpers.view_rig import MESH_URI, UR3E, make_mesh_package, view_url  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.serialization import deserialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402
from bb_robot.urdf.builder import load_urdf  # noqa: E402

pytestmark = pytest.mark.timeout(240)
JOINTS = list(UR3E_JOINTS)
TARGET = [0.4, -1.2, 0.9, -0.5, 0.6, 0.3]
VOLATILE = QoSProfile(
    depth=100,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)


def start_robot(start_node: StartNode, namespace: str, *, driver: bool = True, frame_prefix: str = "") -> None:
    """The description node on the corpus UR3e (tip tool0, its frames prefixed) and, if ``driver``, the driver on it."""
    description = {"model": str(UR3E), "model_dirs": [str(UR3E.parent)], "tip_link": "tool0"}
    start_node({**description, "frame_prefix": frame_prefix}, namespace, node="description")
    if driver:
        # The corpus has no UR3e collision meshes: the driver runs without collision checking.
        start_node(
            {
                "autostart": True,
                "auto_arm": True,
                "command_timeout": 0.0,
                "rate": 200.0,
                "publish_rate": 50.0,
                "collision.check": False,
            },
            namespace,
            module="bb_robot.nodes.driver",
            node="driver",
        )


def start_view(start_node: StartNode, namespace: str, **parameters: Any) -> NodeProcess:
    return start_node({"port": 0, **parameters}, namespace, module="bb_robot.nodes.view", node="view")


def latest(client: FoxgloveTestClient, topic: str, cls: Any) -> Any:
    messages = client.received(topic)
    assert messages, f"nothing received on {topic}"
    return deserialize_message(messages[-1].payload, cls)


def test_independent_client_sees_the_arm_move_fetches_a_mesh_and_a_late_client_gets_the_latched(
    probe: Probe, start_node: StartNode, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    share, mesh = make_mesh_package(tmp_path / "prefix")
    monkeypatch.setenv(
        "AMENT_PREFIX_PATH", f"{tmp_path / 'prefix'}:{__import__('os').environ.get('AMENT_PREFIX_PATH', '')}"
    )
    ns = "/view_arm"
    start_robot(start_node, ns)
    view = start_view(start_node, ns, model_dirs=[str(share), str(UR3E.parent)])
    url = view_url(view.wait_for_log("Foxglove: open"))
    assert url.startswith("ws://127.0.0.1:")

    client = FoxgloveTestClient(url)
    try:
        assert client.wait_for(lambda: client.server_info is not None)
        topics = ["/tf", "/tf_static", f"{ns}/joint_states", f"{ns}/robot_description"]
        client.wait_for_topics(*topics, f"{ns}/driver/arm_state", "/diagnostics")
        channels = {c["topic"]: c for c in client.channels.values()}
        assert channels["/tf"]["encoding"] == "cdr"
        assert channels["/tf"]["schemaName"] == "tf2_msgs/msg/TFMessage"
        assert channels["/tf"]["schemaEncoding"] == "ros2msg"
        assert channels[f"{ns}/joint_states"]["schemaName"] == "sensor_msgs/msg/JointState"
        assert "MSG: std_msgs/Header" in channels[f"{ns}/joint_states"]["schema"]
        assert f"{ns}/absent" not in channels and all(t.startswith("/") for t in channels)
        client.subscribe(*topics)
        assert client.wait_for(lambda: bool(client.received(f"{ns}/robot_description")))
        assert client.wait_for(lambda: bool(client.received("/tf_static")))

        # move the arm: a position command by joint name to the driver
        commands = probe.node.create_publisher(JointState, f"{ns}/driver/joint_commands", VOLATILE)
        probe.wait_for_subscribers(commands)
        commands.publish(JointState(name=JOINTS, position=TARGET))

        def arrived() -> bool:
            if not client.received(f"{ns}/joint_states"):
                return False
            state = latest(client, f"{ns}/joint_states", JointState)
            return np.allclose([state.position[list(state.name).index(j)] for j in JOINTS], TARGET, atol=1e-6)

        assert client.wait_for(arrived, TIMEOUT * 2), "the arm did not reach the target as seen by the client"
        state = latest(client, f"{ns}/joint_states", JointState)

        # the /tf message answering that joint state (same stamp), with the static frames
        def tf_for_state() -> list[Any]:
            for received in reversed(client.received("/tf")):
                message = deserialize_message(received.payload, TFMessage)
                if message.transforms and message.transforms[0].header.stamp == state.header.stamp:
                    return list(message.transforms)
            return []

        assert client.wait_for(lambda: bool(tf_for_state())), "no /tf with the final joint state's stamp"
        statics = [
            t for m in client.received("/tf_static") for t in deserialize_message(m.payload, TFMessage).transforms
        ]
        robot = load_urdf(UR3E)
        q = dict(zip(state.name, state.position, strict=True))
        expected = ForwardKinematics(robot).poses(q)["tool0"]
        seen = compose(edges(statics + tf_for_state()), robot.root_link)["tool0"]
        np.testing.assert_allclose(seen, expected, atol=1e-9)
        assert not np.allclose(expected, ForwardKinematics(robot).poses({j: 0.0 for j in JOINTS})["tool0"])

        # a package:// mesh through the asset service; files outside model_dirs are refused
        answer = client.fetch_asset(MESH_URI)
        assert answer.ok, answer.error
        assert answer.data == mesh
        for refused in ("file:///etc/passwd", "package://ur_description/../../../../../etc/passwd", "/etc/hostname"):
            answer = client.fetch_asset(refused)
            assert not answer.ok and answer.data == b"", refused
            assert "outside" in answer.error or "not found" in answer.error or "no such" in answer.error, answer.error
        assert not client.fetch_asset("http://example.invalid/mesh.stl").ok
        assert not client.errors, client.errors

        # a second client, 10 s after the first: description and static frames without a new publication
        description = latest(client, f"{ns}/robot_description", String).data
        time.sleep(max(0.0, client.connected_at + 10.0 - time.monotonic()))
        late = FoxgloveTestClient(url)
        try:
            late.wait_for_topics(f"{ns}/robot_description", "/tf_static")
            late.subscribe(f"{ns}/robot_description", "/tf_static")
            assert late.wait_for(
                lambda: bool(late.received(f"{ns}/robot_description")) and bool(late.received("/tf_static"))
            )
            assert latest(late, f"{ns}/robot_description", String).data == description
            late_static = {
                t.child_frame_id
                for m in late.received("/tf_static")
                for t in deserialize_message(m.payload, TFMessage).transforms
            }
            assert late_static == {t.child_frame_id for t in statics}
            assert not late.errors, late.errors
        finally:
            late.close()
    finally:
        client.close()
    assert view.alive(), view.log()


def test_recording_holds_the_topics_schemas_and_counts(probe: Probe, start_node: StartNode, tmp_path: Path) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    # Names of this run's own (a namespace, and a frame prefix on the global /tf and /tf_static): the test
    # counts what it published, and another run in the same ROS domain publishes on /tf too (each test
    # session picks its domain at random; a twin of this test there made the counts wrong).
    ns = f"/view_rec_{uuid.uuid4().hex[:8]}"
    prefix = f"{ns[1:]}/"
    start_robot(start_node, ns, driver=False, frame_prefix=prefix)
    record = tmp_path / "run.mcap"
    # Serving too: the view hands each message to its clients, then to the recording, in one call, so a
    # client that has the last message shows that the recording has it (the view is stopped only then).
    view = start_view(start_node, ns, record=str(record))
    url = view_url(view.wait_for_log("Foxglove: open"))
    states = probe.node.create_publisher(JointState, f"{ns}/joint_states", VOLATILE)
    view.wait_for_log(f"showing {ns}/joint_states")
    view.wait_for_log("showing /tf ")
    probe.wait_for_subscribers(states, count=2)  # the description node and the view
    sent: list[list[float]] = []
    stamps: list[tuple[int, int]] = []

    def publish(position: list[float]) -> Any:
        sent.append(position)
        message = JointState(name=JOINTS, position=position)
        message.header.stamp = probe.node.get_clock().now().to_msg()
        stamps.append((message.header.stamp.sec, message.header.stamp.nanosec))
        states.publish(message)
        return message.header.stamp

    watcher = FoxgloveTestClient(url)
    try:
        watcher.wait_for_topics(f"{ns}/joint_states", "/tf")
        watcher.subscribe(f"{ns}/joint_states", "/tf")

        def shown(stamp: Any, last: int | None = None) -> bool:
            """The watcher has the joint state stamped ``stamp`` and its /tf (among the ``last`` of each)."""
            js = [deserialize_message(m.payload, JointState) for m in watcher.received(f"{ns}/joint_states")]
            tf = [deserialize_message(m.payload, TFMessage) for m in watcher.received("/tf")]
            return any(m.header.stamp == stamp for m in js[-(last or len(js)) :]) and any(
                m.transforms and m.transforms[0].header.stamp == stamp for m in tf[-(last or len(tf)) :]
            )

        # Warmed up once a joint state has come through the whole chain: to the watcher, and answered on /tf
        # by the description node. The server takes a subscription without an answer, and DDS matches each
        # side of a topic on its own: the probe's writer counts the description node's reader at once (it
        # knew the reader), while that reader takes the writer's messages only once it has learnt of the
        # writer, which a loaded host delays (so for the description node's /tf writer and the view's
        # reader). A warm-up message before that is recorded on joint_states and may have no /tf there.
        def warmed_up() -> bool:
            stamp = publish([-1.0, -0.5, 0.5, 0.0, 0.1, 0.2])
            return probe.spin_until(lambda: shown(stamp), 0.5)

        assert probe.spin_until(warmed_up), "no joint state came through to the watcher with its /tf"
        warm = len(sent) - 1  # from this one on, every joint state has its /tf
        count = 40
        for i in range(count):
            stamp = publish([0.01 * i, -0.5, 0.5, 0.0, 0.1, 0.2])
            probe.spin_for(0.01)

        assert watcher.wait_for(lambda: shown(stamp, 3), TIMEOUT), "the last joint state and its /tf not served"
    finally:
        watcher.close()
    assert view.stop() == 0, view.log()

    with record.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        by_topic = {channel.topic: channel for channel in summary.channels.values()}
        assert {f"{ns}/robot_description", "/tf", "/tf_static", f"{ns}/joint_states"} <= set(by_topic)
        for topic, type_name in (
            ("/tf", "tf2_msgs/msg/TFMessage"),
            ("/tf_static", "tf2_msgs/msg/TFMessage"),
            (f"{ns}/joint_states", "sensor_msgs/msg/JointState"),
            (f"{ns}/robot_description", "std_msgs/msg/String"),
        ):
            channel = by_topic[topic]
            schema = summary.schemas[channel.schema_id]
            assert (channel.message_encoding, schema.encoding, schema.name) == ("cdr", "ros2msg", type_name)
        counts = {by_topic[t].topic: 0 for t in by_topic}
        positions = []
        tf_stamps = []
        statics = 0
        for _schema, channel, _message, decoded in reader.iter_decoded_messages():
            counts[channel.topic] += 1
            ours = channel.topic in ("/tf", "/tf_static") and any(
                t.child_frame_id.startswith(prefix) for t in decoded.transforms[:1]
            )
            if channel.topic == f"{ns}/joint_states":
                positions.append(list(decoded.position))
            elif channel.topic == "/tf" and ours:
                tf_stamps.append((decoded.transforms[0].header.stamp.sec, decoded.transforms[0].header.stamp.nanosec))
            elif channel.topic == "/tf_static" and ours:
                statics += 1
            elif channel.topic == f"{ns}/robot_description":
                assert decoded.data == UR3E.read_text()
    assert counts[f"{ns}/joint_states"] == len(sent)  # the 40 and the warm-up ones
    np.testing.assert_allclose(positions, sent)
    # One /tf per joint state, each stamped as its joint state; every one from the warm-up that came through.
    assert len(tf_stamps) == len(set(tf_stamps)) and set(tf_stamps) <= set(stamps)
    assert set(stamps[warm:]) <= set(tf_stamps), (
        f"joint states without their /tf: {set(stamps[warm:]) - set(tf_stamps)}"
    )
    assert counts[f"{ns}/robot_description"] == 1 and statics == 1
    assert summary.statistics.message_count == sum(counts.values())


def test_start_up_errors_exit_1_with_the_reason(start_node: StartNode, tmp_path: Path) -> None:
    existing = tmp_path / "old.mcap"
    existing.write_bytes(b"keep me")
    view = start_view(start_node, "/view_err1", record=str(existing))
    assert view.wait_for_exit() == 1
    assert "exists" in view.log() and str(existing) in view.log()
    assert existing.read_bytes() == b"keep me"
    view = start_view(start_node, "/view_err2", serve=False)
    assert view.wait_for_exit() == 1
    assert "nothing to do" in view.log()
    view = start_view(start_node, "/view_err3", topics=["/tf", "bad topic!"])
    assert view.wait_for_exit() == 1
    assert "'bad topic!' is not a valid ROS topic name" in view.log()


def test_clients_that_vanish_do_not_stop_the_view(probe: Probe, start_node: StartNode) -> None:
    ns = f"/view_churn_{uuid.uuid4().hex[:8]}"  # this run's own joint states (test_recording_... says why)
    start_robot(start_node, ns, driver=False)
    view = start_view(start_node, ns)
    url = view_url(view.wait_for_log("Foxglove: open"))
    states = probe.node.create_publisher(JointState, f"{ns}/joint_states", VOLATILE)
    view.wait_for_log(f"showing {ns}/joint_states")
    probe.wait_for_subscribers(states, count=2)  # the description node and the view
    watcher = FoxgloveTestClient(url)

    def positions() -> list[float]:
        return [deserialize_message(m.payload, JointState).position[0] for m in watcher.received(f"{ns}/joint_states")]

    try:
        watcher.wait_for_topics(f"{ns}/joint_states")
        watcher.subscribe(f"{ns}/joint_states")

        # The server takes a subscription without an answer: it holds once a message comes through.
        def warmed_up() -> bool:
            states.publish(JointState(name=JOINTS, position=[-1.0] * 6))
            return bool(positions())

        assert probe.spin_until(warmed_up), "the watcher got nothing"
        for _ in range(3):  # clients that subscribe, then drop their TCP connection without a close handshake
            gone = FoxgloveTestClient(url)
            gone.wait_for_topics(f"{ns}/joint_states", "/tf")
            gone.subscribe(f"{ns}/joint_states", "/tf")
            gone.ws.socket.close()
        sent = [0.01 * i for i in range(20)]
        for position in sent:
            states.publish(JointState(name=JOINTS, position=[position] * 6))
            probe.spin_for(0.01)
        assert watcher.wait_for(lambda: [p for p in positions() if p >= 0.0] == sent), positions()
        assert view.alive(), view.log()
    finally:
        watcher.close()


def test_the_obstacles_of_collision_world_are_a_scene_for_every_client(start_node: StartNode, tmp_path: Path) -> None:
    import base64

    from helpers.foxglove_client import decode_protobuf

    world = tmp_path / "cell.yaml"
    world.write_text("obstacles:\n  - {name: post, xyz: [0.5, 0.0, 0.3], box: [0.1, 0.2, 0.6]}\nfloor: 0.0\n")
    arm = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
    ns = "/view_world"
    start_node({"model": str(arm), "model_dirs": [str(arm.parent)]}, ns, node="description")
    # a world that cannot be read is logged and the rest is served (the robot from its file: model)
    missing = {"collision.world": str(tmp_path / "missing.yaml"), "model": str(arm), "model_dirs": [str(arm.parent)]}
    bad = start_view(start_node, "/view_world_bad", **missing)
    # no model: the robot comes from robot_description, as the driver's
    view = start_view(start_node, ns, **{"collision.world": str(world), "frame_prefix": "left/"})
    url = view_url(view.wait_for_log("Foxglove: open"))
    view.wait_for_log(f"showing collision.world {world}: 2 obstacle parts on {ns}/collision_world")
    clients = []
    try:
        for _ in range(2):  # the second connects after the scene was sent: it is sent again on subscribing
            client = FoxgloveTestClient(url)
            clients.append(client)
            client.wait_for_topics(f"{ns}/collision_world")
            channel = client.channels[client.channel_id(f"{ns}/collision_world")]
            assert (channel["encoding"], channel["schemaName"], channel["schemaEncoding"]) == (
                "protobuf",
                "foxglove.SceneUpdate",
                "protobuf",
            )
            client.subscribe(f"{ns}/collision_world")
            assert client.wait_for(lambda c=client: bool(c.received(f"{ns}/collision_world")))
            scene = decode_protobuf(
                "foxglove.SceneUpdate",
                base64.b64decode(channel["schema"]),
                client.received(f"{ns}/collision_world")[-1].payload,
            )
            entities = {entity.id: entity for entity in scene.entities}
            assert sorted(entities) == ["world/floor", "world/post"]
            post = entities["world/post"]
            assert post.frame_id == "left/base_link" and post.frame_locked
            assert (post.cubes[0].size.x, post.cubes[0].size.y, post.cubes[0].size.z) == pytest.approx((0.1, 0.2, 0.6))
            assert post.cubes[0].pose.position.x == pytest.approx(0.5)
        bad.wait_for_log("collision.world is not shown")
        assert "missing.yaml" in bad.log() and bad.alive()
    finally:
        for client in clients:
            client.close()

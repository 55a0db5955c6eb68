"""``bb-robot up --demo --view --record``: the demo seen through Foxglove's protocol and recorded.

An independent Foxglove client (``foxglove_client.py``, written from the published protocol, not
the SDK's client) connects to the view node that ``bb-robot up --view`` starts, subscribes to the
TF and joint_states channels while the demo runs, decodes the CDR messages and checks the final
tool frame against forward kinematics; the MCAP file ``--record`` wrote is read back with ``mcap``
and ``mcap-ros2-support``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.bringup_helpers import Launched, require_launch, up_command
from helpers.description_oracle import compose, edges
from helpers.foxglove_client import connect_when_listening, free_port

from bb_robot.cli.up_inputs import plan_bringup
from bb_robot.model.kinematics import ForwardKinematics

TIMEOUT = 120.0


def test_up_demo_with_view_and_record(tmp_path: Path) -> None:
    require_launch()
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    port, record = free_port(), tmp_path / "run.mcap"
    command = up_command("--demo", "--duration", "3", "--view", "--port", str(port), "--record", str(record))
    run = Launched([*command, "--timeout", "90"], tmp_path / "up.log")
    client = connect_when_listening(f"ws://127.0.0.1:{port}", run.running)
    try:
        client.wait_for_topics("/tf", "/tf_static", "/joint_states", "/robot_description", timeout=TIMEOUT)
        client.subscribe("/tf", "/tf_static", "/joint_states", "/robot_description")
        status = run.wait(timeout=240)
        output = run.log()
        assert status == 0, output
        assert f"view: open ws://127.0.0.1:{port}" in output and "demo goal succeeded" in output
        assert "view node takes /tf and /joint_states" in output
        states = [deserialize_message(m.payload, JointState) for m in client.received("/joint_states")]
        assert states, "no joint_states through the Foxglove server"
        tf_by_stamp: dict[tuple[int, int], list[Any]] = {}
        for received in client.received("/tf"):
            message = deserialize_message(received.payload, TFMessage)
            if message.transforms:
                stamp = message.transforms[0].header.stamp
                tf_by_stamp[(stamp.sec, stamp.nanosec)] = list(message.transforms)

        # The newest joint state whose /tf came through.  The launch stops every node at once
        # when the goal succeeds, so the /tf of the very last states may not reach the view
        # before the description node ends; it must be one of the last few (100 Hz: 0.1 s).
        recent = 10
        matched = [
            (age, state, tf_by_stamp[(state.header.stamp.sec, state.header.stamp.nanosec)])
            for age, state in enumerate(reversed(states[-recent:]))
            if (state.header.stamp.sec, state.header.stamp.nanosec) in tf_by_stamp
        ]
        assert matched, f"none of the last {recent} joint states has its /tf ({len(tf_by_stamp)} /tf messages)"
        _, final, moving = matched[0]
        statics = [
            t for m in client.received("/tf_static") for t in deserialize_message(m.payload, TFMessage).transforms
        ]
        robot = plan_bringup(None).robot
        q = {n: p for n, p in zip(final.name, final.position, strict=True) if robot.joints[n].mimic is None}
        expected = ForwardKinematics(robot).poses(q)["tcp"]
        np.testing.assert_allclose(compose(edges(statics + moving), robot.root_link)["tcp"], expected, atol=1e-9)
        assert not np.allclose(expected, ForwardKinematics(robot).poses({})["tcp"]), "the demo did not move the tool"
        assert not client.errors, client.errors
    finally:
        client.close()
    assert run.alive() == [], f"processes left running: {run.alive()}"

    with record.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        topics = {channel.topic: channel for channel in summary.channels.values()}
        assert {"/tf", "/tf_static", "/joint_states", "/robot_description"} <= set(topics)
        schema = summary.schemas[topics["/joint_states"].schema_id]
        assert (topics["/joint_states"].message_encoding, schema.encoding, schema.name) == (
            "cdr",
            "ros2msg",
            "sensor_msgs/msg/JointState",
        )
        counts = summary.statistics.channel_message_counts
        assert counts[topics["/joint_states"].id] > 50 and counts[topics["/robot_description"].id] == 1
        decoded = [d for _s, c, _m, d in reader.iter_decoded_messages(topics=["/joint_states"])]
        assert list(decoded[-1].name) == list(final.name)
        # The demo is recorded whole: ``up`` sends the goal only once the view takes joint_states,
        # so the recording begins before the arm moved (the simulated arm starts with every joint
        # at 0; a minimum-jerk move covers 1 % of its way in its first tenth).
        np.testing.assert_allclose(decoded[0].position, 0.0, atol=0.01)


@pytest.mark.parametrize("args", [["--port", "70000"]])
def test_up_view_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    run = Launched(up_command("--view", *args), tmp_path / "up.log")
    assert run.wait(timeout=60) == 2, run.log()

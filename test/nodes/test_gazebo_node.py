"""The driver node with ``backend: gazebo`` on the seed's UR3e world, over real DDS and the real C++
gz-transport: a C++ peer (``test/gz/peer/gz_sim_peer.cc``, ign-transport 11 = gz-transport 13's wire
protocol) plays the world's JointPositionController + JointStatePublisher (integrating the commanded
positions, publishing ``gz.msgs.Model``), and the driver, loaded from the world file alone, moves the
arm to targets commanded over ROS; it reconnects after the peer restarts, republishes the world
clock on ``/clock``, and diagnoses a wrong partition in its log.  Loopback only; a gz partition of
this session's own.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cpp_peer import Peer  # noqa: E402
from helpers.nodes import TIMEOUT, NodeProcess, Probe, StartNode
from helpers.sim_peer import (  # noqa: E402
    UR3E_JOINTS,
    UR3E_STATE_TOPIC,
    WorldPeers,
    sim_peer_or_skip,
    ur3e_command_topic,
    ur3e_driver_parameters,
    ur3e_peer_args,
    world_peers,
)
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

SESSION = uuid.uuid4().hex[:8]
VOLATILE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)


@pytest.fixture(scope="module")
def sim_peer_binary() -> Path:
    return sim_peer_or_skip(need_world=True)


@pytest.fixture
def partition() -> str:
    return f"bb_robot_node_{SESSION}_{uuid.uuid4().hex[:6]}"


@pytest.fixture
def world(sim_peer_binary: Path, partition: str) -> Iterator[WorldPeers]:
    with world_peers(sim_peer_binary, partition) as start:
        yield start


def driver_parameters(partition: str, **gazebo: Any) -> dict[str, Any]:
    # 250 Hz on a busy 2-CPU machine: the seed's 500 Hz is measured in benchmarks/bench_gazebo.py.
    return ur3e_driver_parameters(
        partition, 250.0, publish_rate=50.0, stale_timeout=1.0, gazebo={"wait_at_configure": 0.5, **gazebo}
    )


def positions(state: JointState) -> np.ndarray | None:
    index = {name: i for i, name in enumerate(state.name)}
    if not all(j in index for j in UR3E_JOINTS):
        return None
    return np.array([state.position[index[j]] for j in UR3E_JOINTS])


def wait_positions(probe: Probe, states: list[JointState], node: NodeProcess, target: Any, tol: float = 1e-3) -> None:
    def reached() -> bool:
        if not states:
            return False
        p = positions(states[-1])
        return p is not None and bool(np.abs(p - np.asarray(target)).max() < tol)

    last = lambda: states[-1] if states else None  # noqa: E731
    assert probe.spin_until(reached, TIMEOUT), f"not at {list(target)}; last {last()}:\n{node.log()}"


def test_driver_moves_the_seed_world_arm_and_reconnects(
    probe: Probe, start_node: StartNode, world: Callable[..., Peer], partition: str
) -> None:
    clock_topic = "/world/ur3e_world/clock"
    peer = world(*ur3e_peer_args(initial=[0.1] * 6, extra=["--clock", clock_topic]))
    node = start_node(driver_parameters(partition, publish_clock=True), module="bb_robot.nodes.driver", node="driver")
    log = node.wait_for_log("active: control loop")
    # The topics come from the world file alone: the seed's working configuration.
    for joint in UR3E_JOINTS:
        assert f"{joint}: position -> {ur3e_command_topic(joint)} (gz.msgs.Double" in log
    assert f"joint state <- {UR3E_STATE_TOPIC}" in log
    states = probe.subscribe(JointState, f"{node.namespace}/joint_states", VOLATILE)
    clocks = probe.subscribe(Clock, "/clock", BEST_EFFORT)
    wait_positions(probe, states, node, [0.1] * 6)
    target = [0.5, -0.4, 0.3, -0.2, 0.6, -0.3]
    sas = probe.node.create_publisher(Float64MultiArray, f"{node.namespace}/ur3e/set/target_joint_positions", 1)
    probe.wait_for_subscribers(sas)
    sas.publish(Float64MultiArray(data=target))
    wait_positions(probe, states, node, target)
    # Gazebo's clock on ROS /clock.
    assert probe.spin_until(lambda: any(c.clock.sec > 0 or c.clock.nanosec > 0 for c in clocks), TIMEOUT), node.log()
    assert peer.wait_for(lambda lines: sum(line.startswith("CMD ") for line in lines) == 6, TIMEOUT)
    # Gazebo restarts with the arm at zero: the driver notices, reconnects and sends the latest target again.
    peer.stop()
    node.wait_for_log("no joint state from Gazebo")
    world(*ur3e_peer_args(initial=[0.0] * 6, extra=["--clock", clock_topic]))
    assert probe.spin_until(lambda: node.log().count("gazebo: connected") >= 2, TIMEOUT), node.log()
    states.clear()
    wait_positions(probe, states, node, target)


def test_a_wrong_partition_is_diagnosed_in_the_log(
    probe: Probe, start_node: StartNode, world: Callable[..., Peer], partition: str
) -> None:
    world(*ur3e_peer_args(), partition_override=partition + "_gazebo")
    node = start_node(driver_parameters(partition), module="bb_robot.nodes.driver", node="driver")
    node.wait_for_log("waiting for Gazebo")
    log = node.wait_for_log(f"published in partition '{partition}_gazebo'")
    assert "GZ_PARTITION" in log
    assert "active: control loop" in node.wait_for_log("active: control loop")  # it runs, waiting


def test_publish_rate_zero_passes_every_gazebo_state_on_at_once(
    probe: Probe, start_node: StartNode, world: Callable[..., Peer], partition: str
) -> None:
    # A 2 Hz control loop: joint_states at Gazebo's 250 Hz can only come from the transport's thread.
    world(*ur3e_peer_args(initial=[0.2] * 6))
    parameters = {**driver_parameters(partition), "rate": 2.0, "publish_rate": 0.0}
    node = start_node(parameters, module="bb_robot.nodes.driver", node="driver")
    node.wait_for_log("active: control loop at 2 Hz")
    states = probe.subscribe(JointState, f"{node.namespace}/joint_states", VOLATILE)
    sas_states = probe.subscribe(JointState, f"{node.namespace}/ur3e/get/joint_states", VOLATILE)
    wait_positions(probe, states, node, [0.2] * 6)
    states.clear()
    # Passed on as Gazebo sends them (250 Hz), not once per cycle of the 2 Hz loop: 21 joint states with
    # distinct stamps, at least twice as many as the loop has cycles (one every 0.5 s, one more at each
    # end) in the time their stamps span.  Judged on the driver's stamps, not on how many this process
    # happens to take in a second of its own clock.
    count = 21
    assert probe.spin_until(lambda: len(states) >= count and bool(sas_states), TIMEOUT), (
        f"{len(states)} joint_states, {len(sas_states)} sas states:\n{node.log()}"
    )
    received = list(states)
    assert len({(s.header.stamp.sec, s.header.stamp.nanosec) for s in received}) == len(received), "a stamp twice"
    stamps = [s.header.stamp.sec + s.header.stamp.nanosec * 1e-9 for s in received[:count]]
    cycles = (stamps[-1] - stamps[0]) / 0.5 + 2
    assert count >= 2 * cycles, (
        f"{count} joint_states over {stamps[-1] - stamps[0]:.3f} s of stamps: {cycles:.1f} cycles"
    )
    assert positions(sas_states[-1]) is not None
    # Commands still move the arm (written at once by the command callback, not only each half second).
    target = [0.3, -0.1, 0.25, 0.0, 0.15, -0.2]
    sas = probe.node.create_publisher(Float64MultiArray, f"{node.namespace}/ur3e/set/target_joint_positions", 1)
    probe.wait_for_subscribers(sas)
    sas.publish(Float64MultiArray(data=target))
    wait_positions(probe, states, node, target)

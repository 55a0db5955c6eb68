"""Every shipped parameter file, run as a user runs it, refuses a command beyond the clamp margin.

For each file of config/ and each backend it names (its ``backend:`` values and any
``backend:=<name>`` its comments suggest): the description node and the driver start with the
file as it is (only what a launch adds on top: ``autostart``, the backend, a model argument), the
example servo bridge beside the actuators backend and the C++ Gazebo stand-in beside the gazebo
backend.  Over DDS, as a sas client: the driver starts disarmed; armed through ``~/arm``; a
position command 1e300 for every joint (the sas array) and one 0.15 beyond a joint's upper limit
(``~/joint_commands``, by name; further than either clamp margin, 0.1 rad and 0.01 m) are
rejected, each with its warning in the log; then a
small move of the same joint is followed.  Across everything received, no joint ever moved
towards the rejected targets, and the others never moved.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from helpers.launch_checks import robot_configs
from helpers.nodes import LOADED_MACHINE_TIMING, NodeProcess, Probe, StartNode, node_overrides
from helpers.robot_files import CORPUS_DIR
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from bb_robot.driver.parameters import spec

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO_ROOT / "config"
UR3E_WORLD = CORPUS_DIR / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
#: Configs whose model is a launch argument: the model they are run with.
MODEL_ARGUMENT = {
    "generic.yaml": REPO_ROOT / "models" / "bb_pan_tilt.urdf",
    # The user's Koch URDF; the SO-101's has the same joint names (LeRobot's motor names).
    "koch_follower.yaml": REPO_ROOT / "models" / "so101" / "so101_new_calib.urdf",
    "worlds/ur3e_world.yaml": UR3E_WORLD,
    "worlds/ur3e_world_gazebo.yaml": UR3E_WORLD,
}
BEYOND = 0.15
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
STREAM = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


def backends_named(path: Path) -> list[str]:
    """The backends a parameter file names: its driver sections' and its comments' ``backend:=``."""
    data = yaml.safe_load(path.read_text()) or {}
    named = {
        str(section["ros__parameters"]["backend"])
        for key, section in data.items()
        if key.endswith("driver") and "backend" in section.get("ros__parameters", {})
    }
    named |= set(re.findall(r"backend:=(\w+)", path.read_text()))
    return sorted(named)


CASES = [
    (config, backend)
    for config in sorted(p.relative_to(CONFIG_DIR).as_posix() for p in robot_configs())
    for backend in backends_named(CONFIG_DIR / config)
]


def test_the_cases_cover_every_file_and_the_named_backends() -> None:
    files = {p.relative_to(CONFIG_DIR).as_posix() for p in robot_configs()}
    assert {config for config, _ in CASES} == files
    assert ("worlds/ur3e_world.yaml", "gazebo") in CASES and ("bb_arm_actuators.yaml", "actuators") in CASES
    assert spec("clamp_margin.revolute").default < BEYOND and spec("clamp_margin.prismatic").default < BEYOND


@pytest.fixture
def gazebo_world() -> Iterator[dict[str, str]]:
    """The C++ stand-in for the UR3e world in Gazebo; yields the driver's environment for it."""
    from helpers.sim_peer import sim_peer_or_skip, ur3e_peer_args, world_peers

    binary = sim_peer_or_skip(need_world=True)
    partition = f"bb_robot_configs_{uuid.uuid4().hex[:8]}"
    with world_peers(binary, partition) as start:
        start(*ur3e_peer_args())
        yield {**os.environ, "GZ_PARTITION": partition, "GZ_IP": "127.0.0.1"}


def _fail(what: str, *nodes: NodeProcess) -> str:
    return what + "".join(f"\n--- {node.name}:\n{node.log()[-4000:]}" for node in nodes)


@pytest.mark.parametrize(("config", "backend"), CASES, ids=[f"{c.replace('/', '_')}-{b}" for c, b in CASES])
def test_a_command_beyond_the_margin_is_refused_and_the_arm_does_not_move(
    config: str, backend: str, probe: Probe, start_node: StartNode, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = CONFIG_DIR / config
    model = MODEL_ARGUMENT.get(config)
    if model is not None and not model.is_file():
        pytest.skip(f"no corpus file {model}")
    environment = request.getfixturevalue("gazebo_world") if backend == "gazebo" else None
    namespace = f"/t{uuid.uuid4().hex[:10]}"
    description: dict[str, Any] = {}
    driver: dict[str, Any] = {"autostart": True, "backend": backend, "connect_timeout": 20.0}
    if backend == "actuators":
        # Timing only, for a loaded CI machine: the limits under test stay the file's.
        driver.update(LOADED_MACHINE_TIMING)
    if model is not None:  # as bringup.launch.py passes a model argument
        dirs = [str(model.parent), str(REPO_ROOT / "models")]
        description.update(model=str(model), model_dirs=dirs)
        driver["model_dirs"] = dirs
        if backend == "gazebo":
            driver["model"] = str(model)
    nodes = [
        start_node(
            {},
            namespace,
            (
                "--params-file",
                str(path),
                "--params-file",
                str(node_overrides(tmp_path / "description_overrides.yaml", "description", description)),
            ),
        )
    ]
    if backend == "actuators":
        nodes.append(start_node({}, namespace, module="bb_robot.examples.servo_bridge", node="servo_bridge"))
    arguments = (
        "--params-file",
        str(path),
        "--params-file",
        str(node_overrides(tmp_path / "driver_overrides.yaml", "driver", driver)),
    )
    node = start_node({}, namespace, arguments, module="bb_robot.nodes.driver", node="driver", environment=environment)
    nodes.insert(0, node)
    node.wait_for_log("active: control loop")
    if backend == "actuators":  # the timing overrides reached the driver (else the file's own apply)
        answer = probe.call_client(node.name, "get_parameters", ["stale_timeout", "actuators.feedback_timeout"])
        assert [value.double_value for value in answer.values] == [1.0, 2.0], answer

    arm_state = probe.subscribe(String, f"{node.name}/arm_state", LATCHED)
    assert probe.spin_until(lambda: bool(arm_state)), _fail("no arm state", *nodes)
    assert arm_state[-1].data != "armed", _fail("a shipped file armed the driver by itself", *nodes)

    # The sas topics, under the robot name the file (or the model) gives.
    def sas_prefix() -> str | None:
        for name, _ in probe.node.get_topic_names_and_types():
            if name.startswith(namespace + "/") and name.endswith("/set/target_joint_positions"):
                return name[: -len("/set/target_joint_positions")]
        return None

    assert probe.spin_until(lambda: sas_prefix() is not None), _fail("no sas topics", *nodes)
    prefix = sas_prefix()
    states = probe.subscribe(JointState, f"{prefix}/get/joint_states", STREAM)
    upper = probe.subscribe(Float64MultiArray, f"{prefix}/get/joint_positions_max", LATCHED)
    commands = probe.node.create_publisher(Float64MultiArray, f"{prefix}/set/target_joint_positions", STREAM)

    arm = probe.node.create_client(Trigger, f"{node.name}/arm")
    assert probe.spin_until(arm.service_is_ready), _fail("no ~/arm", *nodes)
    assert probe.answer(lambda: arm.call_async(Trigger.Request()), "arm").success, _fail("arm refused", *nodes)
    probe.wait_for_subscribers(commands)

    def settled() -> bool:
        return len(states) > 20 and float(np.abs(np.nan_to_num(states[-1].velocity)).max(initial=0.0)) < 0.05

    assert probe.spin_until(lambda: bool(upper) and settled()), _fail("no settled joint states", *nodes)
    baseline = np.array(states[-1].position)
    highs = np.array(upper[-1].data)
    joint = int(np.flatnonzero(np.isfinite(highs))[0])
    first = len(states)

    # Two topics (the driver says each rejection, at most once per topic and problem every 5 s): the
    # sas array with 1e300 for every joint, and one joint BEYOND its upper limit by name.
    by_name = probe.node.create_publisher(JointState, f"{node.name}/joint_commands", STREAM)
    probe.wait_for_subscribers(by_name)
    for label, send in (
        ("1e300", lambda: commands.publish(Float64MultiArray(data=[1e300] * len(baseline)))),
        (
            "beyond",
            lambda: by_name.publish(JointState(name=[states[-1].name[joint]], position=[float(highs[joint] + BEYOND)])),
        ),
    ):
        before = node.log().count("rejected a command")
        send()
        assert probe.spin_until(lambda b=before: node.log().count("rejected a command") > b), _fail(  # type: ignore[misc]
            f"the {label} command was not rejected", *nodes
        )
    log = node.log()
    assert "too far outside the joint limits" in log, _fail("no warning naming the limits", *nodes)

    # Then a small move of the same joint is followed: the driver was listening all along.
    step = min(0.05, (highs[joint] - baseline[joint]) / 2)
    target = baseline.copy()
    target[joint] += step
    message = Float64MultiArray(data=[float(v) for v in target])
    timer = probe.node.create_timer(0.05, lambda: commands.publish(message))  # a streaming sas client
    try:
        reached = probe.spin_until(lambda: abs(states[-1].position[joint] - target[joint]) < step / 4)
    finally:
        probe.node.destroy_timer(timer)
    assert reached, _fail(f"the small move of joint {joint} to {target[joint]:.3f} was not followed", *nodes)

    seen = np.array([state.position for state in states[first:]])
    tolerance = 0.02 if backend in ("mujoco", "gazebo") else 0.005
    assert seen[:, joint].max() <= target[joint] + max(tolerance, step / 4), "the joint moved towards a rejected target"
    others = np.delete(np.arange(len(baseline)), joint)
    moved = np.abs(seen[:, others] - baseline[others]).max(initial=0.0)
    assert moved < tolerance, _fail(f"other joints moved by {moved:.4f}", *nodes)
    assert all(n.alive() for n in nodes), _fail("a node died", *nodes)

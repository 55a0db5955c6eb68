"""The driver node with ``backend: mujoco`` over real DDS: the driver runs as a child process.

One process, lockstep time: joint states carry efforts, ``/clock`` carries the simulated time,
position commands and a trajectory are followed by the PD servos, effort commands move the arm,
a bad command is refused with a warning while the loop runs on, ``/diagnostics`` says the
real-time factor, and the disarmed arm falls under gravity.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.nodes import TIMEOUT, NodeProcess, Probe

from bb_robot.driver.model import driven_joints
from bb_robot.urdf.builder import load_urdf

pytest.importorskip("mujoco")
from builtin_interfaces.msg import Duration  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
JOINTS = driven_joints(load_urdf(BB_ARM))
N = len(JOINTS)
START = [0.0, 0.7, -1.1, 0.6, 0.4, 0.0, 0.0]
VOLATILE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
SAS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)


def positions(state: JointState) -> np.ndarray:
    index = {name: i for i, name in enumerate(state.name)}
    return np.array([state.position[index[j]] for j in JOINTS])


def test_the_driver_simulates_the_arm_in_mujoco(probe: Probe, start_node: Any) -> None:
    parameters = {
        "model": str(BB_ARM),
        "backend": "mujoco",
        "autostart": True,
        "auto_arm": True,
        "command_timeout": 0.0,
        "mujoco": {"lockstep": True, "initial_positions": START},
    }
    node: NodeProcess = start_node(parameters, module="bb_robot.nodes.driver", node="driver")
    ns, name = node.namespace, node.name
    states = probe.subscribe(JointState, f"{ns}/joint_states", VOLATILE)
    clock = probe.subscribe(Clock, "/clock", BEST_EFFORT)
    diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics", VOLATILE)
    sas = {
        kind: probe.node.create_publisher(Float64MultiArray, f"{ns}/bb_arm/set/target_joint_{kind}", SAS)
        for kind in ("positions", "forces")
    }
    trajectories = probe.node.create_publisher(JointTrajectory, f"{name}/joint_trajectory", VOLATILE)
    disarm = probe.node.create_client(Trigger, f"{name}/disarm")
    node.wait_for_log("active: control loop")

    def wait(condition: Any, what: str, timeout: float = TIMEOUT) -> JointState:
        ok = probe.spin_until(lambda: bool(states) and condition(states[-1]), timeout)
        assert ok, f"no joint state with {what} (last: {states[-1] if states else None}):\n{node.log()}"
        return states[-1]

    def send(kind: str, values: list[float]) -> None:
        probe.wait_for_subscribers(sas[kind])
        sas[kind].publish(Float64MultiArray(data=[float(v) for v in values]))

    # held where it starts, against gravity: efforts reported, the shoulder carrying load (the
    # samples read before auto_arm armed the drives report them off: limp, no effort)
    lift = JOINTS.index("shoulder_lift_joint")
    wait(
        lambda s: (
            len(s.effort) == len(s.name) and abs(s.effort[lift]) > 5.0 and np.abs(positions(s) - START).max() < 0.02
        ),
        "the start pose held against gravity by the shoulder",
    )
    # simulated time on /clock, advancing
    assert probe.spin_until(lambda: len(clock) >= 2 and clock[-1].clock.sec * 10**9 + clock[-1].clock.nanosec > 0)
    # a position command is followed
    target = [0.3, 0.4, -0.8, 0.3, 0.2, 0.5, 0.02]
    send("positions", target)
    wait(lambda s: np.abs(positions(s) - target).max() < 0.01, f"positions near {target}")
    # a trajectory through the same path as every backend
    message = JointTrajectory(joint_names=list(JOINTS))
    goal = [0.0, 0.6, -1.0, 0.5, 0.4, 0.0, 0.01]
    message.points.append(JointTrajectoryPoint(positions=goal, time_from_start=Duration(sec=2)))
    probe.wait_for_subscribers(trajectories)
    trajectories.publish(message)
    wait(lambda s: np.abs(positions(s) - goal).max() < 0.01, f"the trajectory's end {goal}", TIMEOUT + 5)
    # a bad command is refused with a warning naming the topic; the loop runs on
    send("positions", [0.0] * (N - 1))
    node.wait_for_log("target_joint_positions")
    count = len(states)
    assert probe.spin_until(lambda: len(states) > count + 10)
    # an effort command moves the arm: the shoulder pushed beyond its gravity load rises
    efforts = [0.0] * N
    efforts[lift] = -150.0
    before = positions(states[-1])[lift]
    send("forces", efforts)
    wait(lambda s: positions(s)[lift] < before - 0.2, "the shoulder lifted by its effort command")

    # /diagnostics carries the real-time factor
    def rtf() -> bool:
        return any(v.key == "real-time factor" for a in diagnostics for s in a.status for v in s.values)

    assert probe.spin_until(rtf), "no real-time factor in /diagnostics"
    # disarmed, the arm falls: limp drives
    assert probe.spin_until(disarm.service_is_ready)
    future = disarm.call_async(Trigger.Request())
    assert probe.spin_until(future.done)
    wait(lambda s: abs(s.effort[lift]) == 0.0 and abs(s.velocity[lift]) > 0.05, "the arm falling limp")


def test_the_bundled_mujoco_config_runs_bb_arm(probe: Probe, start_node: Any) -> None:
    """``config/bb_arm_mujoco.yaml`` as a user runs it: the description node publishes the model, the
    driver takes it, simulates the arm in real time, arms itself and holds the start pose; a command
    by joint name is followed."""
    config = ("--params-file", str(REPO_ROOT / "config" / "bb_arm_mujoco.yaml"))
    ns = f"/t{uuid.uuid4().hex[:10]}"
    start_node({}, namespace=ns, args=config)  # the description node: robot_description
    node = start_node({"autostart": True}, namespace=ns, args=config, module="bb_robot.nodes.driver", node="driver")
    log = node.wait_for_log("active: control loop")
    assert "backend 'mujoco'" in log, log
    # The file leaves auto_arm false (every shipped file does): armed through ~/arm, as a user would.
    arm = probe.node.create_client(Trigger, f"{node.name}/arm")
    assert probe.spin_until(arm.service_is_ready), node.log()
    assert probe.answer(lambda: arm.call_async(Trigger.Request()), "arm").success, node.log()
    states = probe.subscribe(JointState, f"{ns}/joint_states", VOLATILE)
    start = [0.0, -0.3, 0.6, 0.0, 0.0, 0.0, 0.0]  # mujoco.initial_positions of the file

    def near(target: list[float], tolerance: float) -> bool:
        return bool(states) and bool(np.abs(positions(states[-1]) - target).max() < tolerance)

    assert probe.spin_until(lambda: near(start, 0.02)), f"the start pose not held:\n{node.log()}"
    assert all(np.isfinite(states[-1].effort[: len(JOINTS)]))
    commands = probe.node.create_publisher(JointState, f"{node.name}/joint_commands", VOLATILE)
    probe.wait_for_subscribers(commands)
    target = [0.2, -0.5, 0.9, 0.1, -0.2, 0.3, 0.01]
    commands.publish(JointState(name=list(JOINTS), position=target))
    assert probe.spin_until(lambda: near(target, 0.02)), f"no joint state near {target}:\n{node.log()}"


def test_a_follow_joint_trajectory_goal_succeeds_within_bb_arm_yaml_tolerances(
    probe: Probe, start_node: Any, tmp_path: Path
) -> None:
    """``config/bb_arm.yaml`` (the simulator's tolerances and limits) with ``backend: mujoco`` and the
    default gains, as ``bb-robot up --backend mujoco --demo`` runs it: a FollowJointTrajectory goal
    through 30 % of every joint's range succeeds."""
    import yaml
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient

    config = yaml.safe_load((REPO_ROOT / "config" / "bb_arm.yaml").read_text())
    config["/**/driver"]["ros__parameters"].update(backend="mujoco", model=str(BB_ARM), auto_arm=True)
    params = tmp_path / "bb_arm_on_mujoco.yaml"
    params.write_text(yaml.safe_dump(config))
    args = ("--params-file", str(params))
    node = start_node({"autostart": True}, args=args, module="bb_robot.nodes.driver", node="driver")
    log = node.wait_for_log("active: control loop")
    assert "backend 'mujoco'" in log, log
    action = ActionClient(probe.node, FollowJointTrajectory, f"{node.name}/follow_joint_trajectory")
    assert probe.spin_until(action.server_is_ready), f"no action server:\n{node.log()}"
    message = JointTrajectory(joint_names=list(JOINTS))
    for seconds, fraction in ((4, 0.35), (8, 0.65)):
        # from the upright start to 35 % and 65 % of each joint's range (bb_robot.bringup.demo.WAYPOINTS)
        lows = [-3.14159, -2.0, -2.6, -3.14159, -3.14159, -6.28318, 0.0]
        highs = [3.14159, 2.0, 2.6, 3.14159, 3.14159, 6.28318, 0.04]
        positions = [lo + fraction * (hi - lo) for lo, hi in zip(lows, highs, strict=True)]
        message.points.append(JointTrajectoryPoint(positions=positions, time_from_start=Duration(sec=seconds)))
    sent = action.send_goal_async(FollowJointTrajectory.Goal(trajectory=message))
    assert probe.spin_until(sent.done) and sent.result().accepted
    result = sent.result().get_result_async()
    assert probe.spin_until(result.done, TIMEOUT), f"no result:\n{node.log()}"
    outcome = result.result().result
    assert outcome.error_code == FollowJointTrajectory.Result.SUCCESSFUL, (outcome.error_string, node.log())

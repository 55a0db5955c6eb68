"""The launch files for real: ``ros2 launch bb_robot ...`` with each parameter file of config/, checked
with the real ``ros2`` command as an independent client (``ros2 lifecycle get``, ``ros2 topic echo
--once``, ``ros2 service call``, ``ros2 action send_goal``), and every process gone afterwards.

- bringup.launch.py with each simulator config: the driver active, a FollowJointTrajectory goal
  (the demo motion of ``bb-robot up``) succeeds;
- the actuators config: active with the example servo bridge this test starts;
- the Gazebo world config: active against the C++ gz-transport peer of test/gz with the corpus world;
- the two-arm config: both arms' TF under their prefixes in one tree below ``world``, and a goal to
  one arm does not move the other;
- description.launch.py and driver.launch.py together with bb_arm.yaml: active, goal succeeds;
- their arguments win over the same parameters in the config's node sections.

Under ``CI=true`` these fail (not skip) when launch or the ros2 command are not installed.
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from helpers.bringup_helpers import (
    Launched,
    environment,
    launches,
    lifecycle_state,
    ros2,
    ros2_until,
)
from helpers.launch_checks import robot_configs
from helpers.robot_files import CORPUS_DIR

from bb_robot.bringup.config import read_config
from bb_robot.bringup.demo import demo_points
from bb_robot.cli.up_inputs import plan_bringup

if TYPE_CHECKING:
    from helpers.nodes import Probe

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO_ROOT / "config"
CORPUS = CORPUS_DIR
UR3E_WORLD = CORPUS / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
#: Simulator configs → the model argument they need ("" : the file's own).
SIM_CONFIGS = {
    "bb_arm.yaml": "",
    "bb_arm_mujoco.yaml": "",
    "bb_arm_world.yaml": "",
    "bb_gripper.yaml": "",
    "bb_pan_tilt.yaml": "",
    "generic.yaml": str(REPO_ROOT / "models" / "bb_pan_tilt.urdf"),
    "worlds/ur3e_world.yaml": str(UR3E_WORLD),
}
#: Configs tested elsewhere in this module, and bb_arm_table.yaml in test_up_plan.py (bringup.launch.py
#: through bb-robot up --demo-plan: it starts away from the zero pose --demo's goal is timed from).
OTHER_CONFIGS = {"bb_arm_actuators.yaml", "bb_arm_pair.yaml", "bb_arm_table.yaml", "worlds/ur3e_world_gazebo.yaml"}
#: bb_arm_pick.yaml in test_up_pick.py (bringup.launch.py through bb-robot up --demo-pick, on mujoco and sim).
OTHER_CONFIGS |= {"bb_arm_pick.yaml"}
#: Bus configs: so101.yaml over the bus emulator in test_bus_node.py; koch_follower.yaml needs the user's
#: URDF (its driver section in test_shipped_configs.py, its bus section in test_launch.py).
OTHER_CONFIGS |= {"so101.yaml", "koch_follower.yaml"}


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[Callable[..., Launched]]:
    """``launched(*ros2_launch_args, env=None)``: ``ros2 launch bb_robot ...`` (see
    :func:`helpers.bringup_helpers.launches`)."""
    with launches(tmp_path) as start:
        yield start


def test_every_config_is_covered() -> None:
    configs = {p.relative_to(CONFIG_DIR).as_posix() for p in robot_configs()}
    assert configs == set(SIM_CONFIGS) | OTHER_CONFIGS


def _goal_yaml(config: str, model: str, namespace: str = "") -> tuple[str, list[str], list[float]]:
    """The demo goal of ``bb-robot up`` for this config, as ``ros2 action send_goal`` YAML."""
    plan = plan_bringup(model or None, config=str(CONFIG_DIR / config))
    points = demo_points(plan.demo_joints, {})
    names = [joint.name for joint in plan.demo_joints]
    trajectory = {
        "joint_names": names,
        "points": [
            {
                "positions": list(point.positions),
                "velocities": [0.0] * len(names),
                "time_from_start": {"sec": int(point.time), "nanosec": int((point.time % 1) * 1e9)},
            }
            for point in points
        ],
    }
    return json.dumps({"trajectory": trajectory}), names, list(points[-1].positions)


def _arm_and_send_goal(namespace: str, goal: str) -> str:
    driver = f"{namespace}/driver"
    ros2_until(
        ["service", "call", f"{driver}/arm", "std_srvs/srv/Trigger", "{}"],
        lambda out: "success=True" in out,
        f"{driver}/arm",
    )
    result = ros2(
        "action",
        "send_goal",
        f"{driver}/follow_joint_trajectory",
        "control_msgs/action/FollowJointTrajectory",
        goal,
        timeout=120,
    )
    return result.stdout + result.stderr


def _echo_joint_states(namespace: str = "", joint: str = "") -> str:
    """One joint state echoed by ``ros2 topic echo``; with ``joint``, one that names it (a stale
    joint is left out of joint_states while it is stale)."""
    return ros2_until(
        ["topic", "echo", "--once", "--no-daemon", f"{namespace}/joint_states", "sensor_msgs/msg/JointState"],
        lambda out: "position:" in out and joint in out,
        f"{namespace}/joint_states",
    )


@pytest.mark.parametrize("config", sorted(SIM_CONFIGS), ids=lambda c: c.replace("/", "_"))
def test_bringup_with_each_simulator_config(config: str, launched: Callable[..., Launched]) -> None:
    model = SIM_CONFIGS[config]
    if model.startswith(str(CORPUS)) and not Path(model).is_file():
        pytest.skip(f"no corpus world at {model}")
    args = [f"config:={config}"] + ([f"model:={model}"] if model else [])
    # RViz and Gazebo asked for where neither is installed: a message each, and the rest runs.
    absent = config == "bb_arm.yaml" and shutil.which("rviz2") is None and shutil.which("gz") is None
    if absent:
        args += ["rviz:=true", "gz:=true", f"world:={REPO_ROOT / 'models' / 'bb_arm_world.sdf'}"]
    run = launched("bringup.launch.py", *args)
    lifecycle_state("/driver", "active")
    if absent:
        log = run.log()
        assert "there is no rviz2 on PATH" in log and "there is no 'gz' executable on PATH" in log, log
    _echo_joint_states()
    goal, _, _ = _goal_yaml(config, model)
    output = _arm_and_send_goal("", goal)
    assert "Goal finished with status: SUCCEEDED" in output, output + run.log()


def test_description_and_driver_launch_files_together(launched: Callable[..., Launched]) -> None:
    launched("description.launch.py")
    launched("driver.launch.py")
    lifecycle_state("/driver", "active")
    goal, _, _ = _goal_yaml("bb_arm.yaml", "")
    output = _arm_and_send_goal("", goal)
    assert "Goal finished with status: SUCCEEDED" in output, output


def test_launch_arguments_override_what_the_config_sets(launched: Callable[..., Launched]) -> None:
    """An argument wins over the same parameter in the node's section of the config file (which
    ``bb_arm.yaml``, the default, sets for both): ``tip_link`` and ``robot_name``."""
    launched("description.launch.py", "tip_link:=wrist_3_link")
    launched("driver.launch.py", "robot_name:=left_arm")
    for node, parameter, value in (("/description", "tip_link", "wrist_3_link"), ("/driver", "robot_name", "left_arm")):
        ros2_until(
            ["param", "get", "--no-daemon", node, parameter],
            lambda out, value=value: f"String value is: {value}" in out,
            f"{node} {parameter} = {value}",
        )


def test_actuators_config_with_the_example_servo_bridge(launched: Callable[..., Launched], tmp_path: Path) -> None:
    launched("bringup.launch.py", "config:=bb_arm_actuators.yaml")
    bridge = Launched(
        [sys.executable, "-m", "bb_robot.examples.servo_bridge", "--ros-args", "-p", "rate:=100.0"],
        tmp_path / "bridge.log",
    )
    try:
        lifecycle_state("/driver", "active")
        echoed = _echo_joint_states(joint="shoulder_pan_joint")
        assert "shoulder_pan_joint" in echoed and "position:" in echoed
    finally:
        assert not bridge.stop(), "the servo bridge did not stop"


def test_gazebo_world_config_against_the_cpp_peer(launched: Callable[..., Launched]) -> None:
    if not UR3E_WORLD.is_file():
        pytest.skip(f"no corpus world at {UR3E_WORLD}")
    from helpers.cpp_peer import PeerUnavailable
    from helpers.sim_peer import build_sim_peer, start_sim_peer, ur3e_peer_args

    try:
        binary = build_sim_peer()
    except PeerUnavailable as error:
        pytest.skip(str(error))
    partition = f"bb_robot_bringup_{uuid.uuid4().hex[:8]}"
    peer = start_sim_peer(binary, partition, ur3e_peer_args())
    try:
        env = environment(GZ_PARTITION=partition, GZ_IP="127.0.0.1")
        launched("bringup.launch.py", "config:=worlds/ur3e_world_gazebo.yaml", f"model:={UR3E_WORLD}", env=env)
        lifecycle_state("/driver", "active")
        assert "shoulder_pan_joint" in _echo_joint_states()
    finally:
        peer.stop()


def _latest(transforms: list[Any]) -> dict[str, Any]:
    return {t.child_frame_id: t for message in transforms for t in message.transforms}


def test_two_arms_in_one_tf_tree(launched: Callable[..., Launched], probe: Probe) -> None:
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    static = probe.subscribe(TFMessage, "/tf_static", latched)
    right_states = probe.subscribe(JointState, "/right/joint_states", QoSProfile(depth=100))
    launched("bringup.launch.py", "config:=bb_arm_pair.yaml")
    settings = read_config(str(CONFIG_DIR / "bb_arm_pair.yaml"))
    assert settings.robots == ("left", "right")
    lifecycle_state("/left/driver", "active")
    lifecycle_state("/right/driver", "active")
    wanted = {"left/base_link", "right/base_link", "left/tcp", "right/tcp"}
    assert probe.spin_until(lambda: wanted <= set(_latest(static)))
    frames = _latest(static)
    for side, y in (("left", 0.4), ("right", -0.4)):
        base = frames[f"{side}/base_link"]
        assert base.header.frame_id == "world"
        assert base.transform.translation.y == pytest.approx(y)
        assert frames[f"{side}/tcp"].header.frame_id.startswith(f"{side}/")
    assert probe.spin_until(lambda: len(right_states) > 0)
    before = np.array(right_states[-1].position)
    goal, _, final = _goal_yaml("bb_arm.yaml", "")
    output = _arm_and_send_goal("/left", goal)
    assert "Goal finished with status: SUCCEEDED" in output, output
    left_now = np.array(_position_line(_echo_joint_states("/left")))
    assert np.allclose(left_now[: len(final)], final, atol=0.02)
    count = len(right_states)
    assert probe.spin_until(lambda: len(right_states) > count + 10)
    for state in right_states:
        assert np.allclose(np.array(state.position), before, atol=1e-9), "the right arm moved"


def _position_line(echoed: str) -> list[float]:
    """The position array of a ``ros2 topic echo`` JointState (block-style YAML)."""
    import yaml

    message = yaml.safe_load(echoed.split("---")[0])
    return [float(v) for v in message["position"]]


def test_the_view_shows_the_drivers_collision_world(launched: Callable[..., Launched], tmp_path: Path) -> None:
    """bringup.launch.py hands the driver's collision.world to the view: both read the same obstacles."""
    import yaml

    world = tmp_path / "cell.yaml"
    world.write_text("obstacles:\n  - {name: post, xyz: [0.6, 0.0, 0.3], box: [0.1, 0.1, 0.6]}\nfloor: -0.01\n")
    data = yaml.safe_load((CONFIG_DIR / "bb_arm.yaml").read_text())
    data["/**/driver"]["ros__parameters"].setdefault("collision", {})["world"] = str(world)
    config = tmp_path / "bb_arm_cell.yaml"
    config.write_text(yaml.safe_dump(data))
    run = launched("bringup.launch.py", f"config:={config}", "view:=true", "view_port:=0")
    lifecycle_state("/driver", "active")
    run.wait_for_log(f"collision world {world}: 2 obstacle parts")  # the driver's
    run.wait_for_log(f"showing collision.world {world}: 2 obstacle parts on /collision_world")  # the view's

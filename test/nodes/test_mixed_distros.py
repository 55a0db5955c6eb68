"""A mixed graph: a ROS 2 Kilted driver with a Jazzy client, and a Jazzy driver with a Kilted client.

Both venvs of ``scripts/setup`` (``.venv`` and ``.venv-jazzy``) on one ROS domain: the driver runs
with one distribution's python, ``mixed_distro_client.py`` with the other's (their environments
through ``helpers.ros_distro.venv_environment``, which drops the other venv's bootstrap guard and
library path).  The client reads joint states, sends a command, and sends a FollowJointTrajectory
goal.  Every interface involved has the same type hash in both distributions except the
FollowJointTrajectory feedback (control_msgs 5.x in Jazzy has no ``index`` fields; see
interfaces/control_msgs/README.md): the test asserts which of these reach the other side, and
docs/distributions.md says the same.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.nodes import TIMEOUT, NodeProcess
from helpers.ros_distro import venv_environment, venv_python

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("mixed_distro_client.py")
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
JOINT = "shoulder_pan_joint"
#: The client's goal has four points this far apart in time (mixed_distro_client.py).
POINT_SPACING = 0.5


def _type_hash(distro: str, package: str, interface: str, type_name: str) -> str:
    description = venv_python(distro).parents[1] / "share" / package / f"{interface}.json"
    hashes = json.loads(description.read_text(encoding="utf-8"))["type_hashes"]
    return str(next(h["hash_string"] for h in hashes if h["type_name"] == type_name))


def _needs(distro: str) -> None:
    if not venv_python(distro).is_file():
        name = venv_python(distro).parents[1].name
        pytest.skip(f"no {name} (the ROS 2 {distro} venv): run ROS_DISTRO={distro} scripts/setup")


def run_client(distro: str, driver: NodeProcess) -> dict[str, Any]:
    command = [str(venv_python(distro)), str(CLIENT), driver.name, driver.namespace, JOINT, "0.3", "-0.2", "20"]
    done = subprocess.run(
        command, env=venv_environment(distro), capture_output=True, text=True, timeout=4 * TIMEOUT, check=False
    )
    assert done.returncode == 0, f"the {distro} client failed:\n{done.stdout}\n{done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize(("driver_distro", "client_distro"), [("kilted", "jazzy"), ("jazzy", "kilted")])
def test_driver_and_client_of_different_distributions(driver_distro: str, client_distro: str, start_node: Any) -> None:
    _needs(driver_distro)
    _needs(client_distro)
    driver = start_node(
        {
            "model": str(BB_ARM),
            "autostart": True,
            "auto_arm": True,
            "command_timeout": 0.0,
            "allow_partial_joints_goal": True,
            "action_monitor_rate": 20.0,
        },
        module="bb_robot.nodes.driver",
        node="driver",
        python=str(venv_python(driver_distro)),
        environment=venv_environment(driver_distro),
    )
    driver.wait_for_log("active: control loop")
    report = run_client(client_distro, driver)
    assert Path(report["rclpy"]).is_relative_to(venv_python(client_distro).parents[1]), report["rclpy"]
    # Same hashes: joint states, commands, the goal and its result cross between the distributions.
    joint_state = _type_hash(driver_distro, "sensor_msgs", "msg/JointState", "sensor_msgs/msg/JointState")
    assert report["joint_state_hash"] == joint_state
    assert report["joint_states"] and report["command_reached"], report
    assert report["action_server"] and report["goal_accepted"], report
    assert report.get("result_status") == 4 and report.get("error_code") == 0, report
    assert report["goal_reached"], report
    # The feedback: different hashes, different layouts (Kilted's has int32 index after `error`
    # and int32 multi_dof_index at the end). DDS matches the topic by type name, so the bytes arrive.
    feedback_type = "control_msgs/action/FollowJointTrajectory_Feedback"
    driver_hash = _type_hash(driver_distro, "control_msgs", "action/FollowJointTrajectory", feedback_type)
    assert report["feedback_hash"] != driver_hash
    feedback = report["feedback"]
    if driver_distro == "jazzy":
        # Jazzy's feedback is 8 bytes shorter than a Kilted reader needs: none of it decodes.
        assert feedback == []
        return
    # A Jazzy reader of Kilted's feedback reads `index` as the length of multi_dof_joint_names:
    # the fields up to `error` are right, multi_dof_joint_names holds `index` empty strings, and
    # from index 3 on (the fourth point, 1.5 s in) the message is too short for what it announces
    # and is dropped.
    assert feedback, "no feedback reached the Jazzy client at all"
    assert all(f["joint_names"] == [JOINT] for f in feedback)
    assert max(f["multi_dof_joint_names"] for f in feedback) <= 2
    assert max(f["t"] for f in feedback) < 1.5 + 0.1
    for f in feedback:
        index = int(f["t"] // POINT_SPACING)  # the point being approached
        if abs(f["t"] - round(f["t"] / POINT_SPACING) * POINT_SPACING) > 0.02:  # not at a point's time
            assert f["multi_dof_joint_names"] == index, f
    assert any(f["multi_dof_joint_names"] > 0 for f in feedback), "no feedback past the first point"

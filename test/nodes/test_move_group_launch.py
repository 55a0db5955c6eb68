"""The move_group node as ``ros2 launch bb_robot bringup.launch.py`` starts it, used through the real
``ros2`` command as a MoveIt user would from a shell: ``ros2 service call /compute_ik`` and
``ros2 action send_goal /move_action`` (moveit_msgs as the command finds it in the ament index),
and ``planning:=false`` leaving the node out.  Every process is checked gone afterwards.

Under ``CI=true`` these fail (not skip) when launch or the ros2 command are not installed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.bringup_helpers import Launched, launches, lifecycle_state, ros2, ros2_until
from helpers.collision_robots import BUNDLED_ARM

from bb_robot.loading import load_file
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.transforms import matrix_to_quaternion

pytest.importorskip("moveit_msgs", reason="moveit_msgs is not built: run scripts/setup")

#: The arm's joints of a reachable, collision-free configuration (the node test's joint goal).
GOAL = {"shoulder_pan_joint": 0.5, "shoulder_lift_joint": 0.6, "elbow_joint": 0.9}
#: ``name=[...], position=[...]`` of the JointState in ``ros2 service call``'s printed response.
_JOINT_STATE = re.compile(r"name=\[([^\]]*)\], position=(?:array\('d', )?\[([^\]]*)\]")


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[Callable[..., Launched]]:
    """``launched(*ros2_launch_args, env=None)``: ``ros2 launch bb_robot ...`` (see
    :func:`helpers.bringup_helpers.launches`)."""
    with launches(tmp_path) as start:
        yield start


def _tcp(fk: ForwardKinematics, values: dict[str, float]) -> np.ndarray:
    q = np.array([values.get(name, 0.0) for name in fk.joint_names])
    return np.asarray(fk.compute(q)[fk.link_names.index("tcp")])


def _flow(values: dict[str, float]) -> str:
    return ", ".join(f"{{joint_name: {n}, position: {v}, weight: 1.0}}" for n, v in values.items())


def test_ros2_cli_calls_compute_ik_and_sends_move_action(launched: Callable[..., Launched]) -> None:
    run = launched("bringup.launch.py")
    lifecycle_state("/driver", "active")
    fk = ForwardKinematics(load_file(str(BUNDLED_ARM)).robot)
    target = _tcp(fk, GOAL)
    x, y, z, w = (float(v) for v in matrix_to_quaternion(target[:3, :3]))
    px, py, pz = (float(v) for v in target[:3, 3])
    request = (
        "{ik_request: {group_name: arm, avoid_collisions: true, pose_stamped: {header: {frame_id: base_link}, "
        f"pose: {{position: {{x: {px!r}, y: {py!r}, z: {pz!r}}}, "
        f"orientation: {{x: {x!r}, y: {y!r}, z: {z!r}, w: {w!r}}}}}}}}}}}"
    )
    answer = ros2_until(
        ["service", "call", "/compute_ik", "moveit_msgs/srv/GetPositionIK", request],
        # Until move_group has built its planner from robot_description it refuses with "not known yet".
        lambda out: "error_code=moveit_msgs.msg.MoveItErrorCodes(val=" in out and "not known yet" not in out,
        "/compute_ik answered for a known robot",
    )
    assert "MoveItErrorCodes(val=1" in answer, answer + run.log()
    found = _JOINT_STATE.search(answer, answer.index("response:"))
    assert found, answer
    names = [n.strip().strip("'") for n in found.group(1).split(",")]
    positions = [float(v) for v in found.group(2).split(",")]
    assert np.allclose(_tcp(fk, dict(zip(names, positions, strict=True))), target, atol=1e-4)

    ros2_until(
        ["service", "call", "/driver/arm", "std_srvs/srv/Trigger", "{}"], lambda out: "success=True" in out, "arm"
    )
    goal = (
        "{request: {group_name: arm, allowed_planning_time: 10.0, start_state: {is_diff: true}, "
        f"goal_constraints: [{{joint_constraints: [{_flow(GOAL)}]}}]}}}}"
    )
    sent = ros2("action", "send_goal", "/move_action", "moveit_msgs/action/MoveGroup", goal, timeout=120)
    output = sent.stdout + sent.stderr
    assert "Goal finished with status: SUCCEEDED" in output, output + run.log()
    state = ros2_until(
        ["topic", "echo", "--once", "--no-daemon", "/joint_states", "sensor_msgs/msg/JointState"],
        lambda out: "position:" in out,
        "/joint_states",
    )
    echoed = re.search(r"name:\n((?:- .*\n)+)position:\n((?:- .*\n)+)", state)
    assert echoed, state
    now = dict(
        zip(
            [n[2:].strip() for n in echoed.group(1).splitlines()],
            [float(v[2:]) for v in echoed.group(2).splitlines()],
            strict=True,
        )
    )
    assert all(abs(now[n] - v) < 0.01 for n, v in GOAL.items()), (now, output)


def test_planning_false_leaves_the_node_out(launched: Callable[..., Launched]) -> None:
    launched("bringup.launch.py", "planning:=false")
    lifecycle_state("/driver", "active")
    nodes = ros2_until(["node", "list", "--no-daemon"], lambda out: "/driver" in out, "/driver in the node list")
    assert "/move_group" not in nodes.split(), nodes

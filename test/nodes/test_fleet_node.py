"""Several arms in one process (bb_robot.nodes.fleet) over real DDS.

The fleet runs as a child process with two arms; this process checks that each arm is a
complete robot of its own: its joint states and its /tf frames under its own prefix, a position
command to one arm moves that arm and not the other, SIGINT ends the process cleanly.  Also: an
arm that cannot start names itself and exits 1, and a bad command line exits 2.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.nodes import TIMEOUT, NodeProcess, Probe

from bb_robot.driver.commands.limits import from_robot
from bb_robot.driver.model import driven_joints
from bb_robot.urdf.builder import load_urdf

pytest.importorskip("tf2_msgs", reason="tf2_msgs is not built: run scripts/setup")
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
JOINTS = driven_joints(load_urdf(BB_ARM))
LIMITS = from_robot(load_urdf(BB_ARM), JOINTS)
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
SAS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)


def _fleet(tmp_path: Path, arms: int, parameters: dict[str, Any], name: str) -> NodeProcess:
    return NodeProcess(
        f"/{name}",
        parameters,
        tmp_path,
        module="bb_robot.nodes.fleet",
        node="fleet",
        program_args=("--arms", str(arms), "--name", name),
        remap_namespace=False,
    )


def _positions(state: JointState) -> np.ndarray:
    index = {n: i for i, n in enumerate(state.name)}
    return np.array([state.position[index[j]] for j in JOINTS])


def test_two_arms_in_one_process_are_two_robots(tmp_path: Path, probe: Probe) -> None:
    name = f"t{uuid.uuid4().hex[:8]}_arm"
    parameters = {
        "model": str(BB_ARM),
        "model_dirs": [str(BB_ARM.parent)],  # the description node loads files from these only
        "autostart": True,
        "auto_arm": True,
        "command_timeout": 0.0,
    }
    fleet = _fleet(tmp_path, 2, parameters, name)
    try:
        states = [probe.subscribe(JointState, f"/{name}{i}/joint_states", RELIABLE) for i in range(2)]
        tf = probe.subscribe(TFMessage, "/tf", RELIABLE)

        def frames(arm: int) -> set[str]:
            prefix = f"{name}{arm}/"
            return {t.child_frame_id for m in list(tf) for t in m.transforms if t.child_frame_id.startswith(prefix)}

        assert probe.spin_until(lambda: all(states) and frames(0) and frames(1), TIMEOUT), fleet.log()
        # Each arm's /tf covers its own links, under its own prefix.
        assert {f.split("/", 1)[1] for f in frames(0)} == {f.split("/", 1)[1] for f in frames(1)}
        start = [_positions(s[-1]) for s in states]
        since = len(states[0]) - 1  # arm 0's states from the start pose on

        lower, upper = LIMITS.command_lower, LIMITS.command_upper
        # 60 % of each range: at 70 % the gripper is in the first wrist link, where the driver's
        # collision check (on by default) stops it short (docs/collision.md).
        goal = np.array(
            [0.4 * lo + 0.6 * hi if np.isfinite(lo + hi) else 0.5 for lo, hi in zip(lower, upper, strict=True)]
        )
        publisher = probe.node.create_publisher(Float64MultiArray, f"/{name}1/bb_arm/set/target_joint_positions", SAS)
        probe.wait_for_subscribers(publisher)
        publisher.publish(Float64MultiArray(data=goal.tolist()))
        assert probe.spin_until(lambda: np.abs(_positions(states[1][-1]) - goal).max() < 1e-3, TIMEOUT), (
            f"arm 1 did not reach {goal.tolist()}: {_positions(states[1][-1]).tolist()}\n{fleet.log()}"
        )
        # Arm 0 stays where it was, in every state it published meanwhile and in the next 30 (counted at
        # its own rate, not on the test's clock).
        reached = len(states[0])
        assert probe.spin_until(lambda: len(states[0]) >= reached + 30, TIMEOUT), fleet.log()
        for state in states[0][since:]:
            np.testing.assert_allclose(_positions(state), start[0], atol=1e-9, err_msg="arm 0 moved")
    finally:
        status = fleet.stop()
    assert status == 0, fleet.log()
    assert "Traceback" not in fleet.log()


def test_an_arm_that_cannot_start_is_named(tmp_path: Path) -> None:
    parameters = {"model": str(tmp_path / "missing.urdf"), "model_dirs": [str(tmp_path)]}
    fleet = _fleet(tmp_path, 2, parameters, f"t{uuid.uuid4().hex[:8]}_arm")
    assert fleet.wait_for_exit() == 1
    assert "arm0 cannot start" in fleet.log() and "missing.urdf" in fleet.log()


@pytest.mark.parametrize("arms", ["0", "65", "two"])
def test_a_bad_number_of_arms(tmp_path: Path, arms: str) -> None:
    fleet = NodeProcess("/bad", {}, tmp_path, module="bb_robot.nodes.fleet", program_args=("--arms", arms))
    assert fleet.wait_for_exit() == 2
    assert "--arms" in fleet.log()

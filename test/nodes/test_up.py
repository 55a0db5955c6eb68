"""``bb-robot up`` end to end, as real processes: the command (from this source tree) starts the real
launch system, which starts the installed nodes; this test process is the separate observer.

- ``up --demo --duration N --picture p.png``: exit 0, the goal succeeded, /tf (seen here) reaches the
  demo's final pose as forward kinematics computes it, the PNG is a valid image, and every process
  below the command has exited (by pid);
- SIGTERM to the command, or Ctrl-C to its process group: a clean shutdown, exit 0, nothing left;
- a stage that cannot complete: exit 1 naming the stage and why, nothing left;
- bad input (a missing model, an SDF world with two candidate models and no --scope, an unknown
  backend, a parameter file for another robot): exit 1 with a message naming it, no process started.

Under ``CI=true`` these fail (not skip) when launch is not installed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from helpers.bringup_helpers import REPO_ROOT, Launched, environment, require_launch, up_command

from bb_robot.bringup.demo import demo_points
from bb_robot.cli.up_inputs import plan_bringup
from bb_robot.model.kinematics import ForwardKinematics

if TYPE_CHECKING:
    from helpers.nodes import Probe

TWO_ARM_WORLD = """<?xml version="1.0"?>
<sdf version="1.9">
  <world name="two">
    <model name="arm_a">
      <link name="base"/>
      <link name="l1"><pose>0 0 0.1 0 0 0</pose></link>
      <joint name="j1" type="revolute"><parent>base</parent><child>l1</child>
        <axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
    </model>
    <model name="arm_b">
      <pose>1 0 0 0 0 0</pose>
      <link name="base"/>
      <link name="l1"><pose>0 0 0.1 0 0 0</pose></link>
      <joint name="j1" type="revolute"><parent>base</parent><child>l1</child>
        <axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
    </model>
  </world>
</sdf>
"""


def _transform_matrix(t: Any) -> np.ndarray:
    """A geometry_msgs/Transform as a 4x4 matrix (the textbook unit-quaternion formula, written here)."""
    x, y, z, w = t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w
    matrix = np.eye(4)
    matrix[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    matrix[:3, 3] = (t.translation.x, t.translation.y, t.translation.z)
    return matrix


def test_up_demo_duration_picture_end_to_end(probe: Probe, tmp_path: Path) -> None:
    require_launch()
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    latest: dict[str, Any] = {}

    def on_tf(message: Any) -> None:
        for transform in message.transforms:
            latest[transform.child_frame_id] = transform

    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    probe.node.create_subscription(TFMessage, "/tf", on_tf, qos)
    picture = tmp_path / "p.png"
    command = up_command("--demo", "--duration", "2", "--picture", str(picture), "--timeout", "90")
    run = Launched(command, tmp_path / "up.log")

    # The observer: spin while the command runs (it exits by itself after the demo and 2 s),
    # noting every process below it.
    def ended() -> bool:
        run.watch()
        return run.process.poll() is not None

    assert probe.spin_until(ended, timeout=240), run.log()
    run.watch()
    status = run.wait()
    output = run.log()
    assert status == 0, output
    for stage in ("robot_description published", "driver configured", "driver active", "driver armed"):
        assert stage in output
    assert "demo goal succeeded" in output
    assert f"picture of the final pose: {picture}" in output
    assert len(run.seen) >= 4, f"expected the launch and its two nodes below the command: {run.seen}"
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"

    # The demo's final pose, from the zero pose the simulator starts in, through forward kinematics.
    plan = plan_bringup(None)
    final = dict(zip([j.name for j in plan.demo_joints], demo_points(plan.demo_joints, {})[-1].positions, strict=True))
    poses = ForwardKinematics(plan.robot).poses(final)
    moving = [j for j in plan.robot.joints_in_order() if j.type in ("revolute", "continuous", "prismatic")]
    for joint in moving:
        assert joint.child_link in latest, f"no /tf for {joint.child_link}"
        seen = latest[joint.child_link]
        assert seen.header.frame_id == joint.parent_link
        expected = np.linalg.inv(poses[joint.parent_link]) @ poses[joint.child_link]
        assert np.allclose(_transform_matrix(seen.transform), expected, atol=0.02), joint.name

    from matplotlib import image

    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = image.imread(picture)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert float(pixels[..., :3].std()) > 0.01, "the picture is blank"


def test_up_demo_on_mujoco_physics_succeeds_with_the_default_gains(tmp_path: Path) -> None:
    """``bb-robot up --backend mujoco --demo``: the bundled arm with mass and gravity follows the demo goal."""
    require_launch()
    run = Launched(up_command("--backend", "mujoco", "--demo", "--timeout", "90"), tmp_path / "up.log")
    status = run.wait(timeout=240)
    output = run.log()
    assert status == 0, output
    assert "backend mujoco" in output and "demo goal succeeded" in output
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_up_shuts_down_cleanly_on_a_signal(how: str, tmp_path: Path) -> None:
    require_launch()
    run = Launched(up_command("--timeout", "90"), tmp_path / "up.log")
    run.wait_for_log("driver active", timeout=120)
    run.wait_for_log("joint_states", timeout=60)  # the plain status lines have started
    run.watch()
    if how == "sigterm":
        run.interrupt(signal.SIGTERM, group=False)
    else:
        run.interrupt(signal.SIGINT, group=True)
    status = run.wait(90)
    assert status == 0, run.log()
    assert "interrupted: shutting down" in run.log()
    assert len(run.seen) >= 4
    assert run.alive() == [], f"processes left running: {run.alive()}\n{run.log()}"


def test_a_stage_that_does_not_complete_is_named(tmp_path: Path) -> None:
    """The actuators config with no servo bridge: the driver cannot configure (no feedback)."""
    require_launch()
    run = Launched(up_command("--config", "bb_arm_actuators.yaml", "--timeout", "40"), tmp_path / "up.log")
    status = run.wait(180)
    output = run.log()
    assert status == 1, output
    assert "the system did not come up: driver /driver still" in output
    assert "not configured" in output
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"


def test_a_robot_move_group_cannot_plan_for_still_comes_up(tmp_path: Path) -> None:
    """The gripper alone has no chain to plan along: the move_group node says so, up warns and the
    rest comes up (the node is an extra, not a stage that fails the bringup)."""
    require_launch()
    run = Launched(up_command("--config", "bb_gripper.yaml", "--duration", "0"), tmp_path / "up.log")
    status = run.wait(180)
    output = run.log()
    assert status == 0, output
    assert "move_group cannot plan for this robot" in output and "has no movable joint" in output, output
    assert "driver active" in output
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"


@pytest.mark.parametrize(
    "args, message",
    [
        (["/nonexistent/robot.urdf"], "/nonexistent/robot.urdf: no such model file"),
        (["{world}"], "2 models qualify"),
        (["--backend", "warp"], "unknown backend 'warp' (known: "),
        ([str(REPO_ROOT / "models" / "bb_pan_tilt.urdf"), "--config", "bb_arm.yaml"], "is for another robot"),
    ],
    ids=["missing-model", "two-candidates", "unknown-backend", "other-robot-config"],
)
def test_bad_input_exits_1_and_starts_nothing(args: list[str], message: str, tmp_path: Path) -> None:
    world = tmp_path / "two.sdf"
    world.write_text(TWO_ARM_WORLD)
    command = up_command(*[a.replace("{world}", str(world)) for a in args])
    run = Launched(command, tmp_path / "up.log")
    status = run.wait(120)
    output = run.log()
    assert status == 1, output
    assert message in output
    assert "bb-robot: error:" in output
    assert run.alive() == []
    assert len(run.seen) == 1, f"bad input started processes: {run.seen}"


def test_usage_errors_exit_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bb_robot.cli", "up", "--duration", "-1"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=environment(),
        timeout=120,
    )
    assert result.returncode == 2
    assert "--duration" in result.stderr

"""``bb-robot up --demo-plan`` end to end, on the simulator and on MuJoCo physics: the real launch, the
driver, the move_group node planning around the post of ``models/bb_arm_table.yaml``, and this
process as the observer.

The command's own verdict (exit 0) and the figures it prints are checked against the limits, and
the final pose is checked again here, independently of its judge: the tool of the last joint state
this process received (forward kinematics of the model) must be at the goal the command printed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from helpers.bringup_helpers import require_launch, up_recording_joint_states

from bb_robot.cli.up_inputs import plan_bringup
from bb_robot.cli.up_plan import DEMO_CONFIG
from bb_robot.model.kinematics import ForwardKinematics

if TYPE_CHECKING:
    from helpers.nodes import Probe

#: The stages the command prints, in order, each with its time.
STAGES = (
    "driver armed",
    "move_group ready",
    "pose goal behind the post (move_action)",
    "move_action: PLANNING",
    "move_action: MONITOR",
    "move_action succeeded: planned in",
    "arm settled",
    "plan demo succeeded",
)
VERDICT = re.compile(
    r"plan demo succeeded: tool ([0-9.]+) mm and ([0-9.]+) mrad from the goal .*closest to the post ([0-9.]+) mm"
)
GOAL = re.compile(r"tcp at \(([-0-9.]+), ([-0-9.]+), ([-0-9.]+)\) m in base_link")


@pytest.mark.parametrize("backend", ["sim", "mujoco"])
def test_up_demo_plan_reaches_the_pose_behind_the_post(backend: str, probe: Probe, tmp_path: Path) -> None:
    require_launch()
    status, output, states = up_recording_joint_states(
        probe, ["--demo-plan", "--backend", backend, "--timeout", "90"], tmp_path / "up.log"
    )
    assert status == 0, output
    assert f"parameter file {DEMO_CONFIG}, backend {backend}" in output

    # Each stage printed with its time, in order.
    times = []
    for stage in STAGES:
        found = re.search(r"\[\s*([0-9.]+) s\] (?:/\S+ )?" + re.escape(stage), output)
        assert found, f"no stage '{stage}'\n{output}"
        times.append(float(found.group(1)))
    assert times == sorted(times), list(zip(STAGES, times, strict=True))

    # The judged figures, within the limits.
    verdict = VERDICT.search(output)
    assert verdict, output
    position_mm, angle_mrad, clearance_mm = (float(v) for v in verdict.groups())
    assert position_mm <= 1.0 and angle_mrad <= 1.0 and clearance_mm >= 10.0, verdict.group(0)

    # Independently: the tool of the last joint state seen here is at the goal the command printed.
    goal = GOAL.search(output)
    assert goal, output
    target = np.array([float(v) for v in goal.groups()])
    robot = plan_bringup(None, config=DEMO_CONFIG).robot
    last = states[-1]
    values = {
        name: value for name, value in zip(last.name, last.position, strict=True) if robot.joints[name].mimic is None
    }
    tool = ForwardKinematics(robot).poses(values)["tcp"]
    assert np.linalg.norm(tool[:3, 3] - target) <= 1.5e-3, (tool[:3, 3], target)  # the print rounds to 0.5 mm
    np.testing.assert_allclose(tool[:3, 2], [0.0, 0.0, -1.0], atol=1e-3)  # pointing down

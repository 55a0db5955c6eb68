"""``bb-robot up --demo-plan``'s pure parts, in process: the shipped world, the goal behind the post,
the judge, and what the planner and the launch take from the parameter file.

The judge is checked against configurations whose answer is known without it: the start pose of
``config/bb_arm_table.yaml`` (the tool in front of the post), the goal reached by inverse
kinematics, and configurations along the straight joint path from one to the other, which passes
through the post (so that the demo needs the planner at all).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from bb_robot.bringup.config import read_config
from bb_robot.cli.up_inputs import UpError, plan_bringup
from bb_robot.cli.up_plan import (
    CLEARANCE,
    DEMO_CONFIG,
    PlanSetup,
    code_name,
    goal_behind,
    plan_setup,
    post_parts,
    rotation_angle,
)
from bb_robot.collision.errors import WorldError
from bb_robot.collision.scene import Scene
from bb_robot.collision.sources import checked_model
from bb_robot.collision.world import model_world, world_path
from bb_robot.planning.goals import PoseGoal
from bb_robot.planning.plan import plan

REPO = Path(__file__).resolve().parents[2]
START = [0.0, -0.244, 1.953, 1.433, 1.571, 0.0, 0.0]  # config/bb_arm_table.yaml's initial_positions


@pytest.fixture(scope="module")
def setup() -> PlanSetup:
    return plan_setup(plan_bringup(None, config=DEMO_CONFIG))


def _state(setup: PlanSetup, arm: np.ndarray | list[float]) -> tuple[tuple[str, ...], list[float]]:
    names = setup.judge.names
    values = dict(zip(setup.chain.joint_names, arm, strict=False))
    return names, [float(values.get(name, 0.0)) for name in names]


def test_the_shipped_config_names_the_world_the_start_and_the_planners_clearance() -> None:
    config = read_config(DEMO_CONFIG)
    assert config.collision_world == "package://bb_robot/models/bb_arm_table.yaml"
    assert config.move_group == {"collision.clearance": 0.02}  # flattened, as the launch passes it
    assert read_config("bb_arm.yaml").move_group == {}
    text = (REPO / "config" / DEMO_CONFIG).read_text()
    assert text.count(f"initial_positions: {START}".replace("'", "")) == 2  # sim and mujoco start alike


def test_a_world_uri_resolves_to_the_shipped_file_and_a_missing_one_is_named() -> None:
    assert (
        Path(world_path("package://bb_robot/models/bb_arm_table.yaml")).read_text()
        == (REPO / "models" / "bb_arm_table.yaml").read_text()
    )
    assert world_path("relative/world.yaml") == "relative/world.yaml"  # a path stays as given
    with pytest.raises(WorldError, match="package://bb_robot/models/none.yaml: no such file"):
        world_path("package://bb_robot/models/none.yaml")


def test_the_goal_is_behind_the_post_seen_from_the_base_pointing_down(setup: PlanSetup) -> None:
    post = post_parts(setup.judge.model.obstacles)
    points = np.concatenate([part.points for part in post])
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    np.testing.assert_allclose(centre[:2], [0.45, 0.0], atol=1e-9)  # models/bb_arm_table.yaml
    goal = setup.goal
    np.testing.assert_allclose(goal[:3, 3], [0.6, 0.0, 0.25], atol=1e-9)
    np.testing.assert_allclose(goal[:3, 2], [0.0, 0.0, -1.0], atol=1e-12)
    assert abs(np.linalg.det(goal[:3, :3]) - 1.0) < 1e-12
    with pytest.raises(UpError, match="no obstacle named 'post'"):
        goal_behind(())


def test_a_config_without_a_world_is_refused_before_anything_starts() -> None:
    with pytest.raises(UpError, match="gives the driver no collision.world"):
        plan_setup(plan_bringup(None, config="bb_arm.yaml"))


def test_the_judge_passes_the_goal_and_fails_a_miss_or_a_brush_with_the_post(setup: PlanSetup) -> None:
    solution = setup.chain.inverse(setup.goal, seed=np.array(START[:6]), timeout=None, max_restarts=100, rng=0)
    assert solution.success
    start = np.array(START[:6])
    judge = setup.judge
    assert judge.add(*_state(setup, start)) > 0.1  # the tool starts 10+ cm in front of the post
    ok, text = judge.verdict(*_state(setup, solution.q))
    assert ok, text
    position, angle = judge.tool_error(*_state(setup, solution.q))
    assert position < 1e-4 and angle < 1e-4
    # 2 mm off: not reached
    missed = setup.chain.inverse(
        setup.goal @ _translation(0.0, 0.0, 0.002), seed=solution.q, timeout=None, max_restarts=100, rng=0
    )
    ok, text = judge.verdict(*_state(setup, missed.q))
    assert not ok and "the tool did not reach the goal" in text
    assert re.search(r"tool (1\.99\d|2\.00\d) mm and 0\.0\d\d mrad from the goal", text), text
    # the straight joint path from the start to the goal goes through the post
    distances = [judge.add(*_state(setup, start + (solution.q - start) * t)) for t in np.linspace(0, 1, 41)]
    assert min(distances) <= 0.0
    assert judge.nearest.distance == min(distances) and judge.nearest.states == 42
    assert judge.nearest.link and not judge.nearest.link.startswith("world/")
    ok, text = judge.verdict(*_state(setup, solution.q))
    assert not ok and f"the arm came within {CLEARANCE * 1000:g} mm of the post" in text


def _translation(x: float, y: float, z: float) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, 3] = (x, y, z)
    return matrix


def test_rotation_angle_and_error_code_names() -> None:
    turn = np.eye(4)
    turn[:3, :3] = [[math.cos(0.3), -math.sin(0.3), 0], [math.sin(0.3), math.cos(0.3), 0], [0, 0, 1]]
    assert rotation_angle(np.eye(4), turn) == pytest.approx(0.3)
    assert code_name(1) == "SUCCESS" and code_name(-4) == "CONTROL_FAILED" and code_name(None) == "no result"
    assert code_name(12345) == "12345"


def test_plans_stay_inside_the_soft_limits_the_driver_stops_at() -> None:
    """The goal behind the post has solutions with shoulder_pan at ±π, beyond its soft limit ±3.1
    (``<safety_controller>``): the driver stops there, so no plan may end there (it did, and the
    execution failed 0.04 rad short)."""
    plan_ = plan_bringup(None, config=DEMO_CONFIG)
    assert plan_.loaded is not None
    model, _ = checked_model(plan_.loaded, plan_.model_dirs)
    scene = Scene(model, model_world(plan_.loaded, plan_.config.collision_world, plan_.model_dirs))
    goal = goal_behind(post_parts(scene.world.parts))
    soft = plan_.robot.joints["shoulder_pan_joint"].limits
    assert soft is not None and soft.soft_upper == 3.1
    for seed in range(4):
        result = plan(scene, dict(zip(model.fk.joint_names, START, strict=True)), PoseGoal("tcp", goal, 1e-4, 1e-4),
                      seed=seed, timeout=10.0, clearance=0.02)  # fmt: skip
        assert result.success, result.error
        pan = result.trajectory.positions[:, result.joints.index("shoulder_pan_joint")]
        assert np.abs(pan).max() <= 3.1 + 1e-9, seed

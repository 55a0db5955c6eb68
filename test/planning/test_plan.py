"""The planning core on the bundled arm: validity against the exact model, RRT-Connect, shortcuts, plan()'s
errors and repeatability, and pose goals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM

from bb_robot.collision.matrix import joint_bounds
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.path import check_path
from bb_robot.collision.scene import Scene
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import read_srdf
from bb_robot.loading import load_file
from bb_robot.model.geometry import Box
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.planning.errors import GoalInCollision, InvalidRequest, NoIkSolution, StartInCollision
from bb_robot.planning.goals import PoseGoal
from bb_robot.planning.plan import default_joints, default_tip, plan
from bb_robot.planning.rrt import Tree, rrt_connect
from bb_robot.planning.shortcut import drop_vertices, merge_collinear, path_length, simplify
from bb_robot.planning.validity import MIN_CLEARANCE, StateChecker

pytest.importorskip("coal")
ARM = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")
START = {"shoulder_lift_joint": -1.2, "elbow_joint": 1.2}
GOAL = {"shoulder_pan_joint": 2.6, "shoulder_lift_joint": -1.2, "elbow_joint": 1.2}
#: Seconds a plan() may take: only a limit against a hang, so that its answer does not depend on
#: the host's speed (the search and the shortcuts are bounded by their own counts; the default 1 s
#: could cut them short on a slow, busy host).
LIMIT = 30.0


def arm_scene(post: bool = True) -> Scene:
    """The bundled arm with its matrix, and a post beside it that the straight motion of GOAL hits."""
    loaded = load_file(str(BUNDLED_ARM))
    parts = robot_parts(loaded.robot, loaded.source)
    model = CollisionModel(
        loaded.robot, parts, read_srdf(BUNDLED_ARM.with_suffix(".srdf"), loaded.robot.links).disabled
    )
    scene = Scene(model)
    if post:
        pose = np.eye(4)
        pose[:3, 3] = (0.0, -0.37, 0.5)
        scene.add_object("post", [(Box((0.12, 0.12, 1.0)), np.eye(4))], pose)
    return scene


def start_vector(scene: Scene, values: dict[str, float]) -> np.ndarray:
    names = scene.model.fk.joint_names
    return np.array([values.get(n, 0.0) for n in names])


@pytest.fixture(scope="module")
def scene() -> Scene:
    return arm_scene()


def test_the_checker_never_accepts_what_the_exact_model_refuses(scene: Scene) -> None:
    checker = StateChecker(scene, ARM, start_vector(scene, START))
    lower, upper = joint_bounds(scene.model.robot, ARM)
    rng = np.random.default_rng(2)
    accepted = refused = 0
    for x in rng.uniform(lower, upper, size=(400, len(ARM))):
        q = checker.full(x)
        nearest = scene.model.nearest(q)
        if checker.valid(x):
            accepted += 1
            assert nearest is None or nearest.distance >= MIN_CLEARANCE, x.tolist()
        else:
            refused += 1
            assert nearest is not None and nearest.distance < MIN_CLEARANCE, x.tolist()
    assert accepted > 50 and refused > 20  # both verdicts happen


def test_an_accepted_edge_passes_the_exact_path_check(scene: Scene) -> None:
    """Continuous: check_path (conservative advancement) agrees with every edge the checker accepts."""
    clearance = 0.01
    checker = StateChecker(scene, ARM, start_vector(scene, START), clearance=clearance)
    lower, upper = joint_bounds(scene.model.robot, ARM)
    rng = np.random.default_rng(3)
    valid = [x for x in rng.uniform(lower, upper, size=(200, len(ARM))) if checker.valid(x)]
    accepted = 0
    for a, b in zip(valid[:-1], valid[1:], strict=True):
        b = a + (b - a) * 0.3
        if checker.edge_valid(a, b):
            accepted += 1
            assert check_path(scene.model, np.vstack([checker.full(a), checker.full(b)]), clearance).ok
    assert accepted > 10


def test_an_edge_through_the_post_is_refused(scene: Scene) -> None:
    checker = StateChecker(scene, ARM, start_vector(scene, START))
    a, b = start_vector(scene, START)[:6], start_vector(scene, GOAL)[:6]
    assert checker.valid(a) and checker.valid(b)
    assert not checker.edge_valid(a, b)


def test_rrt_connect_finds_a_valid_path_and_shortcuts_keep_it_valid(scene: Scene) -> None:
    checker = StateChecker(scene, ARM, start_vector(scene, START))
    lower, upper = joint_bounds(scene.model.robot, ARM)
    a, b = start_vector(scene, START)[:6], start_vector(scene, GOAL)[:6]
    search = rrt_connect(a, [b], checker, lower, upper, np.random.default_rng(0), step=1.0, max_iterations=5000)
    assert search.path is not None
    path = search.path
    np.testing.assert_array_equal(path[0], a)
    np.testing.assert_array_equal(path[-1], b)
    assert checker.path_valid(path)
    short = simplify(path, checker, np.random.default_rng(1))
    assert checker.path_valid(short)
    assert path_length(short) <= path_length(path) + 1e-12
    np.testing.assert_array_equal(short[0], a)
    np.testing.assert_array_equal(short[-1], b)
    # no waypoint of the result can be dropped: shortcutting ran until none helps
    assert drop_vertices(short, checker).shape[0] == short.shape[0]


def test_tree_and_the_path_helpers() -> None:
    tree = Tree([np.zeros(2)])
    first = tree.add(np.array([1.0, 0.0]), 0)
    tree.add(np.array([1.0, 1.0]), first)
    assert tree.nearest(np.array([0.9, 0.9])) == 2
    np.testing.assert_array_equal(tree.branch(2), [[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    line = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0], [1.0, 2.0]])
    np.testing.assert_array_equal(merge_collinear(line), [[0.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    assert path_length(line) == pytest.approx(math.sqrt(2) + 1)


def test_plan_goes_around_the_post_and_is_repeatable(scene: Scene) -> None:
    first = plan(scene, START, GOAL, seed=4, joints=ARM, clearance=0.003, timeout=LIMIT)
    second = plan(scene, START, GOAL, seed=4, joints=ARM, clearance=0.003, timeout=LIMIT)
    assert first.success, first.error
    np.testing.assert_array_equal(first.raw_path, second.raw_path)
    np.testing.assert_array_equal(first.simplified_path, second.simplified_path)
    assert first.simplified_length <= first.raw_length
    assert first.raw_length > 2.6  # the straight line is blocked
    full = np.repeat(first.start[None], first.simplified_path.shape[0], axis=0)
    full[:, :6] = first.simplified_path
    assert check_path(scene.model, full, 0.003).ok
    trajectory = first.trajectory
    assert trajectory is not None and tuple(trajectory.names) == ARM
    np.testing.assert_allclose(trajectory.positions[-1], first.simplified_path[-1], atol=1e-9)
    assert first.planning_seconds > 0 and first.simplifying_seconds > 0 and first.timing_seconds > 0


def test_start_in_collision_names_the_pair(scene: Scene) -> None:
    inside = {"shoulder_pan_joint": math.pi / 2, "shoulder_lift_joint": -1.2, "elbow_joint": 1.2}
    result = plan(scene, inside, GOAL, joints=ARM)
    assert not result.success
    assert isinstance(result.error, StartInCollision)
    assert "world/post" in result.error.pair
    assert "world/post" in str(result.error)


def test_goal_in_collision_names_the_pair(scene: Scene) -> None:
    inside = {"shoulder_pan_joint": math.pi / 2, "shoulder_lift_joint": -1.2, "elbow_joint": 1.2}
    result = plan(scene, START, inside, joints=ARM)
    assert isinstance(result.error, GoalInCollision) and "world/post" in result.error.pair


@pytest.mark.parametrize(
    ("start", "goal", "options", "message"),
    [
        ({"elbow_joint": float("nan")}, GOAL, {}, "start joint 'elbow_joint' has the value nan"),
        (START, {"elbow_joint": float("nan")}, {}, "goal joint 'elbow_joint' has the value nan"),
        (START, {"knee": 1.0}, {}, "goal joint 'knee' is not a joint of the robot"),
        ({"knee": 1.0}, GOAL, {}, "start joint 'knee' is not a joint of robot"),
        (START, {}, {}, "the goal names no joint"),
        (START, GOAL, {"velocity_scale": 1.5}, "velocity_scale 1.5 is outside [0, 1]"),
        (START, GOAL, {"acceleration_scale": -0.1}, "acceleration_scale -0.1 is outside [0, 1]"),
        (START, GOAL, {"joints": ("elbow_joint", "knee")}, "joint 'knee' is not a coordinate"),
        (START, GOAL, {"clearance": -1.0}, "clearance must be a finite distance"),
        (START, {"elbow_joint": 99.0}, {}, "goal joint 'elbow_joint' = 99 is outside its limits"),
    ],
)
def test_malformed_requests_are_refused_naming_what(
    scene: Scene, start: dict[str, float], goal: dict[str, float], options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidRequest, match=message.replace("[", r"\[").replace("]", r"\]")):
        plan(scene, start, goal, **({"joints": ARM} | options))  # type: ignore[arg-type]


def test_scaling_zero_means_one(scene: Scene) -> None:
    goal = {"shoulder_pan_joint": 0.5, **START}
    zero = plan(scene, START, goal, joints=ARM, velocity_scale=0, acceleration_scale=0, timeout=LIMIT)
    one = plan(scene, START, goal, joints=ARM, timeout=LIMIT)
    assert zero.trajectory is not None and one.trajectory is not None
    assert zero.trajectory.duration == pytest.approx(one.trajectory.duration)


def test_a_pose_goal_keeps_several_configurations_and_is_reached(scene: Scene) -> None:
    robot = scene.model.robot
    fk = ForwardKinematics(robot)
    target_q = start_vector(scene, {"shoulder_pan_joint": -1.0, "shoulder_lift_joint": -1.0, "elbow_joint": 1.4})
    pose = fk.compute(target_q)[fk.link_names.index("tcp")]
    result = plan(scene, START, PoseGoal("tcp", pose), joints=ARM, seed=1, timeout=LIMIT)
    assert result.success, result.error
    assert len(result.goals) >= 2
    end = result.start.copy()
    end[:6] = result.simplified_path[-1]
    reached = fk.compute(end)[fk.link_names.index("tcp")]
    assert np.linalg.norm(reached[:3, 3] - pose[:3, 3]) <= 1e-3


def test_an_unreachable_pose_has_no_ik_solution(scene: Scene) -> None:
    pose = np.eye(4)
    pose[:3, 3] = (5.0, 0.0, 0.0)
    result = plan(scene, START, PoseGoal("tcp", pose, seeds=4), joints=ARM, timeout=LIMIT)
    assert isinstance(result.error, NoIkSolution)
    with pytest.raises(InvalidRequest, match="has no link 'hand'"):
        plan(scene, START, PoseGoal("hand", pose), joints=ARM)


def test_the_default_planned_joints_are_the_arms_chain_not_a_finger() -> None:
    """As `bb-robot ik` and the servo choose it: the chain to the tool frame; the finger keeps its start."""
    robot = load_file(str(BUNDLED_ARM)).robot
    assert default_tip(robot) == "tcp"
    assert default_joints(robot) == ARM
    result = plan(arm_scene(), START, GOAL, seed=0)
    assert result.success and result.joints == ARM

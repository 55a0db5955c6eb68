"""The TF plan: its transforms, composed along the tree, equal the robot's forward kinematics."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bb_robot.description.tf_plan import TfPlan, TfPlanError, quaternion_to_matrix, rpy_to_quaternion
from bb_robot.model.geometry import Origin
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Joint, JointLimits, Link, Mimic, Robot
from bb_robot.model.transforms import rpy_to_matrix
from bb_robot.urdf.builder import load_urdf

REPO_ROOT = Path(__file__).resolve().parents[2]


def _matrix(row: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = quaternion_to_matrix(row[3:])
    m[:3, 3] = row[:3]
    return m


def _compose(plan: TfPlan, robot: Robot, q: np.ndarray) -> dict[str, np.ndarray]:
    local: dict[str, tuple[str, np.ndarray]] = {}
    for item in plan.static:
        local[item.child] = (item.parent, _matrix(np.array([*item.translation, *item.rotation])))
    rows = plan.transforms(q)
    for i, child in enumerate(plan.movable_children):
        local[child] = (plan.movable_parents[i], _matrix(rows[i]))
    poses = {robot.root_link: np.eye(4)}
    for name in robot.topology.link_order[1:]:
        parent, m = local[name]
        poses[name] = poses[parent] @ m
    return poses


@pytest.mark.parametrize(
    "path",
    [
        REPO_ROOT / "models" / "bb_arm.urdf",
        Path("moveit_resources/panda_description/urdf/panda.urdf"),
        Path("synthetic/mimic_chain.urdf"),
        Path("franka_description/fr3_hand.urdf"),
    ],
    ids=lambda p: p.name,
)
def test_composed_transforms_equal_forward_kinematics(path: Path, request: pytest.FixtureRequest) -> None:
    if not path.is_absolute():
        path = request.getfixturevalue("corpus_dir") / path
    robot = load_urdf(path)
    plan, fk = TfPlan(robot), ForwardKinematics(robot)
    assert plan.coordinates == fk.joint_names
    rng = np.random.default_rng(3)
    for q in rng.uniform(-1.5, 1.5, (5, len(fk.joint_names))):
        ours = _compose(plan, robot, q)
        reference = fk.poses(dict(zip(fk.joint_names, q, strict=True)))
        for name, pose in reference.items():
            assert np.max(np.abs(ours[name] - pose)) < 1e-12, name


def test_edges_and_subsets() -> None:
    robot = load_urdf(REPO_ROOT / "models" / "bb_arm.urdf")
    plan = TfPlan(robot)
    assert {s.joint for s in plan.static} == {"tool0_joint", "gripper_mount_joint", "tcp_joint"}
    assert "right_finger_joint" in plan.movable_joints and "right_finger_joint" not in plan.coordinates
    finger = plan.coordinate_index["left_finger_joint"]
    both = plan.edges_of([finger])
    assert [plan.movable_joints[i] for i in both] == ["left_finger_joint", "right_finger_joint"]
    seen = np.zeros(len(plan.coordinates), dtype=bool)
    assert len(plan.edges_seen(seen)) == 0
    seen[finger] = True
    assert plan.edges_seen(seen).tolist() == both.tolist()
    seen[:] = True
    assert len(plan.edges_seen(seen)) == plan.edge_count
    full = plan.transforms(np.full(len(plan.coordinates), 0.3))
    assert np.array_equal(plan.transforms(np.full(len(plan.coordinates), 0.3), both), full[both])


def test_floating_and_planar_joints_are_held_and_a_mimic_of_one_is_an_error() -> None:
    links = [Link("w"), Link("a"), Link("b")]
    joints = [Joint("f", "floating", "w", "a"), Joint("p", "planar", "a", "b")]
    plan = TfPlan(Robot.assemble("r", links, joints))
    assert plan.held_joints == ("f", "p") and plan.edge_count == 0 and plan.static == ()
    mimic = Joint("m", "revolute", "b", "c", limits=JointLimits(-1, 1, 1, 1), mimic=Mimic("p"))
    with pytest.raises(TfPlanError, match="'m' mimics planar joint 'p'"):
        TfPlan(Robot.assemble("r", [*links, Link("c")], [*joints, mimic]))


def test_prismatic_joints_translate_along_their_rotated_axis() -> None:
    joint = Joint("slide", "prismatic", "a", "b", Origin((1.0, 2.0, 3.0), (0.0, 0.0, math.pi / 2)), (1.0, 0.0, 0.0))
    plan = TfPlan(Robot.assemble("r", [Link("a"), Link("b")], [joint]))
    row = plan.transforms(np.array([0.5]))[0]
    assert row[:3] == pytest.approx([1.0, 2.5, 3.0], abs=1e-15)
    assert row[3:] == pytest.approx(rpy_to_quaternion((0.0, 0.0, math.pi / 2)), abs=0)


@pytest.mark.parametrize("rpy", [(0.1, 0.2, 0.3), (math.pi, 0.0, 0.0), (0.0, math.pi / 2, 0.0), (-3.0, 1.2, 2.9)])
def test_rpy_quaternion_matches_the_rotation_matrix(rpy: tuple[float, float, float]) -> None:
    q = rpy_to_quaternion(rpy)
    assert q[3] >= 0 and math.isclose(sum(c * c for c in q), 1.0, rel_tol=1e-15)
    assert np.max(np.abs(quaternion_to_matrix(q) - rpy_to_matrix(rpy))) < 1e-15


@pytest.mark.parametrize("name", ["bb_arm.urdf"])
def test_python_rows_equal_numpy_rows(name: str, corpus_dir: Path) -> None:
    for path in (REPO_ROOT / "models" / name, corpus_dir / "moveit_resources/panda_description/urdf/panda.urdf"):
        plan = TfPlan(load_urdf(path))
        rng = np.random.default_rng(5)
        for _ in range(5):
            values = rng.uniform(-3, 3, len(plan.coordinates))
            full = plan.transforms(values)
            assert np.max(np.abs(np.array(plan.transform_rows(values)) - full)) < 1e-15
            subset = np.array([0, plan.edge_count - 1], dtype=np.intp)
            assert np.max(np.abs(np.array(plan.transform_rows(values, subset)) - full[subset])) < 1e-15

"""cartesian_path on the bundled arm: a straight line in full, a jump cut, a collision stopped before.

Every configuration's tool pose is recomputed independently by Pinocchio (from the URDF) and must
lie on the straight line asked; the kept paths pass the exact path check.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM

from bb_robot.collision.objects import pose_matrix
from bb_robot.collision.path import check_path
from bb_robot.collision.scene import Scene
from bb_robot.collision.sources import checked_model
from bb_robot.loading import load_file
from bb_robot.model.geometry import Box
from bb_robot.planning.cartesian import cartesian_path, chain_for, jump_index, start_configuration
from bb_robot.planning.errors import InvalidRequest, StartInCollision

pin = pytest.importorskip("pinocchio")
pytest.importorskip("coal")

START = {"shoulder_lift_joint": -0.8, "elbow_joint": 1.4, "wrist_1_joint": -0.6, "wrist_2_joint": 1.2}


@pytest.fixture
def scene() -> Scene:
    model, _ = checked_model(load_file(str(BUNDLED_ARM)))
    return Scene(model)


def pinocchio_tcp(path: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    model = pin.buildModelFromUrdf(str(BUNDLED_ARM))
    data = model.createData()
    frame = model.getFrameId("tcp")
    out = []
    for q in path:
        values = pin.neutral(model)
        for name, value in zip(names, q, strict=True):
            joint = model.getJointId(name)
            values[model.joints[joint].idx_q] = value
        pin.framesForwardKinematics(model, data, values)
        out.append(data.oMf[frame].homogeneous.copy())
    return np.asarray(out)


def start_pose(scene: Scene) -> np.ndarray:
    chain = chain_for(scene, "tcp")
    q = start_configuration(scene, START)
    names = scene.model.fk.joint_names
    return np.asarray(chain.end_effector_pose(q[[names.index(n) for n in chain.joint_names]]))


def test_a_straight_line_is_followed_in_full(scene: Scene) -> None:
    begin = start_pose(scene)
    target = begin.copy()
    target[:3, 3] += [0.0, 0.15, -0.05]
    result = cartesian_path(scene, START, [target], max_step=0.01, jump_threshold=5.0, tip="tcp")
    assert result.fraction == 1.0 and result.stop is None
    assert result.path.shape == (17, len(result.names))  # ceil(0.158 m / 0.01 m) = 16 steps
    poses = pinocchio_tcp(result.path, result.names)
    direction = (target[:3, 3] - begin[:3, 3]) / np.linalg.norm(target[:3, 3] - begin[:3, 3])
    offsets = poses[:, :3, 3] - begin[:3, 3]
    off_line = offsets - np.outer(offsets @ direction, direction)
    assert np.linalg.norm(off_line, axis=1).max() < 2e-5
    assert np.abs(poses[:, :3, :3] - begin[:3, :3]).max() < 2e-5  # the orientation kept
    assert np.abs(poses[-1] - target).max() < 2e-5
    assert np.diff(offsets @ direction).min() > 0  # forward every step
    assert check_path(scene.model, result.path, 0.003).ok
    trajectory = result.trajectory
    assert (
        trajectory.names == result.joints and (trajectory.positions[trajectory.waypoints] == result.path[:, :6]).all()
    )


def test_a_jump_cuts_the_path_before_it(scene: Scene) -> None:
    begin = start_pose(scene)
    line = begin.copy()
    line[:3, 3] += [0.0, 0.12, 0.0]
    turned = line.copy()
    turned[:3, :3] = line[:3, :3] @ pose_matrix([0, 0, 0], [0, 0, np.sin(1.4), np.cos(1.4)])[:3, :3]  # 2.8 rad about z
    result = cartesian_path(
        scene, START, [line, turned], max_step=0.01, jump_threshold=3.0, tip="tcp", max_rotation_step=10.0
    )
    assert result.path.shape[0] == 13  # the 12 steps of the line; the turn, one step of 2.8 rad, is a jump
    assert result.fraction == pytest.approx(12 / 13)
    assert result.stop is not None and "step 13 of 13: a jump in joint space" in result.stop
    whole = cartesian_path(
        scene, START, [line, turned], max_step=0.01, jump_threshold=0.0, tip="tcp", max_rotation_step=10.0
    )
    assert whole.fraction == 1.0  # no test: the jump is kept


def test_jump_index_is_moveits_relative_test() -> None:
    path = np.zeros((12, 2))
    path[:, 0] = np.arange(12) * 0.01
    assert jump_index(path, 2.0) == -1
    path[7:, 0] += 0.5  # step 7 is 51 times the others
    assert jump_index(path, 2.0) == 7
    assert jump_index(path[:9], 2.0) == -1  # fewer than 10 steps: not tested
    assert jump_index(path, 0.0) == -1


def test_a_collision_stops_the_path_before_it(scene: Scene) -> None:
    begin = start_pose(scene)
    target = begin.copy()
    target[:3, 3] += [0.0, 0.3, 0.0]
    wall = begin[:3, 3] + [0.0, 0.2, 0.0]
    scene.add_object("wall", [(Box((0.3, 0.02, 0.3)), np.eye(4))], pose_matrix(wall.tolist(), [0, 0, 0, 1]))
    result = cartesian_path(scene, START, [target], max_step=0.01, jump_threshold=0.0, tip="tcp")
    assert 0.3 < result.fraction < 0.7
    assert result.stop is not None and "world/wall" in result.stop
    assert check_path(scene.model, result.path, 0.003).ok
    free = cartesian_path(scene, START, [target], max_step=0.01, jump_threshold=0.0, tip="tcp", avoid_collisions=False)
    assert free.fraction == 1.0


def test_a_start_in_collision_is_refused_as_plan_refuses_it_naming_the_pair(scene: Scene) -> None:
    begin = start_pose(scene)
    target = begin.copy()
    target[:3, 3] += [0.0, 0.1, 0.0]
    # a block around the tool where the path would start
    scene.add_object("block", [(Box((0.1, 0.1, 0.1)), np.eye(4))], pose_matrix(begin[:3, 3].tolist(), [0, 0, 0, 1]))
    with pytest.raises(StartInCollision, match="start configuration is in collision: .*world/block") as raised:
        cartesian_path(scene, START, [target], max_step=0.01, jump_threshold=0.0, tip="tcp")
    assert "world/block" in raised.value.pair and raised.value.distance < 0  # overlapping: minus the depth
    assert "overlap by" in str(raised.value)
    # without collision checking the same request moves
    free = cartesian_path(scene, START, [target], max_step=0.01, jump_threshold=0.0, tip="tcp", avoid_collisions=False)
    assert free.fraction == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tip": "ghost"}, "robot 'bb_arm' has no link 'ghost'"),
        ({"joints": ["left_finger_joint"]}, "joint 'left_finger_joint' is not in the chain to 'tcp'"),
        ({"max_step": float("nan")}, "max_step must be a positive number, got nan"),
        ({"jump_threshold": -1.0}, "jump_threshold must be a number >= 0"),
        ({"start": {"elbow_joint": float("nan")}}, "start: joint 'elbow_joint' is nan"),
        ({"start": {"ghost_joint": 0.0}}, "start: robot 'bb_arm' has no joint 'ghost_joint'"),
        ({"poses": []}, "poses: expected one or more 4×4 poses"),
        ({"poses": [np.full((4, 4), np.nan)]}, r"poses\[0\] is not finite"),
    ],
)
def test_malformed_requests_are_refused_naming_them(scene: Scene, kwargs: dict, message: str) -> None:
    arguments = {"start": START, "poses": [start_pose(scene)], "max_step": 0.01, "jump_threshold": 0.0, "tip": "tcp"}
    arguments.update(kwargs)
    with pytest.raises(InvalidRequest, match=message):
        cartesian_path(scene, **arguments)  # type: ignore[arg-type]


def test_a_branching_robot_needs_a_tip(scene: Scene) -> None:
    with pytest.raises(InvalidRequest, match="pass tip=<link>"):
        cartesian_path(scene, START, [start_pose(scene)], max_step=0.01, jump_threshold=0.0)

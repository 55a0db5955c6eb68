"""Orientation path constraints on the bundled arm: the tool kept pointing down while it moves.

Every configuration of the returned path, interpolated so that no joint moves more than 0.01 rad
between two, is placed by Pinocchio from the URDF (not by bb_robot's kinematics) and its tool
orientation must be within the tolerance; the path must pass the exact collision check.  A
constraint that cannot be handled is refused, naming what is wrong.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM
from scipy.spatial.transform import Rotation

from bb_robot.collision.path import check_path
from bb_robot.collision.scene import Scene
from bb_robot.collision.sources import checked_model
from bb_robot.loading import load_file
from bb_robot.model.transforms import rpy_to_matrix
from bb_robot.planning.cartesian import chain_for, start_configuration
from bb_robot.planning.constraints import ConstraintModel, OrientationConstraint, plan_constrained
from bb_robot.planning.errors import InvalidRequest, PlanningError
from bb_robot.planning.validity import StateChecker

pin = pytest.importorskip("pinocchio")
pytest.importorskip("coal")

DOWN = rpy_to_matrix([math.pi, 0.0, 0.0])  # the tool pointing down
LEVEL = (0.1, 0.1, math.pi)  # level within 0.1 rad about x and y, any turn about z
#: Tool down, free of collision (found by projecting a seeded random configuration).
START = np.array(
    [
        -2.5381725684888945,
        -1.1102062141107207,
        -1.0473786479508258,
        -1.091002580289834,
        -0.7179352998569049,
        0.12423364511068474,
    ]
)
#: Goals whose straight joint-space edge from START tilts the tool beyond 0.1 rad (projected again in the test).
GOALS = ([-2.11, -0.03, -1.896, 0.065, 0.082, -1.28], [-2.959, 0.153, -2.326, -0.093, -3.064, 0.8])


class Arm:
    def __init__(self) -> None:
        model, _ = checked_model(load_file(str(BUNDLED_ARM)))
        self.scene = Scene(model)
        self.chain = chain_for(self.scene, "tcp")
        self.joints = self.chain.joint_names
        self.names = self.scene.model.fk.joint_names
        self.base = start_configuration(self.scene, dict(zip(self.joints, START, strict=True)))
        self.checker = StateChecker(self.scene, self.joints, base=self.base, clearance=0.003)
        self.lower, self.upper = np.array(self.chain.lower_limits), np.array(self.chain.upper_limits)

    def constraint_model(self, constraint: OrientationConstraint) -> ConstraintModel:
        return ConstraintModel(self.scene.robot_model.robot, self.joints, self.base, self.names, constraint)


@pytest.fixture(scope="module")
def arm() -> Arm:
    return Arm()


def pinocchio_tilt(path: np.ndarray, joints: tuple[str, ...]) -> np.ndarray:
    """XYZ Euler angles of DOWNᵀ · R_tcp at each configuration, with Pinocchio's kinematics and scipy's angles."""
    model = pin.buildModelFromUrdf(str(BUNDLED_ARM))
    data = model.createData()
    frame = model.getFrameId("tcp")
    out = []
    for x in path:
        q = pin.neutral(model)
        for name, value in zip(joints, x, strict=True):
            q[model.joints[model.getJointId(name)].idx_q] = value
        pin.framesForwardKinematics(model, data, q)
        out.append(Rotation.from_matrix(DOWN.T @ data.oMf[frame].rotation).as_euler("XYZ"))
    return np.asarray(out)


def dense(path: np.ndarray, step: float = 0.01) -> np.ndarray:
    rows = [path[0]]
    for a, b in zip(path[:-1], path[1:], strict=True):
        count = max(1, math.ceil(np.abs(b - a).max() / step))
        rows += [a + (b - a) * k / count for k in range(1, count + 1)]
    return np.asarray(rows)


@pytest.mark.parametrize("goal", GOALS)
def test_the_tool_stays_level_along_the_whole_path(arm: Arm, goal: list[float]) -> None:
    constraint = OrientationConstraint("tcp", DOWN, LEVEL)
    model = arm.constraint_model(constraint)
    target = model.project(np.array(goal), arm.lower, arm.upper)
    assert target is not None and arm.checker.valid(target)
    straight = dense(np.array([START, target]))
    assert np.abs(pinocchio_tilt(straight, arm.joints)[:, :2]).max() > 0.1  # the direct motion would tilt it
    result = plan_constrained(arm.checker, START, [target], constraint, lower=arm.lower, upper=arm.upper, seed=0)
    path = result.simplified
    assert np.array_equal(path[0], START) and np.array_equal(path[-1], target)
    samples = dense(path)
    assert np.abs(np.diff(samples, axis=0)).max() <= 0.01 + 1e-12
    tilt = pinocchio_tilt(samples, arm.joints)
    assert np.abs(tilt[:, :2]).max() <= 0.1
    full = np.tile(arm.base, (samples.shape[0], 1))
    full[:, [arm.names.index(j) for j in arm.joints]] = samples
    assert check_path(arm.scene.model, full, 0.003).ok
    again = plan_constrained(arm.checker, START, [target], constraint, lower=arm.lower, upper=arm.upper, seed=0)
    assert np.array_equal(again.simplified, path)  # the same seed, the same path


def test_a_violating_start_or_goal_is_refused(arm: Arm) -> None:
    tight = OrientationConstraint("tcp", DOWN, LEVEL)
    tilted = START + np.array([0.0, 0.0, 0.0, 0.4, 0.0, 0.0])
    with pytest.raises(PlanningError, match="the start violates the orientation constraint on 'tcp': its error"):
        plan_constrained(arm.checker, tilted, [START], tight, lower=arm.lower, upper=arm.upper)
    with pytest.raises(PlanningError, match="the goal violates the orientation constraint on 'tcp'"):
        plan_constrained(arm.checker, START, [tilted], tight, lower=arm.lower, upper=arm.upper)
    with pytest.raises(InvalidRequest, match="no goal configuration"):
        plan_constrained(arm.checker, START, [], tight, lower=arm.lower, upper=arm.upper)


@pytest.mark.parametrize(
    ("link", "orientation", "tolerance", "message"),
    [
        ("ghost", DOWN, LEVEL, "robot 'bb_arm' has no link 'ghost'"),
        ("tcp", DOWN, (0.1, float("nan"), 0.1), r"tolerance must be three angles in \[0, pi\]"),
        ("tcp", DOWN, (-0.1, 0.1, 0.1), r"tolerance must be three angles"),
        ("tcp", DOWN, (0.1, 1.6, 0.1), "below pi / 2 about y"),
        ("tcp", DOWN, (0.001, 0.1, 0.1), "too tight to plan in"),
        ("tcp", [0.0, 0.0, 0.0, 2.0], LEVEL, "is not a unit quaternion"),
        ("tcp", np.ones((3, 3)), LEVEL, "the reference orientation must be a rotation"),
    ],
)
def test_constraints_that_cannot_be_handled_are_refused(
    arm: Arm, link: str, orientation: object, tolerance: tuple, message: str
) -> None:
    with pytest.raises(InvalidRequest, match=message):
        constraint = OrientationConstraint(link, orientation, tolerance)  # type: ignore[arg-type]
        plan_constrained(arm.checker, START, [START], constraint, lower=arm.lower, upper=arm.upper)


def test_a_quaternion_reference_is_the_same_constraint(arm: Arm) -> None:
    by_quaternion = OrientationConstraint("tcp", [1.0, 0.0, 0.0, 0.0], LEVEL)  # half a turn about x
    assert np.allclose(by_quaternion.orientation, DOWN)
    assert arm.constraint_model(by_quaternion).satisfied(START)

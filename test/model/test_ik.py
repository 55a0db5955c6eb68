"""``SerialManipulator.inverse`` (bb_robot.model.ik): limits, determinism, both paths, refused input.

The solutions themselves are judged by Pinocchio in ``test_ik_against_pinocchio.py``; here the
forward kinematics that judges is the model's own (itself checked against Pinocchio).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.robot_files import example_robot_data_urdfs, robot_label
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bb_robot.errors import BbRobotError
from bb_robot.model import compiled
from bb_robot.model.errors import IkError, InvalidIkArgument, InvalidIkSeed, InvalidIkTarget, InvalidTransform
from bb_robot.model.ik import IkSolution, rotation_log
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
KERNELS = ["auto", "numpy"]


@pytest.fixture(scope="module")
def arm() -> SerialManipulator:
    return SerialManipulator.from_urdf(BB_ARM, "tcp")


@pytest.fixture(scope="module")
def kinova() -> SerialManipulator:
    found = {robot_label(p): p for p in example_robot_data_urdfs()}
    name = "erd:kinova_description/robots/kinova.urdf"
    if name not in found:
        pytest.skip(f"{name} not found: example-robot-data is not installed (scripts/setup installs it)")
    return SerialManipulator.from_urdf(found[name], "j2s6s200_end_effector", base="j2s6s200_link_base")


@pytest.fixture(params=KERNELS)
def kernel(request: pytest.FixtureRequest) -> Iterator[str]:
    """The compiled path (numba) and the numpy path, in turn."""
    saved = list(compiled._mode)
    compiled._mode[:] = [request.param]
    yield request.param
    compiled._mode[:] = saved


def _configurations(chain: SerialManipulator, count: int, seed: int) -> Matrix:
    lower = np.where(np.isfinite(chain.lower_limits), chain.lower_limits, -math.pi)
    upper = np.where(np.isfinite(chain.upper_limits), chain.upper_limits, math.pi)
    result: Matrix = np.random.default_rng(seed).uniform(lower, upper, (count, chain.dof))
    return result


def _residuals(
    chain: SerialManipulator, q: Matrix, target: Matrix, offset: Matrix | None = None
) -> tuple[float, float]:
    reached = chain.end_effector_pose(q, offset)
    return float(np.linalg.norm(reached[:3, 3] - target[:3, 3])), rotation_log(target[:3, :3].T @ reached[:3, :3])[1]


def test_a_reachable_target_is_solved_within_the_tolerances(arm: SerialManipulator, kernel: str) -> None:
    for q in _configurations(arm, 5, 1):
        target = arm.end_effector_pose(q)
        solution = arm.inverse(target, timeout=None, max_restarts=30, rng=3)
        assert isinstance(solution, IkSolution) and solution.success
        position, angle = _residuals(arm, solution.q, target)
        assert position <= 1e-5 and angle <= 1e-5
        assert solution.position_error == pytest.approx(position, abs=1e-12)
        assert solution.rotation_error == pytest.approx(angle, abs=1e-12)
        assert solution.iterations >= 0 and solution.restarts >= 0 and solution.elapsed > 0.0


def test_the_seed_that_solves_comes_back_untouched(arm: SerialManipulator, kernel: str) -> None:
    q = _configurations(arm, 1, 2)[0]
    solution = arm.inverse(arm.end_effector_pose(q), seed=q)
    assert solution.success and solution.iterations == 0 and solution.restarts == 0
    np.testing.assert_array_equal(solution.q, q)


def test_the_two_paths_solve_the_same_targets_under_a_fixed_budget(arm: SerialManipulator) -> None:
    targets = [arm.end_effector_pose(q) for q in _configurations(arm, 12, 4)]
    targets.append(arm.end_effector_pose(arm.upper_limits) @ np.diag([1.0, 1.0, 1.0, 1.0]))
    results = {}
    saved = list(compiled._mode)
    try:
        for mode in KERNELS:
            compiled._mode[:] = [mode]
            results[mode] = [arm.inverse(t, timeout=None, max_restarts=20, rng=9) for t in targets]
    finally:
        compiled._mode[:] = saved
    assert compiled.kernels(compiled.MIN_BATCH) is not None or saved == ["numpy"], "numba is not installed"
    for fast, slow, target in zip(results["auto"], results["numpy"], targets, strict=True):
        assert fast.success and slow.success
        for solution in (fast, slow):
            position, angle = _residuals(arm, solution.q, target)
            assert position <= 1e-5 and angle <= 1e-5


def test_no_timeout_and_max_restarts_is_reproducible(arm: SerialManipulator, kernel: str) -> None:
    far = np.eye(4)
    far[:3, 3] = (5.0, 0.0, 0.0)  # out of reach: every restart runs
    first = arm.inverse(far, timeout=None, max_restarts=12, rng=5)
    second = arm.inverse(far, timeout=None, max_restarts=12, rng=np.random.default_rng(5))
    assert not first.success and first.restarts == 12 == second.restarts
    np.testing.assert_array_equal(first.q, second.q)
    assert (first.iterations, first.position_error) == (second.iterations, second.position_error)


def test_a_failure_returns_the_best_configuration_within_the_limits(arm: SerialManipulator, kernel: str) -> None:
    far = np.eye(4)
    far[:3, 3] = (0.0, 3.0, 0.5)
    solution = arm.inverse(far, timeout=None, max_restarts=5, rng=1)
    assert not solution.success
    assert (solution.q >= arm.lower_limits).all() and (solution.q <= arm.upper_limits).all()
    position, _ = _residuals(arm, solution.q, far)
    assert solution.position_error == pytest.approx(position, abs=1e-12)
    seed_position, _ = _residuals(arm, 0.5 * (arm.lower_limits + arm.upper_limits), far)
    assert position < seed_position  # better than where it started


def test_a_timeout_bounds_the_search(arm: SerialManipulator, kernel: str) -> None:
    far = np.eye(4)
    far[:3, 3] = (5.0, 0.0, 0.0)
    solution = arm.inverse(far, timeout=0.02)
    assert not solution.success and solution.restarts >= 1
    assert solution.elapsed >= 0.02


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    point=st.tuples(*[st.floats(-1.5, 1.5)] * 3),
    angles=st.tuples(*[st.floats(-math.pi, math.pi)] * 3),
    fraction=st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6),
    narrow=st.lists(st.floats(0.0, 0.45), min_size=12, max_size=12),
    position_only=st.booleans(),
)
def test_limits_are_never_violated(
    arm: SerialManipulator,
    kernel: str,
    point: tuple[float, float, float],
    angles: tuple[float, float, float],
    fraction: list[float],
    narrow: list[float],
    position_only: bool,
) -> None:
    from bb_robot.model.transforms import rpy_to_matrix

    span = arm.upper_limits - arm.lower_limits
    lower = arm.lower_limits + np.array(narrow[:6]) * span
    upper = arm.upper_limits - np.array(narrow[6:]) * span
    seed = lower + np.array(fraction) * (upper - lower)
    target = np.eye(4)
    target[:3, :3] = rpy_to_matrix(angles)
    target[:3, 3] = point
    solution = arm.inverse(
        target,
        seed=seed,
        lower=lower,
        upper=upper,
        timeout=None,
        max_restarts=2,
        rng=0,
        rotation_tolerance=None if position_only else 1e-5,
    )
    assert (solution.q >= lower).all() and (solution.q <= upper).all(), (solution.q, lower, upper)
    assert np.isfinite(solution.q).all()


def test_continuous_joints_come_back_within_pi_of_the_seed(kinova: SerialManipulator, kernel: str) -> None:
    continuous = ~np.isfinite(kinova.lower_limits)
    assert continuous.sum() == 3
    for k, q in enumerate(_configurations(kinova, 4, 6)):
        seed = 0.5 * (np.nan_to_num(kinova.lower_limits) + np.nan_to_num(kinova.upper_limits))
        seed[continuous] = (-2.5, 1.0, 2.9)[k % 3]
        target = kinova.end_effector_pose(q + 4 * math.pi * continuous)
        solution = kinova.inverse(target, seed=seed, timeout=None, max_restarts=30, rng=k)
        assert solution.success
        assert (np.abs(solution.q[continuous] - seed[continuous]) <= math.pi + 1e-12).all()


def test_position_only(arm: SerialManipulator, kernel: str) -> None:
    q = _configurations(arm, 1, 7)[0]
    target = arm.end_effector_pose(q)
    target[:3, :3] = np.diag([1.0, -1.0, -1.0]) @ target[:3, :3]  # an orientation it may not reach
    solution = arm.inverse(target, rotation_tolerance=None, timeout=None, max_restarts=10, rng=0)
    assert solution.success
    assert _residuals(arm, solution.q, target)[0] <= 1e-5


def test_a_tool_offset_and_a_base_pose(arm: SerialManipulator, kernel: str) -> None:
    placed = arm.with_base_pose(
        np.array([[0.0, -1.0, 0.0, 0.3], [1.0, 0.0, 0.0, -0.2], [0.0, 0.0, 1.0, 0.9], [0, 0, 0, 1]])
    )
    offset = np.eye(4)
    offset[:3, 3] = (0.0, 0.05, 0.12)
    offset[:3, :3] = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    q = _configurations(arm, 1, 8)[0]
    target = placed.end_effector_pose(q, offset)
    solution = placed.inverse(target, offset=offset, timeout=None, max_restarts=30, rng=2)
    assert solution.success
    position, angle = _residuals(placed, solution.q, target, offset)
    assert position <= 1e-5 and angle <= 1e-5
    point_target = placed.end_effector_pose(q, (0.0, 0.0, 0.1))
    point = placed.inverse(point_target, offset=(0.0, 0.0, 0.1), timeout=None, max_restarts=30, rng=1)
    assert point.success


def test_inverse_many(arm: SerialManipulator, kernel: str) -> None:
    qs = _configurations(arm, 3, 10)
    targets = np.array([arm.end_effector_pose(q) for q in qs])
    solutions = arm.inverse_many(targets, seeds=qs, timeout=None, max_restarts=5, rng=0)
    assert [s.iterations for s in solutions] == [0, 0, 0]
    solutions = arm.inverse_many(targets, timeout=None, max_restarts=30, rng=0)
    assert len(solutions) == 3 and all(s.success for s in solutions)
    with pytest.raises(InvalidIkTarget, match=r"\(B, 4, 4\)"):
        arm.inverse_many(targets[0])
    with pytest.raises(InvalidIkSeed, match="shape"):
        arm.inverse_many(targets, seeds=qs[:2])


# ------------------------------------------------------------------------ refused input
def _pose() -> Matrix:
    return np.eye(4)


def _with(row: int, column: int, value: float) -> Matrix:
    pose = _pose()
    pose[row, column] = value
    return pose


HOSTILE_TARGETS = {
    "nan": (_with(0, 3, math.nan), "non-finite"),
    "inf": (_with(1, 1, math.inf), "non-finite"),
    "scaled": (np.diag([1.0 + 2e-6, 1.0, 1.0, 1.0]), "not a rotation"),
    "sheared": (_with(0, 1, 1e-3), "not a rotation"),
    "mirrored": (np.diag([1.0, 1.0, -1.0, 1.0]), "det R"),
    "last row": (_with(3, 0, 0.5), "last row"),
    "shape": (np.eye(3), "shape"),
    "text": ("a pose", "not an array of numbers"),
}


@pytest.mark.parametrize("name", list(HOSTILE_TARGETS))
def test_hostile_targets_are_refused(arm: SerialManipulator, kernel: str, name: str) -> None:
    target, message = HOSTILE_TARGETS[name]
    with pytest.raises(InvalidIkTarget, match=message) as raised:
        arm.inverse(target)
    assert isinstance(raised.value, IkError) and isinstance(raised.value, BbRobotError)
    assert "bb_arm" in str(raised.value)


def test_a_rotation_within_the_orthonormality_tolerance_is_accepted(arm: SerialManipulator, kernel: str) -> None:
    nearly = np.diag([1.0 + 4e-7, 1.0, 1.0, 1.0])
    assert arm.inverse(nearly, timeout=None, max_restarts=0).q.shape == (6,)


def test_hostile_seeds_are_refused(arm: SerialManipulator, kernel: str) -> None:
    target = arm.end_effector_pose(np.zeros(6))
    with pytest.raises(InvalidIkSeed, match=r"shape \(5,\)"):
        arm.inverse(target, seed=np.zeros(5))
    with pytest.raises(InvalidIkSeed, match="non-finite.*'elbow_joint'"):
        arm.inverse(target, seed=[0.0, 0.0, math.nan, 0.0, 0.0, 0.0])
    beyond = np.zeros(6)
    beyond[1] = arm.upper_limits[1] + 2e-6
    with pytest.raises(InvalidIkSeed, match="'shoulder_lift_joint'"):
        arm.inverse(target, seed=beyond)
    with pytest.raises(InvalidIkSeed, match="'shoulder_lift_joint'"):  # outside narrowed limits
        arm.inverse(target, seed=np.zeros(6), lower=[-1, 0.5, -1, -1, -1, -1])
    just = np.zeros(6)
    just[1] = arm.upper_limits[1] + 5e-7  # a measured state just past the limit: clipped
    solution = arm.inverse(
        arm.end_effector_pose(np.minimum(just, arm.upper_limits)), seed=just, timeout=None, max_restarts=0
    )
    assert solution.success and solution.q[1] <= arm.upper_limits[1]


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"position_tolerance": 0.0}, "position_tolerance"),
        ({"rotation_tolerance": math.nan}, "rotation_tolerance"),
        ({"timeout": -1.0}, "timeout"),
        ({"timeout": None}, "timeout"),
        ({"max_restarts": -2}, "max_restarts"),
        ({"rng": "seven"}, "rng"),
        ({"lower": [0.0] * 6, "upper": [-0.1] + [0.0] * 5}, "lower/upper"),
        ({"lower": [0.0] * 3}, "lower"),
        ({"upper": [math.nan] * 6}, "upper"),
    ],
)
def test_arguments_that_cannot_be_used(
    arm: SerialManipulator, kernel: str, options: dict[str, object], argument: str
) -> None:
    with pytest.raises(InvalidIkArgument) as raised:
        arm.inverse(np.eye(4), **options)  # type: ignore[arg-type]
    assert raised.value.argument == argument


def test_an_offset_that_is_not_a_transform(arm: SerialManipulator, kernel: str) -> None:
    with pytest.raises(InvalidTransform, match="offset"):
        arm.inverse(np.eye(4), offset=np.diag([2.0, 1.0, 1.0, 1.0]))

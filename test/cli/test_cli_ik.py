"""``bb-robot ik``: solutions judged by Pinocchio, the output shapes, and the exit codes.

Targets are Pinocchio's tip poses (``buildModelFromUrdf``, the root link's frame) of
configurations within the limits; the joint values the command prints must bring Pinocchio's
tip there within the tolerances (1e-5 m, 1e-5 rad) and lie within the limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cli_helpers import RunCli

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed: nothing to compare with")

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")
#: The search's time budget where a test needs a solution: generous, so that the answer does not
#: depend on the host's speed (the default 5 ms is one descent on a slow, busy host).
BUDGET = ("--timeout", "10")


class Arm:
    """bb_arm by Pinocchio: the tip ``tcp`` in the root link's frame, and the joint limits."""

    def __init__(self) -> None:
        self.model = pin.buildModelFromUrdf(str(BB_ARM))
        self.data = self.model.createData()
        self.tip = self.model.getFrameId("tcp")
        ids = [self.model.getJointId(name) for name in JOINTS]
        self.index = [self.model.joints[i].idx_q for i in ids]
        self.lower = self.model.lowerPositionLimit[self.index]
        self.upper = self.model.upperPositionLimit[self.index]

    def pose(self, joints: dict[str, float] | np.ndarray) -> Any:
        values = [joints[name] for name in JOINTS] if isinstance(joints, dict) else joints
        q = pin.neutral(self.model)
        q[self.index] = values
        pin.forwardKinematics(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return self.data.oMf[self.tip]


def _text(value: float) -> str:
    """A number as the command line takes it, every digit kept."""
    return repr(float(value))


@pytest.fixture(scope="module")
def arm() -> Arm:
    return Arm()


def _check(arm: Arm, joints: dict[str, float], target: Any, *, rotation: bool = True) -> None:
    values = np.array([joints[name] for name in JOINTS])
    assert (values >= arm.lower).all() and (values <= arm.upper).all()
    reached = arm.pose(joints)
    assert np.linalg.norm(reached.translation - target.translation) <= 1e-5
    if rotation:
        assert np.linalg.norm(pin.log3(target.rotation.T @ reached.rotation)) <= 1e-5


def test_solves_a_pose_given_as_a_quaternion(run_cli: RunCli, arm: Arm) -> None:
    target = arm.pose(np.array([0.4, -0.6, 1.1, 0.3, -0.8, 0.5]))
    quat = pin.Quaternion(target.rotation)
    result = run_cli(
        "ik", BB_ARM, "--tip", "tcp", "--xyz", *map(_text, target.translation),
        "--quat", *map(_text, (quat.x, quat.y, quat.z, quat.w)), "--random-seed", "3", "--json", *BUDGET,
    )  # fmt: skip
    assert result.returncode == 0, result
    data = result.json()
    assert data["success"] is True and data["base"] == "base_link" and data["tip"] == "tcp"
    assert data["position_error"] <= 1e-5 and data["rotation_error"] <= 1e-5 and data["position_only"] is False
    _check(arm, data["joints"], target)
    np.testing.assert_allclose(data["reached"]["xyz"], target.translation, atol=1e-5)


def test_solves_a_pose_given_as_roll_pitch_yaw_and_prints_a_table(run_cli: RunCli, arm: Arm) -> None:
    target = arm.pose(np.array([-0.9, 0.4, -1.2, 0.2, 1.0, -2.0]))
    rpy = pin.rpy.matrixToRpy(target.rotation)
    result = run_cli(
        "ik", BB_ARM, "--tip", "tcp", "--xyz", *map(_text, target.translation), "--rpy", *map(_text, rpy), *BUDGET
    )
    assert result.returncode == 0, result
    assert result.stdout.startswith("solved: robot 'bb_arm'")
    joints = {}
    for line in result.stdout.splitlines():
        name, _, value = line.partition(" ")
        if name in JOINTS:
            joints[name] = float(value)
    assert set(joints) == set(JOINTS)
    values = np.array([joints[name] for name in JOINTS])
    assert (values >= arm.lower).all() and (values <= arm.upper).all()
    # Six printed decimals: the pose is as near as those digits allow.
    assert np.linalg.norm(arm.pose(values).translation - target.translation) <= 1e-5


def test_a_chain_from_another_base(run_cli: RunCli, arm: Arm) -> None:
    q = np.array([0.4, -0.6, 1.1, 0.3, -0.8, 0.5])
    shoulder = arm.model.getFrameId("shoulder_link")
    target = arm.pose(q)
    relative = arm.data.oMf[shoulder].inverse() * target  # the chain's base frame: shoulder_link
    quat = pin.Quaternion(relative.rotation)
    result = run_cli(
        "ik", BB_ARM, "--base", "shoulder_link", "--tip", "tcp", "--xyz", *map(_text, relative.translation),
        "--quat", *map(_text, (quat.x, quat.y, quat.z, quat.w)),
        "--json", "--random-seed", "2", *BUDGET,
    )  # fmt: skip
    assert result.returncode == 0, result
    data = result.json()
    assert data["base"] == "shoulder_link" and list(data["joints"]) == list(JOINTS[1:])
    _check(arm, {"shoulder_pan_joint": float(q[0]), **data["joints"]}, target)


def test_position_only_without_an_orientation(run_cli: RunCli, arm: Arm) -> None:
    target = arm.pose(np.array([0.2, 0.3, 0.9, -0.4, 0.6, 0.0]))
    result = run_cli("ik", BB_ARM, "--tip", "tcp", "--xyz", *map(_text, target.translation), "--json", *BUDGET)
    assert result.returncode == 0, result
    data = result.json()
    assert data["position_only"] is True
    _check(arm, data["joints"], target, rotation=False)


def test_initial_values_seed_the_search(run_cli: RunCli, arm: Arm) -> None:
    q = np.array([0.4, -0.6, 1.1, 0.3, -0.8, 0.5])
    target = arm.pose(q)
    quat = pin.Quaternion(target.rotation)
    initial = [f"--initial={name}={_text(value)}" for name, value in zip(JOINTS, q, strict=True)]
    result = run_cli(
        "ik", BB_ARM, "--tip", "tcp", "--xyz", *map(_text, target.translation),
        "--quat", *map(_text, (quat.x, quat.y, quat.z, quat.w)), *initial, "--json",
    )  # fmt: skip
    assert result.returncode == 0, result
    data = result.json()
    assert data["iterations"] == 0 and data["restarts"] == 0
    np.testing.assert_allclose([data["joints"][name] for name in JOINTS], q, atol=1e-12)


def test_an_unreachable_pose_exits_1_with_the_residuals_and_the_nearest_pose(run_cli: RunCli, arm: Arm) -> None:
    result = run_cli("ik", BB_ARM, "--tip", "tcp", "--xyz", "3", "0", "0.5", "--json", "--random-seed", "1")
    assert result.returncode == 1, result
    data = result.json()
    assert data["success"] is False and data["position_error"] > 1.0
    values = np.array([data["joints"][name] for name in JOINTS])
    assert (values >= arm.lower).all() and (values <= arm.upper).all()
    reached = arm.pose(values)
    np.testing.assert_allclose(data["reached"]["xyz"], reached.translation, atol=1e-9)
    assert data["position_error"] == pytest.approx(np.linalg.norm(reached.translation - [3, 0, 0.5]), abs=1e-9)
    text = run_cli("ik", BB_ARM, "--tip", "tcp", "--xyz", "3", "0", "0.5")
    assert text.returncode == 1 and text.stdout.startswith("NOT solved") and "reached:" in text.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--tip", "tcp"], "--xyz"),
        (["--xyz", "0.3", "0", "0.4", "--rpy", "0", "0", "0", "--quat", "0", "0", "0", "1"], "not allowed with"),
        (["--xyz", "0.3", "0", "0.4", "--quat", "0", "0", "0", "2"], "not a unit quaternion"),
        (["--xyz", "nan", "0", "0.4"], "finite"),
        (["--xyz", "0.3", "0", "0.4", "--initial", "elbow_joint"], "NAME=VALUE"),
        (["--xyz", "0.3", "0", "0.4", "--random-seed", "-1"], "--random-seed"),
        (["--xyz", "0.3", "0", "0.4", "--timeout", "0"], "--timeout must be a number of seconds > 0, got 0.0"),
        (["--xyz", "0.3", "0", "0.4", "--timeout", "nan"], "--timeout must be a number of seconds > 0, got nan"),
        (["--xyz", "0.3", "0", "--tip", "tcp"], "--xyz"),
    ],
)
def test_usage_errors_exit_2(run_cli: RunCli, options: list[str], message: str) -> None:
    result = run_cli("ik", BB_ARM, *options)
    assert result.returncode == 2, result
    assert message in result.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--tip", "tcp", "--initial", "knee_joint=0.1"], "no joint 'knee_joint'"),
        (["--tip", "tcp", "--initial", "shoulder_lift_joint=3.0"], "'shoulder_lift_joint' = 3"),
        (["--tip", "no_such_link"], "no_such_link"),
        ([], "--tip"),  # the fingers branch: the chain needs a tip
    ],
)
def test_bad_input_exits_1(run_cli: RunCli, options: list[str], message: str) -> None:
    result = run_cli("ik", BB_ARM, "--xyz", "0.3", "0.1", "0.4", *options)
    assert result.returncode == 1, result
    assert message in result.stderr
    assert "Traceback" not in result.stderr

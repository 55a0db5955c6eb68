"""Inverse kinematics judged by Pinocchio's forward kinematics, an independent implementation.

For arms of example-robot-data and the shared corpus: targets are Pinocchio's tip poses of
configurations drawn within the limits; ``SerialManipulator.inverse`` (a fixed budget: no
timeout, 50 restarts, a seeded generator) must solve each, and Pinocchio's pose of the returned
configuration must be within the tolerances of the target, the configuration within the limits.
Both the compiled path and the numpy path are judged.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.pinocchio_configuration import pin_configuration
from helpers.robot_files import example_robot_data_urdfs, robot_label

from bb_robot.model import compiled
from bb_robot.model.ik import rotation_log
from bb_robot.model.serial import SerialManipulator

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed: nothing to compare with")

TOLERANCE = 1e-5
TARGETS = 6
# (file: "erd:" example-robot-data, "corpus:" the shared corpus, or "bb_arm"; base; tip)
ARMS = [
    ("erd:panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
    ("erd:ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    ("erd:xarm_description/urdf/xarm7.urdf", "link_base", "link_eef"),
    ("erd:kinova_description/robots/kinova.urdf", "j2s6s200_link_base", "j2s6s200_end_effector"),
    ("erd:talos_data/robots/talos_reduced.urdf", "torso_2_link", "arm_left_7_link"),
    ("corpus:moveit_resources/fanuc_description/urdf/fanuc.urdf", None, "tool0"),
    ("corpus:franka_description/multi_arm.urdf", None, "left_fr3_hand_tcp"),
    ("bb_arm", None, "tcp"),
]


def _path(name: str, corpus_dir: Path) -> Path:
    if name == "bb_arm":
        return Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
    if name.startswith("corpus:"):
        return corpus_dir / name.removeprefix("corpus:")
    found = {robot_label(p): p for p in example_robot_data_urdfs()}
    if name not in found:
        pytest.skip(f"{name} not found: example-robot-data is not installed (scripts/setup installs it)")
    return found[name]


class PinocchioPose:
    """The tip's pose in the base link's frame by Pinocchio."""

    def __init__(self, path: Path, chain: SerialManipulator) -> None:
        self.model = pin.buildModelFromUrdf(str(path))
        self.data = self.model.createData()
        self.tip = self.model.getFrameId(chain.tip_link)
        self.base = self.model.getFrameId(chain.base_link)
        self.chain = chain

    def __call__(self, q: np.ndarray) -> Any:
        pin.forwardKinematics(self.model, self.data, pin_configuration(self.model, self.chain, q))
        pin.updateFramePlacements(self.model, self.data)
        return (self.data.oMf[self.base].inverse() * self.data.oMf[self.tip]).homogeneous


@pytest.mark.parametrize("kernel", ["auto", "numpy"])
@pytest.mark.parametrize("arm", ARMS, ids=[f"{Path(a[0]).stem}:{a[2]}" for a in ARMS])
def test_solutions_meet_the_tolerances_by_pinocchio(
    corpus_dir: Path, arm: tuple[str, str | None, str], kernel: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compiled, "_mode", [kernel])
    name, base, tip = arm
    path = _path(name, corpus_dir)
    chain = SerialManipulator.from_urdf(path, tip, base=base)
    reference = PinocchioPose(path, chain)
    rng = np.random.default_rng(24)
    lower = np.where(np.isfinite(chain.lower_limits), chain.lower_limits, -math.pi)
    upper = np.where(np.isfinite(chain.upper_limits), chain.upper_limits, math.pi)
    for q in rng.uniform(lower, upper, (TARGETS, chain.dof)):
        target = reference(q)
        solution = chain.inverse(target, timeout=None, max_restarts=50, rng=rng)
        assert solution.success, f"{name}: not solved from the nominal seed: {solution}"
        assert (solution.q >= chain.lower_limits).all() and (solution.q <= chain.upper_limits).all()
        reached = reference(solution.q)
        position = float(np.linalg.norm(reached[:3, 3] - target[:3, 3]))
        angle = rotation_log(target[:3, :3].T @ reached[:3, :3])[1]
        assert position <= TOLERANCE * (1 + 1e-6), f"{name}: position error {position} by Pinocchio"
        assert angle <= TOLERANCE * (1 + 1e-6), f"{name}: rotation error {angle} by Pinocchio"
        # The residuals the solver reports are the ones Pinocchio measures (to rounding).
        assert abs(position - solution.position_error) < 1e-9
        assert abs(angle - solution.rotation_error) < 1e-9

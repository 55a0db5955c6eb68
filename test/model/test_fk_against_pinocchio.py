"""Forward kinematics against Pinocchio, an independent implementation, on real robots.

For every URDF of the shared corpus that describes a robot (the hostile synthetic files
excluded) and every URDF shipped by PyPI ``example-robot-data``, the pose of EVERY link from
:class:`bb_robot.model.kinematics.ForwardKinematics` must equal Pinocchio's to 1e-9 m and
1e-9 rad, at the zero configuration and at random configurations within the joint limits
(±π for continuous or unbounded revolute joints).

How the two are lined up:

- Pinocchio is built with ``buildModelFromUrdf(path, mimic=True)`` and no root joint, so its
  ``universe`` frame is the URDF root link's frame, as ours is.  Each link is the ``BODY``
  frame of that name; a root link called ``world`` is a ``BODY`` frame too.
- Pinocchio's coordinates are filled by joint name from ours; a continuous joint (and an
  unbounded revolute one) has two coordinates ``(cos θ, sin θ)``; a joint Pinocchio reads as
  a mimic has none (Pinocchio computes it).
- Where Pinocchio refuses ``mimic=True`` (a mimic of a mimic, or a mimic declared before its
  source in the tree), the model is built with ``mimic=False`` and each mimic joint's value
  is computed here from the URDF's ``<mimic>`` data (``multiplier·source + offset``,
  transitively): the kinematics of every link is still compared.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.robot_files import CORPUS_DIR, REJECTED_BY_US, corpus_urdfs, example_robot_data_urdfs, robot_label

from bb_robot.errors import BbRobotError
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot
from bb_robot.urdf.builder import load_urdf

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed: nothing to compare with")


# Synthetic files that describe a robot (the others are hostile inputs we must reject).
SYNTHETIC_ROBOTS = ("long_chain_1000.urdf", "x_axis_arm.urdf", "mimic_chain.urdf")

TOLERANCE_M = 1e-9
TOLERANCE_RAD = 1e-9
RANDOM_CONFIGURATIONS = 24
# A few configurations are enough where one FK evaluation is 1000 joints deep.
FEW_CONFIGURATIONS_ABOVE_JOINTS = 500
FEW_CONFIGURATIONS = 3
LARGEST_PINOCCHIO_DATA_DOF = 200


# ------------------------------------------------------------------------------ the files
def _params() -> list[Any]:
    params: list[Any] = [pytest.param(p, id=robot_label(p)) for p in corpus_urdfs(SYNTHETIC_ROBOTS)]
    if not params:
        absent = pytest.mark.skip(f"no corpus at {CORPUS_DIR}")
        params.append(pytest.param(None, id="corpus-absent", marks=absent))
    erd = example_robot_data_urdfs()
    params += [pytest.param(p, id=robot_label(p)) for p in erd]
    if not erd:
        params.append(
            pytest.param(
                None,
                id="example-robot-data-absent",
                marks=pytest.mark.skip("PyPI example-robot-data is not installed"),
            )
        )
    return params


# ------------------------------------------------------------------------------ helpers
def _load_ours(path: Path) -> tuple[Robot, ForwardKinematics]:
    label = robot_label(path).split(":", 1)[1]
    known = REJECTED_BY_US.get(label)
    try:
        robot = load_urdf(path)
    except BbRobotError as error:
        if known is not None and known[0] in str(error):
            pytest.skip(f"bb_robot rejects it as expected: {known[1]}")
        raise
    if known is not None:
        pytest.fail(f"{label} now loads; remove it from REJECTED_BY_US ({known[1]})")
    return robot, ForwardKinematics(robot)


def _load_pinocchio(path: Path) -> tuple[Any, bool]:
    """Return ``(model, mimic_supported)``: Pinocchio's model, with mimic joints if it can."""
    try:
        return pin.buildModelFromUrdf(str(path), mimic=True), True
    except TypeError:  # a Pinocchio without mimic support
        pass
    except ValueError:  # mimic layouts Pinocchio cannot represent: treat them as free joints
        pass
    try:
        return pin.buildModelFromUrdf(str(path)), False
    except Exception as error:  # noqa: BLE001 - any refusal of the reference means: no reference
        pytest.skip(f"Pinocchio cannot load it: {type(error).__name__}: {error}")


def _mimic_values(robot: Robot, fk: ForwardKinematics, q: np.ndarray) -> dict[str, float]:
    """Each mimic joint's value from the URDF's <mimic> data, transitively."""
    index = {name: i for i, name in enumerate(fk.joint_names)}

    def value(name: str) -> float:
        joint = robot.joints[name]
        if joint.mimic is None:
            return float(q[index[name]])
        return joint.mimic.multiplier * value(joint.mimic.joint) + joint.mimic.offset

    return {name: value(name) for name in fk.mimic_joints}


def _sample(robot: Robot, fk: ForwardKinematics, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random configurations within limits (±π if unbounded, ±1 m for a prismatic)."""
    lows, highs = [], []
    for name in fk.joint_names:
        joint = robot.joints[name]
        limits = joint.limits
        bounded = limits is not None and limits.lower is not None and limits.upper is not None
        if joint.type != "continuous" and bounded:
            assert limits is not None and limits.lower is not None and limits.upper is not None
            low, high = sorted((limits.lower, limits.upper))
        elif joint.type == "prismatic":
            low, high = -1.0, 1.0
        else:
            low, high = -np.pi, np.pi
        lows.append(low)
        highs.append(high)
    return rng.uniform(np.array(lows), np.array(highs), size=(count, len(fk.joint_names)))


def _pin_configuration(
    model: Any, robot: Robot, fk: ForwardKinematics, q: np.ndarray, mimic_supported: bool
) -> np.ndarray:
    coordinate = {name: float(q[i]) for i, name in enumerate(fk.joint_names)}
    if not mimic_supported:
        coordinate.update(_mimic_values(robot, fk, q))
    result = pin.neutral(model)  # held (floating, planar) joints at their origin
    for joint_id in range(1, model.njoints):
        joint = model.joints[joint_id]
        name = model.names[joint_id]
        if joint.nq == 0:  # a mimic joint: Pinocchio follows its source
            continue
        value = coordinate.get(name)
        if value is None:
            continue
        if joint.nq == 1:
            result[joint.idx_q] = value
        elif joint.nq == 2:  # unbounded revolute: (cos, sin)
            result[joint.idx_q : joint.idx_q + 2] = (np.cos(value), np.sin(value))
        else:
            raise AssertionError(f"joint '{name}' has {joint.nq} coordinates in Pinocchio")
    return result


def _pinocchio_frame_poses(model: Any, whole_data: bool) -> Callable[[np.ndarray], Any]:
    """A function from Pinocchio's configuration to the poses of its frames (by frame id)."""
    if whole_data:
        data = model.createData()

        def with_data(q: np.ndarray) -> Any:
            pin.forwardKinematics(model, data, q)
            pin.updateFramePlacements(model, data)
            return data.oMf

        return with_data

    assert all(model.joints[i].nq for i in range(1, model.njoints)), "mimics need pin.Data"
    joint_data = [joint.createData() for joint in model.joints]

    def by_joints(q: np.ndarray) -> Any:
        placements = [pin.SE3.Identity()]
        for i in range(1, model.njoints):
            model.joints[i].calc(joint_data[i], q)
            placements.append(placements[model.parents[i]] * model.jointPlacements[i] * joint_data[i].M)
        return [placements[frame.parentJoint] * frame.placement for frame in model.frames]

    return by_joints


# ------------------------------------------------------------------------------ the test
@pytest.mark.parametrize("path", _params())
def test_every_link_pose_matches_pinocchio(path: Path) -> None:
    robot, fk = _load_ours(path)
    model, mimic_supported = _load_pinocchio(path)

    frame_ids = []
    for link in fk.link_names:
        assert model.existFrame(link, pin.BODY), f"Pinocchio has no body frame for link '{link}'"
        frame_ids.append(model.getFrameId(link, pin.BODY))
    # Every joint Pinocchio moves is one of ours (a mimic one when Pinocchio has no mimics).
    ours = set(fk.joint_names) | (set() if mimic_supported else set(fk.mimic_joints))
    for joint_id in range(1, model.njoints):
        if model.joints[joint_id].nq:
            assert model.names[joint_id] in ours, f"Pinocchio moves joint '{model.names[joint_id]}'"

    # Pinocchio's Data grows with the cube of the DOF count (about 4 GB at 400 DOF): for the
    # 1000-link chain, compose Pinocchio's own joint transforms (JointModel.calc) and placements
    # along the tree here instead of calling forwardKinematics.
    whole_data = model.nv <= LARGEST_PINOCCHIO_DATA_DOF

    frame_poses = _pinocchio_frame_poses(model, whole_data)

    rng = np.random.default_rng(20240611)
    count = RANDOM_CONFIGURATIONS
    if len(fk.joint_names) > FEW_CONFIGURATIONS_ABOVE_JOINTS:
        count = FEW_CONFIGURATIONS
    configurations = np.vstack([np.zeros((1, len(fk.joint_names))), _sample(robot, fk, count, rng)])
    batch = fk.compute(configurations)  # (B, n_links, 4, 4)

    for b, q in enumerate(configurations):
        references = frame_poses(_pin_configuration(model, robot, fk, q, mimic_supported))
        # The batched path and the one-configuration path (generated code; numpy above 400 joints).
        results = [("batched", batch[b]), ("single", fk.compute(q))]
        worst_position, worst_angle, worst_link = 0.0, 0.0, ""
        for _, poses in results:
            for i, (link, frame_id) in enumerate(zip(fk.link_names, frame_ids, strict=True)):
                reference = references[frame_id]
                pose = poses[i]
                position_error = float(np.linalg.norm(pose[:3, 3] - reference.translation))
                angle_error = float(np.linalg.norm(pin.log3(pose[:3, :3].T @ reference.rotation)))
                if max(position_error / TOLERANCE_M, angle_error / TOLERANCE_RAD) > max(
                    worst_position / TOLERANCE_M, worst_angle / TOLERANCE_RAD
                ):
                    worst_position, worst_angle, worst_link = position_error, angle_error, link
        label = "zero configuration" if b == 0 else f"random configuration {b}"
        assert worst_position <= TOLERANCE_M and worst_angle <= TOLERANCE_RAD, (
            f"{label}: link '{worst_link}' differs from Pinocchio by {worst_position:.3g} m "
            f"and {worst_angle:.3g} rad (q = {np.array2string(q[:40], precision=17)}"
            f"{' ...' if len(q) > 40 else ''})"
        )

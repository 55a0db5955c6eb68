"""The serial-manipulator model against Pinocchio, an independent implementation.

For chains of the bundled bb_arm and of corpus robots, at the zero configuration and at
random ones, to 1e-9:

- the pose of every chain link and of the end effector equals Pinocchio's ``BODY`` frame
  of that link after ``forwardKinematics`` + ``updateFramePlacements``;
- each joint frame's z axis and origin equal the robot joint's axis and origin in
  Pinocchio's joint placement (the frame change of normalising mode keeps both);
- the Jacobian of the end effector and of every chain link equals
  ``computeFrameJacobian(model, data, q, frame_id, LOCAL_WORLD_ALIGNED)`` (rows: linear
  then angular) on the chain's columns, and Pinocchio's other columns are zero.

Each chain is built both ways: ``SerialManipulator.from_robot(load_urdf(path), tip, strict=False)``
and ``SerialManipulator.from_urdf(path, tip)`` (the URDF input path, normalising by default).

Pinocchio is built with ``buildModelFromUrdf(path)`` (no root joint): its ``universe`` is
the URDF root link's frame.  Coordinates are filled by joint name; a continuous joint has
two, ``(cos θ, sin θ)``; joints off the chain stay at Pinocchio's neutral configuration.
When the base is not the root, Pinocchio's poses are taken relative to the base link
and its Jacobians re-expressed in the base frame, then the model's ``base_pose`` applied.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.pinocchio_configuration import pin_configuration

from bb_robot.model.geometry import Origin
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import origin_to_matrix
from bb_robot.urdf.builder import load_urdf

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed: nothing to compare with")

REPO_ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-9
CONFIGURATIONS = 12
PLACED = origin_to_matrix(Origin((0.4, -0.3, 1.2), (0.2, -0.1, 0.7)))

# (file: "bb_arm" or a corpus path, tip, base, base_pose)
CHAINS = [
    ("bb_arm", "tcp", None, None),
    ("bb_arm", "tool0", None, PLACED),
    ("bb_arm", "left_finger", None, None),
    ("bb_arm", "tcp", "shoulder_link", PLACED),
    ("moveit_resources/panda_description/urdf/panda.urdf", "panda_hand", None, None),
    ("moveit_resources/panda_description/urdf/panda.urdf", "panda_link8", None, PLACED),
    ("moveit_resources/fanuc_description/urdf/fanuc.urdf", "tool0", None, None),
    ("franka_description/fr3_hand.urdf", "fr3_hand_tcp", None, None),
    ("franka_description/multi_arm.urdf", "left_fr3_hand_tcp", None, None),
    ("ur_description_ros2/ur3e.urdf", "tool0", None, None),
    ("ur_description_ros2/ur5e.urdf", "tool0", "base_link", PLACED),
    ("mastering_ros_robot_description_pkg/urdf/pan_tilt.urdf", None, None, None),
    ("synthetic/x_axis_arm.urdf", None, None, None),
    ("sdformat/test/integration/fixed_joint_reduction.urdf", "link3", None, None),
]


def _path(name: str, corpus_dir: Path) -> Path:
    return REPO_ROOT / "models" / "bb_arm.urdf" if name == "bb_arm" else corpus_dir / name


def _label(case: tuple[str, str | None, str | None, Any]) -> str:
    name, tip, base, pose = case
    return f"{Path(name).stem}:{base or 'root'}->{tip or 'auto'}{':placed' if pose is not None else ''}"


@pytest.mark.parametrize("entry", ["from_robot", "from_urdf"])
@pytest.mark.parametrize("case", CHAINS, ids=[_label(c) for c in CHAINS])
def test_serial_model_matches_pinocchio(
    corpus_dir: Path, case: tuple[str, str | None, str | None, Any], entry: str
) -> None:
    name, tip, base, base_pose = case
    path = _path(name, corpus_dir)
    robot = load_urdf(path)
    if entry == "from_urdf":  # the URDF input path: the file and a tip link (normalising by default)
        chain = SerialManipulator.from_urdf(path, tip, base=base, base_pose=base_pose)
        assert not chain.strict
    else:
        chain = SerialManipulator.from_robot(robot, tip, strict=False, base=base, base_pose=base_pose)
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()

    link_frames = [model.getFrameId(link, pin.BODY) for link in chain.link_names]
    tip_frame = model.getFrameId(chain.tip_link, pin.BODY)
    base_frame = model.getFrameId(chain.base_link, pin.BODY)
    joint_ids = [model.getJointId(j) for j in chain.joint_names]
    columns = [model.joints[i].idx_v for i in joint_ids]
    # Joints off the chain do not move its frames, except those above a base below the root.
    above_base = robot.path_to(chain.base_link)[1::2]
    moving = {*chain.joint_names, *above_base}
    others = [model.joints[i].idx_v for i in range(1, model.njoints) if model.names[i] not in moving]
    for frame in (*link_frames, tip_frame, base_frame):
        assert frame < len(model.frames), f"Pinocchio has no body frame in {chain.link_names}"

    rng = np.random.default_rng(7)
    lower = np.where(np.isfinite(chain.lower_limits), chain.lower_limits, -math.pi)
    upper = np.where(np.isfinite(chain.upper_limits), chain.upper_limits, math.pi)
    configurations = np.vstack([np.zeros(chain.dof), rng.uniform(lower, upper, (CONFIGURATIONS, chain.dof))])
    batch = chain.forward(configurations)
    batch_jacobians = chain.jacobian(configurations)

    for k, q in enumerate(configurations):
        pin_q = pin_configuration(model, chain, q)
        pin.forwardKinematics(model, data, pin_q)
        pin.updateFramePlacements(model, data)
        # Pinocchio's poses are in the root frame: bring them to the model frame.
        to_model = chain.base_pose @ np.linalg.inv(data.oMf[base_frame].homogeneous)
        rotation = to_model[:3, :3]

        poses = chain.forward(q)
        for i, frame in enumerate(link_frames):
            expected = to_model @ data.oMf[frame].homogeneous
            np.testing.assert_allclose(poses.links[i], expected, atol=TOL, rtol=0, err_msg=chain.link_names[i])
            np.testing.assert_allclose(batch.links[k, i], expected, atol=TOL, rtol=0)
        expected_tip = to_model @ data.oMf[tip_frame].homogeneous
        np.testing.assert_allclose(poses.end_effector, expected_tip, atol=TOL, rtol=0)
        np.testing.assert_allclose(batch.end_effector[k], expected_tip, atol=TOL, rtol=0)

        for i, (joint_id, serial_joint) in enumerate(zip(joint_ids, chain.joints, strict=True)):
            placement = to_model @ data.oMi[joint_id].homogeneous
            np.testing.assert_allclose(poses.joints[i][:3, 2], placement[:3, :3] @ serial_joint.axis, atol=TOL)
            np.testing.assert_allclose(poses.joints[i][:3, 3], placement[:3, 3], atol=TOL)

        for link, frame in [(None, tip_frame), *zip(chain.link_names, link_frames, strict=True)]:
            reference = pin.computeFrameJacobian(model, data, pin_q, frame, pin.LOCAL_WORLD_ALIGNED)
            expected_jacobian = np.vstack([rotation @ reference[:3, columns], rotation @ reference[3:, columns]])
            np.testing.assert_allclose(
                chain.jacobian(q, link=link), expected_jacobian, atol=TOL, rtol=0, err_msg=f"frame {link}"
            )
            np.testing.assert_array_equal(reference[:, others], 0.0)
        np.testing.assert_allclose(batch_jacobians[k], chain.jacobian(q), atol=TOL, rtol=0)

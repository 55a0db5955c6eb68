"""Helpers of the description-node tests: TF messages to poses, and Pinocchio as the oracle.

Pinocchio is independent of bb_robot (its own URDF parser, urdfdom, and its own kinematics):
the transforms the node publishes, composed along the tree, must equal Pinocchio's frame
placements.  TF carries float64, so the comparison is at 1e-9.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

TOLERANCE = 1e-9


def transform_matrix(t: Any) -> np.ndarray:
    """4×4 matrix of a ``geometry_msgs/TransformStamped``."""
    q = t.transform.rotation
    x, y, z, w = q.x, q.y, q.z, q.w
    m = np.eye(4)
    m[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    v = t.transform.translation
    m[:3, 3] = (v.x, v.y, v.z)
    return m


def edges(transforms: Iterable[Any]) -> dict[str, tuple[str, np.ndarray]]:
    """child frame → (parent frame, 4×4) of TransformStamped messages (a later one wins)."""
    return {t.child_frame_id: (t.header.frame_id, transform_matrix(t)) for t in transforms}


def compose(tree: Mapping[str, tuple[str, np.ndarray]], root: str) -> dict[str, np.ndarray]:
    """Pose of every frame reachable from ``root`` in ``root``'s frame."""
    children: dict[str, list[str]] = {}
    for child, (parent, _) in tree.items():
        children.setdefault(parent, []).append(child)
    poses = {root: np.eye(4)}
    stack = [root]
    while stack:
        frame = stack.pop()
        for child in children.get(frame, ()):
            poses[child] = poses[frame] @ tree[child][1]
            stack.append(child)
    return poses


def stamp_ns(t: Any) -> int:
    return int(t.header.stamp.sec) * 1_000_000_000 + int(t.header.stamp.nanosec)


class PinocchioOracle:
    """Pinocchio's model of a URDF (mimic joints followed where Pinocchio supports them)."""

    def __init__(self, path: Path) -> None:
        import pinocchio as pin

        self.pin = pin
        try:
            self.model = pin.buildModelFromUrdf(str(path), mimic=True)
            self.mimic = True
        except (TypeError, ValueError):
            self.model = pin.buildModelFromUrdf(str(path))
            self.mimic = False
        self._data: Any = None  # created on first use: its size grows with the cube of the DOF count

    def configuration(self, values: Mapping[str, float]) -> np.ndarray:
        """Pinocchio's ``q`` for joint values by name (others neutral)."""
        pin, model = self.pin, self.model
        q = pin.neutral(model)
        for joint_id in range(1, model.njoints):
            joint, name = model.joints[joint_id], model.names[joint_id]
            if joint.nq == 0 or name not in values:
                continue
            value = values[name]
            if joint.nq == 1:
                q[joint.idx_q] = value
            elif joint.nq == 2:
                q[joint.idx_q : joint.idx_q + 2] = (np.cos(value), np.sin(value))
            else:
                raise AssertionError(f"joint '{name}' has {joint.nq} coordinates in Pinocchio")
        return q

    def link_poses(self, values: Mapping[str, float], links: Sequence[str]) -> dict[str, np.ndarray]:
        """Pose of each link (its BODY frame) in the root frame."""
        pin, model = self.pin, self.model
        if self._data is None:
            self._data = model.createData()
        data = self._data
        pin.forwardKinematics(model, data, self.configuration(values))
        pin.updateFramePlacements(model, data)
        result = {}
        for link in links:
            assert model.existFrame(link, pin.BODY), f"Pinocchio has no body frame '{link}'"
            result[link] = np.array(data.oMf[model.getFrameId(link, pin.BODY)].homogeneous)
        return result

    def joint_transforms(self, values: Mapping[str, float]) -> dict[str, np.ndarray]:
        """Each joint's placement · motion (the parent link → child link transform), by joint name,
        without Pinocchio's Data (which grows too large for the 1000-link chain)."""
        model = self.model
        q = self.configuration(values)
        result = {}
        for joint_id in range(1, model.njoints):
            joint = model.joints[joint_id]
            data = joint.createData()
            joint.calc(data, q)
            result[model.names[joint_id]] = np.array((model.jointPlacements[joint_id] * data.M).homogeneous)
        return result


def worst_difference(ours: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray]) -> tuple[float, str]:
    """Largest absolute difference between matching 4×4 poses, and where."""
    worst, where = 0.0, ""
    for name, pose in reference.items():
        assert name in ours, f"no TF for '{name}'"
        difference = float(np.max(np.abs(ours[name] - pose)))
        if difference > worst:
            worst, where = difference, name
    return worst, where

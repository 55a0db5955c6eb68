"""What the description node does with a model and joint states, without ROS.

- :func:`prepare` turns a :class:`~bb_robot.description.sources.LoadedModel` into a
  :class:`PreparedModel`: its TF plan, tip pose and serial-manipulator JSON, checked before the
  node replaces its current model with it (a model that cannot be published is rejected);
- :func:`static_transforms` lists what goes on ``/tf_static``, frames prefixed;
- :class:`JointStateTf` merges joint-state messages and says which transforms to publish on
  ``/tf`` for each, with their values.

Publication rules (``docs/nodes/description.md``):

- a movable joint is published once a message has named it (or, for a mimic joint, its
  source), and from then on with its last value (sample and hold, as joint_state_publisher
  merges its ``source_list``): every publication carries every joint seen so far, stamped
  with the stamp of the message that triggered it;
- except when that stamp equals the previous publication's (two sources stamping alike):
  then only the joints the message named go out, so that no frame is sent twice with one
  stamp (tf2 drops such repeats with a warning).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.description.joint_states import JointStateMerger
from bb_robot.description.manipulator import FORMAT, VERSION, TipPose, serial_json
from bb_robot.description.sources import LoadedModel
from bb_robot.description.tf_plan import Quaternion, Row, TfPlan, Vec3
from bb_robot.errors import BbRobotError
from bb_robot.model.robot import Robot
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import Matrix, matrix_to_quaternion

IntArray = npt.NDArray[np.intp]
Rows = Matrix | list[Row]
#: ``(parent frame, child frame, translation, rotation (x, y, z, w))``.
FrameTransform = tuple[str, str, Vec3, Quaternion]


@dataclass(frozen=True, eq=False)
class PreparedModel:
    """A loaded model with everything the node publishes about it precomputed.

    ``serial`` is the serial manipulator (``None`` when the robot has no single chain and no
    ``tip_link`` was given: ``serial_note`` then says why), ``tip`` its tip pose.
    """

    loaded: LoadedModel
    plan: TfPlan
    serial: SerialManipulator | None
    tip: TipPose | None
    serial_note: str | None = None

    @property
    def robot_name(self) -> str:
        return self.loaded.robot.name

    def serial_text(self, frame_prefix: str) -> str:
        """The ``~/serial_manipulator`` JSON; without a serial manipulator, an object that says why."""
        if self.serial is not None:
            return serial_json(self.serial, frame_prefix)
        import json

        note: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "robot": self.robot_name,
            "available": False,
            "reason": self.serial_note or "no serial manipulator",
        }
        return json.dumps(note, separators=(",", ":"))

    def held_warning(self) -> str | None:
        """The warning about floating and planar joints (they get no TF), or ``None``."""
        held = self.plan.held_joints
        if not held:
            return None
        kinds = {name: self.loaded.robot.joints[name].type for name in held}
        listed = ", ".join(f"'{name}' ({kind})" for name, kind in kinds.items())
        return (
            f"robot '{self.robot_name}': no TF for the floating/planar joint(s) {listed}: a JointState "
            "cannot carry their pose; publish those transforms from the source that knows them (e.g. odometry)"
        )


def serial_manipulator(robot: Robot, tip_link: str = "") -> tuple[SerialManipulator | None, str | None]:
    """The robot's serial manipulator, from its root link, axes normalised to +z.

    With ``tip_link`` the chain ends there and its errors propagate (unknown link, a mimic,
    floating or planar joint in the chain); without it, the robot's only chain, or ``None``
    and the reason when it has several branches.
    """
    if tip_link:
        return SerialManipulator.from_robot(robot, tip_link, strict=False), None
    try:
        return SerialManipulator.from_robot(robot, None, strict=False), None
    except BbRobotError as error:
        return None, f"no serial manipulator without tip_link: {error}"


def prepare(loaded: LoadedModel, tip_link: str = "") -> PreparedModel:
    """Precompute the TF plan, serial manipulator and tip pose.

    Raises :class:`~bb_robot.description.tf_plan.TfPlanError`, and with ``tip_link`` the serial
    model's errors (see :func:`serial_manipulator`).
    """
    plan = TfPlan(loaded.robot)
    serial, note = serial_manipulator(loaded.robot, tip_link)
    tip = TipPose(serial, plan.coordinate_index) if serial is not None else None
    return PreparedModel(loaded, plan, serial, tip, note)


def _pose_transform(pose: Matrix) -> tuple[Vec3, Quaternion]:
    x, y, z = (float(v) for v in pose[:3, 3])
    return (x, y, z), matrix_to_quaternion(pose[:3, :3])


def static_transforms(prepared: PreparedModel, frame_prefix: str = "") -> list[FrameTransform]:
    """Everything for ``/tf_static``: each fixed joint (parent link → child link), and for a model
    placed in an SDF world the placement of its root link, frames prefixed with ``frame_prefix``
    (the world frame too: the prefix applies to every frame the node publishes)."""
    result: list[FrameTransform] = []
    placement = prepared.loaded.placement
    if placement is not None:
        translation, rotation = _pose_transform(placement.pose)
        root = prepared.loaded.robot.root_link
        result.append((frame_prefix + placement.parent, frame_prefix + root, translation, rotation))
    for item in prepared.plan.static:
        result.append((frame_prefix + item.parent, frame_prefix + item.child, item.translation, item.rotation))
    return result


class JointStateTf:
    """Merged joint states of one model and the ``/tf`` transforms they give.

    ``previous`` (the state of the model this one replaces) hands over the values of joints
    both models have, so a reload does not forget what was seen.
    """

    def __init__(self, plan: TfPlan, previous: JointStateTf | None = None) -> None:
        self.plan = plan
        self.merger = JointStateMerger(plan.coordinates)
        self._last_stamp: int | None = None
        self._seen_edges: IntArray = plan.edges_seen(self.merger.seen)
        self._seen_version = 0
        if previous is not None:
            old = previous.merger
            carried = [
                (i, old.values[j])
                for i, name in enumerate(plan.coordinates)
                if (j := old.index.get(name)) is not None and old.seen[j]
            ]
            if carried:
                index = np.array([i for i, _ in carried], dtype=np.intp)
                self.merger.values[index] = [v for _, v in carried]
                self.merger.seen[index] = True
                self.merger.seen_count = int(self.merger.seen.sum())
                self._seen_edges = plan.edges_seen(self.merger.seen)

    @property
    def values(self) -> npt.NDArray[np.float64]:
        return self.merger.values

    @property
    def seen(self) -> npt.NDArray[np.bool_]:
        return self.merger.seen

    def merge(self, names: Sequence[str], positions: Any, velocity_count: int = 0, effort_count: int = 0) -> IntArray:
        """Merge one message (see :meth:`JointStateMerger.update`); return the coordinates it set.

        Raises :class:`~bb_robot.description.joint_states.RejectedMessage`.
        """
        before = self.merger.seen_count
        updated = self.merger.update(names, positions, velocity_count, effort_count)
        if self.merger.seen_count != before:
            self._seen_edges = self.plan.edges_seen(self.merger.seen)
        return updated

    #: Up to this many edges, rows are computed with Python floats (a list), above with numpy.
    PYTHON_ROWS_UP_TO = 48

    def publication(self, stamp_ns: int, updated: IntArray | None = None) -> tuple[IntArray, Rows] | None:
        """The edges to publish for a message stamped ``stamp_ns`` that set ``updated``, and
        their rows ``(tx, ty, tz, qx, qy, qz, qw)`` (a list of tuples for a few edges, else an
        array); ``None`` when there is nothing to publish."""
        if stamp_ns == self._last_stamp:
            if updated is None or not len(updated):
                return None
            edges = self.plan.edges_of(updated)
        else:
            edges = self._seen_edges
        if not len(edges):
            return None
        self._last_stamp = stamp_ns
        if len(edges) <= self.PYTHON_ROWS_UP_TO:
            return edges, self.plan.transform_rows(self.merger.values, edges)
        return edges, self.plan.transforms(self.merger.values, edges)

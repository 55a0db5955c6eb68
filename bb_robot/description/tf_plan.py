"""Which joints of a robot get which TF, and their transforms (parent link → child link).

:class:`TfPlan` splits a robot's joints, as ``robot_state_publisher`` does:

- fixed joints: one :class:`StaticTransform` each, for ``/tf_static``;
- revolute, continuous and prismatic joints (mimic joints included): *movable edges*, for
  ``/tf``; a mimic joint is driven by the independent joint it follows (transitively:
  ``multiplier·source + offset``);
- floating and planar joints: no TF at all (``held_joints``; the node warns once).

The transform of a movable edge is precomputed down to two constant quaternions and two
constant vectors, so that a whole set of edges costs a handful of numpy operations: with the
joint origin ``(t0, q0)``, unit axis ``a`` and value ``θ``,

- revolute: translation ``t0``; rotation ``q0 ⊗ (a·sin(θ/2), cos(θ/2)) = cos(θ/2)·q0 + sin(θ/2)·b``
  where ``b = (w0·a + v0 × a, −v0·a)`` for ``q0 = (v0, w0)``;
- prismatic: translation ``t0 + θ·R(q0)·a``; rotation ``q0``.

Rows of :meth:`TfPlan.transforms` are ``(tx, ty, tz, qx, qy, qz, qw)``: the order of the
fields in ``geometry_msgs/Transform``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.errors import BbRobotError
from bb_robot.model.geometry import Origin
from bb_robot.model.robot import SINGLE_DOF_TYPES, Robot
from bb_robot.model.transforms import Matrix

Vec3 = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]
#: ``(tx, ty, tz, qx, qy, qz, qw)``.
Row = tuple[float, float, float, float, float, float, float]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]


class TfPlanError(BbRobotError):
    """The robot cannot be published as TF (a mimic joint follows a floating or planar joint)."""


@dataclass(frozen=True)
class StaticTransform:
    """The constant transform of a fixed joint, from ``parent`` to ``child`` (link names)."""

    joint: str
    parent: str
    child: str
    translation: Vec3
    rotation: Quaternion


def rpy_to_quaternion(rpy: Sequence[float]) -> Quaternion:
    """Quaternion ``(x, y, z, w)`` of fixed-axis roll, pitch, yaw (``Rz(yaw)·Ry(pitch)·Rx(roll)``), ``w >= 0``."""
    roll, pitch, yaw = (0.5 * float(a) for a in rpy)
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    x = sr * cp * cy - cr * sp * sy
    y = cr * sp * cy + sr * cp * sy
    z = cr * cp * sy - sr * sp * cy
    w = cr * cp * cy + sr * sp * sy
    sign = -1.0 if w < 0 else 1.0
    return (sign * x, sign * y, sign * z, sign * w)


def quaternion_to_matrix(q: Sequence[float]) -> Matrix:
    """3×3 rotation matrix of a unit quaternion ``(x, y, z, w)``."""
    x, y, z, w = (float(c) for c in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def origin_transform(origin: Origin) -> tuple[Vec3, Quaternion]:
    """``(translation, rotation)`` of a joint origin."""
    x, y, z = origin.xyz
    return (float(x), float(y), float(z)), rpy_to_quaternion(origin.rpy)


class TfPlan:
    """The TF of one robot: static transforms, movable edges and how joint values drive them.

    - ``coordinates``: the independent joints (revolute, continuous, prismatic, not mimic), in
      traversal order: the names joint-state messages are matched against;
    - ``static``: one :class:`StaticTransform` per fixed joint, in traversal order;
    - ``movable_joints``, ``movable_parents``, ``movable_children``: the movable edges;
    - ``edge_coordinate[i]``: the index in ``coordinates`` that drives edge ``i``;
    - ``held_joints``: floating and planar joints (no TF); ``mimic_joints``: mimic joints.
    """

    def __init__(self, robot: Robot) -> None:
        """Precompute every edge; raises :class:`TfPlanError` for a mimic of a floating or planar joint."""
        self.robot_name = robot.name
        order = [robot.joints[name] for name in robot.topology.joint_order]
        self.coordinates: tuple[str, ...] = tuple(
            j.name for j in order if j.type in SINGLE_DOF_TYPES and j.mimic is None
        )
        self.held_joints: tuple[str, ...] = tuple(j.name for j in order if j.type in ("floating", "planar"))
        self.mimic_joints: tuple[str, ...] = tuple(j.name for j in order if j.mimic is not None)
        self.coordinate_index: dict[str, int] = {name: i for i, name in enumerate(self.coordinates)}
        static: list[StaticTransform] = []
        movable = [j for j in order if j.type in SINGLE_DOF_TYPES]
        for joint in order:
            if joint.type == "fixed":
                translation, rotation = origin_transform(joint.origin)
                static.append(StaticTransform(joint.name, joint.parent_link, joint.child_link, translation, rotation))
        self.static: tuple[StaticTransform, ...] = tuple(static)
        self.movable_joints: tuple[str, ...] = tuple(j.name for j in movable)
        self.movable_parents: tuple[str, ...] = tuple(j.parent_link for j in movable)
        self.movable_children: tuple[str, ...] = tuple(j.child_link for j in movable)
        n = len(movable)
        self.edge_coordinate: IntArray = np.zeros(n, dtype=np.intp)
        self._multiplier = np.ones(n)
        self._offset = np.zeros(n)
        self._revolute = np.zeros(n, dtype=bool)
        self._t0 = np.zeros((n, 3))
        self._q0 = np.zeros((n, 4))
        self._b = np.zeros((n, 4))
        self._d = np.zeros((n, 3))
        for i, joint in enumerate(movable):
            coordinate, multiplier, offset = self._resolve(robot, joint.name)
            self.edge_coordinate[i] = coordinate
            self._multiplier[i] = multiplier
            self._offset[i] = offset
            translation, rotation = origin_transform(joint.origin)
            self._t0[i] = translation
            self._q0[i] = rotation
            axis = np.array(joint.axis, dtype=float)
            axis /= np.linalg.norm(axis)
            v0, w0 = np.array(rotation[:3]), rotation[3]
            if joint.type == "prismatic":
                self._d[i] = quaternion_to_matrix(rotation) @ axis
            else:
                self._revolute[i] = True
                self._b[i, :3] = w0 * axis + np.cross(v0, axis)
                self._b[i, 3] = -float(v0 @ axis)
        self._prismatic = ~self._revolute
        # Per-edge factors, so that one expression serves both kinds: the half angle of a
        # revolute edge (θ/2; 0 for a prismatic one) and the slide of a prismatic one (θ; 0).
        self._half = np.where(self._revolute, 0.5, 0.0)
        self._slide = np.where(self._prismatic, 1.0, 0.0)
        self._any_prismatic = bool(self._prismatic.any())
        self._mimics = bool((self._multiplier != 1.0).any() or (self._offset != 0.0).any())
        self._all_edges: IntArray = np.arange(n, dtype=np.intp)
        # The same constants as Python floats, one tuple per edge, for transform_rows.
        self._edge_constants: list[tuple[Any, ...]] = [
            (
                int(self.edge_coordinate[i]),
                float(self._multiplier[i]),
                float(self._offset[i]),
                float(self._half[i]),
                float(self._slide[i]),
                *(float(x) for x in self._t0[i]),
                *(float(x) for x in self._d[i]),
                *(float(x) for x in self._q0[i]),
                *(float(x) for x in self._b[i]),
            )
            for i in range(n)
        ]
        # edges driven by each coordinate (a joint and the mimic joints that follow it)
        self._edges_of: tuple[IntArray, ...] = tuple(
            np.flatnonzero(self.edge_coordinate == c).astype(np.intp) for c in range(len(self.coordinates))
        )

    def _resolve(self, robot: Robot, name: str) -> tuple[int, float, float]:
        """``(coordinate, multiplier, offset)`` driving joint ``name``, following mimic joints."""
        multiplier, offset = 1.0, 0.0
        joint = robot.joints[name]
        while joint.mimic is not None:
            offset += multiplier * joint.mimic.offset
            multiplier *= joint.mimic.multiplier
            joint = robot.joints[joint.mimic.joint]
        if joint.type not in SINGLE_DOF_TYPES:
            raise TfPlanError(
                f"robot '{robot.name}': joint '{name}' mimics {joint.type} joint '{joint.name}'; "
                "only revolute, continuous and prismatic joints can be followed"
            )
        return self.coordinate_index[joint.name], multiplier, offset

    @property
    def edge_count(self) -> int:
        return len(self.movable_joints)

    def edges_seen(self, seen: BoolArray) -> IntArray:
        """Indices of the movable edges whose driving coordinate has been seen (``seen`` per coordinate)."""
        if seen.all():
            return self._all_edges
        return np.flatnonzero(seen[self.edge_coordinate]).astype(np.intp)

    def edges_of(self, coordinates: Sequence[int] | IntArray) -> IntArray:
        """Indices of the movable edges driven by the given coordinates, in edge order."""
        parts = [self._edges_of[c] for c in coordinates]
        if not parts:
            return np.zeros(0, dtype=np.intp)
        return np.sort(np.concatenate(parts))

    def transform_rows(self, values: npt.NDArray[np.float64], edges: IntArray | None = None) -> list[Row]:
        """:meth:`transforms` as a list of tuples, computed with Python floats.

        The same expressions, one edge at a time: for a handful of edges (an arm) several times
        faster than the numpy version, whose per-call overhead dominates there.
        """
        constants = (
            self._edge_constants
            if edges is None or edges is self._all_edges
            else [self._edge_constants[i] for i in edges.tolist()]
        )
        vals = values.tolist()
        cos, sin = math.cos, math.sin
        rows: list[Row] = []
        for c, m, o, h, sl, tx, ty, tz, dx, dy, dz, qx, qy, qz, qw, bx, by, bz, bw in constants:
            theta = vals[c] * m + o
            angle = theta * h
            co, si = cos(angle), sin(angle)
            st = theta * sl
            rows.append(
                (
                    tx + st * dx,
                    ty + st * dy,
                    tz + st * dz,
                    co * qx + si * bx,
                    co * qy + si * by,
                    co * qz + si * bz,
                    co * qw + si * bw,
                )
            )
        return rows

    def transforms(self, values: npt.NDArray[np.float64], edges: IntArray | None = None) -> Matrix:
        """Rows ``(tx, ty, tz, qx, qy, qz, qw)`` of ``edges`` (default: every movable edge) for
        coordinate values ``values`` (one per entry of ``coordinates``).

        Passing :meth:`edges_seen`'s array of every edge (or ``None``) takes the path without
        fancy indexing of the constants: it runs once per joint-state message.
        """
        if edges is None or edges is self._all_edges:
            t0, q0, b, d, half, slide = self._t0, self._q0, self._b, self._d, self._half, self._slide
            coordinate, multiplier, offset = self.edge_coordinate, self._multiplier, self._offset
        else:
            t0, q0, b, d = self._t0[edges], self._q0[edges], self._b[edges], self._d[edges]
            half, slide = self._half[edges], self._slide[edges]
            coordinate = self.edge_coordinate[edges]
            multiplier, offset = self._multiplier[edges], self._offset[edges]
        theta = values[coordinate]
        if self._mimics:
            theta = theta * multiplier + offset
        angle = theta * half
        out = np.empty((len(theta), 7))
        np.multiply(np.cos(angle)[:, None], q0, out=out[:, 3:])
        out[:, 3:] += np.sin(angle)[:, None] * b
        if self._any_prismatic:
            np.add(t0, (theta * slide)[:, None] * d, out=out[:, :3])
        else:
            out[:, :3] = t0
        return out

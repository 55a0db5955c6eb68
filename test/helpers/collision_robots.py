"""Robots for the collision tests: the Panda of example-robot-data (meshes and SRDF) and small analytic ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bb_robot.collision.matrix import adjacent_pairs
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import read_srdf
from bb_robot.loading import load_file
from bb_robot.model.robot import Robot
from helpers.robot_files import example_robot_data_urdfs

BUNDLED_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"


def table_world(*extra_models: str) -> str:
    """An SDF world with a static table (a 0.3 × 0.3 × 0.1 m box centred at (0, -0.8, 0.25)) and ``extra_models``."""
    table = """    <model name="table">
      <static>true</static>
      <pose>0 -0.8 0.25 0 0 0</pose>
      <link name="top">
        <collision name="top"><geometry><box><size>0.3 0.3 0.1</size></box></geometry></collision>
      </link>
    </model>
"""
    body = table + "".join(extra_models)
    return f'<?xml version="1.0"?>\n<sdf version="1.9">\n  <world name="cell">\n{body}  </world>\n</sdf>\n'


def example_robot_files(urdf: str, srdf: str) -> tuple[Path, Path, Path]:
    """``(urdf, srdf, share)``: a robot of example-robot-data (the URDF path ending in ``urdf``), its SRDF
    ``<robot>/srdf/<srdf>`` and the share directory its ``package://example-robot-data/...`` mesh URIs
    resolve in; skips where it is not installed."""
    for path in example_robot_data_urdfs():
        if path.as_posix().endswith(urdf):
            share = path.parents[4]  # <share>/example-robot-data/robots/<robot>/<dir>/<file>.urdf
            return path, path.parents[1] / "srdf" / srdf, share
    pytest.skip("example-robot-data (scripts/setup installs it) is not installed")
    raise AssertionError  # unreachable


def panda_files() -> tuple[Path, Path, Path]:
    """``(urdf, srdf, share)`` of the Panda of example-robot-data (:func:`example_robot_files`)."""
    return example_robot_files("panda_description/urdf/panda.urdf", "panda.srdf")


def two_bodies(base: str, mover: str, axis: str = "1 0 0") -> str:
    """URDF text: a fixed ``base`` geometry and a ``mover`` geometry on a prismatic joint along ``axis``.

    Args:
        base: the ``<geometry>`` body of the base link.
        mover: the ``<geometry>`` body of the moving link.
        axis: the prismatic joint's axis.
    """
    return f"""<robot name="two">
  <link name="base"><collision><geometry>{base}</geometry></collision></link>
  <link name="slider"/>
  <link name="mover"><collision><geometry>{mover}</geometry></collision></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="slider"/>
    <axis xyz="{axis}"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>
  <joint name="turn" type="revolute"><parent link="slider"/><child link="mover"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


# ------------------------------------------------------------------ Pinocchio with the same geometry
def pin_q(model: Any, robot: Robot, names: tuple[str, ...], q: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration for ours: each joint by name, mimic joints given their value."""
    import pinocchio as pin

    values = dict(zip(names, q, strict=True))
    result = pin.neutral(model)
    for joint_id in range(1, model.njoints):
        name = model.names[joint_id]
        joint = robot.joints[name]
        value = values[joint.mimic.joint] * joint.mimic.multiplier + joint.mimic.offset if joint.mimic else values[name]
        j = model.joints[joint_id]
        if j.nq == 2:
            result[j.idx_q : j.idx_q + 2] = (np.cos(value), np.sin(value))
        else:
            result[j.idx_q] = value
    return result


def labels_by_order(model: CollisionModel) -> dict[tuple[str, int], str]:
    """Our part label for (link, ordinal of the part in its link)."""
    seen: dict[str, int] = {}
    result = {}
    for part in model.parts:
        index = seen.get(part.link, 0)
        seen[part.link] = index + 1
        result[(part.link, index)] = part.label
    return result


def pin_labels(model: Any, geometry: Any, ours: CollisionModel) -> list[str]:
    """Our label of each of Pinocchio's geometry objects, matched by link and order within the link."""
    by_order = labels_by_order(ours)
    seen: dict[str, int] = {}
    labels = []
    for item in geometry.geometryObjects:
        link = model.frames[item.parentFrame].name
        index = seen.get(link, 0)
        seen[link] = index + 1
        labels.append(by_order[(link, index)])
    return labels


def to_hulls(geometry: Any) -> None:
    """Each mesh of Pinocchio's geometry replaced by its convex hull, built from the hull's vertices only (as
    bb_robot builds it: coal's buildConvexRepresentation keeps interior vertices, which mislead GJK)."""
    import coal

    for item in geometry.geometryObjects:
        if hasattr(item.geometry, "buildConvexRepresentation"):
            points = coal.StdVec_Vec3s()
            points.extend(np.array(item.geometry.vertices(), dtype=float).reshape(-1, 3))
            item.geometry = coal.ConvexBase.convexHull(points, False, "Qt")


def build(urdf: Path, srdf: Path | None, share: Path | None) -> tuple[CollisionModel, Any, Any]:
    """Ours and Pinocchio's (model, geometry model) of one robot, with the same pairs: an SRDF's, or
    every pair but the adjacent ones (Pinocchio itself leaves out parts on one joint)."""
    import pinocchio as pin

    loaded = load_file(str(urdf))
    dirs = [str(share)] if share else []
    parts = robot_parts(loaded.robot, loaded.source, dirs)
    # Without an SRDF: adjacent links are left out (Pinocchio leaves out parts on one joint itself).
    disabled = (
        read_srdf(srdf, loaded.robot.links).disabled if srdf else adjacent_pairs(loaded.robot, {p.link for p in parts})
    )
    ours = CollisionModel(loaded.robot, parts, disabled)
    model = pin.buildModelFromUrdf(str(urdf))
    geometry = pin.buildGeomFromUrdf(model, str(urdf), pin.GeometryType.COLLISION, dirs)
    geometry.addAllCollisionPairs()
    if srdf:
        pin.removeCollisionPairs(model, geometry, str(srdf))
    else:
        frame = [model.frames[item.parentFrame].name for item in geometry.geometryObjects]
        indices = [(p.first, p.second) for p in geometry.collisionPairs]  # copies: removal shifts the vector
        for first, second in indices:
            if tuple(sorted((frame[first], frame[second]))) in disabled:
                geometry.removeCollisionPair(pin.CollisionPair(first, second))
    return ours, model, geometry

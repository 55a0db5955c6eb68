"""World objects as parts: poses from quaternions, MoveIt's primitive dimensions, cones and triangle meshes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bb_robot.collision.objects import Cone, TriangleMesh, object_parts, pose_matrix, primitive
from bb_robot.model.geometry import Box, Cylinder, Sphere

coal = pytest.importorskip("coal")


def test_pose_matrix_normalises_the_quaternion() -> None:
    pose = pose_matrix([1.0, 2.0, 3.0], [0.0, 0.0, 2.0, 2.0])  # 90° about z, length 2√2
    np.testing.assert_allclose(pose[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)
    np.testing.assert_allclose(pose[:3, 3], [1, 2, 3])


@pytest.mark.parametrize(
    ("position", "orientation", "names"),
    [
        ([math.nan, 0, 0], [0, 0, 0, 1], "position"),
        ([0, 0, 0], [0, 0, 0, math.inf], "orientation"),
        ([0, 0, 0], [0, 0, 0, 0], "zero length"),
    ],
)
def test_pose_matrix_refuses_bad_numbers(position: list[float], orientation: list[float], names: str) -> None:
    with pytest.raises(ValueError, match=names):
        pose_matrix(position, orientation)


def test_primitives_take_moveits_order() -> None:
    assert primitive("BOX", [1, 2, 3]) == Box((1.0, 2.0, 3.0))
    assert primitive("sphere", [0.5]) == Sphere(0.5)
    assert primitive("cylinder", [0.4, 0.1]) == Cylinder(0.1, 0.4)  # height, radius
    assert primitive("Cone", [0.3, 0.2]) == Cone(0.2, 0.3)
    with pytest.raises(ValueError, match="unknown primitive type 'plane'"):
        primitive("plane", [0, 0, 1, 0])
    with pytest.raises(ValueError, match="box needs 3 positive dimensions"):
        primitive("box", [1, -2, 3])


def _distance(part: object, point: np.ndarray) -> float:
    probe = coal.Sphere(1e-9)
    there = coal.Transform3s(np.eye(3), point)
    placed = coal.Transform3s(part.local[:3, :3], part.local[:3, 3])  # type: ignore[attr-defined]
    result = coal.DistanceResult()
    return float(coal.distance(part.hull, placed, probe, there, coal.DistanceRequest(), result))  # type: ignore[attr-defined]


def test_object_parts_place_each_shape_at_its_pose() -> None:
    shift = np.eye(4)
    shift[:3, 3] = (1.0, 0.0, 0.0)
    cone, mesh = object_parts(
        "world/thing",
        [
            (Cone(0.1, 0.4), np.eye(4)),
            (
                TriangleMesh(
                    np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]),
                    np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]),
                ),
                shift,
            ),
        ],
    )
    assert (cone.label, mesh.label) == ("world/thing/0", "world/thing/1")
    # the cone's tip at +z: 0.05 m above it is 0.05 m away; its base rim 0.1 m out at z = -0.2
    assert _distance(cone, np.array([0.0, 0.0, 0.25])) == pytest.approx(0.05, abs=1e-6)
    assert _distance(cone, np.array([0.2, 0.0, -0.2])) == pytest.approx(0.1, abs=1e-6)
    # the tetrahedron moved 1 m along x: its corner (1, 0, 0) becomes (2, 0, 0)
    assert _distance(mesh, np.array([2.5, 0.0, 0.0])) == pytest.approx(0.5, abs=1e-6)
    # bounding spheres: the cone's rim and tip; every vertex of the mesh
    assert cone.radius == pytest.approx(math.hypot(0.1, 0.2))
    assert np.linalg.norm(mesh.points - mesh.center, axis=1).max() <= mesh.radius + 1e-12


def test_a_degenerate_mesh_is_refused() -> None:
    with pytest.raises(ValueError, match="must index its 4 vertices"):
        object_parts("world/bad", [(TriangleMesh(np.eye(4)[:, :3], np.array([[0, 1, 7]])), np.eye(4))])


def test_a_flat_mesh_is_refused_before_coal_builds_its_hull() -> None:
    # coal's qhull ended the process (SIGSEGV) on points in one plane: a tray sent as a mesh on
    # /collision_object would have taken down the move_group node and the driver following its scene
    square = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
    tilted = square @ pose_matrix([0, 0, 0], [0.3, 0.2, 0.1, 0.9])[:3, :3].T + 0.4
    for vertices in (square, tilted, np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]])):
        with pytest.raises(ValueError, match="lie on one plane"):
            object_parts("world/tray", [(TriangleMesh(vertices, np.array([[0, 1, 2], [1, 3, 2]])), np.eye(4))])


def test_a_shape_beyond_any_cell_is_refused_not_built() -> None:
    """A vertex a billion metres out (a hostile .scene file's) crashed coal's builders: refused first."""
    vertices = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 999999999.0, 1.0]])
    triangles = np.array([[0, 1, 2], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    with pytest.raises(ValueError, match="mesh vertex lies 1e\\+09 m out"):
        object_parts("world/far", [(TriangleMesh(vertices, triangles), np.eye(4))])
    with pytest.raises(ValueError, match="box needs 3 positive dimensions of at most 1000 m"):
        primitive("box", [1.0, 1.0, 1e9])

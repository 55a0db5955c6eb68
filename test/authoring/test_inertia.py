"""The analytic inertias of ``Inertial.from_box/from_cylinder/from_sphere`` against independent values.

Two independent sources: worked textbook values (solid box m(b² + c²)/12, solid cylinder
about its axis m r²/2 and across it m(3r² + h²)/12, solid sphere 2/5 m r², with numbers
chosen so the results are exact), and a numerical integration of ∫ρ(r²δ − r rᵀ)dV over a
voxel grid of the solid (midpoints of N³ cells of its bounding box; cells whose midpoint is
inside carry equal mass), which also checks the products of inertia are zero.
"""

from __future__ import annotations

import numpy as np
import pytest

from bb_robot.authoring import Box, Cylinder, Inertial, Mesh, Origin, Sphere


def _matrix(inertial: Inertial) -> np.ndarray:
    return np.array(inertial.matrix.rows)


def _voxel_inertia(mass: float, half: tuple[float, float, float], inside: object, n: int = 120) -> np.ndarray:
    """The inertia tensor about the origin of ``mass`` spread evenly over the voxels whose
    midpoints satisfy ``inside(x, y, z)``, in the box ``[-half, half]``."""
    axes = [(np.arange(n) + 0.5) / n * 2.0 * h - h for h in half]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    keep = inside(x, y, z)  # type: ignore[operator]
    points = np.stack([x[keep], y[keep], z[keep]], axis=1)
    m = mass / len(points)
    r2 = np.einsum("ij,ij->i", points, points)
    return m * (np.eye(3) * r2.sum() - points.T @ points)


# ------------------------------------------------------------------------------ textbook values
def test_box_textbook() -> None:
    # m = 12 kg, 1 × 2 × 3 m: ixx = (2² + 3²), iyy = (1² + 3²), izz = (1² + 2²)
    assert _matrix(Inertial.from_box(12.0, 1.0, 2.0, 3.0)) == pytest.approx(np.diag([13.0, 10.0, 5.0]), rel=1e-15)


def test_cylinder_textbook() -> None:
    # m = 12 kg, r = 1 m, h = 2 m: across 12(3 + 4)/12 = 7, about the axis 12/2 = 6
    assert _matrix(Inertial.from_cylinder(12.0, 1.0, 2.0)) == pytest.approx(np.diag([7.0, 7.0, 6.0]), rel=1e-15)


def test_sphere_textbook() -> None:
    # m = 5 kg, r = 2 m: 2/5 · 5 · 4 = 8
    assert _matrix(Inertial.from_sphere(5.0, 2.0)) == pytest.approx(np.diag([8.0, 8.0, 8.0]), rel=1e-15)


def test_thin_limits() -> None:
    # a thin rod along z (r → 0): m h²/12 across; a flat disc (h → 0): m r²/4 across, m r²/2 about z
    assert _matrix(Inertial.from_cylinder(3.0, 0.0, 2.0)) == pytest.approx(np.diag([1.0, 1.0, 0.0]))
    assert _matrix(Inertial.from_cylinder(4.0, 1.0, 0.0)) == pytest.approx(np.diag([1.0, 1.0, 2.0]))
    assert _matrix(Inertial.from_box(6.0, 2.0, 0.0, 0.0)) == pytest.approx(np.diag([0.0, 2.0, 2.0]))


# ------------------------------------------------------------------------------ numerical integration
@pytest.mark.parametrize(("mass", "size"), [(2.5, (0.3, 0.1, 0.05)), (0.8, (0.06, 0.12, 0.05)), (1.0, (1.0, 1.0, 1.0))])
def test_box_against_a_voxel_grid(mass: float, size: tuple[float, float, float]) -> None:
    half = (size[0] / 2, size[1] / 2, size[2] / 2)
    numeric = _voxel_inertia(mass, half, lambda x, y, z: np.ones_like(x, dtype=bool))
    analytic = _matrix(Inertial.from_box(mass, *size))
    # the midpoint rule underestimates each extent's second moment by a factor (1 - 1/n²)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-4, atol=1e-12 * np.abs(analytic).max())


@pytest.mark.parametrize(("mass", "radius", "length"), [(8.4, 0.055, 0.40), (4.0, 0.08, 0.15), (1.0, 0.5, 0.1)])
def test_cylinder_against_a_voxel_grid(mass: float, radius: float, length: float) -> None:
    half = (radius, radius, length / 2)
    numeric = _voxel_inertia(mass, half, lambda x, y, z: x * x + y * y <= radius * radius)
    analytic = _matrix(Inertial.from_cylinder(mass, radius, length))
    np.testing.assert_allclose(analytic, numeric, rtol=5e-3, atol=1e-6 * np.abs(analytic).max())


@pytest.mark.parametrize(("mass", "radius"), [(1.0, 0.1), (7.5, 0.35)])
def test_sphere_against_a_voxel_grid(mass: float, radius: float) -> None:
    half = (radius, radius, radius)
    numeric = _voxel_inertia(mass, half, lambda x, y, z: x * x + y * y + z * z <= radius * radius)
    analytic = _matrix(Inertial.from_sphere(mass, radius))
    np.testing.assert_allclose(analytic, numeric, rtol=5e-3, atol=1e-6 * np.abs(analytic).max())


# ------------------------------------------------------------------------------ options
def test_from_geometry_dispatches_and_multiplies() -> None:
    box, cylinder, sphere = Box((0.1, 0.2, 0.3)), Cylinder(0.05, 0.4), Sphere(0.2)
    origin = Origin((0.0, 0.0, 0.15))
    assert Inertial.from_geometry(2.0, box, origin) == Inertial.from_box(2.0, 0.1, 0.2, 0.3, origin)
    assert Inertial.from_geometry(2.0, cylinder) == Inertial.from_cylinder(2.0, 0.05, 0.4)
    assert Inertial.from_geometry(2.0, sphere) == Inertial.from_sphere(2.0, 0.2)
    tripled = Inertial.from_geometry(2.0, box, inertia_multiply=3.0)
    np.testing.assert_allclose(_matrix(tripled), 3.0 * _matrix(Inertial.from_geometry(2.0, box)), rtol=1e-15)
    assert tripled.mass == 2.0  # the multiplier scales the inertia only
    with pytest.raises(ValueError, match="Mesh"):
        Inertial.from_geometry(2.0, Mesh("part.stl"))

"""bb_robot.model.transforms: rpy, homogeneous matrices, quaternions, cross-product matrices.

Expected matrices are the elementary rotations written out by hand; round trips cover
the branches of the quaternion extraction and the rpy singularity.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bb_robot.model.geometry import Origin
from bb_robot.model.transforms import (
    matrix_to_quaternion,
    matrix_to_rpy,
    origin_to_matrix,
    rpy_to_matrix,
    skew,
)


def rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def quaternion_to_matrix(q: tuple[float, float, float, float]) -> np.ndarray:
    """The textbook conversion of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


RPYS = [
    (0.0, 0.0, 0.0),
    (0.3, 0.0, 0.0),
    (0.0, -0.7, 0.0),
    (0.0, 0.0, 2.9),
    (0.1, 0.2, 0.3),
    (-2.0, 1.2, -3.0),
    (3.0, -1.5, 1.0),
]


@pytest.mark.parametrize("angle", [0.0, 0.5, -1.2, math.pi])
def test_single_axis_rpy_is_the_elementary_rotation(angle: float) -> None:
    np.testing.assert_allclose(rpy_to_matrix((angle, 0, 0)), rx(angle), atol=1e-15)
    np.testing.assert_allclose(rpy_to_matrix((0, angle, 0)), ry(angle), atol=1e-15)
    np.testing.assert_allclose(rpy_to_matrix((0, 0, angle)), rz(angle), atol=1e-15)


@pytest.mark.parametrize("rpy", RPYS)
def test_rpy_is_fixed_axis_roll_then_pitch_then_yaw(rpy: tuple[float, float, float]) -> None:
    roll, pitch, yaw = rpy
    np.testing.assert_allclose(rpy_to_matrix(rpy), rz(yaw) @ ry(pitch) @ rx(roll), atol=1e-14)


@pytest.mark.parametrize("rpy", RPYS)
def test_rpy_matrix_is_a_rotation(rpy: tuple[float, float, float]) -> None:
    r = rpy_to_matrix(rpy)
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-14)
    assert np.linalg.det(r) == pytest.approx(1.0)


def test_quarter_turn_yaw_maps_x_to_y() -> None:
    np.testing.assert_allclose(rpy_to_matrix((0, 0, math.pi / 2)) @ [1, 0, 0], [0, 1, 0], atol=1e-15)


@pytest.mark.parametrize("rpy", RPYS)
def test_matrix_to_rpy_inverts_rpy_to_matrix(rpy: tuple[float, float, float]) -> None:
    assert matrix_to_rpy(rpy_to_matrix(rpy)) == pytest.approx(rpy, abs=1e-12)


@pytest.mark.parametrize("pitch", [math.pi / 2, -math.pi / 2])
@pytest.mark.parametrize(("roll", "yaw"), [(0.0, 0.0), (0.4, 0.0), (0.4, 1.1), (-2.0, 2.5)])
def test_matrix_to_rpy_at_the_singularity_gives_yaw_zero_and_the_same_rotation(
    roll: float, pitch: float, yaw: float
) -> None:
    r = rpy_to_matrix((roll, pitch, yaw))
    got = matrix_to_rpy(r)
    assert got[1] == pytest.approx(pitch)
    assert got[2] == 0.0
    np.testing.assert_allclose(rpy_to_matrix(got), r, atol=1e-12)


@pytest.mark.parametrize("pitch", [math.pi / 2 - 1e-7, -math.pi / 2 + 1e-6])
def test_matrix_to_rpy_near_the_singularity_reproduces_the_rotation(pitch: float) -> None:
    r = rpy_to_matrix((0.3, pitch, -0.8))
    np.testing.assert_allclose(rpy_to_matrix(matrix_to_rpy(r)), r, atol=1e-9)


def test_origin_to_matrix() -> None:
    m = origin_to_matrix(Origin((1.0, -2.0, 0.5), (0.0, 0.0, math.pi / 2)))
    np.testing.assert_allclose(m[:3, :3], rz(math.pi / 2), atol=1e-15)
    np.testing.assert_array_equal(m[:3, 3], [1.0, -2.0, 0.5])
    np.testing.assert_array_equal(m[3], [0, 0, 0, 1])
    # the point (1, 0, 0) of the child frame lands at the origin + parent y
    np.testing.assert_allclose(m @ [1, 0, 0, 1], [1.0, -1.0, 0.5, 1.0], atol=1e-15)


def test_origin_none_and_default_are_identity() -> None:
    np.testing.assert_array_equal(origin_to_matrix(None), np.eye(4))
    np.testing.assert_array_equal(origin_to_matrix(Origin()), np.eye(4))


def test_origin_to_matrix_returns_a_fresh_array() -> None:
    a = origin_to_matrix(None)
    a[0, 0] = 5.0
    np.testing.assert_array_equal(origin_to_matrix(None), np.eye(4))


@pytest.mark.parametrize(
    ("rotation", "expected"),
    [
        (np.eye(3), (0.0, 0.0, 0.0, 1.0)),
        (rz(math.pi / 2), (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))),
        (rx(0.6), (math.sin(0.3), 0.0, 0.0, math.cos(0.3))),
        # half turns: the trace is -1, so each diagonal branch is taken in turn
        (rx(math.pi), (1.0, 0.0, 0.0, 0.0)),
        (ry(math.pi), (0.0, 1.0, 0.0, 0.0)),
        (rz(math.pi), (0.0, 0.0, 1.0, 0.0)),
    ],
    ids=["identity", "yaw90", "roll0.6", "x180", "y180", "z180"],
)
def test_matrix_to_quaternion_known_values(rotation: np.ndarray, expected: tuple[float, ...]) -> None:
    got = matrix_to_quaternion(rotation)
    # q and -q are the same rotation; a half turn has w = 0, so compare up to sign there
    if abs(expected[3]) < 1e-12:
        assert got == pytest.approx(expected, abs=1e-12) or got == pytest.approx(tuple(-c for c in expected), abs=1e-12)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "rpy",
    [*RPYS, (math.pi, 0.1, 0.0), (0.0, 3.0, 0.0), (0.2, 0.1, 3.1), (2.9, 0.0, 0.1)],
)
def test_quaternion_round_trip_is_unit_with_w_non_negative(rpy: tuple[float, float, float]) -> None:
    r = rpy_to_matrix(rpy)
    q = matrix_to_quaternion(r)
    assert math.fsum(c * c for c in q) == pytest.approx(1.0)
    assert q[3] >= 0.0
    np.testing.assert_allclose(quaternion_to_matrix(q), r, atol=1e-12)


def test_quaternion_is_normalised_even_from_a_slightly_off_matrix() -> None:
    q = matrix_to_quaternion(rz(0.4) * (1 + 1e-6))
    assert math.fsum(c * c for c in q) == pytest.approx(1.0, abs=1e-15)


def test_skew_is_the_cross_product_matrix() -> None:
    v = (0.3, -1.2, 2.0)
    s = skew(v)
    for w in ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.7, -0.1]):
        np.testing.assert_allclose(s @ w, np.cross(v, w), atol=1e-15)
    np.testing.assert_array_equal(s, -s.T)

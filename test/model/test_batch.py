"""bb_robot.model.batch.sincos against the C library's cos and sin (Python's math module).

``sincos`` computes both through ``tan(x / 2)``; every batched kinematics path (the numpy
products and the compiled kernel) takes its cosines and sines from it.  Checked: the absolute
error stays within 2 units in the last place of 1 over the whole finite float range, and the
relative error of the sine within a few units where the sine is small (near 0 and near ±π).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from bb_robot.model.batch import sincos

ABSOLUTE = 2 * np.spacing(1.0)  # 4.4e-16
RELATIVE = 4 * np.spacing(1.0)


def _check(x: np.ndarray) -> None:
    cos, sin = sincos(x)
    expected_cos = np.array([math.cos(v) for v in x.ravel()]).reshape(x.shape)
    expected_sin = np.array([math.sin(v) for v in x.ravel()]).reshape(x.shape)
    assert cos.shape == sin.shape == x.shape
    worst = np.abs(cos - expected_cos)
    assert worst.max(initial=0.0) <= ABSOLUTE, f"cos({x.ravel()[worst.argmax()]!r}) off by {worst.max():.3g}"
    worst = np.abs(sin - expected_sin)
    assert worst.max(initial=0.0) <= ABSOLUTE, f"sin({x.ravel()[worst.argmax()]!r}) off by {worst.max():.3g}"


def test_joint_ranges_and_the_points_where_tan_is_large_or_zero() -> None:
    rng = np.random.default_rng(7)
    quarter_turns = np.arange(-64, 65)[:, None] * (math.pi / 2)
    _check(rng.uniform(-4 * math.pi, 4 * math.pi, 100_000))
    _check((quarter_turns + rng.uniform(-1e-9, 1e-9, (129, 200))).ravel())
    _check(quarter_turns.ravel())
    _check(np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300, math.pi, -math.pi, 2 * math.pi]))
    cos, sin = sincos(np.array([math.pi, -math.pi, 1e-300]))
    # Where the sine is small its relative error stays small too (sin = 2t / (1 + t²)).
    np.testing.assert_allclose(sin, [math.sin(math.pi), math.sin(-math.pi), 1e-300], rtol=RELATIVE, atol=0)
    np.testing.assert_array_equal(cos, [-1.0, -1.0, 1.0])


def test_large_arguments() -> None:
    rng = np.random.default_rng(8)
    _check(rng.uniform(-1e8, 1e8, 50_000))
    _check(10 ** rng.uniform(8, 308, 50_000) * rng.choice([-1.0, 1.0], 50_000))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(arrays(np.float64, st.integers(1, 64), elements=st.floats(allow_nan=False, allow_infinity=False)))
def test_any_finite_batch(x: np.ndarray) -> None:
    _check(x)


def test_shapes_are_kept_and_the_input_is_not_changed() -> None:
    x = np.linspace(-3, 3, 24).reshape(2, 3, 4)
    before = x.copy()
    cos, sin = sincos(x)
    assert cos.shape == sin.shape == (2, 3, 4)
    np.testing.assert_array_equal(x, before)

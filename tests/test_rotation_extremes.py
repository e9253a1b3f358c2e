"""tumble.rotation's binary operations at the edges of the float range (issue 27).

Regression tests for what the campaign's third rule found (``tests/campaign_binary.py``).
Oracles: SciPy on the operands brought back to moderate size by powers of two (exact), and
closed forms of half and quarter turns.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from oracles import quiet
from tumble import InputError
from tumble import rotation as tr

EPS64 = float(np.finfo(np.float64).eps)
#: Angles from normalised factors against SciPy's: a few roundings of order-one numbers.
ANGLE_TOL = 64 * EPS64


def _scipy_angle(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """SciPy's magnitude of ``p⁻¹ q``, of the factors normalised in float64 (SciPy
    normalises too; scaling each by a power of two first keeps their squares finite)."""

    def unit(x: np.ndarray) -> np.ndarray:
        x = np.ldexp(x, -np.frexp(np.max(np.abs(x), axis=-1, keepdims=True))[1])
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    def to_sp(x: np.ndarray) -> Rotation:
        return Rotation.from_quat(unit(x)[..., [1, 2, 3, 0]])

    return (to_sp(p).inv() * to_sp(q)).magnitude()


@pytest.mark.parametrize(
    ("p_scale", "q_scale"),
    [(2.0**510, 2.0**340), (2.0**-500, 2.0**-300), (2.0**511, 1.0), (2.0**-500, 2.0**-20)],
)
def test_regression_rotation_angle_of_long_or_short_factors_is_the_unit_factors_angle(
    p_scale, q_scale, rng
):
    # The long campaign (issue 27): |p| = 6.7e153 against |q| = 2.7e102 gave 3.14 for an
    # angle of 0.72 (the squared vector part of p* ⊗ q overflowed), and factors near
    # 1e-150 lost the angle's digits to the underflow of that square. Single pairs and
    # batches, no warning.
    p, q = tr.random_quat(8, rng), tr.random_quat(8, rng)
    expected = _scipy_angle(p, q)
    P, Q = p * p_scale, q * q_scale
    got = quiet(lambda: tr.rotation_angle(P, Q))
    np.testing.assert_allclose(got, expected, rtol=0, atol=ANGLE_TOL)
    for i in range(len(p)):
        single = quiet(lambda i=i: tr.rotation_angle(P[i], Q[i]))
        assert abs(float(single) - expected[i]) <= ANGLE_TOL, (i, single, expected[i])


def test_rotation_angle_of_exact_half_and_quarter_turns_stays_exact():
    # 0, π/2 and π are also what overflow makes of the angle: such results are recomputed
    # from the unit factors, and exact ones come out the same.
    one, i_unit = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0, 0.0])
    assert tr.rotation_angle(one, one) == 0.0
    assert tr.rotation_angle(one, i_unit) == math.pi
    assert tr.rotation_angle(one, np.array([1.0, 1.0, 0.0, 0.0])) == math.pi / 2


@pytest.mark.parametrize("magnitude", [1.7e308, 1e308, 2.0**1000])
def test_regression_cayley_rotate_of_vectors_near_the_largest_float(magnitude, rng):
    # The long campaign (issue 27): v near 1e308 overflowed in the formula's sums (NumPy
    # warned, the result held inf) although the rotated vector has the length of v. The map
    # is linear in v: SciPy's rotation by 2 atan(|phi|/2) about phi of v scaled down.
    v = rng.normal(size=(6, 3))
    v = v / np.linalg.norm(v, axis=-1, keepdims=True) * magnitude  # |v'| = |v| <= 1.7e308
    phi = np.vstack([rng.normal(size=(5, 3)), [[0.0, 2e200, 0.0]]])
    direction = phi / np.max(np.abs(phi), axis=-1, keepdims=True)
    axis = direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    length = np.max(np.abs(phi), axis=-1) * np.linalg.norm(direction, axis=-1)
    angle = 2.0 * np.arctan(length / 2.0)
    expected = Rotation.from_rotvec(axis * angle[:, None]).apply(v / magnitude) * magnitude
    got = quiet(lambda: tr.cayley_rotate(v, phi))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14 * magnitude)


def test_regression_cayley_rotate_beyond_the_largest_float_names_v():
    # (m, m, 0) turned by 45° about z is (0, sqrt(2) m, 0): beyond the range for m = 1.5e308.
    m = 1.5e308
    phi = np.array([0.0, 0.0, 2.0 * math.tan(math.pi / 8.0)])  # 2 atan(|phi|/2) = 45°
    with pytest.raises(InputError, match=r"^v: "):
        quiet(lambda: tr.cayley_rotate([m, m, 0.0], phi))


def test_quat_rotate_by_a_long_quaternion_keeps_a_tiny_vector_exact():
    q = tr.rotvec_to_quat([0.0, 0.0, math.pi / 2]) * 2.0**400  # a quarter turn about z
    v = np.array([2.0**-1000, 0.0, 0.0])
    expected = np.array([0.0, 2.0**-1000, 0.0])
    for got in (tr.quat_rotate(q, v), tr.quat_rotate(q[None], v[None])[0]):
        np.testing.assert_allclose(got, expected, rtol=0, atol=4 * EPS64 * 2.0**-1000)


def test_regression_quat_rotate_float32_beyond_its_range_names_v():
    # The long campaign (issue 27): float32 vectors of length 4.2e38 (components 3.2e38)
    # rotated to a component of -4.2e38, stored as -inf without an error: the loop computes
    # float32 rows partly in float64 and flags only what overflowed there.
    q = np.array([0.82786185, 0.83093375, 0.664101, 0.01682453], dtype=np.float32)
    v = np.array([-2.4612771e38, -3.1901042e38, -1.6141427e38], dtype=np.float32)
    wide = tr.quat_rotate(q.astype(np.float64), v.astype(np.float64))
    assert np.max(np.abs(wide)) > np.finfo(np.float32).max  # beyond float32, not float64
    for args in ((q, v), (q[None], v[None])):
        with pytest.raises(InputError, match=r"^v: "):
            quiet(lambda args=args: tr.quat_rotate(*args))

"""Tests of tumble.rotation against SciPy, closed forms and the group laws."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats
from scipy.spatial.transform import Rotation
from tests import strategies as sts

import tumble.rotation as tr
from tumble import InputError

EPS64 = np.finfo(np.float64).eps
EPS32 = np.finfo(np.float32).eps
#: The issue's bar for agreement with SciPy in float64 (inputs of order 1).
SCIPY_TOL = 1e-14
#: float32 results against the float64 ones: a handful of float32 roundings.
TOL32 = 16 * float(EPS32)
#: Group laws in float64: a few products of order-1 numbers, each rounding once.
LAW_TOL = 16 * EPS64
N = 256  # random batch size: enough to hit every Shepperd branch, still fast


# -- helpers ---------------------------------------------------------------------------


def to_sp(q: np.ndarray) -> Rotation:
    """SciPy rotation of scalar-first quaternions (SciPy is scalar last)."""
    return Rotation.from_quat(np.asarray(q)[..., [1, 2, 3, 0]])


def from_sp(r: Rotation) -> np.ndarray:
    return r.as_quat()[..., [3, 0, 1, 2]]


def cover_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance between quaternions up to sign (q and -q are the same rotation)."""
    a, b = np.broadcast_arrays(a, b)
    return np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1))


def assert_close(actual, expected, atol, what=""):
    actual = np.asarray(actual)
    assert not np.isnan(actual).any(), f"{what}: NaN in result"
    err = np.max(np.abs(actual - expected)) if actual.size else 0.0
    assert err <= atol, f"{what}: max error {err:.3g} > {atol:.3g}"


def assert_same_rotation(a, b, atol, what=""):
    a = np.asarray(a)
    assert not np.isnan(a).any(), f"{what}: NaN in result"
    err = np.max(cover_distance(a, b)) if a.size else 0.0
    assert err <= atol, f"{what}: max error up to sign {err:.3g} > {atol:.3g}"


@pytest.fixture
def quats(rng):
    return tr.random_quat(N, rng)


@pytest.fixture
def rotvecs(rng):
    """Rotation vectors with angles uniform in [0, π) and random axes."""
    axis = rng.standard_normal((N, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    return axis * rng.uniform(0, np.pi, (N, 1))


# -- agreement with SciPy (float64, random batches) -------------------------------------


def test_quat_multiply_matches_scipy_composition(rng, quats):
    p = tr.random_quat(N, rng)
    expected = from_sp(to_sp(p) * to_sp(quats))
    # SciPy's composition is the same Hamilton product, so even the sign agrees.
    assert_close(tr.quat_multiply(p, quats), expected, SCIPY_TOL, "p ⊗ q")


def test_quat_multiply_broadcasts_mismatched_leading_shapes(rng):
    p = tr.random_quat((5, 1), rng)
    q = tr.random_quat(3, rng)
    out = tr.quat_multiply(p, q)
    assert out.shape == (5, 3, 4)
    pb, qb = np.broadcast_arrays(p, q)
    expected = from_sp(to_sp(pb.reshape(-1, 4)) * to_sp(qb.reshape(-1, 4)))
    assert_close(out.reshape(-1, 4), expected, SCIPY_TOL, "broadcast p ⊗ q")


def test_quat_conjugate_is_scipy_inverse(quats):
    assert_same_rotation(tr.quat_conjugate(quats), from_sp(to_sp(quats).inv()), SCIPY_TOL)


def test_quat_normalize_matches_scipy(rng):
    q = rng.standard_normal((N, 4)) * rng.uniform(0.1, 10, (N, 1))
    out = tr.quat_normalize(q)
    assert_close(out, from_sp(Rotation.from_quat(q[:, [1, 2, 3, 0]])), SCIPY_TOL)
    assert_close(np.linalg.norm(out, axis=-1), 1.0, 4 * EPS64, "unit norm")


def test_quat_rotate_matches_scipy_apply(rng, quats):
    v = rng.standard_normal((N, 3))
    assert_close(tr.quat_rotate(quats, v), to_sp(quats).apply(v), SCIPY_TOL)


def test_quat_rotate_broadcasts_one_quaternion_over_many_vectors(rng):
    q = tr.random_quat((), rng)
    v = rng.standard_normal((4, 5, 3))
    out = tr.quat_rotate(q, v)
    assert out.shape == (4, 5, 3)
    assert_close(out, to_sp(q).apply(v.reshape(-1, 3)).reshape(4, 5, 3), SCIPY_TOL)


def test_quat_rotate_uses_the_normalised_quaternion(rng, quats):
    v = rng.standard_normal((N, 3))
    scaled = quats * rng.uniform(0.5, 2.0, (N, 1))
    assert_close(tr.quat_rotate(scaled, v), to_sp(quats).apply(v), SCIPY_TOL)


def test_quat_rotate_absorbs_small_norm_drift_to_round_off(rng, quats):
    v = rng.standard_normal((N, 3))
    # |q|² - 1 up to 1e-8: the rotation is by q/|q|, so the drift leaves no trace.
    drifted = quats * np.sqrt(1 + rng.uniform(-1e-8, 1e-8, (N, 1)))
    assert_close(tr.quat_rotate(drifted, v), to_sp(quats).apply(v), SCIPY_TOL)


def test_quat_rotate_accepts_every_normal_squared_norm(rng, quats):
    """Any scale whose |q|² is a finite normal number rotates by q/|q| to round-off."""
    v = rng.standard_normal((N, 3))
    expected = to_sp(quats).apply(v)
    for scale in (1e-150, 1e-75, 1e75, 1e150):
        assert_close(tr.quat_rotate(quats * scale, v), expected, SCIPY_TOL)
    with pytest.raises(InputError, match=r"^q: expected nonzero quaternions"):
        tr.quat_rotate(quats * 1e-160, v)  # |q|² below the smallest normal number


def test_quat_rotate_judges_the_norm_in_the_dtype_it_computes_in(rng):
    """A float32 q whose |q|² is subnormal in float32 is fine next to float64 v (the
    rotation runs in float64); a NaN in v is then reported as v's, not q's."""
    q = np.array([1e-20, 0.0, 0.0, 0.0], np.float32)  # |q|² = 1e-40: subnormal in float32
    v = rng.standard_normal((3, 3))
    assert_close(tr.quat_rotate(q, v), v, SCIPY_TOL)
    with pytest.raises(InputError, match=r"^q: expected nonzero quaternions"):
        tr.quat_rotate(q, v.astype(np.float32))
    v[1, 2] = np.nan
    with pytest.raises(InputError, match=r"^v: "):
        tr.quat_rotate(q, v)


def test_quat_to_matrix_matches_scipy(quats):
    assert_close(tr.quat_to_matrix(quats), to_sp(quats).as_matrix(), SCIPY_TOL)


def test_matrix_to_quat_matches_scipy_and_has_nonnegative_w(quats):
    R = to_sp(quats).as_matrix()
    out = tr.matrix_to_quat(R)
    assert_same_rotation(out, quats, SCIPY_TOL)
    canonical = Rotation.from_matrix(R).as_quat(canonical=True)[:, [3, 0, 1, 2]]
    assert_close(out, canonical, SCIPY_TOL)
    assert np.all(out[:, 0] >= 0)


def test_rotvec_to_quat_matches_scipy(rotvecs):
    assert_same_rotation(
        tr.rotvec_to_quat(rotvecs), from_sp(Rotation.from_rotvec(rotvecs)), SCIPY_TOL
    )


def test_quat_to_rotvec_matches_scipy(quats):
    assert_close(tr.quat_to_rotvec(quats), to_sp(quats).as_rotvec(), SCIPY_TOL)


def test_rotvec_to_matrix_matches_scipy(rotvecs):
    assert_close(tr.rotvec_to_matrix(rotvecs), Rotation.from_rotvec(rotvecs).as_matrix(), SCIPY_TOL)


def test_matrix_to_rotvec_matches_scipy(rotvecs):
    R = Rotation.from_rotvec(rotvecs).as_matrix()
    assert_close(tr.matrix_to_rotvec(R), Rotation.from_matrix(R).as_rotvec(), SCIPY_TOL)


def test_quat_exp_is_scipy_rotvec_of_twice_x(rotvecs):
    x = rotvecs / 2
    assert_same_rotation(tr.quat_exp(x), from_sp(Rotation.from_rotvec(2 * x)), SCIPY_TOL)


def test_quat_log_is_half_scipy_rotvec(quats):
    assert_close(tr.quat_log(quats), to_sp(quats).as_rotvec() / 2, SCIPY_TOL)


def test_rotation_angle_matches_scipy_magnitude(rng, quats):
    p = tr.random_quat(N, rng)
    expected = (to_sp(p).inv() * to_sp(quats)).magnitude()
    assert_close(tr.rotation_angle(p, quats), expected, SCIPY_TOL)


def test_rotation_angle_broadcasts_and_returns_scalar_for_single(rng):
    p = tr.random_quat((5, 1), rng)
    q = tr.random_quat(3, rng)
    assert tr.rotation_angle(p, q).shape == (5, 3)
    single = tr.rotation_angle(p[0, 0], q[0])
    assert np.ndim(single) == 0
    assert isinstance(single, np.floating)


def test_skew_matches_numpy_cross(rng):
    a = rng.standard_normal((N, 3))
    b = rng.standard_normal((N, 3))
    assert_close(np.einsum("...ij,...j->...i", tr.skew(a), b), np.cross(a, b), 4 * EPS64 * 10)
    assert_close(tr.unskew(tr.skew(a)), a, 0.0)


def test_unskew_projects_onto_the_antisymmetric_part(rng):
    a = rng.standard_normal(3)
    S = rng.standard_normal((3, 3))
    assert_close(tr.unskew(tr.skew(a) + S + S.T), a, 8 * EPS64)


def test_scipy_interop_reorders_components(quats):
    r = tr.to_scipy(quats)
    assert isinstance(r, Rotation)
    assert_close(r.as_quat(), quats[:, [1, 2, 3, 0]], 2 * EPS64)
    assert_close(tr.from_scipy(r), quats, 2 * EPS64)
    single = Rotation.from_quat([0.0, 0.0, math.sin(0.5), math.cos(0.5)])
    q1 = tr.from_scipy(single)
    assert q1.shape == (4,)
    assert_close(q1, [math.cos(0.5), 0.0, 0.0, math.sin(0.5)], 0.0)
    assert tr.to_scipy(q1).single


def test_to_scipy_keeps_multi_dimensional_batches(rng):
    q = tr.random_quat((2, 3), rng)
    assert_close(tr.from_scipy(tr.to_scipy(q)), q, 2 * EPS64)


# -- conventions spelled out -----------------------------------------------------------


def test_multiply_applies_right_factor_first(rng, quats):
    p = tr.random_quat(N, rng)
    v = rng.standard_normal((N, 3))
    assert_close(
        tr.quat_rotate(tr.quat_multiply(p, quats), v),
        tr.quat_rotate(p, tr.quat_rotate(quats, v)),
        LAW_TOL * 8,
    )


def test_quarter_turn_about_z_is_counter_clockwise():
    q = tr.rotvec_to_quat([0.0, 0.0, np.pi / 2])
    assert_close(tr.quat_rotate(q, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], 2 * EPS64)
    assert_close(tr.quat_to_matrix(q) @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], 2 * EPS64)


def test_rotvec_to_matrix_is_exp_of_skew(rotvecs):
    from scipy.linalg import expm

    for phi in rotvecs[:16]:
        assert_close(tr.rotvec_to_matrix(phi), expm(tr.skew(phi)), 1e-13, "expm")


# -- round trips --------------------------------------------------------------------------


def test_round_trip_quat_matrix_quat(quats):
    assert_same_rotation(tr.matrix_to_quat(tr.quat_to_matrix(quats)), quats, 4 * EPS64)


def test_round_trip_quat_rotvec_quat(quats):
    assert_same_rotation(tr.rotvec_to_quat(tr.quat_to_rotvec(quats)), quats, 4 * EPS64)


def test_round_trip_rotvec_matrix_rotvec(rotvecs):
    assert_close(tr.matrix_to_rotvec(tr.rotvec_to_matrix(rotvecs)), rotvecs, 1e-14)


def test_round_trip_exp_log(rotvecs):
    x = rotvecs / 2  # |x| < π/2: the principal branch, where log inverts exp
    assert_close(tr.quat_log(tr.quat_exp(x)), x, 8 * EPS64)


def test_log_is_double_cover_aware(quats):
    assert_close(tr.quat_log(-quats), tr.quat_log(quats), 0.0)
    assert_close(tr.rotation_angle(quats, -quats), 0.0, LAW_TOL)


# -- near the identity and near a half turn ----------------------------------------------

AXIS = np.array([2.0, -3.0, 6.0]) / 7.0  # exact unit vector in binary up to one rounding


def test_tiny_angle_conversions_keep_full_precision():
    theta = 1e-9
    phi = theta * AXIS
    q = tr.rotvec_to_quat(phi)
    expected = np.concatenate([[math.cos(theta / 2)], math.sin(theta / 2) * AXIS])
    assert_close(q[1:] / expected[1:], 1.0, 4 * EPS64, "relative vector part")
    assert q[0] == 1.0
    # relative accuracy of the returned rotation vector: a few ulp, not sqrt(eps)
    for back in (tr.quat_to_rotvec(q), tr.matrix_to_rotvec(tr.rotvec_to_matrix(phi))):
        assert_close(back / phi, 1.0, 8 * EPS64, "relative rotvec")
    assert_close(tr.quat_log(tr.quat_exp(phi / 2)) / (phi / 2), 1.0, 4 * EPS64, "log exp")
    R = tr.rotvec_to_matrix(phi)
    assert_close(R, Rotation.from_rotvec(phi).as_matrix(), EPS64)
    assert_close(tr.unskew(R - R.T) / 2 / phi, 1.0, 1e-7, "first-order part of R")


def test_tiny_rotation_angle_is_accurate_where_acos_fails(rng):
    q = tr.random_quat((), rng)
    dq = tr.rotvec_to_quat(1e-9 * AXIS)
    angle = tr.rotation_angle(q, tr.quat_multiply(dq, q))
    # acos(|w|) would give 0 or ~1.5e-8 here; atan2 keeps the product's round-off (~1e-16).
    assert abs(angle - 1e-9) <= 2e-16 * 8
    assert tr.rotation_angle(q, q) == 0.0
    assert tr.rotation_angle([1, 0, 0, 0], dq) == pytest.approx(1e-9, rel=4 * EPS64)


def test_near_half_turn_conversions_are_accurate_and_finite():
    theta = np.pi - 1e-9
    phi = theta * AXIS
    q = tr.rotvec_to_quat(phi)
    R = tr.rotvec_to_matrix(phi)
    # Absolute accuracy of a few ulp of π: the angle is recovered with atan2, not acos.
    near_pi_tol = 8 * EPS64 * np.pi
    for back in (tr.quat_to_rotvec(q), tr.matrix_to_rotvec(R)):
        assert_close(back, phi, near_pi_tol, "rotvec near π")
    assert_same_rotation(tr.matrix_to_quat(R), q, near_pi_tol)
    assert_close(R, Rotation.from_rotvec(phi).as_matrix(), SCIPY_TOL)
    assert_close(tr.quat_log(q), phi / 2, near_pi_tol, "log near π/2")
    assert tr.rotation_angle([1, 0, 0, 0], q) == pytest.approx(theta, abs=near_pi_tol)


def test_exact_half_turn_special_values():
    assert_close(tr.matrix_to_quat(np.diag([1.0, -1.0, -1.0])), [0, 1, 0, 0], 0.0)
    assert_close(tr.matrix_to_quat(np.diag([-1.0, 1.0, -1.0])), [0, 0, 1, 0], 0.0)
    assert_close(tr.matrix_to_quat(np.diag([-1.0, -1.0, 1.0])), [0, 0, 0, 1], 0.0)
    assert_close(np.abs(tr.quat_to_rotvec([0.0, 0.0, 1.0, 0.0])), [0, np.pi, 0], 0.0)
    assert tr.rotation_angle([1, 0, 0, 0], [0, 1, 0, 0]) == np.pi


def test_identity_special_values_are_exact():
    one = np.array([1.0, 0.0, 0.0, 0.0])
    assert_close(tr.quat_to_matrix(one), np.eye(3), 0.0)
    assert_close(tr.matrix_to_quat(np.eye(3)), one, 0.0)
    assert_close(tr.rotvec_to_quat(np.zeros(3)), one, 0.0)
    assert_close(tr.quat_exp(np.zeros(3)), one, 0.0)
    assert_close(tr.quat_exp_approx(np.zeros(3)), one, 0.0)
    assert_close(tr.cayley_quat(np.zeros(3)), one, 0.0)
    assert_close(tr.quat_log(one), np.zeros(3), 0.0)
    assert_close(tr.quat_to_rotvec(one), np.zeros(3), 0.0)
    assert_close(tr.matrix_to_rotvec(np.eye(3)), np.zeros(3), 0.0)
    assert_close(tr.rotvec_to_matrix(np.zeros(3)), np.eye(3), 0.0)
    v = np.array([1.5, -2.0, 0.25])
    assert_close(tr.quat_rotate(one, v), v, 0.0)
    assert_close(tr.cayley_rotate(v, np.zeros(3)), v, 0.0)


@given(sts.rotation_vectors())
def test_every_regime_round_trips_without_nan(phi):
    q = tr.rotvec_to_quat(phi)
    angle = np.linalg.norm(phi)
    back = tr.quat_to_rotvec(q)
    # Angles past π come back as the equivalent rotation of angle 2π - |phi|.
    assert not np.isnan(back).any()
    assert_same_rotation(tr.rotvec_to_quat(back), q, 8 * EPS64)
    assert_same_rotation(tr.matrix_to_quat(tr.rotvec_to_matrix(phi)), q, 16 * EPS64)
    if angle < np.pi:
        assert_close(back, phi, 8 * EPS64 * max(1.0, angle))


# -- dtypes ---------------------------------------------------------------------------------


UNARY_CASES = [
    (tr.quat_normalize, "quat"),
    (tr.quat_conjugate, "quat"),
    (tr.quat_to_matrix, "quat"),
    (tr.quat_to_rotvec, "quat"),
    (tr.quat_log, "quat"),
    (tr.matrix_to_quat, "matrix"),
    (tr.matrix_to_rotvec, "matrix"),
    (tr.rotvec_to_quat, "vec"),
    (tr.rotvec_to_matrix, "vec"),
    (tr.quat_exp, "vec"),
    (tr.quat_exp_approx, "vec"),
    (tr.cayley_quat, "vec"),
    (tr.skew, "vec"),
    (tr.unskew, "matrix"),
]
BINARY_CASES = [
    (tr.quat_multiply, "quat", "quat"),
    (tr.quat_rotate, "quat", "vec"),
    (tr.rotation_angle, "quat", "quat"),
    (tr.cayley_rotate, "vec", "vec"),
]


def sample(kind: str, rng, shape=(7,)) -> np.ndarray:
    if kind == "quat":
        return tr.random_quat(shape, rng)
    if kind == "matrix":
        return tr.quat_to_matrix(tr.random_quat(shape, rng))
    return rng.uniform(-1.5, 1.5, (*shape, 3))


def ids(cases):
    return [c[0].__name__ for c in cases]


@pytest.mark.parametrize(("fn", "kind"), UNARY_CASES, ids=ids(UNARY_CASES))
def test_float32_in_float32_out(fn, kind, rng):
    x = sample(kind, rng)
    out32 = fn(x.astype(np.float32))
    assert out32.dtype == np.float32
    assert_close(out32, fn(x), TOL32 * 4, fn.__name__)


@pytest.mark.parametrize(("fn", "a", "b"), BINARY_CASES, ids=ids(BINARY_CASES))
def test_float32_binary_and_mixed_dtypes(fn, a, b, rng):
    x, y = sample(a, rng), sample(b, rng)
    out32 = fn(x.astype(np.float32), y.astype(np.float32))
    assert out32.dtype == np.float32
    assert_close(out32, fn(x, y), TOL32 * 4, fn.__name__)
    assert fn(x.astype(np.float32), y).dtype == np.float64


@pytest.mark.parametrize("angle", [1e-9, 1e-4, np.pi - 1e-6, np.pi])
def test_float32_near_identity_and_half_turn_is_finite_and_accurate(angle):
    phi = (angle * AXIS).astype(np.float32)
    q = tr.rotvec_to_quat(phi)
    R = tr.rotvec_to_matrix(phi)
    for got, want in (
        (q, tr.rotvec_to_quat(phi.astype(np.float64))),
        (tr.matrix_to_quat(R), q.astype(np.float64)),
        (tr.rotvec_to_quat(tr.quat_to_rotvec(q)), q.astype(np.float64)),
    ):
        assert got.dtype == np.float32
        assert_same_rotation(got, want, TOL32, f"float32 at {angle}")
    assert tr.rotation_angle(np.float32([1, 0, 0, 0]), q) == pytest.approx(angle, abs=TOL32)


def test_integer_input_promotes_to_float64():
    assert tr.quat_to_matrix([1, 0, 0, 0]).dtype == np.float64
    assert tr.rotvec_to_quat(np.array([0, 0, 1], dtype=np.int32)).dtype == np.float64
    assert tr.quat_multiply([1, 0, 0, 0], [0, 1, 0, 0]).dtype == np.float64
    assert_close(tr.quat_multiply([0, 1, 0, 0], [0, 0, 1, 0]), [0, 0, 0, 1], 0.0)  # ij = k
    assert tr.skew([1, 2, 3]).dtype == np.float64
    assert tr.matrix_to_quat(np.eye(3, dtype=int)).dtype == np.float64


def test_empty_batches_give_empty_results():
    assert tr.quat_multiply(np.zeros((0, 4)), [1, 0, 0, 0]).shape == (0, 4)
    assert tr.quat_to_matrix(np.zeros((0, 4))).shape == (0, 3, 3)
    assert tr.matrix_to_quat(np.zeros((0, 3, 3))).shape == (0, 4)
    assert tr.rotation_angle(np.zeros((0, 4)), [1, 0, 0, 0]).shape == (0,)


# -- group laws (Hypothesis) -----------------------------------------------------------------


@given(sts.quaternions(), sts.quaternions(), sts.quaternions())
def test_multiplication_is_associative(p, q, r):
    left = tr.quat_multiply(tr.quat_multiply(p, q), r)
    right = tr.quat_multiply(p, tr.quat_multiply(q, r))
    assert_close(left, right, LAW_TOL)


@given(sts.quaternions())
def test_conjugate_is_the_inverse(q):
    one = np.array([1.0, 0.0, 0.0, 0.0])
    assert_close(tr.quat_multiply(q, tr.quat_conjugate(q)), one, LAW_TOL)
    assert_close(tr.quat_multiply(tr.quat_conjugate(q), q), one, LAW_TOL)


@given(sts.quaternions(unit=False))
def test_identity_is_neutral(q):
    one = np.array([1.0, 0.0, 0.0, 0.0])
    assert_close(tr.quat_multiply(one, q), q, 0.0)
    assert_close(tr.quat_multiply(q, one), q, 0.0)


@given(sts.quaternions(), sts.quaternions(), sts.vectors())
def test_composition_acts_like_matrix_product(p, q, v):
    pq = tr.quat_multiply(p, q)
    assert_close(tr.quat_to_matrix(pq), tr.quat_to_matrix(p) @ tr.quat_to_matrix(q), LAW_TOL)
    assert_close(tr.quat_rotate(pq, v), tr.quat_rotate(p, tr.quat_rotate(q, v)), 1e-13)


@given(sts.broadcastable_batch_shapes(), st.integers(0, 2**32 - 1))
def test_batch_shapes_broadcast_like_numpy(shapes, seed):
    rng = np.random.default_rng(seed)
    p = tr.random_quat(shapes[0], rng)
    q = tr.random_quat(shapes[1], rng)
    out = tr.quat_multiply(p, q)
    assert out.shape == (*np.broadcast_shapes(shapes[0], shapes[1]), 4)
    pb, qb = np.broadcast_arrays(p, q)
    pairs = zip(pb.reshape(-1, 4), qb.reshape(-1, 4), strict=True)
    expected = [tr.quat_multiply(a, b) for a, b in pairs]
    assert_close(out.reshape(-1, 4), np.array(expected).reshape(-1, 4), 0.0)


@given(sts.batch_shapes().flatmap(sts.quaternion_batches))
def test_conversions_keep_any_batch_shape(q):
    batch = q.shape[:-1]
    R = tr.quat_to_matrix(q)
    phi = tr.quat_to_rotvec(q)
    assert R.shape == (*batch, 3, 3)
    assert phi.shape == (*batch, 3)
    assert tr.rotation_angle(q, q).shape == batch
    assert_same_rotation(tr.matrix_to_quat(R), q, 8 * EPS64)
    assert_same_rotation(tr.rotvec_to_quat(phi), q, 8 * EPS64)


@given(sts.rotation_vectors(), sts.rotation_vectors())
def test_rotation_angle_is_a_metric_on_rotations(a, b):
    p, q = tr.rotvec_to_quat(a), tr.rotvec_to_quat(b)
    d = tr.rotation_angle(p, q)
    assert 0.0 <= d <= np.pi
    assert d == pytest.approx(tr.rotation_angle(q, p), abs=LAW_TOL)
    assert d == pytest.approx(tr.rotation_angle(-p, q), abs=LAW_TOL)


# -- Cayley rotations ------------------------------------------------------------------------


def angle_law_quat(phi: np.ndarray, turned: float) -> np.ndarray:
    """Exact quaternion turning by ``turned`` about ``phi``'s axis."""
    n = np.linalg.norm(phi)
    return tr.rotvec_to_quat(phi * (turned / n)) if n > 0 else np.array([1.0, 0, 0, 0])


@example(np.array([0.0, 0.0, 2.225073858507e-311]), np.zeros(3))  # subnormal: the scaling
@given(sts.vectors(), sts.rotation_vectors())
def test_cayley_rotate_preserves_length_exactly(v, phi):
    out = tr.cayley_rotate(v, phi)
    # Measure norms after an exact power-of-two scaling, so tiny vectors (Hypothesis finds
    # 1e-156) do not lose the test's own precision to subnormal squares. ldexp, not a factor
    # 2^-e: for a subnormal v that factor overflows to inf (and inf * 0 is NaN).
    e = int(np.frexp(np.abs(v).max())[1]) if np.any(v) else 0
    n_in, n_out = np.linalg.norm(np.ldexp(v, -e)), np.linalg.norm(np.ldexp(out, -e))
    # An orthogonal map evaluated with ~10 roundings: |v'| = |v| to a few ulp of |v|.
    assert abs(n_out - n_in) <= 16 * EPS64 * n_in


@given(sts.vectors(), sts.rotation_vectors())
def test_cayley_rotate_turns_by_two_atan_half_phi_about_phi(v, phi):
    turned = 2 * math.atan(np.linalg.norm(phi) / 2)
    expected = tr.quat_rotate(angle_law_quat(phi, turned), v)
    assert_close(tr.cayley_rotate(v, phi), expected, 32 * EPS64 * max(1.0, np.linalg.norm(v)))


def test_cayley_rotate_angle_loss_matches_the_reference():
    v = np.array([1.0, 0.0, 0.0])
    for phi, turned in ((np.pi / 4, 0.748393), (np.pi / 2, 1.331548)):
        out = tr.cayley_rotate(v, [0.0, 0.0, phi])
        assert math.atan2(out[1], out[0]) == pytest.approx(turned, abs=1e-6)


@given(sts.rotation_vectors())
def test_cayley_quat_is_unit_and_turns_by_four_atan_quarter_phi(phi):
    q = tr.cayley_quat(phi)
    assert abs(np.linalg.norm(q) - 1.0) <= 4 * EPS64
    turned = 4 * math.atan(np.linalg.norm(phi) / 4)
    assert_same_rotation(q, angle_law_quat(phi, turned), 8 * EPS64)


def test_cayley_quat_equals_normalised_first_order_update_at_half_step(rng):
    phi = rng.standard_normal((N, 3))
    # The reference's equivalence: normalize(1 + ½ (0, phi/2)) is the Cayley rotation by phi/2;
    # doing it twice is the quarter-angle quaternion of phi.
    half = tr.quat_normalize(np.concatenate([np.ones((N, 1)), phi / 4], axis=-1))
    assert_same_rotation(tr.cayley_quat(phi), tr.quat_multiply(half, half), 1e-15)


# -- the article's approximate exponential --------------------------------------------------


def approx_errors(step_angle: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(angle between approximate and exact rotation, |q_approx - q_exact|) per step angle."""
    x = np.outer(step_angle / 2, AXIS)
    qa, qe = tr.quat_exp_approx(x), tr.quat_exp(x)
    return tr.rotation_angle(qe, qa), np.linalg.norm(qa - qe, axis=-1)


def test_quat_exp_approx_article_claim_under_one_percent_up_to_90_degrees():
    step = np.radians(np.linspace(0.5, 90.0, 400))
    angle_err, qdist = approx_errors(step)
    # The measure under which the article's claim holds: |q_approx - q_exact| (9.4e-3 at 90°).
    assert qdist.max() < 0.01
    # The stricter measure, angle error relative to the step angle: 1.19e-2 at 90°, crossing
    # 1 % at 86° (documented in docs/rotation.md).
    rel = angle_err / step
    assert rel[step <= np.radians(85.0)].max() < 0.01
    assert rel[-1] == pytest.approx(1.193e-2, rel=1e-3)


@given(sts.unit_vectors(), st.floats(0.0, np.pi))
def test_quat_exp_approx_error_is_below_phi5_over_480(axis, step):
    x = axis * step / 2
    qa, qe = tr.quat_exp_approx(x), tr.quat_exp(x)
    assert abs(np.linalg.norm(qa) - 1.0) <= 4 * EPS64
    # axis exact: the vector parts are parallel
    assert np.linalg.norm(np.cross(qa[1:], qe[1:])) <= 8 * EPS64
    # measured law |phi|⁵/480 for the angle error, plus round-off of forming the angle
    assert tr.rotation_angle(qe, qa) <= step**5 / 480 + 8 * EPS64


def test_quat_exp_approx_documented_table():
    table = {1: 1.9e-10, 10: 1.9e-6, 30: 1.6e-4, 45: 7.8e-4, 60: 2.4e-3, 90: 1.19e-2}
    deg = np.array(sorted(table), dtype=float)
    angle_err, _ = approx_errors(np.radians(deg))
    rel = angle_err / np.radians(deg)
    assert_close(rel / np.array([table[d] for d in sorted(table)]), 1.0, 0.03, "table")


# -- random_quat ------------------------------------------------------------------------------


def test_random_quat_is_uniform_on_so3():
    q = tr.random_quat(20000, 7)
    assert_close(np.linalg.norm(q, axis=-1), 1.0, 4 * EPS64)
    # Haar measure: the angle θ has CDF (θ - sin θ)/π on [0, π].
    angle = tr.rotation_angle([1, 0, 0, 0], q)
    ks = stats.kstest(angle, lambda t: (t - np.sin(t)) / np.pi)
    assert ks.pvalue > 1e-3
    # E[R] = 0 under Haar measure; the standard error of each entry is 1/sqrt(3 n).
    mean_R = tr.quat_to_matrix(q).mean(axis=0)
    assert np.abs(mean_R).max() < 5 / np.sqrt(3 * 20000)
    # no sign bias: w < 0 about half the time
    assert abs(np.mean(q[:, 0] < 0) - 0.5) < 5 * 0.5 / np.sqrt(20000)


def test_random_quat_seeds_generators_shapes_and_dtype():
    assert_close(tr.random_quat((2, 3), 5), tr.random_quat((2, 3), 5), 0.0)
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert_close(tr.random_quat(4, g1), tr.random_quat(4, g2), 0.0)
    assert tr.random_quat((), 1).shape == (4,)
    assert tr.random_quat(0, 1).shape == (0, 4)
    assert tr.random_quat(3, 1, dtype=np.float32).dtype == np.float32


# -- bad input ---------------------------------------------------------------------------------

GOOD = {
    "quat": np.array([1.0, 0.0, 0.0, 0.0]),
    "vec": np.array([0.1, 0.2, 0.3]),
    "matrix": np.eye(3),
}
WRONG_AXIS = {"quat": np.ones(3), "vec": np.ones(4), "matrix": np.ones((3, 4))}
ARG_NAMES = {
    "quat_normalize": ("q",),
    "quat_conjugate": ("q",),
    "quat_to_matrix": ("q",),
    "quat_to_rotvec": ("q",),
    "quat_log": ("q",),
    "matrix_to_quat": ("R",),
    "matrix_to_rotvec": ("R",),
    "rotvec_to_quat": ("phi",),
    "rotvec_to_matrix": ("phi",),
    "quat_exp": ("x",),
    "quat_exp_approx": ("x",),
    "cayley_quat": ("phi",),
    "skew": ("v",),
    "unskew": ("W",),
    "quat_multiply": ("p", "q"),
    "quat_rotate": ("q", "v"),
    "rotation_angle": ("p", "q"),
    "cayley_rotate": ("v", "phi"),
}
ALL_CASES = [(fn, (kind,)) for fn, kind in UNARY_CASES] + [
    (fn, (a, b)) for fn, a, b in BINARY_CASES
]
BAD_VALUES = {"nan": np.nan, "inf": np.inf}


def args_with(kinds, i, bad):
    return [bad if j == i else GOOD[k] for j, k in enumerate(kinds)]


@pytest.mark.parametrize(("fn", "kinds"), ALL_CASES, ids=ids(ALL_CASES))
def test_wrong_last_axis_names_the_argument(fn, kinds):
    for i, kind in enumerate(kinds):
        name = ARG_NAMES[fn.__name__][i]
        with pytest.raises(InputError, match=rf"^{name}: expected shape"):
            fn(*args_with(kinds, i, WRONG_AXIS[kind]))


@pytest.mark.parametrize("bad", list(BAD_VALUES), ids=list(BAD_VALUES))
@pytest.mark.parametrize(("fn", "kinds"), ALL_CASES, ids=ids(ALL_CASES))
def test_non_finite_values_name_the_argument(fn, kinds, bad):
    for i, kind in enumerate(kinds):
        name = ARG_NAMES[fn.__name__][i]
        value = GOOD[kind].copy()
        value.flat[1] = BAD_VALUES[bad]
        with pytest.raises(InputError, match=rf"^{name}: expected finite"):
            fn(*args_with(kinds, i, value))


@pytest.mark.parametrize(("fn", "kinds"), ALL_CASES, ids=ids(ALL_CASES))
def test_non_real_input_is_rejected(fn, kinds):
    name = ARG_NAMES[fn.__name__][0]
    for bad in (np.array(GOOD[kinds[0]], dtype=complex), np.ones_like(GOOD[kinds[0]], bool)):
        with pytest.raises(InputError, match=rf"^{name}: "):
            fn(*args_with(kinds, 0, bad))


ROTATION_READERS = [
    tr.quat_normalize,
    tr.quat_to_matrix,
    tr.quat_to_rotvec,
    tr.quat_log,
    tr.to_scipy,
]


@pytest.mark.parametrize("fn", ROTATION_READERS, ids=[f.__name__ for f in ROTATION_READERS])
def test_zero_quaternion_is_rejected(fn):
    q = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    with pytest.raises(InputError, match=r"^q: expected nonzero quaternions"):
        fn(q)


def test_zero_quaternion_is_rejected_by_binary_readers():
    zero, one = np.zeros(4), np.array([1.0, 0, 0, 0])
    with pytest.raises(InputError, match=r"^q: expected nonzero"):
        tr.quat_rotate(zero, [1.0, 0, 0])
    with pytest.raises(InputError, match=r"^p: expected nonzero"):
        tr.rotation_angle(zero, one)
    with pytest.raises(InputError, match=r"^q: expected nonzero"):
        tr.rotation_angle(one, np.full(4, 1e-200))
    with pytest.raises(InputError, match=r"^q: expected quaternions whose squared norm is finite"):
        tr.quat_rotate(np.full(4, 1e160), [1.0, 0, 0])
    with pytest.raises(InputError, match=r"^q: expected quaternions whose squared norm is finite"):
        tr.quat_to_matrix(np.full(4, 1e160))
    # plain algebra accepts zero
    assert_close(tr.quat_multiply(zero, one), zero, 0.0)


@pytest.mark.parametrize(("fn", "a", "b"), BINARY_CASES, ids=ids(BINARY_CASES))
def test_mismatched_batch_shapes_are_rejected(fn, a, b, rng):
    x, y = sample(a, rng, (5, 2)), sample(b, rng, (3,))
    names = ARG_NAMES[fn.__name__]
    with pytest.raises(InputError, match=rf"batch shapes do not broadcast: {names[0]} \(5, 2\)"):
        fn(x, y)


@pytest.mark.parametrize("fn", [tr.matrix_to_quat, tr.matrix_to_rotvec, tr.unskew])
@pytest.mark.parametrize("shape", [(3,), (2, 2), (3, 4), (4, 3), (4, 4)])
def test_non_3x3_matrices_are_rejected(fn, shape):
    name = "W" if fn is tr.unskew else "R"
    with pytest.raises(InputError, match=rf"^{name}: expected shape \(\.\.\., 3, 3\)"):
        fn(np.ones(shape))


@pytest.mark.parametrize("fn", [tr.matrix_to_quat, tr.matrix_to_rotvec])
@pytest.mark.parametrize(
    "R",
    [2 * np.eye(3), np.diag([1.0, 1.0, -1.0]), np.eye(3) + 1e-3, np.zeros((3, 3))],
    ids=["scaled", "reflection", "sheared", "zero"],
)
def test_non_rotation_matrices_are_rejected(fn, R):
    with pytest.raises(InputError, match=r"^R: expected a rotation matrix"):
        fn(np.stack([np.eye(3), R]))


def test_slightly_drifted_rotation_matrix_is_accepted(rng):
    R = tr.quat_to_matrix(tr.random_quat((), rng)) + 1e-8 * rng.standard_normal((3, 3))
    q = tr.matrix_to_quat(R)
    assert abs(np.linalg.norm(q) - 1.0) <= 4 * EPS64


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"shape": -1}, "shape"),
        ({"shape": (2, -1)}, "shape"),
        ({"shape": 2.5}, "shape"),
        ({"shape": 2, "rng": "seed"}, "rng"),
        ({"shape": 2, "rng": -3}, "rng"),
        ({"shape": 2, "dtype": np.int64}, "dtype"),
    ],
)
def test_random_quat_bad_arguments(kwargs, name):
    with pytest.raises(InputError, match=rf"^{name}: "):
        tr.random_quat(**kwargs)


def test_from_scipy_rejects_other_objects():
    with pytest.raises(InputError, match=r"^rotation: expected a scipy"):
        tr.from_scipy(np.array([1.0, 0, 0, 0]))


# -- pickling -------------------------------------------------------------------------------------


def test_results_and_errors_pickle(quats):
    r = tr.to_scipy(quats)
    assert_close(tr.from_scipy(pickle.loads(pickle.dumps(r))), quats, 2 * EPS64)
    with pytest.raises(InputError) as info:
        tr.quat_normalize(np.zeros(4))
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, InputError)
    assert str(again) == str(info.value)


# -- the flat loops: parallel path, shared rows, overflow -------------------------------------


def test_parallel_and_serial_loops_agree(rng):
    import numba

    from tumble._kernels.dispatch import PARALLEL_MIN_SIZE

    n = PARALLEL_MIN_SIZE + 7
    q = tr.random_quat(n, rng)
    v = rng.standard_normal((n, 3))
    results = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        old = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            results.append(
                (tr.quat_rotate(q, v), tr.quat_multiply(q, q[::-1]), tr.rotvec_to_quat(v))
            )
        finally:
            numba.set_num_threads(old)
    for serial, parallel in zip(results[0], results[1], strict=True):
        assert_close(parallel, serial, 0.0)
    bad = v.copy()
    bad[n // 2, 1] = np.nan
    with pytest.raises(InputError, match=r"^v: expected finite"):
        tr.quat_rotate(q, bad)


def test_shared_row_is_not_copied_but_broadcast(rng):
    q = tr.random_quat((1, 1), rng)
    v = rng.standard_normal((2, 3, 3))
    out = tr.quat_rotate(q, v)
    assert out.shape == (2, 3, 3)
    assert_close(out, to_sp(q[0, 0]).apply(v.reshape(-1, 3)).reshape(2, 3, 3), SCIPY_TOL)


def test_finite_input_whose_rotation_overflows_raises_naming_v():
    # Issue 27: |v| is finite but v'_y = sqrt(2) 1.7e308 is not: an InputError, not inf.
    q = tr.rotvec_to_quat([0.0, 0.0, np.pi / 4])
    with pytest.raises(InputError, match=r"^v: expected vectors whose rotation"):
        tr.quat_rotate(q, [1.7e308, 1.7e308, 0.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_relative_rotation_of_a_quaternion_to_itself_is_exactly_the_identity(dtype):
    # Issue 27: q* ⊗ q had a vector part of up to 1.6e-16 and rotation_angle(q, q) was not 0.
    q = tr.random_quat(100_000, np.random.default_rng(27)).astype(dtype)
    for r in (tr.quat_multiply(tr.quat_conjugate(q), q), tr.quat_multiply(q, tr.quat_conjugate(q))):
        assert r.dtype == dtype
        assert np.all(r[:, 1:] == 0.0)
        assert np.all(r[:, 0] > 0.0)
    assert np.all(tr.rotation_angle(q, q) == 0.0)
    assert tr.rotation_angle(q[7], q[7]) == 0.0  # the one-element path
    one = tr.rotvec_to_quat([1.0, 1.0, 1.0])
    assert tr.rotation_angle(one, one) == 0.0


# regression: |x|² overflowed to inf and the approximations returned NaN silently


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quat_exp_approx_huge_x_is_finite_half_turn(dtype):
    """As ``|x| -> inf`` the approximation tends to ``-(3/|x|, n)``: a half turn about ``n``."""
    big = 1e200 if dtype == np.float64 else 1e30
    n = np.array([2.0, -1.0, 2.0]) / 3.0
    q = tr.quat_exp_approx((big * n).astype(dtype))
    assert q.dtype == dtype
    assert np.all(np.isfinite(q))
    np.testing.assert_allclose(q, np.concatenate([[-3.0 / big], -n]), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("size", [1e15 * (1 - 1e-9), 1e15 * (1 + 1e-9), 1e20, 1e100, 1e300])
def test_large_argument_branches_match_closed_forms(size):
    """Scaled branches (a component above 1e15) against closed forms in the direction n."""
    n = np.array([0.48, 0.6, -0.64])  # unit
    v = np.array([1.0, -2.0, 0.5])
    s = float(size)
    # quat_exp_approx: (1 - s²/2, (1 - s²/6) s n) normalised; in u = 1/s (exact algebra)
    u = 1.0 / s
    r = u * (u * u - 0.5) / (u * u - 1.0 / 6.0)
    want = -np.concatenate([[r], n]) / np.sqrt(1.0 + r * r)
    np.testing.assert_allclose(tr.quat_exp_approx(s * n), want, rtol=1e-14, atol=1e-300)
    # cayley_rotate: angle 2 atan(s/2) about n (Rodrigues, no overflow: the angle is < pi)
    ang = 2.0 * np.arctan(s / 2.0)
    rod = v * np.cos(ang) + np.cross(n, v) * np.sin(ang) + n * (n @ v) * (1 - np.cos(ang))
    got = tr.cayley_rotate(v, s * n)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, rod, atol=1e-14 * np.linalg.norm(v))
    # cayley_quat: angle 4 atan(s/4) about n
    half = 2.0 * np.arctan(s / 4.0)
    want_q = np.concatenate([[np.cos(half)], np.sin(half) * n])
    np.testing.assert_allclose(tr.cayley_quat(s * n), want_q, atol=1e-14)

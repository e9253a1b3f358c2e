"""Mean rotation and vector alignment of tumble.rotation against SciPy and closed forms."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from tests.oracles import cover_distance, quiet
from tests.oracles import scipy_quat as from_sp
from tests.oracles import scipy_rotation as to_sp

import tumble.rotation as tr
from tumble import InputError
from tumble._kernels.dispatch import PARALLEL_MIN_SIZE, single_thread

EPS64 = float(np.finfo(np.float64).eps)
#: The issue's bar for agreement with SciPy (float64, random inputs).
SCIPY_TOL = 1e-12


def clustered(rng, n, spread=0.4, shape=()):
    """Rotations spread about a random centre: a well-conditioned mean."""
    centre = tr.random_quat(shape, rng)
    noise = tr.rotvec_to_quat(spread * rng.standard_normal((*shape, n, 3)))
    q = tr.quat_multiply(noise, centre[..., None, :])
    return q * np.where(rng.random((*shape, n, 1)) < 0.5, -1.0, 1.0)  # both signs


def test_quat_mean_matches_scipy(rng):
    q = clustered(rng, 300)
    assert cover_distance(tr.quat_mean(q), from_sp(to_sp(q).mean())) <= SCIPY_TOL


def test_quat_mean_with_weights_matches_scipy(rng):
    q = clustered(rng, 300)
    w = rng.uniform(0, 2, 300)
    assert cover_distance(tr.quat_mean(q, w), from_sp(to_sp(q).mean(w))) <= SCIPY_TOL


def test_quat_mean_is_batched_over_the_other_axes(rng):
    q = clustered(rng, 40, shape=(3,))  # (3, 40, 4)
    w = rng.uniform(0.1, 2, (3, 40))
    m = tr.quat_mean(q, w, axis=1)
    assert m.shape == (3, 4)
    for g in range(3):
        assert cover_distance(m[g], from_sp(to_sp(q[g]).mean(w[g]))) <= SCIPY_TOL
    assert np.all(m[:, 0] >= 0)
    # the mean over axis 0 of the transposed batch is the same
    assert np.max(cover_distance(tr.quat_mean(np.swapaxes(q, 0, 1), w.T, axis=0), m)) <= 8 * EPS64
    assert tr.quat_mean(q).shape == (4,)


def test_quat_mean_of_a_geodesic_pair_is_the_midpoint(rng):
    q0 = tr.random_quat((), rng)
    step = tr.rotvec_to_quat([0.3, -0.2, 0.5])
    q1 = tr.quat_multiply(step, q0)
    mid = tr.quat_multiply(tr.quat_power(step, 0.5), q0)
    assert cover_distance(tr.quat_mean(np.stack([q0, q1])), mid) <= 8 * EPS64


def test_quat_mean_zero_weight_ignores_an_element(rng):
    q = clustered(rng, 10)
    w = np.ones(10)
    w[3] = 0.0
    assert cover_distance(tr.quat_mean(q, w), tr.quat_mean(np.delete(q, 3, axis=0))) <= 8 * EPS64


def test_quat_mean_input_errors():
    q = np.tile([1.0, 0.0, 0.0, 0.0], (4, 1))
    with pytest.raises(InputError, match=r"^weights: expected non-negative"):
        tr.quat_mean(q, [1.0, -1.0, 1.0, 1.0])
    with pytest.raises(InputError, match=r"^weights: expected a positive total"):
        tr.quat_mean(q, np.zeros(4))
    with pytest.raises(InputError, match=r"^weights: expected a shape that broadcasts"):
        tr.quat_mean(q, np.ones(3))
    with pytest.raises(InputError, match=r"^weights: expected finite"):
        tr.quat_mean(q, [1.0, np.nan, 1.0, 1.0])
    with pytest.raises(InputError, match=r"^axis: expected an axis"):
        tr.quat_mean(q, axis=2)
    with pytest.raises(InputError, match=r"^q: expected shape"):
        tr.quat_mean(np.ones((4, 3)))
    with pytest.raises(InputError, match=r"^q: expected nonzero"):
        tr.quat_mean(np.zeros((4, 4)))
    with pytest.raises(InputError, match=r"^q: expected at least one"):
        tr.quat_mean(np.zeros((0, 4)))


# -- align_vectors ---------------------------------------------------------------------


def test_align_vectors_matches_scipy_with_weights(rng):
    for n in (2, 3, 10, 200):
        b = rng.standard_normal((n, 3))
        q_true = tr.random_quat((), rng)
        a = tr.quat_rotate(q_true, b) + 0.1 * rng.standard_normal((n, 3))
        w = rng.uniform(0.1, 3, n)
        q, rssd = tr.align_vectors(a, b, w)
        rs, rssd_s = Rotation.align_vectors(a, b, w)
        assert cover_distance(q, from_sp(rs)) <= SCIPY_TOL
        assert abs(rssd - rssd_s) <= SCIPY_TOL * max(1.0, rssd_s)
        assert q[0] >= 0


def test_align_vectors_without_weights_matches_scipy(rng):
    a, b = rng.standard_normal((2, 50, 3))
    q, rssd = tr.align_vectors(a, b)
    rs, rssd_s = Rotation.align_vectors(a, b)
    assert cover_distance(q, from_sp(rs)) <= SCIPY_TOL
    assert abs(rssd - rssd_s) <= SCIPY_TOL


def test_align_vectors_rssd_is_the_weighted_residual(rng):
    a, b = rng.standard_normal((2, 20, 3))
    w = rng.uniform(0, 1, 20)
    q, rssd = tr.align_vectors(a, b, w)
    residual = a - tr.quat_rotate(q, b)
    assert abs(rssd - np.sqrt(np.sum(w * np.sum(residual**2, axis=-1)))) <= 16 * EPS64


def test_exact_alignment_gives_round_off_rssd(rng):
    b = rng.standard_normal((30, 3))
    q_true = tr.random_quat((), rng)
    q, rssd = tr.align_vectors(tr.quat_rotate(q_true, b), b)
    assert cover_distance(q, q_true) <= 16 * EPS64
    assert rssd <= 1e-14  # SciPy's trace form gives ~1e-8 here (cancellation)


def test_single_pair_is_the_smallest_rotation_as_scipy(rng):
    for _ in range(20):
        a, b = rng.standard_normal((2, 3))
        q, rssd = tr.align_vectors(a, b)
        rs, rssd_s = Rotation.align_vectors(a, b)
        assert cover_distance(q, from_sp(rs)) <= SCIPY_TOL
        assert abs(rssd - rssd_s) <= SCIPY_TOL
        angle = np.arccos(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))
        assert abs(2 * np.arctan2(np.linalg.norm(q[1:]), q[0]) - angle) <= 1e-14


def test_collinear_pairs_give_the_smallest_rotation(rng):
    # Every a_i on one line, every b_i on another: the turn about the line is free. tumble
    # documents the smallest rotation taking the b line onto the a line.
    u = np.array([1.0, 2.0, 2.0]) / 3.0
    v = np.array([0.0, 0.6, 0.8])
    t = rng.uniform(0.5, 2.0, 5) * np.where(rng.random(5) < 0.5, -1, 1)
    q, rssd = tr.align_vectors(t[:, None] * u, t[:, None] * v)
    assert np.allclose(tr.quat_rotate(q, v), u, atol=1e-15)
    expected = np.arccos(np.dot(u, v))
    assert abs(2 * np.arctan2(np.linalg.norm(q[1:]), q[0]) - expected) <= 1e-14
    assert rssd <= 1e-14


def test_opposite_single_pair_is_a_half_turn_about_a_perpendicular_axis():
    q, rssd = tr.align_vectors([0.0, 0.0, 2.0], [0.0, 0.0, -2.0])
    assert abs(q[0]) <= 1e-16
    assert abs(q[3]) <= 1e-16
    assert np.allclose(tr.quat_rotate(q, [0.0, 0.0, -1.0]), [0.0, 0.0, 1.0], atol=1e-15)
    assert rssd <= 1e-15


def test_align_vectors_batches_broadcast(rng):
    a = rng.standard_normal((4, 6, 3))
    b = rng.standard_normal((6, 3))
    q, rssd = tr.align_vectors(a, b)
    assert q.shape == (4, 4)
    assert rssd.shape == (4,)
    for g in range(4):
        qg, rg = tr.align_vectors(a[g], b)
        assert cover_distance(q[g], qg) <= 4 * EPS64
        assert abs(rssd[g] - rg) <= 4 * EPS64


def test_align_vectors_input_errors():
    a = np.eye(3)
    with pytest.raises(InputError, match=r"^a: expected nonzero vectors"):
        tr.align_vectors(np.array([[1.0, 0, 0], [0, 0, 0]]), np.eye(3)[:2])
    with pytest.raises(InputError, match=r"^b: expected nonzero vectors"):
        tr.align_vectors(np.eye(3)[:2], np.array([[1.0, 0, 0], [0, 0, 0]]))
    with pytest.raises(InputError, match=r"^weights: expected non-negative"):
        tr.align_vectors(a, a, [1.0, -0.5, 1.0])
    with pytest.raises(InputError, match=r"^weights: expected a positive total"):
        tr.align_vectors(a, a, [0.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r"^weights: expected finite"):
        tr.align_vectors(a, a, [1.0, np.inf, 1.0])
    with pytest.raises(InputError, match=r"^a, b: expected the same number of vectors"):
        tr.align_vectors(a, a[:2])
    with pytest.raises(InputError, match=r"^a: expected shape \(\.\.\., 3\)"):
        tr.align_vectors(np.ones((3, 2)), a)
    with pytest.raises(InputError, match=r"^b: expected finite"):
        tr.align_vectors(a, np.full((3, 3), np.nan))
    with pytest.raises(InputError, match=r"^weights: expected a shape"):
        tr.align_vectors(a, a, np.ones(4))


def test_align_vectors_keeps_float32(rng):
    a, b = rng.standard_normal((2, 10, 3)).astype(np.float32)
    q, rssd = tr.align_vectors(a, b)
    assert q.dtype == np.float32
    assert rssd.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs, _ = Rotation.align_vectors(a.astype(np.float64), b.astype(np.float64))
    assert cover_distance(q, from_sp(rs)) <= 1e-6


# -- large sets: the threaded kernels (one pass that sums and checks, split in blocks) ----

LARGE = 3 * PARALLEL_MIN_SIZE


def test_quat_mean_of_a_large_set_on_threads_matches_scipy_and_one_thread(rng):
    q = clustered(rng, LARGE)
    w = rng.uniform(0.1, 3, LARGE)
    m = tr.quat_mean(q, w)
    assert cover_distance(m, from_sp(to_sp(q).mean(w))) <= SCIPY_TOL
    with single_thread():
        m1 = tr.quat_mean(q, w)
    # Only the order of the float64 sums differs.
    assert cover_distance(m, m1) <= 64 * EPS64


def test_quat_mean_of_a_large_set_names_a_single_bad_element(rng):
    q = clustered(rng, LARGE)
    bad = q.copy()
    bad[LARGE // 2] = 0.0
    with pytest.raises(InputError, match=r"^q: expected nonzero quaternions"):
        tr.quat_mean(bad)
    bad[LARGE // 2] = np.nan
    with pytest.raises(InputError, match=r"^q: expected finite"):
        tr.quat_mean(bad)
    w = np.ones(LARGE)
    w[LARGE - 1] = -1.0
    with pytest.raises(InputError, match=r"^weights: expected non-negative"):
        tr.quat_mean(q, w)
    w[LARGE - 1] = np.inf
    with pytest.raises(InputError, match=r"^weights: expected finite"):
        tr.quat_mean(q, w)


def test_align_vectors_of_a_large_set_on_threads_matches_scipy_and_one_thread(rng):
    b = rng.standard_normal((LARGE, 3))
    a = tr.quat_rotate(tr.random_quat((), rng), b) + 0.1 * rng.standard_normal((LARGE, 3))
    w = rng.uniform(0.1, 3, LARGE)
    q, rssd = tr.align_vectors(a, b, w)
    rs, rssd_s = Rotation.align_vectors(a, b, w)
    assert cover_distance(q, from_sp(rs)) <= SCIPY_TOL
    assert abs(rssd - rssd_s) <= SCIPY_TOL * rssd_s
    with single_thread():
        q1, rssd1 = tr.align_vectors(a, b, w)
    # Only the order of the float64 sums differs.
    assert cover_distance(q, q1) <= 64 * EPS64
    assert abs(rssd - rssd1) <= 64 * EPS64 * rssd


def test_align_vectors_of_a_large_set_names_a_single_bad_element(rng):
    a, b = rng.standard_normal((2, LARGE, 3))
    bad = a.copy()
    bad[LARGE // 2] = 0.0
    with pytest.raises(InputError, match=r"^a: expected nonzero vectors"):
        tr.align_vectors(bad, b)
    bad[LARGE // 2, 1] = np.inf
    with pytest.raises(InputError, match=r"^a: expected finite"):
        tr.align_vectors(bad, b)
    w = np.ones(LARGE)
    w[0] = np.nan
    with pytest.raises(InputError, match=r"^weights: expected finite"):
        tr.align_vectors(a, b, w)
    with pytest.raises(InputError, match=r"^a, b: expected vectors and weights whose weighted"):
        tr.align_vectors(1e200 * a, 1e200 * b)
    # Issue 27: unit vectors with weights that overflow the products named "a, b".
    with pytest.raises(InputError, match=r"^weights: expected vectors and weights whose"):
        tr.align_vectors(np.eye(3), np.eye(3)[::-1], np.full(3, 1e308))
    with pytest.raises(InputError, match=r"^a, b, weights: "):
        tr.align_vectors(1e200 * np.eye(3), 1e200 * np.eye(3), np.full(3, 1e10))


def _gain(q: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    """Wahba's gain ``Σ w a·R b`` of the rotation ``q``: the optimum maximises it."""
    return float(np.sum(w * np.einsum("ni,ni->n", a, to_sp(q).apply(b))))


def test_regression_align_vectors_rssd_beyond_float32_names_the_culprit():
    # The long campaign (issue 27): float32 vectors near 3e38 (or weights that large) gave
    # an rssd beyond float32's range, cast with NumPy's "overflow encountered in cast" and
    # returned as inf. The sums are float64; the float32 rssd raises naming the culprit.
    a = np.float32(3e38) * np.eye(3, dtype=np.float32)
    b = -np.eye(3, dtype=np.float32)
    with pytest.raises(InputError, match=r"^a, b: expected an rssd within float32"):
        quiet(lambda: tr.align_vectors(a, b))
    # Vectors near the range with weights above 1 (the campaign's case, 1.9e38 with weights
    # up to 1.9): both are to blame.
    a = np.float32(1.9e38) * np.eye(3, dtype=np.float32)
    w = np.array([1.9, 1.7, 1.0], dtype=np.float32)
    with pytest.raises(InputError, match=r"^a, b, weights: expected an rssd within float32"):
        quiet(lambda: tr.align_vectors(a, np.eye(3, dtype=np.float32), w))
    # Weights whose float64 sum overflows: named without a NumPy warning on the way.
    with pytest.raises(InputError, match=r"^weights: "):
        quiet(lambda: tr.align_vectors(np.eye(3), np.eye(3)[::-1], np.full(3, 1.5e308)))


def test_regression_align_vectors_of_subnormal_vectors_is_optimal():
    # The long campaign (issue 27): B = Σ w a bᵀ was summed unscaled, so products below the
    # smallest normal number lost their digits. a holds exact multiples of the smallest
    # subnormal; scaled by 2^1074 they are the integers below, so SciPy's optimum for the
    # scaled problem is the optimum here, and the rssd is that of a = 0 to round-off.
    units = np.array([[1.0, 1.0, 3.0], [0.0, 1.0, -6.0], [3.0, 0.0, -3.0]])
    a = units * 5e-324
    b = np.array([[0.011, 0.218, -0.436], [0.108, 0.406, 0.501], [0.667, -0.948, -0.781]])
    w = np.array([1.548, 0.287, 0.619])
    best = from_sp(Rotation.align_vectors(units, b, w)[0])
    q, rssd = tr.align_vectors(a, b, w)
    assert _gain(q, units, b, w) >= _gain(best, units, b, w) - 1e-13
    assert rssd == pytest.approx(np.sqrt(np.sum(w * np.sum(b * b, axis=1))), rel=1e-15)


def test_align_vectors_of_faint_products_in_a_batch_matches_scipy_scaled(rng):
    # Vectors at 2^-700 and weights at 2^-300: every product is far below the smallest
    # normal number. Scaled by powers of two the problem is SciPy's, and
    # rssd = 2^-700 sqrt(2^-301) rssd_scipy. The batch's second group is an ordinary one.
    a, b = rng.standard_normal((2, 2, 5, 3))
    w = rng.uniform(0.1, 2.0, (2, 5))
    scale = np.array([[2.0**-700], [1.0]])
    w_scale = np.array([[2.0**-301], [1.0]])
    q, rssd = tr.align_vectors(a * scale[..., None], b * scale[..., None], w * w_scale)
    for g in range(2):
        r, expected = Rotation.align_vectors(a[g], b[g], w[g])
        assert cover_distance(q[g], from_sp(r)) <= SCIPY_TOL
        want = expected * scale[g, 0] * np.sqrt(w_scale[g, 0])
        assert rssd[g] == pytest.approx(want, rel=1e-13)


def test_regression_quat_mean_with_weights_near_the_largest_float(rng):
    # The long campaign (issue 27): weights of 1.6e308 overflowed K = Σ w q̂ q̂ᵀ and the
    # eigensolver raised numba's LinAlgError ("Array must not contain infs or NaNs"). The
    # mean does not depend on the weights' scale: SciPy's of the weights over 1e308.
    q = tr.random_quat((2, 3), rng)
    w = np.array([[1.57e308, 2.8e307, 1.37e308], [1.0, 2.0, 3.0]])
    expected = np.stack([from_sp(to_sp(q[i]).mean(w[i] / w[i].max())) for i in range(2)])
    got = quiet(lambda: tr.quat_mean(q, weights=w, axis=1))
    assert np.max(cover_distance(got, expected)) <= SCIPY_TOL


def test_quat_mean_with_equal_subnormal_weights_is_the_plain_mean(rng):
    q = tr.random_quat(3, rng)
    expected = from_sp(to_sp(q).mean())
    got = tr.quat_mean(q, weights=np.full(3, 5e-324))
    assert cover_distance(got, expected) <= SCIPY_TOL


@pytest.mark.parametrize("exponent", [-1030, -1000, -600, 600, 1000])
def test_quat_mean_does_not_depend_on_the_scale_of_the_weights(exponent, rng):
    # Weights k/256 in [0.5, 0.75] scaled by 2^e (exact, the subnormal ones included): the
    # same mean bit for bit, since the kernel sees that group scaled back; the other group,
    # unscaled, as it was.
    q = tr.random_quat((2, 7), rng)
    w = rng.integers(128, 193, size=(2, 7)) / 256.0
    scaled = w.copy()
    scaled[1] = np.ldexp(w[1], exponent)
    assert np.array_equal(np.ldexp(scaled[1], -exponent), w[1])  # the scaling was exact
    np.testing.assert_array_equal(
        tr.quat_mean(q, weights=scaled, axis=1), tr.quat_mean(q, weights=w, axis=1)
    )


def test_regression_quat_mean_of_faint_quaternions_with_large_weights(rng):
    # The long campaign (issue 27): |q| near 1e-104 with weights near 1e102 overflowed
    # w/|q|² in the kernel's sums and the eigensolver saw inf. The mean does not depend on
    # the quaternions' lengths: SciPy's of the normalised ones.
    q = tr.random_quat(3, rng)
    w = np.array([3.9e102, 6.9e101, 3.4e102])
    expected = from_sp(to_sp(q).mean(w / w.max()))
    got = quiet(lambda: tr.quat_mean(q * 1e-104, weights=w))
    assert cover_distance(got, expected) <= SCIPY_TOL

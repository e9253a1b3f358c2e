"""Tests of tumble.kinematics against independent oracles.

Oracles: the closed form of constant-acceleration translation; SciPy's ``solve_ivp``
(DOP853, rtol 1e-13) on ``dq/dt = 1/2 (omega + alpha t) ⊗ q``; SciPy's ``Rotation`` for
constant angular velocity; ``scipy.integrate.quad`` for the turned angle; a plain NumPy
quaternion product written here.

Compile budget: every distinct combination of operand kinds (array or shared), dtype,
order and exponential is one numba compilation, so the tests reuse a few combinations.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad, solve_ivp
from scipy.spatial.transform import Rotation

from strategies import quaternions, vectors
from tumble import InputError
from tumble import rotation as tr
from tumble._kernels import kinematics as kk
from tumble.kinematics import (
    AUTO_APPROX_MAX_ANGLE,
    MagnusConvergenceWarning,
    magnus,
    rotate,
    rotate_matrix,
    translate,
)
from tumble.rotation import quat_to_matrix

EPS = np.finfo(np.float64).eps
#: A handful of roundings in each formula (products of O(1) numbers, a sqrt, sin/cos).
ROUNDOFF = 16 * EPS
#: SciPy's Rotation and tumble's exp/product round differently: a few dozen ulps.
SCIPY_TOL = 1e-14
#: Angle resolution of ``_angle`` near zero: atan2 of a difference of O(1) numbers.
ANGLE_ROUNDOFF = 1e-15


def _qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product in plain NumPy (the test's own oracle)."""
    pw, px, py, pz = np.moveaxis(p, -1, 0)
    qw, qx, qy, qz = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
        ],
        axis=-1,
    )


def _angle(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Angle of the rotation between unit quaternions ``p`` and ``q`` (double-cover aware)."""
    r = _qmul(p * np.array([1, -1, -1, -1]), q)
    return 2 * np.arctan2(np.linalg.norm(r[..., 1:], axis=-1), np.abs(r[..., 0]))


def _unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    q = rng.normal(size=(*shape, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _scipy_q(r: Rotation) -> np.ndarray:
    return np.roll(r.as_quat(), 1, axis=-1)


def _from_q(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.roll(q, -1, axis=-1))


# --------------------------------------------------------------------------------------
# translate


def test_translate_matches_closed_form(rng):
    x, v, a = (rng.normal(size=(6, 3)) for _ in range(3))
    t = rng.uniform(-2, 2, size=6)
    x1, v1 = translate(x, v, a, t)
    tt = t[:, None]
    np.testing.assert_allclose(v1, v + a * tt, rtol=0, atol=ROUNDOFF * 8)
    np.testing.assert_allclose(x1, x + v * tt + 0.5 * a * tt**2, rtol=0, atol=ROUNDOFF * 8)


def test_translate_steps_compose_exactly(rng):
    """For constant acceleration n steps of dt land where one step of n dt does."""
    x, v, a = (rng.normal(size=(4, 2)) for _ in range(3))
    xs, vs = x, v
    for _ in range(8):
        xs, vs = translate(xs, vs, a, 0.125)
    x1, v1 = translate(x, v, a, 1.0)
    np.testing.assert_allclose(xs, x1, rtol=0, atol=1e-14)
    np.testing.assert_allclose(vs, v1, rtol=0, atol=1e-14)


def test_translate_backward_step_returns(rng):
    x, v, a = (rng.normal(size=(5, 3)) for _ in range(3))
    x1, v1 = translate(x, v, a, 0.3)
    x0, v0 = translate(x1, v1, a, -0.3)
    np.testing.assert_allclose(x0, x, atol=ROUNDOFF * 4)
    np.testing.assert_allclose(v0, v, atol=ROUNDOFF * 4)


def test_translate_dtype_and_shapes():
    x1, v1 = translate(
        np.zeros((2, 1, 3), np.float32),
        np.ones(3, np.float32),
        np.array([0, 0, -9], np.float32),
        0.5,
    )
    assert x1.dtype == np.float32
    assert v1.dtype == np.float32
    assert x1.shape == (2, 1, 3)
    np.testing.assert_array_equal(v1[0, 0], np.array([1, 1, -3.5], np.float32))
    np.testing.assert_array_equal(x1[1, 0], np.array([0.5, 0.5, -0.625], np.float32))
    x2, _ = translate([0, 0], [1, 1], [2, 2], 1)
    assert x2.dtype == np.float64
    np.testing.assert_array_equal(x2, [2.0, 2.0])


# --------------------------------------------------------------------------------------
# magnus: order of accuracy against a tight ODE solve


def _reference(q0: np.ndarray, w: np.ndarray, a: np.ndarray, h: float, **kw) -> np.ndarray:
    """``q(h)`` for a batch ``(m, 4)`` of initial values, all in one tight DOP853 solve."""

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        omega = np.concatenate([np.zeros((len(w), 1)), w + a * t], axis=-1)
        return 0.5 * _qmul(omega, y.reshape(-1, 4)).reshape(-1)

    sol = solve_ivp(rhs, (0.0, h), q0.reshape(-1), method="DOP853", rtol=1e-13, atol=1e-16, **kw)
    assert sol.success
    return sol.y[:, -1].reshape(-1, 4)


#: Halving from 0.4 keeps every residual over 300 times above the reference's own error
#: (about 2e-16, checked below): the largest residual over the batch spans 5e-3..1e-6
#: (order 1), 9e-5..8e-11 (order 2), 7e-6..3e-13 (order 4). Smaller steps would let
#: round-off bend the order-4 slope; larger ones are pre-asymptotic.
STEPS = 0.4 / 2.0 ** np.arange(5)
#: Local error orders: Omega1 misses a dt³ term, Omega1 + Omega2 a dt⁵ term, order 4 a dt⁶.
EXPECTED_ORDER = {1: 3, 2: 5, 4: 6}
#: Pre-asymptotic drift of the measured log2 ratios at these steps (order 4 starts at 6.3).
ORDER_TOL = 0.35
#: The reference solve's own error bound, measured by re-solving with a forced step size.
REFERENCE_TOL = 1e-15


def test_magnus_residual_orders(rng):
    """The residual of rotate (exact exp) against the ODE falls by 2^3, 2^5, 2^6 per halving.

    The residual is the largest over 16 random (omega, alpha) pairs (|omega| = 1,
    |alpha| = 2): for a single pair the leading error coefficient can nearly vanish and the
    next term then masks the order.
    """
    m = 16
    w = rng.normal(size=(m, 3))
    w /= np.linalg.norm(w, axis=-1, keepdims=True)
    a = rng.normal(size=(m, 3))
    a *= 2 / np.linalg.norm(a, axis=-1, keepdims=True)
    q0 = _unit(rng, (m,))
    refs = np.array([_reference(q0, w, a, h) for h in STEPS])
    again = _reference(q0, w, a, STEPS[-1], max_step=STEPS[-1] / 7)
    assert np.max(np.abs(again - refs[-1])) < REFERENCE_TOL
    for order, expected in EXPECTED_ORDER.items():
        q1, _ = rotate(q0, w, a, STEPS[:, None], order=order)
        residual = np.max(np.linalg.norm(q1 - refs, axis=-1), axis=-1)
        assert np.all(np.isfinite(residual))
        assert residual[-1] > 100 * REFERENCE_TOL
        slopes = np.log2(residual[:-1] / residual[1:])
        assert np.all(np.abs(slopes - expected) < ORDER_TOL), (order, slopes)


def test_magnus_terms_vanish_for_parallel_alpha(rng):
    """With alpha parallel to omega every commutator vanishes: Omega = omega dt + alpha dt²/2."""
    w = rng.normal(size=(4, 3))
    a = 1.7 * w
    h = 0.3
    expected = w * h + 0.5 * a * h * h
    for order in (1, 2, 4):
        np.testing.assert_allclose(magnus(w, a, h, order=order), expected, rtol=0, atol=ROUNDOFF)


def test_magnus_closed_form_terms(rng):
    """The documented terms, written out in NumPy (signs as for the world frame)."""
    w, a = rng.normal(size=(2, 5, 3))
    h = 0.7
    o1 = w * h + 0.5 * a * h**2
    o2 = o1 + np.cross(a, w) * h**3 / 12
    o4 = o2 + np.cross(a, np.cross(a, w)) * h**5 / 240
    o4 = o4 + np.cross(w, np.cross(w, np.cross(w, a))) * h**5 / 720
    for order, expected in ((1, o1), (2, o2), (4, o4)):
        np.testing.assert_allclose(magnus(w, a, h, order=order), expected, rtol=0, atol=1e-15)


def test_magnus_time_reversal(rng):
    """Orders 1 and 2 are time-symmetric: the backward step from (omega', alpha) is -Omega."""
    w, a = rng.normal(size=(2, 6, 3))
    h = 0.25
    w1 = w + a * h
    for order in (1, 2):
        np.testing.assert_allclose(
            magnus(w1, a, -h, order=order), -magnus(w, a, h, order=order), atol=ROUNDOFF
        )


def test_magnus_dtype(rng):
    w = rng.normal(size=(3, 3)).astype(np.float32)
    out = magnus(w, np.zeros(3, np.float32), np.float32(0.1))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, w * np.float32(0.1), rtol=1e-6)
    assert magnus(w, np.zeros(3), 0.1).dtype == np.float64


# --------------------------------------------------------------------------------------
# rotate / rotate_matrix


def test_rotate_constant_omega_matches_scipy(rng):
    q = _unit(rng, (7,))
    w = 3 * rng.normal(size=(7, 3))
    h = 0.2
    q1, w1 = rotate(q, w, np.zeros(3), h)
    expected = _scipy_q(Rotation.from_rotvec(w * h) * _from_q(q))
    assert np.all(np.isfinite(q1))
    np.testing.assert_allclose(np.abs(np.sum(q1 * expected, axis=-1)), 1.0, atol=SCIPY_TOL)
    np.testing.assert_allclose(
        q1, expected * np.sign(np.sum(q1 * expected, -1))[:, None], atol=SCIPY_TOL
    )
    np.testing.assert_array_equal(w1, w)


def test_rotate_is_exp_of_magnus(rng):
    q = _unit(rng, (6,))
    w, a = rng.normal(size=(2, 6, 3))
    h = 0.4
    q1, w1 = rotate(q, w, a, h, order=4)
    omega = magnus(w, a, h, order=4)
    expected = _scipy_q(Rotation.from_rotvec(omega) * _from_q(q))
    assert np.all(_angle(q1, expected) < SCIPY_TOL)
    np.testing.assert_allclose(w1, w + a * h, atol=ROUNDOFF)


def test_rotate_backward_step_returns(rng):
    q = _unit(rng, (6,))
    w, a = rng.normal(size=(2, 6, 3))
    q1, w1 = rotate(q, w, a, 0.3)
    q0, w0 = rotate(q1, w1, a, -0.3)
    np.testing.assert_allclose(q0, q, atol=ROUNDOFF)
    np.testing.assert_allclose(w0, w, atol=ROUNDOFF)


@pytest.mark.parametrize("exp", ["exact", "approx", "auto"])
def test_rotate_matrix_agrees_with_rotate(rng, exp):
    q = _unit(rng, (8,))
    w, a = rng.normal(size=(2, 8, 3))
    q1, w1 = rotate(q, w, a, 0.5, exp=exp)
    r1, w1m = rotate_matrix(quat_to_matrix(q), w, a, 0.5, exp=exp)
    assert np.all(np.isfinite(r1))
    np.testing.assert_allclose(r1, quat_to_matrix(q1), atol=ROUNDOFF)
    np.testing.assert_array_equal(w1m, w1)
    np.testing.assert_allclose(
        r1 @ np.swapaxes(r1, -1, -2), np.broadcast_to(np.eye(3), r1.shape), atol=ROUNDOFF
    )


def _every_regime(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """``n`` steps (several compiled blocks) mixing every branch of the exponentials.

    Step angles from 1e-9 rad through the approximation's range (auto), the exact
    polynomials (half angle up to 45°), libm beyond, and a few huge rotation vectors that
    need the scaled approximation; shuffled so that most blocks hold several kinds.
    """
    angle = np.concatenate(
        [
            np.geomspace(1e-9, AUTO_APPROX_MAX_ANGLE, n // 4),
            rng.uniform(AUTO_APPROX_MAX_ANGLE, np.pi / 2, n // 4),
            rng.uniform(np.pi / 2, 3.0, n // 4),
            rng.uniform(0.0, 3.0, n - 3 * (n // 4) - 5),
            np.full(5, 1e17),
        ]
    )
    rng.shuffle(angle)
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    # alpha = 0 and dt = 1: Omega = omega exactly.
    return 3.0 * _unit(rng, (n,)), angle[:, None] * axis


@pytest.mark.parametrize("exp", ["exact", "approx", "auto"])
def test_rotate_blocks_match_the_rotation_module_bit_for_bit(rng, exp):
    """The blocked loop (branch-free pass, then the rare cases redone) against the public
    rotation functions element by element: the same formulas, so the same bits."""
    q, w = _every_regime(rng, 1500)
    big = np.max(np.abs(w), axis=-1) > 1e15
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MagnusConvergenceWarning)
        q1, w1 = rotate(q, w, np.zeros(3), 1.0, exp=exp)
        r1, _ = rotate_matrix(quat_to_matrix(q), w, np.zeros(3), 1.0, exp=exp)
    x = 0.5 * w
    exact = tr.quat_exp(x)
    approx = tr.quat_exp_approx(x)
    if exp == "exact":
        e = exact
    elif exp == "approx":
        e = approx
    else:
        e = np.where((np.linalg.norm(w, axis=-1) < AUTO_APPROX_MAX_ANGLE)[:, None], approx, exact)
    expected = tr.quat_multiply(e, tr.quat_normalize(q))
    np.testing.assert_array_equal(q1, expected)
    np.testing.assert_array_equal(w1, w)
    if exp != "approx":
        # An independent oracle for the exact exponential (huge angles aside: SciPy wraps
        # them with less precision than the argument has).
        scipy = _scipy_q(Rotation.from_rotvec(w[~big]) * _from_q(q[~big]))
        tol = 1e-6 if exp == "auto" else 1e-14
        assert np.all(_angle(q1[~big], scipy) < tol)
    np.testing.assert_allclose(r1, quat_to_matrix(q1), atol=ROUNDOFF)


def test_rotate_float32_handles_every_regime(rng):
    """float32 in, float64 inside: every regime agrees with the float64 step to float32
    round-off, and a NaN next to a libm or scaled element is still reported (the count of
    non-finite rows must not let the two cancel)."""
    q, w = _every_regime(rng, 1500)
    q32, w32 = q.astype(np.float32), w.astype(np.float32)
    for exp in ("exact", "approx", "auto"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MagnusConvergenceWarning)
            got, _ = rotate(q32, w32, np.zeros(3, np.float32), np.float32(1.0), exp=exp)
            ref, _ = rotate(q32.astype(float), w32.astype(float), np.zeros(3), 1.0, exp=exp)
            big = np.abs(w32).max(axis=-1) > 1e15
            assert got.dtype == np.float32
            np.testing.assert_allclose(got[~big], ref[~big], rtol=0, atol=4e-7)
            bad = w32.copy()
            i = int(np.flatnonzero(np.linalg.norm(w32, axis=-1) > np.pi / 2)[0])
            bad[i + 1] = np.nan  # beside an element that goes through the fix-up pass
            with pytest.raises(InputError, match="omega"):
                rotate(q32, bad, np.zeros(3, np.float32), np.float32(1.0), exp=exp)


def test_rotate_reports_a_nan_in_any_block(rng):
    q, w = _every_regime(rng, 1500)
    for i in (0, 700, 1499):
        bad = w.copy()
        bad[i, 1] = np.nan
        with pytest.raises(InputError, match="omega"):
            rotate(q, bad, np.zeros(3), 1.0)
        with pytest.raises(InputError, match="omega"):
            rotate_matrix(quat_to_matrix(q), bad, np.zeros(3), 1.0, exp="approx")


def test_rotate_normalises_and_keeps_the_cover(rng):
    q = _unit(rng, (5,))
    w, a = rng.normal(size=(2, 5, 3))
    q1, _ = rotate(q, w, a, 0.1)
    q2, _ = rotate(3.5 * q, w, a, 0.1)
    q3, _ = rotate(-q, w, a, 0.1)
    np.testing.assert_allclose(q2, q1, atol=ROUNDOFF)
    np.testing.assert_allclose(q3, -q1, atol=ROUNDOFF)
    np.testing.assert_allclose(np.linalg.norm(q1, axis=-1), 1.0, atol=ROUNDOFF)


def _approx_error(theta: np.ndarray) -> np.ndarray:
    """Angle between the approximated and the exact step of angle ``theta`` (alpha = 0)."""
    axis = np.array([0.48, -0.6, 0.64])
    w = theta[:, None] * axis
    exact, _ = rotate([1.0, 0, 0, 0], w, np.zeros(3), 1.0, exp="exact")
    approx, _ = rotate([1.0, 0, 0, 0], w, np.zeros(3), 1.0, exp="approx")
    assert np.all(np.isfinite(approx))
    return _angle(exact, approx)


def test_exp_approx_error_bound():
    """Documented bound: rotation-angle error <= |Omega|⁵/480 up to 90° per step."""
    theta = np.linspace(1e-3, np.pi / 2, 400)
    err = _approx_error(theta)
    assert np.all(err <= theta**5 / 480 + ANGLE_ROUNDOFF)
    # The bound is tight at small angles (leading term of the series), not a loose guess.
    small = theta < 0.3
    assert np.all(err[small] >= 0.97 * theta[small] ** 5 / 480 - ANGLE_ROUNDOFF)


def test_auto_threshold_is_where_the_error_crosses_1e_6():
    below = _approx_error(np.array([AUTO_APPROX_MAX_ANGLE]))
    above = _approx_error(np.array([1.01 * AUTO_APPROX_MAX_ANGLE]))
    assert below[0] < 1e-6 < above[0]


def test_auto_picks_approx_below_and_exact_above(rng):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    # alpha = 0 and dt = 1 make Omega = omega exactly, so the angle is the one we set.
    theta = AUTO_APPROX_MAX_ANGLE * np.array([0.5, 0.999, 1.001, 2.0])
    w = theta[:, None] * axis
    q = _unit(rng, (4,))
    auto, _ = rotate(q, w, np.zeros(3), 1.0, exp="auto")
    approx, _ = rotate(q, w, np.zeros(3), 1.0, exp="approx")
    exact, _ = rotate(q, w, np.zeros(3), 1.0, exp="exact")
    np.testing.assert_array_equal(auto[:2], approx[:2])
    np.testing.assert_array_equal(auto[2:], exact[2:])
    assert np.all(_angle(auto, exact) < 1e-6)
    assert not np.array_equal(approx[:2], exact[:2])


def test_float32_preserved_and_accurate(rng):
    q = _unit(rng, (5,))
    w, a = rng.normal(size=(2, 5, 3))
    q32, w32 = rotate(q.astype(np.float32), w.astype(np.float32), a.astype(np.float32), 0.1)
    q64, _ = rotate(q, w, a, 0.1)
    assert q32.dtype == np.float32
    assert w32.dtype == np.float32
    np.testing.assert_allclose(q32, q64, atol=1e-6)
    r32, _ = rotate_matrix(
        np.eye(3, dtype=np.float32), w.astype(np.float32), a.astype(np.float32), 0.1
    )
    assert r32.dtype == np.float32
    # Mixed precision promotes to float64, integers to float64.
    assert rotate(q.astype(np.float32), w, a, 0.1)[0].dtype == np.float64
    assert rotate([1, 0, 0, 0], [1, 0, 0], [0, 0, 0], 1)[0].dtype == np.float64


def test_broadcasting_matches_elementwise(rng):
    q = _unit(rng, (3, 1))
    w = rng.normal(size=(1, 4, 3))
    a = rng.normal(size=3)
    dt = rng.uniform(-0.5, 0.5, size=(3, 4))
    q1, w1 = rotate(q, w, a, dt, order=4)
    assert q1.shape == (3, 4, 4)
    assert w1.shape == (3, 4, 3)
    for i in range(3):
        for j in range(4):
            qe, we = rotate(q[i, 0], w[0, j], a, dt[i, j], order=4)
            np.testing.assert_allclose(q1[i, j], qe, atol=ROUNDOFF)
            np.testing.assert_allclose(w1[i, j], we, atol=ROUNDOFF)


def test_parallel_loop_matches_serial(rng):
    n = 20_000  # the size where the threaded loop takes over
    q = _unit(rng, (n,))
    w, a = rng.normal(size=(2, n, 3))
    q1, w1 = rotate(q, w, a, 0.05)
    for k in (0, 1234, n - 1):
        qe, we = rotate(q[k : k + 1], w[k : k + 1], a[k : k + 1], 0.05)
        np.testing.assert_array_equal(q1[k], qe[0])
        np.testing.assert_array_equal(w1[k], we[0])


def test_empty_batch():
    q1, w1 = rotate(np.zeros((0, 4)), [1.0, 0, 0], [0.0, 0, 0], 0.1)
    assert q1.shape == (0, 4)
    assert w1.shape == (0, 3)


@given(q=quaternions(), w=vectors(2.0), a=vectors(2.0), dt=st.floats(-0.5, 0.5))
def test_rotate_properties(q, w, a, dt):
    """Unit output, omega' = omega + alpha dt, and the backward step undoes the forward one.

    |omega|, |alpha| <= 2√3 and |dt| <= 0.5 keep every step below the convergence bound.
    """
    q1, w1 = rotate(q[None], w[None], a[None], dt)
    assert np.all(np.isfinite(q1))
    np.testing.assert_allclose(np.linalg.norm(q1), 1.0, atol=ROUNDOFF)
    np.testing.assert_allclose(w1[0], w + a * dt, atol=ROUNDOFF * 16)
    q0, _ = rotate(q1, w1, a[None], -dt)
    np.testing.assert_allclose(q0[0], q, atol=ROUNDOFF * 16)


# --------------------------------------------------------------------------------------
# the convergence warning


def test_turn_angle_matches_quadrature(rng):
    for _ in range(20):
        w = rng.normal(size=3)
        a = rng.normal(size=3) * rng.choice([1e-6, 1.0, 30.0])
        h = rng.choice([-1.0, 1.0]) * rng.uniform(0.01, 2.0)
        lo, hi = sorted((0.0, h))
        expected, _ = quad(
            lambda t, w=w, a=a: np.linalg.norm(w + a * t),
            lo,
            hi,
            epsabs=1e-14,
            epsrel=1e-12,
            limit=200,
        )
        got = kk.turn_angle(tuple(w), tuple(a), h)
        assert math.isfinite(got)
        assert abs(got - expected) <= 1e-9 * expected


def test_warns_beyond_pi_and_not_below():
    q = [1.0, 0, 0, 0]
    below = math.pi * (1 - 1e-9)
    above = math.pi * (1 + 1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rotate(q, [below, 0, 0], [0.0, 0, 0], 1.0)
        magnus([0, below, 0], [0.0, 0, 0], 1.0)
    with pytest.warns(MagnusConvergenceWarning, match="1 of 1 steps"):
        rotate(q, [above, 0, 0], [0.0, 0, 0], 1.0)
    with pytest.warns(MagnusConvergenceWarning):
        magnus([0, above, 0], [0.0, 0, 0], 1.0)
    with pytest.warns(MagnusConvergenceWarning):
        rotate_matrix(np.eye(3), [0, 0, -above], [0.0, 0, 0], 1.0)
    with pytest.warns(MagnusConvergenceWarning):
        rotate(q, [0, 0, above], [0.0, 0, 0], -1.0)


def test_warning_counts_the_steps_past_the_bound(rng):
    w = 2.0 * np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]])
    dt = np.array([0.1, 1.0, 2.0])  # turns 0.2, 2 and 4 rad
    with pytest.warns(MagnusConvergenceWarning, match="1 of 3 steps"):
        q1, _ = rotate(_unit(rng, (3,)), w, np.zeros(3), dt)
    assert np.all(np.isfinite(q1))


def test_warning_uses_the_turned_angle_not_a_bound():
    """omega reverses within the step: |omega| goes w -> 0 -> w, so the angle is w dt / 2."""
    q = [1.0, 0, 0, 0]
    w = 1.5 * math.pi  # trapezoid bound 1.5 pi, turned angle 0.75 pi: converges
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rotate(q, [w, 0, 0], [-2 * w, 0, 0], 1.0)
    w = 2.5 * math.pi  # turned angle 1.25 pi
    with pytest.warns(MagnusConvergenceWarning):
        rotate(q, [w, 0, 0], [-2 * w, 0, 0], 1.0)


# --------------------------------------------------------------------------------------
# bad input: one test per case


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([1.0, 0, 0], [1.0, 0, 0], [0.0, 0, 0], 0.1), r"q: expected shape \(\.\.\., 4\)"),
        (([1.0, 0, 0, 0], [1.0, 0, 0, 0], [0.0, 0, 0], 0.1), r"omega: expected shape"),
        (([1.0, 0, 0, 0], [1.0, 0, 0], [0.0, 0], 0.1), r"alpha: expected shape"),
    ],
)
def test_wrong_last_axis(args, match):
    with pytest.raises(InputError, match=match):
        rotate(*args)


def test_wrong_matrix_shape():
    with pytest.raises(InputError, match=r"R: expected shape \(\.\.\., 3, 3\)"):
        rotate_matrix(np.eye(3)[:2], [1.0, 0, 0], [0.0, 0, 0], 0.1)


def test_translate_component_mismatch():
    with pytest.raises(InputError, match=r"v: expected shape \(\.\.\., 3\)"):
        translate([0.0, 0, 0], [1.0, 0], [0.0, 0, 0], 0.1)
    with pytest.raises(InputError, match="x: expected shape"):
        translate(1.0, 1.0, 1.0, 0.1)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("which", ["q", "omega", "alpha"])
def test_non_finite_input(which, bad, rng):
    args = {
        "q": _unit(rng, (6,)),
        "omega": rng.normal(size=(6, 3)),
        "alpha": rng.normal(size=(6, 3)),
    }
    args[which][4, 1] = bad
    with pytest.raises(InputError, match=f"{which}: expected finite values"):
        rotate(args["q"], args["omega"], args["alpha"], 0.1)


def test_non_finite_shared_operand_in_empty_batch():
    with pytest.raises(InputError, match="alpha: expected finite"):
        rotate(np.zeros((0, 4)), [1.0, 0, 0], [np.nan, 0, 0], 0.1)


def test_non_finite_other_functions(rng):
    w = rng.normal(size=(3, 3))
    w[1, 2] = np.nan
    with pytest.raises(InputError, match="omega: expected finite"):
        magnus(w, np.zeros(3), 0.1)
    with pytest.raises(InputError, match="omega: expected finite"):
        rotate_matrix(np.eye(3), w, np.zeros(3), 0.1)
    r = np.broadcast_to(np.eye(3), (3, 3, 3)).copy()
    r[2, 0, 0] = np.inf
    with pytest.raises(InputError, match="R: expected finite"):
        rotate_matrix(r, np.zeros(3), np.zeros(3), 0.1)
    with pytest.raises(InputError, match="a: expected finite"):
        translate(np.zeros((2, 3)), np.zeros(3), [[0, 0, 0], [0, np.nan, 0]], 0.1)


def test_zero_quaternion():
    q = np.array([[1.0, 0, 0, 0], [0, 0, 0, 0]])
    with pytest.raises(InputError, match=r"q: expected nonzero quaternions.*\(1,\)"):
        rotate(q, [1.0, 0, 0], [0.0, 0, 0], 0.1)


def test_quaternion_norm_overflow():
    with pytest.raises(InputError, match="q: expected quaternions whose squared norm"):
        rotate([1e200, 0, 0, 0], [1.0, 0, 0], [0.0, 0, 0], 0.1)


def test_mismatched_batch_shapes():
    with pytest.raises(InputError, match=r"batch shapes do not broadcast: q \(2,\), omega \(3,\)"):
        rotate(np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((3, 3)), np.zeros(3), 0.1)
    with pytest.raises(InputError, match="batch shapes do not broadcast"):
        magnus(np.zeros((2, 3)), np.zeros(3), np.ones(5))


@pytest.mark.parametrize("order", [0, 3, 5, 2.0, "2", True, None])
def test_bad_order(order):
    with pytest.raises(InputError, match="order"):
        rotate([1.0, 0, 0, 0], [1.0, 0, 0], [0.0, 0, 0], 0.1, order=order)
    with pytest.raises(InputError, match="order"):
        magnus([1.0, 0, 0], [0.0, 0, 0], 0.1, order=order)


@pytest.mark.parametrize("exp", ["fast", "EXACT", None, 1])
def test_bad_exp(exp):
    with pytest.raises(InputError, match="exp: expected one of 'exact', 'approx', 'auto'"):
        rotate([1.0, 0, 0, 0], [1.0, 0, 0], [0.0, 0, 0], 0.1, exp=exp)
    with pytest.raises(InputError, match="exp"):
        rotate_matrix(np.eye(3), [1.0, 0, 0], [0.0, 0, 0], 0.1, exp=exp)


@pytest.mark.parametrize("dt", [np.nan, np.inf, "0.1", True, 1j, [0.1, np.nan], None])
def test_bad_dt(dt):
    with pytest.raises(InputError, match="dt"):
        rotate(np.tile([1.0, 0, 0, 0], (2, 1)), [1.0, 0, 0], [0.0, 0, 0], dt)
    with pytest.raises(InputError, match="dt"):
        translate(np.zeros((2, 3)), np.zeros(3), np.zeros(3), dt)


def test_dt_overflowing_float32():
    w = np.ones(3, np.float32)
    with pytest.raises(InputError, match="dt: expected a finite float32 number, got 1e"):
        magnus(w, w, 1e300)
    with pytest.raises(InputError, match="dt: expected finite values"):
        magnus(w, w, np.array([0.1, 1e300]))


# ------------------------------------------------- regressions from the bad-input campaign


def test_regression_rotate_tiny_quaternion_is_refused_like_quat_normalize():
    # kinematics.rotate(1e-160 * q, ...) accepted a quaternion that quat_normalize rejects
    # and returned a non-unit attitude (|q1| = 1.0000056): |q|² was subnormal.
    q = 1e-160 * np.array([0.6, 0.8, 0.0, 0.0])
    with pytest.raises(InputError, match=r"^q: "):
        tr.quat_normalize(q)
    with pytest.raises(InputError, match="q: expected quaternions whose squared norm"):
        rotate(q, [0.0, 0.0, 1.0], [0.0, 0.0, 0.5], 0.1)
    # the smallest accepted scale still gives a unit result
    ok = 2.0 * np.sqrt(np.finfo(np.float64).tiny) * np.array([0.6, 0.8, 0.0, 0.0])
    q1, _ = rotate(ok, [0.0, 0.0, 1.0], [0.0, 0.0, 0.5], 0.1)
    assert abs(float(np.linalg.norm(q1)) - 1.0) < 4e-16
    # float32 input is normalised in float64 inside the loop: right even at 1e-21
    q32 = (1e-21 * np.array([0.6, 0.8, 0.0, 0.0])).astype(np.float32)
    q1, _ = rotate(q32, [0.0, 0.0, 1.0], [0.0, 0.0, 0.5], 0.1)
    assert abs(float(np.linalg.norm(q1.astype(np.float64))) - 1.0) < 2e-7

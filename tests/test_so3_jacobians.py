"""SO(3) Jacobians of the exponential map, checked three ways.

Oracles: (1) the closed forms evaluated in 50-digit decimal arithmetic; (2) central finite
differences of ``rotvec_to_matrix`` and ``rotvec_to_quat``; (3) forward-mode dual numbers
through a NumPy exponential and logarithm written here (``log(exp(phi)⁻¹ exp(phi + δ))``
and its relatives, differentiated in δ at 0 by ``tumble.dual.jacobian``). Plus the
identities ``J_l = R J_r = J_r(-phi) = J_rᵀ``, ``J J⁻¹ = I`` and
``det J_r = 2(1 - cos θ)/θ²``.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from tests import strategies as sts
from tests.oracles import quiet

import tumble.rotation as tr
from tumble import InputError
from tumble._kernels import rotation as kr
from tumble.dual import jacobian

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
#: Coefficients a, b, c against 50-digit references: a few roundings each (the closed form
#: of b above its series threshold carries sin's rounding amplified by 1/(1 - sinc θ) <= 6.3).
COEF_TOL = 8 * EPS64
#: Matrix entries against the references, relative to max(1, |J|): the coefficient error
#: times |phi|² plus one rounding per product and sum.
ENTRY_TOL = 16 * EPS64
#: Dual numbers differentiate the NumPy exp/log exactly; what remains is round-off in a
#: chain of ~30 trig/arithmetic operations on order-1 numbers.
DUAL_TOL = 64 * EPS64
#: float32 results against float64: one rounding of each entry on output (evaluated in
#: float64), relative to max(1, |J|).
TOL32 = float(EPS32)
N = 200

RIGHT = tr.so3_right_jacobian
LEFT = tr.so3_left_jacobian
RIGHT_INV = tr.so3_right_jacobian_inverse
LEFT_INV = tr.so3_left_jacobian_inverse
ALL = (RIGHT, LEFT, RIGHT_INV, LEFT_INV)


def ids(fns: tuple[Callable[..., Any], ...]) -> list[str]:
    return [f.__name__ for f in fns]


def assert_close(actual: Any, expected: Any, tol: float, what: str = "") -> None:
    """No NaN, and every entry within ``tol * max(1, |expected|)`` per matrix."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert not np.isnan(actual).any(), f"{what}: NaN in result"
    scale = np.maximum(1.0, np.abs(expected).max(axis=(-2, -1), keepdims=True))
    err = np.max(np.abs(actual - expected) / scale) if actual.size else 0.0
    assert err <= tol, f"{what}: max scaled error {err:.3g} > {tol:.3g}"


def rotvecs(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    """``n`` rotation vectors: uniform random axes, angles uniform in [lo, hi]."""
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    return axes * rng.uniform(lo, hi, size=(n, 1))


#: Angles that straddle every branch: the series/closed-form switch of b at 1 (and at 2
#: for c, whose b is taken at θ/2), the sinc series switch at 2e-3 (a at θ/2), tiny angles,
#: and both sides of the half turn.
SPECIAL_ANGLES = (
    0.0,
    1e-12,
    1e-9,
    1e-6,
    1.999e-3,
    2.001e-3,
    0.1,
    1.0 - 1e-12,
    1.0,
    1.0 + 1e-12,
    2.0 - 1e-12,
    2.0 + 1e-12,
    math.pi / 2,
    math.pi - 1e-6,
    math.pi - 1e-9,
    math.pi,
    math.pi + 1e-9,
    4.0,
    6.0,
)
AXIS = np.array([2.0, -3.0, 6.0]) / 7.0  # exactly unit, all components nonzero


# --------------------------------------------------------------------------------------
# oracle 1: the closed forms in 50-digit decimal arithmetic

_CTX = decimal.Context(prec=50)


def _dsin_cos(t: decimal.Decimal) -> tuple[decimal.Decimal, decimal.Decimal]:
    """sin and cos by their Taylor series (|t| < 7: 120 terms reach far below 1e-50)."""
    with decimal.localcontext(_CTX):
        s = c = decimal.Decimal(0)
        term = decimal.Decimal(1)  # t^k / k!
        for k in range(120):
            if k % 4 == 0:
                c += term
            elif k % 4 == 1:
                s += term
            elif k % 4 == 2:
                c -= term
            else:
                s -= term
            term = term * t / (k + 1)
        return s, c


def reference_coefficients(theta: float) -> tuple[float, float, float]:
    """``a = (1 - cos θ)/θ²``, ``b = (θ - sin θ)/θ³``, ``c = 1/θ² - (1+cos θ)/(2θ sin θ)``."""
    if theta == 0.0:
        return 0.5, 1.0 / 6.0, 1.0 / 12.0
    with decimal.localcontext(_CTX):
        t = decimal.Decimal(theta)  # exact binary value of theta
        s, c = _dsin_cos(t)
        a = (1 - c) / (t * t)
        b = (t - s) / (t * t * t)
        cc = 1 / (t * t) - (1 + c) / (2 * t * s)
        return float(a), float(b), float(cc)


def reference_matrix(phi: np.ndarray, first: float, second: float) -> np.ndarray:
    """``I + first [phi]× + second [phi]×²`` in float64 from exact-ish coefficients."""
    K = tr.skew(phi)
    return np.eye(3) + first * K + second * (np.outer(phi, phi) - (phi @ phi) * np.eye(3))


@pytest.mark.parametrize("theta", SPECIAL_ANGLES)
def test_coefficients_match_50_digit_closed_forms(theta: float) -> None:
    a, b, c = reference_coefficients(theta)
    for name, got, want in (
        ("a", kr.so3_a(theta), a),
        ("b", kr.so3_b(theta), b),
        ("c", kr.so3_c(theta), c),
    ):
        assert math.isfinite(got), (name, theta)
        assert abs(got - want) <= COEF_TOL * abs(want), (name, theta, got, want)


@pytest.mark.parametrize("theta", [t for t in SPECIAL_ANGLES if t <= 2 * math.pi])
def test_matrices_match_50_digit_closed_forms(theta: float) -> None:
    phi = theta * AXIS
    a, b, c = reference_coefficients(float(np.linalg.norm(phi)))
    assert_close(RIGHT(phi), reference_matrix(phi, -a, b), ENTRY_TOL, "J_r")
    assert_close(LEFT(phi), reference_matrix(phi, a, b), ENTRY_TOL, "J_l")
    assert_close(RIGHT_INV(phi), reference_matrix(phi, 0.5, c), ENTRY_TOL, "J_r⁻¹")
    assert_close(LEFT_INV(phi), reference_matrix(phi, -0.5, c), ENTRY_TOL, "J_l⁻¹")


def test_full_precision_at_a_nanoradian() -> None:
    """At θ = 1e-9 the series I ∓ ½[phi]× + (1/6)[phi]×² is exact far below round-off,
    entry by entry, including the ~1e-19 entries that are b phi_i phi_j alone."""
    phi = np.array([1e-9, 2e-9, 0.0])
    K = tr.skew(phi)
    K2 = np.outer(phi, phi) - (phi @ phi) * np.eye(3)
    for fn, first, second in (
        (RIGHT, -0.5, 1 / 6),
        (LEFT, 0.5, 1 / 6),
        (RIGHT_INV, 0.5, 1 / 12),
        (LEFT_INV, -0.5, 1 / 12),
    ):
        want = np.eye(3) + first * K + second * K2
        got = fn(phi)
        np.testing.assert_allclose(got, want, rtol=4 * EPS64, atol=0, err_msg=fn.__name__)
        # The (0, 1) entry is pure second-order: second * phi_0 phi_1 = 2e-18 * second.
        assert got[0, 1] == pytest.approx(second * 2e-18, rel=4 * EPS64)


# --------------------------------------------------------------------------------------
# oracle 2: finite differences of the exponential map

#: Fourth-order central differences with step 1e-3: truncation h⁴ |f⁽⁵⁾| / 30 ~ 3e-14
#: (the fifth derivatives of the trig entries are of order 1 for |phi| <= 2π), round-off
#: about 1.5 eps / h ~ 3e-13. 2e-11 leaves a margin of about 50.
FD_STEP = 1e-3
FD_TOL = 2e-11


def fd(f: Callable[[np.ndarray], np.ndarray], phi: np.ndarray) -> np.ndarray:
    """``∂f/∂phi_j`` stacked on a new axis after the batch, by the 4-point stencil."""
    h = FD_STEP
    cols = []
    for e in np.eye(3):
        d = h * e
        cols.append((8 * (f(phi + d) - f(phi - d)) - (f(phi + 2 * d) - f(phi - 2 * d))) / (12 * h))
    return np.stack(cols, axis=phi.ndim - 1)


@pytest.fixture
def phis(rng: np.random.Generator) -> np.ndarray:
    """Random rotation vectors with angles up to 2π, plus the special angles."""
    special = np.array(SPECIAL_ANGLES)[:, None] * AXIS
    return np.concatenate([rotvecs(rng, N, 0.0, 2 * math.pi), special])


def test_right_and_left_against_differences_of_rotvec_to_matrix(phis: np.ndarray) -> None:
    R = tr.rotvec_to_matrix(phis)
    dR = fd(tr.rotvec_to_matrix, phis)  # (N, 3 [j], 3, 3)
    # R ᵀ ∂R/∂phi_j = [J_r e_j]×  and  ∂R/∂phi_j Rᵀ = [J_l e_j]×: column j of J.
    right = np.swapaxes(tr.unskew(np.swapaxes(R, -1, -2)[:, None] @ dR), -1, -2)
    left = np.swapaxes(tr.unskew(dR @ np.swapaxes(R, -1, -2)[:, None]), -1, -2)
    assert_close(RIGHT(phis), right, FD_TOL, "J_r vs FD of R")
    assert_close(LEFT(phis), left, FD_TOL, "J_l vs FD of R")


def test_right_and_left_against_differences_of_rotvec_to_quat(phis: np.ndarray) -> None:
    q = tr.rotvec_to_quat(phis)
    dq = fd(tr.rotvec_to_quat, phis)  # (N, 3 [j], 4)
    qc = tr.quat_conjugate(q)[:, None]
    # dq = ½ q ⊗ (0, J_r δ) = ½ (0, J_l δ) ⊗ q.
    right = np.swapaxes(2 * tr.quat_multiply(qc, dq)[..., 1:], -1, -2)
    left = np.swapaxes(2 * tr.quat_multiply(dq, qc)[..., 1:], -1, -2)
    assert_close(RIGHT(phis), right, FD_TOL, "J_r vs FD of q")
    assert_close(LEFT(phis), left, FD_TOL, "J_l vs FD of q")


def test_inverses_against_differences_of_the_logarithm(rng: np.random.Generator) -> None:
    """``∂/∂δ log(exp(phi) exp(δ)) = J_r⁻¹``, ``∂/∂δ log(exp(δ) exp(phi)) = J_l⁻¹``.

    The logarithm returns angles in [0, π], so the points keep 2 FD steps away from π.
    """
    phis = rotvecs(rng, N, 0.0, math.pi - 3 * FD_STEP)
    q = tr.rotvec_to_quat(phis)

    def right_log(d: np.ndarray) -> np.ndarray:
        return tr.quat_to_rotvec(tr.quat_multiply(q, tr.rotvec_to_quat(d)))

    def left_log(d: np.ndarray) -> np.ndarray:
        return tr.quat_to_rotvec(tr.quat_multiply(tr.rotvec_to_quat(d), q))

    zero = np.zeros_like(phis)
    # fd stacks derivatives along axis 1 (the j of ∂/∂δ_j): J[i, j] = dlog_i/dδ_j.
    assert_close(RIGHT_INV(phis), np.swapaxes(fd(right_log, zero), -1, -2), FD_TOL, "J_r⁻¹")
    assert_close(LEFT_INV(phis), np.swapaxes(fd(left_log, zero), -1, -2), FD_TOL, "J_l⁻¹")


# --------------------------------------------------------------------------------------
# oracle 3: dual numbers through a NumPy exp and log
#
# Written with smooth functions of θ² only, so they are differentiable at the identity
# too: a branch switch on the value picks a series there ("double where": the closed
# form gets a harmless argument where it is not used, so no NaN leaks into the partials).

_SMALL2 = 1e-6  # θ² below which the series (truncated after θ⁴ terms) is exact to 1e-19


def np_exp(phi: Any) -> Any:
    """Unit quaternion ``(cos(θ/2), sin(θ/2)/θ phi)`` of rotation vectors, duals welcome."""
    t2 = np.sum(phi * phi, axis=-1)
    small = t2 < _SMALL2
    t = np.sqrt(np.where(small, 1.0, t2))
    w = np.where(small, 1 - t2 / 8 + t2 * t2 / 384, np.cos(t / 2))
    k = np.where(small, 0.5 - t2 / 48 + t2 * t2 / 3840, np.sin(t / 2) / t)
    return np.concatenate([w[..., None], k[..., None] * phi], axis=-1)


def np_log(q: Any) -> Any:
    """Rotation vector ``2 atan2(|u|, w) u/|u|`` of the ``w >= 0`` representative."""
    flip = np.where(q[..., 0] < 0, -1.0, 1.0)[..., None]
    q = q * flip
    w, u = q[..., 0], q[..., 1:]
    s2 = np.sum(u * u, axis=-1)
    small = s2 < _SMALL2 * w * w
    s = np.sqrt(np.where(small, 1.0, s2))
    # atan(r)/r = 1 - r²/3 + r⁴/5 with r² = s²/w².
    r2 = s2 / (w * w)
    k = np.where(small, (1 - r2 / 3 + r2 * r2 / 5) / w, np.arctan2(s, w) / s)
    return 2 * k[..., None] * u


def np_qmul(p: Any, q: Any) -> Any:
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    w = pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)
    v = pw * qv + qw * pv + np.cross(pv, qv)
    return np.concatenate([w, v], axis=-1)


def np_conj(q: Any) -> Any:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def test_numpy_exp_and_log_match_tumble(phis: np.ndarray) -> None:
    """The dual oracle's own exp and log agree with tumble's on plain floats."""
    np.testing.assert_allclose(np_exp(phis), tr.rotvec_to_quat(phis), rtol=0, atol=8 * EPS64)
    inside = phis[np.linalg.norm(phis, axis=-1) < math.pi - 1e-6]
    np.testing.assert_allclose(np_log(np_exp(inside)), inside, rtol=0, atol=64 * EPS64)


def dual_cases(phis: np.ndarray) -> dict[str, tuple[np.ndarray, Callable[[Any], Any]]]:
    """Per Jacobian: the δ-function whose derivative at δ = 0 it is."""
    q = tr.rotvec_to_quat(phis)
    qc = tr.quat_conjugate(q)
    return {
        # exp(phi + δ) = exp(phi) exp(J_r δ)  =>  J_r δ = log(exp(phi)⁻¹ exp(phi + δ)).
        "so3_right_jacobian": (phis, lambda d: np_log(np_qmul(qc, np_exp(phis + d)))),
        # exp(phi + δ) = exp(J_l δ) exp(phi)  =>  J_l δ = log(exp(phi + δ) exp(phi)⁻¹).
        "so3_left_jacobian": (phis, lambda d: np_log(np_qmul(np_exp(phis + d), qc))),
        # log(exp(phi) exp(δ)) = phi + J_r⁻¹ δ.
        "so3_right_jacobian_inverse": (phis, lambda d: np_log(np_qmul(q, np_exp(d)))),
        # log(exp(δ) exp(phi)) = phi + J_l⁻¹ δ.
        "so3_left_jacobian_inverse": (phis, lambda d: np_log(np_qmul(np_exp(d), q))),
    }


@pytest.mark.parametrize("fn", ALL, ids=ids(ALL))
def test_against_dual_numbers(fn: Callable[[Any], np.ndarray], rng: np.random.Generator) -> None:
    """One batched dual evaluation differentiates the composed exp/log at every point.

    The inverses go through the logarithm at ``exp(phi)``, whose angle is in [0, π]: their
    points stay below π (the half turn itself is covered by the identities below).
    """
    inverse = fn in (RIGHT_INV, LEFT_INV)
    top = math.pi - 1e-6 if inverse else 2 * math.pi
    special = np.array([t for t in SPECIAL_ANGLES if t < top])[:, None] * AXIS
    phis = np.concatenate([rotvecs(rng, N, 0.0, top), special])
    _, f = dual_cases(phis)[fn.__name__]
    J = jacobian(f, np.zeros_like(phis), batched=True)
    assert_close(fn(phis), J, DUAL_TOL, fn.__name__)


# --------------------------------------------------------------------------------------
# identities

#: Identities in float64 between order-1 matrices: a few roundings per product.
LAW_TOL = 32 * EPS64


@pytest.fixture
def wide(rng: np.random.Generator) -> np.ndarray:
    """Angles up to 2π - 0.1 (the inverses' pole is at 2π), plus the special angles."""
    special = np.array(SPECIAL_ANGLES)[:, None] * AXIS
    return np.concatenate([rotvecs(rng, N, 0.0, 2 * math.pi - 0.1), special])


def test_left_is_rotated_right_and_transposed_right(wide: np.ndarray) -> None:
    R = tr.rotvec_to_matrix(wide)
    Jr, Jl = RIGHT(wide), LEFT(wide)
    assert_close(Jl, R @ Jr, LAW_TOL, "J_l = R J_r")
    assert_close(Jl, RIGHT(-wide), 0.0, "J_l(phi) = J_r(-phi)")
    assert_close(Jl, np.swapaxes(Jr, -1, -2), 0.0, "J_l = J_rᵀ")
    assert_close(LEFT_INV(wide), RIGHT_INV(-wide), 0.0, "J_l⁻¹(phi) = J_r⁻¹(-phi)")


def test_inverses_are_inverses(wide: np.ndarray) -> None:
    """``J J⁻¹ = I``: the inverse entries grow to ~60 at 2π - 0.1, so the tolerance is
    relative to them (LAW_TOL times the largest entry of J⁻¹)."""
    eye = np.eye(3)
    for fwd, inv in ((RIGHT, RIGHT_INV), (LEFT, LEFT_INV)):
        Ji = inv(wide)
        scale = np.maximum(1.0, np.abs(Ji).max(axis=(-2, -1), keepdims=True))
        for product in (fwd(wide) @ Ji, Ji @ fwd(wide)):
            assert not np.isnan(product).any()
            assert np.max(np.abs(product - eye) / scale) <= LAW_TOL, fwd.__name__


def test_determinant(wide: np.ndarray) -> None:
    """``det J_r = 2(1 - cos θ)/θ²``, evaluated here as ``sinc²(θ/2)``."""
    theta = np.linalg.norm(wide, axis=-1)
    expected = np.sinc(theta / (2 * np.pi)) ** 2
    np.testing.assert_allclose(np.linalg.det(RIGHT(wide)), expected, rtol=0, atol=LAW_TOL)


def test_half_turn_is_regular() -> None:
    """The inverse Jacobians have no singularity at π: c(π) = 1/π², entries moderate,
    continuous across π, and consistent with J_r there."""
    for theta in (math.pi - 1e-9, math.pi, math.pi + 1e-9):
        assert kr.so3_c(theta) == pytest.approx(1 / math.pi**2, rel=1e-8)
    at = RIGHT_INV(math.pi * AXIS)
    for delta in (1e-9, -1e-9):
        near = RIGHT_INV((math.pi + delta) * AXIS)
        assert np.all(np.isfinite(near))
        assert np.max(np.abs(near - at)) < 1e-8
    assert_close(RIGHT(math.pi * AXIS) @ at, np.eye(3), LAW_TOL, "J_r J_r⁻¹ at π")


def test_pole_at_two_pi() -> None:
    """Near θ = 2π - g the inverses blow up like 1/g and stay finite, without NaN.

    ``c(θ) = (1 - x cot x)/(4x²)`` with ``x = π - g/2`` is ``1/(2π g) + O(1)``, so
    ``g J_r⁻¹ -> (2π)² (A Aᵀ - I)/(2π)`` for the unit axis ``A``; the rest (the ``½[phi]×``
    term and the O(1) part of c) is O(g) after the scaling by g.
    """
    limit = 2 * math.pi * (np.outer(AXIS, AXIS) - np.eye(3))
    for gap in (1e-2, 1e-4, 1e-6):
        Ji = RIGHT_INV((2 * math.pi - gap) * AXIS)
        assert np.all(np.isfinite(Ji))
        assert np.max(np.abs(gap * Ji - limit)) <= 10 * gap, gap
    at_pole = RIGHT_INV(2 * math.pi * AXIS)
    assert not np.isnan(at_pole).any()
    assert np.abs(at_pole).max() > 1e12


@given(sts.rotation_vectors().filter(lambda p: np.linalg.norm(p) < 2 * math.pi - 0.1))
def test_property_inverse(phi: np.ndarray) -> None:
    """Every sampling regime (uniform, exp(randn) up to 2π - 0.1, near 0, near π)."""
    for fwd, inv in ((RIGHT, RIGHT_INV), (LEFT, LEFT_INV)):
        Ji = inv(phi)
        scale = max(1.0, float(np.abs(Ji).max()))
        assert_close(fwd(phi) @ Ji, np.eye(3), LAW_TOL * scale, fwd.__name__)


# --------------------------------------------------------------------------------------
# shapes, dtypes, bad input


@pytest.mark.parametrize("fn", ALL, ids=ids(ALL))
@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (0,), (0, 2)])
def test_shapes(fn: Callable[[Any], np.ndarray], shape: tuple[int, ...]) -> None:
    phi = np.random.default_rng(3).normal(size=(*shape, 3))
    out = fn(phi)
    assert out.shape == (*shape, 3, 3)
    assert out.dtype == np.float64
    for idx in np.ndindex(shape):
        np.testing.assert_array_equal(out[idx], fn(phi[idx]))


@pytest.mark.parametrize("fn", ALL, ids=ids(ALL))
def test_float32_and_integers(fn: Callable[[Any], np.ndarray], rng: np.random.Generator) -> None:
    phi = rotvecs(rng, N, 0.0, 2 * math.pi - 0.5).astype(np.float32)
    out = fn(phi)
    assert out.dtype == np.float32
    assert_close(out, fn(phi.astype(np.float64)), TOL32, fn.__name__)
    ints = fn(np.array([1, 0, 2]))
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints, fn(np.array([1.0, 0.0, 2.0])))


BAD = {
    "wrong length": ([1.0, 2.0], r"^phi: expected shape"),
    "matrix of 4-vectors": (np.zeros((3, 4)), r"^phi: expected shape"),
    "scalar": (1.0, r"^phi: expected shape"),
    "nan": ([0.0, np.nan, 1.0], r"^phi: expected finite"),
    "inf": ([np.inf, 0.0, 1.0], r"^phi: expected finite"),
    "text": (["a", "b", "c"], r"^phi: "),
    "complex": ([1j, 0.0, 0.0], r"^phi: "),
    "none": (None, r"^phi: "),
}


@pytest.mark.parametrize("fn", ALL, ids=ids(ALL))
@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_input_names_phi(fn: Callable[[Any], np.ndarray], case: str) -> None:
    value, match = BAD[case]
    with pytest.raises(InputError, match=match):
        fn(value)


# --------------------------------------------------------------------------------------
# long rotation vectors (issue 27)


@pytest.mark.parametrize("length", [1e20, 1e60, tr.JACOBIAN_MAX_ANGLE])
def test_long_rotation_vectors_up_to_the_bound_give_the_closed_forms(length: float) -> None:
    """``J_l = (sin θ/θ) I + (1 - sin θ/θ) n nᵀ + ((1 - cos θ)/θ) [n]×`` in 50 digits (mpmath,
    the exact θ of the float vector): the terms in sin and cos are divided by θ, so the
    digits of θ modulo 2π that no float holds do not matter."""
    mpmath = pytest.importorskip("mpmath")
    phi = AXIS * length
    with mpmath.workdps(50):
        v = [mpmath.mpf(float(x)) for x in phi]
        theta = mpmath.sqrt(sum(x * x for x in v))
        n = np.array([float(x / theta) for x in v])
        s, c = float(mpmath.sin(theta) / theta), float((1 - mpmath.cos(theta)) / theta)
    left = s * np.eye(3) + (1.0 - s) * np.outer(n, n) + c * tr.skew(n)
    assert_close(LEFT(phi), left, ENTRY_TOL, "J_l")
    assert_close(RIGHT(phi), left.T, ENTRY_TOL, "J_r")


@pytest.mark.parametrize("fn", ALL, ids=ids(ALL))
def test_regression_rotation_vectors_beyond_the_bound_name_phi(
    fn: Callable[[Any], np.ndarray],
) -> None:
    # The long campaign (issue 27): beyond about 5.6e102 rad the kernels' θ³ overflowed and
    # J_l, J_r came out as the identity; beyond 1.3e154 [phi]×² overflowed, with NumPy
    # warnings and infinite entries. Longer rotation vectors than JACOBIAN_MAX_ANGLE raise.
    for length in (1.01 * tr.JACOBIAN_MAX_ANGLE, 1e103, 1e154, 1e308):
        phi = np.array([AXIS * 0.1, AXIS * length])
        with pytest.raises(InputError, match=r"^phi: expected rotation vectors of length"):
            quiet(lambda p=phi: fn(p))

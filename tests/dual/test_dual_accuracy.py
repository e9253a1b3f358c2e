"""Rules that keep every digit: derivatives at the points where a naive formula cancels,
overflows or underflows, against 50-digit mpmath evaluations of the closed-form derivative.

Each point is one of the failures the issue measured (``expm1`` at -30 and -40, ``tanh``
at 10 and beyond 19, ``1 - x²`` near ±1, ``arcsinh``/``arccosh`` at 1e200, ``arctan2`` at
1e-200), plus ordinary points. The error is measured in ulps of the exact derivative.
"""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc

from tumble import InputError
from tumble.dual import derivative, gradient, hessian

# Every rule here is a handful of correctly rounded operations (and libm's exp/sqrt, good
# to under 1 ulp): 4 ulps is the bound.
ULPS = 4

NEAR_ONE = 1 - 2.0**-30
NEAR_ONE_50 = 1 - 2.0**-50

# ufunc: (closed-form derivative in mpmath, points)
UNARY_POINTS = {
    np.expm1: (mp.exp, [-30.0, -40.0, -700.0, -1e-10, 1e-10, 0.5, 30.0]),
    np.tanh: (lambda x: 1 / mp.cosh(x) ** 2, [10.0, 19.0, 30.0, -30.0, 300.0, 354.0, 0.5, 1e-8]),
    np.arcsin: (
        lambda x: 1 / mp.sqrt(1 - x * x),
        [NEAR_ONE, -NEAR_ONE, NEAR_ONE_50, -NEAR_ONE_50, 0.5, 1e-8],
    ),
    np.arccos: (lambda x: -1 / mp.sqrt(1 - x * x), [NEAR_ONE, -NEAR_ONE, NEAR_ONE_50, 0.5]),
    np.arctanh: (lambda x: 1 / (1 - x * x), [NEAR_ONE, -NEAR_ONE, NEAR_ONE_50, 0.5, 1e-8]),
    np.arccosh: (
        lambda x: 1 / mp.sqrt(x * x - 1),
        [1 + 2.0**-30, 1 + 2.0**-50, 1.5, 1e10, 1e200, 1e300],
    ),
    np.arcsinh: (lambda x: 1 / mp.sqrt(x * x + 1), [1e200, -1e200, 1e300, 1e-200, 3.0, 1e154]),
    np.arctan: (lambda x: 1 / (1 + x * x), [1e150, -1e100, 1e10, 0.5, 1e-200]),
    np.log1p: (lambda x: 1 / (1 + x), [-1 + 2.0**-30, -0.5, 1e-300, 1e300]),
    np.cbrt: (lambda x: x ** (mp.mpf(-2) / 3) / 3, [5e-324 * 2**60, 1e-300, 1e300, 8.0]),
    np.sinc: (
        lambda x: (mp.cos(mp.pi * x) - mp.sincpi(x)) / x,
        [1e-5, -1e-3, 0.1, 0.3, 0.49 / np.pi, 2.5],
    ),
    sc.expit: (lambda x: mp.exp(-x) / (1 + mp.exp(-x)) ** 2, [40.0, -40.0, 700.0, 0.5]),
}


def ulps(got, exact):
    """|got - exact| in units of the spacing of floats at the exact value."""
    nearest = float(exact)
    return float(abs(mp.mpf(got) - exact) / np.spacing(abs(nearest) if nearest else 5e-324))


def _name(u):
    return getattr(u, "__name__", str(u))


@pytest.mark.parametrize("ufunc", list(UNARY_POINTS), ids=_name)
def test_rule_within_4_ulps_of_mpmath_at_hard_points(ufunc):
    exact_fn, points = UNARY_POINTS[ufunc]
    with mp.workdps(50):
        for x in points:
            got = derivative(ufunc, x)
            exact = exact_fn(mp.mpf(x))
            assert np.isfinite(got) or not mp.isfinite(exact), (x, got)
            assert ulps(got, exact) <= ULPS, (_name(ufunc), x, got, float(exact))


@pytest.mark.parametrize(
    ("y", "x"), [(1e-200, 1e-200), (1e200, 1e200), (1e-300, 3e-300), (1.0, 2.0), (-2.0, 1e-10)]
)
def test_arctan2_partials_within_4_ulps_at_tiny_and_huge_arguments(y, x):
    got = gradient(lambda v: np.arctan2(v[0], v[1]), np.array([y, x]))
    with mp.workdps(50):
        ym, xm = mp.mpf(y), mp.mpf(x)
        r2 = xm * xm + ym * ym
        assert ulps(got[0], xm / r2) <= ULPS
        assert ulps(got[1], -ym / r2) <= ULPS


def test_regression_expm1_derivative_is_exp_not_expm1_plus_one():
    # issue 19: expm1' = o + 1 was 1.7e-4 relative off at -30 and 0 below -37.4.
    assert derivative(np.expm1, -40.0) == pytest.approx(4.248354255291589e-18, rel=1e-15, abs=0)


def test_regression_tanh_derivative_does_not_vanish_beyond_19():
    # issue 19: 1 - tanh² was 1.1e-8 off at 10 and returned 0 beyond |x| ≈ 19.
    assert derivative(np.tanh, 30.0) == pytest.approx(4 * np.exp(-60.0), rel=1e-14, abs=0)


def test_regression_arcsinh_and_arccosh_derivatives_at_1e200_are_1e_minus_200():
    assert derivative(np.arcsinh, 1e200) == pytest.approx(1e-200, rel=1e-15, abs=0)
    assert derivative(np.arccosh, 1e200) == pytest.approx(1e-200, rel=1e-15, abs=0)


def test_regression_arctan2_at_tiny_arguments_is_finite():
    g = gradient(lambda v: np.arctan2(v[0], v[1]), np.array([1e-200, 1e-200]))
    np.testing.assert_allclose(g, [5e199, -5e199], rtol=1e-15)


# ---------------------------------------------------------------------------------------
# Nested derivatives (issue 27): the chain rule of an enclosing differentiation also
# differentiates each rule's formula, which must then not cancel either.
# ---------------------------------------------------------------------------------------


def nested_derivative(f, x, order):
    """The ``order``-th derivative of ``f`` at ``x`` by nesting ``derivative``."""
    g = f
    for _ in range(order - 1):
        g = (lambda h: lambda t: derivative(h, t))(g)
    return derivative(g, x)


def _tanh_derivatives(x):
    t = mp.tanh(x)
    s = 1 / mp.cosh(x) ** 2
    return -2 * t * s, 4 * t * t * s - 2 * s * s


def _asin_derivatives(x):
    w = 1 - x * x
    return x / w**1.5, (1 + 2 * x * x) / w**2.5


def _atanh_derivatives(x):
    w = 1 - x * x
    return 2 * x / w**2, (2 + 6 * x * x) / w**3


# The second and third derivatives in closed form, evaluated by mpmath at 50 digits.
NESTED_UNARY = {
    np.tanh: _tanh_derivatives,
    np.arcsin: _asin_derivatives,
    np.arccos: lambda x: tuple(-d for d in _asin_derivatives(x)),
    np.arctanh: _atanh_derivatives,
}

# Where the issue measured the loss (1e-20, 1e-200), ordinary points, large ones, and
# near the ends of the domain where the other form of each rule takes over.
NESTED_POINTS = [1e-200, 1e-20, 0.3, 0.5, 20.0, 1e200, NEAR_ONE]

# Orders 2 and 3 chain three or four rule evaluations, each a few ulps.
NESTED_ULPS = 16


def _exact_float(exact):
    """``exact`` as a float if it is a normal float64 (not overflowing or subnormal)."""
    if not mp.isfinite(exact) or abs(exact) > np.finfo(np.float64).max:
        return None
    if exact != 0 and abs(exact) < np.finfo(np.float64).tiny:
        return None
    return float(exact)


@pytest.mark.parametrize("ufunc", list(NESTED_UNARY), ids=_name)
def test_nested_derivatives_keep_every_digit_near_zero_and_at_extreme_magnitudes(ufunc):
    checked = 0
    with mp.workdps(50):
        for x in NESTED_POINTS + [-p for p in NESTED_POINTS]:
            lo, hi = (-1.0, 1.0) if ufunc is not np.tanh else (-np.inf, np.inf)
            if not lo < x < hi:
                continue
            for order, exact in zip((2, 3), NESTED_UNARY[ufunc](mp.mpf(x)), strict=True):
                if _exact_float(exact) is None:
                    continue
                got = nested_derivative(ufunc, x, order)
                assert ulps(got, exact) <= NESTED_ULPS, (_name(ufunc), x, order, got)
                checked += 1
    assert checked >= 10


def _atan2_in_y(y, c):
    r2 = c * c + y * y
    return c / r2, -2 * c * y / r2**2, c * (6 * y * y - 2 * c * c) / r2**3


def _atan2_in_x(x, c):
    return tuple(-d for d in _atan2_in_y(x, c))


def _hypot_in_x(x, c):
    h = mp.sqrt(x * x + c * c)
    return x / h, c * c / h**3, -3 * c * c * x / h**5


def _logaddexp_in_x(x, c):
    # σ(d), σ'(d) = 1/(4 cosh²(d/2)) and σ''(d) = -σ'(d) tanh(d/2), d = x - c: no 1 - σ.
    d = x - c
    slope = 1 / (4 * mp.cosh(d / 2) ** 2)
    return 1 / (1 + mp.exp(-d)), slope, -slope * mp.tanh(d / 2)


# f(x) with the other argument c held, and its first three derivatives in x in closed form.
NESTED_BINARY = {
    "arctan2(x, c)": (lambda x, c: np.arctan2(x, c), _atan2_in_y),
    "arctan2(c, x)": (lambda x, c: np.arctan2(c, x), _atan2_in_x),
    "hypot(x, c)": (lambda x, c: np.hypot(x, c), _hypot_in_x),
    "hypot(c, x)": (lambda x, c: np.hypot(c, x), _hypot_in_x),
    "logaddexp(x, c)": (lambda x, c: np.logaddexp(x, c), _logaddexp_in_x),
    "logaddexp(c, x)": (lambda x, c: np.logaddexp(c, x), _logaddexp_in_x),
}
MAGNITUDES = [1e-200, 1e-20, 0.3, 20.0, 1e200]


@pytest.mark.parametrize("name", list(NESTED_BINARY))
def test_nested_derivatives_of_binary_rules_at_every_pair_of_magnitudes(name):
    f, closed_form = NESTED_BINARY[name]
    checked = 0
    with mp.workdps(60):
        for x in MAGNITUDES + [-m for m in MAGNITUDES]:
            for c in [*MAGNITUDES, -MAGNITUDES[2]]:
                exact_all = closed_form(mp.mpf(x), mp.mpf(c))
                for order, exact in enumerate(exact_all, start=1):
                    if _exact_float(exact) is None:
                        continue
                    got = nested_derivative(lambda t, c=c: f(t, c), x, order)
                    assert ulps(got, exact) <= NESTED_ULPS, (name, x, c, order, got)
                    checked += 1
    assert checked >= 60


def test_regression_second_derivative_of_tanh_near_zero_is_not_zero():
    # issue 27: the large-|x| form 4t/(1+t)² differentiates through 1 - t, which cancels.
    got = derivative(lambda t: derivative(np.tanh, t), 1e-20)
    assert got == pytest.approx(-2e-20, rel=1e-15, abs=0)


def test_regression_logaddexp_derivative_of_equal_huge_arguments_is_one_half():
    # exp(a - out) with out = a + log 2 rounded to a gave 1 for each argument.
    g = gradient(lambda v: np.logaddexp(v[0], v[1]), np.array([1e200, 1e200]))
    np.testing.assert_array_equal(g, [0.5, 0.5])
    assert derivative(lambda t: np.logaddexp2(t, t), 1e200) == 1.0


def _hessians(y, x):
    """Exact Hessians of arctan2(v[0], v[1]) and hypot(v[0], v[1]) at v = (y, x)."""
    r2 = x * x + y * y
    h = mp.sqrt(r2)
    atan2 = [
        [-2 * x * y / r2**2, (y * y - x * x) / r2**2],
        [(y * y - x * x) / r2**2, 2 * x * y / r2**2],
    ]
    hypot = [[x * x / h**3, -x * y / h**3], [-x * y / h**3, y * y / h**3]]
    return atan2, hypot


@pytest.mark.parametrize(
    ("y", "x"), [(1e-100, 3e-100), (1e-200, 3e-200), (-2e-200, 1e-200), (1e200, -3e200)]
)
def test_regression_hessians_of_arctan2_and_hypot_at_tiny_and_huge_points(y, x):
    # issue 27: the Hessian of arctan2 at (1e-200, 3e-200) held NaN (inf - inf), then inf
    # with NumPy's overflow warning; its exact entries (about 1e399) are not floats, so it
    # raises InputError naming x, with no warning. Where every entry is a float (1e-100,
    # 1e200, and hypot's at 1e-200), each is within a few ulps.
    v = np.array([y, x])
    functions = [lambda u: np.arctan2(u[0], u[1]), lambda u: np.hypot(u[0], u[1])]
    with mp.workdps(50):
        exact = _hessians(mp.mpf(y), mp.mpf(x))
        for f, e in zip(functions, exact, strict=True):
            values = [[_exact_float(e[i][j]) for j in range(2)] for i in range(2)]
            overflows = any(
                values[i][j] is None and abs(e[i][j]) > 1 for i in range(2) for j in range(2)
            )
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                if overflows:
                    with pytest.raises(InputError, match=r"^x: expected a point where f and"):
                        hessian(f, v)
                    continue
                g = hessian(f, v)
            for i in range(2):
                for j in range(2):
                    if values[i][j] is not None:
                        assert ulps(g[i, j], e[i][j]) <= NESTED_ULPS, (i, j, g, values[i][j])

"""Accuracy of the polynomial ``cos t`` and ``sin(t)/t`` behind ``qexp``, ``sinc`` and
``sincos``.

Below ``SMALL_ANGLE`` (pi/4) the kernels use Taylor polynomials in ``t²`` instead of libm;
above it ``qexp`` and ``sinc`` call libm, and ``sincos`` first reduces by multiples of pi/2
(libm only beyond ``SINCOS_REDUCED_MAX``). The oracles: long-double (x87, 64-bit
significand) ``sin``/``cos``, about 2000 times finer than a float64 ulp, libm through
``math``, and mpmath. Errors are in float64 ulps of the true value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from tumble._kernels.rotation import (
    SHORT_ANGLE,
    SINCOS_REDUCED_MAX,
    SMALL_ANGLE,
    cos_sinc_small,
    qexp,
    sinc,
    sincos,
)

#: Bound on the polynomials' error against the long-double oracle. The analysis: cos
#: carries one rounding of ``w = 1 - t²/2`` (0.5 ulp) plus the rounded tail, whose
#: magnitude is at most 4 % of the result (< 0.3 ulp); sin(t)/t = 1 + t² S carries the
#: final rounding plus < 0.2 ulp from ``t² S``. Measured maxima: 0.75 and 0.85 ulp.
POLY_ULP = 1.0
#: Against libm: the polynomial's bound plus libm's own error, 0.5 ulp for ``math.cos``
#: (cos) and 1.5 ulp for ``math.sin(t) / t`` (two roundings and the error of sin).
LIBM_COS_ULP = POLY_ULP + 0.5
LIBM_SINC_ULP = POLY_ULP + 1.5
#: qexp around the switch against libm at the rounded angle (see the test).
SWITCH_ULP = LIBM_COS_ULP + 0.6

EXTENDED = np.finfo(np.longdouble).nmant >= 63


@njit
def _evaluate(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.empty(t.size)
    s = np.empty(t.size)
    for i in range(t.size):
        c[i], s[i] = cos_sinc_small(t[i] * t[i])
    return c, s


@njit
def _qexp_rows(x: np.ndarray) -> np.ndarray:
    out = np.empty((x.shape[0], 4))
    for i in range(x.shape[0]):
        r = qexp((x[i, 0], x[i, 1], x[i, 2]))
        for j in range(4):
            out[i, j] = r[j]
    return out


@njit
def _sinc_rows(t: np.ndarray) -> np.ndarray:
    out = np.empty(t.size)
    for i in range(t.size):
        out[i] = sinc(t[i])
    return out


def _angles() -> np.ndarray:
    """The whole polynomial range: uniform, geometric down to 1e-300, the ends exactly."""
    rng = np.random.default_rng(20261121)
    edge = np.array([0.0, 5e-324, SMALL_ANGLE, np.nextafter(SMALL_ANGLE, 0.0)])
    return np.concatenate(
        [rng.uniform(0.0, SMALL_ANGLE, 200_000), np.geomspace(1e-300, SMALL_ANGLE, 5_000), edge]
    )


def _ulps(approx: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """``|approx - exact|`` in float64 ulps of ``exact``."""
    scale = np.spacing(exact.astype(np.float64))
    return (np.abs(approx.astype(np.longdouble) - exact) / scale).astype(np.float64)


@pytest.mark.skipif(not EXTENDED, reason="needs an extended-precision long double oracle")
def test_polynomials_within_one_ulp_of_long_double() -> None:
    t = _angles()
    c, s = _evaluate(t)
    tl = t.astype(np.longdouble)
    with np.errstate(invalid="ignore", divide="ignore"):
        sinc_true = np.where(tl > 0, np.sin(tl) / tl, np.longdouble(1))
    assert np.all(np.isfinite(c))
    assert np.all(np.isfinite(s))
    assert _ulps(c, np.cos(tl)).max() <= POLY_ULP
    assert _ulps(s, sinc_true).max() <= POLY_ULP


def test_polynomials_agree_with_libm() -> None:
    t = _angles()[::20]
    c, s = _evaluate(t)
    cos_libm = np.array([math.cos(x) for x in t])
    sinc_libm = np.array([math.sin(x) / x if x else 1.0 for x in t])
    assert _ulps(c, cos_libm.astype(np.longdouble)).max() <= LIBM_COS_ULP
    assert _ulps(s, sinc_libm.astype(np.longdouble)).max() <= LIBM_SINC_ULP


def test_qexp_and_sinc_on_both_sides_of_the_switch() -> None:
    """Angles around ``SMALL_ANGLE`` and ``SHORT_ANGLE``, every branch: the same values as
    libm's.

    The oracle takes ``t = sqrt(x·x)`` rounded as the kernel rounds it; the polynomial
    branch works from ``x·x`` itself, so its ``cos`` differs from ``cos(t)`` also by
    ``t``'s rounding times ``t tan t`` (< 0.6 ulp here): :data:`SWITCH_ULP`.
    """
    rng = np.random.default_rng(7)
    angles = np.concatenate(
        [
            [np.nextafter(SMALL_ANGLE, 0.0), SMALL_ANGLE, np.nextafter(SMALL_ANGLE, 1.0)],
            rng.uniform(0.7, 0.87, 2000),
            [np.nextafter(SHORT_ANGLE, 0.0), SHORT_ANGLE, np.nextafter(SHORT_ANGLE, 1.0)],
            rng.uniform(0.1, 0.15, 500),
            [1e-100, 1e-8, 2.0, 3.0, 10.0],
        ]
    )
    axis = rng.normal(size=(angles.size, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    x = axis * angles[:, None]
    q = _qexp_rows(x)
    assert np.all(np.isfinite(q))
    small = 0
    for xi, qi in zip(x, q, strict=True):
        z = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]
        t = math.sqrt(z)
        small += z <= SMALL_ANGLE * SMALL_ANGLE
        c, sn = math.cos(t), math.sin(t)
        assert abs(qi[0] - c) <= SWITCH_ULP * np.spacing(abs(c))
        assert max(abs(qi[1:] - sn / t * xi)) <= SWITCH_ULP * np.spacing(abs(sn))
    assert 0 < small < angles.size  # both branches ran
    # unit to round-off on both branches
    assert np.abs(np.einsum("ij,ij->i", q, q) - 1.0).max() <= 4 * np.finfo(np.float64).eps
    s = _sinc_rows(angles)
    sinc_libm = np.sin(angles) / angles
    assert np.all(np.abs(s - sinc_libm) <= LIBM_SINC_ULP * np.spacing(np.abs(sinc_libm)))
    assert _sinc_rows(np.array([0.0]))[0] == 1.0


#: :func:`sincos` against the true values: the reduced argument carries one rounding
#: (relative, since the first product and difference of the reduction are exact), the
#: polynomials one ulp, ``r · sin(r)/r`` one more rounding. Measured maxima over the
#: angles below: 2.2 ulp (sin), 1.5 ulp (cos).
SINCOS_ULP = 2.5


@njit
def _sincos_rows(x: np.ndarray) -> np.ndarray:
    out = np.empty((x.size, 2))
    for i in range(x.size):
        out[i, 0], out[i, 1] = sincos(x[i])
    return out


def test_sincos_against_mpmath_across_the_reduction_and_the_libm_fallback() -> None:
    """Every quadrant, magnitudes from 1e-300 to the reduction's limit (uniform below 1 too,
    the short polynomials' range), arguments within an ulp of multiples of π/2 (where ``r``
    is tiny and must keep its relative accuracy), the switches at ``SHORT_ANGLE``, π/4 and
    :data:`SINCOS_REDUCED_MAX`, and beyond it libm, inf and NaN.
    Oracle: mpmath at 200 bits on the float64 argument."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(20261128)
    k = np.arange(1, 4000, 7, dtype=np.float64)
    near = np.concatenate([k * (np.pi / 2), np.nextafter(k * (np.pi / 2), 0.0), -k * np.pi])
    edges = [
        SHORT_ANGLE, np.nextafter(SHORT_ANGLE, 1.0), SMALL_ANGLE, np.nextafter(SMALL_ANGLE, 1.0),
        SINCOS_REDUCED_MAX,
        np.nextafter(SINCOS_REDUCED_MAX, 0.0), np.nextafter(SINCOS_REDUCED_MAX, np.inf),
        1e6, 1e300, 0.0, 5e-324,
    ]  # fmt: skip
    x = np.concatenate(
        [
            rng.uniform(-1.0, 1.0, 3000) * 10.0 ** rng.uniform(-300, 6, 3000),
            rng.uniform(-10.0, 10.0, 3000),
            rng.uniform(-0.2, 0.2, 3000),
            near,
            edges,
            np.negative(edges),
        ]
    )
    got = _sincos_rows(x)
    worst = 0.0
    with mpmath.workdps(60):
        for xi, (s, c) in zip(x, got, strict=True):
            for value, true in ((s, mpmath.sin(xi)), (c, mpmath.cos(xi))):
                ulp = np.spacing(abs(float(true))) if true != 0 else 5e-324
                worst = max(worst, float(abs(mpmath.mpf(value) - true)) / ulp)
    assert worst <= SINCOS_ULP, worst
    special = _sincos_rows(np.array([np.inf, -np.inf, np.nan]))
    assert np.all(np.isnan(special))

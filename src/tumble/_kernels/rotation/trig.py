"""Sine and cosine without libm where the angles of a time step live: the small-angle trig.

Taylor polynomials in ``z = t²``, within 1 ulp up to ``SMALL_ANGLE`` (:func:`cos_sinc_small`)
and shorter ones up to ``SHORT_ANGLE`` (:func:`cos_sinc_short`); :func:`sincos_wide` reduces
larger angles by multiples of ``π/2`` onto them. The exponentials of
:mod:`tumble._kernels.rotation.formulas`, the SO(3) Jacobians and the integrators'
flows call these; ``tests/test_small_angle_trig.py`` measures them against mpmath.
"""

from __future__ import annotations

import math

from tumble._kernels import inner, njit

# cos t and sin(t)/t as polynomials in z = t² up to z⁸ for t <= pi/4 (see cos_sinc_small):
# the first dropped Taylor terms, t¹⁸/18! and t¹⁸/19!, are below 3e-18 relative there.
SMALL_ANGLE = math.pi / 4
SMALL_ANGLE_SQ = SMALL_ANGLE * SMALL_ANGLE
COS_P = tuple((-1) ** k / math.factorial(2 * k + 4) for k in range(7))
"""``cos t = 1 - z/2 + z² P(z)``: the coefficients of ``P``, ``(-1)^k / (2k + 4)!``."""
SINC_S = tuple((-1) ** (k + 1) / math.factorial(2 * k + 3) for k in range(8))
"""``sin(t)/t = 1 + z S(z)``: the coefficients of ``S``, ``(-1)^(k+1) / (2k + 3)!``."""


@inner
def cos_sinc_small(z):
    """``(cos t, sin(t)/t)`` from ``z = t²`` for ``|t| <= SMALL_ANGLE``, each within 1 ulp.

    Taylor polynomials in ``z`` (truncation below 3e-18 relative), evaluated in Estrin form
    so the two short, independent dependency chains overlap. ``cos`` follows fdlibm's
    ``__kernel_cos``: ``w = 1 - z/2`` plus its exact rounding error ``(1 - w) - z/2``, so
    the result carries one rounding of ``w`` and the small tail. No ``sqrt``, division or
    libm call: time steps turn bodies by small angles, where libm's ``sin``/``cos`` (opaque
    calls) were most of the cost of a step.
    """
    z2 = z * z
    z4 = z2 * z2
    p = COS_P
    c = ((p[0] + p[1] * z) + z2 * (p[2] + p[3] * z)) + z4 * ((p[4] + p[5] * z) + z2 * p[6])
    s = SINC_S
    sc = ((s[0] + s[1] * z) + z2 * (s[2] + s[3] * z)) + z4 * (
        (s[4] + s[5] * z) + z2 * (s[6] + s[7] * z)
    )
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + z2 * c), 1.0 + z * sc


#: Up to this ``|t|`` :func:`sincos` takes shorter polynomials (:func:`cos_sinc_short`).
SHORT_ANGLE = 0.125


@inner(inline="always")
def cos_sinc_short(z):
    """:func:`cos_sinc_small` for ``z = t² <= SHORT_ANGLE²``: the same Taylor series cut
    after ``t¹⁰`` (``cos``) and ``t¹¹`` (``sin``), whose first dropped terms are below
    2e-19 relative there (the step angles of a fine time step)."""
    z2 = z * z
    p = COS_P
    c = (p[0] + p[1] * z) + z2 * (p[2] + p[3] * z)
    s = SINC_S
    sc = ((s[0] + s[1] * z) + z2 * (s[2] + s[3] * z)) + (z2 * z2) * s[4]
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + z2 * c), 1.0 + z * sc


# π/2 in three parts for the reduction in sincos: the first two carry 33 significant bits,
# so n times either is exact for |n| < 2**20; the third is the rest rounded (what is left of
# π/2 after the three is 1e-37).
_PIO2_1 = 1.5707963267341256
_PIO2_2 = 6.077100506303966e-11
_PIO2_3 = 2.0222662487959506e-21
_TWO_OVER_PI = 0.6366197723675814
#: Beyond this ``|x|`` :func:`sincos` calls libm (its reduction needs ``|n| < 2**20``).
SINCOS_REDUCED_MAX = 2.0**18 * math.pi


@inner
def sincos_wide(x):
    """``(sin x, cos x)`` without a libm call for ``|x| <= SINCOS_REDUCED_MAX``.

    ``x = n π/2 + r``, ``|r| <= π/4``, with ``n`` the nearest integer to ``x 2/π`` and ``r``
    by Cody and Waite's reduction on the three parts of ``π/2`` (the first product and
    difference exact, so ``r`` keeps its relative accuracy near the multiples of ``π/2``);
    then :func:`cos_sinc_small` of ``r²`` and the quadrant ``n mod 4``. Below ``π/4`` there
    is no reduction (:func:`sincos` adds shorter polynomials below ``SHORT_ANGLE``). Within
    2.5 ulp of the true values (measured 2.2; ``tests/test_small_angle_trig.py``, against
    mpmath); beyond ``SINCOS_REDUCED_MAX``, and for inf and NaN, libm. One shared
    reduction and two short polynomials cost about half of libm's separate ``sin`` and
    ``cos`` calls (10-12 ns against 23 ns a pair, one thread).
    """
    if abs(x) <= SMALL_ANGLE:
        c, sc = cos_sinc_small(x * x)
        return x * sc, c
    if not abs(x) <= SINCOS_REDUCED_MAX:
        return math.sin(x), math.cos(x)
    n = math.floor(x * _TWO_OVER_PI + 0.5)
    r = ((x - n * _PIO2_1) - n * _PIO2_2) - n * _PIO2_3
    c, sc = cos_sinc_small(r * r)
    s = r * sc
    # The quadrant by selects, not branches (n mod 4 changes from call to call): an odd n
    # swaps sin and cos with a sign, n mod 4 >= 2 negates both.
    k = int(n)
    odd = (k & 1) == 1
    sign = -1.0 if (k & 2) == 2 else 1.0
    return sign * (c if odd else s), sign * (-s if odd else c)


@inner(forceinline=True)
def sincos(x):
    """:func:`sincos_wide`, with its small-angle case inlined: below ``SHORT_ANGLE`` (the
    angles of a fine time step) the shorter polynomials of :func:`cos_sinc_short` in the
    caller, above it a call. Inlining the whole of :func:`sincos_wide` into the many flows
    of the compositions made their compilation five times slower."""
    if abs(x) <= SHORT_ANGLE:
        c, sc = cos_sinc_short(x * x)
        return x * sc, c
    return sincos_wide(x)


@njit
def sinc(t):
    """``sin(t)/t``: its polynomial for ``|t| <= SMALL_ANGLE`` (safe at 0), else libm."""
    if abs(t) <= SMALL_ANGLE:
        return cos_sinc_small(t * t)[1]
    return math.sin(t) / t

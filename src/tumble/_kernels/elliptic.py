"""Jacobi elliptic functions and the third-kind integral by theta series, compiled.

The special functions of the exact torque-free motion (:mod:`tumble._kernels.exact`,
``docs/exact.md``). The elliptic functions and the third-kind integral are evaluated by
theta series (DLMF 22.2, 20.2) of the nome ``q = exp(-π K'/K)`` when ``m <= 1/2`` and,
after Jacobi's imaginary transformation (DLMF 20.7.30, 22.6.iv), of ``q' = exp(-π K/K')``
when ``m > 1/2``; either nome is at most ``exp(-π) = 0.0432``, so four terms reach
round-off. In the second form ``cn`` and ``dn`` are ratios of sums of positive terms and
keep their relative accuracy where they are tiny (near the separatrix), and the separatrix
itself (``q' = 0``) is the same formula: ``sn = tanh``, ``cn = dn = sech``. The nome comes
from its series in the modulus (A&S 17.3.21), ``K`` and ``K'`` from the nome (DLMF
20.9.2), the complete third-kind integral from the series itself; only the phase ``u0`` and
the parameter of the third-kind integral need an incomplete integral, Carlson's ``R_F``
(duplication, DLMF 19.36.i).
"""

from __future__ import annotations

import math
from collections import namedtuple

from tumble._kernels import inner, njit
from tumble._kernels.rotation import cos_sinc_small

_EPS = 2.0**-53
# Carlson's stopping rule: the truncated series of R_F errs by less than r when
# 4^-n max|A0 - x| < (3r)^(1/6) |A_n|; r = one rounding.
_RF_TOL = (3.0 * _EPS) ** (1.0 / 6.0)
_MAX_DUPLICATIONS = 60

#: Theta-series constants of one asymmetric motion (:func:`series`): ``high`` (1.0 when
#: ``m > 1/2``: series in the complementary nome, argument ``x = scale |u|``), ``scale``
#: (``π/2K``, or ``π/2K'`` when high, 1 on the separatrix), ``nome`` the powers
#: ``(q, q², q⁴, q⁶, q⁹, q¹², q¹⁶)``, ``c_sn, c_cn, c_dn`` the normalisations
#: (``sn(K) = cn(0) = dn(0) = 1``), and the third-kind integral
#: ``V(u) = v_lin u + v_arg atan2(Im, Re)`` with the series coefficients ``vr``, ``vi``.
Theta = namedtuple(
    "Theta", ["high", "scale", "nome", "c_sn", "c_cn", "c_dn", "v_lin", "v_arg", "vr", "vi"]
)


# --------------------------------------------------------------------------------------
# Carlson's symmetric integral of the first kind (prepare only)


@inner
def carlson_rf(x, y, z):
    """``R_F(x, y, z) = ½ ∫0^∞ dt / sqrt((t+x)(t+y)(t+z))`` for ``x, y, z >= 0``, at most
    one zero. Duplication to ``A_n``, then the fifth-order series (DLMF 19.36.1)."""
    x0, y0 = x, y
    a0 = (x + y + z) / 3.0
    a = a0
    q = max(abs(a0 - x), abs(a0 - y), abs(a0 - z)) / _RF_TOL
    f = 1.0
    for _ in range(_MAX_DUPLICATIONS):
        if q < f * abs(a):
            break
        sx, sy, sz = math.sqrt(x), math.sqrt(y), math.sqrt(z)
        lam = sx * sy + sy * sz + sz * sx
        x, y, z, a = 0.25 * (x + lam), 0.25 * (y + lam), 0.25 * (z + lam), 0.25 * (a + lam)
        f *= 4.0
    X = (a0 - x0) / (f * a)
    Y = (a0 - y0) / (f * a)
    Z = -(X + Y)
    e2 = X * Y - Z * Z
    e3 = X * Y * Z
    return (1.0 - e2 / 10.0 + e3 / 14.0 + e2 * e2 / 24.0 - 3.0 * e2 * e3 / 44.0) / math.sqrt(a)


# --------------------------------------------------------------------------------------
# Jacobi functions and the third-kind integral by theta series (evaluate)


@njit(inline="always")
def series(th, u):
    """``sn, cn, dn`` of ``u`` (``|u| <= K``) and the angle term of ``V(u)``.

    ``V(u) = Π(n; am u | m) - u = th.v_lin u + th.v_arg arg`` (the caller adds the linear
    part). ``m <= 1/2``, ``ζ = π u / 2K`` (DLMF 22.2.4-6, 20.2.1-4)::

        sn = θ3(0)/θ2(0) θ1(ζ)/θ4(ζ),  cn = θ4(0)/θ2(0) θ2(ζ)/θ4(ζ),  dn = θ4(0)/θ3(0) θ3/θ4,

    ``θ1``, ``θ2`` written as ``sin ζ``, ``cos ζ`` times polynomials in ``cos 2kζ`` (so
    ``sn`` is relatively accurate near its zeros; ``cn`` near ``u = ±K`` errs by an ulp or
    two of 1, from ``cos ζ = (c - s)(c + s)`` of the half angle), and
    ``arg = arg θ4(ζ + iβ)`` (Jacobi's form of ``Π`` with the imaginary parameter ``ib``).
    ``m > 1/2``: Jacobi's imaginary transformation turns these into series in ``q'`` of
    ``cosh``/``sinh`` of ``x = π|u|/2K'``, scaled by ``2 e^{-x}`` (no overflow); with
    ``E = e^{-2x}``, ``h = q' / E <= 1`` and ``g_k = h^k q'^{k²}``::

        sn = c_sn (1 - E) Σ (-1)^k g_k P_k(E) / D,   D = Σ g_k (1 + E^{2k+1}),
        cn = c_cn 2e^{-x} θ4h / D,   dn = c_dn 2e^{-x} θ3h / D,

    ``P_k(E) = (1 - E^{2k+1})/(1 - E)``, ``θ3h, θ4h = 1 + Σ (±1)^k (h^k q'^{k²-k} + q'^{k²}
    E^k)``; and ``arg = arg θ2(β' - i x | q')``, whose real part is dominated by its first
    term ``cos β' > 0.57`` (``|n| <= 1``), so ``atan2`` never wraps.
    """
    q, q2, q4, q6, q9, q12, q16 = th.nome
    vr, vi = th.vr, th.vi
    if th.high == 0.0:
        # ζ/2 is within π/4 (|u| <= K): the polynomials of the half angle, no reduction and
        # no branch; sin ζ, cos ζ then err by an ulp or two of 1.
        w = 0.5 * th.scale * u
        hc, hs = cos_sinc_small(w * w)
        hs *= w
        s = 2.0 * hs * hc
        c = (hc - hs) * (hc + hs)
        c1 = (c - s) * (c + s)
        c2 = 2.0 * c1 * c1 - 1.0
        c3 = 2.0 * c1 * c2 - c1
        s1 = 2.0 * s * c
        s2 = 2.0 * s1 * c1
        s3 = s1 * c2 + c1 * s2
        t1 = s * (
            1.0
            - q2 * (2.0 * c1 + 1.0)
            + q6 * (2.0 * (c2 + c1) + 1.0)
            - q12 * (2.0 * (c3 + c2 + c1) + 1.0)
        )
        t2 = c * (
            1.0
            + q2 * (2.0 * c1 - 1.0)
            + q6 * (2.0 * (c2 - c1) + 1.0)
            + q12 * (2.0 * (c3 - c2 + c1) - 1.0)
        )
        t3 = 1.0 + 2.0 * (q * c1 + q4 * c2 + q9 * c3)
        t4 = 1.0 + 2.0 * (q4 * c2 - q * c1 - q9 * c3)
        inv = 1.0 / t4
        re = 1.0 + vr[0] * c1 + vr[1] * c2 + vr[2] * c3
        im = vi[0] * s1 + vi[1] * s2 + vi[2] * s3
        return th.c_sn * t1 * inv, th.c_cn * t2 * inv, th.c_dn * t3 * inv, math.atan2(im, re)
    x = th.scale * abs(u)
    ex = math.exp(-x)
    E = ex * ex
    # 1 - E without cancellation at small x; E itself keeps its relative accuracy.
    omE = 1.0 - E if E < 0.5 else -math.expm1(-2.0 * x)
    h = q / E if q > 0.0 else 0.0
    h2 = h * h
    h3 = h2 * h
    g1 = h * q
    g2 = h2 * q4
    g3 = h3 * q9
    e2 = E * E
    e3 = e2 * E
    e4 = e2 * e2
    e5 = e4 * E
    e6 = e4 * e2
    e7 = e6 * E
    p1 = 1.0 + E + e2
    p2 = p1 + e3 + e4
    p3 = p2 + e5 + e6
    a1, a3, a5, a7 = 1.0 + E, 1.0 + e3, 1.0 + e5, 1.0 + e7
    inv = 1.0 / (a1 + g1 * a3 + g2 * a5 + g3 * a7)
    num = omE * (1.0 - g1 * p1 + g2 * p2 - g3 * p3)
    k1 = h + q * E
    k2 = h2 * q2 + q4 * e2
    k3 = h3 * q6 + q9 * e3
    k4 = h2 * h2 * q12 + q16 * e4
    t3 = 1.0 + k1 + k2 + k3 + k4
    t4 = 1.0 - k1 + k2 - k3 + k4
    sign = -1.0 if u < 0.0 else 1.0
    re = vr[0] * a1 + g1 * vr[1] * a3 + g2 * vr[2] * a5 + g3 * vr[3] * a7
    im = omE * (vi[0] + g1 * vi[1] * p1 + g2 * vi[2] * p2 + g3 * vi[3] * p3)
    sn = sign * th.c_sn * num * inv
    return (
        sn,
        th.c_cn * 2.0 * ex * t4 * inv,
        th.c_dn * 2.0 * ex * t3 * inv,
        sign * math.atan2(im, re),
    )


@inner
def nome(x, y):
    """Nome ``q = exp(-π K(y)/K(x))`` of the parameter ``x <= 1/2`` (``y = 1 - x``).

    A&S 17.3.21: ``q = λ + 2λ⁵ + 15λ⁹ + 150λ¹³ + 1707λ¹⁷ + O(λ²¹)``,
    ``λ = ½ (1 - √k')/(1 + √k')``, ``k' = √y``, written ``λ = ½ x / ((1 + k')(1 + √k')²)``
    (no cancellation as ``x -> 0``); ``λ <= 0.0432``, so the omitted terms are below 1e-23
    relative.
    """
    kp = math.sqrt(y)
    r = 1.0 + math.sqrt(kp)
    lam = 0.5 * x / ((1.0 + kp) * r * r)
    l4 = (lam * lam) * (lam * lam)
    return lam * (1.0 + l4 * (2.0 + l4 * (15.0 + l4 * (150.0 + l4 * 1707.0))))


@inner
def theta_constants(m, m1, n, separatrix):
    """:class:`Theta` of the parameter ``m`` (``m1 = 1 - m``) for ``V`` with the
    characteristic ``n`` (``-1 <= n < 0``), ``K(m)`` and ``Vc = Π(n|m) - K`` (both inf on
    the separatrix).

    The nome of the smaller of ``m``, ``m1`` (:func:`nome`) gives ``K = (π/2) θ3(0|q)²``
    (DLMF 20.9.2) and the other complete integral ``-K ln(q)/π``; no Carlson integral.
    ``V(u) = Π(n; am u|m) - u = C u (...) + C arg θ4(ζ + iβ)`` (Jacobi's form of the
    third kind) with ``n = m sn²(ib)``: ``sc(b|m1) = sqrt(ν/m)``, ``ν = -n``, so
    ``b = F(φ|m1)``, ``tan² φ = ν/m``, and ``C = sn b cn b / dn b = sqrt(ν / ((m + ν)(1 +
    ν)))`` (at ``m1``). The linear coefficient is fixed by ``V'(0) = 0`` rather than
    written out, and ``Vc = V(K)``: no Carlson ``R_J`` either.
    """
    nu = -n
    v_arg = math.sqrt(nu / ((m + nu) * (1.0 + nu)))
    high = m > 0.5
    q = nome(m1, m) if high else nome(m, m1)
    q2 = q * q
    q4 = q2 * q2
    q6 = q4 * q2
    q9 = q6 * q2 * q
    q12 = q6 * q6
    q16 = q12 * q4
    s2 = 1.0 + q2 + q6 + q12
    th3 = 1.0 + 2.0 * (q + q4 + q9 + q16)
    lnq = math.log(q)
    if high:
        # K' = (π/2) θ3(q')², K = -K' ln(q')/π: inf on the separatrix (q' = 0).
        Kp = 0.5 * math.pi * th3 * th3
        K = -Kp * lnq / math.pi
        scale = 0.5 * math.pi / Kp
        th4 = 1.0 + 2.0 * (q4 + q16 - q - q9)
        b = math.sqrt(nu / (m + nu)) * carlson_rf(m / (m + nu), m * (1.0 + nu) / (m + nu), 1.0)
        beta = b * scale
        c, s = math.cos(beta), math.sin(beta)
        c2, s2b = (c - s) * (c + s), 2.0 * s * c
        c3, s3 = c * c2 - s * s2b, s * c2 + c * s2b
        c5, s5 = c3 * c2 - s3 * s2b, s3 * c2 + c3 * s2b
        c7, s7 = c5 * c2 - s5 * s2b, s5 * c2 + c5 * s2b
        vr = (c, c3, c5, c7)
        vi = (s, s3, s5, s7)
        nomes = (q, q2, q4, q6, q9, q12, q16)
        c_sn, c_cn, c_dn = th3 / th4, s2 / th4, s2 / th3
        # V'(0) = 0: at x = 0 the angle's slope is Σ g_k vi_k (2k+1) / Σ g_k vr_k with
        # g_k = q'^{k(k+1)}; on the separatrix this is n / (1 - n).
        slope = (s + q2 * 3.0 * s3 + q6 * 5.0 * s5 + q12 * 7.0 * s7) / (
            c + q2 * c3 + q6 * c5 + q12 * c7
        )
        th = Theta(1.0, scale, nomes, c_sn, c_cn, c_dn, -v_arg * scale * slope, v_arg, vr, vi)
        if separatrix:
            return th, K, math.inf
        return th, K, th.v_lin * K + v_arg * series(th, K)[3]
    K = 0.5 * math.pi * th3 * th3
    scale = 0.5 * math.pi / K
    th3 = 1.0 + 2.0 * (q + q4 + q9)
    th4 = 1.0 + 2.0 * (q4 - q - q9)
    # 2 (-1)^k q^{k²} cosh(2kβ) and -2 (-1)^k q^{k²} sinh(2kβ) from e± = q e^{±2β}:
    # q^{k²} e^{±2kβ} = e±^k q^{k² - k} (<= 1, while e^{2kβ} alone may overflow for tiny m).
    # ln e+ = -π (K' - b)/K with K' - b = F(ψ|m1), tan ψ = 1/sqrt(ν) (the complementary
    # amplitude of φ, DLMF 19.11.ii): one R_F, no cancellation of the large K' and b as m -> 0.
    d = carlson_rf(nu / (1.0 + nu), (m + nu) / (1.0 + nu), 1.0) / math.sqrt(1.0 + nu)
    ep = math.exp(-math.pi * d / K)
    em = q2 / ep
    ep2, em2 = ep * ep * q2, em * em * q2
    ep3, em3 = ep2 * ep * q4, em2 * em * q4
    vr = (-(ep + em), ep2 + em2, -(ep3 + em3), 0.0)
    vi = (ep - em, -(ep2 - em2), ep3 - em3, 0.0)
    # V'(0) = 0: the angle's slope in ζ at 0 is Σ 2k vi_k / (1 + Σ vr_k); arg θ4 = 0 at
    # ζ = π/2, so V(K) = Vc = v_lin K.
    slope = 2.0 * (vi[0] + 2.0 * vi[1] + 3.0 * vi[2]) / (1.0 + vr[0] + vr[1] + vr[2])
    v_lin = -v_arg * scale * slope
    nomes = (q, q2, q4, q6, q9, q12, q16)
    th = Theta(0.0, scale, nomes, th3 / s2, th4 / s2, th4 / th3, v_lin, v_arg, vr, vi)
    return th, K, v_lin * K

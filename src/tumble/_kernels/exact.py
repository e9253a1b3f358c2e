"""Exact torque-free motion, compiled: the free flow of a rigid body.

Per-body kernels on tuples of float64, the maths of ``docs/exact.md`` (reference
``shared/reference/rigid-body-integrators.md`` §4.2, §4.3). The flow is split in two:
:func:`prepare` computes, once per state ``(q0, L_b0)``, everything that depends only on it
(the kind of motion, the sorting of the axes, the elliptic parameter and its complement,
``K``, the nomes of the theta series, the phase ``u0``, the third-kind integral's
constants and the fixed factors of the attitude); :func:`evaluate` then gives the state at
any time ``t`` from those constants with one Jacobi-function evaluation (the polynomial
sine and cosine of a half angle, or one exponential), one ``atan2`` for the third-kind
integral and the attitude products. :func:`free_flow` is the two in one call. The theta
series and Carlson's ``R_F`` are :mod:`tumble._kernels.elliptic`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import prange

from tumble._kernels import inner, njit, parallel_njit
from tumble._kernels.elliptic import Theta, carlson_rf, series, theta_constants
from tumble._kernels.rotation import (
    mat_t_vec,
    mat_to_q,
    mat_vec,
    qconj,
    qmul,
    qnormalize,
    qrotate,
    rotvec_to_q,
    sincos,
)

#: Two inverse moments count as equal (symmetric top) within this times the largest one.
EQUAL_RTOL = 8 * 2.0**-52
#: ``1 - m`` below this (an orbit within ~1e-50 |L| of the unstable axis) is raised to it.
M1_FLOOR = 1e-100
#: Squared body components below this times ``|L|²`` count as zero (a steady spin).
STEADY_FLOOR = 1e-280

#: Kinds of motion (:func:`prepare`'s ``kind``).
UNIFORM = 0.0
SYMMETRIC = 1.0
ASYMMETRIC = 2.0

#: Constants of the motion from one state, all float64 (flags are 0.0 or 1.0):
#:
#: * ``kind`` (:data:`UNIFORM`, :data:`SYMMETRIC`, :data:`ASYMMETRIC`);
#: * ``q``: the initial attitude (uniform, symmetric), the fixed left factor
#:   ``q0 ⊗ p* ⊗ Rz(ϕ0) ⊗ Ry(θ0)`` of the attitude (asymmetric);
#: * ``L``: the body momentum (uniform, symmetric), the world unit vector ``L̂_w``
#:   (asymmetric); ``w``: the world angular velocity (uniform), the precession rate
#:   vector ``J⊥ L_w`` (symmetric);
#: * symmetric: ``axis`` (0, 1, 2) and ``spin = (J∥ - J⊥) L_a``;
#: * asymmetric: ``P`` (row-major, body to frame coordinates) and its quaternion ``p``;
#:   ``amp`` the sorted amplitudes of ``L/|L|``; flags ``case_a``, ``ref_e3``,
#:   ``circulates``, ``separatrix``; ``norm = |L|``, ``wp``, ``u0``, ``K`` (inf on the
#:   separatrix) and ``half_per_K = 1/2K``, ``Vc = Π(n|m) - K``, ``V0 = V(u0)``,
#:   ``psi_rate = |L| J1`` (reference e3) or ``|L| J3`` (e1) and ``psi_v = ± |L| (J1 - J3)
#:   / wp`` (``ψ = psi_rate t + psi_v (V(u) - V0)``), ``theta``.
Flow = namedtuple(
    "Flow",
    [
        "kind",
        "q",
        "L",
        "w",
        "axis",
        "spin",
        "P",
        "p",
        "amp",
        "case_a",
        "ref_e3",
        "circulates",
        "separatrix",
        "norm",
        "wp",
        "u0",
        "K",
        "half_per_K",
        "Vc",
        "V0",
        "psi_rate",
        "psi_v",
        "theta",
    ],
)


# --------------------------------------------------------------------------------------
# per-state set-up


@inner
def _unit_row(i, s):
    """``s e_i`` as a row."""
    return (s if i == 0 else 0.0, s if i == 1 else 0.0, s if i == 2 else 0.0)


@inner
def invariants(L, J):
    """Sorting ``P``, sorted ``J``, sorted scaled ``L`` and ``G``, ``H``, ``D2`` per ``|L|²``.

    ``P`` is the proper signed permutation (rows ``e_{i0}, e_{i1}, ±e_{i2}``) that sorts
    ``J`` descending, ties in index order. ``G = 2E - J3 |L|²``, ``H = J1 |L|² - 2E``,
    ``D2 = J2 |L|² - 2E`` as sums of terms: the first two without cancellation, the third
    with only the cancellation that is the real distance to the separatrix. ``L`` is scaled
    by a power of two (exact), so a state on the separatrix stays exactly on it.
    """
    i0, i1, i2 = 0, 1, 2
    odd = False
    if J[i1] > J[i0]:
        i0, i1, odd = i1, i0, not odd
    if J[i2] > J[i1]:
        i1, i2, odd = i2, i1, not odd
    if J[i1] > J[i0]:
        i0, i1, odd = i1, i0, not odd
    P = _unit_row(i0, 1.0) + _unit_row(i1, 1.0) + _unit_row(i2, -1.0 if odd else 1.0)
    Js = (J[i0], J[i1], J[i2])
    e = math.frexp(max(abs(L[0]), abs(L[1]), abs(L[2])))[1]
    Ls = mat_vec(P, (math.ldexp(L[0], -e), math.ldexp(L[1], -e), math.ldexp(L[2], -e)))
    d12, d13, d23 = Js[0] - Js[1], Js[0] - Js[2], Js[1] - Js[2]
    l1, l2, l3 = Ls[0] * Ls[0], Ls[1] * Ls[1], Ls[2] * Ls[2]
    n2 = l1 + l2 + l3
    G = (d13 * l1 + d23 * l2) / n2
    H = (d12 * l2 + d13 * l3) / n2
    D2 = (d23 * l3 - d12 * l1) / n2
    return P, Js, Ls, G, H, D2


@inner
def classify(L, J):
    """``(kind, axis, steady)`` of the motion from body momentum ``L``.

    Uniform: ``L = 0``, a zero inverse moment, a spherical body, or a steady spin about a
    principal axis of an asymmetric body (``steady``; ``k = ω × L = 0`` exactly when the
    other two components vanish; below 1e-140 of ``|L|`` they count as zero, anywhere
    else the elliptic solution is accurate). Symmetric: two moments equal within
    ``EQUAL_RTOL`` of the largest; ``axis`` is the unique one.
    """
    tol = EQUAL_RTOL * max(J[0], J[1], J[2])
    e12 = abs(J[1] - J[2]) <= tol
    e02 = abs(J[0] - J[2]) <= tol
    e01 = abs(J[0] - J[1]) <= tol
    spherical = e01 and e12
    if L[0] == 0.0 and L[1] == 0.0 and L[2] == 0.0:
        return UNIFORM, 0, False
    if J[0] == 0.0 or J[1] == 0.0 or J[2] == 0.0 or spherical:
        return UNIFORM, 0, False
    if e12:
        return SYMMETRIC, 0, False
    if e02:
        return SYMMETRIC, 1, False
    if e01:
        return SYMMETRIC, 2, False
    Ls = invariants(L, J)[2]
    l1, l2, l3 = Ls[0] * Ls[0], Ls[1] * Ls[1], Ls[2] * Ls[2]
    floor = STEADY_FLOOR * (l1 + l2 + l3)
    if l1 + l2 <= floor or l2 + l3 <= floor or l1 + l3 <= floor:
        return UNIFORM, 0, True
    return ASYMMETRIC, 0, False


@inner
def elliptic(L, J):
    """Sorted set-up of the asymmetric solution (reference §4.2): ``P`` (body to frame
    coordinates), the flags ``case_a``, ``separatrix``, ``ref_e3``, ``|L|``, the frame
    components of ``L/|L|``, ``d13``, ``J1``, ``J3``, the sorted amplitudes, ``wp``, ``m``,
    ``m1``, ``n``, ``sn0``, ``cn0``.

    Case A (``D2 > 0``, L circulates about sorted e3): ``L = |L| (a1 cn, a2 sn, a3 dn)``;
    case B: ``|L| (a1 dn, a2 sn, a3 cn)``; ``u = u0 + wp t``. ``m`` and ``1 - m`` each by
    its own formula, so ``1 - m`` keeps its relative precision up to the separatrix
    (``D2 = 0``, ``m = 1``). The reference axis of the frame ``B(L)`` (sorted e3 or e1) is
    chosen so that ``|n| <= 1``: with ``|n| >> 1`` the integrand of ``ψ`` has a spike of
    width ``1/sqrt|n|``.
    """
    P, Js, Ls, G, H, D2 = invariants(L, J)
    J1, J3 = Js[0], Js[2]
    # m, 1 - m, n and the amplitudes are ratios of the differences of J and of G, H, D2;
    # the power of two that brings J1 into [1/2, 1) keeps their products (J² |L|⁴ units)
    # from overflowing for J up to 1.8e308, and changes no bit of any of them otherwise.
    k = math.frexp(J1)[1]
    d12, d13, d23 = (
        math.ldexp(Js[0] - Js[1], -k),
        math.ldexp(J1 - J3, -k),
        math.ldexp(Js[1] - J3, -k),
    )
    G, H, D2 = math.ldexp(G, -k), math.ldexp(H, -k), math.ldexp(D2, -k)
    case_a = D2 >= 0.0
    separatrix = D2 == 0.0
    if case_a:
        f0 = 1.0
        f1 = f2 = -1.0 if Ls[2] < 0.0 else 1.0
    else:
        f1 = 1.0
        f0 = f2 = -1.0 if Ls[0] < 0.0 else 1.0
    # On the separatrix the case-A solution has L1 > 0: the other heteroclinic orbit is
    # reached by the half turn about axis 3.
    if separatrix and Ls[0] * f0 < 0.0:
        f0, f1 = -f0, -f1
    P = (
        f0 * P[0], f0 * P[1], f0 * P[2],
        f1 * P[3], f1 * P[4], f1 * P[5],
        f2 * P[6], f2 * P[7], f2 * P[8],
    )  # fmt: skip
    norm = math.sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2])
    Lsorted = mat_vec(P, (L[0] / norm, L[1] / norm, L[2] / norm))
    ref_e3 = d12 <= d23 if case_a else d12 < d23
    if not ref_e3:
        P = P[3:] + P[:3]
    a1 = math.sqrt(G / d13)
    a3 = math.sqrt(H / d13)
    if case_a:
        a2 = math.sqrt(G / d23)
        wp = math.ldexp(norm * math.sqrt(d23 * H), k)
        m = d12 * G / (d23 * H)
        m1 = d13 * D2 / (d23 * H)
        n = -d12 / d23 if ref_e3 else -G / H
        cn0 = Lsorted[0] / a1
    else:
        a2 = math.sqrt(H / d12)
        wp = math.ldexp(norm * math.sqrt(d12 * G), k)
        m = d23 * H / (d12 * G)
        m1 = d13 * -D2 / (d12 * G)
        n = -H / G if ref_e3 else -d23 / d12
        cn0 = Lsorted[2] / a3
    sn0 = Lsorted[1] / a2
    r = math.hypot(sn0, cn0)
    if separatrix:
        m, m1 = 1.0, 0.0
    else:
        # 1 - m below 1e-100 (an orbit within ~1e-50 |L| of the unstable axis) is raised to
        # it: far below the round-off of L_b itself; the series' powers stay normal numbers.
        m1 = max(m1, M1_FLOOR)
    return (
        P, case_a, separatrix, ref_e3, norm, J1 - J3, J1, J3,
        (a1, a2, a3), wp, m, m1, n, sn0 / r, cn0 / r,
    )  # fmt: skip


@njit(inline="always")
def _frame(f, sn, cn, dn):
    """Frame components of ``L / |L|`` (reference axis third) from the Jacobi functions."""
    a = f.amp
    if f.case_a:
        x, y, z = a[0] * cn, a[1] * sn, a[2] * dn
    else:
        x, y, z = a[0] * dn, a[1] * sn, a[2] * cn
    if f.ref_e3:
        return (x, y, z)
    return (y, z, x)


@njit(inline="always")
def _half_angle(x, y, r):
    """``(c, s, c² + s²)`` with ``(c, s)`` proportional to ``(cos φ/2, sin φ/2)``,
    ``φ = atan2(y, x)`` in ``(-π, π]``, ``r = hypot(x, y) > 0``: ``(r + x, y)``, or
    ``(|y|, ±(r - x))`` when ``x < 0`` (no cancellation, no trigonometry)."""
    if x >= 0.0:
        return r + x, y, 2.0 * r * (r + x)
    return abs(y), math.copysign(r - x, y), 2.0 * r * (r - x)


#: Largest ``|u_r| / K`` the series take from the plain reduction ``u - 2jK``, whose
#: rounding stays below ``2**-22 K`` up to ``|u| ~ 2**31 K``. Beyond, :func:`reduce_far`.
#: The series stay finite a little past ``K`` (near the separatrix, not at ``2K``).
REDUCED_SLACK = 1.0 + 2.0**-20


@inner
def reduce_far(u, K):
    """``(j, u_r, j mod 4)`` with ``u = u_r + 2jK``, ``|u_r| <= K``, for any finite ``u``.

    The cold path of :func:`_angles` (phases beyond ~``2**31 K``, not inlined). ``fmod``
    by ``8K`` is exact (IEEE remainder of two floats), so ``u_r`` and ``j mod 4`` are those
    of the float ``u`` itself, whatever its size; ``j`` (which only scales ``Vc``) carries
    the rounding of ``u / 2K``. Where an ulp of ``u`` exceeds the period the phase is
    known only to that ulp, and ``u_r`` is one of its values (``docs/exact.md``).
    """
    r = np.fmod(u, 8.0 * K)
    jr = math.floor(r * (0.5 / K) + 0.5)
    return (u - r) * (0.5 / K) + jr, r - 2.0 * jr * K, int(jr) & 3


@njit(inline="always")
def _angles(f, u):
    """Frame ``L_f/|L|``, the half angles of its azimuth ``ϕ`` and polar angle ``θ`` about
    the third frame axis, and ``V(u)``; ``ϕ`` is continuous in ``u`` (its multiple-of-π
    part enters the half angle exactly).

    ``u = u_r + 2jK``, ``|u_r| <= K``: ``sn, cn`` change sign with ``j``, ``dn`` does not,
    and ``V(u) = V(u_r) + 2j Vc``. A circulating in-plane vector turns by π per ``2K``
    (counter-clockwise in case A, clockwise in case B), so its azimuth is taken from the
    reduced components plus that multiple of π; a librating one stays in a half plane.
    """
    th = f.theta
    if f.separatrix:
        j = 0.0
        ur = u
        j4 = 0
    else:
        # j may be off by one where |u_r| = K (then |u_r| is K to round-off): harmless.
        j = math.floor(u * f.half_per_K + 0.5)
        ur = u - 2.0 * j * f.K
        # j mod 4 without a float modulo (a libm call): exact for every integral float j
        # (one beyond 2**53 is a multiple of 4).
        j4 = int(j - 4.0 * math.floor(0.25 * j))
        if not abs(ur) <= f.K * REDUCED_SLACK:
            # The rounding of 2 j K exceeds the slack (|u| beyond ~2**31 K): the cold path.
            j, ur, j4 = reduce_far(u, f.K)
    sn, cn, dn, arg = series(th, ur)
    # cn >= 0 on |u_r| <= K; abs only removes round-off (and -0.0) at u_r = ±K.
    cn = abs(cn)
    V = th.v_lin * ur + th.v_arg * arg
    if j != 0.0:
        V += 2.0 * j * f.Vc
    sign = 1.0 - 2.0 * (j4 & 1)
    Lf = _frame(f, sign * sn, sign * cn, dn)
    # |in-plane part| > 0: one of its two components carries dn, or both sn and cn.
    rho = math.sqrt(Lf[0] * Lf[0] + Lf[1] * Lf[1])
    if f.circulates:
        Lr = _frame(f, sn, cn, dn)
        hc, hs, hn = _half_angle(Lr[0], Lr[1], rho)
        k = j4 if f.case_a else (4 - j4) & 3
        # turn the half angle by k π/2
        if k == 1:
            hc, hs = -hs, hc
        elif k == 2:
            hc, hs = -hc, -hs
        elif k == 3:
            hc, hs = hs, -hc
    else:
        hc, hs, hn = _half_angle(Lf[0], Lf[1], rho)
    # |L_f| = 1 to round-off (unit amplitudes, sn² + cn² = 1): the polar angle's radius.
    tc, ts, tn = _half_angle(Lf[2], rho, 1.0)
    # (hc, hs) and (tc, ts) unnormalised: the caller divides their product by sqrt(hn tn).
    return Lf, hc, hs, tc, ts, hn * tn, V


_NO3 = (0.0, 0.0, 0.0)
_NO4 = (0.0, 0.0, 0.0, 0.0)
_NO9 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@inner
def _no_theta():
    """Placeholder :class:`Theta` of the uniform and symmetric kinds."""
    return Theta(0.0, 0.0, _NO4 + _NO3, 0.0, 0.0, 0.0, 0.0, 0.0, _NO4, _NO4)


@inner
def prepare(q, L, J):
    """:class:`Flow` constants of the torque-free motion from ``(q, L_b)`` (``J >= 0``).

    Uniform rotation ``q(t) = exp(ω t/2) ⊗ q0``: ``L = 0``, spherical, a zero inverse
    moment (the momentum on such axes is cleared: the constraint absorbs it) or a steady
    spin. Symmetric top: ``q(t) = exp(J⊥ L_w t/2) ⊗ q0 ⊗ exp(Ω t e_a/2)``. Asymmetric
    top: ``u0 = sn0 R_F(cn0², dn0², 1)`` (reflected to ``±2K - u0`` when ``cn0 < 0``;
    ``asinh(sn0/cn0)`` on the separatrix), ``K``, ``Π(n|m) - K`` and the theta constants
    (:func:`theta_constants`), and ``V0``, ``ϕ0``, ``θ0`` from the same evaluation as every
    later time, so ``t = 0`` returns ``q0`` to round-off.
    """
    L = (
        L[0] if J[0] > 0.0 else 0.0,
        L[1] if J[1] > 0.0 else 0.0,
        L[2] if J[2] > 0.0 else 0.0,
    )
    kind, axis, _ = classify(L, J)
    if kind == UNIFORM:
        w = qrotate(q, (J[0] * L[0], J[1] * L[1], J[2] * L[2]))
        return Flow(
            UNIFORM, q, L, w, 0.0, 0.0, _NO9, _NO4, _NO3, 0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, _no_theta(),
        )  # fmt: skip
    if kind == SYMMETRIC:
        j_par = J[axis]
        j_perp = 0.5 * (J[0] + J[1] + J[2] - j_par)
        Lw = qrotate(q, L)
        prec = (j_perp * Lw[0], j_perp * Lw[1], j_perp * Lw[2])
        return Flow(
            SYMMETRIC, q, L, prec, float(axis), (j_par - j_perp) * L[axis], _NO9, _NO4, _NO3,
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, _no_theta(),
        )  # fmt: skip
    P, case_a, sep, ref_e3, norm, d13, J1, J3, amp, wp, m, m1, n, sn0, cn0 = elliptic(L, J)
    th, K, Vc = theta_constants(m, m1, n, sep)
    if sep:
        u0 = math.asinh(sn0 / cn0)
    else:
        dn0 = math.sqrt(cn0 * cn0 + m1 * sn0 * sn0)
        u0 = sn0 * carlson_rf(cn0 * cn0, dn0 * dn0, 1.0)
        if cn0 < 0.0:
            u0 = (2.0 if sn0 >= 0.0 else -2.0) * K - u0
    p = mat_to_q(P)
    Lw = qrotate(q, L)
    Lw_hat = (Lw[0] / norm, Lw[1] / norm, Lw[2] / norm)
    psi_rate = norm * (J1 if ref_e3 else J3)
    psi_v = (norm if ref_e3 else -norm) * (d13 / wp)
    flags = (
        1.0 if case_a else 0.0,
        1.0 if ref_e3 else 0.0,
        1.0 if ref_e3 == case_a else 0.0,
        1.0 if sep else 0.0,
    )
    f = Flow(
        ASYMMETRIC, q, Lw_hat, _NO3, 0.0, 0.0, P, p, amp, *flags,
        norm, wp, u0, K, 0.5 / K, Vc, 0.0, psi_rate, psi_v, th,
    )  # fmt: skip
    _, hc, hs, tc, ts, n2, V0 = _angles(f, u0)
    # B(L) = Rz(ϕ) Ry(θ) Rz(π) in frame coordinates, so B(L0) B(L)ᵀ = Rz(ϕ0) Ry(θ0 - θ)
    # Rz(-ϕ); its fixed left part Rz(ϕ0) Ry(θ0) joins q0 and the sorting.
    k = 1.0 / math.sqrt(n2)
    rz_ry = (k * hc * tc, -k * hs * ts, k * hc * ts, k * hs * tc)
    left = qnormalize(qmul(qmul(q, qconj(p)), rz_ry))
    return Flow(
        ASYMMETRIC, left, Lw_hat, _NO3, 0.0, 0.0, P, p, amp, *flags,
        norm, wp, u0, K, 0.5 / K, Vc, V0, psi_rate, psi_v, th,
    )  # fmt: skip


@njit(inline="always")
def evaluate(f, t):
    """The state ``(q(t), L_b(t))`` of the motion :func:`prepare` set up, at time ``t``.

    Asymmetric: ``R(t) = Q(ψ L̂_w) R0 B(L_b0) B(L_b(t))ᵀ`` with
    ``ψ = |L| [J_ref t ± (J1 - J3) (t + (V(u) - V0)/wp)]`` (reference §4.3), evaluated as
    ``left ⊗ Rz(ψ) Ry(-θ) Rz(-ϕ) ⊗ p``.
    """
    if f.kind == UNIFORM:
        w = f.w
        return qmul(rotvec_to_q((w[0] * t, w[1] * t, w[2] * t)), f.q), f.L
    if f.kind == SYMMETRIC:
        a = int(f.axis)
        ang = f.spin * t
        spin = rotvec_to_q((ang if a == 0 else 0.0, ang if a == 1 else 0.0, ang if a == 2 else 0.0))
        r = f.w
        precess = rotvec_to_q((r[0] * t, r[1] * t, r[2] * t))
        return qmul(precess, qmul(f.q, spin)), qrotate(qconj(spin), f.L)
    Lf, hc, hs, tc, ts, n2, V = _angles(f, f.u0 + f.wp * t)
    half = 0.5 * (f.psi_rate * t + f.psi_v * (V - f.V0))
    sp, cp = sincos(half)
    # The left factor takes the frame's e3 to L̂_w, so Q(ψ L̂_w) ⊗ left = left ⊗ Rz(ψ), and
    # Rz(ψ) Ry(-θ) Rz(-ϕ) is one z-y-z product: (cos(θ/2) cos((ψ-ϕ)/2), sin(θ/2)
    # sin((ψ+ϕ)/2), -sin(θ/2) cos((ψ+ϕ)/2), cos(θ/2) sin((ψ-ϕ)/2)), from the unnormalised
    # half angles. The one normalisation at the end scales them and also keeps a flow
    # restarted from its own output (a splitting step) from compounding |q| - 1.
    k = 1.0 / math.sqrt(n2)
    cm, sm = cp * hc + sp * hs, sp * hc - cp * hs
    cs, ss = cp * hc - sp * hs, sp * hc + cp * hs
    kc, ks = k * tc, k * ts
    q1 = qmul(f.q, qmul((kc * cm, ks * ss, -ks * cs, kc * sm), f.p))
    Lb = mat_t_vec(f.P, Lf)
    return q1, (Lb[0] * f.norm, Lb[1] * f.norm, Lb[2] * f.norm)


#: Momenta below this (per component) are scaled up before :func:`prepare`: their squares
#: would underflow.
TINY_MOMENTUM = 2.0**-500
#: Largest exponent of :func:`momentum_scale`: ``2**1000`` and its inverse are normal
#: numbers, so ``t / s`` keeps every bit for ``|t| >= 2**-22`` (a shorter time cannot move
#: a state with ``|L_b| < 2**-500``), also for subnormal momenta.
MAX_SCALE_EXPONENT = 1000


@inner
def free_flow(q, L, J, t):
    """Exact torque-free motion for time ``t`` from ``(q, L_b)``: ``(q1, L_b1)``.

    ``q`` body-to-world unit quaternion ``(w, x, y, z)``, ``L`` body angular momentum,
    ``J`` principal inverse moments (0 for a locked axis, whose momentum is cleared).
    :func:`prepare` then :func:`evaluate`; when one state is evaluated at many times,
    prepare once (:func:`prepare_scaled`). A tiny momentum is scaled first
    (:func:`momentum_scale`).
    """
    f, s = prepare_scaled(q, L, J)
    return evaluate_scaled(f, s, t)


@inner
def prepare_scaled(q, L, J):
    """``(f, s)``: the :class:`Flow` of ``(q, s L_b)`` with ``s`` = :func:`momentum_scale`
    of ``L_b``, for :func:`evaluate_scaled`."""
    s = momentum_scale(L)
    return prepare(q, (L[0] * s, L[1] * s, L[2] * s), J), s


@njit(inline="always")
def evaluate_scaled(f, s, t):
    """The state ``(q(t), L_b(t))`` of the motion from ``(q, L_b)`` that
    :func:`prepare_scaled` set up as ``(f, s)``."""
    # s is a power of two: 1/s is exact, and hoisted out of a loop over t.
    inv = 1.0 / s
    q1, L1 = evaluate(f, t * inv)
    return q1, (L1[0] * inv, L1[1] * inv, L1[2] * inv)


@inner
def momentum_scale(L):
    """A power of two ``s`` bringing a tiny momentum (``|L_i| < 2**-500``, whose squares
    underflow) to ``[1, 2)`` (to at least ``2**-75`` for a subnormal one); 1 otherwise.

    The motion with ``s L`` is the same motion ``s`` times faster, so the state at ``t`` is
    the scaled flow's at ``t/s`` with ``L_b`` divided by ``s`` (exact in binary, up to the
    rounding of a subnormal result). ``s <= 2**MAX_SCALE_EXPONENT`` stays finite.
    """
    big = max(abs(L[0]), abs(L[1]), abs(L[2]))
    if 0.0 < big < TINY_MOMENTUM:
        return math.ldexp(1.0, min(1 - math.frexp(big)[1], MAX_SCALE_EXPONENT))
    return 1.0


@njit
def period(L, J):
    """Period of ``L_b(t)``: ``4K/wp`` (asymmetric, and a steady spin about an extreme axis
    as the limit of nearby orbits; inf on the separatrix), ``2π/|Ω|`` (symmetric), inf
    when ``L_b`` is constant. ``L`` not tiny (:func:`momentum_scale` is 1)."""
    kind, axis, steady = classify(L, J)
    if kind == SYMMETRIC:
        j_par = J[axis]
        j_perp = 0.5 * (J[0] + J[1] + J[2] - j_par)
        return 2.0 * math.pi / abs((j_par - j_perp) * L[axis])
    if kind == UNIFORM and not steady:
        return math.inf
    e = elliptic(L, J)
    wp, m1, sep = e[9], e[11], e[2]
    if sep:
        return math.inf
    return 4.0 * carlson_rf(0.0, m1, 1.0) / wp


# --------------------------------------------------------------------------------------
# loops over bodies and times (tumble.exact)


@inner
def _solve_body(b, q, L, J, t, q_out, w_out):
    """Body ``b`` at every time: one :func:`prepare`, one :func:`evaluate` per time (a tiny
    momentum scaled as in :func:`free_flow`). Returns 1 if a result is not finite, else 0."""
    Jb = (J[b, 0], J[b, 1], J[b, 2])
    f, s = prepare_scaled((q[b, 0], q[b, 1], q[b, 2], q[b, 3]), (L[b, 0], L[b, 1], L[b, 2]), Jb)
    # evaluate_scaled by hand: omega = R J L_b from the scaled momentum, then scaled back, so
    # a subnormal L_b(t) does not round it.
    inv = 1.0 / s
    total = 0.0
    for i in range(t.shape[0]):
        qt, Lt = evaluate(f, t[i] * inv)
        # Uniform rotation keeps omega exactly; otherwise omega = R J L_b.
        w = f.w if f.kind == UNIFORM else qrotate(qt, (Jb[0] * Lt[0], Jb[1] * Lt[1], Jb[2] * Lt[2]))
        for c in range(4):
            q_out[i, b, c] = qt[c]
            total += abs(qt[c])
        for c in range(3):
            w_out[i, b, c] = w[c] * inv
            total += abs(w_out[i, b, c])
    # One test per body: a NaN or an infinity anywhere makes the sum non-finite.
    return 0 if total < math.inf else 1


@njit
def solve_serial(q, L, J, t, q_out, w_out):
    """``q(t)`` (nt, nb, 4) and world ``omega(t)`` (nt, nb, 3) from ``(q, L_b)`` (nb, ...);
    returns the number of bodies with a non-finite result (none from valid input)."""
    bad = 0
    for b in range(q.shape[0]):
        bad += _solve_body(b, q, L, J, t, q_out, w_out)
    return bad


@parallel_njit
def solve_parallel(q, L, J, t, q_out, w_out):
    """:func:`solve_serial` with the bodies spread over numba's threads."""
    bad = 0
    for b in prange(q.shape[0]):
        bad += _solve_body(b, q, L, J, t, q_out, w_out)
    return bad


@njit
def period_serial(L, J, out):
    """:func:`period` of every body: ``L``, ``J`` (nb, 3) to ``out`` (nb,); returns the
    number of finite periods too long for float64 (``inf`` in ``out``)."""
    overflow = 0
    for b in range(L.shape[0]):
        Lb = (L[b, 0], L[b, 1], L[b, 2])
        # T(L) = s T(s L): a tiny momentum is scaled as in free_flow (its squares would
        # underflow); the product overflows only where the period itself does.
        s = momentum_scale(Lb)
        T = period((Lb[0] * s, Lb[1] * s, Lb[2] * s), (J[b, 0], J[b, 1], J[b, 2]))
        out[b] = s * T
        if math.isfinite(T) and math.isinf(out[b]):
            overflow += 1
    return overflow

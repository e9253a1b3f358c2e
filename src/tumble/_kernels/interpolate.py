"""Interpolation kernels behind :mod:`tumble.interpolate`: slerp and the rotation spline.

Quaternions scalar first, Hamilton product; the spline's pieces are rotation vectors
``θ(τ)`` relative to the knot before, ``R(t) = R_i exp(θ(τ))`` (body-frame increment), so the
body angular velocity is ``J_r(θ) θ̇`` and the body angular acceleration
``J_r(θ) θ̈ + (dJ_r/dt) θ̇``. Flat loops as in :mod:`tumble._kernels.rotation`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from tumble._kernels import inner, njit, parallel_njit
from tumble._kernels.dispatch import load4, load_scalar
from tumble._kernels.rotation import (
    cross,
    dot,
    horner,
    mat_vec,
    qconj,
    qexp,
    qlog,
    qmul,
    qnormalize,
    qrotate,
    quat_ok,
    rotvec_to_q,
    so3_b,
    so3_jacobian,
)

_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U3 = np.uint64(3)
_U4 = np.uint64(4)


@inner
def slerp_q(a, b, s):
    """``â ⊗ (â* ⊗ b̂)^s`` on the short arc, ``â = a/|a|``, ``b̂ = b/|b|``.

    Exact at the ends: ``s = 0`` gives ``â``, ``s = 1`` gives ``±b̂`` (the sign nearer ``â``).
    Equal and opposite inputs give ``â`` for every ``s`` (the relative rotation is the
    identity; its logarithm is zero, never 0/0).
    """
    an = qnormalize(a)
    bn = qnormalize(b)
    if s == 0.0:
        return an
    r = qmul(qconj(an), bn)
    if s == 1.0:
        if r[0] < 0.0:
            return (-bn[0], -bn[1], -bn[2], -bn[3])
        return bn
    x = qlog(r)
    return qmul(an, qexp((s * x[0], s * x[1], s * x[2])))


@inner
def _slerp_at(i, q0, q1, s, tiny, out):
    a = load4(q0, i)
    b = load4(q1, i)
    r = slerp_q(a, b, load_scalar(s, i))
    j = _U4 * i
    out[j], out[j + _U1], out[j + _U2], out[j + _U3] = r
    total = abs(r[0]) + abs(r[1]) + abs(r[2]) + abs(r[3])
    return np.int64(not (quat_ok(a, tiny) & quat_ok(b, tiny) & (total < math.inf)))


@njit
def slerp_serial(q0, q1, s, tiny, out):
    """``out = slerp(q0, q1, s)`` row by row; returns the number of flagged rows."""
    bad = 0
    for i in range(out.shape[0] // 4):
        bad += _slerp_at(np.uint64(i), q0, q1, s, tiny, out)
    return bad


@parallel_njit
def slerp_parallel(q0, q1, s, tiny, out):
    """``slerp_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(out.shape[0] // 4):
        bad += _slerp_at(np.uint64(i), q0, q1, s, tiny, out)
    return bad


# --------------------------------------------------------------------------------------
# the rotation spline
#
# With a(t) = (1 - cos t)/t² and b(t) = (t - sin t)/t³ (J_r = I - a [θ]× + b [θ]×²), the
# derivative of J_r along θ(τ) applied to θ̇ is, with t = |θ|, p = θ·θ̇, c = θ × θ̇:
#     (dJ_r/dt) θ̇ = -(a'/t) p c + (b'/t) p θ × c + b θ̇ × c
# a'/t and b'/t by their Taylor series below t = 2 (14 terms, truncation < 1e-20), where the
# closed forms cancel; above, the closed forms lose less than a digit.

_SERIES_BELOW = 2.0
_DA = tuple((-1) ** k * 2 * k / math.factorial(2 * k + 2) for k in range(1, 15))
_DB = tuple((-1) ** k * 2 * k / math.factorial(2 * k + 3) for k in range(1, 15))


@inner
def da_over_t(t):
    """``a'(t)/t`` for ``a(t) = (1 - cos t)/t²``."""
    if t < _SERIES_BELOW:
        return horner(_DA, t * t)
    h = math.sin(0.5 * t)
    return (t * math.sin(t) - 4.0 * h * h) / (t * t * t * t)


@inner
def db_over_t(t):
    """``b'(t)/t`` for ``b(t) = (t - sin t)/t³``."""
    if t < _SERIES_BELOW:
        return horner(_DB, t * t)
    return (3.0 * math.sin(t) - t * math.cos(t) - 2.0 * t) / (t * t * t * t * t)


@inner
def jr_times(theta, v):
    """``J_r(θ) v``."""
    return mat_vec(so3_jacobian(theta, -1.0), v)


@inner
def jr_rate_term(theta, theta_dot):
    """``(dJ_r/dt) θ̇`` along the curve ``θ(τ)`` (the quadratic term of the acceleration)."""
    t = math.sqrt(dot(theta, theta))
    p = dot(theta, theta_dot)
    c = cross(theta, theta_dot)
    tc = cross(theta, c)
    dc = cross(theta_dot, c)
    ka = -da_over_t(t) * p
    kb = db_over_t(t) * p
    b = so3_b(t)
    return (
        ka * c[0] + kb * tc[0] + b * dc[0],
        ka * c[1] + kb * tc[1] + b * dc[1],
        ka * c[2] + kb * tc[2] + b * dc[2],
    )


@njit
def spline_rate_terms(theta, theta_dot, out):
    """``out[i] = (dJ_r/dt) θ̇`` for the rows of ``theta``, ``theta_dot`` (N, 3)."""
    for i in range(theta.shape[0]):
        r = jr_rate_term(
            (theta[i, 0], theta[i, 1], theta[i, 2]),
            (theta_dot[i, 0], theta_dot[i, 1], theta_dot[i, 2]),
        )
        out[i, 0], out[i, 1], out[i, 2] = r


@inner
def _spline_at(i, index, tau, coeff, knots, what, world, rate_scale, limit, out):
    """Row ``i`` of :func:`spline_serial`; returns 1 if it is flagged (beyond ``limit`` or
    not finite), else 0."""
    k = index[i]
    h = tau[i]
    c0 = (coeff[k, 0, 0], coeff[k, 0, 1], coeff[k, 0, 2])
    c1 = (coeff[k, 1, 0], coeff[k, 1, 1], coeff[k, 1, 2])
    c2 = (coeff[k, 2, 0], coeff[k, 2, 1], coeff[k, 2, 2])
    theta = (
        ((c0[0] * h + c1[0]) * h + c2[0]) * h,
        ((c0[1] * h + c1[1]) * h + c2[1]) * h,
        ((c0[2] * h + c1[2]) * h + c2[2]) * h,
    )
    theta_dot = (
        (3.0 * c0[0] * h + 2.0 * c1[0]) * h + c2[0],
        (3.0 * c0[1] * h + 2.0 * c1[1]) * h + c2[1],
        (3.0 * c0[2] * h + 2.0 * c1[2]) * h + c2[2],
    )
    theta_ddot = (
        6.0 * c0[0] * h + 2.0 * c1[0],
        6.0 * c0[1] * h + 2.0 * c1[1],
        6.0 * c0[2] * h + 2.0 * c1[2],
    )
    # Up to the limit the rate formulas' products (up to |θ|² |θ̇|²) stay finite; the
    # comparison is False for NaN as well.
    size = max(
        abs(theta[0]), abs(theta[1]), abs(theta[2]),
        abs(theta_dot[0]), abs(theta_dot[1]), abs(theta_dot[2]),
        abs(theta_ddot[0]), abs(theta_ddot[1]), abs(theta_ddot[2]),
    )  # fmt: skip
    if not size <= limit:
        for c in range(out.shape[1]):
            out[i, c] = 0.0
        return 1
    q = qmul((knots[k, 0], knots[k, 1], knots[k, 2], knots[k, 3]), rotvec_to_q(theta))
    if what == 0:
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = q
        return 0
    if what == 1:
        r = jr_times(theta, theta_dot)
    else:
        a = jr_times(theta, theta_ddot)
        n = jr_rate_term(theta, theta_dot)
        r = (a[0] + n[0], a[1] + n[1], a[2] + n[2])
    if world:
        # ω_world = R ω_body; α_world = R α_body (the ω × ω term of d(R ω_b)/dt vanishes).
        r = qrotate(q, r)
    # Back from the spline's time unit: once per time derivative, each product exact (a
    # power of two) unless it leaves the float range.
    for _ in range(what):
        r = (r[0] * rate_scale, r[1] * rate_scale, r[2] * rate_scale)
    out[i, 0], out[i, 1], out[i, 2] = r
    return 0 if abs(r[0]) + abs(r[1]) + abs(r[2]) < math.inf else 1


@njit
def spline_serial(index, tau, coeff, knots, what, world, rate_scale, limit, out):
    """Attitudes (``what`` 0), angular velocities (1) or accelerations (2) at ``tau``.

    ``index``: the piece of each time, ``tau``: the time since that piece's knot in the
    spline's unit, ``coeff`` (pieces, 3, 3): ``θ(τ) = ((c0 τ + c1) τ + c2) τ``, ``knots``
    (pieces + 1, 4): unit quaternions. ``world`` rotates rates into the world frame;
    ``rate_scale`` (a power of two) converts a rate per unit to the caller's time.
    Returns the number of rows whose ``θ``, ``θ̇`` or ``θ̈`` exceed ``limit`` or whose
    result is not finite (their rows hold zeros or the overflowed values).
    """
    bad = 0
    for i in range(index.shape[0]):
        bad += _spline_at(i, index, tau, coeff, knots, what, world, rate_scale, limit, out)
    return bad


@parallel_njit
def spline_parallel(index, tau, coeff, knots, what, world, rate_scale, limit, out):
    """``spline_serial`` with the times spread over numba's threads."""
    bad = 0
    for i in prange(index.shape[0]):
        bad += _spline_at(i, index, tau, coeff, knots, what, world, rate_scale, limit, out)
    return bad

"""Rotation algebra kernels: scalar tuple kernels and the gufuncs built from them.

The scalar kernels take and return tuples of floats so that they inline into per-body loops
and keep their state in registers. Quaternions are scalar first ``(w, x, y, z)``, Hamilton
product, active rotation ``v' = q v q*``. Names and signatures are stable: the kinematics,
rigid-body, exact-solution and hierarchy kernels call them.

Small-angle branches use thresholds at which the truncated series is exact to float64
round-off, hence also to float32 round-off; above the threshold the closed form is exact to
round-off for both dtypes, so one threshold serves both.

The gufuncs (``*_gu``) broadcast the scalar kernels over leading axes for the public module
:mod:`tumble.rotation`; they are compiled for float32 and float64 and expect validated input
of matching dtypes. The hottest operations (``quat_rotate``, ``quat_multiply``,
``rotvec_to_quat``) instead have flat loops, serial and ``prange``, over operands in the
convention of :mod:`tumble._kernels.dispatch` (a C-contiguous row per element, or one
tuple shared by all). Those loops check each result as they write it and return the number of
non-finite results (a NaN or infinite input always gives one), which saves the separate
NumPy passes over the input that would otherwise cost as much as the arithmetic; on a
nonzero count the public module runs the full validation, which names the bad argument.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from tumble._kernels import FLOAT_TYPES, guvectorize, njit, parallel_njit
from tumble._kernels.dispatch import load3, load4, load_scalar

# cos t and sin(t)/t as polynomials in z = t² up to z⁸ for t <= pi/4 (see cos_sinc_small):
# the first dropped Taylor terms, t¹⁸/18! and t¹⁸/19!, are below 3e-18 relative there.
SMALL_ANGLE = math.pi / 4
SMALL_ANGLE_SQ = SMALL_ANGLE * SMALL_ANGLE
# cos t = 1 - z/2 + z² P(z): coefficients of P, (-1)^k / (2k + 4)!.
_COS_P = tuple((-1) ** k / math.factorial(2 * k + 4) for k in range(7))
# sin(t)/t = 1 + z S(z): coefficients of S, (-1)^(k+1) / (2k + 3)!.
_SINC_S = tuple((-1) ** (k + 1) / math.factorial(2 * k + 3) for k in range(8))
# atan(r)/r = 1 - r²/3 + r⁴/5: below 1e-6 the dropped term is < 2e-25 relative.
_ATAN_SERIES_BELOW = 1e-6
# Vectors with a component above this take the scaled branches of qexp_approx, cayley_q and
# cayley_rotate: there 1/|x|² < 1e-30 is far below round-off, so both forms agree to
# round-off at the switch, while the unscaled squares overflow near 1e154 (1e19 in float32).
_SCALED_ABOVE = 1e15


@njit
def cross(a, b):
    """Cross product ``a × b`` of two 3-tuples."""
    return (
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    )


@njit
def dot(a, b):
    """Dot product of two 3-tuples."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def qmul(p, q):
    """Hamilton product ``p ⊗ q`` (as a rotation: apply ``q`` first, then ``p``)."""
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return (
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    )


@njit
def qconj(q):
    """Conjugate ``q* = (w, -x, -y, -z)``; the inverse of a unit quaternion."""
    return (q[0], -q[1], -q[2], -q[3])


@njit
def qnormalize(q):
    """``q / |q|``. A zero quaternion gives NaN: callers guard it."""
    inv = 1.0 / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)


@njit
def qrotate(q, v):
    """Active rotation ``q v q*`` of the 3-tuple ``v`` by the unit quaternion ``q``.

    Uses ``t = 2 u × v``, ``v' = v + w t + u × t`` with ``u`` the vector part (two cross
    products, no conversion to a matrix).
    """
    w = q[0]
    u = (q[1], q[2], q[3])
    c = cross(u, v)
    t = (2.0 * c[0], 2.0 * c[1], 2.0 * c[2])
    d = cross(u, t)
    return (v[0] + w * t[0] + d[0], v[1] + w * t[1] + d[1], v[2] + w * t[2] + d[2])


@njit
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
    p = _COS_P
    c = ((p[0] + p[1] * z) + z2 * (p[2] + p[3] * z)) + z4 * ((p[4] + p[5] * z) + z2 * p[6])
    s = _SINC_S
    sc = ((s[0] + s[1] * z) + z2 * (s[2] + s[3] * z)) + z4 * (
        (s[4] + s[5] * z) + z2 * (s[6] + s[7] * z)
    )
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + z2 * c), 1.0 + z * sc


#: Up to this ``|t|`` :func:`sincos` takes shorter polynomials (:func:`_cos_sinc_short`).
SHORT_ANGLE = 0.125


@njit(inline="always")
def _cos_sinc_short(z):
    """:func:`cos_sinc_small` for ``z = t² <= SHORT_ANGLE²``: the same Taylor series cut
    after ``t¹⁰`` (``cos``) and ``t¹¹`` (``sin``), whose first dropped terms are below
    2e-19 relative there (the step angles of a fine time step)."""
    z2 = z * z
    p = _COS_P
    c = (p[0] + p[1] * z) + z2 * (p[2] + p[3] * z)
    s = _SINC_S
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


@njit
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


@njit(inline="always")
def sincos(x):
    """:func:`sincos_wide`, with its small-angle case inlined: below ``SHORT_ANGLE`` (the
    angles of a fine time step) the shorter polynomials of :func:`_cos_sinc_short` in the
    caller, above it a call. Inlining the whole of :func:`sincos_wide` into the many flows
    of the compositions made their compilation five times slower."""
    if abs(x) <= SHORT_ANGLE:
        c, sc = _cos_sinc_short(x * x)
        return x * sc, c
    return sincos_wide(x)


@njit
def _sinc(t):
    """``sin(t)/t``: its polynomial for ``|t| <= SMALL_ANGLE`` (safe at 0), else libm."""
    if abs(t) <= SMALL_ANGLE:
        return cos_sinc_small(t * t)[1]
    return math.sin(t) / t


@njit
def qexp_small(x, z):
    """``exp((0, x))`` for ``z = |x|² <= SMALL_ANGLE²``: polynomials only, no branch.

    The branch-free core of :func:`qexp`, for loops that vectorise across elements.
    """
    c, s = cos_sinc_small(z)
    return (c, s * x[0], s * x[1], s * x[2])


@njit
def qexp(x):
    """``exp((0, x)) = (cos|x|, sin|x| x/|x|)`` for the 3-tuple ``x``, exact and safe at 0.

    Up to ``|x| = SMALL_ANGLE`` no square root and no libm call (:func:`qexp_small`; up
    to ``SHORT_ANGLE`` its shorter polynomials, :func:`_cos_sinc_short`).
    """
    z = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    if z <= SHORT_ANGLE * SHORT_ANGLE:
        c, s = _cos_sinc_short(z)
        return (c, s * x[0], s * x[1], s * x[2])
    if z <= SMALL_ANGLE_SQ:
        return qexp_small(x, z)
    if z == math.inf:
        # |x|² overflowed (|x| > ~1.3e154) from finite x: the length, taken scaled, is
        # still finite up to ~1.8e308, and libm reduces a huge angle exactly.
        n, t = _axis_and_length(x)
        s = math.sin(t)
        return (math.cos(t), s * n[0], s * n[1], s * n[2])
    t = math.sqrt(z)
    s = math.sin(t) / t
    return (math.cos(t), s * x[0], s * x[1], s * x[2])


@njit
def qexp_approx_moderate(x):
    """:func:`qexp_approx` for ``x`` without a component above ``_SCALED_ABOVE``; no branch.

    ``((1 - t²/2), (1 - t²/6) x)`` over its norm, ``t = |x|``. The norm never vanishes
    (``1 - t²/2 = 0`` only at ``t² = 2``, where ``1 - t²/6 != 0``).
    """
    t2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    a = 1.0 - 0.5 * t2
    b = 1.0 - t2 / 6.0
    inv = 1.0 / math.sqrt(a * a + b * b * t2)
    bi = b * inv
    return (a * inv, bi * x[0], bi * x[1], bi * x[2])


@njit
def qexp_approx(x):
    """Normalised third-order ``exp((0, x))``: ``((1 - t²/2), (1 - t²/6) x)`` over its norm.

    ``t = |x|``; the axis is exact, only the angle is approximate.
    """
    if has_large_component(x):
        # t², a² + b² t² could overflow; divided by |b| t (b < 0 here) the result is
        # -(r, n) / sqrt(1 + r²) with r = a / (b t), n = x / t, written in u = 1/t.
        n, t = _axis_and_length(x)
        u = 1.0 / t
        r = u * (u * u - 0.5) / (u * u - 1.0 / 6.0)
        inv = -1.0 / math.sqrt(1.0 + r * r)
        return (r * inv, n[0] * inv, n[1] * inv, n[2] * inv)
    return qexp_approx_moderate(x)


@njit
def qlog(q):
    """Vector part of ``log(q / |q|)`` on the shortest arc: ``atan2(|u|, |w|) u/|u|``.

    ``q`` and ``-q`` give the same result (the ``w >= 0`` representative is used), so the
    result has length at most ``pi/2``. Scale invariant; a zero quaternion gives NaN.
    """
    w, x, y, z = q
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    if s < _ATAN_SERIES_BELOW * w:
        # atan(r)/r series with r = s/w avoids 0/0 at the identity.
        r = s / w
        k = (1.0 - r * r / 3.0) / w
    else:
        k = math.atan2(s, w) / s
    return (k * x, k * y, k * z)


@njit
def rotvec_to_q(phi):
    """Unit quaternion ``exp(phi/2)`` of the rotation vector ``phi`` (angle ``|phi|``)."""
    return qexp((0.5 * phi[0], 0.5 * phi[1], 0.5 * phi[2]))


@njit
def q_to_rotvec(q):
    """Rotation vector ``2 log(q)`` of the ``w >= 0`` representative; angle in ``[0, pi]``."""
    u = qlog(q)
    return (2.0 * u[0], 2.0 * u[1], 2.0 * u[2])


@njit
def q_to_mat(q):
    """Row-major 3x3 matrix of ``q`` (Euler-Rodrigues), scaled by ``1/|q|²``.

    Dividing by ``|q|²`` keeps the matrix orthogonal to round-off for slightly non-unit
    quaternions; a zero quaternion gives NaN.
    """
    w, x, y, z = q
    s = 2.0 / (w * w + x * x + y * y + z * z)
    xx, yy, zz = s * x * x, s * y * y, s * z * z
    xy, xz, yz = s * x * y, s * x * z, s * y * z
    wx, wy, wz = s * w * x, s * w * y, s * w * z
    return (
        1.0 - (yy + zz), xy - wz, xz + wy,
        xy + wz, 1.0 - (xx + zz), yz - wx,
        xz - wy, yz + wx, 1.0 - (xx + yy),
    )  # fmt: skip


@njit
def mat_to_q(m):
    """Unit quaternion (``w >= 0``) of the row-major rotation matrix ``m`` (9-tuple).

    Shepperd's method: the square root is taken of the largest of ``1 + tr``,
    ``1 + 2 m_ii - tr``, so it is never near zero and the division is well conditioned
    at every angle, including a half turn.
    """
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m
    tr = m00 + m11 + m22
    if tr >= m00 and tr >= m11 and tr >= m22:
        w = 1.0 + tr
        x = m21 - m12
        y = m02 - m20
        z = m10 - m01
    elif m00 >= m11 and m00 >= m22:
        w = m21 - m12
        x = 1.0 + 2.0 * m00 - tr
        y = m01 + m10
        z = m02 + m20
    elif m11 >= m22:
        w = m02 - m20
        x = m01 + m10
        y = 1.0 + 2.0 * m11 - tr
        z = m12 + m21
    else:
        w = m10 - m01
        x = m02 + m20
        y = m12 + m21
        z = 1.0 + 2.0 * m22 - tr
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    return qnormalize((w, x, y, z))


@njit
def qangle(p, q):
    """Angle of the rotation taking ``p`` to ``q``: ``2 atan2(|u|, |w|)`` of ``p* ⊗ q``.

    Double-cover aware (``q`` and ``-q`` give the same angle), accurate for small angles
    (no ``acos``), scale invariant.
    """
    r = qmul(qconj(p), q)
    s = math.sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
    return 2.0 * math.atan2(s, abs(r[0]))


@njit
def has_large_component(x):
    """Whether a component of the 3-tuple ``x`` exceeds ``_SCALED_ABOVE`` (or is NaN)."""
    # & rather than `and`: no branch, so loops that test every element still vectorise.
    return not (
        (abs(x[0]) <= _SCALED_ABOVE) & (abs(x[1]) <= _SCALED_ABOVE) & (abs(x[2]) <= _SCALED_ABOVE)
    )


@njit
def _axis_and_length(x):
    """Unit vector and length of a nonzero 3-tuple, without overflow of ``|x|²``."""
    m = max(abs(x[0]), abs(x[1]), abs(x[2]))
    y0, y1, y2 = x[0] / m, x[1] / m, x[2] / m
    s = math.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    return (y0 / s, y1 / s, y2 / s), m * s


@njit
def mrp_to_q(a):
    """Unit quaternion ``((1 - |a|²), 2a) / (1 + |a|²)`` of the modified Rodrigues parameters ``a``.

    Any ``a`` (either MRP set, ``|a| > 1`` included); huge ``a`` are scaled so that ``|a|²``
    cannot overflow. The rotation turns about ``a`` by ``4 atan(|a|)``.
    """
    if has_large_component(a):
        # |a|² could overflow: numerator and denominator divided by |a|², in u = 1/|a|.
        n, s = _axis_and_length(a)
        u = 1.0 / s
        d = 1.0 / (1.0 + u * u)
        du2 = 2.0 * u * d
        return ((u * u - 1.0) * d, du2 * n[0], du2 * n[1], du2 * n[2])
    n2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
    d = 1.0 / (1.0 + n2)
    d2 = 2.0 * d
    return ((1.0 - n2) * d, d2 * a[0], d2 * a[1], d2 * a[2])


@njit
def cayley_q(phi):
    """Quarter-angle Cayley quaternion ``((1 - |a|²), 2a) / (1 + |a|²)``, ``a = phi/4``.

    Unit to round-off with no trig and no square root; rotates about ``phi`` exactly by
    ``4 atan(|phi|/4) = |phi| - |phi|³/48 + ...``. The same map as :func:`mrp_to_q`.
    """
    return mrp_to_q((0.25 * phi[0], 0.25 * phi[1], 0.25 * phi[2]))


@njit
def cayley_rotate(v, phi):
    """Cayley rotation of ``v`` by the rotation vector ``phi``: no trig, no square root.

    With ``t = phi/2``, ``u = t × v``: ``v' = v + 2 (u + t × u) / (1 + |t|²)``. The map is
    orthogonal (``|v'| = |v|`` to round-off); the axis is exact, the angle is
    ``2 atan(|phi|/2) = |phi| - |phi|³/12 + ...``.
    """
    t = (0.5 * phi[0], 0.5 * phi[1], 0.5 * phi[2])
    if has_large_component(t):
        # |t|² could overflow: with t = s n, u = 1/s,
        # v' = v + 2u/(1 + u²) n × v + 2/(1 + u²) n × (n × v).
        n, s = _axis_and_length(t)
        nv = cross(n, v)
        nnv = cross(n, nv)
        u = 1.0 / s
        k1 = 2.0 * u / (1.0 + u * u)
        k2 = 2.0 / (1.0 + u * u)
        return (
            v[0] + k1 * nv[0] + k2 * nnv[0],
            v[1] + k1 * nv[1] + k2 * nnv[1],
            v[2] + k1 * nv[2] + k2 * nnv[2],
        )
    u = cross(t, v)
    tu = cross(t, u)
    k = 2.0 / (1.0 + dot(t, t))
    return (
        v[0] + k * (u[0] + tu[0]),
        v[1] + k * (u[1] + tu[1]),
        v[2] + k * (u[2] + tu[2]),
    )


# --------------------------------------------------------------------------------------
# gufuncs over leading axes (validated input only; the public module checks shapes).
# numba cannot name a literal output length, so kernels whose output length differs from
# every input take an unused ``_shape`` argument of that length (a broadcast empty array).


def _sigs(layout_args: int) -> list[str]:
    """Signatures with ``layout_args`` 1-d array arguments, one per float type."""
    return [f"void({', '.join([f'{t}[:]'] * layout_args)})" for t in FLOAT_TYPES]


@guvectorize(_sigs(2), "(n)->(n)")
def quat_normalize_gu(q, out):
    r = qnormalize((q[0], q[1], q[2], q[3]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def quat_exp_gu(x, _shape, out):
    r = qexp((x[0], x[1], x[2]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def quat_exp_approx_gu(x, _shape, out):
    r = qexp_approx((x[0], x[1], x[2]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def cayley_quat_gu(phi, _shape, out):
    r = cayley_q((phi[0], phi[1], phi[2]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def quat_log_gu(q, _shape, out):
    r = qlog((q[0], q[1], q[2], q[3]))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def quat_to_rotvec_gu(q, _shape, out):
    r = q_to_rotvec((q[0], q[1], q[2], q[3]))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@njit
def widen4(a):
    """The first four entries of ``a`` as float64 (float32 input is evaluated in double)."""
    return (np.float64(a[0]), np.float64(a[1]), np.float64(a[2]), np.float64(a[3]))


@guvectorize(_sigs(3), "(n),(m)->(m)")
def quat_to_matrix_gu(q, _shape, out):
    # Widened: |q|² summed in float32 put 4 % of float32 matrices off orthogonality by
    # more than 1e-7; in double every entry is rounded once.
    r = q_to_mat(widen4(q))
    for i in range(9):
        out[i] = r[i]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def rotvec_to_matrix_gu(phi, _shape, out):
    r = q_to_mat(rotvec_to_q((phi[0], phi[1], phi[2])))
    for i in range(9):
        out[i] = r[i]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def matrix_to_quat_gu(m, _shape, out):
    r = mat_to_q((m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def matrix_to_rotvec_gu(m, _shape, out):
    r = q_to_rotvec(mat_to_q((m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@guvectorize(_sigs(3), "(n),(n)->()")
def rotation_angle_gu(p, q, out):
    out[0] = qangle((p[0], p[1], p[2], p[3]), (q[0], q[1], q[2], q[3]))


@guvectorize(_sigs(3), "(n),(n)->(n)")
def cayley_rotate_gu(v, phi, out):
    r = cayley_rotate((v[0], v[1], v[2]), (phi[0], phi[1], phi[2]))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@njit
def orthogonality_error(m):
    """Largest ``|R Rᵀ - I|`` entry and smallest determinant over the rows of ``m`` (N, 9)."""
    worst = 0.0
    min_det = np.inf
    for k in range(m.shape[0]):
        r = m[k]
        for i in range(3):
            for j in range(i, 3):
                e = r[3 * i] * r[3 * j] + r[3 * i + 1] * r[3 * j + 1] + r[3 * i + 2] * r[3 * j + 2]
                if i == j:
                    e -= 1.0
                worst = max(worst, abs(e))
        det = (
            r[0] * (r[4] * r[8] - r[5] * r[7])
            - r[1] * (r[3] * r[8] - r[5] * r[6])
            + r[2] * (r[3] * r[7] - r[4] * r[6])
        )
        min_det = min(min_det, det)
    return worst, min_det


@njit
def norm2_range(q):
    """Smallest and largest squared norm over the rows of ``q`` (N, 4)."""
    smallest = np.inf
    largest = 0.0
    for k in range(q.shape[0]):
        n2 = q[k, 0] * q[k, 0] + q[k, 1] * q[k, 1] + q[k, 2] * q[k, 2] + q[k, 3] * q[k, 3]
        smallest = min(smallest, n2)
        largest = max(largest, n2)
    return smallest, largest


# --------------------------------------------------------------------------------------
# flat loops for the hot operations
#
# Operands: see tumble._kernels.dispatch (a flat row per element, or a shared tuple; the
# choice is the operand's type, so strides are compile-time constants and LLVM vectorises
# the loops, also inside ``prange`` bodies). Output offsets are unsigned for the same
# reason as the loads': a signed index adds a wrap-around test to every store. The loops
# return how many results are flagged through an integer sum, which vectorises too. The
# per-element functions are plain ``njit`` functions that LLVM inlines: numba's own
# ``inline="always"`` (IR inlining) leaves a loop that LLVM does not vectorise.

_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U3 = np.uint64(3)
_U4 = np.uint64(4)


@njit
def not_finite(x):
    """1 if ``x`` is NaN or infinite, else 0, without a branch (loops stay vectorisable).

    Pass a sum of absolute values to test many numbers at once.
    """
    return np.int64(not x < math.inf)


@njit
def _nonfinite(r):
    """1 if an entry of the result tuple ``r`` is NaN or infinite, else 0.

    A NaN or infinite input reaches every component of these results (each input component
    is multiplied into each output), so checking the output checks the input for free; an
    output that overflowed from finite input is flagged too and sorted out by the caller.
    """
    total = 0.0
    for x in r:
        total += abs(x)
    return not_finite(total)


@njit
def _quat_rotate_at(i, q, v, tiny, out):
    w, x, y, z = load4(q, i)
    vi = load3(v, i)
    n2 = w * w + x * x + y * y + z * z
    # Rotating by q/|q|: t = (2/|q|²) u × v, v' = v + w t + u × t.
    s = 2.0 / n2
    u = (x, y, z)
    c = cross(u, vi)
    t = (s * c[0], s * c[1], s * c[2])
    d = cross(u, t)
    r = (vi[0] + w * t[0] + d[0], vi[1] + w * t[1] + d[1], vi[2] + w * t[2] + d[2])
    j = _U3 * i
    out[j], out[j + _U1], out[j + _U2] = r
    # |q|² must be a finite normal number (NaN when q is not finite); v is checked by r.
    return (0 if (n2 >= tiny) & (n2 < math.inf) else 1) | _nonfinite(r)


@njit
def quat_rotate_serial(q, v, tiny, out):
    """``out = q̂ v q̂*`` with ``q̂ = q/|q|``; returns the number of flagged rows.

    A row is flagged when ``|q|²`` is not a finite number of at least ``tiny`` (the
    smallest normal number of the dtype; NaN for non-finite ``q``) or the result is not
    finite. ``q``, ``v``: per-element rows or shared tuples (``dispatch.flat_operand``).
    """
    flagged = 0
    for i in range(out.shape[0] // 3):
        flagged += _quat_rotate_at(np.uint64(i), q, v, tiny, out)
    return flagged


@parallel_njit
def quat_rotate_parallel(q, v, tiny, out):
    """``quat_rotate_serial`` with the elements spread over numba's threads."""
    flagged = 0
    for i in prange(out.shape[0] // 3):
        flagged += _quat_rotate_at(np.uint64(i), q, v, tiny, out)
    return flagged


@njit
def _quat_multiply_at(i, p, q, out):
    r = qmul(load4(p, i), load4(q, i))
    j = _U4 * i
    out[j], out[j + _U1], out[j + _U2], out[j + _U3] = r
    return _nonfinite(r)


@njit
def quat_multiply_serial(p, q, out):
    """``out = p ⊗ q`` row by row; returns the number of non-finite results."""
    bad = 0
    for i in range(out.shape[0] // 4):
        bad += _quat_multiply_at(np.uint64(i), p, q, out)
    return bad


@parallel_njit
def quat_multiply_parallel(p, q, out):
    """``quat_multiply_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(out.shape[0] // 4):
        bad += _quat_multiply_at(np.uint64(i), p, q, out)
    return bad


@njit
def _rotvec_to_quat_at(i, phi, out):
    r = rotvec_to_q(load3(phi, i))
    j = _U4 * i
    out[j], out[j + _U1], out[j + _U2], out[j + _U3] = r
    return _nonfinite(r)


@njit
def rotvec_to_quat_serial(phi, out):
    """``out = exp(phi/2)`` row by row; returns the number of non-finite results."""
    bad = 0
    for i in range(out.shape[0] // 4):
        bad += _rotvec_to_quat_at(np.uint64(i), phi, out)
    return bad


@parallel_njit
def rotvec_to_quat_parallel(phi, out):
    """``rotvec_to_quat_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(out.shape[0] // 4):
        bad += _rotvec_to_quat_at(np.uint64(i), phi, out)
    return bad


# --------------------------------------------------------------------------------------
# SO(3) Jacobians of the exponential map
#
# With a(t) = (1 - cos t)/t², b(t) = (t - sin t)/t³ and c(t) = 1/t² - (1 + cos t)/(2 t sin t):
#     J_r = I - a [phi]× + b [phi]×²        J_r⁻¹ = I + ½ [phi]× + c [phi]×²
#     J_l = I + a [phi]× + b [phi]×²        J_l⁻¹ = I - ½ [phi]× + c [phi]×²
# The kernels widen float32 input to float64 and round once on output, so thresholds that
# give float64 round-off give float32 round-off too.

# b(t) = Σ_k (-1)^k t^2k / (2k + 3)!: through k = 7 the first dropped term is below
# 4.9e-17 b(t) for t <= 1, where the closed form, whose t - sin t is exact (Sterbenz) and
# whose error is sin t's rounding, has reached a relative error of a few 1e-16.
_B_SERIES_BELOW = 1.0
_B_SERIES = (
    1.0 / 6.0,
    -1.0 / 120.0,
    1.0 / 5040.0,
    -1.0 / 362880.0,
    1.0 / 39916800.0,
    -1.0 / 6227020800.0,
    1.0 / 1307674368000.0,
    -1.0 / 355687428096000.0,
)


@njit
def horner(coefficients, z):
    """``Σ_k c_k z^k`` for the tuple ``coefficients`` (lowest power first), Horner's rule."""
    n = len(coefficients)
    s = coefficients[n - 1]
    for k in range(n - 2, -1, -1):
        s = s * z + coefficients[k]
    return s


@njit
def so3_b(t):
    """``b(t) = (t - sin t)/t³`` to round-off at every ``t >= 0`` (series below 1)."""
    if t < _B_SERIES_BELOW:
        return horner(_B_SERIES, t * t)
    return (t - math.sin(t)) / (t * t * t)


@njit
def so3_a(t):
    """``a(t) = (1 - cos t)/t² = ½ sinc²(t/2)``: the half-angle form has no cancellation."""
    s = _sinc(0.5 * t)
    return 0.5 * s * s


@njit
def so3_c(t):
    """``c(t) = 1/t² - (1 + cos t)/(2 t sin t) = (1 - x cot x)/(4x²)``, ``x = t/2``.

    Written as ``(a(x) - b(x)) / (4 sinc x)``, which is the same function (``a(x) - b(x) =
    (sin x - x cos x)/x³``) with no cancellation beyond ``a - b ≈ 1/3``: accurate to a few
    ulp for ``t`` up to near ``2π``, where ``sinc x`` vanishes and ``c`` has a pole.
    """
    x = 0.5 * t
    return (so3_a(x) - so3_b(x)) / (4.0 * _sinc(x))


@njit
def _so3_combination(phi, first, second):
    """Row-major ``I + first [phi]× + second [phi]×²`` (9-tuple).

    ``[phi]×² = phi phiᵀ - |phi|² I``; its diagonal is formed as ``-(phi_j² + phi_k²)``,
    free of cancellation, and ``second`` multiplies ``phi_i`` before ``phi_j`` so that large
    rotation vectors cannot overflow.
    """
    x, y, z = phi
    sx, sy, sz = second * x, second * y, second * z
    fx, fy, fz = first * x, first * y, first * z
    return (
        1.0 - (sy * y + sz * z), sx * y - fz, sx * z + fy,
        sx * y + fz, 1.0 - (sx * x + sz * z), sy * z - fx,
        sx * z - fy, sy * z + fx, 1.0 - (sx * x + sy * y),
    )  # fmt: skip


@njit
def so3_jacobian(phi, sign):
    """``I + sign a [phi]× + b [phi]×²``: ``J_r`` for ``sign = -1``, ``J_l`` for ``+1``."""
    t = math.hypot(math.hypot(phi[0], phi[1]), phi[2])
    return _so3_combination(phi, sign * so3_a(t), so3_b(t))


@njit
def so3_jacobian_inverse(phi, sign):
    """``I + sign ½ [phi]× + c [phi]×²``: ``J_r⁻¹`` for ``sign = +1``, ``J_l⁻¹`` for ``-1``."""
    t = math.hypot(math.hypot(phi[0], phi[1]), phi[2])
    return _so3_combination(phi, 0.5 * sign, so3_c(t))


@njit
def _widen3(a):
    """The first three entries of ``a`` as float64: float32 input is evaluated in double."""
    return (np.float64(a[0]), np.float64(a[1]), np.float64(a[2]))


@guvectorize(_sigs(3), "(n),(m)->(m)")
def so3_right_jacobian_gu(phi, _shape, out):
    r = so3_jacobian(_widen3(phi), -1.0)
    for i in range(9):
        out[i] = r[i]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def so3_left_jacobian_gu(phi, _shape, out):
    r = so3_jacobian(_widen3(phi), 1.0)
    for i in range(9):
        out[i] = r[i]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def so3_right_jacobian_inverse_gu(phi, _shape, out):
    r = so3_jacobian_inverse(_widen3(phi), 1.0)
    for i in range(9):
        out[i] = r[i]


@guvectorize(_sigs(3), "(n),(m)->(m)")
def so3_left_jacobian_inverse_gu(phi, _shape, out):
    r = so3_jacobian_inverse(_widen3(phi), -1.0)
    for i in range(9):
        out[i] = r[i]


# --------------------------------------------------------------------------------------
# Euler angles, modified Rodrigues parameters, powers
#
# Euler kernels take the sequence as three axis numbers (0, 1, 2 for x, y, z) and a flag
# ``extrinsic``; an intrinsic sequence is the extrinsic one read backwards. float32 input is
# widened to float64 and rounded once on output.

# SciPy's gimbal-lock threshold on the middle angle (distance from 0 or π, radians), kept so
# that the two libraries lock on the same inputs.
GIMBAL_LOCK_ANGLE = 1e-7
# The middle angle 2 atan2(cd, ab) is within GIMBAL_LOCK_ANGLE of 0 when cd <= _LOCK_TAN ab,
# of π when ab <= _LOCK_TAN cd.
_LOCK_TAN = math.tan(GIMBAL_LOCK_ANGLE / 2)
# 2π as a sum of two doubles: subtracting both keeps a wrapped angle within an ulp.
_TWO_PI_HI = 6.283185307179586
_TWO_PI_LO = 2.4492935982947064e-16


@njit
def _half_turn_about(axis, angle):
    """``exp(angle/2 e_axis)``: the elementary quaternion about a coordinate axis."""
    h = 0.5 * angle
    c, s = math.cos(h), math.sin(h)
    return (c, s if axis == 0 else 0.0, s if axis == 1 else 0.0, s if axis == 2 else 0.0)


@njit
def euler_to_q(angles, i, j, k, extrinsic):
    """Quaternion of the Euler angles ``angles`` about axes ``i, j, k`` (in that order).

    Extrinsic (fixed axes): ``e_k(a3) ⊗ e_j(a2) ⊗ e_i(a1)``; intrinsic (moving axes):
    ``e_i(a1) ⊗ e_j(a2) ⊗ e_k(a3)``, where ``e_n(a) = (cos a/2, sin a/2 ê_n)``.
    """
    e1 = _half_turn_about(i, np.float64(angles[0]))
    e2 = _half_turn_about(j, np.float64(angles[1]))
    e3 = _half_turn_about(k, np.float64(angles[2]))
    if extrinsic:
        return qmul(e3, qmul(e2, e1))
    return qmul(qmul(e1, e2), e3)


@njit
def _wrap(x):
    """``x`` in ``[-π, π]`` for ``x`` in ``[-2π, 2π]`` (two-part 2π: no extra rounding)."""
    if x > math.pi:
        return (x - _TWO_PI_HI) - _TWO_PI_LO
    if x < -math.pi:
        return (x + _TWO_PI_HI) + _TWO_PI_LO
    return x


@njit
def q_to_euler(q, i, j, k, extrinsic):
    """Euler angles ``(a1, a2, a3)`` of ``q`` and whether the sequence is at gimbal lock.

    Bernardes and Viollet (2022), "Quaternion to Euler angles conversion: a direct, general
    and computationally efficient method": the quaternion's components are permuted (and,
    for a sequence with three different axes, rotated by 45°) so that every sequence reads
    as a proper Euler sequence, whose angles are two ``atan2`` of half angles and one
    ``atan2`` of norms. Scale invariant (any nonzero ``q``); ``q`` and ``-q`` give the same
    angles. The middle angle of a sequence with three different axes is taken as
    ``atan2(4 (w q_j - s q_i q_k), 2 |(a, b)| |(c, d)|)`` rather than as the proper angle
    minus π/2, which keeps it accurate near zero. At lock (middle angle within
    ``GIMBAL_LOCK_ANGLE`` of 0 or π) the third angle is set to zero and the first takes the
    whole turn about the locked axis.
    """
    if not extrinsic:
        i, k = k, i
    w = np.float64(q[0])
    qi = np.float64(q[1 + i])
    qj = np.float64(q[1 + j])
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = np.float64((i - j) * (j - k) * (k - i) // 2)
    qk = np.float64(q[1 + k]) * sign
    if symmetric:
        a, b, c, d = w, qi, qj, qk
    else:
        a, b, c, d = w - qj, qi + qk, qj + w, qk - qi
    ab = math.hypot(a, b)
    cd = math.hypot(c, d)
    # The proper middle angle is 2 atan2(cd, ab); lock is read from the ratio cd/ab, so a
    # sequence with three different axes needs no atan2 for it (libm calls are the cost).
    lock_zero = cd <= _LOCK_TAN * ab
    lock_pi = ab <= _LOCK_TAN * cd
    half_sum = math.atan2(b, a)
    half_diff = math.atan2(d, c)
    if lock_zero or lock_pi:
        locked = 2.0 * half_sum if lock_zero else 2.0 * half_diff * (-1.0 if extrinsic else 1.0)
        first, third = (locked, 0.0) if extrinsic else (0.0, locked)
    else:
        first, third = half_sum - half_diff, half_sum + half_diff
    if symmetric:
        middle = 2.0 * math.atan2(cd, ab)
    else:
        third *= sign
        # c² - a² + d² - b² = 4 (w q_j - q_i q_k s): the middle angle minus π/2 directly.
        middle = math.atan2(4.0 * (w * qj - qi * qk), 2.0 * ab * cd)
    first, third = _wrap(first), _wrap(third)
    angles = (first, middle, third) if extrinsic else (third, middle, first)
    return angles, lock_zero or lock_pi


@njit
def q_to_mrp(q):
    """Modified Rodrigues parameters ``u / (1 + w)`` of ``q/|q|``, the set with ``|p| <= 1``.

    The ``w >= 0`` representative is used, so ``|p| = tan(θ/4) <= 1``; scale invariant:
    ``p = s u / (|q| + |w|)`` with ``s`` the sign of ``w``.
    """
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    s = 1.0 if w >= 0.0 else -1.0
    k = s / (n + abs(w))
    return (k * x, k * y, k * z)


@njit
def qpower(q, s):
    """``q^s = exp(s log q)`` of ``q/|q|`` on the short arc: rotation vector times ``s``."""
    phi = q_to_rotvec(q)
    return rotvec_to_q((s * phi[0], s * phi[1], s * phi[2]))


@njit
def quat_ok(q, tiny):
    """Whether the 4-tuple ``q`` is usable as a rotation: ``|q|²`` finite and normal."""
    n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    return (n2 >= tiny) & (n2 < math.inf)


@njit
def _euler_to_quat_at(i, angles, a, b, c, extrinsic, out):
    r = euler_to_q(load3(angles, i), a, b, c, extrinsic)
    j = _U4 * i
    out[j], out[j + _U1], out[j + _U2], out[j + _U3] = r
    return _nonfinite(r)


@njit
def euler_to_quat_serial(angles, a, b, c, extrinsic, out):
    """``out = euler_to_q(angles)`` row by row; returns the number of non-finite results."""
    bad = 0
    for i in range(out.shape[0] // 4):
        bad += _euler_to_quat_at(np.uint64(i), angles, a, b, c, extrinsic, out)
    return bad


@parallel_njit
def euler_to_quat_parallel(angles, a, b, c, extrinsic, out):
    """``euler_to_quat_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(out.shape[0] // 4):
        bad += _euler_to_quat_at(np.uint64(i), angles, a, b, c, extrinsic, out)
    return bad


@njit
def _quat_to_euler_at(i, q, a, b, c, extrinsic, tiny, out):
    qi = load4(q, i)
    r, locked = q_to_euler(qi, a, b, c, extrinsic)
    j = _U3 * i
    out[j], out[j + _U1], out[j + _U2] = r
    flagged = 0 if quat_ok(qi, tiny) else 1
    return flagged | _nonfinite(r), np.int64(locked)


@njit
def quat_to_euler_serial(q, a, b, c, extrinsic, tiny, out):
    """Euler angles of the rows of ``q``: (number of flagged rows, number at gimbal lock).

    Flagged: ``|q|²`` not a finite normal number, or a non-finite result.
    """
    bad = 0
    locked = 0
    for i in range(out.shape[0] // 3):
        f, g = _quat_to_euler_at(np.uint64(i), q, a, b, c, extrinsic, tiny, out)
        bad += f
        locked += g
    return bad, locked


@parallel_njit
def quat_to_euler_parallel(q, a, b, c, extrinsic, tiny, out):
    """``quat_to_euler_serial`` with the elements spread over numba's threads."""
    bad = 0
    locked = 0
    for i in prange(out.shape[0] // 3):
        f, g = _quat_to_euler_at(np.uint64(i), q, a, b, c, extrinsic, tiny, out)
        bad += f
        locked += g
    return bad, locked


@njit
def _quat_to_mrp_at(i, q, tiny, out):
    qi = load4(q, i)
    r = q_to_mrp(qi)
    j = _U3 * i
    out[j], out[j + _U1], out[j + _U2] = r
    return (0 if quat_ok(qi, tiny) else 1) | _nonfinite(r)


@njit
def quat_to_mrp_serial(q, tiny, out):
    """``out = q_to_mrp(q)`` row by row; returns the number of flagged rows."""
    bad = 0
    for i in range(out.shape[0] // 3):
        bad += _quat_to_mrp_at(np.uint64(i), q, tiny, out)
    return bad


@parallel_njit
def quat_to_mrp_parallel(q, tiny, out):
    """``quat_to_mrp_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(out.shape[0] // 3):
        bad += _quat_to_mrp_at(np.uint64(i), q, tiny, out)
    return bad


@njit
def _mrp_to_quat_at(i, p, out):
    r = mrp_to_q(load3(p, i))
    j = _U4 * i
    out[j], out[j + _U1], out[j + _U2], out[j + _U3] = r
    return _nonfinite(r)


@njit
def mrp_to_quat_serial(p, out):
    """``out = mrp_to_q(p)`` row by row; returns the number of non-finite results."""
    bad = 0
    for i in range(out.shape[0] // 4):
        bad += _mrp_to_quat_at(np.uint64(i), p, out)
    return bad


@parallel_njit
def mrp_to_quat_parallel(p, out):
    """``mrp_to_quat_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(out.shape[0] // 4):
        bad += _mrp_to_quat_at(np.uint64(i), p, out)
    return bad


@njit
def _quat_power_at(i, q, s, tiny, out):
    qi = load4(q, i)
    r = qpower(qi, load_scalar(s, i))
    j = _U4 * i
    out[j], out[j + _U1], out[j + _U2], out[j + _U3] = r
    return (0 if quat_ok(qi, tiny) else 1) | _nonfinite(r)


@njit
def quat_power_serial(q, s, tiny, out):
    """``out = q^s`` row by row; returns the number of flagged rows."""
    bad = 0
    for i in range(out.shape[0] // 4):
        bad += _quat_power_at(np.uint64(i), q, s, tiny, out)
    return bad


@parallel_njit
def quat_power_parallel(q, s, tiny, out):
    """``quat_power_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(out.shape[0] // 4):
        bad += _quat_power_at(np.uint64(i), q, s, tiny, out)
    return bad


# --------------------------------------------------------------------------------------
# rescue loops for finite input whose plain evaluation overflowed (see tumble.rotation)


@njit
def _pow2_scale(m):
    """A power of two ``2^e`` with ``m / 2^e`` in ``[1, 2)`` (exact to divide by; 1 for 0).

    Never ``2^1024`` (which overflows): ``m`` near the largest float gives ``2^1023``.
    """
    if m == 0.0:
        return 1.0
    return math.ldexp(1.0, math.frexp(m)[1] - 1)


@njit
def quat_multiply_rescue(p, q, out):
    """Recompute the non-finite rows of ``out = p ⊗ q`` with both factors scaled by 2^-e.

    ``p ⊗ q = 2^(e_p + e_q) (p/2^e_p ⊗ q/2^e_q)``: the scaled product cannot overflow, so a
    component comes out infinite only when the true value is beyond the largest float.
    """
    for i in range(out.shape[0] // 4):
        j = np.uint64(4 * i)
        if abs(out[j]) + abs(out[j + _U1]) + abs(out[j + _U2]) + abs(out[j + _U3]) < math.inf:
            continue
        a = load4(p, np.uint64(i))
        b = load4(q, np.uint64(i))
        sa = _pow2_scale(max(abs(a[0]), abs(a[1]), abs(a[2]), abs(a[3])))
        sb = _pow2_scale(max(abs(b[0]), abs(b[1]), abs(b[2]), abs(b[3])))
        r = qmul(
            (a[0] / sa, a[1] / sa, a[2] / sa, a[3] / sa),
            (b[0] / sb, b[1] / sb, b[2] / sb, b[3] / sb),
        )
        # The smaller scale first: a huge and a tiny factor must not overflow on the way.
        lo, hi = min(sa, sb), max(sa, sb)
        for m in range(4):
            out[j + np.uint64(m)] = (r[m] * lo) * hi


@njit
def quat_rotate_rescue(q, v, out):
    """Recompute the non-finite rows of ``out = q̂ v q̂*`` with ``v`` scaled by 2^-e.

    The rotation is linear in ``v``; the intermediate sums of the plain formula can
    overflow (``|v|`` near the largest float) when the rotated vector cannot.
    """
    for i in range(out.shape[0] // 3):
        j = np.uint64(3 * i)
        if abs(out[j]) + abs(out[j + _U1]) + abs(out[j + _U2]) < math.inf:
            continue
        w, x, y, z = load4(q, np.uint64(i))
        vi = load3(v, np.uint64(i))
        sv = _pow2_scale(max(abs(vi[0]), abs(vi[1]), abs(vi[2])))
        u = (x, y, z)
        vs = (vi[0] / sv, vi[1] / sv, vi[2] / sv)
        s = 2.0 / (w * w + x * x + y * y + z * z)
        c = cross(u, vs)
        t = (s * c[0], s * c[1], s * c[2])
        d = cross(u, t)
        out[j] = (vs[0] + w * t[0] + d[0]) * sv
        out[j + _U1] = (vs[1] + w * t[1] + d[1]) * sv
        out[j + _U2] = (vs[2] + w * t[2] + d[2]) * sv


# --------------------------------------------------------------------------------------
# single-element kernels: the fast path of tumble.rotation for one (4,), (3,) or (3, 3)
# element. Each computes with the same scalar kernel as the batched gufunc or loop (so the
# bits agree) and returns 1 when the input needs the general path's validation (a zero,
# overflowing or non-finite input, a matrix that is not a rotation) or the result is not
# finite.


@njit
def _row4(a):
    return (a[0], a[1], a[2], a[3])


@njit
def _row9(m):
    return (m[0, 0], m[0, 1], m[0, 2], m[1, 0], m[1, 1], m[1, 2], m[2, 0], m[2, 1], m[2, 2])


@njit
def _put(out, r):
    for i in range(len(r)):
        out[i] = r[i]
    return _nonfinite(r)


@njit
def _put_matrix(out, r):
    for i in range(3):
        for j in range(3):
            out[i, j] = r[3 * i + j]
    return _nonfinite(r)


@njit
def _rotation_ok(m, tol):
    """Whether the 3 x 3 array ``m`` is a rotation within ``tol`` (the validator's policy)."""
    worst = 0.0
    for i in range(3):
        for j in range(i, 3):
            e = m[i, 0] * m[j, 0] + m[i, 1] * m[j, 1] + m[i, 2] * m[j, 2]
            if i == j:
                e -= 1.0
            worst = max(worst, abs(e))
    det = (
        m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1])
        - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
        + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0])
    )
    return (worst <= tol) & (det > 0.0)


@njit
def quat_conjugate_one(q, out):
    """``out = q*``; 1 if ``q`` is not finite."""
    return _put(out, qconj(_row4(q)))


@njit
def quat_normalize_one(q, tiny, out):
    """``out = q/|q|``; 1 if ``q`` is not a usable rotation."""
    r = _row4(q)
    return _put(out, qnormalize(r)) | (0 if quat_ok(r, tiny) else 1)


@njit
def quat_to_matrix_one(q, tiny, out):
    """``out`` (3, 3) = the matrix of ``q`` (widened like ``quat_to_matrix_gu``)."""
    return _put_matrix(out, q_to_mat(widen4(q))) | (0 if quat_ok(_row4(q), tiny) else 1)


@njit
def quat_to_rotvec_one(q, tiny, out):
    """``out`` = the rotation vector of ``q``."""
    r = _row4(q)
    return _put(out, q_to_rotvec(r)) | (0 if quat_ok(r, tiny) else 1)


@njit
def quat_log_one(q, tiny, out):
    """``out`` = the vector part of ``log(q/|q|)``."""
    r = _row4(q)
    return _put(out, qlog(r)) | (0 if quat_ok(r, tiny) else 1)


@njit
def quat_exp_one(x, out):
    """``out = exp((0, x))``."""
    return _put(out, qexp((x[0], x[1], x[2])))


@njit
def rotvec_to_matrix_one(phi, out):
    """``out`` (3, 3) = ``exp([phi]×)``."""
    return _put_matrix(out, q_to_mat(rotvec_to_q((phi[0], phi[1], phi[2]))))


@njit
def matrix_to_quat_one(m, tol, out):
    """``out`` = the ``w >= 0`` quaternion of the 3 x 3 rotation ``m``."""
    ok = _rotation_ok(m, tol)
    return _put(out, mat_to_q(_row9(m))) | (0 if ok else 1)


@njit
def matrix_to_rotvec_one(m, tol, out):
    """``out`` = the rotation vector of the 3 x 3 rotation ``m``."""
    ok = _rotation_ok(m, tol)
    return _put(out, q_to_rotvec(mat_to_q(_row9(m)))) | (0 if ok else 1)


@njit
def rotation_angle_one(p, q, tiny):
    """(flag, angle between ``p`` and ``q``)."""
    a, b = _row4(p), _row4(q)
    r = qangle(a, b)
    ok = quat_ok(a, tiny) & quat_ok(b, tiny) & (r < math.inf)
    return (0 if ok else 1), r


# --------------------------------------------------------------------------------------
# mean and alignment (tumble.rotation.quat_mean, align_vectors): one pass over the data per
# group, in float64.


@njit
def _mean_sums(q, w, g, start, stop, tiny):
    """Sums over rows ``start:stop`` of group ``g``: the upper triangle of ``Σ w q̂ q̂ᵀ``, ``Σ w``.

    ``w q̂ q̂ᵀ = (w/|q|²) q qᵀ``: one division per row, no square root. In float64 with
    scalar accumulators (kept in registers); also the number of unusable rows: ``|q|²``
    not a finite normal number in ``q``'s dtype, or a weight negative or not finite.
    """
    k00 = k01 = k02 = k03 = k11 = k12 = k13 = k22 = k23 = k33 = total_weight = 0.0
    bad = 0
    for i in range(start, stop):
        raw = (q[g, i, 0], q[g, i, 1], q[g, i, 2], q[g, i, 3])
        q0, q1, q2, q3 = (
            np.float64(raw[0]),
            np.float64(raw[1]),
            np.float64(raw[2]),
            np.float64(raw[3]),
        )
        wi = np.float64(w[g, i])
        bad += 0 if quat_ok(raw, tiny) & (wi >= 0.0) & (wi < math.inf) else 1
        s = wi / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
        x0, x1, x2, x3 = s * q0, s * q1, s * q2, s * q3
        k00 += x0 * q0
        k01 += x0 * q1
        k02 += x0 * q2
        k03 += x0 * q3
        k11 += x1 * q1
        k12 += x1 * q2
        k13 += x1 * q3
        k22 += x2 * q2
        k23 += x2 * q3
        k33 += x3 * q3
        total_weight += wi
    sums = np.array([k00, k01, k02, k03, k11, k12, k13, k22, k23, k33, total_weight])
    return sums, bad


@njit
def _mean_group(g, sums, bad, out):
    """``out[g]`` = top eigenvector of the symmetric ``K`` in ``sums`` (``w >= 0``); 1 if unusable.

    Unusable: a flagged row or no positive total weight; ``out[g]`` is then NaN.
    """
    if bad or not sums[10] > 0.0:
        out[g, 0] = out[g, 1] = out[g, 2] = out[g, 3] = math.nan
        return 1
    K = np.empty((4, 4))
    m = 0
    for r in range(4):
        for c in range(r, 4):
            K[r, c] = K[c, r] = sums[m]
            m += 1
    _, vectors = np.linalg.eigh(K)
    sign = -1.0 if vectors[0, 3] < 0.0 else 1.0
    for r in range(4):
        out[g, r] = sign * vectors[r, 3]
    return 0


@njit
def quat_mean_groups(q, w, tiny, out):
    """Markley mean of each group: ``out[g]`` = top eigenvector of ``Σ_i w q̂ q̂ᵀ`` (w >= 0).

    ``q`` (G, N, 4), ``w`` (G, N); the 4 x 4 sums in float64 in one pass that also checks
    the input, LAPACK's ``eigh`` per group. Returns the number of unusable groups.
    """
    flagged = 0
    for g in range(q.shape[0]):
        sums, bad = _mean_sums(q, w, g, 0, q.shape[1], tiny)
        flagged += _mean_group(g, sums, bad, out)
    return flagged


@parallel_njit
def quat_mean_groups_parallel(q, w, tiny, out, blocks):
    """``quat_mean_groups`` with each group's pass split in ``blocks`` for the threads."""
    n = q.shape[1]
    flagged = 0
    for g in range(q.shape[0]):
        sums = np.zeros((blocks, 11))
        bad = np.zeros(blocks, dtype=np.int64)
        for k in prange(blocks):
            sums[k], bad[k] = _mean_sums(q, w, g, k * n // blocks, (k + 1) * n // blocks, tiny)
        flagged += _mean_group(g, sums.sum(axis=0), bad.sum(), out)
    return flagged


# Two singular values closer than this (relative) make the correlation matrix rank one: all
# pairs collinear, the turn about their line free.
RANK_ONE = 64 * 2.220446049250313e-16


@njit
def _shortest_arc(u, v):
    """Unit quaternion of the smallest rotation taking the unit vector ``u`` to ``v``.

    ``normalize(1 + u·v, u × v)``; for opposite vectors a half turn about ``u × e``, ``e``
    the coordinate axis least aligned with ``u``.
    """
    c = dot(u, v)
    if 1.0 + c <= 1e-8:
        k = 0
        if abs(u[1]) < abs(u[k]):
            k = 1
        if abs(u[2]) < abs(u[k]):
            k = 2
        e = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
        p = cross(u, e)
        return qnormalize((0.0, p[0], p[1], p[2]))
    x = cross(u, v)
    return qnormalize((1.0 + c, x[0], x[1], x[2]))


@njit
def _align_sums(a, b, w, g, start, stop):
    """Sums over pairs ``start:stop`` of group ``g``: ``Σ w a bᵀ`` (row-major), ``Σ w``, flags.

    A flagged pair is unusable: a non-finite component (``x - x`` is NaN exactly then), a
    zero vector or a negative weight; the wrapper then finds and names the fault. Scalar
    accumulators, so the loop keeps them in registers.
    """
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = s8 = total_weight = 0.0
    bad = 0
    for i in range(start, stop):
        a0, a1, a2 = a[g, i, 0], a[g, i, 1], a[g, i, 2]
        b0, b1, b2 = b[g, i, 0], b[g, i, 1], b[g, i, 2]
        wi = w[g, i]
        finite = ((a0 - a0) + (a1 - a1) + (a2 - a2) + (b0 - b0) + (b1 - b1) + (b2 - b2)) == 0.0
        a_nonzero = (a0 != 0.0) | (a1 != 0.0) | (a2 != 0.0)
        b_nonzero = (b0 != 0.0) | (b1 != 0.0) | (b2 != 0.0)
        ok = finite & a_nonzero & b_nonzero & (wi >= 0.0) & (wi < math.inf)
        bad += 0 if ok else 1
        x0, x1, x2 = wi * a0, wi * a1, wi * a2
        s0 += x0 * b0
        s1 += x0 * b1
        s2 += x0 * b2
        s3 += x1 * b0
        s4 += x1 * b1
        s5 += x1 * b2
        s6 += x2 * b0
        s7 += x2 * b1
        s8 += x2 * b2
        total_weight += wi
    return np.array([s0, s1, s2, s3, s4, s5, s6, s7, s8, total_weight]), bad


@njit
def _residual_sum(a, b, w, g, q, start, stop):
    """``Σ w |a - R(q) b|²`` over pairs ``start:stop`` of group ``g``."""
    total = 0.0
    for i in range(start, stop):
        rb = qrotate(q, (b[g, i, 0], b[g, i, 1], b[g, i, 2]))
        d0 = a[g, i, 0] - rb[0]
        d1 = a[g, i, 1] - rb[1]
        d2 = a[g, i, 2] - rb[2]
        total += w[g, i] * (d0 * d0 + d1 * d1 + d2 * d2)
    return total


@njit
def _wahba(B):
    """Unit quaternion of ``R = U diag(1, 1, det U Vᵀ) Vᵀ`` for ``B = U S Vᵀ`` (3 x 3).

    Rank one (``s_2 <= RANK_ONE s_1``): the smallest rotation taking V's first column onto
    U's.
    """
    U, S, Vt = np.linalg.svd(B)
    if S[1] <= RANK_ONE * S[0]:
        return _shortest_arc((Vt[0, 0], Vt[0, 1], Vt[0, 2]), (U[0, 0], U[1, 0], U[2, 0]))
    C = U @ Vt
    det = (
        C[0, 0] * (C[1, 1] * C[2, 2] - C[1, 2] * C[2, 1])
        - C[0, 1] * (C[1, 0] * C[2, 2] - C[1, 2] * C[2, 0])
        + C[0, 2] * (C[1, 0] * C[2, 1] - C[1, 1] * C[2, 0])
    )
    if det < 0.0:
        for r in range(3):
            for c in range(3):
                C[r, c] -= 2.0 * U[r, 2] * Vt[2, c]
    return mat_to_q(
        (C[0, 0], C[0, 1], C[0, 2], C[1, 0], C[1, 1], C[1, 2], C[2, 0], C[2, 1], C[2, 2])
    )


@njit
def _align_group(g, sums, bad, q_out):
    """Solve group ``g`` from its sums into ``q_out[g]``; 1 if the group is unusable.

    Unusable: a flagged pair, no positive total weight, or a non-finite ``B`` (the SVD must
    not see one); the rotation is then NaN and the wrapper raises.
    """
    finite = True
    for m in range(9):
        finite &= abs(sums[m]) < math.inf
    if bad or not sums[9] > 0.0 or not finite:
        q = (math.nan, math.nan, math.nan, math.nan)
    else:
        q = _wahba(sums[:9].reshape(3, 3).copy())
    q_out[g, 0], q_out[g, 1], q_out[g, 2], q_out[g, 3] = q
    return q, (0 if np.isfinite(q[0]) else 1)


@njit
def align_groups(a, b, w, q_out, rssd_out):
    """Wahba's problem per group: the rotation taking ``b[g]`` best onto ``a[g]``, and the rssd.

    ``a``, ``b`` (G, N, 3), ``w`` (G, N), float64. ``B = Σ w a bᵀ = U S Vᵀ`` in one pass with
    the input checks, the rotation from :func:`_wahba`, then ``rssd = sqrt(Σ w |a - R b|²)``
    summed directly (no cancellation). Returns the number of unusable groups.
    """
    n = a.shape[1]
    flagged = 0
    for g in range(a.shape[0]):
        sums, bad = _align_sums(a, b, w, g, 0, n)
        q, f = _align_group(g, sums, bad, q_out)
        flagged += f
        rssd_out[g] = math.sqrt(_residual_sum(a, b, w, g, q, 0, n))
    return flagged


@parallel_njit
def align_groups_parallel(a, b, w, q_out, rssd_out, blocks):
    """``align_groups`` with each group's two passes split in ``blocks`` for the threads."""
    n = a.shape[1]
    flagged = 0
    for g in range(a.shape[0]):
        sums = np.zeros((blocks, 10))
        bad = np.zeros(blocks, dtype=np.int64)
        for k in prange(blocks):
            sums[k], bad[k] = _align_sums(a, b, w, g, k * n // blocks, (k + 1) * n // blocks)
        q, f = _align_group(g, sums.sum(axis=0), bad.sum(), q_out)
        flagged += f
        residual = np.zeros(blocks)
        for k in prange(blocks):
            residual[k] = _residual_sum(a, b, w, g, q, k * n // blocks, (k + 1) * n // blocks)
        rssd_out[g] = math.sqrt(residual.sum())
    return flagged

"""The rotation formulas on one element: tuple kernels that every other kernel inlines.

The kernels take and return tuples of floats so that they inline into per-body loops and
keep their state in registers. Quaternions are scalar first ``(w, x, y, z)``, Hamilton
product, active rotation ``v' = q v q*``. Names and signatures are stable: the kinematics,
rigid-body, exact-solution, interpolation and hierarchy kernels call them.

Small-angle branches use thresholds at which the truncated series is exact to float64
round-off, hence also to float32 round-off; above the threshold the closed form is exact to
round-off for both dtypes, so one threshold serves both.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._kernels import inner
from tumble._kernels.rotation.trig import (
    SHORT_ANGLE,
    SMALL_ANGLE_SQ,
    cos_sinc_short,
    cos_sinc_small,
)

# atan(r)/r = 1 - r²/3 + r⁴/5: below 1e-6 the dropped term is < 2e-25 relative.
_ATAN_SERIES_BELOW = 1e-6
SCALED_ABOVE = 1e15
"""Vectors with a component above this take the scaled branches of ``qexp_approx``,
``mrp_to_q`` and ``cayley_rotate``: there ``1/|x|² < 1e-30`` is far below round-off, so
both forms agree to round-off at the switch, while the unscaled squares overflow near 1e154
(1e19 in float32)."""


@inner
def cross(a, b):
    """Cross product ``a × b`` of two 3-tuples."""
    return (
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    )


@inner
def dot(a, b):
    """Dot product of two 3-tuples."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@inner
def qmul(p, q):
    """Hamilton product ``p ⊗ q`` (as a rotation: apply ``q`` first, then ``p``).

    Each vector component adds ``pw q_i + p_i qw`` and the cross term ``p_j q_k - p_k q_j``
    as two separate sums, so that ``q* ⊗ q`` and ``q ⊗ q*`` have a vector part of exactly
    zero (each pair is a product minus itself): the identity rotation, bit for bit, and a
    ``rotation_angle(q, q)`` of exactly 0.
    """
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return (
        pw * qw - (px * qx + py * qy + pz * qz),
        (pw * qx + px * qw) + (py * qz - pz * qy),
        (pw * qy + py * qw) + (pz * qx - px * qz),
        (pw * qz + pz * qw) + (px * qy - py * qx),
    )


@inner
def qconj(q):
    """Conjugate ``q* = (w, -x, -y, -z)``; the inverse of a unit quaternion."""
    return (q[0], -q[1], -q[2], -q[3])


@inner
def qnormalize(q):
    """``q / |q|``. A zero quaternion gives NaN: callers guard it."""
    inv = 1.0 / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)


@inner
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


@inner
def quat_ok(q, tiny):
    """Whether the 4-tuple ``q`` is usable as a rotation: ``|q|²`` finite and normal."""
    n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    return (n2 >= tiny) & (n2 < math.inf)


@inner
def has_large_component(x):
    """Whether a component of the 3-tuple ``x`` exceeds ``SCALED_ABOVE`` (or is NaN)."""
    # & rather than `and`: no branch, so loops that test every element still vectorise.
    return not (
        (abs(x[0]) <= SCALED_ABOVE) & (abs(x[1]) <= SCALED_ABOVE) & (abs(x[2]) <= SCALED_ABOVE)
    )


@inner
def _axis_and_length(x):
    """Unit vector and length of a nonzero 3-tuple, without overflow of ``|x|²``."""
    m = max(abs(x[0]), abs(x[1]), abs(x[2]))
    y0, y1, y2 = x[0] / m, x[1] / m, x[2] / m
    s = math.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    return (y0 / s, y1 / s, y2 / s), m * s


@inner
def qexp_small(x, z):
    """``exp((0, x))`` for ``z = |x|² <= SMALL_ANGLE²``: polynomials only, no branch.

    The branch-free core of :func:`qexp`, for loops that vectorise across elements.
    """
    c, s = cos_sinc_small(z)
    return (c, s * x[0], s * x[1], s * x[2])


@inner
def qexp(x):
    """``exp((0, x)) = (cos|x|, sin|x| x/|x|)`` for the 3-tuple ``x``, exact and safe at 0.

    Up to ``|x| = SMALL_ANGLE`` no square root and no libm call (:func:`qexp_small`; up
    to ``SHORT_ANGLE`` its shorter polynomials, ``trig.cos_sinc_short``).
    """
    z = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    if z <= SHORT_ANGLE * SHORT_ANGLE:
        c, s = cos_sinc_short(z)
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


@inner
def qexp_approx_moderate(x):
    """:func:`qexp_approx` for ``x`` without a component above ``SCALED_ABOVE``; no branch.

    ``((1 - t²/2), (1 - t²/6) x)`` over its norm, ``t = |x|``. The norm never vanishes
    (``1 - t²/2 = 0`` only at ``t² = 2``, where ``1 - t²/6 != 0``).
    """
    t2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    a = 1.0 - 0.5 * t2
    b = 1.0 - t2 / 6.0
    inv = 1.0 / math.sqrt(a * a + b * b * t2)
    bi = b * inv
    return (a * inv, bi * x[0], bi * x[1], bi * x[2])


@inner
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


@inner
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


@inner
def rotvec_to_q(phi):
    """Unit quaternion ``exp(phi/2)`` of the rotation vector ``phi`` (angle ``|phi|``)."""
    return qexp((0.5 * phi[0], 0.5 * phi[1], 0.5 * phi[2]))


@inner
def q_to_rotvec(q):
    """Rotation vector ``2 log(q)`` of the ``w >= 0`` representative; angle in ``[0, pi]``."""
    u = qlog(q)
    return (2.0 * u[0], 2.0 * u[1], 2.0 * u[2])


@inner
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


@inner
def mat_vec(P, v):
    """``P v`` for a row-major 3x3 ``P`` (a 9-tuple)."""
    return (
        P[0] * v[0] + P[1] * v[1] + P[2] * v[2],
        P[3] * v[0] + P[4] * v[1] + P[5] * v[2],
        P[6] * v[0] + P[7] * v[1] + P[8] * v[2],
    )


@inner
def mat_t_vec(P, v):
    """``Pᵀ v`` for a row-major 3x3 ``P`` (a 9-tuple)."""
    return (
        P[0] * v[0] + P[3] * v[1] + P[6] * v[2],
        P[1] * v[0] + P[4] * v[1] + P[7] * v[2],
        P[2] * v[0] + P[5] * v[1] + P[8] * v[2],
    )


@inner
def widen4(a):
    """The first four entries of ``a`` as float64 (float32 input is evaluated in double)."""
    return (np.float64(a[0]), np.float64(a[1]), np.float64(a[2]), np.float64(a[3]))


@inner
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


@inner
def qangle(p, q):
    """Angle of the rotation taking ``p`` to ``q``: ``2 atan2(|u|, |w|)`` of ``p* ⊗ q``.

    Double-cover aware (``q`` and ``-q`` give the same angle), accurate for small angles
    (no ``acos``), scale invariant.
    """
    r = qmul(qconj(p), q)
    s = math.sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
    return 2.0 * math.atan2(s, abs(r[0]))


@inner
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


@inner
def cayley_q(phi):
    """Quarter-angle Cayley quaternion ``((1 - |a|²), 2a) / (1 + |a|²)``, ``a = phi/4``.

    Unit to round-off with no trig and no square root; rotates about ``phi`` exactly by
    ``4 atan(|phi|/4) = |phi| - |phi|³/48 + ...``. The same map as :func:`mrp_to_q`.
    """
    return mrp_to_q((0.25 * phi[0], 0.25 * phi[1], 0.25 * phi[2]))


@inner
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

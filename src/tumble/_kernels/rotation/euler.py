"""Euler angles: the conversions of one element and their flat loops.

The kernels take the sequence as three axis numbers (0, 1, 2 for x, y, z) and a flag
``extrinsic``; an intrinsic sequence is the extrinsic one read backwards. float32 input is
widened to float64 and rounded once on output. The loops follow
:mod:`tumble._kernels.rotation.loops` (operands of :mod:`tumble._kernels.dispatch`, counts of
flagged rows).
"""

from __future__ import annotations

import math

import numpy as np

from tumble._kernels import inner, twins
from tumble._kernels.dispatch import load3, load4
from tumble._kernels.rotation.formulas import qmul, quat_ok
from tumble._kernels.rotation.loops import U1, U2, U3, U4, nonfinite

# SciPy's gimbal-lock threshold on the middle angle (distance from 0 or π, radians), kept so
# that the two libraries lock on the same inputs.
GIMBAL_LOCK_ANGLE = 1e-7
# The middle angle 2 atan2(cd, ab) is within GIMBAL_LOCK_ANGLE of 0 when cd <= _LOCK_TAN ab,
# of π when ab <= _LOCK_TAN cd.
_LOCK_TAN = math.tan(GIMBAL_LOCK_ANGLE / 2)
# 2π as a sum of two doubles: subtracting both keeps a wrapped angle within an ulp.
_TWO_PI_HI = 6.283185307179586
_TWO_PI_LO = 2.4492935982947064e-16


@inner
def _half_turn_about(axis, angle):
    """``exp(angle/2 e_axis)``: the elementary quaternion about a coordinate axis."""
    h = 0.5 * angle
    c, s = math.cos(h), math.sin(h)
    return (c, s if axis == 0 else 0.0, s if axis == 1 else 0.0, s if axis == 2 else 0.0)


@inner
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


@inner
def _wrap(x):
    """``x`` in ``[-π, π]`` for ``x`` in ``[-2π, 2π]`` (two-part 2π: no extra rounding)."""
    if x > math.pi:
        return (x - _TWO_PI_HI) - _TWO_PI_LO
    if x < -math.pi:
        return (x + _TWO_PI_HI) + _TWO_PI_LO
    return x


@inner
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


@inner
def _euler_to_quat_at(i, angles, a, b, c, extrinsic, out):
    """``out = euler_to_q(angles)``; 1 if the result is not finite."""
    r = euler_to_q(load3(angles, i), a, b, c, extrinsic)
    j = U4 * i
    out[j], out[j + U1], out[j + U2], out[j + U3] = r
    return nonfinite(r)


euler_to_quat_serial, euler_to_quat_parallel = twins(_euler_to_quat_at, 4)


@inner
def _quat_to_euler_at(i, q, a, b, c, extrinsic, tiny, out):
    """Euler angles of row ``i`` of ``q``: (1 if flagged, 1 if at gimbal lock).

    Flagged: ``|q|²`` not a finite normal number, or a non-finite result.
    """
    qi = load4(q, i)
    r, locked = q_to_euler(qi, a, b, c, extrinsic)
    j = U3 * i
    out[j], out[j + U1], out[j + U2] = r
    flagged = 0 if quat_ok(qi, tiny) else 1
    return flagged | nonfinite(r), np.int64(locked)


quat_to_euler_serial, quat_to_euler_parallel = twins(_quat_to_euler_at, 3, counts=2)

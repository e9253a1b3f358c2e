"""Single-element kernels: the fast path of :mod:`tumble.rotation` for one element.

For one ``(4,)``, ``(3,)`` or ``(3, 3)`` element the public functions call these instead of
the batched gufuncs. Each computes with the same tuple kernel as the batched gufunc or loop
(so the bits agree) and returns 1 when the input needs the general path's validation (a
zero, overflowing or non-finite input, a matrix that is not a rotation) or the result is
not finite. ``quat_rotate``, ``quat_multiply`` and the other operations with a flat loop
call their serial loop on the one element instead.
"""

from __future__ import annotations

import math

from tumble._kernels import inner, njit
from tumble._kernels.rotation.formulas import (
    mat_to_q,
    q_to_mat,
    q_to_rotvec,
    qangle,
    qconj,
    qexp,
    qlog,
    qnormalize,
    quat_ok,
    rotvec_to_q,
    widen4,
)
from tumble._kernels.rotation.loops import nonfinite


@inner
def _row4(a):
    return (a[0], a[1], a[2], a[3])


@inner
def _row9(m):
    return (m[0, 0], m[0, 1], m[0, 2], m[1, 0], m[1, 1], m[1, 2], m[2, 0], m[2, 1], m[2, 2])


@njit
def _put(out, r):
    for i in range(len(r)):
        out[i] = r[i]
    return nonfinite(r)


@inner
def _put_matrix(out, r):
    for i in range(3):
        for j in range(3):
            out[i, j] = r[3 * i + j]
    return nonfinite(r)


@inner
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
    """``out`` (3, 3) = the matrix of ``q`` (widened like ``loops.quat_to_matrix_gu``)."""
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

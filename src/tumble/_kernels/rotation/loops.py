"""The formulas over batches: gufuncs, flat loops, rescue loops and the input checks.

The gufuncs (``*_gu``) broadcast the tuple kernels of
:mod:`tumble._kernels.rotation.formulas` over leading axes for the public module
:mod:`tumble.rotation`; each is built for float32 or float64 when first called with it, and
expects validated input of one dtype. The hottest operations (``quat_rotate``,
``quat_multiply``, ``rotvec_to_quat``) instead have flat loops, serial and ``prange``, over
operands in the convention of :mod:`tumble._kernels.dispatch` (a C-contiguous row per
element, or one tuple shared by all). Those loops check each result as they write it and
return the number of non-finite results (a NaN or infinite input always gives one), which
saves the separate NumPy passes over the input that would otherwise cost as much as the
arithmetic; on a nonzero count the public module runs the full validation, which names the
bad argument.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._kernels import guvectorize, inner, njit, select, twins
from tumble._kernels.dispatch import load3, load4
from tumble._kernels.rotation.formulas import (
    cayley_q,
    cayley_rotate,
    cross,
    mat_to_q,
    q_to_mat,
    q_to_rotvec,
    qangle,
    qexp,
    qexp_approx,
    qlog,
    qmul,
    qnormalize,
    rotvec_to_q,
    widen4,
)

# --------------------------------------------------------------------------------------
# gufuncs over leading axes (validated input only; the public module checks shapes).
# numba cannot name a literal output length, so kernels whose output length differs from
# every input take an unused ``_shape`` argument of that length (a broadcast empty array).


@guvectorize("(n)->(n)")
def quat_normalize_gu(q, out):
    r = qnormalize((q[0], q[1], q[2], q[3]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize("(n),(m)->(m)")
def quat_exp_gu(x, _shape, out):
    r = qexp((x[0], x[1], x[2]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize("(n),(m)->(m)")
def quat_exp_approx_gu(x, _shape, out):
    r = qexp_approx((x[0], x[1], x[2]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize("(n),(m)->(m)")
def cayley_quat_gu(phi, _shape, out):
    r = cayley_q((phi[0], phi[1], phi[2]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize("(n),(m)->(m)")
def quat_log_gu(q, _shape, out):
    r = qlog((q[0], q[1], q[2], q[3]))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@guvectorize("(n),(m)->(m)")
def quat_to_rotvec_gu(q, _shape, out):
    r = q_to_rotvec((q[0], q[1], q[2], q[3]))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@guvectorize("(n),(m)->(m)")
def quat_to_matrix_gu(q, _shape, out):
    # Widened: |q|² summed in float32 put 4 % of float32 matrices off orthogonality by
    # more than 1e-7; in double every entry is rounded once.
    r = q_to_mat(widen4(q))
    for i in range(9):
        out[i] = r[i]


@guvectorize("(n),(m)->(m)")
def rotvec_to_matrix_gu(phi, _shape, out):
    r = q_to_mat(rotvec_to_q((phi[0], phi[1], phi[2])))
    for i in range(9):
        out[i] = r[i]


@guvectorize("(n),(m)->(m)")
def matrix_to_quat_gu(m, _shape, out):
    r = mat_to_q((m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]))
    out[0], out[1], out[2], out[3] = r[0], r[1], r[2], r[3]


@guvectorize("(n),(m)->(m)")
def matrix_to_rotvec_gu(m, _shape, out):
    r = q_to_rotvec(mat_to_q((m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@guvectorize("(n),(n)->()")
def rotation_angle_gu(p, q, out):
    out[0] = qangle((p[0], p[1], p[2], p[3]), (q[0], q[1], q[2], q[3]))


@guvectorize("(n),(n)->(n)")
def cayley_rotate_gu(v, phi, out):
    r = cayley_rotate((v[0], v[1], v[2]), (phi[0], phi[1], phi[2]))
    out[0], out[1], out[2] = r[0], r[1], r[2]


# --------------------------------------------------------------------------------------
# the measurements behind the public module's checks


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
# return how many results are flagged through an integer sum, which vectorises too. Each
# loop is written once, as the function of one element ``i`` (``_<name>_at``), and
# ``twins`` makes its serial and ``prange`` loops; the per-element functions are plain
# ``njit`` functions that LLVM inlines: numba's own ``inline="always"`` (IR inlining)
# leaves a loop that LLVM does not vectorise.

U1 = np.uint64(1)
U2 = np.uint64(2)
U3 = np.uint64(3)
U4 = np.uint64(4)


@inner
def not_finite(x):
    """1 if ``x`` is NaN or infinite, else 0, without a branch (loops stay vectorisable).

    Pass a sum of absolute values to test many numbers at once.
    """
    return np.int64(not x < math.inf)


@inner
def nonfinite(r):
    """1 if an entry of the result tuple ``r`` is NaN or infinite, else 0.

    A NaN or infinite input reaches every component of these results (each input component
    is multiplied into each output), so checking the output checks the input for free; an
    output that overflowed from finite input is flagged too and sorted out by the caller.
    """
    total = 0.0
    for x in r:
        total += abs(x)
    return not_finite(total)


#: :func:`_quat_rotate_at` recomputes, scaled, a vector shorter than ``|q|`` times the
#: smallest normal number times this (``2^54``: ``t`` keeps every digit above it).
FAINT_MARGIN = 2.0**54


@inner
def _quat_rotate_at(i, q, v, tiny, out):
    """``out = q̂ v q̂*`` with ``q̂ = q/|q|``; 1 if the row is flagged.

    A row is flagged when ``|q|²`` is not a finite number of at least ``tiny`` (the
    smallest normal number of the dtype; NaN for non-finite ``q``) or the result is not
    finite. ``q``, ``v``: per-element rows or shared tuples (``dispatch.flat_operand``).
    A nonzero ``v`` within ``FAINT_MARGIN`` of ``|q|`` times ``tiny`` gives a NaN row
    (flagged): ``t`` there falls below the normal numbers and loses digits, and the caller
    recomputes the row with ``v`` scaled (:func:`quat_rotate_rescue`).
    """
    w, x, y, z = load4(q, i)
    vi = load3(v, i)
    n2 = w * w + x * x + y * y + z * z
    # Rotating by q/|q|: t = (2/|q|²) u × v, v' = v + w t + u × t.
    s = 2.0 / n2
    u = (x, y, z)
    c = cross(u, vi)
    t = (s * c[0], s * c[1], s * c[2])
    d = cross(u, t)
    vmax = max(max(abs(vi[0]), abs(vi[1])), abs(vi[2]))
    qmax = max(max(abs(w), abs(x)), max(abs(y), abs(z)))
    faint = (vmax > 0.0) & (vmax < qmax * (tiny * FAINT_MARGIN))
    nan = vi[0] * math.nan
    r = (
        select(faint, nan, vi[0] + w * t[0] + d[0]),
        select(faint, nan, vi[1] + w * t[1] + d[1]),
        select(faint, nan, vi[2] + w * t[2] + d[2]),
    )
    j = U3 * i
    out[j], out[j + U1], out[j + U2] = r
    # |q|² must be a finite normal number (NaN when q is not finite); v is checked by r.
    return (0 if (n2 >= tiny) & (n2 < math.inf) else 1) | nonfinite(r)


quat_rotate_serial, quat_rotate_parallel = twins(_quat_rotate_at, 3)


@inner
def _quat_multiply_at(i, p, q, out):
    """``out = p ⊗ q``; 1 if the result is not finite."""
    r = qmul(load4(p, i), load4(q, i))
    j = U4 * i
    out[j], out[j + U1], out[j + U2], out[j + U3] = r
    return nonfinite(r)


quat_multiply_serial, quat_multiply_parallel = twins(_quat_multiply_at, 4)


@inner
def _rotvec_to_quat_at(i, phi, out):
    """``out = exp(phi/2)``; 1 if the result is not finite."""
    r = rotvec_to_q(load3(phi, i))
    j = U4 * i
    out[j], out[j + U1], out[j + U2], out[j + U3] = r
    return nonfinite(r)


rotvec_to_quat_serial, rotvec_to_quat_parallel = twins(_rotvec_to_quat_at, 4)


# --------------------------------------------------------------------------------------
# rescue loops for finite input whose plain evaluation overflowed (see tumble.rotation)


@inner
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
        if abs(out[j]) + abs(out[j + U1]) + abs(out[j + U2]) + abs(out[j + U3]) < math.inf:
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
    overflow (``|v|`` near the largest float) when the rotated vector cannot, and ``t``
    underflows for a ``v`` far shorter than ``|q|`` (the loop leaves such rows NaN).
    """
    for i in range(out.shape[0] // 3):
        j = np.uint64(3 * i)
        if abs(out[j]) + abs(out[j + U1]) + abs(out[j + U2]) < math.inf:
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
        out[j + U1] = (vs[1] + w * t[1] + d[1]) * sv
        out[j + U2] = (vs[2] + w * t[2] + d[2]) * sv

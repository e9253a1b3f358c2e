"""Mean rotation and vector alignment: one pass over the data per group, in float64.

The kernels behind ``tumble.rotation.quat_mean`` (Markley's eigenvector mean) and
``align_vectors`` (Wahba's problem by SVD). Each group's sums are taken in one pass that
also checks the input; the ``*_parallel`` forms split that pass in blocks over numba's
threads, for a few large groups.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from tumble._kernels import inner, njit, parallel_njit
from tumble._kernels.rotation.formulas import cross, dot, mat_to_q, qnormalize, qrotate, quat_ok


@inner
def _mean_sums(q, w, g, start, stop, tiny):
    """Sums over rows ``start:stop`` of group ``g``: the upper triangle of ``Σ w q̂ q̂ᵀ``, ``Σ w``.

    ``w q̂ q̂ᵀ = w (q/|q|²) qᵀ``: one division per row, no square root, and no overflow
    (``|q/|q|²| = 1/|q|`` and the wrapper keeps ``w`` within ``2^±500``; ``w/|q|²``
    overflowed for ``w`` near 1e102 and ``|q|`` near 1e-104). In float64 with
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
        r = 1.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
        x0, x1, x2, x3 = wi * (r * q0), wi * (r * q1), wi * (r * q2), wi * (r * q3)
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


@inner
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


@inner
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


@inner
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


@inner
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


@inner
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


@inner
def _align_group(g, sums, bad, faint, q_out):
    """Solve group ``g`` from its sums into ``q_out[g]``; returns the rotation and a code.

    Code 1, unusable: a flagged pair, no positive total weight, or a non-finite ``B`` (the
    SVD must not see one); the rotation is NaN and the wrapper raises. Code 2, faint: every
    entry of ``B`` below ``faint`` (products near or below the smallest normal number have
    lost digits); the rotation is zero and the wrapper solves the group again, scaled.
    """
    finite = True
    largest = 0.0
    for m in range(9):
        finite &= abs(sums[m]) < math.inf
        largest = max(largest, abs(sums[m]))
    code = 0
    if bad or not sums[9] > 0.0 or not finite:
        q = (math.nan, math.nan, math.nan, math.nan)
        code = 1
    elif largest < faint:
        q = (0.0, 0.0, 0.0, 0.0)
        code = 2
    else:
        q = _wahba(sums[:9].reshape(3, 3).copy())
    q_out[g, 0], q_out[g, 1], q_out[g, 2], q_out[g, 3] = q
    return q, code


@njit
def align_groups(a, b, w, q_out, rssd_out, faint):
    """Wahba's problem per group: the rotation taking ``b[g]`` best onto ``a[g]``, and the rssd.

    ``a``, ``b`` (G, N, 3), ``w`` (G, N), float64. ``B = Σ w a bᵀ = U S Vᵀ`` in one pass with
    the input checks, the rotation from :func:`_wahba`, then ``rssd = sqrt(Σ w |a - R b|²)``
    summed directly (no cancellation). Returns the numbers of unusable and of faint groups
    (codes 1 and 2 of :func:`_align_group`).
    """
    n = a.shape[1]
    flagged = faint_groups = 0
    for g in range(a.shape[0]):
        sums, bad = _align_sums(a, b, w, g, 0, n)
        q, code = _align_group(g, sums, bad, faint, q_out)
        flagged += 1 if code == 1 else 0
        faint_groups += 1 if code == 2 else 0
        rssd_out[g] = math.sqrt(_residual_sum(a, b, w, g, q, 0, n))
    return flagged, faint_groups


@parallel_njit
def align_groups_parallel(a, b, w, q_out, rssd_out, faint, blocks):
    """``align_groups`` with each group's two passes split in ``blocks`` for the threads."""
    n = a.shape[1]
    flagged = faint_groups = 0
    for g in range(a.shape[0]):
        sums = np.zeros((blocks, 10))
        bad = np.zeros(blocks, dtype=np.int64)
        for k in prange(blocks):
            sums[k], bad[k] = _align_sums(a, b, w, g, k * n // blocks, (k + 1) * n // blocks)
        q, code = _align_group(g, sums.sum(axis=0), bad.sum(), faint, q_out)
        flagged += 1 if code == 1 else 0
        faint_groups += 1 if code == 2 else 0
        residual = np.zeros(blocks)
        for k in prange(blocks):
            residual[k] = _residual_sum(a, b, w, g, q, k * n // blocks, (k + 1) * n // blocks)
        rssd_out[g] = math.sqrt(residual.sum())
    return flagged, faint_groups

"""Batched kernels behind :mod:`tumble.hierarchy`: composition level by level, stepping.

Arrays are structure-of-arrays over nodes: translations ``(N, n)``, rotations and skew
matrices ``(N, n, n)``, scales ``(N,)``. Every formula is the one documented in
:mod:`tumble.transform`, written once on one node with explicit loops (n is small, so
loops beat BLAS calls) and checked against that module's NumPy path by the tests.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from tumble._kernels import inner, njit, parallel_njit

#: Nodes per parallel work item: large enough to amortise the scratch buffers and the
#: scheduling, small enough to balance a level over two or more threads.
CHUNK = 512


@njit(inline="always")
def rotate_left(n, gR, p, X, i, M):
    """``M = R2 X_i``: row ``p`` of the global rotations times matrix ``i`` of ``X``."""
    for r in range(n):
        for c in range(n):
            s = 0.0
            for k in range(n):
                s += gR[p, r, k] * X[i, k, c]
            M[r, c] = s


@njit(inline="always")
def compose_node(n, p, i, gT, gR, gS, gv, ga, gw, gal, T, R, S, v, a, w, al, u, Jv, t, M):
    """Global dynamic of node ``i`` from its parent's global ``p`` (``A3 = A2 * A1``).

    ``A2`` is row ``p`` of the global arrays ``g*``, ``A1`` row ``i`` of the local arrays;
    the result goes to row ``i`` of the global arrays. ``u = J2 T1``, ``Jv = J2 v1``,
    ``t``, ``M`` are scratch. With ``W = R2 omega1 R2^T``:
    ``v3 = v2 + J2 v1 + omega2 J2 T1``,
    ``a3 = a2 + J2 a1 + alpha2 J2 T1 + omega2 (omega2 J2 T1) + 2 omega2 J2 v1``,
    ``omega3 = omega2 + W``, ``alpha3 = alpha2 + R2 alpha1 R2^T + [omega2, W]``
    (``[omega2, omega3] = [omega2, W]``). Angular outputs are exactly skew.
    Rows are indexed in place rather than sliced: views cost reference counting per node.
    """
    S2 = gS[p]
    for r in range(n):
        su = 0.0
        sv = 0.0
        sa = 0.0
        for c in range(n):
            su += gR[p, r, c] * T[i, c]
            sv += gR[p, r, c] * v[i, c]
            sa += gR[p, r, c] * a[i, c]
        u[r] = S2 * su
        Jv[r] = S2 * sv
        ga[i, r] = S2 * sa
    for r in range(n):
        for c in range(n):
            s = 0.0
            for k in range(n):
                s += gR[p, r, k] * R[i, k, c]
            gR[i, r, c] = s
    # W = R2 omega1 R2^T (skew: only the strict upper triangle is computed, the rest
    # mirrored, which also makes the outputs exactly skew), held in gw[i] for now
    rotate_left(n, gR, p, w, i, M)
    for r in range(n):
        gw[i, r, r] = 0.0
        for c in range(r + 1, n):
            s = 0.0
            for k in range(n):
                s += M[r, k] * gR[p, c, k]
            gw[i, r, c] = s
            gw[i, c, r] = -s
    # alpha3 = alpha2 + R2 alpha1 R2^T + [omega2, W]
    rotate_left(n, gR, p, al, i, M)
    for r in range(n):
        gal[i, r, r] = 0.0
        for c in range(r + 1, n):
            s = 0.0
            for k in range(n):
                s += M[r, k] * gR[p, c, k] + gw[p, r, k] * gw[i, k, c] - gw[i, r, k] * gw[p, k, c]
            s += gal[p, r, c]
            gal[i, r, c] = s
            gal[i, c, r] = -s
    for r in range(n):
        s = 0.0
        for c in range(n):
            s += gw[p, r, c] * u[c]
        t[r] = s
    for r in range(n):
        sa = 0.0
        for c in range(n):
            sa += gal[p, r, c] * u[c] + gw[p, r, c] * (t[c] + 2.0 * Jv[c])
        gv[i, r] = gv[p, r] + Jv[r] + t[r]
        ga[i, r] = ga[p, r] + ga[i, r] + sa
        gT[i, r] = gT[p, r] + u[r]
    # omega3 = omega2 + W
    for r in range(n):
        for c in range(r + 1, n):
            x = gw[p, r, c] + gw[i, r, c]
            gw[i, r, c] = x
            gw[i, c, r] = -x
    gS[i] = S2 * S[i]


@inner
def compose_range(lo, hi, order, parent, T, R, S, v, a, w, al, gT, gR, gS, gv, ga, gw, gal):
    """Globals of the nodes ``order[lo:hi]``, whose parents' globals are already known."""
    n = T.shape[1]
    u = np.empty(n, gT.dtype)
    Jv = np.empty(n, gT.dtype)
    t = np.empty(n, gT.dtype)
    M = np.empty((n, n), gT.dtype)
    for k in range(lo, hi):
        i = order[k]
        p = parent[i]
        if p < 0:
            gS[i] = S[i]
            for r in range(n):
                gT[i, r] = T[i, r]
                gv[i, r] = v[i, r]
                ga[i, r] = a[i, r]
                for c in range(n):
                    gR[i, r, c] = R[i, r, c]
                    gw[i, r, c] = w[i, r, c]
                    gal[i, r, c] = al[i, r, c]
        elif n == 3:
            # a literal dimension, inlined, lets LLVM unroll every loop: ~30% faster in 3-D
            compose_node(3, p, i, gT, gR, gS, gv, ga, gw, gal, T, R, S, v, a, w, al, u, Jv, t, M)
        else:
            compose_node(n, p, i, gT, gR, gS, gv, ga, gw, gal, T, R, S, v, a, w, al, u, Jv, t, M)


@njit
def globals_serial(order, level_start, parent, T, R, S, v, a, w, al, gT, gR, gS, gv, ga, gw, gal):
    """Every node's global dynamic, level by level from the roots, on one thread."""
    for lev in range(level_start.shape[0] - 1):
        compose_range(
            level_start[lev],
            level_start[lev + 1],
            order,
            parent,
            T,
            R,
            S,
            v,
            a,
            w,
            al,
            gT,
            gR,
            gS,
            gv,
            ga,
            gw,
            gal,
        )


@parallel_njit
def globals_parallel(order, level_start, parent, T, R, S, v, a, w, al, gT, gR, gS, gv, ga, gw, gal):
    """As :func:`globals_serial`, each level split in chunks over numba's threads."""
    for lev in range(level_start.shape[0] - 1):
        lo = level_start[lev]
        hi = level_start[lev + 1]
        n_chunks = (hi - lo + CHUNK - 1) // CHUNK
        for c in prange(n_chunks):
            start = lo + c * CHUNK
            compose_range(
                start,
                min(hi, start + CHUNK),
                order,
                parent,
                T,
                R,
                S,
                v,
                a,
                w,
                al,
                gT,
                gR,
                gS,
                gv,
                ga,
                gw,
                gal,
            )


@njit
def tree_levels(parent, alive):
    """Breadth order of the live nodes: ``(order, level_start, depth)``.

    ``order[level_start[d]:level_start[d + 1]]`` are the nodes at depth ``d`` (roots have
    depth 0). Each depth is found once by walking up to the nearest node already known,
    so the cost is O(N) whatever the shape of the tree.
    """
    N = parent.shape[0]
    depth = np.full(N, -1, np.int64)
    for i in range(N):
        if not alive[i] or depth[i] >= 0:
            continue
        j = i
        d = 0
        while j >= 0 and depth[j] < 0:
            j = parent[j]
            d += 1
        dd = d - 1 if j < 0 else depth[j] + d
        j = i
        while j >= 0 and depth[j] < 0:
            depth[j] = dd
            dd -= 1
            j = parent[j]
    max_depth = -1
    for i in range(N):
        max_depth = max(max_depth, depth[i])
    level_start = np.zeros(max_depth + 2, np.int64)
    for i in range(N):
        if depth[i] >= 0:
            level_start[depth[i] + 1] += 1
    for d in range(max_depth + 1):
        level_start[d + 1] += level_start[d]
    fill = level_start[:-1].copy()
    order = np.empty(level_start[-1], np.int64)
    for i in range(N):
        if depth[i] >= 0:
            order[fill[depth[i]]] = i
            fill[depth[i]] += 1
    return order, level_start, depth


@njit
def translate_nodes(T, v, a, dt):
    """Constant-acceleration step in place: ``T += v dt + a dt^2 / 2``, ``v += a dt``."""
    half = 0.5 * dt * dt
    for i in range(T.shape[0]):
        for r in range(T.shape[1]):
            T[i, r] += v[i, r] * dt + a[i, r] * half
            v[i, r] += a[i, r] * dt


@inner
def _commutator(A, B, out):
    n = A.shape[0]
    for r in range(n):
        for c in range(n):
            s = 0.0
            for k in range(n):
                s += A[r, k] * B[k, c] - B[r, k] * A[k, c]
            out[r, c] = s


@njit
def magnus_skew(w, al, dt, order, out):
    """Magnus rotation increment ``Omega`` (skew, ``R1 = exp(Omega) R``) per node.

    For ``omega(t) = omega + alpha t`` on ``[0, dt]`` (``dR/dt = omega R``):
    ``Omega = omega dt + alpha dt^2/2`` (order 1, error O(dt^3));
    ``- (dt^3/12) [omega, alpha]`` (order 2, error O(dt^5));
    ``+ (dt^5/240) [alpha, [alpha, omega]] + (dt^5/720) [omega, [omega, [omega, alpha]]]``
    (order 4, every term of order dt^5, error O(dt^6)).
    """
    n = w.shape[1]
    C1 = np.empty((n, n), out.dtype)
    C2 = np.empty((n, n), out.dtype)
    C3 = np.empty((n, n), out.dtype)
    h2 = 0.5 * dt * dt
    h3 = dt * dt * dt / 12.0
    h5a = dt**5 / 240.0
    h5b = dt**5 / 720.0
    for i in range(w.shape[0]):
        W = w[i]
        A = al[i]
        O = out[i]
        for r in range(n):
            for c in range(n):
                O[r, c] = W[r, c] * dt + A[r, c] * h2
        if order >= 2:
            _commutator(W, A, C1)
            for r in range(n):
                for c in range(n):
                    O[r, c] -= h3 * C1[r, c]
        if order >= 4:
            _commutator(A, W, C1)
            _commutator(A, C1, C2)
            _commutator(W, A, C1)
            _commutator(W, C1, C3)
            _commutator(W, C3, C1)
            for r in range(n):
                for c in range(n):
                    O[r, c] += h5a * C2[r, c] + h5b * C1[r, c]

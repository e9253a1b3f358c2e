"""The mean of rotations and the rotation that best aligns two sets of vectors.

Both reduce their data to small sums in one compiled pass per group (in float64, on
threads for large groups) and solve a small eigen- or singular-value problem per group:
Markley's chordal mean (``quat_mean``) and Wahba's problem (``align_vectors``), as SciPy's
``Rotation.mean`` and ``Rotation.align_vectors``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._kernels import rotation as _k
from tumble._kernels.dispatch import use_parallel
from tumble._validate import as_float_array, as_int, broadcast_leading, common_dtype
from tumble.rotation.conversions import quat_to_matrix
from tumble.rotation.operands import TINY, rotation_quats


def _reduction_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple of ints over the batch axes) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        n = as_int(a, "axis")
        if not -ndim <= n < ndim:
            raise InputError(f"axis: expected an axis of the batch shape (ndim {ndim}), got {n}")
        out.append(n % ndim)
    if len(set(out)) != len(out):
        raise InputError(f"axis: expected distinct axes, got {axis!r}")
    return tuple(sorted(out))


def _broadcast_weights(w: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``w`` broadcast to ``batch``, or InputError naming ``weights`` (shape only)."""
    try:
        shape = np.broadcast_shapes(w.shape, batch)
    except ValueError:
        shape = None
    if shape != batch:
        raise InputError(
            f"weights: expected a shape that broadcasts to {batch}, got shape {w.shape}"
        )
    return np.broadcast_to(w, batch)


def _weights(weights: Any, batch: tuple[int, ...]) -> np.ndarray:
    """Weights broadcast to ``batch``: finite, non-negative, float64."""
    if weights is None:
        return np.ones(batch)
    w = _broadcast_weights(as_float_array(weights, "weights").astype(np.float64), batch)
    if w.size and not np.min(w) >= 0:
        raise InputError(f"weights: expected non-negative weights, got {np.min(w):.6g}")
    return w


def quat_mean(
    q: ArrayLike, weights: ArrayLike | None = None, axis: int | tuple[int, ...] | None = None
) -> np.ndarray:
    """Chordal L2 (Markley) mean rotation, SciPy's ``Rotation.mean``.

    The rotation ``M`` minimising ``Σ w_i |R_i - M|²`` (Frobenius) is the unit eigenvector
    of the largest eigenvalue of ``K = Σ w_i q̂_i q̂_iᵀ`` (``q̂ = q/|q|``; ``q`` and ``-q``
    contribute alike), Markley et al. (2007). Batched: the mean is taken over ``axis`` of
    the batch shape and kept over the others. ``K`` is accumulated by a compiled loop in
    float64, the 4 x 4 eigenproblem is NumPy's ``eigh``. Unique unless the largest
    eigenvalue is repeated (rotations spread evenly, such as two half turns about
    perpendicular axes), where any unit vector of that eigenspace is a mean.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.
    weights : array_like, optional
        Non-negative, broadcasting to ``q.shape[:-1]``; every group must have a positive
        total. Default: all equal.
    axis : int, tuple of int or None
        Axes of ``q.shape[:-1]`` to average over; ``None`` (default) averages all.

    Returns
    -------
    ndarray, shape (kept batch axes..., 4)
        ``w >= 0`` representative; dtype of ``q``.
    """
    qa = as_float_array(q, "q", (4,), finite=False)
    batch = qa.shape[:-1]
    axes = _reduction_axes(axis, len(batch))
    if weights is None:
        w = np.broadcast_to(1.0, batch)
    else:
        w = _broadcast_weights(as_float_array(weights, "weights", finite=False), batch)
    kept = tuple(a for a in range(len(batch)) if a not in axes)
    order = kept + axes
    kept_shape = tuple(batch[a] for a in kept)
    n = math.prod(batch[a] for a in axes)
    groups = math.prod(kept_shape)
    if groups and n == 0:
        raise InputError("q: expected at least one quaternion to average, got none")
    # Grouped rows: a view (no copy) when the averaged axes are already last and contiguous.
    qg = np.ascontiguousarray(np.transpose(qa, (*order, len(batch)))).reshape(groups, n, 4)
    wg = _in_range(np.transpose(w, order).reshape(groups, n))
    mean = np.empty((groups, 4))
    if use_parallel(n):
        # Blocks of a few per thread: a thread that loses its core holds up less.
        blocks = 4 * numba.get_num_threads()
        flagged = _k.quat_mean_groups_parallel(qg, wg, TINY[qa.dtype], mean, blocks)
    else:
        flagged = _k.quat_mean_groups(qg, wg, TINY[qa.dtype], mean)
    if flagged:
        rotation_quats(qa, "q")
        if not np.all(_weights(wg, wg.shape).max(axis=1, initial=0.0) > 0):
            raise InputError("weights: expected a positive total weight in every group, got zero")
    return mean.reshape((*kept_shape, 4)).astype(qa.dtype)


#: Weights of a group whose largest lies outside ``[2^-WEIGHT_EXPONENT, 2^WEIGHT_EXPONENT]``
#: are scaled by a power of two (the mean does not depend on their scale): the kernel's
#: ``w q̂ q̂ᵀ`` lost digits for subnormal weights, and weights near the largest float
#: overflowed ``K`` (issue 27). Scaled, each term of ``K`` is at most the weight.
WEIGHT_EXPONENT = 500


def _in_range(wg: np.ndarray) -> np.ndarray:
    """``wg`` (groups, n) with each group far from 1 scaled exactly by a power of two
    (largest weight then in ``[0.5, 1)``); other groups, and any weight that is not a
    non-negative finite number (the kernel flags those), untouched."""
    with np.errstate(invalid="ignore"):
        top = np.max(np.abs(wg), axis=1, initial=0.0).astype(np.float64)
    far = (
        np.isfinite(top)
        & (top > 0)
        & ((top < 2.0**-WEIGHT_EXPONENT) | (top > 2.0**WEIGHT_EXPONENT))
    )
    if not far.any():
        return wg
    scaled = np.array(wg, dtype=np.float64)
    scaled[far] = np.ldexp(scaled[far], -np.frexp(top[far])[1][:, None])
    return scaled


#: A group whose ``B = Σ w a bᵀ`` has every entry below this is solved again with its
#: vectors and weights scaled by powers of two (issue 27): its products came near or below
#: the smallest normal number and lost digits. Above it, what they lose is far below the
#: round-off of ``B``.
FAINT_PRODUCTS = 2.0**-900


def _solve(
    A: np.ndarray, B: np.ndarray, W: np.ndarray, faint: float
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The kernel on groups ``A``, ``B`` (G, N, 3) and ``W`` (G, N), float64: rotations
    (G, 4), rssd (G,), and the numbers of unusable and of faint groups.

    One pass checks and sums, one more sums the residual; on threads when the groups are
    large.
    """
    groups, n = W.shape
    q = np.empty((groups, 4))
    rssd = np.empty(groups)
    if use_parallel(n):
        # Blocks of a few per thread: a thread that loses its core holds up less.
        blocks = 4 * numba.get_num_threads()
        flagged, faint_groups = _k.align_groups_parallel(A, B, W, q, rssd, faint, blocks)
    else:
        flagged, faint_groups = _k.align_groups(A, B, W, q, rssd, faint)
    return q, rssd, flagged, faint_groups


def _solve_scaled(A: np.ndarray, B: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Faint groups solved again, exactly scaled by powers of two.

    The rotation from ``a``, ``b`` and ``w`` each scaled to a largest entry in ``[0.5, 1)``:
    the optimum does not depend on their scales, and the products are now normal numbers.
    The rssd from ``a`` and ``b`` scaled by one common power ``2^-e`` and ``w`` by its own
    ``2^-f``, summed directly as in the kernel, then ``rssd = 2^e sqrt(2^f) rssd_scaled``
    (a set of vectors that stays faint under the common scale is below ``2^-1000`` of
    the other, and its part of the rssd below round-off).
    """

    def top(X: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.frexp(np.max(np.abs(X), axis=axes))[1]

    ea, eb, ew = top(A, (1, 2)), top(B, (1, 2)), top(W, (1,))
    Ws = np.ldexp(W, -ew[:, None])
    q = _solve(np.ldexp(A, -ea[:, None, None]), np.ldexp(B, -eb[:, None, None]), Ws, 0.0)[0]
    e = np.maximum(ea, eb)[:, None, None]
    d = np.ldexp(A, -e) - np.einsum("gij,gnj->gni", quat_to_matrix(q), np.ldexp(B, -e))
    root = np.sqrt(np.einsum("gn,gni,gni->g", Ws, d, d))
    half, odd = np.divmod(ew, 2)
    return q, np.ldexp(root * np.sqrt(np.ldexp(1.0, odd)), e[:, 0, 0] + half)


def _align_fault(A: np.ndarray, B: np.ndarray, W: np.ndarray) -> None:
    """Name the fault that :func:`align_vectors`' kernel flagged; it always raises."""
    as_float_array(A, "a")
    as_float_array(B, "b")
    _weights(W, W.shape)
    for name, V in (("a", A), ("b", B)):
        if not np.all(np.max(np.abs(V), axis=-1) > 0):
            raise InputError(f"{name}: expected nonzero vectors, got one of length 0")
    if not np.all(np.max(W, axis=1) > 0):
        raise InputError("weights: expected a positive total weight, got all zero")
    # Overflow: the weights' fault when the kernel's sums without them (each at most
    # 3 n max|a|² + 3 n max|b|²) are finite floats.
    with np.errstate(over="ignore"):
        plain = 3.0 * W.shape[-1] * (np.max(np.abs(A)) ** 2 + np.max(np.abs(B)) ** 2)
    raise InputError(
        f"{_culprits(bool(np.isfinite(plain)), W)}: expected vectors and weights whose "
        "weighted products are finite floats, got an overflow"
    )


def _culprits(unweighted_fits: bool, W: np.ndarray) -> str:
    """Who is to blame for an overflow: the weights when the same sums without them fit,
    else the vectors (and the weights too when some weight exceeds 1)."""
    if unweighted_fits:
        return "weights"
    return "a, b, weights" if bool(np.max(W) > 1.0) else "a, b"


def _rssd_in(
    rssd: np.ndarray, dtype: np.dtype, A: np.ndarray, B: np.ndarray, W: np.ndarray
) -> np.ndarray:
    """``rssd`` (float64) in ``dtype``, or InputError naming the culprit when it is beyond
    that dtype's range (float32: ``rssd`` above 3.4e38 from vectors or weights near it)."""
    with np.errstate(over="ignore"):
        out = rssd.astype(dtype)
    if np.isfinite(out).all():
        return out
    # Without the weights rssd <= sqrt(n) (max|a| + max|b|) (float64: no overflow): the
    # vectors are fine when that bound's square is a float of the dtype, as in the kernel.
    bound = math.sqrt(A.shape[-2]) * (float(np.max(np.abs(A))) + float(np.max(np.abs(B))))
    raise InputError(
        f"{_culprits(bound <= math.sqrt(float(np.finfo(dtype).max)), W)}: expected an rssd "
        f"within {dtype}'s range, got {float(np.max(rssd)):.3g}"
    )


def align_vectors(
    a: ArrayLike, b: ArrayLike, weights: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray | np.floating]:
    """Rotation taking the vectors ``b`` best onto ``a`` (Wahba), SciPy's ``align_vectors``.

    Finds ``q`` minimising ``Σ w_i |a_i - R(q) b_i|²`` (the Kabsch solution: with
    ``B = Σ w_i a_i b_iᵀ = U S Vᵀ``, ``R = U diag(1, 1, det(U Vᵀ)) Vᵀ``), and returns it
    with the root of the weighted sum of squared distances,
    ``rssd = sqrt(Σ w_i |a_i - R b_i|²)``, computed as that sum (no cancellation, so an
    exact alignment gives round-off, not ``sqrt(eps)``). In SciPy's order: ``b`` is mapped
    onto ``a``; for frames, ``a`` in world and ``b`` in body coordinates give the body's
    orientation.

    Degenerate input is handled on purpose: when every pair is collinear (one pair, or all
    ``a_i`` on one line; ``B`` of rank one, ``s_2 <= 64 eps s_1``), the rotation about the
    common line is not determined, and tumble returns the smallest rotation taking the
    line of ``b`` onto that of ``a`` (about ``b × a``; by a half turn about a
    perpendicular axis when they are opposite). For one pair this is SciPy's answer; for
    several collinear pairs SciPy returns an arbitrary optimum with a warning.

    Parameters
    ----------
    a, b : array_like, shape (..., N, 3) or (3,)
        Nonzero vectors; ``a`` and ``b`` have the same ``N``, their batch axes broadcast.
        A single ``(3,)`` pair is ``N = 1``.
    weights : array_like, shape (..., N), optional
        Non-negative, finite, not all zero. Default: all one.

    Returns
    -------
    q : ndarray, shape (..., 4)
        The rotation (``w >= 0``), dtype of the inputs.
    rssd : ndarray, shape (...)
        A NumPy scalar for a single problem.
    """
    A = as_float_array(a, "a", (3,), finite=False)
    B = as_float_array(b, "b", (3,), finite=False)
    dtype = common_dtype(A, B)
    if A.ndim == 1:
        A = A[None]
    if B.ndim == 1:
        B = B[None]
    if A.shape[-2] != B.shape[-2]:
        raise InputError(
            f"a, b: expected the same number of vectors, got {A.shape[-2]} in a and "
            f"{B.shape[-2]} in b"
        )
    n = A.shape[-2]
    if n == 0:
        raise InputError("a: expected at least one vector, got none")
    leading = broadcast_leading(a=(A, 2), b=(B, 2))
    if weights is None:
        w = np.ones((*leading, n))
    else:
        w = _broadcast_weights(as_float_array(weights, "weights", finite=False), (*leading, n))
    groups = math.prod(leading)
    A64, B64, W64 = (
        np.ascontiguousarray(np.broadcast_to(x, shape), dtype=np.float64).reshape(groups, *tail)
        for x, shape, tail in (
            (A, (*leading, n, 3), (n, 3)),
            (B, (*leading, n, 3), (n, 3)),
            (w, (*leading, n), (n,)),
        )
    )
    q, rssd, flagged, faint = _solve(A64, B64, W64, FAINT_PRODUCTS)
    if flagged or not np.all(np.isfinite(rssd)):
        _align_fault(A, B, W64)
    if faint:
        rows = np.flatnonzero(~q.any(axis=1))  # the kernel leaves a faint group's q zero
        q[rows], rssd[rows] = _solve_scaled(A64[rows], B64[rows], W64[rows])
    q_out = q.reshape((*leading, 4)).astype(dtype)
    r_out = _rssd_in(rssd.reshape(leading), dtype, A, B, W64)
    return q_out, r_out[()]

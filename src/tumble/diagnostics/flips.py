"""Flip detection: the time of the first Dzhanibekov flip of recorded runs."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._validate import as_float_array, as_scalar
from tumble.diagnostics.records import ldexp, split

__all__ = ["FLIP_BAND", "first_flip_time"]

#: Hysteresis band of :func:`first_flip_time`, as a fraction of ``|L|``: far above the
#: round-off of ``L_b`` (1e-16) and small enough that orbits with a median-axis amplitude
#: of 0.1 % of ``|L|`` (energy fractions down to about 1e-6 of the distance to the
#: separatrix) still flip.
FLIP_BAND = 1e-3


def first_flip_time(
    t: ArrayLike, L_body: ArrayLike, inv_inertia: ArrayLike, band: float = FLIP_BAND
) -> np.ndarray:
    """Time of the first Dzhanibekov flip of recorded torque-free trajectories.

    **What a flip is.** Let ``m`` be the body axis of the median inverse moment (ties keep
    the axis order) and ``x(t) = L_b,m(t) / |L_b(t0)|`` the body-frame angular momentum
    along it. In both circulation regimes of the free motion (about the axis of smallest or
    of largest ``J``) ``x`` is proportional to ``sn(u0 + ω_p t)``: ``L_b`` crosses the
    plane ``L_b,m = 0`` (the body plane of the two stable axes) twice per body period ``T``
    (:func:`tumble.exact.body_period`), every ``T/2``. Near the separatrix it dwells close
    to ``±e_m`` and then swings quickly to the other side: that swing is the flip of the
    Dzhanibekov effect, and its zero crossing is its time.

    **Detection**, robust to round-off around ``x = 0`` and to steady spins: with ``s`` the
    sign of ``x`` at the first record where ``|x| >= band``, a flip is complete at the first
    later record where ``s x <= -band``. The flip time is the zero of ``x`` just before it,
    the root of the cubic Hermite interpolant of ``x`` between the last record with
    ``s x > 0`` and the next one, with the torque-free slopes ``dL_b/dt = L_b × J L_b`` at
    both records: error ``O(h⁴)`` in the record spacing ``h`` for a smooth path, bisected to
    round-off on the cubic. A body that starts on the plane (``x(t0) = 0``) therefore first
    flips at ``t0 + T/2`` exactly.

    Parameters
    ----------
    t : array_like, shape (n,)
        Record times, increasing.
    L_body : array_like, shape (n, b, 3)
        Body-frame angular momentum per record and body (non-finite records are allowed
        after a blow-up: nothing after them is a flip).
    inv_inertia : array_like, shape (b, 3)
        Principal inverse moments.
    band : float, optional
        Hysteresis band as a fraction of ``|L_b(t0)|``.

    Returns
    -------
    ndarray, shape (b,)
        Flip times; ``nan`` where no flip completes within the records (a steady spin, a
        spherical body, the separatrix, or a run too short), which a caller comparing with
        the exact motion reads against its ``T/2`` (``inf`` when that never flips).
    """
    tt = as_float_array(t, "t").astype(np.float64)
    L = as_float_array(L_body, "L_body", (3,), finite=False).astype(np.float64)
    J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
    band = as_scalar(band, "band", positive=True)
    if tt.ndim != 1 or tt.shape[0] == 0:
        raise InputError(f"t: expected shape (n,) with n >= 1, got shape {tt.shape}")
    n = tt.shape[0]
    if L.ndim != 3 or L.shape[0] != n:
        raise InputError(f"L_body: expected shape ({n}, b, 3) to match t, got shape {L.shape}")
    nb = L.shape[1]
    if J.shape != (nb, 3):
        raise InputError(f"inv_inertia: expected shape ({nb}, 3) to match L_body, got {J.shape}")
    if not np.all(np.isfinite(L[0])):
        raise InputError("L_body: the first record is not finite")
    cols = np.arange(nb)
    mid = np.argsort(J, axis=-1, kind="stable")[:, 1]
    # x is of degree 0 in L, dx of degree 1 in L and J: scaled by the powers of two of
    # L(t0) and J per body, so that neither |L0| nor L × J L overflows (dx scaled back
    # with the record spacing below).
    e0 = split(L[0])[1]
    L = np.ldexp(L, -e0)
    v, f = split(J)
    norm0 = np.linalg.norm(L[0], axis=-1)
    with np.errstate(all="ignore"):
        x = L[:, cols, mid] / norm0
        dx = np.cross(L, v * L)[:, cols, mid] / norm0
        rec = np.arange(n)[:, None]
        big = np.abs(x) >= band
        a = np.argmax(big, axis=0)
        s = np.sign(x[a, cols])
        after = (s * x <= -band) & (rec > a)
        k = np.argmax(after, axis=0)
        positive = (s * x > 0) & (rec < k)
    j = n - 1 - np.argmax(positive[::-1], axis=0)
    found = big.any(axis=0) & after.any(axis=0)
    out = np.full(nb, np.nan)
    if not np.any(found):
        return out
    b = cols[found]
    j = j[found]
    h = tt[j + 1] - tt[j]
    x0, x1 = x[j, b] * s[b], x[j + 1, b] * s[b]
    # dx 2^(e0 + f) is the slope; times the spacing h, the phase of one record (small).
    shift = (e0 + f)[b, 0]
    m0, m1 = ldexp(dx[j, b] * s[b] * h, shift), ldexp(dx[j + 1, b] * s[b] * h, shift)
    lo, hi = np.zeros(b.size), np.ones(b.size)
    # p(0) = x0 > 0 >= p(1) = x1: bisection keeps the sign change inside [lo, hi]. A run that
    # is blowing up may overflow p; its sign still steers the bisection.
    with np.errstate(all="ignore"):
        for _ in range(60):
            tau = 0.5 * (lo + hi)
            t2, t3 = tau * tau, tau * tau * tau
            p = (
                (2 * t3 - 3 * t2 + 1) * x0
                + (t3 - 2 * t2 + tau) * m0
                + (-2 * t3 + 3 * t2) * x1
                + (t3 - t2) * m1
            )
            pos = p > 0
            lo = np.where(pos, tau, lo)
            hi = np.where(pos, hi, tau)
    out[b] = tt[j] + 0.5 * (lo + hi) * h
    return out

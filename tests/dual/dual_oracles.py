"""Oracles and tolerances shared by the tests of tumble.dual.

Central finite differences (elementwise and full Jacobians), independent of the rule table
they check, and one closeness check that also rejects NaN.
"""

from __future__ import annotations

import numpy as np

EPS = np.finfo(np.float64).eps


# Central differences err by h²|f'''|/6 (truncation) plus eps|f|/h (round-off); the step
# h = eps^(1/3) max(1, |x|) balances them at about eps^(2/3) ≈ 4e-11 times the size of
# the function and its third derivative, which stay below ~100 inside the sampled domains.
FD_STEP = EPS ** (1 / 3)


FD_TOL = 1e-7


# Dual numbers and the closed forms evaluate the same number through a handful of rounded
# operations each: a few ulp apart.
EXACT_TOL = 1e-12


N_POINTS = 40


def central(f, x):
    """Elementwise central difference of an elementwise ``f`` at the array ``x``."""
    h = FD_STEP * np.maximum(1.0, np.abs(x))
    return (f(x + h) - f(x - h)) / (2 * h)


def fd_jacobian(f, x):
    """Central-difference Jacobian of ``f`` at ``x``: shape f(x).shape + x.shape."""
    x = np.asarray(x, dtype=float)
    flat = x.ravel()
    cols = []
    for j in range(flat.size):
        h = FD_STEP * max(1.0, abs(flat[j]))
        e = np.zeros_like(flat)
        e[j] = h
        cols.append((f((flat + e).reshape(x.shape)) - f((flat - e).reshape(x.shape))) / (2 * h))
    out = np.stack(cols, axis=-1)
    return out.reshape(np.shape(f(x)) + x.shape)


def close(actual, expected, tol):
    actual = np.asarray(actual)
    assert not np.any(np.isnan(actual))
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)

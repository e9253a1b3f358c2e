"""Fused chain-rule kernels behind ``tumble.dual.fused``, for the binary rules on duals.

The chain rule of a binary operation is ``d out = c_a d a + c_b d b``. NumPy evaluates it
in three passes with two temporaries over arrays ``k`` times the size of the value; these
kernels do it in one pass with one output, which is what the dual Jacobian's speed rests
on (``docs/dual.md``, ``benchmarks/bench_dual.py``). Two forms of the one formula, for two
regimes: ``lincomb2``, a ufunc, broadcasts anything and costs little to call, but its
generic strided loop is slow on large arrays; ``lincomb2_rows`` takes the partials as rows,
one per perturbation, so that its inner loops run over contiguous memory (8 µs for
3 x 8333 partials with contiguous coefficients, against 15 µs for the ufunc), and costs
a few µs more to call. Neither contracts to a fused multiply-add: they give the same bits.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from tumble._kernels import FLOAT_TYPES, njit


def _lincomb2(ca, pa, cb, pb):
    return ca * pa + cb * pb


lincomb2: np.ufunc
"""``ca * pa + cb * pb`` elementwise: the NumPy ufunc itself, without numba's Python-level
dispatch wrapper (which costs microseconds per call). Built with both float loops when
first imported (:func:`__getattr__`), not when this module is."""


def __getattr__(name: str) -> Any:
    """``lincomb2``, compiled on first access (on-disk cache) rather than at import.

    Both loops at once: NumPy picks the loop from all four operands (Python scalars,
    coefficients and partials of either type), and only with both present does it pick
    the one it would pick for the same operands later.
    """
    if name != "lincomb2":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    signatures = [f"{t}({t}, {t}, {t}, {t})" for t in FLOAT_TYPES]
    ufunc = numba.vectorize(signatures, nopython=True, cache=True)(_lincomb2).ufunc
    globals()["lincomb2"] = ufunc
    return ufunc


@njit
def lincomb2_rows(ca: Any, pa: Any, cb: Any, pb: Any, out: Any) -> Any:
    """``out[j, i] = ca[i] * pa[j, i] + cb[i] * pb[j, i]`` for ``out`` of shape (k, m).

    ``ca`` and ``cb`` have length m or 1, ``pa`` and ``pb`` shape (k, m) or (k, 1); a length
    of 1 broadcasts. The branches on the partials' layout sit outside the inner loops.
    """
    k, m = out.shape
    sa = 1 if ca.shape[0] == m else 0
    sb = 1 if cb.shape[0] == m else 0
    for j in range(k):
        row = out[j]
        if pa.shape[1] == 1:
            a = pa[j, 0]
            if pb.shape[1] == 1:
                b = pb[j, 0]
                for i in range(m):
                    row[i] = ca[i * sa] * a + cb[i * sb] * b
            else:
                rb = pb[j]
                for i in range(m):
                    row[i] = ca[i * sa] * a + cb[i * sb] * rb[i]
        else:
            ra = pa[j]
            if pb.shape[1] == 1:
                b = pb[j, 0]
                for i in range(m):
                    row[i] = ca[i * sa] * ra[i] + cb[i * sb] * b
            else:
                rb = pb[j]
                for i in range(m):
                    row[i] = ca[i * sa] * ra[i] + cb[i * sb] * rb[i]
    return out

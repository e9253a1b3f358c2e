"""Fused chain-rule kernels behind ``tumble.dual.number``, where the rule table is applied.

The chain rule of a binary operation is ``d out = c_a d a + c_b d b``. NumPy evaluates it
in three passes with two temporaries over arrays ``k`` times the size of the value; this
ufunc does it in one pass with one output, which is what the dual Jacobian's speed rests on
(``docs/dual.md``, ``benchmarks/bench_dual.py``). Being a real ufunc, it broadcasts like
any NumPy expression.
"""

from __future__ import annotations

import numba
import numpy as np

from tumble._kernels import FLOAT_TYPES


@numba.vectorize([f"{t}({t}, {t}, {t}, {t})" for t in FLOAT_TYPES], nopython=True, cache=True)
def _lincomb2(ca, pa, cb, pb):
    return ca * pa + cb * pb


lincomb2: np.ufunc = _lincomb2.ufunc
"""``ca * pa + cb * pb`` elementwise: the NumPy ufunc itself, without numba's Python-level
dispatch wrapper (which costs microseconds per call)."""

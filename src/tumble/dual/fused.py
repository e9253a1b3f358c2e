"""The chain rule of a binary operation in one fused pass: ``ca * pa + cb * pb``.

:mod:`tumble.dual.number` evaluates the partials of a binary rule with both arguments
dual through :func:`fused_lincomb2`, the front of the compiled kernels of
:mod:`tumble._kernels.dual`: it picks the kernel that suits the operands' layouts, and
imports the kernels on first use.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_LINCOMB2: list[Callable[..., Any]] = []

FUSED_ROWS_MIN = 8192
"""Fewest partials in a result for which the binary chain rule runs in the row kernel
``lincomb2_rows``; below, the ``lincomb2`` ufunc, cheaper to call, is faster."""


def _as_rows(p: np.ndarray, k: int, shape: tuple[int, ...]) -> np.ndarray | None:
    """Partials ``(k,) + shape`` (C-contiguous) or ``(k, 1, ..., 1)`` as rows ``(k, m)``
    with ``m`` the size or 1; None for other layouts."""
    if p.shape[1:] == shape and p.flags.c_contiguous:
        return p.reshape(k, -1)
    if p.size == k:
        return p.reshape(k, 1)
    return None


def _as_flat(c: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
    """A coefficient of ``shape`` as a flat array (a scalar as length 1) of ``dtype``;
    None for other shapes and dtypes."""
    if c.__class__ is np.ndarray:
        if c.dtype != dtype:
            return None
        if c.shape == shape and (c.ndim <= 1 or c.flags.c_contiguous):
            return c.reshape(-1)
        return c.reshape(1) if c.size == 1 else None
    if isinstance(c, float | int):  # a Python number is weakly typed: it takes dtype
        return np.full(1, c, dtype=dtype)
    return c.reshape(1) if c.dtype == dtype else None  # a NumPy scalar


def fused_lincomb2(ca: Any, pa: Any, cb: Any, pb: Any, k: int, shape: tuple[int, ...]) -> Any:
    """``ca * pa + cb * pb`` for plain coefficients (broadcasting to ``shape``) and
    partials (``(k, ...)``, broadcasting to ``(k,) + shape``) in one fused pass: by the row
    kernel when the result is large and the layouts allow (the usual case), else by the
    ufunc; the two give the same bits. The kernels are imported on first use: importing
    numba (which imports SciPy) waits until a binary operation on duals needs it, so that
    ``import tumble.dual`` stays light and SciPy-free."""
    if not _LINCOMB2:
        from tumble._kernels.dual import lincomb2, lincomb2_rows

        _LINCOMB2.extend((lincomb2, lincomb2_rows))
    size = math.prod(shape)
    if k * size >= FUSED_ROWS_MIN:
        dtype = pa.dtype
        ra = _as_rows(pa, k, shape)
        rb = _as_rows(pb, k, shape) if pb.dtype == dtype else None
        fa, fb = _as_flat(ca, shape, dtype), _as_flat(cb, shape, dtype)
        if ra is not None and rb is not None and fa is not None and fb is not None:
            m = max(ra.shape[1], rb.shape[1], fa.shape[0], fb.shape[0])
            out = _LINCOMB2[1](fa, ra, fb, rb, np.empty((k, m), dtype=dtype))
            return out.reshape((k, *shape) if m == size else (k,) + (1,) * len(shape))
    return _LINCOMB2[0](ca, pa, cb, pb)

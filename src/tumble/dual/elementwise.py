"""Elementwise array functions on duals: ufunc-like, but not ufuncs.

Selection (``where``, ``select``, ``choose``, ``clip``), rounding (``round``,
``around``), ``nan_to_num``, ``sinc`` (its derivative from a series near 0), and the
functions of a point given by a table or a polynomial (``interp``, ``polyval``). Importing
the module registers each implementation (:mod:`tumble.dual.functions` does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tumble.dual.number import (
    Dual,
    as_operand,
    bottom,
    common_npartials,
    full,
    make_dual,
    max_tag,
    pad,
    shape_of,
    split,
)
from tumble.dual.registry import implements, unsupported
from tumble.dual.rules import real_dtype


@implements(np.where)
def _np_where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        value = split(condition, condition.tag)[0] if isinstance(condition, Dual) else condition
        return np.where(value)
    if isinstance(condition, Dual):
        raise TypeError("np.where needs a boolean condition, got a Dual; compare it first")
    x, y = as_operand(x), as_operand(y)
    tag = max_tag([x, y])
    (xv, xp), (yv, yp) = split(x, tag), split(y, tag)
    v = np.where(condition, xv, yv)
    shape = shape_of(v)
    k = common_npartials([(xv, xp), (yv, yp)])
    cond = np.asarray(condition)[(None,) * (len(shape) - np.ndim(condition) + 1)]
    zero = np.zeros((), dtype=real_dtype(v))
    d = np.where(
        cond,
        zero if xp is None else pad(xp, len(shape)),
        zero if yp is None else pad(yp, len(shape)),
    )
    return make_dual(v, full(d, k, shape, v), tag)


@implements(np.clip)
def _np_clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Any:
    unsupported("np.clip", out=out, **kw)
    if a_min is not None:
        a = np.maximum(a, a_min)
    if a_max is not None:
        a = np.minimum(a, a_max)
    return a


@implements(np.round, np.around)
def _np_round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    unsupported("np.round", out=out)
    if not isinstance(a, Dual):
        return np.round(a, decimals)
    # A step function: zero partials, as rint, floor and ceil.
    return np.rint(a) if decimals == 0 else np.rint(a * 10.0**decimals) / 10.0**decimals


@implements(np.nan_to_num)
def _np_nan_to_num(
    x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    if not isinstance(x, Dual):
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
    replaced = np.nan_to_num(bottom(x), nan=nan, posinf=posinf, neginf=neginf)
    return np.where(np.isfinite(x), x, replaced)


@implements(np.sinc)
def _np_sinc(x: Any) -> Any:
    """sin(πx)/(πx), derivative (cos(πx) - sinc x)/x, from its series near 0 (no cancellation)."""
    if not isinstance(x, Dual):
        return np.sinc(x)
    v, d = split(x, x.tag)
    z = math.pi * v
    small = np.abs(z) < 0.5
    zs = np.where(small, z, 0.0)
    # d/dz sin z / z = Σ_{n≥1} (-1)^n 2n z^{2n-1}/(2n+1)!, 8 terms: below 1e-17 relative
    # for |z| < 1/2.
    series = 0.0 * zs
    for n in range(8, 0, -1):
        series = series + (-1) ** n * 2 * n / math.factorial(2 * n + 1) * zs ** (2 * n - 1)
    # Elsewhere (cos(πx) - sinc x)/x, with x reduced mod 2 inside the cosine so that
    # cos(πx) keeps its digits near its zeros (x = 2.5: 17 ulp without the reduction).
    xl = np.where(small, 1.0, v)
    reduced = xl - 2 * np.rint(xl / 2)
    large = (np.cos(math.pi * reduced) - np.sinc(xl)) / xl
    coefficient = np.where(small, math.pi * series, large)
    return make_dual(np.sinc(v), coefficient * pad(d, len(shape_of(v))), x.tag)


@implements(np.select)
def _np_select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    result = as_operand(default)
    # np.select takes the first true condition: apply them from the last one back.
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=True))):
        result = np.where(cond, choice, result)
    return result


@implements(np.choose)
def _np_choose(a: Any, choices: Sequence[Any], out: Any = None, mode: str = "raise") -> Any:
    unsupported("np.choose", out=out)
    if mode != "raise":
        raise TypeError("np.choose on Dual arrays supports mode='raise' only")
    index = np.asarray(a)
    if np.any((index < 0) | (index >= len(choices))):
        raise ValueError("invalid entry in choice array")
    result = as_operand(choices[0])
    for i in range(1, len(choices)):
        result = np.where(index == i, choices[i], result)
    return result


@implements(np.polyval)
def _np_polyval(p: Any, x: Any) -> Any:
    p, x = as_operand(p), as_operand(x)
    result: Any = p[0] + 0.0 * x  # Horner's scheme, in the shape of x
    for i in range(1, shape_of(p)[0]):
        result = result * x + p[i]
    return result


@implements(np.interp)
def _np_interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    if isinstance(xp, Dual) or period is not None or left is not None or right is not None:
        raise TypeError(
            "np.interp on Dual arrays: xp must be plain and left/right/period are not supported"
        )
    xp = np.asarray(xp, dtype=float)
    fp = as_operand(fp)
    xv = bottom(x)
    n = xp.shape[0]
    i = np.clip(np.searchsorted(xp, xv, side="right") - 1, 0, n - 2)
    x0, x1 = xp[i], xp[i + 1]
    f0, f1 = fp[i], fp[i + 1]
    t = (x - x0) / (x1 - x0)
    inside = f0 + t * (f1 - f0)
    return np.where(xv < xp[0], fp[0], np.where(xv > xp[-1], fp[n - 1], inside))

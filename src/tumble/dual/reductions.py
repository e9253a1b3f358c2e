"""Reductions and order statistics on duals, with their derivatives written out.

``sum``, ``mean``, ``var``, ``std``, ``average``, ``prod`` (through the products of all
other elements, exact where some are zero), ``cumsum``, ``cumprod``, ``max`` and ``min``
(ties share the derivative equally), ``ptp``, ``trapezoid``, and the NaN-ignoring
``nansum`` and ``nanmean``; the functions of the values alone (``argmax``, ``argsort``,
``nonzero``, ``searchsorted``...), sorting by the values (``sort``, ``partition``) and the
order statistics built on it (``median``, ``quantile``, ``percentile``). Importing the
module registers each implementation (:mod:`tumble.dual.functions` does).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from tumble.dual.number import Dual, as_operand, bottom, make_dual, shape_of, split
from tumble.dual.registry import HANDLED_FUNCTIONS, implements, unsupported
from tumble.dual.shape import linear, paxes, paxis


def _reduce_axes(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(len(shape)))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    return tuple(int(x) % len(shape) if shape else 0 for x in axes)


@implements(np.sum)
def _np_sum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = True,
) -> Any:
    unsupported("np.sum", dtype=dtype, out=out)
    if not isinstance(a, Dual):
        return np.sum(a, axis=axis, keepdims=keepdims, where=where)
    if initial is not None:
        return _np_sum(a, axis, keepdims=keepdims, where=where) + initial
    nd = len(shape_of(a))
    v, d = split(a, a.tag)
    if where is not True:
        mask = np.broadcast_to(where, shape_of(v))
        # Masked-out elements count as zero: NumPy's where= semantics for a sum.
        v = np.where(mask, v, 0.0)
        d = np.where(mask, d, 0.0)
    return make_dual(
        np.sum(v, axis=axis, keepdims=keepdims),
        np.sum(d, axis=paxes(axis, nd), keepdims=keepdims),
        a.tag,
    )


def _count(shape: tuple[int, ...], axis: Any, where: Any, keepdims: bool) -> Any:
    """Elements per reduced slot: an int, or an array when ``where`` masks some."""
    if where is True:
        return math.prod(shape[i] for i in _reduce_axes(shape, axis))
    return np.sum(np.broadcast_to(where, shape), axis=axis, keepdims=keepdims)


@implements(np.mean)
def _np_mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = True,
) -> Any:
    unsupported("np.mean", dtype=dtype, out=out)
    count = _count(shape_of(a), axis, where, keepdims)
    if np.any(np.asarray(count) == 0):
        # NumPy warns, then divides 0 by 0 (a second, "invalid value" warning) to NaN.
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
    return np.divide(_np_sum(a, axis=axis, keepdims=keepdims, where=where), count)


@implements(np.var)
def _np_var(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: Any = 0,
    keepdims: bool = False,
    *,
    where: Any = True,
    mean: Any = None,
    correction: Any = None,
) -> Any:
    unsupported("np.var", dtype=dtype, out=out, mean=mean)
    if correction is not None:
        ddof = correction
    centre = _np_mean(a, axis=axis, keepdims=True, where=where)
    dev = a - centre
    count = _count(shape_of(a), axis, where, keepdims)
    return np.divide(_np_sum(dev * dev, axis=axis, keepdims=keepdims, where=where), count - ddof)


@implements(np.std)
def _np_std(a: Any, *args: Any, **kwargs: Any) -> Any:
    return np.sqrt(_np_var(a, *args, **kwargs))


@implements(np.average)
def _np_average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False
) -> Any:
    if weights is None:
        avg = _np_mean(a, axis=axis, keepdims=keepdims)
        total = np.broadcast_to(
            np.asarray(_count(shape_of(a), axis, True, keepdims), float), shape_of(avg)
        )
        return (avg, total) if returned else avg
    w = as_operand(weights)
    shape = shape_of(a)
    if shape_of(w) != shape:
        if axis is None or len(shape_of(w)) != 1:
            raise TypeError(
                "np.average on Dual arrays: weights of a different shape need axis= and 1-D weights"
            )
        ax = int(axis) % len(shape)
        w = np.reshape(w, tuple(-1 if i == ax else 1 for i in range(len(shape))))
    total = np.sum(w * np.ones(shape), axis=axis, keepdims=keepdims)
    avg = np.sum(a * w, axis=axis, keepdims=keepdims) / total
    return (avg, total) if returned else avg


def _exclusive_products(v: Any, axis: int) -> Any:
    """prod_{j != i} v_j along ``axis``, without division (exact where some v_j = 0)."""
    n = shape_of(v)[axis]
    ones = np.ones_like(np.take(v, [0], axis=axis)) if n else None
    if not n:
        return v
    left = np.concatenate([ones, np.cumprod(np.take(v, range(n - 1), axis=axis), axis=axis)], axis)
    rev = np.flip(v, axis)
    right = np.concatenate(
        [ones, np.cumprod(np.take(rev, range(n - 1), axis=axis), axis=axis)], axis
    )
    return left * np.flip(right, axis)


@implements(np.prod)
def _np_prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = True,
) -> Any:
    unsupported("np.prod", dtype=dtype, out=out)
    if not isinstance(a, Dual):
        return np.prod(a, axis=axis, keepdims=keepdims, where=where)
    if initial is not None:
        return _np_prod(a, axis, keepdims=keepdims, where=where) * initial
    if where is not True:
        a = np.where(np.broadcast_to(where, shape_of(a)), a, 1.0)
    if axis is None:
        return (
            _np_prod(np.ravel(a), 0, keepdims=False)
            if not keepdims
            else np.reshape(_np_prod(np.ravel(a), 0), (1,) * len(shape_of(a)))
        )
    if isinstance(axis, tuple | list):
        out_ = a
        for ax in sorted((int(x) % len(shape_of(a)) for x in axis), reverse=True):
            out_ = _np_prod(out_, ax, keepdims=keepdims)
        return out_
    ax = int(axis) % len(shape_of(a))
    v, d = split(a, a.tag)
    others = _exclusive_products(v, ax)
    value = np.prod(v, axis=ax, keepdims=keepdims)
    dp = np.sum(others * d, axis=ax + 1, keepdims=keepdims)
    return make_dual(value, dp, a.tag)


@implements(np.cumsum)
def _np_cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    unsupported("np.cumsum", dtype=dtype, out=out)
    if axis is None:
        a, axis = np.ravel(a), 0
    nd = len(shape_of(a))
    return linear(
        lambda v: np.cumsum(v, axis=axis), lambda d: np.cumsum(d, axis=paxis(axis, nd)), a
    )


@implements(np.cumprod)
def _np_cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    unsupported("np.cumprod", dtype=dtype, out=out)
    if axis is None:
        a, axis = np.ravel(a), 0
    ax = int(axis) % len(shape_of(a))
    n = shape_of(a)[ax]
    if n == 0:
        return np.copy(a)
    # Running products, one multiplication per position: each a dual operation, so the
    # partials (and nested partials) follow by the product rule.
    running = [np.take(a, 0, axis=ax)]
    for i in range(1, n):
        running.append(running[-1] * np.take(a, i, axis=ax))
    return np.stack(running, axis=ax)


def _extreme(
    name: str, a: Any, axis: Any, keepdims: bool, initial: Any, where: Any, pick: Any
) -> Any:
    if where is not True:
        if initial is None:
            raise ValueError(
                f"reduction operation '{name}' does not have an identity, so to use a "
                "where mask one has to specify 'initial'"
            )
        # Masked-out elements become the initial value, which has no partials.
        a = np.where(np.broadcast_to(where, shape_of(a)), a, initial)
    if initial is not None:
        better = np.maximum if name == "max" else np.minimum
        return better(_extreme(name, a, axis, keepdims, None, True, pick), initial)
    if not isinstance(a, Dual):
        return pick(a, axis=axis, keepdims=keepdims)
    v, d = split(a, a.tag)
    value = pick(v, axis=axis, keepdims=True)
    # Ties share the derivative equally (as maximum/minimum give 1/2 each at a tie).
    hit = v == value
    weight = hit / np.sum(hit, axis=axis, keepdims=True)
    dp = np.sum(weight * d, axis=paxes(axis, len(shape_of(v))), keepdims=True)
    if not keepdims:
        axes = _reduce_axes(shape_of(v), axis)
        value = np.squeeze(value, axes)
        dp = np.squeeze(dp, tuple(x + 1 for x in axes))
    return make_dual(value, dp, a.tag)


def _register_extreme(pick: Any, *funcs: Any) -> None:
    name = pick.__name__

    def impl(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = True,
    ) -> Any:
        unsupported(f"np.{name}", out=out)
        return _extreme(name, a, axis, keepdims, initial, where, pick)

    for f in funcs:
        HANDLED_FUNCTIONS[f] = impl


_register_extreme(np.max, np.max, np.amax)
_register_extreme(np.min, np.min, np.amin)


@implements(np.ptp)
def _np_ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    unsupported("np.ptp", out=out)
    return np.max(a, axis, keepdims=keepdims) - np.min(a, axis, keepdims=keepdims)


@implements(np.trapezoid)
def _np_trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    y = as_operand(y)
    n = shape_of(y)[axis]
    hi = np.take(y, range(1, n), axis=axis)
    lo = np.take(y, range(n - 1), axis=axis)
    if x is None:
        widths: Any = dx
    else:
        x = as_operand(x)
        widths = np.diff(x, axis=axis if len(shape_of(x)) > 1 else 0)
        if len(shape_of(x)) == 1 and len(shape_of(y)) > 1:
            ax = axis % len(shape_of(y))
            widths = np.reshape(
                widths, tuple(-1 if j == ax else 1 for j in range(len(shape_of(y))))
            )
    return np.sum(widths * (hi + lo) / 2.0, axis=axis)


def _register_nan_ignoring(reduce: Any, func: Any) -> None:
    def impl(
        a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False
    ) -> Any:
        unsupported(f"np.{func.__name__}", dtype=dtype, out=out)
        return reduce(a, axis=axis, keepdims=keepdims, where=~np.isnan(a))

    HANDLED_FUNCTIONS[func] = impl


_register_nan_ignoring(_np_sum, np.nansum)
_register_nan_ignoring(_np_mean, np.nanmean)


# -- functions of the values only, sorting and order statistics ------------------------


def _on_value(func: Any) -> Any:
    """A function of the values only (indices, comparisons): run on the plain value."""

    def impl(a: Any, *args: Any, **kwargs: Any) -> Any:
        return func(bottom(a), *args, **kwargs)

    return impl


for _f in (
    np.argmax,
    np.argmin,
    np.argsort,
    np.argpartition,
    np.nonzero,
    np.flatnonzero,
    np.count_nonzero,
):
    HANDLED_FUNCTIONS[_f] = _on_value(_f)


@implements(np.searchsorted)
def _np_searchsorted(a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Any:
    return np.searchsorted(bottom(a), bottom(v), side=side, sorter=sorter)


@implements(np.sort)
def _np_sort(
    a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None
) -> Any:
    unsupported("np.sort", order=order)
    if axis is None:
        a, axis = np.ravel(a), -1
    idx = np.argsort(bottom(a), axis=axis, kind="stable")
    return np.take_along_axis(a, idx, axis=axis)


@implements(np.partition)
def _np_partition(
    a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    unsupported("np.partition", order=order)
    if axis is None:
        a, axis = np.ravel(a), -1
    idx = np.argpartition(bottom(a), kth, axis=axis)
    return np.take_along_axis(a, idx, axis=axis)


@implements(np.median)
def _np_median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    unsupported("np.median", out=out)
    if axis is None:
        result = _np_median(np.ravel(a), 0)
        return np.reshape(result, (1,) * len(shape_of(a))) if keepdims else result
    ax = int(axis) % len(shape_of(a))
    n = shape_of(a)[ax]
    s = np.sort(a, axis=ax)
    mid = np.take(s, [(n - 1) // 2, n // 2], axis=ax)
    return np.mean(mid, axis=ax, keepdims=keepdims)


@implements(np.quantile)
def _np_quantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    **kw: Any,
) -> Any:
    unsupported("np.quantile", out=out, **kw)
    if method != "linear":
        raise TypeError("np.quantile on Dual arrays supports method='linear' only")
    if axis is None:
        a, axis = np.ravel(a), 0
    q = np.asarray(q, dtype=float)
    if np.any((q < 0) | (q > 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    ax = int(axis) % len(shape_of(a))
    n = shape_of(a)[ax]
    s = np.moveaxis(np.sort(a, axis=ax), ax, 0)
    # NumPy's linear method: position q (n - 1), between the two order statistics around it.
    pos = q * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    frac = (pos - lo).reshape(q.shape + (1,) * (len(shape_of(s)) - 1))
    low, high = s[lo], s[hi]
    result = low + frac * (high - low)
    if keepdims:
        result = np.expand_dims(result, q.ndim + ax)
    return result


@implements(np.percentile)
def _np_percentile(a: Any, q: Any, axis: Any = None, **kw: Any) -> Any:
    return _np_quantile(a, np.asarray(q, dtype=float) / 100.0, axis, **kw)

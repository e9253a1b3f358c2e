"""NumPy array functions on duals: the ``__array_function__`` implementations.

Importing this module registers each implementation in
:data:`tumble.dual.registry.HANDLED_FUNCTIONS` under the NumPy function it replaces (and
``np.matmul``, a ufunc that is not elementwise, under itself). They fall in three kinds:

- shape functions (``reshape``, ``transpose``, ``stack``, ``where``...), which act on the
  value as NumPy does and on the partials ``(k,) + S`` the same way, one axis further on;
- ``sum``, ``mean`` and ``linalg.norm``, with their derivatives written out
  (``d|x| = x·dx / |x|``);
- multilinear functions (``dot``, ``matmul``, ``einsum``, ``tensordot``, ``cross``...),
  all through one ``einsum`` rule: ``d f(a, b) = f(da, b) + f(a, db)``.
"""

from __future__ import annotations

import math
import string
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tumble.dual.number import (
    Dual,
    as_operand,
    common_npartials,
    full,
    make_dual,
    max_tag,
    pad,
    shape_of,
    split,
)
from tumble.dual.registry import HANDLED_FUNCTIONS
from tumble.dual.rules import real_dtype, safe_ratio

__all__ = ["render_table"]


def _unsupported(name: str, **given: Any) -> None:
    for key, value in given.items():
        if value is not None and value is not False:
            raise TypeError(f"{name} on Dual arrays does not support the argument {key}={value!r}")


def _implements(*funcs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        for f in funcs:
            HANDLED_FUNCTIONS[f] = impl
        return impl

    return register


def _linear(fn: Callable[[Any], Any], pfn: Callable[[Any], Any], a: Any) -> Any:
    """A function linear in ``a``: ``fn`` on the value, ``pfn`` on the (k,)+S partials."""
    if not isinstance(a, Dual):
        return fn(a)
    v, d = split(a, a.tag)
    return make_dual(fn(v), pfn(d), a.tag)


def _paxis(axis: int, ndim: int) -> int:
    """Axis of the value (already validated by NumPy) -> axis of the (k,)+S partials."""
    return axis % ndim + 1 if ndim else 1


def _paxes(axis: Any, ndim: int) -> Any:
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, tuple | list):
        return tuple(_paxis(a, ndim) for a in axis)
    return _paxis(axis, ndim)


@_implements(np.shape)
def _np_shape(a: Any) -> tuple[int, ...]:
    return shape_of(a)


@_implements(np.ndim)
def _np_ndim(a: Any) -> int:
    return len(shape_of(a))


@_implements(np.size)
def _np_size(a: Any, axis: Any = None) -> int:
    shape = shape_of(a)
    return math.prod(shape) if axis is None else shape[axis]


@_implements(np.copy)
def _np_copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    return _linear(np.copy, np.copy, a)


@_implements(np.reshape)
def _np_reshape(a: Any, shape: Any = None, order: str = "C", **kw: Any) -> Any:
    if shape is None:
        shape = kw.pop("newshape", None)
    _unsupported("np.reshape", **kw)
    if order != "C":
        raise TypeError("np.reshape on Dual arrays supports order='C' only")
    if not isinstance(a, Dual):
        return np.reshape(a, shape)
    value, d = split(a, a.tag)
    v = np.reshape(value, shape)
    return make_dual(v, np.reshape(d, (a.npartials, *shape_of(v))), a.tag)


@_implements(np.ravel)
def _np_ravel(a: Any, order: str = "C") -> Any:
    return _np_reshape(a, (-1,), order=order)


@_implements(np.transpose)
def _np_transpose(a: Any, axes: Any = None) -> Any:
    nd = len(shape_of(a))
    order = tuple(range(nd))[::-1] if axes is None else tuple(a_ % nd for a_ in axes)
    return _linear(
        lambda v: np.transpose(v, order), lambda d: np.transpose(d, (0, *(i + 1 for i in order))), a
    )


@_implements(np.moveaxis)
def _np_moveaxis(a: Any, source: Any, destination: Any) -> Any:
    nd = len(shape_of(a))
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    return _linear(
        lambda v: np.moveaxis(v, src, dst),
        lambda d: np.moveaxis(d, [_paxis(s, nd) for s in src], [_paxis(t, nd) for t in dst]),
        a,
    )


@_implements(np.swapaxes)
def _np_swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    nd = len(shape_of(a))
    return _linear(
        lambda v: np.swapaxes(v, axis1, axis2),
        lambda d: np.swapaxes(d, _paxis(axis1, nd), _paxis(axis2, nd)),
        a,
    )


@_implements(np.squeeze)
def _np_squeeze(a: Any, axis: Any = None) -> Any:
    shape = shape_of(a)
    if axis is None:
        axis = tuple(i for i, n in enumerate(shape) if n == 1)
    return _linear(
        lambda v: np.squeeze(v, axis), lambda d: np.squeeze(d, _paxes(axis, len(shape))), a
    )


@_implements(np.expand_dims)
def _np_expand_dims(a: Any, axis: Any) -> Any:
    nd = len(shape_of(a))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    new = nd + len(axes)
    return _linear(
        lambda v: np.expand_dims(v, axis),
        lambda d: np.expand_dims(d, tuple(_paxis(x, new) for x in axes)),
        a,
    )


@_implements(np.broadcast_to)
def _np_broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not isinstance(array, Dual):
        return np.broadcast_to(array, shape)
    v, d = split(array, array.tag)
    return make_dual(
        np.broadcast_to(v, shape),
        np.broadcast_to(pad(d, len(shape)), (array.npartials, *shape)),
        array.tag,
    )


def _like(a: Any, fill: Any) -> Dual:
    return make_dual(
        np.full(a.shape, fill, dtype=real_dtype(a)),
        np.zeros((a.npartials, *a.shape), dtype=real_dtype(a)),
        a.tag,
    )


@_implements(np.zeros_like)
def _np_zeros_like(
    a: Any, dtype: Any = None, order: Any = None, subok: Any = None, shape: Any = None
) -> Any:
    _unsupported("np.zeros_like", dtype=dtype, shape=shape)
    return _like(a, 0.0)


@_implements(np.empty_like)
def _np_empty_like(
    a: Any, dtype: Any = None, order: Any = None, subok: Any = None, shape: Any = None
) -> Any:
    # Zero-filled rather than uninitialised: a dual's partials must never be garbage.
    _unsupported("np.empty_like", dtype=dtype, shape=shape)
    return _like(a, 0.0)


@_implements(np.ones_like)
def _np_ones_like(
    a: Any, dtype: Any = None, order: Any = None, subok: Any = None, shape: Any = None
) -> Any:
    _unsupported("np.ones_like", dtype=dtype, shape=shape)
    return _like(a, 1.0)


@_implements(np.full_like)
def _np_full_like(
    a: Any,
    fill_value: Any,
    dtype: Any = None,
    order: Any = None,
    subok: Any = None,
    shape: Any = None,
) -> Any:
    _unsupported("np.full_like", dtype=dtype, shape=shape)
    if not isinstance(a, Dual):
        return np.full_like(a, fill_value)
    result = _like(a, 0.0)
    result[...] = fill_value
    return result


def _reduce_axes(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(len(shape)))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    return tuple(int(x) % len(shape) if shape else 0 for x in axes)


@_implements(np.sum)
def _np_sum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = True,
) -> Any:
    _unsupported("np.sum", dtype=dtype, out=out)
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
        np.sum(d, axis=_paxes(axis, nd), keepdims=keepdims),
        a.tag,
    )


def _count(shape: tuple[int, ...], axis: Any, where: Any, keepdims: bool) -> Any:
    """Elements per reduced slot: an int, or an array when ``where`` masks some."""
    if where is True:
        return math.prod(shape[i] for i in _reduce_axes(shape, axis))
    return np.sum(np.broadcast_to(where, shape), axis=axis, keepdims=keepdims)


@_implements(np.mean)
def _np_mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = True,
) -> Any:
    _unsupported("np.mean", dtype=dtype, out=out)
    count = _count(shape_of(a), axis, where, keepdims)
    if np.any(np.asarray(count) == 0):
        # NumPy warns, then divides 0 by 0 (a second, "invalid value" warning) to NaN.
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=2)
    return np.divide(_np_sum(a, axis=axis, keepdims=keepdims, where=where), count)


@_implements(np.var)
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
    _unsupported("np.var", dtype=dtype, out=out, mean=mean)
    if correction is not None:
        ddof = correction
    centre = _np_mean(a, axis=axis, keepdims=True, where=where)
    dev = a - centre
    count = _count(shape_of(a), axis, where, keepdims)
    return np.divide(_np_sum(dev * dev, axis=axis, keepdims=keepdims, where=where), count - ddof)


@_implements(np.std)
def _np_std(a: Any, *args: Any, **kwargs: Any) -> Any:
    return np.sqrt(_np_var(a, *args, **kwargs))


@_implements(np.average)
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


@_implements(np.prod)
def _np_prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = True,
) -> Any:
    _unsupported("np.prod", dtype=dtype, out=out)
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


@_implements(np.cumsum)
def _np_cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    _unsupported("np.cumsum", dtype=dtype, out=out)
    if axis is None:
        a, axis = np.ravel(a), 0
    nd = len(shape_of(a))
    return _linear(
        lambda v: np.cumsum(v, axis=axis), lambda d: np.cumsum(d, axis=_paxis(axis, nd)), a
    )


@_implements(np.cumprod)
def _np_cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    _unsupported("np.cumprod", dtype=dtype, out=out)
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
    dp = np.sum(weight * d, axis=_paxes(axis, len(shape_of(v))), keepdims=True)
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
        _unsupported(f"np.{name}", out=out)
        return _extreme(name, a, axis, keepdims, initial, where, pick)

    for f in funcs:
        HANDLED_FUNCTIONS[f] = impl


_register_extreme(np.max, np.max, np.amax)
_register_extreme(np.min, np.min, np.amin)


@_implements(np.ptp)
def _np_ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    _unsupported("np.ptp", out=out)
    return np.max(a, axis, keepdims=keepdims) - np.min(a, axis, keepdims=keepdims)


def _bottom(x: Any) -> Any:
    """The plain value at the bottom of a (nested) dual."""
    while isinstance(x, Dual):
        x = x._v
    return x


def _on_value(func: Any) -> Any:
    """A function of the values only (indices, comparisons): run on the plain value."""

    def impl(a: Any, *args: Any, **kwargs: Any) -> Any:
        return func(_bottom(a), *args, **kwargs)

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


@_implements(np.searchsorted)
def _np_searchsorted(a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Any:
    return np.searchsorted(_bottom(a), _bottom(v), side=side, sorter=sorter)


@_implements(np.sort)
def _np_sort(
    a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None
) -> Any:
    _unsupported("np.sort", order=order)
    if axis is None:
        a, axis = np.ravel(a), -1
    idx = np.argsort(_bottom(a), axis=axis, kind="stable")
    return np.take_along_axis(a, idx, axis=axis)


@_implements(np.partition)
def _np_partition(
    a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    _unsupported("np.partition", order=order)
    if axis is None:
        a, axis = np.ravel(a), -1
    idx = np.argpartition(_bottom(a), kth, axis=axis)
    return np.take_along_axis(a, idx, axis=axis)


@_implements(np.median)
def _np_median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    _unsupported("np.median", out=out)
    if axis is None:
        result = _np_median(np.ravel(a), 0)
        return np.reshape(result, (1,) * len(shape_of(a))) if keepdims else result
    ax = int(axis) % len(shape_of(a))
    n = shape_of(a)[ax]
    s = np.sort(a, axis=ax)
    mid = np.take(s, [(n - 1) // 2, n // 2], axis=ax)
    return np.mean(mid, axis=ax, keepdims=keepdims)


def _gather(arrays: Sequence[Any]) -> tuple[int, list[Any], list[Any]]:
    """Tag, values and full partials of a list of duals and arrays to be joined."""
    items = [as_operand(x) for x in arrays]
    tag = max_tag(items)
    parts = [split(x, tag) for x in items]
    k = common_npartials(parts)
    values = [v for v, _ in parts]
    partials = [full(p, k, shape_of(v), v) for v, p in parts]
    return tag, values, partials


@_implements(np.stack)
def _np_stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, **kw: Any) -> Any:
    _unsupported("np.stack", out=out, **kw)
    tag, values, partials = _gather(list(arrays))
    v = np.stack(values, axis=axis)
    # Stack right after the k axis (contiguous block copies), then view the new axis where
    # the value has it: stacking straight into a trailing axis is a slow strided scatter.
    d = np.moveaxis(np.stack(partials, axis=1), 1, _paxis(axis, np.ndim(v)))
    return make_dual(v, d, tag)


@_implements(np.concatenate)
def _np_concatenate(arrays: Sequence[Any], axis: Any = 0, out: Any = None, **kw: Any) -> Any:
    _unsupported("np.concatenate", out=out, **kw)
    items = list(arrays)
    if axis is None:
        items = [np.ravel(x) for x in items]
        axis = 0
    tag, values, partials = _gather(items)
    v = np.concatenate(values, axis=axis)
    return make_dual(v, np.concatenate(partials, axis=_paxis(axis, np.ndim(v))), tag)


@_implements(np.where)
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


@_implements(np.clip)
def _np_clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Any:
    _unsupported("np.clip", out=out, **kw)
    if a_min is not None:
        a = np.maximum(a, a_min)
    if a_max is not None:
        a = np.minimum(a, a_max)
    return a


@_implements(np.linalg.norm)
def _np_norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    nd = len(shape_of(x))
    if not isinstance(x, Dual):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    if isinstance(axis, int) or (axis is None and nd == 1 and ord is not None):
        return _vector_norm(x, ord, -1 if axis is None else axis, keepdims)
    if ord is None or ord == "fro":
        return _two_norm(x, axis, keepdims)
    if axis is None:
        if nd != 2:
            raise ValueError("Improper number of dimensions to norm.")
        axis = (0, 1)
    return _matrix_norm(x, ord, tuple(axis), keepdims)


def _two_norm(x: Any, axis: Any, keepdims: bool) -> Any:
    nd = len(shape_of(x))
    axes = _paxes(axis, nd)
    v, d = split(x, x.tag)
    n = np.linalg.norm(v, axis=axis, keepdims=True)
    # d|x| = x·dx / |x|; at x = 0 the partials are 0, the minimal-norm subgradient.
    d = safe_ratio(np.sum(v * d, axis=axes, keepdims=True), n)
    if not keepdims:
        drop = axes if isinstance(axes, tuple) else (axes,)
        n = np.squeeze(n, tuple(a - 1 for a in drop))
        d = np.squeeze(d, drop)
    return make_dual(n, d, x.tag)


def _vector_norm(x: Any, ord: Any, axis: int, keepdims: bool) -> Any:
    if ord is None or ord == 2:
        return _two_norm(x, axis, keepdims)
    if ord == np.inf:
        return np.max(np.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(np.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        # The number of non-zero entries: a step function, zero partials.
        return np.sum(np.abs(x) > 0, axis=axis, keepdims=keepdims) + 0.0 * np.sum(
            x, axis=axis, keepdims=keepdims
        )
    if ord == 1:
        return np.sum(np.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    return np.sum(np.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x: Any, ord: Any, axis: tuple[int, int], keepdims: bool) -> Any:
    nd = len(shape_of(x))
    row, col = (a % nd for a in axis)
    if ord in (1, -1, np.inf, -np.inf):
        summed, over = (row, col) if ord in (1, -1) else (col, row)
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        pick = np.max if ord in (1, np.inf) else np.min
        result = pick(sums, axis=over, keepdims=True)
    elif ord in ("nuc", 2, -2):
        s = np.linalg.svdvals(np.moveaxis(x, (row, col), (-2, -1)))
        reduce: Any = {"nuc": np.sum, 2: np.max, -2: np.min}[ord]
        result = np.expand_dims(reduce(s, axis=-1), (row, col) if row < col else (col, row))
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices")
    return result if keepdims else np.squeeze(result, (row, col))


# -- multilinear functions, all through einsum ----------------------------------------


def _parse_einsum(subscripts: str, count: int) -> tuple[list[str], str]:
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs = subscripts
        letters = lhs.replace(".", "").replace(",", "")
        out = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1)
        )
    inputs = lhs.split(",")
    if len(inputs) != count:
        raise ValueError(
            f"einsum subscripts {subscripts!r} name {len(inputs)} operands, got {count}"
        )
    return inputs, out


def _multilinear(
    value_fn: Callable[..., Any], subscripts: str, operands: Sequence[Any], optimize: Any = False
) -> Any:
    """A function linear in each operand, given as einsum subscripts."""
    ops = [as_operand(x) for x in operands]
    if not any(isinstance(x, Dual) for x in ops):
        return value_fn(*ops)
    inputs, out = _parse_einsum(subscripts, len(ops))
    tag = max_tag(ops)
    parts = [split(x, tag) for x in ops]
    values = [v for v, _ in parts]
    v = value_fn(*values)
    k = common_npartials(parts)
    z = next(c for c in string.ascii_letters if c not in subscripts)
    d = None
    for i, (_, p) in enumerate(parts):
        if p is None:
            continue
        spec = ",".join(z + s if j == i else s for j, s in enumerate(inputs)) + "->" + z + out
        term = np.einsum(spec, *values[:i], p, *values[i + 1 :], optimize=optimize)
        d = term if d is None else d + term
    return make_dual(v, full(d, k, shape_of(v), v), tag)


@_implements(np.einsum)
def _np_einsum(
    subscripts: Any, *operands: Any, out: Any = None, optimize: Any = False, **kw: Any
) -> Any:
    _unsupported("np.einsum", out=out, **kw)
    if not isinstance(subscripts, str):
        raise TypeError("np.einsum on Dual arrays needs string subscripts such as 'ij,j->i'")
    return _multilinear(
        lambda *vs: np.einsum(subscripts, *vs, optimize=optimize), subscripts, operands, optimize
    )


def _letters(n: int, skip: str = "") -> str:
    return "".join(c for c in string.ascii_letters if c not in skip)[:n]


@_implements(np.matmul)
def _np_matmul(a: Any, b: Any, out: Any = None, **kw: Any) -> Any:
    _unsupported("np.matmul", out=out, **kw)
    na, nb = len(shape_of(a)), len(shape_of(b))
    if na == 0 or nb == 0:
        raise ValueError("matmul: input operand does not have enough dimensions")
    sa = "...mn" if na >= 2 else "n"
    sb = "...np" if nb >= 2 else "n"
    so = ("..." if max(na, nb) >= 2 else "") + ("m" if na >= 2 else "") + ("p" if nb >= 2 else "")
    return _multilinear(np.matmul, f"{sa},{sb}->{so}", [a, b])


@_implements(np.dot)
def _np_dot(a: Any, b: Any, out: Any = None) -> Any:
    _unsupported("np.dot", out=out)
    na, nb = len(shape_of(a)), len(shape_of(b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    la = _letters(na)
    lb = _letters(nb, la)
    contract = -2 if nb >= 2 else -1
    lb = lb.replace(lb[contract], la[-1])
    lo = la[:-1] + lb.replace(la[-1], "")
    return _multilinear(np.dot, f"{la},{lb}->{lo}", [a, b])


@_implements(np.inner)
def _np_inner(a: Any, b: Any) -> Any:
    na, nb = len(shape_of(a)), len(shape_of(b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    la = _letters(na)
    lb = _letters(nb - 1, la) + la[-1]
    return _multilinear(np.inner, f"{la},{lb}->{la[:-1]}{lb[:-1]}", [a, b])


@_implements(np.outer)
def _np_outer(a: Any, b: Any, out: Any = None) -> Any:
    _unsupported("np.outer", out=out)
    return _multilinear(
        lambda x, y: np.einsum("i,j->ij", x, y), "i,j->ij", [np.ravel(a), np.ravel(b)]
    )


@_implements(np.vdot)
def _np_vdot(a: Any, b: Any) -> Any:
    return _multilinear(lambda x, y: np.einsum("i,i->", x, y), "i,i->", [np.ravel(a), np.ravel(b)])


@_implements(np.tensordot)
def _np_tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    na, nb = len(shape_of(a)), len(shape_of(b))
    if isinstance(axes, int):
        ax_a, ax_b = list(range(na - axes, na)), list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, int) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, int) else list(ax_b)
    la = list(_letters(na))
    lb = list(_letters(nb, "".join(la)))
    for i, j in zip(ax_a, ax_b, strict=True):
        lb[j % nb] = la[i % na]
    shared = {la[i % na] for i in ax_a}
    lo = "".join(c for c in la + lb if c not in shared)
    spec = f"{''.join(la)},{''.join(lb)}->{lo}"
    return _multilinear(lambda x, y: np.tensordot(x, y, axes), spec, [a, b])


@_implements(np.cross)
def _np_cross(
    a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None
) -> Any:
    if (axisa, axisb, axisc, axis) not in ((-1, -1, -1, None), (-1, -1, -1, -1)):
        raise TypeError("np.cross on Dual arrays supports vectors on the last axis only")
    a, b = as_operand(a), as_operand(b)
    tag = max_tag([a, b])
    (av, ap), (bv, bp) = split(a, tag), split(b, tag)
    v = np.cross(av, bv)
    shape = shape_of(v)
    k = common_npartials([(av, ap), (bv, bp)])
    nd = max(len(shape_of(av)), len(shape_of(bv)))
    d = None
    if ap is not None:
        d = np.cross(pad(ap, nd), bv)
    if bp is not None:
        term = np.cross(av, pad(bp, nd))
        d = term if d is None else d + term
    return make_dual(v, full(d, k, shape, v), tag)


# -- linear functions applied to each partial slice ------------------------------------


def _each(func: Any, a: Any, *args: Any, **kwargs: Any) -> Any:
    """``func`` linear in ``a`` (a flip, a roll, a take...): on the value, and on each of
    the ``k`` partial slices, which are arrays of the value's shape. Results that are lists
    (``split``, ``gradient``) become lists of duals."""
    if not isinstance(a, Dual):
        return func(a, *args, **kwargs)
    v, d = split(a, a.tag)
    k = shape_of(d)[0]
    value = func(v, *args, **kwargs)
    slices = [func(full(d, k, shape_of(v), v)[j], *args, **kwargs) for j in range(k)]
    if isinstance(value, list | tuple):
        return [
            make_dual(
                val, np.stack([s[i] for s in slices]) if k else np.zeros((0, *shape_of(val))), a.tag
            )
            for i, val in enumerate(value)
        ]
    dp = np.stack(slices) if k else np.zeros((0, *shape_of(value)), dtype=real_dtype(value))
    return make_dual(value, dp, a.tag)


def _register_each(*funcs: Any) -> None:
    for f in funcs:

        def impl(a: Any, *args: Any, _f: Any = f, **kwargs: Any) -> Any:
            return _each(_f, a, *args, **kwargs)

        HANDLED_FUNCTIONS[f] = impl


_register_each(
    np.flip,
    np.fliplr,
    np.flipud,
    np.rot90,
    np.roll,
    np.tile,
    np.repeat,
    np.take,
    np.diag,
    np.diagonal,
    np.tril,
    np.triu,
    np.compress,
    np.delete,
    np.gradient,
    np.split,
    np.array_split,
    np.hsplit,
    np.vsplit,
    np.dsplit,
    np.trace,
)


@_implements(np.diff)
def _np_diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    # prepend/append join first: their partials (zero for plain arrays) join too.
    parts = [x for x in (prepend, a, append) if x is not None]
    if len(parts) > 1:
        nd = len(shape_of(as_operand(a)))
        ax = axis % nd
        parts = [
            np.broadcast_to(x, tuple(1 if j == ax else s for j, s in enumerate(shape_of(a))))
            if np.ndim(x) == 0
            else x
            for x in parts
        ]
        a = np.concatenate(parts, axis=axis)
    return _each(lambda x: np.diff(x, n, axis=axis), a)


@_implements(np.take_along_axis)
def _np_take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    return _each(lambda x: np.take_along_axis(x, indices, axis=axis), arr)


@_implements(np.pad)
def _np_pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    if not isinstance(array, Dual):
        return np.pad(array, pad_width, mode, **kwargs)
    v, d = split(array, array.tag)
    k = shape_of(d)[0]
    value = np.pad(v, pad_width, mode, **kwargs)
    # A constant border does not depend on the input: its partials are zero, whatever
    # constant the value is padded with.
    dkw = {key: val for key, val in kwargs.items() if key != "constant_values"}
    dfull = full(d, k, shape_of(v), v)
    dp = np.stack([np.pad(dfull[j], pad_width, mode, **dkw) for j in range(k)])
    return make_dual(value, dp, array.tag)


@_implements(np.round, np.around)
def _np_round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    _unsupported("np.round", out=out)
    if not isinstance(a, Dual):
        return np.round(a, decimals)
    # A step function: zero partials, as rint, floor and ceil.
    return np.rint(a) if decimals == 0 else np.rint(a * 10.0**decimals) / 10.0**decimals


@_implements(np.nan_to_num)
def _np_nan_to_num(
    x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    if not isinstance(x, Dual):
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
    replaced = np.nan_to_num(_bottom(x), nan=nan, posinf=posinf, neginf=neginf)
    return np.where(np.isfinite(x), x, replaced)


@_implements(np.sinc)
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


# -- joining and splitting, through concatenate ----------------------------------------


def _atleast(n: int, arrays: Sequence[Any]) -> Any:
    out = []
    for x in arrays:
        x = as_operand(x)
        shape = shape_of(x)
        if len(shape) >= n:
            out.append(x)
        elif n == 1:
            out.append(np.reshape(x, (1,)))
        elif n == 2:
            out.append(np.reshape(x, (1, *shape) if shape else (1, 1)))
        else:
            new = {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
            out.append(np.reshape(x, new))
    return out[0] if len(out) == 1 else out


@_implements(np.atleast_1d)
def _np_atleast_1d(*arrays: Any) -> Any:
    return _atleast(1, arrays)


@_implements(np.atleast_2d)
def _np_atleast_2d(*arrays: Any) -> Any:
    return _atleast(2, arrays)


@_implements(np.atleast_3d)
def _np_atleast_3d(*arrays: Any) -> Any:
    return _atleast(3, arrays)


def _as_list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else [x]


@_implements(np.hstack)
def _np_hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    _unsupported("np.hstack", dtype=dtype)
    arrays = _as_list(_atleast(1, list(tup)))
    return np.concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1)


@_implements(np.vstack)
def _np_vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    _unsupported("np.vstack", dtype=dtype)
    return np.concatenate(_as_list(_atleast(2, list(tup))), axis=0)


@_implements(np.dstack)
def _np_dstack(tup: Sequence[Any]) -> Any:
    return np.concatenate(_as_list(_atleast(3, list(tup))), axis=2)


@_implements(np.column_stack)
def _np_column_stack(tup: Sequence[Any]) -> Any:
    cols = []
    for x in tup:
        x = as_operand(x)
        cols.append(np.reshape(x, (-1, 1)) if len(shape_of(x)) < 2 else x)
    return np.concatenate(cols, axis=1)


@_implements(np.append)
def _np_append(arr: Any, values: Any, axis: Any = None) -> Any:
    if axis is None:
        return np.concatenate([np.ravel(arr), np.ravel(values)])
    return np.concatenate([arr, values], axis=axis)


@_implements(np.block)
def _np_block(arrays: Any) -> Any:
    def depth(x: Any) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) else 0

    total = depth(arrays)

    def build(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            return x
        parts = [build(e, level + 1) for e in x]
        nd = max(total, *(len(shape_of(as_operand(p))) for p in parts))
        parts = [
            np.reshape(p, (1,) * (nd - len(shape_of(as_operand(p)))) + shape_of(as_operand(p)))
            for p in parts
        ]
        return np.concatenate(parts, axis=-(total - level))

    return build(arrays, 0)


@_implements(np.broadcast_arrays)
def _np_broadcast_arrays(*args: Any, subok: bool = False) -> Any:
    shape = np.broadcast_shapes(*(shape_of(as_operand(a)) for a in args))
    return tuple(np.broadcast_to(a, shape) for a in args)


@_implements(np.insert)
def _np_insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    arr, values = as_operand(arr), as_operand(values)
    tag = max_tag([arr, values])
    (av, ap), (vv, vp) = split(arr, tag), split(values, tag)
    k = common_npartials([(av, ap), (vv, vp)])
    value = np.insert(av, obj, vv, axis=axis)
    apf, vpf = full(ap, k, shape_of(av), av), full(vp, k, shape_of(vv), vv)
    dp = np.stack([np.insert(apf[j], obj, vpf[j], axis=axis) for j in range(k)])
    return make_dual(value, dp, tag)


@_implements(np.select)
def _np_select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    result = as_operand(default)
    # np.select takes the first true condition: apply them from the last one back.
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=True))):
        result = np.where(cond, choice, result)
    return result


@_implements(np.choose)
def _np_choose(a: Any, choices: Sequence[Any], out: Any = None, mode: str = "raise") -> Any:
    _unsupported("np.choose", out=out)
    if mode != "raise":
        raise TypeError("np.choose on Dual arrays supports mode='raise' only")
    index = np.asarray(a)
    if np.any((index < 0) | (index >= len(choices))):
        raise ValueError("invalid entry in choice array")
    result = as_operand(choices[0])
    for i in range(1, len(choices)):
        result = np.where(index == i, choices[i], result)
    return result


@_implements(np.kron)
def _np_kron(a: Any, b: Any) -> Any:
    a, b = as_operand(a), as_operand(b)
    nd = max(len(shape_of(a)), len(shape_of(b)))
    a = np.reshape(a, (1,) * (nd - len(shape_of(a))) + shape_of(a))
    b = np.reshape(b, (1,) * (nd - len(shape_of(b))) + shape_of(b))
    la, lb = _letters(nd), _letters(nd, _letters(nd))
    spec = f"{la},{lb}->" + "".join(x + y for x, y in zip(la, lb, strict=True))
    outer = np.einsum(spec, a, b)
    return np.reshape(outer, tuple(x * y for x, y in zip(shape_of(a), shape_of(b), strict=True)))


@_implements(np.convolve)
def _np_convolve(a: Any, v: Any, mode: Any = "full") -> Any:
    a, v = as_operand(a), as_operand(v)
    if not (isinstance(a, Dual) or isinstance(v, Dual)):
        return np.convolve(a, v, mode)
    tag = max_tag([a, v])
    (av, ap), (vv, vp) = split(a, tag), split(v, tag)
    k = common_npartials([(av, ap), (vv, vp)])
    value = np.convolve(av, vv, mode)
    slices = []
    for j in range(k):
        term: Any = 0.0
        if ap is not None:
            term = term + np.convolve(full(ap, k, shape_of(av), av)[j], vv, mode)
        if vp is not None:
            term = term + np.convolve(av, full(vp, k, shape_of(vv), vv)[j], mode)
        slices.append(term)
    return make_dual(value, full(np.stack(slices), k, shape_of(value), value), tag)


@_implements(np.polyval)
def _np_polyval(p: Any, x: Any) -> Any:
    p, x = as_operand(p), as_operand(x)
    result: Any = p[0] + 0.0 * x  # Horner's scheme, in the shape of x
    for i in range(1, shape_of(p)[0]):
        result = result * x + p[i]
    return result


@_implements(np.interp)
def _np_interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    if isinstance(xp, Dual) or period is not None or left is not None or right is not None:
        raise TypeError(
            "np.interp on Dual arrays: xp must be plain and left/right/period are not supported"
        )
    xp = np.asarray(xp, dtype=float)
    fp = as_operand(fp)
    xv = _bottom(x)
    n = xp.shape[0]
    i = np.clip(np.searchsorted(xp, xv, side="right") - 1, 0, n - 2)
    x0, x1 = xp[i], xp[i + 1]
    f0, f1 = fp[i], fp[i + 1]
    t = (x - x0) / (x1 - x0)
    inside = f0 + t * (f1 - f0)
    return np.where(xv < xp[0], fp[0], np.where(xv > xp[-1], fp[n - 1], inside))


@_implements(np.trapezoid)
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


# -- linear algebra: derivatives written with functions that run on duals themselves --


def _sym_lower(d: Any) -> Any:
    """The symmetric matrix a LAPACK routine reads from the lower triangle of ``d``
    (``eigh``, ``eigvalsh``, ``cholesky`` look at nothing else)."""
    lower = np.tril(d, -1)
    return lower + np.swapaxes(lower, -1, -2) + _diag_part(d)


def _diag_part(d: Any) -> Any:
    n = shape_of(d)[-1]
    return d * np.eye(n)


def _matrix_partials(a: Any) -> tuple[Any, Any, int]:
    v, d = split(a, a.tag)
    k = shape_of(d)[0]
    return v, full(d, k, shape_of(v), v), k


@_implements(np.linalg.inv)
def _np_inv(a: Any) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.inv(a)
    v, d, _ = _matrix_partials(a)
    inv = np.linalg.inv(v)
    # d(A⁻¹) = -A⁻¹ dA A⁻¹
    return make_dual(inv, -(inv @ d @ inv), a.tag)


@_implements(np.linalg.det)
def _np_det(a: Any) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.det(a)
    v, d, _ = _matrix_partials(a)
    det = np.linalg.det(v)
    # Jacobi's formula: d det A = det A · tr(A⁻¹ dA) (A invertible).
    return make_dual(det, det * np.einsum("...ij,k...ji->k...", np.linalg.inv(v), d), a.tag)


@_implements(np.linalg.slogdet)
def _np_slogdet(a: Any) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.slogdet(a)
    v, d, _ = _matrix_partials(a)
    sign, logdet = np.linalg.slogdet(v)
    dlog = np.einsum("...ij,k...ji->k...", np.linalg.inv(v), d)
    return type(np.linalg.slogdet(np.eye(1)))(_bottom(sign), make_dual(logdet, dlog, a.tag))


@_implements(np.linalg.solve)
def _np_solve(a: Any, b: Any) -> Any:
    a, b = as_operand(a), as_operand(b)
    tag = max_tag([a, b])
    (av, ap), (bv, bp) = split(a, tag), split(b, tag)
    k = common_npartials([(av, ap), (bv, bp)])
    vector = len(shape_of(bv)) == 1
    bcol = bv[..., None] if vector else bv
    x = np.linalg.solve(av, bcol)
    # A x = b  =>  A dx = db - dA x
    rhs = 0.0
    if bp is not None:
        db = full(bp, k, shape_of(bv), bv)
        rhs = rhs + (db[..., None] if vector else db)
    if ap is not None:
        # Padded so that a's partials broadcast against x, which may have more leading
        # axes (inside a nested differentiation, x carries the outer partials' axis).
        rhs = rhs - pad(full(ap, k, shape_of(av), av), len(shape_of(x))) @ x
    dx = np.linalg.solve(av, rhs)
    if vector:
        x, dx = x[..., 0], dx[..., 0]
    return make_dual(x, full(dx, k, shape_of(x), x), tag)


@_implements(np.linalg.eigvalsh)
def _np_eigvalsh(a: Any, UPLO: str = "L") -> Any:
    return _np_eigh(a, UPLO)[0]


@_implements(np.linalg.eigh)
def _np_eigh(a: Any, UPLO: Any = "L") -> Any:
    if not isinstance(a, Dual):
        return np.linalg.eigh(a, UPLO)
    if UPLO != "L":
        raise TypeError("np.linalg.eigh on Dual arrays supports UPLO='L' only")
    v, d, _ = _matrix_partials(a)
    w, vec = np.linalg.eigh(v)
    ds = np.swapaxes(vec, -1, -2) @ _sym_lower(d) @ vec  # Vᵀ dS V
    n = shape_of(w)[-1]
    # dλ_i = v_iᵀ dS v_i; dv_i = Σ_{j≠i} v_j (v_jᵀ dS v_i)/(λ_i - λ_j) (distinct eigenvalues)
    dw = np.einsum("...ii->...i", ds)
    gap = w[..., None, :] - w[..., :, None]
    off = 1.0 - np.eye(n)
    f = off / np.where(off > 0, gap, 1.0)
    dvec = vec @ (f * ds)
    result: Any = type(np.linalg.eigh(np.eye(1)))
    return result(make_dual(w, dw, a.tag), make_dual(vec, dvec, a.tag))


@_implements(np.linalg.cholesky)
def _np_cholesky(a: Any, *, upper: bool = False) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.cholesky(a, upper=upper)
    v, d, _ = _matrix_partials(a)
    low = np.linalg.cholesky(v)
    inv = np.linalg.inv(low)
    # dL = L Φ(L⁻¹ dS L⁻ᵀ), Φ: the lower triangle with the diagonal halved.
    x = inv @ _sym_lower(d) @ np.swapaxes(inv, -1, -2)
    phi = np.tril(x, -1) + 0.5 * _diag_part(x)
    result = make_dual(low, low @ phi, a.tag)
    return np.swapaxes(result, -1, -2) if upper else result


@_implements(np.linalg.svdvals)
def _np_svdvals(x: Any) -> Any:
    return _np_svd(x, compute_uv=False)


@_implements(np.linalg.svd)
def _np_svd(
    a: Any, full_matrices: Any = True, compute_uv: Any = True, hermitian: Any = False
) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    if compute_uv:
        raise TypeError(
            "np.linalg.svd on Dual arrays gives the singular values only (compute_uv=False, "
            "or np.linalg.svdvals): the derivatives of singular vectors are not implemented"
        )
    v, d, _ = _matrix_partials(a)
    if isinstance(v, Dual):
        # Nested: singular vectors of a dual are not differentiated, so go through the
        # eigenvalues of the smaller Gram matrix, σ² = eig(A Aᵀ) (distinct, non-zero σ).
        m, n = shape_of(v)[-2:]
        gram = a @ np.swapaxes(a, -1, -2) if m <= n else np.swapaxes(a, -1, -2) @ a
        return np.flip(np.sqrt(np.linalg.eigvalsh(gram)), axis=-1)
    u, s, vh = np.linalg.svd(v, full_matrices=False)
    # dσ_i = u_iᵀ dA v_i (distinct singular values)
    ds = np.einsum("...ji,k...jl,...il->k...i", u, d, vh)
    return make_dual(s, ds, a.tag)


@_implements(np.linalg.multi_dot)
def _np_multi_dot(arrays: Sequence[Any], *, out: Any = None) -> Any:
    _unsupported("np.linalg.multi_dot", out=out)
    result = arrays[0]
    for x in arrays[1:]:
        result = np.dot(result, x)
    return result


@_implements(np.linalg.matrix_power)
def _np_matrix_power(a: Any, n: int) -> Any:
    if n < 0:
        a, n = np.linalg.inv(a), -n
    result = np.broadcast_to(np.eye(shape_of(a)[-1]), shape_of(a)) + 0.0 * a
    base = a
    while n:
        if n & 1:
            result = result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


@_implements(np.vecdot, np.linalg.vecdot)
def _np_vecdot(x1: Any, x2: Any, /, *, axis: int = -1, **kw: Any) -> Any:
    _unsupported("np.vecdot", **kw)
    return np.sum(np.moveaxis(x1, axis, -1) * np.moveaxis(x2, axis, -1), axis=-1)


def _register_nan_ignoring(reduce: Any, func: Any) -> None:
    def impl(
        a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False
    ) -> Any:
        _unsupported(f"np.{func.__name__}", dtype=dtype, out=out)
        return reduce(a, axis=axis, keepdims=keepdims, where=~np.isnan(a))

    HANDLED_FUNCTIONS[func] = impl


_register_nan_ignoring(_np_sum, np.nansum)
_register_nan_ignoring(_np_mean, np.nanmean)


@_implements(np.quantile)
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
    _unsupported("np.quantile", out=out, **kw)
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


@_implements(np.percentile)
def _np_percentile(a: Any, q: Any, axis: Any = None, **kw: Any) -> Any:
    return _np_quantile(a, np.asarray(q, dtype=float) / 100.0, axis, **kw)


# -- the supported-function table of docs/dual.md ---------------------------------------


def _describe_derivative(d: Any) -> str:
    from tumble.dual.rules import MINUS_ONE, NOT_DIFFERENTIABLE, ONE, ZERO, Partner

    if d is ONE:
        return "1"
    if d is MINUS_ONE:
        return "−1"
    if d is ZERO:
        return "0"
    if d is NOT_DIFFERENTIABLE:
        return "none (parameter)"
    if isinstance(d, Partner):
        return repr(d)
    return "rule"


def render_table() -> str:
    """The tables of supported functions in ``docs/dual.md``, generated from the rule
    tables (NumPy's :data:`~tumble.dual.rules.RULES`, SciPy's
    :data:`~tumble.dual.special.SPECIAL_RULES`) and the registered array functions; a
    test keeps the page equal to this."""
    from tumble.dual.registry import ufunc_name
    from tumble.dual.rules import PREDICATES, RULES
    from tumble.dual.special import SPECIAL_RULES

    lines = [
        "| ufunc | derivative per argument | note or source |",
        "|---|---|---|",
    ]
    for table in (RULES, SPECIAL_RULES):
        for ufunc, rule in sorted(table.items(), key=lambda item: ufunc_name(item[0])):
            name = ufunc_name(ufunc)
            derivs = ", ".join(_describe_derivative(d) for d in rule.derivs)
            outputs = f" ({rule.nout} outputs)" if rule.nout > 1 else ""
            lines.append(f"| `{name}`{outputs} | {derivs} | {rule.source} |")
    predicates = ", ".join(f"`{ufunc_name(u)}`" for u in sorted(PREDICATES, key=ufunc_name))
    arrays = ", ".join(
        sorted(
            {
                "`np."
                + ("linalg." if "linalg" in (getattr(f, "__module__", "") or "") else "")
                + f.__name__
                + "`"
                for f in HANDLED_FUNCTIONS
            }
        )
    )
    return "\n".join(
        [
            *lines,
            "",
            f"On the value only, returning plain arrays: {predicates}.",
            "",
            f"Array functions ({len({id(f) for f in HANDLED_FUNCTIONS})}): {arrays}.",
        ]
    )

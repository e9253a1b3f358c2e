"""Shape functions on duals: they act on the value as NumPy does and on the partials
``(k,) + S`` the same way, one axis further on.

Reshaping and moving axes (``reshape``, ``transpose``, ``moveaxis``, ``squeeze``...), the
``*_like`` constructors, joining (``stack``, ``concatenate``, ``hstack``, ``block``,
``insert``...), and the functions linear in their argument that run on each of the ``k``
partial slices as on the value (``flip``, ``roll``, ``take``, ``split``, ``diff``,
``pad``...). Importing the module registers each implementation
(:mod:`tumble.dual.functions` does).

:func:`linear`, :func:`paxis` and :func:`paxes` serve the other modules of the array
functions and are not exported.
"""

from __future__ import annotations

import math
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
from tumble.dual.registry import HANDLED_FUNCTIONS, implements, unsupported
from tumble.dual.rules import real_dtype


def linear(fn: Callable[[Any], Any], pfn: Callable[[Any], Any], a: Any) -> Any:
    """A function linear in ``a``: ``fn`` on the value, ``pfn`` on the (k,)+S partials."""
    if not isinstance(a, Dual):
        return fn(a)
    v, d = split(a, a.tag)
    return make_dual(fn(v), pfn(d), a.tag)


def paxis(axis: int, ndim: int) -> int:
    """Axis of the value (already validated by NumPy) -> axis of the (k,)+S partials."""
    return axis % ndim + 1 if ndim else 1


def paxes(axis: Any, ndim: int) -> Any:
    """Axes of the value (an int, a sequence, or None for all) -> those of the partials."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, tuple | list):
        return tuple(paxis(a, ndim) for a in axis)
    return paxis(axis, ndim)


@implements(np.shape)
def _np_shape(a: Any) -> tuple[int, ...]:
    return shape_of(a)


@implements(np.ndim)
def _np_ndim(a: Any) -> int:
    return len(shape_of(a))


@implements(np.size)
def _np_size(a: Any, axis: Any = None) -> int:
    shape = shape_of(a)
    return math.prod(shape) if axis is None else shape[axis]


@implements(np.copy)
def _np_copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    return linear(np.copy, np.copy, a)


@implements(np.reshape)
def _np_reshape(a: Any, shape: Any = None, order: str = "C", **kw: Any) -> Any:
    if shape is None:
        shape = kw.pop("newshape", None)
    unsupported("np.reshape", **kw)
    if order != "C":
        raise TypeError("np.reshape on Dual arrays supports order='C' only")
    if not isinstance(a, Dual):
        return np.reshape(a, shape)
    value, d = split(a, a.tag)
    v = np.reshape(value, shape)
    return make_dual(v, np.reshape(d, (a.npartials, *shape_of(v))), a.tag)


@implements(np.ravel)
def _np_ravel(a: Any, order: str = "C") -> Any:
    return _np_reshape(a, (-1,), order=order)


@implements(np.transpose)
def _np_transpose(a: Any, axes: Any = None) -> Any:
    nd = len(shape_of(a))
    order = tuple(range(nd))[::-1] if axes is None else tuple(a_ % nd for a_ in axes)
    return linear(
        lambda v: np.transpose(v, order), lambda d: np.transpose(d, (0, *(i + 1 for i in order))), a
    )


@implements(np.moveaxis)
def _np_moveaxis(a: Any, source: Any, destination: Any) -> Any:
    nd = len(shape_of(a))
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    return linear(
        lambda v: np.moveaxis(v, src, dst),
        lambda d: np.moveaxis(d, [paxis(s, nd) for s in src], [paxis(t, nd) for t in dst]),
        a,
    )


@implements(np.swapaxes)
def _np_swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    nd = len(shape_of(a))
    return linear(
        lambda v: np.swapaxes(v, axis1, axis2),
        lambda d: np.swapaxes(d, paxis(axis1, nd), paxis(axis2, nd)),
        a,
    )


@implements(np.squeeze)
def _np_squeeze(a: Any, axis: Any = None) -> Any:
    shape = shape_of(a)
    if axis is None:
        axis = tuple(i for i, n in enumerate(shape) if n == 1)
    return linear(
        lambda v: np.squeeze(v, axis), lambda d: np.squeeze(d, paxes(axis, len(shape))), a
    )


@implements(np.expand_dims)
def _np_expand_dims(a: Any, axis: Any) -> Any:
    nd = len(shape_of(a))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    new = nd + len(axes)
    return linear(
        lambda v: np.expand_dims(v, axis),
        lambda d: np.expand_dims(d, tuple(paxis(x, new) for x in axes)),
        a,
    )


@implements(np.broadcast_to)
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


@implements(np.zeros_like)
def _np_zeros_like(
    a: Any, dtype: Any = None, order: Any = None, subok: Any = None, shape: Any = None
) -> Any:
    unsupported("np.zeros_like", dtype=dtype, shape=shape)
    return _like(a, 0.0)


@implements(np.empty_like)
def _np_empty_like(
    a: Any, dtype: Any = None, order: Any = None, subok: Any = None, shape: Any = None
) -> Any:
    # Zero-filled rather than uninitialised: a dual's partials must never be garbage.
    unsupported("np.empty_like", dtype=dtype, shape=shape)
    return _like(a, 0.0)


@implements(np.ones_like)
def _np_ones_like(
    a: Any, dtype: Any = None, order: Any = None, subok: Any = None, shape: Any = None
) -> Any:
    unsupported("np.ones_like", dtype=dtype, shape=shape)
    return _like(a, 1.0)


@implements(np.full_like)
def _np_full_like(
    a: Any,
    fill_value: Any,
    dtype: Any = None,
    order: Any = None,
    subok: Any = None,
    shape: Any = None,
) -> Any:
    unsupported("np.full_like", dtype=dtype, shape=shape)
    if not isinstance(a, Dual):
        return np.full_like(a, fill_value)
    result = _like(a, 0.0)
    result[...] = fill_value
    return result


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


@implements(np.diff)
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


@implements(np.take_along_axis)
def _np_take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    return _each(lambda x: np.take_along_axis(x, indices, axis=axis), arr)


@implements(np.pad)
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


# -- joining and splitting, through concatenate ----------------------------------------


def _gather(arrays: Sequence[Any]) -> tuple[int, list[Any], list[Any]]:
    """Tag, values and full partials of a list of duals and arrays to be joined."""
    items = [as_operand(x) for x in arrays]
    tag = max_tag(items)
    parts = [split(x, tag) for x in items]
    k = common_npartials(parts)
    values = [v for v, _ in parts]
    partials = [full(p, k, shape_of(v), v) for v, p in parts]
    return tag, values, partials


@implements(np.stack)
def _np_stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, **kw: Any) -> Any:
    unsupported("np.stack", out=out, **kw)
    tag, values, partials = _gather(list(arrays))
    v = np.stack(values, axis=axis)
    # Stack right after the k axis (contiguous block copies), then view the new axis where
    # the value has it: stacking straight into a trailing axis is a slow strided scatter.
    d = np.moveaxis(np.stack(partials, axis=1), 1, paxis(axis, np.ndim(v)))
    return make_dual(v, d, tag)


@implements(np.concatenate)
def _np_concatenate(arrays: Sequence[Any], axis: Any = 0, out: Any = None, **kw: Any) -> Any:
    unsupported("np.concatenate", out=out, **kw)
    items = list(arrays)
    if axis is None:
        items = [np.ravel(x) for x in items]
        axis = 0
    tag, values, partials = _gather(items)
    v = np.concatenate(values, axis=axis)
    return make_dual(v, np.concatenate(partials, axis=paxis(axis, np.ndim(v))), tag)


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


@implements(np.atleast_1d)
def _np_atleast_1d(*arrays: Any) -> Any:
    return _atleast(1, arrays)


@implements(np.atleast_2d)
def _np_atleast_2d(*arrays: Any) -> Any:
    return _atleast(2, arrays)


@implements(np.atleast_3d)
def _np_atleast_3d(*arrays: Any) -> Any:
    return _atleast(3, arrays)


def _as_list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else [x]


@implements(np.hstack)
def _np_hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    unsupported("np.hstack", dtype=dtype)
    arrays = _as_list(_atleast(1, list(tup)))
    return np.concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1)


@implements(np.vstack)
def _np_vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    unsupported("np.vstack", dtype=dtype)
    return np.concatenate(_as_list(_atleast(2, list(tup))), axis=0)


@implements(np.dstack)
def _np_dstack(tup: Sequence[Any]) -> Any:
    return np.concatenate(_as_list(_atleast(3, list(tup))), axis=2)


@implements(np.column_stack)
def _np_column_stack(tup: Sequence[Any]) -> Any:
    cols = []
    for x in tup:
        x = as_operand(x)
        cols.append(np.reshape(x, (-1, 1)) if len(shape_of(x)) < 2 else x)
    return np.concatenate(cols, axis=1)


@implements(np.append)
def _np_append(arr: Any, values: Any, axis: Any = None) -> Any:
    if axis is None:
        return np.concatenate([np.ravel(arr), np.ravel(values)])
    return np.concatenate([arr, values], axis=axis)


@implements(np.block)
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


@implements(np.broadcast_arrays)
def _np_broadcast_arrays(*args: Any, subok: bool = False) -> Any:
    shape = np.broadcast_shapes(*(shape_of(as_operand(a)) for a in args))
    return tuple(np.broadcast_to(a, shape) for a in args)


@implements(np.insert)
def _np_insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    arr, values = as_operand(arr), as_operand(values)
    tag = max_tag([arr, values])
    (av, ap), (vv, vp) = split(arr, tag), split(values, tag)
    k = common_npartials([(av, ap), (vv, vp)])
    value = np.insert(av, obj, vv, axis=axis)
    apf, vpf = full(ap, k, shape_of(av), av), full(vp, k, shape_of(vv), vv)
    dp = np.stack([np.insert(apf[j], obj, vpf[j], axis=axis) for j in range(k)])
    return make_dual(value, dp, tag)

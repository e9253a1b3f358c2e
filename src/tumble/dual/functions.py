"""NumPy array functions on duals: the ``__array_function__`` implementations.

Importing this module registers each implementation in
:data:`tumble.dual.number.HANDLED_FUNCTIONS` under the NumPy function it replaces (and
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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tumble.dual.number import (
    HANDLED_FUNCTIONS,
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
from tumble.dual.rules import real_dtype, safe_ratio

__all__: list[str] = []


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


@_implements(np.sum)
def _np_sum(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    _unsupported("np.sum", dtype=dtype, out=out, **kw)
    nd = len(shape_of(a))
    return _linear(
        lambda v: np.sum(v, axis=axis, keepdims=keepdims),
        lambda d: np.sum(d, axis=_paxes(axis, nd), keepdims=keepdims),
        a,
    )


@_implements(np.mean)
def _np_mean(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    _unsupported("np.mean", dtype=dtype, out=out, **kw)
    shape = shape_of(a)
    axes = range(len(shape)) if axis is None else axis if isinstance(axis, tuple | list) else [axis]
    count = math.prod(shape[i] for i in axes)
    return _np_sum(a, axis=axis, keepdims=keepdims) / count


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
    reduces_one_axis = isinstance(axis, int) or (axis is None and nd == 1)
    if not (ord is None or ord == "fro" or (ord == 2 and reduces_one_axis)):
        raise TypeError(
            f"np.linalg.norm on Dual arrays supports the 2-norm and Frobenius norm only, got "
            f"ord={ord!r}"
        )
    if not isinstance(x, Dual):
        return np.linalg.norm(x, axis=axis, keepdims=keepdims)
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

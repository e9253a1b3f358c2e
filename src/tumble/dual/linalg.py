"""Linear algebra on duals.

Multilinear functions (``einsum``, ``matmul``, ``dot``, ``inner``, ``outer``, ``vdot``,
``tensordot``, ``kron``, ``cross``, ``convolve``) by one rule,
``d f(a, b) = f(da, b) + f(a, db)``, most of them through ``einsum``; ``linalg.norm``
(``d|x| = x·dx / |x|``); and the matrix functions (``inv``, ``det``, ``slogdet``,
``solve``, ``eigh``, ``cholesky``, ``svdvals``...), whose derivatives are written with
functions that run on duals themselves, so that they nest. Importing the module registers
each implementation (:mod:`tumble.dual.functions` does).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
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
from tumble.dual.rules import safe_ratio
from tumble.dual.shape import paxes


@implements(np.linalg.norm)
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
    axes = paxes(axis, nd)
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


@implements(np.einsum)
def _np_einsum(
    subscripts: Any, *operands: Any, out: Any = None, optimize: Any = False, **kw: Any
) -> Any:
    unsupported("np.einsum", out=out, **kw)
    if not isinstance(subscripts, str):
        raise TypeError("np.einsum on Dual arrays needs string subscripts such as 'ij,j->i'")
    return _multilinear(
        lambda *vs: np.einsum(subscripts, *vs, optimize=optimize), subscripts, operands, optimize
    )


def _letters(n: int, skip: str = "") -> str:
    return "".join(c for c in string.ascii_letters if c not in skip)[:n]


@implements(np.matmul)
def _np_matmul(a: Any, b: Any, out: Any = None, **kw: Any) -> Any:
    unsupported("np.matmul", out=out, **kw)
    na, nb = len(shape_of(a)), len(shape_of(b))
    if na == 0 or nb == 0:
        raise ValueError("matmul: input operand does not have enough dimensions")
    sa = "...mn" if na >= 2 else "n"
    sb = "...np" if nb >= 2 else "n"
    so = ("..." if max(na, nb) >= 2 else "") + ("m" if na >= 2 else "") + ("p" if nb >= 2 else "")
    return _multilinear(np.matmul, f"{sa},{sb}->{so}", [a, b])


@implements(np.dot)
def _np_dot(a: Any, b: Any, out: Any = None) -> Any:
    unsupported("np.dot", out=out)
    na, nb = len(shape_of(a)), len(shape_of(b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    la = _letters(na)
    lb = _letters(nb, la)
    contract = -2 if nb >= 2 else -1
    lb = lb.replace(lb[contract], la[-1])
    lo = la[:-1] + lb.replace(la[-1], "")
    return _multilinear(np.dot, f"{la},{lb}->{lo}", [a, b])


@implements(np.inner)
def _np_inner(a: Any, b: Any) -> Any:
    na, nb = len(shape_of(a)), len(shape_of(b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    la = _letters(na)
    lb = _letters(nb - 1, la) + la[-1]
    return _multilinear(np.inner, f"{la},{lb}->{la[:-1]}{lb[:-1]}", [a, b])


@implements(np.outer)
def _np_outer(a: Any, b: Any, out: Any = None) -> Any:
    unsupported("np.outer", out=out)
    return _multilinear(
        lambda x, y: np.einsum("i,j->ij", x, y), "i,j->ij", [np.ravel(a), np.ravel(b)]
    )


@implements(np.vdot)
def _np_vdot(a: Any, b: Any) -> Any:
    return _multilinear(lambda x, y: np.einsum("i,i->", x, y), "i,i->", [np.ravel(a), np.ravel(b)])


@implements(np.tensordot)
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


@implements(np.cross)
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


@implements(np.kron)
def _np_kron(a: Any, b: Any) -> Any:
    a, b = as_operand(a), as_operand(b)
    nd = max(len(shape_of(a)), len(shape_of(b)))
    a = np.reshape(a, (1,) * (nd - len(shape_of(a))) + shape_of(a))
    b = np.reshape(b, (1,) * (nd - len(shape_of(b))) + shape_of(b))
    la, lb = _letters(nd), _letters(nd, _letters(nd))
    spec = f"{la},{lb}->" + "".join(x + y for x, y in zip(la, lb, strict=True))
    outer = np.einsum(spec, a, b)
    return np.reshape(outer, tuple(x * y for x, y in zip(shape_of(a), shape_of(b), strict=True)))


@implements(np.convolve)
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


@implements(np.linalg.inv)
def _np_inv(a: Any) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.inv(a)
    v, d, _ = _matrix_partials(a)
    inv = np.linalg.inv(v)
    # d(A⁻¹) = -A⁻¹ dA A⁻¹
    return make_dual(inv, -(inv @ d @ inv), a.tag)


@implements(np.linalg.det)
def _np_det(a: Any) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.det(a)
    v, d, _ = _matrix_partials(a)
    det = np.linalg.det(v)
    # Jacobi's formula: d det A = det A · tr(A⁻¹ dA) (A invertible).
    return make_dual(det, det * np.einsum("...ij,k...ji->k...", np.linalg.inv(v), d), a.tag)


@implements(np.linalg.slogdet)
def _np_slogdet(a: Any) -> Any:
    if not isinstance(a, Dual):
        return np.linalg.slogdet(a)
    v, d, _ = _matrix_partials(a)
    sign, logdet = np.linalg.slogdet(v)
    dlog = np.einsum("...ij,k...ji->k...", np.linalg.inv(v), d)
    return type(np.linalg.slogdet(np.eye(1)))(bottom(sign), make_dual(logdet, dlog, a.tag))


@implements(np.linalg.solve)
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


@implements(np.linalg.eigvalsh)
def _np_eigvalsh(a: Any, UPLO: str = "L") -> Any:
    return _np_eigh(a, UPLO)[0]


@implements(np.linalg.eigh)
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


@implements(np.linalg.cholesky)
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


@implements(np.linalg.svdvals)
def _np_svdvals(x: Any) -> Any:
    return _np_svd(x, compute_uv=False)


@implements(np.linalg.svd)
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


@implements(np.linalg.multi_dot)
def _np_multi_dot(arrays: Sequence[Any], *, out: Any = None) -> Any:
    unsupported("np.linalg.multi_dot", out=out)
    result = arrays[0]
    for x in arrays[1:]:
        result = np.dot(result, x)
    return result


@implements(np.linalg.matrix_power)
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


@implements(np.vecdot, np.linalg.vecdot)
def _np_vecdot(x1: Any, x2: Any, /, *, axis: int = -1, **kw: Any) -> Any:
    unsupported("np.vecdot", **kw)
    return np.sum(np.moveaxis(x1, axis, -1) * np.moveaxis(x2, axis, -1), axis=-1)

"""The dual-number array type: a value plus ``k`` partials per element, tagged, and its
arithmetic.

:class:`Dual` is ``value + Σ_j ε_j partials[..., j]`` with ``ε_i ε_j = 0``. Ufuncs reach
:meth:`Dual.__array_ufunc__` and go through the rule table of :mod:`tumble.dual.rules`
(found by :func:`~tumble.dual.registry.rule_of`), applied here: the value by the ufunc,
the partials by the chain rule, NaN-safe (:mod:`tumble.dual.settings`) and, for a binary
rule, in one fused pass (:mod:`tumble.dual.fused`). Array functions reach
:meth:`Dual.__array_function__` and go through
:data:`~tumble.dual.registry.HANDLED_FUNCTIONS`, which :mod:`tumble.dual.functions` fills.
The ndarray-like methods (``.T``, ``.sum``...) call the NumPy functions, so they take the
same path.

The type and the application of the rule table are one module because each needs the
other: the arithmetic operators go straight to the rule application (skipping NumPy's
override dispatch, on the hot path of every dual operation), and the rule application
builds duals.

Tags keep nested differentiations apart: arithmetic between duals of different tags nests
them, the larger tag outside, its value and partials duals of the smaller tag.

Besides the type, this module holds the helpers that the other modules of the package use
on "things that may be duals" (:func:`split`, :func:`full`, :func:`make_dual`...); they
work in the internal layout, partials ``(k,) + S`` with the ``k`` axis first, trust their
operands, and are not exported (``__all__`` is the type, its function registry and
:func:`nan_safe`, which live in :mod:`~tumble.dual.registry` and
:mod:`~tumble.dual.settings`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tumble._errors import InputError
from tumble._validate import as_float_array, as_int
from tumble.dual.fused import fused_lincomb2
from tumble.dual.registry import HANDLED_FUNCTIONS, function_name, rule_of, ufunc_name
from tumble.dual.rules import (
    FINITE_DERIVATIVES,
    MINUS_ONE,
    NOT_DIFFERENTIABLE,
    ONE,
    PLAIN_OPERANDS,
    PREDICATES,
    RULES,
    ZERO,
    Coefficient,
    Partner,
    Rule,
    real_dtype,
)
from tumble.dual.settings import EVERY_COEFFICIENT, NAN_SAFE, nan_safe

# The drivers' switch lived here before settings.py; its old path keeps working.
from tumble.dual.settings import checking_every_coefficient as checking_every_coefficient

# The helpers on "things that may be duals" (split, full, make_dual...) serve the other
# modules of the package and are not exported: the API is the type and nan_safe.
__all__ = ["HANDLED_FUNCTIONS", "Dual", "nan_safe"]


# --------------------------------------------------------------------------------------
# NaN-safe products
# --------------------------------------------------------------------------------------


def _all_finite(c: Any) -> bool:
    """Whether ``c`` (a coefficient: array, scalar or dual) is finite throughout."""
    if c.__class__ is np.ndarray:
        # One reduction instead of an isfinite temporary: NaN or ±inf anywhere makes the
        # sum non-finite; an overflowing sum of finite values only takes the careful path.
        # Both are expected here, so NumPy's warnings about them are not the caller's.
        with np.errstate(over="ignore", invalid="ignore"):
            return bool(np.isfinite(np.add.reduce(c, axis=None)))
    if isinstance(c, Dual):
        return _all_finite(c._v) and _all_finite(c._d)
    if isinstance(c, np.floating | float | int):
        return math.isfinite(c)
    return True


def _is_zero(p: Any) -> Any:
    """Where ``p`` is exactly zero, including every partial of a nested dual."""
    if isinstance(p, Dual):
        return _is_zero(p._v) & np.all(_is_zero(p._d), axis=0)
    return p == 0


def times(c: Any, p: Any, check: bool = True) -> Any:
    """``c * p`` for a coefficient ``c`` and partials ``p``, NaN-safe: where ``p`` is zero
    the product is zero even if ``c`` is infinite or NaN (when :func:`nan_safe` is on and
    ``check``)."""
    if check and NAN_SAFE.get() and not _all_finite(c):
        with np.errstate(invalid="ignore"):
            return np.where(_is_zero(p), np.zeros((), dtype=real_dtype(p)), c * p)
    return c * p


# --------------------------------------------------------------------------------------
# Helpers on "things that may be duals", in the internal (k,) + S layout
# --------------------------------------------------------------------------------------


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of an array, a scalar or a dual (``np.shape`` without the dispatch)."""
    if type(x) is np.ndarray or isinstance(x, Dual):
        return x.shape
    return np.shape(x)


def max_tag(args: Sequence[Any]) -> int:
    """The largest tag among the duals in ``args`` (there must be one)."""
    return max(a.tag for a in args if isinstance(a, Dual))


def split(x: Any, tag: int) -> tuple[Any, Any]:
    """(value, partials ``(k,) + S``) of ``x`` at ``tag``; partials None means zero.

    A dual of a smaller tag, like a plain array, is all value at ``tag``.
    """
    if isinstance(x, Dual) and x.tag == tag:
        return x._v, x._d
    return x, None


def bottom(x: Any) -> Any:
    """The plain value at the bottom of a (nested) dual."""
    while isinstance(x, Dual):
        x = x._v
    return x


def as_operand(x: Any) -> Any:
    """``x`` itself if it is a dual or a plain operand, else ``np.asarray(x)``."""
    if isinstance(x, _OPERANDS):
        return x
    return np.asarray(x)


def common_npartials(parts: Sequence[tuple[Any, Any]]) -> int:
    """``k`` shared by the partials of (value, partials) pairs from :func:`split`."""
    ks = {shape_of(p)[0] for _, p in parts if p is not None}
    if len(ks) != 1:
        raise ValueError(
            f"duals with the same tag carry different numbers of partials {sorted(ks)}; "
            "duals of one tag must come from one seed"
        )
    return ks.pop()


def pad(p: Any, ndim: int) -> Any:
    """Partials (k,) + S padded to (k,) + (1,)*m + S so that they broadcast like S."""
    missing = ndim - (len(shape_of(p)) - 1)
    return p[(slice(None),) + (None,) * missing] if missing > 0 else p


def full(p: Any, k: int, shape: tuple[int, ...], like: Any) -> Any:
    """Partials broadcast to exactly (k,) + shape (zeros when ``p`` is None)."""
    if p is None:
        return np.zeros((k, *shape), dtype=real_dtype(like))
    p = pad(p, len(shape))
    return p if shape_of(p) == (k, *shape) else np.broadcast_to(p, (k, *shape))


def is_plain(x: Any) -> bool:
    """Whether ``x`` is an exact ndarray or a real scalar: nothing nested, nothing to dispatch."""
    return type(x) is np.ndarray or isinstance(x, float | int | np.floating)


def make_dual(value: Any, dpart: Any, tag: int, scale: Any = None) -> Dual:
    """A dual from partials in the internal ``(k,) + S`` layout (no checks).

    With ``scale``, the partials are ``scale * dpart`` (``dpart`` broadcastable to
    ``(k,) + S``, ``scale`` to ``S``), left unevaluated until something reads them.
    """
    dual = object.__new__(Dual)
    dual._v = value
    dual._p = dpart
    dual._s = scale
    dual._memo = None
    dual.tag = tag
    return dual


# --------------------------------------------------------------------------------------
# The number type
# --------------------------------------------------------------------------------------


class Dual:
    """An array of dual numbers: a value of shape ``S`` and ``k`` partials per element.

    ``Dual(value, partials)`` is ``value + Σ_j ε_j partials[..., j]`` with ``ε_i ε_j = 0``.
    Every smooth NumPy ufunc and the array functions listed in ``docs/dual.md`` act on it
    as on the value, carrying the partials by the chain rule.

    Parameters
    ----------
    value : array_like or Dual, shape S
        Real values (integers promote to float64). A :class:`Dual` of a smaller tag makes
        a nested dual (derivatives of derivatives).
    partials : array_like or Dual, shape S + (k,)
        ``partials[..., j]`` is the derivative along the j-th perturbation.
    tag : int, optional
        Which differentiation the partials belong to (default 0). Duals of different tags
        combine by nesting, the larger tag outside; drivers draw fresh, increasing tags.

    Notes
    -----
    The partials are stored with the ``k`` axis first, ``(k,) + S``: the chain rule
    multiplies them by value-shaped factors, and NumPy broadcasts a leading axis at
    contiguous speed (about twice as fast as a trailing one). :attr:`partials` is a view
    in the public ``S + (k,)`` layout.
    """

    __slots__ = ("_memo", "_p", "_s", "_v", "tag")
    __hash__ = None  # type: ignore[assignment]  # == is elementwise, as for ndarray

    _v: Any
    _p: Any
    _s: Any
    _memo: dict[np.ufunc, Any] | None
    tag: int

    def __init__(self, value: ArrayLike | Dual, partials: ArrayLike | Dual, tag: int = 0) -> None:
        tag = as_int(tag, "tag", minimum=0)
        parts: list[Any] = []
        for name, x in (("value", value), ("partials", partials)):
            if isinstance(x, Dual):
                if x.tag >= tag:
                    raise InputError(
                        f"{name}: a nested dual must have a smaller tag than {tag}, got tag {x.tag}"
                    )
                parts.append(x)
            else:
                parts.append(as_float_array(x, name, finite=False))
        v, p = parts
        if not isinstance(v, Dual) and not isinstance(p, Dual):
            dtype = np.result_type(v, p)
            v, p = v.astype(dtype, copy=False), p.astype(dtype, copy=False)
        vs, ps = shape_of(v), shape_of(p)
        if len(ps) != len(vs) + 1 or ps[:-1] != vs:
            raise InputError(
                f"partials: expected shape value.shape + (k,) = {vs} + (k,), got shape {ps}"
            )
        self._v = v
        self._d = np.moveaxis(p, -1, 0)
        self._memo = None
        self.tag = tag

    @property
    def _d(self) -> Any:
        """The partials in the internal ``(k,) + S`` layout, evaluated if still scaled."""
        if self._s is not None:
            shape = self.shape
            k = shape_of(self._p)[0]
            # Scales are finite (a rule whose coefficient is not is evaluated at once, by
            # the NaN-safe product), so a plain product is safe here.
            self._p = full(self._s * pad(self._p, len(shape)), k, shape, self._v)
            self._s = None
        return self._p

    @_d.setter
    def _d(self, dpart: Any) -> None:
        self._p = dpart
        self._s = None

    # -- views ------------------------------------------------------------------------

    @property
    def value(self) -> NDArray[np.floating] | Dual:
        """The value, shape ``S`` (a dual of a smaller tag when nested); read-only."""
        return _read_only(self._v)

    @property
    def partials(self) -> NDArray[np.floating] | Dual:
        """The partials, shape ``S + (k,)``; a read-only view."""
        return _read_only(np.moveaxis(self._d, 0, -1))

    @property
    def npartials(self) -> int:
        """``k``, the number of perturbations carried per element."""
        return int(shape_of(self._p)[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(shape_of(self._v))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The real dtype of values and partials (float32 or float64)."""
        return real_dtype(bottom(self._v))

    @property
    def T(self) -> Dual:
        return np.transpose(self)  # type: ignore[return-value]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d Dual")
        return self.shape[0]

    def __iter__(self) -> Iterator[Dual]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"Dual(value={self._v!r}, partials={self.partials!r}, tag={self.tag})"

    # -- conversions that would drop the partials are refused -------------------------

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            "a Dual cannot become a plain ndarray: its partials would be lost. Use "
            "np.stack or np.concatenate instead of np.array([...]) to build arrays of "
            "duals, and .value to drop the derivatives on purpose"
        )

    def __float__(self) -> float:
        raise TypeError("float() of a Dual would drop its partials; use .value")

    def __int__(self) -> int:
        raise TypeError("int() of a Dual would drop its partials; use .value")

    def __bool__(self) -> bool:
        return bool(self._v)

    # -- indexing ---------------------------------------------------------------------

    def __getitem__(self, index: Any) -> Dual:
        key = _check_index(index)
        return make_dual(self._v[index], _index_partials(self._d, key), self.tag)

    def __setitem__(self, index: Any, item: ArrayLike | Dual) -> None:
        key = _check_index(index)
        if isinstance(item, Dual) and item.tag > self.tag:
            raise TypeError(
                f"cannot store a dual of tag {item.tag} inside a dual of the smaller tag "
                f"{self.tag}; build the result with np.stack or np.where instead"
            )
        v, p = split(as_operand(item), self.tag)
        self._memo = None
        self._v = _put(self._v, index, v)
        moved = np.moveaxis(self._d, 0, -1)
        src = 0.0 if p is None else np.moveaxis(p, 0, -1)
        self._d = np.moveaxis(_put(moved, (*key, slice(None)), src), -1, 0)

    # -- methods mirroring ndarray, through the array functions -----------------------

    def reshape(self, *shape: Any) -> Dual:
        return np.reshape(self, shape[0] if len(shape) == 1 else shape)  # type: ignore[return-value]

    def transpose(self, *axes: Any) -> Dual:
        order = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        return np.transpose(self, order or None)  # type: ignore[return-value]

    def sum(self, axis: Any = None, keepdims: bool = False) -> Dual:
        return np.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Dual:
        return np.mean(self, axis=axis, keepdims=keepdims)

    def dot(self, other: ArrayLike | Dual) -> Dual:
        return np.dot(self, other)

    def ravel(self) -> Any:
        return np.ravel(self)

    def flatten(self) -> Any:
        return np.ravel(self).copy()

    def squeeze(self, axis: Any = None) -> Any:
        return np.squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return np.swapaxes(self, axis1, axis2)

    def prod(self, axis: Any = None, keepdims: bool = False) -> Any:
        return np.prod(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        return np.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        return np.min(self, axis=axis, keepdims=keepdims)

    def std(self, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
        return np.std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def var(self, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
        return np.var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def cumsum(self, axis: Any = None) -> Any:
        return np.cumsum(self, axis=axis)

    def clip(self, min: Any = None, max: Any = None) -> Any:
        return np.clip(self, min, max)

    def round(self, decimals: int = 0) -> Any:
        return np.round(self, decimals)

    def trace(self, offset: int = 0) -> Any:
        return np.trace(self, offset)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return np.diagonal(self, offset, axis1, axis2)

    def argmax(self, axis: Any = None) -> Any:
        return np.argmax(self, axis=axis)

    def argmin(self, axis: Any = None) -> Any:
        return np.argmin(self, axis=axis)

    def argsort(self, axis: int = -1) -> Any:
        return np.argsort(self, axis=axis)

    def copy(self) -> Dual:
        return np.copy(self)  # type: ignore[return-value]

    # -- arithmetic, all through the ufunc table --------------------------------------

    def __add__(self, o: Any) -> Any:
        return _arith(np.add, self, o)

    def __radd__(self, o: Any) -> Any:
        return _arith(np.add, o, self)

    def __sub__(self, o: Any) -> Any:
        return _arith(np.subtract, self, o)

    def __rsub__(self, o: Any) -> Any:
        return _arith(np.subtract, o, self)

    def __mul__(self, o: Any) -> Any:
        return _arith(np.multiply, self, o)

    def __rmul__(self, o: Any) -> Any:
        return _arith(np.multiply, o, self)

    def __truediv__(self, o: Any) -> Any:
        return _arith(np.divide, self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return _arith(np.divide, o, self)

    def __floordiv__(self, o: Any) -> Any:
        return np.floor_divide(self, o)

    def __rfloordiv__(self, o: Any) -> Any:
        return np.floor_divide(o, self)

    def __mod__(self, o: Any) -> Any:
        return np.remainder(self, o)

    def __rmod__(self, o: Any) -> Any:
        return np.remainder(o, self)

    def __pow__(self, o: Any) -> Any:
        if not isinstance(o, Dual) and np.ndim(o) == 0 and o == 2:
            return np.square(self)
        return np.power(self, o)

    def __rpow__(self, o: Any) -> Any:
        return np.power(o, self)

    def __matmul__(self, o: Any) -> Any:
        return np.matmul(self, o)

    def __rmatmul__(self, o: Any) -> Any:
        return np.matmul(o, self)

    def __neg__(self) -> Any:
        return _apply(np.negative, RULES[np.negative], [self])

    def __pos__(self) -> Any:
        return np.positive(self)

    def __abs__(self) -> Any:
        return np.absolute(self)

    def __lt__(self, o: Any) -> Any:
        return np.less(self, o)

    def __le__(self, o: Any) -> Any:
        return np.less_equal(self, o)

    def __gt__(self, o: Any) -> Any:
        return np.greater(self, o)

    def __ge__(self, o: Any) -> Any:
        return np.greater_equal(self, o)

    def __eq__(self, o: Any) -> Any:  # elementwise, as for ndarray
        return np.equal(self, o)

    def __ne__(self, o: Any) -> Any:  # elementwise, as for ndarray
        return np.not_equal(self, o)

    # -- the NumPy protocols ----------------------------------------------------------

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method != "__call__":
            raise TypeError(
                f"{ufunc_name(ufunc)}.{method} is not supported on Dual arrays; use the "
                "corresponding array function (np.sum, np.cumsum...) if listed in docs/dual.md"
            )
        if kwargs:
            out = kwargs.pop("out", None)
            if out is not None and any(o is not None for o in out):
                raise TypeError(
                    f"{ufunc_name(ufunc)} on Dual arrays does not support the argument out="
                )
            if kwargs:
                raise TypeError(
                    f"{ufunc_name(ufunc)} on Dual arrays does not support the arguments "
                    f"{sorted(kwargs)}"
                )
        args = [x if isinstance(x, _OPERANDS) else np.asarray(x) for x in inputs]
        rule = RULES.get(ufunc) or rule_of(ufunc)
        if rule is not None:
            if rule.nout > 1:
                return _apply_multi(ufunc, rule, args)
            return _apply(ufunc, rule, args)
        if ufunc in PREDICATES:
            return ufunc(*[x._v if isinstance(x, Dual) else x for x in args])
        # Ufuncs that are not elementwise (np.matmul) have an array-function implementation.
        impl = HANDLED_FUNCTIONS.get(ufunc)
        if impl is not None:
            return impl(*args)
        raise TypeError(
            f"{ufunc_name(ufunc)} is not supported on Dual arrays: it has no derivative rule "
            "in tumble.dual.RULES (NumPy) or tumble.dual.special.SPECIAL_RULES (SciPy). The "
            "supported functions are listed in docs/dual.md; to request one, open an issue "
            "giving the function and its derivative (with a DLMF reference for special "
            "functions)"
        )

    def __array_function__(
        self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        impl = HANDLED_FUNCTIONS.get(func)
        if impl is None:
            name = getattr(func, "__module__", "numpy") + "." + getattr(func, "__name__", "?")
            raise TypeError(
                f"{name} is not supported on Dual arrays. Supported array functions: "
                + ", ".join(sorted(f"np.{function_name(f)}" for f in HANDLED_FUNCTIONS))
                + ". To request one, open an issue naming the function (docs/dual.md)"
            )
        return impl(*args, **kwargs)


_OPERANDS: tuple[type[Any], ...] = (Dual, *PLAIN_OPERANDS)


def _read_only(x: Any) -> Any:
    if type(x) is np.ndarray:
        x = x.view()
        x.flags.writeable = False
    return x


def _check_index(index: Any) -> tuple[Any, ...]:
    key = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, Dual) for i in key):
        raise TypeError("a Dual cannot be used as an index; index with its .value")
    return key


def _index_partials(d: Any, key: tuple[Any, ...]) -> Any:
    if all(i is None or i is Ellipsis or isinstance(i, int | slice) for i in key):
        return d[(slice(None), *key)]
    # Advanced indices may move their axes to the front; in the public layout S + (k,) a
    # trailing full slice keeps the k axis at the end whatever the index does.
    return np.moveaxis(np.moveaxis(d, 0, -1)[(*key, slice(None))], -1, 0)


def _put(target: Any, index: Any, src: Any) -> Any:
    """``target[index] = src``, returning the (possibly promoted or copied) target."""
    if isinstance(src, Dual) and not (isinstance(target, Dual) and target.tag >= src.tag):
        zeros = np.zeros((src.npartials, *shape_of(target)), dtype=real_dtype(target))
        target = make_dual(target, zeros, src.tag)
    # Copy on write: arrays inside duals are shared by views and by the sin/cos memo, so
    # they are never modified in place.
    if isinstance(target, Dual):
        target = make_dual(target._v, target._d, target.tag)
    else:
        target = np.array(target)
    target[index] = src
    return target


# --------------------------------------------------------------------------------------
# Applying the rule table
# --------------------------------------------------------------------------------------


def _compact(p: Any) -> Any:
    """Partials that are constant along a broadcast (stride-0) axis, reduced to length 1.

    Seeds of a batched Jacobian are the same at every point; so are linear combinations
    of them with constant coefficients. Keeping them small makes those operations O(k).
    """
    if type(p) is np.ndarray and 0 in p.strides[1:]:
        return p[(slice(None), *(slice(0, 1) if s == 0 else slice(None) for s in p.strides[1:]))]
    return p


def _arith(ufunc: np.ufunc, a: Any, b: Any) -> Any:
    """An arithmetic operator: straight to the rule when both operands are known types,
    skipping NumPy's override dispatch; anything else goes through the ufunc as usual."""
    if isinstance(a, _OPERANDS) and isinstance(b, _OPERANDS):
        return _apply(ufunc, RULES[ufunc], [a, b])
    return ufunc(a, b)


def _apply(ufunc: np.ufunc, rule: Rule, args: list[Any]) -> Any:
    """Apply a table rule: value by the ufunc, partials by the chain rule.

    A result with one contributing argument keeps its partials unevaluated as
    ``coefficient * partials``; the next operation folds that coefficient into its own
    (value-sized work) instead of multiplying ``k`` times as many numbers, and a binary
    rule evaluates both terms in one fused pass (:func:`~tumble.dual.fused.fused_lincomb2`).
    """
    # The hot path of every dual operation: written flat (few helper calls), since at
    # slice sizes that fit in cache the Python work here costs as much as the arithmetic.
    tag = -1
    for a in args:
        if isinstance(a, Dual) and a.tag > tag:
            tag = a.tag
    values = []
    parts: list[Dual | None] = []
    for a in args:
        if isinstance(a, Dual) and a.tag == tag:
            values.append(a._v)
            parts.append(a)
        else:
            values.append(a)
            parts.append(None)
    deriv0 = rule.derivs[0]
    first = parts[0]
    if first is not None and isinstance(deriv0, Partner):
        memo = first._memo
        if memo is None:
            memo = first._memo = {}
        out = memo.get(ufunc)
        if out is None:
            out = memo[ufunc] = ufunc(values[0])
        partner = memo.get(deriv0.partner)
        if partner is None:
            partner = memo[deriv0.partner] = deriv0.partner(values[0])
        coefficients: list[Any] = [partner if deriv0.sign > 0 else -partner]
    else:
        out = ufunc(*values)
        coefficients = [
            d if isinstance(d, Coefficient) or a is None else d(out, *values)
            for d, a in zip(rule.derivs, parts, strict=True)
        ]
    shape = out.shape if out.__class__ is np.ndarray or isinstance(out, Dual) else np.shape(out)
    ndim = len(shape)
    check = NAN_SAFE.get() and (EVERY_COEFFICIENT.get() or ufunc not in FINITE_DERIVATIVES)
    k = -1
    terms: list[tuple[Any, Any]] = []
    for c, a in zip(coefficients, parts, strict=True):
        if a is None:
            continue
        p = a._p
        pk = shape_of(p)[0]
        if k < 0:
            k = pk
        elif pk != k:
            raise ValueError(
                f"duals with the same tag carry different numbers of partials {sorted({k, pk})}"
                "; duals of one tag must come from one seed"
            )
        if c is ZERO:
            continue
        if c is NOT_DIFFERENTIABLE:
            raise TypeError(
                f"{ufunc_name(ufunc)} has no derivative with respect to argument "
                f"{len(terms) + 1} (an integer or an order parameter); pass a plain number "
                "there"
            )
        scale = a._s
        if scale is not None:
            c = scale if c is ONE else -scale if c is MINUS_ONE else c * scale
        terms.append((c, pad(_compact(p), ndim)))
    if not terms:
        return make_dual(out, full(None, k, shape, out), tag)
    if len(terms) == 1:
        c, p = terms[0]
        if c is ONE:
            return make_dual(out, full(p, k, shape, out), tag)
        if c.__class__ is Coefficient:
            c = c.value
        if is_plain(c) and is_plain(p) and not (check and not _all_finite(c)):
            return make_dual(out, p, tag, scale=c)
        return make_dual(out, full(times(c, p, check), k, shape, out), tag)
    (ca, pa), (cb, pb) = terms
    if ca.__class__ is Coefficient:
        ca = ca.value
    if cb.__class__ is Coefficient:
        cb = cb.value
    plain = is_plain(ca) and is_plain(pa) and is_plain(cb) and is_plain(pb)
    if plain and (not check or (_all_finite(ca) and _all_finite(cb))):
        return make_dual(out, full(fused_lincomb2(ca, pa, cb, pb, k, shape), k, shape, out), tag)
    dp = times(ca, pa, check) + times(cb, pb, check)
    return make_dual(out, full(dp, k, shape, out), tag)


def _apply_multi(ufunc: np.ufunc, rule: Rule, args: list[Any]) -> tuple[Any, ...]:
    """A rule of a ufunc with several outputs (``divmod``, ``frexp``, ``scipy.special.airy``):
    each derivative returns one coefficient per output, ``None`` for an integer output,
    which is returned as a plain array."""
    tag = max_tag(args)
    parts = [split(a, tag) for a in args]
    values = [v for v, _ in parts]
    k = common_npartials(parts)
    outs = ufunc(*values)
    coefficients = []
    for i, (d, (_, p)) in enumerate(zip(rule.derivs, parts, strict=True)):
        if p is not None:
            if d is NOT_DIFFERENTIABLE:
                raise TypeError(
                    f"{ufunc_name(ufunc)} has no derivative with respect to argument {i + 1}"
                )
            per_output: Any = d  # a function: Rule refuses constants for several outputs
            coefficients.append((per_output(outs, *values), p))
    results: list[Any] = []
    for j, out in enumerate(outs):
        if any(c[j] is None for c, _ in coefficients):
            results.append(out)
            continue
        shape = shape_of(out)
        dp = None
        for c, p in coefficients:
            term = times(c[j], pad(p, len(shape)))
            dp = term if dp is None else dp + term
        results.append(make_dual(out, full(dp, k, shape, out), tag))
    return tuple(results)

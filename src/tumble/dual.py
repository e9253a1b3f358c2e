"""Dual-number arrays and forward-mode derivatives of ordinary NumPy code.

A dual number ``x + ε y`` with ``ε² = 0`` carries a value and its derivative: every real
analytic ``f`` extends to ``f(x + ε y) = f(x) + ε f'(x) y``, and the extension of a
composition is the composition of the extensions. :class:`Dual` is an array of such
numbers with ``k`` independent perturbations per element, so one evaluation of a function
gives ``k`` directional derivatives (a whole Jacobian when ``k`` is the input size).

NumPy code runs on duals unchanged: ufuncs reach :meth:`Dual.__array_ufunc__`, array
functions (``dot``, ``einsum``, ``stack``, ``linalg.norm``...) reach
:meth:`Dual.__array_function__`. Every differentiable ufunc has one entry in :data:`RULES`,
which both defines the operation and drives the test suite.

Each dual carries an integer ``tag``. A driver (``derivative``, ``jacobian``...) draws a
fresh tag, larger than any tag drawn before, so a differentiation started inside another
one has the larger tag. Arithmetic between duals of different tags nests them: the larger
tag is the outer layer and its value and partials are duals of the smaller tag. Each driver
reads only the partials of its own tag, so nested derivatives never confuse their
perturbations (ForwardDiff.jl issue 83: ``d/dx [x d/dy (x + y)]`` at 1 is 1, not 2).

See ``docs/dual.md`` for the tour and the limitations.
"""

from __future__ import annotations

import itertools
import math
import numbers
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tumble._errors import InputError
from tumble._kernels.dual import lincomb2
from tumble._validate import as_float_array, as_int

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_POINTS_PER_PASS",
    "MINUS_ONE",
    "ONE",
    "PIECEWISE_CONSTANT",
    "PREDICATES",
    "RULES",
    "ZERO",
    "Dual",
    "Partner",
    "Rule",
    "derivative",
    "directional_derivative",
    "gradient",
    "hessian",
    "jacobian",
]

DEFAULT_CHUNK = 64
"""Most partials carried in one evaluation by :func:`jacobian` (and friends).

An intermediate of size ``s`` holds ``s * chunk`` partials, so memory grows with the chunk
while Python overhead shrinks with the number of passes ``ceil(n / chunk)``. 64 keeps a
(1000,) input at 16 passes and its intermediates at 0.5 MB each.
"""

DEFAULT_POINTS_PER_PASS = 8192
"""Most points per evaluation of ``f`` in the batched drivers (``batched=True``).

Points are independent there, so they are differentiated in slices along the first axis.
A slice of 8192 points keeps each intermediate of a small field (its value, 64 kB in
float64, and ``k`` times that in partials) in the core's L2 cache and the pass's working
set of a few MB below glibc malloc's trim threshold, so memory is reused from one
operation to the next instead of being returned to the kernel and page-faulted back.
Smaller slices pay the Python cost of a pass (about 10 µs per operation) more often.
Measured in ``benchmarks/bench_dual.py``; ``docs/dual.md`` has the numbers.
"""

_TAGS = itertools.count(1)


# --------------------------------------------------------------------------------------
# The rule table
# --------------------------------------------------------------------------------------


class _Coefficient:
    """A derivative that is a known constant, so the rule can skip a multiplication."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


ONE = _Coefficient("ONE")
"""Derivative 1: the partials pass through unchanged."""
MINUS_ONE = _Coefficient("MINUS_ONE")
"""Derivative -1: the partials are negated."""
ZERO = _Coefficient("ZERO")
"""Derivative 0: the argument's partials do not contribute."""
_COEFFICIENT_VALUES = {ONE: 1.0, MINUS_ONE: -1.0}


class Partner:
    """Derivative ``sign * partner(x)`` of a unary ufunc (sin' = cos, cos' = -sin...).

    Calling it computes the derivative; besides, :func:`_apply` keeps ``ufunc(x)`` and
    ``partner(x)`` on the dual ``x``, so ``sin(t)`` and ``cos(t)`` of one dual cost two
    transcendental evaluations together instead of four.
    """

    def __init__(self, partner: np.ufunc, sign: float) -> None:
        self.partner = partner
        self.sign = sign

    def __call__(self, out: Any, x: Any) -> Any:
        value = self.partner(x)
        return value if self.sign > 0 else -value

    def __repr__(self) -> str:
        return f"{'' if self.sign > 0 else '-'}{self.partner.__name__}"


Derivative = Callable[..., Any] | _Coefficient


@dataclass(frozen=True)
class Rule:
    """How a ufunc acts on duals: the value is the ufunc itself, the partials follow

    ``d out = sum_i derivs[i](out, *args) * d args[i]``.

    Attributes
    ----------
    derivs : tuple
        One entry per ufunc input: a function ``(out, *args) -> ∂out/∂args[i]`` written
        with NumPy operations (so it also runs on nested duals), a :class:`Partner`
        (``±partner(x)``, evaluated once with the value), or one of the constants ``ONE``,
        ``MINUS_ONE``, ``ZERO``.
    domain : tuple of (low, high)
        Per input, an interval inside which the function is smooth; the tests sample there.
    """

    derivs: tuple[Derivative, ...]
    domain: tuple[tuple[float, float], ...]


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _float_like(mask: Any, like: Any) -> Any:
    """A boolean mask as 0/1 in the real dtype of ``like`` (keeps float32 partials float32)."""
    return np.asarray(mask).astype(_real_dtype(like))


def _select_weight(mine: Any, other: Any, better: Callable[[Any, Any], Any], out: Any) -> Any:
    # At a tie both arguments get 1/2: the mean of the one-sided derivatives, so that
    # maximum(x, -x) = |x| has derivative 0 at 0 like absolute, and max(x, x) has 1.
    return _float_like(better(mine, other), out) + 0.5 * _float_like(mine == other, out)


def _safe_ratio(num: Any, den: Any) -> Any:
    """``num / den`` with 0 where ``den == 0`` (the minimal-norm subgradient at a cone tip)."""
    zero = den == 0
    if not np.any(zero):
        return num / den
    return np.where(zero, 0.0, num / np.where(zero, 1.0, den))


def _dpow_base(out: Any, x: Any, y: Any) -> Any:
    if not isinstance(y, Dual) and np.ndim(y) == 0:
        return 0.0 * x if y == 0 else y * x ** (y - 1)
    # y * x**(y-1) is 0 * inf = NaN at x = 0, y = 0, where x**0 = 1 has derivative 0.
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, 0.0, y * x ** (y - 1))


def _dpow_exponent(out: Any, x: Any, y: Any) -> Any:
    # d/dy x**y = log(x) x**y; at x = 0 the limit (y > 0) is 0, not log(0) * 0 = NaN.
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, np.log(np.where(x == 0, 1.0, x)) * out)


_ANY = (-3.0, 3.0)
_POS = (0.2, 3.0)
_UNIT = (-0.9, 0.9)
_FRACTION = (0.1, 0.9)
# Quotients of these two lie in (1.14, 1.9): away from the jumps of floor, trunc and mod.
_NUMERATOR = (1.2, 1.8)
_DENOMINATOR = (0.95, 1.05)

RULES: dict[np.ufunc, Rule] = {
    np.positive: Rule((ONE,), (_ANY,)),
    np.negative: Rule((MINUS_ONE,), (_ANY,)),
    np.add: Rule((ONE, ONE), (_ANY, _ANY)),
    np.subtract: Rule((ONE, MINUS_ONE), (_ANY, _ANY)),
    np.multiply: Rule((lambda o, a, b: b, lambda o, a, b: a), (_ANY, _ANY)),
    np.divide: Rule((lambda o, a, b: 1 / b, lambda o, a, b: -o / b), (_ANY, _POS)),
    np.power: Rule((_dpow_base, _dpow_exponent), (_POS, _ANY)),
    np.float_power: Rule((_dpow_base, _dpow_exponent), (_POS, _ANY)),
    np.reciprocal: Rule((lambda o, x: -o * o,), (_POS,)),
    np.square: Rule((lambda o, x: 2 * x,), (_ANY,)),
    np.sqrt: Rule((lambda o, x: 0.5 / o,), (_POS,)),
    np.cbrt: Rule((lambda o, x: 1 / (3 * o * o),), (_POS,)),
    np.exp: Rule((lambda o, x: o,), (_ANY,)),
    np.exp2: Rule((lambda o, x: o * _LN2,), (_ANY,)),
    np.expm1: Rule((lambda o, x: o + 1,), (_ANY,)),
    np.log: Rule((lambda o, x: 1 / x,), (_POS,)),
    np.log2: Rule((lambda o, x: 1 / (x * _LN2),), (_POS,)),
    np.log10: Rule((lambda o, x: 1 / (x * _LN10),), (_POS,)),
    np.log1p: Rule((lambda o, x: 1 / (1 + x),), ((-0.8, 3.0),)),
    np.sin: Rule((Partner(np.cos, 1.0),), (_ANY,)),
    np.cos: Rule((Partner(np.sin, -1.0),), (_ANY,)),
    np.tan: Rule((lambda o, x: 1 + o * o,), ((-1.4, 1.4),)),
    np.arcsin: Rule((lambda o, x: 1 / np.sqrt(1 - x * x),), (_UNIT,)),
    np.arccos: Rule((lambda o, x: -1 / np.sqrt(1 - x * x),), (_UNIT,)),
    np.arctan: Rule((lambda o, x: 1 / (1 + x * x),), (_ANY,)),
    np.arctan2: Rule(
        (lambda o, y, x: x / (x * x + y * y), lambda o, y, x: -y / (x * x + y * y)),
        (_POS, _ANY),
    ),
    np.sinh: Rule((Partner(np.cosh, 1.0),), (_ANY,)),
    np.cosh: Rule((Partner(np.sinh, 1.0),), (_ANY,)),
    np.tanh: Rule((lambda o, x: 1 - o * o,), (_ANY,)),
    np.arcsinh: Rule((lambda o, x: 1 / np.sqrt(x * x + 1),), (_ANY,)),
    np.arccosh: Rule((lambda o, x: 1 / np.sqrt(x * x - 1),), ((1.2, 4.0),)),
    np.arctanh: Rule((lambda o, x: 1 / (1 - x * x),), (_UNIT,)),
    np.hypot: Rule(
        (lambda o, x, y: _safe_ratio(x, o), lambda o, x, y: _safe_ratio(y, o)), (_ANY, _POS)
    ),
    np.absolute: Rule((lambda o, x: np.sign(x),), (_ANY,)),
    np.fabs: Rule((lambda o, x: np.sign(x),), (_ANY,)),
    np.maximum: Rule(
        (
            lambda o, a, b: _select_weight(a, b, np.greater, o),
            lambda o, a, b: _select_weight(b, a, np.greater, o),
        ),
        (_ANY, _ANY),
    ),
    np.minimum: Rule(
        (
            lambda o, a, b: _select_weight(a, b, np.less, o),
            lambda o, a, b: _select_weight(b, a, np.less, o),
        ),
        (_ANY, _ANY),
    ),
    np.deg2rad: Rule((lambda o, x: math.pi / 180,), (_ANY,)),
    np.radians: Rule((lambda o, x: math.pi / 180,), (_ANY,)),
    np.rad2deg: Rule((lambda o, x: 180 / math.pi,), (_ANY,)),
    np.degrees: Rule((lambda o, x: 180 / math.pi,), (_ANY,)),
    np.logaddexp: Rule(
        (lambda o, a, b: np.exp(a - o), lambda o, a, b: np.exp(b - o)), (_ANY, _ANY)
    ),
    np.remainder: Rule((ONE, lambda o, a, b: -np.floor_divide(a, b)), (_NUMERATOR, _DENOMINATOR)),
    np.fmod: Rule((ONE, lambda o, a, b: -np.trunc(a / b)), (_NUMERATOR, _DENOMINATOR)),
    # Step functions: derivative 0 where it exists, and 0 chosen at the jumps, where none
    # exists (the convention of ForwardDiff.jl and JAX). Documented in docs/dual.md.
    np.floor: Rule((ZERO,), (_FRACTION,)),
    np.ceil: Rule((ZERO,), (_FRACTION,)),
    np.trunc: Rule((ZERO,), (_FRACTION,)),
    np.rint: Rule((ZERO,), ((0.1, 0.4),)),
    np.sign: Rule((ZERO,), (_POS,)),
    np.floor_divide: Rule((ZERO, ZERO), (_NUMERATOR, _DENOMINATOR)),
    np.heaviside: Rule((ZERO, ZERO), (_POS, (0.0, 1.0))),
}
"""The derivative table: ufunc -> :class:`Rule`. One entry per differentiable ufunc."""

PIECEWISE_CONSTANT = frozenset(u for u, r in RULES.items() if all(d is ZERO for d in r.derivs))
"""Ufuncs in :data:`RULES` whose partials are always zero (step functions)."""

PREDICATES = frozenset(
    {
        np.greater,
        np.greater_equal,
        np.less,
        np.less_equal,
        np.equal,
        np.not_equal,
        np.isfinite,
        np.isinf,
        np.isnan,
        np.signbit,
    }
)
"""Ufuncs applied to the value only; they return plain boolean arrays."""


# --------------------------------------------------------------------------------------
# Small helpers on "things that may be duals"
# --------------------------------------------------------------------------------------


def _shape(x: Any) -> tuple[int, ...]:
    if type(x) is np.ndarray or isinstance(x, Dual):
        return x.shape
    return np.shape(x)


def _real_dtype(x: Any) -> np.dtype:
    """The float dtype at the bottom of a (possibly nested) dual, or of a plain value."""
    while isinstance(x, Dual):
        x = x._v
    dtype = np.result_type(x)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _max_tag(args: Sequence[Any]) -> int:
    return max(a.tag for a in args if isinstance(a, Dual))


def _split(x: Any, tag: int) -> tuple[Any, Any]:
    """(value, partials) of ``x`` at ``tag``; partials None means zero."""
    if isinstance(x, Dual) and x.tag == tag:
        return x._v, x._d
    return x, None


def _as_operand(x: Any) -> Any:
    if isinstance(x, Dual | np.ndarray | np.generic | numbers.Real):
        return x
    return np.asarray(x)


def _npartials(parts: Sequence[tuple[Any, Any]]) -> int:
    ks = {_shape(p)[0] for _, p in parts if p is not None}
    if len(ks) != 1:
        raise ValueError(
            f"duals with the same tag carry different numbers of partials {sorted(ks)}; "
            "duals of one tag must come from one seed"
        )
    return ks.pop()


def _pad(p: Any, ndim: int) -> Any:
    """Partials (k,) + S padded to (k,) + (1,)*m + S so that they broadcast like S."""
    missing = ndim - (len(_shape(p)) - 1)
    return p[(slice(None),) + (None,) * missing] if missing > 0 else p


def _full(p: Any, k: int, shape: tuple[int, ...], like: Any) -> Any:
    """Partials broadcast to exactly (k,) + shape (zeros when ``p`` is None)."""
    if p is None:
        return np.zeros((k, *shape), dtype=_real_dtype(like))
    p = _pad(p, len(shape))
    return p if _shape(p) == (k, *shape) else np.broadcast_to(p, (k, *shape))


def _unsupported(name: str, **given: Any) -> None:
    for key, value in given.items():
        if value is not None and value is not False:
            raise TypeError(f"{name} on Dual arrays does not support the argument {key}={value!r}")


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

    def __init__(self, value: Any, partials: Any, tag: int = 0) -> None:
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
        vs, ps = _shape(v), _shape(p)
        if len(ps) != len(vs) + 1 or ps[:-1] != vs:
            raise InputError(
                f"partials: expected shape value.shape + (k,) = {vs} + (k,), got shape {ps}"
            )
        self._v = v
        self._d = np.moveaxis(p, -1, 0)
        self._memo = None
        self.tag = tag

    @classmethod
    def _make(cls, value: Any, dpart: Any, tag: int, scale: Any = None) -> Dual:
        """A dual from partials in the internal ``(k,) + S`` layout (no checks).

        With ``scale``, the partials are ``scale * dpart`` (``dpart`` broadcastable to
        ``(k,) + S``, ``scale`` to ``S``), left unevaluated until something reads them.
        """
        self = object.__new__(cls)
        self._v = value
        self._p = dpart
        self._s = scale
        self._memo = None
        self.tag = tag
        return self

    @property
    def _d(self) -> Any:
        """The partials in the internal ``(k,) + S`` layout, evaluated if still scaled."""
        if self._s is not None:
            shape = self.shape
            k = _shape(self._p)[0]
            self._p = _full(self._s * _pad(self._p, len(shape)), k, shape, self._v)
            self._s = None
        return self._p

    @_d.setter
    def _d(self, dpart: Any) -> None:
        self._p = dpart
        self._s = None

    # -- views ------------------------------------------------------------------------

    @property
    def value(self) -> Any:
        """The value, shape ``S`` (a dual of a smaller tag when nested); read-only."""
        return _read_only(self._v)

    @property
    def partials(self) -> Any:
        """The partials, shape ``S + (k,)``; a read-only view."""
        return _read_only(np.moveaxis(self._d, 0, -1))

    @property
    def npartials(self) -> int:
        """``k``, the number of perturbations carried per element."""
        return int(_shape(self._p)[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(_shape(self._v))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The real dtype of values and partials (float32 or float64)."""
        return _real_dtype(self)

    @property
    def T(self) -> Dual:
        return _np_transpose(self)

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
        return Dual._make(self._v[index], _index_partials(self._d, key), self.tag)

    def __setitem__(self, index: Any, item: Any) -> None:
        key = _check_index(index)
        if isinstance(item, Dual) and item.tag > self.tag:
            raise TypeError(
                f"cannot store a dual of tag {item.tag} inside a dual of the smaller tag "
                f"{self.tag}; build the result with np.stack or np.where instead"
            )
        v, p = _split(_as_operand(item), self.tag)
        self._memo = None
        self._v = _put(self._v, index, v)
        moved = np.moveaxis(self._d, 0, -1)
        src = 0.0 if p is None else np.moveaxis(p, 0, -1)
        self._d = np.moveaxis(_put(moved, (*key, slice(None)), src), -1, 0)

    # -- methods mirroring ndarray -----------------------------------------------------

    def reshape(self, *shape: Any) -> Dual:
        return _np_reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes: Any) -> Dual:
        order = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        return _np_transpose(self, order or None)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Dual:
        return _np_sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Dual:
        return _np_mean(self, axis=axis, keepdims=keepdims)

    def dot(self, other: Any) -> Dual:
        return _np_dot(self, other)

    def copy(self) -> Dual:
        return _np_copy(self)

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
                f"numpy.{ufunc.__name__}.{method} is not supported on Dual arrays; "
                "use the corresponding array function (np.sum, np.cumsum...) if listed"
            )
        if kwargs:
            raise TypeError(
                f"numpy.{ufunc.__name__} on Dual arrays does not support the arguments "
                f"{sorted(kwargs)}"
            )
        args = [x if isinstance(x, _OPERANDS) else np.asarray(x) for x in inputs]
        rule = RULES.get(ufunc)
        if rule is not None:
            return _apply(ufunc, rule, args)
        if ufunc in PREDICATES:
            return ufunc(*[x._v if isinstance(x, Dual) else x for x in args])
        if ufunc is np.matmul:
            return _matmul(*args)
        raise TypeError(
            f"numpy.{ufunc.__name__} is not supported on Dual arrays (no derivative rule "
            "in tumble.dual.RULES)"
        )

    def __array_function__(
        self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        impl = _FUNCTIONS.get(func)
        if impl is None:
            name = getattr(func, "__module__", "numpy") + "." + getattr(func, "__name__", "?")
            raise TypeError(
                f"{name} is not supported on Dual arrays; supported array functions: "
                + ", ".join(sorted(f"np.{_function_name(f)}" for f in _FUNCTIONS))
            )
        return impl(*args, **kwargs)


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
        zeros = np.zeros((src.npartials, *_shape(target)), dtype=_real_dtype(target))
        target = Dual._make(target, zeros, src.tag)
    # Copy on write: arrays inside duals are shared by views and by the sin/cos memo, so
    # they are never modified in place.
    if isinstance(target, Dual):
        target = Dual._make(target._v, target._d, target.tag)
    else:
        target = np.array(target)
    target[index] = src
    return target


def _compact(p: Any) -> Any:
    """Partials that are constant along a broadcast (stride-0) axis, reduced to length 1.

    Seeds of a batched Jacobian are the same at every point; so are linear combinations
    of them with constant coefficients. Keeping them small makes those operations O(k).
    """
    if type(p) is np.ndarray and 0 in p.strides[1:]:
        return p[(slice(None), *(slice(0, 1) if s == 0 else slice(None) for s in p.strides[1:]))]
    return p


def _plain(x: Any) -> bool:
    return type(x) is np.ndarray or isinstance(x, float | int | np.floating)


_OPERANDS = (Dual, np.ndarray, np.generic, numbers.Real)


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
    rule evaluates both terms in one fused pass (:func:`lincomb2`).
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
            d if isinstance(d, _Coefficient) or a is None else d(out, *values)
            for d, a in zip(rule.derivs, parts, strict=True)
        ]
    shape = out.shape if out.__class__ is np.ndarray or isinstance(out, Dual) else np.shape(out)
    ndim = len(shape)
    k = -1
    terms = []
    for c, a in zip(coefficients, parts, strict=True):
        if a is None:
            continue
        p = a._p
        pk = _shape(p)[0]
        if k < 0:
            k = pk
        elif pk != k:
            raise ValueError(
                f"duals with the same tag carry different numbers of partials {sorted({k, pk})}"
                "; duals of one tag must come from one seed"
            )
        if c is ZERO:
            continue
        scale = a._s
        if scale is not None:
            c = scale if c is ONE else -scale if c is MINUS_ONE else c * scale
        terms.append((c, _pad(_compact(p), ndim)))
    if not terms:
        return Dual._make(out, _full(None, k, shape, out), tag)
    if len(terms) == 1:
        c, p = terms[0]
        if c is ONE:
            return Dual._make(out, _full(p, k, shape, out), tag)
        if c.__class__ is _Coefficient:
            c = _COEFFICIENT_VALUES[c]
        if _plain(c) and _plain(p):
            return Dual._make(out, p, tag, scale=c)
        return Dual._make(out, _full(c * p, k, shape, out), tag)
    (ca, pa), (cb, pb) = terms
    if ca.__class__ is _Coefficient:
        ca = _COEFFICIENT_VALUES[ca]
    if cb.__class__ is _Coefficient:
        cb = _COEFFICIENT_VALUES[cb]
    if _plain(ca) and _plain(pa) and _plain(cb) and _plain(pb):
        dp = lincomb2(ca, pa, cb, pb)
    else:
        dp = ca * pa + cb * pb
    return Dual._make(out, _full(dp, k, shape, out), tag)


# --------------------------------------------------------------------------------------
# Array functions
# --------------------------------------------------------------------------------------

_FUNCTIONS: dict[Any, Callable[..., Any]] = {}


def _function_name(func: Any) -> str:
    module = getattr(func, "__module__", "") or ""
    return ("linalg." if "linalg" in module else "") + func.__name__


def _implements(*funcs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        for f in funcs:
            _FUNCTIONS[f] = impl
        return impl

    return register


def _linear(fn: Callable[[Any], Any], pfn: Callable[[Any], Any], a: Any) -> Any:
    """A function linear in ``a``: ``fn`` on the value, ``pfn`` on the (k,)+S partials."""
    if not isinstance(a, Dual):
        return fn(a)
    return Dual._make(fn(a._v), pfn(a._d), a.tag)


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
    return _shape(a)


@_implements(np.ndim)
def _np_ndim(a: Any) -> int:
    return len(_shape(a))


@_implements(np.size)
def _np_size(a: Any, axis: Any = None) -> int:
    shape = _shape(a)
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
    v = np.reshape(a._v, shape)
    return Dual._make(v, np.reshape(a._d, (a.npartials, *_shape(v))), a.tag)


@_implements(np.ravel)
def _np_ravel(a: Any, order: str = "C") -> Any:
    return _np_reshape(a, (-1,), order=order)


@_implements(np.transpose)
def _np_transpose(a: Any, axes: Any = None) -> Any:
    nd = len(_shape(a))
    order = tuple(range(nd))[::-1] if axes is None else tuple(a_ % nd for a_ in axes)
    return _linear(
        lambda v: np.transpose(v, order), lambda d: np.transpose(d, (0, *(i + 1 for i in order))), a
    )


@_implements(np.moveaxis)
def _np_moveaxis(a: Any, source: Any, destination: Any) -> Any:
    nd = len(_shape(a))
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    return _linear(
        lambda v: np.moveaxis(v, src, dst),
        lambda d: np.moveaxis(d, [_paxis(s, nd) for s in src], [_paxis(t, nd) for t in dst]),
        a,
    )


@_implements(np.swapaxes)
def _np_swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    nd = len(_shape(a))
    return _linear(
        lambda v: np.swapaxes(v, axis1, axis2),
        lambda d: np.swapaxes(d, _paxis(axis1, nd), _paxis(axis2, nd)),
        a,
    )


@_implements(np.squeeze)
def _np_squeeze(a: Any, axis: Any = None) -> Any:
    shape = _shape(a)
    if axis is None:
        axis = tuple(i for i, n in enumerate(shape) if n == 1)
    return _linear(
        lambda v: np.squeeze(v, axis), lambda d: np.squeeze(d, _paxes(axis, len(shape))), a
    )


@_implements(np.expand_dims)
def _np_expand_dims(a: Any, axis: Any) -> Any:
    nd = len(_shape(a))
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
    return Dual._make(
        np.broadcast_to(array._v, shape),
        np.broadcast_to(_pad(array._d, len(shape)), (array.npartials, *shape)),
        array.tag,
    )


def _like(a: Any, fill: Any) -> Dual:
    return Dual._make(
        np.full(a.shape, fill, dtype=_real_dtype(a)),
        np.zeros((a.npartials, *a.shape), dtype=_real_dtype(a)),
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
    nd = len(_shape(a))
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
    shape = _shape(a)
    axes = range(len(shape)) if axis is None else axis if isinstance(axis, tuple | list) else [axis]
    count = math.prod(shape[i] for i in axes)
    return _np_sum(a, axis=axis, keepdims=keepdims) / count


def _gather(arrays: Sequence[Any]) -> tuple[int, list[Any], list[Any]]:
    """Tag, values and full partials of a list of duals and arrays to be joined."""
    items = [_as_operand(x) for x in arrays]
    tag = _max_tag(items)
    parts = [_split(x, tag) for x in items]
    k = _npartials(parts)
    values = [v for v, _ in parts]
    partials = [_full(p, k, _shape(v), v) for v, p in parts]
    return tag, values, partials


@_implements(np.stack)
def _np_stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, **kw: Any) -> Any:
    _unsupported("np.stack", out=out, **kw)
    tag, values, partials = _gather(list(arrays))
    v = np.stack(values, axis=axis)
    # Stack right after the k axis (contiguous block copies), then view the new axis where
    # the value has it: stacking straight into a trailing axis is a slow strided scatter.
    d = np.moveaxis(np.stack(partials, axis=1), 1, _paxis(axis, np.ndim(v)))
    return Dual._make(v, d, tag)


@_implements(np.concatenate)
def _np_concatenate(arrays: Sequence[Any], axis: Any = 0, out: Any = None, **kw: Any) -> Any:
    _unsupported("np.concatenate", out=out, **kw)
    items = list(arrays)
    if axis is None:
        items = [np.ravel(x) for x in items]
        axis = 0
    tag, values, partials = _gather(items)
    v = np.concatenate(values, axis=axis)
    return Dual._make(v, np.concatenate(partials, axis=_paxis(axis, np.ndim(v))), tag)


@_implements(np.where)
def _np_where(condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        return np.where(condition._v if isinstance(condition, Dual) else condition)
    if isinstance(condition, Dual):
        raise TypeError("np.where needs a boolean condition, got a Dual; compare it first")
    x, y = _as_operand(x), _as_operand(y)
    tag = _max_tag([x, y])
    (xv, xp), (yv, yp) = _split(x, tag), _split(y, tag)
    v = np.where(condition, xv, yv)
    shape = _shape(v)
    k = _npartials([(xv, xp), (yv, yp)])
    cond = np.asarray(condition)[(None,) * (len(shape) - np.ndim(condition) + 1)]
    zero = np.zeros((), dtype=_real_dtype(v))
    d = np.where(
        cond,
        zero if xp is None else _pad(xp, len(shape)),
        zero if yp is None else _pad(yp, len(shape)),
    )
    return Dual._make(v, _full(d, k, shape, v), tag)


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
    nd = len(_shape(x))
    reduces_one_axis = isinstance(axis, int) or (axis is None and nd == 1)
    if not (ord is None or ord == "fro" or (ord == 2 and reduces_one_axis)):
        raise TypeError(
            f"np.linalg.norm on Dual arrays supports the 2-norm and Frobenius norm only, got "
            f"ord={ord!r}"
        )
    if not isinstance(x, Dual):
        return np.linalg.norm(x, axis=axis, keepdims=keepdims)
    axes = _paxes(axis, nd)
    n = np.linalg.norm(x._v, axis=axis, keepdims=True)
    # d|x| = x·dx / |x|; at x = 0 the partials are 0, the minimal-norm subgradient.
    d = _safe_ratio(np.sum(x._v * x._d, axis=axes, keepdims=True), n)
    if not keepdims:
        drop = axes if isinstance(axes, tuple) else (axes,)
        n = np.squeeze(n, tuple(a - 1 for a in drop))
        d = np.squeeze(d, drop)
    return Dual._make(n, d, x.tag)


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
    ops = [_as_operand(x) for x in operands]
    if not any(isinstance(x, Dual) for x in ops):
        return value_fn(*ops)
    inputs, out = _parse_einsum(subscripts, len(ops))
    tag = _max_tag(ops)
    parts = [_split(x, tag) for x in ops]
    values = [v for v, _ in parts]
    v = value_fn(*values)
    k = _npartials(parts)
    z = next(c for c in string.ascii_letters if c not in subscripts)
    d = None
    for i, (_, p) in enumerate(parts):
        if p is None:
            continue
        spec = ",".join(z + s if j == i else s for j, s in enumerate(inputs)) + "->" + z + out
        term = np.einsum(spec, *values[:i], p, *values[i + 1 :], optimize=optimize)
        d = term if d is None else d + term
    return Dual._make(v, _full(d, k, _shape(v), v), tag)


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


def _matmul(a: Any, b: Any) -> Any:
    na, nb = len(_shape(a)), len(_shape(b))
    if na == 0 or nb == 0:
        raise ValueError("matmul: input operand does not have enough dimensions")
    sa = "...mn" if na >= 2 else "n"
    sb = "...np" if nb >= 2 else "n"
    so = ("..." if max(na, nb) >= 2 else "") + ("m" if na >= 2 else "") + ("p" if nb >= 2 else "")
    return _multilinear(np.matmul, f"{sa},{sb}->{so}", [a, b])


@_implements(np.matmul)
def _np_matmul(a: Any, b: Any, out: Any = None, **kw: Any) -> Any:
    _unsupported("np.matmul", out=out, **kw)
    return _matmul(a, b)


@_implements(np.dot)
def _np_dot(a: Any, b: Any, out: Any = None) -> Any:
    _unsupported("np.dot", out=out)
    na, nb = len(_shape(a)), len(_shape(b))
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
    na, nb = len(_shape(a)), len(_shape(b))
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
    na, nb = len(_shape(a)), len(_shape(b))
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
    a, b = _as_operand(a), _as_operand(b)
    tag = _max_tag([a, b])
    (av, ap), (bv, bp) = _split(a, tag), _split(b, tag)
    v = np.cross(av, bv)
    shape = _shape(v)
    k = _npartials([(av, ap), (bv, bp)])
    nd = max(len(_shape(av)), len(_shape(bv)))
    d = None
    if ap is not None:
        d = np.cross(_pad(ap, nd), bv)
    if bp is not None:
        term = np.cross(av, _pad(bp, nd))
        d = term if d is None else d + term
    return Dual._make(v, _full(d, k, shape, v), tag)


# --------------------------------------------------------------------------------------
# Drivers
# --------------------------------------------------------------------------------------


def _check_f(f: Any) -> None:
    if not callable(f):
        raise InputError(f"f: expected a callable, got {type(f).__name__}")


def _as_point(x: Any, name: str) -> Any:
    """A real finite array, or a dual (a driver called inside another differentiation)."""
    if isinstance(x, Dual):
        inner = x
        while isinstance(inner, Dual):
            inner = inner._v
        if not np.all(np.isfinite(inner)):
            raise InputError(f"{name}: expected finite values, got NaN or infinity")
        return x
    return as_float_array(x, name)


def _new_tag(x: Any) -> int:
    """A tag larger than every tag drawn so far (and than x's, if x is a dual)."""
    tag = next(_TAGS)
    if isinstance(x, Dual) and x.tag >= tag:
        raise InputError(
            f"x: a dual of tag {x.tag} cannot be differentiated again with the smaller tag "
            f"{tag}; tags of hand-made duals must stay below those the drivers draw"
        )
    return tag


def _extract(y: Any, tag: int, k: int) -> tuple[tuple[int, ...], Any]:
    """Output shape and partials ``S_y + (k,)`` of the result ``y`` of ``f`` at ``tag``."""
    if isinstance(y, Dual):
        if y.tag == tag:
            return y.shape, np.moveaxis(y._d, 0, -1)
        if y.tag > tag:
            raise InputError(
                f"f: returned a dual of tag {y.tag}, which belongs to a differentiation that "
                f"has already finished (this one has tag {tag}); a perturbation leaked out"
            )
        return y.shape, np.zeros((*y.shape, k), dtype=_real_dtype(y))
    if isinstance(y, list | tuple) and any(isinstance(e, Dual) for e in y):
        raise InputError(
            f"f: returned a {type(y).__name__} of duals; return an array (np.stack(...))"
        )
    try:
        arr = np.asarray(y)
    except TypeError:
        arr = np.asarray(None, dtype=object)
    if arr.dtype.kind not in "iuf":
        raise InputError(
            f"f: expected f to return a real array or a Dual, got {type(y).__name__}"
            + (f" of dtype {arr.dtype}" if isinstance(y, np.ndarray) else "")
        )
    # f does not depend on x at all: its derivative is exactly zero.
    return arr.shape, np.zeros((*arr.shape, k), dtype=_real_dtype(arr))


def _scalar_or_array(d: Any) -> Any:
    return d[()] if isinstance(d, np.ndarray) and d.ndim == 0 else d


def derivative(f: Callable[[Any], Any], x: Any) -> Any:
    """Derivative of ``f`` at ``x``: ``f(x + ε) = f(x) + ε f'(x)``.

    For scalar ``x`` this is ``f'(x)``. For an array ``x`` every element is perturbed at
    once (one partial), so for an elementwise ``f`` the result holds each element's
    derivative; in general it is ``directional_derivative(f, x, ones_like(x))``.

    Parameters
    ----------
    f : callable
        NumPy code mapping an array (or dual) of shape ``S`` to shape ``R``.
    x : array_like or Dual, shape S
        Finite real point (a dual when called inside another differentiation).

    Returns
    -------
    float, ndarray or Dual, shape R
        Exact to round-off: one evaluation of ``f`` on duals.
    """
    return directional_derivative(f, x, 1.0)


def directional_derivative(f: Callable[[Any], Any], x: Any, v: Any) -> Any:
    """Directional derivative ``(v · ∇) f`` at ``x``: one evaluation of ``f`` on duals.

    Parameters
    ----------
    f : callable
        Maps shape ``S`` to shape ``R``.
    x : array_like or Dual, shape S
        Finite real point.
    v : array_like, broadcastable to S
        Direction.

    Returns
    -------
    float, ndarray or Dual, shape R
        ``d/dt f(x + t v)`` at ``t = 0``.
    """
    _check_f(f)
    x = _as_point(x, "x")
    shape = _shape(x)
    dtype = _real_dtype(x)
    v = as_float_array(v, "v", dtype=dtype)
    try:
        seed = np.broadcast_to(v, shape)
    except ValueError:
        raise InputError(
            f"v: expected a shape broadcastable to x's shape {shape}, got {v.shape}"
        ) from None
    tag = _new_tag(x)
    _, d = _extract(f(Dual._make(x, seed[None], tag)), tag, 1)
    return _scalar_or_array(d[..., 0])


def _one_pass(
    f: Callable[[Any], Any], x: Any, tag: int, chunk: int, batched: bool
) -> tuple[tuple[int, ...], Any]:
    """(output shape, Jacobian) of ``f`` at all of ``x``: ``ceil(n / chunk)`` evaluations."""
    shape = _shape(x)
    n = shape[-1] if batched else math.prod(shape)
    eye = np.eye(n, dtype=_real_dtype(x))
    pieces = []
    out_shape: tuple[int, ...] = ()
    for start in range(0, n, chunk) if n else [0]:
        rows = eye[start : start + chunk]
        k = rows.shape[0]
        if batched:
            seed = np.broadcast_to(rows.reshape((k,) + (1,) * (len(shape) - 1) + (n,)), (k, *shape))
        else:
            seed = rows.reshape((k, *shape))
        out_shape, d = _extract(f(Dual._make(x, seed, tag)), tag, k)
        pieces.append(d)
    jac = pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=-1)
    if not batched:
        jac = np.reshape(jac, out_shape + shape)
    return out_shape, jac


def _rows_per_pass(shape: tuple[int, ...], points_per_pass: int | None) -> int | None:
    """Rows of ``x``'s first axis per pass, or None for one pass over everything.

    The rows are split into the whole number of equal slices whose size is nearest
    ``points_per_pass`` points: a batch up to 1.5 times that size runs in one pass, and no
    pass is left with a small remainder.
    """
    if points_per_pass is None or len(shape) < 2 or shape[0] < 2:
        return None
    per_row = math.prod(shape[1:-1])
    target = max(1, points_per_pass // per_row) if per_row else shape[0]
    slices = max(1, round(shape[0] / target))
    return -(-shape[0] // slices) if slices > 1 else None


def _jacobian(
    f: Callable[[Any], Any],
    x: Any,
    chunk: Any,
    batched: bool,
    points_per_pass: Any = DEFAULT_POINTS_PER_PASS,
) -> tuple[tuple[int, ...], tuple[int, ...], Any]:
    """(input shape, output shape, Jacobian) with the layout described in :func:`jacobian`."""
    _check_f(f)
    x = _as_point(x, "x")
    if not isinstance(batched, bool):
        raise InputError(f"batched: expected True or False, got {batched!r}")
    chunk = DEFAULT_CHUNK if chunk is None else as_int(chunk, "chunk", minimum=1)
    if points_per_pass is not None:
        points_per_pass = as_int(points_per_pass, "points_per_pass", minimum=1)
    shape = _shape(x)
    if batched and not shape:
        raise InputError("x: batched=True needs points of shape (..., n), got a 0-d x")
    tag = _new_tag(x)
    # Nested drivers (x a dual) and unbatched Jacobians run in one pass.
    rows = _rows_per_pass(shape, points_per_pass) if batched and _plain(x) else None
    if rows is None:
        out_shape, jac = _one_pass(f, x, tag, chunk, batched)
        return shape, out_shape, jac
    lead = shape[:-1]
    try:
        out_shape, first = _one_pass(f, x[:rows], tag, chunk, batched)
        sliceable = out_shape[: len(lead)] == (rows, *lead[1:]) and len(out_shape) <= len(lead) + 1
    except Exception:
        sliceable = False
    if not sliceable:
        # f does not act on a slice of the points as on the whole (it combines x with
        # per-point arrays of the full batch, say): differentiate all points at once; a
        # genuine error in f is raised from there.
        out_shape, jac = _one_pass(f, x, tag, chunk, batched)
        return shape, out_shape, jac
    full_shape = (shape[0], *out_shape[1:])
    # The partials axis first in memory, as each pass produces it: the copies below are
    # then block copies, and the result has the same layout as a single pass's.
    jac = np.moveaxis(np.empty((first.shape[-1], *full_shape), dtype=first.dtype), 0, -1)
    jac[:rows] = first
    for start in range(rows, shape[0], rows):
        part_shape, part = _one_pass(f, x[start : start + rows], tag, chunk, batched)
        if part_shape[1:] != out_shape[1:]:
            raise InputError(
                f"f: returned shape {part_shape} for points {start}:{start + rows} but "
                f"{out_shape} for the first {rows}; a batched f must map (..., n) to (..., m)"
            )
        jac[start : start + rows] = part
    return shape, full_shape, jac


def jacobian(
    f: Callable[[Any], Any],
    x: Any,
    *,
    chunk: int | None = None,
    batched: bool = False,
    points_per_pass: int | None = DEFAULT_POINTS_PER_PASS,
) -> Any:
    """Jacobian of ``f`` at ``x`` by forward mode: ``J[i..., j...] = ∂f_i/∂x_j``.

    All ``n`` input directions are carried at once (``k = n`` partials, one evaluation of
    ``f``) up to ``chunk`` of them; larger inputs take ``ceil(n / chunk)`` evaluations.

    Parameters
    ----------
    f : callable
        NumPy code mapping shape ``S`` to shape ``R``. With ``batched=True``, ``f`` is a
        field evaluated pointwise: it maps ``(..., n)`` to ``(..., m)`` (or ``(...)``) and
        point ``p``'s outputs depend on point ``p``'s inputs only.
    x : array_like or Dual, shape S, or (..., n) when batched
        Finite real point(s).
    chunk : int, optional
        Most partials per evaluation (default :data:`DEFAULT_CHUNK`).
    batched : bool
        Treat the leading axes of ``x`` as independent points (like ``jax.vmap``): each
        point is seeded with the same ``n`` directions, so the cost is one evaluation per
        slice of points whatever ``N``. If ``f`` mixes points, the result is wrong (sums
        across points).
    points_per_pass : int or None
        With ``batched=True``, evaluate ``f`` on equal slices of about this many points
        along the first axis of ``x`` (default :data:`DEFAULT_POINTS_PER_PASS`; up to 1.5
        times it in one pass), which keeps the working set in cache; ``None``: all points
        in one evaluation. The result is the same either way. Slicing needs ``f``
        to act on a slice of ``x`` as on the whole; if on the first slice ``f`` raises or
        returns a shape whose leading axes are not the slice's (it combines ``x`` with
        arrays of per-point data from outside, say), all points are evaluated at once.

    Returns
    -------
    ndarray or Dual
        Shape ``R + S``; with ``batched=True``, ``R + (n,)``, e.g. ``(N, m, n)``.
    """
    return _jacobian(f, x, chunk, batched, points_per_pass)[2]


def gradient(
    f: Callable[[Any], Any],
    x: Any,
    *,
    chunk: int | None = None,
    batched: bool = False,
    points_per_pass: int | None = DEFAULT_POINTS_PER_PASS,
) -> Any:
    """Gradient ``∇f`` of a scalar-valued ``f`` at ``x``: shape ``S``.

    With ``batched=True``, ``f`` maps ``(..., n)`` to ``(...)`` pointwise and the result
    has shape ``(..., n)``. Cost as :func:`jacobian`: ``ceil(n / chunk)`` evaluations
    (per slice of ``points_per_pass`` points when batched).
    """
    shape, out_shape, jac = _jacobian(f, x, chunk, batched, points_per_pass)
    expected = shape[:-1] if batched else ()
    if out_shape != expected:
        raise InputError(
            f"f: gradient needs a scalar value per point (output shape {expected}), got "
            f"output shape {out_shape}"
        )
    return _scalar_or_array(jac)


def hessian(
    f: Callable[[Any], Any],
    x: Any,
    *,
    chunk: int | None = None,
    batched: bool = False,
    points_per_pass: int | None = DEFAULT_POINTS_PER_PASS,
) -> Any:
    """Hessian ``∂²f/∂x_i∂x_j`` of a scalar-valued ``f`` at ``x``, by nested duals.

    The outer Jacobian and the inner gradient carry different tags, so their perturbations
    cannot mix. Shape ``S + S``, or ``(..., n, n)`` with ``batched=True`` (points in
    slices of ``points_per_pass``, as in :func:`jacobian`). Cost: ``ceil(n / chunk)²``
    evaluations with ``n * n`` second-order partials each.
    """
    return jacobian(
        lambda y: gradient(f, y, chunk=chunk, batched=batched),
        x,
        chunk=chunk,
        batched=batched,
        points_per_pass=points_per_pass,
    )

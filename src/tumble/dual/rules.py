"""The derivative table: one :class:`Rule` per differentiable NumPy ufunc.

A rule says how a ufunc acts on duals. The value is the ufunc itself; the partials follow
the chain rule ``d out = Σ_i ∂out/∂args[i] · d args[i]``, with one derivative per input.
:mod:`tumble.dual.number` applies the table to every ufunc call on a :class:`Dual`, and the
tests sample each entry inside its ``domain`` against closed forms, finite differences and
(at the points where a naive formula cancels or overflows) 50-digit mpmath derivatives.
The rules of ``scipy.special`` live in :mod:`tumble.dual.special`, loaded only when a
SciPy ufunc first meets a dual, so that importing :mod:`tumble.dual` does not import SciPy.

This module knows nothing of the dual type. A derivative receives the ufunc's output and
its inputs, which are plain operands (:data:`PLAIN_OPERANDS`) or duals of an enclosing
differentiation; it is written with NumPy operations so that it runs on both.

Rules that keep every digit: each formula below is the one that neither cancels nor
overflows where the textbook form does (``expm1' = exp``, not ``expm1 + 1``;
``tanh' = sech²`` from ``e^{-2|x|}``, not ``1 - tanh²``; ``(1 - x)(1 + x)`` instead of
``1 - x²`` near ±1; ``hypot`` instead of a sum of squares). On the duals of an enclosing
differentiation, whose chain rule differentiates the formula itself, a few rules switch to
forms whose own derivatives do not cancel either (near 0 for ``tanh``, ``arcsin``,
``arccos``, ``arctanh``; in ratios below 1 for ``hypot`` and ``arctan2``), so that
second and third derivatives keep every digit too.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from tumble._errors import InputError

# real_dtype, safe_ratio and the building blocks of a rule (Coefficient, Derivative) serve
# the other modules of the package and are not exported.
__all__ = [
    "FINITE_DERIVATIVES",
    "MINUS_ONE",
    "NOT_DIFFERENTIABLE",
    "ONE",
    "PIECEWISE_CONSTANT",
    "PLAIN_OPERANDS",
    "PREDICATES",
    "RULES",
    "ZERO",
    "Partner",
    "Rule",
]

PLAIN_OPERANDS: tuple[type[Any], ...] = (np.ndarray, np.generic, numbers.Real)
"""The operand types other than duals: what a ufunc on duals receives besides them."""


class Coefficient:
    """A derivative that is a known constant ``value``, so the rule can skip a multiplication."""

    def __init__(self, name: str, value: float) -> None:
        self.name = name
        self.value = value

    def __repr__(self) -> str:
        return self.name


ONE = Coefficient("ONE", 1.0)
"""Derivative 1: the partials pass through unchanged."""
MINUS_ONE = Coefficient("MINUS_ONE", -1.0)
"""Derivative -1: the partials are negated."""
ZERO = Coefficient("ZERO", 0.0)
"""Derivative 0: the argument's partials do not contribute."""
NOT_DIFFERENTIABLE = Coefficient("NOT_DIFFERENTIABLE", math.nan)
"""No derivative with respect to this argument (an integer exponent, a Bessel order):
a dual there raises ``TypeError``; a plain operand is fine."""


def _describe(x: Any) -> str:
    return f"{type(x).__name__} {x!r}"[:80]


class Partner:
    """Derivative ``sign * partner(x)`` of a unary ufunc (sin' = cos, cos' = -sin...).

    Calling it computes the derivative; besides, the dual type keeps ``ufunc(x)`` and
    ``partner(x)`` on the dual ``x``, so ``sin(t)`` and ``cos(t)`` of one dual cost two
    transcendental evaluations together instead of four.

    Parameters
    ----------
    partner : numpy.ufunc
        A unary ufunc with one output.
    sign : {1, -1}
        The sign of the derivative.
    """

    partner: np.ufunc
    sign: float

    def __init__(self, partner: np.ufunc, sign: float) -> None:
        if not isinstance(partner, np.ufunc) or partner.nin != 1 or partner.nout != 1:
            raise InputError(
                f"partner: expected a unary NumPy ufunc with one output, got {_describe(partner)}"
            )
        if isinstance(sign, bool) or not isinstance(sign, numbers.Real) or sign not in (1, -1):
            raise InputError(f"sign: expected 1 or -1, got {_describe(sign)}")
        self.partner = partner
        self.sign = float(sign)

    def __call__(self, out: Any, x: Any) -> Any:
        value = self.partner(x)
        return value if self.sign > 0 else -value

    def __repr__(self) -> str:
        return f"{'' if self.sign > 0 else '-'}{self.partner.__name__}"


Derivative: TypeAlias = Callable[..., Any] | Coefficient


@dataclass(frozen=True)
class Rule:
    """How a ufunc acts on duals: the value is the ufunc itself, the partials follow

    ``d out = sum_i derivs[i](out, *args) * d args[i]``.

    Attributes
    ----------
    derivs : tuple
        One entry per ufunc input: a function ``(out, *args) -> ∂out/∂args[i]`` written
        with NumPy operations (so it also runs on nested duals), a :class:`Partner`
        (``±partner(x)``, evaluated once with the value; unary rules only), or one of the
        constants ``ONE``, ``MINUS_ONE``, ``ZERO``, ``NOT_DIFFERENTIABLE``. For a ufunc
        with ``nout > 1`` outputs, ``out`` is the tuple of outputs and each function
        returns a tuple of ``nout`` derivatives (``None`` for an output that is an integer
        and carries no partials).
    domain : tuple of (low, high)
        Per input, a finite interval inside which the function is smooth; the tests
        sample there.
    source : str
        Where the derivative comes from (a DLMF equation number for special functions).
    nout : int
        Number of outputs of the ufunc (default 1).
    """

    derivs: tuple[Derivative, ...]
    domain: tuple[tuple[float, float], ...]
    source: str = ""
    nout: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.nout, int) or isinstance(self.nout, bool) or self.nout < 1:
            raise InputError(f"nout: expected an integer >= 1, got {_describe(self.nout)}")
        if not isinstance(self.derivs, tuple) or not self.derivs:
            raise InputError(
                f"derivs: expected a non-empty tuple of derivatives, got {_describe(self.derivs)}"
            )
        for i, d in enumerate(self.derivs):
            if not (isinstance(d, Coefficient) or callable(d)):
                raise InputError(
                    f"derivs: entry {i} must be a function (out, *args), a Partner or one of "
                    f"ONE, MINUS_ONE, ZERO, NOT_DIFFERENTIABLE; got {_describe(d)}"
                )
            if isinstance(d, Partner) and len(self.derivs) != 1:
                raise InputError(f"derivs: a Partner (entry {i}) is for unary ufuncs only")
            if self.nout > 1 and isinstance(d, Coefficient | Partner):
                raise InputError(
                    f"derivs: entry {i} of a rule with {self.nout} outputs must be a function "
                    "returning one derivative per output"
                )
        if not isinstance(self.domain, tuple) or len(self.domain) != len(self.derivs):
            raise InputError(
                f"domain: expected a tuple of {len(self.derivs)} (low, high) intervals, one "
                f"per input, got {_describe(self.domain)}"
            )
        for i, interval in enumerate(self.domain):
            ok = (
                isinstance(interval, tuple)
                and len(interval) == 2
                and all(isinstance(b, numbers.Real) and math.isfinite(b) for b in interval)
                and interval[0] < interval[1]
            )
            if not ok:
                raise InputError(
                    f"domain: entry {i} must be a finite interval (low, high) with low < high, "
                    f"got {_describe(interval)}"
                )
        if not isinstance(self.source, str):
            raise InputError(f"source: expected a string, got {_describe(self.source)}")


def real_dtype(x: Any) -> np.dtype:
    """The float dtype of ``x``: float32 or float64, and float64 for integer values.

    A dual's ``dtype`` is already the dtype at the bottom of its nesting, so for a dual of
    any depth this is its ``dtype``.
    """
    dtype = np.result_type(getattr(x, "dtype", x))
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def safe_ratio(num: Any, den: Any) -> Any:
    """``num / den`` with 0 where ``den == 0`` (the minimal-norm subgradient at a cone tip)."""
    zero = den == 0
    if not np.any(zero):
        return num / den
    return np.where(zero, 0.0, num / np.where(zero, 1.0, den))


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _float_like(mask: Any, like: Any) -> Any:
    """A boolean mask as 0/1 in the real dtype of ``like`` (keeps float32 partials float32)."""
    return np.asarray(mask).astype(real_dtype(like))


def _select_weight(mine: Any, other: Any, better: Callable[[Any, Any], Any], out: Any) -> Any:
    # At a tie both arguments get 1/2: the mean of the one-sided derivatives, so that
    # maximum(x, -x) = |x| has derivative 0 at 0 like absolute, and max(x, x) has 1.
    return _float_like(better(mine, other), out) + 0.5 * _float_like(mine == other, out)


def _nan_select_weight(mine: Any, other: Any, better: Callable[[Any, Any], Any], out: Any) -> Any:
    # fmax/fmin take the other argument where one is NaN: the NaN side gets weight 0.
    weight = _select_weight(mine, other, better, out)
    return np.where(np.isnan(other), 1.0, np.where(np.isnan(mine), 0.0, weight))


def _selection_rule(better: Callable[[Any, Any], Any], weight: Any, source: str) -> Rule:
    """maximum/minimum/fmax/fmin: each argument weighted by whether it was selected."""
    return Rule(
        (lambda o, a, b: weight(a, b, better, o), lambda o, a, b: weight(b, a, better, o)),
        ((-3.0, 3.0), (-3.0, 3.0)),
        source,
    )


def _dpow_base(out: Any, x: Any, y: Any) -> Any:
    if isinstance(y, PLAIN_OPERANDS) and np.ndim(y) == 0:
        return 0.0 * x if y == 0 else y * x ** (y - 1)
    # y * x**(y-1) is 0 * inf = NaN at x = 0, y = 0, where x**0 = 1 has derivative 0.
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, 0.0, y * x ** (y - 1))


def _dpow_exponent(out: Any, x: Any, y: Any) -> Any:
    # d/dy x**y = log(x) x**y; at x = 0 the limit (y > 0) is 0, not log(0) * 0 = NaN.
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, np.log(np.where(x == 0, 1.0, x)) * out)


# The rules below also run on duals of an enclosing differentiation, whose chain rule then
# differentiates the formula itself: a formula exact in value can still lose every digit
# of the next derivative. (1 - x)(1 + x) differentiates to -(1 + x) + (1 - x), which is 0
# at x = 1e-20 where -2x = -2e-20 is meant; so on duals, near 0, the rules take the form
# whose derivatives do not cancel, and elsewhere the form whose value does not. Both
# branches are computed (np.where), so each is finite wherever the other is taken.
# Threshold 1/2: beyond it 1 - x*x loses bits near ±1, below it the other form's
# derivative cancels. On plain operands only the value matters, and one form serves.
_SMALL = 0.5


def _one_minus_square(x: Any) -> Any:
    # (1 - x)(1 + x) near ±1: 1 - x is exact for x in [1/2, 2] (Sterbenz), so the product
    # keeps every digit where 1 - x*x loses them (1.5e6 ulp at 1 - 2^-30).
    product = (1 - x) * (1 + x)
    if isinstance(x, PLAIN_OPERANDS):
        return product
    return np.where(np.abs(x) < _SMALL, 1 - x * x, product)


def _dsqrt_one_minus_square(out: Any, x: Any) -> Any:
    return 1 / np.sqrt(_one_minus_square(x))


def _sech2(out: Any, x: Any) -> Any:
    # sech² x = 4t / (1 + t)² with t = e^{-2|x|}: t underflows gracefully where cosh² x
    # would overflow, and nothing cancels where 1 - tanh² x would (1.1e-8 off at x = 10,
    # 0 beyond |x| ≈ 19). Its derivative has the factor 1 - t, 0 near x = 0, where
    # 1 - tanh² x is exact and differentiates to -2 tanh x sech² x without cancelling.
    # |x| clamped at 400, where t = e^-800 is 0 already, so that -2|x| cannot overflow.
    t = np.exp(-2 * np.minimum(np.abs(x), 400.0))
    far = 4 * t / ((1 + t) * (1 + t))
    if isinstance(x, PLAIN_OPERANDS):
        return far
    return np.where(np.abs(x) < _SMALL, 1 - out * out, far)


def _darccosh(out: Any, x: Any) -> Any:
    # 1 / sqrt((x-1)(x+1)) as a product of two roots: x - 1 is exact near 1, and neither
    # factor overflows at x = 1e200 (where x² - 1 would).
    return 1 / (np.sqrt(x - 1) * np.sqrt(x + 1))


def _darctan(out: Any, x: Any) -> Any:
    # 1/(1 + x²), and (1/x)² / (1 + (1/x)²) for |x| > 1, where x² could overflow (each
    # branch computed with the other's arguments replaced, so that neither overflows).
    big = np.abs(x) > 1
    r = 1 / np.where(big, x, 1.0)
    small = np.where(big, 0.0, x)
    return np.where(big, r * r / (1 + r * r), 1 / (1 + small * small))


def _cosine(h: Any, a: Any, b: Any) -> Any:
    """``a / hypot(a, b)`` (0 at the origin) with ``h = hypot(a, b)``: the derivative of
    ``hypot`` in ``a``, and the cosine of the angle of ``(a, b)`` to the ``a`` axis.

    On plain operands the quotient, good to an ulp. On duals, whose chain rule
    differentiates this formula, the quotient's derivative ``(1 - (a/h)²)/h`` cancels to 0
    where ``|b| << |a|`` (the second derivative of ``hypot(x, 1e-20)`` at 1 is 1e-40, not
    0); in terms of the ratio ``t`` of the smaller to the larger argument,
    ``sign(a) / hypot(1, t)`` (``|a| >= |b|``, ``t = b/a``) and ``sign(b) t / hypot(1, t)``
    (``t = a/b``) differentiate into products of ratios at most 1 and powers of ``1/h``,
    without that cancellation.
    """
    if isinstance(a, PLAIN_OPERANDS) and isinstance(b, PLAIN_OPERANDS):
        return safe_ratio(a, h)
    big = np.abs(a) >= np.abs(b)
    # The larger argument divides; at the origin (both 0) the 1 makes t = 0 and sign 0.
    t_big = b / np.where(big, a, 1.0)
    t_small = a / np.where(big, 1.0, b)
    return np.where(
        big, np.sign(a) / np.hypot(1.0, t_big), np.sign(b) * t_small / np.hypot(1.0, t_small)
    )


def _darctan2(numerator: Any, other: Any, sign: float) -> Any:
    # ∂/∂y atan2(y, x) = x / (x² + y²) = (x/h)/h with h = hypot(x, y), and ∂/∂x =
    # -(y/h)/h: neither squares underflow at (1e-200, 1e-200) nor overflow at 1e200. At
    # the origin, where atan2 jumps, 0.
    if isinstance(numerator, PLAIN_OPERANDS) and isinstance(other, PLAIN_OPERANDS):
        h = np.hypot(numerator, other)
        return sign * safe_ratio(safe_ratio(numerator, h), h)
    # On duals, the terms of the next derivative are of order 1/h² each (5e399 at 1e-200)
    # and would overflow before they cancel (inf - inf = NaN). The arguments scaled by a
    # power of two s near the larger (exactly) give terms of order 1/(h/s)² = O(1) that
    # cancel first; the one division by s comes last.
    # The larger is in [2^(e-1), 2^e); 2^(e-1), not 2^e, stays finite at 1.8e308.
    exponent = np.frexp(np.maximum(np.abs(numerator), np.abs(other)))[1] - 1
    scale = np.ldexp(_float_like(1, numerator), exponent)
    a, b = numerator / scale, other / scale
    h = np.hypot(a, b)
    return sign * safe_ratio(_cosine(h, a, b), h) / scale


def _logistic(d: Any) -> Any:
    """``1 / (1 + e^{-d})`` with derivatives of every order to full relative accuracy.

    ``1/(1 + z)`` and ``z/(1 + z)`` with ``z = e^{-|d|}`` never overflow; on duals near
    0, where their derivatives cancel (``σ'' = σ'(1 - 2σ)``), ``(1 + tanh(d/2))/2``, whose
    do not.
    """
    z = np.exp(np.where(d >= 0, -d, d))
    far = np.where(d >= 0, 1 / (1 + z), z / (1 + z))
    if isinstance(d, PLAIN_OPERANDS):
        return far
    return np.where(np.abs(d) < 1, 0.5 + 0.5 * np.tanh(0.5 * d), far)


def _dlogaddexp(a: Any, b: Any, scale: float) -> Any:
    # ∂/∂a log(e^a + e^b) = σ(a - b): exp(a - out) rounds out first, and gives 1, not 1/2,
    # at a = b = 1e200 (where out = a + log 2 rounds to a). a - b may overflow to ±inf
    # (σ is then 1 or 0, as it should be).
    with np.errstate(over="ignore"):
        d = a - b
    return _logistic(d * scale)


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
    np.conjugate: Rule((ONE,), (_ANY,), "real argument: conj x = x"),
    np.add: Rule((ONE, ONE), (_ANY, _ANY)),
    np.subtract: Rule((ONE, MINUS_ONE), (_ANY, _ANY)),
    np.multiply: Rule((lambda o, a, b: b, lambda o, a, b: a), (_ANY, _ANY), "b, a"),
    # np.divide, not the operator: 1 / 0.0 between Python floats would raise
    # ZeroDivisionError where NumPy gives inf with a RuntimeWarning.
    np.divide: Rule(
        (lambda o, a, b: np.divide(1.0, b), lambda o, a, b: np.divide(-o, b)),
        (_ANY, _POS),
        "1/b, -out/b",
    ),
    np.power: Rule(
        (_dpow_base, _dpow_exponent), (_POS, _ANY), "y x^(y-1) (0 at y = 0), x^y log x (0 at x = 0)"
    ),
    np.float_power: Rule((_dpow_base, _dpow_exponent), (_POS, _ANY), "as power"),
    np.reciprocal: Rule((lambda o, x: -o * o,), (_POS,), "-1/x²"),
    np.square: Rule((lambda o, x: 2 * x,), (_ANY,), "2x"),
    np.sqrt: Rule((lambda o, x: 0.5 / o,), (_POS,), "1/(2 sqrt x)"),
    np.cbrt: Rule((lambda o, x: 1 / (3 * o * o),), (_POS,), "1/(3 cbrt(x)²)"),
    np.exp: Rule((lambda o, x: o,), (_ANY,), "exp x"),
    np.exp2: Rule((lambda o, x: o * _LN2,), (_ANY,), "2^x ln 2"),
    np.expm1: Rule((Partner(np.exp, 1.0),), (_ANY,), "expm1' = exp (not expm1 + 1)"),
    np.log: Rule((lambda o, x: 1 / x,), (_POS,), "1/x"),
    np.log2: Rule((lambda o, x: 1 / (x * _LN2),), (_POS,), "1/(x ln 2)"),
    np.log10: Rule((lambda o, x: 1 / (x * _LN10),), (_POS,), "1/(x ln 10)"),
    np.log1p: Rule((lambda o, x: 1 / (1 + x),), ((-0.8, 3.0),), "1/(1+x)"),
    np.sin: Rule((Partner(np.cos, 1.0),), (_ANY,)),
    np.cos: Rule((Partner(np.sin, -1.0),), (_ANY,)),
    np.tan: Rule((lambda o, x: 1 + o * o,), ((-1.4, 1.4),), "1 + tan² x"),
    np.arcsin: Rule((_dsqrt_one_minus_square,), (_UNIT,), "1/sqrt((1-x)(1+x)); 1 - x² near 0"),
    np.arccos: Rule(
        (lambda o, x: -_dsqrt_one_minus_square(o, x),),
        (_UNIT,),
        "-1/sqrt((1-x)(1+x)); 1 - x² near 0",
    ),
    np.arctan: Rule((_darctan,), (_ANY,), "1/(1+x²), (1/x)²/(1+(1/x)²) for |x| > 1"),
    np.arctan2: Rule(
        (
            lambda o, y, x: _darctan2(x, y, 1.0),
            lambda o, y, x: _darctan2(y, x, -1.0),
        ),
        (_POS, _ANY),
        "(x/h)/h and -(y/h)/h with h = hypot(x, y); on duals scaled, x/h as for hypot",
    ),
    np.sinh: Rule((Partner(np.cosh, 1.0),), (_ANY,)),
    np.cosh: Rule((Partner(np.sinh, 1.0),), (_ANY,)),
    np.tanh: Rule((_sech2,), (_ANY,), "sech² x = 4t/(1+t)², t = exp(-2|x|); 1 - tanh² x near 0"),
    np.arcsinh: Rule((lambda o, x: 1 / np.hypot(x, 1.0),), (_ANY,), "1/hypot(x, 1)"),
    np.arccosh: Rule((_darccosh,), ((1.2, 4.0),), "1/(sqrt(x-1) sqrt(x+1))"),
    np.arctanh: Rule(
        (lambda o, x: 1 / _one_minus_square(x),), (_UNIT,), "1/((1-x)(1+x)); 1 - x² near 0"
    ),
    np.hypot: Rule(
        (lambda o, x, y: _cosine(o, x, y), lambda o, x, y: _cosine(o, y, x)),
        (_ANY, _POS),
        "x/h, y/h (0 at the origin); in ratios below 1 on duals",
    ),
    np.absolute: Rule((lambda o, x: np.sign(x),), (_ANY,), "sign x (0 at 0)"),
    np.fabs: Rule((lambda o, x: np.sign(x),), (_ANY,), "sign x (0 at 0)"),
    np.maximum: _selection_rule(
        np.greater, _select_weight, "1 to the larger argument, 1/2 each at a tie"
    ),
    np.minimum: _selection_rule(
        np.less, _select_weight, "1 to the smaller argument, 1/2 each at a tie"
    ),
    np.fmax: _selection_rule(
        np.greater, _nan_select_weight, "as maximum; a NaN argument gets weight 0"
    ),
    np.fmin: _selection_rule(
        np.less, _nan_select_weight, "as minimum; a NaN argument gets weight 0"
    ),
    np.copysign: Rule(
        (lambda o, x, y: 2 * _float_like(np.signbit(x) == np.signbit(y), o) - 1, ZERO),
        (_ANY, _ANY),
        "copysign(x, y) = ±x: ∂x = ±1, ∂y = 0 (a step)",
    ),
    np.ldexp: Rule(
        (lambda o, x, i: np.ldexp(_float_like(1, o), i), NOT_DIFFERENTIABLE),
        (_ANY, (-3.0, 3.0)),
        "x 2^i",
    ),
    np.deg2rad: Rule((lambda o, x: math.pi / 180,), (_ANY,), "π/180"),
    np.radians: Rule((lambda o, x: math.pi / 180,), (_ANY,), "π/180"),
    np.rad2deg: Rule((lambda o, x: 180 / math.pi,), (_ANY,), "180/π"),
    np.degrees: Rule((lambda o, x: 180 / math.pi,), (_ANY,), "180/π"),
    np.logaddexp: Rule(
        (lambda o, a, b: _dlogaddexp(a, b, 1.0), lambda o, a, b: _dlogaddexp(b, a, 1.0)),
        (_ANY, _ANY),
        "σ(a - b), σ(b - a) with σ the logistic function",
    ),
    np.logaddexp2: Rule(
        (lambda o, a, b: _dlogaddexp(a, b, _LN2), lambda o, a, b: _dlogaddexp(b, a, _LN2)),
        (_ANY, _ANY),
        "σ((a - b) ln 2), σ((b - a) ln 2)",
    ),
    np.remainder: Rule(
        (ONE, lambda o, a, b: -np.floor_divide(a, b)), (_NUMERATOR, _DENOMINATOR), "1, -floor(a/b)"
    ),
    np.fmod: Rule(
        (ONE, lambda o, a, b: -np.trunc(a / b)), (_NUMERATOR, _DENOMINATOR), "1, -trunc(a/b)"
    ),
    np.divmod: Rule(
        (lambda o, a, b: (0.0, 1.0), lambda o, a, b: (0.0, -np.floor_divide(a, b))),
        (_NUMERATOR, _DENOMINATOR),
        "(a // b, a % b): the quotient is a step",
        nout=2,
    ),
    np.modf: Rule((lambda o, x: (1.0, 0.0),), (_FRACTION,), "(fraction, integer part)", nout=2),
    np.frexp: Rule(
        (lambda o, x: (np.ldexp(_float_like(1, o[0]), -o[1]), None),),
        ((0.2, 3.0),),
        "x = m 2^e: ∂m = 2^-e, e an integer",
        nout=2,
    ),
    # Step functions: derivative 0 where it exists, and 0 chosen at the jumps, where none
    # exists (the convention of ForwardDiff.jl and JAX). Documented in docs/dual.md.
    np.floor: Rule((ZERO,), (_FRACTION,), "a step: 0"),
    np.ceil: Rule((ZERO,), (_FRACTION,), "a step: 0"),
    np.trunc: Rule((ZERO,), (_FRACTION,), "a step: 0"),
    np.rint: Rule((ZERO,), ((0.1, 0.4),), "a step: 0"),
    np.sign: Rule((ZERO,), (_POS,), "a step: 0"),
    np.spacing: Rule((ZERO,), (_POS,), "a step: 0"),
    np.nextafter: Rule((ONE, ZERO), (_ANY, _ANY), "the next float: a step of one ulp"),
    np.floor_divide: Rule((ZERO, ZERO), (_NUMERATOR, _DENOMINATOR), "a step: 0"),
    np.heaviside: Rule((ZERO, ZERO), (_POS, (0.0, 1.0)), "a step: 0"),
}
"""The derivative table: ufunc -> :class:`Rule`. One entry per differentiable ufunc."""

FINITE_DERIVATIVES = frozenset(RULES) - {
    np.divide,
    np.power,
    np.float_power,
    np.reciprocal,
    np.sqrt,
    np.cbrt,
    np.log,
    np.log2,
    np.log10,
    np.log1p,
    np.tan,
    np.arcsin,
    np.arccos,
    np.arctanh,
    np.arccosh,
}
"""Ufuncs whose derivatives are finite wherever their inputs and value are: the NaN-safe
product need not check their coefficients (the drivers re-check every coefficient when a
result holds NaN anyway). The others (``sqrt`` at 0, ``1/x``, ``arcsin`` at ±1, every
``scipy.special`` rule) are checked on every call."""

PIECEWISE_CONSTANT = frozenset(
    u for u, r in RULES.items() if all(d is ZERO or d is NOT_DIFFERENTIABLE for d in r.derivs)
)
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
        np.logical_and,
        np.logical_or,
        np.logical_xor,
        np.logical_not,
    }
)
"""Ufuncs applied to the value only; they return plain boolean arrays."""

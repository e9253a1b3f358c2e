"""The derivative table: one :class:`Rule` per differentiable ufunc.

A rule says how a ufunc acts on duals. The value is the ufunc itself; the partials follow
the chain rule ``d out = Σ_i ∂out/∂args[i] · d args[i]``, with one derivative per input.
:mod:`tumble.dual.number` applies the table to every ufunc call on a :class:`Dual`, and the
tests sample each entry inside its ``domain`` against closed forms and finite differences.

This module knows nothing of the dual type. A derivative receives the ufunc's output and
its inputs, which are plain operands (:data:`PLAIN_OPERANDS`) or duals of an enclosing
differentiation; it is written with NumPy operations so that it runs on both.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

__all__ = [
    "MINUS_ONE",
    "ONE",
    "PIECEWISE_CONSTANT",
    "PLAIN_OPERANDS",
    "PREDICATES",
    "RULES",
    "ZERO",
    "Coefficient",
    "Derivative",
    "Partner",
    "Rule",
    "real_dtype",
    "safe_ratio",
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


class Partner:
    """Derivative ``sign * partner(x)`` of a unary ufunc (sin' = cos, cos' = -sin...).

    Calling it computes the derivative; besides, the dual type keeps ``ufunc(x)`` and
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
        (``±partner(x)``, evaluated once with the value), or one of the constants ``ONE``,
        ``MINUS_ONE``, ``ZERO``.
    domain : tuple of (low, high)
        Per input, an interval inside which the function is smooth; the tests sample there.
    """

    derivs: tuple[Derivative, ...]
    domain: tuple[tuple[float, float], ...]


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
        (lambda o, x, y: safe_ratio(x, o), lambda o, x, y: safe_ratio(y, o)), (_ANY, _POS)
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

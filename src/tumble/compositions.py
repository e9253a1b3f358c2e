"""Composition schemes: higher-order methods built from a time-symmetric second-order step.

A composition of a symmetric (self-adjoint) step ``Φ_h`` of order 2 with coefficients
``γ_1 .. γ_s`` is

    Ψ_h = Φ_{γ_s h} ∘ ... ∘ Φ_{γ_2 h} ∘ Φ_{γ_1 h}.

With a palindromic ``γ`` (``γ_i = γ_{s+1-i}``) ``Ψ`` is symmetric again, so its order is
even, and it reaches order 4 when

    Σ γ_i = 1,   Σ γ_i³ = 0,

and order 6 when in addition

    Σ γ_i⁵ = 0,   Σ γ_i³ β_i² = 0,   β_i = γ_1 + ... + γ_{i-1} + γ_i / 2

(Hairer, Lubich & Wanner, *Geometric Numerical Integration*, 2nd ed., §V.3.2, the
conditions for symmetric compositions of symmetric methods). :func:`order_conditions`
evaluates them; ``tests/test_compositions.py`` checks every scheme against them and against
an independent oracle (the local error of composed Strang splittings of random matrix
exponentials).

Order 4 needs a negative coefficient (Sheng 1989, Suzuki 1991): some sub-steps run
backwards in time. Every scheme keeps what each sub-step keeps (``|L|``, world ``L``,
energy where the base keeps it) and what the base is exact for (a composition of exact
flows is the exact flow over ``Σ γ_i h = h``).

A composed integrator is named ``"<base>:<scheme>"`` (``"splitting:suzuki4"``);
:func:`tumble.rigid.method_info` gives its record and ``docs/integrators.md`` its
measured errors and costs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

import numpy as np

from tumble._errors import InputError
from tumble._validate import as_float_array, describe

__all__ = ["COMPOSITIONS", "Composition", "order_conditions", "render_table"]


@dataclass(frozen=True)
class Composition:
    """One composition scheme.

    Attributes
    ----------
    name : str
        The scheme's name, the part after ``:`` in a composed method name.
    order : int
        Order of the composition of a symmetric second-order base (4 or 6).
    coefficients : tuple of float
        ``γ_1 .. γ_s``, palindromic, summing to 1 (to round-off).
    citation : str
        Where the scheme is published.
    """

    name: str
    order: int
    coefficients: tuple[float, ...]
    citation: str

    @property
    def stages(self) -> int:
        """Number of base steps per composed step, ``s``."""
        return len(self.coefficients)


def _palindrome(*half: float) -> tuple[float, ...]:
    """``(w_1, .., w_k, c, w_k, .., w_1)`` with the centre ``c = 1 - 2 Σ w`` (so ``Σ γ = 1``)."""
    return (*half, 1.0 - 2.0 * math.fsum(half), *reversed(half))


_CBRT2 = 2.0 ** (1.0 / 3.0)
_YOSHIDA4 = 1.0 / (2.0 - _CBRT2)
_SUZUKI4 = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))

_SCHEMES: dict[str, Composition] = {
    c.name: c
    for c in (
        Composition(
            "yoshida4", 4, _palindrome(_YOSHIDA4),
            "Yoshida, Phys. Lett. A 150 (1990) 262 (the triple jump; also Forest & Ruth 1990)",
        ),
        Composition(
            "suzuki4", 4, _palindrome(_SUZUKI4, _SUZUKI4),
            "Suzuki, Phys. Lett. A 146 (1990) 319 (five stages, small negative centre)",
        ),
        Composition(
            "mclachlan4", 4, _palindrome(0.28, 0.62546642846767004501),
            "McLachlan, SIAM J. Sci. Comput. 16 (1995) 151: five stages of minimum error "
            "(coefficients as in Hairer, Lubich & Wanner, Geometric Numerical Integration, "
            "§V.3.2)",
        ),
        Composition(
            "yoshida6", 6,
            _palindrome(0.78451361047755726382, 0.23557321335935813368, -1.17767998417887100695),
            "Yoshida, Phys. Lett. A 150 (1990) 262, solution A (seven stages)",
        ),
        Composition(
            "kahanli6", 6,
            _palindrome(
                0.39216144400731413928, 0.33259913678935943860, -0.70624617255763935981,
                0.082213596293550800230,
            ),
            "Kahan & Li, Math. Comp. 66 (1997) 1089 (nine stages)",
        ),
    )
}  # fmt: skip

COMPOSITIONS: Mapping[str, Composition] = MappingProxyType(_SCHEMES)
"""The schemes by name (each a :class:`Composition`), read-only: the docs, the lab and
sweeps read this registry."""


def order_conditions(coefficients: tuple[float, ...]) -> dict[str, float]:
    """Residuals of the order conditions of a symmetric composition (module docstring).

    Returns ``{"sum": Σγ - 1, "cubic": Σγ³, "quintic": Σγ⁵, "mixed": Σγ³β²}``: all four
    vanish for order 6, the first two for order 4. Each residual is computed exactly from
    the floats given (integer arithmetic on a common power-of-two denominator) and rounded
    once, so cancellation loses nothing and huge or subnormal coefficients are taken at
    their value.

    Raises
    ------
    InputError
        ``coefficients`` is not a non-empty sequence of finite real numbers, or a residual
        is beyond the float range.
    """
    g = tuple(as_float_array(coefficients, "coefficients").ravel().tolist())
    if np.ndim(coefficients) != 1 or not g:
        raise InputError(
            f"coefficients: expected a non-empty sequence of numbers, got {describe(coefficients)}"
        )
    # γ_i = n_i / d with d the largest denominator (a power of two): exact integers.
    ratios = [x.as_integer_ratio() for x in g]
    d = max(den for _, den in ratios)
    n = [num * (d // den) for num, den in ratios]
    prefix = list(itertools.accumulate(n, initial=0))
    twice_beta = [2 * p + m for p, m in zip(prefix[:-1], n, strict=True)]  # 2 d β_i
    exact = {
        "sum": Fraction(prefix[-1] - d, d),
        "cubic": Fraction(sum(m**3 for m in n), d**3),
        "quintic": Fraction(sum(m**5 for m in n), d**5),
        "mixed": Fraction(sum(m**3 * b * b for m, b in zip(n, twice_beta, strict=True)), 4 * d**5),
    }
    try:
        return {name: float(value) for name, value in exact.items()}
    except OverflowError:
        raise InputError(
            "coefficients: too large, an order condition's residual is beyond the float "
            f"range (got {describe(coefficients)})"
        ) from None


def render_table() -> str:
    """The scheme table of ``docs/integrators.md`` as Markdown, one row per scheme."""
    lines = [
        "| scheme | order | stages | coefficients `γ_1 .. γ_s` | source |",
        "|---|---|---|---|---|",
    ]
    for c in COMPOSITIONS.values():
        half = c.coefficients[: (c.stages + 1) // 2]
        gammas = ", ".join(f"{g:.17g}" for g in half) + ", (mirrored)"
        lines.append(f"| `{c.name}` | {c.order} | {c.stages} | {gammas} | {c.citation} |")
    return "\n".join(lines)

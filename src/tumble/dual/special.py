"""Derivative rules of ``scipy.special`` ufuncs, each from the DLMF.

Loaded by :func:`tumble.dual.registry.rule_of` the first time a SciPy ufunc meets a dual
(SciPy is then already imported), never by ``import tumble.dual``. Each :class:`Rule`
cites the DLMF equation its derivative comes from (https://dlmf.nist.gov/, by number), and
every derivative is written with ufuncs that have rules themselves, so that second
derivatives (nested duals) work too.

Orders of Bessel functions, the integer ``n`` of ``expn`` and the exponent ``s`` of the
Hurwitz zeta function are parameters: a dual there raises ``TypeError``
(:data:`~tumble.dual.rules.NOT_DIFFERENTIABLE`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as sc

from tumble.dual.rules import NOT_DIFFERENTIABLE, Partner, Rule

__all__ = ["SPECIAL_RULES"]

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_DEG = math.pi / 180

_ANY = (-3.0, 3.0)
_POS = (0.2, 3.0)
_UNIT = (-0.9, 0.9)
_ORDER = (0.5, 2.5)


def _sinc(x: Any) -> Any:
    """sin x / x, 1 at 0 (np.sinc is normalised: sinc(t) = sin(πt)/(πt))."""
    return np.sinc(x / math.pi)


def _sign(x: Any) -> Any:
    return np.sign(x)


def _dexpn_x(o: Any, n: Any, x: Any) -> Any:
    # E_n' = -E_{n-1} (DLMF 8.19.13); E_0 = e^{-x}/x has E_0' = -e^{-x}(1 + x)/x².
    return np.where(n == 0, -np.exp(-x) * (1 + x) / (x * x), -sc.expn(np.maximum(n - 1, 0), x))


def _dairy(o: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    ai, aip, bi, bip = o
    return aip, x * ai, bip, x * bi


def _dairye(o: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    # eAi = Ai e^{ζ}, eBi = Bi e^{-|Re ζ|}, ζ = (2/3) x^{3/2} (real for x > 0, the domain).
    eai, eaip, ebi, ebip = o
    r = np.sqrt(x)
    return eaip + r * eai, x * eai + r * eaip, ebip - r * ebi, x * ebi - r * ebip


def _bessel_rule(f: np.ufunc, sign: float, source: str) -> Rule:
    """∂/∂x f_ν(x) = (f_{ν-1}(x) ∓ f_{ν+1}(x))/2, the order a parameter."""
    return Rule(
        (NOT_DIFFERENTIABLE, lambda o, v, x: (f(v - 1, x) + sign * f(v + 1, x)) / 2),
        (_ORDER, _POS),
        source,
    )


SPECIAL_RULES: dict[np.ufunc, Rule] = {
    # Error functions (DLMF 7.2, 7.10, 7.17)
    sc.erf: Rule((lambda o, x: _TWO_OVER_SQRT_PI * np.exp(-x * x),), (_ANY,), "DLMF 7.10.1"),
    sc.erfc: Rule((lambda o, x: -_TWO_OVER_SQRT_PI * np.exp(-x * x),), (_ANY,), "DLMF 7.10.1"),
    sc.erfi: Rule(
        (lambda o, x: _TWO_OVER_SQRT_PI * np.exp(x * x),),
        (_ANY,),
        "DLMF 7.10.1 with erfi x = -i erf(ix)",
    ),
    sc.erfcx: Rule(
        (lambda o, x: 2 * x * o - _TWO_OVER_SQRT_PI,),
        (_ANY,),
        "DLMF 7.10.1 with erfcx x = e^{x²} erfc x",
    ),
    sc.erfinv: Rule(
        (lambda o, x: _SQRT_PI_OVER_TWO * np.exp(o * o),), (_UNIT,), "DLMF 7.10.1, inverse function"
    ),
    sc.erfcinv: Rule(
        (lambda o, x: -_SQRT_PI_OVER_TWO * np.exp(o * o),),
        ((0.1, 1.9),),
        "DLMF 7.10.1, inverse function",
    ),
    sc.dawsn: Rule((lambda o, x: 1 - 2 * x * o,), (_ANY,), "DLMF 7.2.5 (F' = 1 - 2xF)"),
    sc.ndtr: Rule(
        (lambda o, x: _INV_SQRT_2PI * np.exp(-0.5 * x * x),),
        (_ANY,),
        "DLMF 7.10.1 with Φ(x) = erfc(-x/√2)/2",
    ),
    sc.ndtri: Rule(
        (lambda o, x: 1 / (_INV_SQRT_2PI * np.exp(-0.5 * o * o)),),
        ((0.1, 0.9),),
        "DLMF 7.10.1, inverse function",
    ),
    sc.log_ndtr: Rule(
        (lambda o, x: _INV_SQRT_2PI * np.exp(-0.5 * x * x - o),), (_ANY,), "DLMF 7.10.1, log"
    ),
    # Gamma function and relatives (DLMF 5.2, 5.12, 5.15)
    sc.gamma: Rule((lambda o, x: o * sc.psi(x),), (_POS,), "DLMF 5.2.2 (Γ' = Γ ψ)"),
    sc.rgamma: Rule((lambda o, x: -o * sc.psi(x),), (_POS,), "DLMF 5.2.2 (1/Γ)' = -ψ/Γ"),
    sc.gammaln: Rule((lambda o, x: sc.psi(x),), (_POS,), "DLMF 5.2.2 (ln|Γ|)' = ψ"),
    sc.loggamma: Rule((lambda o, x: sc.psi(x),), (_POS,), "DLMF 5.2.2 (ln Γ)' = ψ"),
    sc.psi: Rule(
        (lambda o, x: sc.zeta(2.0, x),), (_POS,), "DLMF 5.15.1 with 25.11.12: ψ' = ζ(2, x)"
    ),
    sc.beta: Rule(
        (
            lambda o, a, b: o * (sc.psi(a) - sc.psi(a + b)),
            lambda o, a, b: o * (sc.psi(b) - sc.psi(a + b)),
        ),
        (_POS, _POS),
        "DLMF 5.12.1 with 5.2.2",
    ),
    sc.betaln: Rule(
        (
            lambda o, a, b: sc.psi(a) - sc.psi(a + b),
            lambda o, a, b: sc.psi(b) - sc.psi(a + b),
        ),
        (_POS, _POS),
        "DLMF 5.12.1 with 5.2.2",
    ),
    sc._ufuncs._zeta: Rule(
        (NOT_DIFFERENTIABLE, lambda o, s, q: -s * sc.zeta(s + 1, q)),
        ((2.0, 4.0), _POS),
        "DLMF 25.11.17 (∂ζ(s, q)/∂q = -s ζ(s+1, q))",
    ),
    # Logistic and entropy functions
    sc.expit: Rule((lambda o, x: o * sc.expit(-x),), (_ANY,), "σ' = σ(x) σ(-x) (no 1 - σ)"),
    sc.logit: Rule((lambda o, x: 1 / (x * (1 - x)),), ((0.1, 0.9),), "1/(x(1-x))"),
    sc.log_expit: Rule((lambda o, x: sc.expit(-x),), (_ANY,), "(log σ)' = σ(-x)"),
    sc.xlogy: Rule((lambda o, x, y: np.log(y), lambda o, x, y: x / y), (_ANY, _POS), "x log y"),
    sc.xlog1py: Rule(
        (lambda o, x, y: np.log1p(y), lambda o, x, y: x / (1 + y)), (_ANY, _POS), "x log(1+y)"
    ),
    sc.entr: Rule((lambda o, x: -np.log(x) - 1,), (_POS,), "-x log x"),
    # Bessel functions (DLMF 10.6, 10.29)
    sc.j0: Rule((lambda o, x: -sc.j1(x),), (_ANY,), "DLMF 10.6.3"),
    sc.j1: Rule((lambda o, x: (sc.j0(x) - sc.jv(2, x)) / 2,), (_ANY,), "DLMF 10.6.1"),
    sc.y0: Rule((lambda o, x: -sc.y1(x),), (_POS,), "DLMF 10.6.3"),
    sc.y1: Rule((lambda o, x: (sc.y0(x) - sc.yv(2, x)) / 2,), (_POS,), "DLMF 10.6.1"),
    sc.jv: _bessel_rule(sc.jv, -1.0, "DLMF 10.6.1"),
    sc.jve: _bessel_rule(sc.jve, -1.0, "DLMF 10.6.1 (jve = jv for real x)"),
    sc.yv: _bessel_rule(sc.yv, -1.0, "DLMF 10.6.1"),
    sc.yve: _bessel_rule(sc.yve, -1.0, "DLMF 10.6.1 (yve = yv for real x)"),
    sc.iv: _bessel_rule(sc.iv, +1.0, "DLMF 10.29.1"),
    sc.ive: Rule(
        (
            NOT_DIFFERENTIABLE,
            lambda o, v, x: (sc.ive(v - 1, x) + sc.ive(v + 1, x)) / 2 - _sign(x) * o,
        ),
        (_ORDER, _POS),
        "DLMF 10.29.1 with ive = iv e^{-|x|}",
    ),
    sc.kv: Rule(
        (NOT_DIFFERENTIABLE, lambda o, v, x: -(sc.kv(v - 1, x) + sc.kv(v + 1, x)) / 2),
        (_ORDER, _POS),
        "DLMF 10.29.1",
    ),
    sc.kve: Rule(
        (NOT_DIFFERENTIABLE, lambda o, v, x: o - (sc.kve(v - 1, x) + sc.kve(v + 1, x)) / 2),
        (_ORDER, _POS),
        "DLMF 10.29.1 with kve = kv e^x",
    ),
    sc.i0: Rule((lambda o, x: sc.i1(x),), (_ANY,), "DLMF 10.29.3"),
    sc.i1: Rule((lambda o, x: (sc.i0(x) + sc.iv(2, x)) / 2,), (_ANY,), "DLMF 10.29.1"),
    sc.k0: Rule((lambda o, x: -sc.k1(x),), (_POS,), "DLMF 10.29.3"),
    sc.k1: Rule((lambda o, x: -(sc.k0(x) + sc.kv(2, x)) / 2,), (_POS,), "DLMF 10.29.1"),
    sc.i0e: Rule((lambda o, x: sc.i1e(x) - _sign(x) * o,), (_ANY,), "DLMF 10.29.3, e^{-|x|}"),
    sc.i1e: Rule(
        (lambda o, x: (sc.i0e(x) + sc.ive(2, x)) / 2 - _sign(x) * o,),
        (_ANY,),
        "DLMF 10.29.1, e^{-|x|}",
    ),
    sc.k0e: Rule((lambda o, x: o - sc.k1e(x),), (_POS,), "DLMF 10.29.3, e^x"),
    sc.k1e: Rule((lambda o, x: o - (sc.k0e(x) + sc.kve(2, x)) / 2,), (_POS,), "DLMF 10.29.1, e^x"),
    # Airy functions (DLMF 9.2.1: w'' = x w)
    sc.airy: Rule((_dairy,), (_ANY,), "DLMF 9.2.1", nout=4),
    sc.airye: Rule((_dairye,), (_POS,), "DLMF 9.2.1 with the scaling e^{±(2/3)x^{3/2}}", nout=4),
    # Elliptic integrals (DLMF 19.4), parameter m = k²
    sc.ellipk: Rule(
        (lambda o, m: (sc.ellipe(m) - (1 - m) * o) / (2 * m * (1 - m)),),
        ((0.1, 0.9),),
        "DLMF 19.4.1 in m = k²",
    ),
    sc.ellipe: Rule(
        (lambda o, m: (o - sc.ellipk(m)) / (2 * m),), ((0.1, 0.9),), "DLMF 19.4.1 in m = k²"
    ),
    # Exponential, sine and cosine integrals (DLMF 6.2, 8.19)
    sc.exp1: Rule((lambda o, x: -np.exp(-x) / x,), (_POS,), "DLMF 6.2.1"),
    sc.expi: Rule((lambda o, x: np.exp(x) / x,), (_POS,), "DLMF 6.2.5"),
    sc.expn: Rule((NOT_DIFFERENTIABLE, _dexpn_x), ((0.0, 3.0), _POS), "DLMF 8.19.13"),
    sc.sici: Rule((lambda o, x: (_sinc(x), np.cos(x) / x),), (_POS,), "DLMF 6.2.9, 6.2.11", nout=2),
    # Elementary functions that SciPy also provides
    sc.exp10: Rule((lambda o, x: o * math.log(10),), (_ANY,), "10^x ln 10"),
    sc.exp2: Rule((lambda o, x: o * math.log(2),), (_ANY,), "2^x ln 2"),
    sc.expm1: Rule((Partner(np.exp, 1.0),), (_ANY,), "expm1' = exp"),
    sc.log1p: Rule((lambda o, x: 1 / (1 + x),), ((-0.8, 3.0),), "1/(1+x)"),
    sc.cbrt: Rule((lambda o, x: 1 / (3 * o * o),), (_POS,), "x^{-2/3}/3"),
    sc.cosm1: Rule((lambda o, x: -np.sin(x),), (_ANY,), "cos x - 1"),
    sc.sindg: Rule((lambda o, x: _DEG * sc.cosdg(x),), ((-170.0, 170.0),), "degrees"),
    sc.cosdg: Rule((lambda o, x: -_DEG * sc.sindg(x),), ((-170.0, 170.0),), "degrees"),
    sc.tandg: Rule((lambda o, x: _DEG * (1 + o * o),), ((-80.0, 80.0),), "degrees"),
    sc.cotdg: Rule((lambda o, x: -_DEG * (1 + o * o),), ((10.0, 170.0),), "degrees"),
}
"""``scipy.special`` ufunc -> :class:`Rule`, each citing its source."""

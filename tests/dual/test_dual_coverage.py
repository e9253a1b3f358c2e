"""Coverage of tumble.dual, counted: DiffRules.jl's rule set and 84 array functions.

Two lists, each entry checked against an oracle independent of the rule table:

- ``DIFFRULES``: the 116 functions of DiffRules.jl (the rule set behind ForwardDiff.jl,
  ``src/rules.jl``) spelled as NumPy/SciPy calls. The list: every rule outside NaNMath
  (140), less the 26 trigonometric variants NumPy has no name for (sec/csc/cot and their
  inverses and hyperbolic forms, the degree forms sind... acotd, sinpi/cospi), plus
  NaNMath's max and min, which NumPy spells ``fmax``/``fmin``. A rule with no single
  NumPy/SciPy function is spelled as the expression a NumPy user writes (``log(b, x)`` as
  ``np.log(x) / np.log(b)``) and marked ``composed``. Oracle: mpmath's own function,
  differentiated by ``mpmath.diff`` at 30 digits.
- ``ARRAY_FUNCTIONS``: 84 array-level functions (reductions with ``axis``/``keepdims``/
  ``where``, statistics, linear algebra, joining, reshaping, indexing helpers, sorting).
  Oracles: complex step (``h = 1e-30``, exact to round-off) where NumPy's function is
  analytic on complex input (comparisons are lexicographic, so sorting and max/min follow
  the real part); for the functions that are not (``abs``-based norms, Hermitian
  factorisations), mpmath at 30 digits or a closed form. Agreement to 1e-13.

Entries that do not work carry the reason and must raise ``TypeError``: the counts below
are what runs, not what is claimed.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc

from tumble.dual import Dual, derivative, jacobian

TWO_PI = 2 * math.pi
ANY, POS, UNIT = (-2.5, 2.5), (0.3, 2.5), (-0.9, 0.9)


def _mp_mod(x, y):
    return x - y * mp.floor(x / y)


# name: (spelling, mpmath oracle, domains per argument, composed?) or (None, reason)
DIFFRULES: dict[str, tuple] = {
    # Base, unary
    "+(x)": (np.positive, lambda x: x, (ANY,), False),
    "-(x)": (np.negative, lambda x: -x, (ANY,), False),
    "sqrt": (np.sqrt, mp.sqrt, (POS,), False),
    "cbrt": (np.cbrt, mp.cbrt, (POS,), False),
    "abs2": (np.square, lambda x: x * x, (ANY,), False),
    "inv": (np.reciprocal, lambda x: 1 / x, (POS,), False),
    "log": (np.log, mp.log, (POS,), False),
    "log10": (np.log10, mp.log10, (POS,), False),
    "log2": (np.log2, lambda x: mp.log(x, 2), (POS,), False),
    "log1p": (np.log1p, mp.log1p, (POS,), False),
    "exp": (np.exp, mp.exp, (ANY,), False),
    "exp2": (np.exp2, lambda x: 2**x, (ANY,), False),
    "exp10": (sc.exp10, lambda x: 10**x, (ANY,), False),
    "expm1": (np.expm1, mp.expm1, (ANY,), False),
    "sin": (np.sin, mp.sin, (ANY,), False),
    "cos": (np.cos, mp.cos, (ANY,), False),
    "tan": (np.tan, mp.tan, ((-1.3, 1.3),), False),
    "asin": (np.arcsin, mp.asin, (UNIT,), False),
    "acos": (np.arccos, mp.acos, (UNIT,), False),
    "atan": (np.arctan, mp.atan, (ANY,), False),
    "sinh": (np.sinh, mp.sinh, (ANY,), False),
    "cosh": (np.cosh, mp.cosh, (ANY,), False),
    "tanh": (np.tanh, mp.tanh, (ANY,), False),
    "asinh": (np.arcsinh, mp.asinh, (ANY,), False),
    "acosh": (np.arccosh, mp.acosh, ((1.2, 4.0),), False),
    "atanh": (np.arctanh, mp.atanh, (UNIT,), False),
    "sinc": (np.sinc, mp.sincpi, (ANY,), False),
    "deg2rad": (np.deg2rad, mp.radians, (ANY,), False),
    "mod2pi": (lambda x: np.mod(x, TWO_PI), lambda x: _mp_mod(x, 2 * mp.pi), ((0.1, 6.0),), False),
    "rad2deg": (np.rad2deg, mp.degrees, (ANY,), False),
    "gamma": (sc.gamma, mp.gamma, (POS,), False),
    "loggamma": (sc.gammaln, mp.loggamma, (POS,), False),
    "abs": (np.abs, mp.fabs, (POS,), False),
    # Base, binary and ternary
    "+(x, y)": (np.add, lambda x, y: x + y, (ANY, ANY), False),
    "-(x, y)": (np.subtract, lambda x, y: x - y, (ANY, ANY), False),
    "*": (np.multiply, lambda x, y: x * y, (ANY, ANY), False),
    "/": (np.divide, lambda x, y: x / y, (ANY, POS), False),
    "\\": (lambda x, y: np.divide(y, x), lambda x, y: y / x, (POS, ANY), True),
    "^": (np.power, lambda x, y: x**y, (POS, ANY), False),
    "atan(y, x)": (np.arctan2, mp.atan2, (POS, ANY), False),
    "hypot": (np.hypot, mp.hypot, (ANY, POS), False),
    "log(b, x)": (
        lambda b, x: np.log(x) / np.log(b),
        lambda b, x: mp.log(x, b),
        ((1.5, 3), POS),
        True,
    ),
    "ldexp": (lambda x: np.ldexp(x, 3), lambda x: 8 * x, (ANY,), False),
    "mod": (np.mod, _mp_mod, ((1.2, 1.8), (0.95, 1.05)), False),
    "rem": (np.fmod, mp.fmod, ((1.2, 1.8), (0.95, 1.05)), False),
    "rem2pi": (lambda x: np.fmod(x, TWO_PI), lambda x: mp.fmod(x, 2 * mp.pi), ((0.1, 6.0),), False),
    "max": (np.maximum, max, (ANY, ANY), False),
    "min": (np.minimum, min, (ANY, ANY), False),
    "muladd": (lambda x, y, z: x * y + z, lambda x, y, z: x * y + z, (ANY, ANY, ANY), True),
    "fma": (
        lambda x, y, z: np.multiply(x, y) + z,
        lambda x, y, z: x * y + z,
        (ANY, ANY, ANY),
        True,
    ),
    "ifelse": (lambda x, y: np.where(True, x, y), lambda x, y: x, (ANY, ANY), False),
    "NaNMath.max": (np.fmax, max, (ANY, ANY), False),
    "NaNMath.min": (np.fmin, min, (ANY, ANY), False),
    # SpecialFunctions, unary
    "erf": (sc.erf, mp.erf, (ANY,), False),
    "erfinv": (sc.erfinv, mp.erfinv, (UNIT,), False),
    "erfc": (sc.erfc, mp.erfc, (ANY,), False),
    "logerfc": (lambda x: np.log(sc.erfc(x)), lambda x: mp.log(mp.erfc(x)), (ANY,), True),
    "erfcinv": (sc.erfcinv, lambda x: mp.erfinv(1 - x), ((0.1, 1.9),), False),
    "erfi": (sc.erfi, mp.erfi, (ANY,), False),
    "erfcx": (sc.erfcx, lambda x: mp.exp(x * x) * mp.erfc(x), (ANY,), False),
    "logerfcx": (
        lambda x: np.log(sc.erfcx(x)),
        lambda x: mp.log(mp.exp(x * x) * mp.erfc(x)),
        (ANY,),
        True,
    ),
    "dawson": (sc.dawsn, lambda x: mp.sqrt(mp.pi) / 2 * mp.exp(-x * x) * mp.erfi(x), (ANY,), False),
    "digamma": (sc.psi, mp.digamma, (POS,), False),
    "invdigamma": (None, "SciPy has no inverse digamma function"),
    "trigamma": (
        None,
        "spelled sc.polygamma(1, x): polygamma is a Python function, not a ufunc, and calls "
        "np.asarray on its argument (no dispatch); sc.zeta(2, x) is the same function and works",
    ),
    "airyai": (lambda x: sc.airy(x)[0], mp.airyai, (ANY,), False),
    "airyaiprime": (lambda x: sc.airy(x)[1], lambda x: mp.airyai(x, 1), (ANY,), False),
    "airyaix": (
        lambda x: sc.airye(x)[0],
        lambda x: mp.airyai(x) * mp.exp(2 * x**1.5 / 3),
        (POS,),
        False,
    ),
    "airyaiprimex": (
        lambda x: sc.airye(x)[1],
        lambda x: mp.airyai(x, 1) * mp.exp(2 * x**1.5 / 3),
        (POS,),
        False,
    ),
    "airybi": (lambda x: sc.airy(x)[2], mp.airybi, (ANY,), False),
    "airybiprime": (lambda x: sc.airy(x)[3], lambda x: mp.airybi(x, 1), (ANY,), False),
    "airybix": (
        lambda x: sc.airye(x)[2],
        lambda x: mp.airybi(x) * mp.exp(-2 * x**1.5 / 3),
        (POS,),
        False,
    ),
    "airybiprimex": (
        lambda x: sc.airye(x)[3],
        lambda x: mp.airybi(x, 1) * mp.exp(-2 * x**1.5 / 3),
        (POS,),
        False,
    ),
    "besselj0": (sc.j0, lambda x: mp.besselj(0, x), (ANY,), False),
    "besselj1": (sc.j1, lambda x: mp.besselj(1, x), (ANY,), False),
    "bessely0": (sc.y0, lambda x: mp.bessely(0, x), (POS,), False),
    "bessely1": (sc.y1, lambda x: mp.bessely(1, x), (POS,), False),
    "sinint": (lambda x: sc.sici(x)[0], mp.si, (POS,), False),
    "cosint": (lambda x: sc.sici(x)[1], mp.ci, (POS,), False),
    "ellipk": (sc.ellipk, mp.ellipk, ((0.1, 0.9),), False),
    "ellipe": (sc.ellipe, mp.ellipe, ((0.1, 0.9),), False),
    "expint(x)": (sc.exp1, mp.e1, (POS,), False),
    # SpecialFunctions, binary (orders are parameters: derivatives in x)
    "erf(x, y)": (
        lambda x, y: sc.erf(y) - sc.erf(x),
        lambda x, y: mp.erf(y) - mp.erf(x),
        (ANY, ANY),
        True,
    ),
    "besselj": (lambda x: sc.jv(1.5, x), lambda x: mp.besselj(1.5, x), (POS,), False),
    "besseljx": (lambda x: sc.jve(1.5, x), lambda x: mp.besselj(1.5, x), (POS,), False),
    "besseli": (lambda x: sc.iv(1.5, x), lambda x: mp.besseli(1.5, x), (POS,), False),
    "besselix": (
        lambda x: sc.ive(1.5, x),
        lambda x: mp.besseli(1.5, x) * mp.exp(-abs(x)),
        (POS,),
        False,
    ),
    "bessely": (lambda x: sc.yv(1.5, x), lambda x: mp.bessely(1.5, x), (POS,), False),
    "besselyx": (lambda x: sc.yve(1.5, x), lambda x: mp.bessely(1.5, x), (POS,), False),
    "besselk": (lambda x: sc.kv(1.5, x), lambda x: mp.besselk(1.5, x), (POS,), False),
    "besselkx": (
        lambda x: sc.kve(1.5, x),
        lambda x: mp.besselk(1.5, x) * mp.exp(x),
        (POS,),
        False,
    ),
    "besselh": (None, "complex-valued (sc.hankel1): a Dual is real"),
    "besselhx": (None, "complex-valued (sc.hankel1e): a Dual is real"),
    "hankelh1": (None, "complex-valued (sc.hankel1): a Dual is real"),
    "hankelh1x": (None, "complex-valued (sc.hankel1e): a Dual is real"),
    "hankelh2": (None, "complex-valued (sc.hankel2): a Dual is real"),
    "hankelh2x": (None, "complex-valued (sc.hankel2e): a Dual is real"),
    "polygamma": (
        None,
        "sc.polygamma is a Python function, not a ufunc, and calls np.asarray on its "
        "argument; spell polygamma(m, x) as (-1)**(m+1) * m! * sc.zeta(m + 1, x)",
    ),
    "beta": (sc.beta, mp.beta, (POS, POS), False),
    "logbeta": (sc.betaln, lambda a, b: mp.log(mp.beta(a, b)), (POS, POS), False),
    "expint(ν, x)": (lambda x: sc.expn(2, x), lambda x: mp.expint(2, x), (POS,), False),
    "zeta(s, z)": (lambda z: sc.zeta(3.0, z), lambda z: mp.zeta(3, z), (POS,), False),
    # LogExpFunctions
    "xlogx": (lambda x: sc.xlogy(x, x), lambda x: x * mp.log(x), (POS,), False),
    "logistic": (sc.expit, lambda x: 1 / (1 + mp.exp(-x)), (ANY,), False),
    "logit": (sc.logit, lambda x: mp.log(x / (1 - x)), ((0.1, 0.9),), False),
    "log1psq": (lambda x: np.log1p(x * x), lambda x: mp.log1p(x * x), (ANY,), True),
    "log1pexp": (lambda x: np.logaddexp(0.0, x), lambda x: mp.log1p(mp.exp(x)), (ANY,), False),
    "log1mexp": (
        lambda x: np.log(-np.expm1(x)),
        lambda x: mp.log(-mp.expm1(x)),
        ((-3, -0.2),),
        True,
    ),
    "log2mexp": (
        lambda x: np.log(2 - np.exp(x)),
        lambda x: mp.log(2 - mp.exp(x)),
        ((-3, 0.5),),
        True,
    ),
    "logexpm1": (lambda x: np.log(np.expm1(x)), lambda x: mp.log(mp.expm1(x)), (POS,), True),
    "log1pmx": (lambda x: np.log1p(x) - x, lambda x: mp.log1p(x) - x, (POS,), True),
    "logmxp1": (lambda x: np.log(x) - x + 1, lambda x: mp.log(x) - x + 1, (POS,), True),
    "xlogy": (sc.xlogy, lambda x, y: x * mp.log(y), (ANY, POS), False),
    "logaddexp": (np.logaddexp, lambda x, y: mp.log(mp.exp(x) + mp.exp(y)), (ANY, ANY), False),
    "logsubexp": (
        lambda x, y: x + np.log(-np.expm1(y - x)),
        lambda x, y: mp.log(mp.exp(x) - mp.exp(y)),
        ((1.0, 2.0), (-1.0, 0.5)),
        True,
    ),
    "xlog1py": (sc.xlog1py, lambda x, y: x * mp.log1p(y), (ANY, POS), False),
}

WORKING_DIFFRULES = [name for name, entry in DIFFRULES.items() if entry[0] is not None]

# Derivatives agree with mpmath's to this relative (and absolute, near zeros of the
# derivative) tolerance: SciPy's special functions are good to a few ulp, and rules built
# from recurrences (Bessel functions, ellipk) add a few more.
DIFFRULES_TOL = 1e-12

N_DIFFRULES_POINTS = 6


def test_diffrules_list_is_the_116_names_and_at_least_100_work():
    assert len(DIFFRULES) == 116
    assert len(WORKING_DIFFRULES) >= 100
    print(f"DiffRules names working on duals: {len(WORKING_DIFFRULES)} of {len(DIFFRULES)}")


def _mp_derivative(oracle, args, i):
    with mp.workdps(30):
        point = [mp.mpf(float(a)) for a in args]

        def g(t):
            return oracle(*point[:i], t, *point[i + 1 :])

        return float(mp.diff(g, point[i]))


@pytest.mark.parametrize("name", WORKING_DIFFRULES)
def test_diffrule_against_mpmath(name, rng):
    spelling, oracle, domains, _ = DIFFRULES[name]
    args = [rng.uniform(lo, hi, N_DIFFRULES_POINTS) for lo, hi in domains]
    for i in range(len(args)):

        def f(xi, i=i):
            return spelling(*args[:i], xi, *args[i + 1 :])

        got = derivative(f, args[i])
        want = np.array(
            [_mp_derivative(oracle, [a[p] for a in args], i) for p in range(N_DIFFRULES_POINTS)]
        )
        assert not np.any(np.isnan(got)), name
        np.testing.assert_allclose(got, want, rtol=DIFFRULES_TOL, atol=DIFFRULES_TOL, err_msg=name)


@pytest.mark.parametrize("name", [n for n in DIFFRULES if DIFFRULES[n][0] is None])
def test_diffrules_that_do_not_work_raise_type_error(name):
    reason = DIFFRULES[name][1]
    assert reason
    x = Dual(np.array([0.5, 1.5]), np.ones((2, 1)))
    calls = {
        "invdigamma": None,  # no function to call
        "trigamma": lambda: sc.polygamma(1, x),
        "polygamma": lambda: sc.polygamma(2, x),
        "besselh": lambda: sc.hankel1(1.5, x),
        "besselhx": lambda: sc.hankel1e(1.5, x),
        "hankelh1": lambda: sc.hankel1(1.5, x),
        "hankelh1x": lambda: sc.hankel1e(1.5, x),
        "hankelh2": lambda: sc.hankel2(1.5, x),
        "hankelh2x": lambda: sc.hankel2e(1.5, x),
    }
    call = calls[name]
    if call is None:
        assert not hasattr(sc, "invdigamma")
        assert not hasattr(np, "invdigamma")
        return
    with pytest.raises(TypeError):
        call()


def test_trigamma_and_polygamma_through_zeta_work():
    x = np.array([0.7, 1.3, 2.9])
    # ψ'' = ψ^(2) = -2 ζ(3, x) (DLMF 25.11.12); its derivative is ψ^(3) = 6 ζ(4, x).
    d = derivative(lambda t: -2 * sc.zeta(3.0, t), x)
    np.testing.assert_allclose(d, sc.polygamma(3, x), rtol=1e-13)
    np.testing.assert_allclose(
        derivative(lambda t: sc.zeta(2.0, t), x), sc.polygamma(2, x), rtol=1e-13
    )


# ---------------------------------------------------------------------------------------
# 84 array functions
# ---------------------------------------------------------------------------------------


def _inputs(rng):
    """Named random inputs, kept off the kinks of clip/where/abs and with distinct values
    (no ties in sorting), matrices well conditioned, SPD where a function needs it."""
    v = rng.uniform(0.2, 1.5, 6) * rng.choice([-1.0, 1.0], 6)
    m = rng.uniform(-1.0, 1.0, (3, 4))
    sq = rng.uniform(-1.0, 1.0, (3, 3)) + 3 * np.eye(3)
    b = rng.uniform(-1.0, 1.0, (3, 3))
    spd = b @ b.T + 3 * np.eye(3)
    return {"v": v, "m": m, "sq": sq, "spd": spd, "t": rng.uniform(-1, 1, (2, 3, 4))}


_MASK34 = np.array(
    [[True, False, True, True], [False, True, True, False], [True, True, False, True]]
)
_ORDER = np.array([[3, 0, 2, 1], [1, 1, 0, 3], [2, 3, 1, 0]])


def _linear_quantile(x, q, axis):
    """NumPy's linear-method quantile written out, so that it runs on complex input."""
    s = np.moveaxis(np.sort(x, axis=axis), axis, 0)
    pos = np.asarray(q) * (s.shape[0] - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, s.shape[0] - 1)
    frac = (pos - lo).reshape(np.shape(q) + (1,) * (s.ndim - 1))
    return s[lo] + frac * (s[hi] - s[lo])


_Q = np.array([[0.3, -1.2, 0.5], [0.1, 0.4, -0.7], [1.1, 0.2, 0.9]])
_XP = np.array([-2.0, -0.5, 0.4, 1.0, 2.0])
_FP = np.array([1.0, -1.0, 0.5, 2.0, 0.0])


def _mp_sym(x):
    """The symmetric matrix LAPACK reads from the lower triangle of 3x3 entries x."""
    a = mp.matrix(3, 3)
    for i in range(3):
        for j in range(3):
            a[i, j] = x[3 * i + j] if j <= i else x[3 * j + i]
    return a


def _mp_eigvecs(reference):
    def vecs(x):
        e, q = mp.eigsy(_mp_sym(x))
        order = sorted(range(3), key=lambda i: e[i])
        out = []
        for r in range(3):
            for c in range(3):
                col = order[c]
                sign = mp.sign(sum(q[i, col] * reference[i, c] for i in range(3)))
                out.append(sign * q[r, col])
        return out

    return vecs


def _mp_svdvals(shape):
    def svals(x):
        a = mp.matrix(*shape)
        for i in range(shape[0]):
            for j in range(shape[1]):
                a[i, j] = x[shape[1] * i + j]
        return sorted(mp.svd_r(a, compute_uv=False), reverse=True)

    return svals


# name: (spelling, input, oracle). Oracle kinds: ("cs", g) complex step of the NumPy
# function g (the spelling itself when None); ("mp", g) mpmath Jacobian of g on the
# flattened input; ("int",) an integer result that must equal the plain one. Or
# (None, reason) for a function that does not work on duals.
ARRAY_FUNCTIONS: dict[str, tuple] = {
    # reductions and statistics (axis, keepdims, where)
    "sum": (
        lambda x: np.concatenate(
            [
                np.sum(x, axis=0, keepdims=True).ravel(),
                np.sum(x, where=_MASK34)[None],
                np.sum(x, axis=(0, 1))[None],
            ]
        ),
        "m",
        ("cs", None),
    ),
    "mean": (
        lambda x: np.concatenate(
            [
                np.mean(x, axis=1),
                np.mean(x, axis=0, where=_MASK34),
                np.mean(x, keepdims=True).ravel(),
            ]
        ),
        "m",
        ("cs", None),
    ),
    "prod": (
        lambda x: np.concatenate([np.prod(x, axis=1), np.prod(x, axis=0, keepdims=True).ravel()]),
        "m",
        ("cs", None),
    ),
    "cumsum": (lambda x: np.cumsum(x, axis=1), "m", ("cs", None)),
    "cumprod": (lambda x: np.cumprod(x, axis=0), "m", ("cs", None)),
    "max": (
        lambda x: np.concatenate(
            [np.max(x, axis=0), np.max(x)[None], np.max(x, axis=1, where=_MASK34, initial=-5.0)]
        ),
        "m",
        ("cs", None),
    ),
    "min": (lambda x: np.min(x, axis=1, keepdims=True), "m", ("cs", None)),
    "ptp": (lambda x: np.ptp(x, axis=1), "m", ("cs", None)),
    "std": (
        lambda x: np.concatenate([np.std(x, axis=1), np.std(x, ddof=1)[None]]),
        "m",
        (
            "cs",
            lambda x: np.concatenate(
                [
                    np.sqrt(np.mean((x - x.mean(axis=1, keepdims=True)) ** 2, axis=1)),
                    np.sqrt(np.sum((x - x.mean()) ** 2) / 11)[None],
                ]
            ),
        ),
    ),
    "var": (
        lambda x: np.concatenate([np.var(x, axis=0), np.var(x, where=_MASK34)[None]]),
        "m",
        (
            "cs",
            lambda x: np.concatenate(
                [
                    np.mean((x - x.mean(axis=0)) ** 2, axis=0),
                    np.mean((x[_MASK34] - x[_MASK34].mean()) ** 2)[None],
                ]
            ),
        ),
    ),
    "average": (
        lambda x: np.average(x, axis=1, weights=np.array([1.0, 2.0, 3.0, 4.0])),
        "m",
        ("cs", None),
    ),
    "median": (
        lambda x: np.concatenate([np.median(x, axis=0), np.median(x)[None]]),
        "m",
        ("cs", None),
    ),
    "diff": (lambda x: np.diff(x, n=2, axis=1), "m", ("cs", None)),
    "trace": (lambda x: np.trace(x, offset=1), "m", ("cs", None)),
    "nansum": (
        lambda x: np.nansum(np.where(x > 0.5, np.nan, x), axis=0),
        "m",
        ("cs", lambda x: np.sum(np.where(x.real > 0.5, 0, x), axis=0)),
    ),
    "nanmean": (
        lambda x: np.nanmean(np.where(x > 0.5, np.nan, x)),
        "m",
        ("cs", lambda x: np.mean(x[x.real <= 0.5])),
    ),
    "percentile": (
        lambda x: np.percentile(x, [25.0, 60.0], axis=1),
        "m",
        ("cs", lambda x: _linear_quantile(x, [0.25, 0.6], 1)),
    ),
    "quantile": (
        lambda x: np.quantile(x, 0.3),
        "m",
        ("cs", lambda x: _linear_quantile(x.ravel(), 0.3, 0)),
    ),
    # linear algebra
    "dot": (lambda x: np.dot(x, x.T), "m", ("cs", None)),
    "vdot": (lambda x: np.vdot(x, _Q @ x), "sq", ("cs", lambda x: np.sum(x * (_Q @ x)))),
    "inner": (lambda x: np.inner(x, x), "m", ("cs", None)),
    "outer": (lambda x: np.outer(x, x[::-1]), "v", ("cs", None)),
    "matmul": (lambda x: x @ x.T @ x, "m", ("cs", None)),
    "tensordot": (lambda x: np.tensordot(x, x, axes=([1, 2], [1, 2])), "t", ("cs", None)),
    "einsum": (lambda x: np.einsum("ijk,ilk->jl", x, x), "t", ("cs", None)),
    "cross": (lambda x: np.cross(x, x[::-1] ** 2), "sq", ("cs", None)),
    "kron": (lambda x: np.kron(x, _Q[:2, :2]), "sq", ("cs", None)),
    "linalg.norm": (
        lambda x: np.stack(
            [
                np.linalg.norm(x),
                np.linalg.norm(x, 1),
                np.linalg.norm(x, np.inf),
                np.linalg.norm(x, 3),
            ]
        ),
        "v",
        (
            "cs",
            lambda x: np.stack(
                [
                    np.sqrt(np.sum(x * x)),
                    np.sum(x * np.sign(x.real)),
                    (x * np.sign(x.real))[np.argmax(np.abs(x.real))],
                    np.sum((x * np.sign(x.real)) ** 3) ** (1 / 3),
                ]
            ),
        ),
    ),
    "linalg.det": (np.linalg.det, "sq", ("cs", None)),
    "linalg.slogdet": (
        lambda x: np.linalg.slogdet(x)[1],
        "spd",
        ("cs", lambda x: np.log(np.linalg.det(x))),
    ),
    "linalg.inv": (np.linalg.inv, "sq", ("cs", None)),
    "linalg.solve": (
        lambda x: np.concatenate(
            [np.linalg.solve(x, np.array([1.0, 2.0, -1.0])), np.linalg.solve(x, x.T).ravel()]
        ),
        "sq",
        ("cs", None),
    ),
    "linalg.eigvalsh": (
        np.linalg.eigvalsh,
        "spd",
        ("mp", lambda x: sorted(mp.eigsy(_mp_sym(x))[0])),
    ),
    "linalg.eigh": (lambda x: np.linalg.eigh(x)[1], "spd", ("mp-eigvecs",)),
    "linalg.cholesky": (np.linalg.cholesky, "spd", ("mp", lambda x: list(mp.cholesky(_mp_sym(x))))),
    "linalg.svdvals": (np.linalg.svdvals, "m", ("mp", _mp_svdvals((3, 4)))),
    "linalg.multi_dot": (lambda x: np.linalg.multi_dot([x, _Q, x, x]), "sq", ("cs", None)),
    "linalg.matrix_power": (
        lambda x: np.concatenate([np.linalg.matrix_power(x, 3), np.linalg.matrix_power(x, -2)]),
        "sq",
        ("cs", None),
    ),
    "linalg.eig": (
        None,
        "general eigenvalues are complex; a Dual is real (eigh/eigvalsh for symmetric ones)",
    ),
    "linalg.svd": (
        None,
        "singular vectors are not differentiated (compute_uv=False and svdvals work)",
    ),
    "linalg.pinv": (
        None,
        "no rule for the pseudo-inverse (use solve or inv for full-rank matrices)",
    ),
    "linalg.lstsq": (None, "no rule for least squares (solve the normal equations with solve)"),
    "linalg.qr": (None, "no rule for the QR factorisation"),
    # joining and splitting
    "stack": (lambda x: np.stack([x, np.cos(x), np.ones(6)], axis=1), "v", ("cs", None)),
    "concatenate": (lambda x: np.concatenate([x, x**2, np.ones((1, 4))]), "m", ("cs", None)),
    "hstack": (lambda x: np.hstack([x, x[:, :1] ** 2]), "m", ("cs", None)),
    "vstack": (lambda x: np.vstack([x, x[0] * 2, np.zeros(4)]), "m", ("cs", None)),
    "column_stack": (lambda x: np.column_stack([x, x**2]), "v", ("cs", None)),
    "append": (lambda x: np.append(x, x[:2] ** 2), "v", ("cs", None)),
    "block": (lambda x: np.block([[x, x[:, :1]], [x[:1] * 2, np.ones((1, 1))]]), "m", ("cs", None)),
    "split": (
        lambda x: np.concatenate([p * (i + 1) for i, p in enumerate(np.split(x, 3))]),
        "v",
        ("cs", None),
    ),
    # reshaping, flipping, rounding
    "reshape": (lambda x: np.reshape(x, (4, 3)), "m", ("cs", None)),
    "ravel": (np.ravel, "m", ("cs", None)),
    "transpose": (lambda x: np.transpose(x, (2, 0, 1)), "t", ("cs", None)),
    "moveaxis": (lambda x: np.moveaxis(x, 0, -1), "t", ("cs", None)),
    "swapaxes": (lambda x: np.swapaxes(x, 0, 2), "t", ("cs", None)),
    "squeeze": (lambda x: np.squeeze(x[:1]), "m", ("cs", None)),
    "expand_dims": (lambda x: np.expand_dims(x, (0, 2)), "m", ("cs", None)),
    "broadcast_to": (lambda x: np.broadcast_to(x, (2, 6)), "v", ("cs", None)),
    "flip": (lambda x: np.flip(x, axis=1) * np.arange(4.0), "m", ("cs", None)),
    "rot90": (lambda x: np.rot90(x), "m", ("cs", None)),
    "roll": (lambda x: np.roll(x, 2, axis=1), "m", ("cs", None)),
    "tile": (lambda x: np.tile(x, (2, 1)), "m", ("cs", None)),
    "repeat": (lambda x: np.repeat(x, 2, axis=0), "m", ("cs", None)),
    "round": (lambda x: np.round(x, 2) + x, "m", ("cs", lambda x: x + np.round(x.real, 2))),
    # indexing helpers
    "take": (lambda x: np.take(x, [2, 0, 2], axis=1), "m", ("cs", None)),
    "take_along_axis": (
        lambda x: np.take_along_axis(x, _ORDER, axis=1),
        "m",
        ("cs", None),
    ),
    "diag": (lambda x: np.concatenate([np.diag(x), np.diag(x[0]).ravel()]), "sq", ("cs", None)),
    "diagonal": (lambda x: np.diagonal(x, 1), "m", ("cs", None)),
    "tril": (lambda x: np.tril(x, -1), "m", ("cs", None)),
    "triu": (np.triu, "m", ("cs", None)),
    "insert": (lambda x: np.insert(x, 2, x[0] ** 2), "v", ("cs", None)),
    "pad": (lambda x: np.pad(x, 1, constant_values=3.0), "m", ("cs", None)),
    # elementwise helpers
    "where": (lambda x: np.where(x > 0, x**2, -x), "m", ("cs", None)),
    "clip": (lambda x: np.clip(x, -0.5, 0.5), "v", ("cs", None)),
    "nan_to_num": (
        lambda x: np.nan_to_num(x / np.where(x > 0, x * 0, 1.0)),
        "v",
        ("cs", lambda x: np.where(x.real > 0, 0, x)),
    ),
    "interp": (lambda x: np.interp(x, _XP, _FP), "v", ("interp",)),
    "sinc": (np.sinc, "v", ("cs", None)),
    # sorting
    "sort": (lambda x: np.sort(x, axis=0), "m", ("cs", None)),
    "argsort": (lambda x: np.argsort(x, axis=1), "m", ("int",)),
    "argmax": (lambda x: np.argmax(x, axis=0), "m", ("int",)),
    # outside the list of what works
    "fft.fft": (None, "complex-valued; a Dual is real"),
    "unique": (
        None,
        "returns the distinct values only: which input an output comes from is not carried",
    ),
    "histogram": (None, "counts are integers and the bin edges a step function of the data"),
}
WORKING_ARRAY_FUNCTIONS = [n for n, e in ARRAY_FUNCTIONS.items() if e[0] is not None]

# Complex step and mpmath are exact to round-off: derivatives agree to this tolerance
# relative to the size of the Jacobian.
ARRAY_TOL = 1e-13


def test_array_function_list_is_84_and_at_least_70_work():
    assert len(ARRAY_FUNCTIONS) == 84
    assert len(WORKING_ARRAY_FUNCTIONS) >= 70
    print(f"array functions working on duals: {len(WORKING_ARRAY_FUNCTIONS)} of 84")


def _complex_step(g, x):
    h = 1e-30
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size, dtype=complex)
        e[j] = 1j * h
        cols.append(np.imag(np.asarray(g(x + e.reshape(x.shape)))) / h)
    return np.stack(cols, axis=-1).reshape(np.shape(g(x)) + x.shape)


def _mp_jacobian(g, x, out_shape):
    flat = [mp.mpf(float(t)) for t in x.ravel()]
    jac = np.zeros((math.prod(out_shape), x.size))
    with mp.workdps(30):
        for j in range(x.size):
            for i in range(jac.shape[0]):

                def gi(t, i=i, j=j):
                    return g([*flat[:j], t, *flat[j + 1 :]])[i]

                jac[i, j] = float(mp.diff(gi, flat[j]))
    return jac.reshape(out_shape + x.shape)


@pytest.mark.parametrize("name", WORKING_ARRAY_FUNCTIONS)
def test_array_function_against_oracle(name, rng):
    f, kind, oracle = ARRAY_FUNCTIONS[name]
    x = _inputs(rng)[kind]
    value = f(x)
    out = f(Dual(x, np.zeros((*x.shape, 1))))
    if oracle[0] == "int":
        np.testing.assert_array_equal(out, value)
        return
    np.testing.assert_allclose(out.value, value, rtol=1e-14, atol=1e-14)
    J = jacobian(f, x)
    assert J.shape == np.shape(value) + x.shape
    if oracle[0] == "cs":
        want = _complex_step(oracle[1] or f, x)
    elif oracle[0] == "mp":
        want = _mp_jacobian(oracle[1], x, np.shape(value))
    elif oracle[0] == "mp-eigvecs":
        want = _mp_jacobian(_mp_eigvecs(value), x, np.shape(value))
    else:  # interp: the slope of the segment each point falls in
        i = np.clip(np.searchsorted(_XP, x, side="right") - 1, 0, len(_XP) - 2)
        slope = (_FP[i + 1] - _FP[i]) / (_XP[i + 1] - _XP[i])
        want = np.diag(np.where((x < _XP[0]) | (x > _XP[-1]), 0.0, slope))
    scale = max(1.0, float(np.max(np.abs(want))))
    np.testing.assert_allclose(J, want, rtol=0, atol=ARRAY_TOL * scale, err_msg=name)


@pytest.mark.parametrize("name", [n for n, e in ARRAY_FUNCTIONS.items() if e[0] is None])
def test_array_functions_that_do_not_work_raise_type_error(name):
    assert ARRAY_FUNCTIONS[name][1]
    x = Dual(np.array([[2.0, 1.0], [1.0, 3.0]]), np.ones((2, 2, 1)))
    calls = {
        "linalg.eig": lambda: np.linalg.eig(x),
        "linalg.svd": lambda: np.linalg.svd(x),
        "linalg.pinv": lambda: np.linalg.pinv(x),
        "linalg.lstsq": lambda: np.linalg.lstsq(x, np.ones(2)),
        "linalg.qr": lambda: np.linalg.qr(x),
        "fft.fft": lambda: np.fft.fft(x),
        "unique": lambda: np.unique(x),
        "histogram": lambda: np.histogram(x),
    }
    with pytest.raises(TypeError):
        calls[name]()


# ---------------------------------------------------------------------------------------
# The supported-function table of docs/dual.md is generated from the rule tables
# ---------------------------------------------------------------------------------------


def test_docs_table_matches_the_rule_tables():
    from pathlib import Path

    from tumble.dual.functions import render_table

    page = (Path(__file__).resolve().parents[2] / "docs" / "dual.md").read_text()
    start, end = "<!-- dual-table start -->\n", "\n<!-- dual-table end -->"
    block = page[page.index(start) + len(start) : page.index(end)]
    assert block == render_table(), "regenerate with tumble.dual.functions.render_table()"
    for name in ("numpy.expm1", "scipy.special.erf", "scipy.special.jv", "np.linalg.cholesky"):
        assert f"`{name}`" in block


@pytest.mark.parametrize(
    "name", [n for n in WORKING_ARRAY_FUNCTIONS if ARRAY_FUNCTIONS[n][2][0] != "int"]
)
def test_array_function_second_derivatives_by_nesting(name, rng):
    """Every working array function also runs on nested duals: Hessians of
    ``sum(sin(f(x)))`` against central differences of the dual gradient."""
    from dual_oracles import FD_TOL, close, fd_jacobian

    from tumble.dual import gradient, hessian

    f, kind, _ = ARRAY_FUNCTIONS[name]
    x = _inputs(rng)[kind]

    def energy(v):
        return np.sum(np.sin(f(v)))

    H = hessian(energy, x)
    close(H, fd_jacobian(lambda v: gradient(energy, v), x), FD_TOL * 100)

"""Tests for tumble.dual.rules: the derivative table.

Oracles: hand-written closed forms (independent of the rule table they check) and central
finite differences. The rule table drives the parametrisation, and a coverage test keeps
the table and the closed forms in step. Also the documented choices where no derivative
exists, and the algebraic identities of derivatives (Hypothesis).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sc
from dual_oracles import EXACT_TOL, FD_TOL, N_POINTS, central, close
from hypothesis import given
from hypothesis import strategies as st

from strategies import dual_points, dual_smooth_unary_rules
from tumble import InputError
from tumble.dual import (
    NOT_DIFFERENTIABLE,
    ONE,
    PIECEWISE_CONSTANT,
    PREDICATES,
    RULES,
    Dual,
    Partner,
    Rule,
    derivative,
    gradient,
)

# ---------------------------------------------------------------------------------------
# The rule table against closed forms and finite differences
# ---------------------------------------------------------------------------------------


def _one(x):
    return np.ones_like(x)


def _zero(x, *_):
    return np.zeros_like(x)


CLOSED_FORM = {
    np.positive: (_one,),
    np.negative: (lambda x: -_one(x),),
    np.add: (lambda a, b: _one(a), lambda a, b: _one(b)),
    np.subtract: (lambda a, b: _one(a), lambda a, b: -_one(b)),
    np.multiply: (lambda a, b: b, lambda a, b: a),
    np.divide: (lambda a, b: 1 / b, lambda a, b: -a / b**2),
    np.power: (lambda a, b: b * a ** (b - 1), lambda a, b: np.log(a) * a**b),
    np.float_power: (lambda a, b: b * a ** (b - 1), lambda a, b: np.log(a) * a**b),
    np.reciprocal: (lambda x: -1 / x**2,),
    np.square: (lambda x: 2 * x,),
    np.sqrt: (lambda x: 1 / (2 * np.sqrt(x)),),
    np.cbrt: (lambda x: x ** (-2 / 3) / 3,),
    np.exp: (np.exp,),
    np.exp2: (lambda x: math.log(2) * 2**x,),
    np.expm1: (np.exp,),
    np.log: (lambda x: 1 / x,),
    np.log2: (lambda x: 1 / (x * math.log(2)),),
    np.log10: (lambda x: 1 / (x * math.log(10)),),
    np.log1p: (lambda x: 1 / (1 + x),),
    np.sin: (np.cos,),
    np.cos: (lambda x: -np.sin(x),),
    np.tan: (lambda x: 1 / np.cos(x) ** 2,),
    np.arcsin: (lambda x: 1 / np.sqrt((1 - x) * (1 + x)),),
    np.arccos: (lambda x: -1 / np.sqrt((1 - x) * (1 + x)),),
    np.arctan: (lambda x: 1 / (1 + x**2),),
    np.arctan2: (lambda y, x: x / (x**2 + y**2), lambda y, x: -y / (x**2 + y**2)),
    np.sinh: (np.cosh,),
    np.cosh: (np.sinh,),
    np.tanh: (lambda x: 1 / np.cosh(x) ** 2,),
    np.arcsinh: (lambda x: 1 / np.sqrt(1 + x**2),),
    np.arccosh: (lambda x: 1 / np.sqrt((x - 1) * (x + 1)),),
    np.arctanh: (lambda x: 1 / ((1 - x) * (1 + x)),),
    np.hypot: (lambda x, y: x / np.sqrt(x**2 + y**2), lambda x, y: y / np.sqrt(x**2 + y**2)),
    np.absolute: (np.sign,),
    np.fabs: (np.sign,),
    np.maximum: (lambda a, b: (a > b) * 1.0, lambda a, b: (b > a) * 1.0),
    np.minimum: (lambda a, b: (a < b) * 1.0, lambda a, b: (b < a) * 1.0),
    np.deg2rad: (lambda x: np.full_like(x, math.pi / 180),),
    np.radians: (lambda x: np.full_like(x, math.pi / 180),),
    np.rad2deg: (lambda x: np.full_like(x, 180 / math.pi),),
    np.degrees: (lambda x: np.full_like(x, 180 / math.pi),),
    np.logaddexp: (
        lambda a, b: 1 / (1 + np.exp(b - a)),
        lambda a, b: 1 / (1 + np.exp(a - b)),
    ),
    np.remainder: (lambda a, b: _one(a), lambda a, b: -np.floor(a / b)),
    np.fmod: (lambda a, b: _one(a), lambda a, b: -np.trunc(a / b)),
    np.floor: (_zero,),
    np.ceil: (_zero,),
    np.trunc: (_zero,),
    np.rint: (_zero,),
    np.sign: (_zero,),
    np.floor_divide: (_zero, _zero),
    np.heaviside: (_zero, _zero),
    np.conjugate: (_one,),
    np.fmax: (lambda a, b: (a > b) * 1.0, lambda a, b: (b > a) * 1.0),
    np.fmin: (lambda a, b: (a < b) * 1.0, lambda a, b: (b < a) * 1.0),
    np.copysign: (lambda x, y: np.sign(x) * np.sign(y), _zero),
    np.ldexp: (lambda x, i: 2.0**i, None),
    np.logaddexp2: (
        lambda a, b: 2**a / (2**a + 2**b),
        lambda a, b: 2**b / (2**a + 2**b),
    ),
    np.spacing: (_zero,),
    np.nextafter: (lambda a, b: _one(a), _zero),
}


# Rules of ufuncs with several outputs: closed forms per argument, a tuple per output.
MULTI_CLOSED_FORM = {
    np.divmod: ((_zero, lambda a, b: _one(a)), (_zero, lambda a, b: -np.floor(a / b))),
    np.modf: ((_one, _zero),),
    np.frexp: ((lambda x: 2.0 ** -np.frexp(x)[1], None),),
}


# Second derivatives, for the nested-dual tests.
SECOND = {
    np.sin: lambda x: -np.sin(x),
    np.cos: lambda x: -np.cos(x),
    np.tan: lambda x: 2 * np.tan(x) / np.cos(x) ** 2,
    np.exp: np.exp,
    np.log: lambda x: -1 / x**2,
    np.sqrt: lambda x: -0.25 * x**-1.5,
    np.cbrt: lambda x: -2 / 9 * x ** (-5 / 3),
    np.reciprocal: lambda x: 2 / x**3,
    np.arctan: lambda x: -2 * x / (1 + x**2) ** 2,
    np.arcsin: lambda x: x / (1 - x**2) ** 1.5,
    np.sinh: np.sinh,
    np.cosh: np.cosh,
    np.tanh: lambda x: -2 * np.tanh(x) / np.cosh(x) ** 2,
    np.log1p: lambda x: -1 / (1 + x) ** 2,
}


UNARY = [u for u in RULES if u.nin == 1 and u.nout == 1]


SMOOTH_UNARY = [u for u in UNARY if u not in PIECEWISE_CONSTANT]


def _name(u):
    return u.__name__


def _points(rule, rng, n=N_POINTS, dtype=np.float64):
    # Arguments without a derivative are integers (ldexp's exponent, expn's order) or
    # parameters sampled like the others.
    return [
        np.rint(rng.uniform(lo, hi, n)).astype(int)
        if d is NOT_DIFFERENTIABLE and rule.domain[0] != (0.5, 2.5) and lo != 2.0
        else rng.uniform(lo, hi, n).astype(dtype)
        for d, (lo, hi) in zip(rule.derivs, rule.domain, strict=True)
    ]


SINGLE = [u for u in RULES if u.nout == 1]


def test_table_and_closed_forms_cover_the_same_ufuncs():
    assert set(SINGLE) == set(CLOSED_FORM)
    assert set(RULES) - set(SINGLE) == set(MULTI_CLOSED_FORM)
    for ufunc, rule in RULES.items():
        assert len(rule.derivs) == ufunc.nin == len(rule.domain), ufunc.__name__
        assert rule.nout == ufunc.nout
        assert all(lo < hi for lo, hi in rule.domain)
    assert not set(RULES) & set(PREDICATES)


@pytest.mark.parametrize("ufunc", SINGLE, ids=_name)
def test_rule_against_closed_form_and_finite_differences(ufunc, rng):
    args = _points(RULES[ufunc], rng)
    for i in range(ufunc.nin):
        if CLOSED_FORM[ufunc][i] is None:
            continue

        def f(xi, i=i):
            return ufunc(*args[:i], xi, *args[i + 1 :])

        d = derivative(f, args[i])
        close(d, CLOSED_FORM[ufunc][i](*args), EXACT_TOL)
        close(d, central(f, args[i]), FD_TOL)


@pytest.mark.parametrize("ufunc", list(MULTI_CLOSED_FORM), ids=_name)
def test_rule_with_several_outputs_against_closed_form_and_finite_differences(ufunc, rng):
    args = _points(RULES[ufunc], rng)
    for i in range(ufunc.nin):
        outs = ufunc(*args[:i], Dual(args[i], np.ones((N_POINTS, 1))), *args[i + 1 :])
        for j, out in enumerate(outs):
            closed = MULTI_CLOSED_FORM[ufunc][i][j]
            if closed is None:  # an integer output carries no partials
                assert not isinstance(out, Dual)
                np.testing.assert_array_equal(out, ufunc(*args)[j])
                continue
            np.testing.assert_array_equal(out.value, ufunc(*args)[j])
            close(out.partials[..., 0], closed(*args), EXACT_TOL)

            def f(xi, i=i, j=j):
                return ufunc(*args[:i], xi, *args[i + 1 :])[j]

            close(out.partials[..., 0], central(f, args[i]), FD_TOL)


@pytest.mark.parametrize(
    "ufunc",
    [u for u in SINGLE if u.nin == 2 and NOT_DIFFERENTIABLE not in RULES[u].derivs],
    ids=_name,
)
def test_binary_rule_with_both_arguments_dual(ufunc, rng):
    a, b = _points(RULES[ufunc], rng)
    da = Dual(a, np.stack([np.ones_like(a), np.zeros_like(a)], axis=-1))
    db = Dual(b, np.stack([np.zeros_like(b), np.ones_like(b)], axis=-1))
    out = ufunc(da, db)
    np.testing.assert_array_equal(out.value, ufunc(a, b))
    close(out.partials[..., 0], CLOSED_FORM[ufunc][0](a, b), EXACT_TOL)
    close(out.partials[..., 1], CLOSED_FORM[ufunc][1](a, b), EXACT_TOL)


@pytest.mark.parametrize("ufunc", SINGLE, ids=_name)
def test_rule_keeps_float32(ufunc, rng):
    args = _points(RULES[ufunc], rng, n=5, dtype=np.float32)
    duals = [
        a if d is NOT_DIFFERENTIABLE else Dual(a, np.ones((5, 1), dtype=np.float32))
        for d, a in zip(RULES[ufunc].derivs, args, strict=True)
    ]
    out = ufunc(*duals)
    assert out.value.dtype == ufunc(*args).dtype
    assert out.partials.dtype == ufunc(*args).dtype


def test_value_is_the_plain_evaluation(rng):
    for ufunc in SINGLE:
        rule = RULES[ufunc]
        args = _points(rule, rng, n=20)
        duals = [
            a if d is NOT_DIFFERENTIABLE else Dual(a, np.ones((20, 1)))
            for d, a in zip(rule.derivs, args, strict=True)
        ]
        np.testing.assert_array_equal(ufunc(*duals).value, ufunc(*args))


@pytest.mark.parametrize("ufunc", SMOOTH_UNARY, ids=_name)
def test_second_derivative_by_nesting(ufunc, rng):
    x = _points(RULES[ufunc], rng)[0]

    def first(t):
        return derivative(ufunc, t)

    d2 = derivative(first, x)
    close(d2, central(first, x), FD_TOL * 10)
    if ufunc in SECOND:
        close(d2, SECOND[ufunc](x), EXACT_TOL * 10)


# ---------------------------------------------------------------------------------------
# The article
# ---------------------------------------------------------------------------------------


def test_article_composition_sin_squared(rng):
    x = rng.uniform(-3, 3, N_POINTS)
    d = derivative(lambda t: np.sin(t) ** 2, x)
    close(d, 2 * np.sin(x) * np.cos(x), EXACT_TOL)
    close(d, central(lambda t: np.sin(t) ** 2, x), FD_TOL)
    # The extension itself: sin² of (x, 1) is (sin² x, 2 sin x cos x).
    out = np.sin(Dual(x, np.ones((N_POINTS, 1)))) ** 2
    close(out.value, np.sin(x) ** 2, EXACT_TOL)


def test_article_table(rng):
    x = rng.uniform(0.2, 3, N_POINTS)
    c = 1.7
    close(derivative(lambda t: t + c, x), np.ones_like(x), 0)
    close(derivative(lambda t: c * t, x), np.full_like(x, c), 0)
    for n in range(1, 6):
        close(derivative(lambda t, n=n: t**n, x), n * x ** (n - 1), EXACT_TOL)
    close(derivative(np.exp, x), np.exp(x), EXACT_TOL)
    close(derivative(np.log, x), 1 / x, EXACT_TOL)
    close(derivative(np.sin, x), np.cos(x), EXACT_TOL)


# ---------------------------------------------------------------------------------------
# Documented choices where no derivative exists
# ---------------------------------------------------------------------------------------


def test_step_functions_have_zero_partials_even_at_their_jumps():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5])
    for ufunc in (np.floor, np.ceil, np.trunc, np.rint, np.sign):
        out = ufunc(Dual(x, np.ones((5, 1))))
        np.testing.assert_array_equal(out.value, ufunc(x))
        np.testing.assert_array_equal(out.partials, 0.0)


def test_kinks_take_the_minimal_norm_subgradient():
    zero = Dual(0.0, [1.0])
    assert abs(zero).partials[0] == 0.0
    assert np.maximum(zero, -zero).partials[0] == 0.0
    assert np.maximum(zero, 0.0).partials[0] == 0.5
    assert np.minimum(zero, zero).partials[0] == 1.0
    assert np.hypot(zero, 0.0).partials[0] == 0.0
    np.testing.assert_array_equal(gradient(np.linalg.norm, np.zeros(3)), 0.0)


def test_power_edge_cases_are_finite():
    x = Dual(0.0, [1.0])
    assert (x**0).partials[0] == 0.0
    assert (2.0**x).partials[0] == pytest.approx(math.log(2))
    exponent = Dual(2.0, [1.0])
    assert np.power(0.0, exponent).partials[0] == 0.0
    y = Dual(np.array([0.0, 3.0]), np.ones((2, 1)))
    out = y ** np.array([0.0, 2.0])
    np.testing.assert_array_equal(out.partials[:, 0], [0.0, 6.0])


# ---------------------------------------------------------------------------------------
# Algebraic identities (Hypothesis)
# ---------------------------------------------------------------------------------------


# Every smooth unary rule sampled on [0.25, 0.85] lies inside its domain; those on
# [-1.6, 1.6] also contain the ranges of sin, tanh and arctan (the inner functions below).
ON_UNIT = dual_smooth_unary_rules(0.25, 0.85)


ON_WIDE = dual_smooth_unary_rules(-1.6, 1.6)


POINT = dual_points(0.25, 0.85)


@given(ON_UNIT, ON_UNIT, POINT)
def test_product_rule(f, g, x):
    lhs = derivative(lambda t: f(t) * g(t), x)
    rhs = derivative(f, x) * g(x) + f(x) * derivative(g, x)
    assert lhs == pytest.approx(rhs, rel=EXACT_TOL, abs=EXACT_TOL)


@given(ON_WIDE, st.sampled_from([np.sin, np.tanh, np.arctan]), POINT)
def test_chain_rule(f, g, x):
    lhs = derivative(lambda t: f(g(t)), x)
    rhs = derivative(f, g(x)) * derivative(g, x)
    assert lhs == pytest.approx(rhs, rel=EXACT_TOL, abs=EXACT_TOL)


@given(
    ON_UNIT,
    ON_UNIT,
    st.floats(-3, 3),
    st.floats(-3, 3),
    POINT,
)
def test_linearity(f, g, a, b, x):
    lhs = derivative(lambda t: a * f(t) + b * g(t), x)
    rhs = a * derivative(f, x) + b * derivative(g, x)
    assert lhs == pytest.approx(rhs, rel=EXACT_TOL, abs=EXACT_TOL)


# ---------------------------------------------------------------------------------------
# scipy.special rules (tumble.dual.special), each citing the DLMF
# ---------------------------------------------------------------------------------------


def _special_rules():
    from tumble.dual.special import SPECIAL_RULES

    return SPECIAL_RULES


SPECIAL = _special_rules()
ELEMENTARY = {"exp10", "exp2", "expm1", "log1p", "cbrt", "cosm1", "sindg", "cosdg", "tandg"}


def test_special_rules_are_consistent_and_cite_their_source():
    for ufunc, rule in SPECIAL.items():
        assert len(rule.derivs) == ufunc.nin == len(rule.domain), ufunc.__name__
        assert rule.nout == ufunc.nout, ufunc.__name__
        assert rule.source, ufunc.__name__
        if ufunc.__name__ not in ELEMENTARY | {"cotdg", "expit", "logit", "log_expit"}:
            if ufunc.__name__ not in {"xlogy", "xlog1py", "entr"}:
                assert "DLMF" in rule.source, ufunc.__name__


def _special_args(ufunc, rule, rng, n=N_POINTS):
    args = _points(rule, rng, n)
    if ufunc is sc.expn:
        args[0] = np.rint(args[0]).astype(int)
    return args


@pytest.mark.parametrize("ufunc", list(SPECIAL), ids=_name)
def test_special_rule_against_finite_differences(ufunc, rng):
    rule = SPECIAL[ufunc]
    args = _special_args(ufunc, rule, rng)
    for i in range(ufunc.nin):
        if rule.derivs[i] is NOT_DIFFERENTIABLE:
            continue
        for j in range(ufunc.nout):

            def f(xi, i=i, j=j):
                out = ufunc(*args[:i], xi, *args[i + 1 :])
                return out[j] if ufunc.nout > 1 else out

            close(derivative(f, args[i]), central(f, args[i]), FD_TOL)


@pytest.mark.parametrize("ufunc", [u for u in SPECIAL if u.nout == 1], ids=_name)
def test_special_rule_second_derivative_by_nesting(ufunc, rng):
    rule = SPECIAL[ufunc]
    args = _special_args(ufunc, rule, rng)
    i = ufunc.nin - 1  # the argument with a derivative (x, not the order)

    def first(xi):
        return derivative(lambda t: ufunc(*args[:i], t, *args[i + 1 :]), xi)

    x = args[i]
    close(derivative(first, x), central(first, x), FD_TOL * 10)


def test_a_dual_order_of_a_bessel_function_raises():
    with pytest.raises(TypeError, match="no derivative with respect to argument 1"):
        sc.jv(Dual(1.5, [1.0]), 2.0)


# ---------------------------------------------------------------------------------------
# Rule and Partner validate their arguments (issue 18)
# ---------------------------------------------------------------------------------------


def test_regression_partner_validates_its_arguments():
    with pytest.raises(InputError, match="partner"):
        Partner(math.cos, 1.0)
    with pytest.raises(InputError, match="partner"):
        Partner(np.add, 1.0)
    for bad in (2.0, 0, True, "1", None):
        with pytest.raises(InputError, match="sign"):
            Partner(np.cos, bad)
    assert Partner(np.cos, -1).sign == -1.0


def test_regression_rule_validates_its_arguments():
    with pytest.raises(InputError, match="derivs"):
        Rule((), ())
    with pytest.raises(InputError, match="derivs"):
        Rule(("cos",), ((0.0, 1.0),))
    with pytest.raises(InputError, match="derivs"):
        Rule([ONE], ((0.0, 1.0),))
    with pytest.raises(InputError, match="derivs"):
        Rule((Partner(np.cos, 1), ONE), ((0.0, 1.0), (0.0, 1.0)))
    with pytest.raises(InputError, match="domain"):
        Rule((ONE,), ((0.0, 1.0), (0.0, 1.0)))
    for bad in ((1.0, 0.0), (0.0, math.inf), (0.0,), "01"):
        with pytest.raises(InputError, match="domain"):
            Rule((ONE,), (bad,))
    with pytest.raises(InputError, match="source"):
        Rule((ONE,), ((0.0, 1.0),), source=3)
    with pytest.raises(InputError, match="nout"):
        Rule((ONE,), ((0.0, 1.0),), nout=0)
    with pytest.raises(InputError, match="derivs"):
        Rule((ONE,), ((0.0, 1.0),), nout=2)
    rule = Rule((lambda o, x: o,), ((0.0, 1.0),), source="exp")
    assert rule.nout == 1

"""Tests for tumble.dual.

Oracles: central finite differences and hand-written closed forms (independent of the rule
table they check), exact answers of the perturbation-confusion examples, and
per-point loops for the batched drivers. The rule table drives the parametrisation, and a
coverage test keeps the table and the closed forms in step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strategies import dual_points, dual_smooth_unary_rules
from tumble import InputError
from tumble.dual import (
    DEFAULT_CHUNK,
    DEFAULT_POINTS_PER_PASS,
    PIECEWISE_CONSTANT,
    PREDICATES,
    RULES,
    Dual,
    derivative,
    directional_derivative,
    gradient,
    hessian,
    jacobian,
)

EPS = np.finfo(np.float64).eps
# Central differences err by h²|f'''|/6 (truncation) plus eps|f|/h (round-off); the step
# h = eps^(1/3) max(1, |x|) balances them at about eps^(2/3) ≈ 4e-11 times the size of
# the function and its third derivative, which stay below ~100 inside the sampled domains.
FD_STEP = EPS ** (1 / 3)
FD_TOL = 1e-7
# Dual numbers and the closed forms evaluate the same number through a handful of rounded
# operations each: a few ulp apart.
EXACT_TOL = 1e-12
N_POINTS = 40


def central(f, x):
    """Elementwise central difference of an elementwise ``f`` at the array ``x``."""
    h = FD_STEP * np.maximum(1.0, np.abs(x))
    return (f(x + h) - f(x - h)) / (2 * h)


def fd_jacobian(f, x):
    """Central-difference Jacobian of ``f`` at ``x``: shape f(x).shape + x.shape."""
    x = np.asarray(x, dtype=float)
    flat = x.ravel()
    cols = []
    for j in range(flat.size):
        h = FD_STEP * max(1.0, abs(flat[j]))
        e = np.zeros_like(flat)
        e[j] = h
        cols.append((f((flat + e).reshape(x.shape)) - f((flat - e).reshape(x.shape))) / (2 * h))
    out = np.stack(cols, axis=-1)
    return out.reshape(np.shape(f(x)) + x.shape)


def close(actual, expected, tol):
    actual = np.asarray(actual)
    assert not np.any(np.isnan(actual))
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


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

UNARY = [u for u in RULES if u.nin == 1]
SMOOTH_UNARY = [u for u in UNARY if u not in PIECEWISE_CONSTANT]


def _name(u):
    return u.__name__


def _points(rule, rng, n=N_POINTS, dtype=np.float64):
    return [rng.uniform(lo, hi, n).astype(dtype) for lo, hi in rule.domain]


def test_table_and_closed_forms_cover_the_same_ufuncs():
    assert set(RULES) == set(CLOSED_FORM)
    for ufunc, rule in RULES.items():
        assert len(rule.derivs) == ufunc.nin == len(rule.domain), ufunc.__name__
        assert all(lo < hi for lo, hi in rule.domain)
    assert not set(RULES) & set(PREDICATES)


@pytest.mark.parametrize("ufunc", list(RULES), ids=_name)
def test_rule_against_closed_form_and_finite_differences(ufunc, rng):
    args = _points(RULES[ufunc], rng)
    for i in range(ufunc.nin):

        def f(xi, i=i):
            return ufunc(*args[:i], xi, *args[i + 1 :])

        d = derivative(f, args[i])
        close(d, CLOSED_FORM[ufunc][i](*args), EXACT_TOL)
        close(d, central(f, args[i]), FD_TOL)


@pytest.mark.parametrize("ufunc", [u for u in RULES if u.nin == 2], ids=_name)
def test_binary_rule_with_both_arguments_dual(ufunc, rng):
    a, b = _points(RULES[ufunc], rng)
    da = Dual(a, np.stack([np.ones_like(a), np.zeros_like(a)], axis=-1))
    db = Dual(b, np.stack([np.zeros_like(b), np.ones_like(b)], axis=-1))
    out = ufunc(da, db)
    np.testing.assert_array_equal(out.value, ufunc(a, b))
    close(out.partials[..., 0], CLOSED_FORM[ufunc][0](a, b), EXACT_TOL)
    close(out.partials[..., 1], CLOSED_FORM[ufunc][1](a, b), EXACT_TOL)


@pytest.mark.parametrize("ufunc", list(RULES), ids=_name)
def test_rule_keeps_float32(ufunc, rng):
    args = _points(RULES[ufunc], rng, n=5, dtype=np.float32)
    duals = [Dual(a, np.ones((5, 1), dtype=np.float32)) for a in args]
    out = ufunc(*duals)
    assert out.value.dtype == ufunc(*args).dtype
    assert out.partials.dtype == ufunc(*args).dtype


def test_value_is_the_plain_evaluation(rng):
    for ufunc, rule in RULES.items():
        args = _points(rule, rng, n=20)
        duals = [Dual(a, np.ones((20, 1))) for a in args]
        np.testing.assert_array_equal(ufunc(*duals).value, ufunc(*args))


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


def test_vector_field_directional_derivative_is_jacobian_times_direction(rng):
    x, v = rng.normal(size=3), rng.normal(size=3)
    close(directional_derivative(field, x, v), field_jacobian(x) @ v, EXACT_TOL)


# ---------------------------------------------------------------------------------------
# A vector field written once
# ---------------------------------------------------------------------------------------

SIGMA, RHO, BETA = 10.0, 28.0, 8 / 3


def field(x):
    """A Lorenz-like field with sin, cos, exp; plain NumPy, written once."""
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    return np.stack(
        [
            SIGMA * (b - a) + np.sin(c),
            a * (RHO - c) - b * np.exp(-a * a / 10),
            a * b * np.cos(c) - BETA * c,
        ],
        axis=-1,
    )


def field_jacobian(x):
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    e = np.exp(-a * a / 10)
    J = np.empty((*x.shape[:-1], 3, 3))
    J[..., 0, :] = np.stack([-SIGMA + 0 * a, SIGMA + 0 * a, np.cos(c)], axis=-1)
    J[..., 1, :] = np.stack([RHO - c + a * b * e / 5, -e, -a], axis=-1)
    J[..., 2, :] = np.stack([b * np.cos(c), a * np.cos(c), -a * b * np.sin(c) - BETA], axis=-1)
    return J


def scalar_function(t):
    """A scalar function written once: runs on floats, arrays and duals."""
    return t * np.sin(t) ** 2 + np.exp(-t) / (1 + t * t)


def test_same_scalar_code_runs_on_floats_arrays_and_duals(rng):
    x = rng.uniform(-2, 2, 7)
    assert isinstance(scalar_function(0.5), float)
    np.testing.assert_allclose(scalar_function(x), [scalar_function(float(t)) for t in x])
    d = derivative(scalar_function, x)
    closed = (
        np.sin(x) ** 2
        + 2 * x * np.sin(x) * np.cos(x)
        - np.exp(-x) / (1 + x * x)
        - 2 * x * np.exp(-x) / (1 + x * x) ** 2
    )
    close(d, closed, EXACT_TOL)
    assert isinstance(derivative(scalar_function, 0.5), float)


def test_same_field_runs_on_arrays_and_duals_and_is_differentiated(rng):
    points = rng.normal(size=(50, 3))
    values = field(points)
    for p, v in zip(points, values, strict=True):
        np.testing.assert_allclose(field(p), v)
    single = jacobian(field, points[0])
    assert single.shape == (3, 3)
    close(single, field_jacobian(points[0]), EXACT_TOL)
    close(single, fd_jacobian(field, points[0]), FD_TOL * 100)
    batched = jacobian(field, points, batched=True)
    assert batched.shape == (50, 3, 3)
    close(batched, field_jacobian(points), EXACT_TOL)
    for p, J in zip(points, batched, strict=True):
        close(J, jacobian(field, p), EXACT_TOL)


def test_batched_jacobian_over_several_leading_axes_and_chunks(rng):
    points = rng.normal(size=(4, 5, 3))
    expected = field_jacobian(points)
    close(jacobian(field, points, batched=True), expected, EXACT_TOL)
    close(jacobian(field, points, batched=True, chunk=2), expected, EXACT_TOL)


@pytest.mark.parametrize("per_pass", [1, 7, 10, 15, 20, 25, 40])
def test_batched_points_in_slices_match_one_pass(per_pass, rng):
    """Slicing the points (the default for large batches) changes nothing: every slice
    size, including ones that split the first axis unevenly or exceed it."""
    points = rng.normal(size=(8, 5, 3))
    one_pass = jacobian(field, points, batched=True, points_per_pass=None)
    close(one_pass, field_jacobian(points), EXACT_TOL)
    sliced = jacobian(field, points, batched=True, points_per_pass=per_pass)
    assert sliced.shape == (8, 5, 3, 3)
    np.testing.assert_array_equal(sliced, one_pass)
    grad = gradient(lambda p: np.sum(field(p), axis=-1), points, batched=True)
    sliced_grad = gradient(
        lambda p: np.sum(field(p), axis=-1), points, batched=True, points_per_pass=per_pass
    )
    np.testing.assert_array_equal(sliced_grad, grad)
    hess = hessian(lambda p: field(p)[..., 1], points, batched=True, points_per_pass=None)
    sliced_hess = hessian(
        lambda p: field(p)[..., 1], points, batched=True, points_per_pass=per_pass
    )
    np.testing.assert_array_equal(sliced_hess, hess)


def test_batched_default_slices_large_batches(rng):
    points = rng.normal(size=(2 * DEFAULT_POINTS_PER_PASS + 5, 3))
    close(jacobian(field, points, batched=True), field_jacobian(points), EXACT_TOL)


def test_batched_f_with_per_point_data_from_outside_falls_back_to_one_pass(rng):
    """f adds arrays of the full batch to x: a slice of x cannot be evaluated alone, so
    the driver differentiates all points at once (and still gets them right)."""
    points = rng.normal(size=(30, 3))
    offsets = rng.normal(size=(30, 3))
    scales = rng.normal(size=(30, 1))

    def shifted(p):
        return field(p + offsets) * scales

    expected = field_jacobian(points + offsets) * scales[..., None]
    for per_pass in (1, 4, None):
        J = jacobian(shifted, points, batched=True, points_per_pass=per_pass)
        close(J, expected, EXACT_TOL)


def test_unbatched_jacobian_of_a_batch_is_block_diagonal(rng):
    points = rng.normal(size=(2, 3))
    J = jacobian(field, points)
    assert J.shape == (2, 3, 2, 3)
    close(J[0, :, 0, :], field_jacobian(points[0]), EXACT_TOL)
    close(J[0, :, 1, :], np.zeros((3, 3)), 0)


# ---------------------------------------------------------------------------------------
# Nested duals, tags, perturbation confusion
# ---------------------------------------------------------------------------------------


def test_perturbation_confusion_forwarddiff_issue_83():
    d = derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0)
    assert d == 1.0


def test_perturbation_confusion_gradient_of_nested_derivative():
    v0 = np.array([1.0])
    nested = gradient(lambda v: np.sum(v) * derivative(lambda y: y * np.linalg.norm(v), 1.0), v0)
    direct = gradient(lambda v: np.sum(v) * np.linalg.norm(v), v0)
    np.testing.assert_array_equal(nested, direct)


def test_jacobian_of_inner_gradient_recovers_the_matrix(rng):
    A = rng.normal(size=(4, 3))
    y0, x0 = rng.normal(size=4), rng.normal(size=3)
    J = jacobian(lambda x: gradient(lambda y: np.dot(y, A @ x), y0), x0)
    close(J, A, EXACT_TOL)


def test_duals_of_different_tags_nest_larger_tag_outside():
    inner = Dual(2.0, [1.0], tag=1)
    outer = Dual(3.0, [1.0], tag=2)
    prod = inner * outer
    assert prod.tag == 2
    assert isinstance(prod.value, Dual)
    assert prod.value.tag == 1
    assert prod.value.value == 6.0
    assert prod.value.partials[0] == 3.0  # ∂/∂inner
    assert prod.partials[0].value == 2.0  # ∂/∂outer
    assert prod.partials[0].partials[0] == 1.0  # ∂²/∂inner∂outer


@pytest.mark.parametrize("ufunc", SMOOTH_UNARY, ids=_name)
def test_second_derivative_by_nesting(ufunc, rng):
    x = _points(RULES[ufunc], rng)[0]

    def first(t):
        return derivative(ufunc, t)

    d2 = derivative(first, x)
    close(d2, central(first, x), FD_TOL * 10)
    if ufunc in SECOND:
        close(d2, SECOND[ufunc](x), EXACT_TOL * 10)


def test_third_derivative_by_triple_nesting(rng):
    x = rng.uniform(-1, 1, 10)

    def d1(t):
        return derivative(lambda s: np.exp(2 * s) * np.sin(s), t)

    def d2(t):
        return derivative(d1, t)

    d3 = derivative(d2, x)
    # (e^{2x} sin x)''' = e^{2x} (2 sin x + 11 cos x)
    close(d3, np.exp(2 * x) * (2 * np.sin(x) + 11 * np.cos(x)), EXACT_TOL * 10)


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        H[i, i + 1] -= 400 * x[i]
        H[i + 1, i] -= 400 * x[i]
        H[i + 1, i + 1] += 200
    return H


def test_hessian_of_rosenbrock(rng):
    x = rng.normal(size=5)
    H = hessian(rosenbrock, x)
    close(H, rosenbrock_hessian(x), EXACT_TOL * 100)
    np.testing.assert_array_equal(H, H.T)
    close(hessian(rosenbrock, x, chunk=2), H, EXACT_TOL * 100)


def test_hessian_of_quadratic_form_and_trig(rng):
    A = rng.normal(size=(3, 3))
    x = rng.normal(size=3)
    close(hessian(lambda v: v @ A @ v, x), A + A.T, EXACT_TOL * 10)
    # f = sin(x0 x1) + x2³: H = [[-x1² s, c - x0 x1 s, 0], [., -x0² s, 0], [0, 0, 6 x2]]
    s, c = np.sin(x[0] * x[1]), np.cos(x[0] * x[1])
    expected = np.array(
        [
            [-(x[1] ** 2) * s, c - x[0] * x[1] * s, 0],
            [c - x[0] * x[1] * s, -(x[0] ** 2) * s, 0],
            [0, 0, 6 * x[2]],
        ]
    )
    close(hessian(lambda v: np.sin(v[0] * v[1]) + v[2] ** 3, x), expected, EXACT_TOL * 10)


def test_batched_hessian_matches_per_point(rng):
    points = rng.normal(size=(6, 3))

    def energy(x):
        return np.sum(np.sin(x) * x[..., ::-1], axis=-1) + np.linalg.norm(x, axis=-1) ** 3

    H = hessian(energy, points, batched=True)
    assert H.shape == (6, 3, 3)
    for p, h in zip(points, H, strict=True):
        close(h, hessian(energy, p), EXACT_TOL * 10)
    g = gradient(energy, points, batched=True)
    assert g.shape == (6, 3)
    close(g[0], gradient(energy, points[0]), EXACT_TOL)


# ---------------------------------------------------------------------------------------
# Array functions and indexing against finite differences
# ---------------------------------------------------------------------------------------

M34 = np.arange(12.0).reshape(3, 4) / 7 - 0.5
M43 = M34.T.copy()
Q = np.array([[0.3, -1.2, 0.5], [0.1, 0.4, -0.7], [1.1, 0.2, 0.9]])


def _setitem(x):
    out = np.zeros_like(x)
    out[0] = np.sin(x[1])
    out[1:] = x[:-1] * 2
    return out


def _where(x):
    return np.where(x > 0, x**2, -x)


ARRAY_FUNCTIONS = {
    "dot_mv": (lambda x: np.dot(M34, x), (4,)),
    "dot_vv": (lambda x: np.dot(x, x), (4,)),
    "dot_mm": (lambda x: np.dot(x, Q), (2, 3)),
    "dot_nd": (lambda x: np.dot(x, np.ones((2, 3, 2))), (2, 3)),
    "method_dot": (lambda x: x.dot(M43), (2, 4)),
    "matmul_left": (lambda x: x @ Q, (4, 3)),
    "matmul_right": (lambda x: Q @ x, (3,)),
    "matmul_batch": (lambda x: x @ np.swapaxes(x, -1, -2), (2, 3, 3)),
    "matmul_vec_batch": (lambda x: np.matmul(np.ones(3), x), (2, 3, 3)),
    "einsum_mv": (lambda x: np.einsum("ij,j->i", M34, x), (4,)),
    "einsum_trace": (lambda x: np.einsum("ii", x), (3, 3)),
    "einsum_rowdot": (lambda x: np.einsum("ij,ij->i", x, x), (3, 2)),
    "einsum_implicit": (lambda x: np.einsum("ij,jk", x, x), (3, 3)),
    "einsum_ellipsis": (lambda x: np.einsum("...i,...i->...", x, x), (2, 3)),
    "inner": (lambda x: np.inner(x, x), (2, 3)),
    "outer": (lambda x: np.outer(x, x[::-1]), (3,)),
    "vdot": (lambda x: np.vdot(x, Q), (3, 3)),
    "tensordot": (lambda x: np.tensordot(x, Q, axes=([1], [0])), (2, 3)),
    "cross": (lambda x: np.cross(x, x[::-1] ** 2), (3,)),
    "cross_batch": (lambda x: np.cross(x[0], Q), (2, 3)),
    "norm": (lambda x: np.linalg.norm(x), (4,)),
    "norm_axis": (lambda x: np.linalg.norm(x, axis=-1), (2, 3)),
    "norm_keepdims": (lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True), (2, 3)),
    "norm_fro": (lambda x: np.linalg.norm(x, "fro"), (2, 3)),
    "sum": (lambda x: np.sum(x**2), (2, 3)),
    "sum_axis": (lambda x: np.sum(np.sin(x), axis=0), (2, 3)),
    "sum_method": (lambda x: (x**3).sum(axis=-1, keepdims=True), (2, 3)),
    "mean": (lambda x: np.mean(x, axis=(0, 1)), (2, 3, 2)),
    "stack": (lambda x: np.stack([x, np.cos(x), np.ones(3)], axis=1), (3,)),
    "concatenate": (lambda x: np.concatenate([x, x**2, np.ones((1, 2))]), (2, 2)),
    "concatenate_none": (lambda x: np.concatenate([x, x], axis=None), (2, 2)),
    "reshape": (lambda x: np.reshape(x, (3, -1)) ** 2, (2, 3)),
    "method_reshape": (lambda x: x.reshape(6), (2, 3)),
    "ravel": (lambda x: np.ravel(np.exp(x)), (2, 3)),
    "transpose": (lambda x: np.transpose(x, (2, 0, 1)) * np.arange(3.0), (2, 3, 2)),
    "T": (lambda x: x.T @ Q[:2, :2], (2, 3)),
    "moveaxis": (lambda x: np.moveaxis(x, 0, -1), (2, 3, 2)),
    "swapaxes": (lambda x: np.swapaxes(x, 0, 2), (2, 3, 2)),
    "squeeze_expand": (lambda x: np.expand_dims(np.squeeze(x), -1), (1, 3)),
    "broadcast_to": (lambda x: np.broadcast_to(x, (2, 3)) * Q[:2], (3,)),
    "where": (_where, (2, 3)),
    "clip": (lambda x: np.clip(x, -0.5, 0.5), (2, 3)),
    "index_basic": (lambda x: x[1, ::2] * x[..., :2, 0], (3, 4)),
    "index_fancy": (lambda x: x[[2, 0, 2]], (3,)),
    "index_bool": (lambda x: x[np.array([True, False, True])], (3,)),
    "index_newaxis": (lambda x: x[:, None] * x[None, :], (3,)),
    "index_split_advanced": (lambda x: x[[0, 1], :, [1, 0]], (2, 3, 2)),
    "setitem": (_setitem, (4,)),
    "full_like": (lambda x: np.full_like(x, 2.0) * x + np.ones_like(x), (3,)),
    "copy": (lambda x: np.copy(x) * 3, (3,)),
    "unpack": (lambda x: (lambda a, b, c: a * b - c)(*x), (3,)),
}


def away_from_kinks(rng, shape):
    """Points in [-1.5, 1.5] kept off the kinks of clip and where (at 0 and ±0.5), where
    finite differences are meaningless."""
    x = rng.uniform(-1.5, 1.5, shape)
    x = np.where(np.abs(x) < 0.1, 0.3, x)
    return np.where(np.abs(np.abs(x) - 0.5) < 0.05, 0.8, x)


@pytest.mark.parametrize("name", list(ARRAY_FUNCTIONS))
def test_array_function_against_finite_differences(name, rng):
    f, shape = ARRAY_FUNCTIONS[name]
    x = away_from_kinks(rng, shape)
    J = jacobian(f, x)
    close(J, fd_jacobian(f, x), FD_TOL * 100)
    value = f(Dual(x, np.zeros((*shape, 1)), tag=0)).value
    np.testing.assert_allclose(value, f(x), rtol=EXACT_TOL)


@pytest.mark.parametrize("name", list(ARRAY_FUNCTIONS))
def test_array_function_under_nesting(name, rng):
    """Second derivatives through every array function: nested duals inside each one."""
    f, shape = ARRAY_FUNCTIONS[name]
    x = away_from_kinks(rng, shape)

    def energy(v):
        return np.sum(np.sin(f(v)))

    H = hessian(energy, x)
    close(H, fd_jacobian(lambda v: gradient(energy, v), x), FD_TOL * 100)


def test_shape_protocol_and_iteration():
    d = Dual(np.zeros((2, 3)), np.zeros((2, 3, 4)))
    assert d.shape == (2, 3) == np.shape(d)
    assert d.ndim == 2 == np.ndim(d)
    assert d.size == 6 == np.size(d)
    assert d.npartials == 4
    assert len(d) == 2
    assert [row.shape for row in d] == [(3,), (3,)]
    assert d.dtype == np.float64
    assert "Dual(" in repr(d)


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


def test_comparisons_return_plain_booleans():
    d = Dual(np.array([1.0, 2.0, 3.0]), np.eye(3))
    for result in (d > 2, d >= 2, d < 2, d <= 2, d == 2, d != 2, np.isfinite(d), 2 < d):
        assert type(result) is np.ndarray
        assert result.dtype == bool
    np.testing.assert_array_equal(d > 1.5, [False, True, True])
    assert bool(Dual(1.0, [0.0]) > 0)


def test_sin_and_cos_of_one_dual_share_evaluations():
    t = Dual(np.array([0.3, 1.2]), np.ones((2, 1)))
    s, c = np.sin(t), np.cos(t)
    np.testing.assert_array_equal(s.partials[:, 0], np.cos([0.3, 1.2]))
    np.testing.assert_array_equal(c.partials[:, 0], -np.sin([0.3, 1.2]))
    # Storing into a dual replaces its arrays (copy on write), so nothing cached goes stale.
    view = t[0:1]
    before = np.sin(view).value.copy()
    t[0] = 2.0
    np.testing.assert_array_equal(np.sin(view).value, before)
    np.testing.assert_array_equal(np.sin(t).value, np.sin([2.0, 1.2]))


def test_item_assignment_on_scalars_and_with_plain_values():
    t = np.sin(Dual(0.5, [1.0]))
    t[()] = 2.0
    assert t.value == 2.0
    assert t.partials[0] == 0.0
    d = Dual(np.zeros(3), np.ones((3, 2)))
    d[1:] = Dual(np.array([5.0, 6.0]), np.full((2, 2), 3.0))
    np.testing.assert_array_equal(d.value, [0.0, 5.0, 6.0])
    np.testing.assert_array_equal(d.partials, [[1.0, 1.0], [3.0, 3.0], [3.0, 3.0]])


def test_unevaluated_partials_chain_and_are_shared_correctly(rng):
    """Single-argument results keep ``coefficient * partials`` unevaluated; reuse them."""
    x = rng.uniform(-1, 1, (4, 3))
    d = Dual(x, np.broadcast_to(np.eye(3), (4, 3, 3)))
    y = np.exp(np.sin(d) / 3)
    dy = np.cos(x) / 3 * np.exp(np.sin(x) / 3)
    twice, total, row = 2 * y, y + y, y[1]
    close(np.diagonal(twice.partials, axis1=-2, axis2=-1), 2 * dy, EXACT_TOL)
    close(np.diagonal(total.partials, axis1=-2, axis2=-1), 2 * dy, EXACT_TOL)
    close(np.diagonal(y.partials, axis1=-2, axis2=-1), dy, EXACT_TOL)
    close(np.diagonal(row.partials), dy[1], EXACT_TOL)
    close(np.stack([y, -y]).partials[1].sum(axis=-1), -dy, EXACT_TOL)


def test_value_and_partials_views_are_read_only():
    d = Dual(np.ones(3), np.ones((3, 2)))
    with pytest.raises(ValueError, match="read-only"):
        d.value[0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        d.partials[0, 0] = 5.0


# ---------------------------------------------------------------------------------------
# Errors: unsupported operations
# ---------------------------------------------------------------------------------------

D3 = Dual(np.array([0.1, 0.2, 0.3]), np.eye(3))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: np.logaddexp2(D3, 1.0), "logaddexp2"),
        (lambda: np.sort(D3), "sort"),
        (lambda: np.linalg.inv(np.stack([D3, D3, D3])), "inv"),
        (lambda: np.max(D3), "max"),
        (lambda: np.add.reduce(D3), "reduce"),
        (lambda: np.sin(D3, out=np.empty(3)), "out"),
        (lambda: float(D3[0]), "float"),
        (lambda: np.asarray(D3), "ndarray"),
        (lambda: np.array([D3[0], D3[1]]), "np.stack"),
        (lambda: np.linalg.norm(D3, ord=1), "ord"),
        (lambda: D3[D3], "index"),
        (lambda: np.cross(D3, D3, axis=0), "last axis"),
        (lambda: np.einsum(D3, [0], [0]), "string subscripts"),
        (lambda: np.sum(D3, dtype=np.float32), "dtype"),
        (lambda: np.where(D3, 1.0, 2.0), "boolean condition"),
        (lambda: len(D3[0]), "0-d"),
    ],
)
def test_unsupported_operations_raise_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_storing_a_newer_tag_into_an_older_dual_raises():
    old = Dual(np.zeros(2), np.zeros((2, 1)), tag=1)
    with pytest.raises(TypeError, match="smaller tag"):
        old[0] = Dual(1.0, [1.0], tag=2)


def test_same_tag_with_different_partial_counts_raises():
    with pytest.raises(ValueError, match="different numbers of partials"):
        Dual(1.0, [1.0]) + Dual(1.0, [1.0, 2.0])


# ---------------------------------------------------------------------------------------
# Drivers: shapes, chunking, validation
# ---------------------------------------------------------------------------------------


def test_jacobian_chunking_gives_the_same_answer(rng):
    A = rng.normal(size=(4, 5))
    x = rng.normal(size=5)

    def f(v):
        return np.tanh(A @ v)

    full = jacobian(f, x)
    close(full, (1 - np.tanh(A @ x) ** 2)[:, None] * A, EXACT_TOL)
    for chunk in (1, 2, 3, 5, 7):
        np.testing.assert_array_equal(jacobian(f, x, chunk=chunk), full)


def test_gradient_beyond_the_default_chunk(rng):
    n = DEFAULT_CHUNK * 2 + 3
    x = rng.normal(size=n)
    close(gradient(lambda v: np.sum(np.sin(v) * v), x), np.cos(x) * x + np.sin(x), EXACT_TOL)


def test_constant_function_has_zero_derivative():
    J = jacobian(lambda v: np.ones(2), np.zeros(3))
    np.testing.assert_array_equal(J, np.zeros((2, 3)))
    assert derivative(lambda t: 5.0, 1.0) == 0.0


def test_float32_points_give_float32_derivatives():
    x = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    assert jacobian(np.sin, x).dtype == np.float32
    assert derivative(np.exp, x).dtype == np.float32


def test_directional_derivative_broadcasts_direction(rng):
    x = rng.normal(size=(4, 3))
    d = directional_derivative(field, x, np.array([0.0, 0.0, 1.0]))
    close(d, field_jacobian(x)[..., 2], EXACT_TOL)


def test_dual_constructor_validates():
    with pytest.raises(InputError, match="partials"):
        Dual(np.zeros(3), np.zeros(3))
    with pytest.raises(InputError, match="partials"):
        Dual(np.zeros(3), np.zeros((2, 1)))
    with pytest.raises(InputError, match="tag"):
        Dual(0.0, [1.0], tag=-1)
    with pytest.raises(InputError, match="value"):
        Dual(Dual(0.0, [1.0], tag=3), [1.0], tag=2)
    with pytest.raises(InputError, match="value"):
        Dual(np.array([1 + 2j]), np.zeros((1, 1)))
    assert Dual(np.array([1, 2]), np.zeros((2, 1))).dtype == np.float64


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: derivative(np.sin, np.nan), "^x:"),
        (lambda: jacobian(np.sin, np.array([1.0, np.inf])), "^x:"),
        (lambda: gradient(np.sum, "abc"), "^x:"),
        (lambda: derivative(np.sin, 1 + 1j), "^x:"),
        (lambda: derivative("sin", 1.0), "^f:"),
        (lambda: derivative(lambda t: None, 1.0), "^f:"),
        (lambda: derivative(lambda t: "text", 1.0), "^f:"),
        (lambda: jacobian(lambda v: [v[0], v[1]], np.ones(2)), "^f:"),
        (lambda: directional_derivative(np.sin, np.ones(3), np.ones(2)), "^v:"),
        (lambda: directional_derivative(np.sin, np.ones(3), [np.nan, 0, 0]), "^v:"),
        (lambda: jacobian(np.sin, np.ones(3), chunk=0), "^chunk:"),
        (lambda: jacobian(np.sin, np.ones(3), chunk=1.5), "^chunk:"),
        (lambda: jacobian(np.sin, np.ones(3), batched="yes"), "^batched:"),
        (lambda: jacobian(np.sin, 1.0, batched=True), "^x:"),
        (lambda: jacobian(np.sin, np.ones((4, 3)), batched=True, points_per_pass=0), "^points"),
        (lambda: jacobian(np.sin, np.ones((4, 3)), batched=True, points_per_pass=2.5), "^points"),
        (lambda: gradient(np.sin, np.ones(3)), "^f:"),
        (lambda: gradient(np.sin, np.ones((2, 3)), batched=True), "^f:"),
        (lambda: hessian(np.sin, np.ones(2)), "^f:"),
        (lambda: derivative(np.sin, Dual(0.0, [1.0], tag=10**9)), "^x:"),
    ],
)
def test_driver_validation(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_a_leaked_perturbation_is_reported():
    kept = []

    def inner(y):
        kept.append(y)
        return y

    def outer(x):
        derivative(inner, x)
        return kept[-1] * x

    with pytest.raises(InputError, match="leaked"):
        derivative(outer, 1.0)


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

"""Tests for tumble.dual.drivers: derivative, directional_derivative, jacobian, gradient,
hessian.

Oracles: hand-written Jacobians and Hessians (a Lorenz-like field, Rosenbrock, quadratic
forms), central finite differences, exact answers of the perturbation-confusion examples,
and per-point loops for the batched drivers.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
from dual_oracles import EXACT_TOL, FD_TOL, close, fd_jacobian

from tumble import InputError
from tumble.dual import (
    DEFAULT_CHUNK,
    DEFAULT_POINTS_PER_PASS,
    MAX_JACOBIAN_BYTES,
    Dual,
    derivative,
    directional_derivative,
    gradient,
    hessian,
    jacobian,
)

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


def test_vector_field_directional_derivative_is_jacobian_times_direction(rng):
    x, v = rng.normal(size=3), rng.normal(size=3)
    close(directional_derivative(field, x, v), field_jacobian(x) @ v, EXACT_TOL)


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


def test_regression_an_error_of_f_on_a_slice_propagates_instead_of_a_silent_retry(rng):
    # issue 27: any exception of f on the first slice of points was swallowed and all
    # points evaluated at once, so a bug that shows on a slice became a slow path. Only
    # NumPy's shape error (ValueError) falls back now; f's own KeyError propagates.
    weights = {30: rng.normal(size=(30, 1))}
    calls = []

    def keyed(p):
        calls.append(p.shape[0])
        return field(p) * weights[p.shape[0]]

    points = rng.normal(size=(30, 3))
    with pytest.raises(KeyError):
        jacobian(keyed, points, batched=True, points_per_pass=10)
    assert calls == [10]
    # Declared unsliceable, the same f runs once over all points, right.
    J = jacobian(keyed, points, batched=True, points_per_pass=10, sliceable=False)
    close(J, field_jacobian(points) * weights[30][..., None], EXACT_TOL)
    assert calls == [10, 30]


def test_sliceable_true_refuses_an_f_that_does_not_act_on_slices(rng):
    points = rng.normal(size=(30, 3))
    offsets = rng.normal(size=(30, 3))
    with pytest.raises(ValueError, match="broadcast"):
        jacobian(
            lambda p: field(p + offsets), points, batched=True, points_per_pass=10, sliceable=True
        )
    with pytest.raises(InputError, match=r"^f: returned shape .* sliceable=True"):
        jacobian(lambda p: field(p)[:2], points, batched=True, points_per_pass=10, sliceable=True)
    sliced = jacobian(field, points, batched=True, points_per_pass=10, sliceable=True)
    np.testing.assert_array_equal(sliced, jacobian(field, points, batched=True))
    with pytest.raises(InputError, match=r"^sliceable"):
        jacobian(field, points, batched=True, sliceable="yes")
    with pytest.raises(InputError, match=r"^sliceable"):
        gradient(lambda p: p[..., 0], points, batched=True, sliceable=1)


def test_unbatched_jacobian_of_a_batch_is_block_diagonal(rng):
    points = rng.normal(size=(2, 3))
    J = jacobian(field, points)
    assert J.shape == (2, 3, 2, 3)
    close(J[0, :, 0, :], field_jacobian(points[0]), EXACT_TOL)
    close(J[0, :, 1, :], np.zeros((3, 3)), 0)


# ---------------------------------------------------------------------------------------
# Nested drivers, perturbation confusion
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
# Shapes, chunking, validation
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


def test_regression_directional_derivative_along_a_huge_direction():
    # The long campaign (issue 27): v = (-1e308, 2, 3) overflowed inside the dual
    # arithmetic (NumPy's "overflow encountered in _lincomb2") and gave -inf. The derivative
    # is linear in v, so v is scaled by a power of two: partials that overflow on the way
    # no longer matter, and a derivative beyond the float range raises naming v.
    x = np.array([0.1, -0.2, 0.3])

    def g(u):
        return np.sum(np.tanh(u) + np.arctan2(u, 1.0))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # 2u - u: the partial 2 v overflows for v = 1e308, the derivative is v.
        assert directional_derivative(lambda u: np.sum(2.0 * u - u), x, [1e308, 0, 0]) == 1e308
        # Σ (sech²(x_i) + 1/(1 + x_i²)) v_i
        v = np.array([-5e307, 2.0, 3.0])
        expected = float(np.sum((1.0 / np.cosh(x) ** 2 + 1.0 / (1.0 + x * x)) * v))
        got = directional_derivative(g, x, v)
        assert got == pytest.approx(expected, rel=1e-14)
        with pytest.raises(InputError, match=r"^v: too large"):
            directional_derivative(g, x, [-1e308, 2.0, 3.0])  # -1.98e308


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


def test_regression_a_perturbation_running_in_another_thread_is_not_active_here():
    # issue 27: the set of running differentiations was process-wide, so a dual of a
    # differentiation running in another thread passed the leak check here and came back
    # as a Dual instead of an error.
    shared = []
    ready, done = threading.Event(), threading.Event()

    def holds(x):
        shared.append(x)
        ready.set()
        done.wait(60)
        return x * x

    worker = threading.Thread(target=lambda: derivative(holds, 3.0))
    worker.start()
    try:
        assert ready.wait(60)
        with pytest.raises(InputError, match="leaked out"):
            derivative(lambda y: y * shared[0], 2.0)
    finally:
        done.set()
        worker.join()


# ---------------------------------------------------------------------------------------
# Escaped perturbations and oversized Jacobians (issue 19)
# ---------------------------------------------------------------------------------------


def test_regression_dual_kept_in_a_closure_and_reused_raises():
    # A closure captures the dual of one differentiation; a later differentiation that
    # uses it returned a Dual instead of a float.
    captured = []

    def first(x):
        captured.append(x)
        return x * x

    assert derivative(first, 3.0) == 6.0

    def second(y):
        return y * captured[0]

    with pytest.raises(InputError, match="leaked out"):
        derivative(second, 2.0)
    with pytest.raises(InputError, match="leaked out"):
        jacobian(lambda y: y * captured[0], np.ones(2))
    # Hand-made duals (tag 0) and duals of the running differentiation are fine.
    hand = Dual(1.5, [0.0])
    assert derivative(lambda y: y * hand.value + y, 2.0) == 2.5


def test_regression_unbatched_jacobian_of_many_points_is_refused_up_front():
    calls = []

    def pointwise(p):
        calls.append((type(p).__name__, p.npartials))
        return field(p)

    x = np.random.default_rng(3).normal(size=(100_000, 3))
    with pytest.raises(InputError, match=r"batched=True.*max_bytes|671"):
        jacobian(pointwise, x)
    # f ran once, on duals carrying one direction, to learn its output size: never on a
    # chunk of 64 directions, and never speculatively on floats (issue 27).
    assert calls == [("Dual", 1)]
    assert jacobian(field, x[:4], batched=True).shape == (4, 3, 3)


def test_jacobian_size_limit_applies_to_batched_and_small_limits():
    x = np.ones((1000, 3))
    with pytest.raises(InputError, match="max_bytes"):
        jacobian(field, x, batched=True, max_bytes=1000)
    with pytest.raises(InputError, match="max_bytes"):
        jacobian(field, np.ones(30), max_bytes=100)
    with pytest.raises(InputError, match="max_bytes"):
        gradient(lambda v: np.sum(v), np.ones(3), max_bytes=0)
    assert jacobian(field, np.ones(3), max_bytes=72).shape == (3, 3)
    assert MAX_JACOBIAN_BYTES == 2 << 30


_FAULTS_CODE = """
import resource
import numpy as np
from tumble.dual import jacobian

def field(p):
    a, b, c = p[..., 0], p[..., 1], p[..., 2]
    return np.stack([a * b + np.sin(c), a - b * c, np.exp(-a * a / 10) * c], axis=-1)

x = np.random.default_rng(0).normal(size=(20000, 3))
jacobian(field, x, batched=True)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    jacobian(field, x, batched=True)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5)
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc malloc's dynamic thresholds",
)
def test_regression_batched_jacobian_reuses_freed_memory_from_the_first_call():
    """In a fresh process, glibc handed each evaluation's memory back to the kernel and
    page-faulted it in again on every call: about 900 minor faults per Jacobian at 2e4
    points (977 measured), and 4 400 at 1e5. The drivers raise its thresholds on their
    first evaluation; a Jacobian that reuses its memory faults none (0 measured)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    result = subprocess.run(
        [sys.executable, "-c", _FAULTS_CODE], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    faults_per_call = float(result.stdout.strip().splitlines()[-1])
    assert faults_per_call < 100

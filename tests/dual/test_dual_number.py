"""Tests for tumble.dual.number: the Dual type.

Tags and nesting, the ndarray-like protocol (shape, iteration, indexing, item assignment,
read-only views, comparisons), the caches behind the speed (shared sin/cos evaluations,
unevaluated partials) checked against plain NumPy evaluations, and the conversions and
operations the type refuses.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sc
from dual_oracles import EXACT_TOL, close

from tumble import InputError
from tumble.dual import Dual, derivative, gradient, hessian, nan_safe

# ---------------------------------------------------------------------------------------
# Nested duals and tags
# ---------------------------------------------------------------------------------------


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


def test_storing_a_newer_tag_into_an_older_dual_raises():
    old = Dual(np.zeros(2), np.zeros((2, 1)), tag=1)
    with pytest.raises(TypeError, match="smaller tag"):
        old[0] = Dual(1.0, [1.0], tag=2)


def test_same_tag_with_different_partial_counts_raises():
    with pytest.raises(ValueError, match="different numbers of partials"):
        Dual(1.0, [1.0]) + Dual(1.0, [1.0, 2.0])


# ---------------------------------------------------------------------------------------
# The ndarray-like protocol
# ---------------------------------------------------------------------------------------


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
        (lambda: np.gcd(D3, 1), "numpy.gcd is not supported.*to request one"),
        (lambda: sc.hankel1(1.5, D3), "scipy.special.hankel1 is not supported"),
        (lambda: np.fft.fft(D3), "fft is not supported.*To request one"),
        (lambda: np.linalg.eig(np.stack([D3, D3, D3])), "eig is not supported"),
        (lambda: np.linalg.svd(np.stack([D3, D3, D3])), "singular values"),
        (lambda: sc.jv(D3, 1.0), "no derivative with respect to argument 1"),
        (lambda: np.ldexp(1.0, D3), "ldexp"),
        (lambda: np.add.reduce(D3), "reduce"),
        (lambda: np.sin(D3, out=np.empty(3)), "out"),
        (lambda: float(D3[0]), "float"),
        (lambda: np.asarray(D3), "ndarray"),
        (lambda: np.array([D3[0], D3[1]]), "np.stack"),
        (lambda: D3[D3], "index"),
        (lambda: len(D3[0]), "0-d"),
    ],
)
def test_unsupported_operations_raise_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


# ---------------------------------------------------------------------------------------
# Division by zero and empty means follow NumPy (issue 18)
# ---------------------------------------------------------------------------------------


def test_regression_dual_divided_by_zero_is_inf_with_a_runtime_warning_like_numpy():
    for zero in (0.0, 0, np.float64(0.0)):
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            out = Dual(1.0, [1.0]) / zero
        assert out.value == np.inf
        assert out.partials[0] == np.inf
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        out = 1.0 / Dual(np.array([0.0, 2.0]), np.ones((2, 1)))
    np.testing.assert_array_equal(out.value, 1.0 / np.array([0.0, 2.0]))


def test_regression_mean_of_an_empty_dual_is_nan_with_numpys_warning():
    empty = Dual(np.zeros(0), np.zeros((0, 2)))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        expected = np.mean(np.zeros(0))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        out = np.mean(empty)
    assert np.isnan(out.value)
    assert np.isnan(expected)
    assert out.partials.shape == (2,)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        out = Dual(np.zeros((0, 3)), np.zeros((0, 3, 1))).mean(axis=0)
    assert out.shape == (3,)
    assert np.all(np.isnan(out.value))
    # Along an axis that is not empty nothing is averaged over nothing: no warning.
    assert Dual(np.zeros((0, 3)), np.zeros((0, 3, 1))).mean(axis=1).shape == (0,)


# ---------------------------------------------------------------------------------------
# NaN-safe partials (issue 19)
# ---------------------------------------------------------------------------------------


def test_regression_infinite_derivative_does_not_leak_nan_into_other_partials():
    with np.errstate(divide="ignore"):
        g = gradient(lambda v: np.sqrt(v[0]) + v[1], np.array([0.0, 1.0]))
        np.testing.assert_array_equal(g, [np.inf, 1.0])
        with np.errstate(over="ignore"):
            g = gradient(lambda v: v[0] / v[1], np.array([1.0, 1e-160]))
        np.testing.assert_array_equal(g, [1e160, -np.inf])
        H = hessian(lambda v: v[0] ** 1.5 + v[1] ** 2, np.array([0.0, 1.0]))
    np.testing.assert_array_equal(H, [[np.inf, 0.0], [0.0, 2.0]])


def test_nan_safe_can_be_turned_off_and_is_restored():
    with np.errstate(divide="ignore", invalid="ignore"), nan_safe(False):
        g = gradient(lambda v: np.sqrt(v[0]) + v[1], np.array([0.0, 1.0]))
    assert np.isinf(g[0])
    assert np.isnan(g[1])
    with np.errstate(divide="ignore"):
        g = gradient(lambda v: np.sqrt(v[0]) + v[1], np.array([0.0, 1.0]))
    assert g[1] == 1.0
    with pytest.raises(InputError, match="enabled"):
        with nan_safe("yes"):  # type: ignore[arg-type]
            pass


def test_regression_nan_safe_is_per_thread():
    # issue 27: nan_safe flipped a process-wide flag, so while one thread ran inside
    # nan_safe(False) every gradient of the other thread came out [inf, nan]. Two threads
    # take the same gradient 10^4 times each, one with NaN-safe partials off; a barrier
    # starts them together and the GIL interleaves them. Each gets its own semantics:
    # [inf, 1] (the zero partial of v[1] stays out of sqrt's infinite coefficient) and
    # [inf, nan] (inf * 0), at every call.
    calls = 10_000
    barrier = threading.Barrier(2)
    results: dict[bool, list[np.ndarray]] = {}

    def work(safe: bool) -> None:
        out = []
        with np.errstate(divide="ignore", invalid="ignore"), nan_safe(safe):
            barrier.wait()
            for _ in range(calls):
                out.append(gradient(lambda v: np.sqrt(v[0]) + v[1], np.array([0.0, 1.0])))
        results[safe] = out

    threads = [threading.Thread(target=work, args=(safe,)) for safe in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    safe, unsafe = np.array(results[True]), np.array(results[False])
    assert safe.shape == unsafe.shape == (calls, 2)
    assert np.all(safe[:, 0] == np.inf)
    assert np.all(safe[:, 1] == 1.0)
    assert np.all(unsafe[:, 0] == np.inf)
    assert np.all(np.isnan(unsafe[:, 1]))


def test_regression_the_every_coefficient_switch_is_per_thread():
    # issue 27: like nan_safe, the drivers' switch that checks the coefficient of every rule
    # (not only of those that can be infinite at finite input) was process-wide. One thread
    # inside checking_every_coefficient, one outside, each multiplying a dual whose partial
    # is zero by inf 10^3 times: 0 inside (the zero partial stays out), NaN (0 * inf) outside.
    from tumble.dual.number import checking_every_coefficient

    calls = 1_000
    barrier = threading.Barrier(2)
    results: dict[bool, list[float]] = {}

    def work(every: bool) -> None:
        x = Dual(np.array([1.0]), np.array([[0.0]]))
        out = []
        with np.errstate(invalid="ignore"):
            with checking_every_coefficient() if every else contextlib.nullcontext():
                barrier.wait()
                for _ in range(calls):
                    out.append(float((x * np.inf).partials[0, 0]))
        results[every] = out

    threads = [threading.Thread(target=work, args=(every,)) for every in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[True] == [0.0] * calls
    assert all(np.isnan(results[False]))


def test_nan_safe_is_restored_per_context_and_copied_contexts_inherit_it():
    seen = []
    with nan_safe(False):
        context = contextvars.copy_context()
        worker = threading.Thread(target=lambda: seen.append(nan_safe_state()))
        worker.start()
        worker.join()
        seen.append(context.run(nan_safe_state))
    seen.append(nan_safe_state())
    # A new thread starts from the default; a copied context keeps the caller's setting;
    # the block restores the setting on exit.
    assert seen == [True, False, True]


def nan_safe_state() -> bool:
    """Whether NaN-safe partials are on, seen through a derivative: with them, the zero
    partial of v[1] survives sqrt's infinite coefficient at 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = gradient(lambda v: np.sqrt(v[0]) + v[1], np.array([0.0, 1.0]))
    return bool(g[1] == 1.0)


def test_nan_safe_keeps_genuinely_undefined_derivatives_nan():
    # sqrt(x)² = x at 0: the chain rule gives 0 · inf, which stays NaN (not a silent 0).
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.isnan(derivative(lambda x: np.sqrt(x) ** 2, 0.0))


# ---------------------------------------------------------------------------------------
# SciPy stays unimported
# ---------------------------------------------------------------------------------------


def test_importing_tumble_dual_does_not_import_scipy():
    code = (
        "import sys, numpy as np\n"
        "import tumble.dual as td\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'scipy'], 'import'\n"
        "x = td.Dual(np.arange(3.0), np.eye(3))\n"
        "y = np.sin(x) * x + np.tanh(x) / (1 + x)\n"
        "td.jacobian(lambda v: np.exp(v) * v[::-1], np.ones(3))\n"
        "assert 'scipy.special' not in sys.modules, 'use'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_chain_rule_of_large_duals_gives_numpys_bits(rng, dtype, monkeypatch):
    """Large binary results take the row kernel; it must give the same bits as the ufunc
    that small ones take (``c_a * dA + c_b * dB``, no fused multiply-add), for strided
    values, broadcast seed partials, full partials, scalar and array coefficients."""
    import tumble.dual.fused as fusion
    from tumble._kernels.dual import lincomb2, lincomb2_rows
    from tumble.dual import jacobian

    calls = []

    def kernel(*args):
        calls.append(args[-1].shape)
        return lincomb2_rows(*args)

    monkeypatch.setattr(fusion, "_LINCOMB2", [lincomb2, kernel])

    def f(p):
        a, b, c = p[..., 0], p[..., 1], p[..., 2]
        ab = a * b  # array coefficients, broadcast seed partials
        u = 2.5 * (b - a) + np.sin(c)  # scalar and array coefficients
        return np.stack([ab * np.exp(-0.25 * c), u - ab, u * ab - 3 * c], axis=-1)

    x = rng.normal(size=(4000, 3)).astype(dtype)  # 12 000 partials per result
    fused = jacobian(f, x, batched=True)
    assert len(calls) >= 5  # every binary rule with both arguments dual
    monkeypatch.setattr(fusion, "FUSED_ROWS_MIN", 2**62)
    plain = jacobian(f, x, batched=True)
    assert fused.dtype == plain.dtype == dtype
    np.testing.assert_array_equal(fused, plain)
    a, b, c = (x[:, i].astype(np.float64) for i in range(3))
    e, ab, u = np.exp(-0.25 * c), a * b, 2.5 * (b - a) + np.sin(c)
    zero = np.zeros_like(a)
    analytic = np.stack(
        [
            np.stack([b * e, a * e, -ab * e / 4], axis=-1),
            np.stack([-2.5 - b, 2.5 - a, np.cos(c)], axis=-1),
            np.stack([-2.5 * ab + u * b, 2.5 * ab + u * a, np.cos(c) * ab - 3 + zero], axis=-1),
        ],
        axis=-2,
    )
    tol = 1e-12 if dtype == np.float64 else 1e-4
    close(fused, analytic, tol)

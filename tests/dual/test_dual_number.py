"""Tests for tumble.dual.number: the Dual type.

Tags and nesting, the ndarray-like protocol (shape, iteration, indexing, item assignment,
read-only views, comparisons), the caches behind the speed (shared sin/cos evaluations,
unevaluated partials) checked against plain NumPy evaluations, and the conversions and
operations the type refuses.
"""

from __future__ import annotations

import numpy as np
import pytest
from dual_oracles import EXACT_TOL, close

from tumble import InputError
from tumble.dual import Dual

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
        (lambda: np.logaddexp2(D3, 1.0), "logaddexp2"),
        (lambda: np.sort(D3), "sort"),
        (lambda: np.linalg.inv(np.stack([D3, D3, D3])), "inv"),
        (lambda: np.max(D3), "max"),
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

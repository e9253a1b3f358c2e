"""Tests for tumble.dual.functions: NumPy array functions and indexing on duals.

Oracle: central-difference Jacobians, for first derivatives and (through an inner
gradient) for second derivatives under nesting; the value against the plain evaluation.
"""

from __future__ import annotations

import numpy as np
import pytest
from dual_oracles import EXACT_TOL, FD_TOL, close, fd_jacobian

from tumble.dual import Dual, gradient, hessian, jacobian

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


# ---------------------------------------------------------------------------------------
# Errors: unsupported arguments
# ---------------------------------------------------------------------------------------


D3 = Dual(np.array([0.1, 0.2, 0.3]), np.eye(3))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: np.linalg.eigh(np.stack([D3, D3, D3]), UPLO="U"), "UPLO"),
        (lambda: np.cross(D3, D3, axis=0), "last axis"),
        (lambda: np.einsum(D3, [0], [0]), "string subscripts"),
        (lambda: np.sum(D3, dtype=np.float32), "dtype"),
        (lambda: np.where(D3, 1.0, 2.0), "boolean condition"),
    ],
)
def test_unsupported_operations_raise_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()

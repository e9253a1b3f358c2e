"""The single-element fast path of tumble.rotation, thread use, and the overflow fixes.

One ``(4,)``/``(3,)``/``(3, 3)`` element skips the batch machinery (issue 14, part 3); it
must give the same bits as the batched path and the same errors. Small batches must never
reach numba's thread pool. Regression tests pin the float32 and overflow findings of
issue 17.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tumble.rotation as tr
from tumble import InputError
from tumble._kernels import interpolate as _ki
from tumble._kernels import rotation as _kr
from tumble._kernels.dispatch import PARALLEL_MIN_SIZE
from tumble.interpolate import slerp
from tumble.transform import Transform

EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)


def _quats(rng, n, dtype):
    q = tr.random_quat(n, rng) * rng.uniform(0.5, 2.0, (n, 1))
    return q.astype(dtype)


def _matrices(rng, n, dtype):
    return tr.quat_to_matrix(tr.random_quat(n, rng)).astype(dtype)


def _vectors(rng, n, dtype):
    return (rng.standard_normal((n, 3)) * 2.0).astype(dtype)


# Each case: function, argument makers, keyword arguments.
CASES = {
    "quat_multiply": (tr.quat_multiply, (_quats, _quats), {}),
    "quat_rotate": (tr.quat_rotate, (_quats, _vectors), {}),
    "quat_conjugate": (tr.quat_conjugate, (_quats,), {}),
    "quat_normalize": (tr.quat_normalize, (_quats,), {}),
    "quat_to_matrix": (tr.quat_to_matrix, (_quats,), {}),
    "matrix_to_quat": (tr.matrix_to_quat, (_matrices,), {}),
    "rotvec_to_quat": (tr.rotvec_to_quat, (_vectors,), {}),
    "quat_to_rotvec": (tr.quat_to_rotvec, (_quats,), {}),
    "rotvec_to_matrix": (tr.rotvec_to_matrix, (_vectors,), {}),
    "matrix_to_rotvec": (tr.matrix_to_rotvec, (_matrices,), {}),
    "quat_exp": (tr.quat_exp, (_vectors,), {}),
    "quat_log": (tr.quat_log, (_quats,), {}),
    "rotation_angle": (tr.rotation_angle, (_quats, _quats), {}),
    "euler_to_quat": (tr.euler_to_quat, (_vectors,), {"seq": "ZYX"}),
    "quat_to_euler": (tr.quat_to_euler, (_quats,), {"seq": "xzx"}),
    "quat_to_mrp": (tr.quat_to_mrp, (_quats,), {}),
    "mrp_to_quat": (tr.mrp_to_quat, (_vectors,), {}),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CASES))
def test_single_element_path_is_bit_identical_to_the_batched_path(name, dtype, rng):
    fn, makers, kwargs = CASES[name]
    n = 64
    args = [make(rng, n, dtype) for make in makers]
    batched = np.asarray(fn(*args, **kwargs))
    assert batched.dtype == dtype
    for i in range(n):
        single = fn(*(a[i] for a in args), **kwargs)
        assert np.asarray(single).dtype == dtype
        assert np.array_equal(single, batched[i]), f"{name} element {i}"


@pytest.mark.parametrize(
    "name", ["quat_multiply", "quat_rotate", "quat_to_matrix", "quat_to_euler"]
)
def test_single_element_from_lists_and_integers_promotes_like_the_batched_path(name, rng):
    fn, makers, kwargs = CASES[name]
    args = [np.round(make(rng, 1, np.float64)[0] * 4) for make in makers]
    as_lists = [[int(x) for x in a.reshape(-1)] for a in args]
    as_lists = [np.reshape(x, a.shape).tolist() for x, a in zip(as_lists, args, strict=True)]
    expected = fn(*[a[None] for a in args], **kwargs)[0]
    got = fn(*as_lists, **kwargs)
    assert got.dtype == np.float64
    assert np.array_equal(got, expected)


def test_single_element_errors_are_those_of_the_batched_path():
    with pytest.raises(InputError, match=r"^q: expected nonzero quaternions"):
        tr.quat_rotate(np.zeros(4), [1.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r"^v: expected finite"):
        tr.quat_rotate([1.0, 0.0, 0.0, 0.0], [1.0, np.nan, 0.0])
    with pytest.raises(InputError, match=r"^R: expected a rotation matrix"):
        tr.matrix_to_quat(2.0 * np.eye(3))
    with pytest.raises(InputError, match=r"^q: expected finite"):
        tr.quat_conjugate([1.0, np.inf, 0.0, 0.0])
    with pytest.raises(InputError, match=r"^p: expected nonzero"):
        tr.rotation_angle(np.zeros(4), [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r"^q: expected a real"):
        tr.quat_normalize(np.array([True, False, False, False]))


def test_single_element_of_a_strided_view_is_read_correctly(rng):
    q = tr.random_quat(4, rng)
    wide = np.zeros((4, 8))
    wide[:, ::2] = q
    assert np.array_equal(tr.quat_to_matrix(wide[1, ::2]), tr.quat_to_matrix(q)[1])


# -- no thread pool below the parallel threshold -------------------------------------------


def test_batches_below_the_threshold_never_call_a_parallel_kernel(monkeypatch, rng):
    def refuse(*args):
        raise AssertionError("a parallel kernel ran below the parallel threshold")

    for module in (_kr, _ki):
        for name in dir(module):
            if name.endswith("_parallel"):
                monkeypatch.setattr(module, name, refuse)
    n = PARALLEL_MIN_SIZE - 1
    q, p = tr.random_quat(n, rng), tr.random_quat(n, rng)
    v = rng.standard_normal((n, 3))
    tr.quat_multiply(p, q)
    tr.quat_rotate(q, v)
    tr.rotvec_to_quat(v)
    tr.euler_to_quat(v, "xyz")
    tr.quat_to_euler(q, "XYZ")
    tr.quat_to_mrp(q)
    tr.mrp_to_quat(v)
    tr.quat_power(q, 0.5)
    slerp(p, q, 0.3)


# -- float32 matrices (issue 17) --------------------------------------------------------------


def test_float32_quat_to_matrix_is_orthogonal_to_float32_rounding(rng):
    # Summing |q|² in float32 put 4.2 % of matrices off orthogonality by more than 1e-7
    # (SciPy: 0.5 %); evaluated in double and rounded once, none is.
    q = tr.random_quat(20000, rng).astype(np.float32)
    R = tr.quat_to_matrix(q).astype(np.float64)
    err = np.abs(np.einsum("nji,njk->nik", R, R) - np.eye(3)).max(axis=(1, 2))
    assert np.mean(err > 1e-7) == 0.0
    assert err.max() <= 2 * EPS32


# -- huge finite input (issue 17): never a silent NaN ---------------------------------------


def test_quat_multiply_of_huge_quaternions_is_the_product_or_an_input_error():
    # w's sum of three products (1.2 x the largest float) overflows on the way; the true
    # product, components 0.8 x the largest float, is finite and comes out.
    c = math.sqrt(0.4 * np.finfo(np.float64).max)
    r = tr.quat_multiply([c] * 4, [c] * 4)
    np.testing.assert_allclose(r, [-2 * c * c, 2 * c * c, 2 * c * c, 2 * c * c], rtol=4 * EPS64)
    batched = tr.quat_multiply(np.array([[c] * 4] * 3), [c] * 4)
    assert np.array_equal(batched, np.tile(r, (3, 1)))
    # Issue 27: a product whose true value is beyond the largest float raised nothing and
    # gave infinities; it is an InputError naming both factors.
    for p, q in (([2e154, 2e154, 0.0, 0.0],) * 2, ([1e308] * 4, [1e308] * 4)):
        with pytest.raises(InputError, match=r"^p, q: expected quaternions whose product"):
            tr.quat_multiply(p, q)
        with pytest.raises(InputError, match=r"^p, q: "):
            tr.quat_multiply(np.array([p] * 3), q)


def test_quat_rotate_of_huge_vectors_gives_the_representable_answer():
    r = tr.quat_rotate([1, 1, 0, 0], [1e308] * 3)
    assert np.array_equal(r, [1e308, -1e308, 1e308])
    r = tr.quat_rotate(np.array([[1.0, 1.0, 0.0, 0.0]] * 2), [1e308] * 3)
    assert np.array_equal(r, [[1e308, -1e308, 1e308]] * 2)


@pytest.mark.parametrize("phi", [[1e200, 1e200, 0.0], [3e154, -2e154, 1e154], [1e308, 0.0, 0.0]])
def test_huge_rotation_vectors_give_unit_quaternions_and_rotations(phi):
    phi = np.array(phi)
    angle = np.hypot(np.hypot(phi[0] / 2, phi[1] / 2), phi[2] / 2) * 2
    axis = phi / np.max(np.abs(phi))
    axis /= np.linalg.norm(axis)
    expected = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])
    q = tr.rotvec_to_quat(phi)
    assert np.allclose(q, expected, atol=1e-15)
    assert np.allclose(tr.quat_exp(phi / 2), expected, atol=1e-15)
    R = tr.rotvec_to_matrix(phi)
    assert np.allclose(R, tr.quat_to_matrix(expected), atol=1e-15)
    assert np.allclose(Transform.from_rotvec(phi).rotation, R, atol=0)
    assert np.allclose(tr.rotvec_to_matrix(phi[None])[0], R, atol=0)


def test_quat_exp_of_a_vector_whose_length_overflows_raises():
    with pytest.raises(InputError, match=r"^x: expected vectors whose size is a finite float"):
        tr.quat_exp([1.7e308, 1.7e308, 1.7e308])


def test_quat_power_and_slerp_keep_the_quaternion_dtype(rng):
    q = tr.random_quat(3, rng).astype(np.float32)
    assert tr.quat_power(q, 0.5).dtype == np.float32
    assert tr.quat_power(q[0], 0.5).dtype == np.float32
    assert np.array_equal(tr.quat_power(q[0], 0.5), tr.quat_power(q[:1], 0.5)[0])
    assert slerp(q[0], q[1], 0.25).dtype == np.float32

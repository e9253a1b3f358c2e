"""The public contract of DESIGN.md, called exactly as an outside tester reads it.

Every name listed under "Public contract" (and the interfaces the issues add) is called
with DESIGN.md's positional order and keyword names, and checked against an independent
oracle: SciPy's ``Rotation``, closed forms, ``solve_ivp``, finite differences, Python's
``list`` and ``itertools``. Nothing here compares tumble with itself.

Tolerances (named, with the reason for their size):

* ``EXACT64``: float64 algebra that is exact up to round-off over a handful of flops.
* ``EXACT32``: the same in float32.
* ``ODE``: agreement with a ``solve_ivp`` (DOP853, rtol 1e-12) reference over short times,
  bounded by the reference's own error.
* ``FD``: central finite differences with step 1e-5; truncation ``O(h^2) ~ 1e-10`` times
  third derivatives of order one, round-off ``eps / h ~ 1e-11``.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

import tumble
from matrix import EVERY_METHOD
from tumble import exact, hierarchy, kinematics, rigid, rotation, transform

EXACT64 = 1e-13
EXACT32 = 2e-6
ODE = 1e-9
FD = 1e-7

SEED = 20261121


@pytest.fixture
def gen() -> np.random.Generator:
    return np.random.default_rng(SEED)


def _scipy(q: np.ndarray) -> Rotation:
    """SciPy rotation of scalar-first quaternions, without going through tumble."""
    q = np.asarray(q, dtype=np.float64)
    return Rotation.from_quat(q[..., [1, 2, 3, 0]])


def _wxyz(r: Rotation) -> np.ndarray:
    return r.as_quat()[..., [3, 0, 1, 2]]


def _same_rotation(a: np.ndarray, b: np.ndarray, tol: float) -> None:
    """Quaternions ``a`` and ``b`` are the same rotation (either sign), no NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert np.all(np.isfinite(a))
    assert np.all(np.isfinite(b))
    dot = np.abs(np.sum(a * b, axis=-1)) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    assert np.all(1.0 - dot <= tol), float(np.max(1.0 - dot))


def _random_quats(gen: np.random.Generator, n: int) -> np.ndarray:
    q = gen.standard_normal((n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _raises_naming(func, name: str, *args, **kwargs) -> None:
    """``func(*args)`` raises tumble.InputError whose message names ``name``."""
    with pytest.raises(tumble.InputError) as info:
        func(*args, **kwargs)
    assert name in str(info.value), str(info.value)


# ======================================================================================
# package


def test_input_error_is_value_error() -> None:
    assert issubclass(tumble.InputError, ValueError)
    assert issubclass(tumble.TumbleWarning, Warning)


def test_contract_names_exist() -> None:
    names = {
        rotation: "quat_multiply quat_conjugate quat_rotate quat_normalize quat_to_matrix "
        "matrix_to_quat rotvec_to_quat quat_to_rotvec rotvec_to_matrix matrix_to_rotvec skew "
        "unskew quat_exp quat_log quat_exp_approx cayley_rotate rotation_angle random_quat "
        "from_scipy to_scipy so3_right_jacobian so3_left_jacobian so3_right_jacobian_inverse "
        "so3_left_jacobian_inverse",
        kinematics: "translate magnus rotate rotate_matrix",
        rigid: "angular_acceleration world_inverse_inertia angular_momentum energy "
        "principal_axes METHODS step simulate Trajectory",
        exact: "torque_free body_period",
        transform: "Transform DynamicTransform",
        hierarchy: "Hierarchy",
    }
    for module, text in names.items():
        for name in text.split():
            assert hasattr(module, name), f"{module.__name__}.{name} is missing"


def test_signatures_match_design() -> None:
    """Positional order and keyword names exactly as DESIGN.md writes them."""

    def params(f):
        return list(inspect.signature(f).parameters)

    assert params(kinematics.translate) == ["x", "v", "a", "dt"]
    assert params(kinematics.magnus)[:4] == ["omega", "alpha", "dt", "order"]
    assert inspect.signature(kinematics.magnus).parameters["order"].default == 2
    for f in (kinematics.rotate, kinematics.rotate_matrix):
        p = inspect.signature(f).parameters
        assert list(p)[1:6] == ["omega", "alpha", "dt", "order", "exp"]
        assert p["order"].default == 2
        assert p["exp"].default == "exact"
    assert params(rigid.angular_acceleration) == ["torque", "omega", "q", "inv_inertia"]
    assert params(rigid.world_inverse_inertia) == ["q", "inv_inertia"]
    assert params(rigid.angular_momentum) == ["q", "omega", "inv_inertia"]
    assert params(rigid.energy) == ["q", "omega", "inv_inertia"]
    p = inspect.signature(rigid.step).parameters
    contract = ["q", "omega", "inv_inertia", "dt", "method", "torque"]
    assert list(p)[: len(contract)] == contract
    assert p["torque"].default is None
    # added after the contract: keyword-only, with the contract's behaviour as default
    assert list(p)[len(contract) :] == ["t"]
    assert p["t"].kind is inspect.Parameter.KEYWORD_ONLY
    assert p["t"].default == 0.0
    p = inspect.signature(rigid.simulate).parameters
    contract = ["q", "omega", "inv_inertia", "dt", "steps", "method", "torque", "every"]
    assert list(p)[: len(contract)] == contract
    assert p["torque"].default is None
    assert p["every"].default == 1
    # added after the contract: keyword-only, with the contract's behaviour as default
    assert list(p)[len(contract) :] == ["on_divergence"]
    assert p["on_divergence"].kind is inspect.Parameter.KEYWORD_ONLY
    assert p["on_divergence"].default == "warn"
    assert params(exact.torque_free) == ["q0", "omega0", "inv_inertia", "t"]
    assert params(exact.body_period) == ["q0", "omega0", "inv_inertia"]
    p = inspect.signature(transform.Transform).parameters
    assert list(p) == ["translation", "rotation", "scale"]
    assert p["scale"].default == 1.0
    assert list(inspect.signature(transform.DynamicTransform).parameters) == [
        "transform",
        "velocity",
        "acceleration",
        "angular_velocity",
        "angular_acceleration",
    ]
    H = hierarchy.Hierarchy
    assert params(H.add)[1:] == ["local", "parent"]
    assert inspect.signature(H.add).parameters["parent"].default is None
    assert params(H.set_global)[1:] == ["node", "dynamic_transform"]
    assert params(H.local_acceleration)[1:] == ["node", "force", "mass"]
    p = inspect.signature(H.apply_impulse).parameters
    assert list(p)[1:] == ["node", "impulse", "mass", "isolate_children"]
    assert p["isolate_children"].default is False
    assert params(H.step)[1] == "dt"


def test_methods_lists_every_design_method() -> None:
    design = (
        "explicit jolt naive_rotation jolt_rotation modified_jolt modified_jolt_cayley "
        "momentum_first implicit magnus splitting midpoint rk4 exact none"
    ).split()
    assert isinstance(rigid.METHODS, tuple)
    assert set(design) <= set(rigid.METHODS)
    assert all(isinstance(m, str) for m in rigid.METHODS)


# ======================================================================================
# rotation: conventions


def test_hamilton_product_and_scalar_first() -> None:
    i, j, k = np.eye(4)[1], np.eye(4)[2], np.eye(4)[3]
    np.testing.assert_array_equal(rotation.quat_multiply(i, j), k)
    np.testing.assert_array_equal(rotation.quat_multiply(j, i), -k)
    np.testing.assert_array_equal(rotation.quat_multiply(i, i), -np.eye(4)[0])
    # scalar first: a quarter turn about z is (cos 45°, 0, 0, sin 45°) and takes x to y
    q = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])
    np.testing.assert_allclose(rotation.quat_rotate(q, [1.0, 0.0, 0.0]), [0, 1, 0], atol=EXACT64)


def test_quat_multiply_applies_q_first(gen) -> None:
    p, q = _random_quats(gen, 50), _random_quats(gen, 50)
    v = gen.standard_normal((50, 3))
    pq = rotation.quat_multiply(p, q)
    _same_rotation(pq, _wxyz(_scipy(p) * _scipy(q)), EXACT64)
    np.testing.assert_allclose(
        rotation.quat_rotate(pq, v), _scipy(p).apply(_scipy(q).apply(v)), atol=EXACT64 * 10
    )


def test_rotation_functions_agree_with_scipy(gen) -> None:
    q = _random_quats(gen, 200)
    r = _scipy(q)
    v = gen.standard_normal((200, 3))
    phi = r.as_rotvec()
    M = r.as_matrix()
    tol = 10 * EXACT64
    np.testing.assert_allclose(rotation.quat_rotate(q, v), r.apply(v), atol=tol)
    np.testing.assert_allclose(rotation.quat_to_matrix(q), M, atol=tol)
    _same_rotation(rotation.matrix_to_quat(M), q, tol)
    assert np.all(rotation.matrix_to_quat(M)[..., 0] >= 0)
    _same_rotation(rotation.rotvec_to_quat(phi), q, tol)
    np.testing.assert_allclose(rotation.quat_to_rotvec(q), phi, atol=tol)
    np.testing.assert_allclose(rotation.rotvec_to_matrix(phi), M, atol=tol)
    np.testing.assert_allclose(rotation.matrix_to_rotvec(M), phi, atol=1e-12)
    np.testing.assert_allclose(
        rotation.quat_conjugate(q),
        _wxyz(r.inv()) * np.sign(q[:, :1] * _wxyz(r.inv())[:, :1]),
        atol=tol,
    )
    np.testing.assert_allclose(
        rotation.quat_exp(phi / 2), _wxyz(r) * np.sign(_wxyz(r)[:, :1]), atol=tol
    )
    np.testing.assert_allclose(rotation.quat_log(q), phi / 2, atol=tol)
    assert rotation.quat_to_rotvec(np.array([1.0, 0, 0, 0])).shape == (3,)


def test_rotvec_maps_to_exp_half(gen) -> None:
    phi = gen.standard_normal((20, 3))
    theta = np.linalg.norm(phi, axis=-1, keepdims=True)
    expect = np.concatenate([np.cos(theta / 2), np.sin(theta / 2) * phi / theta], axis=-1)
    np.testing.assert_allclose(rotation.rotvec_to_quat(phi), expect, atol=EXACT64)
    np.testing.assert_allclose(rotation.quat_exp(phi / 2), expect, atol=EXACT64)


def test_skew_unskew(gen) -> None:
    a, b = gen.standard_normal((2, 30, 3))
    W = rotation.skew(a)
    assert W.shape == (30, 3, 3)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", W, b), np.cross(a, b), atol=EXACT64)
    np.testing.assert_allclose(rotation.unskew(W), a, atol=0)


def test_quat_normalize(gen) -> None:
    q = gen.standard_normal((40, 4)) * 3.0
    out = rotation.quat_normalize(q)
    np.testing.assert_allclose(out, q / np.linalg.norm(q, axis=-1, keepdims=True), atol=EXACT64)


def test_quat_exp_approx_error_small_and_axis_exact(gen) -> None:
    x = gen.standard_normal((50, 3))
    x *= (np.deg2rad(10) / 2) / np.linalg.norm(x, axis=-1, keepdims=True)
    approx = rotation.quat_exp_approx(x)
    assert np.all(np.isfinite(approx))
    np.testing.assert_allclose(np.linalg.norm(approx, axis=-1), 1.0, atol=EXACT64)
    exact_q = _wxyz(Rotation.from_rotvec(2 * x))
    # 10° per step: relative angle error about |phi|^4/480 = 1.9e-6 (docstring table)
    ang = (_scipy(approx) * _scipy(exact_q).inv()).magnitude()
    assert np.all(ang <= 2.5e-6 * np.deg2rad(10))
    # axis exact: the vector part is parallel to x
    np.testing.assert_allclose(np.cross(approx[:, 1:], x), 0.0, atol=EXACT64)


def test_cayley_rotate_length_and_angle_law(gen) -> None:
    v = gen.standard_normal((100, 3))
    phi = gen.standard_normal((100, 3)) * 2
    out = rotation.cayley_rotate(v, phi)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(v, axis=-1), rtol=1e-14)
    theta = np.linalg.norm(phi, axis=-1, keepdims=True)
    law = 2 * np.arctan(theta / 2) * phi / theta
    np.testing.assert_allclose(out, Rotation.from_rotvec(law).apply(v), atol=1e-13)


def test_rotation_angle_double_cover(gen) -> None:
    p, q = _random_quats(gen, 100), _random_quats(gen, 100)
    expect = (_scipy(p).inv() * _scipy(q)).magnitude()
    np.testing.assert_allclose(rotation.rotation_angle(p, q), expect, atol=1e-12)
    np.testing.assert_allclose(rotation.rotation_angle(p, -p), 0.0, atol=1e-7)
    assert np.ndim(rotation.rotation_angle(p[0], q[0])) == 0


def test_random_quat_and_scipy_interop() -> None:
    q = rotation.random_quat((5, 7), np.random.default_rng(1))
    assert q.shape == (5, 7, 4)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=EXACT64)
    np.testing.assert_array_equal(q, rotation.random_quat((5, 7), np.random.default_rng(1)))
    flat = q.reshape(-1, 4)
    r = rotation.to_scipy(flat)
    assert isinstance(r, Rotation)
    np.testing.assert_allclose(r.as_quat(), flat[:, [1, 2, 3, 0]], atol=EXACT64)
    np.testing.assert_allclose(rotation.from_scipy(r), flat, atol=EXACT64)
    single = Rotation.from_rotvec([0.1, 0.2, 0.3])
    np.testing.assert_allclose(rotation.from_scipy(single), _wxyz(single), atol=EXACT64)
    # uniform on SO(3): E[w^2] = 1/4 for uniform unit quaternions
    big = rotation.random_quat(20000, 3)
    assert abs(np.mean(big[:, 0] ** 2) - 0.25) < 0.01


def test_broadcasting_over_leading_axes(gen) -> None:
    p = _random_quats(gen, 6).reshape(2, 3, 1, 4)
    q = _random_quats(gen, 5).reshape(5, 4)
    pq = rotation.quat_multiply(p, q)
    assert pq.shape == (2, 3, 5, 4)
    expect = _wxyz(
        _scipy(np.broadcast_to(p, (2, 3, 5, 4)).reshape(-1, 4))
        * _scipy(np.broadcast_to(q, (2, 3, 5, 4)).reshape(-1, 4))
    )
    _same_rotation(pq.reshape(-1, 4), expect, EXACT64)
    v = gen.standard_normal((4, 1, 3))
    assert rotation.quat_rotate(q, v).shape == (4, 5, 3)
    assert rotation.cayley_rotate(v, gen.standard_normal((5, 3))).shape == (4, 5, 3)
    assert rotation.rotation_angle(p, q).shape == (2, 3, 5)


def test_small_and_half_turn_accuracy() -> None:
    for angle in (1e-9, np.pi - 1e-9):
        phi = np.array([angle, 0.0, 0.0])
        q = rotation.rotvec_to_quat(phi)
        np.testing.assert_allclose(q, [np.cos(angle / 2), np.sin(angle / 2), 0, 0], atol=1e-16)
        np.testing.assert_allclose(rotation.quat_to_rotvec(q), phi, rtol=1e-12)
        M = Rotation.from_rotvec(phi).as_matrix()
        np.testing.assert_allclose(rotation.matrix_to_rotvec(M), phi, rtol=1e-7)


_VEC_FUNCS = ("rotvec_to_quat", "rotvec_to_matrix", "quat_exp", "quat_exp_approx", "skew")
_QUAT_FUNCS = ("quat_conjugate", "quat_normalize", "quat_to_matrix", "quat_to_rotvec", "quat_log")


@pytest.mark.parametrize("name", _VEC_FUNCS + _QUAT_FUNCS + ("matrix_to_quat", "unskew"))
def test_dtype_follows_input(name) -> None:
    f = getattr(rotation, name)
    if name in _VEC_FUNCS:
        x = np.array([[0.1, 0.2, 0.3]])
    elif name in _QUAT_FUNCS:
        x = np.array([[0.9, 0.1, 0.2, 0.3]])
    else:
        x = Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix()[None]
    out64 = np.asarray(f(x))
    out32 = np.asarray(f(x.astype(np.float32)))
    assert out64.dtype == np.float64
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, out64, atol=EXACT32)
    if name in _VEC_FUNCS:
        xi = np.array([[1, 2, 3]])
    elif name in _QUAT_FUNCS:
        xi = np.array([[1, 0, 0, 0]])
    else:
        xi = np.eye(3, dtype=np.int64)[None]
    assert np.asarray(f(xi)).dtype == np.float64


def test_binary_dtype_follows_input() -> None:
    q32 = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    v32 = np.array([1.0, 2.0, 3.0], np.float32)
    assert rotation.quat_multiply(q32, q32).dtype == np.float32
    assert rotation.quat_rotate(q32, v32).dtype == np.float32
    assert rotation.cayley_rotate(v32, v32).dtype == np.float32
    assert rotation.quat_multiply([1, 0, 0, 0], [1, 0, 0, 0]).dtype == np.float64
    assert rotation.quat_rotate([1, 0, 0, 0], [1, 2, 3]).dtype == np.float64


_BAD: dict[str, Any] = {
    "a string": "abcd",
    "None": None,
    "wrong length": [1.0, 2.0],
    "object array": np.array([object()] * 4, dtype=object),
    "0-d": np.float64(1.0),
    "NaN": [np.nan, 0.0, 0.0, 0.0],
    "complex": np.array([1j, 0, 0, 0]),
    "ragged": [[1.0, 0.0, 0.0, 0.0], [1.0]],
}


@pytest.mark.parametrize("kind", sorted(_BAD))
@pytest.mark.parametrize(
    ("name", "arg", "width"),
    [
        ("quat_conjugate", "q", 4),
        ("quat_normalize", "q", 4),
        ("quat_to_matrix", "q", 4),
        ("quat_to_rotvec", "q", 4),
        ("quat_log", "q", 4),
        ("rotvec_to_quat", "phi", 3),
        ("rotvec_to_matrix", "phi", 3),
        ("quat_exp", "x", 3),
        ("quat_exp_approx", "x", 3),
        ("skew", "v", 3),
    ],
)
def test_unary_bad_input_names_argument(name, arg, width, kind) -> None:
    bad = _BAD[kind]
    if kind == "NaN":
        bad = bad[:width]
    _raises_naming(getattr(rotation, name), arg, bad)


@pytest.mark.parametrize("kind", ["a string", "None", "wrong length", "NaN", "object array"])
def test_binary_bad_input_names_argument(kind) -> None:
    bad = _BAD[kind]
    good4, good3 = [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0]
    bad3 = bad[:3] if kind == "NaN" else bad
    _raises_naming(rotation.quat_multiply, "q", good4, bad)
    _raises_naming(rotation.quat_multiply, "p", bad, good4)
    _raises_naming(rotation.quat_rotate, "q", bad, good3)
    _raises_naming(rotation.quat_rotate, "v", good4, bad3)
    _raises_naming(rotation.cayley_rotate, "phi", good3, bad3)
    _raises_naming(rotation.rotation_angle, "q", good4, bad)


def test_rotation_specific_bad_input() -> None:
    _raises_naming(rotation.quat_normalize, "q", [0.0, 0.0, 0.0, 0.0])
    _raises_naming(rotation.quat_rotate, "q", [0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    _raises_naming(rotation.quat_to_matrix, "q", [0.0, 0.0, 0.0, 0.0])
    _raises_naming(rotation.matrix_to_quat, "R", np.diag([1.0, 1.0, -1.0]))
    _raises_naming(rotation.matrix_to_quat, "R", 2 * np.eye(3))
    _raises_naming(rotation.matrix_to_rotvec, "R", np.ones((3, 2)))
    _raises_naming(rotation.unskew, "W", np.ones((3, 2)))
    _raises_naming(rotation.quat_multiply, "batch", np.ones((2, 4)), np.ones((3, 4)))
    _raises_naming(rotation.random_quat, "shape", -1)
    _raises_naming(rotation.from_scipy, "rotation", [1.0, 0.0, 0.0, 0.0])
    _raises_naming(rotation.to_scipy, "q", [0.0, 0.0, 0.0, 0.0])


def test_empty_batches() -> None:
    assert rotation.quat_multiply(np.empty((0, 4)), np.empty((0, 4))).shape == (0, 4)
    assert rotation.quat_rotate(np.empty((0, 4)), [1.0, 0.0, 0.0]).shape == (0, 3)
    assert rotation.rotvec_to_quat(np.empty((0, 3))).shape == (0, 4)
    assert rotation.quat_to_matrix(np.empty((0, 4))).shape == (0, 3, 3)


# ======================================================================================
# kinematics


def _qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product written out by hand (independent of tumble)."""
    pw, pv, qw, qv = p[0], p[1:], q[0], q[1:]
    return np.concatenate([[pw * qw - pv @ qv], pw * qv + qw * pv + np.cross(pv, qv)])


def _reference_rotation(q0, omega, alpha, dt) -> np.ndarray:
    """solve_ivp of ``dq/dt = 1/2 (omega + alpha t) ⊗ q`` (world frame)."""

    def rhs(t, q):
        return 0.5 * _qmul(np.concatenate([[0.0], omega + alpha * t]), q)

    sol = solve_ivp(rhs, (0.0, dt), q0, method="DOP853", rtol=1e-13, atol=1e-15)
    return sol.y[:, -1]


def test_translate_closed_form(gen) -> None:
    x, v, a = gen.standard_normal((3, 5, 2))
    x1, v1 = kinematics.translate(x, v, a, 0.3)
    np.testing.assert_allclose(v1, v + 0.3 * a, atol=EXACT64)
    np.testing.assert_allclose(x1, x + 0.3 * v + 0.045 * a, atol=EXACT64)
    x1, v1 = kinematics.translate(x, v, a, -0.3)
    np.testing.assert_allclose(x1, x - 0.3 * v + 0.045 * a, atol=EXACT64)
    assert (
        kinematics.translate(x.astype(np.float32), v.astype(np.float32), a.astype(np.float32), 0.1)[
            0
        ].dtype
        == np.float32
    )


def test_magnus_terms(gen) -> None:
    w, al = gen.standard_normal((2, 10, 3))
    dt = 0.1
    o1 = w * dt + al * dt**2 / 2
    np.testing.assert_allclose(kinematics.magnus(w, al, dt, order=1), o1, atol=EXACT64)
    o2 = o1 + np.cross(al, w) * dt**3 / 12
    np.testing.assert_allclose(kinematics.magnus(w, al, dt, order=2), o2, atol=EXACT64)
    np.testing.assert_allclose(kinematics.magnus(w, al, dt), o2, atol=EXACT64)


def test_rotate_orders_against_ode(gen) -> None:
    q0 = _random_quats(gen, 1)[0]
    w, al = np.array([1.0, -0.5, 0.7]), np.array([0.6, 0.9, -1.2])
    errors = {}
    for order in (1, 2, 4):
        errs = []
        for dt in (0.2, 0.1):
            ref = _reference_rotation(q0, w, al, dt)
            q1, w1 = kinematics.rotate(q0, w, al, dt, order=order, exp="exact")
            np.testing.assert_allclose(w1, w + al * dt, atol=EXACT64)
            errs.append(float(rotation.rotation_angle(q1, ref)))
        errors[order] = errs
    # local errors O(dt^3), O(dt^5), O(dt^6): halving dt divides them by ~8, ~32, ~64
    for order, expect in ((1, 3), (2, 5), (4, 6)):
        assert np.log2(errors[order][0] / errors[order][1]) > expect - 0.6, errors
    assert errors[4][1] < errors[2][1] < errors[1][1]


def test_rotate_is_world_frame(gen) -> None:
    q = _random_quats(gen, 8)
    w = gen.standard_normal((8, 3))
    q1, _ = kinematics.rotate(q, w, np.zeros(3), 0.2)
    _same_rotation(q1, _wxyz(Rotation.from_rotvec(0.2 * w) * _scipy(q)), EXACT64)
    R1, _ = kinematics.rotate_matrix(_scipy(q).as_matrix(), w, np.zeros(3), 0.2)
    np.testing.assert_allclose(
        R1, (Rotation.from_rotvec(0.2 * w) * _scipy(q)).as_matrix(), atol=1e-13
    )


@pytest.mark.parametrize("how", ["exact", "approx", "auto"])
def test_rotate_exp_choices(gen, how) -> None:
    q = _random_quats(gen, 20)
    w = gen.standard_normal((20, 3)) * 0.5
    al = gen.standard_normal((20, 3))
    q1, _w1 = kinematics.rotate(q, w, al, 0.1, order=2, exp=how)
    ref = Rotation.from_rotvec(kinematics.magnus(w, al, 0.1, order=2)) * _scipy(q)
    # approx: angle error |phi|^5/480 per step; |phi| <~ 0.2 here gives < 1e-6
    tol = 1e-12 if how == "exact" else 1e-6
    assert np.all((_scipy(q1) * ref.inv()).magnitude() < tol)
    np.testing.assert_allclose(np.linalg.norm(q1, axis=-1), 1.0, atol=EXACT64)
    R1, _ = kinematics.rotate_matrix(_scipy(q).as_matrix(), w, al, 0.1, order=2, exp=how)
    np.testing.assert_allclose(R1, _scipy(q1).as_matrix(), atol=1e-12)


def test_kinematics_dtype_and_backward_step(gen) -> None:
    q = _random_quats(gen, 4).astype(np.float32)
    w = gen.standard_normal((4, 3)).astype(np.float32)
    q1, w1 = kinematics.rotate(q, w, np.zeros((4, 3), np.float32), 0.1)
    assert q1.dtype == np.float32
    assert w1.dtype == np.float32
    assert kinematics.magnus(w, w, 0.1).dtype == np.float32
    q64, w64 = q.astype(np.float64), w.astype(np.float64)
    al = np.ones(3)
    qa, wa = kinematics.rotate(q64, w64, al, 0.1)
    qb, wb = kinematics.rotate(qa, wa, al, -0.1)
    _same_rotation(qb, q64, 1e-12)
    np.testing.assert_allclose(wb, w64, atol=EXACT64)


def test_kinematics_bad_input() -> None:
    q, w = [1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3]
    _raises_naming(kinematics.magnus, "order", w, w, 0.1, order=3)
    _raises_naming(kinematics.rotate, "exp", q, w, w, 0.1, exp="fast")
    _raises_naming(kinematics.rotate, "dt", q, w, w, "0.1")
    _raises_naming(kinematics.rotate, "dt", q, w, w, None)
    _raises_naming(kinematics.rotate, "dt", q, w, w, np.nan)
    _raises_naming(kinematics.rotate, "q", [0.0, 0.0, 0.0, 0.0], w, w, 0.1)
    _raises_naming(kinematics.rotate, "omega", q, [np.nan, 0.0, 0.0], w, 0.1)
    _raises_naming(kinematics.rotate, "alpha", q, w, [1.0, 2.0], 0.1)
    _raises_naming(kinematics.rotate_matrix, "R", np.eye(4), w, w, 0.1)
    _raises_naming(kinematics.translate, "v", [0.0, 0.0], [1.0, 2.0, 3.0], [0.0, 0.0], 0.1)
    _raises_naming(kinematics.translate, "x", "ab", [1.0, 2.0], [0.0, 0.0], 0.1)


# ======================================================================================
# rigid


def _world_J(q: np.ndarray, J: np.ndarray) -> np.ndarray:
    R = _scipy(q).as_matrix()
    return R @ np.diag(J) @ R.T


def _free_reference(q0, omega0, J, t_end) -> tuple[np.ndarray, np.ndarray]:
    """solve_ivp of the torque-free body: world ``L`` constant, ``omega = R J Rᵀ L``."""
    L = np.linalg.solve(_world_J(q0, J), omega0)

    def rhs(t, q):
        qn = q / np.linalg.norm(q)
        w = _world_J(qn, J) @ L
        return 0.5 * _qmul(np.concatenate([[0.0], w]), q)

    sol = solve_ivp(rhs, (0.0, t_end), q0, method="DOP853", rtol=1e-12, atol=1e-14)
    q = sol.y[:, -1] / np.linalg.norm(sol.y[:, -1])
    return q, _world_J(q, J) @ L


def test_dynamics_closed_forms(gen) -> None:
    q = _random_quats(gen, 10)
    w = gen.standard_normal((10, 3))
    tau = gen.standard_normal((10, 3))
    J = gen.uniform(0.5, 2.0, (10, 3))
    Jw = np.stack([_world_J(q[i], J[i]) for i in range(10)])
    Iw = np.linalg.inv(Jw)
    L = np.einsum("nij,nj->ni", Iw, w)
    np.testing.assert_allclose(rigid.world_inverse_inertia(q, J), Jw, atol=EXACT64)
    np.testing.assert_allclose(rigid.angular_momentum(q, w, J), L, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rigid.energy(q, w, J), 0.5 * np.sum(w * L, -1), rtol=1e-12)
    alpha = np.einsum("nij,nj->ni", Jw, tau - np.cross(w, L))
    np.testing.assert_allclose(
        rigid.angular_acceleration(tau, w, q, J), alpha, rtol=1e-11, atol=1e-11
    )
    # alpha is dω/dt of the free motion: finite difference of the reference solution
    h = 1e-4
    wp = _free_reference(q[0], w[0], J[0], h)[1]
    wm = _free_reference(q[0], w[0], J[0], -h)[1]
    np.testing.assert_allclose(
        rigid.angular_acceleration(np.zeros(3), w[0], q[0], J[0]), (wp - wm) / (2 * h), atol=1e-6
    )


def test_principal_axes(gen) -> None:
    R = Rotation.from_rotvec(gen.standard_normal(3)).as_matrix()
    moments = np.array([1.0, 2.0, 4.0])
    inertia = R @ np.diag(moments) @ R.T
    J, q = rigid.principal_axes(inertia)
    Rq = _scipy(q).as_matrix()
    np.testing.assert_allclose(Rq @ np.diag(1.0 / J) @ Rq.T, inertia, atol=1e-12)
    np.testing.assert_allclose(np.sort(1.0 / J), moments, rtol=1e-12)
    assert np.linalg.det(Rq) > 0
    _raises_naming(rigid.principal_axes, "I", np.array([[1.0, 2.0, 0], [0, 1, 0], [0, 0, 1]]))
    _raises_naming(rigid.principal_axes, "I", -np.eye(3))


@pytest.mark.parametrize("method", EVERY_METHOD)
def test_step_every_method(gen, method) -> None:
    q = _random_quats(gen, 3)
    w = gen.standard_normal((3, 3))
    J = np.array([1.0, 0.7, 0.4])
    q1, w1 = rigid.step(q, w, J, 0.01, method)
    assert q1.shape == (3, 4)
    assert w1.shape == (3, 3)
    assert np.all(np.isfinite(q1))
    assert np.all(np.isfinite(w1))
    np.testing.assert_allclose(np.linalg.norm(q1, axis=-1), 1.0, atol=1e-12)
    if rigid.ORDERS[method] > 0:
        # every consistent method is at least first order: one small step is O(dt^2) off
        for i in range(3):
            ref_q, ref_w = _free_reference(q[i], w[i], J, 0.01)
            assert float(rotation.rotation_angle(q1[i], ref_q)) < 1e-3
            np.testing.assert_allclose(w1[i], ref_w, atol=1e-3)
    q32, w32 = rigid.step(
        q.astype(np.float32), w.astype(np.float32), J.astype(np.float32), 0.01, method
    )
    assert q32.dtype == np.float32
    assert w32.dtype == np.float32
    if method != "exact":
        tq, tw = rigid.step(q, w, J, 0.01, method, torque=np.zeros(3))
        assert np.all(np.isfinite(tq))
        assert np.all(np.isfinite(tw))


@pytest.mark.parametrize("method", [m for m in EVERY_METHOD if m != "exact"])
def test_spherical_body_under_torque(method) -> None:
    """Spherical body, constant torque: ``omega(t) = omega0 + J tau t`` exactly."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    w = np.array([0.3, -0.2, 0.5])
    tau = np.array([0.1, 0.2, -0.3])
    J = np.full(3, 2.0)
    traj = rigid.simulate(q, w, J, 0.05, 20, method, torque=tau)
    np.testing.assert_allclose(traj.omega[-1], w + 2.0 * tau * 1.0, atol=1e-12)
    np.testing.assert_allclose(traj.L[-1], w / 2.0 + tau * 1.0, atol=1e-12)


def test_simulate_trajectory_layout(gen) -> None:
    q = _random_quats(gen, 6).reshape(2, 3, 4)
    w = gen.standard_normal((2, 3, 3))
    J = np.array([1.0, 0.6, 0.3])
    traj = rigid.simulate(q, w, J, 0.01, 10, "rk4", every=3)
    assert isinstance(traj, rigid.Trajectory)
    n_rec = 5  # steps 0, 3, 6, 9 and the final step 10
    assert traj.t.shape == (n_rec,)
    np.testing.assert_allclose(traj.t, [0.0, 0.03, 0.06, 0.09, 0.10], atol=EXACT64)
    assert traj.q.shape == (n_rec, 2, 3, 4)
    for name in ("omega", "L", "L_body"):
        assert getattr(traj, name).shape == (n_rec, 2, 3, 3), name
    assert traj.energy.shape == (n_rec, 2, 3)
    # the initial state first
    _same_rotation(traj.q[0], q, EXACT64)
    np.testing.assert_allclose(traj.omega[0], w, atol=1e-13)
    # the final state last: rk4 over 0.1 is within 1e-9 of the reference
    for i, j in itertools.product(range(2), range(3)):
        ref_q, ref_w = _free_reference(q[i, j], w[i, j], J, 0.1)
        assert float(rotation.rotation_angle(traj.q[-1, i, j], ref_q)) < 1e-8
        np.testing.assert_allclose(traj.omega[-1, i, j], ref_w, atol=1e-8)
    # L world, L body and energy are the textbook quantities of each record
    R = _scipy(traj.q.reshape(-1, 4)).as_matrix()
    Iw = R @ np.diag(1.0 / J) @ np.swapaxes(R, -1, -2)
    L = np.einsum("nij,nj->ni", Iw, traj.omega.reshape(-1, 3))
    np.testing.assert_allclose(traj.L.reshape(-1, 3), L, atol=1e-12)
    np.testing.assert_allclose(
        traj.L_body.reshape(-1, 3), np.einsum("nji,nj->ni", R, L), atol=1e-12
    )
    np.testing.assert_allclose(
        traj.energy.reshape(-1), 0.5 * np.sum(L * traj.omega.reshape(-1, 3), -1), atol=1e-12
    )
    one = rigid.simulate(q[0, 0], w[0, 0], J, 0.01, 10, "rk4")
    assert one.q.shape == (11, 4)
    assert one.energy.shape == (11,)
    zero = rigid.simulate(q[0, 0], w[0, 0], J, 0.01, 0, "rk4")
    assert zero.q.shape == (1, 4)


def test_simulate_conservation_and_dtype(gen) -> None:
    q = _random_quats(gen, 4)
    w = gen.standard_normal((4, 3))
    J = np.array([1.0, 0.6, 0.3])
    traj = rigid.simulate(q, w, J, 0.05, 200, "momentum_first")
    np.testing.assert_allclose(traj.L[-1], traj.L[0], rtol=1e-12, atol=1e-12)
    traj = rigid.simulate(q, w, J, 0.05, 200, "midpoint")
    np.testing.assert_allclose(traj.energy[-1], traj.energy[0], rtol=1e-10)
    t32 = rigid.simulate(
        q.astype(np.float32), w.astype(np.float32), J.astype(np.float32), 0.05, 5, "jolt"
    )
    for name in ("t", "q", "omega", "L", "L_body", "energy"):
        assert getattr(t32, name).dtype == np.float32, name
    t_int = rigid.simulate([1, 0, 0, 0], [1, 2, 3], [1, 2, 3], 0.01, 2, "jolt")
    assert t_int.q.dtype == np.float64


def test_simulate_exact_matches_ode(gen) -> None:
    q = _random_quats(gen, 1)[0]
    w = np.array([0.4, 1.1, -0.7])
    J = np.array([1.3, 0.8, 0.45])
    traj = rigid.simulate(q, w, J, 0.25, 8, "exact", every=4)
    ref_q, ref_w = _free_reference(q, w, J, 2.0)
    assert float(rotation.rotation_angle(traj.q[-1], ref_q)) < ODE
    np.testing.assert_allclose(traj.omega[-1], ref_w, atol=ODE)


def test_rigid_bad_input() -> None:
    q, w, J = [1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0]
    _raises_naming(rigid.step, "method", q, w, J, 0.1, "euler")
    _raises_naming(rigid.step, "dt", q, w, J, "0.1", "jolt")
    _raises_naming(rigid.step, "dt", q, w, J, np.inf, "jolt")
    _raises_naming(rigid.step, "q", [0.0, 0.0, 0.0, 0.0], w, J, 0.1, "jolt")
    _raises_naming(rigid.step, "omega", q, [1.0, 2.0], J, 0.1, "jolt")
    _raises_naming(rigid.step, "inv_inertia", q, w, [1.0, -2.0, 3.0], 0.1, "jolt")
    _raises_naming(rigid.step, "torque", q, w, J, 0.1, "exact", torque=[1.0, 0.0, 0.0])
    _raises_naming(rigid.step, "torque", q, w, J, 0.1, "jolt", torque=[1.0, 0.0])
    _raises_naming(rigid.simulate, "steps", q, w, J, 0.1, -1, "jolt")
    _raises_naming(rigid.simulate, "steps", q, w, J, 0.1, 2.5, "jolt")
    _raises_naming(rigid.simulate, "every", q, w, J, 0.1, 10, "jolt", every=0)
    _raises_naming(rigid.simulate, "method", q, w, J, 0.1, 10, None)
    _raises_naming(rigid.energy, "q", "abcd", w, J)
    _raises_naming(rigid.angular_momentum, "omega", q, np.array([object()] * 3), J)
    _raises_naming(rigid.world_inverse_inertia, "inv_inertia", q, [np.nan, 1.0, 1.0])
    _raises_naming(rigid.angular_acceleration, "torque", None, w, q, J)


# ======================================================================================
# exact


def test_torque_free_against_ode(gen) -> None:
    for _ in range(3):
        q = _random_quats(gen, 1)[0]
        w = gen.standard_normal(3)
        J = np.sort(gen.uniform(0.3, 2.0, 3))[::-1].copy()
        times = np.array([0.7, 2.3])
        qt, wt = exact.torque_free(q, w, J, times)
        assert qt.shape == (2, 4)
        assert wt.shape == (2, 3)
        for k, tk in enumerate(times):
            ref_q, ref_w = _free_reference(q, w, J, tk)
            assert float(rotation.rotation_angle(qt[k], ref_q)) < ODE
            np.testing.assert_allclose(wt[k], ref_w, atol=ODE)


def test_torque_free_shapes_and_symmetric_top(gen) -> None:
    q = _random_quats(gen, 4)
    w = gen.standard_normal((4, 3))
    J = np.array([1.0, 1.0, 0.5])
    t = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    qt, wt = exact.torque_free(q, w, J, t)
    assert qt.shape == (2, 3, 4, 4)
    assert wt.shape == (2, 3, 4, 3)
    _same_rotation(qt[0, 0], q, EXACT64)
    ref_q, _ref_w = _free_reference(q[2], w[2], J, t[1, 2])
    assert float(rotation.rotation_angle(qt[1, 2, 2], ref_q)) < ODE
    q0, w0 = exact.torque_free(q[0], w[0], J, 0.5)
    assert q0.shape == (4,)
    assert w0.shape == (3,)


def test_body_period(gen) -> None:
    q = _random_quats(gen, 1)[0]
    J = np.array([1.4, 0.9, 0.5])
    w = np.array([0.9, 0.2, 0.4])
    T = float(exact.body_period(q, w, J))
    assert np.isfinite(T)
    assert T > 0
    L = np.linalg.solve(_world_J(q, J), w)
    Lb0 = _scipy(q).inv().apply(L)
    # Euler's equations for the body momentum: dLb/dt = Lb × (J Lb)
    sol = solve_ivp(
        lambda t, y: np.cross(y, J * y), (0, T), Lb0, method="DOP853", rtol=1e-12, atol=1e-14
    )
    np.testing.assert_allclose(sol.y[:, -1], Lb0, atol=1e-9)
    half = solve_ivp(
        lambda t, y: np.cross(y, J * y), (0, T / 2), Lb0, method="DOP853", rtol=1e-12, atol=1e-14
    )
    assert np.linalg.norm(half.y[:, -1] - Lb0) > 1e-3


def test_exact_bad_input() -> None:
    q, w, J = [1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0]
    _raises_naming(exact.torque_free, "t", q, w, J, "soon")
    _raises_naming(exact.torque_free, "t", q, w, J, np.nan)
    _raises_naming(exact.torque_free, "q0", [0.0, 0.0, 0.0, 0.0], w, J, 1.0)
    _raises_naming(exact.torque_free, "omega0", q, [1.0, 2.0], J, 1.0)
    _raises_naming(exact.torque_free, "inv_inertia", q, w, [-1.0, 2.0, 3.0], 1.0)
    _raises_naming(exact.body_period, "q0", None, w, J)


# ======================================================================================
# transform: finite differences of hand-built augmented matrices are the oracle


def _random_skew(gen: np.random.Generator, n: int) -> np.ndarray:
    X = gen.standard_normal((n, n))
    return 0.5 * (X - X.T)


def _random_rotation(gen: np.random.Generator, n: int) -> np.ndarray:
    return expm(_random_skew(gen, n) * 2.0)


class _Motion:
    """``T(t) = T0 + v t + a t²/2``, ``R(t) = expm(t W + t² A / 2) R0``, scale ``S``.

    At ``t = 0``: velocity ``v``, acceleration ``a``, angular velocity ``W`` and angular
    acceleration ``A`` exactly (``R' Rᵀ = W``, ``R'' Rᵀ = A + W²``).
    """

    def __init__(self, gen: np.random.Generator, n: int) -> None:
        self.T0, self.v, self.a = gen.standard_normal((3, n))
        self.R0 = _random_rotation(gen, n)
        self.W, self.A = _random_skew(gen, n), _random_skew(gen, n)
        self.S = float(gen.uniform(0.5, 2.0))

    def matrix(self, t: float) -> np.ndarray:
        n = self.T0.shape[0]
        M = np.eye(n + 1)
        M[:n, :n] = expm(t * self.W + t * t * self.A / 2) @ self.R0 * self.S
        M[:n, n] = self.T0 + self.v * t + self.a * t * t / 2
        return M

    def dynamic(self) -> transform.DynamicTransform:
        return transform.DynamicTransform(
            transform.Transform(self.T0, self.R0, self.S), self.v, self.a, self.W, self.A
        )


def _derivatives(matrix, n: int, S: float) -> tuple[np.ndarray, ...]:
    """(T, R, v, a, omega, alpha) at t = 0 of a matrix-valued motion, 5-point stencils."""
    h = 1e-3
    Ms = [matrix(k * h) for k in (-2, -1, 0, 1, 2)]
    d1 = (Ms[0] - 8 * Ms[1] + 8 * Ms[3] - Ms[4]) / (12 * h)
    d2 = (-Ms[0] + 16 * Ms[1] - 30 * Ms[2] + 16 * Ms[3] - Ms[4]) / (12 * h * h)
    R = Ms[2][:n, :n] / S
    omega = d1[:n, :n] / S @ R.T
    alpha = d2[:n, :n] / S @ R.T - omega @ omega
    return Ms[2][:n, n], R, d1[:n, n], d2[:n, n], omega, alpha


def _components(d: transform.DynamicTransform) -> tuple[np.ndarray, ...]:
    return (
        d.transform.translation,
        d.transform.rotation,
        d.velocity,
        d.acceleration,
        d.angular_velocity,
        d.angular_acceleration,
    )


def _assert_dynamic(dyn, expected: tuple[np.ndarray, ...], tol: float) -> None:
    T, R, v, a, w, al = expected
    np.testing.assert_allclose(dyn.transform.translation, T, atol=EXACT64 * 100)
    np.testing.assert_allclose(dyn.transform.rotation, R, atol=EXACT64 * 100)
    for got, want in (
        (dyn.velocity, v),
        (dyn.acceleration, a),
        (dyn.angular_velocity, w),
        (dyn.angular_acceleration, al),
    ):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, atol=tol)


def test_transform_basics(gen) -> None:
    for n in (2, 3, 4):
        R = _random_rotation(gen, n)
        T = gen.standard_normal(n)
        A = transform.Transform(T, R, scale=1.5)
        np.testing.assert_array_equal(A.translation, T)
        np.testing.assert_allclose(A.rotation, R, atol=EXACT64)
        assert A.scale == 1.5
        np.testing.assert_allclose(A.linear, 1.5 * R, atol=EXACT64)
        np.testing.assert_allclose(A.normal_matrix(), np.linalg.inv(1.5 * R).T, atol=1e-12)
        M = A.as_matrix()
        assert M.shape == (n + 1, n + 1)
        x = gen.standard_normal((7, n))
        np.testing.assert_allclose(A(x), x @ (1.5 * R).T + T, atol=1e-12)
        np.testing.assert_allclose(M[:n, :n], 1.5 * R, atol=EXACT64)
        np.testing.assert_allclose(M[:n, n], T, atol=0)
        np.testing.assert_array_equal(M[n], np.eye(n + 1)[n])
        B = transform.Transform(gen.standard_normal(n), _random_rotation(gen, n), 0.7)
        # composition: left acts last
        np.testing.assert_allclose((A * B)(x), A(B(x)), atol=1e-12)
        np.testing.assert_allclose((A * B).as_matrix(), M @ B.as_matrix(), atol=1e-12)
        np.testing.assert_allclose(A.inverse().as_matrix(), np.linalg.inv(M), atol=1e-12)
        I = transform.Transform.identity(n)
        np.testing.assert_allclose(I.as_matrix(), np.eye(n + 1), atol=0)
        assert (
            transform.Transform(T.astype(np.float32), R.astype(np.float32)).linear.dtype
            == np.float32
        )


def test_transform_bad_input(gen) -> None:
    R = _random_rotation(gen, 3)
    _raises_naming(transform.Transform, "rotation", np.zeros(3), np.diag([1.0, 1.0, -1.0]))
    _raises_naming(transform.Transform, "rotation", np.zeros(3), 2 * np.eye(3))
    _raises_naming(transform.Transform, "rotation", np.zeros(3), "abc")
    _raises_naming(transform.Transform, "scale", np.zeros(3), R, 0.0)
    _raises_naming(transform.Transform, "scale", np.zeros(3), R, -1.0)
    _raises_naming(transform.Transform, "scale", np.zeros(3), R, "big")
    _raises_naming(transform.Transform, "translation", np.zeros(2), R)
    _raises_naming(transform.Transform, "translation", None, R)
    _raises_naming(transform.Transform.identity, "n", 0)
    A3 = transform.Transform.identity(3)
    A2 = transform.Transform.identity(2)
    with pytest.raises(tumble.InputError):
        A3 * A2
    _raises_naming(A3, "points", np.zeros((4, 2)))
    _raises_naming(transform.DynamicTransform, "transform", np.eye(4))
    _raises_naming(transform.DynamicTransform, "angular_velocity", A3, None, None, np.eye(3))
    _raises_naming(transform.DynamicTransform, "velocity", A3, [1.0, 2.0])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_dynamic_transform_against_finite_differences(gen, n) -> None:
    m2, m1 = _Motion(gen, n), _Motion(gen, n)
    D2, D1 = m2.dynamic(), m1.dynamic()
    for name in (
        "transform",
        "velocity",
        "acceleration",
        "angular_velocity",
        "angular_acceleration",
    ):
        assert hasattr(D1, name)
    np.testing.assert_allclose(D1.velocity, m1.v, atol=0)
    np.testing.assert_allclose(D1.angular_velocity, m1.W, atol=EXACT64)
    # composition: left acts last
    composed = _derivatives(lambda t: m2.matrix(t) @ m1.matrix(t), n, m2.S * m1.S)
    _assert_dynamic(D2 * D1, composed, FD * 10)
    # inverse
    inv = _derivatives(lambda t: np.linalg.inv(m2.matrix(t)), n, 1.0 / m2.S)
    _assert_dynamic(D2.inverse(), inv, FD * 10)
    # identity
    Id = transform.DynamicTransform.identity(n)
    _assert_dynamic(
        Id * D1,
        _components(D1),
        EXACT64 * 100,
    )


@pytest.mark.parametrize("n", [2, 3])
def test_dynamic_transform_deltas(gen, n) -> None:
    m2, m1 = _Motion(gen, n), _Motion(gen, n)
    D2, D1 = m2.dynamic(), m1.dynamic()
    dv, da = gen.standard_normal((2, n))
    dw, dal = _random_skew(gen, n), _random_skew(gen, n)
    base = D2 * D1

    def changed(v=0.0, a=0.0, w=0.0, al=0.0):
        return D2 * transform.DynamicTransform(
            D1.transform,
            D1.velocity + v,
            D1.acceleration + a,
            D1.angular_velocity + w,
            D1.angular_acceleration + al,
        )

    np.testing.assert_allclose(
        D2.delta_velocity(dv), changed(v=dv).velocity - base.velocity, atol=1e-12
    )
    np.testing.assert_allclose(
        D2.delta_acceleration(dv, da),
        changed(v=dv, a=da).acceleration - base.acceleration,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        D2.delta_angular_velocity(dw),
        changed(w=dw).angular_velocity - base.angular_velocity,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        D2.delta_angular_acceleration(dw, dal),
        changed(w=dw, al=dal).angular_acceleration - base.angular_acceleration,
        atol=1e-12,
    )


def test_dynamic_transform_vector_helpers() -> None:
    A3 = transform.Transform.identity(3)
    D = transform.DynamicTransform(A3, None, None, [1.0, 2.0, 3.0], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(D.angular_velocity, rotation.skew([1.0, 2.0, 3.0]), atol=0)
    D2 = transform.DynamicTransform(transform.Transform.identity(2), None, None, 2.0)
    np.testing.assert_allclose(D2.angular_velocity, [[0.0, -2.0], [2.0, 0.0]], atol=0)


# ======================================================================================
# hierarchy


def _tree(gen: np.random.Generator, n: int):
    """root <- a <- b, root <- c: motions and the hierarchy holding them."""
    motions = [_Motion(gen, n) for _ in range(4)]
    H = hierarchy.Hierarchy(n)
    root = H.add(motions[0].dynamic())
    a = H.add(motions[1].dynamic(), parent=root)
    b = H.add(motions[2].dynamic(), a)
    c = H.add(motions[3].dynamic(), parent=root)
    return H, motions, (root, a, b, c)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_hierarchy_globals_against_finite_differences(gen, n) -> None:
    H, m, (_root, a, b, _c) = _tree(gen, n)
    chain = _derivatives(
        lambda t: m[0].matrix(t) @ m[1].matrix(t) @ m[2].matrix(t), n, m[0].S * m[1].S * m[2].S
    )
    _assert_dynamic(H.global_(b), chain, FD * 10)
    G = H.globals()
    _assert_dynamic(G[b], chain, FD * 10)
    np.testing.assert_allclose(G.velocity[b], chain[2], atol=FD * 10)
    np.testing.assert_allclose(H.local(a).velocity, m[1].v, atol=0)
    # set_global: the node's global becomes the given one, its descendants follow
    target = _Motion(gen, n).dynamic()
    H.set_global(a, target)
    g = H.global_(a)
    _assert_dynamic(
        g,
        _components(target),
        1e-12,
    )
    np.testing.assert_allclose(H.local(b).velocity, m[2].v, atol=0)


def test_local_acceleration_is_newton_in_the_world(gen) -> None:
    H, m, (_root, _a, b, _c) = _tree(gen, 3)
    F = gen.standard_normal(3)
    mass = 2.5
    acc = H.local_acceleration(b, F, mass)
    terms = ("applied", "linear", "euler", "centrifugal", "coriolis")
    np.testing.assert_allclose(sum(getattr(acc, t) for t in terms), acc.total, atol=1e-12)
    # the world position of b's origin, with b's local acceleration replaced by the total,
    # must accelerate as F / m (FD of the hand-composed matrices)
    m[2].a = acc.total

    def world(t):
        return (m[0].matrix(t) @ m[1].matrix(t) @ m[2].matrix(t))[:3, 3]

    h = 1e-3
    pts = [world(k * h) for k in (-2, -1, 0, 1, 2)]
    d2 = (-pts[0] + 16 * pts[1] - 30 * pts[2] + 16 * pts[3] - pts[4]) / (12 * h * h)
    np.testing.assert_allclose(d2, F / mass, atol=FD * 10)


def test_local_acceleration_textbook_terms(gen) -> None:
    w, al = gen.standard_normal((2, 3))
    parent = transform.DynamicTransform(transform.Transform.identity(3), None, None, w, al)
    H = hierarchy.Hierarchy(3)
    p = H.add(parent)
    r, v = gen.standard_normal((2, 3))
    child = H.add(transform.DynamicTransform(transform.Transform(r, np.eye(3)), v), parent=p)
    acc = H.local_acceleration(child, np.zeros(3), 1.0)
    np.testing.assert_allclose(acc.centrifugal, -np.cross(w, np.cross(w, r)), atol=1e-13)
    np.testing.assert_allclose(acc.coriolis, -2 * np.cross(w, v), atol=1e-13)
    np.testing.assert_allclose(acc.euler, -np.cross(al, r), atol=1e-13)


@pytest.mark.parametrize("isolate", [False, True])
def test_apply_impulse(gen, isolate) -> None:
    H, _m, (_root, a, b, c) = _tree(gen, 3)
    before = H.globals()
    imp = gen.standard_normal(3)
    H.apply_impulse(a, imp, 2.0, isolate_children=isolate)
    after = H.globals()
    np.testing.assert_allclose(after.velocity[a] - before.velocity[a], imp / 2.0, atol=1e-12)
    np.testing.assert_allclose(after.acceleration[a], before.acceleration[a], atol=1e-12)
    if isolate:
        np.testing.assert_allclose(after.velocity[b], before.velocity[b], atol=1e-12)
        np.testing.assert_allclose(after.acceleration[b], before.acceleration[b], atol=1e-12)
    else:
        np.testing.assert_allclose(after.velocity[b] - before.velocity[b], imp / 2.0, atol=1e-12)
    np.testing.assert_allclose(after.velocity[c], before.velocity[c], atol=1e-12)


def test_hierarchy_step(gen) -> None:
    H = hierarchy.Hierarchy(3)
    T, v, a = gen.standard_normal((3, 3))
    w, al = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.0, 0.0])
    node = H.add(transform.DynamicTransform(transform.Transform(T, np.eye(3)), v, a, w, al))
    H.step(0.1)
    loc = H.local(node)
    np.testing.assert_allclose(loc.transform.translation, T + 0.1 * v + 0.005 * a, atol=1e-13)
    np.testing.assert_allclose(loc.velocity, v + 0.1 * a, atol=1e-13)
    ref = _reference_rotation(np.array([1.0, 0, 0, 0]), w, al, 0.1)
    np.testing.assert_allclose(loc.transform.rotation, _scipy(ref).as_matrix(), atol=1e-6)
    np.testing.assert_allclose(rotation.unskew(loc.angular_velocity), w + 0.1 * al, atol=1e-13)


def test_hierarchy_bad_input(gen) -> None:
    H, _, (_root, _a, b, _c) = _tree(gen, 3)
    _raises_naming(hierarchy.Hierarchy, "n", 0)
    _raises_naming(H.add, "parent", transform.Transform.identity(3), 99)
    _raises_naming(H.add, "local", "not a transform")
    _raises_naming(H.local_acceleration, "mass", b, np.zeros(3), 0.0)
    _raises_naming(H.local_acceleration, "force", b, np.zeros(2), 1.0)
    _raises_naming(H.apply_impulse, "impulse", b, None, 1.0)
    _raises_naming(H.apply_impulse, "isolate_children", b, np.zeros(3), 1.0, isolate_children="yes")
    _raises_naming(H.step, "dt", "0.1")
    _raises_naming(H.global_, "node", -1)
    with pytest.raises(tumble.InputError):
        H.add(transform.Transform.identity(2))


# ======================================================================================
# dual


def test_dual_numbers() -> None:
    from tumble.dual import (
        Dual,
        derivative,
        directional_derivative,
        gradient,
        hessian,
        jacobian,
    )

    x = 0.7
    d: Any = np.sin(Dual(x, [1.0])) ** 2
    np.testing.assert_allclose(d.value, np.sin(x) ** 2, atol=EXACT64)
    np.testing.assert_allclose(d.partials, [2 * np.sin(x) * np.cos(x)], atol=EXACT64)
    np.testing.assert_allclose(
        derivative(lambda t: np.exp(np.sin(t)), x), np.cos(x) * np.exp(np.sin(x)), atol=EXACT64
    )
    # perturbation confusion: d/dx [x * (d/dy (x + y))] at 1 is 1
    assert derivative(lambda u: u * derivative(lambda y: u + y, 1.0), 1.0) == 1.0

    def field(p):
        return np.stack([p[..., 0] * p[..., 1], np.sin(p[..., 2]), p[..., 0] ** 2], axis=-1)

    p = np.array([0.3, -1.2, 0.8])
    J = jacobian(field, p)
    expect = np.array([[p[1], p[0], 0.0], [0.0, 0.0, np.cos(p[2])], [2 * p[0], 0.0, 0.0]])
    np.testing.assert_allclose(J, expect, atol=EXACT64)
    pts = np.random.default_rng(SEED).standard_normal((5, 3))
    assert jacobian(field, pts, batched=True).shape == (5, 3, 3)
    v = np.array([1.0, 2.0, -1.0])
    h = 1e-6
    fd = (field(p + h * v) - field(p - h * v)) / (2 * h)
    np.testing.assert_allclose(directional_derivative(field, p, v), fd, atol=FD)

    def f(q):
        return q[0] ** 2 * q[1] + np.exp(q[2])

    np.testing.assert_allclose(
        gradient(f, p), [2 * p[0] * p[1], p[0] ** 2, np.exp(p[2])], atol=EXACT64
    )
    np.testing.assert_allclose(
        hessian(f, p),
        [[2 * p[1], 2 * p[0], 0], [2 * p[0], 0, 0], [0, 0, np.exp(p[2])]],
        atol=EXACT64,
    )
    with pytest.raises(tumble.InputError):
        Dual([1.0, 2.0], [1.0, 2.0])
    not_callable: Any = "sin"
    with pytest.raises(tumble.InputError):
        derivative(not_callable, 1.0)


# ======================================================================================
# linkedlist


def test_contiguous_list_against_list_model() -> None:
    from tumble.linkedlist import ContiguousList

    for dtype in (None, np.int64):
        c = ContiguousList([3, 1, 2], dtype=dtype)
        model = [3, 1, 2]
        c.append(5)
        model.append(5)
        c.appendleft(0)
        model.insert(0, 0)
        c.extend([7, 7, 1])
        model.extend([7, 7, 1])
        c.extendleft([9, 8])
        model[:0] = [8, 9]
        assert c.pop() == model.pop()
        assert c.popleft() == model.pop(0)
        assert len(c) == len(model)
        assert list(c) == model
        assert c == model
        assert list(reversed(c)) == model[::-1]
        assert c.front() == model[0]
        assert c.back() == model[-1]
        cur = c.insert(c.find(2), 4)
        model.insert(model.index(2), 4)
        assert cur.value == 4
        assert c.tolist() == model
        nxt = c.erase(c.find(5))
        i = model.index(5)
        model.pop(i)
        assert nxt.value == model[i]
        assert list(c) == model
        c.remove(7)
        model = [x for x in model if x != 7]
        assert list(c) == model
        c.sort()
        model.sort()
        assert list(c) == model
        c.reverse()
        model.reverse()
        assert list(c) == model
        assert c.sum() == sum(model)
        assert c.count(1) == model.count(1)
        assert pickle.loads(pickle.dumps(c)) == model
        assert copy.copy(c) == model
        assert c.copy() == model
        assert list(c.to_numpy()) == model
        assert "ContiguousList" in repr(c)
        c.clear()
        assert len(c) == 0
        assert list(c) == []


def test_contiguous_list_cursors_and_index_type() -> None:
    from tumble.linkedlist import ContiguousList

    c = ContiguousList(range(100), dtype=np.int64)
    assert c.index_dtype == np.uint8
    assert ContiguousList(range(100_000), dtype=np.int64).index_dtype == np.uint32
    it = c.begin()
    assert it.value == 0
    assert it.next().value == 1
    assert it.next().prev().value == 0
    stale = c.find(50)
    c.erase(c.find(10))
    victim = c.find(20)
    c.erase(victim)
    with pytest.raises(Exception, match=r"(?i)stale|erased|moved|invalid") as info:
        _ = victim.value
    assert not isinstance(info.value, AttributeError | TypeError)
    u = ContiguousList([1, 1, 2, 2, 2, 1, 3, 3])
    u.unique()
    assert list(u) == [1, 2, 1, 3]
    del stale


# ======================================================================================
# pairs


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_pairs_match_itertools(n) -> None:
    from tumble.pairs import distinct_pairs, pairs

    seq = list(range(10, 10 + n))
    p, d = pairs(seq), distinct_pairs(seq)
    prod = list(itertools.product(seq, repeat=2))
    comb = list(itertools.combinations(seq, 2))
    assert [tuple(x) for x in p] == prod
    assert len(p) == len(prod)
    assert [tuple(x) for x in d] == comb
    assert len(d) == len(comb)
    for k in range(-len(comb), len(comb)):
        assert tuple(d[k]) == comb[k]
    for k in range(len(prod)):
        assert tuple(p[k]) == prod[k]
    if comb:
        assert [tuple(x) for x in d[1:-1:2]] == comb[1:-1:2]
        I, J = d.index_arrays(0, len(comb))
        assert [(seq[i], seq[j]) for i, j in zip(I, J, strict=True)] == comb
        assert d.index((0, n - 1)) == comb.index((seq[0], seq[-1]))


def test_pairs_article_examples() -> None:
    from tumble.pairs import distinct_pairs, pairs

    nested = [tuple(tuple(p) for p in pp) for pp in distinct_pairs(distinct_pairs([1, 2, 3, 4]))]
    assert nested == list(itertools.combinations(list(itertools.combinations([1, 2, 3, 4], 2)), 2))
    assert len(nested) == 15
    big = distinct_pairs(range(10**9))
    k = 123_456_789_012_345
    i, j = big[k]
    assert i < j
    assert big.index((i, j)) == k
    values = [1, 2, 3]
    view = pairs(values, refs=True)
    view[1].first = 10
    assert values == [10, 2, 3]
    n = 2**10
    count = distinct_pairs(np.arange(1, n + 1)).count_if(lambda a, b: (a + b) % 2 == 0)
    assert count == 2 * (n // 2) * (n // 2 - 1) // 2
    assert isinstance(count, int)


# ======================================================================================
# command line


def test_cli_commands_exist() -> None:
    from tumble import cli

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"lab", "compare", "sweep", "bench"} <= set(sub.choices or ())
    with pytest.raises(SystemExit) as info:
        cli.main(["compare", "--min-j", "abc"])
    assert info.value.code == 2
    out = subprocess.run(
        [sys.executable, "-m", "tumble.cli", "--help"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0
    assert "compare" in out.stdout


# ======================================================================================
# SO(3) Jacobians (issue 5): finite differences through SciPy are the oracle


def _fd_jacobian(phi: np.ndarray, side: str) -> np.ndarray:
    h = 1e-6
    R = Rotation.from_rotvec(phi)
    cols = []
    for e in np.eye(3):
        if side == "right":
            plus = (R.inv() * Rotation.from_rotvec(phi + h * e)).as_rotvec()
            minus = (R.inv() * Rotation.from_rotvec(phi - h * e)).as_rotvec()
        else:
            plus = (Rotation.from_rotvec(phi + h * e) * R.inv()).as_rotvec()
            minus = (Rotation.from_rotvec(phi - h * e) * R.inv()).as_rotvec()
        cols.append((plus - minus) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("angle", [1e-9, 0.3, 2.0, np.pi - 1e-6])
def test_so3_jacobians_against_finite_differences(gen, angle) -> None:
    axis = gen.standard_normal(3)
    phi = angle * axis / np.linalg.norm(axis)
    Jr = rotation.so3_right_jacobian(phi)
    Jl = rotation.so3_left_jacobian(phi)
    assert np.all(np.isfinite(Jr))
    assert np.all(np.isfinite(Jl))
    np.testing.assert_allclose(Jr, _fd_jacobian(phi, "right"), atol=1e-8)
    np.testing.assert_allclose(Jl, _fd_jacobian(phi, "left"), atol=1e-8)
    np.testing.assert_allclose(
        rotation.so3_right_jacobian_inverse(phi), np.linalg.inv(Jr), atol=1e-10
    )
    np.testing.assert_allclose(
        rotation.so3_left_jacobian_inverse(phi), np.linalg.inv(Jl), atol=1e-10
    )
    assert rotation.so3_right_jacobian(np.stack([phi, phi])).shape == (2, 3, 3)
    assert rotation.so3_right_jacobian(phi.astype(np.float32)).dtype == np.float32


# ======================================================================================
# rigid: torque callables and locked axes (issue 3)


def test_torque_callable_matches_constant_torque(gen) -> None:
    q = _random_quats(gen, 2)
    w = gen.standard_normal((2, 3))
    J = np.array([1.0, 0.6, 0.3])
    tau = np.array([0.2, -0.1, 0.3])
    seen = []

    def torque(t, q_now, w_now):
        seen.append((t, q_now.shape, w_now.shape))
        return tau

    a = rigid.simulate(q, w, J, 0.01, 5, "rk4", torque=torque)
    b = rigid.simulate(q, w, J, 0.01, 5, "rk4", torque=tau)
    np.testing.assert_allclose(a.q, b.q, atol=1e-14)
    np.testing.assert_allclose(a.omega, b.omega, atol=1e-14)
    assert [s[0] for s in seen] == pytest.approx([0.0, 0.01, 0.02, 0.03, 0.04])
    assert seen[0][1:] == ((2, 4), (2, 3))
    q1, _ = rigid.step(q, w, J, 0.01, "rk4", torque=torque)
    np.testing.assert_allclose(q1, b.q[1], atol=1e-14)
    _raises_naming(rigid.step, "torque", q, w, J, 0.01, "rk4", torque=lambda t, q_, w_: np.ones(2))


def test_locked_axis_spins_about_fixed_axis() -> None:
    """J = (0, 0, 1): only body z turns; the exact motion is a steady spin about z."""
    J = np.array([0.0, 0.0, 1.0])
    w = np.array([0.0, 0.0, 0.7])
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for method in ("jolt", "momentum_first", "splitting", "rk4", "exact"):
        traj = rigid.simulate(q, w, J, 0.1, 10, method)
        _same_rotation(traj.q[-1], _wxyz(Rotation.from_rotvec([0.0, 0.0, 0.7])), 1e-12)
    _raises_naming(rigid.step, "inv_inertia", q, w, J, 0.1, "implicit")


# ======================================================================================
# regressions of the review report's defects (were strict xfails until fixed)


def _finite_or_input_error(func, *args, names: tuple[str, ...] = (), **kwargs) -> None:
    """Either a finite result, or InputError whose message starts with one of ``names``."""
    message = None
    try:
        out = func(*args, **kwargs)
    except tumble.InputError as exc:
        message = str(exc)
    if message is not None:
        assert message.startswith(names), message
        return
    for a in out if isinstance(out, tuple) else (out,):
        assert np.all(np.isfinite(a))


def test_rigid_step_huge_omega_is_not_silent_nan() -> None:
    _finite_or_input_error(
        rigid.step,
        [1.0, 0.0, 0.0, 0.0],
        [1e200, 1e200, 0.0],
        [1.0, 2.0, 3.0],
        0.1,
        "momentum_first",
        names=("omega", "q, omega"),
    )


def test_rigid_simulate_huge_dt_is_not_silent_nan() -> None:
    def run():
        return rigid.simulate(
            [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 1e300, 2, "rk4"
        ).q

    _finite_or_input_error(run, names=("dt", "q, omega"))


def test_torque_free_huge_omega_raises_input_error() -> None:
    _finite_or_input_error(
        exact.torque_free,
        [1.0, 0.0, 0.0, 0.0],
        [1e160, 1e160, 0.0],
        [1.0, 2.0, 3.0],
        1.0,
        names=("omega0",),
    )


def test_torque_free_huge_time_names_t() -> None:
    _finite_or_input_error(
        exact.torque_free,
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 2.0, 3.0],
        [1.0, 2.0, 3.0],
        1e300,
        names=("t",),
    )


def test_torque_free_subnormal_moment_names_argument() -> None:
    _finite_or_input_error(
        exact.torque_free,
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 2.0, 3.0],
        [1e-320, 2.0, 3.0],
        1.0,
        names=("inv_inertia", "omega0"),
    )


def test_method_as_array_raises_input_error() -> None:
    _raises_naming(
        rigid.step,
        "method",
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 2.0, 3.0],
        [1.0, 2.0, 3.0],
        0.1,
        np.array(["jolt"]),
    )


def test_exp_as_array_raises_input_error() -> None:
    _raises_naming(
        kinematics.rotate,
        "exp",
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 2.0, 3.0],
        [0.0, 0.0, 0.0],
        0.1,
        exp=np.array(["approx"]),
    )


def test_quat_exp_approx_huge_is_not_silent_nan() -> None:
    _finite_or_input_error(rotation.quat_exp_approx, [1e200, 0.0, 0.0], names=("x",))


def test_cayley_rotate_huge_is_not_silent_nan() -> None:
    _finite_or_input_error(
        rotation.cayley_rotate, [1.0, 1.0, 1.0], [1e200, 0.0, 0.0], names=("phi",)
    )


def test_rigid_huge_quaternion_is_normalised_or_rejected() -> None:
    q_big, J = [1e200, 1e200, 0.0, 0.0], [1.0, 2.0, 3.0]
    message = None
    try:
        got = rigid.world_inverse_inertia(q_big, J)
    except tumble.InputError as exc:
        message = str(exc)
    if message is not None:
        assert message.startswith("q"), message
        return
    want = _world_J(np.array([1.0, 1.0, 0.0, 0.0]) / np.sqrt(2.0), np.array(J))
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_rigid_and_exact_broadcast_leading_axes(gen) -> None:
    q = _random_quats(gen, 2).reshape(2, 1, 4)
    w = gen.standard_normal((3, 3))
    J = np.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0], [1.0, 1.5, 0.5]])
    E = rigid.energy(q, w, J)
    assert E.shape == (2, 3)
    for i, j in itertools.product(range(2), range(3)):
        L = np.linalg.solve(_world_J(q[i, 0], J[j]), w[j])
        np.testing.assert_allclose(E[i, j], 0.5 * w[j] @ L, rtol=1e-12)
    assert rigid.world_inverse_inertia(q, J).shape == (2, 3, 3, 3)
    assert rigid.angular_acceleration(w, w, q, J).shape == (2, 3, 3)
    q1, w1 = rigid.step(q, w, J, 0.01, "splitting")
    assert q1.shape == (2, 3, 4)
    assert w1.shape == (2, 3, 3)
    assert rigid.simulate(q, w, J, 0.01, 4, "jolt", every=2).q.shape == (3, 2, 3, 4)
    qt, wt = exact.torque_free(q, w, J, np.zeros(5))
    assert qt.shape == (5, 2, 3, 4)
    assert wt.shape == (5, 2, 3, 3)
    assert exact.body_period(q, w, J).shape == (2, 3)
    _raises_naming(rigid.energy, "batch", np.ones((2, 4)), np.ones((3, 3)), J)

"""Inertia maps, the gyroscopic angular acceleration and principal axes, against SciPy/NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from matrix import EVERY_METHOD
from oracles import matrix, quiet, rigid_reference
from tumble import InputError, rigid

# Round-off budget of a few rotations and products in float64.
RTOL = 1e-13


def random_state(rng: np.random.Generator, shape=(7,)):
    q = Rotation.random(int(np.prod(shape)), rng=rng).as_quat(scalar_first=True)
    q = q.reshape((*shape, 4))
    w = rng.normal(size=(*shape, 3))
    J = rng.uniform(0.2, 2.0, size=(*shape, 3))
    return q, w, J


def test_world_inverse_inertia_matches_R_J_RT(rng: np.random.Generator) -> None:
    q, _, J = random_state(rng, (4, 3))
    R = matrix(q)
    expected = R @ (J[..., :, None] * np.swapaxes(R, -1, -2))
    got = rigid.world_inverse_inertia(q, J)
    assert got.shape == (4, 3, 3, 3)
    np.testing.assert_allclose(got, expected, rtol=0, atol=RTOL * J.max())


def test_momentum_energy_and_acceleration_match_matrix_formulas(rng) -> None:
    q, w, J = random_state(rng)
    tau = rng.normal(size=(7, 3))
    R = matrix(q)
    Iw = R @ ((1 / J)[..., :, None] * np.swapaxes(R, -1, -2))
    Jw = R @ (J[..., :, None] * np.swapaxes(R, -1, -2))
    L = np.einsum("nij,nj->ni", Iw, w)
    np.testing.assert_allclose(rigid.angular_momentum(q, w, J), L, rtol=1e-12)
    np.testing.assert_allclose(rigid.energy(q, w, J), 0.5 * np.sum(w * L, -1), rtol=1e-12)
    alpha = np.einsum("nij,nj->ni", Jw, tau - np.cross(w, L))
    got = rigid.angular_acceleration(tau, w, q, J)
    np.testing.assert_allclose(got, alpha, rtol=1e-11, atol=1e-12)


def test_angular_acceleration_matches_finite_difference_of_exact_motion() -> None:
    """``alpha`` against a central difference of ``omega(t)`` from an ODE in ``(q, L_w)``.

    The ODE ``dL_w/dt = tau``, ``dq/dt = ½ omega ⊗ q``, ``omega = R J Rᵀ L_w`` never uses
    the gyroscopic formula, so the difference quotient is an independent oracle.
    """
    J = np.array([1.0, 0.6, 0.35])
    tau = np.array([0.3, -0.2, 0.4])
    q0 = np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2])

    def omega_of(y):
        R = matrix(y[:4] / np.linalg.norm(y[:4]))
        return R @ (J * (R.T @ y[4:]))

    t0, d = 0.7, 1e-3
    sol = rigid_reference(q0, [0.5, -0.8, 0.6], J, t0 + d, tau, dense_output=True)
    wp, wm = omega_of(sol.sol(t0 + d)), omega_of(sol.sol(t0 - d))
    fd = (wp - wm) / (2 * d)
    y = sol.sol(t0)
    got = rigid.angular_acceleration(tau, omega_of(y), y[:4] / np.linalg.norm(y[:4]), J)
    # Central difference error ~ d² |omega'''| / 6 ~ 1e-7; the ODE is good to ~1e-12.
    np.testing.assert_allclose(got, fd, rtol=0, atol=1e-6)
    # The gyroscopic term matters here: dropping it (alpha = J_w tau) misses by far more.
    R = matrix(y[:4] / np.linalg.norm(y[:4]))
    assert np.linalg.norm(R @ (J * (R.T @ tau)) - fd) > 0.05


def test_dtype_follows_input(rng: np.random.Generator) -> None:
    q, w, J = random_state(rng)
    q32, w32, J32 = (a.astype(np.float32) for a in (q, w, J))
    for f, args in (
        (rigid.angular_momentum, (q32, w32, J32)),
        (rigid.energy, (q32, w32, J32)),
        (rigid.world_inverse_inertia, (q32, J32)),
        (rigid.angular_acceleration, (w32, w32, q32, J32)),
    ):
        out32 = f(*args)
        out64 = f(*(a.astype(np.float64) for a in args))
        assert out32.dtype == np.float32
        np.testing.assert_allclose(out32, out64, rtol=1e-5, atol=1e-5)
    # Integers promote to float64.
    assert rigid.energy([1, 0, 0, 0], [1, 2, 3], [1, 1, 1]).dtype == np.float64
    assert rigid.energy([1, 0, 0, 0], [1, 2, 3], [1, 1, 1]) == pytest.approx(7.0)


# --------------------------------------------------------------------------------------
# zero inverse moments: axes held by a constraint


def test_locked_axis_carries_no_momentum_and_no_acceleration() -> None:
    q = np.array([1.0, 0, 0, 0])
    J = np.array([1.0, 0.5, 0.0])
    w = np.array([0.3, -0.4, 2.0])  # the body-z component is ignored: that axis cannot turn
    np.testing.assert_allclose(rigid.angular_momentum(q, w, J), [0.3, -0.8, 0.0])
    assert rigid.energy(q, w, J) == pytest.approx(0.5 * (0.09 + 0.32))
    a = rigid.angular_acceleration([0.0, 0.0, 5.0], w, q, J)
    assert a[2] == 0.0
    assert np.all(np.isfinite(a))


@pytest.mark.parametrize("method", [m for m in EVERY_METHOD if m != "implicit"])
def test_locked_axis_motion_is_steady_rotation(method: str) -> None:
    """With ``J3 = 0`` the constrained motion is a steady turn about ``omega0``; the
    methods keep ``omega``'s locked body component at zero and converge to it."""
    J = np.array([1.0, 0.5, 0.0])
    q0 = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_quat(scalar_first=True)
    w_body = np.array([0.6, -0.9, 0.0])
    w0 = Rotation.from_quat(q0, scalar_first=True).apply(w_body)
    errs = []
    for h in (0.02, 0.01):
        tr = rigid.simulate(q0, w0, J, h, round(1.0 / h), method, every=10)
        assert np.all(np.isfinite(tr.q))
        R = Rotation.from_quat(tr.q, scalar_first=True)
        body = R.inv().apply(tr.omega)
        np.testing.assert_allclose(body[:, 2], 0.0, atol=1e-14)
        exact = Rotation.from_rotvec(np.outer(tr.t, w0)) * Rotation.from_quat(q0, scalar_first=True)
        errs.append(np.max((exact.inv() * R).magnitude()))
    # Consistent: the error shrinks at least linearly with dt (or is at round-off).
    assert errs[1] < 0.6 * errs[0] or errs[1] < 1e-12, errs


def test_implicit_rejects_locked_axes() -> None:
    with pytest.raises(InputError, match="implicit"):
        rigid.step([1, 0, 0, 0], [1, 0, 0], [1.0, 0.0, 1.0], 0.1, "implicit")


# --------------------------------------------------------------------------------------
# principal axes


def rotated_tensor(moments, rng):
    R = Rotation.random(rng=rng).as_matrix()
    return R @ np.diag(moments) @ R.T


@pytest.mark.parametrize(
    "moments",
    [(1.0, 2.0, 3.5), (2.0, 2.0, 5.0), (1.0, 4.0, 4.0), (3.0, 3.0, 3.0)],
    ids=["distinct", "repeated-low", "repeated-high", "spherical"],
)
def test_principal_axes_reconstructs_tensor(moments, rng: np.random.Generator) -> None:
    I = rotated_tensor(moments, rng)
    J, q = rigid.principal_axes(I)
    R = Rotation.from_quat(q, scalar_first=True).as_matrix()
    np.testing.assert_allclose(R @ np.diag(1 / J) @ R.T, I, rtol=0, atol=1e-13 * max(moments))
    np.testing.assert_allclose(np.sort(1 / J), np.linalg.eigvalsh(I), rtol=1e-13)
    # Documented order: moments ascending, inverse moments descending.
    assert np.all(np.diff(1 / J) >= 0)
    assert np.linalg.det(R) == pytest.approx(1.0)


def test_principal_axes_batched_and_used_in_simulation(rng: np.random.Generator) -> None:
    I = np.stack([rotated_tensor(m, rng) for m in [(1, 2, 3), (2, 2, 5), (0.5, 1, 1.2)]])
    J, q = rigid.principal_axes(I)
    assert J.shape == (3, 3)
    assert q.shape == (3, 4)
    # A body given by its tensor in model frame: the model-frame L = I omega.
    w = rng.normal(size=(3, 3))
    L = rigid.angular_momentum(q, w, J)
    np.testing.assert_allclose(L, np.einsum("nij,nj->ni", I, w), rtol=1e-12)


@pytest.mark.parametrize("scale", [2.0**-1000, 1e-300, 1e300, 2.0**1000])
def test_regression_principal_axes_of_tiny_or_huge_tensors_scale_exactly(
    scale, rng: np.random.Generator
) -> None:
    # The long campaign (issue 27): a subnormal tensor gave inverse moments of inf with a
    # NumPy warning, and entries near 1e308 could overflow I - Iᵀ. The moments scale with
    # I (the eigenvectors do not): the inverse moments of the unit tensor over the scale.
    I = rotated_tensor((1.0, 2.0, 3.5), rng)
    J, q = rigid.principal_axes(I)
    Js, qs = quiet(lambda: rigid.principal_axes(I * scale))
    np.testing.assert_allclose(Js * scale, J, rtol=1e-13)
    np.testing.assert_allclose(qs, q, rtol=0, atol=1e-14)


def test_regression_principal_axes_whose_inverse_moments_overflow_names_I() -> None:
    # Subnormal moments: 1/5e-324 is beyond the float range.
    for I in (np.diag([4.9e-324, 9.9e-324, 1.5e-323]), np.diag([1.0, 2.0, 1e-310])):
        with pytest.raises(InputError, match=r"^I: too large or too small"):
            quiet(lambda I=I: rigid.principal_axes(I))


def test_principal_axes_float32() -> None:
    J, _q = rigid.principal_axes(np.diag([1.0, 2.0, 4.0]).astype(np.float32))
    assert J.dtype == np.float32
    np.testing.assert_allclose(J, [1.0, 0.5, 0.25], rtol=1e-6)


@pytest.mark.parametrize(
    ("I", "match"),
    [
        (np.eye(3)[:2], "shape"),
        (np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
        (np.diag([1.0, -1.0, 2.0]), "positive-definite"),
        (np.diag([1.0, 0.0, 2.0]), "positive-definite"),
        (np.diag([1.0, np.nan, 2.0]), "finite"),
        ("abc", "real"),
    ],
)
def test_principal_axes_rejects(I, match: str) -> None:
    with pytest.raises(InputError, match=match):
        rigid.principal_axes(I)


# --------------------------------------------------------------------------------------
# bad input of the dynamics functions


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([1, 0, 0], [1, 0, 0], [1, 1, 1]), "q"),
        (([1, 0, 0, 0], [1, 0], [1, 1, 1]), "omega"),
        (([1, 0, 0, 0], [1, 0, 0], [1, 1]), "inv_inertia"),
        (([1, 0, 0, 0], [1, 0, 0], [1, -1, 1]), "inv_inertia"),
        (([0, 0, 0, 0], [1, 0, 0], [1, 1, 1]), "q"),
        (([1, 0, 0, 0], [np.inf, 0, 0], [1, 1, 1]), "omega"),
        ((np.ones((2, 4)), np.ones((3, 3)), [1, 1, 1]), "broadcast"),
    ],
)
def test_dynamics_reject_bad_input(args, match: str) -> None:
    with pytest.raises(InputError, match=match):
        rigid.angular_momentum(*args)
    with pytest.raises(InputError, match=match):
        rigid.energy(*args)
    with pytest.raises(InputError, match=match):
        rigid.angular_acceleration([0, 0, 0], args[1], args[0], args[2])


def test_angular_acceleration_rejects_bad_torque() -> None:
    with pytest.raises(InputError, match="torque"):
        rigid.angular_acceleration([0, 0], [1, 0, 0], [1, 0, 0, 0], [1, 1, 1])
    with pytest.raises(InputError, match="torque"):
        rigid.angular_acceleration([0, np.nan, 0], [1, 0, 0], [1, 0, 0, 0], [1, 1, 1])

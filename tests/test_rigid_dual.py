"""The derivatives inside ``tumble.rigid``, verified by dual numbers.

Each derivative the library uses is re-derived here by forward-mode differentiation of
the quantity it is the derivative of, written once in plain NumPy (so it runs on
``tumble.dual.Dual``): the Newton Jacobians of the ``implicit`` and ``midpoint``
integrators, the angular acceleration as the time derivative of ``omega`` along the flow,
the RK4 right-hand side, the angular momentum as the gradient of the kinetic energy, and
the world inverse inertia as ``∂omega/∂L``. The NumPy re-expressions are first checked
against the compiled kernels on plain floats, so both sides are pinned.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

import tumble.rigid as rigid
import tumble.rotation as tr
from tumble._kernels.rigid import flows, rk4, steps
from tumble._kernels.torques import CONSTANT_WORLD, kinds_of
from tumble.dual import directional_derivative, gradient, jacobian

EPS = float(np.finfo(np.float64).eps)
#: Dual numbers and the closed-form kernels evaluate the same polynomial expressions in a
#: different order: a few roundings of order-1 products apart, times the entries' scale.
TOL = 64 * EPS
N = 64  # bodies per batched check


def inverse_inertias(rng: np.random.Generator, n: int) -> np.ndarray:
    """Principal inverse moments of asymmetric bodies: ratios up to 10, none locked."""
    return rng.uniform(0.3, 3.0, size=(n, 3))


def close(actual: Any, expected: Any, tol: float, what: str = "") -> None:
    """No NaN; every entry within ``tol`` times the largest entry of ``expected`` (or 1)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert not np.isnan(actual).any(), f"{what}: NaN"
    scale = max(1.0, float(np.abs(expected).max()))
    err = float(np.abs(actual - expected).max())
    assert err <= tol * scale, f"{what}: error {err:.3g} > {tol * scale:.3g}"


# --------------------------------------------------------------------------------------
# the NumPy re-expressions (each runs on floats and on duals)


def np_rotate(q: Any, v: Any) -> Any:
    """``q v q*`` for unit ``q``: ``v + w t + u × t`` with ``t = 2 u × v``."""
    w, u = q[..., :1], q[..., 1:]
    t = 2 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def np_conj(q: Any) -> Any:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def np_qmul(p: Any, q: Any) -> Any:
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    w = pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)
    return np.concatenate([w, pw * qv + qw * pv + np.cross(pv, qv)], axis=-1)


def catto_residual(w: Any, w1: Any, inertia: Any, h: float) -> Any:
    """Implicit Euler in the body frame: ``f(w) = I (w - w1) + h w × (I w)``."""
    return inertia * (w - w1) + h * np.cross(w, inertia * w)


def gyroscopic(x: Any, inv_inertia: Any) -> Any:
    """``x × (J x)``, the gyroscopic term of Euler's equations in momentum form."""
    return np.cross(x, inv_inertia * x)


def midpoint_residual(x: Any, L: Any, inv_inertia: Any, h: float) -> Any:
    """The midpoint equation ``F(x) = x - L - ½h x × (J x)`` for ``x = Lbar``."""
    return x - L - 0.5 * h * np.cross(x, inv_inertia * x)


def world_omega(state: Any, inv_inertia: Any) -> Any:
    """``omega = R J Rᵀ L`` of the state ``(q, L_world)`` stacked as a 7-vector."""
    q, L = state[..., :4], state[..., 4:]
    return np_rotate(q, inv_inertia * np_rotate(np_conj(q), L))


def body_momentum(state: Any) -> Any:
    """``L_b = Rᵀ L_w`` of the state ``(q, L_world)``."""
    return np_rotate(np_conj(state[..., :4]), state[..., 4:])


def flow_direction(q: np.ndarray, omega: np.ndarray, torque: np.ndarray) -> np.ndarray:
    """``(dq/dt, dL/dt) = (½ (0, omega) ⊗ q, tau)``: the rigid-body flow at ``(q, L)``."""
    pure = np.concatenate([np.zeros((*omega.shape[:-1], 1)), omega], axis=-1)
    return np.concatenate([0.5 * tr.quat_multiply(pure, q), torque], axis=-1)


def test_numpy_re_expressions_match_the_kernels(rng: np.random.Generator) -> None:
    """On floats, the NumPy versions give what the compiled kernels give."""
    for _ in range(20):
        w, w1 = rng.normal(size=(2, 3))
        inertia = rng.uniform(0.3, 3.0, size=3)
        h = float(rng.uniform(0.01, 0.5))
        close(catto_residual(w, w1, inertia, h), steps.catto_residual(w, w1, inertia, h), TOL)
    q = tr.random_quat(N, rng=1)
    omega = rng.normal(size=(N, 3))
    J = inverse_inertias(rng, N)
    state = np.concatenate([q, rigid.angular_momentum(q, omega, J)], axis=-1)
    close(world_omega(state, J), omega, TOL, "omega(q, L)")
    close(np_rotate(q, omega), tr.quat_rotate(q, omega), TOL, "rotate")
    close(np_qmul(q, q[::-1]), tr.quat_multiply(q, q[::-1]), TOL, "qmul")


# --------------------------------------------------------------------------------------
# the implicit integrator's Newton system (Catto / Bullet)


def test_catto_jacobian_against_dual_numbers(rng: np.random.Generator) -> None:
    """``steps.catto_jacobian(w, I, h) = ∂f/∂w`` at random points, step sizes and inertias."""
    for _ in range(40):
        w, w1 = rng.normal(size=(2, 3)) * rng.uniform(0.1, 10.0)
        inertia = rng.uniform(0.3, 3.0, size=3)
        h = float(rng.uniform(0.001, 1.0))
        expected = jacobian(partial(catto_residual, w1=w1, inertia=inertia, h=h), w)
        kernel = np.array(steps.catto_jacobian(tuple(w), tuple(inertia), h)).reshape(3, 3)
        close(kernel, expected, TOL, "catto_jacobian")


def test_implicit_step_is_a_newton_step_with_the_dual_jacobian(rng: np.random.Generator) -> None:
    """``rigid.step(..., "implicit")`` lands where one Newton step of implicit Euler, with
    the Jacobian from dual numbers, lands: body ``omega1 = w2 + h J R0ᵀ tau`` with
    ``w2 = w1 - (∂f/∂w)⁻¹ f(w1)``, ``w1`` the body angular velocity at the start."""
    q0 = tr.random_quat(N, rng=2)
    omega0 = rng.normal(size=(N, 3)) * 3
    torque = rng.normal(size=(N, 3))
    J = inverse_inertias(rng, N)
    inertia = 1 / J
    h = 0.05
    w1 = tr.quat_rotate(tr.quat_conjugate(q0), omega0)
    jac = jacobian(lambda v: catto_residual(v, w1, inertia, h), w1, batched=True)
    f = catto_residual(w1, w1, inertia, h)
    w2 = w1 - np.linalg.solve(jac, f[..., None])[..., 0]
    expected_body = w2 + h * J * tr.quat_rotate(tr.quat_conjugate(q0), torque)
    q1, omega1 = rigid.step(q0, omega0, J, h, "implicit", torque=torque)
    got_body = tr.quat_rotate(tr.quat_conjugate(q1), omega1)
    # The solve (condition number ~10 here) and two rotations add a few roundings.
    close(got_body, expected_body, 4 * TOL, "implicit step")


# --------------------------------------------------------------------------------------
# the midpoint integrator's Newton system


def test_midpoint_newton_matrix_against_dual_numbers(rng: np.random.Generator) -> None:
    """``midpoint_momentum`` builds ``dF = 1 - ½h (G - diag J)`` from ``G =
    catto_jacobian(x, J, 1)``, i.e. uses ``∂(x × Jx)/∂x = G - diag J``; both checked."""
    for _ in range(40):
        x, L = rng.normal(size=(2, 3)) * rng.uniform(0.1, 10.0)
        J = rng.uniform(0.3, 3.0, size=3)
        h = float(rng.uniform(0.001, 1.0))
        G = np.array(steps.catto_jacobian(tuple(x), tuple(J), 1.0)).reshape(3, 3)
        gyro = jacobian(partial(gyroscopic, inv_inertia=J), x)
        close(G - np.diag(J), gyro, TOL, "d(x × Jx)/dx")
        newton = np.eye(3) - 0.5 * h * (G - np.diag(J))
        close(newton, jacobian(partial(midpoint_residual, L=L, inv_inertia=J, h=h), x), TOL, "dF")


def test_midpoint_root_by_newton_with_the_dual_jacobian(rng: np.random.Generator) -> None:
    """Newton's method driven by dual-number Jacobians finds the same ``Lbar`` as the
    kernel (the root is unique for these step sizes, so agreement checks the kernel's
    Newton matrix did its job, not just its residual)."""
    for h in (0.05, 0.5, 2.0):
        L = rng.normal(size=3)
        J = rng.uniform(0.3, 3.0, size=3)
        x = L.copy()
        F = partial(midpoint_residual, L=L, inv_inertia=J, h=h)
        for _ in range(30):
            x = x - np.linalg.solve(jacobian(F, x), F(x))
        kernel = np.array(flows.midpoint_momentum(tuple(L), tuple(J), h))
        close(kernel, x, 8 * TOL, f"Lbar at h={h}")


# --------------------------------------------------------------------------------------
# derivatives along the flow


@pytest.mark.parametrize("with_torque", [False, True])
def test_angular_acceleration_is_d_omega_dt_along_the_flow(
    with_torque: bool, rng: np.random.Generator
) -> None:
    """``alpha = d/dt (R J Rᵀ L)`` with ``dq/dt = ½ omega ⊗ q``, ``dL/dt = tau``: one
    directional derivative of ``omega(q, L)`` per body, all bodies in one dual pass."""
    q = tr.random_quat(N, rng=3)
    omega = rng.normal(size=(N, 3)) * 2
    J = inverse_inertias(rng, N)
    torque = rng.normal(size=(N, 3)) if with_torque else np.zeros((N, 3))
    state = np.concatenate([q, rigid.angular_momentum(q, omega, J)], axis=-1)
    along = directional_derivative(
        lambda s: world_omega(s, J), state, flow_direction(q, omega, torque)
    )
    close(rigid.angular_acceleration(torque, omega, q, J), along, TOL, "alpha")


def test_rk4_right_hand_side_is_the_flow_in_body_momentum(rng: np.random.Generator) -> None:
    """The RK4 kernel's ``dL_b/dt = tau_b + L_b × (J L_b)`` is ``d/dt (Rᵀ L_w)`` along the
    flow, and its ``dq/dt = ½ q ⊗ (0, J L_b)`` is the flow's ``½ (0, omega) ⊗ q``."""
    q = tr.random_quat(N, rng=4)
    omega = rng.normal(size=(N, 3)) * 2
    J = inverse_inertias(rng, N)
    torque = rng.normal(size=(N, 3))
    L_world = rigid.angular_momentum(q, omega, J)
    state = np.concatenate([q, L_world], axis=-1)
    direction = flow_direction(q, omega, torque)
    dLb = directional_derivative(body_momentum, state, direction)
    Lb = tr.quat_rotate(tr.quat_conjugate(q), L_world)
    # The kernel takes the torque as a model: here one constant world torque per body.
    model = (kinds_of((CONSTANT_WORLD,)), np.ascontiguousarray(torque), None)
    for i in range(N):
        I = tuple(1.0 / J[i])
        dq, dL = rk4._rk4_rhs(tuple(q[i]), tuple(Lb[i]), tuple(J[i]), I, model, i, 0.0)
        close(dL, dLb[i], TOL, "dL_b/dt")
        close(dq, direction[i, :4], TOL, "dq/dt")


# --------------------------------------------------------------------------------------
# gradients and Jacobians of the state maps


def test_angular_momentum_is_the_energy_gradient(rng: np.random.Generator) -> None:
    """``L = ∂E/∂omega`` for ``E = ½ omega_b · I omega_b``, ``omega_b = Rᵀ omega``; the
    NumPy energy also matches ``rigid.energy``."""
    q = tr.random_quat(N, rng=5)
    omega = rng.normal(size=(N, 3)) * 2
    J = inverse_inertias(rng, N)

    def energy(w: Any) -> Any:
        wb = np_rotate(np_conj(q), w)
        return 0.5 * np.sum(wb * wb / J, axis=-1)

    close(energy(omega), rigid.energy(q, omega, J), TOL, "energy")
    grad = gradient(energy, omega, batched=True)
    close(rigid.angular_momentum(q, omega, J), grad, TOL, "L = dE/domega")


def test_world_inverse_inertia_is_d_omega_d_momentum(rng: np.random.Generator) -> None:
    q = tr.random_quat(N, rng=6)
    J = inverse_inertias(rng, N)
    L = rng.normal(size=(N, 3))
    jac = jacobian(lambda x: world_omega(np.concatenate([q, x], axis=-1), J), L, batched=True)
    close(rigid.world_inverse_inertia(q, J), jac, TOL, "R J Rᵀ")

"""Buss's two rotation integrators, ``buss_second_order`` and ``buss_augmented``.

S. R. Buss, "Accurate and efficient simulation of rigid body rotations", J. Comput. Phys.
164 (2000) 377-406. World ``L`` is the state; each step turns the attitude by
``Q(wbar dt)`` with ``wbar = omega + (dt/2) omega'`` (second order), plus
``(dt²/12) omega' × omega`` (augmented), ``omega' = J_w (tau - omega × L)``.

Oracles: the update written here in the world frame with SciPy rotation matrices (one step,
with and without torque), the conservation laws themselves, and the closed form of the
spherical top. The orders are measured in ``tests/test_rigid_order.py`` (against
``tumble.exact`` and the DOP853 solve), under every torque model in
``tests/test_torques.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from oracles import angle, matrix
from tumble import rigid

BUSS = ["buss_second_order", "buss_augmented"]
Q0 = np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2])
J = np.array([1.0, 0.6, 0.35])
LB0 = np.array([0.5, -0.8, 0.6])
TAU = np.array([0.3, -0.2, 0.1])
# Round-off of one step (a few dozen float64 operations on O(1) quantities).
STEP_ROUNDOFF = 1e-15
# Round-off accumulated over a few thousand steps (a random walk of ulps).
RUN_ROUNDOFF = 1e-12


def omega0(J: np.ndarray, Lb: np.ndarray) -> np.ndarray:
    return matrix(Q0) @ (J * Lb)


def world_step(method: str, h: float, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of Buss's update in the world frame, with 3x3 matrices:
    ``omega = J_w L``, ``omega' = J_w (tau - omega × L)``, ``R1 = Q(wbar h) R0``,
    ``L1 = L + h tau``, ``omega1 = J_w(R1) L1``."""
    R0 = matrix(Q0)
    L = R0 @ LB0
    Jw = R0 @ np.diag(J) @ R0.T
    w = Jw @ L
    wd = Jw @ (tau - np.cross(w, L))
    wbar = w + 0.5 * h * wd
    if method == "buss_augmented":
        wbar = wbar + h * h / 12.0 * np.cross(wd, w)
    R1 = Rotation.from_rotvec(h * wbar) * Rotation.from_matrix(R0)
    L1 = L + h * tau
    M1 = R1.as_matrix()
    return R1.as_quat(scalar_first=True), M1 @ (J * (M1.T @ L1))


@pytest.mark.parametrize("tau", [None, TAU], ids=["free", "torque"])
@pytest.mark.parametrize("method", BUSS)
@pytest.mark.parametrize("h", [0.01, 0.3])
def test_one_step_is_the_world_frame_update(method: str, h: float, tau) -> None:
    q_ref, w_ref = world_step(method, h, np.zeros(3) if tau is None else tau)
    q1, w1 = rigid.step(Q0, omega0(J, LB0), J, h, method, torque=tau)
    assert np.all(np.isfinite(q1))
    assert np.all(np.isfinite(w1))
    assert angle(q_ref, q1) < 4 * STEP_ROUNDOFF
    np.testing.assert_allclose(w1, w_ref, rtol=0, atol=8 * STEP_ROUNDOFF)


def test_the_augmented_term_changes_the_step_at_third_order() -> None:
    """The two methods differ by the rotation vector ``(h³/12) omega' × omega`` only:
    their one-step difference falls 8x per halving of ``h``."""
    gaps = []
    for h in (0.1, 0.05, 0.025):
        a = rigid.step(Q0, omega0(J, LB0), J, h, "buss_second_order")[0]
        b = rigid.step(Q0, omega0(J, LB0), J, h, "buss_augmented")[0]
        gaps.append(angle(a, b))
    np.testing.assert_allclose(np.array(gaps[:-1]) / np.array(gaps[1:]), 8.0, rtol=0.01)


@pytest.mark.parametrize("method", BUSS)
@pytest.mark.parametrize("h", [0.05, 0.5, 3.0])
def test_L_norm_and_world_L_exact(method: str, h: float) -> None:
    """``|L|`` and world ``L`` to round-off at any step: ``L_b`` turns by the inverse of the
    attitude's increment, one and the same quaternion."""
    Lb = 4.0 * LB0
    tr = rigid.simulate(Q0, omega0(J, Lb), J, h, 5000, method, every=50)
    assert np.all(np.isfinite(tr.q))
    n = np.linalg.norm(tr.L_body, axis=-1)
    np.testing.assert_allclose(n, n[0], rtol=RUN_ROUNDOFF)
    np.testing.assert_allclose(
        tr.L, np.broadcast_to(tr.L[0], tr.L.shape), rtol=0, atol=RUN_ROUNDOFF * n[0]
    )


@pytest.mark.parametrize("method", BUSS)
def test_world_L_changes_by_the_torque_alone(method: str) -> None:
    """Under a constant world torque, ``L_w(t) = L_w(0) + t tau`` to round-off (the
    momentum form: the held torque is exact for it)."""
    tr = rigid.simulate(Q0, omega0(J, LB0), J, 0.1, 2000, method, torque=TAU, every=100)
    expected = tr.L[0] + tr.t[:, None] * TAU
    np.testing.assert_allclose(tr.L, expected, rtol=0, atol=RUN_ROUNDOFF * np.abs(expected).max())


@pytest.mark.parametrize("method", BUSS)
def test_energy_error_is_local_third_order_and_drifts(method: str) -> None:
    """One step's ``|ΔE|`` falls 8x per halving of ``h``; over a long run the energy grows
    (the energy factor ``J_L`` moves towards ``J_max``), it is not bounded."""
    one = []
    for h in 0.1 / 2.0 ** np.arange(4):
        tr = rigid.simulate(Q0, omega0(J, LB0), J, h, 1, method)
        one.append(abs(tr.energy[1] - tr.energy[0]))
    np.testing.assert_allclose(np.array(one[:-1]) / np.array(one[1:]), 8.0, rtol=0.05)
    tr = rigid.simulate(Q0, omega0(J, LB0), J, 0.05, 40_000, method, every=4000)
    rel = tr.energy / tr.energy[0] - 1.0
    # Measured: 5.5e-5 (second order) and 8.9e-5 (augmented) at t = 200, 13x and 11.5x as
    # much at t = 2000; a bounded oscillation would not grow at all.
    assert rel[1] > 0
    assert rel[-1] > 5 * rel[1], rel


@pytest.mark.parametrize("method", BUSS)
@pytest.mark.parametrize("h", [0.1, 1.3])
def test_exact_for_spherical_top_at_any_step(method: str, h: float) -> None:
    """A spherical top has ``omega' = 0``: each step is ``Q(j L_w h)``, the exact motion."""
    Js = np.full(3, 0.7)
    tr = rigid.simulate(Q0, omega0(Js, LB0), Js, h, 40, method)
    Lw = matrix(Q0) @ LB0
    exact = Rotation.from_rotvec(np.outer(tr.t, 0.7 * Lw)) * Rotation.from_quat(
        Q0, scalar_first=True
    )
    assert np.max(angle(exact.as_quat(scalar_first=True), tr.q)) < RUN_ROUNDOFF


@pytest.mark.parametrize("method", BUSS)
def test_not_time_symmetric(method: str) -> None:
    """Run back with ``-h``, the step misses its start: it is explicit in the start's
    ``omega'``, not its own adjoint, so no composition raises its order. The miss is
    ``O(h⁴)``, not ``O(h³)``: the leading local errors of ``h`` and ``-h``, odd in ``h``,
    cancel, as for any method of even order."""
    w = omega0(J, LB0)
    gaps = []
    for h in (0.1, 0.05):
        q1, w1 = rigid.step(Q0, w, J, h, method)
        q2, _ = rigid.step(q1, w1, J, -h, method)
        gaps.append(angle(Q0, q2))
    # Far above round-off (measured 1.0e-7 and 1.6e-7 at h = 0.05).
    assert gaps[1] > 1e-9
    np.testing.assert_allclose(gaps[0] / gaps[1], 16.0, rtol=0.05)

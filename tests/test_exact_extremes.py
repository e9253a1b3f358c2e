"""tumble.exact at the edges of its domain: huge phases, subnormal momenta, float32.

Oracles: the conservation laws (|L|, E, L_w) that fix the invariant torus of the motion,
an mpmath reduction of the time modulo the body period with the precession per period
(Landau and Lifshitz, Mechanics §37, written out below independently of tumble's theta
series) followed by a tight DOP853 solve over the remainder, and the scaling symmetry
``(L_b, J) -> (c L_b, J / c)``, which leaves ``omega(t)`` and ``q(t)`` unchanged, to move a
subnormal momentum to a normal one for the ODE.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracles import quiet, rigid_reference
from tumble import InputError, rotation
from tumble.exact import MAX_PHASE, body_period, torque_free, torque_free_from_momentum

EPS = float(np.finfo(np.float64).eps)
#: Invariants rebuilt from (q(t), omega(t)) at any phase: a rotation and J⁻¹, tens of ulps.
CONS_TOL = 1e-13


def _body_momentum(q: np.ndarray, w: np.ndarray, J: np.ndarray) -> np.ndarray:
    return rotation.quat_rotate(rotation.quat_conjugate(q), w) / J


def _assert_on_torus(q0, w0, J, q, w) -> None:  # type: ignore[no-untyped-def]
    """Finite, unit ``q``, and the invariants of the initial state: the exact torus."""
    assert np.all(np.isfinite(q))
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, rtol=0, atol=4 * EPS)
    L0 = _body_momentum(np.asarray(q0, float), np.asarray(w0, float), J)
    size = float(np.linalg.norm(L0))
    Lb = _body_momentum(q, w, J)
    Lw0 = rotation.quat_rotate(q0, L0)
    assert np.max(np.abs(rotation.quat_rotate(q, Lb) - Lw0)) <= CONS_TOL * size
    np.testing.assert_allclose(np.linalg.norm(Lb, axis=-1), size, rtol=CONS_TOL)
    np.testing.assert_allclose(np.sum(Lb * J * Lb, axis=-1), L0 @ (J * L0), rtol=CONS_TOL)


# --------------------------------------------------------------------------------------
# huge phases


def test_regression_huge_phase_of_an_asymmetric_body_is_finite() -> None:
    """The issue's calls: NaN at t = 1e20 (finite at 3e19) and at |omega| = 1e20, once the
    reduction ``u - 2jK`` rounded by more than K. Beyond ~1e16 rad one ulp of the phase
    exceeds a period: only the invariant torus is determined, and the state lies on it."""
    q0, J = np.array([1.0, 0.0, 0.0, 0.0]), np.array([1.0, 2.0, 3.0])
    w0 = np.array([0.3, 2.0, 0.3])
    q, w = quiet(lambda: torque_free(q0, w0, J, [1e20]))
    _assert_on_torus(q0, w0, J, q, w)
    big = np.full(3, 1e20)
    q, w = quiet(lambda: torque_free(q0, big, J, [0.5]))
    _assert_on_torus(q0, big, J, q, w)


def _bodies() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(label, q0, omega0, J): both circulation regimes, near the separatrix, symmetric."""
    rng = np.random.default_rng(27)
    q0 = rotation.random_quat((), rng)
    J = np.array([1.7, 1.0, 0.4])
    z2 = (1e-10 * J[1] + J[0] - J[1]) / (J[0] - J[2])
    near = np.array([np.sqrt(1.0 - z2), 0.0, np.sqrt(z2)])
    states = {
        "about the largest moment": np.array([0.2, 0.3, 1.5]),
        "about the smallest moment": np.array([1.5, 0.3, 0.2]),
        "1e-10 from the separatrix": near,
    }
    out = [(k, q0, rotation.quat_rotate(q0, J * L), J) for k, L in states.items()]
    Jsym = np.array([1.0, 0.5, 0.5])
    out.append(("symmetric", q0, rotation.quat_rotate(q0, Jsym * [0.4, 1.0, 0.2]), Jsym))
    return out


@pytest.mark.parametrize(("label", "q0", "w0", "J"), _bodies(), ids=[b[0] for b in _bodies()])
def test_every_phase_up_to_the_bound_stays_on_the_torus(label, q0, w0, J) -> None:  # type: ignore[no-untyped-def]
    rate = float(np.max(J) * np.linalg.norm(_body_momentum(q0, w0, J)))
    t_max = MAX_PHASE / rate
    t = np.array([1e9, 3e15, 1e17, -1e20, 1e40, 1e100, 0.99 * t_max, -t_max])
    q, w = quiet(lambda: torque_free(q0, w0, J, t))
    _assert_on_torus(q0, w0, J, q, w)
    with pytest.raises(InputError, match=r"^t: "):
        torque_free(q0, w0, J, 1.01 * t_max)


def _period_and_precession(J: np.ndarray, Lb: np.ndarray):  # type: ignore[no-untyped-def]
    """mpmath (40 digits): the body period ``T`` and the angle ``Δφ`` the body turns about
    ``L_w`` per period, of the exact float inputs.

    Landau-Lifshitz (37.10) with moments ``I1 < I2 < I3`` (axes 1 and 3 swapped when
    ``M² < 2E I2``): ``τ = λ t``, ``λ² = (I3 - I2)(M² - 2E I1)/(I1 I2 I3)``, ``k² = (I2 - I1)
    (2E I3 - M²)/((I3 - I2)(M² - 2E I1))``, ``L3 = I3 sqrt((M² - 2E I1)/(I3 (I3 - I1))) dn τ``,
    ``T = 4K(k)/λ``; the Euler precession rate about ``L_w`` with axis 3 as the symmetry axis
    is ``φ' = M (2E - L3²/I3) / (M² - L3²)``, integrated over one period of ``dn``.
    """
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        order = np.argsort(-J, kind="stable")
        inertia = [1 / mpmath.mpf(float(J[i])) for i in order]
        L = [mpmath.mpf(float(Lb[i])) for i in order]
        M2 = sum(x * x for x in L)
        E2 = sum(L[i] ** 2 / inertia[i] for i in range(3))
        if M2 < E2 * inertia[1]:
            inertia = inertia[::-1]
        I1, I2, I3 = inertia
        lam = mpmath.sqrt((I3 - I2) * (M2 - E2 * I1) / (I1 * I2 * I3))
        k2 = (I2 - I1) * (E2 * I3 - M2) / ((I3 - I2) * (M2 - E2 * I1))
        K = mpmath.ellipk(k2)
        amp = I3 * mpmath.sqrt((M2 - E2 * I1) / (I3 * (I3 - I1)))

        def rate(tau):  # type: ignore[no-untyped-def]
            L3 = amp * mpmath.ellipfun("dn", tau, m=k2)
            return mpmath.sqrt(M2) * (E2 - L3 * L3 / I3) / (M2 - L3 * L3)

        return 4 * K / lam, 2 * mpmath.quad(rate, [0, K, 2 * K]) / lam


def _far_reference(q0, Lb0, J, t):  # type: ignore[no-untyped-def]
    """``(q, L_b)`` at a large ``t``: ``t = kT + r`` in mpmath, the motion over ``r`` by
    DOP853, then the turn ``k Δφ`` about ``L_w`` (the motion after a body period is the
    same motion turned about ``L_w``)."""
    mpmath = pytest.importorskip("mpmath")
    T, dphi = _period_and_precession(J, Lb0)
    with mpmath.workdps(40):
        k = mpmath.floor(mpmath.mpf(t) / T)
        r = float(mpmath.mpf(t) - k * T)
        turn = float(mpmath.fmod(k * dphi, 4 * mpmath.pi))
    Lw = rotation.quat_rotate(q0, Lb0)
    sol = rigid_reference(q0, Lw, J, r, t_eval=[r])
    q = sol.y[:4, -1] / np.linalg.norm(sol.y[:4, -1])
    q = rotation.quat_multiply(rotation.rotvec_to_quat(turn * Lw / np.linalg.norm(Lw)), q)
    return q, rotation.quat_rotate(rotation.quat_conjugate(q), Lw)


@pytest.mark.parametrize("t", [1e9, 1e11, 1e13])
@pytest.mark.parametrize("label", ["about the largest moment", "about the smallest moment"])
def test_large_phase_errs_by_the_rounding_of_the_phase(label: str, t: float) -> None:
    """Where the phase still means something, the error is what its float64 rounding makes
    it: the attitude within a few ulps of the phase ``J_max |L| t`` (radians), ``L_b`` too
    (relative to ``|L|``); measured about 2 ulps. From ``|u| ~ 2**31 K`` (t >= 1e10 here)
    the reduction takes its cold path (``fmod``)."""
    _, q0, w0, J = next(b for b in _bodies() if b[0] == label)
    Lb0 = _body_momentum(q0, w0, J)
    q, w = quiet(lambda: torque_free(q0, w0, J, [t]))
    q_ref, L_ref = _far_reference(q0, Lb0, J, t)
    phase = float(np.max(J) * np.linalg.norm(Lb0)) * t
    # 8 ulps of the phase, plus the ODE's own error over one period.
    tol = 8 * EPS * phase + 1e-11
    assert float(rotation.rotation_angle(q[0], q_ref)) <= tol
    Lb = _body_momentum(q[0], w[0], J)
    assert float(np.max(np.abs(Lb - L_ref))) <= tol * float(np.linalg.norm(Lb0))


# --------------------------------------------------------------------------------------
# tiny momenta


@pytest.mark.parametrize("size", [1e-310, 5e-324 * 7, 1e-160])
def test_regression_subnormal_momentum_is_the_scaled_motion(size: float) -> None:
    """A subnormal momentum gave NaN (the power-of-two scale 2**1030 overflowed). With ``J``
    large enough that the body turns, the motion of ``(L_b, J = c J_unit)`` is that of the
    normal state ``(p L_b, J_unit)`` (``p`` a power of two, so ``p L_b`` is the exact input)
    at ``t c / p``: the ODE's."""
    q0 = rotation.random_quat((), np.random.default_rng(3))
    J_unit = np.array([1.7, 1.0, 0.4])
    Lb0 = size * np.array([0.3, -0.8, 0.5])  # the momentum as given, rounded if subnormal
    e = -int(np.frexp(np.max(np.abs(Lb0)))[1])  # p = 2**e, beyond float64 for 1e-310
    c = 2.0**1000
    rate = np.ldexp(c, -e)  # omega(t) = rate * (the ODE's omega at t * rate)
    t = np.array([0.0, 0.5, 1.3]) / rate  # the last turns the body by about 1.3 rad
    q, w = quiet(lambda: torque_free_from_momentum(q0, Lb0, c * J_unit, t))
    Lw = rotation.quat_rotate(q0, np.ldexp(Lb0, e))
    sol = rigid_reference(q0, Lw, J_unit, float(t[-1] * rate), t_eval=t * rate)
    q_ref = (sol.y[:4] / np.linalg.norm(sol.y[:4], axis=0)).T
    assert float(np.max(rotation.rotation_angle(q, q_ref))) <= 1e-11
    L_ref = rotation.quat_rotate(rotation.quat_conjugate(q_ref), sol.y[4:].T)
    w_ref = rotation.quat_rotate(q_ref, J_unit * L_ref) * rate
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-11 * float(np.linalg.norm(w_ref[0])))


def test_regression_subnormal_momentum_of_the_issue_stays_put() -> None:
    """The issue's calls: |L| = 1e-310, J = (1, 2, 3), t = 0.5 turns the body by 1e-310 rad:
    ``q(t) = q0`` and ``omega(t) = omega0`` to their precision."""
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    J = np.array([1.0, 2.0, 3.0])
    q, w = quiet(lambda: torque_free_from_momentum(q0, [1e-310] * 3, J, [0.5]))
    assert float(rotation.rotation_angle(q[0], q0)) <= 2 * EPS
    np.testing.assert_allclose(w[0], J * 1e-310, rtol=1e-12)
    q, w = quiet(lambda: torque_free(q0, [1e-310] * 3, J, [0.5]))
    assert float(rotation.rotation_angle(q[0], q0)) <= 2 * EPS
    np.testing.assert_allclose(w[0], [1e-310] * 3, rtol=1e-12)


def test_body_period_of_a_tiny_momentum_scales_like_one_over_L() -> None:
    """``T(c L) = T(L) / c``: for a momentum whose squares underflow as well; a period
    beyond float64 raises naming the state (it was NaN)."""
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    J = np.array([1.0, 2.0, 3.0])
    w0 = np.array([0.3, 2.0, 0.3])
    T = float(body_period(q0, w0, J))
    c = 2.0**-1000
    assert float(quiet(lambda: body_period(q0, c * w0, J))) == pytest.approx(T / c)
    with pytest.raises(InputError, match=r"^omega0, inv_inertia: "):
        body_period(q0, 1e-310 * w0, J)


# --------------------------------------------------------------------------------------
# dtype


def test_regression_torque_free_from_momentum_keeps_float32() -> None:
    """float32 input gave float64 from torque_free_from_momentum (torque_free kept it)."""
    args32 = (
        np.array([1.0, 0.0, 0.0, 0.0], np.float32),
        np.array([0.3, 1.0, 0.2], np.float32),
        np.array([1.0, 2.0, 3.0], np.float32),
    )
    q, w = torque_free_from_momentum(*args32, [0.0, 1.5])
    assert q.dtype == np.float32
    assert w.dtype == np.float32
    q64, w64 = torque_free_from_momentum(*(a.astype(np.float64) for a in args32), [0.0, 1.5])
    np.testing.assert_allclose(q, q64, rtol=0, atol=1e-6)
    np.testing.assert_allclose(w, w64, rtol=1e-6)
    mixed = torque_free_from_momentum(args32[0], args32[1].astype(np.float64), args32[2], 1.0)
    assert mixed[0].dtype == np.float64


def test_a_float32_motion_beyond_float32_raises() -> None:
    """``omega(t)`` is not conserved: its largest world component grows by 22 % over the
    first body period here (J = (1, 1/2, 1/4), L_b on the orbit through ``(0.77, 1.10, 0)``),
    so a float32 ``omega0`` a fifth below float32's largest value leaves the range: it
    raises (it was inf with NumPy's overflow warning); a tenth of it does not."""
    J = np.array([1.0, 0.5, 0.25])
    L0 = np.array([np.sqrt(0.595), np.sqrt(1.215), 0.0])
    w_unit = J * L0 / np.linalg.norm(J * L0)
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    t = np.linspace(0.0, float(body_period(q0, w_unit, J)), 9)
    growth = np.max(np.abs(torque_free(q0, w_unit, J, t)[1])) / np.max(np.abs(w_unit))
    assert growth > 1.2
    f32max = float(np.finfo(np.float32).max)
    scale = 1.01 * f32max / (growth * np.max(np.abs(w_unit)))
    big = (scale * w_unit).astype(np.float32)
    args32 = (q0.astype(np.float32), big, J.astype(np.float32))
    with pytest.raises(InputError, match=r"^q0, omega0, inv_inertia, t: "):
        quiet(lambda: torque_free(*args32, t))
    _q, w = quiet(lambda: torque_free(args32[0], big / 10, args32[2], t))
    assert w.dtype == np.float32
    assert np.all(np.isfinite(w))


def test_regression_huge_q0_of_torque_free_from_momentum_raises_without_a_warning() -> None:
    """|q0|² overflowed with NumPy's warning before the InputError (found by the campaign)."""
    with pytest.raises(InputError, match=r"^q0: expected unit"):
        quiet(
            lambda: torque_free_from_momentum(
                [1e200, 1e199, 0.0, 0.0], [0.3, -1.0, 0.4], [1.0, 0.6, 0.35], [0.5]
            )
        )

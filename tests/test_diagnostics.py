"""Tests of tumble.diagnostics on hand-made trajectories whose answers are known in closed
form, plus the input forms (Trajectory-like objects, tuples) and validation."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from oracles import hermite_flip, quiet
from tumble import InputError, diagnostics, exact, rigid, rotation, scenarios
from tumble.exact import torque_free

#: Closed-form answers rebuilt through a few quaternion rotations: a few ulps.
TOL = 1e-14
#: The flip detector bisects the same cubic that SciPy solves in closed form.
FLIP_ATOL = 1e-9
#: The Hermite interpolant of the exact L_b is O(h⁴) accurate; at 32 steps per rotation
#: (h = 0.2) its zero sits within this of the closed-form T/2.
FLIP_EXACT_RTOL = 1e-5


def uniform_spin(
    n: int = 9, j: float = 0.8
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A spherical body (J = j·1) turning uniformly: the exact free motion."""
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 4.0, n)
    q0 = rotation.random_quat((), rng)
    w0 = np.array([0.3, -1.2, 0.7])
    q = rotation.quat_multiply(rotation.rotvec_to_quat(w0 * t[:, None]), q0)
    omega = np.broadcast_to(w0, (n, 3)).copy()
    return t, q, omega, np.full(3, j)


def test_uniform_spin_conserves_everything() -> None:
    t, q, w, J = uniform_spin()
    traj = (t, q, w)
    L = w / J[0]
    assert np.allclose(diagnostics.momentum_world(traj, J), L, rtol=0, atol=TOL)
    assert np.allclose(diagnostics.momentum_norm(traj, J), np.linalg.norm(L[0]), rtol=TOL)
    assert np.max(np.abs(diagnostics.momentum_drift(traj, J))) <= TOL
    assert np.max(diagnostics.direction_drift(traj, J)) <= TOL
    assert np.max(np.abs(diagnostics.energy_error(traj, J))) <= TOL
    assert diagnostics.max_energy_error(traj, J) <= TOL
    assert np.allclose(diagnostics.energy(traj, J), 0.5 * w[0] @ L[0], rtol=TOL)
    assert np.allclose(diagnostics.energy_factor(traj, J), J[0], rtol=TOL)
    # k = omega × L = 0 for a spherical body: J_k falls back to J_L.
    assert np.allclose(diagnostics.k_factor(traj, J), J[0], rtol=TOL)
    assert np.max(diagnostics.attitude_error(traj, J)) <= 1e-13


def test_known_momentum_changes() -> None:
    """Fixed attitude, world omega turned by known angles and scaled by known factors."""
    n = 6
    t = np.arange(n, dtype=float)
    q = np.tile(rotation.random_quat((), 2), (n, 1))
    angles = np.linspace(0.0, 1.5, n)
    scale = 1.0 + np.linspace(0.0, 1e-3, n)
    axis = np.array([0.0, 0.0, 1.0])
    w0 = np.array([1.0, 0.0, 0.5])
    w = rotation.quat_rotate(rotation.rotvec_to_quat(axis * angles[:, None]), w0) * scale[:, None]
    J = np.full(3, 2.0)  # spherical, so L_w = omega / 2 whatever the attitude
    traj = (t, q, w)
    # The angle between w(t) and w0 (not the turning angle: w0 is not normal to the axis).
    cos = (w @ w0) / (np.linalg.norm(w, axis=-1) * np.linalg.norm(w0))
    assert np.allclose(
        diagnostics.direction_drift(traj, J), np.arccos(np.clip(cos, -1, 1)), atol=1e-7
    )
    assert np.allclose(diagnostics.momentum_drift(traj, J), scale - 1.0, rtol=0, atol=TOL)
    assert np.allclose(diagnostics.energy_error(traj, J), scale**2 - 1.0, rtol=0, atol=TOL)
    assert diagnostics.max_energy_error(traj, J) == pytest.approx(scale[-1] ** 2 - 1.0, abs=TOL)


def test_direction_drift_small_angles_are_accurate() -> None:
    """atan2 form: angles of 1e-9 come out to full relative precision (acos would not)."""
    t = np.array([0.0, 1.0])
    q = np.tile([1.0, 0.0, 0.0, 0.0], (2, 1))
    w = np.array([[1.0, 0.0, 0.0], [np.cos(1e-9), np.sin(1e-9), 0.0]])
    drift = diagnostics.direction_drift((t, q, w), np.ones(3))
    assert drift[1] == pytest.approx(1e-9, rel=1e-12)


def test_energy_factor_and_k_factor_hand_values() -> None:
    """J = (1, 2, 3), L_b = (1, 1, 0): J_L = (1 + 2)/2; k = ω × L = (0, 0, -1), J_k = 3."""
    J = np.array([1.0, 2.0, 3.0])
    Lb = np.array([[1.0, 1.0, 0.0]])
    q = np.array([[1.0, 0.0, 0.0, 0.0]])
    traj = SimpleNamespace(t=np.zeros(1), q=q, omega=J * Lb, L_body=Lb)
    assert diagnostics.energy_factor(traj, J)[0] == pytest.approx(1.5, rel=TOL)
    assert diagnostics.k_factor(traj, J)[0] == pytest.approx(3.0, rel=TOL)
    assert np.allclose(diagnostics.momentum_body(traj, J), Lb)


def test_rayleigh_quotient_identity() -> None:
    """(J_k - J_L)|k|² = -det(J - J_L)|L|⁴ (reference §2.11 item 5), on random states."""
    rng = np.random.default_rng(3)
    n = 50
    J = rng.uniform(0.1, 3.0, 3)
    Lb = rng.normal(size=(n, 3))
    q = rotation.random_quat((n,), rng)
    traj = (np.arange(n, dtype=float), q, rotation.quat_rotate(q, J * Lb))
    JL = diagnostics.energy_factor(traj, J)
    Jk = diagnostics.k_factor(traj, J)
    k = np.cross(J * Lb, Lb)
    lhs = (Jk - JL) * np.sum(k * k, axis=-1)
    rhs = -np.prod(J - JL[:, None], axis=-1) * np.sum(Lb * Lb, axis=-1) ** 2
    assert np.allclose(lhs, rhs, rtol=1e-12, atol=1e-13)
    assert np.all((JL >= J.min()) & (JL <= J.max()))
    assert np.all((Jk >= J.min() - 1e-14) & (Jk <= J.max() + 1e-14))


def test_attitude_error_of_known_perturbation() -> None:
    """The exact trajectory rotated by known angles about a body axis: errors are those angles."""
    rng = np.random.default_rng(4)
    J = np.array([0.6, 1.4, 2.2])
    q0 = rotation.random_quat((), rng)
    w0 = np.array([0.4, 1.1, -0.3])
    t = np.linspace(0.0, 9.0, 7)
    q, w = torque_free(q0, w0, J, t)
    delta = np.linspace(0.0, 0.3, 7)
    bump = rotation.rotvec_to_quat(np.array([0.0, 1.0, 0.0]) * delta[:, None])
    # L_body from the unperturbed run, so only the attitude differs.
    Lb = rotation.quat_rotate(rotation.quat_conjugate(q), w) / J
    traj = SimpleNamespace(t=t, q=rotation.quat_multiply(q, bump), omega=w, L_body=Lb)
    assert np.allclose(diagnostics.attitude_error(traj, J), delta, rtol=0, atol=1e-12)
    s = diagnostics.summary(traj, J)
    assert s["attitude_error"] == pytest.approx(0.3, abs=1e-12)
    assert s["energy_error"] <= 1e-14
    assert s["momentum_drift"] <= 1e-14


def test_time_offset_is_respected() -> None:
    t, q, w, J = uniform_spin()
    assert np.max(diagnostics.attitude_error((t + 100.0, q, w), J)) <= 1e-13


def test_batched_trajectory_and_forms() -> None:
    rng = np.random.default_rng(5)
    nb, n = 4, 5
    J = rng.uniform(0.3, 2.0, (nb, 3))
    q0 = rotation.random_quat((nb,), rng)
    w0 = rng.normal(size=(nb, 3))
    t = np.linspace(0.0, 3.0, n)
    q, w = torque_free(q0, w0, J, t)
    arrays = diagnostics.TrajectoryArrays(t, q, w)
    obj = SimpleNamespace(t=t, q=q, omega=w, inv_inertia=J)
    for f in (
        diagnostics.energy_factor,
        diagnostics.k_factor,
        diagnostics.momentum_norm,
        diagnostics.momentum_drift,
        diagnostics.direction_drift,
        diagnostics.energy,
        diagnostics.energy_error,
        diagnostics.attitude_error,
    ):
        a = f(arrays, J)
        assert a.shape == (n, nb)
        assert np.all(np.isfinite(a))
        assert np.array_equal(a, f(obj))
        assert np.array_equal(a, f([t, q, w], J))
    assert diagnostics.momentum_body(arrays, J).shape == (n, nb, 3)
    assert diagnostics.max_energy_error(arrays, J).shape == (nb,)
    # The exact solution conserves everything: the diagnostics say so.
    s = diagnostics.summary(arrays, J)
    assert set(s) == {"energy_error", "momentum_drift", "direction_drift", "attitude_error"}
    for key, value in s.items():
        assert value.shape == (nb,)
        assert np.all(value <= 1e-12), key


def test_rigid_trajectory_is_accepted() -> None:
    """A tumble.rigid.Trajectory (built here from the exact solution, so no integrator is
    involved) is read through its attributes, L_body included."""
    rigid = pytest.importorskip("tumble.rigid")
    J = np.array([0.7, 1.3, 2.1])
    q0 = rotation.random_quat((), 6)
    t = np.linspace(0.0, 2.0, 5)
    q, w = torque_free(q0, [0.5, 1.0, -0.2], J, t)
    Lb = rotation.quat_rotate(rotation.quat_conjugate(q), w) / J
    L = rotation.quat_rotate(q, Lb)
    traj = rigid.Trajectory(t=t, q=q, omega=w, L=L, L_body=Lb, energy=0.5 * np.sum(w * L, -1))
    JL = diagnostics.energy_factor(traj, J)
    assert JL.shape == t.shape
    assert np.allclose(JL, 2 * traj.energy / np.sum(L * L, axis=-1), rtol=1e-14)
    assert np.max(diagnostics.attitude_error(traj, J)) <= 1e-13


def test_zero_inverse_moment_uses_pseudo_inverse() -> None:
    t, q, _, _ = uniform_spin()
    J = np.array([1.0, 2.0, 0.0])
    w_body = np.array([0.5, -0.25, 0.0])
    w = rotation.quat_rotate(q, w_body)
    Lb = diagnostics.momentum_body((t, q, w), J)
    assert np.allclose(Lb, [0.5, -0.125, 0.0], rtol=0, atol=TOL)


def test_degenerate_values_are_finite() -> None:
    t = np.array([0.0, 1.0])
    q = np.tile([1.0, 0.0, 0.0, 0.0], (2, 1))
    w = np.zeros((2, 3))
    J = np.array([1.0, 2.0, 3.0])
    for f in (
        diagnostics.energy_factor,
        diagnostics.k_factor,
        diagnostics.momentum_drift,
        diagnostics.direction_drift,
        diagnostics.energy_error,
        diagnostics.attitude_error,
    ):
        assert np.array_equal(f((t, q, w), J), np.zeros(2)), f.__name__


@pytest.mark.parametrize(
    ("trajectory", "inv_inertia", "name"),
    [
        (42, [1.0, 2.0, 3.0], "trajectory"),
        ((np.zeros(2), np.zeros((2, 4))), [1.0, 2.0, 3.0], "trajectory"),
        ((np.zeros(2), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((2, 3))), None, "inv_inertia"),
        (
            (np.zeros(2), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((2, 3))),
            [1.0, -1, 1],
            "inv_inertia",
        ),
        (
            (np.zeros(2), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((2, 3))),
            [1.0, 1.0],
            "inv_inertia",
        ),
        (
            (np.zeros((2, 2)), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((2, 3))),
            [1.0] * 3,
            "trajectory.t",
        ),
        ((np.zeros(0), np.zeros((0, 4)), np.zeros((0, 3))), [1.0] * 3, "trajectory.t"),
        (
            (np.zeros(3), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((2, 3))),
            [1.0] * 3,
            "trajectory.q",
        ),
        (
            (np.zeros(2), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((3, 3))),
            [1.0] * 3,
            "trajectory.omega",
        ),
        ((np.zeros(2), np.tile([1.0, 0, 0], (2, 1)), np.zeros((2, 3))), [1.0] * 3, "trajectory.q"),
        ((np.zeros(2), np.zeros((2, 4)), np.zeros((2, 3))), [1.0] * 3, "trajectory.q"),
        (
            (np.zeros(2), np.tile([1.0, 0, 0, np.nan], (2, 1)), np.zeros((2, 3))),
            [1.0] * 3,
            "trajectory.q",
        ),
        (
            (np.zeros(2), np.tile([1.0, 0, 0, 0], (2, 1)), np.zeros((2, 2, 3))),
            np.ones((3, 3)),
            "batch",
        ),
    ],
)
def test_bad_input_names_the_argument(trajectory: object, inv_inertia: object, name: str) -> None:
    with pytest.raises(InputError, match=re.escape(name)):
        diagnostics.energy_factor(trajectory, inv_inertia)
    with pytest.raises(InputError, match=re.escape(name)):
        diagnostics.attitude_error(trajectory, inv_inertia)


def test_bad_L_body_is_named() -> None:
    traj = SimpleNamespace(
        t=np.zeros(2),
        q=np.tile([1.0, 0, 0, 0], (2, 1)),
        omega=np.zeros((2, 3)),
        L_body=np.zeros((3, 3)),
    )
    with pytest.raises(InputError, match=re.escape("trajectory.L_body")):
        diagnostics.momentum_norm(traj, [1.0, 2.0, 3.0])


# --------------------------------------------------------------------------------------
# the first flip (oracle: SciPy's CubicHermiteSpline.roots)


def test_first_flip_of_the_exact_motion_is_half_the_body_period():
    case = scenarios.article_case(0.5, 0.6, 0.55, 32, 6)
    tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, "exact")
    T = float(exact.body_period(case.q0, case.omega0, case.inv_inertia))
    flip = diagnostics.first_flip_time(tr.t, tr.L_body[:, None], case.inv_inertia[None])[0]
    assert np.isfinite(flip)
    assert flip == pytest.approx(T / 2, rel=FLIP_EXACT_RTOL)
    assert flip == pytest.approx(hermite_flip(tr.t, tr.L_body, case.inv_inertia), abs=FLIP_ATOL)


def test_flip_ignores_round_off_and_steady_spins():
    t = np.arange(6.0)
    # Round-off-sized wiggles about 0, then a real swing from + to -.
    x = np.array([1e-17, -1e-17, 0.5, 0.9, -0.2, -0.8])
    Lb = np.stack([np.sqrt(1 - x**2), x, np.zeros(6)], axis=-1)[:, None]
    J = np.array([[1.0, 2.0, 3.0]])
    flip = diagnostics.first_flip_time(t, Lb, J)[0]
    assert 3.0 < flip < 4.0
    steady = np.tile([[[0.0, 1e-12, 1.0]]], (6, 1, 1))
    assert np.isnan(diagnostics.first_flip_time(t, steady, J)[0])


# --------------------------------------------------------------------------------------
# the one scorer


def _diverging_batch() -> tuple[rigid.Trajectory, np.ndarray]:
    """Forward Euler at 3 steps per rotation on three bodies: two blow up, at different
    records, and one stays finite over the 20 rotations."""
    cases = [
        scenarios.article_case(0.5, f, e, 3, 20) for f, e in ((0.2, 0.1), (0.8, 0.5), (0.5, 0.0))
    ]
    q = np.array([c.q0 for c in cases])
    w = np.array([c.omega0 for c in cases])
    J = np.array([c.inv_inertia for c in cases])
    with np.errstate(all="ignore"):
        tr = rigid.simulate(
            q, w, J, cases[0].dt, cases[0].steps, "explicit", on_divergence="ignore"
        )
    return tr, J


def test_score_of_a_batch_is_the_score_of_each_body() -> None:
    tr, J = _diverging_batch()
    n_ok = diagnostics.finite_records(tr)
    assert n_ok.shape == (3,)
    n = tr.t.shape[0]
    assert len(set(n_ok.tolist()) - {n}) == 2, "two bodies should blow up, at different records"
    assert n in n_ok, "one body should stay finite"
    batch = diagnostics.score(tr, J)
    ends = diagnostics.score(tr, J, attitude="end")
    for b in range(3):
        one = diagnostics.score(tr.take(bodies=b), J[b])
        n = int(n_ok[b])
        head = tr.take(records=slice(n), bodies=b)
        att = diagnostics.attitude_error(head, J[b])
        assert batch.energy_error[b] == float(diagnostics.max_energy_error(head, J[b]))
        assert batch.momentum_drift[b] == np.max(np.abs(diagnostics.momentum_drift(head, J[b])))
        assert batch.direction_drift[b] == np.max(diagnostics.direction_drift(head, J[b]))
        assert batch.attitude_error_max[b] == np.max(att)
        assert batch.attitude_error_end[b] == att[-1]
        assert ends.attitude_error_end[b] == att[-1]
        assert np.isnan(ends.attitude_error_max[b])
        if n == tr.t.shape[0]:
            assert np.isnan(batch.diverged_at[b])
        else:
            assert batch.diverged_at[b] == tr.t[n]
        for name in diagnostics.TrajectoryScores._fields:
            assert np.array_equal(getattr(one, name), getattr(batch, name)[b], equal_nan=True)


def test_score_against_a_shared_reference_broadcasts_over_bodies() -> None:
    case = scenarios.article_case(0.5, 0.3, 0.6, 16, 2)
    methods = ["jolt", "rk4", "momentum_first"]
    trs = [scenarios.simulate(case, m) for m in methods]
    reference = scenarios.simulate(case, "exact")
    fields = ("q", "omega", "L", "L_body", "energy")
    stacked = rigid.Trajectory(
        t=reference.t, **{f: np.stack([getattr(tr, f) for tr in trs], axis=1) for f in fields}
    )
    batch = diagnostics.score(stacked, case.inv_inertia, reference)
    for m, tr in enumerate(trs):
        s = scenarios.score(tr, case.inv_inertia, reference_q=reference.q)
        assert batch.attitude_error_max[m] == s.attitude_error_max
        assert batch.attitude_error_end[m] == s.attitude_error_end
        assert batch.energy_error[m] == s.energy_error
    with pytest.raises(InputError, match=r"^reference: expected shape \(33, \.\.\., 4\)"):
        diagnostics.score(stacked, case.inv_inertia, reference.q[:-1])
    with pytest.raises(InputError, match=r"^reference: expected a batch"):
        diagnostics.score(stacked, case.inv_inertia, np.stack([reference.q] * 2, axis=1))


def test_score_rejects_bad_input() -> None:
    t, q, w, J = uniform_spin()
    with pytest.raises(InputError, match=r"^attitude: expected one of"):
        diagnostics.score((t, q, w), J, attitude="max")
    bad = q.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputError, match=r"^trajectory: the first record is not finite"):
        diagnostics.score((t, bad, w), J)
    # summary keeps every record: a non-finite one is refused, not cut off.
    bad = q.copy()
    bad[-1, 0] = np.inf
    with pytest.raises(InputError, match=r"^trajectory.q: expected finite values"):
        diagnostics.summary((t, bad, w), J)
    s = diagnostics.score((t, bad, w), J)
    assert s.diverged_at == t[-1]
    assert s.attitude_error_max <= 1e-13


def test_one_run_scored_against_a_batch_of_inertias_aligns_batch_not_records():
    """Regression: an ``(n, 4)`` run with ``inv_inertia`` of shape ``(n, 3)`` once broadcast
    the record axis against the batch and gave wrong numbers silently."""
    q0 = rotation.random_quat(1, rng=1)[0]
    J3 = np.array([[0.5, 1.0, 1.5], [1.0, 0.6, 0.35], [0.8, 0.9, 1.0]])
    tr = rigid.simulate(q0, [0.3, -0.8, 0.5], [0.5, 1.0, 1.5], 0.1, 2, "explicit")
    assert tr.t.shape == (3,)  # as many records as bodies: the case that went wrong
    per_body = np.stack([diagnostics.energy(tr, J) for J in J3], axis=-1)
    np.testing.assert_array_equal(diagnostics.energy(tr, J3), per_body)
    scores = diagnostics.score(tr, J3)
    for k, J in enumerate(J3):
        assert scores.energy_error[k] == diagnostics.score(tr, J).energy_error


def test_score_takes_a_reference_tuple_like_a_trajectory():
    tr = rigid.simulate([1.0, 0, 0, 0], [0.3, -0.8, 0.5], [0.5, 1.0, 1.5], 0.1, 20, "jolt")
    exact_run = rigid.simulate([1.0, 0, 0, 0], [0.3, -0.8, 0.5], [0.5, 1.0, 1.5], 0.1, 20, "exact")
    J = [0.5, 1.0, 1.5]
    as_tuple = diagnostics.score(tr, J, reference=(exact_run.t, exact_run.q, exact_run.omega))
    as_run = diagnostics.score(tr, J, reference=exact_run)
    assert as_tuple.attitude_error_max == as_run.attitude_error_max
    assert as_run.attitude_error_max > 1e-3


# ------------------------------------------------- regressions from the bad-input campaign

_PER_RECORD = (
    "momentum_body",
    "momentum_world",
    "momentum_norm",
    "momentum_drift",
    "direction_drift",
    "energy",
    "energy_error",
    "max_energy_error",
    "energy_factor",
    "k_factor",
    "attitude_error",
)


@pytest.mark.parametrize("name", _PER_RECORD)
def test_regression_diagnostics_with_batched_inv_inertia_1_3(name):
    # Every diagnostics function raised NumPy's broadcasting ValueError for an unbatched
    # run (t, q (n, 4), omega (n, 3)) and inv_inertia of shape (1, 3) or (2, 3).
    gen = np.random.default_rng(7)
    t = np.linspace(0.0, 2.0, 6)
    q = rotation.random_quat(6, gen)
    w = gen.normal(size=(6, 3))
    J = np.array([[1.0, 2.0, 3.0], [0.5, 1.0, 4.0]])
    f = getattr(diagnostics, name)
    both = np.asarray(f((t, q, w), J))
    batch_axis = 0 if name == "max_energy_error" else 1  # per-record results: records first
    for b in range(2):
        one = np.asarray(f((t, q, w), J[b]))
        np.testing.assert_array_equal(
            np.asarray(f((t, q, w), J[b : b + 1])).reshape(one.shape), one
        )
        np.testing.assert_array_equal(both.take(b, axis=batch_axis), one)


def test_regression_score_with_batched_inv_inertia_1_3():
    t = np.linspace(0.0, 2.0, 6)
    q = np.tile([1.0, 0.0, 0.0, 0.0], (6, 1))
    w = np.tile([0.1, 1.0, 0.1], (6, 1))
    one = diagnostics.score((t, q, w), [1.0, 2.0, 3.0])
    batched = diagnostics.score((t, q, w), [[1.0, 2.0, 3.0]])
    for a, b in zip(one, batched, strict=True):
        np.testing.assert_array_equal(np.asarray(b).reshape(np.shape(a)), a)


def test_regression_attitude_error_with_omega_1e200_names_the_trajectory():
    # omega = 1e200 raised "invalid entry in choice array", later an error naming
    # torque_free_from_momentum's internal L_body0 or phi.
    t = np.linspace(0.0, 1.0, 5)
    q = np.tile([1.0, 0.0, 0.0, 0.0], (5, 1))
    w = np.tile([1e200, 1.0, 0.1], (5, 1))
    with pytest.raises(InputError, match=r"^trajectory, inv_inertia: too large") as err:
        diagnostics.attitude_error((t, q, w), [1.0, 2.0, 3.0])
    assert "L_body0" not in str(err.value)
    assert "phi" not in str(err.value)
    with pytest.raises(InputError, match=r"^trajectory, inv_inertia: too large"):
        diagnostics.score((t, q, w), [1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((None, None, None), "t"),
        (([0.0, 1.0], [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]), "L_body"),
        (([0.0, 1.0], np.ones((2, 1, 3)), [1.0, 2.0, 3.0]), "inv_inertia"),
        (([0.0, 1.0], np.ones((2, 1, 3)), [[1.0, 2.0]]), "inv_inertia"),
        (([[0.0, 1.0]], np.ones((2, 1, 3)), [[1.0, 2.0, 3.0]]), "t"),
        (([0.0, np.nan], np.ones((2, 1, 3)), [[1.0, 2.0, 3.0]]), "t"),
        (([0.0, 1.0], np.full((2, 1, 3), np.nan), [[1.0, 2.0, 3.0]]), "L_body"),
        (([0.0, 1.0], np.ones((2, 1, 3)), [[1.0, 2.0, 3.0]], -1.0), "band"),
        (([0.0, 1.0], np.ones((2, 1, 3)), [[1.0, 2.0, 3.0]], "x"), "band"),
    ],
)
def test_regression_first_flip_time_validates(args, name):
    # first_flip_time validated nothing: IndexError or TypeError.
    with pytest.raises(InputError, match=f"^{name}: "):
        diagnostics.first_flip_time(*args)


# --------------------------------------------------------------------------------------
# huge and tiny states (issue 27): the right answer when it is representable, else a
# named InputError; never a silent inf or NaN, never a NumPy warning


def test_regression_energy_of_huge_omega_raises_like_rigid_energy():
    """``energy`` of omega = 1e200 gave [inf, inf, inf] silently (rigid.energy raises)."""
    t, q = np.arange(3.0), np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
    w = np.full((3, 3), 1e200)
    with pytest.raises(InputError, match=r"^omega, inv_inertia: "):
        rigid.energy(q, w, [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match=r"^trajectory, inv_inertia: .*kinetic energy"):
        quiet(lambda: diagnostics.energy((t, q, w), [1.0, 2.0, 3.0]))
    # L_b = omega_b / J itself beyond float64.
    with pytest.raises(InputError, match=r"^trajectory.omega, inv_inertia: "):
        quiet(lambda: diagnostics.momentum_body((t, q, w), [1e-200, 1.0, 1.0]))


def _scaled_run(c: float) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray]:
    """A wobbling, drifting run (the same q, L_b times ``c``, a power of two) as
    ``(t, q, omega)`` with its L_b (unscaled) and J."""
    rng = np.random.default_rng(11)
    n = 6
    J = np.array([1.0, 0.6, 0.35])
    q = rotation.random_quat((n,), rng)
    Lb = np.array([0.3, -1.0, 0.4]) + 0.05 * rng.normal(size=(n, 3))
    omega = rotation.quat_rotate(q, J * Lb)
    return (np.linspace(0.0, 1.0, n), q, omega * c), Lb, J


@pytest.mark.parametrize("c", [2.0**600, 2.0**-600, 2.0**-1000])
def test_scale_free_measures_of_huge_and_tiny_states_are_the_hand_formulas(c):
    """|L|/|L0|, the angle of L_w, E/E0, J_L and J_k do not depend on the size of L: at
    |L| ~ 1e180 or 1e-180 (squares beyond float64) they equal the formulas written out on
    the unit-size state; |L| and E scale as c and c² where those are representable."""
    run, Lb, J = _scaled_run(c)
    q = run[1]
    norm = np.linalg.norm(Lb, axis=-1)
    Lw = rotation.quat_rotate(q, Lb)
    E = 0.5 * np.sum(Lb * J * Lb, axis=-1)
    k = np.cross(J * Lb, Lb)
    measures = {
        "momentum_drift": norm / norm[0] - 1.0,
        "direction_drift": np.arctan2(
            np.linalg.norm(np.cross(Lw, Lw[0]), axis=-1), np.sum(Lw * Lw[0], axis=-1)
        ),
        "energy_error": E / E[0] - 1.0,
        "energy_factor": np.sum(Lb * J * Lb, axis=-1) / norm**2,
        "k_factor": np.sum(k * J * k, axis=-1) / np.sum(k * k, axis=-1),
        "momentum_norm": norm * c,
    }
    with np.errstate(over="ignore", under="ignore"):
        energy = E * c * c  # 0 below the smallest subnormal, inf above float64
    if np.all(np.isfinite(energy)):
        measures["energy"] = energy
    else:
        with pytest.raises(InputError, match=r"^trajectory, inv_inertia: .*kinetic energy"):
            quiet(lambda: diagnostics.energy(run, J))
    for name, expected in measures.items():
        got = quiet(lambda n=name: getattr(diagnostics, n)(run, J))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15, err_msg=name)
    s = quiet(lambda: diagnostics.score(run, J, reference=q, attitude="end"))
    np.testing.assert_allclose(s.energy_error, np.max(np.abs(E / E[0] - 1.0)), rtol=1e-12)
    np.testing.assert_allclose(s.momentum_drift, np.max(np.abs(norm / norm[0] - 1.0)), rtol=1e-12)
    # Forced-motion scores against a reference of the same size: the same relative numbers.
    ref_run, _, _ = _scaled_run(c)
    ref = (ref_run[0], ref_run[1], ref_run[2] * 1.25)
    s = quiet(lambda: diagnostics.score(run, J, ref, attitude="end", drift="reference"))
    E_ref = 1.25**2 * E
    np.testing.assert_allclose(s.energy_error, np.max(np.abs(E - E_ref)) / E_ref[0], rtol=1e-12)


def test_a_ratio_beyond_the_float_range_is_inf_and_a_quantity_raises():
    """A run whose |L| grew by 2**600 has E/E0 = 2**1200: the ratio measures and the score
    of the run (a blow-up) report inf, as documented, while E itself raises naming the
    trajectory; |L|/|L0| = 2**600 is still a number."""
    run, Lb, J = _scaled_run(1.0)
    t, q, w = run
    w = w.copy()
    w[-1] *= 2.0**600
    assert quiet(lambda: diagnostics.energy_error((t, q, w), J))[-1] == np.inf
    with pytest.raises(InputError, match=r"^trajectory, inv_inertia: .*kinetic energy"):
        quiet(lambda: diagnostics.energy((t, q, w), J))
    s = quiet(lambda: diagnostics.score((t, q, w), J, reference=q, attitude="end"))
    assert s.energy_error == np.inf
    norm = np.linalg.norm(Lb, axis=-1)
    drift = quiet(lambda: diagnostics.momentum_drift((t, q, w), J))
    assert drift[-1] == pytest.approx(2.0**600 * norm[-1] / norm[0] - 1.0, rel=1e-12)


def test_first_flip_time_of_a_huge_or_tiny_momentum_is_the_unit_ones():
    """The flip time does not depend on the size of L_b (with J L_b t fixed): at 1e200
    (|L0|² and L × J L beyond float64) it was nan."""
    rng = np.random.default_rng(5)
    J = np.array([[1.0, 0.55, 0.3]])
    t = np.linspace(0.0, 30.0, 301)
    L0 = np.array([0.05, 1.0, 0.05])
    q, w = torque_free(
        rotation.random_quat((), rng), rotation.quat_rotate([1.0, 0, 0, 0], J[0] * L0), J[0], t
    )
    Lb = rotation.quat_rotate(rotation.quat_conjugate(q), w) / J[0]
    unit = diagnostics.first_flip_time(t, Lb[:, None, :], J)
    assert np.isfinite(unit).all()
    np.testing.assert_allclose(unit, hermite_flip(t, Lb, J[0]), atol=FLIP_ATOL)
    for c in (2.0**700, 2.0**-700):
        # L c with J / c: the same omega, so the same motion in time.
        got = quiet(lambda c=c: diagnostics.first_flip_time(t, Lb[:, None, :] * c, J / c))
        np.testing.assert_allclose(got, unit, rtol=0, atol=1e-12)


def test_regression_a_reference_attitude_that_is_no_rotation_is_named():
    # The long campaign (issue 27): a reference of quaternions (5e-324, 0, 0, 0), whose
    # squared norm underflows to 0, raised naming "q", no argument of score.
    t = np.array([0.0, 0.5, 1.0])
    q = np.tile(rotation.rotvec_to_quat([0.2, -0.1, 0.3]), (3, 1))
    w = np.tile([0.3, -1.0, 0.4], (3, 1))
    bad = np.tile([5e-324, 0.0, 0.0, 0.0], (3, 1))
    with pytest.raises(InputError, match=r"^reference: expected nonzero quaternions"):
        diagnostics.score((t, q, w), [1.0, 0.6, 0.35], reference=(t, bad, w))

"""``step`` / ``simulate``: consistency, records, batching, dtypes, torque forms, bad input."""

from __future__ import annotations

import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import tumble
import tumble.methods
from matrix import EVERY_METHOD
from oracles import angle, quiet
from tumble import InputError, rigid
from tumble._kernels.rigid import flows, steps

# step repeated and simulate run the same float64 kernels; they differ only by the round
# trip omega -> L_b at each step (a few ulps per step, 20 steps).
CONSISTENCY_ATOL = 1e-13

J = np.array([1.0, 0.6, 0.35])
Q0 = np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2])
W0 = np.array([0.46, -0.34, 0.44])
TAU = np.array([0.3, -0.2, 0.1])


@pytest.mark.parametrize(
    ("method", "torque"),
    [(m, None) for m in EVERY_METHOD] + [(m, TAU) for m in EVERY_METHOD if m != "exact"],
    ids=[f"{m}-free" for m in EVERY_METHOD] + [f"{m}-torque" for m in EVERY_METHOD if m != "exact"],
)
def test_step_repeated_equals_simulate(method: str, torque) -> None:
    h, n = 0.07, 20
    tr = rigid.simulate(Q0, W0, J, h, n, method, torque=torque)
    q, w = Q0, W0
    for i in range(n):
        q, w = rigid.step(q, w, J, h, method, torque=torque)
        assert angle(q, tr.q[i + 1]) < CONSISTENCY_ATOL
        np.testing.assert_allclose(w, tr.omega[i + 1], rtol=0, atol=CONSISTENCY_ATOL)
    np.testing.assert_allclose(tr.t, h * np.arange(n + 1), rtol=1e-15)


def test_records_every_with_final_state() -> None:
    full = rigid.simulate(Q0, W0, J, 0.05, 23, "momentum_first")
    part = rigid.simulate(Q0, W0, J, 0.05, 23, "momentum_first", every=5)
    idx = [0, 5, 10, 15, 20, 23]
    assert part.q.shape == (6, 4)
    np.testing.assert_allclose(part.t, full.t[idx])
    for name in ("q", "omega", "L", "L_body", "energy"):
        np.testing.assert_array_equal(getattr(part, name), getattr(full, name)[idx])
    exact_multiple = rigid.simulate(Q0, W0, J, 0.05, 20, "momentum_first", every=5)
    assert exact_multiple.t.shape == (5,)
    zero = rigid.simulate(Q0, W0, J, 0.05, 0, "momentum_first", every=5)
    assert zero.q.shape == (1, 4)
    np.testing.assert_allclose(zero.q[0], Q0, rtol=1e-15)
    np.testing.assert_allclose(zero.omega[0], W0, rtol=1e-15)


def test_trajectory_fields_are_consistent() -> None:
    tr = rigid.simulate(Q0, W0, J, 0.1, 30, "splitting", every=3)
    np.testing.assert_allclose(tr.L, rigid.angular_momentum(tr.q, tr.omega, J), rtol=1e-12)
    np.testing.assert_allclose(tr.energy, rigid.energy(tr.q, tr.omega, J), rtol=1e-12)
    body = Rotation.from_quat(tr.q, scalar_first=True).inv().apply(tr.L)
    np.testing.assert_allclose(tr.L_body, body, rtol=0, atol=1e-13)


def test_batched_bodies_match_one_at_a_time(rng: np.random.Generator) -> None:
    q = Rotation.random(6, rng=rng).as_quat(scalar_first=True).reshape(2, 3, 4)
    w = rng.normal(size=(2, 3, 3))
    Jb = rng.uniform(0.2, 2.0, size=(3, 3))  # broadcasts over the first batch axis
    tr = rigid.simulate(q, w, Jb, 0.05, 17, "modified_jolt", torque=TAU, every=4)
    assert tr.q.shape == (6, 2, 3, 4)
    assert tr.energy.shape == (6, 2, 3)
    for i in range(2):
        for j in range(3):
            one = rigid.simulate(
                q[i, j], w[i, j], Jb[j], 0.05, 17, "modified_jolt", torque=TAU, every=4
            )
            np.testing.assert_array_equal(one.q, tr.q[:, i, j])
            np.testing.assert_array_equal(one.omega, tr.omega[:, i, j])
    q1, w1 = rigid.step(q, w, Jb, 0.05, "rk4")
    assert q1.shape == (2, 3, 4)
    assert w1.shape == (2, 3, 3)


def test_empty_batch() -> None:
    tr = rigid.simulate(np.zeros((0, 4)), np.zeros((0, 3)), J, 0.1, 5, "jolt")
    assert tr.q.shape == (6, 0, 4)


@pytest.mark.parametrize("method", [m for m in EVERY_METHOD if m != "exact"])
def test_float32_runs_and_matches_float64(method: str) -> None:
    args32 = [a.astype(np.float32) for a in (Q0, W0, J)]
    tr32 = rigid.simulate(*args32, 0.05, 40, method, torque=TAU.astype(np.float32), every=8)
    tr64 = rigid.simulate(
        *[a.astype(np.float64) for a in args32],
        0.05,
        40,
        method,
        torque=TAU.astype(np.float32).astype(np.float64),
        every=8,
    )
    for name in ("t", "q", "omega", "L", "L_body", "energy"):
        a = getattr(tr32, name)
        assert a.dtype == np.float32, name
        # The kernels compute in float64 and round the records: float32 round-off only.
        np.testing.assert_allclose(a, getattr(tr64, name), rtol=2e-6, atol=2e-6)
    q1, w1 = rigid.step(*args32, 0.05, method)
    assert q1.dtype == np.float32
    assert w1.dtype == np.float32


def test_regression_float32_records_beyond_float32_raise_naming_the_inputs() -> None:
    # The loop forms L_b = I omega in float64: here 1e40, beyond float32 (3.4e38) but not
    # float64. float32 inputs must not get infinities and NumPy's cast warning back.
    q, w, inv = np.array([1.0, 0, 0, 0]), np.array([1e10, 0, 0]), np.array([1e-30, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"^q, omega, inv_inertia, dt: .* fit float32"):
            rigid.simulate(*(a.astype(np.float32) for a in (q, w, inv)), 0.01, 3, "jolt")
        # In float64 the same body is fine: a spin about the first axis, L_b = omega / J.
        tr = rigid.simulate(q, w, inv, 0.01, 3, "jolt")
    np.testing.assert_allclose(tr.L_body[-1], [1e10 / 1e-30, 0, 0], rtol=1e-15)


def test_float32_exact() -> None:
    args32 = [a.astype(np.float32) for a in (Q0, W0, J)]
    tr = rigid.simulate(*args32, 0.05, 10, "exact")
    assert tr.q.dtype == np.float32
    ref = rigid.simulate(Q0, W0, J, 0.05, 10, "exact")
    assert np.max(angle(ref.q, tr.q.astype(np.float64))) < 1e-5


@pytest.mark.parametrize("method", ["momentum_first", "splitting", "rk4", "explicit"])
def test_torque_callable_equals_array(method: str) -> None:
    calls = []

    def torque(t, q, omega):
        calls.append(t)
        assert q.shape == (2, 4)
        assert omega.shape == (2, 3)
        return TAU

    q = np.stack([Q0, [1.0, 0, 0, 0]])
    w = np.stack([W0, [0.1, 0.2, -0.3]])
    a = rigid.simulate(q, w, J, 0.05, 11, method, torque=TAU, every=3)
    b = rigid.simulate(q, w, J, 0.05, 11, method, torque=torque, every=3)
    for name in ("q", "omega", "L", "L_body", "energy"):
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=0, atol=1e-15)
    np.testing.assert_allclose(calls, 0.05 * np.arange(11))
    s1 = rigid.step(q, w, J, 0.05, method, torque=TAU)
    s2 = rigid.step(q, w, J, 0.05, method, torque=lambda t, q, w: TAU)
    np.testing.assert_array_equal(s1[0], s2[0])


def test_torque_callable_sees_the_state() -> None:
    """A restoring torque ``-k omega`` (a damper) evaluated on the current state."""
    c = 0.5
    tr = rigid.simulate(
        Q0,
        W0,
        J,
        0.01,
        300,
        "momentum_first",
        torque=lambda t, q, w: -c * rigid.angular_momentum(q, w, J),
        every=100,
    )
    # dL/dt = -c L: |L| decays like exp(-c t) (first order in dt).
    n = np.linalg.norm(tr.L, axis=-1)
    np.testing.assert_allclose(n / n[0], np.exp(-c * tr.t), rtol=5e-3)


def test_torque_callable_bad_result() -> None:
    with pytest.raises(InputError, match="torque"):
        rigid.simulate(Q0, W0, J, 0.1, 3, "jolt", torque=lambda t, q, w: [1.0, 2.0])
    with pytest.raises(InputError, match="broadcast"):
        rigid.simulate(Q0, W0, J, 0.1, 3, "jolt", torque=lambda t, q, w: np.ones((5, 3)))


# --------------------------------------------------------------------------------------
# degenerate states on purpose


@pytest.mark.parametrize("method", EVERY_METHOD)
@pytest.mark.parametrize(
    ("Jb", "w_body"),
    [
        ((1.0, 0.6, 0.35), (0.0, 0.0, 0.0)),  # L = 0
        ((1.0, 0.6, 0.35), (0.0, 1.3, 0.0)),  # k = 0: steady spin about a principal axis
        ((0.8, 0.8, 0.8), (0.3, -1.0, 0.5)),  # spherical: k = 0 for every L
        ((0.8, 0.8, 0.3), (0.3, -1.0, 0.0)),  # symmetric, L in the degenerate plane: k = 0
        ((1.0, 0.6, 0.35), (1e-300, 1e-300, 1e-300)),  # tiny but nonzero
    ],
    ids=["L0", "principal", "spherical", "degenerate-plane", "tiny"],
)
def test_degenerate_states_step_without_nan(method: str, Jb, w_body) -> None:
    Jb = np.array(Jb)
    w0 = Rotation.from_quat(Q0, scalar_first=True).apply(w_body)
    tr = rigid.simulate(Q0, w0, Jb, 0.3, 10, method)
    for name in ("q", "omega", "L", "L_body", "energy"):
        assert np.all(np.isfinite(getattr(tr, name))), name
    if method not in ("splitting", "midpoint", "rk4", "none", "implicit"):
        # k = 0: omega ∥ L, so the exact motion is a steady turn about omega0 and every
        # gyroscopic-aware method with an exact exponential reproduces it.
        turn = Rotation.from_rotvec(np.outer(tr.t, w0)) * Rotation.from_quat(Q0, scalar_first=True)
        assert np.max(angle(turn.as_quat(scalar_first=True), tr.q)) < 1e-12


# --------------------------------------------------------------------------------------
# the implicit methods' Newton systems


def test_catto_jacobian_matches_finite_differences(rng: np.random.Generator) -> None:
    for _ in range(20):
        w = tuple(rng.normal(size=3))
        w1 = tuple(rng.normal(size=3))
        inertia = tuple(rng.uniform(0.3, 3.0, size=3))
        h = float(rng.uniform(0.01, 0.5))
        jac = np.array(steps.catto_jacobian(w, inertia, h)).reshape(3, 3)
        d = 1e-6
        fd = np.empty((3, 3))
        for j in range(3):
            e = np.zeros(3)
            e[j] = d
            fp = np.array(steps.catto_residual(tuple(np.add(w, e)), w1, inertia, h))
            fm = np.array(steps.catto_residual(tuple(np.subtract(w, e)), w1, inertia, h))
            fd[:, j] = (fp - fm) / (2 * d)
        # The residual is quadratic: the central difference is exact up to round-off
        # (~1e-16 / 1e-6 relative to the entries).
        np.testing.assert_allclose(jac, fd, rtol=0, atol=1e-8)


def test_implicit_is_one_newton_step_of_implicit_euler() -> None:
    """The step's body ``omega`` is ``w1 - Jac(w1)⁻¹ f(w1)``, solved independently."""
    h = 0.2
    Lb = np.array([0.5, -0.8, 0.6])
    Ib = 1 / J
    w1 = J * Lb
    jac = np.array(steps.catto_jacobian(tuple(w1), tuple(Ib), h)).reshape(3, 3)
    w2 = w1 - np.linalg.solve(jac, h * np.cross(w1, Ib * w1))
    _q, L = steps.step_implicit(
        (1.0, 0.0, 0.0, 0.0), tuple(Lb), tuple(J), tuple(Ib), (0.0, 0.0, 0.0), h
    )
    np.testing.assert_allclose(np.array(L) * J, w2, rtol=1e-13)


def test_midpoint_solves_its_implicit_equation() -> None:
    Lb = (0.5, -0.8, 0.6)
    for h in (0.05, 0.5, 2.0):
        Lbar = np.array(flows.midpoint_momentum(Lb, tuple(J), h))
        residual = Lbar - np.array(Lb) - 0.5 * h * np.cross(Lbar, J * Lbar)
        assert np.linalg.norm(residual) < 1e-15


# --------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"q": [1, 0, 0]}, "q"),
        ({"q": [0, 0, 0, 0]}, "q"),
        ({"omega": [1, 2]}, "omega"),
        ({"omega": [np.nan, 0, 0]}, "omega"),
        ({"inv_inertia": [1, 2]}, "inv_inertia"),
        ({"inv_inertia": [1, -0.5, 1]}, "inv_inertia"),
        ({"inv_inertia": [1, np.inf, 1]}, "inv_inertia"),
        ({"dt": np.nan}, "dt"),
        ({"dt": "0.1"}, "dt"),
        ({"method": "euler"}, "method"),
        ({"method": "exact", "torque": [0, 0, 1]}, "torque"),
        ({"method": "exact", "torque": lambda t, q, w: [0, 0, 1]}, "torque"),
        ({"torque": [0, 0]}, "torque"),
        ({"torque": [0, np.inf, 0]}, "torque"),
        ({"q": np.ones((2, 4)), "omega": np.ones((3, 3))}, "broadcast"),
    ],
)
def test_step_and_simulate_reject(kwargs, match: str) -> None:
    base = {"q": Q0, "omega": W0, "inv_inertia": J, "dt": 0.1, "method": "jolt"}
    base.update(kwargs)
    with pytest.raises(InputError, match=match):
        rigid.step(**base)
    with pytest.raises(InputError, match=match):
        rigid.simulate(steps=3, **base)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"steps": -1}, "steps"),
        ({"steps": 2.5}, "steps"),
        ({"every": 0}, "every"),
        ({"every": True}, "every"),
    ],
)
def test_simulate_rejects_counts(kwargs, match: str) -> None:
    base = {"steps": 3, "every": 1}
    base.update(kwargs)
    with pytest.raises(InputError, match=match):
        rigid.simulate(Q0, W0, J, 0.1, method="jolt", **base)


# --------------------------------------------------------------------------------------
# regressions: overflow used to give NaN silently (kinematics already raised)


def test_step_overflow_names_the_inputs_instead_of_nan() -> None:
    q, J = [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0]
    for method in ("momentum_first", "explicit", "rk4"):
        with pytest.raises(InputError, match=r"^q, omega, inv_inertia, dt: .*overflows"):
            rigid.step(q, [1e200, 1e200, 0.0], J, 0.1, method)
    with pytest.raises(InputError, match=r"^q, omega, inv_inertia, torque, dt: "):
        rigid.step(q, [1.0, 2.0, 3.0], J, 1e300, "jolt", torque=[1.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r"^dt: expected \|t\| J_max"):
        rigid.step(q, [1.0, 2.0, 3.0], J, 1e300, "exact")


def test_simulate_first_step_overflow_raises_like_step() -> None:
    q, w, J = [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]
    with pytest.raises(InputError, match=r"^q, omega, inv_inertia, dt: "):
        rigid.simulate(q, w, J, 1e300, 2, "rk4")
    with pytest.raises(InputError, match=r"^q, omega, inv_inertia, torque, dt: "):
        rigid.simulate(q, w, J, 1e300, 2, "rk4", torque=lambda t, q_, w_: np.zeros(3))
    with pytest.raises(InputError, match=r"^dt, steps: "):
        rigid.simulate(q, w, J, 1e300, 2, "exact")


def test_regression_an_overflowing_step_raises_rather_than_give_a_zero_quaternion() -> None:
    # The long campaign (issue 27): rk4 with |omega| dt = 1e14 returned q = (0, 0, -0, 0)
    # (its quaternion stage's squared norm overflowed and normalised to zero), one body or
    # many, and simulate kept that record with a DivergenceWarning.
    w, tau = np.array([0.3, -1.0, 0.4]), np.array([0.0, 0.1, 0.0])
    for dt in (1e14, 3e18):
        for args in ((Q0, w, J), (Q0[None], w[None], J[None]), (list(Q0), list(w), list(J))):
            with pytest.raises(InputError, match=r"^q, omega, inv_inertia, torque, dt: "):
                rigid.step(*args, dt, "rk4", torque=tau)
        with pytest.raises(InputError, match=r"^q, omega, inv_inertia, torque, dt: "):
            rigid.simulate(Q0, w, J, dt, 3, "rk4", torque=tau)


def test_regression_simulate_momentum_or_times_beyond_the_float_range_raise_quietly() -> None:
    # The long campaign (issue 27): a subnormal inverse moment (L_b = omega_b / J beyond the
    # float range) and record times 3 dt beyond it raised only after NumPy's overflow
    # warnings.
    w, tau = np.array([0.3, -1.0, 0.4]), np.array([0.0, 0.1, 0.0])
    for Jb in (np.array([1.0, 1e-320, 0.35]), np.array([5e-324, 5e-324, 0.0])):
        with pytest.raises(InputError, match=r"body momentum L = I omega overflows"):
            quiet(lambda Jb=Jb: rigid.simulate(Q0, w, Jb, 0.01, 3, "rk4", torque=tau))
        with pytest.raises(InputError, match=r"body momentum L = I omega overflows"):
            quiet(lambda Jb=Jb: rigid.step(Q0, w, Jb, 0.01, "rk4", torque=tau))
    with pytest.raises(InputError, match=r"^dt, steps: too large"):
        quiet(lambda: rigid.simulate(Q0, w, J, 1e308, 3, "rk4", torque=tau))


def test_simulate_divergence_warns_and_keeps_records() -> None:
    """explicit blows up after O(1/dt²) steps: a DivergenceWarning, the records kept."""
    q, w, J = [1.0, 0.0, 0.0, 0.0], [0.1, 2.0, 3.0], [1.0, 0.5, 0.2]
    with np.errstate(all="ignore"), pytest.warns(rigid.DivergenceWarning) as info:
        tr = rigid.simulate(q, w, J, 0.5, 4000, "explicit", every=10)
    # A record is non-finite when its q, omega or energy is (the energy overflows first:
    # since the exponential takes huge rotation vectors scaled, q stays finite longer).
    finite = (
        np.all(np.isfinite(tr.q), axis=-1)
        & np.all(np.isfinite(tr.omega), axis=-1)
        & np.isfinite(tr.energy)
    )
    first = int(np.argmin(finite))
    assert not finite[-1]
    assert finite[0]
    assert np.all(finite[:first])
    message = str(info[0].message)
    assert f"record {first} (t = {tr.t[first]:.6g})" in message
    assert issubclass(rigid.DivergenceWarning, tumble.TumbleWarning)
    # the stable methods on the same input do not warn (pytest turns TumbleWarning to errors)
    assert np.all(np.isfinite(rigid.simulate(q, w, J, 0.5, 4000, "splitting", every=10).q))


def test_simulate_on_divergence_ignore_is_silent_and_thread_safe() -> None:
    """``on_divergence="ignore"``: the same records, no warning, from many threads at once.

    The warning filters of :func:`warnings.catch_warnings` are process-global, so threads
    that silence the warning that way restore each other's filters; the keyword does not
    touch them (pytest turns TumbleWarning into errors, so a leaked warning fails here).
    """
    q, w, J = [1.0, 0.0, 0.0, 0.0], [0.1, 2.0, 3.0], [1.0, 0.5, 0.2]
    with np.errstate(all="ignore"), pytest.warns(rigid.DivergenceWarning):
        loud = rigid.simulate(q, w, J, 0.5, 4000, "explicit", every=10)

    def quiet(_: int) -> rigid.Trajectory:
        return rigid.simulate(q, w, J, 0.5, 4000, "explicit", every=10, on_divergence="ignore")

    with np.errstate(all="ignore"), ThreadPoolExecutor(8) as pool:
        runs = list(pool.map(quiet, range(64)))
    for run in runs:
        np.testing.assert_array_equal(run.q, loud.q)
    with pytest.raises(InputError, match="on_divergence: expected one of 'warn', 'ignore'"):
        rigid.simulate(q, w, J, 0.5, 1, "explicit", on_divergence="raise")


# ------------------------------------------------- regressions from the bad-input campaign

_Q = [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (
            lambda: rigid.angular_acceleration([0, 0, 0], [1e200, 1e200, 0], _Q, [1, 2, 3]),
            "torque, omega",
        ),
        (
            lambda: rigid.angular_acceleration([1e308, 0, 0], [0, 0, 0], _Q, [1e10, 2, 3]),
            "torque, omega",
        ),
        (lambda: rigid.angular_momentum(_Q, [1e200, 0, 0], [1e-200, 2, 3]), "omega, inv_inertia"),
        (lambda: rigid.angular_momentum(_Q, [1, 1, 1], [5e-324, 2, 3]), "omega, inv_inertia"),
        (lambda: rigid.energy(_Q, [1e200, 0, 0], [1, 2, 3]), "omega, inv_inertia"),
        (lambda: rigid.energy(_Q, [1, 1, 1], [5e-324, 2, 3]), "omega, inv_inertia"),
    ],
)
def test_regression_angular_acceleration_momentum_energy_overflow_raise(call, names):
    # omega = 1e200, torque = 1e308 or a subnormal inverse moment gave NaN/inf (with a
    # NumPy warning), where rigid.step raises InputError for the same state.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=f"^{names}"):
            call()


def test_regression_huge_but_representable_values_are_computed():
    # the rule: compute when the answer is representable
    L = rigid.angular_momentum(_Q, [1e150, 0, 0], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(L, [1e150, 0.0, 0.0])
    assert rigid.energy(_Q, [1e150, 0, 0], [1.0, 2.0, 3.0]) == pytest.approx(0.5e300, rel=1e-15)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda r: rigid.angular_momentum(_Q, r, [1, 2, 3]), "omega"),
        (lambda r: rigid.energy(r, [0, 0, 1], [1, 2, 3]), "q"),
        (lambda r: rigid.angular_acceleration(r, [0, 0, 1], _Q, [1, 2, 3]), "torque"),
        (lambda r: rigid.world_inverse_inertia(_Q, r), "inv_inertia"),
        (lambda r: rigid.step(_Q, [0, 0, 1], r, 0.1, "rk4"), "inv_inertia"),
        (lambda r: rigid.simulate(_Q, r, [1, 2, 3], 0.1, 3, "rk4"), "omega"),
    ],
)
def test_regression_ragged_nested_lists_name_the_argument(call, name):
    # Ragged lists reached np.asarray before validation: "setting an array element with a
    # sequence" (a bare ValueError) in six rigid functions.
    with pytest.raises(InputError, match=f"^{name}: expected a real array"):
        call([[1.0, 2.0, 3.0], [1.0, 2.0]])


def test_regression_simulate_steps_10_9_checks_the_records_first():
    # simulate(..., steps=10**9) reserved about 112 GB of records before running.
    with pytest.raises(InputError, match=r"^steps, every: 1000000001 records would take 112 GiB"):
        rigid.simulate(_Q, [0, 0, 1], [1, 2, 3], 0.1, 10**9, "rk4")
    with tumble.memory_limit(112 * 11 + 88):  # exactly the records of 10 steps
        tr = rigid.simulate(_Q, [0, 0, 1], [1, 2, 3], 0.1, 10, "rk4")
    assert tr.q.shape == (11, 4)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"every": 10**20}, "every"), ({"steps": 2**63}, "steps"), ({"steps": 2**64}, "steps")],
)
def test_regression_simulate_every_1e20_and_steps_2_63_are_range_checked(kwargs, name):
    # every=10**20 or steps=2**63 gave OverflowError from NumPy or numba.
    args = {"steps": 10, "every": 1, **kwargs}
    with pytest.raises(InputError, match=f"^{name}: expected an integer <= {2**63 - 1}"):
        rigid.simulate(_Q, [0, 0, 1], [1, 2, 3], 0.1, args["steps"], "rk4", every=args["every"])


# --------------------------------------------------------------------------------------
# the package: listing without numba, the compiled half on first access


def test_listing_methods_imports_no_numba() -> None:
    """The registry's names of ``tumble.rigid`` load neither numba nor the compiled
    half (a fresh interpreter: this one has them already)."""
    probe = (
        "import sys\n"
        "from tumble import rigid\n"
        "rigid.METHODS, rigid.ORDERS, rigid.COMPOSITIONS, rigid.DivergenceWarning\n"
        "info = rigid.method_info('splitting:suzuki4')\n"
        "rigid.check_method('rk4', 'method')\n"
        "print(info.name, info.order, 'numba' in sys.modules)\n"
        "print(sorted(m for m in sys.modules if m.startswith('tumble.rigid.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    listing, loaded = run.stdout.splitlines()
    assert listing == "splitting:suzuki4 4 False"
    assert loaded == "['tumble.rigid.divergence']"


def test_compiled_names_are_the_same_objects_by_every_path() -> None:
    """``rigid.name``, ``from tumble.rigid import name`` and the defining module's object
    are one object, for every name of ``__all__``; ``dir`` lists them all."""
    from tumble.rigid import (
        angular_acceleration,
        angular_momentum,
        dynamics,
        energy,
        integrate,
        principal_axes,
        simulate,
        step,
        world_inverse_inertia,
    )

    imported = [
        angular_acceleration, angular_momentum, energy, principal_axes, world_inverse_inertia,
        simulate, step,
    ]  # fmt: skip
    assert imported == [getattr(dynamics, n) for n in dynamics.__all__] + [
        getattr(integrate, n) for n in integrate.__all__
    ]
    for module in (dynamics, integrate):
        for name in module.__all__:
            assert getattr(rigid, name) is getattr(module, name)
            assert vars(rigid)[name] is getattr(module, name)  # stored: plain lookups later
    assert set(rigid.__all__) <= set(dir(rigid))
    assert all(getattr(rigid, name) is not None for name in rigid.__all__)
    assert rigid.METHODS == tuple(info.name for info in tumble.methods.REGISTRY)
    with pytest.raises(AttributeError, match=r"tumble.rigid' has no attribute 'stepp'"):
        rigid.stepp  # noqa: B018

"""The article's parametrisation and the scoring of methods (tumble.scenarios)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tumble import InputError, diagnostics, exact, rigid, scenarios

# Closed-form set-ups evaluated through a quaternion: a few ulps.
SETUP_RTOL = 1e-14


@pytest.mark.parametrize(
    ("min_j", "median_j", "energy"),
    [(0.5, 0.5, 0.4), (0.1, 0.0, 0.0), (5.0, 1.0, 1.0), (2.0, 0.3, 0.8)],
)
def test_article_case_matches_the_parametrisation(min_j, median_j, energy) -> None:
    c = scenarios.article_case(min_j, median_j, energy, steps_per_rotation=32, rotations=3)
    np.testing.assert_allclose(c.inv_inertia, [min_j, min_j + median_j, min_j + 1.0], rtol=0)
    L = rigid.angular_momentum(c.q0, c.omega0, c.inv_inertia)
    np.testing.assert_allclose(L, [0.0, 0.0, 1.0], rtol=0, atol=SETUP_RTOL * 8)
    # J_L(0) = 2E/|L|² = min_j + energy: the energy fraction between min and max.
    two_e = 2.0 * rigid.energy(c.q0, c.omega0, c.inv_inertia)
    assert two_e == pytest.approx(min_j + energy, rel=SETUP_RTOL * 8)
    # Initial attitude Q(θ ŷ).
    rotvec = Rotation.from_quat(c.q0, scalar_first=True).as_rotvec()
    assert rotvec[0] == 0.0
    assert rotvec[2] == 0.0
    assert c.period == pytest.approx(2.0 * math.pi, rel=SETUP_RTOL)
    assert c.dt == pytest.approx(2.0 * math.pi / 32, rel=SETUP_RTOL)
    assert c.steps == 96


def test_defaults_run_the_article_duration() -> None:
    c = scenarios.article_case()
    assert c.duration == pytest.approx(40.0 * math.pi, rel=1e-14)
    assert c.steps == 64 * 20


def test_explicit_case() -> None:
    J = np.array([1.0, 0.6, 0.35])
    w = np.array([0.5, -0.48, 0.21])
    c = scenarios.explicit_case(J, w, steps_per_rotation=10, rotations=2.5)
    np.testing.assert_array_equal(c.q0, [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(c.omega0, w)
    L = np.linalg.norm(w / J)
    assert c.period == pytest.approx(2.0 * math.pi / (0.65 * L), rel=SETUP_RTOL)
    assert c.steps == 25
    assert c.dt == pytest.approx(c.period / 10, rel=SETUP_RTOL)


def test_rotation_period_symmetries() -> None:
    J = np.array([1.0, 0.6, 0.35])
    P = scenarios.rotation_period(J, 2.0)
    assert scenarios.rotation_period(J + 3.0, 2.0) == pytest.approx(P, rel=SETUP_RTOL)
    assert scenarios.rotation_period(4.0 * J, 2.0) == pytest.approx(P / 4.0, rel=SETUP_RTOL)
    # A spherical body: the spin period 2π/|omega|.
    assert scenarios.rotation_period([0.5, 0.5, 0.5], 2.0) == pytest.approx(2.0 * math.pi)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"min_j": 0.0}, "min_j"),
        ({"min_j": -1.0}, "min_j"),
        ({"min_j": float("nan")}, "min_j"),
        ({"median_j": 1.5}, "median_j"),
        ({"median_j": -0.1}, "median_j"),
        ({"energy": 1.01}, "energy"),
        ({"energy": "a"}, "energy"),
        ({"steps_per_rotation": 0}, "steps_per_rotation"),
        ({"steps_per_rotation": 2.5}, "steps_per_rotation"),
        ({"rotations": -1}, "rotations"),
        ({"rotations": scenarios.MAX_ROTATIONS * 10}, "rotations: expected at most"),
        ({"steps_per_rotation": scenarios.MAX_STEPS_PER_ROTATION + 1}, "steps_per_rotation"),
    ],
)
def test_article_case_rejects_bad_input(kwargs, name) -> None:
    with pytest.raises(InputError, match=name):
        scenarios.article_case(**kwargs)


@pytest.mark.parametrize(
    ("J", "w", "name"),
    [
        ([1.0, -0.6, 0.35], [0.1, 0.2, 0.3], "inv_inertia"),
        ([1.0, 0.6], [0.1, 0.2, 0.3], "inv_inertia"),
        ([[1.0, 0.6, 0.35]] * 2, [0.1, 0.2, 0.3], "inv_inertia"),
        ([1.0, 0.6, 0.35], [0.1, 0.2], "omega_body"),
        ([1.0, 0.6, 0.35], [0.0, 0.0, 0.0], "omega_body"),
        ([1.0, 0.6, 0.0], [0.1, 0.2, 0.3], "omega_body"),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], "inv_inertia"),
        ([1.0, 0.6, 0.35], [1e-320, 0.0, 0.0], "omega_body"),
        ([1e-300, 0.6, 0.35], [1e300, 0.0, 0.0], "omega_body, inv_inertia"),
        ([1.0, 0.6, 0.35], [0.1, np.inf, 0.3], "omega_body"),
    ],
)
def test_explicit_case_rejects_bad_input(J, w, name) -> None:
    # |L| = 0 and the like were reported as "momentum", rotation_period's argument.
    with pytest.raises(InputError, match=f"^{name}: "):
        scenarios.explicit_case(J, w)


def test_regression_periods_beyond_the_float_range_name_their_arguments() -> None:
    # The long campaign (issue 27): 2π / (rate |L|) of subnormal rates and momenta divided
    # by zero (ZeroDivisionError), and a period that underflowed to 0 reached Case, whose
    # error named "dt", no argument of explicit_case.
    with pytest.raises(InputError, match=r"^inv_inertia, momentum: too small"):
        scenarios.rotation_period([5e-324, 5e-324, 0.0], 5e-324)
    with pytest.raises(InputError, match=r"^momentum: too small"):
        scenarios.rotation_period([1.0, 0.6, 0.35], 1e-320)
    with pytest.raises(InputError, match=r"^inv_inertia, momentum: too large"):
        scenarios.rotation_period([1e300, 1.0, 0.5], 1e308)
    with pytest.raises(InputError, match=r"^inv_inertia, omega_body: too large"):
        scenarios.explicit_case([1e300, 1.0, 0.5], [0.0, 1e308, 0.0])
    # Representable periods are computed, however small the factors: 2π / (1e-310 * 1e10).
    assert scenarios.rotation_period([1e-310, 0.0, 0.0], 1e10) == pytest.approx(
        2.0 * math.pi / 1e-300, rel=SETUP_RTOL
    )


def test_rotation_period_rejects_bad_input() -> None:
    with pytest.raises(InputError, match="momentum"):
        scenarios.rotation_period([1.0, 0.5, 0.2], -1.0)
    with pytest.raises(InputError, match="inv_inertia"):
        scenarios.rotation_period([1.0, 0.5], 1.0)


METHODS = ["momentum_first", "splitting", "jolt", "exact"]


def test_scores_equal_direct_diagnostics() -> None:
    """Model check: every score is the diagnostics function applied to a direct simulate,
    and the attitude error is the angle to exact.torque_free computed here with SciPy."""
    c = scenarios.article_case(1.0, 0.3, 0.6, steps_per_rotation=24, rotations=2)
    calls = []
    res = scenarios.run_methods(c, METHODS, every=2, progress=lambda *a: calls.append(a))
    assert list(res) == METHODS
    assert calls == [(i, len(METHODS), m) for i, m in enumerate(METHODS)]
    for m in METHODS:
        tr = rigid.simulate(c.q0, c.omega0, c.inv_inertia, c.dt, c.steps, m, every=2)
        got = res[m].scores
        for name in ("t", "q", "omega", "L", "L_body", "energy"):
            np.testing.assert_array_equal(getattr(res[m].trajectory, name), getattr(tr, name))
        # The record's energy ½ omega·L versus diagnostics' ½ L_b·J L_b: round-off apart.
        direct = np.max(np.abs(tr.energy / tr.energy[0] - 1.0))
        assert got.energy_error == pytest.approx(direct, rel=1e-9, abs=1e-14)
        n = np.linalg.norm(tr.L_body, axis=-1)
        assert got.momentum_drift == pytest.approx(np.max(np.abs(n / n[0] - 1.0)), abs=1e-15)
        Lw = tr.L / np.linalg.norm(tr.L, axis=-1, keepdims=True)
        cosang = np.clip(Lw @ Lw[0], -1.0, 1.0)
        # arccos is only good to ~1e-8 near 0: compare loosely there.
        assert got.direction_drift == pytest.approx(np.max(np.arccos(cosang)), abs=2e-8)
        q_ex, _ = exact.torque_free(c.q0, c.omega0, c.inv_inertia, tr.t)
        ang = (
            Rotation.from_quat(q_ex, scalar_first=True).inv()
            * Rotation.from_quat(tr.q, scalar_first=True)
        ).magnitude()
        # SciPy's magnitude goes through acos-free atan2 but a different composition order.
        assert got.attitude_error_end == pytest.approx(ang[-1], abs=1e-12)
        assert got.attitude_error_max == pytest.approx(np.max(ang), abs=1e-12)
        assert got.ns_per_step > 0
        assert math.isfinite(got.ns_per_step)
        assert got.diverged_at is None
    assert res["exact"].scores.attitude_error_max < 1e-12
    assert res["momentum_first"].scores.direction_drift < 1e-13


def test_scores_exactly_the_diagnostics_functions() -> None:
    c = scenarios.explicit_case([1.0, 0.6, 0.35], [0.5, -0.48, 0.21], 16, 1)
    tr = rigid.simulate(c.q0, c.omega0, c.inv_inertia, c.dt, c.steps, "modified_jolt")
    s = scenarios.score(tr, c.inv_inertia, 12.5)
    J = c.inv_inertia
    assert s.energy_error == float(diagnostics.max_energy_error(tr, J))
    assert s.momentum_drift == float(np.max(np.abs(diagnostics.momentum_drift(tr, J))))
    assert s.direction_drift == float(np.max(diagnostics.direction_drift(tr, J)))
    att = diagnostics.attitude_error(tr, J)
    assert s.attitude_error_end == float(att[-1])
    assert s.attitude_error_max == float(np.max(att))
    assert s.ns_per_step == 12.5


def test_score_against_a_given_reference_equals_solving_it() -> None:
    case = scenarios.article_case(0.5, 0.3, 0.6, 16, 3)
    tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, "jolt")
    q_ref, _ = exact.torque_free(case.q0, case.omega0, case.inv_inertia, tr.t)
    given = scenarios.score(tr, case.inv_inertia, reference_q=q_ref)
    solved = scenarios.score(tr, case.inv_inertia)
    # The two exact solutions differ by the exact solver's round-off (~1e-12 rad).
    assert given.attitude_error_max == pytest.approx(solved.attitude_error_max, abs=1e-10)
    assert given.attitude_error_end == pytest.approx(solved.attitude_error_end, abs=1e-10)
    assert given.energy_error == solved.energy_error
    with pytest.raises(InputError, match=r"reference_q: expected shape \(49, 4\)"):
        scenarios.score(tr, case.inv_inertia, reference_q=q_ref[:-1])


def test_diverging_method_is_scored_on_its_finite_records() -> None:
    """Forward Euler at 3 steps per rotation blows up (|L| -> inf, then NaN)."""
    c = scenarios.article_case(steps_per_rotation=3, rotations=100)
    res = scenarios.run_methods(c, ["explicit"], timing=False)["explicit"]
    s = res.scores
    tr = res.trajectory
    first_bad = int(np.flatnonzero(~np.all(np.isfinite(tr.q), axis=-1))[0])
    assert s.diverged_at is not None
    assert s.diverged_at <= tr.t[first_bad]
    assert math.isnan(s.ns_per_step)
    assert s.momentum_drift > 1e10
    for v in (s.energy_error, s.momentum_drift, s.direction_drift, s.attitude_error_max):
        assert not math.isnan(v)


def test_simulate_runs_the_case_and_keeps_a_blow_up_quiet() -> None:
    """scenarios.simulate is rigid.simulate on the case's fields, with no DivergenceWarning
    (pytest turns TumbleWarning into errors, so a warning would fail this test)."""
    c = scenarios.article_case(steps_per_rotation=3, rotations=100)
    every = 5
    with np.errstate(all="ignore"):
        tr = scenarios.simulate(c, "explicit", every)
        with pytest.warns(rigid.DivergenceWarning):
            loud = rigid.simulate(
                c.q0, c.omega0, c.inv_inertia, c.dt, c.steps, "explicit", every=every
            )
    np.testing.assert_array_equal(tr.q, loud.q)
    np.testing.assert_array_equal(tr.t, loud.t)
    assert not np.all(np.isfinite(tr.q[-1]))


def test_stepping_time_is_per_body_step_and_validates() -> None:
    c = scenarios.article_case(steps_per_rotation=16, rotations=2)
    q, w, J = (np.tile(np.asarray(x, float), (3, 1)) for x in (c.q0, c.omega0, c.inv_inertia))
    t = scenarios.stepping_time(q, w, J, c.dt, c.steps, "momentum_first", runs=2)
    # seconds per body-step, not per call: a call covers >= TIMING_BODY_STEPS body-steps
    # and takes milliseconds, so even a slow, loaded machine stays far below 1e-3 here
    assert 0 < t < 1e-3
    cases = [
        ((q[:2], w, J, c.dt, c.steps, "rk4", 1), "expected shapes"),
        ((q[0], w[0], J[0], c.dt, c.steps, "rk4", 1), "expected shapes"),
        ((q, w[:, :2], J, c.dt, c.steps, "rk4", 1), r"omega: expected shape \(\.\.\., 3\)"),
        ((q, w, J, c.dt, 0, "rk4", 1), "steps: expected"),
        ((q, w, J, c.dt, c.steps, "rk4", 0), "runs: expected"),
        ((q, w, J, c.dt, c.steps, "rk5", 1), "method: expected one of"),
    ]
    for args, message in cases:
        with pytest.raises(InputError, match=message):
            scenarios.stepping_time(*args)


def test_case_functions_reject_what_is_not_a_case() -> None:
    for fn in (
        lambda: scenarios.simulate("article", "rk4"),
        lambda: scenarios.time_per_step({"dt": 0.1}, "rk4"),
        lambda: scenarios.run_methods(None, ["rk4"]),
    ):
        with pytest.raises(InputError, match=r"^case: expected a tumble.scenarios.Case, got "):
            fn()


def test_run_methods_rejects_bad_input() -> None:
    c = scenarios.article_case(rotations=0.1)
    with pytest.raises(InputError, match="methods"):
        scenarios.run_methods(c, ["no_such_method"])
    with pytest.raises(InputError, match="methods"):
        scenarios.run_methods(c, [])
    with pytest.raises(InputError, match="every"):
        scenarios.run_methods(c, ["jolt"], every=0)


def test_zero_steps() -> None:
    c = scenarios.article_case(rotations=0)
    assert c.steps == 0
    s = scenarios.run_methods(c, ["momentum_first"])["momentum_first"].scores
    assert math.isnan(s.ns_per_step)
    assert s.attitude_error_max == 0.0


# ------------------------------------------------- regressions from the bad-input campaign


def test_regression_rotation_period_names_the_argument_at_fault() -> None:
    # rotation_period([0, 0, 0], 1.0) blamed "momentum"; |L| = 1e-320 returned inf.
    with pytest.raises(InputError, match=r"^inv_inertia: expected some J_i > 0"):
        scenarios.rotation_period([0.0, 0.0, 0.0], 1.0)
    with pytest.raises(InputError, match=r"^momentum: expected \|L\| > 0"):
        scenarios.rotation_period([1.0, 0.5, 0.2], 0.0)
    with pytest.raises(InputError, match=r"^momentum: too small"):
        scenarios.rotation_period([1.0, 0.5, 0.2], 1e-320)
    assert scenarios.rotation_period([1.0, 0.5, 0.2], 2.0) == pytest.approx(2 * np.pi / 1.6)


def test_regression_hand_built_case_with_1e12_steps_is_refused() -> None:
    # A hand-built Case(steps=10**12) ran with no bound; every field is now validated.
    c = scenarios.article_case(steps_per_rotation=8, rotations=1)
    fields = {
        "inv_inertia": c.inv_inertia,
        "q0": c.q0,
        "omega0": c.omega0,
        "dt": c.dt,
        "steps": c.steps,
        "period": c.period,
    }
    rebuilt = scenarios.Case(**fields)
    for name, value in fields.items():
        np.testing.assert_array_equal(getattr(rebuilt, name), value)
    for name, bad in (
        ("steps", 10**12),
        ("steps", -1),
        ("steps", 2**64),
        ("steps", 1.5),
        ("dt", 0.0),
        ("dt", np.nan),
        ("q0", [0.0, 0.0, 0.0, 0.0]),
        ("q0", [1.0, 0.0, 0.0]),
        ("omega0", [[0.0, 0.0, 1.0]]),
        ("inv_inertia", [-1.0, 1.0, 1.0]),
        ("period", -1.0),
    ):
        with pytest.raises(InputError, match=f"^{name}: "):
            scenarios.Case(**{**fields, name: bad})


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"runs": 10**6}, "runs"), ({"runs": 2**64}, "runs"), ({"steps": 10**11}, "steps")],
)
def test_regression_stepping_time_runs_10_6_and_2_64_are_bounded(kwargs, name) -> None:
    # stepping_time(..., runs=10**6) ran for hours; runs=2**64 forever.
    c = scenarios.article_case(steps_per_rotation=8, rotations=1)
    args = {"steps": 4, "runs": 1, **kwargs}
    with pytest.raises(InputError, match=f"^{name}: expected an integer <="):
        scenarios.stepping_time(
            c.q0[None],
            c.omega0[None],
            c.inv_inertia[None],
            c.dt,
            args["steps"],
            "rk4",
            args["runs"],
        )


def test_regression_score_of_a_t_q_omega_tuple() -> None:
    # scenarios.score((t, q, omega), J, reference_q=...) raised AttributeError, though
    # diagnostics reads that tuple.
    c = scenarios.article_case(steps_per_rotation=16, rotations=1)
    tr = scenarios.simulate(c, "rk4")
    ref = exact.torque_free(c.q0, c.omega0, c.inv_inertia, tr.t)[0]
    from_tuple = scenarios.score((tr.t, tr.q, tr.omega), c.inv_inertia, reference_q=ref)
    from_run = scenarios.score(tr, c.inv_inertia, reference_q=ref)
    # The tuple has no L_body: it is recomputed from omega, equal to round-off.
    assert from_tuple.diverged_at is from_run.diverged_at is None
    for name in ("energy_error", "momentum_drift", "direction_drift", "attitude_error_max"):
        assert getattr(from_tuple, name) == pytest.approx(getattr(from_run, name), rel=1e-9)
    with pytest.raises(InputError, match=r"^reference_q: expected shape"):
        scenarios.score((tr.t, tr.q, tr.omega), c.inv_inertia, reference_q=ref[1:])


def test_regression_run_methods_progress_5() -> None:
    # run_methods(..., progress=5) raised "'int' object is not callable" mid-run.
    c = scenarios.article_case(steps_per_rotation=8, rotations=1)
    with pytest.raises(InputError, match=r"^progress: expected a callable"):
        scenarios.run_methods(c, ["rk4"], progress=5, timing=False)
    with pytest.raises(InputError, match=r"^progress: expected a function of 3"):
        scenarios.run_methods(c, ["rk4"], progress=lambda i: None, timing=False)
    with pytest.raises(InputError, match=r"^timing: expected a bool"):
        scenarios.run_methods(c, ["rk4"], timing="no")

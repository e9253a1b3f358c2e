"""Sweeps over step rates in Hz and the flip period: the engines' map of issue 28.

Oracles: the case's physics by hand (``|ω(0)| = 2π spin``, ``dt = 1/rate``), the scale
invariance of the torque-free motion, and for the flip period a direct
`tumble.rigid.simulate`, SciPy's cubic Hermite roots of ``L_b,m`` and
`tumble.exact.body_period`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from tumble import InputError, exact, rigid, scenarios, sweep
from tumble.cli import main
from tumble.sweep import dataset

#: The sweep's last flip is the detector's bisection of the same cubic SciPy solves in
#: closed form (60 halvings of a step: far below this), divided by the flip count.
PERIOD_RTOL = 1e-9

#: Two cases that are the same motion at different time scales differ only by the
#: round-off of the scaled states (a few ulps per step over ~1 000 steps).
SCALE_RTOL = 1e-9


def _case(method, rate, spin=2.0, min_j=0.5, rotations=6.0):
    return sweep.SweepCase(method, min_j, 0.5, None, 0.4, 0, rotations, float(rate), spin)


def test_a_rate_case_is_the_steps_case_in_seconds():
    for sc in (_case("rk4", 60, spin=2.0), _case("rk4", 240, spin=0.5, min_j=4.0),
               sweep.SweepCase("rk4", math.nan, math.nan, (1.0, 2.0, 3.0), 0.3, 0, 2.0,
                               30.0, 1.5)):  # fmt: skip
        case = sc.build()
        # The same body, energy and attitude with |L| = 1, by the steps-per-rotation path.
        ref = sweep.SweepCase(*dataclass_values(sc)[:5], 64, 1.0).build()
        assert np.linalg.norm(case.omega0) == pytest.approx(2 * math.pi * sc.spin, rel=1e-15)
        c = np.linalg.norm(case.omega0) / np.linalg.norm(ref.omega0)
        np.testing.assert_allclose(case.omega0, c * ref.omega0, rtol=1e-15)
        np.testing.assert_array_equal(case.q0, ref.q0)
        np.testing.assert_array_equal(case.inv_inertia, ref.inv_inertia)
        assert case.period == pytest.approx(scenarios.rotation_period(case.inv_inertia, c))
        assert case.dt == 1.0 / sc.rate
        assert case.steps == round(sc.rotations * case.period * sc.rate)


def dataclass_values(sc):
    return (sc.method, sc.min_j, sc.median_j, sc.inv_inertia, sc.energy)


def test_only_rate_over_spin_matters():
    # The torque-free motion with L scaled by c is the motion at c times the speed, and
    # every update (the engines' clamps included) sees ω dt: spin 2 at 60 Hz is spin 1 at
    # 30 Hz, up to the time unit.
    cases = [_case("bullet_implicit_body", 60, 2.0), _case("bullet_implicit_body", 30, 1.0)]
    rows = sweep.run_task(cases)
    a, b = (dict(zip(rows, v, strict=True)) for v in zip(*rows.values(), strict=True))
    assert a["steps"] == b["steps"]
    assert a["flips"] == b["flips"] > 0
    for name in ("flip_period_error", "flip_time_error", "energy_error"):
        assert a[name] == pytest.approx(b[name], rel=SCALE_RTOL), name
    assert a["flip_period"] == pytest.approx(b["flip_period"] / 2, rel=SCALE_RTOL)


def _flip_times(t, Lb, J, band=sweep.FLIP_BAND):
    """Every flip, record by record: x = L_b,m/|L_b(0)| leaves the band on the side
    opposite to where it last left it; the flip is the last zero before that of SciPy's
    cubic Hermite interpolant of x (torque-free slopes)."""
    mid = np.argsort(J, kind="stable")[1]
    x = Lb[:, mid] / np.linalg.norm(Lb[0])
    dx = np.cross(Lb, J * Lb)[:, mid] / np.linalg.norm(Lb[0])
    roots = CubicHermiteSpline(t, x, dx).roots(extrapolate=False)
    times, side, left = [], 0.0, 0
    for i in range(len(t)):
        if abs(x[i]) >= band:
            if side and np.sign(x[i]) != side:
                times.append(roots[(roots > t[left]) & (roots <= t[i])].max())
            side, left = np.sign(x[i]), i
    return np.array(times)


@pytest.mark.parametrize(
    ("method", "rate", "min_j", "rotations", "what"),
    [
        ("bullet_implicit_body", 90, 0.5, 6, "flips on"),
        ("avian_jolt", 30, 2.0, 6, "flips on"),
        ("mujoco_rk4", 30, 0.25, 6, "flips on"),
        ("ode_gyroscopic", 30, 0.5, 30, "damped into a steady spin: scored by the flip it misses"),
        ("godot", 60, 0.5, 6, "no gyroscopic term: never flips"),
        ("mujoco_euler", 30, 0.125, 6, "blows up"),
    ],
)
def test_flip_period_of_an_engine_matches_a_direct_run(method, rate, min_j, rotations, what):
    sc = _case(method, rate, min_j=min_j, rotations=rotations)
    row = {k: v[0] for k, v in sweep.run_task([sc]).items()}
    case = sc.build()
    with np.errstate(all="ignore"):
        tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, case.dt, case.steps,
                            method, on_divergence="ignore")  # fmt: skip
    half = 0.5 * float(exact.body_period(case.q0, case.omega0, case.inv_inertia))
    assert row["flip_time_exact"] == pytest.approx(half, rel=1e-12)
    if what == "blows up":
        assert not np.isfinite(tr.L_body).all()
        assert np.isfinite(row["diverged_at"])
        assert row["flip_period_error"] == math.inf
        return
    assert np.isfinite(tr.L_body).all()
    roots = _flip_times(tr.t, tr.L_body, case.inv_inertia)
    assert row["flips"] == roots.size
    if what.startswith("no gyroscopic"):
        assert roots.size == 0
        assert math.isnan(row["flip_period"])
        assert row["flip_period_error"] == math.inf
        return
    k, last = roots.size, roots[-1]
    tail = tr.t[-1] - last
    if what.startswith("damped"):
        assert tail > 5 * last / k  # it has stopped flipping long before the end
    else:
        assert tail < 1.5 * half  # its next flip is due after the end
    expected = max(last / k, tail)
    assert row["flip_period"] == pytest.approx(expected, rel=PERIOD_RTOL)
    assert row["flip_period_error"] == pytest.approx(expected / half - 1.0, rel=PERIOD_RTOL)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"rate": [60], "steps_per_rotation": [8]}, "steps_per_rotation, rate"),
        ({"spin": [2.0]}, "spin"),
        ({"rate": [0.0]}, "rate"),
        ({"rate": [math.inf]}, "rate"),
        ({"rate": [60], "spin": [-1.0]}, "spin"),
        ({"rate": [60], "spin": []}, "spin"),
        ({"rate": [1e-3], "rotations": [0.1]}, "rotations"),
        ({"rate": [1e12], "rotations": [1e5]}, "rate"),
    ],
)
def test_bad_rate_grid_raises_input_error_naming_the_argument(kwargs, name):
    with pytest.raises(InputError, match=rf"^{name}:"):
        sweep.build_grid(["rk4"], **kwargs)


@pytest.mark.parametrize(
    ("case", "name"),
    [
        (sweep.SweepCase("rk4", 0.5, 0.5, None, 0.4, 8, 1.0, 60.0, 2.0), "steps_per_rotation"),
        (sweep.SweepCase("rk4", 0.5, 0.5, None, 0.4, 0, 1.0, 60.0, math.nan), "spin"),
        (sweep.SweepCase("rk4", 0.5, 0.5, None, 0.4, 8, 1.0, math.nan, 2.0), "spin"),
        (sweep.SweepCase("rk4", 0.5, 0.5, None, 0.4, 0, 1.0, "60", 2.0), "rate"),
    ],
)
def test_inconsistent_rate_case_raises_input_error(case, name):
    with pytest.raises(InputError, match=f"^{name}: "):
        case.build()


def test_rate_grid_and_its_files():
    cases = sweep.build_grid(["rk4", "godot"], min_j=[0.5, 2.0], median_j=[0.5], energy=[0.4],
                             rate=[30, 60], spin=[2.0], rotations=[2])  # fmt: skip
    assert len(cases) == 2 * 2 * 2
    assert {(c.steps_per_rotation, c.spin) for c in cases} == {(0, 2.0)}
    assert len({c.case_id for c in cases}) == len(cases)
    # Defaults: one spin of DEFAULT_SPIN rev/s.
    assert {c.spin for c in sweep.build_grid(["rk4"], rate=[60])} == {sweep.DEFAULT_SPIN}


def test_rate_rows_are_the_sweeps_own_on_reading(tmp_path):
    cases = sweep.build_grid(["rk4"], min_j=[0.5], median_j=[0.5], energy=[0.4], rate=[30],
                             spin=[2.0], rotations=[1])  # fmt: skip
    dataset.write_part(tmp_path, sweep.run_task(cases))
    assert sweep.completed_case_ids(tmp_path) == {cases[0].case_id}
    row = sweep.read_results(tmp_path).to_pylist()[0]
    assert (row["rate"], row["spin"], row["steps_per_rotation"]) == (30.0, 2.0, 0)
    assert row["inertia_ratio"] == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rate", "60", "--steps-per-rotation", "8"], "not allowed with"),
        (["--spin", "2"], "--spin"),
        (["--rate", "0"], "--rate"),
        (["--rate", "60", "--spin", "-2"], "--spin"),
    ],
)
def test_sweep_rate_arguments_exit_2_with_one_line(capsys, tmp_path, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--out", str(tmp_path / "out"), *argv])
    assert exc.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert errors[0].startswith("tumble sweep: error:")
    assert message in errors[0]
    assert not (tmp_path / "out").exists()


def test_regression_a_blow_up_through_a_zero_quaternion_is_scored_not_raised():
    # The first engines sweep: avian_explicit at 30 Hz overflowed omega to 1e281 and its
    # normalisation gave q = 0 one step before the first nan; the diagnostics read the zero
    # quaternion as bad input and the task failed (InputError: trajectory.q ...). The loops
    # now record such a quaternion as the divergence it is (NaN).
    row = {k: v[0] for k, v in sweep.run_task([_case("avian_explicit", 30, min_j=0.25,
                                                     rotations=30)]).items()}  # fmt: skip
    assert np.isfinite(row["diverged_at"])
    assert row["flip_period_error"] == math.inf
    case = scenarios.article_case(0.25, 0.5, 0.4)
    with pytest.warns(rigid.DivergenceWarning):
        tr = rigid.simulate(case.q0, 5 * case.omega0, case.inv_inertia, 0.2, 3000,
                            "avian_explicit")  # fmt: skip
    norms = np.linalg.norm(tr.q, axis=-1)
    assert not np.any(norms[np.isfinite(norms)] < 0.5)  # never a zero quaternion

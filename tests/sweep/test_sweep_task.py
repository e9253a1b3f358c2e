"""tumble.sweep.task: every score of a swept case against direct calls.

Oracles: `tumble.rigid.simulate`, `tumble.scenarios.score` (the diagnostics),
`tumble.exact.body_period` and SciPy's `CubicHermiteSpline.roots` for the flip.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sweep_cases import SMALL_GRID, assert_complete, dataset_rows

from oracles import hermite_flip
from tumble import exact, rigid, scenarios, sweep

#: Batched and single-body runs go through the same compiled per-body loop and the same
#: NumPy diagnostics, so they agree to round-off of the batched reductions.
SCORE_RTOL = 1e-12
#: The flip detector bisects the same cubic that SciPy solves in closed form.
FLIP_ATOL = 1e-9
#: The Hermite interpolant of the exact L_b is O(h⁴) accurate; at 32 steps per rotation
#: (h = 0.2) its zero sits within this of the closed-form T/2.
FLIP_EXACT_RTOL = 1e-5


def test_every_score_matches_direct_calls(small_sweep):
    out, summary = small_sweep
    cases = {c.case_id: c for c in sweep.build_grid(**SMALL_GRID)}
    assert summary.runs == len(cases)
    assert summary.skipped == 0
    assert_complete(out, cases.values())
    rows = dataset_rows(out)
    assert set(rows[0]) == set(sweep.COLUMNS)
    diverged = 0
    for row in rows:
        sc = cases[row["case_id"]]
        for name, value in sc.grid_values().items():
            assert row[name] == value or (math.isnan(row[name]) and math.isnan(value)), name
        case = sc.build()
        with warnings.catch_warnings():
            # The explicit method's blow-up is part of the grid (scored, not warned about).
            warnings.simplefilter("ignore", rigid.DivergenceWarning)
            tr = rigid.simulate(
                case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, sc.method
            )
        ref = scenarios.score(tr, case.inv_inertia)
        assert (row["dt"], row["steps"], row["period"]) == (case.dt, case.steps, case.period)
        for name in ("energy_error", "momentum_drift", "direction_drift", "attitude_error_end"):
            # inf is a score (a diverged run's energy overflowed); NaN never is.
            assert not np.isnan(row[name]), name
            assert row[name] == pytest.approx(getattr(ref, name), rel=SCORE_RTOL, abs=1e-300), name
        if ref.diverged_at is None:
            assert math.isnan(row["diverged_at"])
            n = tr.t.shape[0]
        else:
            diverged += 1
            assert row["diverged_at"] == ref.diverged_at
            n = int(np.searchsorted(tr.t, ref.diverged_at))
        T = float(exact.body_period(case.q0, case.omega0, case.inv_inertia))
        expected_exact = T / 2 if 0.0 < sc.energy < 1.0 and np.isfinite(T) else math.inf
        assert row["flip_time_exact"] == pytest.approx(expected_exact, rel=SCORE_RTOL)
        # The oracle's Hermite slopes (L_b × J L_b) overflow before the records do in a
        # blown-up run: it reads the records whose slopes are finite.
        with np.errstate(over="ignore", invalid="ignore"):
            slopes = np.cross(tr.L_body[:n], case.inv_inertia * tr.L_body[:n])
        ok = np.all(np.isfinite(slopes), axis=-1)
        n = n if ok.all() else int(np.argmin(ok))
        expected = hermite_flip(tr.t[:n], tr.L_body[:n], case.inv_inertia)
        if math.isnan(expected):
            assert math.isnan(row["flip_time"])
        else:
            assert row["flip_time"] == pytest.approx(expected, abs=FLIP_ATOL)
            assert row["flip_time_error"] == pytest.approx(
                row["flip_time"] / row["flip_time_exact"] - 1.0, rel=SCORE_RTOL
            )
        if sc.method == "exact" and np.isfinite(row["flip_time_exact"]) and n == tr.t.shape[0]:
            if row["flip_time_exact"] < tr.t[-1] and sc.steps_per_rotation == 32:
                assert row["flip_time"] == pytest.approx(
                    row["flip_time_exact"], rel=FLIP_EXACT_RTOL
                )
        assert row["ns_per_step"] > 0
        assert np.isfinite(row["ns_per_step"])
    assert diverged > 0, "the grid should exercise the blow-up path (explicit, 4 steps/rotation)"

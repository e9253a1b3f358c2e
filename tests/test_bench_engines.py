"""The engine scorecard (``benchmarks/bench_engines.py``, ``tumble bench engines``) on a tiny
configuration: two methods, one scenario, one rate, a few simulated seconds, through the
command's own path; its numbers checked against an independent run, its verdicts against
hand-made results."""

import contextlib
import csv
import importlib.util
import io
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from tumble import bodies, diagnostics, rigid, scenarios

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

#: Four seconds of the T-handle: its exact motion flips at about 0.9 s and 2.7 s (every
#: 1.84 s), so each method's flip period is measured from two flips.
SECONDS = 4.0
RATE = 60


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))  # the suite imports _common from its folder
    try:
        yield importlib.import_module("bench_engines")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture(scope="module")
def scoring(bench):
    """The scorecard's records and verdicts (``benchmarks/engines_scoring.py``)."""
    return sys.modules["engines_scoring"]


@pytest.fixture(scope="module")
def methods(bench):
    return ["jolt_gyroscopic", "momentum_first"]


@pytest.fixture(scope="module")
def scorecard(bench, methods, tmp_path_factory):
    """The command's output (stdout, CSV rows, figure path) on the tiny configuration."""
    out = tmp_path_factory.mktemp("engines")
    argv = ["--methods", ",".join(methods), "--scenarios", "t-handle", "--rates", str(RATE),
            "--seconds", str(SECONDS), "--out", str(out)]  # fmt: skip
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert bench.main(argv) == 0
    with (out / "engines.csv").open() as f:
        rows = list(csv.DictReader(f))
    return stdout.getvalue(), rows, out / "engines-scorecard.png"


def test_table_has_one_row_per_method_with_every_column(bench, methods, scorecard):
    text, _, _ = scorecard
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip().replace("\\|", "|") for c in lines[0].strip("|").split(" | ")]
    assert header == bench.SUMMARY_HEADER
    assert set(lines[1].strip("|").split("|")) == {"---"}
    body = lines[2:]
    assert len(body) == len(methods)
    for method, line in zip(methods, body, strict=True):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == len(header)
        assert cells[1].startswith(f"`{method}`")
        assert cells[header.index("verdict")]
        assert cells[header.index("flip period error")] not in ("", "-")
        assert float(cells[header.index("ns/step")]) > 0


def test_csv_covers_every_method_scenario_and_rate(bench, methods, scorecard):
    _, rows, figure = scorecard
    assert [(r["method"], r["scenario"], r["rate"]) for r in rows] == [
        (m, "t-handle", str(RATE)) for m in methods
    ]
    assert list(rows[0]) == bench.CSV_FIELDS
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_numbers_come_from_the_runs(bench, scoring, methods, scorecard):
    """Each method rerun here and measured with tumble.diagnostics, and the flips counted
    by a plain loop: the CSV and the table agree."""
    text, rows, _ = scorecard
    sc = bodies.spin("t-handle")
    case = sc.case(RATE, SECONDS)
    ref = scenarios.reference(case)
    band = bench.FLIP_BAND * bench.flip_amplitude(ref.L_body.reshape(-1, 3), sc.inv_inertia)
    median_axis = 1  # the stem: J = 1/I with I = (104, 164, 262) g cm²
    assert np.argsort(sc.inv_inertia)[1] == median_axis
    for method, row in zip(methods, rows, strict=True):
        tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, method)
        s = diagnostics.score(tr, sc.inv_inertia, ref)
        assert float(row["direction_drift_deg"]) == pytest.approx(
            math.degrees(float(s.direction_drift)), rel=1e-5, abs=1e-12
        )
        assert float(row["attitude_error_deg"]) == pytest.approx(
            math.degrees(float(s.attitude_error_max)), rel=1e-5
        )
        L, L_ref = np.linalg.norm(tr.L, axis=-1), np.linalg.norm(ref.L, axis=-1)
        assert abs(float(row["momentum_drift"])) == pytest.approx(
            np.max(np.abs(L - L_ref)) / L_ref[0], rel=1e-5
        )
        # Flips: sign changes of L_b along the median axis beyond the band, per |L|.
        x = tr.L_body[:, median_axis] / np.linalg.norm(tr.L_body, axis=-1)
        side, flips = np.sign(x[0]), 0
        for v in x:
            if side * v <= -band:
                side, flips = -side, flips + 1
        assert int(row["flips"]) == flips >= 2
        period = 0.5 * float(bench.exact.body_period(sc.q0, sc.omega0, sc.inv_inertia))
        assert float(row["flip_period_exact"]) == pytest.approx(period, rel=1e-5)
        error = float(row["flip_period"]) / period - 1
        assert float(row["flip_period_error"]) == pytest.approx(error, rel=1e-4, abs=1e-9)
        table = [li.strip("|").split(" | ") for li in text.splitlines() if li.startswith("| ")]
        cells = next([c.strip() for c in t] for t in table if t[1].startswith(f"`{method}`"))
        column = bench.SUMMARY_HEADER.index("world L drift")
        assert cells[column] == scoring.deg_text(float(row["direction_drift_deg"]))


def _result(bench, **kw):
    base = dict(method="m", scenario="t-handle", rate=60, seconds=60.0, flips=33,
                flips_exact=33, last_flip=59.0, flip_period=1.84, flip_period_exact=1.84,
                flip_period_error=0.0, momentum_drift=1e-15, energy_drift=1e-6,
                direction_drift_deg=1e-12, attitude_error_deg=1.0)  # fmt: skip
    base.update(kw)
    return bench.Result(**base)


def test_verdicts_follow_the_rules(bench, scoring):
    good = _result(bench)
    assert scoring.verdict([good]).startswith("keeps the physics")
    assert scoring.verdict([_result(bench, flips=0)]).startswith("does not flip")
    assert scoring.verdict([_result(bench, last_flip=20.0)]).startswith("stops flipping")
    blown = _result(bench, blew_up=True, diverged_at=2.5, rate=30)
    assert scoring.verdict([good, blown]).startswith("blows up (t-handle at 30 Hz")
    drift = _result(bench, direction_drift_deg=12.0)
    assert scoring.verdict([drift]) == "world L drifts 12° (t-handle at 60 Hz)"
    slow = _result(bench, flip_period_error=0.25)
    assert scoring.verdict([slow]) == "flip period +25 % (t-handle at 60 Hz)"
    # The accuracy rules start at 60 Hz: a 30 Hz period error is only noted.
    coarse = _result(bench, flip_period_error=0.05, rate=30)
    kept = "keeps the physics (flip period within 1 % from 60 Hz)"
    assert scoring.verdict([good, coarse]) == kept
    many = _result(bench, momentum_drift=-0.5, energy_drift=-0.7, direction_drift_deg=5.0)
    assert scoring.verdict([many]) == (
        "|L| -50 % (t-handle at 60 Hz); world L drifts 5° (t-handle at 60 Hz); 1 more"
    )


def test_check_complete_names_a_missing_case(bench):
    rows = [bench.Row("m", "e", False, "-", "fix")]
    results = [_result(bench), _result(bench, method="fix")]
    bench.check_complete(rows, results, ["t-handle"], [60])
    with pytest.raises(RuntimeError, match="racket"):
        bench.check_complete(rows, results, ["t-handle", "racket"], [60])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scenarios", "t-handle,nope"], "--scenarios: expected names"),
        (["--rates", "60,0"], "--rates: expected whole numbers"),
        (["--rates", "sixty"], "--rates: expected whole numbers"),
        (["--seconds", "-1"], "--seconds: expected a duration"),
        (["--quick", "--seconds", "5"], "--quick, --seconds"),
        (["--methods", "no_such_method"], "--methods: expected names"),
        (["--methods", "rk4,rk4"], "--methods: expected distinct names"),
    ],
)
def test_bad_options_exit_2(bench, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err

"""``tumble compare``: the table, the figures, bad arguments, the console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tumble import InputError, compare, diagnostics, exact, rigid, scenarios
from tumble.cli import main

SMALL = ["--steps-per-rotation", "16", "--rotations", "1.5"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def table_rows(out: str) -> dict[str, list[str]]:
    """Rows of the printed table by method name (header, rule and notes skipped)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("method"))
    rows = {}
    for line in lines[start + 2 :]:
        cells = line.split()
        if cells and cells[0] in rigid.METHODS:
            rows[cells[0]] = cells
    return rows


@pytest.mark.parametrize(
    ("argv", "case"),
    [
        (
            ["--min-j", "0.8", "--median-j", "0.35", "--energy", "0.3"],
            scenarios.article_case(0.8, 0.35, 0.3, 16, 1.5),
        ),
        (
            ["--inv-inertia", "1,0.6,0.35", "--omega-body", "0.5,-0.48,0.21"],
            scenarios.explicit_case([1.0, 0.6, 0.35], [0.5, -0.48, 0.21], 16, 1.5),
        ),
    ],
    ids=["article", "explicit"],
)
def test_table_equals_direct_computation(capsys, argv, case) -> None:
    methods = ["momentum_first", "splitting", "modified_jolt"]
    assert main(["compare", *argv, *SMALL, "--methods", ",".join(methods)]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert list(rows) == methods
    J = case.inv_inertia
    for m in methods:
        tr = rigid.simulate(case.q0, case.omega0, J, case.dt, case.steps, m)
        q_ex, _ = exact.torque_free(case.q0, case.omega0, J, tr.t)
        att = (
            Rotation.from_quat(q_ex, scalar_first=True).inv()
            * Rotation.from_quat(tr.q, scalar_first=True)
        ).magnitude()
        expected = [
            float(diagnostics.max_energy_error(tr, J)),
            float(np.max(np.abs(diagnostics.momentum_drift(tr, J)))),
            float(np.max(diagnostics.direction_drift(tr, J))),
            att[-1],
            np.max(att),
        ]
        cells = rows[m]
        assert cells[1] == f"{rigid.ORDERS[m]:g}"
        # The table prints three significant digits.
        got = [float(x) for x in cells[2:7]]
        np.testing.assert_allclose(got, expected, rtol=5e-3, atol=1e-15)
        assert float(cells[7]) > 0
    assert f"{case.steps} steps" in out


def test_plot_png(tmp_path: Path, capsys) -> None:
    path = tmp_path / "fig.png"
    assert main(["compare", *SMALL, "--methods", "jolt,momentum_first", "--plot", str(path)]) == 0
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 10_000
    assert f"wrote {path}" in capsys.readouterr().out


def test_plot_html_is_self_contained(tmp_path: Path) -> None:
    path = tmp_path / "fig.HTML"
    assert main(["compare", *SMALL, "--methods", "explicit,splitting", "--plot", str(path)]) == 0
    html = path.read_text()
    assert "<html" in html[:100].lower()
    for name in ("explicit", "splitting", "exact", "energy factor"):
        assert name in html
    # plotly.js is inlined: no script loaded from the network.
    assert '<script src="http' not in html
    assert "Plotly.newPlot" in html


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--plot", "fig.svg"], "--plot: expected a file ending in .png or .html"),
        (["--plot", "/no/such/dir/fig.png"], "does not exist"),
        (["--energy", "2"], "--energy: expected a fraction in [0, 1]"),
        (["--median-j", "x"], "--median-j: expected a number"),
        (["--min-j", "0"], "--min-j: expected a number > 0"),
        (["--min-j", "nan"], "--min-j: expected a finite number"),
        (["--inv-inertia", "1,2", "--omega-body", "1,0,0"], "--inv-inertia: expected three"),
        (["--inv-inertia", "1,0.5,0.2"], "--inv-inertia and --omega-body go together"),
        (["--omega-body", "1,0,0"], "--inv-inertia and --omega-body go together"),
        (
            ["--inv-inertia", "1,0.5,0.2", "--omega-body", "1,0,0", "--energy", "0.5"],
            "--energy belongs to the article's body",
        ),
        (["--inv-inertia", "1,0.5,0.2", "--omega-body", "0,0,0"], "omega_body: expected |L| > 0"),
        (["--inv-inertia", "1,-0.5,0.2", "--omega-body", "1,0,0"], "inv_inertia"),
        (["--methods", "jolt,warp_drive"], "unknown method 'warp_drive'"),
        (["--steps-per-rotation", "0"], "--steps-per-rotation: expected an integer >= 1"),
        (["--rotations", "-2"], "--rotations: expected a number >= 0"),
        # regression: --rotations 1e9 had no upper bound and ran for days
        (["--rotations", "1e9"], "--rotations: expected at most 100000 rotations"),
        (["--steps-per-rotation", "1000001"], "--steps-per-rotation: expected at most 100000"),
        (["--every", "1.5"], "--every: expected an integer"),
        (["--torque", "tornado"], "--torque: invalid choice: 'tornado'"),
        (["--torque", "damped", "--energy", "0.5"], "--energy sets a free body; not with --torque"),
        (["--torque", "damped", "--methods", "exact"], "'exact' is the torque-free solution"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, argv, message) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["compare", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith("tumble compare: error:")
    assert message in errors[0]
    assert "Traceback" not in err


def test_progress_only_when_long_or_tty(capsys, monkeypatch) -> None:
    main(["compare", *SMALL, "--methods", "jolt,rk4"])
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(compare, "PROGRESS_STEPS", 1)
    main(["compare", *SMALL, "--methods", "jolt,rk4"])
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" (")[0] for line in err] == ["[1/2] jolt", "[2/2] rk4"]


def test_console_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("tumble")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    out = subprocess.run(
        [str(script), "compare", *SMALL, "--methods", "momentum_first_symmetric"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert "momentum_first_symmetric" in table_rows(out.stdout)
    bad = subprocess.run(
        [str(script), "compare", "--plot", "x.pdf"], capture_output=True, text=True, cwd=tmp_path
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("tumble compare: error: --plot")


@pytest.mark.parametrize("scenario", list(scenarios.TORQUE_SCENARIOS))
def test_torque_scenarios_are_scored_against_the_ode_reference(capsys, scenario) -> None:
    """The table of ``--torque``: attitude errors against an independent DOP853 solve."""
    from oracles import angle, rigid_reference

    methods = ["splitting", "rk4"]
    assert main(["compare", "--torque", scenario, *SMALL, "--methods", ",".join(methods)]) == 0
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert list(rows) == methods
    case = scenarios.torque_case(scenario, 16, 1.5)
    assert f"torque {case.torque!r}" in out
    for m in methods:
        tr = rigid.simulate(
            case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, m, case.torque
        )
        R0 = Rotation.from_quat(case.q0, scalar_first=True).as_matrix()
        L0 = R0 @ ((R0.T @ case.omega0) / case.inv_inertia)
        tau = lambda t, R, w: compare_torque(case, t, R, w)  # noqa: E731
        sol = rigid_reference(case.q0, L0, case.inv_inertia, tr.t[-1], tau, t_eval=tr.t)
        att = angle(sol.y[:4].T / np.linalg.norm(sol.y[:4].T, axis=1, keepdims=True), tr.q)
        np.testing.assert_allclose(float(rows[m][5]), att[-1], rtol=5e-3, atol=1e-12)
        np.testing.assert_allclose(float(rows[m][6]), np.max(att), rtol=5e-3, atol=1e-12)


def compare_torque(case: scenarios.Case, t: float, R: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The scenario's torque through tumble's evaluator (checked against SciPy formulas in
    tests/test_torques.py), for the independent ODE solve."""
    from tumble import torques

    q = Rotation.from_matrix(R).as_quat(scalar_first=True)
    return torques.evaluate(case.torque, t, q, w, case.inv_inertia)


# ------------------------------------------------- regressions from the bad-input campaign


def _small_results() -> tuple[scenarios.Case, dict[str, scenarios.MethodResult]]:
    case = scenarios.article_case(steps_per_rotation=8, rotations=1)
    return case, scenarios.run_methods(case, ["rk4", "exact"], timing=False)


def test_regression_plot_with_a_str_path(tmp_path: Path) -> None:
    # compare.plot(..., path="x.html") raised AttributeError ('str' has no .suffix).
    case, results = _small_results()
    target = tmp_path / "run.html"
    compare.plot(results, case, str(target))
    assert target.read_text().startswith("<html") or "plotly" in target.read_text()
    with pytest.raises(InputError, match=r"^path: folder .* does not exist"):
        compare.plot(results, case, str(tmp_path / "missing" / "run.html"))
    with pytest.raises(InputError, match=r"^path: expected a file path"):
        compare.plot(results, case, 5)
    with pytest.raises(InputError, match=r"^case: expected a tumble.scenarios.Case"):
        compare.plot(results, None, target)


@pytest.mark.parametrize("bad", [None, {}, [1, 2], {"rk4": 5}, {"nope": None}])
def test_regression_format_table_none(bad) -> None:
    # compare.format_table(None) raised AttributeError.
    with pytest.raises(InputError, match=r"^results: expected"):
        compare.format_table(bad)
    _, results = _small_results()
    assert compare.format_table(results).splitlines()[2].startswith("rk4")

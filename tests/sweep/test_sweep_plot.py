"""tumble.sweep.plot and `tumble sweep-plot`: heat maps of a sweep's scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sweep_cases import dataset_rows

from tumble import InputError, sweep
from tumble.cli import main
from tumble.sweep import plot as sweep_plot


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--x", "nope"], "--x"),
        (["--x", "energy", "--y", "energy"], "--y"),
        (["--score", "nope"], "--score"),
        (["--out", "figure.txt"], "--out"),
        (["--out", "no-such-folder-of-tumble/x.png"], "--out"),
        (["--contour", "0"], "--contour"),
        (["--columns", "0"], "--columns"),
        (["--floor", "-1"], "--floor"),
        (["--x", "rate"], "x, y: no row has values"),
    ],
)
def test_sweep_plot_bad_arguments_exit_2_with_one_line(capsys, small_sweep, argv, message):
    out, _ = small_sweep
    with pytest.raises(SystemExit) as exc:
        main(["sweep-plot", str(out), *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith("tumble sweep-plot: error:")
    assert message in errors[0]


def test_plot_refuses_a_file_in_a_missing_folder(tmp_path):
    with pytest.raises(InputError, match=r"^file: .*not a folder"):
        sweep_plot.plot(tmp_path, tmp_path / "nodir" / "x.png")


def test_colour_range_has_a_floor():
    floor = math.log10(sweep_plot.COLOR_FLOOR)
    # Round-off scores alone: one bottom decade, not the whole scale.
    roundoff = np.log10(np.array([[1e-16, 3e-16], [2e-15, np.nan]]))
    assert sweep_plot.color_range([roundoff]) == (floor, floor + 1.0)
    # Real errors keep their span; round-off among them is pulled up to the floor.
    mixed = np.log10(np.array([[1e-16, 1e-6], [1e-3, 1e-2]]))
    assert sweep_plot.color_range([mixed]) == (floor, -2.0)
    big = np.log10(np.array([[1e-8, 1e-2]]))
    assert sweep_plot.color_range([big]) == pytest.approx((-8.0, -2.0))
    assert sweep_plot.color_range([np.full((2, 2), np.nan)]) == (floor, floor + 1.0)


def test_sweep_plot_missing_folder_exits_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["sweep-plot", str(tmp_path / "none")])
    assert exc.value.code == 2
    assert "DIR" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".png", ".html"])
def test_sweep_plot_writes_png_and_html(small_sweep, tmp_path, capsys, suffix):
    out, _ = small_sweep
    target = tmp_path / f"maps{suffix}"
    argv = ["sweep-plot", str(out), "--x", "median_j", "--y", "energy",
            "--score", "energy_error,flip_time_error", "--out", str(target)]  # fmt: skip
    assert main(argv) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    data = target.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert b"plotly" in data
        assert b"energy_error" in data


def test_heat_map_cells_reduce_the_other_axes(small_sweep):
    out, _ = small_sweep
    table = sweep.read_results(out)
    methods, xs, ys, grids = sweep_plot.heat_maps(table, "median_j", "energy", ["energy_error"])
    assert "jolt" in methods
    assert xs == [0.2, 0.8]
    assert ys == [0.0, 0.1, 0.5, 0.9]
    rows = [r for r in dataset_rows(out) if r["method"] == "jolt" and not math.isnan(r["median_j"])]
    for i, e in enumerate(ys):
        for j, f in enumerate(xs):
            cell = [r["energy_error"] for r in rows if r["energy"] == e and r["median_j"] == f]
            assert grids[("energy_error", "jolt")][i, j] == max(cell)
    with pytest.raises(InputError, match=r"^y:"):
        sweep_plot.heat_maps(table, "energy", "energy", ["energy_error"])


def test_the_old_public_path_serves_the_same_functions():
    from tumble import sweep_plot as old_path

    assert old_path.__all__ == sweep_plot.__all__
    for name in sweep_plot.__all__:
        assert getattr(old_path, name) is getattr(sweep_plot, name)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"file": 3}, "file"),
        ({"file": None}, "file"),
        ({"scores": "energy_drift"}, "scores"),
        ({"scores": 5}, "scores"),
        ({"scores": []}, "scores"),
        ({"contour": 0.0}, "contour"),
        ({"contour": "1%"}, "contour"),
        ({"columns": 0}, "columns"),
        ({"columns": 1.5}, "columns"),
        ({"floor": -1.0}, "floor"),
    ],
)
def test_regression_plot_names_a_bad_path_or_score_list(tmp_path, kwargs, name):
    # issue 18: a file that is no path, or scores that are no list of names, raised
    # TypeError from pathlib or list(); now InputError naming the argument.
    args = {"out": tmp_path, "file": tmp_path / "x.png", **kwargs}
    with pytest.raises(InputError, match=rf"^{name}: "):
        sweep_plot.plot(**args)


@pytest.mark.parametrize("suffix", [".png", ".html"])
def test_wrapped_panels_with_a_contour_and_infinite_cells(small_sweep, tmp_path, suffix):
    # The small grid's explicit method blows up at 4 steps per rotation: its flip period
    # error is inf there, drawn in INF_COLOR (off the colour scale), not as a missing cell.
    out, _ = small_sweep
    table = sweep.read_results(out)
    _, _, _, grids = sweep_plot.heat_maps(table, "median_j", "energy", ["flip_period_error"])
    assert np.isposinf(grids[("flip_period_error", "explicit")]).any()
    target = tmp_path / f"wrapped{suffix}"
    argv = ["sweep-plot", str(out), "--score", "flip_period_error,energy_error", "--contour",
            "0.01", "--columns", "3", "--floor", "1e-6", "--out", str(target)]  # fmt: skip
    assert main(argv) == 0
    data = target.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"infinite" in data


def test_infinite_scores_sit_above_the_colour_scale():
    log = np.log10(np.array([[1e-3, np.inf], [np.nan, 1e-1]]))
    lo, hi = sweep_plot.color_range([log], floor=1e-6)
    assert (lo, hi) == pytest.approx((-3.0, -1.0))
    shown = sweep_plot._shown(log, hi)
    assert shown[0, 1] > hi
    assert np.isnan(shown[1, 0])

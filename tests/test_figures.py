"""The figure spec: traces against tumble.diagnostics, panels against the traces, colours."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re

import numpy as np
import pytest

from tumble import diagnostics, figures, rigid, rotation, scenarios

#: The traces are the diagnostics' values, computed the same way: equal to round-off.
TRACE_RTOL = 1e-12

#: Each trace's value straight from tumble.diagnostics (and rotation for the oracle of the
#: new attitude_deviation), on a run and the exact run at the same records.
EXPECTED = {
    "energy_factor": lambda tr, J, ref: diagnostics.energy_factor(tr, J),
    "L_norm": lambda tr, J, ref: diagnostics.momentum_norm(tr, J),
    "attitude_error": lambda tr, J, ref: rotation.rotation_angle(tr.q, ref.q),
    "L_world": lambda tr, J, ref: diagnostics.momentum_world(tr, J)[:, :2],
    "L_body": lambda tr, J, ref: diagnostics.momentum_body(tr, J),
}


@pytest.fixture(scope="module")
def case() -> scenarios.Case:
    return scenarios.article_case(0.5, 0.5, 0.4, 16, 2)


@pytest.fixture(scope="module")
def reference(case) -> rigid.Trajectory:
    return scenarios.simulate(case, "exact", 2)


@pytest.mark.parametrize("method", ["jolt", "momentum_first", "rk4"])
def test_each_trace_is_the_diagnostics_value(case, reference, method) -> None:
    tr = scenarios.simulate(case, method, 2)
    J = case.inv_inertia
    curve = figures.curve(tr, J, reference)
    assert set(EXPECTED) <= set(curve)
    for name, expected in EXPECTED.items():
        want = np.asarray(expected(tr, J, reference))
        assert curve[name].shape == want.shape, name
        assert not np.any(np.isnan(curve[name])), name
        np.testing.assert_allclose(curve[name], want, rtol=TRACE_RTOL, atol=1e-15, err_msg=name)


def test_the_reference_has_no_comparison_with_itself(case, reference) -> None:
    curve = figures.curve(reference, case.inv_inertia)
    for name, trace in figures.TRACES.items():
        assert (name in curve) == trace.of_reference, name
    np.testing.assert_allclose(curve["L_norm"], 1.0, rtol=1e-12)


def test_records_after_a_blow_up_are_nan() -> None:
    # Explicit Euler at 2 steps per rotation overflows; the head before |L| passes
    # BLOWUP x |L_0| keeps its values, the rest is cut.
    case = scenarios.article_case(0.1, 0.2, 0.9, 2, 200)
    tr = scenarios.simulate(case, "explicit", 1)
    ref = scenarios.simulate(case, "exact", 1)
    finite = scenarios.finite_prefix(tr)
    assert 1 < finite < tr.t.shape[0]
    n = figures.drawn_records(tr, case.inv_inertia)
    # The oracle: |L| straight from the recorded world L.
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.linalg.norm(tr.L, axis=-1) / np.linalg.norm(tr.L[0])
    assert 1 < n <= finite
    assert np.all(ratio[:n] <= figures.BLOWUP)
    assert np.all(ratio[:n] >= 1 / figures.BLOWUP)
    assert n == finite or not (1 / figures.BLOWUP <= ratio[n] <= figures.BLOWUP)
    curve = figures.curve(tr, case.inv_inertia, ref)
    head, ref_head = (
        rigid.Trajectory(**{f.name: getattr(x, f.name)[:n] for f in dataclasses.fields(x)})
        for x in (tr, ref)
    )
    for name, expected in EXPECTED.items():
        assert np.all(np.isnan(curve[name][n:])), name
        np.testing.assert_allclose(
            curve[name][:n], expected(head, case.inv_inertia, ref_head), rtol=TRACE_RTOL,
            err_msg=name,
        )  # fmt: skip


def test_attitude_deviation_matches_rotation_angle_and_checks_records() -> None:
    q = rotation.random_quat((6, 2), 1)
    p = rotation.random_quat((6, 2), 2)
    got = diagnostics.attitude_deviation((np.arange(6.0), q, np.zeros((6, 2, 3))), p)
    np.testing.assert_allclose(got, rotation.rotation_angle(q, p), rtol=1e-15)
    assert got.shape == (6, 2)
    assert np.all(diagnostics.attitude_deviation(q, -q) < 1e-7)  # double cover
    with pytest.raises(ValueError, match=r"reference\.q"):
        diagnostics.attitude_deviation(q, p[:5])
    with pytest.raises(ValueError, match=r"trajectory\.q"):
        diagnostics.attitude_deviation(q[0, 0], p)


# ------------------------------------------------------------------------- panels


def test_every_panel_names_existing_traces() -> None:
    for p in figures.PANELS:
        for ref in (p.x, p.y):
            if ref == figures.TIME:
                continue
            name, _, component = ref.partition(".")
            assert name in figures.TRACES, (p.id, ref)
            trace = figures.TRACES[name]
            # A vector trace is drawn one component at a time.
            assert (component != "") == (trace.components != ""), (p.id, ref)
            assert component in trace.components, (p.id, ref)


def test_panels_tile_the_grid_and_belong_to_a_figure() -> None:
    rows, cols = figures.GRID
    ids = [p.id for p in figures.PANELS]
    assert len(set(ids)) == len(ids)
    figure_ids = {f.id for f in figures.FIGURES}
    used: set[tuple[int, int]] = set()
    for p in figures.PANELS:
        assert p.figure in figure_ids, p.id
        assert p.window in (None, "flat", "origin", "reference"), p.id
        cells = {(r, c) for r in range(p.row, p.row + p.rowspan)
                 for c in range(p.col, p.col + p.colspan)}  # fmt: skip
        assert all(0 <= r < rows and 0 <= c < cols for r, c in cells), p.id
        assert not cells & used, f"{p.id} overlaps another panel"
        used |= cells
    assert {p.figure for p in figures.PANELS} == figure_ids  # no empty figure


def test_series_picks_components(case, reference) -> None:
    curve = figures.curve(reference, case.inv_inertia)
    np.testing.assert_array_equal(figures.series(curve, reference.t, "t"), reference.t)
    np.testing.assert_array_equal(
        figures.series(curve, reference.t, "L_body.z"), curve["L_body"][:, 2]
    )
    assert figures.series(curve, reference.t, "attitude_error") is None


def test_window_rules(case, reference) -> None:
    runs = {m: scenarios.simulate(case, m, 2) for m in ("midpoint", "explicit")}
    data = figures.figure_data(runs, reference, case.inv_inertia)
    assert set(data.ranges) == {p.id for p in figures.PANELS}
    # "reference": 1.15 |L0| on both axes of the body projections (|L| = 1 here).
    for pid in ("L_body_xy", "L_body_yz", "L_body_xz"):
        assert data.ranges[pid] == {"x": pytest.approx([-1.15, 1.15]),
                                    "y": pytest.approx([-1.15, 1.15])}  # fmt: skip
    # "flat": explicit Euler's |L| grows, so the data decides (plus a 5 % margin)...
    L = np.linalg.norm(runs["explicit"].L, axis=-1)
    span = L.max() - L.min()
    assert span > 1e-2
    assert data.ranges["L_norm"]["x"] is None
    assert data.ranges["L_norm"]["y"] == pytest.approx(
        [L.min() - 0.05 * span, L.max() + 0.05 * span]
    )
    # ...while midpoint keeps |L| to round-off: a ±0.1 % window about it, not the noise.
    flat = figures.figure_data({"midpoint": runs["midpoint"]}, reference, case.inv_inertia)
    assert flat.ranges["L_norm"]["y"] == pytest.approx([0.999, 1.001])
    assert flat.ranges["energy_factor"]["y"] == pytest.approx([0.9 * 0.999, 0.9 * 1.001])
    # "origin": world L of midpoint stays at 0 to round-off: ±0.1 % of |L| on both axes.
    assert flat.ranges["L_world"] == {"x": pytest.approx([-1e-3, 1e-3]),
                                      "y": pytest.approx([-1e-3, 1e-3])}  # fmt: skip
    w = np.abs(runs["explicit"].L[:, :2]).max()
    assert data.ranges["L_world"]["x"] == pytest.approx([-1.05 * w, 1.05 * w])


def test_a_run_that_blew_up_does_not_set_the_ranges() -> None:
    case = scenarios.article_case(3.0, 0.5, 0.4, 16, 20)
    ref = scenarios.simulate(case, "exact", 1)
    runs = {m: scenarios.simulate(case, m, 1) for m in ("explicit", "modified_jolt")}
    wild = figures.figure_data(runs, ref, case.inv_inertia)
    calm = figures.figure_data({"modified_jolt": runs["modified_jolt"]}, ref, case.inv_inertia)
    assert np.nanmax(np.linalg.norm(runs["explicit"].L, axis=-1)) > 1e50
    k = wild.blew_up["explicit"]
    assert k is not None
    assert 1 < k < ref.t.shape[0]
    assert wild.blew_up["modified_jolt"] is None
    assert np.all(np.isnan(wild.methods["explicit"]["L_norm"][k:]))
    assert wild.ranges == calm.ranges


def test_spec_carries_line_styles_and_a_cloudless_plotly_config() -> None:
    s = figures.spec()
    assert set(s["dashes"]) == set(rigid.METHODS)
    assert set(s["dashes"].values()) <= set(figures.DASHES)
    # Neighbours in the palette differ by line style as well as hue.
    styles = list(s["dashes"].values())
    assert all(a != b for a, b in itertools.pairwise(styles))
    config = s["plotly_config"]
    assert config["showSendToCloud"] is False
    assert "sendChartToCloud" in config["modeBarButtonsToRemove"]
    assert all(f["note"] for f in s["figures"])


# ------------------------------------------------------------------------- colours


def test_every_method_has_a_distinct_colour() -> None:
    colors = figures.colors()
    assert list(colors) == list(rigid.METHODS)
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colors.values())
    assert len(set(colors.values())) == len(colors)


def test_colours_are_stable() -> None:
    # A method's colour follows its place in the registry, not the subset drawn.
    colors = figures.colors()
    assert colors["explicit"] == "#d62728"
    assert colors["jolt"] == "#ff7f0e"
    assert colors["momentum_first"] == "#2ca02c"
    assert colors["exact"] == figures.REFERENCE.color == "#000000"
    assert figures.colors() == colors
    for i, name in enumerate(rigid.METHODS):
        assert colors[name] == figures.palette(len(rigid.METHODS))[i]


def test_palette_grows_without_repeating() -> None:
    # Methods added to the registry beyond the hand-picked palette still get their own.
    many = figures.palette(60)
    assert many[: len(figures.PALETTE)] == list(figures.PALETTE)
    assert len(set(many)) == 60
    assert figures.palette(20) == many[:20]


def test_spec_is_json_and_names_the_panels() -> None:
    spec = json.loads(json.dumps(figures.spec()))
    assert spec["grid"] == list(figures.GRID)
    assert [p["id"] for p in spec["panels"]] == [p.id for p in figures.PANELS]
    assert [t["name"] for t in spec["traces"]] == list(figures.TRACES)
    assert spec["colors"] == figures.colors()
    assert spec["reference"]["method"] in rigid.METHODS

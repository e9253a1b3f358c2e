"""The lab page in headless Chromium (Playwright), driven as a person would.

Plots, controls, legend, the URL state, export, the time cursor, the 3-D view and the
momentum sphere, blow-ups, presets, keyboard access, phone and dark layouts. Every page of
the module comes from one browser context (shared caches) on one server; each page also
checks that nothing it requested left the server (conftest's ``watch``).

Skipped with a visible reason where Chromium or playwright is missing (see conftest).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from conftest import COMPUTE_TIMEOUT_MS, open_lab, watch

pytestmark = pytest.mark.browser

FIGURES = ("plot-time", "plot-world", "plot-body")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"  # gitignored
DEFAULT_SHOWN = ["explicit", "jolt", "naive_rotation", "modified_jolt", "momentum_first"]
REFERENCE = "exact (reference)"


def trace_state(page, figure: str) -> list[dict]:
    return page.evaluate(
        """(id) => document.getElementById(id).data.map(
            (t) => ({meta: t.meta, visible: t.visible === undefined ? true : t.visible,
                     mode: t.mode, yaxis: t.yaxis || "y", n: t.y ? t.y.length : 0}))""",
        figure,
    )


def drawn_groups(page, figure: str) -> set[str]:
    """Curves (not markers, not legend-only placeholders) drawn in a figure."""
    return {
        t["meta"]
        for t in trace_state(page, figure)
        if t["mode"] == "lines" and t["visible"] is True and t["n"] > 1
    }


def energy_trace(page, method: str) -> list[float]:
    return page.evaluate(
        """(m) => Array.from(document.getElementById("plot-time").data.find(
            (t) => t.meta === m && t.mode === "lines" && (t.yaxis || "y") === "y").y)""",
        method,
    )


def drawn_lines(page, figure: str) -> int:
    """SVG line paths with a non-empty path in a figure (what the user actually sees)."""
    return page.evaluate(
        """(id) => Array.from(document.querySelectorAll(
            `#${id} .cartesianlayer .scatterlayer .trace path.js-line`))
            .filter((p) => (p.getAttribute("d") || "").length > 10).length""",
        figure,
    )


def axis_range(page, figure: str, axis: str) -> list[float]:
    return page.evaluate(
        "([id, ax]) => document.getElementById(id)._fullLayout[ax].range.map(Number)",
        [figure, axis],
    )


def requested_methods(page) -> list[str]:
    return page.evaluate("tumbleLab.request.methods")


def wait_answer(page, done: int) -> None:
    page.wait_for_function(f"tumbleLab.completed > {done}", timeout=COMPUTE_TIMEOUT_MS)


def settle(page) -> None:
    """Let the page finish drawing (two animation frames) before a timed gesture: plotly
    tells a double click from two clicks by their spacing, which a page still busy
    redrawing stretches on a loaded machine."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def reopen(first, live_server):
    """``first``'s URL opened in a new page of its context, once its first answer is drawn,
    after checking that it made the same request and got the same runs back."""
    second = first.context.new_page()
    second.lab_errors = watch(second, live_server)
    second.goto(first.url)
    second.wait_for_function(
        "window.tumbleLab && tumbleLab.completed >= 1", timeout=COMPUTE_TIMEOUT_MS
    )
    assert second.evaluate("tumbleLab.request") == first.evaluate("tumbleLab.request")
    for run in ("exact", "methods"):
        a = first.evaluate(f"JSON.stringify(tumbleLab.data.{run})")
        b = second.evaluate(f"JSON.stringify(tumbleLab.data.{run})")
        assert json.loads(a) == json.loads(b), run
    return second


def close(page) -> None:
    errors = page.lab_errors
    page.close()
    assert errors == [], f"the page reported errors: {errors}"


# ------------------------------------------------------------------------ default view


def test_plots_render_with_the_reference_and_only_ticked_methods(page) -> None:
    assert requested_methods(page) == DEFAULT_SHOWN
    assert [m["name"] for m in page.evaluate("tumbleLab.data.methods")] == DEFAULT_SHOWN
    for fig in FIGURES:
        assert drawn_groups(page, fig) == {REFERENCE, *DEFAULT_SHOWN}, fig
        # In the world plot the curves that keep L fixed collapse to a point.
        least = 3 if fig == "plot-world" else 6
        assert drawn_lines(page, fig) >= least, f"{fig} drew too few lines"
    # The unticked methods of the group shown stay in the legend, greyed out (legend-only,
    # no data); the other groups' do not (tests/lab/test_lab_groups_browser.py).
    placeholders = {
        t["meta"] for t in trace_state(page, "plot-time") if t["visible"] == "legendonly"
    }
    assert {"midpoint", "magnus", "splitting"} <= placeholders
    assert page.locator("#plot-time .rangeslider-container").count() == 1
    assert page.locator("#scores tbody tr").count() == len(DEFAULT_SHOWN)
    # 1280 steps are drawn as 428 records: the page says so.
    note = page.locator("#decimation")
    assert note.is_visible()
    assert "one record every 3 steps" in note.inner_text()
    # Every panel has its "what am I seeing" note; labels have no raw underscores.
    assert page.locator("figure .note").count() >= 6
    titles = page.locator("#plot-time .g-ytitle, #plot-world .g-xtitle").all_text_contents()
    assert titles
    assert not [t for t in titles if "_" in t], titles


def test_ticking_and_legend_clicks_compute_only_visible_methods(page) -> None:
    # Hiding a method recomputes without it...
    done = page.evaluate("tumbleLab.completed")
    page.locator("#method-list input[value='jolt']").uncheck()
    wait_answer(page, done)
    assert "jolt" not in requested_methods(page)
    assert "jolt" not in {m["name"] for m in page.evaluate("tumbleLab.data.methods")}
    assert "jolt" not in drawn_groups(page, "plot-body")
    # ...and a click on a greyed legend entry computes and shows it.
    done = page.evaluate("tumbleLab.completed")
    entry = page.locator("#plot-time .legend .traces").filter(
        has=page.locator("text.legendtext", has_text="midpoint")
    )
    entry.locator("rect.legendtoggle").click()
    wait_answer(page, done)
    assert "midpoint" in requested_methods(page)
    for fig in FIGURES:
        assert "midpoint" in drawn_groups(page, fig), fig
    assert "midpoint" in parse_qs(urlparse(page.url).query)["methods"][0].split(",")
    # Double-click isolates a method and keeps the exact reference.
    done = page.evaluate("tumbleLab.completed")
    entry = page.locator("#plot-time .legend .traces").filter(
        has=page.locator("text.legendtext", has_text="midpoint")
    )
    settle(page)
    entry.locator("rect.legendtoggle").dblclick()
    page.wait_for_function(
        "tumbleLab.request.methods.join() === 'midpoint'", timeout=COMPUTE_TIMEOUT_MS
    )
    for fig in FIGURES:
        assert drawn_groups(page, fig) == {REFERENCE, "midpoint"}, fig
    # Few methods leave room for long runs: 8000 steps per rotation x 20 rotations x 1.
    done = page.evaluate("tumbleLab.completed")
    page.fill("#steps-per-rotation", "8000")
    page.press("#steps-per-rotation", "Enter")
    wait_answer(page, done)
    assert page.evaluate("tumbleLab.data.case.steps") == 160_000
    assert page.evaluate("tumbleLab.failed") == 0


def test_number_boxes_commit_on_change_and_reject_non_integers(page) -> None:
    done = page.evaluate("tumbleLab.completed")
    box = page.locator("#steps-per-rotation")
    box.click()
    box.press("Control+A")
    box.press_sequentially("100")  # 1, 10, 100 as typed: no request yet
    page.wait_for_timeout(400)
    assert page.evaluate("tumbleLab.completed") == done
    box.press("Enter")
    wait_answer(page, done)
    assert page.evaluate("tumbleLab.request.steps_per_rotation") == 100
    done = page.evaluate("tumbleLab.completed")
    box.fill("2.5")
    box.press("Tab")  # leaving the box commits
    assert box.get_attribute("aria-invalid") == "true"
    assert "whole number" in page.inner_text("#steps-per-rotation-error")
    page.wait_for_timeout(300)
    assert page.evaluate("tumbleLab.completed") == done
    assert page.evaluate("tumbleLab.state.steps_per_rotation") == 100
    box.fill("32")
    box.press("Enter")
    wait_answer(page, done)
    assert box.get_attribute("aria-invalid") == "false"
    assert page.inner_text("#steps-per-rotation-error") == ""


def test_moving_median_j_changes_the_energy_trace_and_the_url(page) -> None:
    before = energy_trace(page, "jolt")
    done = page.evaluate("tumbleLab.completed")
    page.evaluate("window.__notReloaded = true")
    slider = page.locator("#median-j")
    slider.focus()
    for _ in range(20):  # 20 keyboard steps of 0.01, debounced into one or two requests
        page.keyboard.press("ArrowRight")
    wait_answer(page, done)
    page.wait_for_function("tumbleLab.data.case.inv_inertia[1] > 1.15", timeout=COMPUTE_TIMEOUT_MS)
    assert float(slider.input_value()) == pytest.approx(0.7)
    after = energy_trace(page, "jolt")
    assert len(after) == len(before)
    assert max(abs(a - b) for a, b in zip(after, before, strict=True)) > 1e-3
    assert "1.200" in page.inner_text("#inertia-readout")
    # The URL follows without a reload.
    assert float(parse_qs(urlparse(page.url).query)["median_j"][0]) == pytest.approx(0.7)
    assert page.evaluate("window.__notReloaded") is True


def test_url_round_trip_restores_the_run(context, live_server) -> None:
    query = (
        "min_j=1.25&median_j=0.3&energy=0.27&steps_per_rotation=40&rotations=3"
        "&methods=rk4,midpoint&view=midpoint"
    )
    first = open_lab(context, live_server, query)
    assert first.evaluate("tumbleLab.request") == {
        "min_j": 1.25, "median_j": 0.3, "energy": 0.27, "steps_per_rotation": 40,
        "rotations": 3, "methods": ["rk4", "midpoint"],
    }  # fmt: skip
    assert first.input_value("#anim-method") == "midpoint"
    assert first.locator("#method-list input:checked").count() == 2
    assert first.input_value("#steps-per-rotation") == "40"
    # Change a control; the new URL, opened elsewhere, gives the same run exactly.
    done = first.evaluate("tumbleLab.completed")
    first.locator("#method-list input[value='jolt']").check()
    wait_answer(first, done)
    first.select_option("#anim-method", "jolt")
    url = first.url
    assert "view=jolt" in url
    second = reopen(first, live_server)
    assert second.input_value("#anim-method") == "jolt"
    assert second.url == url
    close(second)
    close(first)


# ------------------------------------------------------------------------ blow-ups


def test_a_blown_up_method_leaves_the_other_traces_readable(context, live_server) -> None:
    # Explicit Euler at min J 3 and 16 steps per rotation grows |L| past 1e100.
    case = "min_j=3&median_j=0.5&energy=0.4&steps_per_rotation=16&rotations=20"
    calm = open_lab(context, live_server, f"{case}&methods=jolt,modified_jolt")
    wild = open_lab(context, live_server, f"{case}&methods=explicit,jolt,modified_jolt")
    assert wild.evaluate("tumbleLab.data.methods[0].blew_up") is not None
    for fig, axes in (("plot-time", ("yaxis", "yaxis2")), ("plot-world", ("xaxis", "yaxis"))):
        for ax in axes:
            lo, hi = axis_range(wild, fig, ax)
            clo, chi = axis_range(calm, fig, ax)
            assert math.isfinite(lo), (fig, ax)
            assert math.isfinite(hi), (fig, ax)
            assert hi - lo <= 10 * (chi - clo), (fig, ax, [lo, hi], [clo, chi])
    # A cross marks where it blew up, inside the panel.
    marks = wild.evaluate(
        """Array.from(document.getElementById("plot-time").data)
            .filter((t) => t.mode === "markers" && t.meta === "explicit")
            .map((t) => ({y: t.y[0], axis: t.yaxis || "y"}))"""
    )
    assert len(marks) == 3
    lo, hi = axis_range(wild, "plot-time", "yaxis2")
    assert next(m for m in marks if m["axis"] == "y2")["y"] <= hi
    assert "blew up at t" in wild.inner_text("#scores")
    close(calm)
    close(wild)


def test_axes_use_powers_of_ten_and_round_off_is_not_magnified(context, live_server) -> None:
    # Methods that keep |L| to round-off: the |L| axis still spans at least ±0.1 %.
    pg = open_lab(context, live_server, "methods=modified_jolt,midpoint")
    lo, hi = axis_range(pg, "plot-time", "yaxis2")
    assert hi - lo >= 2e-3 * 0.99
    lo, hi = axis_range(pg, "plot-world", "xaxis")
    assert hi - lo >= 2e-3 * 0.99
    ticks = pg.locator("#plot-time .ytick text, #plot-world .xtick text").all_text_contents()
    si = [t for t in ticks if t and t[-1] in "fpnμmkMG"]
    assert ticks
    assert not si, ticks
    close(pg)


# ------------------------------------------------------------------------ panels


def test_scrubber_moves_the_cursor_and_the_3d_view(page) -> None:
    page.click("#play")  # pause
    assert page.get_attribute("#play", "aria-pressed") == "false"
    scrub = page.locator("#scrubber")
    scrub.focus()
    page.keyboard.press("Home")
    page.wait_for_timeout(100)
    first = page.evaluate("document.getElementById('body-canvas').toDataURL()")
    assert page.evaluate("tumbleLab.cursor") == 0
    for _ in range(3):
        page.keyboard.press("PageUp")
    page.wait_for_timeout(150)
    cursor = page.evaluate("tumbleLab.cursor")
    assert cursor > 0
    second = page.evaluate("document.getElementById('body-canvas').toDataURL()")
    assert first != second, "the 3-D view did not move with the scrubber"
    assert f"t = {cursor:.2f}" in page.inner_text("#anim-readout")
    # The time plots' cursor line is at the record shown; the orbit plots mark it too.
    k = page.evaluate("tumbleLab.cursorRecord")
    t_k = page.evaluate(f"tumbleLab.data.t[{k}]")
    line_x = page.evaluate("document.getElementById('plot-time').layout.shapes[0].x0")
    assert line_x == pytest.approx(t_k)
    dots = page.evaluate(
        """document.getElementById("plot-body").layout.shapes
            .filter((s) => s.type === "circle").map((s) => s.xref + s.yref)"""
    )
    assert len(dots) == 18  # reference + 5 methods on each of the 3 projections
    assert sorted(dots.count(panel) for panel in set(dots)) == [6, 6, 6]
    jolt = next(m for m in page.evaluate("tumbleLab.data.methods") if m["name"] == "jolt")
    dot = page.evaluate(
        """document.getElementById("plot-world").layout.shapes
            .find((s) => s.meta === "jolt")"""
    )
    assert dot["xanchor"] == jolt["L_world"]["x"][k]
    assert dot["yanchor"] == jolt["L_world"]["y"][k]
    # Paused: nothing moves; play moves it again.
    page.wait_for_timeout(200)
    assert page.evaluate("tumbleLab.cursor") == cursor
    page.click("#play")
    page.wait_for_function(f"tumbleLab.cursor !== {cursor}", timeout=5_000)


def test_momentum_sphere_draws_polhodes_and_paths(page) -> None:
    data = page.evaluate("tumbleLab.data.polhodes")
    assert len(data) >= 5
    assert sum(level["separatrix"] for level in data) == 1
    page.locator("#sphere-canvas").scroll_into_view_if_needed()  # drawn while on screen
    # The canvas gets ink: pixels that are not transparent.
    page.wait_for_function(
        """(() => { const c = document.getElementById("sphere-canvas");
            const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
            let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
            return n > 5000; })()""",
        timeout=15_000,
    )
    before = page.evaluate("document.getElementById('sphere-canvas').toDataURL()")
    page.focus("#sphere-canvas")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        "(b) => document.getElementById('sphere-canvas').toDataURL() !== b",
        arg=before,
        timeout=5_000,
    )


def test_error_versus_cost_shows_the_orders(context, live_server) -> None:
    pg = open_lab(context, live_server, "methods=explicit,midpoint,rk4&rotations=2")
    pg.click("#measure-cost")
    pg.wait_for_function("tumbleLab.cost !== undefined", timeout=COMPUTE_TIMEOUT_MS)
    orders = {m["name"]: m["order"] for m in pg.evaluate("tumbleLab.cost.methods")}
    assert orders["rk4"] == pytest.approx(4, abs=0.5)
    assert orders["midpoint"] == pytest.approx(2, abs=0.3)
    traces = pg.evaluate(
        "document.getElementById('plot-cost').data.map((t) => [t.meta, t.x.length])"
    )
    assert dict(traces) == {"explicit": 3, "midpoint": 3, "rk4": 3}
    close(pg)


def test_presets_and_a_custom_body(page) -> None:
    done = page.evaluate("tumbleLab.completed")
    page.select_option("#preset", "tennis-racket")
    wait_answer(page, done)
    presets = {p["id"]: p for p in page.evaluate("tumbleLab.presets")}
    request = page.evaluate("tumbleLab.request")
    for key, value in presets["tennis-racket"]["params"].items():
        assert request[key] == value, key
    assert "tennis" in page.inner_text("#preset-note")
    assert float(parse_qs(urlparse(page.url).query)["energy"][0]) == request["energy"]
    # The spherical preset is an explicit body.
    done = page.evaluate("tumbleLab.completed")
    page.select_option("#preset", "sphere")
    wait_answer(page, done)
    assert page.evaluate("tumbleLab.request.inv_inertia") == [1, 1, 1]
    assert page.evaluate("tumbleLab.data.polhodes") == []
    # A custom body typed in by hand.
    done = page.evaluate("tumbleLab.completed")
    assert page.evaluate("document.getElementById('custom').open")  # opened by the preset
    page.fill("#inv-x", "0.4")
    page.press("#inv-x", "Enter")
    wait_answer(page, done)
    assert page.evaluate("tumbleLab.request.inv_inertia") == [0.4, 1, 1]
    assert "inv_inertia=0.4,1,1" in page.url
    assert page.is_disabled("#min-j")
    # A near-cubic body fits its half of the 3-D view: nothing drawn in the edge rows.
    done = page.evaluate("tumbleLab.completed")
    for axis, value in (("x", "1"), ("y", "1.05"), ("z", "1.1")):
        page.fill(f"#inv-{axis}", value)
    page.press("#inv-z", "Enter")
    wait_answer(page, done)
    page.wait_for_function("tumbleLab.data.case.inv_inertia.join() === '1,1.05,1.1'")
    page.click("#play")  # pause, then let a frame draw the paused body
    page.locator("#body-canvas").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    edges = page.evaluate(
        """(() => { const c = document.getElementById("body-canvas");
            const g = c.getContext("2d"); const n = Math.ceil(c.height * 0.02);
            const rows = [g.getImageData(0, 0, c.width, n),
                          g.getImageData(0, c.height - n, c.width, n)];
            let ink = 0; for (const r of rows) for (let i = 3; i < r.data.length; i += 4)
              if (r.data[i] > 0) ink++;
            return [ink, c.height]; })()"""
    )
    assert edges[0] == 0, edges


def test_csv_and_json_downloads_parse(page) -> None:
    with page.expect_download() as info:
        page.click("#export-csv")
    text = Path(info.value.path()).read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    data = page.evaluate("tumbleLab.data")
    n = len(data["t"])
    assert len(rows) == n * (1 + len(DEFAULT_SHOWN))
    assert [r["method"] for r in rows[::n]] == ["exact", *DEFAULT_SHOWN]
    jolt = [r for r in rows if r["method"] == "jolt"]
    k = n // 2
    assert float(jolt[k]["t"]) == data["t"][k]
    run = next(m for m in data["methods"] if m["name"] == "jolt")
    assert float(jolt[k]["energy_factor"]) == run["energy_factor"][k]
    assert float(jolt[k]["L_body_y"]) == run["L_body"]["y"][k]
    assert float(jolt[k]["q_w"]) == run["q"]["w"][k]
    assert rows[0]["attitude_error"] == ""  # the reference has no error against itself
    with page.expect_download() as info:
        page.click("#export-json")
    saved = json.loads(Path(info.value.path()).read_text())
    assert saved["request"] == page.evaluate("tumbleLab.request")
    assert set(saved["scores"]) == set(DEFAULT_SHOWN)
    assert saved["scores"]["jolt"]["energy_error"] == run["scores"]["energy_error"]


# ------------------------------------------------------------------------ access, layout


def test_no_cloud_button_and_a_png_camera(page) -> None:
    page.hover("#plot-time")
    bar = page.locator("#plot-time .modebar")
    bar.wait_for(state="attached")
    titles = [b.get_attribute("data-title") or "" for b in bar.locator(".modebar-btn").all()]
    assert any("png" in t.lower() for t in titles), titles
    assert not [t for t in titles if "share" in t.lower() or "cloud" in t.lower()], titles
    assert page.locator(".modebar-btn[data-attr='sendChartToCloud']").count() == 0


def test_every_control_has_a_label_and_visible_focus(page) -> None:
    missing = page.evaluate(
        """Array.from(document.querySelectorAll("input, select, button"))
            .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute("aria-label")
                            && !el.textContent.trim())
            .map((el) => el.id || el.outerHTML.slice(0, 60))"""
    )
    assert missing == []
    # Tab walks the controls in order, each with a visible outline.
    page.focus("#preset")
    seen = []
    for _ in range(8):
        page.keyboard.press("Tab")
        seen.append(
            page.evaluate(
                """(() => { const el = document.activeElement;
                    const s = getComputedStyle(el);
                    return [el.id || el.value, s.outlineStyle, parseFloat(s.outlineWidth)]; })()"""
            )
        )
    ids = [s[0] for s in seen]
    assert ids[:5] == ["min-j", "median-j", "energy", "steps-per-rotation", "rotations"], ids
    assert all(style != "none" and width >= 2 for _, style, width in seen), seen


def test_phone_layout_has_no_horizontal_overflow(browser, live_server) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    pg = open_lab(ctx, live_server)
    pg.wait_for_timeout(300)  # plotly's responsive resize
    width = pg.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide"
    too_wide = pg.evaluate(
        """Array.from(document.querySelectorAll("main > figure, #controls, .plot, canvas"))
            .map((el) => [el.id || el.className, el.getBoundingClientRect().right])
            .filter(([, right]) => right > 390.5)"""
    )
    assert too_wide == []
    # The controls scroll away instead of covering the plots.
    assert pg.evaluate("getComputedStyle(document.getElementById('controls')).position") != (
        "sticky"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / "lab-phone.png"), full_page=True)
    close(pg)
    ctx.close()


def test_dark_theme_follows_the_system(browser, live_server) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    pg = open_lab(ctx, live_server)
    background = pg.evaluate("getComputedStyle(document.body).backgroundColor")
    paper = pg.evaluate("document.getElementById('plot-time')._fullLayout.paper_bgcolor")
    for colour in (background, paper):
        if colour.startswith("#"):
            rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
        else:
            rgb = [int(c) for c in colour[colour.index("(") + 1 : -1].split(",")[:3]]
        assert sum(rgb) < 3 * 80, colour
    close(pg)
    ctx.close()


def test_screenshot_artifact(page) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "lab.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def _tiny_sweep(folder: Path) -> Path:
    """A 2 x 2 sweep dataset written directly (no cluster): one method, round-off scores."""
    from tumble import sweep
    from tumble.sweep import dataset, task

    cases = sweep.build_grid(["splitting"], [0.5], [0.2, 0.8], [0.1, 0.9], [16], [1.0])
    rows = []
    for i, case in enumerate(cases):
        row = {name: math.nan for name in task.COLUMNS}
        row.update(case.grid_values())
        row.update(case_id=case.case_id, steps=16)  # the sweep's own ids: not foreign rows
        row.update({s: 1e-16 * (i + 1) for s in task.SCORE_COLUMNS})
        rows.append(row)
    out = dataset.prepare_folder(folder)
    dataset.write_part(out, {c: [r[c] for r in rows] for c in task.COLUMNS})
    return out


def test_written_html_figures_have_no_cloud_button(context, tmp_path) -> None:
    pytest.importorskip("pyarrow")
    from tumble.cli import main
    from tumble.sweep import plot as sweep_plot

    compare_html = tmp_path / "compare.html"
    argv = ["compare", "--steps-per-rotation", "8", "--rotations", "1", "--methods", "jolt",
            "--plot", str(compare_html)]  # fmt: skip
    assert main(argv) == 0
    sweep_html = sweep_plot.plot(_tiny_sweep(tmp_path / "sweep"), tmp_path / "sweep.html")
    for path in (compare_html, sweep_html):
        pg = context.new_page()
        outside: list[str] = []
        pg.on(
            "request",
            lambda req, seen=outside: (
                None if req.url.startswith(("file:", "data:", "blob:")) else seen.append(req.url)
            ),
        )
        pg.goto(path.as_uri())
        pg.wait_for_selector(".plotly .main-svg")
        pg.hover(".plotly .main-svg")
        pg.locator(".modebar-btn").first.wait_for(state="attached")
        titles = [b.get_attribute("data-title") or "" for b in pg.locator(".modebar-btn").all()]
        assert any("png" in t.lower() for t in titles), (path.name, titles)
        assert not [t for t in titles if "share" in t.lower() or "cloud" in t.lower()], titles
        assert outside == [], outside
        pg.close()

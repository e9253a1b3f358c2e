"""The lab page in headless Chromium (Playwright): plots, controls, legend, 3-D view.

Skipped with a visible reason where Chromium or playwright is missing (see conftest).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

FIGURES = ("plot-time", "plot-world", "plot-body")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"  # gitignored


def trace_state(page, figure: str) -> list[dict]:
    return page.evaluate(
        """(id) => document.getElementById(id).data.map(
            (t) => ({meta: t.meta, visible: t.visible, yaxis: t.yaxis || "y",
                     n: t.y ? t.y.length : 0}))""",
        figure,
    )


def energy_trace(page, method: str) -> list[float]:
    return page.evaluate(
        """(m) => Array.from(document.getElementById("plot-time").data.find(
            (t) => t.meta === m && (t.yaxis || "y") === "y").y)""",
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


def test_plots_render_with_the_reference(page) -> None:
    for fig in FIGURES:
        traces = trace_state(page, fig)
        groups = {t["meta"] for t in traces}
        assert "exact (reference)" in groups
        assert {"jolt", "momentum_first", "midpoint"} <= groups
        assert all(t["n"] == page.evaluate("tumbleLab.data.t.length") for t in traces)
        assert drawn_lines(page, fig) >= 6, f"{fig} drew too few lines"
    # The time-range zoom (plotly range slider) is there.
    assert page.locator("#plot-time .rangeslider-container").count() == 1
    # Scores table: one row per method.
    assert page.locator("#scores tbody tr").count() == 15


def test_moving_median_j_changes_the_energy_trace(page) -> None:
    before = energy_trace(page, "jolt")
    done = page.evaluate("tumbleLab.completed")
    slider = page.locator("#median-j")
    slider.focus()
    for _ in range(20):  # 20 keyboard steps of 0.01, debounced into one or two requests
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"tumbleLab.completed > {done}", timeout=30_000)
    page.wait_for_function("tumbleLab.data.case.inv_inertia[1] > 1.15", timeout=30_000)
    assert float(slider.input_value()) == pytest.approx(0.7)
    after = energy_trace(page, "jolt")
    assert len(after) == len(before)
    assert max(abs(a - b) for a, b in zip(after, before, strict=True)) > 1e-3
    assert "1.20" in page.inner_text("#inertia-readout")


def test_clicking_a_legend_entry_hides_the_method_everywhere(page) -> None:
    lines_before = drawn_lines(page, "plot-body")
    entry = page.locator("#plot-time .legend .traces").filter(
        has=page.locator("text.legendtext", has_text="momentum_first")
    )
    entry = entry.filter(has_not_text="symmetric")
    assert entry.count() == 1
    entry.locator("rect.legendtoggle").click()
    for fig in FIGURES:
        states = [t["visible"] for t in trace_state(page, fig) if t["meta"] == "momentum_first"]
        assert states, fig
        assert all(v == "legendonly" for v in states), (fig, states)
    assert drawn_lines(page, "plot-body") == lines_before - 3  # its three body projections
    # Clicking again shows it again.
    entry.locator("rect.legendtoggle").click()
    for fig in FIGURES:
        states = [t["visible"] for t in trace_state(page, fig) if t["meta"] == "momentum_first"]
        assert all(v is True for v in states), (fig, states)


def test_the_3d_view_animates(page) -> None:
    canvas = page.locator("#body-canvas")
    frames = page.evaluate("tumbleLab.frames")
    first = page.evaluate("document.getElementById('body-canvas').toDataURL()")
    t0 = page.evaluate("tumbleLab.animTime")
    page.wait_for_timeout(500)
    second = page.evaluate("document.getElementById('body-canvas').toDataURL()")
    assert page.evaluate("tumbleLab.frames") > frames + 5
    assert page.evaluate("tumbleLab.animTime") != t0
    assert first != second, "the canvas did not change between two frames"
    assert canvas.bounding_box()["width"] > 400
    # Pause stops the motion; another method can be selected.
    page.click("#play")
    paused = page.evaluate("tumbleLab.animTime")
    page.wait_for_timeout(300)
    assert page.evaluate("tumbleLab.animTime") == paused
    page.select_option("#anim-method", "momentum_first")
    page.click("#play")
    page.wait_for_timeout(200)
    assert "momentum_first" in page.evaluate("document.getElementById('anim-method').value")


def test_screenshot_artifact(page) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "lab.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000

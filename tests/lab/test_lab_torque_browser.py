"""The lab's torque presets in headless Chromium (Playwright), driven as a person would:
choose the heavy top, see every plot drawn with the ODE reference, read what the page says
about it, share the URL and get the same run back, and leave for a free body again.

Skipped with a visible reason where Chromium or playwright is missing (see conftest).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from test_lab_browser import (
    DEFAULT_SHOWN,
    FIGURES,
    REFERENCE,
    close,
    drawn_groups,
    drawn_lines,
    reopen,
)

from conftest import COMPUTE_TIMEOUT_MS, open_lab

pytestmark = pytest.mark.browser


def choose(page, preset: str) -> None:
    done = page.evaluate("tumbleLab.completed")
    page.select_option("#preset", preset)
    page.wait_for_function(f"tumbleLab.completed > {done}", timeout=COMPUTE_TIMEOUT_MS)


def test_heavy_top_preset_draws_the_ode_reference_and_round_trips(context, live_server) -> None:
    page = open_lab(context, live_server)
    choose(page, "heavy-top")
    assert page.evaluate("tumbleLab.request") == {
        "torque": "heavy-top", "steps_per_rotation": 64, "rotations": 20,
        "methods": DEFAULT_SHOWN,
    }  # fmt: skip
    assert page.evaluate("tumbleLab.data.reference.kind") == "ode"
    # Every figure draws the reference and the ticked methods, and shows their lines.
    for fig in FIGURES:
        assert drawn_groups(page, fig) == {REFERENCE, *DEFAULT_SHOWN}, fig
        assert drawn_lines(page, fig) >= 6, fig
    legend = page.locator("#plot-time .legendtext").all_text_contents()
    assert any("ODE reference" in t for t in legend), legend
    # The reference's curves keep the spec's group (meta); their legend says what they are.
    assert not any(t == REFERENCE for t in legend), legend
    # The page says what it shows: the scenario, its parameters, the forced notes.
    note = page.inner_text("#preset-note")
    assert "heavy symmetric top" in note
    assert "12 rad/s" in note
    assert "torque scenario heavy-top" in page.inner_text("#inertia-readout")
    assert page.locator("p.note[data-when=forced]").first.is_visible()
    assert not page.locator("p.note[data-when=free]").first.is_visible()
    assert page.is_disabled("#min-j")
    assert page.is_disabled("#energy")
    assert page.locator("#scores tbody tr").count() == len(DEFAULT_SHOWN)
    query = parse_qs(urlparse(page.url).query)
    assert query["torque"] == ["heavy-top"]
    assert "min_j" not in query

    # The URL, opened in another page, restores the same forced run exactly.
    second = reopen(page, live_server)
    assert second.input_value("#preset") == "heavy-top"
    assert drawn_groups(second, "plot-time") == {REFERENCE, *DEFAULT_SHOWN}
    close(second)

    # Another preset leaves the torque scenario: a free body against the exact solution.
    choose(page, "article")
    request = page.evaluate("tumbleLab.request")
    assert "torque" not in request
    assert request["min_j"] == 0.5
    assert page.evaluate("tumbleLab.data.reference.kind") == "exact"
    assert "torque" not in page.url
    assert not page.is_disabled("#min-j")
    assert page.locator("p.note[data-when=free]").first.is_visible()
    close(page)


def test_gravity_gradient_with_nothing_ticked_says_so(context, live_server) -> None:
    page = open_lab(context, live_server, "torque=gravity-gradient&methods=rk4&rotations=2")
    assert page.evaluate("tumbleLab.data.case.torque") == "gravity-gradient"
    assert drawn_groups(page, "plot-body") == {REFERENCE, "rk4"}
    failed = page.evaluate("tumbleLab.failed")
    page.locator("#method-list input[value='rk4']").uncheck()
    # No exact solution to show alone under a torque: nothing is asked, the status says why.
    page.wait_for_function(
        "document.getElementById('status').textContent.includes('tick a method')"
    )
    assert page.evaluate("tumbleLab.failed") == failed
    close(page)

"""The lab page while the server is still compiling, in headless Chromium (Playwright).

The server's warm-up is held task by task (conftest's ``Gate``), so the page is seen
deterministically while the API loads, then while "exact" and "explicit" are compiling: a
notice and the empty plots say what the view waits for, at desktop and phone width, and the
plots come once the warm-up is let go.

Skipped with a visible reason where Chromium or playwright is missing (see conftest).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_lab_browser import ARTIFACTS, DEFAULT_SHOWN, REFERENCE, close, drawn_groups

from conftest import Gate, LiveServer, watch
from tumble.lab import api
from tumble.lab.server import LOADING
from tumble.lab.warmup import WarmUp

pytestmark = pytest.mark.browser

NOTICE = "#compile-notice"


@pytest.fixture(scope="module")
def held() -> Iterator[LiveServer]:
    """A server whose warm-up (the real plan) waits at each task for the test's word."""
    gate = Gate()
    with LiveServer(warm_up=WarmUp(api.warm_up_plan(), before_task=gate), ready=False) as server:
        server.gate = gate
        try:
            yield server
        finally:
            gate.open()


def placeholder(page, plot: str) -> str:
    """The text an empty plot shows (lab.css: ``.plot:empty::before``)."""
    return page.evaluate(
        "(id) => getComputedStyle(document.getElementById(id), '::before').content", plot
    )


def open_page(context, server):
    page = context.new_page()
    page.lab_errors = watch(page, server)
    page.goto(server.url + "/")
    page.wait_for_function("window.tumbleLab && tumbleLab.compilingSeen >= 1", timeout=60_000)
    return page


def test_the_page_says_what_it_compiles_then_draws(browser, context, held) -> None:
    gate = held.gate
    gate.wait_holding(LOADING)
    page = open_page(context, held)
    notice = page.locator(NOTICE)
    # The API is loading (on a first run tumble's import compiles kernels for a minute).
    assert notice.is_visible()
    assert f"starting: loading {LOADING}" in notice.inner_text()
    assert (
        page.evaluate("document.getElementById('compile-progress').hasAttribute('value')") is False
    )
    gate.let_through()
    gate.wait_holding("exact")
    page.wait_for_function(
        "(text) => document.getElementById('compile-text').textContent.includes(text)",
        arg="compiling exact (1 of 6)",
        timeout=30_000,
    )
    assert notice.is_visible()
    assert "compiling exact (1 of 6)" in notice.inner_text()
    assert page.evaluate("[tumbleLab.completed, tumbleLab.compiling.total]") == [0, 6]
    assert page.evaluate("document.getElementById('compile-progress').value") == 0
    # Not a blank plot: the empty plots and the status line say it too.
    for plot in ("plot-time", "plot-world", "plot-body"):
        assert "compiling exact (1 of 6)" in placeholder(page, plot)
    assert "compiling exact (1 of 6)" in page.inner_text("#status")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lab-compiling.png"))

    # At phone width the notice is on the first screen, and nothing overflows.
    phone_context = browser.new_context(viewport={"width": 390, "height": 844})
    phone = open_page(phone_context, held)
    box = phone.locator(NOTICE).bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 390
    assert box["y"] + box["height"] <= 844
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    close(phone)
    phone_context.close()

    # One task further: the notice follows.
    gate.let_through()
    page.wait_for_function(
        "(text) => document.getElementById('compile-text').textContent.includes(text)",
        arg="compiling explicit (2 of 6)",
        timeout=30_000,
    )
    assert page.evaluate("document.getElementById('compile-progress').value") == 1
    assert page.evaluate("tumbleLab.completed") == 0

    # Let go: the plots come, the notice goes.
    gate.open()
    page.wait_for_function("tumbleLab.completed >= 1", timeout=600_000)
    assert not notice.is_visible()
    assert page.evaluate("tumbleLab.compiling") is None
    assert drawn_groups(page, "plot-time") == {REFERENCE, *DEFAULT_SHOWN}
    assert "compiling" not in page.inner_text("#status")
    close(page)

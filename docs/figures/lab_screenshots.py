"""Make the lab's screenshots in docs/figures (``./dev screenshots``).

Serves the lab on a free loopback port and drives headless Debian Chromium (Playwright):

- ``lab-default.png``: the default view at 1366 × 900, top of the page;
- ``lab-phone.png``: the same at 390 × 844 (a phone), top of the page;
- ``lab-sphere.png``: the momentum sphere, tennis-racket preset, with three methods;
- ``lab-heavy-top.png``: the heavy-top torque preset at 1366 × 1180, top of the page (the
  methods against the ODE reference);
- ``lab-engines.png``: the "engines at 60 Hz" preset at 1366 wide, from the top of the page
  to the end of the time plots (the grouped method list with each engine's default setting
  ticked, and their curves against the exact solution);
- ``lab-compiling.png``: the default view at 1366 × 900 while its first method compiles (a
  second server whose warm-up is held there): the notice and the empty plots.

The animation is paused at a fixed cursor so that the pictures are reproducible.
Usage: ``python docs/figures/lab_screenshots.py [OUT_DIR]`` (default: this folder).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import Page, sync_playwright

from tumble.lab import api
from tumble.lab.server import LOADING, create_app
from tumble.lab.warmup import WarmUp

CHROMIUM = os.environ.get("TUMBLE_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update"]  # fmt: skip


def _serve(warm_up: bool | WarmUp = False) -> tuple[uvicorn.Server, str]:
    """A lab server on a free loopback port. Without a warm-up (the default) each page
    computes what it shows, compiling only that, instead of the whole plan (every method
    under every torque model) competing with the pages for the cores."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(
        uvicorn.Config(
            create_app(warm_up=warm_up), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    threading.Thread(target=srv.run, daemon=True).start()
    while not srv.started:
        time.sleep(0.05)
    return srv, f"http://127.0.0.1:{port}/"


def _open(page: Page, url: str, cursor: int) -> None:
    """Load ``url``, wait for the plots, pause the animation at scrubber position ``cursor``."""
    page.goto(url)
    page.wait_for_function("window.tumbleLab && tumbleLab.completed >= 1", timeout=600_000)
    page.click("#play")
    page.fill("#scrubber", str(cursor))
    page.dispatch_event("#scrubber", "input")
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(600)


def main(out: Path) -> None:
    srv, base = _serve()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            wide = browser.new_context(viewport={"width": 1366, "height": 1180})
            page = wide.new_page()
            _open(page, base, 420)
            page.screenshot(path=str(out / "lab-default.png"))
            query = (
                "?min_j=0.625&median_j=0.1875&energy=0.1775"
                "&methods=explicit,modified_jolt,midpoint&view=midpoint"
            )
            _open(page, base + query, 300)
            page.locator("#sphere-figure").screenshot(path=str(out / "lab-sphere.png"))
            _open(page, base + "?torque=heavy-top", 420)
            page.screenshot(path=str(out / "lab-heavy-top.png"))
            _open(page, base, 420)
            done = page.evaluate("tumbleLab.completed")
            page.select_option("#preset", "engines")
            page.wait_for_function(f"tumbleLab.completed > {done}", timeout=600_000)
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(600)
            bottom = page.locator("#plot-time").evaluate(
                "(el) => el.closest('figure').getBoundingClientRect().bottom + window.scrollY"
            )
            page.screenshot(
                path=str(out / "lab-engines.png"),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 1366, "height": round(bottom) + 8},
            )
            phone = browser.new_context(
                viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
            )
            page = phone.new_page()
            _open(page, base, 420)
            page.screenshot(path=str(out / "lab-phone.png"))
            release = threading.Event()
            # Held at the first task after the API's load: "compiling exact (1 of 6)".
            hold = lambda task: task.label == LOADING or release.wait()  # noqa: E731
            held, held_url = _serve(WarmUp(api.warm_up_plan(), before_task=hold))
            try:
                page = browser.new_page(viewport={"width": 1366, "height": 900})
                page.goto(held_url)
                page.wait_for_function(
                    "document.getElementById('compile-text').textContent.includes('(1 of 6)')"
                )
                page.screenshot(path=str(out / "lab-compiling.png"))
            finally:
                release.set()
                held.should_exit = True
            browser.close()
    finally:
        srv.should_exit = True
    names = (
        "lab-default.png", "lab-phone.png", "lab-sphere.png", "lab-heavy-top.png",
        "lab-engines.png",
    )  # fmt: skip
    for name in (*names, "lab-compiling.png"):
        print(f"wrote {out / name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)

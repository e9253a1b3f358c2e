"""Benchmark: the lab on a warm server, from the server's side and from a browser.

Goals (issue 16; after warm-up, the default view):

- the first plot is drawn at most 1.5 s after navigation (headless Debian Chromium: the
  page's own ``tumbleLab.firstPlotAt``, ``performance.now()`` when the first answer is
  drawn, measured from navigation start); pages of one browser context, so plotly.js comes
  from the HTTP cache as on a second visit;
- a slider change is redrawn at most 300 ms after the change (``tumbleLab.drawnAt -
  tumbleLab.changedAt``: the 60 ms debounce, the request, and the drawing of all plots);
- a request of 10⁶ method-steps answers in at most 1 s of server time (``Server-Timing``).

Also measured, as before: the server time of the default request (goal of issue 8: 100 ms)
and its floor, :func:`tumble.rigid.simulate` of the same methods alone; and the first click
on a torque preset (the heavy top, then the gravity-gradient satellite: the 5 default
methods under the torque and the reference ODE solve, which the warm-up has done and kept)
from the change to the redrawn plots, in the browser, and its server time.

Usage: ``tumble bench lab [--rounds R]``. The browser part needs ``/usr/bin/chromium`` and
the playwright package (else it is reported as not measured).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
import urllib.request
from typing import Any

from _common import CHROMIUM, CHROMIUM_ARGS, fmt_time, free_port, markdown_table, write_section

GOAL_DEFAULT_S = 0.100
GOAL_FIRST_PLOT_S = 1.5
GOAL_REDRAW_S = 0.300
GOAL_MILLION_S = 1.0
#: The torque presets whose first click is timed: those with a costly reference solve.
TORQUE_PRESETS = ("heavy-top", "gravity-gradient")


def _post(url: str, body: dict[str, Any]) -> tuple[float, float]:
    """(server seconds from Server-Timing, client round trip seconds) of one request."""
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        header = r.headers["Server-Timing"]
        json.loads(r.read())
    return float(header.split("dur=")[1]) / 1e3, time.perf_counter() - t0


def _browser(base: str, rounds: int) -> tuple[list[float], list[float], list[float]] | str:
    """First-plot, slider-redraw and torque-preset-redraw seconds, or why they were not
    measured."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} missing"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "playwright missing"
    first: list[float] = []
    redraw: list[float] = []
    preset: list[float] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        ctx = browser.new_context(viewport={"width": 1366, "height": 900})
        for i in range(rounds + 1):
            page = ctx.new_page()
            page.goto(base + "/")
            page.wait_for_function("window.tumbleLab && tumbleLab.completed >= 1", timeout=60_000)
            if i:  # the first visit fills the cache
                first.append(page.evaluate("tumbleLab.firstPlotAt") / 1e3)
            slider = page.locator("#median-j")
            slider.focus()
            for _ in range(3):
                done = page.evaluate("tumbleLab.completed")
                page.keyboard.press("ArrowRight")
                page.wait_for_function(f"tumbleLab.completed > {done}", timeout=60_000)
                page.wait_for_timeout(150)  # let the animation frame after the draw settle
                redraw.append(page.evaluate("tumbleLab.drawnAt - tumbleLab.changedAt") / 1e3)
            if i == 1:  # each torque preset once: later clicks would find its reference kept
                for name in TORQUE_PRESETS:
                    done = page.evaluate("tumbleLab.completed")
                    page.select_option("#preset", name)
                    page.wait_for_function(f"tumbleLab.completed > {done}", timeout=60_000)
                    page.wait_for_timeout(150)
                    preset.append(page.evaluate("tumbleLab.drawnAt - tumbleLab.changedAt") / 1e3)
            page.close()
        browser.close()
    return first, redraw, preset


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench lab")
    parser.add_argument("--rounds", type=int, default=20, help="requests per measurement")
    parser.add_argument("--pages", type=int, default=8, help="page loads in the browser")
    args = parser.parse_args(argv)

    import uvicorn

    from tumble import rigid, scenarios
    from tumble._kernels.dispatch import single_thread
    from tumble.lab import api, server

    default = api.SimulateRequest()
    case = default.case()
    answer = api.simulate(default)
    every = answer["case"]["every"]

    def floor() -> float:
        t0 = time.perf_counter()
        with single_thread():
            for m in rigid.METHODS:
                scenarios.simulate(case, m, every)
        return time.perf_counter() - t0

    api.warm_up()
    floors = [floor() for _ in range(args.rounds)]

    # 10^6 method-steps: the five methods shown by default at 200 000 steps each.
    shown = ["explicit", "jolt", "naive_rotation", "modified_jolt", "momentum_first"]
    million = {"steps_per_rotation": 10_000, "rotations": 20, "methods": shown}
    work = 10_000 * 20 * len(shown)

    port = free_port()
    # Warmed up above, in this process: no background warm-up to overlap the timings.
    app = server.create_app(warm_up=False)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    try:
        _post(base + "/api/simulate", {})
        default_server, default_trip = zip(
            *(_post(base + "/api/simulate", {}) for _ in range(args.rounds)), strict=True
        )
        million_server, million_trip = zip(
            *(_post(base + "/api/simulate", million) for _ in range(max(3, args.rounds // 4))),
            strict=True,
        )
        page_view = _post(base + "/api/simulate", {"methods": shown})
        top_view = _post(base + "/api/simulate", {"torque": "heavy-top", "methods": shown})
        browser = _browser(base, args.pages)
    finally:
        srv.should_exit = True
        thread.join(timeout=30)

    def row(label: str, samples: Any, goal: float) -> list[str]:
        med = statistics.median(samples)
        verdict = "met" if med <= goal else "NOT met"
        return [label, fmt_time(min(samples)), fmt_time(med), fmt_time(goal), verdict]

    if isinstance(browser, tuple):
        page_rows = [
            row("first plot after navigation (browser)", browser[0], GOAL_FIRST_PLOT_S),
            row("slider change to redrawn plots (browser)", browser[1], GOAL_REDRAW_S),
            [f"first click on a torque preset ({', '.join(TORQUE_PRESETS)}) to redrawn plots "
             "(browser)", fmt_time(min(browser[2])), fmt_time(statistics.median(browser[2])),
             "", "(no goal)"],
        ]  # fmt: skip
    else:
        page_rows = [[label, browser, "", "", "not measured"]
                     for label in ("first plot after navigation", "slider redraw")]  # fmt: skip
    rows = [
        *page_rows,
        row(f"{work:,} method-steps, Server-Timing", million_server, GOAL_MILLION_S),
        row("default request (all 15 methods), Server-Timing", default_server, GOAL_DEFAULT_S),
    ]  # fmt: skip
    extra = [
        ["default request, client round trip", fmt_time(min(default_trip)),
         fmt_time(statistics.median(default_trip))],
        [f"{work:,} method-steps, client round trip", fmt_time(min(million_trip)),
         fmt_time(statistics.median(million_trip))],
        ["default view (5 methods), Server-Timing", fmt_time(page_view[0]), ""],
        ["heavy-top preset view (5 methods, reference kept from the warm-up), Server-Timing",
         fmt_time(top_view[0]), ""],
        ["floor: scenarios.simulate of the 15 methods only", fmt_time(min(floors)),
         fmt_time(statistics.median(floors))],
    ]  # fmt: skip
    table = markdown_table(["measure", "best", "median", "goal", "verdict"], rows)
    table2 = markdown_table(["measure", "best", "median"], extra)
    js = server.plotly_js_path()
    bundle = f"{js.name}, {js.stat().st_size / 1e6:.1f} MB" + (
        ""
        if js in (server.BASIC_BUNDLE, server.PACKAGED_BUNDLE)
        else "; the partial bundle is not installed: `./dev` installs it with npm"
    )
    load = os.getloadavg()
    md = f"""## Lab: page and server timings

Warm server (numba kernels loaded, one request served). Browser: headless Debian Chromium
({CHROMIUM}), pages of one context at 1366 × 900 ({args.pages} page loads after a first
that fills the cache; 3 slider steps each); the default view computes the 5 methods shown
({", ".join(shown)}). Server: {args.rounds} requests per row over loopback HTTP.

{table}

{table2}

The first plot includes evaluating plotly.js ({bundle}) and drawing three plotly figures
with range slider. The default request is the article's case ({case.steps} steps, records every
{every} steps) with every method, as `POST /api/simulate` with `{{}}`.

The machine was shared with other jobs during the run (load average {load[0]:.1f}, {load[1]:.1f},
{load[2]:.1f} over 1, 5, 15 min on {os.cpu_count()} cores at the end), so expect noise of tens
of percent, more for the browser rows.
"""
    print(md)
    write_section("lab", md)
    return 0

"""Fixtures for the lab: an in-process client, a real uvicorn server, a headless Chromium.

The browser tests need Debian's Chromium at ``/usr/bin/chromium`` and the ``playwright``
Python package (its wheel carries the driver; no browser download). Where either is missing
they are skipped with the reason in pytest's summary (``-ra``); under ``CI=true`` they fail
instead, because CI must run them (``./dev test`` installs Chromium there as root).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the lab needs the lab extra: pip install -e '.[lab]'")
pytest.importorskip("uvicorn", reason="the lab needs the lab extra: pip install -e '.[lab]'")

import uvicorn

with warnings.catch_warnings():
    # Starlette's note that its test client will move from httpx to httpx2; not ours to fix.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

from tumble.lab import api
from tumble.lab.server import create_app
from tumble.lab.warmup import Task, WarmUp

#: The lab's whole warm-up plan: every method, also under every torque preset (minutes of
#: compiling from an empty numba cache, what a real server does in the background). The
#: tests of its order and coverage read this one.
FULL_PLAN = api.warm_up_plan


def first_view_plan() -> list[Task]:
    """The plan's tasks for the page's first view: the exact reference and the methods shown
    at start, torque-free."""
    first = ("exact", *api.SHOWN_AT_START)
    return [t for t in FULL_PLAN() if t.key[0] is None and t.key[1] in first]


@pytest.fixture(scope="session", autouse=True)
def _first_view_warm_up() -> Iterator[None]:
    # The servers and clients of these tests warm up the first view only, and every request
    # compiles what else it uses: the whole plan would compile every method under every
    # torque model in each test process, and keep a background thread compiling (numba's
    # compiler swaps the process's warning filters) while other test files run.
    patch = pytest.MonkeyPatch()
    patch.setattr(api, "warm_up_plan", first_view_plan)
    yield
    patch.undo()


#: Debian's Chromium; TUMBLE_CHROMIUM points the tests at another Chromium build.
CHROMIUM = Path(os.environ.get("TUMBLE_CHROMIUM", "/usr/bin/chromium"))
#: Flags known to work for headless Debian Chromium in a closed sandbox: no GPU, no
#: background connections (they are refused here, many at a time), no sandbox as root.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    # The context starts the warm-up in the background; a request without ``Prefer:
    # respond-async`` computes at once whatever it has run so far. Leaving it (at the end of
    # the test file) stops the warm-up, whose task under way ends before the next file runs.
    runner = WarmUp([])
    with TestClient(create_app(warm_up=runner)) as c:
        yield c
    runner.wait(timeout=WARM_UP_TIMEOUT_S)


def page_assets(html: str) -> list[str]:
    """The lab's own files that the page ``html`` loads (``/static/`` scripts and style
    sheets), in page order: plotly.js, which the server serves from elsewhere, left out."""
    names = re.findall(r'(?:src|href)="/static/([^"]+)"', html)
    return [name for name in names if name != "plotly.min.js"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: Milliseconds a browser test waits for a computation: the servers warm up the page's first
#: view only, so a request for other methods or a torque preset compiles them on demand
#: (the page says "compiling ..."), which takes minutes from an empty numba cache on a
#: loaded 2-core machine.
COMPUTE_TIMEOUT_MS = 600_000

#: Seconds the warm-up may take before a test gives up: from an empty numba cache it
#: compiles every method's loops, under each torque model too (minutes on a shared machine).
WARM_UP_TIMEOUT_S = 1800


class LiveServer:
    """uvicorn serving the lab on a free loopback port, in a background thread.

    ``warm_up`` is :func:`tumble.lab.server.create_app`'s; with ``ready`` the server is
    entered once its warm-up has run (the browser tests then time pages, not compiles).
    Leaving it waits for the end of a warm-up of its own making (``warm_up=True``)."""

    def __init__(self, warm_up: bool | WarmUp = True, ready: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.own = WarmUp([]) if warm_up is True else None
        self.runner = warm_up if isinstance(warm_up, WarmUp) else self.own
        self.ready = ready
        config = uvicorn.Config(
            create_app(warm_up=self.runner or False), host="127.0.0.1", port=self.port,
            log_level="warning",
            backlog=512,
        )  # fmt: skip
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def status(self) -> dict:
        with urllib.request.urlopen(self.url + "/api/status", timeout=30) as r:
            return json.loads(r.read())

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the lab server did not start")
            time.sleep(0.05)
        deadline = time.monotonic() + WARM_UP_TIMEOUT_S
        while self.ready and self.status()["state"] not in ("ready", "off"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the lab's warm-up did not end: {self.status()}")
            time.sleep(0.2)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        if self.own is not None:
            self.own.wait(timeout=WARM_UP_TIMEOUT_S)


class Gate:
    """A ``before_task`` hook of :class:`~tumble.lab.warmup.WarmUp` that holds each task
    until the test lets it through: the page can be seen while a task is "compiling"."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._permits = 0
        self._open = False
        self.holding: str | None = None  # the label of the task held now

    def __call__(self, task) -> None:
        with self._cond:
            self.holding = task.label
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._open or self._permits > 0)
            if not self._open:
                self._permits -= 1
            self.holding = None

    def wait_holding(self, label: str, timeout: float = 60) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: self.holding == label, timeout), self.holding

    def let_through(self, n: int = 1) -> None:
        with self._cond:
            self._permits += n
            self._cond.notify_all()

    def open(self) -> None:
        with self._cond:
            self._open = True
            self._cond.notify_all()


@pytest.fixture(scope="session")
def live_server() -> Iterator[LiveServer]:
    with LiveServer() as server:
        yield server


def _browser_missing() -> str | None:
    if not CHROMIUM.exists():
        return (
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; "
            "./dev test does it when run as root) or set TUMBLE_CHROMIUM"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is missing: pip install -e '.[dev]'"
    return None


@pytest.fixture(scope="session")
def browser():
    missing = _browser_missing()
    if missing is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"BROWSER TESTS CANNOT RUN IN CI: {missing}")
        pytest.skip(f"BROWSER TESTS SKIPPED: {missing}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def watch(pg, live_server) -> list[str]:
    """Errors a page reports, and any request that leaves the lab's server.

    Local schemes (``data:``, ``blob:`` of a download) are not requests to anyone.
    """
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    local = (live_server.url + "/", "data:", "blob:")
    pg.on(
        "request",
        lambda req: (
            errors.append(f"external request {req.url}") if not req.url.startswith(local) else None
        ),
    )
    return errors


@pytest.fixture(scope="module")
def context(browser):
    """One browser context per test module: its pages share the HTTP and code caches, so
    each page parses plotly.js from cache (keeps the suite fast)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1500}, accept_downloads=True)
    yield ctx
    ctx.close()


def open_lab(context, live_server, query: str = ""):
    """A new page of ``context`` on the lab (``query``: the URL's query string), after its
    first answer is drawn; ``page.lab_errors`` collects what :func:`watch` sees."""
    pg = context.new_page()
    pg.lab_errors = watch(pg, live_server)
    pg.goto(live_server.url + "/" + (f"?{query}" if query else ""))
    pg.wait_for_function(
        "window.tumbleLab && window.tumbleLab.completed >= 1", timeout=COMPUTE_TIMEOUT_MS
    )
    return pg


@pytest.fixture
def page(context, live_server):
    pg = open_lab(context, live_server)
    yield pg
    errors = pg.lab_errors
    pg.close()
    assert errors == [], f"the page reported errors: {errors}"


def run_fresh(script: str) -> str:
    """Standard output of ``script`` (dedented) run in a fresh Python process on this
    checkout's sources, which must succeed: for what a new server process does first."""
    src = Path(api.__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
        timeout=900, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout

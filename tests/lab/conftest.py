"""Fixtures for the lab: an in-process client, a real uvicorn server, a headless Chromium.

The browser tests need Debian's Chromium at ``/usr/bin/chromium`` and the ``playwright``
Python package (its wheel carries the driver; no browser download). Where either is missing
they are skipped with the reason in pytest's summary (``-ra``); under ``CI=true`` they fail
instead, because CI must run them (``./dev test`` installs Chromium there as root).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
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


@pytest.fixture(scope="session")
def app():
    return create_app()


@pytest.fixture(scope="session")
def client(app) -> Iterator[TestClient]:
    with TestClient(app) as c:  # the context runs the start-up warm-up once
        yield c


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """uvicorn serving the lab on a free loopback port, in a background thread."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(), host="127.0.0.1", port=self.port, log_level="warning", backlog=512
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 120  # start-up warms up numba (compiles on a cold cache)
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the lab server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


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
    pg.wait_for_function("window.tumbleLab && window.tumbleLab.completed >= 1", timeout=60_000)
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

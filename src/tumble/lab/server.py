"""The lab's web server: the page at once, the JSON API once loaded, and ``tumble lab``.

Routes
------
``GET /``
    The page (``static/index.html``); its scripts and styles under ``/static/``.
``GET /static/plotly.min.js``
    plotly.js from this machine (:func:`plotly_js_path`): no CDN, works offline.
``GET /api/status``
    How far the start-up is: :meth:`tumble.lab.warmup.WarmUp.status`, with ``state``
    ``"starting"`` while the API is loading and a ``message`` for the page.
``/api/...``
    The JSON API, :func:`tumble.lab.routes.api_app` (methods, figure, presets, simulate,
    convergence).

Start-up. This module imports no numba kernel: the server listens and serves the page at
once. The API's import (:mod:`tumble.lab.routes`, which loads or, on a first run, compiles
the kernels that tumble's modules build when imported) is the first task of the warm-up
(:mod:`tumble.lab.warmup`), on its worker thread; a request to the API waits for it (the
page asks ``GET /api/status`` first and says what it waits for). The warm-up then runs
:func:`tumble.lab.api.warm_up_plan`.
"""

from __future__ import annotations

import errno
import gc
import importlib
import socket
import sys
import threading
import time
import urllib.request
import webbrowser
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from fastapi import FastAPI
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from tumble._errors import InputError
from tumble._validate import check_callable, describe
from tumble.lab.warmup import Task, WarmUp

__all__ = ["create_app", "plotly_js_path", "run"]

STATIC = Path(__file__).resolve().parent / "static"


#: The repository root when tumble runs from a checkout (``src`` layout, an editable
#: install); for an installed wheel it is some folder of the environment instead.
CHECKOUT = Path(__file__).resolve().parents[3]

#: plotly.js's partial "basic" bundle (scatter traces, which is all the page draws), as
#: ``./dev`` installs it with ``npm ci`` from the checkout's ``package-lock.json``.
BASIC_BUNDLE = CHECKOUT / "node_modules" / "plotly.js-basic-dist-min" / "plotly-basic.min.js"

#: The same bundle inside an installed wheel, where the build hook (``hatch_build.py`` in
#: the repository) put it; absent in a checkout.
PACKAGED_BUNDLE = Path(__file__).resolve().parent / "vendor" / "plotly-basic.min.js"


def plotly_js_path() -> Path:
    """The plotly.js file the page loads.

    The partial bundle (1.2 MB): :data:`PACKAGED_BUNDLE` in a wheel built with npm at hand,
    or :data:`BASIC_BUNDLE` when tumble runs from a checkout (:data:`CHECKOUT` holds
    ``package-lock.json``) and ``./dev`` installed it. Else the full bundle inside the
    installed ``plotly`` Python package (4.6 MB, which Chromium takes about four times as
    long to evaluate: the first plot comes one to two seconds later; see ``docs/lab.md``).
    """
    if PACKAGED_BUNDLE.is_file():
        return PACKAGED_BUNDLE
    if (CHECKOUT / "package-lock.json").is_file() and BASIC_BUNDLE.is_file():
        return BASIC_BUNDLE
    path = Path(str(resources.files("plotly") / "package_data" / "plotly.min.js"))
    if not path.is_file():
        raise FileNotFoundError(f"plotly.min.js not found in the plotly package at {path}")
    return path


#: The label of the warm-up's first task: importing the API (and with it the library).
LOADING = "tumble's modules"


class _Deferred:
    """The API app, once a thread has built it; a request before that waits for it."""

    def __init__(self) -> None:
        self.app: ASGIApp | None = None
        self.failure: str | None = None
        self._done = threading.Event()

    @property
    def waiting(self) -> bool:
        return not self._done.is_set()

    def load(self, warm_up: WarmUp | None) -> None:
        """Import :mod:`tumble.lab.routes` and build the API; then queue the warm-up's plan."""
        try:
            # Imported here, not at the top: on a first run it compiles kernels for a minute.
            routes = importlib.import_module("tumble.lab.routes")
            self.app = routes.api_app(warm_up)
        except Exception as exc:
            self.failure = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self._done.set()
        if warm_up is not None:
            warm_up.add(importlib.import_module("tumble.lab.api").warm_up_plan())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.waiting:
            await anyio.to_thread.run_sync(self._done.wait)
        if self.app is None:
            answer = JSONResponse(
                {"message": f"the lab's API could not load: {self.failure}"}, status_code=500
            )
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(
    *, warm_up: bool | WarmUp = True, on_ready: Callable[[], None] | None = None
) -> FastAPI:
    """The lab application: the page and ``GET /api/status`` at once, the API once loaded.

    Parameters
    ----------
    warm_up : bool or WarmUp, optional
        True: at start-up, a :class:`~tumble.lab.warmup.WarmUp` loads the API and then runs
        :func:`tumble.lab.api.warm_up_plan` in the background, so that loading numba's
        cached kernels (or compiling them, on a fresh install) is not paid by the first
        visitor. A :class:`~tumble.lab.warmup.WarmUp`: that one (a console log, a test's
        hold), with the loading of the API put first. False: the API is loaded here, and
        every request compiles what it needs itself.
    on_ready : callable, optional
        Called once the server is up, just before the warm-up starts.

    Raises
    ------
    InputError
        ``warm_up`` or ``on_ready`` of the wrong kind.
    """
    if isinstance(warm_up, WarmUp):
        runner: WarmUp | None = warm_up
    elif isinstance(warm_up, bool):
        runner = WarmUp([]) if warm_up else None
    else:
        raise InputError(f"warm_up: expected a bool or a WarmUp, got {describe(warm_up)}")
    if on_ready is not None:
        check_callable(on_ready, "on_ready", 0)
    deferred = _Deferred()
    if runner is None:
        deferred.load(None)
    else:
        runner.add([Task("load", LOADING, lambda: deferred.load(runner))], first=True)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if on_ready is not None:
            on_ready()  # first: its lines come before the warm-up's
        if runner is not None:
            runner.start()
        yield
        if runner is not None:
            runner.stop()

    app = FastAPI(title="tumble lab", lifespan=lifespan, docs_url=None, redoc_url=None)
    plotly_js = plotly_js_path()

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        # On the event loop, read whole (9 kB): no hand-off to a thread, each of which waits
        # for the GIL while the warm-up compiles (GET / stays quick then).
        page = (STATIC / "index.html").read_bytes()
        return Response(page, media_type="text/html", headers={"Cache-Control": "no-cache"})

    @app.get("/static/plotly.min.js", include_in_schema=False)
    def plotly() -> FileResponse:
        return FileResponse(
            plotly_js,
            media_type="text/javascript",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/status")
    async def status() -> dict[str, Any]:
        """The start-up: ``state`` (``"starting"`` while the API loads, ``"compiling"``,
        ``"ready"``; ``"off"`` without a warm-up), tasks ``done`` of ``total``, the
        ``running`` one, those that ``failed``, ``seconds``, and a ``message``."""
        if runner is None:
            out: dict[str, Any] = {"state": "off", "done": 0, "total": 0, "running": None,
                                   "failed": [], "seconds": 0.0}  # fmt: skip
        else:
            out = runner.status()
        if deferred.waiting:
            out["state"] = "starting"
            out["message"] = (
                f"starting: loading {LOADING} (a first run compiles their kernels, a minute)"
            )
        elif deferred.app is None:
            out["state"] = "failed"
            out["message"] = f"the lab's API could not load: {deferred.failure}"
        elif out["running"] is not None:
            out["message"] = f"compiling {out['running']} ({out['done'] + 1} of {out['total']})"
        else:
            out["message"] = out["state"]
        return out

    app.mount("/api", deferred)
    return app


def _open_when_up(url: str, timeout: float = 30.0) -> None:
    """Open ``url`` in the user's browser as soon as the server answers (the page says
    what it waits for, if anything)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1.0):
                break
        except OSError:
            time.sleep(0.2)
    webbrowser.open(url)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 if ``host`` has a colon).

    Raises
    ------
    SystemExit
        Status 2 with one line on stderr when the port is taken (suggesting ``--port``)
        or the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            why = f"port {port} on {host} is already in use; choose another with --port N"
        else:
            why = f"cannot listen on {host}:{port} ({exc.strerror or exc})"
        print(f"tumble lab: error: {why}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    sock.set_inheritable(True)
    return sock


def _serve(app: FastAPI, sock: socket.socket) -> None:
    """uvicorn on an already bound socket, until interrupted."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def _console(line: str, transient: bool) -> None:
    """A progress line of the warm-up on standard output. On a terminal a transient line
    (a task that started, or ended within a second: loaded from the cache) is overwritten
    by the next; elsewhere (a log file, a pipe) only the lasting lines are written."""
    out = sys.stdout
    if out.isatty():
        out.write(f"\r\x1b[Ktumble lab: {line}" + ("" if transient else "\n"))
    elif not transient:
        out.write(f"tumble lab: {line}\n")
    out.flush()


def _assets_line() -> str:
    """Which plotly.js the page gets, for the console."""
    js = plotly_js_path()
    size = f"{js.stat().st_size / 1e6:.1f} MB"
    if js in (PACKAGED_BUNDLE, BASIC_BUNDLE):
        return f"page assets: plotly.js partial bundle ({size}, {js})"
    return (
        f"page assets: plotly.js partial bundle missing (install npm and run ./dev lab in a "
        f"checkout, or build the wheel with npm at hand): serving the full bundle ({size}, "
        "its first plot comes one to two seconds later)"
    )


def run(host: str = "127.0.0.1", port: int = 8050, open_browser: bool = False) -> None:
    """Serve the lab with uvicorn until interrupted (``tumble lab``).

    The port is bound first: a busy port is one line on stderr and status 2, before any
    start-up work. The server answers at once; the warm-up compiles in the background and
    prints its progress (one line per task that took a second or more, and a last line).

    Parameters
    ----------
    host : str, optional
        Interface to bind; the loopback interface unless told otherwise.
    port : int, optional
        TCP port (0: any free port).
    open_browser : bool, optional
        Open the page with :mod:`webbrowser` once the server answers.
    """
    sock = bind(host, port)
    port = int(sock.getsockname()[1])
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    url = f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"
    print(f"tumble lab: {_assets_line()}", flush=True)
    if open_browser:
        threading.Thread(target=_open_when_up, args=(url,), daemon=True).start()
    runner = WarmUp([], log=_console)
    # Right after the API's import (the first task, which create_app puts before this one),
    # its 300 000 long-lived objects go out of the collector's way: a full collection stops
    # every thread, and during the compiles that follow one took up to 1.3 s with them in,
    # 0.5 s without (this process only: the `tumble lab` command owns it).
    runner.add([Task("gc.freeze", "setting the imported objects aside", gc.freeze)])

    def ready() -> None:
        print(f"tumble lab: serving on {url} (Ctrl+C to stop)", flush=True)
        print(
            f"tumble lab: loading {LOADING}, then compiling the integrators in the background, "
            "the page's first view first (from an empty numba cache: minutes; the page says "
            "what it waits for)",
            flush=True,
        )

    with sock:
        try:
            _serve(create_app(warm_up=runner, on_ready=ready), sock)
        except KeyboardInterrupt:
            # uvicorn stops on Ctrl+C, then raises it again: that is the way to stop the lab
            # (the warm-up's daemon thread ends with the process), not an error to trace.
            print("\ntumble lab: stopped", flush=True)

"""The lab's web server: a FastAPI app (page + JSON API) and the ``tumble lab`` runner.

Routes
------
``GET /``
    The page (``static/index.html``); its scripts and styles under ``/static/``.
``GET /static/plotly.min.js``
    plotly.js from this machine (:func:`plotly_js_path`): no CDN, works offline.
``GET /api/methods``
    :func:`tumble.lab.api.method_table`.
``GET /api/figure``
    :func:`tumble.figures.spec`: the panels, traces and colours that the page draws.
``GET /api/presets``
    :func:`tumble.lab.api.preset_table`: the preset menu (free bodies and torque scenarios).
``POST /api/simulate``
    :func:`tumble.lab.api.simulate`. 422 for a malformed or out-of-range request (the
    ``message`` names the field), 413 for work beyond :data:`~tumble.lab.api.MAX_WORK`
    method-steps, a torque scenario beyond :data:`~tumble.lab.api.MAX_FORCED_ROTATIONS`
    or a body beyond :data:`~tumble.lab.api.MAX_BODY_BYTES`.
``POST /api/convergence``
    :func:`tumble.lab.api.convergence` (error against cost), same request and errors.

The endpoints are plain ``def`` functions: FastAPI runs them in its thread pool, so a
request that is simulating (numba releases nothing, but NumPy and the JSON encoding
interleave) does not stop the server from accepting and answering others.
"""

from __future__ import annotations

import errno
import socket
import sys
import threading
import time
import urllib.request
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from tumble import figures
from tumble._errors import InputError
from tumble.lab import api

__all__ = ["create_app", "plotly_js_path", "run"]

STATIC = Path(__file__).resolve().parent / "static"


#: The repository root when tumble runs from a checkout (``src`` layout, an editable
#: install); for an installed wheel it is some folder of the environment instead.
CHECKOUT = Path(__file__).resolve().parents[3]

#: plotly.js's partial "basic" bundle (scatter traces, which is all the page draws), as
#: ``./dev`` installs it with ``npm ci`` from the checkout's ``package-lock.json``.
BASIC_BUNDLE = CHECKOUT / "node_modules" / "plotly.js-basic-dist-min" / "plotly-basic.min.js"


def plotly_js_path() -> Path:
    """The plotly.js file the page loads.

    The partial bundle :data:`BASIC_BUNDLE` (1.2 MB) when tumble runs from a checkout
    (:data:`CHECKOUT` holds ``package-lock.json``) and ``./dev`` installed it, else the
    full bundle inside the installed ``plotly`` Python package (4.6 MB, which Chromium
    takes about four times as long to evaluate: the first plot comes about a second later;
    see ``docs/lab.md``).
    """
    if (CHECKOUT / "package-lock.json").is_file() and BASIC_BUNDLE.is_file():
        return BASIC_BUNDLE
    path = Path(str(resources.files("plotly") / "package_data" / "plotly.min.js"))
    if not path.is_file():
        raise FileNotFoundError(f"plotly.min.js not found in the plotly package at {path}")
    return path


#: The error answers of the endpoints that take a :class:`~tumble.lab.api.SimulateRequest`.
_LIMITED: dict[int | str, dict[str, Any]] = {
    413: {"description": "more work than the documented limit"},
    422: {"description": "malformed or out-of-range request"},
}


def _error(status: int, message: str, detail: Any = None) -> JSONResponse:
    body: dict[str, Any] = {"message": message}
    if detail is not None:
        body["detail"] = detail
    return JSONResponse(body, status_code=status)


def create_app(*, warm_up: bool = True, on_ready: Callable[[], None] | None = None) -> FastAPI:
    """The lab application.

    Parameters
    ----------
    warm_up : bool, optional
        Run every method once at start-up, so that loading numba's cached kernels (or
        compiling them, on a fresh install) is not paid by the first visitor.
    on_ready : callable, optional
        Called once start-up (and the warm-up) is done.
    """

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            api.warm_up()
        if on_ready is not None:
            on_ready()
        yield

    app = FastAPI(
        title="tumble lab",
        description="Rigid-body integrators against the exact torque-free motion, or an "
        "ODE reference under a torque.",
        lifespan=lifespan,
    )
    plotly_js = plotly_js_path()

    @app.middleware("http")
    async def limit_body(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        length = request.headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return _error(400, "content-length: expected a number of bytes")
            if int(length) > api.MAX_BODY_BYTES:
                return _error(
                    413, f"body: {length} bytes exceeds the limit of {api.MAX_BODY_BYTES}"
                )
        # Counted on the bytes actually read: a chunked body has no Content-Length, and a
        # client may send more than it declared. Reading stops one chunk past the limit.
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > api.MAX_BODY_BYTES:
                return _error(
                    413, f"body: more than {api.MAX_BODY_BYTES} bytes, the limit of a request"
                )
        # What Request.body() caches; call_next hands it to the endpoint from there.
        request._body = bytes(body)
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
        return _error(422, api.validation_message(errors), errors)

    @app.exception_handler(InputError)
    async def refused_case(_: Request, exc: InputError) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(api.WorkTooLarge)
    async def too_much_work(_: Request, exc: api.WorkTooLarge) -> JSONResponse:
        return _error(413, str(exc))

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/static/plotly.min.js", include_in_schema=False)
    def plotly() -> FileResponse:
        return FileResponse(
            plotly_js,
            media_type="text/javascript",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/methods")
    def methods() -> list[dict[str, Any]]:
        """Every integrator: name, one-line description, order, what it conserves."""
        return api.method_table()

    @app.get("/api/figure")
    def figure() -> dict[str, Any]:
        """The figure spec: panels on a grid, traces by name, one colour per method."""
        return figures.spec()

    @app.get("/api/presets")
    def presets() -> list[dict[str, Any]]:
        """The preset menu: named cases with the request fields they set."""
        return api.preset_table()

    @app.post(
        "/api/simulate",
        responses=_LIMITED,
    )
    def simulate(request: api.SimulateRequest) -> Response:
        """Run the methods on one case; traces decimated to at most ``MAX_POINTS`` records."""
        start = time.perf_counter()
        body = api.simulate(request)
        data = api.encode(body)
        ms = (time.perf_counter() - start) * 1e3
        return Response(
            data,
            media_type="application/json",
            headers={"Server-Timing": f"app;dur={ms:.1f}", "Cache-Control": "no-store"},
        )

    @app.post(
        "/api/convergence",
        responses=_LIMITED,
    )
    def convergence(request: api.SimulateRequest) -> Response:
        """Final attitude error against cost at dt, dt/2, dt/4 for the requested methods."""
        return Response(
            api.encode(api.convergence(request)),
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    return app


def _open_when_up(url: str, timeout: float = 30.0) -> None:
    """Open ``url`` in the user's browser as soon as the server answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "api/methods", timeout=1.0):
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


def run(host: str = "127.0.0.1", port: int = 8050, open_browser: bool = False) -> None:
    """Serve the lab with uvicorn until interrupted (``tumble lab``).

    The port is bound first: a busy port is one line on stderr and status 2, before any
    start-up work. The address is printed once the integrators are loaded.

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
    print("tumble lab: loading the integrators (the first run compiles them)...", flush=True)
    if open_browser:
        threading.Thread(target=_open_when_up, args=(url,), daemon=True).start()

    def ready() -> None:
        print(f"tumble lab: serving on {url} (Ctrl+C to stop)", flush=True)

    with sock:
        _serve(create_app(on_ready=ready), sock)

"""The lab's JSON API over HTTP: the FastAPI app that :mod:`tumble.lab.server` mounts at ``/api``.

Importing this module imports the library behind the lab (:mod:`tumble.lab.api`, which
loads or, on a first run, compiles tumble's kernels), so the server does it on the
warm-up's worker, after it has started to answer.

Routes (under ``/api``)
-----------------------
``GET /methods``
    :func:`tumble.lab.api.method_table`: the methods the page lists.
``GET /methods/{name}``
    :func:`tumble.lab.api.method_row`: one method, also a composition that the list does
    not feature (the page asks for a name its address holds); 422 for a name that is not
    a method, with the message of :func:`tumble.rigid.check_method`.
``GET /groups``
    :func:`tumble.lab.api.group_table`: how the page groups the list (the article's
    methods, higher order, the engines).
``GET /figure``
    :func:`tumble.figures.spec`: the panels, traces and colours that the page draws.
``GET /presets``
    :func:`tumble.lab.api.preset_table`: the preset menu (free bodies and torque scenarios).
``POST /simulate``
    :func:`tumble.lab.api.simulate`. 422 for a malformed or out-of-range request (the
    ``message`` names the field), 413 for work beyond :data:`~tumble.lab.api.MAX_WORK`
    method-steps, a torque scenario beyond :data:`~tumble.lab.api.MAX_FORCED_ROTATIONS`
    or a body beyond :data:`~tumble.lab.api.MAX_BODY_BYTES`. With the header ``Prefer:
    respond-async`` (RFC 7240; the page sends it), 202 while the warm-up has not yet run
    what the request needs: :meth:`~tumble.lab.warmup.WarmUp.ensure` says what, and moves
    it to the front; the client asks again. Without it the request computes at once,
    compiling on its own thread what it needs.
``POST /convergence``
    :func:`tumble.lab.api.convergence` (error against cost), same request and answers.

The endpoints are plain ``def`` functions: FastAPI runs them in its thread pool, so a
request that is simulating (the kernels release the GIL) does not stop the server from
accepting and answering others.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from tumble import figures
from tumble._errors import InputError
from tumble._validate import describe
from tumble.lab import api
from tumble.lab.warmup import WarmUp

__all__ = ["api_app"]

#: The error answers of the endpoints that take a :class:`~tumble.lab.api.SimulateRequest`.
_LIMITED: dict[int | str, dict[str, Any]] = {
    413: {"description": "more work than the documented limit"},
    422: {"description": "malformed or out-of-range request"},
}

#: The answer to ``Prefer: respond-async`` while the request's methods are compiling.
_ASYNC: dict[int | str, dict[str, Any]] = {
    202: {"description": "still compiling what the request needs: ask again (Retry-After)"},
}


def _error(status: int, message: str, detail: Any = None) -> JSONResponse:
    body: dict[str, Any] = {"message": message}
    if detail is not None:
        body["detail"] = detail
    return JSONResponse(body, status_code=status)


def _prefers_async(prefer: str | None) -> bool:
    """Whether a ``Prefer`` header (RFC 7240) holds the ``respond-async`` preference."""
    if not prefer:
        return False
    return any(p.split(";")[0].strip().lower() == "respond-async" for p in prefer.split(","))


def api_app(warm_up: WarmUp | None) -> FastAPI:
    """The API app (routes in the module docstring).

    Parameters
    ----------
    warm_up : WarmUp or None
        The server's warm-up, which a ``Prefer: respond-async`` request asks what it still
        waits for; None: every request computes at once.

    Raises
    ------
    InputError
        ``warm_up`` is neither a :class:`~tumble.lab.warmup.WarmUp` nor None.
    """
    if warm_up is not None and not isinstance(warm_up, WarmUp):
        raise InputError(f"warm_up: expected a WarmUp or None, got {describe(warm_up)}")
    app = FastAPI(
        title="tumble lab",
        description="Rigid-body integrators against the exact torque-free motion, or an "
        "ODE reference under a torque.",
    )

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

    @app.get("/methods")
    def methods() -> list[dict[str, Any]]:
        """Every integrator the page lists: name, one-line description, order, what it
        conserves, its group and colour."""
        return api.method_table()

    @app.get("/methods/{name:path}", responses={422: {"description": "not a method name"}})
    def method(name: str) -> dict[str, Any]:
        """One method by name, also any composition ``"<base>:<scheme>"``."""
        return api.method_row(name, api.SHOWN_AT_START)

    @app.get("/groups")
    def groups() -> list[dict[str, Any]]:
        """The method list's groups: the article's methods, higher order, the engines."""
        return api.group_table()

    @app.get("/figure")
    def figure() -> dict[str, Any]:
        """The figure spec: panels on a grid, traces by name, one colour per method."""
        return figures.spec()

    @app.get("/presets")
    def presets() -> list[dict[str, Any]]:
        """The preset menu: named cases with the request fields they set."""
        return api.preset_table()

    def compiling(request: api.SimulateRequest, prefer: str | None) -> Response | None:
        """202 naming what ``request`` still waits for, if its client prefers that to
        waiting; None to compute now."""
        if warm_up is None or not _prefers_async(prefer):
            return None
        waiting = warm_up.ensure(api.warm_up_tasks(request))
        if waiting is None:
            return None
        return JSONResponse(
            {**waiting, "warm_up": warm_up.status()},
            status_code=202,
            headers={
                "Preference-Applied": "respond-async",
                "Retry-After": "1",
                "Cache-Control": "no-store",
            },
        )

    @app.post("/simulate", responses={**_LIMITED, **_ASYNC})
    def simulate(
        request: api.SimulateRequest, prefer: Annotated[str | None, Header()] = None
    ) -> Response:
        """Run the methods on one case; traces decimated to at most ``MAX_POINTS`` records."""
        waiting = compiling(request, prefer)
        if waiting is not None:
            return waiting
        start = time.perf_counter()
        body = api.simulate(request)
        data = api.encode(body)
        ms = (time.perf_counter() - start) * 1e3
        return Response(
            data,
            media_type="application/json",
            headers={"Server-Timing": f"app;dur={ms:.1f}", "Cache-Control": "no-store"},
        )

    @app.post("/convergence", responses={**_LIMITED, **_ASYNC})
    def convergence(
        request: api.SimulateRequest, prefer: Annotated[str | None, Header()] = None
    ) -> Response:
        """Final attitude error against cost at dt, dt/2, dt/4 for the requested methods."""
        waiting = compiling(request, prefer)
        if waiting is not None:
            return waiting
        return Response(
            api.encode(api.convergence(request)),
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    return app

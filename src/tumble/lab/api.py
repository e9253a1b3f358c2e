"""The lab's JSON API without the web layer: request schema, limits, method table, traces.

The case comes from :mod:`tumble.scenarios` (the article's parametrisation, shared with
``tumble compare`` and the sweeps, or a torque scenario of
:data:`tumble.scenarios.TORQUE_SCENARIOS`), the trajectories from
:func:`tumble.rigid.simulate` (with the scenario's torque model inside the compiled loop)
and the reference from :func:`tumble.scenarios.reference`: the ``"exact"`` method for a
free body, a tight ODE solve under a torque. This module decimates, takes the plotted
traces from :func:`tumble.figures.figure_data` (every trace of :data:`tumble.figures.TRACES`,
keyed by its name, computed by :mod:`tumble.diagnostics`), scores every method with
:func:`tumble.scenarios.score` against that one shared reference, and writes JSON. The
server (:mod:`tumble.lab.server`) wraps it in HTTP; the page draws the panels of
:func:`tumble.figures.spec`.

Each run in a response holds its traces (one value per record; a vector trace as an object
of component rows, ``{"x": [...], "y": [...]}``), and ``q``, the body-to-world quaternion
``{"w", "x", "y", "z"}`` for the 3-D view. The reference has no ``attitude_error`` (it
compares with the reference).

Numbers are rounded to :data:`DIGITS` significant digits; non-finite values (a method that
blew up) become JSON ``null``.

The request and its limits are :mod:`tumble.lab.request`, the preset menu is
:mod:`tumble.lab.presets`; their public names are importable from here too.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np
import orjson

from tumble import InputError, exact, figures, rigid, scenarios
from tumble._kernels.dispatch import single_thread
from tumble._validate import describe
from tumble.engines import ENGINES
from tumble.lab.groups import group_table, listed, method_row
from tumble.lab.presets import PRESETS, Preset, preset_table
from tumble.lab.request import (
    MAX_BODY_BYTES,
    MAX_FORCED_ROTATIONS,
    MAX_METHODS,
    MAX_WORK,
    SimulateRequest,
    WorkTooLarge,
    check_request,
    check_work,
    validation_message,
)
from tumble.lab.warmup import Task

__all__ = [
    "CONVERGENCE_REFINEMENTS",
    "MAX_BODY_BYTES",
    "MAX_FORCED_ROTATIONS",
    "MAX_METHODS",
    "MAX_POINTS",
    "MAX_WORK",
    "POLHODE_LEVELS",
    "PRESETS",
    "SHOWN_AT_START",
    "Preset",
    "SimulateRequest",
    "WorkTooLarge",
    "convergence",
    "encode",
    "group_table",
    "method_row",
    "method_table",
    "preset_table",
    "simulate",
    "validation_message",
    "warm_up",
    "warm_up_plan",
    "warm_up_tasks",
]

#: Records per trace at most: ``every = ceil(steps / (MAX_POINTS - 2))`` steps between
#: records keeps a response near 0.5 MB for all 15 methods while the polar plots still
#: show the shape of the orbits (the article's defaults give one record every 3 steps).
MAX_POINTS = 500

#: The methods the page ticks when its address names none: the five of the article's toy.
#: They (with the exact reference) are the first the warm-up compiles.
SHOWN_AT_START = ("explicit", "jolt", "naive_rotation", "modified_jolt", "momentum_first")


def method_table() -> list[dict[str, Any]]:
    """The body of ``GET /api/methods``: one object per method the page lists, the methods
    of :data:`tumble.rigid.METHODS` in their order, then the featured compositions
    (:data:`tumble.lab.groups.FEATURED`); each is :func:`tumble.lab.groups.method_row`
    (``name``, ``description``, ``order``, ``conserves``, ``shown_at_start`` (in
    :data:`SHOWN_AT_START`), ``group``, ``engine``, ``featured``, ``color``, ``dash``,
    ``properties``)."""
    return [method_row(name, SHOWN_AT_START) for name in listed()]


# --------------------------------------------------------------------------------------
# the start-up warm-up (loading or compiling the kernels ahead of the requests)


def warm_up_plan() -> list[Task]:
    """The lab's start-up work (:class:`tumble.lab.warmup.WarmUp` runs it in the background),
    in the order people need it: the exact reference and :data:`SHOWN_AT_START` (the page's
    first view), the other methods of :data:`tumble.rigid.METHODS` in their order and the
    featured compositions of the method list (:data:`tumble.lab.groups.FEATURED`), then
    each torque preset's first view (the methods of :data:`SHOWN_AT_START` under its torque
    model, and its reference at the default steps and rotations, which
    :func:`_forced_reference` keeps), then the other methods under each torque model, but
    for the engines' replicas (:data:`tumble.engines.ENGINES`).

    A method's task is what a request with it runs first: a two-step run, and one step (the
    path on which a run that blew up tells an input overflow from a divergence).
    """
    free = dict.fromkeys(("exact", *SHOWN_AT_START, *listed()))
    tasks = [_method_task(None, m) for m in free]
    # The engines' replicas under a torque compile when a request names them, not before.
    forced = [m for m in free if m != "exact" and m in rigid.METHODS and m not in ENGINES]
    for torque in scenarios.TORQUE_SCENARIOS:
        tasks += [_method_task(torque, m) for m in SHOWN_AT_START]
        run = functools.partial(_warm_reference, torque)
        tasks.append(Task((torque, None), f"{torque} reference", run))
    for torque in scenarios.TORQUE_SCENARIOS:
        tasks += [_method_task(torque, m) for m in forced if m not in SHOWN_AT_START]
    return tasks


def warm_up_tasks(request: SimulateRequest) -> list[Task]:
    """The tasks of :func:`warm_up_plan` that ``request`` needs done before it computes
    without compiling: its methods (under its torque model), and for a free body the exact
    reference. A composition that the plan lacks (one the method list does not
    feature) gets a task of the same kind."""
    check_request(request)
    names = request.method_names()
    if request.torque is None and "exact" not in names:
        names.insert(0, "exact")
    return [_method_task(request.torque, m) for m in names]


def warm_up() -> None:
    """Run every task of :func:`warm_up_plan` on this thread, in order (what ``tumble lab``
    does in the background; a benchmark or a test that wants a warm process calls this)."""
    for task in warm_up_plan():
        task.run()


def _method_task(torque: str | None, method: str) -> Task:
    label = method if torque is None else f"{method} ({torque})"
    return Task((torque, method), label, functools.partial(_warm_method, torque, method))


def _warm_method(torque: str | None, method: str) -> None:
    request = SimulateRequest(torque=torque, steps_per_rotation=2, rotations=1, methods=[method])
    case = request.case()
    # The method's loops compile here, outside single_thread(), whose lock would make every
    # request wait for the compile; one body never starts numba's thread pool.
    scenarios.simulate(case, method)
    if method != "exact":  # the exact solution never blows up: no request reaches its step
        rigid.step(case.q0, case.omega0, case.inv_inertia, case.dt, method, case.torque)
    simulate(request)  # the rest of a request's path (reference, traces, scores): loaded


def _warm_reference(torque: str) -> None:
    request = SimulateRequest(torque=torque)
    steps = request.case().steps
    _forced_reference(torque, request.steps_per_rotation, request.rotations, _every(steps))


# --------------------------------------------------------------------------------------
# arrays -> JSON

#: Significant digits of the numbers in a response: enough to zoom on a 1e-6 relative
#: drift, and half the bytes of full precision.
DIGITS = 7


def _rounded(a: np.ndarray) -> np.ndarray:
    """``a`` (float64) rounded to :data:`DIGITS` significant digits, so that JSON is short.

    ``rint(a·10^e) / 10^e`` with an exact power of ten is the double nearest to the
    rounded decimal, whose shortest representation is that decimal.
    """
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mag = np.floor(np.log10(np.abs(a)))
        e = np.where(np.isfinite(mag), DIGITS - 1 - mag, 0.0)
        p = 10.0 ** np.abs(e)
        return np.where(e >= 0, np.rint(a * p) / p, np.rint(a / p) * p)


def encode(payload: dict[str, Any]) -> bytes:
    """JSON bytes of a payload with NumPy arrays; non-finite numbers become ``null``."""
    if not isinstance(payload, dict):
        raise InputError(f"payload: expected a dict, got {describe(payload)}")
    try:
        return orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY)
    except orjson.JSONEncodeError as exc:
        raise InputError(f"payload: not JSON-serialisable ({exc})") from None


# --------------------------------------------------------------------------------------
# traces and scores


def _json_values(values: np.ndarray, components: str) -> Any:
    """Rounded values; a vector trace ``(n, k)`` as ``{component: (n,) row}`` (orjson
    writes each contiguous row as one JSON list)."""
    values = _rounded(values)
    if not components:
        return values
    return {c: np.ascontiguousarray(values[:, i]) for i, c in enumerate(components)}


def _json_curve(curve: figures.Curve, q: np.ndarray) -> dict[str, Any]:
    """A run's traces keyed by name (:data:`tumble.figures.TRACES`) and its attitudes."""
    out = {name: _json_values(v, figures.TRACES[name].components) for name, v in curve.items()}
    out["q"] = _json_values(q, "wxyz")
    return out


def _score_dict(s: scenarios.Scores) -> dict[str, float | None]:
    """The JSON scores of one method: :class:`tumble.scenarios.Scores` less the timing."""
    return {
        "energy_error": s.energy_error,
        "momentum_drift": s.momentum_drift,
        "direction_drift": s.direction_drift,
        "attitude_error_end": s.attitude_error_end,
        "attitude_error_max": s.attitude_error_max,
        "diverged_at": s.diverged_at,
    }


#: Energy factors of the polhodes drawn on the lab's momentum sphere: this many levels
#: evenly between ``min J`` and ``max J`` (ends excluded), plus the separatrix.
POLHODE_LEVELS = 8

#: Points per polhode loop in a response.
POLHODE_POINTS = 65


def _polhodes(J: np.ndarray) -> list[dict[str, Any]]:
    """The polhodes of the body (:func:`tumble.exact.polhode`) for the momentum sphere:
    ``{"energy_factor", "separatrix", "loops": [{"x", "y", "z"}, ...]}``; none for a
    spherical body or one with a zero inverse moment (its L_b does not move)."""
    lo, mid, hi = np.sort(J)
    if hi - lo <= exact.EQUAL_RTOL * hi or lo == 0:
        return []
    levels = [*np.linspace(lo, hi, POLHODE_LEVELS + 2)[1:-1], mid]
    out = []
    for k, e in enumerate(levels):
        loops = exact.polhode(J, float(e), POLHODE_POINTS)
        out.append(
            {
                "energy_factor": float(e),
                "separatrix": k == len(levels) - 1,
                "loops": [_json_values(loop, "xyz") for loop in loops],
            }
        )
    return out


def simulate(request: SimulateRequest) -> dict[str, Any]:
    """The body of ``POST /api/simulate`` (see ``docs/lab.md`` for its layout).

    Only the requested methods run (the reference always does: the exact solution, or for
    a torque scenario the tight ODE solve of :func:`tumble.scenarios.reference`, kept for
    repeated requests; ``reference`` in the answer says which). Arrays in the
    result are NumPy arrays (write it with :func:`encode`).

    Raises
    ------
    WorkTooLarge
        ``steps x len(methods) > MAX_WORK``, or a torque scenario beyond
        :data:`MAX_FORCED_ROTATIONS` rotations.
    tumble.InputError
        ``request`` is not a :class:`SimulateRequest`, or a case that :mod:`tumble.scenarios`
        or :mod:`tumble.rigid` refuses (for example ``"implicit"`` with a zero inverse
        moment).
    """
    check_request(request)
    start = time.perf_counter()
    case = request.case()
    names = request.method_names()
    check_work(request, case.steps, len(names))
    every = _every(case.steps)
    with single_thread():
        # A blow-up is shown (non-finite records become nulls and diverged_at), not warned.
        trs = [scenarios.simulate(case, m, every) for m in names]
        if request.torque is not None:
            reference = _forced_reference(
                request.torque, request.steps_per_rotation, request.rotations, every
            )
        elif "exact" in names:
            reference = trs[names.index("exact")]
        else:
            reference = scenarios.simulate(case, "exact", every)
    J = case.inv_inertia
    data = figures.figure_data(dict(zip(names, trs, strict=True)), reference, J)
    # One reference scores every method (scenarios.score alone would solve it again).
    scores = [_score_dict(_score(tr, case, reference)) for tr in trs]
    return {
        "reference": _reference_info(case),
        "case": {
            "torque": request.torque,
            "inv_inertia": J.tolist(),
            "q0": case.q0.tolist(),
            "omega0": case.omega0.tolist(),
            "L0_body": reference.L_body[0].tolist(),
            "dt": case.dt,
            "steps": case.steps,
            "period": case.period,
            "duration": case.duration,
            "every": every,
            "records": data.t.shape[0],
        },
        # The polhodes are paths of the free body only.
        "polhodes": _polhodes(J) if case.torque is None else [],
        "limits": {"max_points": MAX_POINTS, "max_work": MAX_WORK},
        "t": _rounded(data.t),
        "ranges": data.ranges,
        "exact": _json_curve(data.reference, reference.q),
        "methods": [
            {
                "name": name,
                **_json_curve(data.methods[name], tr.q),
                "scores": scores[m],
                "blew_up": _blow_up(data.blew_up[name], data.t),
            }
            for m, (name, tr) in enumerate(zip(names, trs, strict=True))
        ],
        "compute_ms": (time.perf_counter() - start) * 1e3,
    }


def _every(steps: int) -> int:
    """Steps between records so that a run has at most :data:`MAX_POINTS` records."""
    return max(1, math.ceil(steps / (MAX_POINTS - 2)))


#: How the page labels the reference: the exact solution, or for a torque scenario the ODE
#: solve of :func:`tumble.torques.reference`.
REFERENCE_LABELS = {
    "exact": figures.REFERENCE.label,
    "ode": "ODE reference (DOP853, rtol 1e-13)",
}


def _reference_info(case: scenarios.Case) -> dict[str, str]:
    """``{"kind": "exact" or "ode", "label"}``: what the response's ``exact`` curve is."""
    kind = "exact" if case.torque is None else "ode"
    return {"kind": kind, "label": REFERENCE_LABELS[kind]}


@functools.lru_cache(maxsize=64)
def _forced_reference(
    torque: str, steps_per_rotation: int, rotations: float, every: int
) -> rigid.Trajectory:
    """:func:`tumble.scenarios.reference` of a torque scenario, kept: the ODE solve takes
    about a second for the heavy top and the satellite, and a page that only changes the
    shown methods asks for the same one again. The arrays are never written to."""
    case = scenarios.torque_case(torque, steps_per_rotation, rotations)
    return scenarios.reference(case, every)


def _score(
    tr: rigid.Trajectory, case: scenarios.Case, reference: rigid.Trajectory
) -> scenarios.Scores:
    """:func:`tumble.scenarios.score` against ``reference`` at the same records: the exact
    attitude for a free case; for a forced case the reference's attitude, energy and
    momentum at each record (they are not conserved)."""
    if case.torque is None:
        return scenarios.score(tr, case.inv_inertia, reference_q=reference.q)
    return scenarios.score(tr, case.inv_inertia, reference=reference)


def _blow_up(drawn: int | None, t: np.ndarray) -> dict[str, Any] | None:
    """``{"records": drawn records, "t": time of the first record not drawn}`` or None."""
    if drawn is None:
        return None
    return {"records": drawn, "t": float(t[drawn])}


#: Step refinements of the error-versus-cost panel: ``dt``, ``dt/2``, ``dt/4``.
CONVERGENCE_REFINEMENTS = (1, 2, 4)


def convergence(request: SimulateRequest) -> dict[str, Any]:
    """The body of ``POST /api/convergence``: final attitude error against cost.

    For each requested method but ``"exact"``: the attitude error at the end of the run
    (:func:`tumble.scenarios.score`, ``attitude_error_end``, against the exact solution, or
    for a torque scenario the ODE solve of :func:`tumble.scenarios.reference`) at
    ``dt / k`` for ``k`` in :data:`CONVERGENCE_REFINEMENTS` (skipped where
    ``steps_per_rotation · k`` passes the limit), the measured ns per step
    (:func:`tumble.scenarios.time_per_step`, one body, one thread) and the cost of each run,
    ``ns_per_step · steps`` in microseconds. ``order`` is the least-squares slope of
    ``log error`` against ``log dt`` over the finite, nonzero errors (None with fewer than
    two): the method's observed order on this case.

    Raises
    ------
    WorkTooLarge
        ``steps · (1 + 2 + 4) · len(methods) > MAX_WORK``, or a torque scenario beyond
        :data:`MAX_FORCED_ROTATIONS`.
    tumble.InputError
        ``request`` is not a :class:`SimulateRequest`, or a case that :mod:`tumble.rigid`
        refuses.
    """
    check_request(request)
    start = time.perf_counter()
    names = [m for m in request.method_names() if m != "exact"]
    base = request.case()
    check_work(request, base.steps, max(len(names), 1), sum(CONVERGENCE_REFINEMENTS))
    spr = request.steps_per_rotation
    cases = [
        request.model_copy(update={"steps_per_rotation": spr * k}).case()
        for k in CONVERGENCE_REFINEMENTS
        if spr * k <= scenarios.MAX_STEPS_PER_ROTATION
    ]
    out = []
    with single_thread():
        refs = [scenarios.reference(c, max(c.steps, 1)) for c in cases]
        for name in names:
            ns = scenarios.time_per_step(base, name)
            points = []
            for c, ref in zip(cases, refs, strict=True):
                tr = scenarios.simulate(c, name, max(c.steps, 1))
                err = _score(tr, c, ref).attitude_error_end
                points.append(
                    {"dt": c.dt, "steps": c.steps, "error": err, "cost_us": ns * c.steps / 1e3}
                )
            out.append({"name": name, "ns_per_step": ns, "points": points, "order": _order(points)})
    return {"methods": out, "compute_ms": (time.perf_counter() - start) * 1e3}


def _order(points: list[dict[str, float]]) -> float | None:
    """Slope of ``log error`` against ``log dt`` (least squares), None if under two points."""
    ok = [p for p in points if math.isfinite(p["error"]) and p["error"] > 0]
    if len(ok) < 2:
        return None
    x = np.log([p["dt"] for p in ok])
    y = np.log([p["error"] for p in ok])
    return float(np.polyfit(x, y, 1)[0])

"""Benchmark: server time of the lab's default request (all methods, t = 40π, 64 steps/rotation).

Measured after warm-up (numba kernels loaded, one request served), three ways:

- the endpoint's work in process: :func:`tumble.lab.api.simulate` plus the JSON encoding
  (what the ``Server-Timing`` header reports);
- the ``Server-Timing`` of real HTTP requests to a uvicorn server on a loopback port, and
  the client's round trip (connection, transfer of the response, JSON parsing);
- the floor: :func:`tumble.rigid.simulate` of every method alone, no traces, no JSON.

Goal (issue 8): at most 100 ms server time for the default request.

Usage: ``tumble bench lab [--rounds R]``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import threading
import time
import urllib.request

from _common import fmt_time, markdown_table, write_section

GOAL_S = 0.100


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stats(samples: list[float]) -> tuple[float, float]:
    return min(samples), statistics.median(samples)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench lab")
    parser.add_argument("--rounds", type=int, default=40, help="requests per measurement")
    args = parser.parse_args(argv)

    import uvicorn

    from tumble import rigid
    from tumble.lab import api, server

    request = api.SimulateRequest()
    api.warm_up()
    api.simulate(request)

    def in_process() -> float:
        t0 = time.perf_counter()
        body = api.encode(api.simulate(request))
        assert body
        return time.perf_counter() - t0

    work = [in_process() for _ in range(args.rounds)]
    answer = api.simulate(request)
    size = len(api.encode(answer))
    every = answer["case"]["every"]
    records = answer["case"]["records"]
    case = request.case()

    def floor() -> float:
        t0 = time.perf_counter()
        with api._numba_single_thread():
            for m in rigid.METHODS:
                rigid.simulate(
                    case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, m, every=every
                )
        return time.perf_counter() - t0

    floors = [floor() for _ in range(args.rounds)]

    port = _free_port()
    config = uvicorn.Config(server.create_app(), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/api/simulate"
    timings: list[float] = []
    trips: list[float] = []
    try:
        for i in range(args.rounds + 1):
            req = urllib.request.Request(url, b"{}", {"Content-Type": "application/json"})
            t0 = time.perf_counter()
            with urllib.request.urlopen(req, timeout=60) as r:
                header = r.headers["Server-Timing"]
                json.loads(r.read())
            trip = time.perf_counter() - t0
            if i:  # the first request after start-up is the warm-up
                timings.append(float(header.split("dur=")[1]) / 1e3)
                trips.append(trip)
    finally:
        srv.should_exit = True
        thread.join(timeout=30)

    rows = []
    for label, samples in (
        ("endpoint work in process (simulate + JSON)", work),
        ("Server-Timing over HTTP (uvicorn, loopback)", timings),
        ("client round trip over HTTP (incl. parsing)", trips),
        ("floor: rigid.simulate of the 15 methods only", floors),
    ):
        best, median = _stats(samples)
        rows.append([label, fmt_time(best), fmt_time(median), f"{median / GOAL_S:.2f}"])
    table = markdown_table(["measure", "best", "median", "median / 100 ms"], rows)
    server_median = statistics.median(timings)
    verdict = "met" if server_median <= GOAL_S else "NOT met"
    n_methods = len(rigid.METHODS)
    md = f"""## Lab: server time of the default request

`POST /api/simulate` with `{{}}`: all {n_methods} methods on the article's case (`min_j` 0.5,
`median_j` 0.5, `energy` 0.4), {case.steps} steps each (t = 40π at 64 steps per rotation),
traces decimated to {records} records (every {every} steps), response
{size / 1e3:.0f} kB. {args.rounds} requests per row, after warm-up.

{table}

Goal (default request at most 100 ms server time after warm-up): median Server-Timing
{fmt_time(server_median)}, **{verdict}**. The overhead over the floor is the traces (one
shared exact solution gives every method's attitude error), the scores and the JSON encoding
(orjson).

The machine was shared with other jobs during the run (load average {os.getloadavg()[0]:.1f}
on {os.cpu_count()} cores at the end), so expect noise of tens of percent.
"""
    print(md)
    write_section("lab", md)
    return 0

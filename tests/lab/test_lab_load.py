"""Concurrent load on a real uvicorn server: every request answered, none lost or mixed up."""

from __future__ import annotations

import json
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tumble.lab import api

#: Simultaneous clients: the issue's acceptance number.
CLIENTS = 200
#: Per-request timeout: generous for a shared 2-core machine (200 x ~10 ms of work queued).
TIMEOUT_S = 120


@pytest.mark.slow
def test_200_concurrent_simulate_requests_all_succeed(live_server) -> None:
    url = live_server.url + "/api/simulate"
    start = threading.Barrier(CLIENTS, timeout=60)

    def one(i: int) -> tuple[int, int, dict]:
        # The page's first view (the methods the warm-up has ready: the test is of load, not
        # of compiling), with the energy fraction varied to tell the answers apart.
        energy = i / (2 * CLIENTS)
        body = json.dumps({"energy": energy, "methods": list(api.SHOWN_AT_START)}).encode()
        req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        start.wait()  # all 200 connect at once
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:
            return i, r.status, json.loads(r.read())

    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        results = list(pool.map(one, range(CLIENTS)))

    assert len(results) == CLIENTS
    assert [s for _, s, _ in results] == [200] * CLIENTS
    for i, _, d in results:
        assert [m["name"] for m in d["methods"]] == list(api.SHOWN_AT_START)
        # Each answer belongs to its own request: J_L(0) = min_j + energy.
        assert d["exact"]["energy_factor"][0] == pytest.approx(0.5 + i / (2 * CLIENTS), rel=1e-6)

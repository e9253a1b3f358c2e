"""The lab's start-up: it answers at once, compiles in the background in the order people
need, and tells a page (``Prefer: respond-async``) what its view still waits for.

The warm-up here is held by a :class:`conftest.Gate`, and its tasks are the plan's keys and
labels with no work in them (stand-ins): the protocol is checked without compiling.
"""

from __future__ import annotations

import time
import urllib.request

import pytest
from fastapi.testclient import TestClient  # imported first by conftest, warning filtered there

from conftest import FULL_PLAN, Gate, LiveServer, page_assets
from tumble import InputError, rigid, scenarios
from tumble.engines import ENGINES
from tumble.lab import api, groups
from tumble.lab.server import LOADING, create_app
from tumble.lab.warmup import Task, WarmUp

ASYNC = {"Prefer": "respond-async"}
#: The page's first view: the reference, then the five methods it ticks.
FIRST_VIEW = ["exact", "explicit", "jolt", "naive_rotation", "modified_jolt", "momentum_first"]
#: Longest acceptable wait for GET / while the warm-up holds the GIL in Python code (a
#: compile's type inference does): a few 5 ms switch intervals, with room for a shared,
#: loaded 2-core machine.
PAGE_LATENCY_S = 1.0


def stand_ins() -> list[Task]:
    """The plan's tasks with no work in them."""
    return [Task(t.key, t.label, lambda: None) for t in FULL_PLAN()]


def test_the_plan_is_in_the_order_people_need_it() -> None:
    plan = FULL_PLAN()
    labels = [t.label for t in plan]
    assert len({t.key for t in plan}) == len(plan)
    assert list(api.SHOWN_AT_START) == FIRST_VIEW[1:]
    assert labels[:6] == FIRST_VIEW
    # The other methods of the list, the featured compositions last (groups.listed()).
    listed = groups.listed()
    free = [m for m in listed if m not in FIRST_VIEW]
    assert labels[6 : len(listed)] == free
    assert labels[len(listed) - len(groups.FEATURED) : len(listed)] == list(groups.FEATURED)
    # Then each torque preset as a click on it first shows it, then the rest under torques.
    rest = labels[len(listed) :]
    first_views = [
        label
        for torque in scenarios.TORQUE_SCENARIOS
        for label in (*(f"{m} ({torque})" for m in FIRST_VIEW[1:]), f"{torque} reference")
    ]
    assert rest[: len(first_views)] == first_views
    forced = [m for m in free if m != "exact" and m in rigid.METHODS and m not in ENGINES]
    assert rest[len(first_views) :] == [
        f"{m} ({torque})" for torque in scenarios.TORQUE_SCENARIOS for m in forced
    ]
    # Every key a request can name is in the plan, under the same label (the replicas under
    # a torque compile on request).
    by_key = {t.key: t.label for t in plan}
    for torque in (None, *scenarios.TORQUE_SCENARIOS):
        names = [m for m in rigid.METHODS if torque is None or m not in ("exact", *ENGINES)]
        for task in api.warm_up_tasks(api.SimulateRequest(torque=torque, methods=names)):
            assert by_key[task.key] == task.label
    # So are the compositions the method list features (free motion).
    for task in api.warm_up_tasks(api.SimulateRequest(methods=list(groups.FEATURED))):
        assert by_key[task.key] == task.label


def test_a_request_needs_its_methods_and_the_reference() -> None:
    def labels(**fields):
        return [t.label for t in api.warm_up_tasks(api.SimulateRequest(**fields))]

    assert labels() == [m for m in rigid.METHODS]  # all methods, "exact" among them
    assert labels(methods=["rk4", "jolt"]) == ["exact", "rk4", "jolt"]
    assert labels(methods=["splitting:suzuki4"]) == ["exact", "splitting:suzuki4"]
    assert labels(torque="damped", methods=["rk4"]) == ["rk4 (damped)"]
    with pytest.raises(InputError, match=r"^request: "):
        api.warm_up_tasks({"methods": ["rk4"]})


def test_a_page_hears_what_its_view_waits_for_then_gets_its_answer() -> None:
    gate = Gate()
    tasks = stand_ins()
    total = 1 + len(tasks)  # loading the API, then the plan's tasks
    runner = WarmUp(tasks, before_task=gate)
    with TestClient(create_app(warm_up=runner)) as client:
        # First the API loads (its import compiles kernels on a first run): the page, its
        # assets and the status are there meanwhile.
        gate.wait_holding(LOADING)
        page = client.get("/")
        assert page.status_code == 200
        for name in page_assets(page.text):
            assert client.get(f"/static/{name}").status_code == 200, name
        assert client.get("/static/plotly.min.js").status_code == 200
        status = client.get("/api/status").json()
        assert status["state"] == "starting"
        assert status["message"].startswith(f"starting: loading {LOADING}")
        assert (status["running"], status["done"], status["total"]) == (LOADING, 0, total)
        gate.let_through()
        gate.wait_holding("exact")
        assert client.get("/api/methods").status_code == 200
        status = client.get("/api/status").json()
        assert status["state"] == "compiling"
        assert status["message"] == f"compiling exact (2 of {total})"
        assert (status["running"], status["done"], status["total"]) == ("exact", 1, total)
        body = {"rotations": 1, "methods": FIRST_VIEW[1:]}
        r = client.post("/api/simulate", json=body, headers=ASYNC)
        assert r.status_code == 202, r.text
        assert r.headers["Preference-Applied"] == "respond-async"
        assert r.headers["Retry-After"] == "1"
        answer = r.json()
        assert answer["message"] == "compiling exact (1 of 6)"
        assert answer["pending"] == FIRST_VIEW
        assert (answer["done"], answer["total"]) == (0, 6)
        assert answer["warm_up"]["running"] == "exact"
        gate.let_through()
        gate.wait_holding("explicit")
        answer = client.post("/api/simulate", json=body, headers=ASYNC).json()
        assert answer["message"] == "compiling explicit (2 of 6)"
        # Another view's methods jump the queue, behind the running task.
        other = {"rotations": 1, "methods": ["rk4"]}
        answer = client.post("/api/convergence", json=other, headers=ASYNC).json()
        assert answer["message"] == "finishing explicit, then compiling rk4 (2 of 2)"
        # Without the preference the request computes at once (compiling what it needs).
        r = client.post("/api/simulate", json={"rotations": 1, "methods": ["jolt"]})
        assert r.status_code == 200, r.text
        # Bad input is refused as before, whatever is compiling.
        r = client.post("/api/simulate", json={"median_j": 2}, headers=ASYNC)
        assert r.status_code == 422
        gate.let_through()
        gate.wait_holding("rk4")
        gate.open()
        assert runner.wait(60)
        r = client.post("/api/simulate", json=body, headers=ASYNC)
        assert r.status_code == 200, r.text
        assert [m["name"] for m in r.json()["methods"]] == FIRST_VIEW[1:]
        assert client.get("/api/status").json()["state"] == "ready"


def test_without_a_warm_up_every_request_computes_and_the_status_says_off() -> None:
    with TestClient(create_app(warm_up=False)) as client:
        assert client.get("/api/status").json()["state"] == "off"
        assert client.get("/api/status").json()["message"] == "off"
        r = client.post("/api/simulate", json={"rotations": 1, "methods": ["jolt"]}, headers=ASYNC)
        assert r.status_code == 200, r.text
    with pytest.raises(InputError, match=r"^warm_up: "):
        create_app(warm_up="yes")
    with pytest.raises(InputError, match=r"^on_ready: "):
        create_app(warm_up=False, on_ready=5)


def test_the_page_answers_at_once_while_the_warm_up_holds_the_gil(monkeypatch) -> None:
    # The worker runs pure Python (as numba's type inference does, holding the GIL) while
    # a real server answers GET /: it waits for switch intervals, not for the work.
    def spin() -> None:
        end = time.perf_counter() + 4.0
        while time.perf_counter() < end:
            sum(range(1000))

    monkeypatch.setattr(api, "warm_up_plan", lambda: [])  # the API loads, then only spin
    runner = WarmUp([Task("spin", "spin", spin)])
    with LiveServer(warm_up=runner, ready=False) as server:
        deadline = time.monotonic() + 30
        while server.status()["running"] != "spin":
            assert time.monotonic() < deadline, server.status()
        waits = []
        for _ in range(10):
            start = time.perf_counter()
            with urllib.request.urlopen(server.url + "/", timeout=30) as r:
                assert r.status == 200
                r.read()
            waits.append(time.perf_counter() - start)
        assert server.status()["running"] == "spin"  # all ten while it spun
        assert max(waits) < PAGE_LATENCY_S, waits
        assert runner.wait(30)

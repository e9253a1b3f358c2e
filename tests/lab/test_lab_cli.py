"""`tumble lab`: argument wiring, loopback by default, --open, and the runner."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient  # imported first by conftest, warning filtered there

from tumble import cli
from tumble.lab import api, server


@pytest.fixture
def calls(monkeypatch):
    seen: list[tuple] = []
    monkeypatch.setattr(server, "run", lambda *a, **k: seen.append((a, k)))
    return seen


def test_lab_defaults_to_loopback_and_port_8050(calls) -> None:
    assert cli.main(["lab"]) == 0
    assert calls == [(("127.0.0.1", 8050), {"open_browser": False})]


def test_lab_host_port_and_open(calls) -> None:
    assert cli.main(["lab", "--host", "0.0.0.0", "--port", "9001", "--open"]) == 0
    assert calls == [(("0.0.0.0", 9001), {"open_browser": True})]


@pytest.mark.parametrize("port", ["0", "70000", "-1", "http"])
def test_lab_bad_port_exits_2(calls, port, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["lab", "--port", port])
    assert exc.value.code == 2
    assert "port" in capsys.readouterr().err
    assert calls == []


def test_run_binds_the_given_host_and_opens_the_browser(monkeypatch, capsys) -> None:
    served: list[tuple] = []
    opened: list[str] = []

    def fake_serve(app, sock):
        served.append(sock.getsockname())
        with TestClient(app) as client:  # runs the start-up, which announces the address
            deadline = time.monotonic() + 60
            while client.get("/api/status").json()["state"] != "ready":  # its warm-up ran
                assert time.monotonic() < deadline
                time.sleep(0.01)

    monkeypatch.setattr(server, "_serve", fake_serve)
    monkeypatch.setattr(server, "_open_when_up", lambda url: opened.append(url))
    monkeypatch.setattr(api, "warm_up_plan", lambda: [])
    progress: list[str] = []  # the worker's lines, which may come after the test's capture
    monkeypatch.setattr(server, "_console", lambda line, transient: progress.append(line))
    frozen: list[bool] = []  # not in the test process: the command owns its process
    monkeypatch.setattr(server.gc, "freeze", lambda: frozen.append(True))
    server.run(port=0, open_browser=True)  # 0: a free port, as the real 8050 may be taken
    host, port = served[0][:2]
    assert host == "127.0.0.1"
    assert port > 0
    url = f"http://127.0.0.1:{port}/"
    out = capsys.readouterr().out
    assert f"serving on {url}" in out
    # The phases in order: which plotly.js the page gets, the address, the warm-up.
    assert out.index("page assets: plotly.js") < out.index("serving on")
    assert out.index("serving on") < out.index("then compiling the integrators in the background")
    # The opener runs on a thread (it waits for the server); here it returns at once.
    deadline = time.monotonic() + 5
    while not opened and time.monotonic() < deadline:
        time.sleep(0.01)
    assert opened == [url]
    assert frozen == [True]  # the task after the API's load


def test_open_when_up_waits_for_the_server(monkeypatch) -> None:
    attempts: list[str] = []
    opened: list[str] = []

    class Answer:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def urlopen(url, timeout):
        attempts.append(url)
        if len(attempts) < 3:
            raise ConnectionRefusedError
        return Answer()

    monkeypatch.setattr(server.urllib.request, "urlopen", urlopen)
    monkeypatch.setattr(server.time, "sleep", lambda s: None)
    monkeypatch.setattr(server.webbrowser, "open", opened.append)
    server._open_when_up("http://127.0.0.1:8050/")
    assert attempts == ["http://127.0.0.1:8050/"] * 3  # the page: it answers at once
    assert opened == ["http://127.0.0.1:8050/"]


def test_ctrl_c_stops_the_lab_without_a_traceback(monkeypatch, capsys) -> None:
    def interrupted(app, sock):
        raise KeyboardInterrupt  # what uvicorn raises again once it has stopped

    monkeypatch.setattr(server, "_serve", interrupted)
    server.run(port=0)
    assert capsys.readouterr().out.endswith("tumble lab: stopped\n")

"""The lab's JSON API through FastAPI's test client: validation, limits, and content.

Content is checked against direct calls of tumble's functions (rigid.simulate, the
diagnostics, exact.torque_free, scenarios.score) on the same case.
"""

from __future__ import annotations

import json
import math
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from conftest import page_assets
from tumble import InputError, diagnostics, exact, figures, rigid, scenarios
from tumble.lab import api, groups, server

#: Responses are rounded to api.DIGITS = 7 significant digits: relative error <= 5e-7.
ROUNDING_RTOL = 6e-7
#: Absolute floor for values that are round-off noise around 0 (transverse L, errors).
ROUNDING_ATOL = 1e-12


def post(client, body=None, **kwargs):
    return client.post("/api/simulate", json=body if body is not None else {}, **kwargs)


def assert_422(response, field: str) -> None:
    assert response.status_code == 422, response.text
    message = response.json()["message"]
    assert field in message, f"message {message!r} does not name {field!r}"


# ------------------------------------------------------------------------- /api/methods


def test_methods_lists_every_method_with_order_and_conservation(client) -> None:
    r = client.get("/api/methods")
    assert r.status_code == 200
    methods = r.json()
    # Every registry method in its order, then the compositions the list features.
    assert [m["name"] for m in methods] == [*rigid.METHODS, *groups.FEATURED]
    for m in methods:
        assert set(m) == {
            "name", "description", "order", "conserves", "shown_at_start", "group", "engine",
            "featured", "color", "dash", "properties",
        }  # fmt: skip
        assert m["shown_at_start"] == (m["name"] in api.SHOWN_AT_START)
        assert m["description"]
        assert "\n" not in m["description"]
        assert len(m["description"]) <= 100
        assert m["description"] != "see tumble.rigid", f"no description for {m['name']}"
        order = rigid.method_info(m["name"]).order
        assert m["order"] == (None if math.isinf(order) else order)
        assert m["color"] == figures.color(m["name"])
        assert m["dash"] in figures.DASHES
        # Every method has a row in tumble.rigid's table (else "conserves" would be empty).
        assert set(m["properties"]) == {
            "order",
            "L_norm",
            "L_world",
            "energy",
            "symmetric_top",
            "cost",
        }
    by_name = {m["name"]: m for m in methods}
    assert by_name["midpoint"]["conserves"] == ["|L|", "world L", "energy"]
    assert by_name["momentum_first"]["conserves"] == ["|L|", "world L"]
    assert by_name["explicit"]["conserves"] == []
    assert by_name["exact"]["order"] is None


# ------------------------------------------------------------------------- /api/figure


def test_figure_spec_is_served(client) -> None:
    r = client.get("/api/figure")
    assert r.status_code == 200
    assert r.json() == json.loads(json.dumps(figures.spec()))


def test_every_panel_finds_its_traces_in_the_answer(client, default_answer) -> None:
    spec = client.get("/api/figure").json()
    d = default_answer
    assert set(d["ranges"]) == {p["id"] for p in spec["panels"]}
    components = {t["name"]: t["components"] for t in spec["traces"]}
    for run in (d["exact"], *d["methods"]):
        for p in spec["panels"]:
            for ref in (p["x"], p["y"]):
                if ref == spec["time"]:
                    continue
                name, _, c = ref.partition(".")
                if name not in run:  # the reference does not compare with itself
                    assert run is d["exact"]
                    continue
                values = run[name][c] if c else run[name]
                assert len(values) == d["case"]["records"]
                if c:
                    assert set(run[name]) == set(components[name])


# ------------------------------------------------------------------------- 422 paths


#: Bodies the request schema refuses, each with the field its message must name.
INVALID_BODIES = [
    ({"min_j": 0}, "min_j"),  # range: must be > 0
    ({"min_j": -1.0}, "min_j"),
    ({"min_j": 101}, "min_j"),
    ({"median_j": 1.5}, "median_j"),
    ({"energy": -0.1}, "energy"),
    ({"energy": 2}, "energy"),
    ({"steps_per_rotation": 0}, "steps_per_rotation"),
    ({"steps_per_rotation": 100_001}, "steps_per_rotation"),
    ({"rotations": 0}, "rotations"),
    ({"rotations": -3}, "rotations"),
    # wrong types: strict, no coercion of strings, booleans, fractions to int
    ({"min_j": "0.5"}, "min_j"),
    ({"energy": True}, "energy"),
    ({"steps_per_rotation": 64.5}, "steps_per_rotation"),
    ({"steps_per_rotation": "64"}, "steps_per_rotation"),
    ({"rotations": None}, "rotations"),
    ({"methods": "jolt"}, "methods"),
    ({"methods": []}, "methods"),
    ({"methods": ["jolt", "no_such_method"]}, "methods"),
    ({"methods": ["jolt", "jolt"]}, "methods"),
    ({"methods": [1]}, "methods"),
    ({"inv_inertia": [1, 2], "omega_body": [1, 0, 0]}, "inv_inertia"),
    ({"inv_inertia": [1, 2, -3], "omega_body": [1, 0, 0]}, "inv_inertia"),
    ({"inv_inertia": [0, 0, 0], "omega_body": [1, 0, 0]}, "inv_inertia"),
    ({"inv_inertia": [1, 2, 3], "omega_body": [1, 0]}, "omega_body"),
    ({"inv_inertia": [1, 2, 3], "omega_body": [0, 0, 0]}, "omega_body"),
    ({"inv_inertia": [1, 2, 3], "omega_body": [1e9, 0, 0]}, "omega_body"),
    ({"inv_inertia": [1, 2, 3]}, "omega_body"),  # one without the other
    ({"omega_body": [1, 2, 3]}, "inv_inertia"),
    ({"inv_inertia": [1, 2, 3], "omega_body": [1, 0, 0], "energy": 0.3}, "energy"),
    ({"min_j": 0.5, "unknown_field": 1}, "unknown_field"),
]


@pytest.mark.parametrize(("body", "field"), INVALID_BODIES)
def test_invalid_field_answers_422_naming_it(client, body, field) -> None:
    assert_422(post(client, body), field)


@pytest.mark.parametrize(("body", "field"), INVALID_BODIES)
def test_regression_request_from_python_raises_input_error_naming_the_field(body, field) -> None:
    # issue 18: built from Python, SimulateRequest raised pydantic's ValidationError.
    with pytest.raises(InputError, match=rf"(^|; ){field}[:\[]"):
        api.SimulateRequest(**body)


@pytest.mark.parametrize("fn", [api.simulate, api.convergence])
@pytest.mark.parametrize("request_", [None, {"min_j": 0.5}, "min_j=0.5"])
def test_regression_endpoints_name_a_request_that_is_no_request(fn, request_) -> None:
    # issue 18: anything but a SimulateRequest gave AttributeError.
    with pytest.raises(InputError, match=r"^request: expected a SimulateRequest"):
        fn(request_)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_number_answers_422(client, value) -> None:
    # JSON has no NaN, but Python's parser accepts these literals: the schema refuses them.
    r = post(client, content=f'{{"energy": {value}}}', headers={"content-type": "application/json"})
    assert_422(r, "energy")


def test_malformed_json_answers_422(client) -> None:
    r = client.post(
        "/api/simulate", content=b'{"min_j": 0.5,', headers={"content-type": "application/json"}
    )
    assert_422(r, "not valid JSON")


def test_body_that_is_not_an_object_answers_422(client) -> None:
    assert_422(client.post("/api/simulate", json=[1, 2, 3]), "body")
    assert_422(client.post("/api/simulate"), "body")  # no body at all


def test_case_refused_by_tumble_answers_422(client) -> None:
    # "implicit" needs every inverse moment > 0 (tumble.rigid raises InputError).
    r = post(client, {"inv_inertia": [1, 0, 2], "omega_body": [1, 0, 1], "methods": ["implicit"]})
    assert_422(r, "inv_inertia")
    # A locked axis (J_i = 0) with a nonzero omega there (tumble.scenarios refuses it).
    r = post(client, {"inv_inertia": [1, 0, 2], "omega_body": [1, 1, 1]})
    assert_422(r, "omega_body")


# ------------------------------------------------------------------------- 413 paths


def test_work_beyond_the_limit_answers_413(client) -> None:
    n = len(rigid.METHODS)
    rotations = (api.MAX_WORK // n) / 1000 + 1  # steps = 1000 rotations > MAX_WORK / n
    body = {"steps_per_rotation": 1000, "rotations": rotations}
    r = post(client, body)
    assert r.status_code == 413
    assert str(api.MAX_WORK) in r.json()["message"]
    # The same steps for one method is within the limit: the limit counts methods too.
    ok = post(client, {**body, "methods": ["jolt"]})
    assert ok.status_code == 200


def test_oversized_body_answers_413(client) -> None:
    body = json.dumps({"methods": ["jolt"] * (api.MAX_BODY_BYTES // 8)})
    r = client.post("/api/simulate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "body" in r.json()["message"]


def test_server_keeps_serving_after_bad_requests(client) -> None:
    for body in ({"min_j": "x"}, {"steps_per_rotation": 10**6}, {"rotations": 1e5}):
        assert post(client, body).status_code in (413, 422)
    assert post(client, {"methods": ["jolt"]}).status_code == 200


# ------------------------------------------------------------------------- content


def close(got, want) -> None:
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape
    assert not np.any(np.isnan(got))
    np.testing.assert_allclose(got, want, rtol=ROUNDING_RTOL, atol=ROUNDING_ATOL)


@pytest.fixture(scope="module")
def default_answer(client):
    r = post(client)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.headers["server-timing"].startswith("app;dur=")
    return r.json()


def test_default_request_runs_every_method_on_the_article_case(default_answer) -> None:
    d = default_answer
    case = scenarios.article_case()
    assert [m["name"] for m in d["methods"]] == list(rigid.METHODS)
    assert d["case"]["steps"] == case.steps == 1280
    assert d["case"]["duration"] == pytest.approx(40 * math.pi)
    assert d["case"]["dt"] == pytest.approx(case.dt)
    close(d["case"]["inv_inertia"], case.inv_inertia)
    n = d["case"]["records"]
    assert n <= api.MAX_POINTS
    assert len(d["t"]) == n
    assert d["t"][0] == 0.0
    assert d["t"][-1] == pytest.approx(case.duration)
    for m in d["methods"]:
        for key in ("energy_factor", "L_norm", "attitude_error"):
            assert len(m[key]) == n
        for key, comps in (("L_world", "xy"), ("L_body", "xyz"), ("q", "wxyz")):
            assert set(m[key]) == set(comps)
            assert all(len(m[key][c]) == n for c in comps)


@pytest.mark.parametrize("method", ["jolt", "momentum_first", "splitting", "rk4"])
def test_traces_match_direct_calls(default_answer, method) -> None:
    d = default_answer
    case = scenarios.article_case()
    every = d["case"]["every"]
    tr = rigid.simulate(
        case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, method, every=every
    )
    m = next(x for x in d["methods"] if x["name"] == method)
    J = case.inv_inertia
    close(d["t"], tr.t)
    close(m["energy_factor"], diagnostics.energy_factor(tr, J))
    close(m["L_norm"], diagnostics.momentum_norm(tr, J))
    Lw = diagnostics.momentum_world(tr, J)
    close(m["L_world"]["x"], Lw[:, 0])
    close(m["L_world"]["y"], Lw[:, 1])
    Lb = diagnostics.momentum_body(tr, J)
    for i, c in enumerate("xyz"):
        close(m["L_body"][c], Lb[:, i])
    for i, c in enumerate("wxyz"):
        close(m["q"][c], tr.q[:, i])
    # attitude errors from 0 to ~pi; the exact solution is evaluated separately there
    np.testing.assert_allclose(
        m["attitude_error"], diagnostics.attitude_error(tr, J), rtol=1e-6, atol=1e-9
    )
    s = scenarios.score(tr, J)
    for key in ("energy_error", "momentum_drift", "direction_drift", "attitude_error_end"):
        np.testing.assert_allclose(m["scores"][key], getattr(s, key), rtol=1e-6, atol=1e-12)
    assert m["scores"]["diverged_at"] is None


def test_exact_reference_matches_torque_free(default_answer) -> None:
    d = default_answer
    case = scenarios.article_case()
    c = d["case"]
    t = np.minimum(np.arange(c["records"]) * c["every"], c["steps"]) * case.dt  # unrounded
    close(d["t"], t)
    q, w = exact.torque_free(case.q0, case.omega0, case.inv_inertia, t)
    ref = d["exact"]
    assert "attitude_error" not in ref
    for i, c in enumerate("wxyz"):
        close(ref["q"][c], q[:, i])
    Lb = diagnostics.momentum_body((t, q, w), case.inv_inertia)
    for i, c in enumerate("xyz"):
        close(ref["L_body"][c], Lb[:, i])
    # The article's invariants: J_L = min_j + energy, |L| = 1, world L on z.
    close(ref["energy_factor"], np.full(t.shape, 0.5 + 0.4))
    close(ref["L_norm"], np.ones(t.shape))
    assert np.max(np.abs(ref["L_world"]["x"])) < 1e-9
    # And the "exact" method is the same closed form at the same times.
    m = next(x for x in d["methods"] if x["name"] == "exact")
    close(m["q"]["w"], ref["q"]["w"])
    assert max(m["attitude_error"]) < 1e-9


def test_explicit_body_and_method_subset(client) -> None:
    J = [0.5, 1.0, 2.0]
    wb = [0.3, 1.0, 0.2]
    r = post(client, {"inv_inertia": J, "omega_body": wb, "methods": ["midpoint", "jolt"],
                      "steps_per_rotation": 40, "rotations": 3})  # fmt: skip
    assert r.status_code == 200, r.text
    d = r.json()
    case = scenarios.explicit_case(J, wb, 40, 3)
    assert [m["name"] for m in d["methods"]] == ["midpoint", "jolt"]
    assert d["case"]["steps"] == case.steps == 120
    assert d["case"]["every"] == 1
    tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, "midpoint")
    close(d["methods"][0]["energy_factor"], diagnostics.energy_factor(tr, J))
    close(d["case"]["L0_body"], np.divide(wb, J))


def test_long_run_is_decimated_to_max_points(client) -> None:
    r = post(client, {"steps_per_rotation": 1000, "rotations": 100, "methods": ["jolt"]})
    d = r.json()
    assert d["case"]["steps"] == 100_000
    assert d["case"]["records"] <= api.MAX_POINTS
    assert len(d["methods"][0]["L_norm"]) == d["case"]["records"]
    assert d["t"][-1] == pytest.approx(d["case"]["duration"])


def test_blown_up_method_gives_nulls_and_diverged_at(client) -> None:
    # Explicit Euler at 2 steps per rotation: |L| grows without bound and overflows.
    body = {"min_j": 0.1, "median_j": 0.2, "energy": 0.9, "steps_per_rotation": 2,
            "rotations": 200, "methods": ["explicit", "momentum_first"]}  # fmt: skip
    r = post(client, body)
    assert r.status_code == 200
    assert "NaN" not in r.text
    assert "Infinity" not in r.text
    explicit, good = r.json()["methods"]
    assert explicit["scores"]["diverged_at"] is not None
    assert None in explicit["L_norm"]
    assert None in explicit["attitude_error"]
    assert good["scores"]["diverged_at"] is None
    assert None not in good["L_norm"]
    # Scores cover the finite records, as scenarios.score does.
    case = scenarios.article_case(0.1, 0.2, 0.9, 2, 200)
    with pytest.warns(rigid.DivergenceWarning, match="'explicit' diverged"):
        tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, case.dt, case.steps,
                            "explicit", every=r.json()["case"]["every"])  # fmt: skip
    s = scenarios.score(tr, case.inv_inertia)
    assert explicit["scores"]["diverged_at"] == pytest.approx(s.diverged_at)
    if np.isfinite(s.energy_error):
        np.testing.assert_allclose(explicit["scores"]["energy_error"], s.energy_error, rtol=1e-9)
    else:  # the blown-up energy overflowed: JSON has no inf, the page gets null
        assert explicit["scores"]["energy_error"] is None


# ------------------------------------------------------------------------- page and assets


def test_page_and_assets_are_served_locally(client) -> None:
    page = client.get("/")
    assert page.status_code == 200
    html = page.text
    for element_id in ("min-j", "median-j", "energy", "steps-per-rotation", "body-canvas"):
        assert f'id="{element_id}"' in html
    assert "http://" not in html
    assert "https://" not in html
    js = client.get("/static/plotly.min.js")
    assert js.status_code == 200
    assert js.content == server.plotly_js_path().read_bytes()
    assets = page_assets(html)
    assert {"lab.css", "lab-state.js", "lab-main.js"} <= set(assets)
    for name in assets:
        r = client.get(f"/static/{name}")
        assert r.status_code == 200, name
        assert "https://" not in r.text, name
    assert client.get("/static/missing.js").status_code == 404


def _plotly_version(path: Path) -> tuple[int, ...]:
    """The version in a plotly.js bundle's header comment (``* plotly.js v4.1.1``, or
    ``* plotly.js (basic - minified) v4.1.1``)."""
    match = re.search(r"plotly\.js[^\n]* v(\d+)\.(\d+)\.(\d+)", path.read_text()[:500])
    assert match, path
    return tuple(int(g) for g in match.groups())


def test_plotly_js_is_the_partial_bundle_when_there_else_the_python_packages(
    monkeypatch, tmp_path
) -> None:
    """The page's plotly.js is the partial bundle in the package (a wheel built with npm),
    or the npm-installed one if tumble runs from a checkout where ``./dev`` put it in
    ``node_modules``, else the full bundle inside the ``plotly`` Python package (no npm)."""
    assert (server.BASIC_BUNDLE.parents[2] / "package-lock.json").is_file()  # this checkout
    full = Path(str(resources.files("plotly") / "package_data" / "plotly.min.js"))
    checkout = tmp_path / "checkout"
    bundle = checkout / "node_modules" / "plotly-basic.min.js"
    packaged = tmp_path / "wheel" / "tumble" / "lab" / "vendor" / "plotly-basic.min.js"
    monkeypatch.setattr(server, "CHECKOUT", checkout)
    monkeypatch.setattr(server, "BASIC_BUNDLE", bundle)
    monkeypatch.setattr(server, "PACKAGED_BUNDLE", packaged)
    assert server.plotly_js_path() == full  # nothing installed
    bundle.parent.mkdir(parents=True)
    bundle.write_text("/* partial */")
    assert server.plotly_js_path() == full  # not a checkout: no package-lock.json
    (checkout / "package-lock.json").write_text("{}")
    assert server.plotly_js_path() == bundle
    # A wheel built with npm at hand carries the bundle in the package (hatch_build.py).
    packaged.parent.mkdir(parents=True)
    packaged.write_text("/* partial, packaged */")
    assert server.plotly_js_path() == packaged


@pytest.mark.skipif(not server.BASIC_BUNDLE.is_file(), reason="./dev has not run npm ci here")
def test_the_two_plotly_bundles_are_one_major_version():
    """The lab is tested with the partial bundle; a pip install serves the full one. The
    lock file pins the partial bundle to the major version the plotly package ships, so
    both draw the same page."""
    full = Path(str(resources.files("plotly") / "package_data" / "plotly.min.js"))
    assert _plotly_version(server.BASIC_BUNDLE)[0] == _plotly_version(full)[0]


def test_slider_ranges_in_the_page_match_the_issue(client) -> None:
    html = client.get("/").text
    for attrs in ('id="min-j" min="0.1" max="5"', 'id="median-j" min="0" max="1"',
                  'id="energy" min="0" max="1"'):  # fmt: skip
        assert attrs in html


def test_static_dir_is_in_the_package() -> None:
    folder = Path(server.__file__).parent / "static"
    assets = page_assets((folder / "index.html").read_text())
    assert {p.name for p in folder.iterdir()} >= {"index.html", *assets}
    # Every script of the folder is one the page loads (lab-state.js lists them).
    assert {p.name for p in folder.glob("*.js")} == {a for a in assets if a.endswith(".js")}


@pytest.mark.parametrize("payload", [5, None, [1, 2], {"a": object()}, {"a": {1j}}])
def test_regression_encode_names_a_payload_it_cannot_write(payload) -> None:
    # issue 18 campaign: orjson's TypeError escaped.
    with pytest.raises(InputError, match=r"^payload: "):
        api.encode(payload)


def test_encode_writes_non_finite_numbers_as_null() -> None:
    assert json.loads(api.encode({"a": np.array([1.0, np.nan, np.inf])})) == {
        "a": [1.0, None, None]
    }

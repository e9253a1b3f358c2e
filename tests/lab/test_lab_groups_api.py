"""The lab's method list in groups, the compositions by name, and the engines at 60 Hz,
through FastAPI's test client.

The groups are checked against the registries they are read from (``tumble.methods``,
``tumble.engines``), the compositions against ``tumble.rigid.simulate``, and the engines
preset against the T-handle of ``tumble bench engines`` (``tumble.bodies``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tumble import bodies, engines, figures, rigid, scenarios
from tumble.lab import api, groups, presets

#: Responses are rounded to api.DIGITS = 7 significant digits.
ROUNDING_RTOL = 6e-7


def simulate(client, **body):
    return client.post("/api/simulate", json=body)


# ------------------------------------------------------------------------- /api/groups


@pytest.fixture(scope="module")
def group_table(client) -> list[dict]:
    r = client.get("/api/groups")
    assert r.status_code == 200
    return r.json()


def members(group: dict) -> list[str]:
    return [m for section in group["sections"] for m in section["methods"]]


def test_groups_hold_every_listed_method_once(group_table) -> None:
    assert [g["id"] for g in group_table] == ["article", "higher", "engines"]
    assert [g["title"] for g in group_table] == ["The article's methods", "Higher order", "Engines"]
    listed = [m for g in group_table for m in members(g)]
    assert sorted(listed) == sorted(m for m in groups.listed() if m != "exact")
    assert len(listed) == len(set(listed))
    for g in group_table:
        assert g["note"]


def test_the_article_group_has_no_replica_and_no_higher_order(group_table, client) -> None:
    article = members(group_table[0])
    assert {"explicit", "jolt", "momentum_first", "splitting", "midpoint"} <= set(article)
    rows = {m["name"]: m for m in client.get("/api/methods").json()}
    for name in article:
        assert name not in engines.ENGINES
        assert ":" not in name
        assert rigid.method_info(name).order < groups.HIGHER_ORDER
        assert rows[name]["group"] == "article"
        assert rows[name]["engine"] is None


def test_higher_order_offers_the_best_composition_of_each_order(group_table, client) -> None:
    higher = members(group_table[1])
    assert higher[0] == "rk4"
    assert higher[1:] == list(groups.FEATURED)
    # The issue names this one; docs/integrators.md measures it the most accurate per CPU
    # second at order 6, and the symmetric-top compositions the best at order 4.
    assert "symmetric_top_split:kahanli6" in higher
    assert "symmetric_top_split:suzuki4" in higher
    orders = {rigid.method_info(m).order for m in higher}
    assert {4, 6} <= orders
    rows = {m["name"]: m for m in client.get("/api/methods").json()}
    for name in groups.FEATURED:
        assert rows[name]["group"] == "higher"
        assert rows[name]["featured"]
        assert rows[name]["order"] in (4, 6)


def test_each_replica_is_under_its_engine(group_table, client) -> None:
    sections = group_table[2]["sections"]
    assert [(s["engine"], tuple(s["methods"])) for s in sections] == list(engines.BY_ENGINE.items())
    rows = {m["name"]: m for m in client.get("/api/methods").json()}
    for section in sections:
        assert section["defaults"] == [m for m in section["methods"] if engines.ENGINES[m].default]
        for name in section["methods"]:
            assert name in rigid.METHODS  # a registry method, so the lab runs it by name
            assert engines.ENGINES[name].engine == section["engine"]
            assert rows[name]["group"] == "engines"
            assert rows[name]["engine"] == section["engine"]
    assert sum(len(s["methods"]) for s in sections) == len(engines.ENGINES)


def test_a_composition_has_its_own_line_style_and_its_familys_colour() -> None:
    for name in groups.FEATURED:
        row = groups.method_row(name)
        base = rigid.method_info(name).base
        assert row["color"] == figures.color(name)
        assert row["dash"] != figures.dashes()[base]
    siblings = {groups.method_row(f"splitting:{s}")["dash"] for s in rigid.COMPOSITIONS}
    assert len(siblings) == min(len(rigid.COMPOSITIONS), len(figures.DASHES) - 1)


# ------------------------------------------------------------------------- /api/methods/{name}


def test_any_composition_is_served_by_name(client) -> None:
    name = "splitting:yoshida4"  # not featured
    assert name not in groups.FEATURED
    r = client.get(f"/api/methods/{name}")
    assert r.status_code == 200
    row = r.json()
    assert row["name"] == name
    assert row["group"] == "higher"
    assert row["order"] == 4
    assert row["featured"] is None
    assert row["color"] == figures.color(name)
    assert row == groups.method_row(name, api.SHOWN_AT_START)
    assert client.get("/api/methods/jolt").json()["group"] == "article"


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("splitting:bogus4", "unknown composition scheme 'bogus4'"),
        ("implicit:suzuki4", "not time-symmetric"),
        ("exact:kahanli6", "exact solution already"),
        ("nope", "got 'nope'"),
        ("splitting:suzuki4:yoshida4", "unknown composition scheme"),
    ],
)
def test_a_name_that_is_no_method_answers_422(client, name, says) -> None:
    r = client.get(f"/api/methods/{name}")
    assert r.status_code == 422, r.text
    message = r.json()["message"]
    assert message.startswith("name: ")
    assert says in message


# ------------------------------------------------------------------------- compositions run


def test_simulate_runs_a_composition_as_rigid_simulate_does(client) -> None:
    name = "symmetric_top_split:kahanli6"
    r = simulate(client, methods=[name], steps_per_rotation=16, rotations=2)
    assert r.status_code == 200, r.text
    d = r.json()
    (run,) = d["methods"]
    assert run["name"] == name
    case = scenarios.article_case(steps_per_rotation=16, rotations=2)
    tr = scenarios.simulate(case, name)
    np.testing.assert_allclose(run["L_body"]["y"], tr.L_body[:, 1], rtol=ROUNDING_RTOL, atol=1e-12)
    # Sixth order at 16 steps per rotation: far closer to the exact motion than its base.
    assert run["scores"]["attitude_error_end"] < 1e-4


def test_simulate_refuses_an_unknown_composition_naming_the_field(client) -> None:
    r = simulate(client, methods=["jolt", "splitting:bogus4"])
    assert r.status_code == 422
    assert r.json()["message"].startswith("methods: unknown composition scheme 'bogus4'")


def test_every_method_of_the_list_ticked_at_once_is_one_request(client) -> None:
    names = [m for m in groups.listed() if m != "exact"]
    r = simulate(client, methods=names, steps_per_rotation=4, rotations=1)
    assert r.status_code == 200, r.text
    assert [m["name"] for m in r.json()["methods"]] == names
    # The bound is every distinct method name there is; a longer list is refused.
    r = simulate(client, methods=["jolt"] * (api.MAX_METHODS + 1))
    assert r.status_code == 422
    assert r.json()["message"].startswith("methods: ")


# ------------------------------------------------------------------------- engines at 60 Hz


def engines_preset() -> presets.Preset:
    return next(p for p in api.PRESETS if p.id == "engines")


def test_the_engines_preset_ticks_each_engines_default_setting() -> None:
    p = engines_preset()
    assert p.torque is None
    methods = p.params["methods"]
    assert sorted(methods) == sorted(n for n, r in engines.ENGINES.items() if r.default)
    assert methods == [m for m in rigid.METHODS if m in methods]  # the page's order
    # One setting per engine that has a default.
    assert len({engines.ENGINES[m].engine for m in methods}) == len(methods)
    # The request it makes is valid (the exact reference always runs with it).
    request = api.SimulateRequest(**p.params)
    assert request.method_names() == methods


def test_the_engines_preset_is_the_scorecards_t_handle_at_60_hz() -> None:
    p = engines_preset()
    sc = bodies.spin("t-handle")  # the scorecard's (tumble bench engines)
    J = np.asarray(sc.inv_inertia, dtype=float)
    L = np.asarray(sc.omega0, dtype=float) / J  # body L at the identity attitude
    lo, mid, hi = np.sort(J)
    span = hi - lo
    # The same body (J up to scale, which only rescales time) and the same energy: the
    # same orbit of L_b, entered at another point (the article's start).
    case = scenarios.article_case(p.params["min_j"], p.params["median_j"], p.params["energy"])
    np.testing.assert_allclose(case.inv_inertia, np.array([lo, mid, hi]) / span, rtol=1e-6)
    J_L = L @ (J * L) / (L @ L)
    assert p.params["energy"] == pytest.approx((J_L - lo) / span, abs=1e-7)
    assert 0 < p.params["median_j"] - p.params["energy"] < 1e-4  # just below the separatrix
    # 60 Hz: the lab's step is P / steps_per_rotation with P = 2π / ((J_max - J_min) |L|)
    # in seconds for the physical body; at the spin s the preset states that step is 1/60 s.
    period = 2 * math.pi / (span * np.linalg.norm(L))  # s, at the scorecard's 2 rev/s
    steps = p.params["steps_per_rotation"]
    assert steps == round(60 * period) == presets.ENGINE_STEPS
    spin = np.linalg.norm(sc.omega0) / (2 * math.pi)  # rev/s
    spin_60 = spin * 60 * period / steps
    assert abs(spin_60 / spin - 1) < 0.02
    assert f"{spin_60:.2f} rev/s" in p.note
    assert f"{steps / period:.1f} Hz" in p.note  # the scorecard's spin ticked at this rate
    # 1200 ticks: 20 s.
    assert round(p.params["rotations"] * steps) == 60 * presets.ENGINE_SECONDS == 1200


def test_the_engines_preset_runs_and_the_engines_differ(client) -> None:
    p = engines_preset()
    r = simulate(client, **{**p.params, "rotations": p.params["rotations"] / 4})
    assert r.status_code == 200, r.text
    d = r.json()
    assert [m["name"] for m in d["methods"]] == p.params["methods"]
    assert d["case"]["steps"] == 300
    # Without a gyroscopic term the spin stays put and world L swings; the others differ.
    ends = {m["name"]: m["scores"]["attitude_error_end"] for m in d["methods"]}
    assert len({round(e, 3) for e in ends.values() if e is not None}) >= 3, ends

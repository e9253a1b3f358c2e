"""The lab's instrument endpoints: presets, polhodes, blow-ups, error versus cost, only the
requested methods computed, the warm-up, and a busy port.

Checked against direct calls of tumble (scenarios, exact.torque_free, rotation) and closed
forms (box moments, polhode surfaces).
"""

from __future__ import annotations

import math
import socket

import numpy as np
import pytest

from conftest import run_fresh
from tumble import exact, rotation, scenarios
from tumble.lab import api, server


def post(client, path, body):
    return client.post(path, json=body)


# ------------------------------------------------------------------------- presets


def test_presets_are_served_and_each_runs(client) -> None:
    presets = client.get("/api/presets").json()
    ids = [p["id"] for p in presets]
    assert ids[0] == "article"
    assert {"tennis-racket", "long-bar", "flat-plate", "sphere", "phone"} <= set(ids)
    for p in presets:
        assert p["label"]
        assert p["note"]
        forced = {} if p["torque"] is None else {"torque": p["torque"]}
        r = post(
            client,
            "/api/simulate",
            {**p["params"], **forced, "methods": ["jolt"], "rotations": 1},
        )
        assert r.status_code == 200, (p["id"], r.text)


def test_box_presets_are_the_article_parameters_of_the_box() -> None:
    # Oracle: a box's principal moments by the formula I_x = m (b² + c²) / 12, inverted,
    # then the article's parametrisation J = (min_j, min_j + median_j, min_j + 1) x scale.
    by_id = {p.id: p for p in api.PRESETS}
    for pid, sides in (("tennis-racket", (3, 2, 1)), ("phone", (146.7, 71.5, 7.65))):
        a, b, c = sides
        J = np.sort(1 / np.array([b * b + c * c, a * a + c * c, a * a + b * b]))
        params = by_id[pid].params
        scale = J[2] - J[0]
        assert params["min_j"] == pytest.approx(J[0] / scale, abs=1e-4)
        assert params["median_j"] == pytest.approx((J[1] - J[0]) / scale, abs=1e-4)
        # Spun just below the separatrix (energy fraction = median fraction).
        assert 0 < params["median_j"] - params["energy"] <= 0.02 + 1e-9
    assert by_id["long-bar"].params["median_j"] == 0.0  # two equal moments
    assert by_id["flat-plate"].params["median_j"] == 1.0


# ------------------------------------------------------------------------- methods asked


def test_only_requested_methods_run_and_the_work_limit_counts_them(client) -> None:
    # 8000 x 20 = 160 000 steps: over the limit for all 15 methods, fine for five.
    body = {"steps_per_rotation": 8000, "rotations": 20}
    five = ["explicit", "jolt", "naive_rotation", "modified_jolt", "momentum_first"]
    assert post(client, "/api/simulate", {**body, "methods": five}).status_code == 200
    r = post(client, "/api/simulate", body)
    assert r.status_code == 413
    assert "show fewer methods" in r.json()["message"]
    d = post(client, "/api/simulate", {"methods": ["rk4"], "rotations": 1}).json()
    assert [m["name"] for m in d["methods"]] == ["rk4"]
    assert d["exact"]["L_norm"]  # the reference always runs


def test_a_blow_up_is_cut_and_reported(client) -> None:
    body = {"min_j": 3.0, "steps_per_rotation": 16, "methods": ["explicit", "jolt"]}
    d = post(client, "/api/simulate", body).json()
    explicit, jolt = d["methods"]
    assert jolt["blew_up"] is None
    cut = explicit["blew_up"]
    k = cut["records"]
    assert 0 < k < len(d["t"])
    assert cut["t"] == pytest.approx(d["t"][k], rel=1e-6)
    assert all(v is None for v in explicit["L_norm"][k:])
    assert max(explicit["L_norm"][:k]) <= 10.0
    # The axis ranges are those of the runs that did not blow up.
    alone = post(client, "/api/simulate", {**body, "methods": ["jolt"]}).json()
    assert d["ranges"] == alone["ranges"]


# ------------------------------------------------------------------------- polhodes


@pytest.mark.parametrize("energy_factor", [0.55, 0.8, 1.0, 1.2, 1.49])
def test_polhode_lies_on_the_sphere_and_the_energy_ellipsoid(energy_factor) -> None:
    J = np.array([0.5, 1.0, 1.5])
    loops = exact.polhode(J, energy_factor, 257)
    assert loops.shape == (2, 257, 3)
    np.testing.assert_allclose(np.linalg.norm(loops, axis=-1), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.einsum("...i,i,...i", loops, J, loops), energy_factor, atol=1e-14)
    np.testing.assert_allclose(loops[:, 0], loops[:, -1], atol=1e-15)  # closed


def test_the_exact_motion_follows_its_polhode() -> None:
    # Oracle: exact.torque_free (elliptic functions), independent of the polhode formula.
    J = np.array([0.7, 1.1, 1.6])  # unsorted-looking order is fine; try a permutation too
    for perm in ([0, 1, 2], [2, 0, 1]):
        Jp = J[perm]
        Lb = np.array([0.3, 0.5, 0.8])[perm]
        Lb /= np.linalg.norm(Lb)
        e = float(Lb @ (Jp * Lb))
        q0 = np.array([1.0, 0, 0, 0])
        t = np.linspace(0, 30, 400)
        q, _ = exact.torque_free(q0, Jp * Lb, Jp, t)
        L_path = rotation.quat_rotate(rotation.quat_conjugate(q), Lb)  # world L is Lb here
        loops = exact.polhode(Jp, e, 4001).reshape(-1, 3)
        gap = np.min(np.linalg.norm(L_path[:, None, :] - loops[None], axis=-1), axis=1)
        assert gap.max() < 2e-3  # the spacing of 4001 points on the loop


def test_polhode_refuses_bad_input() -> None:
    from tumble import InputError

    with pytest.raises(InputError, match=r"^energy_factor"):
        exact.polhode([0.5, 1.0, 1.5], 2.0)
    with pytest.raises(InputError, match=r"^inv_inertia"):
        exact.polhode([1.0, 1.0, 1.0], 1.0)
    with pytest.raises(InputError, match=r"^points"):
        exact.polhode([0.5, 1.0, 1.5], 1.0, points=2)


def test_answer_carries_the_polhodes_of_the_body(client) -> None:
    d = post(client, "/api/simulate", {"methods": ["jolt"], "rotations": 1}).json()
    levels = d["polhodes"]
    assert len(levels) == api.POLHODE_LEVELS + 1
    assert [lv["separatrix"] for lv in levels].count(True) == 1
    J = np.array(d["case"]["inv_inertia"])
    for lv in levels:
        for loop in lv["loops"]:
            u = np.array([loop["x"], loop["y"], loop["z"]]).T
            np.testing.assert_allclose(u @ J * 0 + np.einsum("ij,j,ij->i", u, J, u),
                                       lv["energy_factor"], atol=1e-5)  # fmt: skip


# ------------------------------------------------------------------------- error vs cost


def test_convergence_measures_orders_and_costs(client) -> None:
    body = {"rotations": 2, "steps_per_rotation": 64, "methods": ["midpoint", "rk4", "exact"]}
    r = post(client, "/api/convergence", body)
    assert r.status_code == 200, r.text
    out = {m["name"]: m for m in r.json()["methods"]}
    assert set(out) == {"midpoint", "rk4"}
    case = scenarios.article_case(rotations=2)
    for name, order in (("midpoint", 2), ("rk4", 4)):
        m = out[name]
        assert m["ns_per_step"] > 0
        assert [p["steps"] for p in m["points"]] == [case.steps, 2 * case.steps, 4 * case.steps]
        assert m["order"] == pytest.approx(order, abs=0.3)
        # Oracle for one point: the run and its score straight from scenarios.
        tr = scenarios.simulate(case, name, case.steps)
        ref = scenarios.simulate(case, "exact", case.steps)
        want = scenarios.score(tr, case.inv_inertia, reference_q=ref.q).attitude_error_end
        assert m["points"][0]["error"] == pytest.approx(want, rel=1e-12)
        costs = [p["cost_us"] for p in m["points"]]
        assert costs[1] == pytest.approx(2 * costs[0])
        assert costs[2] == pytest.approx(4 * costs[0])
    big = {"steps_per_rotation": 20000, "rotations": 20, "methods": ["rk4", "midpoint"]}
    assert post(client, "/api/convergence", big).status_code == 413


# ------------------------------------------------------------------------- start-up


def test_the_warm_up_covers_a_blow_up() -> None:
    # In a fresh process: once the warm-up tasks a request waits for have run, a run that
    # blows up (its methods' step path, which tells an overflow from a divergence) loads no
    # numba kernel. That the plan holds those tasks: test_lab_startup.
    out = run_fresh(
        """
        import numba.core.dispatcher as d
        from tumble.lab import api
        requests = [
            api.SimulateRequest(min_j=3.0, steps_per_rotation=16, methods=["explicit"]),
            api.SimulateRequest(min_j=2.5, steps_per_rotation=3,
                                methods=["explicit", "jolt", "rk4"]),
        ]
        for request in requests:
            for task in api.warm_up_tasks(request):
                task.run()
        loads = []
        original = d.Dispatcher._compile_for_args
        def spy(self, *a, **k):
            loads.append(self.py_func.__name__)
            return original(self, *a, **k)
        d.Dispatcher._compile_for_args = spy
        for request in requests:
            api.simulate(request)
        print("LOADED", loads)
        """
    )
    assert "LOADED []" in out, out


def test_a_busy_port_is_one_line_before_any_work(capsys, monkeypatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(server, "_serve", lambda app, sock: started.append(app))
    monkeypatch.setattr(server, "WarmUp", lambda *a, **k: started.append("warm-up"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as exc:
            server.run("127.0.0.1", port)
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert "serving on" not in out
    assert "loading" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "--port" in lines[0]
    assert str(port) in lines[0]
    assert started == []


def test_the_port_is_bound_before_the_address_is_printed(capsys, monkeypatch) -> None:
    seen: list[int] = []

    def serve(app, sock):
        seen.append(sock.getsockname()[1])
        # The socket listens already: a client can connect before the start-up finished.
        with socket.create_connection(("127.0.0.1", seen[0]), timeout=5):
            pass

    monkeypatch.setattr(server, "_serve", serve)
    server.run("127.0.0.1", 0)
    assert seen
    assert seen[0] > 0
    assert math.isfinite(seen[0])

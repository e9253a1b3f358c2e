"""The lab's torque scenarios: the ``torque`` request field, the forced ODE reference, the
scores against it, its limits and bad input, and the warm-up covering the presets.

Oracles: an independent SciPy solve of Euler's equations in the body frame (the lab's
reference solves the world-frame equations through :func:`tumble.torques.reference`), and
direct calls of :func:`tumble.rigid.simulate` with the scenario's torque model.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from conftest import run_fresh
from tumble import diagnostics, rigid, rotation, scenarios
from tumble.lab import api
from tumble.trajectory import record_steps

#: Rotations of the runs here: short, so the reference solves take little time.
ROTATIONS = 2

#: Angle between the lab's reference and the independent solve, radians: both solvers are
#: far tighter (1e-12), the response rounds quaternions to 7 significant digits (about
#: 1e-7 rad per component).
REFERENCE_ANGLE_TOL = 1e-6


def post(client, body):
    return client.post("/api/simulate", json=body)


def body_frame_solution(case: scenarios.Case, t: np.ndarray) -> np.ndarray:
    """Attitudes at ``t`` from Euler's equations in the body frame, for the heavy top:
    ``I dω_b/dt = I ω_b × ω_b + c × (m Rᵀ g)``, ``dq/dt = ½ q ⊗ (0, ω_b)``."""
    inertia = 1.0 / case.inv_inertia
    m, g, c = 1.0, np.array([0.0, 0.0, -9.81]), np.array([0.0, 0.0, 0.4])

    def rhs(_: float, y: np.ndarray) -> np.ndarray:
        q = y[:4] / np.linalg.norm(y[:4])
        w = y[4:]
        g_body = rotation.quat_rotate(rotation.quat_conjugate(q), g)
        dw = (np.cross(inertia * w, w) + np.cross(c, m * g_body)) / inertia
        dq = 0.5 * rotation.quat_multiply(q, np.concatenate([[0.0], w]))
        return np.concatenate([dq, dw])

    w_body = rotation.quat_rotate(rotation.quat_conjugate(case.q0), case.omega0)
    sol = solve_ivp(
        rhs, (0.0, t[-1]), np.concatenate([case.q0, w_body]), method="LSODA",
        rtol=1e-12, atol=1e-13, t_eval=t,
    )  # fmt: skip
    assert sol.success
    return sol.y[:4].T / np.linalg.norm(sol.y[:4].T, axis=1, keepdims=True)


def test_torque_presets_are_in_the_menu(client) -> None:
    presets = {p["id"]: p for p in client.get("/api/presets").json()}
    for name in scenarios.TORQUE_SCENARIOS:
        p = presets[name]
        assert p["torque"] == name
        assert p["params"] == {}
        assert scenarios.TORQUE_SCENARIOS[name] in p["note"]


def test_heavy_top_reference_is_the_forced_motion(client) -> None:
    r = post(client, {"torque": "heavy-top", "rotations": ROTATIONS, "methods": ["rk4"]})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["reference"]["kind"] == "ode"
    assert "ODE" in d["reference"]["label"]
    assert d["case"]["torque"] == "heavy-top"
    assert d["polhodes"] == []  # polhodes are paths of the free body only
    case = scenarios.torque_case("heavy-top", 64, ROTATIONS)
    # The times of the records (the answer's t is rounded to 7 digits: 1e-6 rad at 12 rad/s).
    t = record_steps(case.steps, d["case"]["every"]) * case.dt
    np.testing.assert_allclose(d["t"], t, rtol=1e-6)
    q_lab = np.stack([d["exact"]["q"][c] for c in "wxyz"], axis=-1)
    q_oracle = body_frame_solution(case, t)
    angle = rotation.rotation_angle(q_lab, q_oracle)
    assert not np.any(np.isnan(angle))
    assert np.max(angle) < REFERENCE_ANGLE_TOL
    # The top moves: a free-body reference would be far from the forced one.
    assert np.max(rotation.rotation_angle(q_oracle[0], q_oracle)) > 0.5


@pytest.mark.parametrize("name", list(scenarios.TORQUE_SCENARIOS))
def test_methods_run_under_the_torque_and_are_scored_against_the_reference(client, name) -> None:
    methods = ["rk4", "splitting", "explicit"]
    r = post(client, {"torque": name, "rotations": ROTATIONS, "methods": methods})
    assert r.status_code == 200, r.text
    d = r.json()
    case = scenarios.torque_case(name, 64, ROTATIONS)
    every = d["case"]["every"]
    reference = scenarios.reference(case, every)
    for run in d["methods"]:
        tr = rigid.simulate(
            case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, run["name"],
            torque=case.torque, every=every, on_divergence="ignore",
        )  # fmt: skip
        L_norm = diagnostics.momentum_norm(tr, case.inv_inertia)
        drawn = len(L_norm) if run["blew_up"] is None else run["blew_up"]["records"]
        np.testing.assert_allclose(run["L_norm"][:drawn], L_norm[:drawn], rtol=1e-6)
        assert all(v is None for v in run["L_norm"][drawn:])
        s = scenarios.score(tr, case.inv_inertia, reference=reference)
        assert run["scores"]["attitude_error_end"] == pytest.approx(s.attitude_error_end, rel=1e-9)
        assert run["scores"]["energy_error"] == pytest.approx(s.energy_error, rel=1e-9)
    by_name = {m["name"]: m for m in d["methods"]}
    error = {k: m["scores"]["attitude_error_max"] for k, m in by_name.items()}
    # Against the forced motion, fourth order beats second beats first (or a blow-up).
    assert error["rk4"] < error["splitting"]
    assert by_name["explicit"]["blew_up"] is not None or error["splitting"] < error["explicit"]


def test_torque_convergence_shows_the_orders(client) -> None:
    r = client.post(
        "/api/convergence",
        json={"torque": "damped", "rotations": ROTATIONS, "methods": ["rk4", "splitting"]},
    )
    assert r.status_code == 200, r.text
    orders = {m["name"]: m["order"] for m in r.json()["methods"]}
    assert orders["rk4"] == pytest.approx(4, abs=0.3)
    assert orders["splitting"] == pytest.approx(2, abs=0.2)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"torque": "spring"}, "torque"),
        ({"torque": 3}, "torque"),
        ({"torque": ["heavy-top"]}, "torque"),
        ({"torque": "heavy-top", "min_j": 1.0}, "min_j"),
        ({"torque": "heavy-top", "energy": 0.3}, "energy"),
        ({"torque": "heavy-top", "inv_inertia": [1, 1, 1], "omega_body": [0, 0, 1]},
         "inv_inertia, omega_body"),
        ({"torque": "gravity-gradient", "methods": ["rk4", "exact"]}, "methods"),
    ],
)  # fmt: skip
def test_bad_torque_requests_are_refused_naming_the_field(client, body, field) -> None:
    r = post(client, body)
    assert r.status_code == 422, r.text
    assert r.json()["message"].startswith(f"{field}:"), r.json()["message"]


def test_a_torque_scenario_beyond_the_rotation_limit_is_413(client) -> None:
    r = post(client, {"torque": "heavy-top", "rotations": api.MAX_FORCED_ROTATIONS + 1})
    assert r.status_code == 413
    assert r.json()["message"].startswith("rotations:")
    r = post(
        client,
        {
            "torque": "heavy-top",
            "rotations": api.MAX_FORCED_ROTATIONS,
            "steps_per_rotation": 1,
            "methods": ["jolt"],
        },
    )
    assert r.status_code == 200, r.text


def test_a_torque_presets_default_view_costs_nothing_after_its_warm_up_tasks() -> None:
    # In a fresh process: once a torque preset's tasks of the plan have run (the methods
    # shown at start under its model, and its reference), the page's first request for it
    # (default steps and rotations) loads no numba kernel and solves no reference ODE (the
    # warm-up's solve is kept). One preset: the others take the same path with another
    # model; that the plan holds every preset's tasks is test_lab_startup's.
    out = run_fresh(
        """
        import numba.core.dispatcher as d
        from tumble import torques
        from tumble.lab import api
        torque = "heavy-top"
        request = api.SimulateRequest(torque=torque, methods=list(api.SHOWN_AT_START))
        needed = {t.key for t in api.warm_up_tasks(request)} | {(torque, None)}
        for task in api.warm_up_plan():
            if task.key in needed:
                task.run()
        loads, solves = [], []
        original = d.Dispatcher._compile_for_args
        def spy(self, *a, **k):
            loads.append(self.py_func.__name__)
            return original(self, *a, **k)
        d.Dispatcher._compile_for_args = spy
        solve = torques.reference
        torques.reference = lambda *a, **k: solves.append(1) or solve(*a, **k)
        api.simulate(request)
        print("LOADED", loads, "SOLVES", len(solves))
        """
    )
    assert "LOADED [] SOLVES 0" in out, out

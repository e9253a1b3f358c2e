"""Benchmark: attitude error at the final time against CPU time per body (error versus cost).

For each problem, every contender runs over a range of ``dt`` (or of tolerances), and each
run gives one point: the attitude error (rad) of the final orientation against the
problem's reference, and the CPU time that run took per body. Problems:

- ``peer``: the torque-free body ``I = (1, 2, 3)``, ``L_b(0) = (1, 0.4, 0.2)``, ``t = 100``;
- ``article``: the article's default body (``tumble.scenarios.article_case()``), ``t = 100``;
- ``heavy-top`` and ``gravity-gradient``: ``tumble.scenarios.torque_case``, ``t = 100``
  (the heavy top turns about 190 times);
- ``long``: the peer body over ``t = 10^4``;
- ``heavy-top-horizons``: the heavy top at the horizons ``HORIZONS`` (``t = 1`` to
  ``10^4``), to find the horizon from which the best geometric method reaches ``TARGET``
  with less CPU time than ``rk4`` (:func:`horizon_study`).

References: the closed-form free motion (``tumble.exact.torque_free``) torque-free, the
tight DOP853 solve ``tumble.torques.reference`` with torque. Contenders, measured in the
same run: tumble's geometric methods of second, fourth and sixth order and ``rk4``
(``rigid.simulate`` on a block of ``BODIES`` identical bodies, one thread, best process CPU
time of ``REPEAT`` runs, divided by ``BODIES``); SciPy's DOP853 (``solve_ivp``, the
world-frame equations in NumPy, one body) at several tolerances; MuJoCo's RK4 (one free
body, torque-free problems only, ``mujoco.rollout`` in C) if ``mujoco`` is installed.

Writes ``docs/figures/pareto-<problem>.png`` (log-log) and the ``pareto-<problem>`` sections
of ``BENCHMARKS.md`` (each curve's points, and the derived numbers: the CPU time each curve
needs for a target error, interpolated log-log between its points).

Usage: ``tumble bench pareto [--problems a,b] [--quick] [--no-write]``
(``--problems heavy-top-horizons`` for the horizon study alone).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
from scipy.integrate import solve_ivp

from _common import ROOT, markdown_table, threads, write_section
from tumble import exact, rigid, rotation, scenarios, torques
from tumble._kernels.rotation import qconj, qrotate
from tumble._kernels.torques import torque_batch

FIGURES = ROOT / "docs" / "figures"
BODIES = 16
REPEAT = 3
#: Runs of more steps than this are timed once on one body (their own length amortises the
#: call, and the machine is shared).
LONG_STEPS = 50_000
TARGET = 1e-6

SECOND = ("splitting", "symmetric_top_split", "momentum_first_symmetric", "midpoint")
FOURTH = (
    "splitting:suzuki4",
    "symmetric_top_split:suzuki4",
    "symmetric_top_split:mclachlan4",
    "momentum_first_symmetric:suzuki4",
    "splitting:yoshida4",
)
SIXTH = ("splitting:kahanli6", "symmetric_top_split:kahanli6", "splitting:yoshida6")
#: Steps per turn of the initial spin for each order: from coarse to fine, halving.
STEPS_PER_TURN = {2: (32, 64, 128, 256, 512), 4: (8, 16, 32, 64, 128), 6: (4, 8, 16, 32, 64)}
#: rk4 goes finer, so that it reaches the target error on the long and forced problems.
RK4_STEPS_PER_TURN = (8, 16, 32, 64, 128, 256, 512)
DOP853_RTOL = (1e-5, 1e-7, 1e-9, 1e-11)
MUJOCO_STEPS_PER_TURN = (16, 32, 64, 128, 256)


class Problem:
    """An initial-value problem: body, torque model, final time, reference attitude, and the
    time ``turn`` that ``dt`` is a fraction of (one turn at the initial rate, or the case's
    own period: the orbit of the gravity-gradient satellite), times ``fine`` for a problem
    whose errors need finer steps than the others."""

    def __init__(self, q0, omega0, J, model, t_end, turn=None, fine=1.0, q_ref=None):
        self.q0 = np.asarray(q0, dtype=float)
        self.omega0 = np.asarray(omega0, dtype=float)
        self.J = np.asarray(J, dtype=float)
        self.model = model
        self.t_end = float(t_end)
        turn = 2 * math.pi / float(np.linalg.norm(self.omega0)) if turn is None else turn
        self.turn = turn / fine
        if q_ref is not None:
            self.q_ref = np.asarray(q_ref, dtype=float)
        elif model is None:
            self.q_ref = exact.torque_free(self.q0, self.omega0, self.J, [self.t_end])[0][0]
        else:
            self.q_ref = torques.reference(self.q0, self.omega0, self.J, model, [self.t_end])[0][0]


def problems() -> dict[str, Callable[[], Problem]]:
    J_peer = 1.0 / np.array([1.0, 2.0, 3.0])
    w_peer = J_peer * np.array([1.0, 0.4, 0.2])
    q_id = np.array([1.0, 0.0, 0.0, 0.0])

    def article() -> Problem:
        c = scenarios.article_case()
        return Problem(c.q0, c.omega0, c.inv_inertia, None, 100.0)

    def forced(name: str, fine: float) -> Callable[[], Problem]:
        def make() -> Problem:
            c = scenarios.torque_case(name)
            return Problem(c.q0, c.omega0, c.inv_inertia, c.torque, 100.0, c.period, fine)

        return make

    return {
        "peer": lambda: Problem(q_id, w_peer, J_peer, None, 100.0),
        "heavy-top": forced("heavy-top", 1.0),
        "article": article,
        # The satellite librates slowly but the torque varies with the orbit: 8x finer.
        "gravity-gradient": forced("gravity-gradient", 8.0),
        "long": lambda: Problem(q_id, w_peer, J_peer, None, 1e4),
    }


def _cpu(fn: Callable[[], object], repeat: int = REPEAT) -> tuple[float, object]:
    """Best process CPU time of ``repeat`` calls of ``fn`` (after one warm-up if ``repeat >
    1``), and a result."""
    out = fn() if repeat > 1 else None
    best = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def tumble_point(
    p: Problem, method: str, steps_per_turn: float, bodies: int = BODIES
) -> tuple[float, float]:
    steps = max(1, round(p.t_end / p.turn * steps_per_turn))
    dt = p.t_end / steps
    n, repeat = (bodies, REPEAT) if steps <= LONG_STEPS else (1, 1)
    q = np.broadcast_to(p.q0, (n, 4))
    w = np.broadcast_to(p.omega0, (n, 3))
    with threads(1):
        cpu, tr = _cpu(
            lambda: rigid.simulate(
                q, w, p.J, dt, steps, method, p.model, steps, on_divergence="ignore"
            ),
            repeat,
        )
    qf = tr.q[-1, 0]
    # A method that diverged at this dt gives no point (nan).
    err = float(rotation.rotation_angle(qf, p.q_ref)) if np.all(np.isfinite(qf)) else math.nan
    return cpu / n, err


def dop853_point(p: Problem, rtol: float) -> tuple[float, float]:
    """SciPy's DOP853 on ``y = (q, L_w)``: ``dq/dt = ½ (0, omega) ⊗ q``, ``dL_w/dt = tau``."""
    J = p.J
    R0 = rotation.quat_to_matrix(p.q0)
    L0 = R0 @ ((R0.T @ p.omega0) / J)

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        q = y[:4] / np.linalg.norm(y[:4])
        R = rotation.quat_to_matrix(q)
        w = R @ (J * (R.T @ y[4:]))
        dq = 0.5 * np.concatenate([[-w @ y[1:4]], y[0] * w + np.cross(w, y[1:4])])
        tau = np.zeros(3) if p.model is None else torques.evaluate(p.model, t, q, w, J)
        return np.concatenate([dq, tau])

    def solve():
        return solve_ivp(
            rhs, (0.0, p.t_end), np.concatenate([p.q0, L0]), method="DOP853", rtol=rtol,
            atol=rtol * 1e-2, t_eval=[p.t_end],
        )  # fmt: skip

    t0 = time.process_time()
    sol = solve()
    cpu = time.process_time() - t0
    q = sol.y[:4, -1] / np.linalg.norm(sol.y[:4, -1])
    return cpu, float(rotation.rotation_angle(q, p.q_ref))


def mujoco_point(p: Problem, steps_per_turn: int) -> tuple[float, float]:
    """MuJoCo's RK4 on one free body (no gravity, no contacts), ``mujoco.rollout``."""
    import mujoco
    from mujoco import rollout

    steps = max(1, round(p.t_end / p.turn * steps_per_turn))
    dt = p.t_end / steps
    inertia = " ".join(repr(float(1.0 / j)) for j in p.J)
    xml = (
        f'<mujoco><option timestep="{dt!r}" integrator="RK4" gravity="0 0 0">'
        '<flag contact="disable"/></option><worldbody><body name="b"><freejoint/>'
        f'<inertial pos="0 0 0" mass="1" diaginertia="{inertia}"/></body></worldbody></mujoco>'
    )
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[3:7] = p.q0
    # A free joint's angular velocity is in body coordinates.
    data.qvel[3:6] = rotation.quat_rotate(rotation.quat_conjugate(p.q0), p.omega0)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, state, spec)
    out = np.empty((1, steps, state.size))
    cpu, _ = _cpu(lambda: rollout.rollout(model, data, state[None], nstep=steps, state=out))
    qpos = out[0, -1, 1 : 1 + model.nq]
    q = qpos[3:7] / np.linalg.norm(qpos[3:7])
    return cpu, float(rotation.rotation_angle(q, p.q_ref))


def cost_at(points: list[tuple[float, float]], target: float) -> float:
    """CPU time at which a curve first reaches ``target`` error: log-log interpolation
    between the two runs that bracket it (points ordered coarse to fine); nan if none."""
    points = [(c, e) for c, e in points if math.isfinite(e)]
    for (c0, e0), (c1, e1) in itertools.pairwise(points):
        if e0 >= target >= e1 and e0 > e1 > 0:
            s = math.log(target / e0) / math.log(e1 / e0)
            return math.exp(math.log(c0) + s * math.log(c1 / c0))
    if points and points[0][1] <= target:
        return points[0][0]
    return math.nan


def run_problem(name: str, p: Problem, has_mujoco: bool, quick: bool) -> dict[str, list]:
    curves: dict[str, list[tuple[float, float]]] = {}
    for methods, order in ((SECOND, 2), (("rk4",), 4), (FOURTH, 4), (SIXTH, 6)):
        for m in methods:
            spt = (RK4_STEPS_PER_TURN if m == "rk4" else STEPS_PER_TURN[order])[
                : 3 if quick else None
            ]
            curves[m] = [tumble_point(p, m, s) for s in spt]
            print(name, m, " ".join(f"{c:.2e}s:{e:.1e}" for c, e in curves[m]), flush=True)
    rtols = DOP853_RTOL[: 2 if quick else None]
    curves["SciPy DOP853"] = [dop853_point(p, r) for r in rtols]
    print(name, "DOP853", curves["SciPy DOP853"], flush=True)
    inertia = np.sort(1.0 / p.J)
    # MuJoCo refuses moments that break the triangle inequality (the article's body does:
    # I = (2, 1, 0.67) is no rigid body, a valid integration test all the same).
    if has_mujoco and p.model is None and inertia[0] + inertia[1] >= inertia[2]:
        spt = MUJOCO_STEPS_PER_TURN[: 3 if quick else None]
        curves["MuJoCo RK4"] = [mujoco_point(p, s) for s in spt]
        print(name, "MuJoCo", curves["MuJoCo RK4"], flush=True)
    return curves


def plot(name: str, curves: dict[str, list], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=90, layout="constrained")
    for label, pts in curves.items():
        c, e = zip(*[(c, e) for c, e in pts if math.isfinite(e)], strict=True)
        info = None if " " in label else rigid.method_info(label)
        style = "-" if info is None or info.order == 2 else ("--" if info.order == 4 else ":")
        if label == "rk4" or info is None:
            style = "-"
        ax.loglog(c, np.maximum(e, 1e-16), style, marker="o", ms=3, label=label,
                  lw=2.2 if info is None or label == "rk4" else 1.2)  # fmt: skip
    ax.axhline(TARGET, color="grey", lw=0.6)
    ax.set_xlabel("CPU time per body (s)")
    ax.set_ylabel("attitude error at the final time (rad)")
    ax.set_title(f"error versus cost: {name}")
    ax.legend(fontsize=7, ncol=2)
    fig.savefig(path, format="png")
    plt.close(fig)


# --------------------------------------------------------------------------------------
# the heavy top at several horizons: where the best geometric method overtakes rk4

#: Horizons of the heavy-top study (the top spins at 12 rad/s: ``t = 10^4`` is about
#: 19 000 turns of its spin).
HORIZONS = (1.0, 10.0, 100.0, 1e3, 1e4)
#: Methods of the study; ``rk4`` (from 4 steps per turn) first and the sixth order next, so
#: that the cheapest cost to ``TARGET`` found early bounds the refinement of the others
#: (``GIVE_UP``).
HORIZON_METHODS = ("rk4", *SIXTH, *FOURTH, *SECOND)
#: The first steps per turn of each order (rk4: 4); ``dt`` is halved from there until the
#: error is below ``TARGET`` (doubled while it is below already), so that the last two runs
#: bracket it.
START_STEPS_PER_TURN = {2: 16, 4: 4, 6: 4}
MAX_STEPS_PER_TURN = 16384
MIN_STEPS_PER_TURN = 0.5
#: A method stops refining once one run costs this many times the cheapest CPU time to
#: ``TARGET`` found so far at this horizon: it cannot become the best.
GIVE_UP = 4.0
#: Body-steps per timed call of a short run: as many bodies (up to 1024) as make the call
#: overhead of ``simulate`` (tens of µs) negligible.
HORIZON_BODY_STEPS = 200_000
#: Tolerances of the reference solve and of its check (the check's distance from the
#: reference bounds the reference's own error, DOP853's error falling with the tolerance).
#: DOP853's error grows about as ``t²`` here: at ``t = 10^4`` the solves at rtol 1e-13 and
#: 1e-12 differ by 2e-6 rad, those at 1e-14 and 3e-15 by 5e-9 (measured), hence 3e-15.
REFERENCE_RTOL = (3e-15, 1e-14)
#: The independent check of the reference: a sixth-order geometric method at this many
#: steps per turn (finer, its round-off grows: at ``t = 10^4``, 64 and 128 steps per turn
#: differ by 1.4e-7 rad, while 32 is 2e-8 from the reference, measured).
CHECK_METHOD, CHECK_STEPS_PER_TURN = "symmetric_top_split:kahanli6", 32


@numba.njit(cache=True)
def _world_rhs(t, y, kinds, P, J, q2, w2, tau, dy):
    """``dy/dt`` of ``y = (q, L_w)`` for one body (the equations of :func:`ode_reference`)."""
    s = math.sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3])
    q = (y[0] / s, y[1] / s, y[2] / s, y[3] / s)
    Lb = qrotate(qconj(q), (y[4], y[5], y[6]))
    w = qrotate(q, (J[0, 0] * Lb[0], J[0, 1] * Lb[1], J[0, 2] * Lb[2]))
    for c in range(4):
        q2[0, c] = q[c]
    for c in range(3):
        w2[0, c] = w[c]
    torque_batch(kinds, P, None, t, q2, w2, J, tau)
    dy[0] = -0.5 * (w[0] * y[1] + w[1] * y[2] + w[2] * y[3])
    dy[1] = 0.5 * (y[0] * w[0] + w[1] * y[3] - w[2] * y[2])
    dy[2] = 0.5 * (y[0] * w[1] + w[2] * y[1] - w[0] * y[3])
    dy[3] = 0.5 * (y[0] * w[2] + w[0] * y[2] - w[1] * y[1])
    for c in range(3):
        dy[4 + c] = tau[0, c]
    return dy


def ode_reference(case: scenarios.Case, t_end: float, rtol: float) -> np.ndarray:
    """Attitude of the forced ``case`` at ``t_end`` by DOP853 (Hairer's Fortran code through
    ``scipy.integrate.ode``, ``atol = rtol / 10``) on the world-frame equations of
    ``torques.reference`` (``dq/dt = ½ (0, omega) ⊗ q``, ``dL_w/dt = tau``), with the
    right-hand side compiled: the same solver and equations as the reference of the other
    problems, fast enough for ``t = 10^4``."""
    from scipy.integrate import ode

    kinds, P, _ = torques.as_model(case.torque).kernel_args(())
    J = np.array(case.inv_inertia, dtype=float).reshape(1, 3)
    work = (np.empty((1, 4)), np.empty((1, 3)), np.empty((1, 3)), np.empty(7))
    q0 = np.asarray(case.q0, dtype=float)
    R0 = rotation.quat_to_matrix(q0)
    L0 = R0 @ ((R0.T @ case.omega0) / J[0])
    solver = ode(lambda t, y: _world_rhs(t, y, kinds, P, J, *work).copy())
    solver.set_integrator("dop853", rtol=rtol, atol=rtol / 10, nsteps=10**9)
    solver.set_initial_value(np.concatenate([q0, L0]), 0.0)
    y = solver.integrate(t_end)
    if not solver.successful():
        raise RuntimeError(f"DOP853 failed at rtol {rtol:g}")
    return y[:4] / np.linalg.norm(y[:4])


def refine(p: Problem, method: str, budget: float) -> list[tuple[float, float]]:
    """Runs of ``method``, coarse to fine, whose last two bracket ``TARGET``: from its first
    ``dt``, halved until the error is below ``TARGET`` (or one run costs ``GIVE_UP`` times
    ``budget``, the cheapest CPU time to ``TARGET`` found so far), or doubled while the
    first run is below it already."""
    start = 4 if method == "rk4" else START_STEPS_PER_TURN[int(rigid.method_info(method).order)]

    def run(spt: float) -> tuple[float, float]:
        steps = max(1, round(p.t_end / p.turn * spt))
        bodies = min(1024, max(BODIES, -(-HORIZON_BODY_STEPS // steps)))
        cpu, err = tumble_point(p, method, spt, bodies)
        print(f"  {method} {spt:g} steps/turn: {err:.2e} rad in {cpu:.2e} s", flush=True)
        return cpu, err

    points = [run(start)]
    spt = float(start)
    while points[0][1] < TARGET and spt > MIN_STEPS_PER_TURN:
        spt /= 2
        points.insert(0, run(spt))
    spt = float(start)
    while not points[-1][1] < TARGET and points[-1][0] <= GIVE_UP * budget:
        spt *= 2
        if spt > MAX_STEPS_PER_TURN:
            break
        points.append(run(spt))
    return points


def crossover(horizons: list[float], ratios: list[float]) -> tuple[float, str]:
    """The horizon from which a method needs less CPU time than ``rk4`` at every longer
    horizon measured: log-log interpolation of the cost ratio between the last horizon
    where it is ``>= 1`` and the next; ``(nan, text)`` when it is outside the range. Horizons
    without a ratio (the method gave up, or did not reach ``TARGET``) are left out."""
    pairs = [(t, r) for t, r in zip(horizons, ratios, strict=True) if math.isfinite(r)]
    if not pairs:
        return math.nan, "-"
    last = max((i for i, (_, r) in enumerate(pairs) if r >= 1.0), default=-1)
    if last == -1:
        return math.nan, f"at or before t = {pairs[0][0]:g} (the shortest horizon measured)"
    if last == len(pairs) - 1:
        return math.nan, f"beyond t = {pairs[-1][0]:g} (the longest horizon with a ratio)"
    (t0, r0), (t1, r1) = pairs[last], pairs[last + 1]
    s = math.log(r0) / (math.log(r0) - math.log(r1))
    t = math.exp(math.log(t0) + s * math.log(t1 / t0))
    return t, f"t ≈ {t:.3g}"


def horizon_study(quick: bool, write: bool) -> None:
    """The heavy top at each of ``HORIZONS``: the CPU time per body that ``rk4`` and each
    geometric method need for ``TARGET`` rad, the best geometric method, their ratio and
    the crossover horizon; writes the ``pareto-heavy-top-horizons`` section and figure."""
    case = scenarios.torque_case("heavy-top")
    horizons = list(HORIZONS[:3] if quick else HORIZONS)
    rows, ratios = [], []
    costs: dict[str, list[float]] = {m: [] for m in HORIZON_METHODS}
    for t_end in horizons:
        t0 = time.process_time()
        refs = [ode_reference(case, t_end, r) for r in REFERENCE_RTOL]
        ref_cpu = time.process_time() - t0
        p = Problem(
            case.q0, case.omega0, case.inv_inertia, case.torque, t_end, case.period, q_ref=refs[0]
        )
        tolerance_gap = float(rotation.rotation_angle(refs[0], refs[1]))
        check_gap = tumble_point(p, CHECK_METHOD, CHECK_STEPS_PER_TURN)[1]
        print(
            f"t = {t_end:g}: DOP853 rtol {REFERENCE_RTOL[1]:g} vs {REFERENCE_RTOL[0]:g}: "
            f"{tolerance_gap:.1e} rad; {CHECK_METHOD} at {CHECK_STEPS_PER_TURN} steps/turn: "
            f"{check_gap:.1e} rad (references: {ref_cpu:.1f} s CPU)",
            flush=True,
        )
        budget = math.inf
        for m in HORIZON_METHODS:
            c = cost_at(refine(p, m, budget), TARGET)
            costs[m].append(c)
            if math.isfinite(c):
                budget = min(budget, c)
        geo = {m: costs[m][-1] for m in HORIZON_METHODS if m != "rk4"}
        best = min((m for m in geo if math.isfinite(geo[m])), key=geo.__getitem__, default=None)
        rk4 = costs["rk4"][-1]
        ratio = geo[best] / rk4 if best is not None and math.isfinite(rk4) else math.nan
        ratios.append(ratio)
        rows.append(
            [f"{t_end:g}", f"{t_end / case.period:.0f}", f"{tolerance_gap:.0e}",
             f"{check_gap:.0e}", "-" if math.isnan(rk4) else f"{rk4:.2e}",
             "-" if best is None else f"`{best}` {geo[best]:.2e}",
             "-" if math.isnan(ratio) else f"{ratio:.2f}"]
        )  # fmt: skip
    t_cross, where = crossover(horizons, ratios)
    method_header = ["method", *(f"t = {t:g}" for t in horizons), "cheaper than `rk4`"]
    per_method = [
        [f"`{m}`"]
        + [
            "-" if math.isnan(c) else f"{c:.2e} ({c / r:.2f})" if math.isfinite(r) else f"{c:.2e}"
            for c, r in zip(costs[m], costs["rk4"], strict=True)
        ]
        + [
            "-"
            if m == "rk4"
            else crossover(horizons, [c / r for c, r in zip(costs[m], costs["rk4"], strict=True)])[
                1
            ]
        ]
        for m in HORIZON_METHODS
    ]
    header = [
        "t", "spin turns", f"ref.: rtol {REFERENCE_RTOL[1]:g} vs {REFERENCE_RTOL[0]:g} (rad)",
        f"ref. vs `{CHECK_METHOD}` at {CHECK_STEPS_PER_TURN}/turn (rad)",
        f"`rk4`: CPU s for {TARGET:g}", "best geometric: CPU s", "best / rk4",
    ]  # fmt: skip
    text = (
        "### Error versus cost: the heavy top at several horizons (`tumble bench pareto "
        "--problems heavy-top-horizons`)\n\n"
        f'The heavy top of `scenarios.torque_case("heavy-top")` (a gravity torque, 12 rad/s '
        f"spin) run to each horizon `t`. For each method, `dt` is halved from a coarse value "
        f"until the attitude error at `t` is below {TARGET:g} rad; the CPU time per body for "
        f"{TARGET:g} rad is interpolated log-log between the two runs that bracket it "
        f"(`rigid.simulate`, one thread, {BODIES} to 1024 identical bodies, best of {REPEAT}; "
        f"runs over {LONG_STEPS} steps: one body, once). A method stops refining once a run "
        f"costs {GIVE_UP:g}x the cheapest time found. Geometric methods: "
        f"{', '.join(f'`{m}`' for m in HORIZON_METHODS if m != 'rk4')}. Reference: DOP853 "
        f"(Fortran, compiled right-hand side) at rtol {REFERENCE_RTOL[0]:g}; its error is "
        f"bounded by its distance from the solve at rtol {REFERENCE_RTOL[1]:g} and from the "
        f"independent `{CHECK_METHOD}` run. The machine is shared: CPU times move by ±30 %."
        f"\n\n{markdown_table(header, rows)}\n\n"
        f"CPU s per body for {TARGET:g} rad at each horizon, and its ratio to `rk4`'s ('-': "
        f"not reached within {MAX_STEPS_PER_TURN} steps per turn or before giving up):\n\n"
        f"{markdown_table(method_header, per_method)}\n\n"
        f"**Crossover**: the best geometric method needs less CPU time than `rk4` for "
        f"{TARGET:g} rad from {where} on.\n\n"
        "![heavy top, cost against horizon](docs/figures/pareto-heavy-top-horizons.png)"
    )
    print(text, flush=True)
    if write:
        FIGURES.mkdir(parents=True, exist_ok=True)
        plot_horizons(horizons, costs, (t_cross, where), FIGURES / "pareto-heavy-top-horizons.png")
        write_section("pareto-heavy-top-horizons", text)


def plot_horizons(
    horizons: list[float],
    costs: dict[str, list[float]],
    cross: tuple[float, str],
    path: Path,
) -> None:
    """Cost for ``TARGET`` against the horizon, one line per method, the best geometric
    method's in bold, and the crossover ``cross = (t, text)`` (:func:`crossover`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=90, layout="constrained")
    best = [
        min((c[i] for m, c in costs.items() if m != "rk4" and math.isfinite(c[i])), default=np.nan)
        for i in range(len(horizons))
    ]
    for m, c in costs.items():
        if m != "rk4" and any(math.isfinite(x) for x in c):
            ax.loglog(horizons, c, ":", marker=".", lw=0.8, label=m)
    ax.loglog(horizons, costs["rk4"], "-", marker="o", lw=2.2, color="black", label="rk4")
    ax.loglog(horizons, best, "-", marker="s", lw=2.2, color="tab:green",
              label="best geometric")  # fmt: skip
    t_cross, where = cross
    if math.isfinite(t_cross):
        ax.axvline(t_cross, color="grey", ls="--", lw=1)
    ax.text(0.98, 0.03, f"best geometric cheaper than rk4 from {where}", fontsize=8,
            ha="right", transform=ax.transAxes)  # fmt: skip
    ax.set_xlabel("horizon t (s)")
    ax.set_ylabel(f"CPU time per body for {TARGET:g} rad at t (s)")
    ax.set_title("heavy top: cost of 1e-6 rad against the horizon")
    ax.legend(fontsize=7, ncol=2)
    fig.savefig(path, format="png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench pareto", description=__doc__.split("\n")[0])
    parser.add_argument("--problems", default=",".join([*problems(), "heavy-top-horizons"]))
    parser.add_argument("--quick", action="store_true", help="three points per curve")
    parser.add_argument("--no-write", action="store_true", help="do not write files")
    args = parser.parse_args(argv)
    try:
        import mujoco  # noqa: F401
    except ImportError:
        has_mujoco = False
        print("MuJoCo is not installed (the bench extra): no MuJoCo curve")
    else:
        has_mujoco = True
    makers = problems()
    intro = (
        "Attitude error (rad) at the final time against CPU time per body (s). tumble: "
        f"`rigid.simulate` on {BODIES} identical bodies, one thread, best of {REPEAT} (runs "
        f"over {LONG_STEPS} steps: one body, once); SciPy DOP853 and MuJoCo RK4: one body. "
        "Each entry is error@CPU seconds; the last columns are the CPU time at which the "
        f"curve reaches {TARGET:g} rad (log-log interpolation) and its ratio to rk4's. The "
        "machine is shared: CPU times move by ±30 %."
    )
    for name in args.problems.split(","):
        if name == "heavy-top-horizons":
            horizon_study(args.quick, not args.no_write)
            continue
        p = makers[name]()
        curves = run_problem(name, p, has_mujoco, args.quick)
        rk4 = cost_at(curves["rk4"], TARGET)
        rows = []
        for label, pts in curves.items():
            c = cost_at(pts, TARGET)
            rows.append(
                [f"`{label}`", " ".join(f"{e:.1e}@{x:.2e}" for x, e in pts),
                 "-" if math.isnan(c) else f"{c:.2e}",
                 "-" if math.isnan(c) or math.isnan(rk4) else f"{c / rk4:.2f}"]
            )  # fmt: skip
        header = ["curve", "error@CPU s, coarse to fine", f"CPU s for {TARGET:g}", "/ rk4"]
        text = (
            f"### Error versus cost: {name} (t = {p.t_end:g}, `tumble bench pareto`)\n\n"
            f"{intro}\n\n{markdown_table(header, rows)}\n\n"
            f"![{name}](docs/figures/pareto-{name}.png)"
        )
        print(text, flush=True)
        if not args.no_write:
            FIGURES.mkdir(parents=True, exist_ok=True)
            plot(name, curves, FIGURES / f"pareto-{name}.png")
            write_section(f"pareto-{name}", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the compiled exact torque-free flow against one RK4 step, per body-step.

Three compiled loops over the same bodies, timed in the same run (one thread, best of
``REPEAT`` rounds of process CPU time, the contenders interleaved within each round):

- ``rk4``: ``tumble._kernels.rigid.step_rk4`` chained ``STEPS`` times per body, with the
  empty torque model (``tumble.torques.NO_TORQUE``), as ``rigid.simulate`` runs it;
- ``exact``: ``tumble._kernels.exact.prepare_scaled`` once per body, then
  ``evaluate_scaled`` at ``t = h, 2h, ...`` (how ``rigid.simulate`` runs the torque-free
  exact method: every record from the initial state, no error accumulated);
- ``free_flow``: ``free_flow(q, L, J, h)`` chained (prepare and evaluate at every step, as a
  splitting method that kicks the momentum between free flows must run it).

The same comparison one level up, as users run the methods: ``rigid.simulate`` with
``"rk4"`` and ``"exact"``, a record at every step (``every = 1``: the exact method costs
per record, not per step), the records' ``omega``, ``L``, ``L_body`` and energy included.

Bodies: random asymmetric bodies (``I`` uniform in [0.5, 5], both circulation regimes, so
both theta series), the issue's peer body ``I = (1, 2, 3)``, ``L_b = (1, 0.4, 0.2)``, and
bodies within 1e-10 of the separatrix (``m`` near 1). Also the public
``tumble.exact.torque_free`` per call at the sizes of ``docs/exact.md``.

Goal (issue 15): the exact step at most 2x the per-step cost of ``rk4``.

Usage: ``tumble bench exact [--no-write]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numba import njit

from _common import markdown_table, write_section
from tumble import exact, rigid, rotation
from tumble._kernels import exact as kexact
from tumble._kernels.dispatch import single_thread
from tumble._kernels.rigid import common as krigid_common
from tumble._kernels.rigid import rk4 as krigid_rk4
from tumble.torques import NO_TORQUE

STEPS = 200
FLOW_STEPS = 40
REPEAT = 5
H = 0.01
GOAL = 2.0


@njit
def body(q, L, J, b):
    """Body ``b``'s ``(q, L_b, J)`` as tuples."""
    return (
        (q[b, 0], q[b, 1], q[b, 2], q[b, 3]),
        (L[b, 0], L[b, 1], L[b, 2]),
        (J[b, 0], J[b, 1], J[b, 2]),
    )


@njit
def _rk4_loop(q, L, J, h, steps, out, model):
    for b in range(q.shape[0]):
        qb, Lb, Jb = body(q, L, J, b)
        Ib = krigid_common.pseudo_inverse(Jb)
        for s in range(steps):
            # The empty torque model has one (empty) parameter row, read as row 0.
            qb, Lb = krigid_rk4.step_rk4(qb, Lb, Jb, Ib, model, 0, s * h, h)
        out[b] = qb[0] + Lb[0]


def run_rk4(q, L, J, h, steps, out):
    """RK4 without torque (the empty model), as ``rigid.simulate`` runs it."""
    _rk4_loop(q, L, J, h, steps, out, NO_TORQUE.kernel_args(()))


@njit
def run_exact(q, L, J, h, steps, out):
    for b in range(q.shape[0]):
        qb, Lb, Jb = body(q, L, J, b)
        f, sc = kexact.prepare_scaled(qb, Lb, Jb)
        acc = 0.0
        for s in range(1, steps + 1):
            qb, Lb = kexact.evaluate_scaled(f, sc, s * h)
            acc += qb[0] + Lb[0]
        out[b] = acc


@njit
def run_free_flow(q, L, J, h, steps, out):
    for b in range(q.shape[0]):
        qb, Lb, Jb = body(q, L, J, b)
        for _ in range(steps):
            qb, Lb = kexact.free_flow(qb, Lb, Jb, h)
        out[b] = qb[0] + Lb[0]


def body_sets(rng: np.random.Generator, n: int) -> dict[str, tuple[np.ndarray, ...]]:
    """``(q, L_b, J)`` of ``n`` bodies per set."""
    q = rotation.random_quat((n,), rng)
    J = 1.0 / rng.uniform(0.5, 5.0, (n, 3))
    L = rng.normal(size=(n, 3))
    peer = (q, np.tile([1.0, 0.4, 0.2], (n, 1)), np.tile([1.0, 0.5, 1.0 / 3.0], (n, 1)))
    Js = np.sort(J, axis=-1)[:, ::-1]
    # L on the sphere with 2E = J2 |L|² (1 + 1e-10), sorted axes, L2 = 0.
    z2 = (1e-10 * Js[:, 1] + Js[:, 0] - Js[:, 1]) / (Js[:, 0] - Js[:, 2])
    Lsep = np.stack([np.sqrt(1.0 - z2), np.zeros(n), np.sqrt(z2)], axis=-1)
    return {
        "random asymmetric": (q, L, J),
        "peer body I = (1, 2, 3)": peer,
        "within 1e-10 of the separatrix": (q, Lsep, Js),
    }


def per_step_ns(bodies: tuple[np.ndarray, ...]) -> dict[str, float]:
    """ns per body-step of the three loops, best of REPEAT interleaved rounds."""
    q, L, J = bodies
    out = np.empty(q.shape[0])
    runs = {
        "rk4": (run_rk4, STEPS),
        "exact (prepare once)": (run_exact, STEPS),
        "free_flow (per step)": (run_free_flow, FLOW_STEPS),
    }
    for fn, _ in runs.values():
        fn(q, L, J, H, 2, out)  # compile / warm up
    best = dict.fromkeys(runs, math.inf)
    for _ in range(REPEAT):
        for name, (fn, steps) in runs.items():
            t0 = time.process_time()
            fn(q, L, J, H, steps, out)
            best[name] = min(best[name], (time.process_time() - t0) / (q.shape[0] * steps))
    return {k: v * 1e9 for k, v in best.items()}


def simulate_ns(bodies: tuple[np.ndarray, ...]) -> dict[str, float]:
    """ns per body-step of ``rigid.simulate`` with ``rk4`` and ``exact``, a record at every
    step, one thread, best of REPEAT interleaved rounds."""
    q, L, J = bodies
    w = rotation.quat_rotate(q, J * L)
    best = dict.fromkeys(("rk4", "exact"), math.inf)
    with single_thread():
        for name in best:
            rigid.simulate(q, w, J, H, 2, name)
        for _ in range(REPEAT):
            for name in best:
                t0 = time.process_time()
                rigid.simulate(q, w, J, H, STEPS, name)
                best[name] = min(best[name], (time.process_time() - t0) / (q.shape[0] * STEPS))
    return {k: v * 1e9 for k, v in best.items()}


def public_costs(rng: np.random.Generator) -> list[list[str]]:
    """Process CPU time per call of the public ``torque_free`` at the sizes of
    docs/exact.md, on one thread (wall time on the shared machine mostly measures the
    other jobs)."""
    rows = []
    for nb, nt in ((1, 1), (1, 1000), (1000, 1), (1000, 100), (100_000, 1)):
        q = rotation.random_quat((nb,), rng)
        w = rng.normal(size=(nb, 3))
        J = rng.uniform(0.2, 2.0, (nb, 3))
        t = np.linspace(0.0, 10.0, nt)
        with single_thread():
            exact.torque_free(q, w, J, t)
            best = math.inf
            for _ in range(REPEAT):
                t0 = time.process_time()
                exact.torque_free(q, w, J, t)
                best = min(best, time.process_time() - t0)
        rows.append(
            [f"{nb:,}", f"{nt:,}", f"{best * 1e3:.3g} ms", f"{best / (nb * nt) * 1e9:.0f} ns"]
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench exact", description=__doc__.split("\n")[0])
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(20261125)
    rows = []
    goal_lines = []
    method_rows = []
    for label, bodies in body_sets(rng, args.bodies).items():
        ns = per_step_ns(bodies)
        sim = simulate_ns(bodies)
        sim_ratio = sim["exact"] / sim["rk4"]
        method_rows.append([label, f"{sim['rk4']:.0f}", f"{sim['exact']:.0f}", f"{sim_ratio:.2f}"])
        ratio = ns["exact (prepare once)"] / ns["rk4"]
        flow_ratio = ns["free_flow (per step)"] / ns["rk4"]
        rows.append(
            [label, *(f"{v:.0f}" for v in ns.values()), f"{ratio:.2f}", f"{flow_ratio:.1f}"]
        )
        print(" | ".join(rows[-1]), flush=True)
        goal_lines.append(
            f"- {label}: exact / rk4 = {ratio:.2f} (goal <= {GOAL:g}: "
            f"{'met' if ratio <= GOAL else 'MISSED'}); in `rigid.simulate` {sim_ratio:.2f} "
            f"({'met' if sim_ratio <= GOAL else 'MISSED'}); free_flow per step / rk4 = "
            f"{flow_ratio:.1f}"
        )
    header = [
        "bodies",
        "rk4",
        "exact (prepare once)",
        "free_flow (per step)",
        "exact / rk4",
        "free_flow / rk4",
    ]
    public = public_costs(rng)
    body = (
        "### Exact torque-free flow versus one RK4 step (`tumble bench exact`)\n\n"
        f"ns per body-step (lower is better), {args.bodies:,} bodies, h = {H:g}, one thread, best "
        f"of {REPEAT} interleaved rounds of process CPU time. `rk4`: the `step_rk4` kernel "
        f"with the empty torque model, chained {STEPS} steps; `exact`: `prepare` once per "
        f"body, `evaluate` at {STEPS} times (the torque-free exact method); `free_flow`: "
        f"prepare and evaluate at every one of {FLOW_STEPS} chained steps (what a "
        "kick-flow-kick splitting needs).\n\n"
        + markdown_table(header, rows)
        + "\n\nThe same bodies in `rigid.simulate` (ns per body-step, a record at every step, "
        "one thread, best of 5 interleaved rounds of process CPU time):\n\n"
        + markdown_table(["bodies", "rk4", "exact", "exact / rk4"], method_rows)
        + "\n\n"
        + "\n".join(goal_lines)
        + "\n\nPublic `tumble.exact.torque_free` (validation, the compiled loop, output arrays), "
        "one thread, best of 5 calls in process CPU time:\n\n"
        + markdown_table(["bodies", "times", "per call", "per (body, time)"], public)
        + "\n\nThe machine is shared with other jobs; per-step numbers vary by ~20 % between runs."
    )
    print(body)
    if not args.no_write:
        write_section("exact", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

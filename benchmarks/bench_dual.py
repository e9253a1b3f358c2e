"""Benchmark: Jacobians of an R^3 -> R^3 vector field at many points.

The field is Lorenz-like with sin, cos and exp (``field`` below); every contender computes
the (N, 3, 3) Jacobian at the same N points:

- the analytic Jacobian written by hand in NumPy (the baseline: ratios are against it);
- tumble ``jacobian(field, x, batched=True)``: the field evaluated on duals with k = 3
  partials per element, in slices of ``DEFAULT_POINTS_PER_PASS`` points (the default);
- the same in one pass over all points (``points_per_pass=None``), to show what slicing
  buys;
- the same with NaN-safe partials turned off (``nan_safe(False)``), to measure what the
  default NaN-safety costs (issue 19 allowed it as the default below 5 %);
- the article's approach: n = 3 evaluations with one partial each
  (``directional_derivative`` along e_1, e_2, e_3);
- JAX ``jit(vmap(jacfwd(field)))`` when JAX is importable (an optional column; the project
  does not depend on JAX).

Each contender is timed with ``best_time`` in alternating rounds, keeping the best round,
because other jobs share the machine. The goal: the dual Jacobian at 10^5 points within 2x
of the analytic one. At that size the run also reports CPU time and minor page faults per
call: a single pass over 10^5 points needs ~21 MB at its peak; the drivers raise glibc
malloc's thresholds on their first evaluation so that this memory is reused rather than
handed back to the kernel and faulted in again after every call (``docs/dual.md``).

Usage: ``tumble bench dual [--sizes N [N ...]] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from _common import SIZES, best_time, fmt_time, markdown_table, write_section
from tumble.dual import DEFAULT_POINTS_PER_PASS, directional_derivative, jacobian, nan_safe

SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
GOAL_N = 100_000
GOAL_RATIO = 2.0


def field(x: Any) -> Any:
    """f(a, b, c) = (σ(b - a) + sin c, a(ρ - c) - b exp(-a²/10), a b cos c - β c)."""
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    return np.stack(
        [
            SIGMA * (b - a) + np.sin(c),
            a * (RHO - c) - b * np.exp(-a * a / 10),
            a * b * np.cos(c) - BETA * c,
        ],
        axis=-1,
    )


def analytic_jacobian(x: np.ndarray) -> np.ndarray:
    """The hand-derived Jacobian, shared subexpressions computed once."""
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    e = np.exp(-a * a / 10)
    s, co = np.sin(c), np.cos(c)
    J = np.empty((*x.shape[:-1], 3, 3))
    J[..., 0, 0] = -SIGMA
    J[..., 0, 1] = SIGMA
    J[..., 0, 2] = co
    J[..., 1, 0] = RHO - c + a * b * e / 5
    J[..., 1, 1] = -e
    J[..., 1, 2] = -a
    J[..., 2, 0] = b * co
    J[..., 2, 1] = a * co
    J[..., 2, 2] = -a * b * s - BETA
    return J


def dual_jacobian(x: np.ndarray) -> Any:
    return jacobian(field, x, batched=True)


def dual_nan_unsafe(x: np.ndarray) -> Any:
    with nan_safe(False):
        return jacobian(field, x, batched=True)


def dual_one_pass(x: np.ndarray) -> Any:
    return jacobian(field, x, batched=True, points_per_pass=None)


def separate_passes(x: np.ndarray) -> np.ndarray:
    """The article: one single-partial evaluation per input direction, n = 3 of them."""
    cols = [directional_derivative(field, x, e) for e in np.eye(3)]
    return np.stack(cols, axis=-1)


def jax_contender() -> tuple[Callable[[np.ndarray], Any] | None, str]:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, "JAX is not installed in this environment, so its column is skipped."
    jax.config.update("jax_enable_x64", True)

    def jfield(x: Any) -> Any:
        a, b, c = x[0], x[1], x[2]
        return jnp.stack(
            [
                SIGMA * (b - a) + jnp.sin(c),
                a * (RHO - c) - b * jnp.exp(-a * a / 10),
                a * b * jnp.cos(c) - BETA * c,
            ]
        )

    fn = jax.jit(jax.vmap(jax.jacfwd(jfield)))
    return (
        lambda x: fn(x).block_until_ready()
    ), f"JAX {jax.__version__}, float64, jit(vmap(jacfwd))."


def measure(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            best[name] = min(best[name], best_time(fn, min_time=0.1, repeat=3))
    return best


def cpu_and_faults(fn: Callable[[], Any], calls: int = 20) -> tuple[float, float]:
    """Best CPU seconds of one call (user + system, immune to waiting for a core) and the
    mean number of minor page faults per call, after two warm-up calls."""
    fn()
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    best = float("inf")
    for _ in range(calls):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls
    return best, faults


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench dual", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=sorted({*SIZES, GOAL_N}))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    load_start = os.getloadavg()[0]
    jax_fn, jax_note = jax_contender()
    rng = np.random.default_rng(5)
    header = [
        "N points",
        "analytic NumPy",
        f"dual, slices of {DEFAULT_POINTS_PER_PASS} points (k=3)",
        "ratio",
        "dual, NaN-safe off",
        "ratio",
        "dual, one pass over all points",
        "ratio",
        "3 single-partial passes",
        "ratio",
    ]
    if jax_fn is not None:
        header += ["JAX", "ratio"]
    contenders = (
        "dual",
        "unsafe",
        "one_pass",
        "separate",
        *(("jax",) if jax_fn is not None else ()),
    )
    rows = []
    goal_note = f"({GOAL_N:,} points not in this run: no verdict on the goal.)"
    for n in args.sizes:
        x = rng.normal(size=(n, 3))
        reference = analytic_jacobian(x)
        checked = (
            ("dual", dual_jacobian),
            ("unsafe", dual_nan_unsafe),
            ("one_pass", dual_one_pass),
            ("separate", separate_passes),
        )
        for name, fn in checked:
            err = np.max(np.abs(np.asarray(fn(x)) - reference))
            assert err < 1e-9 * max(1.0, np.max(np.abs(reference))), (name, n, err)
        fns: dict[str, Callable[[], Any]] = {
            "analytic": partial(analytic_jacobian, x),
            "dual": partial(dual_jacobian, x),
            "unsafe": partial(dual_nan_unsafe, x),
            "one_pass": partial(dual_one_pass, x),
            "separate": partial(separate_passes, x),
        }
        if jax_fn is not None:
            fns["jax"] = partial(jax_fn, x)
        t = measure(fns, args.rounds)
        row: list[object] = [f"{n:,}", fmt_time(t["analytic"])]
        for name in contenders:
            row += [fmt_time(t[name]), f"{t[name] / t['analytic']:.2f}x"]
        rows.append(row)
        print(" | ".join(str(c) for c in row), flush=True)
        if n == GOAL_N:
            goal_ratio = t["dual"] / t["analytic"]
            cpu: dict[str, tuple[float, float]] = dict.fromkeys(
                ("analytic", "dual", "unsafe", "one_pass"), (float("inf"), 0.0)
            )
            for _ in range(args.rounds):  # alternating, best of the rounds
                for k in cpu:
                    t_cpu, faults = cpu_and_faults(fns[k])
                    cpu[k] = (min(cpu[k][0], t_cpu), faults)
            cpu_ratio = cpu["dual"][0] / cpu["analytic"][0]
            nan_cost_wall = t["dual"] / t["unsafe"] - 1
            nan_cost_cpu = cpu["dual"][0] / cpu["unsafe"][0] - 1
            goal_note = (
                f"Goal (dual Jacobian at {GOAL_N:,} points within {GOAL_RATIO:g}x of the "
                f"analytic NumPy Jacobian): measured {goal_ratio:.2f}x in wall time (table), "
                f"{cpu_ratio:.2f}x in CPU time; "
                + ("met." if max(goal_ratio, cpu_ratio) <= GOAL_RATIO else "NOT met.")
                + f" Per call at {GOAL_N:,} points, best CPU time and minor page faults: "
                + "; ".join(
                    f"{label} {fmt_time(cpu[k][0])}, {cpu[k][1]:.0f} faults"
                    for k, label in (
                        ("analytic", "analytic"),
                        ("dual", "dual in slices"),
                        ("one_pass", "dual in one pass"),
                    )
                )
                + ". Page faults mean that freed memory was handed back to the kernel and "
                "faulted in again (docs/dual.md, 'Memory that is freed stays for reuse'). "
                f"NaN-safe partials (the default) cost {100 * nan_cost_wall:+.1f} % in wall "
                f"time and {100 * nan_cost_cpu:+.1f} % in CPU time against nan_safe(False) "
                f"(best of {args.rounds} alternating rounds; the allowance was 5 %)."
            )
    body = "\n\n".join(
        [
            "## Dual numbers: Jacobian of an R^3 -> R^3 field",
            "The Lorenz-like field `(σ(b-a) + sin c, a(ρ-c) - b exp(-a²/10), a b cos c - β c)` "
            "at N random points; every column computes the (N, 3, 3) Jacobian and ratios are "
            "against the hand-written analytic NumPy Jacobian. The dual columns evaluate the "
            "field itself on the way (its value comes for free) and return the Jacobian only.",
            markdown_table(header, rows),
            goal_note,
            jax_note,
            "Times are the best of alternating rounds: the machine was shared with other jobs "
            f"during the run (1-minute load average {load_start:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores), so expect noise "
            "of tens of percent in wall time; the CPU times do not count waiting for a core "
            "but still suffer from the shared caches.",
        ]
    )
    print(goal_note)
    write_section("dual", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One body at a time: ``rigid.step`` against SciPy's ``Rotation.apply``.

Game and robotics loops step one body per call. This suite measures, in one run,
``rigid.step`` on one body (float64 arrays, no torque and a gravity model) against SciPy's
``Rotation.apply`` on one vector as the yardstick of a cheap NumPy-level call (goal:
``rigid.step`` at most 5 µs, so at least as fast as ``Rotation.apply``'s 6.6 µs on a quiet
machine). The per-step overhead of a Python torque callable is measured by
``tumble bench torques``.

The machine is shared: absolute times move with its load, the ratios much less.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from scipy.spatial.transform import Rotation

from _common import best_time, fmt_time, markdown_table, write_section
from tumble import rigid, rotation, torques

GOAL_STEP = 5e-6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench single", description=__doc__.split("\n")[0])
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    args = parser.parse_args(argv)

    q = rotation.rotvec_to_quat([0.3, -0.2, 0.5])
    w = np.array([0.7, -1.1, 4.0])
    J = 1.0 / np.array([1.2, 1.2, 0.5])
    top = torques.gravity(1.0, [0.0, 0.0, -9.81], [0.0, 0.0, 0.4])
    R = Rotation.from_quat(q, scalar_first=True)
    v = np.array([1.0, 2.0, 3.0])

    rows = []
    t_scipy = best_time(lambda: R.apply(v))
    rows.append(["SciPy `Rotation.apply`, one vector", fmt_time(t_scipy), "1.00", ""])
    for method in ("momentum_first", "splitting", "rk4"):
        for label, model in (("no torque", None), ("gravity model", top)):
            t = best_time(lambda m=method, mo=model: rigid.step(q, w, J, 0.01, m, torque=mo))
            ok = "yes" if t <= GOAL_STEP else "no"
            rows.append(
                [f"`rigid.step` `{method}`, {label}", fmt_time(t), f"{t / t_scipy:.2f}", ok]
            )
    body = (
        "## One body at a time (`tumble bench single`)\n\n"
        "Time per call of `rigid.step` for one body (float64 arrays). Ratio: against SciPy's "
        "`Rotation.apply` on one vector, measured in the same run. Goal: 5 µs.\n\n"
        + markdown_table(["call", "time", "ratio to SciPy apply", "goal met"], rows)
        + "\n\nLoad average during the run (1, 5, 15 min): "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg())
        + f" on {os.cpu_count()} cores."
    )
    print(body)
    if not args.no_write:
        write_section("single", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

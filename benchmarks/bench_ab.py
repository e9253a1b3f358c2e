"""Steady-state speed against an earlier commit, measured alternately in one run.

A change to how the kernels are built (issue 26: one compiled loop per method, helpers
without Python's wrappers, LLVM inlining in place of numba's) must not cost speed once the
kernels are compiled. This suite checks out ``--against`` (default: the commit before that
work) into a temporary folder and times the same probes on it and on the current sources,
each in its own process with its own warm numba cache, alternating old and new round by
round so that the machine's load weighs on both alike. Goal: every probe within 5 % of the
old time (ratio new/old at most 1.05).

The probes cover the suites whose tables the change could move: ``rigid`` (per body-step
cost of the integrators over a block of bodies), ``torques`` (the same with a model),
``exact`` (the exact solution), ``single`` (one body per ``rigid.step``) and ``rotation``
(the flat loops). All run on one thread (``single_thread``), best of several repeats per
process, best over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from _common import machine_line, markdown_table, write_section

#: The last commit before issue 26 reshaped the kernels.
BEFORE_ISSUE_26 = "b4f14a9"
GOAL_RATIO = 1.05
REPO = Path(__file__).resolve().parents[1]

#: Run in a fresh process with one tree's ``src`` first on the path; prints
#: ``{probe: seconds}`` as JSON. Units: per body-step, per evaluation, per call, per element.
PROBES = r"""
import json, sys, time
import numpy as np
from tumble import exact, rigid, torques
import tumble.rotation as tr
from tumble._kernels.dispatch import single_thread

def best(fn, units, repeat=7):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) / units

rng = np.random.default_rng(7)
N, S = 2048, 200
q = rng.normal(size=(N, 4))
w = rng.normal(size=(N, 3))
J = 1.0 / rng.uniform(1.0, 3.0, size=(N, 3))
gravity = torques.gravity(1.0, [0.0, 0.0, -9.81], [0.0, 0.0, 0.1])
damping = torques.damping(0.05)
out = {}
with single_thread():
    for m in ("momentum_first", "jolt", "splitting", "symmetric_top_split", "rk4",
              "splitting:suzuki4", "symmetric_top_split:kahanli6"):
        out[f"rigid: simulate {m}"] = best(
            lambda: rigid.simulate(q, w, J, 0.01, S, m, every=S), N * S)
    for m, model, name in (("momentum_first", gravity, "gravity"),
                           ("splitting", gravity, "gravity"), ("rk4", damping, "damping")):
        out[f"torques: simulate {m}, {name}"] = best(
            lambda: rigid.simulate(q, w, J, 0.01, S, m, model, every=S), N * S)
    t = np.linspace(0.0, 50.0, 64)
    out["exact: torque_free, 256 bodies x 64 times"] = best(
        lambda: exact.torque_free(q[:256], w[:256], J[:256], t), 256 * 64)
    q1, w1, J1 = q[0] / np.linalg.norm(q[0]), w[0].copy(), J[0].copy()
    for m, model in (("momentum_first", None), ("splitting", None), ("rk4", None),
                     ("momentum_first", gravity)):
        def one(m=m, model=model):
            for _ in range(2000):
                rigid.step(q1, w1, J1, 0.01, m, model)
        out[f"single: rigid.step {m}{', gravity' if model else ''}"] = best(one, 2000)
    M = 200_000
    qs = tr.quat_normalize(rng.normal(size=(M, 4)))
    vs = rng.normal(size=(M, 3))
    ps = tr.quat_normalize(rng.normal(size=(M, 4)))
    out["rotation: quat_rotate"] = best(lambda: tr.quat_rotate(qs, vs), M)
    out["rotation: quat_multiply"] = best(lambda: tr.quat_multiply(ps, qs), M)
    out["rotation: quat_to_matrix"] = best(lambda: tr.quat_to_matrix(qs), M)
print(json.dumps(out))
"""


def _export(ref: str, folder: Path) -> Path:
    """``ref``'s ``src`` folder, written under ``folder``."""
    folder.mkdir(parents=True)
    archive = folder / "src.tar"
    subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), ref, "src"],
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "tree", filter="data")
    return folder / "tree" / "src"


def _run(src: Path, cache: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(cache))
    done = subprocess.run(
        [sys.executable, "-c", PROBES], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _unit(probe: str) -> tuple[float, str]:
    if probe.startswith("single"):
        return 1e6, "µs"
    return 1e9, "ns"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=BEFORE_ISSUE_26, help="git revision to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = {"old": _export(args.against, folder / "old"), "new": REPO / "src"}
        caches = {name: folder / f"cache-{name}" for name in trees}
        for name in trees:  # compile both, untimed
            _run(trees[name], caches[name])
        results: dict[str, dict[str, float]] = {"old": {}, "new": {}}
        for r in range(args.rounds):
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                for probe, seconds in _run(trees[name], caches[name]).items():
                    results[name][probe] = min(seconds, results[name].get(probe, seconds))
                print(f"round {r + 1}/{args.rounds}: {name} done", file=sys.stderr)
    rows = []
    worst = 0.0
    for probe, old in results["old"].items():
        new = results["new"][probe]
        scale, unit = _unit(probe)
        ratio = new / old
        worst = max(worst, ratio)
        rows.append(
            [
                probe,
                f"{old * scale:.1f} {unit}",
                f"{new * scale:.1f} {unit}",
                f"{ratio:.3f}",
                "yes" if ratio <= GOAL_RATIO else "NO",
            ]
        )
    table = markdown_table(["probe", f"old ({args.against})", "new", "new/old", "within 5 %"], rows)
    load_after = os.getloadavg()
    body = (
        "## Steady state against the code before issue 26 (`tumble bench ab`)\n\n"
        f"Each probe timed on `{args.against}` (old) and on the current sources (new), each in "
        "its own process with a warm numba cache, one thread, best of 7 repeats per process "
        f"and best over {args.rounds} rounds that alternate old and new. Per body-step "
        "(simulate), per evaluation (exact), per call (single) or per element (rotation). "
        f"Goal: new/old at most {GOAL_RATIO}.\n\n"
        f"{table}\n\nWorst ratio: {worst:.3f}. Load average (1 min) {load_before[0]:.1f} at the "
        f"start, {load_after[0]:.1f} at the end, on {os.cpu_count()} cores.\n"
    )
    # write_section adds the machine's line under the body.
    print(body, machine_line(), sep="\n")
    if not args.no_write:
        write_section("ab", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

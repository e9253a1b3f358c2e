"""Hierarchy.globals(): every node's global dynamic at once, against two peers.

Peers, measured in the same run on the same random trees (3-D, depth 30):

* a plain per-node Python loop over ``DynamicTransform`` composition in breadth order
  (``g[i] = g[parent[i]] * local[i]``): what one writes without the batched kernels;
* pytransform3d's ``TransformManager`` for the pose part alone (4x4 matrices, no
  velocities): ``get_transform(node, "world")`` for every node.

Usage: ``tumble bench hierarchy [--max-size N] [--no-write]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from _common import best_time, fmt_time, markdown_table, threads, write_section
from tumble.hierarchy import Hierarchy
from tumble.transform import DynamicTransform

SIZES = (1, 10, 1_000, 10_000, 100_000, 1_000_000)
DEPTH = 30
#: The per-node loop is timed directly up to here and extrapolated linearly beyond.
LOOP_MEASURED_MAX = 100_000
#: pytransform3d keeps an all-pairs shortest-path matrix (N x N float64), so it cannot
#: hold much bigger trees on this machine.
PT3D_MAX = 2_000


def random_tree(N: int, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Parents and local dynamics of a random N-node 3-D tree of depth min(N, 30).

    Level ``d`` holds about ``(d + 1)`` shares of the nodes; each node's parent is drawn
    uniformly from the previous level, so parents always precede children.
    """
    depth = min(N, DEPTH)
    weights = np.arange(1, depth + 1, dtype=float)
    sizes = np.maximum(1, np.floor(weights / weights.sum() * N).astype(int))
    sizes[-1] += N - sizes.sum()
    if sizes[-1] < 1:
        sizes = np.ones(N, int)
    parent = np.empty(N, np.int64)
    start = 0
    prev = np.array([-1])
    for s in sizes:
        here = np.arange(start, start + s)
        parent[here] = prev[rng.integers(0, prev.size, s)] if prev[0] >= 0 else -1
        prev, start = here, start + s
    q = rng.standard_normal((N, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    R = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
    data = {
        "translation": rng.normal(size=(N, 3)),
        "rotation": R,
        "scale": rng.uniform(0.9, 1.1, N),
        "velocity": rng.normal(size=(N, 3)) * 0.1,
        "acceleration": rng.normal(size=(N, 3)) * 0.1,
        "angular_velocity": rng.normal(size=(N, 3)) * 0.1,
        "angular_acceleration": rng.normal(size=(N, 3)) * 0.1,
    }
    return parent, data


def python_loop(h: Hierarchy, parent: np.ndarray) -> Callable[[], list[DynamicTransform]]:
    """The per-node peer: compose in id order (parents precede children in these trees)."""
    locals_ = [h.local(i) for i in range(parent.size)]

    def run() -> list[DynamicTransform]:
        g: list[DynamicTransform] = []
        for i, p in enumerate(parent):
            g.append(locals_[i] if p < 0 else g[p] * locals_[i])
        return g

    return run


def pytransform3d_globals(parent: np.ndarray, data: dict[str, np.ndarray]) -> Callable[[], list]:
    """A TransformManager holding the poses, and a function querying every node's pose."""
    from pytransform3d.transform_manager import TransformManager

    tm = TransformManager(strict_check=False, check=False)
    # TransformManager recomputes all-pairs shortest paths after every add; do it once.
    recompute = tm._recompute_shortest_path
    tm._recompute_shortest_path = lambda: None  # type: ignore[method-assign]
    for i, p in enumerate(parent):
        A = np.eye(4)
        A[:3, :3] = data["rotation"][i]
        A[:3, 3] = data["translation"][i]
        tm.add_transform(f"n{i}", "world" if p < 0 else f"n{p}", A)
    tm._recompute_shortest_path = recompute  # type: ignore[method-assign]
    tm._recompute_shortest_path()
    names = [f"n{i}" for i in range(parent.size)]

    def run() -> list[np.ndarray]:
        return [tm.get_transform(name, "world") for name in names]

    return run


def _ratio(r: float) -> str:
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2g}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench hierarchy", description=__doc__)
    parser.add_argument("--max-size", type=int, default=SIZES[-1])
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(20261121)
    rows: list[list[object]] = []
    per_node_loop = float("nan")
    for N in (s for s in SIZES if s <= args.max_size):
        parent, data = random_tree(N, rng)
        h = Hierarchy(3)
        h.add_many(parent, **data)
        t_tumble = best_time(h.globals, min_time=0.5)
        with threads(2):
            t_par = best_time(partial(h.globals, parallel=True), min_time=0.5)
        loop = python_loop(h, parent)
        if N <= 10_000:
            t_loop, loop_note = best_time(loop, min_time=0.5, repeat=3), ""
        elif N <= LOOP_MEASURED_MAX:
            start = time.perf_counter()
            loop()
            t_loop, loop_note = time.perf_counter() - start, " (1 run)"
        else:
            t_loop, loop_note = per_node_loop * N, " (extrapolated)"
        per_node_loop = t_loop / N
        # sanity: the peers and tumble agree on the last node's pose
        G = h.globals()
        last = loop()[-1] if N <= LOOP_MEASURED_MAX else None
        if last is not None:
            assert np.allclose(G.translation[-1], last.transform.translation, atol=1e-9)
            assert np.allclose(G.acceleration[-1], last.acceleration, atol=1e-9)
        if N <= PT3D_MAX:
            pt = pytransform3d_globals(parent, data)
            t_pt = best_time(pt, min_time=0.5, repeat=3)
            # poses only: compare rotations, which the scales leave alone
            assert np.allclose(pt()[-1][:3, :3], G.rotation[-1], atol=1e-9)
            pt_cells = [fmt_time(t_pt), _ratio(t_pt / t_tumble)]
        else:
            pt_cells = ["n/a (N x N path matrix)", "-"]
        rows.append(
            [
                f"{N:,}",
                fmt_time(t_tumble),
                fmt_time(t_par),
                fmt_time(t_loop) + loop_note,
                _ratio(t_loop / t_tumble),
                *pt_cells,
            ]
        )
        print(" | ".join(map(str, rows[-1])), flush=True)
    table = markdown_table(
        [
            "nodes",
            "tumble globals()",
            "parallel=True, 2 threads",
            "per-node Python loop",
            "loop / tumble",
            "pytransform3d (poses only)",
            "pt3d / tumble",
        ],
        rows,
    )
    body = (
        "### Hierarchy: `globals()` (3-D, depth up to 30)\n\n"
        "Every node's global pose, velocity, acceleration, angular velocity and angular "
        "acceleration, composed level by level in one compiled kernel (default: one thread; "
        "the `parallel=True` column splits each level over 2 threads), against a per-node "
        "Python loop of "
        "`DynamicTransform` compositions in breadth order and against pytransform3d's "
        "`TransformManager.get_transform(node, 'world')` for every node (poses only; its "
        "all-pairs shortest-path matrix is built once, outside the timing, and limits it "
        f"to about {PT3D_MAX:,} nodes). The per-node loop is timed once at 100,000 nodes "
        "and extrapolated linearly at 1,000,000. The machine was shared with other "
        "helpers' jobs while this ran, so absolute times are noisy; ratios come from the "
        "same run.\n\n" + table
    )
    if not args.no_write:
        write_section("hierarchy", body)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

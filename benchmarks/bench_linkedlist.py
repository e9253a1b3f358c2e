"""ContiguousList against node-per-element lists: the article's section 3, in Python.

Run with ``tumble bench linkedlist [--quick] [--no-write]``.

Compiled part (the article's own experiment). The same numba loop walks two layouts:

- *contiguous*: a real :class:`~tumble.linkedlist.ContiguousList` built through its public
  API with the creation strategy (back, mid, random); its compact ``(prev, next)`` node
  array (uint32 at 10^6 elements) is walked, and the values sit in a separate dense array
  of ``k``-byte items, the layout of ``dtype='S{k}'``;
- *node-per-element*: each node is a separate heap chunk ``[malloc header | prev | next |
  value]`` of ``align16(16 + k + 8)`` bytes, as ``std::list`` gets from glibc. A *fresh
  heap* places chunks in allocation order (what the article measured); an *aged heap*
  scatters them at random addresses, as after long use.

Pure traversal follows ``next`` n times; accumulate also reads each value's first word;
sorted insertion does ``std::lower_bound`` by advancing (pure traversal), then inserts,
and is compared with a vector that shifts the tail.

Python part: a ``for`` loop, ``sum`` and sorted insertion at the Python level against
``list``, ``collections.deque``, ``llist.dllist``, ``sortedcontainers.SortedList`` and
``bisect.insort``.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import functools
import gc
import time
from collections.abc import Callable

import numba
import numpy as np

from _common import best_time, fmt_time, markdown_table, write_section
from tumble.linkedlist import ContiguousList
from tumble.linkedlist.cursor import lower_bound_by_cursor

VALUE_SIZES = (1, 8, 16, 32, 64, 128, 1024)
STRATEGIES = ("back", "mid", "random")
# "shuffled": a uniformly random list order, elements allocated in an unrelated order
# (each inserted before its list successor): the Python-level reading of "linked in
# random order", where neither layout gets sequential memory access.
PY_STRATEGIES = (*STRATEGIES, "shuffled")
# The article's "large list improvement" tables (std::list time / cw::list time): two
# factors per value size, the low and high end across its creation strategies.
ARTICLE_TRAVERSAL = {1: (1.6, 3.2), 8: (1.6, 3.2), 16: (2.3, 4.5), 32: (3.2, 7.5),
                     64: (4.75, 14.0), 128: (15.0, 20.0), 1024: (25.0, 40.0)}  # fmt: skip
ARTICLE_ACCUMULATE = {1: (1.2, 1.8), 8: (1.2, 1.8), 16: (1.8, 2.25), 32: (1.7, 2.15),
                      64: (1.45, 2.8), 128: (1.9, 3.9), 1024: (3.6, 6.2)}  # fmt: skip
SEED = 20261121


# --------------------------------------------------------------------- compiled kernels
# Benchmark-only loops (not library code): one source walks both layouts, so the only
# difference measured is the memory layout.


@numba.njit(cache=True)
def walk(links, start, stride, off, n):
    """Follow ``n`` next-links; a node's next lives at ``links[pos * stride + off]``."""
    pos = np.int64(start)
    for _ in range(n):
        pos = np.int64(links[pos * stride + off])
    return pos


@numba.njit(cache=True)
def accumulate(links, start, stride, off, vals, vstride, voff, vshift, n):
    """Walk as :func:`walk`, summing the value word ``vals[(pos + vshift) * vstride + voff]``."""
    pos = np.int64(start)
    acc = np.int64(0)
    for _ in range(n):
        acc += np.int64(vals[(pos + vshift) * vstride + voff])
        pos = np.int64(links[pos * stride + off])
    return acc


@numba.njit(cache=True)
def sorted_insert_contiguous(src, nodes, vals):
    """Insert the rows of ``src`` (key = first word) keeping order; ContiguousList layout."""
    n, w = src.shape
    nodes[0, 0] = 0
    nodes[0, 1] = 0
    for size in range(n):
        x = src[size, 0]
        first = np.int64(nodes[0, 1])
        count = size
        while count > 0:
            step = count // 2
            it = first
            for _ in range(step):
                it = np.int64(nodes[it, 1])
            if vals[it - 1, 0] < x:
                first = np.int64(nodes[it, 1])
                count -= step + 1
            else:
                count = step
        slot = size + 1
        for j in range(w):
            vals[slot - 1, j] = src[size, j]
        prev = np.int64(nodes[first, 0])
        nodes[slot, 0] = prev
        nodes[slot, 1] = first
        nodes[prev, 1] = slot
        nodes[first, 0] = slot
    return np.int64(nodes[0, 1])


@numba.njit(cache=True)
def sorted_insert_nodes(src, arena):
    """The same on node-per-element chunks ``[header, prev, next, value...]`` (fresh heap)."""
    n, w = src.shape
    arena[0, 1] = 0
    arena[0, 2] = 0
    for size in range(n):
        x = src[size, 0]
        first = arena[0, 2]
        count = size
        while count > 0:
            step = count // 2
            it = first
            for _ in range(step):
                it = arena[it, 2]
            if arena[it, 3] < x:
                first = arena[it, 2]
                count -= step + 1
            else:
                count = step
        node = size + 1
        for j in range(w):
            arena[node, 3 + j] = src[size, j]
        prev = arena[first, 1]
        arena[node, 1] = prev
        arena[node, 2] = first
        arena[prev, 2] = node
        arena[first, 1] = node
    return arena[0, 2]


@numba.njit(cache=True)
def sorted_insert_vector(src, vals):
    """The same on a vector of rows: binary search by index, then shift the tail one row."""
    n, w = src.shape
    flat = vals.reshape(-1)
    for size in range(n):
        x = src[size, 0]
        lo = 0
        hi = size
        while lo < hi:
            mid = (lo + hi) // 2
            if flat[mid * w] < x:
                lo = mid + 1
            else:
                hi = mid
        for j in range(size * w - 1, lo * w - 1, -1):
            flat[j + w] = flat[j]
        for j in range(w):
            flat[lo * w + j] = src[size, j]
    return flat[0]


# ------------------------------------------------------------------------- list building


def build(strategy: str, values: list[int], dtype: str | None = "int64") -> ContiguousList:
    """A ContiguousList made by the article's creation strategy, through the public API."""
    cl = ContiguousList(dtype=dtype)
    if strategy == "shuffled":
        _insert_shuffled(values, cl.end(), cl.insert, lambda c, v: cl.insert(c, v))
    elif strategy == "back":
        cl.extend(values)
    elif strategy == "random":
        coin = np.random.default_rng(SEED).random(len(values)) < 0.5
        append, appendleft = cl.append, cl.appendleft
        for v, back in zip(values, coin.tolist(), strict=True):
            (append if back else appendleft)(v)
    else:
        # Insert before the middle element; the cursor follows the middle as the list grows.
        mid = cl.end()
        for v in values:
            c = cl.insert(mid, v)
            if len(cl) % 2 == 1:
                mid = c
    return cl


def build_dllist(strategy: str, values: list[int]):
    """An llist.dllist made by the same strategy (its nodes allocated in creation order)."""
    import llist

    d = llist.dllist()
    if strategy == "shuffled":
        _insert_shuffled(values, None, lambda _, v: d.append(v), lambda n, v: d.insert(v, n))
    elif strategy == "back":
        for v in values:
            d.append(v)
    elif strategy == "random":
        coin = np.random.default_rng(SEED).random(len(values)) < 0.5
        for v, back in zip(values, coin.tolist(), strict=True):
            (d.append if back else d.appendleft)(v)
    else:
        mid = None
        for v in values:
            node = d.append(v) if mid is None else d.insert(v, mid)
            if len(d) % 2 == 1:
                mid = node
    return d


def _insert_shuffled(values: list[int], end, append, insert_before) -> None:
    """Insert values in the given (allocation) order so that the list order is a random
    permutation: each value goes before the nearest already-present list successor."""
    from sortedcontainers import SortedList

    rank = np.random.default_rng(SEED).permutation(len(values)).tolist()
    present = SortedList()
    handle = {}
    for v, r in zip(values, rank, strict=True):
        j = present.bisect_right(r)
        handle[r] = append(end, v) if j == len(present) else insert_before(handle[present[j]], v)
        present.add(r)


def node_words(k: int) -> int:
    """Words (8 bytes) of a glibc chunk holding a std::list node with a k-byte value."""
    return -(-(16 + k + 8) // 16) * 2


def node_arena(order: np.ndarray, keys: np.ndarray, k: int, aged: bool) -> tuple[np.ndarray, int]:
    """Node-per-element list in list order ``order`` (storage = allocation indices).

    Returns the flat int64 arena and the first node's index. Fresh heap: element i's chunk
    is chunk i; aged heap: chunks at a random permutation of positions.
    """
    n = order.shape[0]
    w = node_words(k)
    where = np.random.default_rng(SEED).permutation(n) if aged else np.arange(n)
    arena = np.zeros(n * w, np.int64)
    pos = where[order]  # chunk index of the i-th element in list order
    arena[pos * w + 1] = np.roll(pos, 1)
    arena[pos * w + 2] = np.roll(pos, -1)
    arena[where * w + 3] = keys
    return arena, int(pos[0])


def contiguous_values(keys: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """The dense value array of a dtype of ``k`` bytes, as a flat array and its word stride."""
    if k < 8:
        return keys.astype(np.dtype(f"u{k}")), 1
    vals = np.zeros((keys.shape[0], k // 8), np.uint64)
    vals[:, 0] = keys
    return vals.reshape(-1), k // 8


# --------------------------------------------------------------------------------- timing


def paired(
    fa: Callable[[], object], fb: Callable[[], object], rounds: int = 3
) -> tuple[float, float]:
    """Best times of ``fa`` and ``fb`` measured in alternating rounds (shared machine)."""
    ta = tb = float("inf")
    for _ in range(rounds):
        ta = min(ta, best_time(fa, min_time=0.1, repeat=3))
        tb = min(tb, best_time(fb, min_time=0.1, repeat=3))
    return ta, tb


def once(fn: Callable[[], object], rounds: int = 3) -> float:
    """Best of ``rounds`` single runs (for runs too long to repeat many times)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# ----------------------------------------------------------------------- compiled suites


def compiled_traversal(n: int, sizes: tuple[int, ...]) -> dict:
    """Node-per-element time / contiguous time, per strategy and value size, at size ``n``."""
    rng = np.random.default_rng(SEED)
    keys = rng.integers(0, 1 << 20, n)
    out: dict = {"walk": {}, "acc": {}, "build": {}}
    for strategy in STRATEGIES:
        start = time.perf_counter()
        cl = build(strategy, keys.tolist())
        out["build"][strategy] = time.perf_counter() - start
        order = cl.order()
        links = cl._nodes.reshape(-1)
        head = int(order[0]) + 1
        cw_walk = functools.partial(walk, links, head, 2, 1, n)
        for k in sizes:
            kk = keys & ((1 << (8 * k)) - 1) if k < 8 else keys
            vals, vstride = contiguous_values(kk, k)
            expected = int(kk.sum())
            cw_acc = functools.partial(accumulate, links, head, 2, 1, vals, vstride, 0, -1, n)
            assert cw_acc() == expected
            for aged in (False, True) if strategy == "back" else (False,):
                arena, first = node_arena(order, kk, k, aged)
                w = node_words(k)
                node_walk = functools.partial(walk, arena, first, w, 2, n)
                node_acc = functools.partial(accumulate, arena, first, w, 2, arena, w, 3, 0, n)
                assert node_acc() == expected
                label = "aged" if aged else strategy
                t_cw, t_node = paired(cw_walk, node_walk)
                out["walk"][label, k] = (t_cw, t_node)
                t_cw, t_node = paired(cw_acc, node_acc)
                out["acc"][label, k] = (t_cw, t_node)
        gc.collect()
    return out


def compiled_by_size(sizes_n: tuple[int, ...], k: int) -> dict:
    """Traversal factor of the random strategy by list size, for ``k``-byte values."""
    out = {}
    for n in sizes_n:
        keys = np.random.default_rng(SEED).integers(0, 1 << 20, n)
        cl = build("random", keys.tolist())
        order = cl.order()
        links = cl._nodes.reshape(-1)
        head = int(order[0]) + 1
        arena, first = node_arena(order, keys, k, False)
        w = node_words(k)
        out[n] = paired(
            functools.partial(walk, links, head, 2, 1, n),
            functools.partial(walk, arena, first, w, 2, n),
        )
    return out


def _keys_in_order(links: np.ndarray, col: int, keys: np.ndarray, shift: int, n: int):
    """Keys front to back of a list with a sentinel at row 0 (a check, in plain Python)."""
    out, pos = [], int(links[0, col])
    for _ in range(n):
        out.append(keys[pos + shift])
        pos = int(links[pos, col])
    assert pos == 0
    return np.array(out)


def compiled_sorted(sizes_n: tuple[int, ...], sizes_k: tuple[int, ...]) -> dict:
    """Sorted insertion of n random values: contiguous, node-per-element and vector times."""
    out = {}
    for n in sizes_n:
        for k in sizes_k:
            w = k // 8
            src = np.zeros((n, w), np.int64)
            src[:, 0] = np.random.default_rng(SEED).integers(0, 1 << 40, n)
            nodes = np.zeros((n + 1, 2), np.uint16 if n < 65535 else np.uint32)
            vals = np.zeros((n, w), np.int64)
            arena = np.zeros((n + 1, node_words(k)), np.int64)
            vec = np.zeros((n, w), np.int64)
            t_cw = once(functools.partial(sorted_insert_contiguous, src, nodes, vals), 2)
            t_node = once(functools.partial(sorted_insert_nodes, src, arena), 2)
            t_vec = once(functools.partial(sorted_insert_vector, src, vec), 2)
            expected = np.sort(src[:, 0])
            assert np.array_equal(vec[:, 0], expected)
            assert np.array_equal(_keys_in_order(nodes, 1, vals[:, 0], -1, n), expected)
            assert np.array_equal(_keys_in_order(arena, 2, arena[:, 3], 0, n), expected)
            out[n, k] = (t_cw, t_node, t_vec)
    return out


# -------------------------------------------------------------------------- Python suites


def _loop(seq) -> Callable[[], None]:
    def run() -> None:
        for _ in seq:
            pass

    return run


def interleaved(fns: dict[str, Callable[[], object]], rounds: int = 5) -> dict[str, float]:
    """Best time of each function over ``rounds`` rounds that visit every function once.

    Memory-bound loops are very sensitive to other jobs on a shared machine; visiting all
    peers in each round spreads that noise over all of them instead of one.
    """
    best = dict.fromkeys(fns, float("inf"))
    number = {}
    for name, fn in fns.items():
        start = time.perf_counter()
        fn()  # warm-up, and the call count that makes one measurement last ~20 ms
        number[name] = max(1, int(0.02 / max(time.perf_counter() - start, 1e-6)))
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(number[name]):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number[name])
    return best


def python_level(n: int) -> dict:
    """For loop, order() and sum() over int64 values, per creation strategy."""
    keys = np.random.default_rng(SEED).integers(0, 1 << 40, n).tolist()
    res: dict = {}
    for strategy in PY_STRATEGIES:
        cl = build(strategy, keys)
        d = build_dllist(strategy, keys)
        ordered = cl.tolist()
        assert ordered == list(d)
        lst = list(ordered)
        dq = collections.deque(ordered)

        fns = {
            "loop ContiguousList": _loop(cl),
            "loop dllist": _loop(d),
            "loop list": _loop(lst),
            "loop deque": _loop(dq),
            "order()": cl.order,
            "ContiguousList.sum()": cl.sum,
            "sum(dllist)": functools.partial(sum, d),
            "sum(ContiguousList)": functools.partial(sum, cl),
            "sum(list)": functools.partial(sum, lst),
            "sum(deque)": functools.partial(sum, dq),
        }
        if strategy in ("random", "shuffled"):
            fns["loop ContiguousList (objects)"] = _loop(build(strategy, keys, dtype=None))
        r = interleaved(fns)
        res[strategy] = r
        gc.collect()
    return res


def cl_sorted_insert(values: list[int]) -> ContiguousList:
    cl = ContiguousList(dtype="int64")
    for x in values:
        cl.insert(lower_bound_by_cursor(cl.begin(), len(cl), x), x)
    return cl


def cl_lower_bound_insert(values: list[int]) -> ContiguousList:
    cl = ContiguousList(dtype="int64")
    for x in values:
        cl.insert(cl.lower_bound(x), x)
    return cl


def dllist_sorted_insert(values: list[int]):
    import llist

    d = llist.dllist()
    for x in values:
        lo, hi = 0, len(d)
        while lo < hi:
            mid = (lo + hi) // 2
            if d.nodeat(mid).value < x:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(d):
            d.append(x)
        else:
            d.insert(x, d.nodeat(lo))
    return d


def list_insort(values: list[int]) -> list[int]:
    out: list[int] = []
    for x in values:
        bisect.insort(out, x)
    return out


def deque_insort(values: list[int]) -> collections.deque:
    dq: collections.deque = collections.deque()
    for x in values:
        dq.insert(bisect.bisect_left(dq, x), x)
    return dq


def sortedlist_add(values: list[int]):
    from sortedcontainers import SortedList

    sl = SortedList()
    for x in values:
        sl.add(x)
    return sl


def python_sorted(sizes_n: tuple[int, ...]) -> dict:
    peers = {
        "ContiguousList (cursor binary search in Python)": cl_sorted_insert,
        "ContiguousList.lower_bound (compiled)": cl_lower_bound_insert,
        "llist.dllist (nodeat binary search)": dllist_sorted_insert,
        "list + bisect.insort": list_insort,
        "deque + bisect": deque_insort,
        "SortedList.add": sortedlist_add,
    }
    out = {}
    for n in sizes_n:
        values = np.random.default_rng(SEED).integers(0, 1 << 40, n).tolist()
        expected = sorted(values)
        for name, fn in peers.items():
            assert list(fn(values)) == expected
            out[n, name] = once(functools.partial(fn, values), rounds=2)
    return out


# ----------------------------------------------------------------------------- reporting


def factor(pair: tuple[float, ...]) -> float:
    return pair[1] / pair[0]


def article_table(title: str, data: dict, article: dict, sizes: tuple[int, ...]) -> str:
    rows = []
    for k in sizes:
        f = {s: factor(data[s, k]) for s in (*STRATEGIES, "aged")}
        lo, hi = article[k]
        fresh_ok = f["back"] >= lo and max(f["mid"], f["random"]) >= hi
        rows.append([
            f"{k} B", f"{f['aged']:.1f}", f"{f['back']:.2f}", f"{f['mid']:.2f}",
            f"{f['random']:.2f}", f"{lo:g} / {hi:g}",
            "yes" if f["aged"] >= hi else "no", "yes" if fresh_ok else "no",
        ])  # fmt: skip
    header = [
        "value size", "scattered nodes", "fresh heap: back", "mid", "random",
        "article (linear / non-linear)", "scattered ≥ non-linear", "fresh heap ≥ article",
    ]  # fmt: skip
    return f"**{title}** (node-per-element time / ContiguousList time)\n\n" + markdown_table(
        header, rows
    )


def l3_cache() -> str:
    """The last-level cache size as the kernel reports it, e.g. '300M' (or 'unknown')."""
    for index in (3, 2):
        path = f"/sys/devices/system/cpu/cpu0/cache/index{index}/size"
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        return f"{int(text.rstrip('KM')) * scale / (1 << 20):g} MB"
    return "unknown"


def report(args: argparse.Namespace, comp: dict, by_size: dict, sorted_c: dict,
           py: dict, py_sorted: dict) -> str:  # fmt: skip
    n = args.n
    shuf, rnd = py["shuffled"], py["random"]
    loop_ratio = shuf["loop dllist"] / shuf["loop ContiguousList"]
    loop_ratio_rnd = rnd["loop dllist"] / rnd["loop ContiguousList"]
    order_ratio = shuf["loop ContiguousList"] / shuf["order()"]
    sum_ratio = shuf["sum(dllist)"] / shuf["ContiguousList.sum()"]
    big = [k for k in args.sizes if k >= 64]
    scattered = {k: factor(comp["walk"]["aged", k]) for k in big}
    walk_ok = all(scattered[k] >= ARTICLE_TRAVERSAL[k][1] for k in big)
    walk_text = ", ".join(
        f"{k} B: {scattered[k]:.1f}x vs {ARTICLE_TRAVERSAL[k][1]:g}x" for k in big
    )
    mark = {True: "met", False: "**not met**"}
    lines = [
        f"List size n = {n:,} unless stated; int64 keys; timings are best-of-rounds with "
        "tumble and its peer measured alternately. The 2-core machine was shared with other "
        "jobs during the run, so single numbers are noisy; ratios are more stable.",
        "",
        "**Speed goals (issue 6)**",
        "",
        markdown_table(
            ["goal", "measured", "status"],
            [
                [
                    "Python `for` loop over ContiguousList ≥ as fast as over `llist.dllist`"
                    " (shuffled: uniformly random order)",
                    f"{loop_ratio:.2f}x (dllist time / ours)",
                    mark[loop_ratio >= 1.0],
                ],
                [
                    "the same, article's *random* strategy (front/back coin flips)",
                    f"{loop_ratio_rnd:.2f}x",
                    mark[loop_ratio_rnd >= 1.0],
                ],
                [
                    "`order()` ≥ 1.5x faster than that loop (shuffled)",
                    f"{order_ratio:.1f}x",
                    mark[order_ratio >= 1.5],
                ],
                [
                    "`sum()` ≥ 50x faster than `sum(dllist)` (shuffled)",
                    f"{sum_ratio:.0f}x",
                    mark[sum_ratio >= 50],
                ],
                [
                    "compiled pure traversal beats node-per-element (nodes at scattered"
                    " addresses) by the article's (non-linear) factors for values ≥ 64 B",
                    walk_text,
                    mark[walk_ok],
                ],
            ],
        ),
        "",
        "### Compiled: the article's section 3 (same numba loop on both layouts)",
        "",
        "*Scattered nodes* is the issue's node-per-element baseline: each node a separate "
        "heap chunk at a random address, as after long use of a heap. *Fresh heap* places "
        "the chunks in allocation order (what a new process's malloc gives), for the article's "
        "three creation strategies. The article's two factors per row are read as linear "
        f"(back) and non-linear (mid, random). This machine's last-level cache is {l3_cache()} "
        "(the article's: 6 MB); a fresh heap of small nodes that fits in it is walked at "
        "cache speed, so the article's fresh-heap factors need a cache smaller than the list.",
        "",
        article_table("Pure traversal", comp["walk"], ARTICLE_TRAVERSAL, args.sizes),
        "",
        article_table("Accumulate", comp["acc"], ARTICLE_ACCUMULATE, args.sizes),
        "",
        "Absolute times at n = {:,}, random strategy: ContiguousList walk {} (index {}), "
        "node-per-element walk {} (8 B values) to {} (1 KiB values).".format(
            n,
            fmt_time(comp["walk"]["random", args.sizes[0]][0]),
            "uint32" if n > 65535 else "uint16",
            fmt_time(comp["walk"]["random", args.sizes[0]][1]),
            fmt_time(comp["walk"]["random", args.sizes[-1]][1]),
        ),
        "",
        f"**Pure traversal by list size** (random strategy, {args.by_size_k}-byte values)",
        "",
        markdown_table(
            ["n", "ContiguousList", "node-per-element", "factor"],
            [[f"{m:,}", fmt_time(a), fmt_time(b), f"{b / a:.2f}"] for m, (a, b) in by_size.items()],
        ),
        "",
        "**Sorted insertion** (lower_bound by advancing, then insert), compiled",
        "",
        markdown_table(
            [
                "n",
                "value size",
                "ContiguousList",
                "node-per-element",
                "vector",
                "node / contiguous",
                "vector / contiguous",
            ],
            [
                [
                    f"{m:,}",
                    f"{k} B",
                    fmt_time(a),
                    fmt_time(b),
                    fmt_time(c),
                    f"{b / a:.2f}",
                    f"{c / a:.2f}",
                ]
                for (m, k), (a, b, c) in sorted_c.items()
            ],
        ),
        "",
        f"### Python level (n = {n:,}, int64 values)",
        "",
        markdown_table(
            ["operation", *PY_STRATEGIES],
            [
                [name, *(fmt_time(py[s][name]) if name in py[s] else "" for s in PY_STRATEGIES)]
                for name in py["random"]
            ],
        ),
        "",
        f"Build time through the Python API, {n:,} int64 elements: "
        + ", ".join(f"{s} {fmt_time(t)}" for s, t in comp["build"].items())
        + ".",
        "",
        "**Sorted insertion at the Python level** (n random int64 values, total time)",
        "",
        markdown_table(
            ["peer", *(f"n = {m:,}" for m in args.sorted_python)],
            [
                [name, *(fmt_time(py_sorted[m, name]) for m in args.sorted_python)]
                for name in dict.fromkeys(name for _, name in py_sorted)
            ],
        ),
        "",
        "### Where the article's conclusions hold in Python",
        "",
        *conclusions(args, comp, sorted_c, py, py_sorted),
    ]
    return "\n".join(lines)


def conclusions(args: argparse.Namespace, comp: dict, sorted_c: dict, py: dict,
                py_sorted: dict) -> list[str]:  # fmt: skip
    """One line per claim of the article, each decided by this run's numbers."""
    small, large = args.sizes[0], args.sizes[-1]
    walk = {k: factor(comp["walk"]["random", k]) for k in args.sizes}
    acc = {k: factor(comp["acc"]["random", k]) for k in args.sizes}
    m = max(n for n, _ in sorted_c)
    vec = {k: c / a for (n, k), (a, _, c) in sorted_c.items() if n == m}
    flat = {k: a for (n, k), (a, _, _) in sorted_c.items() if n == m}
    # "Ahead" means by more than the run-to-run noise on this shared machine (~20 %).
    crossover = next((k for k in sorted(vec) if vec[k] > 1.2), None)
    shuf = py["shuffled"]
    m_py = max(args.sorted_python)
    fastest = min((t, name) for (n, name), t in py_sorted.items() if n == m_py)[1]
    return [
        f"- *Compiled, contiguous beats node-per-element on large lists and the gain grows with"
        f" value size*: random strategy, pure traversal {walk[small]:.1f}x at {small} B to"
        f" {walk[large]:.1f}x at {large} B, accumulate {acc[small]:.1f}x to {acc[large]:.1f}x."
        f" {'Holds' if walk[large] > walk[small] > 1 else 'Does not hold as stated'}; the"
        " absolute factors depend on the machine's cache sizes (see docs/linkedlist.md).",
        f"- *Sorted insertion: contiguous time is almost independent of value size*:"
        f" {fmt_time(flat[min(flat)])} at {min(flat)} B vs {fmt_time(flat[max(flat)])} at"
        f" {max(flat)} B (n = {m:,}).",
        f"- *A vector wins sorted insertion for small values, lists for large ones*: vector /"
        f" contiguous = {vec[min(vec)]:.2f} at {min(vec)} B and {vec[max(vec)]:.2f} at"
        f" {max(vec)} B; "
        + (
            f"the list is ahead from {crossover} B on."
            if crossover is not None
            else "the vector stays ahead at every size measured."
        )
        + " Compiled, our vector shifts whole rows with a plain loop, so this compares layouts,"
        " not libraries.",
        f"- *At the Python level the standing advice holds even more strongly*: a `for` loop"
        f" over a `list` takes {fmt_time(shuf['loop list'])} against"
        f" {fmt_time(shuf['loop ContiguousList'])} for ContiguousList and"
        f" {fmt_time(shuf['loop dllist'])} for `llist.dllist`; for sorted insertion of"
        f" {m_py:,} values the fastest is {fastest}. Interpreter overhead per step (hundreds of"
        " ns) dwarfs the cache effects the article measures (a few ns), so ContiguousList pays"
        " off in Python when the work runs in compiled code: whole-list operations (`sum`,"
        " `count`, `remove_if`...) at NumPy speed, `order()`, and `advance` for long walks.",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench linkedlist", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = parser.parse_args(argv or [])
    args.n = 20_000 if args.quick else 1_000_000
    args.sizes = (8, 64, 1024) if args.quick else VALUE_SIZES
    args.by_size_k = 64
    by_size_n = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000, 1_000_000)
    sorted_n = (1_000,) if args.quick else (1_000, 10_000)
    sorted_k = (8, 64, 256, 1024)
    args.sorted_python = (1_000,) if args.quick else (1_000, 10_000)
    print(f"numba threads {numba.get_num_threads()}; n = {args.n:,}", flush=True)
    start = time.perf_counter()
    comp = compiled_traversal(args.n, args.sizes)
    print(f"compiled traversal/accumulate done ({time.perf_counter() - start:.0f} s)", flush=True)
    by_size = compiled_by_size(by_size_n, args.by_size_k)
    sorted_c = compiled_sorted(sorted_n, sorted_k)
    print(f"compiled sorted insertion done ({time.perf_counter() - start:.0f} s)", flush=True)
    py = python_level(args.n)
    py_sorted = python_sorted(args.sorted_python)
    print(f"python level done ({time.perf_counter() - start:.0f} s)", flush=True)
    md = report(args, comp, by_size, sorted_c, py, py_sorted)
    print(md)
    if not args.no_write:
        write_section("linkedlist", "## Linked list (ContiguousList)\n\n" + md)
    return 0

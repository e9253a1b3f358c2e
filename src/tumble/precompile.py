"""Compile ahead: fill numba's on-disk cache with the loops that runs will use.

Each integrator's loops are compiled on first use, once per method and torque structure
(a few seconds each), then loaded from numba's cache in every later process. ``tumble
precompile`` does the first use ahead of time: in a Docker image's build step, on a
cluster node before a sweep (the workers then share the result), or before a lecture.
An item is one method under one torque structure: torque-free, or the model of one of
:data:`tumble.parameters.TORQUE_SCENARIOS`; it runs :func:`tumble.rigid.simulate` and
:func:`tumble.rigid.step` (one body, and a batch) on a tiny case, which compiles exactly
what those calls use at any size.

The cache is numba's: ``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside the sources;
point every process at the same one.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from tumble import parameters, rigid
from tumble._errors import InputError
from tumble._validate import as_int, describe
from tumble.arguments import method_list, positive_int

__all__ = ["TORQUES", "Item", "add_arguments", "items", "precompile", "run", "warm"]

#: The torque structures an item can name: ``"none"`` (torque-free) or a scenario's model.
TORQUES: tuple[str, ...] = ("none", *parameters.TORQUE_SCENARIOS)

#: The most worker processes :func:`precompile` starts (each imports numba and compiles
#: alone; more than the cores only adds memory).
MAX_JOBS = 64


@dataclass(frozen=True)
class Item:
    """One method under one torque structure (``"none"`` or a scenario name)."""

    method: str
    torque: str = "none"

    def __post_init__(self) -> None:
        info = rigid.check_method(self.method, "method")
        if not isinstance(self.torque, str) or self.torque not in TORQUES:
            raise InputError(
                f"torque: expected one of {', '.join(TORQUES)}, got {describe(self.torque)}"
            )
        if self.torque != "none" and info.torque == "none":
            raise InputError(f"torque: method {info.name!r} is torque-free; got {self.torque!r}")

    def __str__(self) -> str:
        return f"{self.method} ({'torque-free' if self.torque == 'none' else self.torque})"


def items(methods: Sequence[str] | None = None, torques: Sequence[str] = ("none",)) -> list[Item]:
    """Every ``(method, torque)`` pair of ``methods`` (default :data:`tumble.rigid.METHODS`)
    and ``torques`` (names of :data:`TORQUES`), except a torque with a torque-free method
    (``exact``). Names are validated (:class:`~tumble.InputError` naming ``methods`` or
    ``torques``)."""
    names = rigid.METHODS if methods is None else methods
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise InputError(f"methods: expected a sequence of method names, got {describe(names)}")
    if isinstance(torques, str) or not isinstance(torques, Sequence):
        raise InputError(f"torques: expected a sequence of names, got {describe(torques)}")
    for name in names:
        rigid.check_method(name, "methods")
    for torque in torques:
        if not isinstance(torque, str) or torque not in TORQUES:
            raise InputError(
                f"torques: expected names among {', '.join(TORQUES)}, got {describe(torque)}"
            )
    return [
        Item(m, t)
        for m in dict.fromkeys(names)
        for t in dict.fromkeys(torques)
        if t == "none" or rigid.method_info(m).torque != "none"
    ]


def warm(item: Item) -> float:
    """Compile (or load from the cache) what ``simulate`` and ``step`` run for ``item``;
    returns the wall seconds it took."""
    # Only here, not at import: the parser of ``tumble precompile`` (and its --help) needs
    # the registry and the torque names alone, no numba.
    from tumble import scenarios

    if not isinstance(item, Item):
        raise InputError(f"item: expected a tumble.precompile.Item, got {describe(item)}")
    start = time.perf_counter()
    if item.torque == "none":
        case = scenarios.article_case()
        model = None
    else:
        case = scenarios.torque_case(item.torque)
        model = case.torque
    q0, w0, J = case.q0, case.omega0, case.inv_inertia
    rigid.simulate(q0, w0, J, case.dt, 2, item.method, torque=model)
    rigid.step(q0, w0, J, case.dt, item.method, torque=model)
    rigid.step(np.stack([q0, q0]), w0, J, case.dt, item.method, torque=model)
    return time.perf_counter() - start


def _warm_in_worker(item: Item) -> tuple[Item, float]:
    return item, warm(item)


def precompile(work: Iterable[Item], jobs: int = 1) -> Iterator[tuple[Item, float]]:
    """Warm each item (:func:`warm`), in this process or in ``jobs`` worker processes
    sharing numba's cache; returns an iterator of ``(item, seconds)`` in the order they
    finish. The arguments are checked at once, the work runs as the iterator is read."""
    if isinstance(work, Iterable) and not isinstance(work, str):
        # An iterable type that cannot iterate (a 0-d array) stays as it is: refused below.
        with contextlib.suppress(TypeError):
            work = list(work)
    if not isinstance(work, list) or not all(isinstance(w, Item) for w in work):
        raise InputError(f"work: expected tumble.precompile.Item values, got {describe(work)}")
    jobs = as_int(jobs, "jobs", minimum=1, maximum=MAX_JOBS)
    return _run(work, jobs)


def _run(work: list[Item], jobs: int) -> Iterator[tuple[Item, float]]:
    if jobs == 1 or len(work) <= 1:
        for item in work:
            yield item, warm(item)
        return
    # Fresh interpreters: a forked child would inherit this process's numba state.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(jobs, len(work)), mp_context=context) as pool:
        for done in as_completed([pool.submit(_warm_in_worker, item) for item in work]):
            yield done.result()


def _bar(done: int, total: int, width: int = 24) -> str:
    filled = width * done // total
    return "[" + "#" * filled + "." * (width - filled) + "]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``tumble precompile``."""
    parser.add_argument(
        "--methods",
        type=method_list,
        default=None,
        help="comma-separated methods, compositions included, or all (default: all, every "
        "method of rigid.METHODS)",
    )
    parser.add_argument(
        "--torque",
        type=_torque_list,
        default=["none"],
        help=f"comma-separated torque structures among {', '.join(TORQUES)} "
        "(default: none, torque-free)",
    )
    parser.add_argument(
        "--jobs", type=positive_int, default=1, help="worker processes (default: %(default)s)"
    )


def _torque_list(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [n for n in names if n not in TORQUES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"expected names among {', '.join(TORQUES)}, got {text!r}")
    return names


def run(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO | None = None
) -> int:
    """``tumble precompile``: a progress bar and each item's time, then the total, on
    ``out`` (default: ``sys.stderr`` as it is at the call, not at import)."""
    out = sys.stderr if out is None else out
    if args.jobs > MAX_JOBS:
        parser.error(f"--jobs: expected at most {MAX_JOBS}, got {args.jobs}")
    work = items(args.methods, args.torque)
    jobs = args.jobs
    start = time.perf_counter()
    print(f"compiling {len(work)} item(s) with {jobs} process(es) into numba's cache", file=out)
    for k, (item, seconds) in enumerate(precompile(work, jobs), 1):
        print(f"{_bar(k, len(work))} {k}/{len(work)} {item}: {seconds:.1f} s", file=out, flush=True)
    print(f"done in {time.perf_counter() - start:.1f} s", file=out)
    return 0

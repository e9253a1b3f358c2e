"""``tumble sweep``: the command line of sweeps (:func:`add_arguments`, :func:`run`).

The parser is built from data (:mod:`tumble.parameters`, the registry's names,
:mod:`tumble.sweep.settings`), so ``tumble sweep --help`` imports no numba; :func:`run`
imports the sweep's machinery (:mod:`tumble.sweep.cluster`) when it runs.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tumble import arguments, methods, parameters
from tumble.sweep import settings

__all__ = ["add_arguments", "run"]


def _list_of(kind: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def parse(text: str) -> list[Any]:
        parts = [p.strip() for p in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        return list(dict.fromkeys(kind(p) for p in parts))

    return parse


def _bodies(text: str) -> list[np.ndarray]:
    bodies = [arguments.vector3(part.strip()) for part in text.split(";") if part.strip()]
    if not bodies:
        raise argparse.ArgumentTypeError(f"expected J1,J2,J3[;J1,J2,J3...], got {text!r}")
    for J in bodies:
        if np.any(J <= 0):
            raise argparse.ArgumentTypeError(
                f"expected inverse moments > 0, got {','.join(f'{j:g}' for j in J)}"
            )
    return bodies


def _address(text: str) -> str:
    if not re.fullmatch(r"[a-z]+://[^\s/:]+:\d{1,5}", text):
        raise argparse.ArgumentTypeError(
            f"expected a scheduler address tcp://HOST:PORT, got {text!r}"
        )
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``tumble sweep`` to ``parser`` (its errors then name it)."""
    parser.set_defaults(sweep_parser=parser)
    d = parameters.DEFAULTS
    grid = parser.add_argument_group(
        "grid (comma-separated lists; the sweep runs their Cartesian product)"
    )
    grid.add_argument(
        "--methods", type=arguments.method_list, metavar="A,B,...",
        help="methods (default: all): " + ", ".join(methods.NAMES),
    )  # fmt: skip
    grid.add_argument(
        "--min-j", type=_list_of(arguments.positive_float), metavar="X,...",
        help=f"smallest inverse moment of the article's body, > 0 ({d['min_j']})",
    )  # fmt: skip
    grid.add_argument(
        "--median-j", type=_list_of(arguments.fraction), metavar="F,...",
        help=f"median inverse moment above min-j, 0..1 ({d['median_j']})",
    )  # fmt: skip
    grid.add_argument(
        "--energy", type=_list_of(arguments.fraction), metavar="E,...",
        help=f"initial energy between its minimum and maximum, 0..1 ({d['energy']})",
    )  # fmt: skip
    step = grid.add_mutually_exclusive_group()
    step.add_argument(
        "--steps-per-rotation", type=_list_of(arguments.steps_count), metavar="N,...",
        help=f"steps per rotation period ({d['steps_per_rotation']})",
    )  # fmt: skip
    step.add_argument(
        "--rate", type=_list_of(arguments.positive_float), metavar="HZ,...",
        help="step rates in Hz instead of steps per rotation: the bodies then turn at "
        "--spin and the case is in seconds",
    )  # fmt: skip
    grid.add_argument(
        "--spin", type=_list_of(arguments.positive_float), metavar="REV_PER_S,...",
        help="with --rate: initial spin |ω|/2π of the bodies in revolutions per second "
        f"({settings.DEFAULT_SPIN:g})",
    )  # fmt: skip
    grid.add_argument(
        "--rotations", type=_list_of(arguments.rotations_count), metavar="R,...",
        help=f"duration in rotation periods ({d['rotations']})",
    )  # fmt: skip
    grid.add_argument(
        "--inv-inertia", type=_bodies, metavar="J1,J2,J3;...",
        help="explicit bodies' inverse moments, > 0, separated by ';' (instead of the "
        "article's bodies unless --min-j or --median-j is given too)",
    )  # fmt: skip
    run_group = parser.add_argument_group("running")
    run_group.add_argument(
        "--out", type=Path, required=True, metavar="DIR",
        help="dataset folder (Parquet files); a rerun skips the cases already there",
    )  # fmt: skip
    where = run_group.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler", type=_address, metavar="tcp://HOST:PORT",
        help="run on an existing Dask cluster (default: a local cluster)",
    )  # fmt: skip
    where.add_argument(
        "--workers", type=arguments.positive_int, metavar="N",
        help="worker processes of the local cluster (default: one per core)",
    )  # fmt: skip
    run_group.add_argument(
        "--task-size", type=arguments.positive_int, default=settings.DEFAULT_TASK_SIZE, metavar="N",
        help="cases per task (%(default)s)",
    )  # fmt: skip
    run_group.add_argument(
        "--retries", type=int, default=settings.DEFAULT_RETRIES, metavar="N",
        help="reruns of a failing task (%(default)s)",
    )  # fmt: skip
    run_group.add_argument("--quiet", action="store_true", help="no progress line")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Handler of ``tumble sweep``: run the sweep, print a summary line.

    Ctrl-C stops it cleanly (exit status 130, the files written so far stay); failed
    tasks or an unreachable scheduler give a one-line message and status 1.
    """
    from tumble.sweep import cluster, dataset

    parser = getattr(args, "sweep_parser", parser)
    if args.retries < 0:
        parser.error(f"--retries: expected an integer >= 0, got {args.retries}")
    if args.spin is not None and args.rate is None:
        parser.error("--spin: expected only with --rate (it sets the time scale of a rate)")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out: expected a folder, got the file {args.out}")
    try:
        summary = cluster.run_sweep(
            args.out, args.methods, args.min_j, args.median_j, args.energy,
            args.steps_per_rotation, args.rotations,
            None if args.inv_inertia is None else np.array(args.inv_inertia),
            rate=args.rate, spin=args.spin, scheduler=args.scheduler, workers=args.workers,
            task_size=args.task_size,
            retries=args.retries, progress=not args.quiet,
        )  # fmt: skip
    except KeyboardInterrupt:
        n = len(dataset.part_files(args.out)) if args.out.is_dir() else 0
        sys.stderr.write(
            f"\ntumble sweep: interrupted; {n} files are in {args.out}; run the same command "
            "again to resume\n"
        )
        return 130
    except ImportError as exc:
        parser.exit(
            2,
            f"tumble sweep: error: needs the sweep extra ({exc.name} is missing): "
            "pip install 'tumble[sweep]'\n",
        )
    except (cluster.SweepError, OSError) as exc:
        sys.stderr.write(f"tumble sweep: error: {exc}\n")
        return 1
    print(
        f"{summary.cases} cases: {summary.skipped} already in {summary.out}, "
        f"{summary.runs} run in {summary.tasks} tasks ({summary.seconds:.1f} s)"
    )
    return 0

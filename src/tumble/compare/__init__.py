"""``tumble compare``: run integrators on one body, print their scores, draw the article's plots.

The body is the article's experiment (:func:`tumble.scenarios.article_case`: ``--min-j``,
``--median-j``, ``--energy``) or given explicitly (``--inv-inertia J1,J2,J3
--omega-body w1,w2,w3``, attitude the identity), with ``--steps-per-rotation`` and
``--rotations`` relative to the rotation period of :mod:`tumble.scenarios`. The table has
one row per method (:class:`tumble.scenarios.Scores`); ``--plot FILE`` writes the figures
of the article's toy, as PNG (matplotlib) or self-contained interactive HTML (plotly) by
the file's extension. Both draw the panels of :mod:`tumble.figures` (the lab's page draws
the same): energy factor, ``|L|`` and the attitude error against the exact solution over
time, the world transverse momentum ``(L_x, L_y)`` and the three projections of the
body-frame momentum ``L_b``.

The command (:func:`add_arguments`, :func:`run`) is this package's ``__init__``, and builds
its parser from data (:mod:`tumble.parameters`, the registry's names): ``tumble compare
--help`` imports no numba. The compiled half loads when the command runs, or on the first
access of its names (PEP 562, :mod:`tumble._lazy`):

* :mod:`~tumble.compare.table`: the scores as an aligned table (:func:`format_table`);
* :mod:`~tumble.compare.plots`: the figures as PNG or HTML (:func:`plot`).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tumble import parameters, rigid
from tumble._lazy import lazy_names
from tumble.arguments import (
    fraction,
    method_list,
    positive_float,
    positive_int,
    rotations_count,
    steps_count,
    vector3,
)

if TYPE_CHECKING:
    from tumble import scenarios
    from tumble.compare.plots import plot
    from tumble.compare.table import format_table

__all__ = ["add_arguments", "format_table", "plot", "run"]

#: Upper bound on the records kept per method when ``--every`` is not given: enough for
#: smooth plots, small enough that long runs do not fill memory.
MAX_RECORDS = 4000

#: Show progress on a non-TTY stderr only when the run is at least this many steps (all
#: methods together): short runs stay quiet in pipes and logs.
PROGRESS_STEPS = 2_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``tumble compare`` to ``parser`` (its errors then name it)."""
    parser.set_defaults(compare_parser=parser)
    d = parameters.DEFAULTS
    art = parser.add_argument_group(
        "the article's body (default)",
        "J = (min-j, min-j + median-j, min-j + 1), world L = z with |L| = 1",
    )
    art.add_argument("--min-j", type=positive_float, help=f"smallest inverse moment ({d['min_j']})")
    art.add_argument(
        "--median-j",
        type=fraction,
        help=f"median inverse moment above min-j, 0..1 ({d['median_j']})",
    )
    art.add_argument(
        "--energy",
        type=fraction,
        help=f"initial energy as a fraction between its minimum and maximum, 0..1 ({d['energy']})",
    )
    exp = parser.add_argument_group("an explicit body (instead of the article's)")
    exp.add_argument(
        "--inv-inertia", type=vector3, metavar="J1,J2,J3", help="principal inverse moments"
    )
    exp.add_argument(
        "--omega-body",
        type=vector3,
        metavar="W1,W2,W3",
        help="initial body-frame angular velocity (attitude starts at the identity)",
    )
    forced = parser.add_argument_group("a forced body (instead of the article's)")
    forced.add_argument(
        "--torque",
        choices=tuple(parameters.TORQUE_SCENARIOS),
        help="a torque scenario, scored against a tight ODE solve: "
        + "; ".join(f"{k}: {v}" for k, v in parameters.TORQUE_SCENARIOS.items()),
    )
    run = parser.add_argument_group("run")
    run.add_argument(
        "--steps-per-rotation",
        type=steps_count,
        default=int(d["steps_per_rotation"]),
        help="steps per rotation period 2π/((J_max - J_min)|L|), at most "
        f"{parameters.MAX_STEPS_PER_ROTATION} (%(default)s)",
    )
    run.add_argument(
        "--rotations",
        type=rotations_count,
        default=d["rotations"],
        help=f"duration in rotation periods, at most {parameters.MAX_ROTATIONS:g} (%(default)s)",
    )
    run.add_argument(
        "--methods",
        type=method_list,
        default=None,
        metavar="A,B,...",
        help="methods to run (default: all): "
        + ", ".join(rigid.METHODS)
        + ", or compositions <base>:<scheme> with a scheme from "
        + ", ".join(rigid.COMPOSITIONS),
    )
    run.add_argument(
        "--every",
        type=positive_int,
        default=None,
        help=f"record interval in steps (default: keep at most {MAX_RECORDS} records)",
    )
    run.add_argument(
        "--plot", type=Path, metavar="FILE", help="write the figures to FILE (.png or .html)"
    )


# The functions below import the compiled half (scenarios, the table, the figures) inside
# them: they run only for the command itself, never to build its parser.


def _check_plot_target(path: Path, parser: argparse.ArgumentParser) -> None:
    from tumble.compare.plots import PLOT_FORMATS

    suffix = path.suffix.lower()
    if suffix not in PLOT_FORMATS:
        parser.error(f"--plot: expected a file ending in .png or .html, got {str(path)!r}")
    module = PLOT_FORMATS[suffix]
    if importlib.util.find_spec(module) is None:
        parser.error(f"--plot {suffix}: needs {module}; install it with pip install 'tumble[plot]'")
    if not path.parent.exists():
        parser.error(f"--plot: directory {str(path.parent)!r} does not exist")


def _case(args: argparse.Namespace, parser: argparse.ArgumentParser) -> scenarios.Case:
    from tumble import scenarios

    explicit = args.inv_inertia is not None or args.omega_body is not None
    article = [f"--{n.replace('_', '-')}" for n in ("min_j", "median_j", "energy")
               if getattr(args, n) is not None]  # fmt: skip
    if args.torque is not None:
        if explicit or article:
            given = article[0] if article else "--inv-inertia/--omega-body"
            parser.error(f"{given} sets a free body; not with --torque")
        if args.methods and "exact" in args.methods:
            parser.error("--methods: 'exact' is the torque-free solution; not with --torque")
        return scenarios.torque_case(args.torque, args.steps_per_rotation, args.rotations)
    if explicit:
        if article:
            parser.error(f"{article[0]} belongs to the article's body; not with --inv-inertia")
        if args.inv_inertia is None or args.omega_body is None:
            parser.error("--inv-inertia and --omega-body go together; give both")
        return scenarios.explicit_case(
            args.inv_inertia, args.omega_body, args.steps_per_rotation, args.rotations
        )
    d = parameters.DEFAULTS
    return scenarios.article_case(
        d["min_j"] if args.min_j is None else args.min_j,
        d["median_j"] if args.median_j is None else args.median_j,
        d["energy"] if args.energy is None else args.energy,
        args.steps_per_rotation,
        args.rotations,
    )


def _progress_printer(stream: TextIO, total_steps: int) -> Callable[[int, int, str], None] | None:
    if not (stream.isatty() or total_steps >= PROGRESS_STEPS):
        return None
    start = time.perf_counter()

    def show(i: int, n: int, method: str) -> None:
        stream.write(f"[{i + 1}/{n}] {method} ({time.perf_counter() - start:.1f} s)\n")
        stream.flush()

    return show


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Handler of ``tumble compare``: build the case, run, print the table, plot.

    Bad arguments exit through ``parser.error`` (one line, status 2); the subcommand's own
    parser is used when :func:`add_arguments` set it up.
    """
    from tumble import scenarios
    from tumble.compare.plots import plot
    from tumble.compare.table import describe, format_table

    parser = getattr(args, "compare_parser", parser)
    if args.plot is not None:
        _check_plot_target(args.plot, parser)
    case = _case(args, parser)
    methods = args.methods or [m for m in rigid.METHODS if case.torque is None or m != "exact"]
    every = args.every or max(1, -(-case.steps // MAX_RECORDS))
    progress = _progress_printer(sys.stderr, case.steps * len(methods))
    results = scenarios.run_methods(case, methods, every=every, progress=progress)
    print(describe(case))
    print(format_table(results))
    if args.plot is not None:
        plot(results, case, args.plot, every, title=describe(case))
        print(f"wrote {args.plot}")
    return 0


#: The library half of ``tumble compare`` by the module that defines each name (as
#: imported for type checkers above; a test holds the two to each other), loaded on first
#: access.
_LAZY = {"format_table": "tumble.compare.table", "plot": "tumble.compare.plots"}

__getattr__, __dir__ = lazy_names(globals(), _LAZY)

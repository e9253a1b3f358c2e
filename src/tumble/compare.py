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
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from tumble import figures, rigid, scenarios
from tumble._errors import InputError
from tumble._validate import as_int, as_path
from tumble._validate import describe as describe_value
from tumble.arguments import (
    fraction,
    method_list,
    positive_float,
    positive_int,
    rotations_count,
    steps_count,
    vector3,
)

__all__ = ["add_arguments", "format_table", "plot", "run"]

#: Upper bound on the records kept per method when ``--every`` is not given: enough for
#: smooth plots, small enough that long runs do not fill memory.
MAX_RECORDS = 4000

#: Show progress on a non-TTY stderr only when the run is at least this many steps (all
#: methods together): short runs stay quiet in pipes and logs.
PROGRESS_STEPS = 2_000_000

PLOT_FORMATS = {".png": "matplotlib", ".html": "plotly"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``tumble compare`` to ``parser`` (its errors then name it)."""
    parser.set_defaults(compare_parser=parser)
    d = scenarios.DEFAULTS
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
        choices=tuple(scenarios.TORQUE_SCENARIOS),
        help="a torque scenario, scored against a tight ODE solve: "
        + "; ".join(f"{k}: {v}" for k, v in scenarios.TORQUE_SCENARIOS.items()),
    )
    run = parser.add_argument_group("run")
    run.add_argument(
        "--steps-per-rotation",
        type=steps_count,
        default=int(d["steps_per_rotation"]),
        help="steps per rotation period 2π/((J_max - J_min)|L|), at most "
        f"{scenarios.MAX_STEPS_PER_ROTATION} (%(default)s)",
    )
    run.add_argument(
        "--rotations",
        type=rotations_count,
        default=d["rotations"],
        help=f"duration in rotation periods, at most {scenarios.MAX_ROTATIONS:g} (%(default)s)",
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


# --------------------------------------------------------------------------------------
# the table


def _num(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:.2e}"


COLUMNS = (
    "method",
    "order",
    "max |dE/E|",
    "max ||L|-1|",
    "L dir drift",
    "att err end",
    "att err max",
    "ns/step",
)
"""Table header: energy error, |L| drift (relative), direction drift of world L (rad),
attitude error against the exact solution (rad) at the end and at worst, cost."""


def _check_results(results: Any) -> dict[str, scenarios.MethodResult]:
    """``results`` if it maps method names to MethodResults, else ``InputError``."""
    if not isinstance(results, dict) or not results:
        raise InputError(
            "results: expected a non-empty dict {method: MethodResult} (from "
            f"tumble.scenarios.run_methods), got {describe_value(results)}"
        )
    for name, r in results.items():
        if name not in rigid.ORDERS or not isinstance(r, scenarios.MethodResult):
            raise InputError(
                f"results: expected {{method: MethodResult}} with method names from "
                f"rigid.METHODS, got {name!r}: {type(r).__name__}"
            )
    return results


def format_table(results: dict[str, scenarios.MethodResult]) -> str:
    """The per-method table of :class:`tumble.scenarios.Scores` as aligned text."""
    results = _check_results(results)
    rows = [list(COLUMNS)]
    notes = []
    for name, r in results.items():
        s = r.scores
        order = rigid.ORDERS[name]
        rows.append(
            [
                name,
                "exact" if math.isinf(order) else f"{order:g}",
                _num(s.energy_error),
                _num(s.momentum_drift),
                _num(s.direction_drift),
                _num(s.attitude_error_end),
                _num(s.attitude_error_max),
                "nan" if math.isnan(s.ns_per_step) else f"{s.ns_per_step:.0f}",
            ]
        )
        if s.diverged_at is not None:
            notes.append(f"{name}: not finite from t = {s.diverged_at:.4g}; scores cover t before")
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + notes)


def describe(case: scenarios.Case) -> str:
    """One line naming the case: body, time step, duration."""
    J = ", ".join(f"{x:g}" for x in case.inv_inertia)
    forced = "" if case.torque is None else f"torque {case.torque!r}, "
    return (
        f"inv_inertia = ({J}), {forced}dt = {case.dt:.6g} (period {case.period:.6g}), "
        f"{case.steps} steps, t = {case.duration:.6g}"
    )


# --------------------------------------------------------------------------------------
# figures: tumble.figures' panels, drawn with matplotlib or plotly

#: Smallest value drawn on a logarithmic axis: an exact zero (the first record's attitude
#: error) shows at the bottom instead of being dropped.
LOG_FLOOR = 1e-16


def _curves(data: figures.FigureData) -> list[tuple[str, figures.Curve, bool]]:
    """``(label, curve, is_reference)`` in drawing order: the methods, then the reference
    (the reference method's own run is the reference, drawn once)."""
    ref = figures.REFERENCE
    out = [(name, c, False) for name, c in data.methods.items() if name != ref.method]
    return [*out, (ref.label, data.reference, True)]


def _xy(panel: figures.Panel, curve: figures.Curve, t: np.ndarray) -> tuple[Any, Any] | None:
    """The points of ``curve`` in ``panel`` (None if the curve lacks the panel's trace)."""
    x = figures.series(curve, t, panel.x)
    y = figures.series(curve, t, panel.y)
    if x is None or y is None:
        return None
    return x, np.maximum(y, LOG_FLOOR) if panel.log_y else y


def _sharing(attr: str, start: str, span: str) -> dict[str, str]:
    """Panel id -> id of the first panel showing the same ``attr`` over the same cells."""
    first: dict[tuple[Any, ...], str] = {}
    return {
        p.id: first.setdefault((getattr(p, attr), getattr(p, start), getattr(p, span)), p.id)
        for p in figures.PANELS
    }


def _plot_png(data: figures.FigureData, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, cols = figures.GRID
    ref_color, ref_dash = figures.REFERENCE.color, figures.REFERENCE.dash
    free = sorted({(r, c) for r in range(rows) for c in range(cols)} - {
        (r, c) for p in figures.PANELS for r in range(p.row, p.row + p.rowspan)
        for c in range(p.col, p.col + p.colspan)
    })  # fmt: skip
    # The legend takes the first free cell of the grid, else a column of its own.
    width = 3.4 * cols + (0 if free else 2.4)
    fig = plt.figure(figsize=(width, 3.5 * rows), dpi=80, layout="constrained")
    grid = fig.add_gridspec(rows, cols)
    share_x, share_y = _sharing("x", "col", "colspan"), _sharing("y", "row", "rowspan")
    axes: dict[str, Any] = {}
    for p in figures.PANELS:
        ax = fig.add_subplot(
            grid[p.row : p.row + p.rowspan, p.col : p.col + p.colspan],
            sharex=axes.get(share_x[p.id]),
            sharey=axes.get(share_y[p.id]),
        )
        axes[p.id] = ax
        for label, c, ref in _curves(data):
            points = _xy(p, c, data.t)
            if points is None:
                continue
            style: dict[str, Any] = (
                {"color": ref_color, "ls": "--" if ref_dash else "-", "lw": 1.2, "zorder": 5}
                if ref
                else {"color": figures.color(label), "lw": 0.9}
            )
            ax.plot(*points, label=label if p is figures.PANELS[0] else None, **style)
        if p.log_y:
            ax.set_yscale("log")
        elif p.x == figures.TIME:
            ax.ticklabel_format(axis="y", useOffset=False)
        ranges = data.ranges[p.id]
        if ranges["x"] is not None:
            ax.set_xlim(*ranges["x"])
        if ranges["y"] is not None:
            ax.set_ylim(*ranges["y"])
        if p.equal_aspect:
            fixed = ranges["x"] is not None and ranges["y"] is not None
            ax.set_aspect("equal", adjustable="box" if fixed else "datalim")
        ax.set_title(p.title, fontsize=10)
        ax.set_xlabel(p.x_label)
        ax.set_ylabel(p.y_label)
    fig.suptitle(title, fontsize=10)
    if free:
        cell = fig.add_subplot(grid[free[0]])
        cell.axis("off")
        cell.legend(*axes[figures.PANELS[0].id].get_legend_handles_labels(), loc="center",
                    fontsize=8)  # fmt: skip
    else:
        fig.legend(loc="outside right center", fontsize=8)
    fig.savefig(path, format="png")
    plt.close(fig)


def _plot_html(data: figures.FigureData, title: str, path: Path) -> None:
    from plotly.subplots import make_subplots

    rows, cols = figures.GRID
    specs: list[list[dict[str, int] | None]] = [[None] * cols for _ in range(rows)]
    for p in figures.PANELS:
        specs[p.row][p.col] = {"rowspan": p.rowspan, "colspan": p.colspan}
    # plotly numbers the subplots row by row: their titles go in that order.
    by_cell = sorted(figures.PANELS, key=lambda p: (p.row, p.col))
    ref_color, ref_dash = figures.REFERENCE.color, figures.REFERENCE.dash
    fig = make_subplots(rows=rows, cols=cols, specs=specs,
                        subplot_titles=[p.title for p in by_cell])  # fmt: skip
    for label, c, ref in _curves(data):
        line = (
            {"color": ref_color, "dash": "dash" if ref_dash else "solid", "width": 1.5}
            if ref
            else {"color": figures.color(label), "width": 1}
        )
        for p in figures.PANELS:
            points = _xy(p, c, data.t)
            if points is not None:
                fig.add_scatter(
                    x=points[0], y=points[1], row=p.row + 1, col=p.col + 1, name=label,
                    legendgroup=label, showlegend=p is figures.PANELS[0], line=line,
                    mode="lines",
                )  # fmt: skip
    axes = {p.id: fig.get_subplot(p.row + 1, p.col + 1) for p in figures.PANELS}
    share_x, share_y = _sharing("x", "col", "colspan"), _sharing("y", "row", "rowspan")
    last_time = max((p for p in figures.PANELS if p.x == figures.TIME),
                    key=lambda p: p.row + p.rowspan, default=None)  # fmt: skip
    for p in figures.PANELS:
        xaxis, yaxis = axes[p.id].xaxis, axes[p.id].yaxis
        ranges = data.ranges[p.id]
        xaxis.update(title_text=p.x_label, range=ranges["x"])
        yaxis.update(title_text=p.y_label, range=ranges["y"])
        if p.log_y:
            yaxis.update(type="log", exponentformat="power")
        if share_x[p.id] != p.id:
            xaxis.matches = _axis_id(axes[share_x[p.id]].xaxis)
        if share_y[p.id] != p.id:
            yaxis.matches = _axis_id(axes[share_y[p.id]].yaxis)
        if p.equal_aspect and not (ranges["x"] and ranges["y"]):
            # Fixed ranges set the scale already; plotly would widen one to the box's aspect.
            yaxis.scaleanchor = _axis_id(xaxis)
        if p is last_time:
            xaxis.rangeslider = {"visible": True, "thickness": 0.04}
    fig.update_layout(title=title, height=330 * rows, width=330 * cols + 250,
                      template="plotly_white")  # fmt: skip
    fig.write_html(path, include_plotlyjs=True, full_html=True, config=dict(figures.PLOTLY_CONFIG))


def _axis_id(axis: Any) -> str:
    """plotly's short id of a layout axis: ``"x2"`` for ``layout.xaxis2``."""
    return str(axis.plotly_name).replace("axis", "")


def plot(
    results: dict[str, scenarios.MethodResult],
    case: scenarios.Case,
    path: str | os.PathLike[str],
    every: int = 1,
    title: str = "",
) -> None:
    """Write the figures of :mod:`tumble.figures` for ``results`` to ``path`` (``.png`` or
    ``.html``, a ``str`` or a path; its folder must exist).

    The reference (the ``"exact"`` run of ``results``, else :func:`tumble.scenarios.reference`
    at the record times: the exact solution, or the ODE solve of a forced case) is drawn as
    the dashed black reference.
    """
    results = _check_results(results)
    if not isinstance(case, scenarios.Case):
        raise InputError(f"case: expected a tumble.scenarios.Case, got {describe_value(case)}")
    path = as_path(path, "path")
    every = as_int(every, "every", minimum=1)
    if not isinstance(title, str):
        raise InputError(f"title: expected a str, got {describe_value(title)}")
    suffix = path.suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise InputError(f"path: expected a .png or .html file, got {str(path)!r}")
    if not path.parent.is_dir():
        raise InputError(f"path: folder {str(path.parent)!r} does not exist")
    ref = figures.REFERENCE.method
    reference = results[ref].trajectory if ref in results else scenarios.reference(case, every)
    runs = {name: r.trajectory for name, r in results.items()}
    data = figures.figure_data(runs, reference, case.inv_inertia)
    (_plot_png if suffix == ".png" else _plot_html)(data, title, path)


# --------------------------------------------------------------------------------------
# the command


def _check_plot_target(path: Path, parser: argparse.ArgumentParser) -> None:
    suffix = path.suffix.lower()
    if suffix not in PLOT_FORMATS:
        parser.error(f"--plot: expected a file ending in .png or .html, got {str(path)!r}")
    module = PLOT_FORMATS[suffix]
    if importlib.util.find_spec(module) is None:
        parser.error(f"--plot {suffix}: needs {module}; install it with pip install 'tumble[plot]'")
    if not path.parent.exists():
        parser.error(f"--plot: directory {str(path.parent)!r} does not exist")


def _case(args: argparse.Namespace, parser: argparse.ArgumentParser) -> scenarios.Case:
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
    d = scenarios.DEFAULTS
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

"""``tumble compare``: run integrators on one body, print their scores, draw the article's plots.

The body is the article's experiment (:func:`tumble.scenarios.article_case`: ``--min-j``,
``--median-j``, ``--energy``) or given explicitly (``--inv-inertia J1,J2,J3
--omega-body w1,w2,w3``, attitude the identity), with ``--steps-per-rotation`` and
``--rotations`` relative to the rotation period of :mod:`tumble.scenarios`. The table has
one row per method (:class:`tumble.scenarios.Scores`); ``--plot FILE`` writes the figures
of the article's toy, as PNG (matplotlib) or self-contained interactive HTML (plotly) by
the file's extension: energy factor and ``|L|`` over time, the world transverse momentum
``(L_x, L_y)/|L|``, the three projections of the body-frame momentum ``L_b``, plus the
attitude error against the exact solution.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from tumble import diagnostics, rigid, scenarios
from tumble._errors import InputError

__all__ = ["add_arguments", "format_table", "plot", "run"]

#: Upper bound on the records kept per method when ``--every`` is not given: enough for
#: smooth plots, small enough that long runs do not fill memory.
MAX_RECORDS = 4000

#: Show progress on a non-TTY stderr only when the run is at least this many steps (all
#: methods together): short runs stay quiet in pipes and logs.
PROGRESS_STEPS = 2_000_000

PLOT_FORMATS = {".png": "matplotlib", ".html": "plotly"}


# --------------------------------------------------------------------------------------
# argument types: each raises ArgumentTypeError, which argparse turns into a one-line
# message and exit status 2


def _float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return x


def positive_float(text: str) -> float:
    """A finite number ``> 0``."""
    x = _float(text)
    if x <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return x


def nonnegative_float(text: str) -> float:
    """A finite number ``>= 0``."""
    x = _float(text)
    if x < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return x


def rotations_count(text: str) -> float:
    """A finite number in ``[0, MAX_ROTATIONS]`` (the lab's limit too)."""
    x = nonnegative_float(text)
    if x > scenarios.MAX_ROTATIONS:
        raise argparse.ArgumentTypeError(
            f"expected at most {scenarios.MAX_ROTATIONS:g} rotations, got {text!r}"
        )
    return x


def steps_count(text: str) -> int:
    """An integer in ``[1, MAX_STEPS_PER_ROTATION]`` (the lab's limit too)."""
    n = positive_int(text)
    if n > scenarios.MAX_STEPS_PER_ROTATION:
        raise argparse.ArgumentTypeError(
            f"expected at most {scenarios.MAX_STEPS_PER_ROTATION} steps per rotation, "
            f"got {text!r}"
        )
    return n


def fraction(text: str) -> float:
    """A number in ``[0, 1]``."""
    x = _float(text)
    if not 0.0 <= x <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1], got {text!r}")
    return x


def positive_int(text: str) -> int:
    """An integer ``>= 1``."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return n


def vector3(text: str) -> np.ndarray:
    """Three comma-separated finite numbers, ``"a,b,c"``."""
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(
            f"expected three comma-separated numbers like 1,0.6,0.35, got {text!r}"
        )
    return np.array([_float(p.strip()) for p in parts])


def method_list(text: str) -> list[str]:
    """Comma-separated names from :data:`tumble.rigid.METHODS` (or ``all``)."""
    if text.strip() == "all":
        return list(rigid.METHODS)
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [n for n in names if n not in rigid.METHODS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown method {', '.join(map(repr, unknown)) or repr(text)}; "
            f"choose from {', '.join(rigid.METHODS)}"
        )
    return list(dict.fromkeys(names))


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
        help="methods to run (default: all): " + ", ".join(rigid.METHODS),
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


def format_table(results: dict[str, scenarios.MethodResult]) -> str:
    """The per-method table of :class:`tumble.scenarios.Scores` as aligned text."""
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
    return (
        f"inv_inertia = ({J}), dt = {case.dt:.6g} (period {case.period:.6g}), "
        f"{case.steps} steps, t = {case.duration:.6g}"
    )


# --------------------------------------------------------------------------------------
# figures


def _traces(results: dict[str, scenarios.MethodResult], case: scenarios.Case, every: int):
    """Per curve (the methods, then the exact solution): name, t, J_L, |L|, world L/|L|,
    L_b, attitude error; non-finite records are cut off."""
    curves = []
    runs = [(n, r.trajectory) for n, r in results.items()]
    if "exact" not in results:
        runs.append(
            (
                "exact",
                rigid.simulate(
                    case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, "exact",
                    every=every,
                ),
            )
        )  # fmt: skip
    J = case.inv_inertia
    for name, tr in runs:
        tr = tr.take(records=slice(scenarios.finite_prefix(tr)))
        Lw = diagnostics.momentum_world(tr, J)
        norm = diagnostics.momentum_norm(tr, J)
        with np.errstate(invalid="ignore", divide="ignore"):
            Lw_hat = Lw / norm[:, None]
        curves.append(
            {
                "name": name,
                "t": tr.t,
                "J_L": diagnostics.energy_factor(tr, J),
                "L_norm": norm,
                "L_world": Lw_hat,
                "L_body": diagnostics.momentum_body(tr, J),
                "attitude": diagnostics.attitude_error(tr, J),
            }
        )
    return curves


#: Panels of the figure on a 3 x 3 grid: (row, column span) and what they show. The three
#: body-frame projections sit as in the article: x-z bottom right, y-z to its left
#: (sharing z), x-y above it (sharing x).
_BODY_PANELS = (((1, 2), 0, 1, "L_b x", "L_b y"), ((2, 1), 1, 2, "L_b y", "L_b z"),
                ((2, 2), 0, 2, "L_b x", "L_b z"))  # fmt: skip


def _plot_png(curves: list[dict[str, Any]], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 10.5), dpi=80, layout="constrained")
    grid = fig.add_gridspec(3, 3)
    ax_e = fig.add_subplot(grid[0, 0:2])
    ax_l = fig.add_subplot(grid[1, 0:2], sharex=ax_e)
    ax_w = fig.add_subplot(grid[0, 2])
    ax_a = fig.add_subplot(grid[2, 0], sharex=ax_e)
    body = [fig.add_subplot(grid[r, c]) for (r, c), *_ in _BODY_PANELS]
    cmap = plt.get_cmap("tab20")
    for i, c in enumerate(curves):
        ref = c["name"] == "exact"
        style: dict[str, Any] = (
            {"color": "black", "ls": "--", "lw": 1.2, "zorder": 5}
            if ref
            else {"color": cmap((2 * i) % 20 + (2 * i) // 20 % 2), "lw": 0.9}
        )
        ax_e.plot(c["t"], c["J_L"], label=c["name"], **style)
        ax_l.plot(c["t"], c["L_norm"], **style)
        ax_w.plot(c["L_world"][:, 0], c["L_world"][:, 1], **style)
        if not ref:
            ax_a.semilogy(c["t"], np.maximum(c["attitude"], 1e-16), **style)
        for ax, ((_, _), i0, i1, _, _) in zip(body, _BODY_PANELS, strict=True):
            ax.plot(c["L_body"][:, i0], c["L_body"][:, i1], **style)
    for ax in (ax_e, ax_l):
        ax.ticklabel_format(axis="y", useOffset=False)
    norms = np.concatenate([c["L_norm"] for c in curves])
    mid = float(np.median(norms))
    if mid > 0 and np.ptp(norms) < 1e-6 * mid:
        # Every method kept |L| to round-off: a ±0.1 % window instead of magnified noise.
        ax_l.set_ylim(mid * (1 - 1e-3), mid * (1 + 1e-3))
    ax_e.set_ylabel("energy factor J_L = 2E/|L|²")
    ax_l.set_ylabel("|L|")
    ax_l.set_xlabel("t")
    ax_w.set_title("world L/|L|, transverse (x, y)", fontsize=10)
    ax_w.set_aspect("equal", adjustable="datalim")
    ax_a.set_ylabel("attitude error (rad)")
    ax_a.set_xlabel("t")
    for ax, (_, _, _, xl, yl) in zip(body, _BODY_PANELS, strict=True):
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_aspect("equal", adjustable="datalim")
    fig.suptitle(title, fontsize=10)
    fig.legend(loc="outside right center", fontsize=8)
    fig.savefig(path, format="png")
    plt.close(fig)


def _plot_html(curves: list[dict[str, Any]], title: str, path: Path) -> None:
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=3,
        cols=3,
        specs=[
            [{"colspan": 2}, None, {}],
            [{"colspan": 2}, None, {}],
            [{}, {}, {}],
        ],
        subplot_titles=(
            "energy factor J_L = 2E/|L|²",
            "world L/|L|, transverse (x, y)",
            "|L|",
            "L_b (x, y)",
            "attitude error (rad)",
            "L_b (y, z)",
            "L_b (x, z)",
        ),
    )
    palette = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
        "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
        "#c5b0d5",
    ]  # fmt: skip
    for i, c in enumerate(curves):
        ref = c["name"] == "exact"
        line = {"color": "black", "dash": "dash", "width": 1.5} if ref else {
            "color": palette[i % len(palette)], "width": 1}  # fmt: skip
        common = {"legendgroup": c["name"], "name": c["name"], "line": line, "mode": "lines"}
        panels: list[tuple[int, int, Any, Any]] = [
            (1, 1, c["t"], c["J_L"]),
            (2, 1, c["t"], c["L_norm"]),
            (1, 3, c["L_world"][:, 0], c["L_world"][:, 1]),
        ]
        if not ref:
            panels.append((3, 1, c["t"], np.maximum(c["attitude"], 1e-16)))
        panels += [
            (r + 1, col + 1, c["L_body"][:, i0], c["L_body"][:, i1])
            for (r, col), i0, i1, _, _ in _BODY_PANELS
        ]
        for k, (r, col, x, y) in enumerate(panels):
            fig.add_scatter(x=x, y=y, row=r, col=col, showlegend=k == 0, **common)
    fig.update_yaxes(type="log", row=3, col=1)
    fig.update_xaxes(rangeslider={"visible": True, "thickness": 0.04}, row=2, col=1)
    for r, col in ((1, 3), (2, 3), (3, 2), (3, 3)):
        fig.update_yaxes(scaleanchor=f"x{_axis_index(r, col)}", row=r, col=col)
    fig.update_layout(title=title, height=1000, width=1300, template="plotly_white")
    fig.write_html(path, include_plotlyjs=True, full_html=True)


def _axis_index(row: int, col: int) -> str:
    """plotly's axis suffix of the subplot at (row, col) of the grid above ('' for 1)."""
    order = [(1, 1), (1, 3), (2, 1), (2, 3), (3, 1), (3, 2), (3, 3)]
    k = order.index((row, col)) + 1
    return "" if k == 1 else str(k)


def plot(
    results: dict[str, scenarios.MethodResult],
    case: scenarios.Case,
    path: Path,
    every: int = 1,
    title: str = "",
) -> None:
    """Write the article's figures for ``results`` to ``path`` (``.png`` or ``.html``).

    The exact solution (:func:`tumble.exact.torque_free`, evaluated at the record times)
    is drawn as the dashed black reference.
    """
    suffix = path.suffix.lower()
    curves = _traces(results, case, every)
    if suffix == ".png":
        _plot_png(curves, title, path)
    elif suffix == ".html":
        _plot_html(curves, title, path)
    else:
        raise InputError(f"path: expected a .png or .html file, got {str(path)!r}")


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
    methods = args.methods or list(rigid.METHODS)
    every = args.every or max(1, -(-case.steps // MAX_RECORDS))
    progress = _progress_printer(sys.stderr, case.steps * len(methods))
    results = scenarios.run_methods(case, methods, every=every, progress=progress)
    print(describe(case))
    print(format_table(results))
    if args.plot is not None:
        plot(results, case, args.plot, every, title=describe(case))
        print(f"wrote {args.plot}")
    return 0

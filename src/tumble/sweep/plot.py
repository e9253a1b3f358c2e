"""``tumble sweep-plot``: heat maps of a sweep's scores over two grid axes, per method.

One panel per (score, method): the cell at ``(x, y)`` is the score reduced (``max`` by
default: the worst case) over every other grid value with those ``x`` and ``y``, coloured
by ``log10 |score|`` (errors span decades), grey where no case ran or the score is
``nan`` (no flip in the run, a spherical body...), black where it is infinite (a flip
period where the method never flips or blows up, an overflowed energy). A ``contour``
level draws the line where ``|score|`` crosses it (for example 0.01: 1 %). PNG through
matplotlib, interactive HTML (hover shows the value) through plotly, by the output file's
extension.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tumble import arguments, figures, rigid
from tumble._errors import InputError
from tumble._validate import as_choice, as_int, as_path, as_scalar, describe
from tumble.sweep import dataset, grid, task

__all__ = ["AXES", "REDUCERS", "add_arguments", "heat_maps", "plot", "run"]

AXES = (*(c for c in grid.GRID_COLUMNS if c != "method"), "inertia_ratio")
"""Columns that can be a heat map's axis: the grid's, and ``inertia_ratio`` (``J_max /
J_min = I_max / I_min`` of the body; with one ``median_j``, one-to-one with ``min_j``)."""

#: Axis titles of the figures, where the column name alone does not say the unit.
AXIS_LABELS = {
    "rate": "step rate (Hz)",
    "spin": "spin (rev/s)",
    "inertia_ratio": "I_max / I_min",
}

#: Colour of infinite scores (the colour map's "over" end, off its scale).
INF_COLOR = "black"

#: Colour of the ``contour`` line.
CONTOUR_COLOR = "red"

REDUCERS: dict[str, Callable[[np.ndarray], Any]] = {
    "max": np.max,
    "median": np.median,
    "min": np.min,
}
"""How the cases sharing a cell are combined."""

#: ``log10`` of scores at or below this show as this value (exact zeros, e.g. the ``|L|``
#: drift of methods that conserve it, would otherwise be ``-inf``).
LOG_FLOOR = 1e-17

#: The colour scale starts at ``log10`` of this at the lowest (scores below it, round-off,
#: share the bottom colour instead of taking the whole range) and spans at least
#: :data:`COLOR_MIN_DECADES` decades.
COLOR_FLOOR = 1e-12
COLOR_MIN_DECADES = 1.0

FORMATS = (".png", ".html")


def _values(column: Any) -> np.ndarray:
    return np.asarray(column.to_pylist(), dtype=object)


def _labels(values: np.ndarray) -> list[str]:
    return [v if isinstance(v, str) else f"{v:g}" for v in values]


def heat_maps(
    table: Any, x: str, y: str, scores: Sequence[str], reduce: str = "max"
) -> tuple[list[str], list[Any], list[Any], dict[tuple[str, str], np.ndarray]]:
    """The grids behind the figures.

    Parameters
    ----------
    table : pyarrow.Table
        A sweep dataset (:func:`tumble.sweep.read_results`).
    x, y : str
        Axes, from :data:`AXES`, different.
    scores : sequence of str
        Columns from :data:`tumble.task.SCORE_COLUMNS`.
    reduce : str
        Key of :data:`REDUCERS`.

    Returns
    -------
    methods : list of str
    xs, ys : list
        Sorted distinct axis values (rows with a missing value on an axis are left out).
    grids : dict
        ``{(score, method): array of shape (len(ys), len(xs))}``, ``nan`` where empty.
    """
    as_choice(x, "x", AXES)
    as_choice(y, "y", AXES)
    if x == y:
        raise InputError(f"y: expected an axis other than x, got {y!r} for both")
    for s in scores:
        as_choice(s, "scores", task.SCORE_COLUMNS)
    fold = REDUCERS[as_choice(reduce, "reduce", tuple(REDUCERS))]
    if table.num_rows == 0:
        raise InputError("table: the dataset has no rows")
    method = _values(table.column("method"))
    xv, yv = _values(table.column(x)), _values(table.column(y))

    def present(v: np.ndarray) -> np.ndarray:
        return np.array([not (s == "" or (isinstance(s, float) and math.isnan(s))) for s in v])

    keep = present(xv) & present(yv)
    if not np.any(keep):
        raise InputError(f"x, y: no row has values for both {x!r} and {y!r}")
    xs = sorted(set(xv[keep].tolist()))
    ys = sorted(set(yv[keep].tolist()))
    known = {m: i for i, m in enumerate(rigid.METHODS)}
    methods = sorted(set(method[keep].tolist()), key=lambda m: (known.get(m, len(known)), m))
    xi = {v: i for i, v in enumerate(xs)}
    yi = {v: i for i, v in enumerate(ys)}
    grids: dict[tuple[str, str], np.ndarray] = {}
    for s in scores:
        values = np.asarray(table.column(s).to_pylist(), dtype=np.float64)
        for m in methods:
            cells: dict[tuple[int, int], list[float]] = {}
            for r in np.flatnonzero(keep & (method == m)):
                cells.setdefault((yi[yv[r]], xi[xv[r]]), []).append(values[r])
            grid = np.full((len(ys), len(xs)), np.nan)
            with np.errstate(all="ignore"):
                for (i, j), vals in cells.items():
                    finite = [v for v in vals if not math.isnan(v)]
                    grid[i, j] = fold(np.array(finite)) if finite else np.nan
            grids[(s, m)] = grid
    return methods, xs, ys, grids


def _log(grid: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(np.maximum(np.abs(grid), LOG_FLOOR))


def color_range(logs: Sequence[np.ndarray], floor: float = COLOR_FLOOR) -> tuple[float, float]:
    """``(lo, hi)`` of the colour scale of ``log10`` grids: their finite span, with ``lo``
    at least ``log10(floor)`` (default :data:`COLOR_FLOOR`) and ``hi >= lo +
    COLOR_MIN_DECADES``."""
    finite = np.concatenate([g[np.isfinite(g)] for g in logs])
    floor = math.log10(as_scalar(floor, "floor", positive=True))
    lo = max(float(finite.min()), floor) if finite.size else floor
    hi = float(finite.max()) if finite.size else lo
    return lo, max(hi, lo + COLOR_MIN_DECADES)


def plot(
    out: Any,
    file: Any,
    x: str = "median_j",
    y: str = "energy",
    scores: Sequence[str] | None = None,
    reduce: str = "max",
    contour: float | None = None,
    columns: int | None = None,
    floor: float = COLOR_FLOOR,
) -> Path:
    """Draw the heat maps of the sweep dataset in folder ``out`` into ``file``.

    One block of panels per score, one panel per method, ``columns`` panels to a row
    (default: all methods in one row); ``file`` ends in ``.png`` (matplotlib) or ``.html``
    (plotly, self-contained). See :func:`heat_maps`.

    Parameters
    ----------
    contour : float, optional
        ``> 0``: draw the line where ``|score|`` crosses this level (0.01: 1 %), on the
        panels and on the colour bar. Cells of ``inf`` count as above it.
    columns : int, optional
        Panels per row, ``>= 1``.
    floor : float, optional
        ``> 0``: the colour scale starts at ``log10(floor)`` at the lowest; smaller scores
        share its bottom colour (default :data:`COLOR_FLOOR`, round-off).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    InputError
        ``out`` is not a sweep folder, ``file`` is not a path, has another extension or its
        folder does not exist; bad axes, scores, ``reduce``, ``contour``, ``columns`` or
        ``floor``.
    """
    target = as_path(file, "file")
    if target.suffix.lower() not in FORMATS:
        raise InputError(f"file: expected a .png or .html name, got {str(file)!r}")
    if not target.parent.is_dir():
        raise InputError(
            f"file: expected a file in an existing folder, but {str(target.parent)!r} "
            "is not a folder"
        )
    if scores is not None and (
        isinstance(scores, str) or not isinstance(scores, Sequence) or not scores
    ):
        raise InputError(
            f"scores: expected a non-empty sequence of score names, got {describe(scores)}"
        )
    level = None if contour is None else math.log10(as_scalar(contour, "contour", positive=True))
    per_row = None if columns is None else as_int(columns, "columns", minimum=1)
    as_scalar(floor, "floor", positive=True)
    chosen = list(task.SCORE_COLUMNS if scores is None else scores)
    methods, xs, ys, grids = heat_maps(dataset.read_results(out), x, y, chosen, reduce)
    layout = _Layout(chosen, methods, per_row)
    draw = _png if target.suffix.lower() == ".png" else _html
    draw(target, x, y, layout, xs, ys, grids, reduce, level, floor)
    return target


class _Layout:
    """Where each (score, method) panel goes: a block of rows per score, ``per_row``
    methods to a row."""

    def __init__(self, scores: list[str], methods: list[str], per_row: int | None) -> None:
        self.scores, self.methods = scores, methods
        self.cols = min(per_row or len(methods), len(methods))
        self.block = -(-len(methods) // self.cols)
        self.rows = self.block * len(scores)

    def cell(self, i: int, j: int) -> tuple[int, int]:
        """Row and column of score ``i``'s panel of method ``j``."""
        return i * self.block + j // self.cols, j % self.cols

    def titled(self, i: int, j: int) -> bool:
        """Whether the panel names its method (every panel once the methods wrap)."""
        return self.block > 1 or i == 0

    def bottom(self, j: int) -> bool:
        """Whether method ``j``'s panel is the lowest of its column in its block."""
        return j + self.cols >= len(self.methods)


def _shown(log: np.ndarray, hi: float) -> np.ndarray:
    """The ``log10`` grid as drawn: ``+inf`` one decade above the scale (its "over" end)."""
    return np.where(np.isposinf(log), hi + 1.0, log)


def _png(
    target: Path, x: str, y: str, layout: _Layout, xs: list[Any], ys: list[Any],
    grids: dict[tuple[str, str], np.ndarray], reduce: str, level: float | None, floor: float,
) -> None:  # fmt: skip
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        layout.rows, layout.cols, figsize=(1.0 + 2.4 * layout.cols, 0.6 + 2.2 * layout.rows),
        squeeze=False, constrained_layout=True,
    )  # fmt: skip
    cmap = plt.get_cmap("viridis").with_extremes(bad="0.85", over=INF_COLOR)
    used: set[tuple[int, int]] = set()
    any_inf = False
    for i, s in enumerate(layout.scores):
        logs = [_log(grids[(s, m)]) for m in layout.methods]
        lo, hi = color_range(logs, floor)
        infinite = any(np.isposinf(g).any() for g in logs)
        any_inf |= infinite
        image: Any = None
        block = []
        for j, m in enumerate(layout.methods):
            r, c = layout.cell(i, j)
            used.add((r, c))
            ax = axes[r, c]
            block.append(ax)
            shown = _shown(logs[j], hi)
            image = ax.imshow(
                np.ma.masked_invalid(shown), origin="lower", aspect="auto", cmap=cmap,
                vmin=lo, vmax=hi, interpolation="nearest",
            )  # fmt: skip
            if level is not None and min(shown.shape) >= 2:
                with warnings.catch_warnings():
                    # A level outside a panel's values draws nothing, which is the answer.
                    warnings.simplefilter("ignore", UserWarning)
                    ax.contour(
                        np.ma.masked_invalid(shown), levels=[level], colors=CONTOUR_COLOR,
                        linewidths=1.2, linestyles="solid", origin="lower",
                    )  # fmt: skip
            for axis, values in ((ax.xaxis, xs), (ax.yaxis, ys)):
                # At most about 11 labels per axis: every k-th value, the rest unlabelled.
                k = max(1, -(-len(values) // 11))
                axis.set_ticks(range(0, len(values), k))
                axis.set_ticklabels(_labels(np.array(values[::k], dtype=object)), fontsize=6)
            if layout.titled(i, j):
                ax.set_title(m, fontsize=8)
            if layout.bottom(j):
                ax.set_xlabel(AXIS_LABELS.get(x, x), fontsize=7)
            if c == 0:
                ax.set_ylabel(f"{s}\n{AXIS_LABELS.get(y, y)}", fontsize=7)
        bar = fig.colorbar(image, ax=block, shrink=0.9, extend="max" if infinite else "neither")
        bar.set_label(f"log10 |{s}|", fontsize=7)
        bar.ax.tick_params(labelsize=6)
        if level is not None and lo <= level <= hi:
            bar.ax.axhline(level, color=CONTOUR_COLOR, linewidth=1.2)
    for r in range(layout.rows):
        for c in range(layout.cols):
            if (r, c) not in used:
                axes[r, c].set_visible(False)
    notes = [f"tumble sweep: {reduce} over the other grid values"]
    if level is not None:
        notes.append(f"{CONTOUR_COLOR} line: |score| = {10**level:g}")
    if any_inf:
        notes.append(f"{INF_COLOR}: infinite (a flip period: no flip, or blew up)")
    fig.suptitle("; ".join(notes), fontsize=9)
    fig.savefig(target, dpi=80)
    plt.close(fig)


def _html(
    target: Path, x: str, y: str, layout: _Layout, xs: list[Any], ys: list[Any],
    grids: dict[tuple[str, str], np.ndarray], reduce: str, level: float | None, floor: float,
) -> None:  # fmt: skip
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    titles = [""] * (layout.rows * layout.cols)
    for i in range(len(layout.scores)):
        for j, m in enumerate(layout.methods):
            r, c = layout.cell(i, j)
            if layout.titled(i, j):
                titles[r * layout.cols + c] = m
    fig = make_subplots(
        rows=layout.rows, cols=layout.cols, subplot_titles=titles,
        row_titles=layout.scores if layout.block == 1 else None,
        horizontal_spacing=0.02, vertical_spacing=0.04 if layout.block == 1 else 0.08,
    )  # fmt: skip
    xl, yl = _labels(np.array(xs, dtype=object)), _labels(np.array(ys, dtype=object))
    for i, s in enumerate(layout.scores):
        logs = [_log(grids[(s, m)]) for m in layout.methods]
        lo, hi = color_range(logs, floor)
        for j, m in enumerate(layout.methods):
            r, c = layout.cell(i, j)
            raw = grids[(s, m)]
            fig.add_trace(
                go.Heatmap(
                    z=np.where(np.isposinf(logs[j]), np.nan, logs[j]), x=xl, y=yl,
                    customdata=raw, zmin=lo, zmax=hi,
                    coloraxis=f"coloraxis{i + 1}",
                    hovertemplate=f"{m}<br>{x}=%{{x}}<br>{y}=%{{y}}<br>{s} ({reduce})="
                    "%{customdata:.3e}<extra></extra>",
                ),
                row=r + 1, col=c + 1,
            )  # fmt: skip
            inf = np.isposinf(raw)
            if inf.any():
                fig.add_trace(
                    go.Heatmap(
                        z=np.where(inf, 1.0, np.nan), x=xl, y=yl, showscale=False,
                        colorscale=[[0.0, INF_COLOR], [1.0, INF_COLOR]],
                        hovertemplate=f"{m}<br>{x}=%{{x}}<br>{y}=%{{y}}<br>{s} = inf"
                        "<extra></extra>",
                    ),
                    row=r + 1, col=c + 1,
                )  # fmt: skip
            if level is not None and min(raw.shape) >= 2:
                fig.add_trace(
                    go.Contour(
                        z=_shown(logs[j], hi), x=xl, y=yl, showscale=False,
                        contours={"start": level, "end": level, "size": 1.0,
                                  "coloring": "none"},
                        line={"color": CONTOUR_COLOR, "width": 2, "smoothing": 0},
                        hoverinfo="skip", showlegend=False,
                    ),
                    row=r + 1, col=c + 1,
                )  # fmt: skip
        span = 1.0 / len(layout.scores)
        fig.update_layout(
            {
                f"coloraxis{i + 1}": {
                    # The axis's own range: a trace's zmin and zmax yield to its coloraxis.
                    "cmin": lo, "cmax": hi,
                    "colorscale": "Viridis",
                    "colorbar": {
                        "title": f"log10 |{s}|", "len": span * 0.9,
                        "y": 1.0 - span * (i + 0.5), "x": 1.02,
                    },
                }
            }
        )  # fmt: skip
    for j in range(len(layout.methods)):
        if layout.bottom(j):
            for i in range(len(layout.scores)):
                r, c = layout.cell(i, j)
                fig.update_xaxes(title_text=AXIS_LABELS.get(x, x), row=r + 1, col=c + 1)
    fig.update_yaxes(title_text=AXIS_LABELS.get(y, y), col=1)
    notes = [f"tumble sweep: {reduce} over the other grid values"]
    if level is not None:
        notes.append(f"{CONTOUR_COLOR} line: |score| = {10**level:g}")
    if any(np.isposinf(g).any() for g in grids.values()):
        notes.append(f"{INF_COLOR}: infinite")
    fig.update_layout(height=260 * layout.rows + 80, width=max(700, 240 * layout.cols + 160),
                      title="; ".join(notes))  # fmt: skip
    config = dict(figures.PLOTLY_CONFIG)
    fig.write_html(target, include_plotlyjs=True, full_html=True, config=config)


def _score_list(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [n for n in names if n not in task.SCORE_COLUMNS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown score {', '.join(map(repr, unknown)) or repr(text)}; choose from "
            + ", ".join(task.SCORE_COLUMNS)
        )
    return list(dict.fromkeys(names))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``tumble sweep-plot`` to ``parser`` (its errors then name it)."""
    parser.set_defaults(sweep_plot_parser=parser)
    parser.add_argument("dir", type=Path, metavar="DIR", help="dataset folder of tumble sweep")
    parser.add_argument(
        "--x", choices=AXES, default="median_j", help="horizontal axis (%(default)s)"
    )
    parser.add_argument("--y", choices=AXES, default="energy", help="vertical axis (%(default)s)")
    parser.add_argument(
        "--score", type=_score_list, metavar="S,...",
        help="scores to draw, one row each (default: all): " + ", ".join(task.SCORE_COLUMNS),
    )  # fmt: skip
    parser.add_argument(
        "--reduce", choices=tuple(REDUCERS), default="max",
        help="combine the cases of a cell (%(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--contour", type=arguments.positive_float, metavar="LEVEL",
        help="draw the line where |score| crosses LEVEL (0.01: 1 %%)",
    )  # fmt: skip
    parser.add_argument(
        "--floor", type=arguments.positive_float, default=COLOR_FLOOR, metavar="X",
        help="the colour scale starts at X at the lowest (%(default)g)",
    )  # fmt: skip
    parser.add_argument(
        "--columns", type=arguments.positive_int, metavar="N",
        help="panels per row (default: every method in one row)",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, metavar="FILE",
        help="figure file, .png or .html (default: DIR/heatmaps.png)",
    )  # fmt: skip


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Handler of ``tumble sweep-plot``: one-line errors with status 2, as argparse's."""
    parser = getattr(args, "sweep_plot_parser", parser)
    if not args.dir.is_dir():
        parser.error(f"DIR: expected a dataset folder of tumble sweep, got {str(args.dir)!r}")
    out = args.out or args.dir / "heatmaps.png"
    if out.suffix.lower() not in FORMATS:
        parser.error(f"--out: expected a .png or .html file name, got {str(out)!r}")
    if not out.parent.is_dir():
        parser.error(f"--out: expected a file in an existing folder, got {str(out)!r}")
    if args.x == args.y:
        parser.error(f"--y: expected an axis other than --x, got {args.y!r} for both")
    try:
        path = plot(
            args.dir, out, args.x, args.y, args.score, args.reduce, args.contour, args.columns,
            args.floor,
        )  # fmt: skip
    except InputError as exc:
        parser.error(str(exc))
    except ImportError as exc:
        parser.exit(
            2,
            f"tumble sweep-plot: error: needs the sweep and plot extras ({exc.name} is "
            "missing): pip install 'tumble[sweep,plot]'\n",
        )
    print(f"wrote {path}")
    return 0

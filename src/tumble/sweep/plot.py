"""``tumble sweep-plot``: heat maps of a sweep's scores over two grid axes, per method.

One panel per (score, method): the cell at ``(x, y)`` is the score reduced (``max`` by
default: the worst case) over every other grid value with those ``x`` and ``y``, coloured
by ``log10 |score|`` (errors span decades), blank where no case ran or the score is
``nan`` (no flip in the run, a spherical body...). PNG through matplotlib, interactive
HTML (hover shows the value) through plotly, by the output file's extension.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tumble import figures, rigid
from tumble._errors import InputError
from tumble._validate import as_choice, as_path, describe
from tumble.sweep import dataset, task

__all__ = ["AXES", "REDUCERS", "add_arguments", "heat_maps", "plot", "run"]

AXES = ("min_j", "median_j", "inv_inertia", "energy", "steps_per_rotation", "rotations")
"""Grid columns that can be a heat map's axis."""

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


def color_range(logs: Sequence[np.ndarray]) -> tuple[float, float]:
    """``(lo, hi)`` of the colour scale of ``log10`` grids: their finite span, with ``lo``
    at least ``log10(COLOR_FLOOR)`` and ``hi >= lo + COLOR_MIN_DECADES``."""
    finite = np.concatenate([g[np.isfinite(g)] for g in logs])
    floor = math.log10(COLOR_FLOOR)
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
) -> Path:
    """Draw the heat maps of the sweep dataset in folder ``out`` into ``file``.

    One row of panels per score, one column per method; ``file`` ends in ``.png``
    (matplotlib) or ``.html`` (plotly, self-contained). See :func:`heat_maps`.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    InputError
        ``out`` is not a sweep folder, ``file`` is not a path, has another extension or its
        folder does not exist; bad axes, scores or ``reduce``.
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
    chosen = list(task.SCORE_COLUMNS if scores is None else scores)
    methods, xs, ys, grids = heat_maps(dataset.read_results(out), x, y, chosen, reduce)
    if target.suffix.lower() == ".png":
        _png(target, x, y, chosen, methods, xs, ys, grids, reduce)
    else:
        _html(target, x, y, chosen, methods, xs, ys, grids, reduce)
    return target


def _png(
    target: Path, x: str, y: str, scores: list[str], methods: list[str], xs: list[Any],
    ys: list[Any], grids: dict[tuple[str, str], np.ndarray], reduce: str,
) -> None:  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nr, nc = len(scores), len(methods)
    fig, axes = plt.subplots(
        nr, nc, figsize=(1.0 + 2.4 * nc, 0.6 + 2.2 * nr), squeeze=False, constrained_layout=True
    )
    cmap = plt.get_cmap("viridis").with_extremes(bad="0.85")
    for i, s in enumerate(scores):
        logs = [_log(grids[(s, m)]) for m in methods]
        lo, hi = color_range(logs)
        image: Any = None
        for j, m in enumerate(methods):
            ax = axes[i, j]
            image = ax.imshow(
                np.ma.masked_invalid(logs[j]), origin="lower", aspect="auto", cmap=cmap,
                vmin=lo, vmax=hi, interpolation="nearest",
            )  # fmt: skip
            for axis, values in ((ax.xaxis, xs), (ax.yaxis, ys)):
                # At most about 11 labels per axis: every k-th value, the rest unlabelled.
                k = max(1, -(-len(values) // 11))
                axis.set_ticks(range(0, len(values), k))
                axis.set_ticklabels(_labels(np.array(values[::k], dtype=object)), fontsize=6)
            if i == 0:
                ax.set_title(m, fontsize=8)
            if i == nr - 1:
                ax.set_xlabel(x, fontsize=7)
            if j == 0:
                ax.set_ylabel(f"{s}\n{y}", fontsize=7)
        bar = fig.colorbar(image, ax=list(axes[i]), shrink=0.9)
        bar.set_label(f"log10 |{s}|", fontsize=7)
        bar.ax.tick_params(labelsize=6)
    fig.suptitle(f"tumble sweep: {reduce} over the other grid values", fontsize=9)
    fig.savefig(target, dpi=80)
    plt.close(fig)


def _html(
    target: Path, x: str, y: str, scores: list[str], methods: list[str], xs: list[Any],
    ys: list[Any], grids: dict[tuple[str, str], np.ndarray], reduce: str,
) -> None:  # fmt: skip
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    nr, nc = len(scores), len(methods)
    fig = make_subplots(
        rows=nr, cols=nc, column_titles=methods, row_titles=scores,
        horizontal_spacing=0.02, vertical_spacing=0.04,
    )  # fmt: skip
    xl, yl = _labels(np.array(xs, dtype=object)), _labels(np.array(ys, dtype=object))
    for i, s in enumerate(scores):
        logs = [_log(grids[(s, m)]) for m in methods]
        lo, hi = color_range(logs)
        for j, m in enumerate(methods):
            raw = grids[(s, m)]
            fig.add_trace(
                go.Heatmap(
                    z=logs[j], x=xl, y=yl,
                    customdata=raw, zmin=lo, zmax=hi,
                    coloraxis=f"coloraxis{i + 1}",
                    hovertemplate=f"{m}<br>{x}=%{{x}}<br>{y}=%{{y}}<br>{s} ({reduce})="
                    "%{customdata:.3e}<extra></extra>",
                ),
                row=i + 1, col=j + 1,
            )  # fmt: skip
        span = 1.0 / nr
        fig.update_layout(
            {
                f"coloraxis{i + 1}": {
                    "colorscale": "Viridis",
                    "colorbar": {
                        "title": f"log10 |{s}|", "len": span * 0.9,
                        "y": 1.0 - span * (i + 0.5), "x": 1.02,
                    },
                }
            }
        )  # fmt: skip
    fig.update_xaxes(title_text=x, row=nr)
    fig.update_yaxes(title_text=y, col=1)
    fig.update_layout(height=260 * nr + 80, width=max(700, 240 * nc + 160),
                      title=f"tumble sweep: {reduce} over the other grid values")  # fmt: skip
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
        path = plot(args.dir, out, args.x, args.y, args.score, args.reduce)
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

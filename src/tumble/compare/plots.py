"""The figures of ``tumble compare --plot``: :mod:`tumble.figures`' panels, drawn with
matplotlib (PNG) or plotly (self-contained HTML), as the lab page draws them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from tumble import figures, scenarios
from tumble._errors import InputError
from tumble._validate import as_int, as_path
from tumble._validate import describe as describe_value
from tumble.compare.table import check_results

__all__ = ["plot"]

#: The file types :func:`plot` writes, with the library that draws each.
PLOT_FORMATS = {".png": "matplotlib", ".html": "plotly"}

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
    results = check_results(results)
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

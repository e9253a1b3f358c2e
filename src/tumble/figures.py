"""The figures comparing integrators, as data: traces by name, panels on a grid, colours.

One spec, drawn three ways: ``tumble compare --plot`` as PNG (matplotlib) and as HTML
(plotly), both in :mod:`tumble.compare`, and the lab's page (``lab/static/lab-plots.js``,
which reads :func:`spec` from ``GET /api/figure`` and the traces from ``POST /api/simulate``).
None of the renderers names a quantity: they loop over :data:`PANELS`.

Traces
    :data:`TRACES`, keyed by name. A trace is one quantity per record of a trajectory
    (shape ``(n,)``, or ``(n, k)`` for a vector with ``k`` named components), computed by
    a function of ``(trajectory, inv_inertia, reference)`` that calls
    :mod:`tumble.diagnostics`: the figures have no formulas of their own. ``reference`` is
    the exact solution at the same records; traces that compare with it are not computed
    for the reference itself.
Panels
    :data:`PANELS` on a :data:`GRID` of rows and columns (compare's page). Each shows one
    quantity of every curve against another: ``x`` and ``y`` name a trace (``"L_norm"``),
    a component of one (``"L_body.z"``: a 2-D projection) or the time :data:`TIME`. The
    lab draws the panels of each :data:`FIGURES` entry in one plotly figure of its own,
    laid out on that figure's part of the grid; panels with the same ``x`` in the same
    columns share that axis (the same ``y`` in the same rows: that axis).
Colours
    :func:`colors`: one per method, from its position in :data:`tumble.rigid.METHODS`, so a
    method keeps its colour whatever subset is drawn; the exact reference is drawn black
    and dashed (:data:`REFERENCE`).

Adding a plotted quantity: a public function in :mod:`tumble.diagnostics` if it is new,
then its :class:`Trace` and a :class:`Panel` here. The lab's JSON, its page and both of
compare's formats follow.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tumble import diagnostics, rigid
from tumble._errors import InputError
from tumble._validate import as_float_array, as_int, describe
from tumble.trajectory import Trajectory

__all__ = [
    "BLOWUP",
    "DASHES",
    "FIGURES",
    "GRID",
    "PALETTE",
    "PANELS",
    "PLOTLY_CONFIG",
    "REFERENCE",
    "TIME",
    "TRACES",
    "Figure",
    "FigureData",
    "Panel",
    "Reference",
    "Trace",
    "colors",
    "curve",
    "dashes",
    "drawn_records",
    "figure_data",
    "palette",
    "series",
    "spec",
]

#: The name that the panels use for the record times.
TIME = "t"

Compute = Callable[[Trajectory, NDArray[np.float64], Trajectory | None], NDArray[np.float64]]


@dataclass(frozen=True)
class Trace:
    """A plotted quantity: one value (or one vector) per record of a trajectory.

    Attributes
    ----------
    name : str
        Its key in :data:`TRACES`, in the lab's JSON and in :attr:`Panel.x`/:attr:`Panel.y`.
    label : str
        What it is, for legends and listings.
    compute : callable
        ``compute(trajectory, inv_inertia, reference) -> (n,) or (n, k)`` float array, from
        :mod:`tumble.diagnostics`; ``reference`` is the exact run at the same records (None
        when the trajectory is the reference).
    components : str
        Names of the ``k`` columns of a vector trace, one letter each (``"xyz"``); empty
        for a scalar trace.
    of_reference : bool
        Computed for the reference too (False for a comparison with the reference).
    """

    name: str
    label: str
    compute: Compute
    components: str = ""
    of_reference: bool = True


def _required(reference: Trajectory | None) -> Trajectory:
    """The reference run of a trace that compares with it (``of_reference=False``)."""
    if reference is None:
        raise ValueError("this trace compares with the reference run; none was given")
    return reference


TRACES: Mapping[str, Trace] = {
    trace.name: trace
    for trace in (
        Trace(
            "energy_factor",
            "energy factor J_L = L_b·J L_b / |L|² = 2E/|L|² (diagnostics.energy_factor)",
            lambda tr, J, ref: diagnostics.energy_factor(tr, J),
        ),
        Trace(
            "L_norm",
            "|L| (diagnostics.momentum_norm)",
            lambda tr, J, ref: diagnostics.momentum_norm(tr, J),
        ),
        Trace(
            "attitude_error",
            "angle to the exact attitude, radians (diagnostics.attitude_deviation)",
            lambda tr, J, ref: diagnostics.attitude_deviation(tr, _required(ref)),
            of_reference=False,
        ),
        Trace(
            "L_world",
            "transverse world L = (L_x, L_y) (diagnostics.momentum_world)",
            lambda tr, J, ref: diagnostics.momentum_world(tr, J)[:, :2],
            components="xy",
        ),
        Trace(
            "L_body",
            "body-frame L_b along the principal axes (diagnostics.momentum_body)",
            lambda tr, J, ref: diagnostics.momentum_body(tr, J),
            components="xyz",
        ),
    )
}
"""Every plotted quantity, by name."""


@dataclass(frozen=True)
class Figure:
    """One of the lab's figures: a plotly figure holding the panels of this ``id``.

    ``wide``: across the page (else half its width, square); ``caption``: the text under it;
    ``note``: what the exact motion does there and what a good method looks like (the lab's
    "what am I seeing" line); ``forced_note``: the same under a torque, where the reference
    is an ODE solve and nothing need be conserved.
    """

    id: str
    caption: str
    wide: bool = False
    note: str = ""
    forced_note: str = ""


@dataclass(frozen=True)
class Panel:
    """One plot: ``y`` against ``x`` for every curve, at a place on :data:`GRID`.

    Attributes
    ----------
    id : str
        Unique; keys the axis ranges of :attr:`FigureData.ranges`.
    figure : str
        The :class:`Figure` of the lab that holds it.
    row, col, rowspan, colspan : int
        Cells of :data:`GRID`, row 0 at the top.
    x, y : str
        :data:`TIME`, a trace name, or ``"name.c"`` for component ``c`` of a vector trace.
    title, x_label, y_label : str
    log_y : bool
        Logarithmic ``y`` axis.
    equal_aspect : bool
        One unit of ``x`` as long as one of ``y`` (orbits keep their shape).
    window : str or None
        How the axis ranges are chosen (else from the data). ``"flat"``, a conserved
        scalar: the span of the curves that did not blow up, widened to at least ±0.1 %
        (:data:`FLAT_WINDOW`) about their median, so round-off is never magnified into
        apparent drift; ``"origin"``, a conserved vector that stays at the origin: the
        same square ``±max(1.05 max |v|, 0.1 % of the reference's |L|)`` on both axes;
        ``"reference"``, ``±1.15 max_t |v_ref|`` with ``v_ref`` the reference's vector
        trace on each axis (an orbit and the methods around it, not a blow-up).
    """

    id: str
    figure: str
    row: int
    col: int
    x: str
    y: str
    title: str
    x_label: str
    y_label: str
    rowspan: int = 1
    colspan: int = 1
    log_y: bool = False
    equal_aspect: bool = False
    window: str | None = None


#: Rows and columns of compare's page; each lab figure takes its panels' part of it.
GRID = (3, 4)

FIGURES = (
    Figure(
        "time",
        "Energy factor J_L = 2E/|L|², |L| and the attitude error against the reference "
        "(the exact motion; under a torque, an ODE solve); drag the range slider to zoom in "
        "time.",
        wide=True,
        note="Exact motion: J_L and |L| are constant (flat dashed lines) and the attitude "
        "error is zero. A good method stays flat in the top two panels (round-off is "
        "drawn in a ±0.1 % window, not magnified) and its attitude error grows slowly, "
        "like a power of dt. A method that blew up ends with a cross.",
        forced_note="Under a torque J_L and |L| change: the dashed line is the reference "
        "(a tight ODE solve), not a constant. A good method lies on it; the attitude error "
        "is the angle to the reference's attitude and grows like a power of dt.",
    ),
    Figure(
        "world",
        "World transverse momentum (L_x, L_y): should stay at the origin.",
        note="Exact motion: L is fixed in space along z, so this point never leaves the "
        "origin. A good method stays within the small square drawn at ±0.1 % of |L|; a "
        "curve that wanders means the spin axis drifts in the world.",
        forced_note="Under a torque world L moves (the torque is its rate of change): the "
        "dashed curve is the reference's path. A good method follows that path; an offset "
        "from it is error, not physics.",
    ),
    Figure(
        "body",
        "Body-frame L (axes of min, median, max J): closed loops for the exact motion; "
        "spirals mean energy drift.",
        note="Exact motion: L in the body moves on a closed loop (a polhode); near the "
        "separatrix it swaps sides (the Dzhanibekov flip). A good method retraces the "
        "dashed loop; drifting off it means energy drift, a shifted loop means a phase "
        "error only.",
        forced_note="Under a torque the body-frame L need not close: it follows the dashed "
        "reference (a tight ODE solve), spiralling in when the torque brakes the body. A "
        "good method retraces the reference's path.",
    ),
)

# The body-frame projections sit as in the article: (x, z) bottom right, (y, z) to its left
# sharing z, (x, y) above it sharing x.
PANELS = (
    Panel("energy_factor", "time", 0, 0, TIME, "energy_factor", "energy factor", "t",
          "energy factor J_L = 2E/|L|²", colspan=2, window="flat"),
    Panel("L_norm", "time", 1, 0, TIME, "L_norm", "|L|", "t", "|L|", colspan=2,
          window="flat"),
    Panel("attitude_error", "time", 2, 0, TIME, "attitude_error", "attitude error", "t",
          "attitude error (rad)", colspan=2, log_y=True),
    Panel("L_world", "world", 0, 2, "L_world.x", "L_world.y", "world L, transverse", "L_x",
          "L_y", colspan=2, equal_aspect=True, window="origin"),
    Panel("L_body_xy", "body", 1, 3, "L_body.x", "L_body.y", "body L (x, y)", "L_x (min J)",
          "L_y (median J)", equal_aspect=True, window="reference"),
    Panel("L_body_yz", "body", 2, 2, "L_body.y", "L_body.z", "body L (y, z)",
          "L_y (median J)", "L_z (max J)", equal_aspect=True, window="reference"),
    Panel("L_body_xz", "body", 2, 3, "L_body.x", "L_body.z", "body L (x, z)", "L_x (min J)",
          "L_z (max J)", equal_aspect=True, window="reference"),
)  # fmt: skip
"""Every panel, in drawing order (the lab's legend sits on the first panel's figure)."""


@dataclass(frozen=True)
class Reference:
    """The exact solution in the figures: the method whose run it is, and how it is drawn
    (its own run is not drawn again as a method)."""

    method: str
    label: str
    color: str
    dash: bool


REFERENCE = Reference("exact", "exact (reference)", "#000000", dash=True)

#: Colours of the first methods of :data:`tumble.rigid.METHODS`, in that order (the lab's
#: first palette, with ``momentum_first_symmetric`` moved off a blue next to
#: ``modified_jolt``'s; ``exact`` is black like the reference).
PALETTE = (
    "#d62728", "#ff7f0e", "#8c564b", "#bcbd22", "#1f77b4", "#17becf", "#2ca02c", "#9467bd",
    "#e377c2", "#7f7f7f", "#393b79", "#637939", "#000000", "#ad494a", "#7b4173",
)  # fmt: skip

#: Fraction of a turn between the hues of successive colours beyond :data:`PALETTE`: the
#: golden angle, so that any number of them stay apart.
_GOLDEN = (3.0 - math.sqrt(5.0)) / 2.0


#: Most colours :func:`palette` makes: far more than anyone tells apart in one figure.
MAX_COLORS = 10_000

#: Line styles (plotly's dash names) cycled over the methods, so that curves stay apart
#: for colour-blind readers too; the reference is ``"dash"`` and black.
DASHES = ("solid", "dot", "dashdot", "longdash", "longdashdot")

#: plotly's configuration for every figure tumble writes (the lab, ``compare --plot x.html``,
#: ``sweep-plot x.html``): no cloud button (``sendChartToCloud`` uploads the chart to
#: Plotly Cloud), no plotly logo; the camera button saves a PNG locally.
PLOTLY_CONFIG: Mapping[str, Any] = {
    "displaylogo": False,
    "showSendToCloud": False,
    "modeBarButtonsToRemove": ["sendDataToCloud", "sendChartToCloud"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def palette(n: int) -> list[str]:
    """``n`` distinct colours as ``"#rrggbb"``: :data:`PALETTE`, then golden-angle hues.

    A method added to the registry gets a colour without an edit here. ``n`` is at most
    :data:`MAX_COLORS`.
    """
    n = as_int(n, "n", minimum=0, maximum=MAX_COLORS)
    out = list(PALETTE[:n])
    for i in range(n - len(out)):
        # Two lightness levels so that hues that come close still differ.
        r, g, b = colorsys.hls_to_rgb((0.05 + i * _GOLDEN) % 1.0, 0.38 + 0.2 * (i % 2), 0.7)
        out.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return out


def colors() -> dict[str, str]:
    """The colour of each method of :data:`tumble.rigid.METHODS`, from its position there."""
    return dict(zip(rigid.METHODS, palette(len(rigid.METHODS)), strict=True))


def dashes() -> dict[str, str]:
    """The line style of each method of :data:`tumble.rigid.METHODS`: :data:`DASHES` in turn.

    Successive colours of the palette get different styles, so neighbours in the legend
    differ by more than hue.
    """
    return {m: DASHES[i % len(DASHES)] for i, m in enumerate(rigid.METHODS)}


def color(method: str) -> str:
    """The colour of ``method``: :func:`colors` for a registry method; for a composition
    ``"<base>:<scheme>"``, its base's hue at a lightness set by the scheme's place in
    :data:`tumble.rigid.COMPOSITIONS` (darker first), so a family reads as one."""
    info = rigid.check_method(method, "method")
    base = colors()[info.base]
    if info.base == info.name:
        return base
    k = list(rigid.COMPOSITIONS).index(info.name.split(":", 1)[1])
    h, _, s = colorsys.rgb_to_hls(*(int(base[i : i + 2], 16) / 255 for i in (1, 3, 5)))
    r, g, b = colorsys.hls_to_rgb(h, 0.25 + 0.5 * k / max(1, len(rigid.COMPOSITIONS) - 1), s)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


# --------------------------------------------------------------------------------------
# the data of one figure

Curve = dict[str, NDArray[np.float64]]

#: A run has blown up from its first record whose ``|L|`` leaves ``[|L_0| / BLOWUP,
#: BLOWUP |L_0|]`` (``|L|`` is conserved by the free motion) or whose state is not finite.
BLOWUP = 10.0


def drawn_records(trajectory: Trajectory, inv_inertia: ArrayLike) -> int:
    """Leading records of a one-body run that are drawn: those before it blew up.

    The finite records (:func:`tumble.diagnostics.finite_records`) up to the first whose
    ``|L|`` (:func:`tumble.diagnostics.momentum_norm`) is off the initial value by more
    than the factor :data:`BLOWUP` either way. Equals the number of records when the run
    did not blow up.
    """
    k = int(diagnostics.finite_records(trajectory))
    if k == 0:
        return 0
    norm = diagnostics.momentum_norm(trajectory.take(records=slice(k)), inv_inertia)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = norm / norm[0]
    off = np.flatnonzero(~((ratio <= BLOWUP) & (ratio >= 1.0 / BLOWUP)))
    return int(off[0]) if off.size else k


def curve(
    trajectory: Trajectory, inv_inertia: ArrayLike, reference: Trajectory | None = None
) -> Curve:
    """Every trace of one run, by name: shape ``(n,)`` or ``(n, k)``.

    ``reference`` is the exact run at the same records; without it the run *is* the
    reference and the traces that compare with it are left out. Records from the one where
    the run blew up on (:func:`drawn_records`) are NaN: the curve stops there.
    """
    _check_run(trajectory, "trajectory")
    if reference is not None:
        _check_run(reference, "reference")
    J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
    n = trajectory.t.shape[0]
    k = drawn_records(trajectory, J)
    finite = trajectory.take(records=slice(k))
    ref = None if reference is None else reference.take(records=slice(k))
    out = {}
    for name, trace in TRACES.items():
        if ref is None and not trace.of_reference:
            continue
        values = np.asarray(trace.compute(finite, J, ref), dtype=np.float64)
        padded = np.full((n, *values.shape[1:]), np.nan)
        padded[:k] = values
        out[name] = padded
    return out


def _check_run(x: Any, name: str) -> None:
    if not isinstance(x, Trajectory):
        raise InputError(f"{name}: expected a tumble Trajectory, got {describe(x)}")


def series(values: Mapping[str, Any], t: ArrayLike, ref: str) -> Any:
    """What ``ref`` (:attr:`Panel.x` or :attr:`Panel.y`) names in a curve, or None.

    ``t`` for :data:`TIME`; a component column of a vector trace for ``"name.c"``; None
    when the curve has no such trace (the reference has no ``attitude_error``).
    """
    if not isinstance(values, Mapping):
        raise InputError(f"values: expected a curve (a mapping of traces), got {describe(values)}")
    if not isinstance(ref, str):
        raise InputError(f"ref: expected a trace name, got {describe(ref)}")
    if ref == TIME:
        return t
    name, _, component = ref.partition(".")
    if name not in values:
        return None
    if not component:
        return values[name]
    return values[name][:, TRACES[name].components.index(component)]


@dataclass(frozen=True)
class FigureData:
    """Everything a renderer draws: the curves by method, the reference, the axis ranges.

    Attributes
    ----------
    t : ndarray, shape (n,)
        Record times, shared by every curve.
    methods : dict
        Method name -> :func:`curve` of its run.
    reference : dict
        :func:`curve` of the exact run.
    ranges : dict
        Panel id -> ``{"x": [lo, hi] or None, "y": ...}``: None lets the renderer fit the
        data (see :attr:`Panel.window`). Runs that blew up do not widen them: their curves
        leave the panel.
    blew_up : dict
        Method name -> the number of records drawn before it blew up, or None when it did
        not (:func:`drawn_records`).
    """

    t: NDArray[np.float64]
    methods: dict[str, Curve]
    reference: Curve
    ranges: dict[str, dict[str, list[float] | None]]
    blew_up: dict[str, int | None]


def figure_data(
    runs: Mapping[str, Trajectory], reference: Trajectory, inv_inertia: ArrayLike
) -> FigureData:
    """The traces of every run in ``runs`` (by method name) and of the exact ``reference``.

    All runs are recorded at the reference's times (the same case, ``dt`` and ``every``).
    """
    if not isinstance(runs, Mapping):
        raise InputError(f"runs: expected a mapping of method names to runs, got {describe(runs)}")
    _check_run(reference, "reference")
    methods = {name: curve(tr, inv_inertia, reference) for name, tr in runs.items()}
    n = reference.t.shape[0]
    drawn = {name: drawn_records(tr, inv_inertia) for name, tr in runs.items()}
    blew_up = {name: (None if k == n else k) for name, k in drawn.items()}
    ref = curve(reference, inv_inertia)
    kept = [c for name, c in methods.items() if blew_up[name] is None]
    ranges = {p.id: _window(p, [*kept, ref], ref) for p in PANELS}
    return FigureData(np.asarray(reference.t, dtype=np.float64), methods, ref, ranges, blew_up)


#: Smallest half-width of the window of a conserved quantity (``"flat"``, ``"origin"``),
#: relative to its value (``|L|`` for ``"origin"``).
FLAT_WINDOW = 1e-3
#: Margin added to a data span on each side, as a fraction of the span (as plotly's own).
MARGIN = 0.05
#: The "reference" window reaches this factor beyond the reference's largest vector.
REFERENCE_MARGIN = 1.15


def _finite(values: Iterable[Any]) -> NDArray[np.float64]:
    """The finite numbers among some arrays (None skipped), as one flat array."""
    parts = [np.ravel(v) for v in values if v is not None]
    a = np.concatenate(parts) if parts else np.zeros(0)
    return a[np.isfinite(a)]


def _window(
    panel: Panel, curves: Iterable[Curve], reference: Curve
) -> dict[str, list[float] | None]:
    """Axis ranges of ``panel`` by its :attr:`Panel.window` rule."""
    out: dict[str, list[float] | None] = {"x": None, "y": None}
    curves = list(curves)
    if panel.window == "flat":
        y = _finite(series(c, [], panel.y) for c in curves)
        if y.size:
            lo, hi = float(y.min()), float(y.max())
            pad = MARGIN * (hi - lo)
            mid = float(np.median(y))
            half = FLAT_WINDOW * abs(mid)
            out["y"] = [min(lo - pad, mid - half), max(hi + pad, mid + half)]
    elif panel.window == "origin":
        v = _finite(c[ref.partition(".")[0]] for c in curves for ref in (panel.x, panel.y))
        scale = float(np.nanmax(np.linalg.norm(reference["L_body"], axis=-1)))
        r = max((1 + MARGIN) * float(np.max(np.abs(v))) if v.size else 0.0, FLAT_WINDOW * scale)
        out["x"] = out["y"] = [-r, r]
    elif panel.window == "reference":
        for axis, ref in (("x", panel.x), ("y", panel.y)):
            norm = np.linalg.norm(reference[ref.partition(".")[0]], axis=-1)
            r = REFERENCE_MARGIN * float(np.nanmax(norm))
            out[axis] = [-r, r]
    elif panel.window is not None:
        raise ValueError(f"panel {panel.id!r}: unknown window {panel.window!r}")
    return out


def spec() -> dict[str, Any]:
    """The figure spec as JSON-ready data (the lab's ``GET /api/figure``).

    Keys: ``grid`` (rows, columns), ``time`` (:data:`TIME`), ``traces`` (name, label,
    components, of_reference), ``panels`` and ``figures`` (the fields of :class:`Panel`
    and :class:`Figure`), ``colors`` (:func:`colors`), ``dashes`` (:func:`dashes`),
    ``reference`` (the fields of :data:`REFERENCE`) and ``plotly_config``
    (:data:`PLOTLY_CONFIG`).
    """
    return {
        "grid": list(GRID),
        "time": TIME,
        "traces": [
            {
                "name": t.name,
                "label": t.label,
                "components": t.components,
                "of_reference": t.of_reference,
            }
            for t in TRACES.values()
        ],
        "panels": [asdict(p) for p in PANELS],
        "figures": [asdict(f) for f in FIGURES],
        "colors": colors(),
        "dashes": dashes(),
        "reference": asdict(REFERENCE),
        "plotly_config": dict(PLOTLY_CONFIG),
    }

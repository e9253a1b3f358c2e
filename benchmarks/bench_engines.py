"""Benchmark: the engine scorecard, every replica of a public physics engine's rotation update
scored on the motions players see (issue 28).

Rows: every replica of :data:`tumble.engines.ENGINES` (each engine and variant, in its
order), then tumble's ``momentum_first``, the reference line for the fix. Each replica's
record names its smallest fix (``fix``, in words) and the registry method that measures it
(``fix_method``); that method runs on the same cases in the same run.

Scenarios (:mod:`tumble.bodies`, real bodies given by their principal moments; the text of
each says where its numbers come from), each at ``RATES`` (30, 60 and 240 Hz) for ``SECONDS``
(60) simulated seconds, a record at every step:

- ``t-handle``: Dzhanibekov's T-handle spun about its stem (the median axis);
- ``racket``: a tennis racket thrown about its intermediate axis;
- ``stable-spin``: a phone spun flat, about its axis of largest inertia, with a 1 % wobble;
- ``symmetric-top``: Feynman's wobbling plate (a disc, a symmetric top);
- ``near-separatrix``: a 3:2:1 box with an energy 1e-3 below the separatrix;
- ``heavy-top``: the heavy top of ``tumble.scenarios.torque_case`` under gravity.

Measures (:func:`measure`), against the exact motion (``tumble.exact`` through the
``"exact"`` method) or, for the heavy top, the tight ODE solve ``tumble.torques.reference``
(both through :func:`tumble.scenarios.reference`) at every record:

- flips and flip period (the flipping scenarios): every flip found by
  :func:`tumble.diagnostics.first_flip_time`, restarted after each one, with a hysteresis
  band of ``FLIP_BAND`` times the exact motion's amplitude (so that the small swings of a
  run that has settled into another spin are no flips); the period is the mean time
  between the first and the last, against the exact ``T/2`` (:func:`tumble.exact.body_period`);
- ``|L|`` drift: ``(|L_k| - |L_ref,k|) / |L_ref,0|`` at the record where it is largest in
  magnitude (signed: grows or decays);
- energy drift: ``E_k / E_0 - 1`` at the record where it is largest in magnitude, with the
  potential energy of the heavy top (``tumble.torques.potential_energy``) added, so that
  the measure is a conserved quantity in every scenario;
- world ``L`` drift: the largest angle between ``L_w,k`` and ``L_w,ref,k``, degrees
  (``tumble.diagnostics.score``);
- attitude error: the largest angle between ``q_k`` and the reference, degrees
  (``tumble.diagnostics.score``);
- wobble (the stable spin): the largest angle between body ``L`` and the spin axis,
  degrees, against the exact motion's;
- blow-up: a non-finite state, or ``|L|`` more than doubled (``BLOWUP_MOMENTUM``; a method
  that keeps ``|L|`` cannot blow up, whatever its energy does);
- cost: ns per body-step, :func:`tumble.scenarios.stepping_time` (a batch of the case's
  body tiled to 200 000 body-steps, best of ``TIMING_RUNS``), one thread.

Verdicts: :data:`RULES`, code applied to the numbers (:func:`verdict`): each names the
measured failure and where it is worst, or "keeps the physics".

Writes the ``engines`` section of ``BENCHMARKS.md`` and the block between the scorecard
markers of ``docs/engines.md`` (the same text: the scenarios, the summary table, the rules,
the figure, the attitude errors per scenario), every number of every method, scenario and
rate to ``benchmarks/results/engines.csv``, and the figure
``docs/figures/engines-scorecard.png``. The full run takes a few minutes (one compiled loop
per method and torque structure, then 23 methods (the replicas, ``momentum_first`` and the
fix methods) x 6 scenarios x 3 rates).

Usage: ``tumble bench engines [--methods a,b] [--scenarios a,b] [--rates 30,60]
[--seconds S | --quick] [--no-timing] [--no-write] [--out DIR]``. ``--quick`` runs
``QUICK_SECONDS`` simulated seconds. Only the full run (every row, scenario and rate, 60 s,
timed) writes the repository's files; any run writes its CSV and figure into ``--out DIR``.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from _common import ROOT, machine_line, markdown_table, threads, write_section
from engines_scoring import (
    BLOWUP_MOMENTUM,
    FLIP_TOLERANCE,
    MAIN_RATE,
    MAX_FAILURES,
    RULES,
    STOPPED_PERIODS,
    SUMMARY_HEADER,
    Result,
    Row,
    deg_text,
    stopped,
    summary_row,
)
from tumble import bodies, diagnostics, engines, exact, rigid, scenarios, torques

RATES = (30, 60, 240)
SECONDS = 60.0
QUICK_SECONDS = 10.0
TIMING_RUNS = 3
RESULTS = ROOT / "benchmarks" / "results" / "engines.csv"
FIGURE = ROOT / "docs" / "figures" / "engines-scorecard.png"
REFERENCE_METHOD = "momentum_first"

# --------------------------------------------------------------------------------------
# rows


REFERENCE_ROW = Row(REFERENCE_METHOD, "tumble", False, "-", REFERENCE_METHOD)


def engine_rows() -> list[Row]:
    """The replicas of :data:`tumble.engines.ENGINES` in order, then the reference row."""
    rows = [
        Row(r.name, r.engine, bool(r.default), r.fix, r.fix_method)
        for r in engines.ENGINES.values()
    ]
    return [*rows, REFERENCE_ROW]


# --------------------------------------------------------------------------------------
# measures

#: A flip is counted when body ``L`` along the median axis swings from one side to the
#: other by at least this fraction of the exact motion's amplitude on each side: the
#: hysteresis band of :func:`tumble.diagnostics.first_flip_time`. Its own default (1e-3)
#: also counts the small swings of a run that has settled into a spin about another axis
#: (a dissipative method ends there), which are no flips.
FLIP_BAND = 0.5


def flip_times(
    t: np.ndarray, L_body: np.ndarray, inv_inertia: np.ndarray, band: float
) -> np.ndarray:
    """Every flip of one recorded body: :func:`tumble.diagnostics.first_flip_time`, run
    again from the first record after each flip it finds (the side it flipped to is then
    the starting side, and ``band`` is relative to ``|L|`` there). ``L_body`` of shape
    ``(n, 3)``, finite."""
    J = np.asarray(inv_inertia, dtype=float)[None]
    out: list[float] = []
    start = 0
    while start < len(t) - 1:
        f = float(diagnostics.first_flip_time(t[start:], L_body[start:, None], J, band)[0])
        if not math.isfinite(f):
            break
        out.append(f)
        start = int(np.searchsorted(t, f, side="right"))
    return np.array(out)


def flip_amplitude(L_body: np.ndarray, inv_inertia: np.ndarray) -> float:
    """Largest ``|L_b,m| / |L_b(t0)|`` over the records, ``m`` the median axis."""
    m = int(np.argsort(inv_inertia, kind="stable")[1])
    return float(np.max(np.abs(L_body[:, m])) / np.linalg.norm(L_body[0]))


def mean_period(times: np.ndarray) -> float:
    """Mean time between the first and the last of ``times``; nan for fewer than two."""
    return float((times[-1] - times[0]) / (len(times) - 1)) if len(times) >= 2 else math.nan


def signed_worst(x: np.ndarray) -> float:
    """The entry of ``x`` largest in magnitude, with its sign (nan for an empty array)."""
    return float(x[np.argmax(np.abs(x))]) if x.size else math.nan


def total_energy(tr: rigid.Trajectory, sc: bodies.Spin, n: int) -> np.ndarray:
    """Kinetic energy of one body's first ``n`` records, plus the potential energy of a
    conservative torque."""
    e = np.asarray(tr.energy, dtype=float).reshape(-1)[:n]
    if sc.torque is not None:
        q = tr.q.reshape(-1, 4)[:n]
        e = e + np.asarray(torques.potential_energy(sc.torque, q), dtype=float).reshape(-1)
    return e


def wobble(L_body: np.ndarray, inv_inertia: np.ndarray) -> np.ndarray:
    """Angle (degrees) of body ``L`` from the spin axis, the axis of smallest ``J``."""
    axis = int(np.argmin(inv_inertia))
    cos = L_body[:, axis] / np.linalg.norm(L_body, axis=1)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


@dataclass
class Reference:
    """The reference motion of a scenario at one rate, and its own measures."""

    trajectory: rigid.Trajectory
    flips: int = 0
    flip_period: float = math.nan
    flip_band: float = math.nan
    wobble: float = math.nan


def reference(sc: bodies.Spin, case: scenarios.Case) -> Reference:
    """The exact motion (or the ODE reference, forced) at every record, and its flips (the
    period ``T/2`` from :func:`tumble.exact.body_period`) or its largest wobble."""
    ref = Reference(scenarios.reference(case))
    L_body = ref.trajectory.L_body.reshape(-1, 3)
    if sc.kind == "flip":
        ref.flip_band = FLIP_BAND * flip_amplitude(L_body, sc.inv_inertia)
        ref.flips = len(flip_times(ref.trajectory.t, L_body, sc.inv_inertia, ref.flip_band))
        ref.flip_period = 0.5 * float(exact.body_period(sc.q0, sc.omega0, sc.inv_inertia))
    if sc.kind == "stable":
        ref.wobble = float(np.max(wobble(L_body, sc.inv_inertia)))
    return ref


def measure(
    method: str, sc: bodies.Spin, case: scenarios.Case, ref: Reference, timing: bool = True
) -> Result:
    """Run ``method`` on ``case`` (a record every step) and measure it against ``ref``."""
    tr = scenarios.simulate(case, method)
    res = Result(method, sc.key, round(1.0 / case.dt), case.duration)
    s = diagnostics.score(tr, sc.inv_inertia, ref.trajectory, drift="reference")
    res.diverged_at = float(s.diverged_at)
    res.direction_drift_deg = math.degrees(float(s.direction_drift))
    res.attitude_error_deg = math.degrees(float(s.attitude_error_max))
    n = int(diagnostics.finite_records(tr))
    L = np.linalg.norm(tr.L.reshape(-1, 3)[:n], axis=1)
    L_ref = np.linalg.norm(ref.trajectory.L.reshape(-1, 3)[:n], axis=1)
    e = total_energy(tr, sc, n)
    with np.errstate(all="ignore"):
        res.momentum_drift = signed_worst((L - L_ref) / L_ref[0])
        res.energy_drift = signed_worst(e / e[0] - 1.0)
    L_body = tr.L_body.reshape(-1, 3)[:n]
    if sc.kind == "flip":
        times = flip_times(tr.t[:n], L_body, sc.inv_inertia, ref.flip_band)
        res.flips, res.flips_exact = len(times), ref.flips
        res.last_flip = float(times[-1]) if len(times) else math.nan
        res.flip_period, res.flip_period_exact = mean_period(times), ref.flip_period
        res.flip_period_error = res.flip_period / ref.flip_period - 1.0
    if sc.kind == "stable":
        res.wobble_deg = float(np.max(wobble(L_body, sc.inv_inertia)))
        res.wobble_exact_deg = ref.wobble
    res.blew_up = n < len(tr.t) or not res.momentum_drift <= BLOWUP_MOMENTUM
    if timing:
        with threads(1):
            res.ns_per_step = 1e9 * scenarios.stepping_time(
                case.q0[None], case.omega0[None], case.inv_inertia[None], case.dt,
                case.steps, method, TIMING_RUNS, torque=case.torque,
            )  # fmt: skip
    return res


def run(
    methods: Sequence[str],
    keys: Sequence[str],
    rates: Sequence[int],
    seconds: float,
    timing: bool = True,
    progress: Callable[[str], None] = print,
) -> list[Result]:
    """Every method on every scenario at every rate."""
    out = []
    for key in keys:
        sc = bodies.spin(key)
        for rate in rates:
            case = sc.case(rate, seconds)
            t0 = time.perf_counter()
            ref = reference(sc, case)
            progress(f"{key} at {rate} Hz: reference in {time.perf_counter() - t0:.1f} s")
            for m in methods:
                t0 = time.perf_counter()
                r = measure(m, sc, case, ref, timing)
                out.append(r)
                progress(
                    f"  {m}: flips {r.flips} ({r.flip_period_error:+.2%}), |L| "
                    f"{r.momentum_drift:+.1e}, E {r.energy_drift:+.1e}, L_w "
                    f"{r.direction_drift_deg:.2g}°, q {r.attitude_error_deg:.3g}°, "
                    f"{'blows up, ' if r.blew_up else ''}{r.ns_per_step:.0f} ns/step "
                    f"[{time.perf_counter() - t0:.1f} s]"
                )
    return out


def by_method(results: list[Result]) -> dict[str, list[Result]]:
    out: dict[str, list[Result]] = {}
    for r in results:
        out.setdefault(r.method, []).append(r)
    return out


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table whose cells may contain ``|`` (``|L|``): escaped."""
    return markdown_table(
        [h.replace("|", "\\|") for h in header],
        [[str(c).replace("|", "\\|") for c in row] for row in rows],
    )


def summary_table(rows: list[Row], results: list[Result]) -> str:
    groups = by_method(results)
    table = [summary_row(row, groups[row.name], groups[row.fix_method]) for row in rows]
    return _table(SUMMARY_HEADER, table)


def attitude_table(rows: list[Row], results: list[Result], keys: Sequence[str]) -> str:
    """The largest attitude error over the run at ``MAIN_RATE``, per row and scenario."""
    groups = by_method(results)
    table = []
    for row in rows:
        at = {r.scenario: r for r in groups[row.name] if r.rate == MAIN_RATE}
        table.append([f"`{row.name}`", *(deg_text(at[k].attitude_error_deg) for k in keys)])
    return _table(["replica", *keys], table)


def scenario_table(keys: Sequence[str], results: list[Result]) -> str:
    """Each scenario's body and state, and what the exact motion does in the run."""
    rows = []
    for k in keys:
        sc = bodies.spin(k)
        r = next(r for r in results if r.scenario == k)
        if sc.kind == "flip":
            exact_motion = (
                f"flips every {r.flip_period_exact:.3g} s ({r.flips_exact} flips in "
                f"{r.seconds:g} s)"
            )
        elif sc.kind == "stable":
            exact_motion = f"wobbles by {r.wobble_exact_deg:.2g}° at most"
        elif sc.kind == "top":
            exact_motion = "precesses steadily (no flip)"
        else:
            exact_motion = "precesses and nods (reference: `tumble.torques.reference`)"
        rows.append([f"`{k}`", sc.title, sc.text, exact_motion])
    return _table(["scenario", "what", "body and initial state", "exact motion"], rows)


def check_complete(
    rows: list[Row], results: list[Result], keys: Sequence[str], rates: Sequence[int]
) -> None:
    """Raise if a row or its fix method misses a scenario or a rate (the issue: "every
    engine row has every scenario and rate")."""
    have = {(r.method, r.scenario, r.rate) for r in results}
    missing = [
        (m, k, f)
        for row in rows
        for m in (row.name, row.fix_method)
        for k in keys
        for f in rates
        if (m, k, f) not in have
    ]
    if missing:
        raise RuntimeError(f"scorecard incomplete: no result for {missing[:5]}")


CSV_FIELDS = [f.name for f in fields(Result)]


def write_csv(results: list[Result], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in results:
            w.writerow([_csv_value(getattr(r, k)) for k in CSV_FIELDS])


def _csv_value(x: object) -> object:
    if isinstance(x, float):
        return "" if math.isnan(x) else f"{x:.6g}"
    return "" if x is None else x


# --------------------------------------------------------------------------------------
# the figure


def plot(rows: list[Row], results: list[Result], rates: Sequence[int], path: Path) -> None:
    """One panel per engine: the worst flip period error over the flipping scenarios
    against the rate, one line per replica, momentum-first dashed grey in every panel; a
    run that does not flip (or stops) is drawn in the band at the top, a rate at which the
    replica blows up in some scenario as a cross."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = by_method(results)
    engines: dict[str, list[Row]] = {}
    for row in rows:
        if row.name != REFERENCE_METHOD:
            engines.setdefault(row.engine, []).append(row)
    top, floor = 5.0, 1e-5

    def curve(name: str) -> tuple[list[float], list[bool]]:
        ys, blown = [], []
        for f in rates:
            at = [r for r in groups[name] if r.rate == f]
            flipping = [r for r in at if r.flips is not None]
            stuck = any((r.flips_exact and r.flips < 2) or stopped(r) for r in flipping)
            worst = max((abs(r.flip_period_error) for r in flipping), default=math.nan)
            ys.append(top if stuck or not worst < top else max(worst, floor))
            blown.append(any(r.blew_up for r in at))
        return ys, blown

    ncol = 3
    nrow = -(-len(engines) // ncol)
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(3.4 * ncol, 2.5 * nrow + 0.5), dpi=90, sharex=True,
        sharey=True, layout="constrained", squeeze=False,
    )  # fmt: skip
    ref_y, _ = curve(REFERENCE_METHOD)
    styles = [("o", "-"), ("s", "--"), ("^", "-."), ("D", ":")]
    for i, (ax, (engine, members)) in enumerate(zip(axes.flat, engines.items(), strict=False)):
        ax.axhspan(floor / 2, FLIP_TOLERANCE, color="0.92", lw=0)
        ax.axhspan(top / 2, top * 3, color="#f4d4d4", lw=0)
        ax.plot(rates, ref_y, color="0.45", ls=(0, (4, 2)), lw=1.3)
        ends: list[tuple[float, str, Any]] = []
        for k, row in enumerate(members):
            ys, blown = curve(row.name)
            marker, ls = styles[k % len(styles)]
            (line,) = ax.plot(rates, ys, ls=ls, marker=marker, ms=4.5, lw=1.6)
            bx = [x for x, b in zip(rates, blown, strict=True) if b]
            by = [y for y, b in zip(ys, blown, strict=True) if b]
            ax.plot(bx, by, "x", color=line.get_color(), ms=9, mew=2)
            label = row.name.split("_", 1)[1] if "_" in row.name else row.name
            if len(label) > 18:  # Bepu's long names: two lines
                cut = label.rindex("_", 0, 18) + 1
                label = label[:cut] + "\n" + label[cut:]
            ends.append((ys[-1], label, line.get_color()))
        ax.set_title(engine, fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(rates[0] / 1.15, rates[-1] * 9)
        ax.set_xticks(list(rates), [str(f) for f in rates])
        ax.minorticks_off()
        ax.set_ylim(floor / 2, top * 3)
        _label_ends(ax, ends, rates[-1] * 1.15)
        if i + ncol >= len(engines):  # no panel below: the rate axis shows here
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("step rate (Hz)")
    for ax in axes[:, 0]:
        ax.set_ylabel("|flip period error|")
    for ax in axes.flat[len(engines) :]:
        ax.axis("off")
    fig.suptitle(
        f"Worst |flip period error| over the T-handle, racket and near-separatrix runs "
        f"({SECONDS:g} s each)\nred band: does not flip or stops; grey band: within "
        f"{100 * FLIP_TOLERANCE:g} %; ×: blows up (some scenario); dashed grey: "
        f"{REFERENCE_METHOD}; below {floor:g}: drawn at {floor:g}",
        fontsize=9,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    plt.close(fig)


def _label_ends(ax: Any, ends: list[tuple[float, str, Any]], x: float) -> None:
    """Name each line at its right end; lines ending at the same height share one label,
    and labels closer than ``GAP`` decades are pushed apart."""
    gap = 0.45
    groups: list[tuple[float, list[str], Any]] = []
    for y, label, color in sorted(ends, key=lambda e: e[0]):
        if groups and abs(math.log10(y) - math.log10(groups[-1][0])) < 0.05:
            groups[-1][1].append(label)
        else:
            groups.append((y, [label], color))
    heights = [math.log10(y) for y, _, _ in groups]
    for k in range(1, len(heights)):
        heights[k] = max(heights[k], heights[k - 1] + gap)
    # The top group's text stays inside the axes: shift every label down if needed.
    lines = sum(len(label.splitlines()) for label in groups[-1][1]) if groups else 0
    over = heights[-1] + 0.28 * lines - math.log10(ax.get_ylim()[1]) if groups else 0.0
    heights = [h - max(over, 0.0) for h in heights]
    for h, (_, labels, color) in zip(heights, groups, strict=True):
        color = color if len(labels) == 1 else "0.2"
        ax.text(x, 10**h, "\n".join(labels), color=color, fontsize=7.5, va="center")


# --------------------------------------------------------------------------------------
# the sections

DOCS = ROOT / "docs" / "engines.md"
DOCS_START = "<!-- scorecard: written by tumble bench engines -->"
DOCS_END = "<!-- scorecard end -->"


def section(
    rows: list[Row], results: list[Result], keys: Sequence[str], rates: Sequence[int],
    seconds: float, wall: float, root: str, figures: str,
) -> str:  # fmt: skip
    """The scorecard's text; ``root`` and ``figures`` lead the links to the repository's
    files and to the figure (from ``BENCHMARKS.md`` or from ``docs/``)."""
    rules = "\n".join(f"{i}. **{r.name}**: {r.text}." for i, r in enumerate(RULES, 1))
    return f"""Every replica of `tumble.engines.ENGINES` (each engine's rotation update, see
the records for the source lines), and tumble's `{REFERENCE_METHOD}`, run each scenario at
{", ".join(map(str, rates))} Hz for {seconds:g} simulated seconds (a record every step),
scored against the exact motion (`tumble.exact`) or, for the heavy top, the tight ODE solve
(`tumble.torques.reference`). Float64, no damping, the engines' own substeps and the clamps
inside their rotation updates.

{scenario_table(keys, results)}

How to read the table: each cell is the value at {MAIN_RATE} Hz, then in brackets the worst
over all rates when it differs; drifts are the largest over the run, signed (`+` grows).
**Flip period error**: the mean time between the first and the last flip (flips found by
`tumble.diagnostics.first_flip_time`, restarted after each one, band {FLIP_BAND:g} of the
exact amplitude) against the exact `T/2`, worst of the three flipping scenarios; "no flip":
fewer than two flips; "stops": no flip in the last {STOPPED_PERIODS:g} periods. **\\|L\\|,
world L drift**: torque-free scenarios. **Energy**: `E/E0 - 1` (the heavy top's with its
potential energy). **Wobble**: the largest angle of body L from the stable spin's axis
(exact: {_exact_wobble(results)}). **Heavy top**: the largest angle between world L and the
reference's. **ns/step**: median over the torque-free runs of
`tumble.scenarios.stepping_time` (the body tiled to 200 000 body-steps, best of
{TIMING_RUNS}, one thread); the machine is shared, expect ±30 %.

{summary_table(rows, results)}

**Verdicts** are computed from the numbers (`benchmarks/bench_engines.py`, `RULES`): a row
"keeps the physics" when it passes every check below, at every rate unless said; otherwise
the verdict names the first {MAX_FAILURES} failed checks in this order, each at its worst
case.

{rules}

The smallest fix is each record's `fix`, measured by running its `fix_method` on the same
cases in the same run.

![engine scorecard]({figures}engines-scorecard.png)

Largest attitude error over the run at {MAIN_RATE} Hz, per scenario (180° is a lost phase):

{attitude_table(rows, results, keys)}

Every number of every replica, scenario and rate:
[`benchmarks/results/engines.csv`]({root}benchmarks/results/engines.csv). The run
(`tumble bench engines`) took {wall / 60:.1f} min of wall time."""


def _exact_wobble(results: list[Result]) -> str:
    w = [r.wobble_exact_deg for r in results if math.isfinite(r.wobble_exact_deg)]
    return f"{w[0]:.2g}°" if w else "-"


def write_docs(body: str) -> None:
    """Replace the scorecard block of ``docs/engines.md``; the first time, put it under the
    "## Scorecard" heading (added at the end if missing; the file too). The other sections
    are not touched."""
    block = f"{DOCS_START}\n{body.strip()}\n{DOCS_END}"
    text = DOCS.read_text() if DOCS.exists() else "# Engines\n"
    heading = "\n## Scorecard\n"
    if DOCS_START in text and DOCS_END in text:
        head, rest = text.split(DOCS_START, 1)
        text = head + block + rest.split(DOCS_END, 1)[1]
    elif heading in text:
        head, rest = text.split(heading, 1)
        text = f"{head}{heading}\n{block}\n{rest}"
    else:
        text = f"{text.rstrip()}\n{heading}\n{block}\n"
    DOCS.write_text(text)


# --------------------------------------------------------------------------------------
# the command


def _list(text: str, what: str, parser: argparse.ArgumentParser) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        parser.error(f"--{what}: expected a comma-separated list, got {text!r}")
    if len(set(items)) != len(items):
        parser.error(f"--{what}: expected distinct names, got {text!r}")
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tumble bench engines", description=__doc__.split("\n\n")[0].replace("\n", " ")
    )
    parser.add_argument("--methods", help="registry methods to score (default: every replica "
                        "and the reference); each row's fix method runs too")  # fmt: skip
    parser.add_argument("--scenarios", default=",".join(bodies.KEYS), help="(%(default)s)")
    parser.add_argument("--rates", default=",".join(map(str, RATES)), help="Hz (%(default)s)")
    parser.add_argument("--seconds", type=float, help=f"simulated time ({SECONDS:g})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SECONDS:g} simulated s")
    parser.add_argument("--no-timing", action="store_true", help="leave ns/step out")
    parser.add_argument("--no-write", action="store_true", help="print only, write no file")
    parser.add_argument("--out", type=Path, help="write the CSV and the figure into this "
                        "folder, and not BENCHMARKS.md or docs")  # fmt: skip
    args = parser.parse_args(argv)

    all_rows = engine_rows()
    if args.methods is None:
        rows = all_rows
    else:
        known = {r.name: r for r in all_rows}
        rows = []
        for m in _list(args.methods, "methods", parser):
            if m not in rigid.METHODS:
                parser.error(f"--methods: expected names from tumble.rigid.METHODS, got {m!r}")
            rows.append(known.get(m, Row(m, "-", False, "-", m)))
    keys = _list(args.scenarios, "scenarios", parser)
    for k in keys:
        if k not in bodies.KEYS:
            parser.error(f"--scenarios: expected names from {', '.join(bodies.KEYS)}, got {k!r}")
    rates: list[int] = []
    for f in _list(args.rates, "rates", parser):
        if not f.isdigit() or not 1 <= int(f) <= 100_000:
            parser.error(f"--rates: expected whole numbers of Hz in 1..100000, got {f!r}")
        rates.append(int(f))
    if args.quick and args.seconds is not None:
        parser.error("--quick, --seconds: expected one of them, got both")
    seconds = QUICK_SECONDS if args.quick else SECONDS if args.seconds is None else args.seconds
    if not 0 < seconds <= 3600:
        parser.error(f"--seconds: expected a duration in (0, 3600], got {seconds:g}")
    methods = list(dict.fromkeys([r.name for r in rows] + [r.fix_method for r in rows]))
    full = (
        rows == all_rows and keys == list(bodies.KEYS) and rates == list(RATES)
        and seconds == SECONDS and not args.no_timing
    )  # fmt: skip

    start = time.perf_counter()
    results = run(methods, keys, rates, seconds, timing=not args.no_timing)
    wall = time.perf_counter() - start
    check_complete(rows, results, keys, rates)
    print(summary_table(rows, results))
    print(f"\n{wall:.0f} s of wall time")
    if args.no_write:
        return 0
    if args.out is not None:
        write_csv(results, args.out / "engines.csv")
        plot(rows, results, rates, args.out / "engines-scorecard.png")
        return 0
    if not full:
        print("a subset (methods, scenarios, rates, time or no timing): nothing written; "
              "--out DIR writes its CSV and figure there")  # fmt: skip
        return 0
    write_csv(results, RESULTS)
    plot(rows, results, rates, FIGURE)
    heading = "## Engine scorecard (`tumble bench engines`)\n\n"
    text = section(rows, results, keys, rates, seconds, wall, "", "docs/figures/")
    write_section("engines", heading + text)
    body = section(rows, results, keys, rates, seconds, wall, "../", "figures/")
    write_docs(f"{body}\n\n_Measured {machine_line()}._")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

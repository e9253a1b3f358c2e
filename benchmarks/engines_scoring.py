"""The engine scorecard's records and verdicts (``benchmarks/bench_engines.py`` runs it): a
:class:`Row` per replica, a :class:`Result` per method, scenario and rate, the rules that
turn the numbers into a one-line verdict (:data:`RULES`, :func:`verdict`), and the cells of
the summary table, the fix column's measured gain among them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: The rate of the summary's first number in each cell (the worst rate follows it).
MAIN_RATE = 60


@dataclass(frozen=True)
class Row:
    """One line of the scorecard: a registry method, its engine and its smallest fix."""

    name: str
    engine: str
    default: bool
    fix: str
    fix_method: str


@dataclass
class Result:
    """One method on one scenario at one rate: a line of the results CSV. Drifts are
    signed (the value largest in magnitude over the run), angles in degrees."""

    method: str
    scenario: str
    rate: int
    seconds: float
    flips: int | None = None
    flips_exact: int | None = None
    last_flip: float = math.nan
    flip_period: float = math.nan
    flip_period_exact: float = math.nan
    flip_period_error: float = math.nan
    momentum_drift: float = math.nan
    energy_drift: float = math.nan
    direction_drift_deg: float = math.nan
    attitude_error_deg: float = math.nan
    wobble_deg: float = math.nan
    wobble_exact_deg: float = math.nan
    diverged_at: float = math.nan
    blew_up: bool = False
    ns_per_step: float = math.nan


# --------------------------------------------------------------------------------------
# verdicts

#: ``|L|`` more than doubled (or a non-finite state) is a blow-up.
BLOWUP_MOMENTUM = 1.0
#: A run has stopped flipping when its last flip is more than this many flip periods (its
#: own or the exact one, the longer) before the end.
STOPPED_PERIODS = 2.0
WOBBLE_TOLERANCE = 2.0
MOMENTUM_TOLERANCE = 1e-3
DIRECTION_TOLERANCE_DEG = 1.0
ENERGY_TOLERANCE = 0.01
FLIP_TOLERANCE = 0.01
HEAVY_TOP_TOLERANCE_DEG = 10.0
#: The accuracy rules (flip period, heavy top) apply from this rate up: games step at
#: 60 Hz; at 30 Hz first-order methods are a few per cent off the flip period.
ACCURACY_RATE = MAIN_RATE


@dataclass(frozen=True)
class Rule:
    """A check of all of one method's results. ``failure`` returns the measured failure in
    words, naming the case where its measure is worst, or None when the check passes."""

    name: str
    text: str
    failure: Callable[[list[Result]], str | None]


def _where(r: Result) -> str:
    return f"{r.scenario} at {r.rate} Hz"


def _worst(results: list[Result], value: Callable[[Result], float]) -> Result | None:
    """The result of largest finite ``value`` (the higher rate on a tie), or None."""
    finite = [r for r in results if math.isfinite(value(r))]
    return max(finite, key=lambda r: (value(r), r.rate)) if finite else None


def _torque_free(results: list[Result]) -> list[Result]:
    return [r for r in results if r.scenario != "heavy-top"]


def _blows_up(results: list[Result]) -> str | None:
    bad = [r for r in results if r.blew_up]
    if not bad:
        return None
    r = max(bad, key=lambda r: r.rate)
    if math.isfinite(r.diverged_at):
        return f"blows up ({_where(r)}: not finite from t = {r.diverged_at:.3g} s)"
    return f"blows up ({_where(r)}: |L| ×{1 + r.momentum_drift:.2g})"


def stopped(r: Result) -> bool:
    if r.flips is None or not r.flips_exact or r.flips < 2:
        return False
    gap = STOPPED_PERIODS * max(r.flip_period, r.flip_period_exact)
    return r.seconds - r.last_flip > gap


def _flips(results: list[Result]) -> str | None:
    none = [r for r in results if r.flips is not None and r.flips_exact and r.flips < 2]
    if none:
        r = max(none, key=lambda r: (-r.flips, r.rate))
        return (
            f"does not flip ({_where(r)}: {r.flips} flip{'' if r.flips == 1 else 's'} in "
            f"{r.seconds:g} s, exact "
            f"{r.flips_exact})"
        )
    ended = [r for r in results if stopped(r)]
    if ended:
        r = max(ended, key=lambda r: (-r.last_flip, r.rate))
        return (
            f"stops flipping ({_where(r)}: {r.flips} flips, the last at t = "
            f"{r.last_flip:.3g} s; exact {r.flips_exact})"
        )
    return None


def _stable(results: list[Result]) -> str | None:
    r = _worst(results, lambda r: r.wobble_deg / r.wobble_exact_deg)
    if r is None or r.wobble_deg <= WOBBLE_TOLERANCE * r.wobble_exact_deg:
        return None
    what = "turns the stable spin over" if r.wobble_deg > 90 else "the stable spin wobbles"
    return f"{what} (wobble {r.wobble_exact_deg:.2g}° → {r.wobble_deg:.3g}° at {r.rate} Hz)"


def _momentum(results: list[Result]) -> str | None:
    r = _worst(_torque_free(results), lambda r: abs(r.momentum_drift))
    if r is None or abs(r.momentum_drift) < MOMENTUM_TOLERANCE:
        return None
    return f"|L| {_rel(r.momentum_drift)} ({_where(r)})"


def _direction(results: list[Result]) -> str | None:
    r = _worst(_torque_free(results), lambda r: r.direction_drift_deg)
    if r is None or r.direction_drift_deg < DIRECTION_TOLERANCE_DEG:
        return None
    return f"world L drifts {deg_text(r.direction_drift_deg)} ({_where(r)})"


def _energy(results: list[Result]) -> str | None:
    r = _worst(results, lambda r: abs(r.energy_drift))
    if r is None or abs(r.energy_drift) < ENERGY_TOLERANCE:
        return None
    return f"energy {_rel(r.energy_drift)} ({_where(r)})"


def _accurate(results: list[Result]) -> list[Result]:
    return [r for r in results if r.rate >= ACCURACY_RATE]


def _period(results: list[Result]) -> str | None:
    r = _worst(_accurate(results), lambda r: abs(r.flip_period_error))
    if r is None or abs(r.flip_period_error) < FLIP_TOLERANCE:
        return None
    return f"flip period {_pct(r.flip_period_error)} ({_where(r)})"


def _heavy_top(results: list[Result]) -> str | None:
    top = [r for r in _accurate(results) if r.scenario == "heavy-top"]
    r = _worst(top, lambda r: r.direction_drift_deg)
    if r is None or r.direction_drift_deg < HEAVY_TOP_TOLERANCE_DEG:
        return None
    return f"heavy top's L {deg_text(r.direction_drift_deg)} off the reference ({r.rate} Hz)"


RULES = (
    Rule("blow-up", f"a non-finite state, or |L| above {1 + BLOWUP_MOMENTUM:g}x its "
         "initial (heavy top: reference) value", _blows_up),
    Rule("flips", "fewer than 2 flips where the exact motion flips, or no flip in the last "
         f"{STOPPED_PERIODS:g} flip periods", _flips),
    Rule("stable spin", f"the stable spin's wobble above {WOBBLE_TOLERANCE:g}x the exact "
         "motion's", _stable),
    Rule("|L|", f"|L| drift of {100 * MOMENTUM_TOLERANCE:g} % or more, torque-free", _momentum),
    Rule("world L", f"world L drift of {DIRECTION_TOLERANCE_DEG:g}° or more, torque-free",
         _direction),
    Rule("energy", f"energy drift of {100 * ENERGY_TOLERANCE:g} % or more (heavy top: with the "
         "potential)", _energy),
    Rule("flip period", f"flip period error of {100 * FLIP_TOLERANCE:g} % or more at "
         f"{ACCURACY_RATE} Hz or above", _period),
    Rule("heavy top", f"world L {HEAVY_TOP_TOLERANCE_DEG:g}° or more off the "
         f"reference at {ACCURACY_RATE} Hz or above", _heavy_top),
)  # fmt: skip
"""The checks, in order of severity; all but the last two apply at every rate."""

MAX_FAILURES = 2


def verdict(results: list[Result]) -> str:
    """The first ``MAX_FAILURES`` failures of :data:`RULES` in order (and how many more),
    or "keeps the physics" with the lowest rate from which the flip period is within
    ``FLIP_TOLERANCE`` at every rate."""
    failures = [f for rule in RULES if (f := rule.failure(results)) is not None]
    if failures:
        more = len(failures) - MAX_FAILURES
        return "; ".join(failures[:MAX_FAILURES]) + (f"; {more} more" if more > 0 else "")
    rates = sorted({r.rate for r in results})
    good = [
        f
        for f in rates
        if all(
            abs(r.flip_period_error) < FLIP_TOLERANCE
            for r in results
            if r.rate >= f and math.isfinite(r.flip_period_error)
        )
    ]
    if good and any(math.isfinite(r.flip_period_error) for r in results):
        within = f"{100 * FLIP_TOLERANCE:g} %"
        return f"keeps the physics (flip period within {within} from {good[0]} Hz)"
    return "keeps the physics"


# --------------------------------------------------------------------------------------
# the tables


def _g(x: float, sign: str = "") -> str:
    """Two significant digits, whole numbers from 100 up (no exponent)."""
    return f"{x:{sign}.0f}" if abs(x) >= 100 else f"{x:{sign}.2g}"


def _rel(x: float) -> str:
    """A relative change: ``+3e-15``, ``-73 %``, ``×4e+05``."""
    if not math.isfinite(x):
        return "-"
    if abs(x) < 1e-3:
        return f"{x:+.0e}"
    if abs(x) < 10:
        return f"{_g(100 * x, '+')} %"
    return f"×{1 + x:.1g}"


def _pct(x: float) -> str:
    """A relative error in per cent: ``+0.08 %``, ``-12 %``, ``×3``."""
    if not math.isfinite(x):
        return "-"
    return f"{_g(100 * x, '+')} %" if abs(x) < 10 else f"×{1 + x:.1g}"


def deg_text(x: float) -> str:
    if not math.isfinite(x):
        return "-"
    return f"{x:.0e}°" if x < 0.01 else f"{_g(x)}°"


def _flip_cell(rs: list[Result]) -> str:
    """Worst flip period error over the flipping scenarios, or the missing flips."""
    flipping = [r for r in rs if r.flips is not None]
    if not flipping:
        return "-"
    if any(r.flips_exact and r.flips < 2 for r in flipping):
        return "no flip"
    if any(stopped(r) for r in flipping):
        return "stops"
    r = _worst(flipping, lambda r: abs(r.flip_period_error))
    return "-" if r is None else _pct(r.flip_period_error)


def _cell(rs: list[Result], fmt: Callable[[float], str], value: Callable[[Result], float]) -> str:
    r = _worst(rs, lambda r: abs(value(r)))
    return "-" if r is None else fmt(value(r))


def _pair(rs: list[Result], cell: Callable[[list[Result]], str]) -> str:
    """``cell`` at ``MAIN_RATE``, then over all rates in brackets if that differs."""
    at_main, worst = cell([r for r in rs if r.rate == MAIN_RATE]), cell(rs)
    return at_main if at_main == worst else f"{at_main} ({worst})"


def _wobble_cell(rs: list[Result]) -> str:
    return _cell([r for r in rs if r.scenario == "stable-spin"], deg_text, lambda r: r.wobble_deg)


def _heavy_cell(rs: list[Result]) -> str:
    top = [r for r in rs if r.scenario == "heavy-top"]
    return _cell(top, deg_text, lambda r: r.direction_drift_deg)


SUMMARY_HEADER = [
    "engine", "replica",
    "flip period error",
    "|L| drift",
    "world L drift",
    "energy drift",
    "stable spin: wobble",
    "heavy top: L off the reference",
    "ns/step",
    "verdict",
    "smallest fix (replica → fix, measured at 60 Hz)",
]  # fmt: skip


def summary_row(row: Row, results: list[Result], fix_results: list[Result]) -> list[str]:
    """One row of the summary table: values at ``MAIN_RATE``, the worst over the rates in
    brackets when it differs."""
    free = _torque_free(results)
    ns = [r.ns_per_step for r in free if math.isfinite(r.ns_per_step)]
    name = f"`{row.name}`" + (" (default)" if row.default else "")
    return [
        row.engine,
        name,
        _pair(results, _flip_cell),
        _pair(free, lambda rs: _cell(rs, _rel, lambda r: r.momentum_drift)),
        _pair(free, lambda rs: _cell(rs, deg_text, lambda r: r.direction_drift_deg)),
        _pair(results, lambda rs: _cell(rs, _rel, lambda r: r.energy_drift)),
        _pair(results, _wobble_cell),
        _pair(results, _heavy_cell),
        f"{np.median(ns):.0f}" if ns else "-",
        verdict(results),
        fix_cell(row, results, fix_results),
    ]


def gain(results: list[Result], fix_results: list[Result]) -> str:
    """The fix's measured effect at ``MAIN_RATE``: the worst flip period error, world L
    drift and heavy-top error of the replica, then of its fix method, on the same cases."""
    before = [r for r in results if r.rate == MAIN_RATE]
    after = [r for r in fix_results if r.rate == MAIN_RATE]

    def world(rs: list[Result]) -> str:
        return _cell(_torque_free(rs), deg_text, lambda r: r.direction_drift_deg)

    parts = [
        (what, a, b)
        for what, a, b in (
            ("flip period", _flip_cell(before), _flip_cell(after)),
            ("world L", world(before), world(after)),
            ("heavy top", _heavy_cell(before), _heavy_cell(after)),
        )
        if (a, b) != ("-", "-")
    ]
    return ", ".join(f"{what} {a} → {b}" for what, a, b in parts)


def fix_cell(row: Row, results: list[Result], fix_results: list[Result]) -> str:
    if row.name == row.fix_method:
        return "-"
    return f"{row.fix} (`{row.fix_method}`): {gain(results, fix_results)}"

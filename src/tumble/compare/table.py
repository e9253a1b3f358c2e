"""The table of ``tumble compare``: one row of scores per method, as aligned text."""

from __future__ import annotations

import math
from typing import Any

from tumble import rigid, scenarios
from tumble._errors import InputError
from tumble._validate import describe as describe_value

__all__ = ["format_table"]


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


def check_results(results: Any) -> dict[str, scenarios.MethodResult]:
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
    results = check_results(results)
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

"""The cases of a sweep: the grid of methods, bodies, energies, steps and durations.

A sweep's grid is the Cartesian product of the lists given, with the article's
parametrisation of :mod:`tumble.scenarios` (``min_j``, ``median_j``, ``energy``,
``steps_per_rotation``, ``rotations``) and optional explicit bodies (``inv_inertia``). One
**case** (:class:`SweepCase`) is one method on one body, energy, step and duration,
identified by ``case_id``, a hash of those values. :func:`split_tasks` cuts the cases into
the tasks that :mod:`tumble.sweep.task` runs.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble import rigid, scenarios
from tumble._errors import InputError
from tumble._validate import as_float_array, as_int, as_scalar

__all__ = ["GRID_COLUMNS", "SCHEMA_VERSION", "SweepCase", "build_grid", "split_tasks"]

#: Bumped whenever a score's definition or the schema changes; part of every ``case_id``,
#: so a rerun never mixes rows computed under different definitions.
SCHEMA_VERSION = 1

GRID_COLUMNS = (
    "method",
    "min_j",
    "median_j",
    "inv_inertia",
    "energy",
    "steps_per_rotation",
    "rotations",
)
"""Columns holding the grid values, named after the options of ``tumble sweep``."""


@dataclass(frozen=True)
class SweepCase:
    """One case of a sweep: a method on one body, energy, step and duration.

    Attributes
    ----------
    method : str
        A name from :data:`tumble.rigid.METHODS` or a composition ``"<base>:<scheme>"``.
    min_j, median_j : float
        The article's body (:func:`tumble.scenarios.article_case`); ``nan`` for an
        explicit body.
    inv_inertia : tuple of 3 floats or None
        An explicit body's principal inverse moments (all ``> 0``), else None.
    energy : float
        Initial energy as a fraction between its minimum and maximum for the body.
    steps_per_rotation : int
        Steps per rotation period (:func:`tumble.scenarios.rotation_period`).
    rotations : float
        Duration in rotation periods.
    """

    method: str
    min_j: float
    median_j: float
    inv_inertia: tuple[float, float, float] | None
    energy: float
    steps_per_rotation: int
    rotations: float

    @property
    def case_id(self) -> str:
        """Hash of the case's values (and :data:`SCHEMA_VERSION`): 16 hex digits."""
        key = [
            SCHEMA_VERSION,
            self.method,
            None if self.inv_inertia is not None else repr(self.min_j),
            None if self.inv_inertia is not None else repr(self.median_j),
            None if self.inv_inertia is None else [repr(j) for j in self.inv_inertia],
            repr(self.energy),
            self.steps_per_rotation,
            repr(self.rotations),
        ]
        return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:16]

    def build(self) -> scenarios.Case:
        """The initial-value problem of this case.

        The article's body comes from :func:`tumble.scenarios.article_case`. An explicit
        body starts at the identity attitude with ``|L| = 1`` in the plane of its smallest
        and largest inverse moments, ``L_b = √energy e_max - √(1 - energy) e_min``, so that
        ``J_L(0) = J_min + energy (J_max - J_min)`` as for the article's bodies
        (:func:`tumble.scenarios.explicit_case` with ``omega_body = J L_b``).

        Raises
        ------
        InputError
            A field outside the ranges :func:`build_grid` accepts, naming the field.
        """
        rigid.check_method(self.method, "method")
        if self.inv_inertia is None:
            return scenarios.article_case(
                self.min_j, self.median_j, self.energy, self.steps_per_rotation, self.rotations
            )
        J = as_float_array(self.inv_inertia, "inv_inertia", (3,)).astype(np.float64)
        if J.shape != (3,) or not np.all(J > 0):
            raise InputError(
                f"inv_inertia: expected three inverse moments > 0, got {self.inv_inertia!r}"
            )
        energy = as_scalar(self.energy, "energy")
        if not 0.0 <= energy <= 1.0:
            raise InputError(f"energy: expected a fraction in [0, 1], got {energy}")
        order = np.argsort(J, kind="stable")
        L_body = np.zeros(3)
        L_body[order[2]] = math.sqrt(energy)
        L_body[order[0]] = -math.sqrt(1.0 - energy)
        return scenarios.explicit_case(J, J * L_body, self.steps_per_rotation, self.rotations)

    def grid_values(self) -> dict[str, Any]:
        """The grid columns of this case's row."""
        J = self.inv_inertia
        return {
            "method": self.method,
            "min_j": self.min_j if J is None else math.nan,
            "median_j": self.median_j if J is None else math.nan,
            "inv_inertia": "" if J is None else ",".join(repr(j) for j in J),
            "energy": self.energy,
            "steps_per_rotation": self.steps_per_rotation,
            "rotations": self.rotations,
        }


def _float_list(values: ArrayLike, name: str) -> list[float]:
    arr = as_float_array(values, name).astype(np.float64)
    if arr.ndim > 1 or arr.size == 0:
        raise InputError(
            f"{name}: expected a number or a non-empty list of numbers, got shape {arr.shape}"
        )
    return [float(v) for v in dict.fromkeys(np.atleast_1d(arr).tolist())]


def _in_range(values: list[float], name: str, low: float, high: float, low_open: bool) -> None:
    for v in values:
        if (v <= low if low_open else v < low) or v > high:
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}]"
            raise InputError(f"{name}: expected values in {interval}, got {v!r}")


def build_grid(
    methods: Sequence[str] | str | None = None,
    min_j: ArrayLike | None = None,
    median_j: ArrayLike | None = None,
    energy: ArrayLike | None = None,
    steps_per_rotation: ArrayLike | None = None,
    rotations: ArrayLike | None = None,
    inv_inertia: ArrayLike | None = None,
) -> list[SweepCase]:
    """All cases of the grid: the Cartesian product of the lists given.

    Bodies are the article's ``min_j × median_j`` plus the explicit ``inv_inertia`` rows;
    when only ``inv_inertia`` is given, only those. Missing lists take
    :data:`tumble.scenarios.DEFAULTS`; ``methods`` defaults to all of
    :data:`tumble.rigid.METHODS`. Repeated values are dropped.

    Parameters
    ----------
    methods : str or sequence of str, optional
    min_j : float or sequence, optional
        ``> 0``.
    median_j, energy : float or sequence, optional
        Fractions in ``[0, 1]``.
    steps_per_rotation : int or sequence, optional
        ``>= 1``, at most :data:`tumble.scenarios.MAX_STEPS_PER_ROTATION`.
    rotations : float or sequence, optional
        ``> 0``, at most :data:`tumble.scenarios.MAX_ROTATIONS`.
    inv_inertia : array_like, shape (3,) or (n, 3), optional
        Explicit bodies' principal inverse moments, all ``> 0``.

    Returns
    -------
    list of SweepCase
        In the order method, body, energy, steps, rotations (last varies fastest). An
        explicit body's cases have ``min_j`` and ``median_j`` ``nan`` (:class:`SweepCase`).
    """
    d = scenarios.DEFAULTS
    try:
        names = (
            [methods]
            if isinstance(methods, str)
            else list(rigid.METHODS if methods is None else methods)
        )
    except TypeError:
        raise InputError(
            f"methods: expected a method name or a list of them, got {methods!r:.80}"
        ) from None
    if not names:
        raise InputError("methods: expected at least one method name, got none")
    names = list(dict.fromkeys(rigid.check_method(m, "methods").name for m in names))
    explicit: list[tuple[float, float, float]] = []
    if inv_inertia is not None:
        J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
        if J.ndim > 2:
            raise InputError(f"inv_inertia: expected shape (3,) or (n, 3), got shape {J.shape}")
        if np.any(J <= 0):
            raise InputError(
                "inv_inertia: expected inverse moments > 0 for a sweep body (a held axis has "
                f"no energy range to sweep), got {J.tolist()}"
            )
        explicit = list(
            dict.fromkeys((float(a), float(b), float(c)) for a, b, c in J.reshape(-1, 3))
        )
    article = not explicit or min_j is not None or median_j is not None
    mins = _float_list(d["min_j"] if min_j is None else min_j, "min_j")
    _in_range(mins, "min_j", 0.0, math.inf, low_open=True)
    meds = _float_list(d["median_j"] if median_j is None else median_j, "median_j")
    _in_range(meds, "median_j", 0.0, 1.0, low_open=False)
    energies = _float_list(d["energy"] if energy is None else energy, "energy")
    _in_range(energies, "energy", 0.0, 1.0, low_open=False)
    steps_raw = np.atleast_1d(
        np.asarray(
            d["steps_per_rotation"] if steps_per_rotation is None else steps_per_rotation,
            dtype=object,
        )
    )
    if steps_raw.ndim != 1 or steps_raw.size == 0:
        raise InputError("steps_per_rotation: expected an integer or a non-empty list of integers")
    steps = list(
        dict.fromkeys(
            as_int(s, "steps_per_rotation", minimum=1, maximum=scenarios.MAX_STEPS_PER_ROTATION)
            for s in steps_raw
        )
    )
    rots = _float_list(d["rotations"] if rotations is None else rotations, "rotations")
    # The bounds of scenarios' cases, which the tasks build (and `rotations * steps` fits).
    _in_range(rots, "rotations", 0.0, scenarios.MAX_ROTATIONS, low_open=True)
    for n in steps:
        for r in rots:
            if round(r * n) < 1:
                raise InputError(
                    f"rotations: {r!r} rotations of {n} steps round to no step at all; expected "
                    "rotations * steps_per_rotation >= 0.5"
                )
    bodies: list[tuple[float, float, tuple[float, float, float] | None]] = []
    if article:
        bodies += [(a, f, None) for a in mins for f in meds]
    bodies += [(math.nan, math.nan, J3) for J3 in explicit]
    return [
        SweepCase(m, a, f, J3, e, n, r)
        for m in names
        for (a, f, J3) in bodies
        for e in energies
        for n in steps
        for r in rots
    ]


def split_tasks(cases: Sequence[SweepCase], task_size: int) -> list[list[SweepCase]]:
    """Cut ``cases`` into tasks of at most ``task_size`` cases, neighbours sharing a batch.

    Cases are sorted by method, ``steps_per_rotation``, ``rotations`` and then body and
    energy, so that a task holds few distinct ``(method, dt, steps)`` groups (each one
    ``simulate`` call).
    """
    n = as_int(task_size, "task_size", minimum=1)

    def order(c: SweepCase) -> tuple[Any, ...]:
        # Explicit bodies have NaN min_j and median_j, which do not order: use their J.
        body = c.inv_inertia or (c.min_j, c.median_j)
        return (c.method, c.steps_per_rotation, c.rotations, body, c.energy)

    ordered = sorted(cases, key=order)
    return [ordered[i : i + n] for i in range(0, len(ordered), n)]

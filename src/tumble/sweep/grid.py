"""The cases of a sweep: the grid of methods, bodies, energies, steps and durations.

A sweep's grid is the Cartesian product of the lists given, with the article's
parametrisation of :mod:`tumble.scenarios` (``min_j``, ``median_j``, ``energy``,
``steps_per_rotation``, ``rotations``) and optional explicit bodies (``inv_inertia``). One
**case** (:class:`SweepCase`) is one method on one body, energy, step and duration,
identified by ``case_id``, a hash of those values. :func:`split_tasks` cuts the cases into
the tasks that :mod:`tumble.sweep.task` runs.

**Step rates.** Instead of ``steps_per_rotation`` a grid may give step rates in Hz
(``rate``) and the bodies' initial spin in revolutions per second (``spin``): the case is
then in seconds, with ``|ω(0)| = 2π spin``, ``dt = 1/rate`` and ``rotations`` rotation
periods of that body (:meth:`SweepCase.build`). The time step of a body turning at ``spin``
is what a game engine's fixed rate means; steps per rotation alone cannot say it.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble import rigid, scenarios
from tumble._errors import InputError
from tumble._validate import as_float_array, as_int, as_scalar
from tumble.sweep import settings

__all__ = ["GRID_COLUMNS", "SCHEMA_VERSION", "SweepCase", "build_grid", "split_tasks"]

#: Bumped whenever a score's definition or the schema changes; part of every ``case_id``,
#: so a rerun never mixes rows computed under different definitions.
SCHEMA_VERSION = 2

GRID_COLUMNS = (
    "method",
    "min_j",
    "median_j",
    "inv_inertia",
    "energy",
    "steps_per_rotation",
    "rate",
    "spin",
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
        Steps per rotation period (:func:`tumble.scenarios.rotation_period`); 0 when
        ``rate`` sets the step.
    rotations : float
        Duration in rotation periods.
    rate : float
        Step rate in Hz (steps per second, ``dt = 1/rate``), or ``nan`` when
        ``steps_per_rotation`` sets the step.
    spin : float
        With ``rate``: the initial spin ``|ω(0)| / 2π`` in revolutions per second, which
        sets the time scale (seconds) of the case; else ``nan``.
    """

    method: str
    min_j: float
    median_j: float
    inv_inertia: tuple[float, float, float] | None
    energy: float
    steps_per_rotation: int
    rotations: float
    rate: float = math.nan
    spin: float = math.nan

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
            None if _unset(self.rate) else repr(self.rate),
            None if _unset(self.spin) else repr(self.spin),
        ]
        return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:16]

    def _timing(self) -> tuple[float, float] | None:
        """``(rate, spin)`` validated when ``rate`` sets the step, else None."""
        if _unset(self.rate):
            if not _unset(self.spin):
                raise InputError(
                    f"spin: expected nan unless rate is given (spin sets the time scale of a "
                    f"step rate), got {self.spin!r}"
                )
            return None
        rate = as_scalar(self.rate, "rate", positive=True)
        spin = as_scalar(self.spin, "spin", positive=True)
        n = self.steps_per_rotation
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n != 0:
            raise InputError(
                "steps_per_rotation: expected 0 when rate sets the step, got "
                f"{self.steps_per_rotation!r}"
            )
        return rate, spin

    def build(self) -> scenarios.Case:
        """The initial-value problem of this case.

        The article's body comes from :func:`tumble.scenarios.article_case`. An explicit
        body starts at the identity attitude with ``|L| = 1`` in the plane of its smallest
        and largest inverse moments, ``L_b = √energy e_max - √(1 - energy) e_min``, so that
        ``J_L(0) = J_min + energy (J_max - J_min)`` as for the article's bodies
        (:func:`tumble.scenarios.explicit_case` with ``omega_body = J L_b``).

        With a step ``rate`` the case is scaled into seconds: the angular momentum is
        multiplied by ``c = 2π spin / |ω(0)|`` (the same motion, ``c`` times faster), so
        ``|ω(0)| = 2π spin``, the rotation period is ``P / c``, ``dt = 1/rate`` and
        ``steps = round(rotations · (P/c) · rate)``.

        Raises
        ------
        InputError
            A field outside the ranges :func:`build_grid` accepts, naming the field.
        """
        rigid.check_method(self.method, "method")
        timing = self._timing()
        if timing is None:
            return self._build(self.steps_per_rotation, self.rotations)
        rate, spin = timing
        rotations = as_scalar(self.rotations, "rotations", positive=True)
        if rotations > scenarios.MAX_ROTATIONS:
            raise InputError(
                f"rotations: expected at most {scenarios.MAX_ROTATIONS:g}, got {rotations:g}"
            )
        base = self._build(1, 0.0)
        c = 2.0 * math.pi * spin / float(np.linalg.norm(base.omega0))
        omega0 = base.omega0 * c
        period = base.period / c
        dt = 1.0 / rate
        steps = rotations * period * rate
        if not (np.all(np.isfinite(omega0)) and 0.0 < period < math.inf and dt > 0.0):
            raise InputError(
                f"spin, rate: out of the float range for this body (spin {spin:g} rev/s, "
                f"rate {rate:g} Hz)"
            )
        if not steps < _MAX_STEPS:
            raise InputError(
                f"rate: {rotations:g} rotations of {period:.3g} s at {rate:g} Hz take "
                f"{steps:.3g} steps, more than the {_MAX_STEPS:.0e} a case may take"
            )
        if round(steps) < 1:
            raise InputError(
                f"rotations: {rotations:g} rotations of {period:.3g} s at {rate:g} Hz round "
                "to no step at all; expected rotations * period * rate >= 0.5"
            )
        return scenarios.Case(base.inv_inertia, base.q0, omega0, dt, round(steps), period)

    def _build(self, steps_per_rotation: Any, rotations: Any) -> scenarios.Case:
        if self.inv_inertia is None:
            return scenarios.article_case(
                self.min_j, self.median_j, self.energy, steps_per_rotation, rotations
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
        return scenarios.explicit_case(J, J * L_body, steps_per_rotation, rotations)

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
            "rate": self.rate,
            "spin": self.spin,
            "rotations": self.rotations,
        }


def _unset(x: Any) -> bool:
    """A ``rate`` or ``spin`` field left at its ``nan`` (any other value is checked)."""
    return isinstance(x, float | np.floating) and math.isnan(x)


#: The most steps a case may take, as :class:`tumble.scenarios.Case` allows.
_MAX_STEPS = int(scenarios.MAX_ROTATIONS) * scenarios.MAX_STEPS_PER_ROTATION


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
    rate: ArrayLike | None = None,
    spin: ArrayLike | None = None,
) -> list[SweepCase]:
    """All cases of the grid: the Cartesian product of the lists given.

    Bodies are the article's ``min_j × median_j`` plus the explicit ``inv_inertia`` rows;
    when only ``inv_inertia`` is given, only those. Missing lists take
    :data:`tumble.scenarios.DEFAULTS`; ``methods`` defaults to all of
    :data:`tumble.rigid.METHODS`. Repeated values are dropped. The step is set either by
    ``steps_per_rotation`` or by ``rate`` and ``spin`` (module docstring), not both.

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
    rate : float or sequence, optional
        Step rates in Hz, ``> 0``, instead of ``steps_per_rotation``.
    spin : float or sequence, optional
        With ``rate`` only: initial spins ``|ω(0)| / 2π`` in revolutions per second,
        ``> 0`` (default :data:`tumble.sweep.settings.DEFAULT_SPIN`).

    Returns
    -------
    list of SweepCase
        In the order method, body, energy, steps (or rate, spin), rotations (last varies
        fastest). An explicit body's cases have ``min_j`` and ``median_j`` ``nan``
        (:class:`SweepCase`).
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
    if rate is not None and steps_per_rotation is not None:
        raise InputError(
            "steps_per_rotation, rate: give one of them (both set the time step), got both"
        )
    if spin is not None and rate is None:
        raise InputError("spin: expected only with rate (spin sets the time scale of a rate)")
    rots = _float_list(d["rotations"] if rotations is None else rotations, "rotations")
    # The bounds of scenarios' cases, which the tasks build (and `rotations * steps` fits).
    _in_range(rots, "rotations", 0.0, scenarios.MAX_ROTATIONS, low_open=True)
    bodies: list[tuple[float, float, tuple[float, float, float] | None]] = []
    if article:
        bodies += [(a, f, None) for a in mins for f in meds]
    bodies += [(math.nan, math.nan, J3) for J3 in explicit]
    if rate is not None:
        rates = _float_list(rate, "rate")
        _in_range(rates, "rate", 0.0, math.inf, low_open=True)
        spins = _float_list(settings.DEFAULT_SPIN if spin is None else spin, "spin")
        _in_range(spins, "spin", 0.0, math.inf, low_open=True)
        timed = [(0, r, w, t) for r in rates for w in spins for t in rots]
        # A rate case's step count depends on its body and energy: each is built once here
        # (for the first method) so that a bad combination fails now, not on a worker.
        for a, f, J3 in bodies:
            for e in energies:
                for _, r, w, t in timed:
                    SweepCase(names[0], a, f, J3, e, 0, t, r, w).build()
    else:
        steps_raw = np.atleast_1d(
            np.asarray(
                d["steps_per_rotation"] if steps_per_rotation is None else steps_per_rotation,
                dtype=object,
            )
        )
        if steps_raw.ndim != 1 or steps_raw.size == 0:
            raise InputError(
                "steps_per_rotation: expected an integer or a non-empty list of integers"
            )
        steps = list(
            dict.fromkeys(
                as_int(s, "steps_per_rotation", minimum=1, maximum=scenarios.MAX_STEPS_PER_ROTATION)
                for s in steps_raw
            )
        )
        for n in steps:
            for t in rots:
                if round(t * n) < 1:
                    raise InputError(
                        f"rotations: {t!r} rotations of {n} steps round to no step at all; "
                        "expected rotations * steps_per_rotation >= 0.5"
                    )
        timed = [(n, math.nan, math.nan, t) for n in steps for t in rots]
    return [
        SweepCase(m, a, f, J3, e, n, t, r, w)
        for m in names
        for (a, f, J3) in bodies
        for e in energies
        for (n, r, w, t) in timed
    ]


def split_tasks(cases: Sequence[SweepCase], task_size: int) -> list[list[SweepCase]]:
    """Cut ``cases`` into tasks of at most ``task_size`` cases, neighbours sharing a batch.

    Cases are sorted by method, ``steps_per_rotation`` (or ``rate`` and ``spin``),
    ``rotations`` and then body and energy, so that a task holds few distinct ``(method,
    dt, steps)`` groups (each one ``simulate`` call). (A rate case's step count depends on
    its body and energy, so rate cases rarely share a call.)
    """
    n = as_int(task_size, "task_size", minimum=1)

    def order(c: SweepCase) -> tuple[Any, ...]:
        # Explicit bodies have NaN min_j and median_j, which do not order: use their J.
        # Likewise the NaN rate and spin of a steps-per-rotation case.
        body = c.inv_inertia or (c.min_j, c.median_j)
        timing = (-1.0, -1.0) if _unset(c.rate) else (c.rate, c.spin)
        return (c.method, c.steps_per_rotation, timing, c.rotations, body, c.energy)

    ordered = sorted(cases, key=order)
    return [ordered[i : i + n] for i in range(0, len(ordered), n)]

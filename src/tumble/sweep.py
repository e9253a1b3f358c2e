"""Parameter sweeps of the rigid-body integrators on Dask: ``tumble sweep``.

A sweep scores every chosen method on every case of a grid against the exact solution,
with the article's parametrisation of :mod:`tumble.scenarios` (``min_j``, ``median_j``,
``energy``, ``steps_per_rotation``, ``rotations``) and optional explicit bodies
(``inv_inertia``). The grid is the Cartesian product of the lists given; one **case** is
one method on one body, energy, step and duration, identified by ``case_id``, a hash of
those values.

How the work runs:

* the cases are sorted so that those sharing a method, ``steps_per_rotation`` and
  ``rotations`` (hence, for the article's bodies, the same ``dt`` and step count) are
  neighbours, and cut into **tasks** of ``task_size`` cases;
* a task (:func:`run_task`, on a Dask worker, one numba thread) runs each group of cases
  with equal ``(method, dt, steps)`` as **one** batched :func:`tumble.rigid.simulate` call
  (split only to bound memory, :data:`BODY_RECORDS_PER_CALL`) and scores the batch with
  :mod:`tumble.diagnostics`, recording every step;
* the client writes each finished task's rows at once as one Parquet file
  ``part-<hash of its case ids>.parquet`` in the output folder (temporary name, fsync,
  rename: a file is either complete or absent). A rerun with the same arguments reads the
  ``case_id`` column of the files there and runs only the missing cases; a worker that
  dies has its tasks rerun elsewhere by Dask (tasks are pure functions of their cases).

Scores (columns of the dataset, ``docs/sweep.md`` lists the whole schema):

* ``energy_error``: ``max |E/E0 - 1|`` over the records
  (:func:`tumble.diagnostics.max_energy_error`);
* ``momentum_drift``: ``max | |L|/|L0| - 1 |`` (:func:`tumble.diagnostics.momentum_drift`);
* ``direction_drift``: largest angle of world ``L`` from its start, radians
  (:func:`tumble.diagnostics.direction_drift`);
* ``attitude_error_end``: angle from the exact solution at the end, radians
  (:func:`tumble.diagnostics.attitude_error` on the first and last records);
* ``flip_time``, ``flip_time_exact``, ``flip_time_error``: the first Dzhanibekov flip of
  the method, of the exact motion, and ``flip_time / flip_time_exact - 1``
  (:func:`first_flip_time`);
* ``ns_per_step``: wall time per body-step of the batch's stepping (best of two ``simulate``
  calls recording only the ends, one thread);
* ``diverged_at``: time of the first non-finite record, ``nan`` if none (the other scores
  then cover the records before it, as in :func:`tumble.scenarios.score`).

**The first flip.** Let ``m`` be the axis of the median inverse moment and ``x(t) =
L_b,m(t)/|L_b(0)|`` the body-frame momentum along it. In both circulation regimes of the
exact motion (reference §4.2) ``x`` is proportional to ``sn(u0 + ω_p t)``: ``L_b`` swings
from one side of the plane ``L_b,m = 0`` (the plane of the two stable axes, which every
orbit crosses twice per body period) to the other every half period ``T/2``; near the
separatrix it dwells near ``±e_m`` and crosses quickly, the flip of the Dzhanibekov
effect. A flip is detected with a hysteresis band ``δ =`` :data:`FLIP_BAND` so that
round-off around ``x = 0`` (where every sweep case starts) and steady spins do not count:
with ``s`` the sign of ``x`` at the first record where ``|x| >= δ``, the flip ends at the
first later record where ``s x <= -δ``, and the flip time is the zero of ``x`` just
before it: the root of the cubic Hermite interpolant of ``x`` between the last record
with ``s x > 0`` and the next one, with the torque-free slopes ``dL_b/dt = L_b × J L_b``
at the two records. Sweep cases start with ``x(0) = 0`` (``L_b`` in the plane of the
smallest and largest inverse moments), so the exact first flip is at ``T/2`` with ``T``
from :func:`tumble.exact.body_period`; it is ``inf`` (never) on the separatrix and when
the exact amplitude of ``x`` is below ``δ`` (a steady spin, a spherical body).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from tumble import compare, diagnostics, exact, rigid, rotation, scenarios
from tumble._errors import InputError
from tumble._kernels.dispatch import single_thread
from tumble._validate import as_choice, as_float_array, as_int

__all__ = [
    "BODY_RECORDS_PER_CALL",
    "FLIP_BAND",
    "GRID_COLUMNS",
    "SCORE_COLUMNS",
    "SweepCase",
    "SweepError",
    "SweepSummary",
    "add_arguments",
    "build_grid",
    "completed_case_ids",
    "first_flip_time",
    "local_cluster",
    "read_results",
    "run",
    "run_sweep",
    "run_task",
    "split_tasks",
]

#: Bumped whenever a score's definition or the schema changes; part of every ``case_id``,
#: so a rerun never mixes rows computed under different definitions.
SCHEMA_VERSION = 1

#: Hysteresis band of the flip detector, as a fraction of ``|L|``: far above the round-off
#: of ``L_b`` (1e-16) and small enough that orbits with a median-axis amplitude of 0.1 %
#: of ``|L|`` (energy fractions down to about 1e-6 of the distance to the separatrix)
#: still flip.
FLIP_BAND = 1e-3

#: Upper bound on bodies × records per ``simulate`` call inside a task: the trajectory
#: takes 112 bytes per body-record and the diagnostics a few times more, so this keeps a
#: task below a few hundred MB whatever the run length.
BODY_RECORDS_PER_CALL = 250_000

#: Default cases per task: enough that the batched ``simulate`` amortises its overhead,
#: small enough that a sweep of a few thousand runs still feeds several workers.
DEFAULT_TASK_SIZE = 200

#: Reruns of a task that raised (a worker that dies is handled by Dask separately).
DEFAULT_RETRIES = 2

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

SCORE_COLUMNS = (
    "energy_error",
    "momentum_drift",
    "direction_drift",
    "attitude_error_end",
    "flip_time",
    "flip_time_exact",
    "flip_time_error",
    "ns_per_step",
    "diverged_at",
)
"""Score columns (module docstring)."""

_CASE_COLUMNS = ("j1", "j2", "j3", "dt", "steps", "period")
_INT_COLUMNS = ("steps_per_rotation", "steps")
_STR_COLUMNS = ("case_id", "method", "inv_inertia")
COLUMNS = ("case_id", *GRID_COLUMNS, *_CASE_COLUMNS, *SCORE_COLUMNS)

_PART = re.compile(r"part-[0-9a-f]{20}\.parquet")


class SweepError(RuntimeError):
    """Some tasks of a sweep failed even after their retries (the others were written)."""


# --------------------------------------------------------------------------------------
# the grid


@dataclass(frozen=True)
class SweepCase:
    """One case of a sweep: a method on one body, energy, step and duration.

    Attributes
    ----------
    method : str
        A name from :data:`tumble.rigid.METHODS`.
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
        """
        if self.inv_inertia is None:
            return scenarios.article_case(
                self.min_j, self.median_j, self.energy, self.steps_per_rotation, self.rotations
            )
        J = np.array(self.inv_inertia)
        order = np.argsort(J, kind="stable")
        L_body = np.zeros(3)
        L_body[order[2]] = math.sqrt(self.energy)
        L_body[order[0]] = -math.sqrt(1.0 - self.energy)
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


def _float_list(values: Any, name: str) -> list[float]:
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
    min_j: Any = None,
    median_j: Any = None,
    energy: Any = None,
    steps_per_rotation: Any = None,
    rotations: Any = None,
    inv_inertia: Any = None,
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
        ``>= 1``.
    rotations : float or sequence, optional
        ``> 0`` (finite).
    inv_inertia : array_like, shape (3,) or (n, 3), optional
        Explicit bodies' principal inverse moments, all ``> 0``.

    Returns
    -------
    list of SweepCase
        In the order method, body, energy, steps, rotations (last varies fastest).
    """
    d = scenarios.DEFAULTS
    names = (
        [methods]
        if isinstance(methods, str)
        else list(rigid.METHODS if methods is None else methods)
    )
    if not names:
        raise InputError("methods: expected at least one method name, got none")
    names = list(dict.fromkeys(as_choice(m, "methods", rigid.METHODS) for m in names))
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
    steps = list(dict.fromkeys(as_int(s, "steps_per_rotation", minimum=1) for s in steps_raw))
    rots = _float_list(d["rotations"] if rotations is None else rotations, "rotations")
    _in_range(rots, "rotations", 0.0, math.inf, low_open=True)
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


# --------------------------------------------------------------------------------------
# the flip


def first_flip_time(t: Any, L_body: Any, inv_inertia: Any, band: float = FLIP_BAND) -> np.ndarray:
    """Time of the first Dzhanibekov flip of recorded torque-free trajectories.

    ``x = L_b,m / |L_b(t0)|`` with ``m`` the axis of the median inverse moment (ties keep
    the axis order). With ``s`` the sign of ``x`` at the first record where ``|x| >=
    band``, the flip is the zero of ``x`` before the first later record where ``s x <=
    -band``, located as the root of the cubic Hermite interpolant of ``x`` between the
    last record with ``s x > 0`` and the next one, with slopes from ``dL_b/dt = L_b × J
    L_b`` (module docstring). Error ``O(h⁴)`` in the record spacing ``h`` for a smooth
    path; bisection to round-off on the cubic.

    Parameters
    ----------
    t : array_like, shape (n,)
        Record times, increasing.
    L_body : array_like, shape (n, b, 3)
        Body-frame angular momentum per record and body (non-finite records are allowed
        after a blow-up: nothing after them is a flip).
    inv_inertia : array_like, shape (b, 3)
        Principal inverse moments.
    band : float, optional
        Hysteresis band as a fraction of ``|L_b(t0)|``.

    Returns
    -------
    ndarray, shape (b,)
        Flip times, ``nan`` where no flip completes within the records.
    """
    tt = np.asarray(t, dtype=np.float64)
    L = np.asarray(L_body, dtype=np.float64)
    J = np.asarray(inv_inertia, dtype=np.float64)
    n, nb = L.shape[0], L.shape[1]
    cols = np.arange(nb)
    mid = np.argsort(J, axis=-1, kind="stable")[:, 1]
    norm0 = np.linalg.norm(L[0], axis=-1)
    with np.errstate(all="ignore"):
        x = L[:, cols, mid] / norm0
        dx = np.cross(L, J * L)[:, cols, mid] / norm0
        rec = np.arange(n)[:, None]
        big = np.abs(x) >= band
        a = np.argmax(big, axis=0)
        s = np.sign(x[a, cols])
        after = (s * x <= -band) & (rec > a)
        k = np.argmax(after, axis=0)
        positive = (s * x > 0) & (rec < k)
    j = n - 1 - np.argmax(positive[::-1], axis=0)
    found = big.any(axis=0) & after.any(axis=0)
    out = np.full(nb, np.nan)
    if not np.any(found):
        return out
    b = cols[found]
    j = j[found]
    h = tt[j + 1] - tt[j]
    x0, x1 = x[j, b] * s[b], x[j + 1, b] * s[b]
    m0, m1 = dx[j, b] * s[b] * h, dx[j + 1, b] * s[b] * h
    lo, hi = np.zeros(b.size), np.ones(b.size)
    # p(0) = x0 > 0 >= p(1) = x1: bisection keeps the sign change inside [lo, hi]. A run that
    # is blowing up may overflow p; its sign still steers the bisection.
    with np.errstate(all="ignore"):
        for _ in range(60):
            tau = 0.5 * (lo + hi)
            t2, t3 = tau * tau, tau * tau * tau
            p = (
                (2 * t3 - 3 * t2 + 1) * x0
                + (t3 - 2 * t2 + tau) * m0
                + (-2 * t3 + 3 * t2) * x1
                + (t3 - t2) * m1
            )
            pos = p > 0
            lo = np.where(pos, tau, lo)
            hi = np.where(pos, hi, tau)
    out[b] = tt[j] + 0.5 * (lo + hi) * h
    return out


def _exact_flip_time(q0: np.ndarray, omega0: np.ndarray, J: np.ndarray, band: float) -> np.ndarray:
    """``T/2`` (:func:`tumble.exact.body_period`) for bodies starting with ``L_b,m = 0``.

    ``inf`` where the exact amplitude of ``L_b,m/|L|`` is below ``band`` (it never flips):
    with ``J_a <= J_b <= J_c`` and ``J_L = L·JL/|L|²``, the amplitude is
    ``√((J_L - J_a)/(J_b - J_a))`` when ``J_L <= J_b`` (circulation about the axis of
    smallest ``J``) and ``√((J_c - J_L)/(J_c - J_b))`` otherwise, from the two invariants
    at the turning point where ``L_b`` lies in the plane of ``e_m`` and the circulation axis.
    """
    Lb = rotation.quat_rotate(rotation.quat_conjugate(q0), omega0) / J
    JL = np.einsum("bi,bi->b", Lb, J * Lb) / np.einsum("bi,bi->b", Lb, Lb)
    Ja, Jb, Jc = np.sort(J, axis=-1).T
    with np.errstate(invalid="ignore", divide="ignore"):
        amp2 = np.where(Jb >= JL, (JL - Ja) / (Jb - Ja), (Jc - JL) / (Jc - Jb))
    flips = np.nan_to_num(amp2, nan=0.0) >= band * band
    T = np.asarray(exact.body_period(q0, omega0, J), dtype=np.float64).reshape(-1)
    return np.where(flips, 0.5 * T, math.inf)


# --------------------------------------------------------------------------------------
# the task


def _select(tr: rigid.Trajectory, bodies: Any, records: Any = slice(None)) -> rigid.Trajectory:
    return rigid.Trajectory(
        t=tr.t[records], q=tr.q[records][:, bodies], omega=tr.omega[records][:, bodies],
        L=tr.L[records][:, bodies], L_body=tr.L_body[records][:, bodies],
        energy=tr.energy[records][:, bodies],
    )  # fmt: skip


def _score_batch(method: str, cases: Sequence[scenarios.Case]) -> dict[str, np.ndarray]:
    """Run ``cases`` (equal ``dt`` and ``steps``) as one ``simulate`` call and score them."""
    dt, steps = cases[0].dt, cases[0].steps
    q = np.array([c.q0 for c in cases])
    w = np.array([c.omega0 for c in cases])
    J = np.array([c.inv_inertia for c in cases])
    nb = len(cases)
    start = time.perf_counter()
    # A blow-up is scored (non-finite records give NaN scores), not warned about.
    tr = rigid.simulate(q, w, J, dt, steps, method, on_divergence="ignore")
    per_step = (time.perf_counter() - start) / (nb * steps)
    if method != "exact":
        # Stepping cost alone, the better of two runs. "exact" evaluates the closed form
        # per record, so its cost is per evaluation, from the run above.
        per_step = scenarios.stepping_time(q, w, J, dt, steps, method, runs=2)
    out = {name: np.full(nb, np.nan) for name in SCORE_COLUMNS}
    out["ns_per_step"][:] = per_step * 1e9
    finite = np.all(
        np.isfinite(tr.q).all(-1) & np.isfinite(tr.L_body).all(-1) & np.isfinite(tr.omega).all(-1),
        axis=0,
    )
    ok = np.flatnonzero(finite)
    if ok.size:
        sub, Jok = _select(tr, ok), J[ok]
        out["energy_error"][ok] = diagnostics.max_energy_error(sub, Jok)
        out["momentum_drift"][ok] = np.max(np.abs(diagnostics.momentum_drift(sub, Jok)), axis=0)
        out["direction_drift"][ok] = np.max(diagnostics.direction_drift(sub, Jok), axis=0)
        ends = _select(tr, ok, [0, -1])
        out["attitude_error_end"][ok] = diagnostics.attitude_error(ends, Jok)[-1]
    for b in np.flatnonzero(~finite):
        one = scenarios.score(_select(tr, b), J[b])
        out["energy_error"][b] = one.energy_error
        out["momentum_drift"][b] = one.momentum_drift
        out["direction_drift"][b] = one.direction_drift
        out["attitude_error_end"][b] = one.attitude_error_end
        out["diverged_at"][b] = math.nan if one.diverged_at is None else one.diverged_at
    out["flip_time"] = first_flip_time(tr.t, tr.L_body, J)
    out["flip_time_exact"] = _exact_flip_time(q, w, J, FLIP_BAND)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["flip_time_error"] = out["flip_time"] / out["flip_time_exact"] - 1.0
    return out


def _batches(built: list[tuple[int, scenarios.Case]]) -> Iterator[list[tuple[int, scenarios.Case]]]:
    """Consecutive runs of equal ``(dt, steps)``, at most :data:`BODY_RECORDS_PER_CALL`."""
    for _, group in itertools.groupby(built, key=lambda ic: (ic[1].dt, ic[1].steps)):
        members = list(group)
        size = max(1, BODY_RECORDS_PER_CALL // (members[0][1].steps + 1))
        for i in range(0, len(members), size):
            yield members[i : i + size]


def run_task(cases: Sequence[SweepCase]) -> dict[str, list[Any]]:
    """Run and score a task's cases (on a Dask worker): one row per case, in their order.

    Cases sharing a method, ``dt`` and step count run as one batched
    :func:`tumble.rigid.simulate` call on one numba thread (workers are one process per
    core). A pure function of ``cases``, so Dask may rerun it anywhere.

    Returns
    -------
    dict
        ``{column: list}`` with the columns :data:`COLUMNS`.
    """
    rows: list[dict[str, Any]] = [{} for _ in cases]
    with single_thread():
        for method, group in itertools.groupby(enumerate(cases), key=lambda ic: ic[1].method):
            built = [(i, c.build()) for i, c in group]
            built.sort(key=lambda ic: (ic[1].dt, ic[1].steps))
            for batch in _batches(built):
                scores = _score_batch(method, [c for _, c in batch])
                for k, (i, case) in enumerate(batch):
                    rows[i] = {
                        "case_id": cases[i].case_id,
                        **cases[i].grid_values(),
                        "j1": float(case.inv_inertia[0]),
                        "j2": float(case.inv_inertia[1]),
                        "j3": float(case.inv_inertia[2]),
                        "dt": case.dt,
                        "steps": case.steps,
                        "period": case.period,
                        **{name: float(v[k]) for name, v in scores.items()},
                    }
    return {name: [r[name] for r in rows] for name in COLUMNS}


# --------------------------------------------------------------------------------------
# the dataset


def _arrow() -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa, pq


def _schema() -> Any:
    pa, _ = _arrow()
    return pa.schema(
        [
            (
                name,
                pa.string() if name in _STR_COLUMNS
                else pa.int64() if name in _INT_COLUMNS
                else pa.float64(),
            )
            for name in COLUMNS
        ]
    )  # fmt: skip


def _digest(case_ids: Iterable[str]) -> str:
    """A task's name: a hash of its case ids, whatever their order."""
    return hashlib.sha1("\n".join(sorted(case_ids)).encode()).hexdigest()[:20]


def _part_name(case_ids: Iterable[str]) -> str:
    return f"part-{_digest(case_ids)}.parquet"


def _write_part(out: Path, columns: dict[str, list[Any]]) -> Path:
    """Write one task's rows atomically: temporary name, fsync, rename."""
    pa, pq = _arrow()
    table = pa.table(columns, schema=_schema())
    path = out / _part_name(columns["case_id"])
    tmp = out / f".{path.name}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def _parts(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if _PART.fullmatch(p.name))


def completed_case_ids(out: Any) -> set[str]:
    """The ``case_id`` of every row already written in the folder ``out`` (empty if none).

    Raises
    ------
    InputError
        A part file that cannot be read (not written by a sweep, or damaged outside it).
    """
    _, pq = _arrow()
    folder = Path(out)
    if not folder.is_dir():
        return set()
    done: set[str] = set()
    for p in _parts(folder):
        try:
            done.update(pq.read_table(p, columns=["case_id"]).column("case_id").to_pylist())
        except Exception as exc:
            raise InputError(f"out: cannot read {p} ({exc}); move it away and rerun") from None
    return done


def read_results(out: Any) -> Any:
    """The whole dataset in the folder ``out`` as one ``pyarrow.Table``, columns :data:`COLUMNS`."""
    pa, pq = _arrow()
    folder = Path(out)
    if not folder.is_dir():
        raise InputError(f"out: expected a folder written by tumble sweep, got {str(out)!r}")
    tables = [pq.read_table(p) for p in _parts(folder)]
    if not tables:
        return _schema().empty_table()
    return pa.concat_tables(tables)


# --------------------------------------------------------------------------------------
# Dask


def local_cluster(workers: int | None = None) -> Any:
    """A ``distributed.LocalCluster`` for a sweep on this machine.

    ``workers`` single-threaded worker processes (default: one per CPU core available to
    this process), on the loopback interface only, no dashboard.
    """
    from distributed import LocalCluster

    n = len(os.sched_getaffinity(0)) if workers is None else as_int(workers, "workers", minimum=1)
    # Ctrl-C in a terminal signals the whole process group. The worker processes inherit an
    # ignored SIGINT (kept across exec), so only this process reacts: it cancels the tasks
    # and closes the cluster in order, instead of every worker dying with a traceback.
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    try:
        return LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # Without a dashboard the scheduler still serves its small HTTP API (health,
            # metrics); a free loopback port keeps it off 8787, which another cluster may
            # hold.
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
        )
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)


class _Progress:
    """Tasks done, runs done and the estimated time left, on one line of ``stream``."""

    def __init__(self, tasks: int, runs: int, stream: TextIO | None) -> None:
        self.tasks, self.runs, self.stream = tasks, runs, stream
        self.done_tasks = self.done_runs = 0
        self.start = self.last = time.monotonic()
        self.tty = stream is not None and stream.isatty()

    def update(self, runs: int) -> None:
        self.done_tasks += 1
        self.done_runs += runs
        now = time.monotonic()
        final = self.done_tasks == self.tasks
        if self.stream is None or not (self.tty or final or now - self.last >= 5.0):
            return
        self.last = now
        elapsed = now - self.start
        left = elapsed / self.done_runs * (self.runs - self.done_runs)
        width = 24
        fill = round(width * self.done_tasks / self.tasks)
        line = (
            f"sweep [{'#' * fill}{'.' * (width - fill)}] {self.done_tasks}/{self.tasks} tasks, "
            f"{self.done_runs}/{self.runs} runs, {_clock(elapsed)} elapsed, "
            f"~{_clock(left)} left"
        )
        end = "\n" if final or not self.tty else ""
        self.stream.write(("\r" if self.tty else "") + line + end)
        self.stream.flush()


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


@dataclass(frozen=True)
class SweepSummary:
    """What :func:`run_sweep` did.

    Attributes
    ----------
    out : Path
        The dataset folder.
    cases : int
        Cases in the grid.
    skipped : int
        Cases already in ``out`` (not rerun).
    tasks : int
        Tasks run (each wrote one Parquet file).
    seconds : float
        Wall time of the run, including starting (and closing) a cluster when this call
        starts one.
    """

    out: Path
    cases: int
    skipped: int
    tasks: int
    seconds: float

    @property
    def runs(self) -> int:
        """Cases run by this call."""
        return self.cases - self.skipped


def run_sweep(
    out: Any,
    methods: Sequence[str] | str | None = None,
    min_j: Any = None,
    median_j: Any = None,
    energy: Any = None,
    steps_per_rotation: Any = None,
    rotations: Any = None,
    inv_inertia: Any = None,
    *,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    task_size: int = DEFAULT_TASK_SIZE,
    retries: int = DEFAULT_RETRIES,
    progress: bool = True,
    callback: Callable[[int, int, Path], None] | None = None,
) -> SweepSummary:
    """Score every method on every case of the grid, on Dask, into a Parquet dataset.

    The grid is :func:`build_grid` of the values given; cases already in ``out`` are
    skipped (resume), the rest are cut into tasks (:func:`split_tasks`) that run
    :func:`run_task` on the workers. Each finished task's rows are written at once as one
    Parquet file in ``out`` (atomic). Read the result with :func:`read_results`.

    Parameters
    ----------
    out : str or Path
        Dataset folder (created if missing).
    methods, min_j, median_j, energy, steps_per_rotation, rotations, inv_inertia
        Grid values, as in :func:`build_grid`.
    client : distributed.Client, optional
        Run on this client's cluster (left open).
    scheduler : str, optional
        Address of a running scheduler, ``tcp://HOST:PORT`` (connected and closed here).
    workers : int, optional
        Size of the local cluster started when neither ``client`` nor ``scheduler`` is
        given (:func:`local_cluster`; default one worker per core); closed at the end.
    task_size : int, optional
        Cases per task.
    retries : int, optional
        Reruns of a task that raised.
    progress : bool, optional
        Show a progress line on stderr (tasks, runs, time left).
    callback : callable, optional
        ``callback(tasks_done, tasks_total, path)`` after each file is written.

    Returns
    -------
    SweepSummary

    Raises
    ------
    SweepError
        Tasks that still failed after ``retries`` (every other task was written).
    KeyboardInterrupt
        Re-raised after cancelling the pending tasks and closing what this call opened;
        the files written so far stay, and a rerun resumes.

    Notes
    -----
    A local cluster starts worker processes, so a script calling this must guard its
    top level with ``if __name__ == "__main__":``.
    """
    if sum(x is not None for x in (client, scheduler, workers)) > 1:
        raise InputError("client, scheduler, workers: give at most one of them")
    if workers is not None:
        as_int(workers, "workers", minimum=1)
    if scheduler is not None and not isinstance(scheduler, str):
        raise InputError(
            f"scheduler: expected an address like tcp://HOST:PORT, got {type(scheduler).__name__}"
        )
    cases = build_grid(methods, min_j, median_j, energy, steps_per_rotation, rotations, inv_inertia)
    size = as_int(task_size, "task_size", minimum=1)
    n_retries = as_int(retries, "retries", minimum=0)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"out: expected a folder, got the file {str(out)!r}")
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(".part-*.tmp"):
        stale.unlink()
    done = completed_case_ids(folder)
    todo = [c for c in cases if c.case_id not in done]
    tasks = split_tasks(todo, size)
    start = time.monotonic()
    if tasks:
        _run_tasks(tasks, folder, client, scheduler, workers, n_retries, progress, callback)
    return SweepSummary(folder, len(cases), len(cases) - len(todo), len(tasks),
                        time.monotonic() - start)  # fmt: skip


def _run_tasks(
    tasks: list[list[SweepCase]],
    folder: Path,
    client: Any,
    scheduler: str | None,
    workers: int | None,
    retries: int,
    progress: bool,
    callback: Callable[[int, int, Path], None] | None,
) -> None:
    from distributed import Client, as_completed

    with contextlib.ExitStack() as stack:
        if client is None:
            if scheduler is not None:
                client = stack.enter_context(Client(scheduler, timeout="20s"))
            else:
                cluster = stack.enter_context(local_cluster(workers))
                client = stack.enter_context(Client(cluster))
        bar = _Progress(len(tasks), sum(map(len, tasks)), sys.stderr if progress else None)
        futures = {
            client.submit(
                run_task, task, key=f"tumble-sweep-{_digest(c.case_id for c in task)}",
                retries=retries,
            ): task
            for task in tasks
        }  # fmt: skip
        failed: list[BaseException] = []
        try:
            for future in as_completed(list(futures)):
                task = futures.pop(future)
                ok = future.status == "finished"
                if ok:
                    path = _write_part(folder, future.result())
                else:
                    failed.append(
                        future.exception()
                        if future.status == "error"
                        else RuntimeError(f"task {future.key} ended {future.status}")
                    )
                # Released at once, so that a rerun on the same client computes afresh.
                future.release()
                if not ok:
                    continue
                bar.update(len(task))
                if callback is not None:
                    callback(bar.done_tasks, bar.tasks, path)
        finally:
            if futures:
                with contextlib.suppress(Exception):
                    client.cancel(list(futures))
        if failed:
            raise SweepError(
                f"{len(failed)} of {len(tasks)} tasks failed (the others are written; rerun "
                f"to retry): {type(failed[0]).__name__}: {failed[0]}"
            )


# --------------------------------------------------------------------------------------
# the command line


def _list_of(kind: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def parse(text: str) -> list[Any]:
        parts = [p.strip() for p in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        return list(dict.fromkeys(kind(p) for p in parts))

    return parse


def _bodies(text: str) -> list[np.ndarray]:
    bodies = [compare.vector3(part.strip()) for part in text.split(";") if part.strip()]
    if not bodies:
        raise argparse.ArgumentTypeError(f"expected J1,J2,J3[;J1,J2,J3...], got {text!r}")
    for J in bodies:
        if np.any(J <= 0):
            raise argparse.ArgumentTypeError(
                f"expected inverse moments > 0, got {','.join(f'{j:g}' for j in J)}"
            )
    return bodies


def _address(text: str) -> str:
    if not re.fullmatch(r"[a-z]+://[^\s/:]+:\d{1,5}", text):
        raise argparse.ArgumentTypeError(
            f"expected a scheduler address tcp://HOST:PORT, got {text!r}"
        )
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``tumble sweep`` to ``parser`` (its errors then name it)."""
    parser.set_defaults(sweep_parser=parser)
    d = scenarios.DEFAULTS
    grid = parser.add_argument_group(
        "grid (comma-separated lists; the sweep runs their Cartesian product)"
    )
    grid.add_argument(
        "--methods", type=compare.method_list, metavar="A,B,...",
        help="methods (default: all): " + ", ".join(rigid.METHODS),
    )  # fmt: skip
    grid.add_argument(
        "--min-j", type=_list_of(compare.positive_float), metavar="X,...",
        help=f"smallest inverse moment of the article's body, > 0 ({d['min_j']})",
    )  # fmt: skip
    grid.add_argument(
        "--median-j", type=_list_of(compare.fraction), metavar="F,...",
        help=f"median inverse moment above min-j, 0..1 ({d['median_j']})",
    )  # fmt: skip
    grid.add_argument(
        "--energy", type=_list_of(compare.fraction), metavar="E,...",
        help=f"initial energy between its minimum and maximum, 0..1 ({d['energy']})",
    )  # fmt: skip
    grid.add_argument(
        "--steps-per-rotation", type=_list_of(compare.steps_count), metavar="N,...",
        help=f"steps per rotation period ({d['steps_per_rotation']})",
    )  # fmt: skip
    grid.add_argument(
        "--rotations", type=_list_of(compare.rotations_count), metavar="R,...",
        help=f"duration in rotation periods ({d['rotations']})",
    )  # fmt: skip
    grid.add_argument(
        "--inv-inertia", type=_bodies, metavar="J1,J2,J3;...",
        help="explicit bodies' inverse moments, > 0, separated by ';' (instead of the "
        "article's bodies unless --min-j or --median-j is given too)",
    )  # fmt: skip
    run_group = parser.add_argument_group("running")
    run_group.add_argument(
        "--out", type=Path, required=True, metavar="DIR",
        help="dataset folder (Parquet files); a rerun skips the cases already there",
    )  # fmt: skip
    where = run_group.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler", type=_address, metavar="tcp://HOST:PORT",
        help="run on an existing Dask cluster (default: a local cluster)",
    )  # fmt: skip
    where.add_argument(
        "--workers", type=compare.positive_int, metavar="N",
        help="worker processes of the local cluster (default: one per core)",
    )  # fmt: skip
    run_group.add_argument(
        "--task-size", type=compare.positive_int, default=DEFAULT_TASK_SIZE, metavar="N",
        help="cases per task (%(default)s)",
    )  # fmt: skip
    run_group.add_argument(
        "--retries", type=int, default=DEFAULT_RETRIES, metavar="N",
        help="reruns of a failing task (%(default)s)",
    )  # fmt: skip
    run_group.add_argument("--quiet", action="store_true", help="no progress line")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Handler of ``tumble sweep``: run the sweep, print a summary line.

    Ctrl-C stops it cleanly (exit status 130, the files written so far stay); failed
    tasks or an unreachable scheduler give a one-line message and status 1.
    """
    parser = getattr(args, "sweep_parser", parser)
    if args.retries < 0:
        parser.error(f"--retries: expected an integer >= 0, got {args.retries}")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out: expected a folder, got the file {args.out}")
    try:
        summary = run_sweep(
            args.out, args.methods, args.min_j, args.median_j, args.energy,
            args.steps_per_rotation, args.rotations,
            None if args.inv_inertia is None else np.array(args.inv_inertia),
            scheduler=args.scheduler, workers=args.workers, task_size=args.task_size,
            retries=args.retries, progress=not args.quiet,
        )  # fmt: skip
    except KeyboardInterrupt:
        n = len(_parts(args.out)) if args.out.is_dir() else 0
        sys.stderr.write(
            f"\ntumble sweep: interrupted; {n} files are in {args.out}; run the same command "
            "again to resume\n"
        )
        return 130
    except ImportError as exc:
        parser.exit(
            2,
            f"tumble sweep: error: needs the sweep extra ({exc.name} is missing): "
            "pip install 'tumble[sweep]'\n",
        )
    except (SweepError, OSError) as exc:
        sys.stderr.write(f"tumble sweep: error: {exc}\n")
        return 1
    print(
        f"{summary.cases} cases: {summary.skipped} already in {summary.out}, "
        f"{summary.runs} run in {summary.tasks} tasks ({summary.seconds:.1f} s)"
    )
    return 0

"""One task of a sweep: run a list of cases and score them, on a Dask worker.

A task (:func:`run_task`, one numba thread) runs each group of its cases with equal
``(method, dt, steps)`` as **one** batched :func:`tumble.rigid.simulate` call (split only
to bound memory, :data:`BODY_RECORDS_PER_CALL`), recording every step, and scores the batch
with :func:`tumble.diagnostics.score` and :func:`tumble.diagnostics.first_flip_time`.

Scores (columns of the dataset, ``docs/sweep.md`` lists the whole schema):

* ``energy_error``: ``max |E/E0 - 1|`` over the records;
* ``momentum_drift``: ``max | |L|/|L0| - 1 |``;
* ``direction_drift``: largest angle of world ``L`` from its start, radians;
* ``attitude_error_end``: angle from the exact solution at the end, radians (the exact
  solution evaluated at the last record only);
* ``flip_time``, ``flip_time_exact``, ``flip_time_error``: the first Dzhanibekov flip of
  the method (:func:`tumble.diagnostics.first_flip_time`), of the exact motion, and
  ``flip_time / flip_time_exact - 1``;
* ``flips``, ``flip_period``, ``flip_period_error``: the flips the method completes in the
  whole run, its time between flips (below) and ``flip_period / (T/2) - 1`` against the
  exact motion's ``T/2 = flip_time_exact``;
* ``ns_per_step``: wall time per body-step of the batch's stepping (best of two
  ``simulate`` calls recording only the ends, one thread);
* ``diverged_at``: time of the first non-finite record, ``nan`` if none (the other scores
  then cover the records before it, as in :func:`tumble.scenarios.score`).

**The exact first flip.** Sweep cases start with ``L_b,m = 0`` (``L_b`` in the plane of the
smallest and largest inverse moments, see :meth:`tumble.sweep.grid.SweepCase.build`), so
the exact motion first flips at ``T/2`` with ``T`` from :func:`tumble.exact.body_period`.
It never flips (``inf``) on the separatrix, where ``T`` is infinite, and when the exact
amplitude of ``L_b,m/|L|`` is below the detector's band (a steady spin, a spherical body).

**The flip period.** The exact motion crosses ``L_b,m = 0`` at ``0, T/2, T, ...``: it
flips every ``T/2``. The method's ``k``-th crossing after the start, at ``t_k`` (each
found by the detector of :func:`tumble.diagnostics.first_flip_time`), gives its mean time
between flips ``t_k / k``; ``flip_period`` is that, or the time ``t_end - t_k`` since the
last flip when it is longer: a run that stops flipping (a damped update settles into a
steady spin) is scored by the flip it has not made, not by the flips it made before. For
a method that keeps flipping, ``t_end - t_k`` is below one of its periods and
``flip_period_error`` is the time it has lost or gained by its last flip, per flip.

``flip_period_error`` is ``+inf`` when the method never flips in a run in which the exact
motion does (every engine update without a gyroscopic term: its ``L_b`` stays put), and
when the run blows up (whatever it did before); ``-1`` when it flips though the exact
motion never does; ``nan`` when neither flips.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from tumble import diagnostics, exact, rigid, rotation, scenarios
from tumble._errors import InputError
from tumble._kernels.dispatch import single_thread
from tumble.sweep import grid

__all__ = ["BODY_RECORDS_PER_CALL", "CASE_COLUMNS", "COLUMNS", "SCORE_COLUMNS", "run_task"]

#: Upper bound on bodies × records per ``simulate`` call inside a task: the trajectory
#: takes 112 bytes per body-record and the diagnostics a few times more, so this keeps a
#: task below a few hundred MB whatever the run length.
BODY_RECORDS_PER_CALL = 250_000

SCORE_COLUMNS = (
    "energy_error",
    "momentum_drift",
    "direction_drift",
    "attitude_error_end",
    "flip_time",
    "flip_time_exact",
    "flip_time_error",
    "flips",
    "flip_period",
    "flip_period_error",
    "ns_per_step",
    "diverged_at",
)
"""Score columns (module docstring)."""

CASE_COLUMNS = ("j1", "j2", "j3", "inertia_ratio", "dt", "steps", "period")
"""The initial-value problem a case ran: inverse moments, their ratio ``J_max / J_min``
(``= I_max / I_min``), time step, steps, period."""

COLUMNS = ("case_id", *grid.GRID_COLUMNS, *CASE_COLUMNS, *SCORE_COLUMNS)
"""Every column of a row, in order."""


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


def _flips(
    t: np.ndarray, L_body: np.ndarray, J: np.ndarray, band: float
) -> tuple[np.ndarray, np.ndarray]:
    """Flips completed in each run and the time of the last, shapes ``(b,)`` each.

    The hysteresis of :func:`tumble.diagnostics.first_flip_time` along the whole run: with
    ``x = L_b,m / |L_b(t0)|``, a flip completes at each record where ``|x| >= band`` on the
    side opposite to the previous such record. The last flip's time is the detector's,
    run on the records from the last one outside the band before that flip, the records
    before it replaced by a momentum of the same norm along ``±e_m`` (the detector's
    start: its band and its sign, outside the band).
    """
    n, nb = L_body.shape[:2]
    cols = np.arange(nb)
    mid = np.argsort(J, axis=-1, kind="stable")[:, 1]
    norm0 = np.linalg.norm(L_body[0], axis=-1)
    with np.errstate(all="ignore"):
        x = L_body[:, cols, mid] / norm0
        out = np.all(np.isfinite(L_body), axis=-1) & (np.abs(x) >= band)
    side = np.where(out, np.sign(x), 0.0)
    rec = np.arange(n)[:, None]
    last_out = np.maximum.accumulate(np.where(out, rec, -1), axis=0)
    before = np.vstack([np.full((1, nb), -1), last_out[:-1]])
    side_before = np.where(before >= 0, side[np.maximum(before, 0), cols], 0.0)
    done = out & (side_before * side < 0)
    count = done.sum(axis=0)
    last = np.full(nb, np.nan)
    b = np.flatnonzero(count)
    if b.size:
        k = n - 1 - np.argmax(done[::-1][:, b], axis=0)
        start = before[k, b]
        L = L_body[np.maximum(rec, start), b]
        lead = np.zeros((b.size, 3))
        lead[np.arange(b.size), mid[b]] = side[start, b] * norm0[b]
        L = np.where((rec < start)[..., None], lead, L)
        last[b] = diagnostics.first_flip_time(t, L, J[b], band)
    return count, last


def _score_batch(method: str, cases: Sequence[scenarios.Case]) -> dict[str, np.ndarray]:
    """Run ``cases`` (equal ``dt`` and ``steps``) as one ``simulate`` call and score them."""
    dt, steps = cases[0].dt, cases[0].steps
    q = np.array([c.q0 for c in cases])
    w = np.array([c.omega0 for c in cases])
    J = np.array([c.inv_inertia for c in cases])
    nb = len(cases)
    start = time.perf_counter()
    # A blow-up is scored (on the records before it), not warned about.
    tr = rigid.simulate(q, w, J, dt, steps, method, on_divergence="ignore")
    per_step = (time.perf_counter() - start) / (nb * steps)
    if method != "exact":
        # Stepping cost alone, the better of two runs. "exact" evaluates the closed form
        # per record, so its cost is per evaluation, from the run above.
        per_step = scenarios.stepping_time(q, w, J, dt, steps, method, runs=2)
    scores = diagnostics.score(tr, J, attitude="end")
    flip = diagnostics.first_flip_time(tr.t, tr.L_body, J)
    flip_exact = _exact_flip_time(q, w, J, diagnostics.FLIP_BAND)
    flips, last = _flips(tr.t, tr.L_body, J, diagnostics.FLIP_BAND)
    with np.errstate(invalid="ignore", divide="ignore"):
        flip_error = flip / flip_exact - 1.0
        period = np.maximum(last / flips, tr.t[-1] - last)
        period_error = period / flip_exact - 1.0
    # No flip where the exact motion flips, or a blow-up: no flip period to speak of.
    missed = (flips == 0) & (flip_exact <= tr.t[-1])
    period_error[missed | np.isfinite(scores.diverged_at)] = math.inf
    return {
        "energy_error": scores.energy_error,
        "momentum_drift": scores.momentum_drift,
        "direction_drift": scores.direction_drift,
        "attitude_error_end": scores.attitude_error_end,
        "flip_time": flip,
        "flip_time_exact": flip_exact,
        "flip_time_error": flip_error,
        "flips": flips.astype(np.float64),
        "flip_period": period,
        "flip_period_error": period_error,
        "ns_per_step": np.full(nb, per_step * 1e9),
        "diverged_at": scores.diverged_at,
    }


def _batches(built: list[tuple[int, scenarios.Case]]) -> Iterator[list[tuple[int, scenarios.Case]]]:
    """Consecutive runs of equal ``(dt, steps)``, at most :data:`BODY_RECORDS_PER_CALL`."""
    for _, group in itertools.groupby(built, key=lambda ic: (ic[1].dt, ic[1].steps)):
        members = list(group)
        size = max(1, BODY_RECORDS_PER_CALL // (members[0][1].steps + 1))
        for i in range(0, len(members), size):
            yield members[i : i + size]


def run_task(cases: Sequence[grid.SweepCase]) -> dict[str, list[Any]]:
    """Run and score a task's cases (on a Dask worker): one row per case, in their order.

    Cases sharing a method, ``dt`` and step count run as one batched
    :func:`tumble.rigid.simulate` call on one numba thread (workers are one process per
    core). A pure function of ``cases``, so Dask may rerun it anywhere.

    Returns
    -------
    dict
        ``{column: list}`` with the columns :data:`COLUMNS`.
    """
    if isinstance(cases, str | bytes) or not isinstance(cases, Sequence):
        raise InputError(f"cases: expected a list of SweepCase, got {type(cases).__name__}")
    for c in cases:
        if not isinstance(c, grid.SweepCase):
            raise InputError(f"cases: expected a list of SweepCase, got a {type(c).__name__}")
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
                        "inertia_ratio": float(np.max(case.inv_inertia) / np.min(case.inv_inertia)),
                        "dt": case.dt,
                        "steps": case.steps,
                        "period": case.period,
                        **{name: float(v[k]) for name, v in scores.items()},
                    }
    return {name: [r[name] for r in rows] for name in COLUMNS}

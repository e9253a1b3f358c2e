"""Conservation and error measures of rigid-body trajectories.

Every function takes a *trajectory*, the record of a simulation with the record index
first, and the body's principal inverse moments:

* a :class:`tumble.rigid.Trajectory`, or any object with attributes ``t`` (n,),
  ``q`` (n, ..., 4) and ``omega`` (n, ..., 3) (world frame), and optionally ``L_body``
  (n, ..., 3) and ``inv_inertia`` (..., 3);
* or plain arrays, as a tuple ``(t, q, omega)`` or a :class:`TrajectoryArrays`.

``inv_inertia`` (..., 3) is required unless the trajectory carries it. The body-frame
angular momentum is the trajectory's ``L_body`` when it has one (the integrator's own
record, which keeps what a zero inverse moment would hide), else
``L_b = J⁺ Rᵀ omega`` with ``J⁺`` the pseudo-inverse (0 on axes with ``J_i = 0``, the
constraint model of :mod:`tumble.rigid`). Everything is computed in float64 from
``(q, L_b, J)``: ``omega_b = J L_b``, ``L_w = R L_b``, ``E = ½ L_b·J L_b``.

Results have shape ``(n, ...)`` (per record) or ``(...)`` (per body), float64.

:func:`score` is the one scorer of a trajectory: the worst errors per body, against the
exact solution or a given reference, over each body's finite records. ``tumble compare``,
the lab, sweeps, :func:`tumble.scenarios.score` and :func:`summary` all read it.
:func:`first_flip_time` finds the first Dzhanibekov flip of recorded runs.

One module per concept, all re-exported here: :mod:`~tumble.diagnostics.records` (the
trajectory forms, how they are read and scaled, :func:`finite_records`),
:mod:`~tumble.diagnostics.measures` (the per-record measures),
:mod:`~tumble.diagnostics.scores` (:func:`score`, :func:`summary`) and
:mod:`~tumble.diagnostics.flips` (:func:`first_flip_time`).
"""

from tumble.diagnostics.flips import FLIP_BAND, first_flip_time
from tumble.diagnostics.measures import (
    K_ZERO_RTOL,
    attitude_deviation,
    attitude_error,
    direction_drift,
    energy,
    energy_error,
    energy_factor,
    k_factor,
    max_energy_error,
    momentum_body,
    momentum_drift,
    momentum_norm,
    momentum_world,
)
from tumble.diagnostics.records import TrajectoryArrays, TrajectoryLike, finite_records
from tumble.diagnostics.scores import ATTITUDE_RECORDS, TrajectoryScores, score, summary

__all__ = [
    "ATTITUDE_RECORDS",
    "FLIP_BAND",
    "K_ZERO_RTOL",
    "TrajectoryArrays",
    "TrajectoryLike",
    "TrajectoryScores",
    "attitude_deviation",
    "attitude_error",
    "direction_drift",
    "energy",
    "energy_error",
    "energy_factor",
    "finite_records",
    "first_flip_time",
    "k_factor",
    "max_energy_error",
    "momentum_body",
    "momentum_drift",
    "momentum_norm",
    "momentum_world",
    "score",
    "summary",
]

"""Scores of a trajectory: the worst errors per body, against the exact motion or a reference.

:func:`score` is the one scorer of a trajectory, over each body's finite records;
``tumble compare``, the lab, sweeps, :func:`tumble.scenarios.score` and :func:`summary` all
read it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from tumble import rotation
from tumble._errors import InputError
from tumble._validate import as_choice, as_float_array, describe
from tumble.diagnostics.measures import (
    angle_between,
    direction_drift_of,
    dot,
    energy_error_of,
    energy_scaled,
    exact_q,
    momentum_drift_of,
    world_direction,
)
from tumble.diagnostics.records import Data, TrajectoryLike, fields, ldexp, read, to_batch

__all__ = ["ATTITUDE_RECORDS", "TrajectoryScores", "score", "summary"]


class TrajectoryScores(NamedTuple):
    """Worst values of a trajectory's error measures, per body (what :func:`score` returns).

    Every field is a float64 array of the trajectory's batch shape ``(...)`` (0-d for one
    body). Maxima run over each body's finite records ``k < n_b`` (all records unless it
    blew up).

    Attributes
    ----------
    energy_error : ndarray
        ``max_k |E_k/E_0 - 1|`` (:func:`energy_error`).
    momentum_drift : ndarray
        ``max_k | |L_k|/|L_0| - 1 |`` (:func:`momentum_drift`).
    direction_drift : ndarray
        ``max_k`` angle of world ``L_k`` from ``L_0``, radians (:func:`direction_drift`).
    attitude_error_end : ndarray
        Angle between ``q_k`` and the reference attitude at the last finite record
        ``k = n_b - 1``, radians.
    attitude_error_max : ndarray
        ``max_k`` of that angle; ``nan`` when :func:`score` was asked for the end only.
    diverged_at : ndarray
        ``t_{n_b}``, the time of the body's first non-finite record; ``nan`` if none.
    """

    energy_error: np.ndarray
    momentum_drift: np.ndarray
    direction_drift: np.ndarray
    attitude_error_end: np.ndarray
    attitude_error_max: np.ndarray
    diverged_at: np.ndarray


ATTITUDE_RECORDS = ("all", "end")
"""What :func:`score` compares with the reference attitude: every record or the last one."""


def score(
    trajectory: TrajectoryLike,
    inv_inertia: ArrayLike | None = None,
    reference: TrajectoryLike | ArrayLike | None = None,
    attitude: str = "all",
    drift: str = "initial",
) -> TrajectoryScores:
    """Score a trajectory of any batch of bodies against a reference: worst errors per body.

    With ``n_b`` the number of leading records of body ``b`` whose ``q``, ``omega`` (and
    ``L_body``) are finite (all ``n`` unless the run blew up), the scores are

    * ``energy_error = max_{k<n_b} |E_k/E_0 - 1|``, ``E = ½ L_b·J L_b``;
    * ``momentum_drift = max_{k<n_b} | |L_k|/|L_0| - 1 |`` (any frame);
    * ``direction_drift = max_{k<n_b} atan2(|L_w,k × L_w,0|, L_w,k·L_w,0)``, world frame;
    * ``attitude_error_end = θ_{n_b-1}`` and ``attitude_error_max = max_{k<n_b} θ_k`` with
      ``θ_k`` the angle between ``q_k`` and the reference attitude (double-cover aware,
      :func:`tumble.rotation.rotation_angle`);
    * ``diverged_at = t_{n_b}`` (``nan`` when ``n_b = n``).

    A ratio beyond the float range (a run whose ``|L|`` grew by a factor of 1e154 before it
    overflowed) scores ``inf``, as :func:`energy_error` and :func:`momentum_drift` give it.

    Parameters
    ----------
    trajectory : Trajectory, object with ``t``, ``q``, ``omega``, or tuple ``(t, q, omega)``
        Records ``t`` ``(n,)``, ``q`` ``(n, ..., 4)``, world ``omega`` ``(n, ..., 3)`` and
        optionally ``L_body`` ``(n, ..., 3)`` (module docstring). Records after a body's
        first non-finite one are left out of its scores; its first record must be finite.
    inv_inertia : array_like, shape (..., 3), optional
        Principal inverse moments, broadcast against the batch; required unless the
        trajectory carries them.
    reference : Trajectory or array_like, shape (n, ..., 4), optional
        Reference attitudes at the records (a Trajectory or a tuple ``(t, q, omega)``: its
        ``q``), batch broadcast against the trajectory's, for example one exact solution
        shared by many methods. Default: the exact torque-free motion
        (:func:`tumble.exact.torque_free_from_momentum`) from each
        body's first record ``(q_0, L_b,0)``, at ``t - t_0``.
    attitude : {"all", "end"}, optional
        ``"end"`` compares only the last finite record (``attitude_error_max`` is then
        ``nan``): one exact evaluation per body instead of one per record.
    drift : {"initial", "reference"}, optional
        What the energy, ``|L|`` and direction scores measure against. ``"initial"``: the
        first record, as above (for torque-free motion, where all three are invariants).
        ``"reference"``: the reference motion at each record, for forced motion, where
        they change; ``reference`` must then carry ``omega`` (a Trajectory or a tuple
        ``(t, q, omega)``, say from :func:`tumble.torques.reference`). The scores become
        ``max |E_k - E_ref,k| / E_ref,0``, ``max | |L_k| - |L_ref,k| | / |L_ref,0|`` and the
        largest angle between ``L_w,k`` and ``L_w,ref,k`` (normalised by the reference's
        initial values, since forced motion may take ``E`` and ``|L|`` to zero).

    Returns
    -------
    TrajectoryScores
        Arrays of the batch shape ``(...)``, float64.

    Raises
    ------
    InputError
        Bad trajectory, inverse moments or reference (named), or a first record that is not
        finite.
    """
    mode = as_choice(attitude, "attitude", ATTITUDE_RECORDS)
    against = as_choice(drift, "drift", ("initial", "reference"))
    d = read(trajectory, inv_inertia, finite_prefix=True)
    s = _score(d, trajectory, reference, mode)
    if against == "initial":
        return s
    if not ((isinstance(reference, tuple) and len(reference) == 3) or hasattr(reference, "omega")):
        raise InputError(
            'reference: expected a Trajectory or a tuple (t, q, omega) with drift="reference", '
            f"got {describe(reference)}"
        )
    ref = read(reference, d.J)  # type: ignore[arg-type]
    n = d.t.shape[0]
    if ref.t.shape[0] != n:
        raise InputError(
            f"reference: expected {n} records (one per trajectory record), got {ref.t.shape[0]}"
        )
    valid = np.arange(n).reshape(n, *(1,) * len(d.batch)) < d.n_finite
    u_ref, e_ref = to_batch(ref.u, d.batch), to_batch(ref.e, d.batch)[..., 0]
    e = d.e[..., 0]
    energy = _against(energy_scaled(d), e, dot(u_ref, d.v * u_ref), e_ref, 2)
    norm = _against(np.linalg.norm(d.u, axis=-1), e, np.linalg.norm(u_ref, axis=-1), e_ref, 1)
    angle = angle_between(world_direction(d), to_batch(world_direction(ref), d.batch))
    return s._replace(
        energy_error=_worst(np.abs(energy), valid),
        momentum_drift=_worst(np.abs(norm), valid),
        direction_drift=_worst(angle, valid),
    )


def _against(
    x: np.ndarray, e: np.ndarray, x_ref: np.ndarray, e_ref: np.ndarray, power: int
) -> np.ndarray:
    """``(X - X_ref) / X_ref[0]`` of ``X = x 2^(power e)``, ``X_ref = x_ref 2^(power e_ref)``:
    relative to the reference's initial value (forced motion may take E and |L| to 0), in
    units of its power of two, so that nothing overflows but the result."""
    unit = e_ref[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        X = ldexp(x, power * (e - unit)) - ldexp(x_ref, power * (e_ref - unit))
        return X / x_ref[0]


def summary(
    trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None
) -> dict[str, np.ndarray]:
    """Worst values over the records, per body: :func:`score` for finite trajectories.

    Returns a dict of arrays of shape ``(...)``: ``"energy_error"`` (max relative energy
    error), ``"momentum_drift"`` (max ``| |L|/|L0| - 1 |``), ``"direction_drift"`` (max
    angle of ``L_w`` from ``L_w(t0)``, radians) and ``"attitude_error"`` (max angle from the
    exact solution, radians). Unlike :func:`score`, every record must be finite. As in
    :func:`score`, a ratio beyond the float range (a record whose energy is more than 1e308
    times the first one's) gives ``inf``.
    """
    s = _score(read(trajectory, inv_inertia), trajectory, None, "all")
    return {
        "energy_error": s.energy_error,
        "momentum_drift": s.momentum_drift,
        "direction_drift": s.direction_drift,
        "attitude_error": s.attitude_error_max,
    }


def _score(d: Data, trajectory: TrajectoryLike, reference: object, mode: str) -> TrajectoryScores:
    n = d.t.shape[0]
    valid = np.arange(n).reshape(n, *(1,) * len(d.batch)) < d.n_finite
    last = d.n_finite - 1
    if reference is None:
        q = d.q
    else:
        # The trajectory's own q rather than the normalised d.q: rotation_angle is scale
        # invariant, and these are the numbers scenarios.score has always given.
        raw = as_float_array(fields(trajectory, d.J)[1], "trajectory.q", (4,), finite=False)
        q = to_batch(raw, d.batch)
    if mode == "all":
        q_ref = exact_q(d, d.t - d.t[0]) if reference is None else _reference(reference, n, d.batch)
        theta = _angles(q, q_ref, valid)
        attitude_end, attitude_max = _at(theta, last), _worst(theta, valid)
    else:
        if reference is None:
            # Exact attitudes at the few distinct end times only, then each body's own.
            ends, which = np.unique(d.t[last] - d.t[0], return_inverse=True)
            at_ends = exact_q(d, ends)
            q_end = np.take_along_axis(at_ends, which.reshape(1, *d.batch, 1), axis=0)[0]
        else:
            q_end = _at(_reference(reference, n, d.batch), last)
        attitude_end = np.asarray(rotation.rotation_angle(_at(q, last), q_end))
        attitude_max = np.full(d.batch, np.nan)
    return TrajectoryScores(
        energy_error=_worst(np.abs(energy_error_of(d)), valid),
        momentum_drift=_worst(np.abs(momentum_drift_of(d)), valid),
        direction_drift=_worst(direction_drift_of(d), valid),
        attitude_error_end=np.asarray(attitude_end, dtype=np.float64),
        attitude_error_max=attitude_max,
        diverged_at=np.where(d.n_finite < n, d.t[np.minimum(d.n_finite, n - 1)], np.nan),
    )


def _reference(reference: object, n: int, batch: tuple[int, ...]) -> np.ndarray:
    """Reference attitudes ``(n, *batch, 4)`` from a Trajectory, a ``(t, q, omega)`` tuple
    or quaternions."""
    if isinstance(reference, tuple) and len(reference) == 3:
        reference = reference[1]
    q = as_float_array(getattr(reference, "q", reference), "reference", (4,), finite=False)
    rb = q.shape[1:-1]
    if q.ndim < 2 or q.shape[0] != n or len(rb) > len(batch):
        raise InputError(
            f"reference: expected shape ({n}, ..., 4), one attitude per record with a batch "
            f"that broadcasts to {batch}, got shape {q.shape}"
        )
    aligned = q.reshape(n, *(1,) * (len(batch) - len(rb)), *rb, 4)
    try:
        return np.broadcast_to(aligned, (n, *batch, 4))
    except ValueError:
        raise InputError(
            f"reference: expected a batch that broadcasts to {batch}, got shape {q.shape}"
        ) from None


def _angles(q: np.ndarray, q_ref: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Rotation angles ``(n, *batch)`` on the valid records, ``nan`` elsewhere. The
    trajectory's records are checked before; a reference attitude that is no rotation
    (a quaternion whose squared norm is 0, or underflows) raises naming ``reference``."""
    try:
        if np.all(valid):
            return np.asarray(rotation.rotation_angle(q, q_ref))
        theta = np.full(valid.shape, np.nan)
        theta[valid] = rotation.rotation_angle(q[valid], q_ref[valid])
    except InputError as exc:
        raise InputError(f"reference: {str(exc).partition(': ')[2]}") from None
    return theta


def _at(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``x[k_b, b]`` per body: ``x`` ``(n, *batch, ...)``, ``k`` ``(*batch,)`` record indices."""
    index = k.reshape(1, *k.shape, *(1,) * (x.ndim - 1 - k.ndim))
    return np.take_along_axis(x, index, axis=0)[0]


def _worst(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Largest value over the valid records, per body: ``(n, *batch)`` -> ``(*batch,)``."""
    if np.all(valid):
        return np.max(x, axis=0)
    return np.max(np.where(valid, x, -np.inf), axis=0)

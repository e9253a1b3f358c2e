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
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from tumble import exact, rotation
from tumble._errors import InputError
from tumble._validate import (
    as_choice,
    as_float_array,
    as_scalar,
    broadcast_leading,
    check_finite_result,
    describe,
)
from tumble.trajectory import Trajectory

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

#: ``k = omega × L`` counts as zero when ``|k| <= K_ZERO_RTOL |omega| |L|`` (``L`` along a
#: principal axis, or a spherical body); ``J_k`` is then undefined (0/0) and
#: :func:`k_factor` returns ``J_L``, the value it tends to (the reference's fallback). The
#: size only has to catch round-off of an exact zero: ``J_k`` is a bounded Rayleigh quotient.
K_ZERO_RTOL = 1e-12


class TrajectoryArrays(NamedTuple):
    """Plain arrays of a trajectory: times ``(n,)``, ``q`` ``(n, ..., 4)``, world ``omega``."""

    t: ArrayLike
    q: ArrayLike
    omega: ArrayLike


TrajectoryLike = Trajectory | TrajectoryArrays | tuple[ArrayLike, ArrayLike, ArrayLike]
"""What the functions of this module read: a :class:`~tumble.trajectory.Trajectory` (or any
object with ``t``, ``q``, ``omega`` and optionally ``L_body``), a :class:`TrajectoryArrays`
or a tuple ``(t, q, omega)``."""


class _Data(NamedTuple):
    t: np.ndarray  # (n,)
    q: np.ndarray  # (n, *batch, 4), unit
    L_body: np.ndarray  # (n, *batch, 3)
    J: np.ndarray  # (*batch, 3)
    batch: tuple[int, ...]
    n_finite: np.ndarray  # (*batch,) int, leading records that are finite
    # L_body = u 2^e per record and J = v 2^f per body, max |u_i|, max |v_i| in [1/2, 1):
    # the measures square and multiply these, which cannot overflow or underflow, and put
    # the powers of two back once (docs/limitations.md: huge finite input).
    u: np.ndarray  # (n, *batch, 3)
    e: np.ndarray  # (n, *batch, 1) int
    v: np.ndarray  # (*batch, 3)
    f: np.ndarray  # (*batch, 1) int


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(m, e)`` with ``x = m 2^e`` along the last axis and ``max |m_i|`` in ``[1/2, 1)``
    (``e = 0`` for a zero vector); exact (powers of two)."""
    e = np.frexp(np.max(np.abs(x), axis=-1, keepdims=True))[1]
    return np.ldexp(x, -e), e


def _ldexp(m: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``m 2^e``; ``inf`` beyond the float range (the scores' honest value of a blow-up)."""
    with np.errstate(over="ignore"):
        return np.ldexp(m, e)


def _finite(x: np.ndarray, what: str) -> np.ndarray:
    """``x``, or :class:`InputError` naming the trajectory if ``what`` passed the float range
    (a per-record measure of finite records)."""
    check_finite_result("trajectory, inv_inertia", what, x)
    return x


def _fields(trajectory: TrajectoryLike, inv_inertia: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``(t, q, omega, L_body or None, inv_inertia)`` of any accepted trajectory form."""
    if isinstance(trajectory, tuple | list):
        if len(trajectory) != 3:
            raise InputError(
                "trajectory: expected a Trajectory or a tuple (t, q, omega), "
                f"got a sequence of length {len(trajectory)}"
            )
        t, q, w = trajectory
        return t, q, w, None, inv_inertia
    if all(hasattr(trajectory, a) for a in ("t", "q", "omega")):
        if inv_inertia is None:
            inv_inertia = getattr(trajectory, "inv_inertia", None)
        return (
            trajectory.t, trajectory.q, trajectory.omega, getattr(trajectory, "L_body", None),
            inv_inertia,
        )  # fmt: skip
    raise InputError(
        "trajectory: expected an object with attributes t, q, omega (a Trajectory) or "
        f"a tuple (t, q, omega), got {type(trajectory).__name__}"
    )


def _states(
    t: Any, q: Any, w: Any, L_body: Any, finite: bool
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Times ``(n,)`` and the state arrays by name, float64, validated record index first."""
    t = as_float_array(t, "trajectory.t").astype(np.float64)
    if t.ndim != 1 or t.shape[0] == 0:
        raise InputError(f"trajectory.t: expected shape (n,) with n >= 1, got shape {t.shape}")
    n = t.shape[0]
    arrays = {
        "trajectory.q": as_float_array(q, "trajectory.q", (4,), finite=finite),
        "trajectory.omega": as_float_array(w, "trajectory.omega", (3,), finite=finite),
    }
    if L_body is not None:
        arrays["trajectory.L_body"] = as_float_array(
            L_body, "trajectory.L_body", (3,), finite=finite
        )
    for name, a in arrays.items():
        if a.ndim < 2 or a.shape[0] != n:
            raise InputError(
                f"{name}: expected the record index first, shape ({n}, ..., {a.shape[-1]}) "
                f"to match trajectory.t, got shape {a.shape}"
            )
    return t, {k: a.astype(np.float64) for k, a in arrays.items()}


def _to_batch(a: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``(n, *b, k)`` broadcast to ``(n, *batch, k)``, aligning the batch axes on the right.

    The record axis stays first: plain ``broadcast_to`` would align a batch-free ``(n, k)``
    array's records with the batch instead.
    """
    n, k, inner = a.shape[0], a.shape[-1], a.shape[1:-1]
    aligned = a.reshape(n, *(1,) * (len(batch) - len(inner)), *inner, k)
    return np.broadcast_to(aligned, (n, *batch, k))


def _leading_finite(arrays: dict[str, np.ndarray], batch: tuple[int, ...]) -> np.ndarray:
    """Per body, the number of leading records where every state array is finite."""
    n = next(iter(arrays.values())).shape[0]
    ok = np.ones((n, *batch), dtype=bool)
    for a in arrays.values():
        ok &= np.all(np.isfinite(_to_batch(a, batch)), axis=-1)
    return np.where(np.all(ok, axis=0), n, np.argmin(ok, axis=0))


def _read(trajectory: TrajectoryLike, inv_inertia: Any, finite_prefix: bool = False) -> _Data:
    """Validate a trajectory and the inverse moments; float64 arrays broadcast to the batch.

    With ``finite_prefix`` the records may stop being finite (a blow-up): ``n_finite``
    counts each body's leading finite records, and the records after them are replaced by
    the body's first record, so that they read as valid and the caller can mask them out.
    """
    t, q, w, Lb_in, inv_inertia = _fields(trajectory, inv_inertia)
    if inv_inertia is None:
        raise InputError("inv_inertia: required (the trajectory does not carry it)")
    J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
    if np.any(J < 0):
        raise InputError(
            f"inv_inertia: expected inverse moments >= 0, got minimum {float(np.min(J)):.6g}"
        )
    t, arrays = _states(t, q, w, Lb_in, finite=not finite_prefix)
    n = t.shape[0]
    batch = broadcast_leading(**{k: (a[0], 1) for k, a in arrays.items()}, inv_inertia=(J, 1))
    n_finite = _leading_finite(arrays, batch) if finite_prefix else np.full(batch, n)
    if np.any(n_finite == 0):
        raise InputError("trajectory: the first record is not finite")
    if np.any(n_finite < n):
        valid = (np.arange(n).reshape(n, *(1,) * len(batch)) < n_finite)[..., None]
        full = {k: _to_batch(a, batch) for k, a in arrays.items()}
        arrays = {k: np.where(valid, a, a[:1]) for k, a in full.items()}
    q = _to_batch(rotation.unit_quat(arrays["trajectory.q"], "trajectory.q"), batch)
    J = np.broadcast_to(J, (*batch, 3))
    if "trajectory.L_body" in arrays:
        Lb = _to_batch(arrays["trajectory.L_body"], batch)
    else:
        # Rotated scaled, then divided: omega_b / J overflows only where L_b does.
        w, we = _split(_to_batch(arrays["trajectory.omega"], batch))
        wb = rotation.quat_rotate(rotation.quat_conjugate(q), w)
        with np.errstate(over="ignore"):
            Lb = np.ldexp(np.divide(wb, J, out=np.zeros(wb.shape), where=J > 0), we)
        check_finite_result(
            "trajectory.omega, inv_inertia", "the angular momentum L_b = omega_b / J", Lb
        )
    u, e = _split(Lb)
    v, f = _split(J)
    return _Data(t, q, Lb, J, batch, n_finite, u, e, v, f)


def finite_records(trajectory: TrajectoryLike) -> np.ndarray:
    """Number of leading records whose state is finite, per body, shape ``(...)`` (int).

    A record counts while its ``q``, ``omega`` and (when the trajectory has it) ``L_body``
    are all finite: ``n`` for a run that never blew up, else the index of the body's first
    non-finite record. The state arrays' batches broadcast as everywhere in this module.
    """
    t, q, w, L_body, _ = _fields(trajectory, None)
    _, arrays = _states(t, q, w, L_body, finite=False)
    return _leading_finite(arrays, broadcast_leading(**{k: (a[0], 1) for k, a in arrays.items()}))


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


# Per-record measures of read data, shared by the public functions and by score().


def _world_direction(d: _Data) -> np.ndarray:
    """``R u``: the world momentum up to the power of two of each record."""
    return rotation.quat_rotate(d.q, d.u)


def _ratio(x: np.ndarray, x0: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``(x / x0) 2^shift - 1`` (``x0 > 0``); ``inf`` where a ratio passes the float range."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _ldexp(x / x0, shift) - 1.0


def _momentum_drift(d: _Data) -> np.ndarray:
    norm = np.linalg.norm(d.u, axis=-1)
    e = d.e[..., 0]
    drift = _ratio(norm, norm[0], e - e[0])
    # L(t0) = 0: 0 while L stays 0, inf once it is not (the documented values).
    return np.where(norm[0] == 0.0, np.where(norm == 0.0, 0.0, np.inf), drift)


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``atan2(|a × b|, a·b)``: the angle between vectors of moderate size."""
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), _dot(a, b))


def _direction_drift(d: _Data) -> np.ndarray:
    a = _world_direction(d)
    return _angle(a, a[0])


def _energy_scaled(d: _Data) -> np.ndarray:
    """``2E / 2^(2e + f)`` per record: the energy of the scaled ``u``, ``v``, in [0, 3)."""
    return _dot(d.u, d.v * d.u)


def _energy(d: _Data) -> np.ndarray:
    return _ldexp(_energy_scaled(d), 2 * d.e[..., 0] + d.f[..., 0] - 1)


def _energy_error(d: _Data) -> np.ndarray:
    Eu = _energy_scaled(d)
    e = d.e[..., 0]
    # E0 = 0 (L(t0) = 0, or J = 0 on its axes): the absolute energy E - E0 = E instead.
    zero = Eu[0] == 0.0
    return np.where(zero, _energy(d), _ratio(Eu, np.where(zero, 1.0, Eu[0]), 2 * (e - e[0])))


def _exact_q(d: _Data, t: np.ndarray) -> np.ndarray:
    """Exact torque-free attitudes ``(len(t), *batch, 4)`` from the first record, at ``t``."""
    J = np.broadcast_to(d.J, (*d.batch, 3))
    try:
        return exact.torque_free_from_momentum(d.q[0], d.L_body[0], J, t)[0]
    except InputError:
        # Its message names torque_free_from_momentum's arguments (L_body0, phi): say
        # which of the caller's arguments made the exact motion unrepresentable.
        raise InputError(
            "trajectory, inv_inertia: too large, the exact torque-free motion from the first "
            "record overflows float64 (it needs |L_b| well below 1e150 and phases below "
            f"exact.MAX_PHASE = {exact.MAX_PHASE:.3g})"
        ) from None


# --------------------------------------------------------------------------------------
# per-record measures


def momentum_body(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Body-frame angular momentum path ``L_b(t)``, shape ``(n, ..., 3)``.

    ``L_b = J⁺ Rᵀ omega`` (or the trajectory's ``L_body``). For free motion it moves on
    the intersection of the sphere ``|L_b| = |L|`` and the energy ellipsoid
    ``L_b·J L_b = 2E``: the article's body-frame figures.
    """
    return np.array(_read(trajectory, inv_inertia).L_body)


def momentum_world(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """World-frame angular momentum ``L_w = R L_b``, shape ``(n, ..., 3)`` (constant if free)."""
    d = _read(trajectory, inv_inertia)
    return _finite(_ldexp(_world_direction(d), d.e), "the world angular momentum")


def momentum_norm(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """``|L|`` per record, shape ``(n, ...)``; frame independent."""
    d = _read(trajectory, inv_inertia)
    return _finite(_ldexp(np.linalg.norm(d.u, axis=-1), d.e[..., 0]), "|L|")


def momentum_drift(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Relative drift of ``|L|``: ``|L(t)| / |L(t0)| - 1``, shape ``(n, ...)``.

    0 where ``L(t0) = 0`` and ``L(t) = 0``; ``inf`` where only ``L(t0) = 0``, and where the
    ratio passes the float range (a run that blew up by more than 1e308).
    """
    return _momentum_drift(_read(trajectory, inv_inertia))


def direction_drift(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Angle (radians) between the world momentum ``L_w(t)`` and ``L_w(t0)``, ``(n, ...)``.

    ``atan2(|a × b|, a·b)``, accurate for small angles; 0 where either vector is zero.
    Free motion conserves the direction, so this measures an integrator's error in it.
    """
    return _direction_drift(_read(trajectory, inv_inertia))


def energy(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Kinetic energy ``E = ½ L_b·J L_b = ½ omega·L``, shape ``(n, ...)``."""
    return _finite(_energy(_read(trajectory, inv_inertia)), "the kinetic energy")


def energy_error(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Relative energy error ``E(t) / E(t0) - 1``, shape ``(n, ...)``.

    Where ``E(t0) = 0`` the absolute ``E(t) - E(t0)`` is returned instead (no 0/0). Like
    the scores, ``inf`` where the error passes the float range (a run that blew up: ``E``
    grew by more than 1e308; :func:`energy` raises where ``E`` itself does).
    """
    return _energy_error(_read(trajectory, inv_inertia))


def max_energy_error(
    trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None
) -> np.ndarray:
    """``max_t |E(t) / E(t0) - 1|`` per body, shape ``(...)`` (see :func:`energy_error`):
    ``inf`` for a body whose error passes the float range (a run that blew up)."""
    return np.max(np.abs(energy_error(trajectory, inv_inertia)), axis=0)


def energy_factor(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """The article's energy factor ``J_L = L·JL / |L|² = 2E / |L|²``, shape ``(n, ...)``.

    Body frame (``L_b·J L_b``, the same number as ``L_w·J_w L_w``); a Rayleigh quotient of
    ``J``, so in ``[J_min, J_max]``; constant for free motion. Integrators that drift pull it
    toward an attractor (``J_mid`` for Jolt, ``J_max`` for naive rotation). 0 where
    ``L = 0``.
    """
    d = _read(trajectory, inv_inertia)
    uu = _dot(d.u, d.u)
    with np.errstate(divide="ignore", invalid="ignore"):
        JL = np.ldexp(_energy_scaled(d) / uu, d.f[..., 0])
    return np.where(uu > 0, JL, 0.0)


def k_factor(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """``J_k = k·Jk / |k|²`` with ``k = omega × L`` (body frame), shape ``(n, ...)``.

    For free motion ``dL_b/dt = -k``. Where ``|k| <= K_ZERO_RTOL |omega| |L|`` (steady
    spin about a principal axis, spherical body, ``L = 0``) returns ``J_L``.
    """
    d = _read(trajectory, inv_inertia)
    # Both quotients are homogeneous: of degree 0 in L and 1 in J (scaled u, v; 2^f back).
    L = d.u
    w = d.v * L
    k = np.cross(w, L)
    kk = _dot(k, k)
    LL = _dot(L, L)
    zero = kk <= (K_ZERO_RTOL**2) * _dot(w, w) * LL
    with np.errstate(divide="ignore", invalid="ignore"):
        Jk = _dot(k, d.v * k) / kk
        JL = np.where(LL > 0, _dot(L, w) / LL, 0.0)
    return np.ldexp(np.where(zero, JL, Jk), d.f[..., 0])


def attitude_error(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Rotation angle (radians) between ``q(t)`` and the exact torque-free ``q(t)``.

    The exact solution (:func:`tumble.exact.torque_free_from_momentum`) starts from the
    first record ``(q(t0), L_b(t0))`` and is evaluated at ``t - t0``; the angle is
    :func:`tumble.rotation.rotation_angle` (double-cover aware). Shape ``(n, ...)``.
    Meaningful only for torque-free runs.
    """
    d = _read(trajectory, inv_inertia)
    return np.asarray(rotation.rotation_angle(d.q, _exact_q(d, d.t - d.t[0])))


# --------------------------------------------------------------------------------------
# scores: worst values per body


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
    d = _read(trajectory, inv_inertia, finite_prefix=True)
    s = _score(d, trajectory, reference, mode)
    if against == "initial":
        return s
    if not ((isinstance(reference, tuple) and len(reference) == 3) or hasattr(reference, "omega")):
        raise InputError(
            'reference: expected a Trajectory or a tuple (t, q, omega) with drift="reference", '
            f"got {describe(reference)}"
        )
    ref = _read(reference, d.J)  # type: ignore[arg-type]
    n = d.t.shape[0]
    if ref.t.shape[0] != n:
        raise InputError(
            f"reference: expected {n} records (one per trajectory record), got {ref.t.shape[0]}"
        )
    valid = np.arange(n).reshape(n, *(1,) * len(d.batch)) < d.n_finite
    u_ref, e_ref = _to_batch(ref.u, d.batch), _to_batch(ref.e, d.batch)[..., 0]
    e = d.e[..., 0]
    energy = _against(_energy_scaled(d), e, _dot(u_ref, d.v * u_ref), e_ref, 2)
    norm = _against(np.linalg.norm(d.u, axis=-1), e, np.linalg.norm(u_ref, axis=-1), e_ref, 1)
    angle = _angle(_world_direction(d), _to_batch(_world_direction(ref), d.batch))
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
        X = _ldexp(x, power * (e - unit)) - _ldexp(x_ref, power * (e_ref - unit))
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
    s = _score(_read(trajectory, inv_inertia), trajectory, None, "all")
    return {
        "energy_error": s.energy_error,
        "momentum_drift": s.momentum_drift,
        "direction_drift": s.direction_drift,
        "attitude_error": s.attitude_error_max,
    }


def _score(d: _Data, trajectory: TrajectoryLike, reference: object, mode: str) -> TrajectoryScores:
    n = d.t.shape[0]
    valid = np.arange(n).reshape(n, *(1,) * len(d.batch)) < d.n_finite
    last = d.n_finite - 1
    if reference is None:
        q = d.q
    else:
        # The trajectory's own q rather than the normalised d.q: rotation_angle is scale
        # invariant, and these are the numbers scenarios.score has always given.
        raw = as_float_array(_fields(trajectory, d.J)[1], "trajectory.q", (4,), finite=False)
        q = _to_batch(raw, d.batch)
    if mode == "all":
        if reference is None:
            q_ref = _exact_q(d, d.t - d.t[0])
        else:
            q_ref = _reference(reference, n, d.batch)
        theta = _angles(q, q_ref, valid)
        attitude_end, attitude_max = _at(theta, last), _worst(theta, valid)
    else:
        if reference is None:
            # Exact attitudes at the few distinct end times only, then each body's own.
            ends, which = np.unique(d.t[last] - d.t[0], return_inverse=True)
            at_ends = _exact_q(d, ends)
            q_end = np.take_along_axis(at_ends, which.reshape(1, *d.batch, 1), axis=0)[0]
        else:
            q_end = _at(_reference(reference, n, d.batch), last)
        attitude_end = np.asarray(rotation.rotation_angle(_at(q, last), q_end))
        attitude_max = np.full(d.batch, np.nan)
    return TrajectoryScores(
        energy_error=_worst(np.abs(_energy_error(d)), valid),
        momentum_drift=_worst(np.abs(_momentum_drift(d)), valid),
        direction_drift=_worst(_direction_drift(d), valid),
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


# --------------------------------------------------------------------------------------
# flips

#: Hysteresis band of :func:`first_flip_time`, as a fraction of ``|L|``: far above the
#: round-off of ``L_b`` (1e-16) and small enough that orbits with a median-axis amplitude
#: of 0.1 % of ``|L|`` (energy fractions down to about 1e-6 of the distance to the
#: separatrix) still flip.
FLIP_BAND = 1e-3


def first_flip_time(
    t: ArrayLike, L_body: ArrayLike, inv_inertia: ArrayLike, band: float = FLIP_BAND
) -> np.ndarray:
    """Time of the first Dzhanibekov flip of recorded torque-free trajectories.

    **What a flip is.** Let ``m`` be the body axis of the median inverse moment (ties keep
    the axis order) and ``x(t) = L_b,m(t) / |L_b(t0)|`` the body-frame angular momentum
    along it. In both circulation regimes of the free motion (about the axis of smallest or
    of largest ``J``) ``x`` is proportional to ``sn(u0 + ω_p t)``: ``L_b`` crosses the
    plane ``L_b,m = 0`` (the body plane of the two stable axes) twice per body period ``T``
    (:func:`tumble.exact.body_period`), every ``T/2``. Near the separatrix it dwells close
    to ``±e_m`` and then swings quickly to the other side: that swing is the flip of the
    Dzhanibekov effect, and its zero crossing is its time.

    **Detection**, robust to round-off around ``x = 0`` and to steady spins: with ``s`` the
    sign of ``x`` at the first record where ``|x| >= band``, a flip is complete at the first
    later record where ``s x <= -band``. The flip time is the zero of ``x`` just before it,
    the root of the cubic Hermite interpolant of ``x`` between the last record with
    ``s x > 0`` and the next one, with the torque-free slopes ``dL_b/dt = L_b × J L_b`` at
    both records: error ``O(h⁴)`` in the record spacing ``h`` for a smooth path, bisected to
    round-off on the cubic. A body that starts on the plane (``x(t0) = 0``) therefore first
    flips at ``t0 + T/2`` exactly.

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
        Flip times; ``nan`` where no flip completes within the records (a steady spin, a
        spherical body, the separatrix, or a run too short), which a caller comparing with
        the exact motion reads against its ``T/2`` (``inf`` when that never flips).
    """
    tt = as_float_array(t, "t").astype(np.float64)
    L = as_float_array(L_body, "L_body", (3,), finite=False).astype(np.float64)
    J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
    band = as_scalar(band, "band", positive=True)
    if tt.ndim != 1 or tt.shape[0] == 0:
        raise InputError(f"t: expected shape (n,) with n >= 1, got shape {tt.shape}")
    n = tt.shape[0]
    if L.ndim != 3 or L.shape[0] != n:
        raise InputError(f"L_body: expected shape ({n}, b, 3) to match t, got shape {L.shape}")
    nb = L.shape[1]
    if J.shape != (nb, 3):
        raise InputError(f"inv_inertia: expected shape ({nb}, 3) to match L_body, got {J.shape}")
    if not np.all(np.isfinite(L[0])):
        raise InputError("L_body: the first record is not finite")
    cols = np.arange(nb)
    mid = np.argsort(J, axis=-1, kind="stable")[:, 1]
    # x is of degree 0 in L, dx of degree 1 in L and J: scaled by the powers of two of
    # L(t0) and J per body, so that neither |L0| nor L × J L overflows (dx scaled back
    # with the record spacing below).
    e0 = _split(L[0])[1]
    L = np.ldexp(L, -e0)
    v, f = _split(J)
    norm0 = np.linalg.norm(L[0], axis=-1)
    with np.errstate(all="ignore"):
        x = L[:, cols, mid] / norm0
        dx = np.cross(L, v * L)[:, cols, mid] / norm0
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
    # dx 2^(e0 + f) is the slope; times the spacing h, the phase of one record (small).
    shift = (e0 + f)[b, 0]
    m0, m1 = _ldexp(dx[j, b] * s[b] * h, shift), _ldexp(dx[j + 1, b] * s[b] * h, shift)
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


def attitude_deviation(
    trajectory: TrajectoryLike, reference: TrajectoryLike | ArrayLike
) -> np.ndarray:
    """Rotation angle (radians) between the attitudes of two runs at the same records.

    ``θ_k = rotation_angle(q_k, q_ref,k)`` (:func:`tumble.rotation.rotation_angle`:
    ``2 atan2(|u|, |w|)`` of ``q_k* ⊗ q_ref,k = (w, u)``, double-cover aware, accurate
    near 0). For example a method against the exact solution evaluated once at the record
    times: the lab and ``tumble compare`` share one exact run between all methods this way,
    where :func:`attitude_error` would solve the exact motion again for each.

    Parameters
    ----------
    trajectory : Trajectory, tuple (t, q, omega) or array_like, shape (n, ..., 4)
        The attitudes ``q`` (body to world), record index first; finite (cut a run that
        blew up to its finite records first).
    reference : Trajectory, tuple (t, q, omega) or array_like, shape (n, ..., 4)
        The reference attitudes at the same records; batch axes broadcast.

    Returns
    -------
    ndarray, shape (n, ...)
        float64.
    """
    qs = []
    for name, x in (("trajectory", trajectory), ("reference", reference)):
        if isinstance(x, tuple) and len(x) == 3:
            x = x[1]
        q = as_float_array(getattr(x, "q", x), f"{name}.q", (4,))
        if q.ndim < 2:
            raise InputError(
                f"{name}.q: expected the record index first, shape (n, ..., 4), got {q.shape}"
            )
        qs.append(q.astype(np.float64))
    q, q_ref = qs
    if q.shape[0] != q_ref.shape[0]:
        raise InputError(
            f"reference.q: expected {q.shape[0]} records as in trajectory.q, got {q_ref.shape[0]}"
        )
    try:
        return np.asarray(rotation.rotation_angle(q, q_ref), dtype=np.float64)
    except InputError as exc:
        # rotation_angle names its own arguments (p, q): here they are the two runs' q.
        raise InputError(f"trajectory.q, reference.q: {str(exc).partition(': ')[2]}") from None

"""Per-record measures of a trajectory: angular momentum, energy, their drifts, attitudes.

Each public function reads a trajectory (:mod:`tumble.diagnostics.records`) and returns one
value per record, shape ``(n, ...)``. The measures of read data they are built on
(:func:`momentum_drift_of`, :func:`direction_drift_of`, :func:`energy_error_of`,
:func:`energy_scaled`, :func:`world_direction`, :func:`angle_between`, :func:`dot` and
:func:`exact_q`, the exact attitudes) also serve :mod:`tumble.diagnostics.scores`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tumble import exact, rotation
from tumble._errors import InputError
from tumble._validate import as_float_array, check_finite_result
from tumble.diagnostics.records import Data, TrajectoryLike, ldexp, read

__all__ = [
    "K_ZERO_RTOL",
    "attitude_deviation",
    "attitude_error",
    "direction_drift",
    "energy",
    "energy_error",
    "energy_factor",
    "k_factor",
    "max_energy_error",
    "momentum_body",
    "momentum_drift",
    "momentum_norm",
    "momentum_world",
]

#: ``k = omega × L`` counts as zero when ``|k| <= K_ZERO_RTOL |omega| |L|`` (``L`` along a
#: principal axis, or a spherical body); ``J_k`` is then undefined (0/0) and
#: :func:`k_factor` returns ``J_L``, the value it tends to (the reference's fallback). The
#: size only has to catch round-off of an exact zero: ``J_k`` is a bounded Rayleigh quotient.
K_ZERO_RTOL = 1e-12


def _finite(x: np.ndarray, what: str) -> np.ndarray:
    """``x``, or :class:`InputError` naming the trajectory if ``what`` passed the float range
    (a per-record measure of finite records)."""
    check_finite_result("trajectory, inv_inertia", what, x)
    return x


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


# Per-record measures of read data, shared by the public functions and by the scores.


def world_direction(d: Data) -> np.ndarray:
    """``R u``: the world momentum up to the power of two of each record."""
    return rotation.quat_rotate(d.q, d.u)


def _ratio(x: np.ndarray, x0: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``(x / x0) 2^shift - 1`` (``x0 > 0``); ``inf`` where a ratio passes the float range."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return ldexp(x / x0, shift) - 1.0


def momentum_drift_of(d: Data) -> np.ndarray:
    norm = np.linalg.norm(d.u, axis=-1)
    e = d.e[..., 0]
    drift = _ratio(norm, norm[0], e - e[0])
    # L(t0) = 0: 0 while L stays 0, inf once it is not (the documented values).
    return np.where(norm[0] == 0.0, np.where(norm == 0.0, 0.0, np.inf), drift)


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``atan2(|a × b|, a·b)``: the angle between vectors of moderate size."""
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), dot(a, b))


def direction_drift_of(d: Data) -> np.ndarray:
    a = world_direction(d)
    return angle_between(a, a[0])


def energy_scaled(d: Data) -> np.ndarray:
    """``2E / 2^(2e + f)`` per record: the energy of the scaled ``u``, ``v``, in [0, 3)."""
    return dot(d.u, d.v * d.u)


def _energy(d: Data) -> np.ndarray:
    return ldexp(energy_scaled(d), 2 * d.e[..., 0] + d.f[..., 0] - 1)


def energy_error_of(d: Data) -> np.ndarray:
    Eu = energy_scaled(d)
    e = d.e[..., 0]
    # E0 = 0 (L(t0) = 0, or J = 0 on its axes): the absolute energy E - E0 = E instead.
    zero = Eu[0] == 0.0
    return np.where(zero, _energy(d), _ratio(Eu, np.where(zero, 1.0, Eu[0]), 2 * (e - e[0])))


def exact_q(d: Data, t: np.ndarray) -> np.ndarray:
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
    return np.array(read(trajectory, inv_inertia).L_body)


def momentum_world(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """World-frame angular momentum ``L_w = R L_b``, shape ``(n, ..., 3)`` (constant if free)."""
    d = read(trajectory, inv_inertia)
    return _finite(ldexp(world_direction(d), d.e), "the world angular momentum")


def momentum_norm(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """``|L|`` per record, shape ``(n, ...)``; frame independent."""
    d = read(trajectory, inv_inertia)
    return _finite(ldexp(np.linalg.norm(d.u, axis=-1), d.e[..., 0]), "|L|")


def momentum_drift(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Relative drift of ``|L|``: ``|L(t)| / |L(t0)| - 1``, shape ``(n, ...)``.

    0 where ``L(t0) = 0`` and ``L(t) = 0``; ``inf`` where only ``L(t0) = 0``, and where the
    ratio passes the float range (a run that blew up by more than 1e308).
    """
    return momentum_drift_of(read(trajectory, inv_inertia))


def direction_drift(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Angle (radians) between the world momentum ``L_w(t)`` and ``L_w(t0)``, ``(n, ...)``.

    ``atan2(|a × b|, a·b)``, accurate for small angles; 0 where either vector is zero.
    Free motion conserves the direction, so this measures an integrator's error in it.
    """
    return direction_drift_of(read(trajectory, inv_inertia))


def energy(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Kinetic energy ``E = ½ L_b·J L_b = ½ omega·L``, shape ``(n, ...)``."""
    return _finite(_energy(read(trajectory, inv_inertia)), "the kinetic energy")


def energy_error(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Relative energy error ``E(t) / E(t0) - 1``, shape ``(n, ...)``.

    Where ``E(t0) = 0`` the absolute ``E(t) - E(t0)`` is returned instead (no 0/0). Like
    the scores, ``inf`` where the error passes the float range (a run that blew up: ``E``
    grew by more than 1e308; :func:`energy` raises where ``E`` itself does).
    """
    return energy_error_of(read(trajectory, inv_inertia))


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
    d = read(trajectory, inv_inertia)
    uu = dot(d.u, d.u)
    with np.errstate(divide="ignore", invalid="ignore"):
        JL = np.ldexp(energy_scaled(d) / uu, d.f[..., 0])
    return np.where(uu > 0, JL, 0.0)


def k_factor(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """``J_k = k·Jk / |k|²`` with ``k = omega × L`` (body frame), shape ``(n, ...)``.

    For free motion ``dL_b/dt = -k``. Where ``|k| <= K_ZERO_RTOL |omega| |L|`` (steady
    spin about a principal axis, spherical body, ``L = 0``) returns ``J_L``.
    """
    d = read(trajectory, inv_inertia)
    # Both quotients are homogeneous: of degree 0 in L and 1 in J (scaled u, v; 2^f back).
    L = d.u
    w = d.v * L
    k = np.cross(w, L)
    kk = dot(k, k)
    LL = dot(L, L)
    zero = kk <= (K_ZERO_RTOL**2) * dot(w, w) * LL
    with np.errstate(divide="ignore", invalid="ignore"):
        Jk = dot(k, d.v * k) / kk
        JL = np.where(LL > 0, dot(L, w) / LL, 0.0)
    return np.ldexp(np.where(zero, JL, Jk), d.f[..., 0])


def attitude_error(trajectory: TrajectoryLike, inv_inertia: ArrayLike | None = None) -> np.ndarray:
    """Rotation angle (radians) between ``q(t)`` and the exact torque-free ``q(t)``.

    The exact solution (:func:`tumble.exact.torque_free_from_momentum`) starts from the
    first record ``(q(t0), L_b(t0))`` and is evaluated at ``t - t0``; the angle is
    :func:`tumble.rotation.rotation_angle` (double-cover aware). Shape ``(n, ...)``.
    Meaningful only for torque-free runs.
    """
    d = read(trajectory, inv_inertia)
    return np.asarray(rotation.rotation_angle(d.q, exact_q(d, d.t - d.t[0])))


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

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
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tumble import exact, rotation
from tumble._errors import InputError
from tumble._validate import as_float_array, broadcast_leading

__all__ = [
    "K_ZERO_RTOL",
    "TrajectoryArrays",
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
    "summary",
]

#: ``k = omega × L`` counts as zero when ``|k| <= K_ZERO_RTOL |omega| |L|`` (``L`` along a
#: principal axis, or a spherical body); ``J_k`` is then undefined (0/0) and
#: :func:`k_factor` returns ``J_L``, the value it tends to (the reference's fallback). The
#: size only has to catch round-off of an exact zero: ``J_k`` is a bounded Rayleigh quotient.
K_ZERO_RTOL = 1e-12


class TrajectoryArrays(NamedTuple):
    """Plain arrays of a trajectory: times ``(n,)``, ``q`` ``(n, ..., 4)``, world ``omega``."""

    t: Any
    q: Any
    omega: Any


class _Data(NamedTuple):
    t: np.ndarray  # (n,)
    q: np.ndarray  # (n, *batch, 4), unit
    L_body: np.ndarray  # (n, *batch, 3)
    J: np.ndarray  # (*batch, 3)
    batch: tuple[int, ...]


def _read(trajectory: Any, inv_inertia: Any) -> _Data:
    """Validate a trajectory and the inverse moments; float64 arrays broadcast to the batch."""
    if isinstance(trajectory, tuple | list):
        if len(trajectory) != 3:
            raise InputError(
                "trajectory: expected a Trajectory or a tuple (t, q, omega), "
                f"got a sequence of length {len(trajectory)}"
            )
        t, q, w = trajectory
        Lb_in = None
    elif all(hasattr(trajectory, a) for a in ("t", "q", "omega")):
        t, q, w = trajectory.t, trajectory.q, trajectory.omega
        Lb_in = getattr(trajectory, "L_body", None)
        if inv_inertia is None:
            inv_inertia = getattr(trajectory, "inv_inertia", None)
    else:
        raise InputError(
            "trajectory: expected an object with attributes t, q, omega (a Trajectory) or "
            f"a tuple (t, q, omega), got {type(trajectory).__name__}"
        )
    if inv_inertia is None:
        raise InputError("inv_inertia: required (the trajectory does not carry it)")
    t = as_float_array(t, "trajectory.t").astype(np.float64)
    if t.ndim != 1 or t.shape[0] == 0:
        raise InputError(f"trajectory.t: expected shape (n,) with n >= 1, got shape {t.shape}")
    n = t.shape[0]
    q = as_float_array(q, "trajectory.q", (4,)).astype(np.float64)
    w = as_float_array(w, "trajectory.omega", (3,)).astype(np.float64)
    J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
    if np.any(J < 0):
        raise InputError(
            f"inv_inertia: expected inverse moments >= 0, got minimum {float(np.min(J)):.6g}"
        )
    arrays = {"trajectory.q": q, "trajectory.omega": w}
    if Lb_in is not None:
        arrays["trajectory.L_body"] = as_float_array(Lb_in, "trajectory.L_body", (3,)).astype(
            np.float64
        )
    for name, a in arrays.items():
        if a.ndim < 2 or a.shape[0] != n:
            raise InputError(
                f"{name}: expected the record index first, shape ({n}, ..., {a.shape[-1]}) "
                f"to match trajectory.t, got shape {a.shape}"
            )
    batch = broadcast_leading(**{k: (a[0], 1) for k, a in arrays.items()}, inv_inertia=(J, 1))
    q = np.broadcast_to(rotation.unit_quat(q, "trajectory.q"), (n, *batch, 4))
    J = np.broadcast_to(J, (*batch, 3))
    if "trajectory.L_body" in arrays:
        Lb = np.broadcast_to(arrays["trajectory.L_body"], (n, *batch, 3))
    else:
        wb = rotation.quat_rotate(rotation.quat_conjugate(q), w)
        Lb = np.divide(wb, J, out=np.zeros(wb.shape), where=J > 0)
    return _Data(t, q, Lb, J, batch)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def momentum_body(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """Body-frame angular momentum path ``L_b(t)``, shape ``(n, ..., 3)``.

    ``L_b = J⁺ Rᵀ omega`` (or the trajectory's ``L_body``). For free motion it moves on
    the intersection of the sphere ``|L_b| = |L|`` and the energy ellipsoid
    ``L_b·J L_b = 2E``: the article's body-frame figures.
    """
    return np.array(_read(trajectory, inv_inertia).L_body)


def momentum_world(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """World-frame angular momentum ``L_w = R L_b``, shape ``(n, ..., 3)`` (constant if free)."""
    d = _read(trajectory, inv_inertia)
    return rotation.quat_rotate(d.q, d.L_body)


def momentum_norm(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """``|L|`` per record, shape ``(n, ...)``; frame independent."""
    return np.linalg.norm(_read(trajectory, inv_inertia).L_body, axis=-1)


def momentum_drift(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """Relative drift of ``|L|``: ``|L(t)| / |L(t0)| - 1``, shape ``(n, ...)``.

    0 where ``L(t0) = 0`` and ``L(t) = 0``; ``inf`` where only ``L(t0) = 0``.
    """
    norm = momentum_norm(trajectory, inv_inertia)
    with np.errstate(divide="ignore", invalid="ignore"):
        drift = norm / norm[0] - 1.0
    return np.where(norm == norm[0], 0.0, drift)


def direction_drift(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """Angle (radians) between the world momentum ``L_w(t)`` and ``L_w(t0)``, ``(n, ...)``.

    ``atan2(|a × b|, a·b)``, accurate for small angles; 0 where either vector is zero.
    Free motion conserves the direction, so this measures an integrator's error in it.
    """
    Lw = momentum_world(trajectory, inv_inertia)
    a, b = Lw, Lw[0]
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), _dot(a, b))


def energy(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """Kinetic energy ``E = ½ L_b·J L_b = ½ omega·L``, shape ``(n, ...)``."""
    d = _read(trajectory, inv_inertia)
    return 0.5 * _dot(d.L_body, d.J * d.L_body)


def energy_error(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """Relative energy error ``E(t) / E(t0) - 1``, shape ``(n, ...)``.

    Where ``E(t0) = 0`` the absolute ``E(t) - E(t0)`` is returned instead (no 0/0).
    """
    E = energy(trajectory, inv_inertia)
    E0 = E[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = E / E0 - 1.0
    return np.where(E0 == 0.0, E - E0, rel)


def max_energy_error(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """``max_t |E(t) / E(t0) - 1|`` per body, shape ``(...)`` (see :func:`energy_error`)."""
    return np.max(np.abs(energy_error(trajectory, inv_inertia)), axis=0)


def energy_factor(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """The article's energy factor ``J_L = L·JL / |L|² = 2E / |L|²``, shape ``(n, ...)``.

    Body frame (``L_b·J L_b``, the same number as ``L_w·J_w L_w``); a Rayleigh quotient of
    ``J``, so in ``[J_min, J_max]``; constant for free motion. Integrators that drift pull it
    toward an attractor (``J_mid`` for Jolt, ``J_max`` for naive rotation). 0 where
    ``L = 0``.
    """
    d = _read(trajectory, inv_inertia)
    L = d.L_body
    LL = _dot(L, L)
    with np.errstate(divide="ignore", invalid="ignore"):
        JL = _dot(L, d.J * L) / LL
    return np.where(LL > 0, JL, 0.0)


def k_factor(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """``J_k = k·Jk / |k|²`` with ``k = omega × L`` (body frame), shape ``(n, ...)``.

    For free motion ``dL_b/dt = -k``. Where ``|k| <= K_ZERO_RTOL |omega| |L|`` (steady
    spin about a principal axis, spherical body, ``L = 0``) returns ``J_L``.
    """
    d = _read(trajectory, inv_inertia)
    L = d.L_body
    w = d.J * L
    k = np.cross(w, L)
    kk = _dot(k, k)
    LL = _dot(L, L)
    zero = kk <= (K_ZERO_RTOL**2) * _dot(w, w) * LL
    with np.errstate(divide="ignore", invalid="ignore"):
        Jk = _dot(k, d.J * k) / kk
        JL = np.where(LL > 0, _dot(L, w) / LL, 0.0)
    return np.where(zero, JL, Jk)


def attitude_error(trajectory: Any, inv_inertia: Any = None) -> np.ndarray:
    """Rotation angle (radians) between ``q(t)`` and the exact torque-free ``q(t)``.

    The exact solution (:func:`tumble.exact.torque_free`) starts from the first record
    ``(q(t0), L_b(t0))`` and is evaluated at ``t - t0``; the angle is
    :func:`tumble.rotation.rotation_angle` (double-cover aware). Shape ``(n, ...)``.
    Meaningful only for torque-free runs.
    """
    d = _read(trajectory, inv_inertia)
    nb = int(np.prod(d.batch, dtype=np.int64))
    q0 = np.ascontiguousarray(d.q[0]).reshape(nb, 4)
    Lb0 = np.ascontiguousarray(d.L_body[0]).reshape(nb, 3)
    J = np.ascontiguousarray(d.J).reshape(nb, 3)
    Lb0 = np.where(J > 0, Lb0, 0.0)
    w0 = rotation.quat_rotate(q0, J * Lb0)
    q_exact, _, _ = exact._solve(q0, w0, Lb0, J, d.t - d.t[0])
    q_exact = q_exact.reshape(d.q.shape)
    return np.asarray(rotation.rotation_angle(d.q, q_exact))


def summary(trajectory: Any, inv_inertia: Any = None) -> dict[str, np.ndarray]:
    """Worst values over the records, per body: the numbers of ``tumble compare``.

    Returns a dict of arrays of shape ``(...)``: ``"energy_error"`` (max relative energy
    error), ``"momentum_drift"`` (max ``| |L|/|L0| - 1 |``), ``"direction_drift"`` (max
    angle of ``L_w`` from ``L_w(t0)``, radians) and ``"attitude_error"`` (max angle from the
    exact solution, radians).
    """
    return {
        "energy_error": max_energy_error(trajectory, inv_inertia),
        "momentum_drift": np.max(np.abs(momentum_drift(trajectory, inv_inertia)), axis=0),
        "direction_drift": np.max(direction_drift(trajectory, inv_inertia), axis=0),
        "attitude_error": np.max(attitude_error(trajectory, inv_inertia), axis=0),
    }


def attitude_deviation(trajectory: Any, reference: Any) -> np.ndarray:
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
    return np.asarray(rotation.rotation_angle(q, q_ref), dtype=np.float64)

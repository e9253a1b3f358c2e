"""Reading a trajectory: the forms the diagnostics accept, checked and scaled.

A trajectory is a :class:`tumble.rigid.Trajectory`, any object with attributes ``t``,
``q`` and ``omega`` (and optionally ``L_body`` and ``inv_inertia``), or plain arrays, a
tuple ``(t, q, omega)`` or a :class:`TrajectoryArrays` (:mod:`tumble.diagnostics` states
the shapes and how ``L_b`` is found). :func:`finite_records` counts each body's leading
finite records.

The other modules of the package read through :func:`read`, which validates a trajectory
and its inverse moments and returns them as :class:`Data`: float64 arrays broadcast to the
batch, with ``L_b`` and ``J`` split into mantissas and powers of two (:func:`split`,
:func:`ldexp` puts them back) so that the measures cannot overflow on the way.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from tumble import rotation
from tumble._errors import InputError
from tumble._validate import as_float_array, broadcast_leading, check_finite_result
from tumble.trajectory import Trajectory

__all__ = ["TrajectoryArrays", "TrajectoryLike", "finite_records"]


class TrajectoryArrays(NamedTuple):
    """Plain arrays of a trajectory: times ``(n,)``, ``q`` ``(n, ..., 4)``, world ``omega``."""

    t: ArrayLike
    q: ArrayLike
    omega: ArrayLike


TrajectoryLike = Trajectory | TrajectoryArrays | tuple[ArrayLike, ArrayLike, ArrayLike]
"""What the diagnostics read: a :class:`~tumble.trajectory.Trajectory` (or any
object with ``t``, ``q``, ``omega`` and optionally ``L_body``), a :class:`TrajectoryArrays`
or a tuple ``(t, q, omega)``."""


class Data(NamedTuple):
    """A trajectory as :func:`read` returns it: float64, broadcast to the batch, scaled."""

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


def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(m, e)`` with ``x = m 2^e`` along the last axis and ``max |m_i|`` in ``[1/2, 1)``
    (``e = 0`` for a zero vector); exact (powers of two)."""
    e = np.frexp(np.max(np.abs(x), axis=-1, keepdims=True))[1]
    return np.ldexp(x, -e), e


def ldexp(m: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``m 2^e``; ``inf`` beyond the float range (the scores' honest value of a blow-up)."""
    with np.errstate(over="ignore"):
        return np.ldexp(m, e)


def fields(trajectory: TrajectoryLike, inv_inertia: Any) -> tuple[Any, Any, Any, Any, Any]:
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


def to_batch(a: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
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
        ok &= np.all(np.isfinite(to_batch(a, batch)), axis=-1)
    return np.where(np.all(ok, axis=0), n, np.argmin(ok, axis=0))


def read(trajectory: TrajectoryLike, inv_inertia: Any, finite_prefix: bool = False) -> Data:
    """Validate a trajectory and the inverse moments; float64 arrays broadcast to the batch.

    With ``finite_prefix`` the records may stop being finite (a blow-up): ``n_finite``
    counts each body's leading finite records, and the records after them are replaced by
    the body's first record, so that they read as valid and the caller can mask them out.
    """
    t, q, w, Lb_in, inv_inertia = fields(trajectory, inv_inertia)
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
        full = {k: to_batch(a, batch) for k, a in arrays.items()}
        arrays = {k: np.where(valid, a, a[:1]) for k, a in full.items()}
    q = to_batch(rotation.unit_quat(arrays["trajectory.q"], "trajectory.q"), batch)
    J = np.broadcast_to(J, (*batch, 3))
    if "trajectory.L_body" in arrays:
        Lb = to_batch(arrays["trajectory.L_body"], batch)
    else:
        # Rotated scaled, then divided: omega_b / J overflows only where L_b does.
        w, we = split(to_batch(arrays["trajectory.omega"], batch))
        wb = rotation.quat_rotate(rotation.quat_conjugate(q), w)
        with np.errstate(over="ignore"):
            Lb = np.ldexp(np.divide(wb, J, out=np.zeros(wb.shape), where=J > 0), we)
        check_finite_result(
            "trajectory.omega, inv_inertia", "the angular momentum L_b = omega_b / J", Lb
        )
    u, e = split(Lb)
    v, f = split(J)
    return Data(t, q, Lb, J, batch, n_finite, u, e, v, f)


def finite_records(trajectory: TrajectoryLike) -> np.ndarray:
    """Number of leading records whose state is finite, per body, shape ``(...)`` (int).

    A record counts while its ``q``, ``omega`` and (when the trajectory has it) ``L_body``
    are all finite: ``n`` for a run that never blew up, else the index of the body's first
    non-finite record. The state arrays' batches broadcast as everywhere in this module.
    """
    t, q, w, L_body, _ = fields(trajectory, None)
    _, arrays = _states(t, q, w, L_body, finite=False)
    return _leading_finite(arrays, broadcast_leading(**{k: (a[0], 1) for k, a in arrays.items()}))

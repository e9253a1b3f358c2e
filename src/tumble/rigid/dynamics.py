"""Rigid-body dynamics: inertia in the world frame, momentum, energy, angular acceleration.

Conventions of :mod:`tumble.rigid`: ``q`` ``(..., 4)`` is the body-to-world unit
quaternion (scalar first), ``R`` its matrix; ``omega`` ``(..., 3)`` the **world** angular
velocity; ``inv_inertia`` ``(..., 3)`` the principal inverse moments ``J`` (``J_i = 0``: a
locked axis, whose momentum a constraint absorbs; ``I`` is then the pseudo-inverse). Each
function validates its arguments (:func:`validate_state`, which :mod:`tumble.rigid.integrate`
shares) and evaluates a compiled gufunc of :mod:`tumble._kernels.inertia`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._kernels import inertia as _inertia
from tumble._kernels.rotation import matrix_to_quat_gu
from tumble._validate import as_float_array, broadcast_leading, check_finite_result
from tumble.rotation import unit_quat
from tumble.torques import TorqueModel

__all__ = [
    "angular_acceleration",
    "angular_momentum",
    "energy",
    "principal_axes",
    "world_inverse_inertia",
]


def _quat(q: ArrayLike, dtype: np.dtype | None = None) -> np.ndarray:
    """``q`` as a unit quaternion array (normalised; zero or overflowing norm rejected)."""
    return unit_quat(q, "q", dtype)


def _inv_inertia(J: ArrayLike, dtype: np.dtype | None = None) -> np.ndarray:
    J = as_float_array(J, "inv_inertia", (3,), dtype=dtype)
    if np.any(J < 0):
        raise InputError(
            f"inv_inertia: expected inverse moments >= 0 (0 = an axis that cannot turn), "
            f"got minimum {J.min()}"
        )
    return J


def _dtype_of(*xs: object) -> np.dtype:
    """The float dtype the result should have: float32 only if every input is float32."""
    kinds = [_kind(x) for x in xs if x is not None and not callable(x)]
    if kinds and all(k == np.float32 for k in kinds):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _kind(x: object) -> np.dtype | None:
    try:
        return np.asarray(x).dtype
    except (ValueError, TypeError):  # ragged: validation then names the argument
        return None


def validate_state(
    q: ArrayLike,
    omega: ArrayLike,
    inv_inertia: ArrayLike,
    extra: dict[str, Any] | None = None,
    model: TorqueModel | None = None,
):
    """Validate ``q``, ``omega``, ``inv_inertia`` (and named extra vectors) to one dtype and
    broadcast batch shape, with the batch of a torque ``model``'s parameters; returns the
    arrays, the batch shape and the dtype."""
    extra = extra or {}
    dtype = _dtype_of(q, omega, inv_inertia, *extra.values())
    qa = _quat(q, dtype)
    wa = as_float_array(omega, "omega", (3,), dtype=dtype)
    Ja = _inv_inertia(inv_inertia, dtype)
    ea = {k: as_float_array(v, k, (3,), dtype=dtype) for k, v in extra.items()}
    named = {"q": (qa, 1), "omega": (wa, 1), "inv_inertia": (Ja, 1)}
    named.update({k: (v, 1) for k, v in ea.items()})
    if model is not None and model.batch:
        named["torque"] = (np.empty((*model.batch, 0)), 1)
    batch = broadcast_leading(**named)
    return qa, wa, Ja, ea, batch, dtype


def world_inverse_inertia(q: ArrayLike, inv_inertia: ArrayLike) -> np.ndarray:
    """World inverse inertia tensor ``J_w = R diag(J) Rᵀ``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Body-to-world quaternion (normalised here).
    inv_inertia : array_like, shape (..., 3)
        Principal inverse moments ``J``, ``>= 0``.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        Symmetric positive semi-definite; exact to round-off (9 rotations of basis vectors).
    """
    dtype = _dtype_of(q, inv_inertia)
    qa = _quat(q, dtype)
    Ja = _inv_inertia(inv_inertia, dtype)
    broadcast_leading(q=(qa, 1), inv_inertia=(Ja, 1))
    return _inertia.world_inverse_inertia_gu(qa, Ja)


def angular_momentum(q: ArrayLike, omega: ArrayLike, inv_inertia: ArrayLike) -> np.ndarray:
    """World angular momentum ``L = I_w omega = R I Rᵀ omega``.

    Where ``J_i = 0`` the axis is held by a constraint and carries no momentum here
    (``I_i`` is taken as 0: the pseudo-inverse), so ``omega``'s body component on it is
    ignored.

    Parameters
    ----------
    q : array_like, shape (..., 4)
    omega : array_like, shape (..., 3)
        World angular velocity.
    inv_inertia : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3)
    """
    qa, wa, Ja, _, _, _ = validate_state(q, omega, inv_inertia)
    with np.errstate(all="ignore"):  # an overflow raises below, naming the arguments
        L = _inertia.angular_momentum_gu(qa, wa, Ja)
    check_finite_result("omega, inv_inertia", "the angular momentum I_w omega", L)
    return L


def energy(q: ArrayLike, omega: ArrayLike, inv_inertia: ArrayLike) -> np.ndarray:
    """Rotational kinetic energy ``E = ½ omega·L = ½ Σ I_i omega_b,i²`` (locked axes: 0).

    Parameters
    ----------
    q : array_like, shape (..., 4)
    omega : array_like, shape (..., 3)
        World angular velocity.
    inv_inertia : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (...)
    """
    qa, wa, Ja, _, _, _ = validate_state(q, omega, inv_inertia)
    with np.errstate(all="ignore"):
        E = _inertia.energy_gu(qa, wa, Ja)
    check_finite_result("omega, inv_inertia", "the kinetic energy", E)
    return E


def angular_acceleration(
    torque: ArrayLike, omega: ArrayLike, q: ArrayLike, inv_inertia: ArrayLike
) -> np.ndarray:
    """Angular acceleration with the gyroscopic term: ``alpha = I_w⁻¹ (tau - omega × L)``.

    From ``tau = dL/dt = d(I_w omega)/dt = I_w alpha + omega × L`` with ``I_w = R I Rᵀ``
    (``dI_w/dt = [omega]× I_w - I_w [omega]×``). All vectors in the world frame; evaluated
    as ``R J (Rᵀ tau + L_b × omega_b)``. On a locked axis (``J_i = 0``) ``alpha`` has no body
    component: the constraint absorbs the torque.

    Parameters
    ----------
    torque : array_like, shape (..., 3)
        World torque ``tau``.
    omega : array_like, shape (..., 3)
        World angular velocity.
    q : array_like, shape (..., 4)
    inv_inertia : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3)
    """
    qa, wa, Ja, ea, _, _ = validate_state(q, omega, inv_inertia, {"torque": torque})
    with np.errstate(all="ignore"):
        alpha = _inertia.angular_acceleration_gu(ea["torque"], wa, qa, Ja)
    check_finite_result("torque, omega, inv_inertia", "the angular acceleration", alpha)
    return alpha


def principal_axes(I: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Principal inverse moments and principal frame of a symmetric inertia tensor.

    ``I = R diag(1/J) Rᵀ`` with ``R`` the matrix of the returned quaternion. The moments
    are sorted **ascending** (``1/J1 <= 1/J2 <= 1/J3``, so the inverse moments come out
    descending); repeated moments give some orthonormal basis of their eigenspace. ``R``
    takes principal (body) coordinates to the frame ``I`` is given in (``det R = +1``), so a
    body whose model-to-world rotation is ``q_model`` simulates with ``q_model ⊗ q``.

    Parameters
    ----------
    I : array_like, shape (..., 3, 3)
        Symmetric positive-definite inertia tensor (symmetric to ``1e-10`` of its largest
        entry for float64, ``1e-5`` for float32).

    Returns
    -------
    inv_inertia : ndarray, shape (..., 3)
    q : ndarray, shape (..., 4)

    Raises
    ------
    InputError
        Wrong shape, non-finite, non-symmetric or not positive definite.
    """
    Ia = as_float_array(I, "I", (3, 3))
    # Each tensor scaled by the power of two that puts its largest entry in [1/2, 1): the
    # symmetry test and the eigensolver neither overflow (entries near 1e308) nor lose the
    # digits of subnormal entries, and the moments scale back exactly.
    e = np.frexp(np.max(np.abs(Ia), axis=(-2, -1)))[1]
    Is = np.ldexp(Ia, -e[..., None, None])
    tol = 1e-10 if Ia.dtype == np.float64 else 1e-5
    scale = np.max(np.abs(Is), axis=(-2, -1), keepdims=True)
    if np.any(np.abs(Is - np.swapaxes(Is, -1, -2)) > tol * scale):
        raise InputError("I: expected a symmetric tensor, got I != I^T")
    moments, vecs = np.linalg.eigh(Is)
    if np.any(~(moments > 0)):
        with np.errstate(over="ignore"):
            smallest = np.ldexp(moments, e[..., None]).min()
        raise InputError(
            f"I: expected a positive-definite tensor, got smallest principal moment {smallest}"
        )
    det = np.linalg.det(vecs)
    vecs[..., :, 2] *= np.sign(det)[..., None]
    flat = np.ascontiguousarray(vecs).reshape((*vecs.shape[:-2], 9))
    q = matrix_to_quat_gu(flat, np.empty(4, dtype=Ia.dtype))
    with np.errstate(over="ignore", divide="ignore"):
        inv_inertia = np.ldexp((1.0 / moments).astype(Ia.dtype), -e[..., None])
    check_finite_result("I", "an inverse principal moment 1/I_k", inv_inertia)
    return inv_inertia, q

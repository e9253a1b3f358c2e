"""Independent oracles shared by the tests: SciPy rotations, a tight-tolerance ODE solve and
the first flip by SciPy's cubic Hermite roots; and :func:`quiet`, which fails a call that
warns.

Nothing here calls tumble, so a test that compares tumble with these compares two
independent computations.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicHermiteSpline
from scipy.spatial.transform import Rotation

#: Tolerances of the reference solve: DOP853 at these is good to about 1e-12 over the
#: tens of rotations the tests run, far below any method error they measure.
ODE_RTOL = 1e-13
ODE_ATOL = 1e-14

#: The hysteresis band of the flip detector, as ``tumble.diagnostics.FLIP_BAND`` states it.
FLIP_BAND = 1e-3


def matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of scalar-first quaternions ``(..., 4)`` (SciPy)."""
    q = np.asarray(q, dtype=float)
    flat = Rotation.from_quat(q.reshape(-1, 4), scalar_first=True).as_matrix()
    return flat.reshape((*q.shape[:-1], 3, 3))


def angle(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Angle (rad) of the rotation ``p* ⊗ q`` between two orientations, double-cover aware."""
    r = Rotation.from_quat(p, scalar_first=True).inv() * Rotation.from_quat(q, scalar_first=True)
    return r.magnitude()


def scipy_rotation(q: np.ndarray) -> Rotation:
    """SciPy ``Rotation`` of scalar-first quaternions ``(..., 4)``."""
    return Rotation.from_quat(np.asarray(q, dtype=float), scalar_first=True)


def scipy_quat(r: Rotation) -> np.ndarray:
    """Scalar-first quaternions of a SciPy ``Rotation`` (its sign)."""
    return r.as_quat(scalar_first=True)


def cover_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Largest component distance between quaternions up to sign (``q`` and ``-q`` agree)."""
    a, b = np.broadcast_arrays(a, b)
    return np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1))


def rigid_rhs(J: np.ndarray, tau):
    """Right-hand side in ``y = (q, L_w)`` of the forced rigid body, with no alpha formula.

    ``dq/dt = ½ (0, omega) ⊗ q``, ``dL_w/dt = tau`` (world), ``omega = R J Rᵀ L_w``: the
    gyroscopic term is never written, so the solve checks it independently. ``tau`` is a
    constant world vector or a callable ``tau(t, R, omega)`` of the rotation matrix and the
    world angular velocity.
    """

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        q, L = y[:4], y[4:]
        R = Rotation.from_quat(q, scalar_first=True).as_matrix()
        w = R @ (J * (R.T @ L))
        dq = 0.5 * np.concatenate([[-w @ q[1:]], q[0] * w + np.cross(w, q[1:])])
        return np.concatenate([dq, tau(t, R, w) if callable(tau) else tau])

    return rhs


def rigid_reference(q0, L_world0, J, t_end, tau=None, t_eval=None, dense_output=False):
    """DOP853 solution of :func:`rigid_rhs` from ``(q0, L_world0)`` over ``[0, t_end]``.

    Returns SciPy's solution object; ``sol.y[:4]`` holds ``q`` (not renormalised) and
    ``sol.y[4:]`` world ``L``, at ``t_eval`` (default: the solver's own points).
    """
    if tau is None:
        tau = np.zeros(3)
    elif not callable(tau):
        tau = np.asarray(tau, dtype=float)
    sol = solve_ivp(
        rigid_rhs(np.asarray(J, dtype=float), tau),
        (0.0, t_end),
        np.concatenate([q0, L_world0]),
        method="DOP853",
        rtol=ODE_RTOL,
        atol=ODE_ATOL,
        t_eval=t_eval,
        dense_output=dense_output,
    )
    assert sol.success, sol.message
    return sol


def hermite_flip(t, Lb, J, band=FLIP_BAND):
    """The flip by SciPy: the first zero of the Hermite interpolant after |x| reached the
    band, provided x then reaches the band on the other side."""
    mid = np.argsort(J, kind="stable")[1]
    norm0 = np.linalg.norm(Lb[0])
    x = Lb[:, mid] / norm0
    dx = np.cross(Lb, J * Lb)[:, mid] / norm0
    big = np.flatnonzero(np.abs(x) >= band)
    if big.size == 0:
        return math.nan
    a = big[0]
    s = np.sign(x[a])
    roots = CubicHermiteSpline(t, x, dx).roots(extrapolate=False)
    for r in np.sort(roots[roots > t[a]]):
        if np.any(s * x[t > r] <= -band):
            return float(r)
    return math.nan


def quiet(call: Callable[[], Any]) -> Any:
    """``call()``, failing on any warning it raises (NumPy's RuntimeWarning included: the
    project's rule is that finite input never makes NumPy warn)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    assert not caught, [str(w.message) for w in caught]
    return result

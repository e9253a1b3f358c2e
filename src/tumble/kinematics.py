"""Constant-acceleration steps: translation, and the Magnus orientation update.

Over a step of length ``dt`` the acceleration ``a`` and the angular acceleration ``alpha``
are constant. Translation then has the closed form ``v' = v + a dt``,
``x' = x + (v + v') dt / 2``. Rotation has none: ``omega(t) = omega + alpha t`` changes
direction, and the orientation obeys ``dR/dt = [omega(t)]× R`` (world frame), i.e.
``dq/dt = 1/2 omega(t) ⊗ q``. Its solution is ``R' = exp([Omega]×) R``,
``q' = exp(Omega/2) ⊗ q``, with the Magnus series

    Omega1 = omega dt + alpha dt²/2 = (omega + omega') dt / 2
    Omega2 = (alpha × omega) dt³ / 12
    Omega3 = alpha × (alpha × omega) dt⁵ / 240
    Omega4 ⊃ omega × (omega × (omega × alpha)) dt⁵ / 720

truncated at order 1 (error ``O(dt³)`` per step), 2 (``O(dt⁵)``) or 4 (every ``dt⁵`` term,
error ``O(dt⁶)``; ``Omega3`` alone does not raise the order). The series converges when the
angle turned in the step, ``∫|omega(t)| dt``, is below pi (180°): that is Casas's bound
``∫‖A(t)‖₂ dt < pi`` with the spectral norm ``‖[omega]×‖₂ = |omega|``. The 127° = pi/√2 of
the source article comes from the Frobenius norm ``‖[omega]×‖_F = √2 |omega|`` and is only
more conservative. Steps past the bound emit :class:`MagnusConvergenceWarning`.

Conventions: world-frame ``omega`` and ``alpha``; quaternions scalar first, Hamilton
product; every argument broadcasts over leading axes; the result dtype is the common float
dtype of the array arguments (``dt`` never changes it). ``dt`` is a number or an array over
the batch; it may be zero or negative (a backward step: orders 1 and 2 retrace a forward
step exactly, up to round-off). See ``docs/kinematics.md``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError, TumbleWarning
from tumble._kernels import kinematics as _k
from tumble._kernels.dispatch import flat_operand, use_parallel
from tumble._validate import (
    as_choice,
    as_float_array,
    as_int,
    as_scalar,
    broadcast_leading,
    common_dtype,
)

__all__ = [
    "AUTO_APPROX_MAX_ANGLE",
    "MagnusConvergenceWarning",
    "magnus",
    "rotate",
    "rotate_matrix",
    "translate",
]

AUTO_APPROX_MAX_ANGLE = _k.AUTO_APPROX_MAX_ANGLE
"""Step angle (radians, 12.43°) below which ``exp="auto"`` uses the trig-free exponential."""

ORDERS = (1, 2, 4)
EXPS = ("exact", "approx", "auto")
# The loops take these choices as the lengths of tuples of zeros (see the kernels).
_EXP_TAG = {
    name: (0.0,) * (code + 1)
    for name, code in (("exact", _k.EXACT), ("approx", _k.APPROX), ("auto", _k.AUTO))
}
_FLOAT_MAX = {np.dtype(t): float(np.finfo(t).max) for t in (np.float32, np.float64)}


class MagnusConvergenceWarning(TumbleWarning):
    """A step turned at least pi (∫|omega(t)| dt >= 180°): the Magnus series may diverge.

    The truncated series is then no longer guaranteed to approximate the true rotation;
    take smaller steps.
    """


def _step_operand(dt: Any, dtype: np.dtype) -> np.ndarray:
    """``dt`` as a finite 0-d or batch-shaped array of ``dtype``."""
    try:
        scalar = np.ndim(dt) == 0
    except ValueError:  # a ragged nested list: as_float_array below names dt
        scalar = False
    if scalar:
        value = as_scalar(dt, "dt")
        if abs(value) > _FLOAT_MAX[dtype]:
            raise InputError(f"dt: expected a finite {dtype} number, got {value:.3g}")
        return np.asarray(value, dtype=dtype)
    with np.errstate(over="ignore"):
        arr = as_float_array(dt, "dt").astype(dtype, copy=False)
    return as_float_array(arr, "dt")


def _order(order: Any) -> int:
    """The Magnus order, an integer in ``ORDERS`` (bools and floats are rejected)."""
    return int(as_choice(as_int(order, "order"), "order", ORDERS))


def _arrays(named: dict[str, tuple[Any, tuple[int, ...]]]) -> dict[str, np.ndarray]:
    """Validate shapes and dtypes (finiteness is checked in the loop, see ``_diagnose``)."""
    arrays = {
        name: as_float_array(x, name, trailing, finite=False)
        for name, (x, trailing) in named.items()
    }
    dtype = common_dtype(*arrays.values())
    return {name: a.astype(dtype, copy=False) for name, a in arrays.items()}


def _prepare(
    arrays: dict[str, np.ndarray], n_trailing: dict[str, int], dt: Any
) -> tuple[tuple[int, ...], int, list[Any], Any]:
    """Broadcast the batch; return it, its size, the loop operands and the ``dt`` operand."""
    dtype = next(iter(arrays.values())).dtype
    dt_arr = _step_operand(dt, dtype)
    batch = broadcast_leading(
        **{name: (a, n_trailing[name]) for name, a in arrays.items()}, dt=(dt_arr, 0)
    )
    n = math.prod(batch)
    if n == 0:
        # The loop of an empty batch reads nothing, yet a shared operand may hold a NaN.
        for name, a in arrays.items():
            as_float_array(a, name, finite=True)
    ops = [flat_operand(a, n_trailing[name], batch, n) for name, a in arrays.items()]
    return batch, n, ops, flat_operand(dt_arr, 0, batch, n)


def _diagnose(arrays: dict[str, np.ndarray], quaternion: str | None = None) -> InputError:
    """The error to raise when a loop saw a NaN: name the argument that caused it."""
    for name, a in arrays.items():
        try:
            as_float_array(a, name, finite=True)
        except InputError as exc:
            return exc
    if quaternion is not None:
        q = arrays[quaternion]
        zero = np.all(q == 0, axis=-1)
        if np.any(zero):
            return InputError(
                f"{quaternion}: expected nonzero quaternions (they are normalised), got a "
                f"zero quaternion at batch index {tuple(np.argwhere(zero)[0].tolist())}"
            )
        with np.errstate(over="ignore", under="ignore"):
            n2 = np.sum(q * q, axis=-1)
        if not np.all((n2 >= np.finfo(q.dtype).tiny) & np.isfinite(n2)):
            return InputError(
                f"{quaternion}: expected quaternions whose squared norm is a normal {q.dtype} "
                "number, got one too small or too large to normalise"
            )
    names = ", ".join(arrays)
    return InputError(f"{names}, dt: values so large that the step overflows")


def _warn_far(w: Any, a: Any, dt: Any, n: int, near: int) -> None:
    """Warn if any step turns pi or more (only the ``near`` candidates can)."""
    if near == 0:
        return
    far = _k.count_far(w, a, dt, n)
    if far:
        warnings.warn(
            f"{far} of {n} steps turn at least pi (180°, the integral of |omega(t)| over "
            "the step): the Magnus series is not guaranteed to converge; take smaller steps",
            MagnusConvergenceWarning,
            stacklevel=3,
        )


def translate(
    x: ArrayLike, v: ArrayLike, a: ArrayLike, dt: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Advance position and velocity over a step of constant acceleration.

    ``v' = v + a dt`` and ``x' = x + (v + v') dt / 2`` (the closed-form solution, exact to
    round-off for constant ``a``; ``n`` steps of ``dt`` equal one step of ``n dt``).

    Parameters
    ----------
    x, v, a : array_like, shape (..., d)
        Position, velocity and acceleration, in any frame and dimension ``d`` (the same for
        all three); leading axes broadcast.
    dt : float or array_like, shape (...)
        Step length, finite; zero and negative (backward) steps are allowed.

    Returns
    -------
    x1, v1 : ndarray, shape (..., d)
        Position and velocity after the step.

    Raises
    ------
    InputError
        Mismatched component axes or batch shapes, NaN or infinite input, non-real ``dt``.
    """
    x_arr = as_float_array(x, "x", finite=False)
    if x_arr.ndim == 0:
        raise InputError("x: expected shape (..., d), got a scalar")
    d = x_arr.shape[-1]
    arrays = _arrays({"x": (x_arr, (d,)), "v": (v, (d,)), "a": (a, (d,))})
    batch, n, (xo, vo, ao), dto = _prepare(arrays, {"x": 1, "v": 1, "a": 1}, dt)
    dtype = arrays["x"].dtype
    x1 = np.empty((*batch, d), dtype)
    v1 = np.empty((*batch, d), dtype)
    loop = _k.translate_parallel if use_parallel(n) else _k.translate_serial
    bad = loop(xo, vo, ao, dto, d, x1.reshape(n * d), v1.reshape(n * d))
    if bad != 0:
        raise _diagnose(arrays)
    return x1, v1


def magnus(omega: ArrayLike, alpha: ArrayLike, dt: ArrayLike, order: int = 2) -> np.ndarray:
    """World rotation vector ``Omega`` of a step of constant angular acceleration.

    With ``omega(t) = omega + alpha t`` on ``[0, dt]`` the step is ``R' = exp([Omega]×) R``
    (``q' = exp(Omega/2) ⊗ q``), where

    * ``order=1``: ``Omega = omega dt + alpha dt²/2``, error ``O(dt³)``;
    * ``order=2``: ``+ (alpha × omega) dt³/12``, error ``O(dt⁵)``;
    * ``order=4``: ``+ alpha × (alpha × omega) dt⁵/240 + omega × (omega × (omega × alpha))
      dt⁵/720``, every term of order ``dt⁵``, error ``O(dt⁶)``.

    Parameters
    ----------
    omega, alpha : array_like, shape (..., 3)
        World-frame angular velocity at the start of the step and angular acceleration.
    dt : float or array_like, shape (...)
        Step length, finite; zero and negative (backward) steps are allowed.
    order : {1, 2, 4}
        Truncation of the Magnus series.

    Returns
    -------
    ndarray, shape (..., 3)
        ``Omega``: angle ``|Omega|`` about the axis ``Omega/|Omega|``, world frame.

    Warns
    -----
    MagnusConvergenceWarning
        If a step turns ``∫|omega(t)| dt >= pi``, where convergence is no longer guaranteed.
    """
    order = _order(order)
    arrays = _arrays({"omega": (omega, (3,)), "alpha": (alpha, (3,))})
    batch, n, (wo, ao), dto = _prepare(arrays, {"omega": 1, "alpha": 1}, dt)
    out = np.empty((*batch, 3), arrays["omega"].dtype)
    loop = _k.magnus_parallel if use_parallel(n) else _k.magnus_serial
    bad, near = loop(wo, ao, dto, (0.0,) * order, out.reshape(n * 3))
    if bad != 0:
        raise _diagnose(arrays)
    _warn_far(wo, ao, dto, n, near)
    return out


def rotate(
    q: ArrayLike,
    omega: ArrayLike,
    alpha: ArrayLike,
    dt: ArrayLike,
    order: int = 2,
    exp: str = "exact",
) -> tuple[np.ndarray, np.ndarray]:
    """Advance an orientation over a step of constant angular acceleration.

    ``q' = exp(Omega/2) ⊗ q/|q|`` with ``Omega = magnus(omega, alpha, dt, order)``, and
    ``omega' = omega + alpha dt`` (world frame: ``dq/dt = 1/2 omega(t) ⊗ q``).

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Orientation (body to world), scalar first. It is normalised first, so slowly
        drifting norms do not accumulate; a zero quaternion raises. ``q'`` is not
        re-signed: it stays on the side of the double cover that ``q`` was on.
    omega, alpha : array_like, shape (..., 3)
        World-frame angular velocity at the start of the step and angular acceleration.
    dt : float or array_like, shape (...)
        Step length, finite; zero and negative (backward) steps are allowed.
    order : {1, 2, 4}
        Truncation of the Magnus series (see :func:`magnus`).
    exp : {"exact", "approx", "auto"}
        How ``exp(Omega/2)`` is evaluated. ``"exact"``: ``(cos θ/2, sin θ/2 n)`` with
        ``θ = |Omega|``. ``"approx"``: the source article's normalised third-order
        polynomial, trig-free, exact axis, rotation-angle error ``θ⁵/480 + O(θ⁷)``
        (1e-6 rad at 12.4° per step, 2e-3 rad at 57°, 1.9e-2 rad at 90°). ``"auto"``: the
        approximation where ``θ < AUTO_APPROX_MAX_ANGLE = 0.2169`` rad, else the exact
        exponential, so the error of the exponential never exceeds 1e-6 rad. The
        threshold was measured as the angle at which the angle of
        ``approx(Omega/2)* ⊗ exact(Omega/2)`` crosses 1e-6 (0.216955 rad), rounded down.

    Returns
    -------
    q1 : ndarray, shape (..., 4)
        Unit orientation after the step.
    omega1 : ndarray, shape (..., 3)
        Angular velocity after the step.

    Warns
    -----
    MagnusConvergenceWarning
        If a step turns ``∫|omega(t)| dt >= pi``: the exact integral (a closed form with an
        ``asinh``) is evaluated for the few steps whose cheap upper bound reaches pi.

    Notes
    -----
    Cost per element: about 100 flops and two square roots, plus for ``"exact"`` the
    cosine and sinc of the half angle (polynomials up to 45°, libm beyond); large batches
    run on all of numba's threads. Input finiteness is checked inside the compiled loop
    (no extra pass over memory).
    """
    order = _order(order)
    exp = as_choice(exp, "exp", EXPS)
    arrays = _arrays({"q": (q, (4,)), "omega": (omega, (3,)), "alpha": (alpha, (3,))})
    batch, n, (qo, wo, ao), dto = _prepare(arrays, {"q": 1, "omega": 1, "alpha": 1}, dt)
    dtype = arrays["q"].dtype
    q1 = np.empty((*batch, 4), dtype)
    w1 = np.empty((*batch, 3), dtype)
    loop = _k.rotate_parallel if use_parallel(n) else _k.rotate_serial
    tags = ((0.0,) * order, _EXP_TAG[exp], (0.0,) * 4)
    bad, near = loop(qo, wo, ao, dto, *tags, q1.reshape(n * 4), w1.reshape(n * 3))
    if bad != 0:
        raise _diagnose(arrays, quaternion="q")
    _warn_far(wo, ao, dto, n, near)
    return q1, w1


def rotate_matrix(
    R: ArrayLike,
    omega: ArrayLike,
    alpha: ArrayLike,
    dt: ArrayLike,
    order: int = 2,
    exp: str = "exact",
) -> tuple[np.ndarray, np.ndarray]:
    """Matrix twin of :func:`rotate`: ``R' = exp([Omega]×) R``, ``omega' = omega + alpha dt``.

    ``exp([Omega]×)`` is built from the unit quaternion ``exp(Omega/2)`` of :func:`rotate`
    (same ``exp`` choices and errors), so it is orthogonal to round-off even for
    ``exp="approx"``, and ``rotate_matrix(quat_to_matrix(q), ...)`` equals
    ``quat_to_matrix(rotate(q, ...))`` to round-off.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Orientation matrices (body to world), used as given: the update multiplies by an
        exact rotation and keeps whatever orthogonality ``R`` has (re-orthonormalise
        accumulated matrices yourself, or integrate quaternions).
    omega, alpha, dt, order, exp
        As in :func:`rotate`.

    Returns
    -------
    R1 : ndarray, shape (..., 3, 3)
    omega1 : ndarray, shape (..., 3)

    Warns
    -----
    MagnusConvergenceWarning
        As in :func:`rotate`.
    """
    order = _order(order)
    exp = as_choice(exp, "exp", EXPS)
    arrays = _arrays({"R": (R, (3, 3)), "omega": (omega, (3,)), "alpha": (alpha, (3,))})
    batch, n, (ro, wo, ao), dto = _prepare(arrays, {"R": 2, "omega": 1, "alpha": 1}, dt)
    dtype = arrays["R"].dtype
    r1 = np.empty((*batch, 3, 3), dtype)
    w1 = np.empty((*batch, 3), dtype)
    loop = _k.rotate_parallel if use_parallel(n) else _k.rotate_serial
    tags = ((0.0,) * order, _EXP_TAG[exp], (0.0,) * 9)
    bad, near = loop(ro, wo, ao, dto, *tags, r1.reshape(n * 9), w1.reshape(n * 3))
    if bad != 0:
        raise _diagnose(arrays)
    _warn_far(wo, ao, dto, n, near)
    return r1, w1

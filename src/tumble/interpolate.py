"""Interpolation of orientations: slerp, squad and a C² rotation spline with rates.

Conventions (``docs/conventions.md``): quaternions ``(..., 4)`` scalar first, body to world;
angular velocity and acceleration in the **world** frame unless ``frame="body"``. Every
function validates its input (:class:`tumble.InputError` naming the argument) and runs
compiled kernels (:mod:`tumble._kernels.interpolate`). ``docs/rotation.md`` shows how to
recover angular velocity from sampled orientations, with measured accuracy.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import solve_banded

from tumble._errors import InputError, TumbleWarning
from tumble._kernels import interpolate as _k
from tumble._kernels.dispatch import flat_operand, use_parallel
from tumble._validate import (
    as_choice,
    as_float_array,
    broadcast_leading,
    check_finite_result,
    common_dtype,
)
from tumble.rotation import (
    quat_conjugate,
    quat_exp,
    quat_log,
    quat_multiply,
    quat_to_rotvec,
    so3_right_jacobian,
    so3_right_jacobian_inverse,
    unit_quat,
)

__all__ = ["RotationSpline", "RotationSplineWarning", "slerp", "squad", "squad_controls"]

_TINY = {np.dtype(t): float(np.finfo(t).tiny) for t in (np.float32, np.float64)}


class RotationSplineWarning(TumbleWarning):
    """The knot rates of a :class:`RotationSpline` did not converge to round-off."""


def slerp(q0: ArrayLike, q1: ArrayLike, s: ArrayLike) -> np.ndarray:
    """Spherical linear interpolation ``q0 ⊗ (q0* ⊗ q1)^s`` on the short arc.

    The rotation that turns uniformly, at constant angular velocity, from ``q0`` (``s = 0``)
    to ``q1`` (``s = 1``) along the shorter of the two arcs (``q1`` and ``-q1`` give the
    same path), as SciPy's ``Slerp`` between two key rotations. Exact at the ends:
    ``s = 0`` gives ``q0/|q0|``, ``s = 1`` gives ``±q1/|q1|`` (the sign nearer ``q0``).
    Equal and opposite inputs give ``q0/|q0|`` for every ``s``, never NaN. ``s`` outside
    ``[0, 1]`` extrapolates along the same great circle. Accurate to round-off
    (``atan2`` logarithm, series exponential).

    Parameters
    ----------
    q0, q1 : array_like, shape (..., 4)
        Nonzero quaternions.
    s : array_like, shape (...)
        Interpolation parameters; all leading axes broadcast.

    Returns
    -------
    ndarray, shape (..., 4)
        The common dtype of ``q0`` and ``q1`` (``s`` is cast to it).
    """
    return _slerp(q0, q1, s, ("q0", "q1"))


def _slerp(q0: ArrayLike, q1: ArrayLike, s: ArrayLike, names: tuple[str, str]) -> np.ndarray:
    """:func:`slerp`, its errors naming the two key rotations ``names``."""
    n0, n1 = names
    a = as_float_array(q0, n0, (4,), finite=False)
    b = as_float_array(q1, n1, (4,), finite=False)
    t = as_float_array(s, "s", finite=False)
    leading = broadcast_leading(**{n0: (a, 1), n1: (b, 1), "s": (t, 0)})
    dtype = common_dtype(a, b)
    size = math.prod(leading)
    operands = [
        flat_operand(x.astype(dtype, copy=False), n, leading, size)
        for x, n in ((a, 1), (b, 1), (t, 0))
    ]
    out = np.empty(size * 4, dtype=dtype)
    kernel = _k.slerp_parallel if use_parallel(size) else _k.slerp_serial
    bad = kernel(*operands, _TINY[dtype], out) if size else 0
    if bad:
        unit_quat(a.astype(dtype, copy=False), n0)
        unit_quat(b.astype(dtype, copy=False), n1)
        as_float_array(t, "s")
        # Valid keys and a finite s: only s times their angle can have overflowed.
        raise InputError(f"s: too large, s times the angle between {n0} and {n1} overflows")
    return out.reshape((*leading, 4))


def squad(q0: ArrayLike, q1: ArrayLike, a0: ArrayLike, a1: ArrayLike, s: ArrayLike) -> np.ndarray:
    """Shoemake's spherical quadrangle interpolation between ``q0`` and ``q1``.

    ``squad = slerp(slerp(q0, q1, s), slerp(a0, a1, s), 2 s (1 - s))``: a cubic-like curve
    through ``q0`` (``s = 0``) and ``q1`` (``s = 1``) shaped by the inner control points
    ``a0``, ``a1``. With the controls of :func:`squad_controls` consecutive segments join
    with continuous angular velocity (C¹). For rotations about one fixed axis with
    angles in arithmetic progression the controls equal the keys and squad is slerp.

    Parameters
    ----------
    q0, q1 : array_like, shape (..., 4)
        Key rotations at ``s = 0`` and ``s = 1``.
    a0, a1 : array_like, shape (..., 4)
        Their inner control points.
    s : array_like, shape (...)
        Parameters in ``[0, 1]``; all leading axes broadcast.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    s_arr = as_float_array(s, "s")
    outer = _slerp(q0, q1, s_arr, ("q0", "q1"))
    inner = _slerp(a0, a1, s_arr, ("a0", "a1"))
    with np.errstate(over="ignore"):
        weight = 2.0 * s_arr * (1.0 - s_arr)
    check_finite_result("s", "the weight 2 s (1 - s)", weight)
    return _slerp(outer, inner, weight, ("q0, q1", "a0, a1"))


def squad_controls(q: ArrayLike) -> np.ndarray:
    """Inner control points of :func:`squad` for key rotations ``q`` (along axis -2).

    ``a_i = q_i ⊗ exp(-(log(q_i* q_{i+1}) + log(q_i* q_{i-1}))/4)`` for interior keys
    (logarithms on the short arc), ``a_i = q_i`` at the two ends. Segment ``i`` is then
    ``squad(q[i], q[i+1], a[i], a[i+1], s)``.

    Parameters
    ----------
    q : array_like, shape (..., n, 4)
        Nonzero key quaternions, ``n >= 2``.

    Returns
    -------
    ndarray, shape (..., n, 4)
        Unit quaternions.
    """
    qa = unit_quat(q, "q")
    if qa.ndim < 2 or qa.shape[-2] < 2:
        raise InputError(
            f"q: expected at least two keys, shape (..., n >= 2, 4), got shape {qa.shape}"
        )
    out = qa.copy()
    mid = qa[..., 1:-1, :]
    inv = quat_conjugate(mid)
    nxt = quat_log(quat_multiply(inv, qa[..., 2:, :]))
    prv = quat_log(quat_multiply(inv, qa[..., :-2, :]))
    out[..., 1:-1, :] = quat_multiply(mid, quat_exp(-(nxt + prv) / 4.0))
    return out


#: What overflows when a spline's knot spacings are too uneven (InputError naming times).
_UNEVEN = "a knot rate or coefficient of the spline (knot spacings too uneven)"


class RotationSpline:
    """C² interpolation of orientations in time, with angular velocity and acceleration.

    On each interval ``[t_i, t_{i+1}]`` the orientation is ``R(t) = R_i exp(θ_i(t - t_i))``
    with ``θ_i`` a cubic rotation vector (relative to the knot ``R_i``, body frame):
    ``θ_i(0) = 0``, ``θ_i(h_i) = log(R_iᵀ R_{i+1})``. The body angular velocity is
    ``J_r(θ) θ̇``, the body angular acceleration ``J_r(θ) θ̈ + (dJ_r/dt) θ̇``; the knot
    rates are solved so that both are continuous at every knot (C² in time), and at the
    two ends the rate is the chord rate ``log(R_0ᵀ R_1)/h_0`` (and its mirror at the last
    knot). That is SciPy's ``RotationSpline``: same pieces, same end conditions. The
    equations for the knot rates are nonlinear through ``(dJ_r/dt) θ̇``; tumble iterates
    them (block-tridiagonal solves) to round-off, where SciPy stops at a relative change of
    1e-9 or 10 iterations, so the two agree to that tolerance of SciPy.

    Accuracy on samples of a smooth motion at spacing ``h``: in the interior the attitude
    error is ``O(h⁴)`` and the angular velocity error ``O(h³)`` (measured: order 3.0 on the
    exact torque-free motion of an asymmetric top, ``docs/rotation.md``); the chord rates
    at the ends are first order, and their error decays into the interior (for a cubic
    spline's end condition by about 2 + √3 ≈ 3.7 per knot, the linear theory; not measured
    separately), so within a few knots of either end the rates are ``O(h)`` (measured).

    Parameters
    ----------
    times : array_like, shape (n,)
        Strictly increasing, finite, ``n >= 2``.
    q : array_like, shape (n, 4)
        Nonzero quaternions (body to world) at ``times``; signs do not matter.

    Notes
    -----
    Evaluation outside ``[times[0], times[-1]]`` extrapolates the end pieces (as SciPy), as
    long as the rotation vector of the piece and its rates stay within
    :data:`EXTRAPOLATION_LIMIT` (``t`` beyond raises :class:`tumble.InputError`). The spline
    is computed in float64, in a time unit of its own (a power of two near the largest
    knot spacing), so knots 1e-300 or 1e300 apart work like unit spacings; a rate that
    passes the float range raises naming ``times, q``. Results have the dtype of ``q``.
    """

    #: Iterations allowed for the knot rates; smooth data converge in a few.
    MAX_ITERATIONS = 50

    #: Largest rotation vector (rad) of a piece, and largest rate of it in the spline's own
    #: time unit (the knot spacing, to a power of two), at an evaluated time: extrapolating
    #: farther raises :class:`tumble.InputError` naming ``t``. Far below it the attitude
    #: has no correct digit left (one ulp of an angle of 1e16 rad exceeds a turn); the
    #: rate formulas square these values twice, so the limit keeps them finite.
    EXTRAPOLATION_LIMIT = 1e60

    def __init__(self, times: ArrayLike, q: ArrayLike) -> None:
        t = as_float_array(times, "times")
        if t.ndim != 1 or t.shape[0] < 2:
            raise InputError(f"times: expected shape (n,) with n >= 2, got shape {t.shape}")
        qa = unit_quat(q, "q")
        if qa.shape != (t.shape[0], 4):
            raise InputError(
                f"q: expected shape ({t.shape[0]}, 4) to match times, got shape {qa.shape}"
            )
        t64 = t.astype(np.float64)
        with np.errstate(over="ignore"):
            h = np.diff(t64)
        if not np.all(h > 0):
            k = int(np.argmin(h > 0))
            raise InputError(
                f"times: expected strictly increasing times, got times[{k + 1}] = {t64[k + 1]!r} "
                f"after times[{k}] = {t64[k]!r}"
            )
        check_finite_result("times", "a knot spacing", h)
        # The spline's own time unit: the power of two that puts the largest spacing in
        # [1, 2) (1 for unit spacings), so that h³ and the coefficients cannot overflow or
        # underflow for knots 1e-300 or 1e300 apart; dividing by it is exact.
        unit = math.ldexp(1.0, min(max(math.frexp(float(np.max(h)))[1] - 1, -1000), 1000))
        h = h / unit
        if not np.all(h > 0):
            # A spacing over 1e300 times below the largest one vanishes in that unit.
            raise InputError(
                f"times: expected knot spacings within the float range of each other, got "
                f"{float(np.min(np.diff(t64)))!r} beside {float(np.max(np.diff(t64)))!r}"
            )
        knots = np.ascontiguousarray(qa.astype(np.float64))
        delta = quat_to_rotvec(quat_multiply(quat_conjugate(knots[:-1]), knots[1:]))
        # Spacings that differ by about a hundred orders of magnitude or more overflow the
        # knot rates or the coefficients (a short piece's cubic term is Δ/h³ in the unit of
        # the longest); both are checked, so nothing here may warn.
        with np.errstate(all="ignore"):
            rates = self._knot_rates(h, delta)
            hh = h[:, None]
            end_rate = np.einsum("nij,nj->ni", so3_right_jacobian_inverse(delta), rates[1:])
            coeff = np.empty((len(h), 3, 3))
            # Divided once per power of h: h³ alone would underflow before the quotient
            # overflows.
            coeff[:, 0] = (-2.0 * delta + hh * rates[:-1] + hh * end_rate) / hh / hh / hh
            coeff[:, 1] = (3.0 * delta - 2.0 * hh * rates[:-1] - hh * end_rate) / hh / hh
            coeff[:, 2] = rates[:-1]
        check_finite_result("times", _UNEVEN, coeff)
        self._times = t64
        self._unit = unit
        self._knots = knots
        self._coeff = np.ascontiguousarray(coeff)
        self._dtype = qa.dtype

    @property
    def times(self) -> np.ndarray:
        """The knot times, shape (n,) (a copy)."""
        return self._times.copy()

    def _knot_rates(self, h: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Body angular velocities at the knots (n, 3) making the spline C².

        At interior knot ``k`` continuity of the body angular acceleration reads
        ``2 J_r(Δ_{k-1})/h_{k-1} ω_{k-1} + 4 (1/h_{k-1} + 1/h_k) ω_k + 2 J_r⁻¹(Δ_k)/h_k ω_{k+1}
        = 6 Δ_{k-1}/h_{k-1}² + 6 Δ_k/h_k² - (dJ_r/dt) θ̇`` at the end of piece ``k - 1``,
        whose last term depends on ``ω_k``: solved by fixed-point iteration, each step a
        block-tridiagonal (banded) solve.
        """
        n = len(h) + 1
        rates = np.empty((n, 3))
        rates[:-1] = delta / h[:, None]
        rates[-1] = delta[-1] / h[-1]
        m = n - 2
        if m == 0:
            return rates
        jr = so3_right_jacobian(delta)
        jr_inv = so3_right_jacobian_inverse(delta)
        # Banded storage of the 3m x 3m block-tridiagonal matrix: five bands each side.
        band = np.zeros((11, 3 * m))
        r = np.arange(m)
        blocks = [
            (r, r, (4.0 * (1.0 / h[:-1] + 1.0 / h[1:]))[:, None, None] * np.eye(3)),
            (r[1:], r[:-1], 2.0 * jr[1:-1] / h[1:-1, None, None]),
            (r[:-1], r[1:], 2.0 * jr_inv[1:-1] / h[1:-1, None, None]),
        ]
        k3 = np.arange(3)
        for rows, cols, values in blocks:
            ii = 3 * rows[:, None, None] + k3[None, :, None]
            jj = 3 * cols[:, None, None] + k3[None, None, :]
            band[5 + ii - jj, jj] = values
        hl, hr = h[:-1, None], h[1:, None]
        rhs = 6.0 * (delta[:-1] / hl / hl + delta[1:] / hr / hr)
        rhs[0] -= 2.0 / h[0] * jr[0] @ rates[0]
        rhs[-1] -= 2.0 / h[-1] * jr_inv[-1] @ rates[-1]
        change = np.inf
        for _ in range(self.MAX_ITERATIONS):
            theta_dot = np.einsum("nij,nj->ni", jr_inv[:-1], rates[1:-1])
            quadratic = np.empty((m, 3))
            _k.spline_rate_terms(np.ascontiguousarray(delta[:-1]), theta_dot, quadratic)
            # SciPy's solver refuses non-finite input with a ValueError: name the knots.
            check_finite_result("times", _UNEVEN, band, rhs - quadratic)
            new = solve_banded((5, 5), band, (rhs - quadratic).reshape(-1)).reshape(m, 3)
            change = float(np.max(np.abs(new - rates[1:-1]) / (1.0 + np.abs(new))))
            rates[1:-1] = new
            if change <= 4.0 * np.finfo(np.float64).eps:
                break
        if not change <= 1e-12:
            warnings.warn(
                RotationSplineWarning(
                    f"knot rates changed by {change:.3g} (relative) in the last of "
                    f"{self.MAX_ITERATIONS} iterations: the samples turn too far between "
                    "knots for the rates to settle; sample more densely"
                ),
                stacklevel=3,
            )
        return rates

    def _evaluate(self, t: ArrayLike, what: int, frame: Any) -> np.ndarray:
        world = as_choice(frame, "frame", ("world", "body")) == "world"
        ta = as_float_array(t, "t").astype(np.float64)
        flat = ta.reshape(-1)
        index = np.clip(
            np.searchsorted(self._times, flat, side="right") - 1, 0, len(self._times) - 2
        )
        with np.errstate(over="ignore"):  # (1e308 - -1e308): flagged by the kernel
            tau = (flat - self._times[index]) / self._unit
        out = np.empty((flat.size, 4 if what == 0 else 3))
        kernel = _k.spline_parallel if use_parallel(flat.size) else _k.spline_serial
        bad = kernel(
            index, tau, self._coeff, self._knots, what, world, 1.0 / self._unit,
            self.EXTRAPOLATION_LIMIT, out,
        )  # fmt: skip
        with np.errstate(over="ignore"):
            result = out.reshape((*ta.shape, out.shape[1])).astype(self._dtype)
        if bad or not np.all(np.isfinite(result)):
            outside = (flat < self._times[0]) | (flat > self._times[-1])
            quantity = ("attitude", "angular velocity", "angular acceleration")[what]
            if np.any(outside):
                raise InputError(
                    f"t: too far outside the knots [{self._times[0]:.6g}, {self._times[-1]:.6g}] "
                    f"(got t = {float(flat[np.argmax(np.abs(flat))]):.6g}): the extrapolated "
                    f"{quantity} passes the float range, or the end piece's rotation vector or "
                    f"its rates pass EXTRAPOLATION_LIMIT = {self.EXTRAPOLATION_LIMIT:g}"
                )
            raise InputError(
                f"times, q: the {quantity} between these knots is beyond {self._dtype} (knots "
                "too close together for the rotation between them)"
            )
        return result

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """Orientations at times ``t``.

        Parameters
        ----------
        t : array_like, shape (...)

        Returns
        -------
        ndarray, shape (..., 4)
            Unit quaternions, body to world.
        """
        return self._evaluate(t, 0, "world")

    def angular_velocity(self, t: ArrayLike, frame: str = "world") -> np.ndarray:
        """Angular velocity at times ``t``: ``ω_body = J_r(θ) θ̇``, ``ω_world = R ω_body``.

        Parameters
        ----------
        t : array_like, shape (...)
        frame : {"world", "body"}

        Returns
        -------
        ndarray, shape (..., 3)
        """
        return self._evaluate(t, 1, frame)

    def angular_acceleration(self, t: ArrayLike, frame: str = "world") -> np.ndarray:
        """Angular acceleration at ``t``: ``α_body = J_r θ̈ + (dJ_r/dt) θ̇``, ``α_world = R α_body``.

        ``dω_world/dt = R α_body`` exactly (the ``ω × ω`` term vanishes), so the two frames
        differ by the rotation only.

        Parameters
        ----------
        t : array_like, shape (...)
        frame : {"world", "body"}

        Returns
        -------
        ndarray, shape (..., 3)
        """
        return self._evaluate(t, 2, frame)

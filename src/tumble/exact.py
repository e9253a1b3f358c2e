"""Exact torque-free motion of a rigid body: spherical, symmetric and asymmetric tops.

The body frame is the principal frame, the inertia is given by its principal inverse
moments ``J = diag(J1, J2, J3)`` (``inv_inertia``), ``q`` maps body to world coordinates and
``omega`` is the world-frame angular velocity (``docs/conventions.md``). The world angular
momentum ``L_w = R L_b`` and the energy ``E = ½ L_b·J L_b`` are constants of the motion.

Which solution is used, per body (``docs/exact.md`` has the maths):

* **uniform rotation** ``q(t) = exp(omega0 t / 2) ⊗ q0``, ``L_b`` constant: ``L = 0``, a
  spherical body, a steady spin about a principal axis of an asymmetric body (``k = omega
  × L = 0``), and any body with a zero inverse moment (see below);
* **symmetric top** (two moments equal to ``EQUAL_RTOL``), closed form
  ``q(t) = exp(J⊥ L_w t / 2) ⊗ q0 ⊗ exp(Ω t e_a / 2)``, ``Ω = (J∥ - J⊥) L_b,a``;
* **asymmetric top**: body ``L`` from Jacobi elliptic functions (both circulation regimes),
  hyperbolic functions on the separatrix, and the world orientation from the constant
  direction of ``L_w`` plus the angle about it, an incomplete elliptic integral of the third
  kind (reference ``shared/reference/rigid-body-integrators.md`` §4.2 and §4.3).

The computation is compiled (:mod:`tumble._kernels.exact`, no SciPy): per body one set-up
(``prepare``), then per time one evaluation (``evaluate``). After argument reduction to
``[-K, K]`` the elliptic functions are theta series in the nome of ``m`` (``m <= 1/2``) or,
by Jacobi's imaginary transformation, of ``1 - m`` (``m > 1/2``), with ``1 - m`` passed in
exactly (from ``J2 |L|² - 2E = (J2 - J1) L1² + (J2 - J3) L3²``, never by subtraction from
``m``); the second form keeps ``cn`` and ``dn`` relatively accurate where they are tiny
(near the separatrix), and on the separatrix it is ``tanh``/``sech``. SciPy's
``ellipj(u, m)`` cannot be used there: it takes ``m``, so ``1 - m`` below ~1e-8 has lost
digits before the call, for ``1 - m < 1e-9`` it switches to a first-order expansion valid
only for ``u < K`` (scipy#8480), and its AGM loses the relative accuracy of small ``cn``.
The third-kind integral ``Π(n; am u) - u`` is Jacobi's theta-function form (one ``atan2``
per evaluation), with the reference axis of the orientation frame chosen per body so that
``|n| <= 1``. The accuracy is measured in ``docs/exact.md``.

Zero inverse moments (axes that cannot turn) follow the constraint model of
:mod:`tumble.rigid`: the momentum about a held axis is absorbed by the constraint. Then
``omega_b`` has no component about the held axes and the free components obey
``I_i d(omega_i)/dt = 0``, so the body turns uniformly about the fixed world axis
``omega0``. An ``omega0`` with a component about a held axis (more than
``HELD_AXIS_RTOL |omega0|``) is physically impossible and raises :class:`tumble.InputError`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tumble import rotation
from tumble._errors import InputError
from tumble._kernels import exact as kernels
from tumble._kernels.dispatch import use_parallel
from tumble._validate import (
    as_float_array,
    as_scalar,
    broadcast_leading,
    check_memory,
    common_dtype,
)

__all__ = [
    "EQUAL_RTOL",
    "HELD_AXIS_RTOL",
    "MAX_PHASE",
    "UNIT_RTOL",
    "body_period",
    "polhode",
    "torque_free",
    "torque_free_from_momentum",
]

#: Two inverse moments count as equal (symmetric path) when they differ by at most this
#: times the largest one: a few float64 ulps. The symmetric formula's error grows like
#: ``|ΔJ| |L| t``, so only round-off-level differences may take it; the asymmetric path is
#: accurate for any larger difference (tested down to 3e-15 relative).
EQUAL_RTOL = kernels.EQUAL_RTOL

#: Largest accepted body component of ``omega0`` about an axis with ``J_i = 0``, relative
#: to ``|omega0|`` (per dtype): round-off of the world-to-body rotation passes, a real
#: spin about a held axis does not. The accepted residue is dropped.
HELD_AXIS_RTOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-8}


# --------------------------------------------------------------------------------------
# validation


def _prepare(
    q0: ArrayLike, omega0: ArrayLike, inv_inertia: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...], np.dtype]:
    """Validate a state; return ``(q, L_b, J)`` flattened to ``(n_bodies, ·)``.

    All float64; also the batch shape and the dtype of the result.
    """
    q = rotation.unit_quat(q0, "q0")
    w = as_float_array(omega0, "omega0", (3,))
    J = as_float_array(inv_inertia, "inv_inertia", (3,))
    batch = broadcast_leading(q0=(q, 1), omega0=(w, 1), inv_inertia=(J, 1))
    dtype = common_dtype(q, w, J)
    if np.any(J < 0):
        raise InputError(
            f"inv_inertia: expected inverse moments >= 0, got minimum {float(np.min(J)):.6g}"
        )
    nb = int(np.prod(batch, dtype=np.int64))
    qf = np.broadcast_to(q, (*batch, 4)).reshape(nb, 4).astype(np.float64)
    # Normalised again in float64: a float32 q0 carries float32 round-off of its norm.
    qf = qf / np.linalg.norm(qf, axis=-1, keepdims=True)
    wf = np.broadcast_to(w, (*batch, 3)).reshape(nb, 3).astype(np.float64)
    Jf = np.broadcast_to(J, (*batch, 3)).reshape(nb, 3).astype(np.float64)
    wb = rotation.quat_rotate(rotation.quat_conjugate(qf), wf)
    held = Jf == 0.0
    with np.errstate(over="ignore"):  # an overflowing |omega0|² is reported below
        wnorm = np.linalg.norm(wf, axis=-1, keepdims=True)
    if np.any(held & (np.abs(wb) > HELD_AXIS_RTOL[w.dtype] * wnorm)):
        raise InputError(
            "omega0: a body with a zero inverse moment cannot turn about that principal "
            "axis, but omega0 has a body-frame component about it "
            f"(relative size > {HELD_AXIS_RTOL[w.dtype]:g})"
        )
    wb = np.where(held, 0.0, wb)
    with np.errstate(over="ignore"):
        Lb = np.divide(wb, Jf, out=np.zeros_like(wb), where=~held)
        # |L|², and the largest rate of the motion, J_max |L| (>= |omega_b(t)| for all t),
        # must be finite: the solution squares L and scales angles by these rates.
        rate = np.max(Jf, axis=-1) * np.sqrt(np.sum(Lb * Lb, axis=-1))
    if not np.all(np.isfinite(rate)):
        raise InputError(
            "omega0, inv_inertia: the angular momentum L_b = omega0_b / J (or J_max |L|) "
            "overflows float64; expected |omega0| / min(J) and J_max/J_min |omega0| below "
            "about 1e154"
        )
    return qf, Lb, Jf, batch, dtype


#: Largest accepted ``J_max |L| |t|`` (a bound on every angle the solution forms, in
#: radians): beyond it squared angles overflow float64. Any phase above ~1e15 rad has no
#: correct digit left anyway (one ulp of it exceeds 0.1 rad).
MAX_PHASE = 1e150


def check_phase(Lb: np.ndarray, J: np.ndarray, t: np.ndarray) -> None:
    """Raise naming ``t`` if the angles of the motion up to ``max |t|`` would overflow.

    ``Lb``, ``J`` (nb, 3) and ``t`` float64 arrays, already validated; also used by
    ``rigid.simulate`` for its ``"exact"`` records (not exported)."""
    if t.size == 0 or Lb.shape[0] == 0:
        return
    rate = float(np.max(np.max(J, axis=-1) * np.linalg.norm(Lb, axis=-1)))
    with np.errstate(over="ignore"):
        phase = rate * float(np.max(np.abs(t)))
    if not phase <= MAX_PHASE:
        raise InputError(
            f"t: expected |t| J_max |L| <= {MAX_PHASE:g} (the rotation angle reached), got "
            f"|t| = {float(np.max(np.abs(t))):.3g} with J_max |L| = {rate:.3g}"
        )


def _times(t: ArrayLike) -> np.ndarray:
    return as_float_array(t, "t").astype(np.float64)


# --------------------------------------------------------------------------------------
# the compiled solution


def _solve(
    q: np.ndarray, Lb: np.ndarray, J: np.ndarray, t: np.ndarray, names: str
) -> tuple[np.ndarray, np.ndarray]:
    """``q(t)`` (nt, nb, 4) and world ``omega(t)`` (nt, nb, 3) from ``(q, L_b)``, float64.

    The kernels write straight into the outputs (no temporaries per pair), after the
    resource check on their size. ``names``: the caller's arguments, named if a result is
    not finite (the kernels flag it; validated input never gives one).
    """
    nt, nb = t.shape[0], q.shape[0]
    check_memory(nt * nb * 7 * 8, "t", f"{nt} times x {nb} bodies of states")
    q_out = np.empty((nt, nb, 4))
    w_out = np.empty((nt, nb, 3))
    solve = kernels.solve_parallel if use_parallel(nt * nb) else kernels.solve_serial
    bad = solve(
        np.ascontiguousarray(q),
        np.ascontiguousarray(Lb),
        np.ascontiguousarray(J),
        np.ascontiguousarray(t),
        q_out,
        w_out,
    )
    if bad:
        raise InputError(
            f"{names}: the exact motion of {bad} bodies is not finite in float64 (a bug: "
            "validated input has a finite solution; please report these values)"
        )
    return q_out, w_out


def _in_dtype(x: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, names: str) -> np.ndarray:
    """The float64 result ``x`` (n, ..., k) reshaped to ``shape + (k,)`` in ``dtype``; a
    value beyond float32's range (an angular velocity up to ``J_max |L|``, which may exceed
    ``|omega0|``) raises naming ``names``."""
    with np.errstate(over="ignore"):
        out = x.reshape(shape + x.shape[-1:]).astype(dtype, copy=False)
    if out.dtype != x.dtype and not np.all(np.isfinite(out)):
        raise InputError(f"{names}: too large, the motion leaves the float32 range")
    return out


# --------------------------------------------------------------------------------------
# public functions


def torque_free(
    q0: ArrayLike, omega0: ArrayLike, inv_inertia: ArrayLike, t: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Exact torque-free motion ``(q(t), omega(t))`` from ``(q0, omega0)`` at time 0.

    Solves ``dL_w/dt = 0``, ``dq/dt = ½ omega ⊗ q`` with ``omega = R J Rᵀ L_w`` in closed
    form (module docstring, ``docs/exact.md``): uniform rotation, the symmetric-top formula
    ``q(t) = exp(J⊥ L_w t/2) ⊗ q0 ⊗ exp(Ω t e_a/2)`` with ``Ω = (J∥ - J⊥) L_b,a``, or, for
    an asymmetric body, ``L_b(t)`` from Jacobi elliptic functions and
    ``R(t) = Q(ψ(t) L̂_w) R0 B(L_b0) B(L_b(t))ᵀ`` with ``ψ`` an elliptic integral of the
    third kind. Both circulation regimes and the separatrix (hyperbolic functions) are
    covered; ``1 - m`` is computed without cancellation and the argument is reduced
    modulo ``2K`` before the elliptic functions are evaluated.

    Parameters
    ----------
    q0 : array_like, shape (..., 4)
        Initial orientation, body to world, scalar first; any nonzero quaternion, read as
        ``q0/|q0|`` like everywhere in tumble (zero, or ``|q0|²`` overflowing, raises).
    omega0 : array_like, shape (..., 3)
        Initial angular velocity, **world** frame. With a zero inverse moment it may not
        have a body component about that axis (``HELD_AXIS_RTOL``). ``L_b = omega0_b / J``,
        ``|L_b|²`` and ``J_max |L_b|`` must be finite in float64, else
        :class:`tumble.InputError` names ``omega0, inv_inertia``.
    inv_inertia : array_like, shape (..., 3)
        Principal inverse moments ``J_i >= 0`` (body frame = principal frame). A zero is
        an axis held by a constraint: the body then turns uniformly about ``omega0``.
    t : array_like, any shape
        Times since the initial state (any sign), with ``|t| J_max |L| <= MAX_PHASE``
        (1e150 rad; far larger than any phase with a correct digit).

    Returns
    -------
    q : ndarray, shape t.shape + batch + (4,)
        Orientations; time axes first, then the broadcast batch of the three state
        arguments. Continuous in ``t`` (no sign jumps).
    omega : ndarray, shape t.shape + batch + (3,)
        World angular velocities.

    Notes
    -----
    Accuracy (``docs/exact.md``): against a DOP853 solution (rtol 1e-13) over five body
    periods of random bodies, attitude within 7e-12 rad (median 5e-13) and body ``L``
    within 2e-12 of ``|L|`` (median 3e-14), mostly the ODE's own error. Near the
    separatrix the motion itself is ill-conditioned: a relative perturbation ``δ`` of the
    state grows to about ``δ / (1 - m)`` over one passage near the unstable axis, and the
    result is as accurate as that allows (backward stable).
    All arithmetic is float64; the result has the dtype of ``q0``, ``omega0`` and
    ``inv_inertia`` combined (float32 only if all three are), whatever the dtype of ``t``.
    Cost (compiled, one thread): about 0.3 ms per call plus about 1.4 µs per body (the
    per-body set-up, :func:`tumble._kernels.exact.prepare`) and 0.2-0.3 µs per (time,
    body): one theta-series evaluation of the Jacobi functions and the third-kind integral,
    and a few quaternion products (``docs/exact.md``, ``tumble bench exact``). Memory: the
    float64 result (and its copy in the input dtype); a result above the memory limit
    (``tumble.memory_limit``, 2 GiB by default) raises :class:`tumble.InputError` naming
    ``t`` before anything is allocated.
    """
    q, Lb, J, batch, dtype = _prepare(q0, omega0, inv_inertia)
    tt = _times(t)
    check_phase(Lb, J, tt)
    names = "q0, omega0, inv_inertia, t"
    qt, wt = _solve(q, Lb, J, tt.ravel(), names)
    return _in_dtype(qt, tt.shape + batch, dtype, names), _in_dtype(
        wt, tt.shape + batch, dtype, names
    )


#: Largest accepted ``| |q0| - 1 |`` of :func:`torque_free_from_momentum`, which uses
#: ``q0`` as given: a recorded attitude is unit to round-off, far inside this.
UNIT_RTOL = 1e-6


def torque_free_from_momentum(
    q0: ArrayLike, L_body0: ArrayLike, inv_inertia: ArrayLike, t: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`torque_free` from the body-frame angular momentum instead of ``omega0``.

    The state a :class:`tumble.trajectory.Trajectory` records is ``(q, L_body)``; starting
    from it directly spares the round trip ``L_b -> omega -> L_b`` and its last-bit changes,
    so scores computed from a trajectory are reproducible to the bit. ``q0`` is used as
    given (not renormalised) and must be unit to :data:`UNIT_RTOL`; ``L_body0`` on an axis
    with ``J_i = 0`` is ignored (the constraint holds it, as in :mod:`tumble.rigid`).
    Same motion, accuracy and cost as :func:`torque_free`: ``omega0 = R0 J L_body0``.

    Parameters
    ----------
    q0 : array_like, shape (..., 4)
        Unit body-to-world quaternion at ``t = 0``.
    L_body0 : array_like, shape (..., 3)
        Body-frame angular momentum at ``t = 0``.
    inv_inertia : array_like, shape (..., 3)
        Principal inverse moments, ``>= 0``.
    t : array_like, shape (nt,) or scalar
        Times.

    Returns
    -------
    q : ndarray, shape (nt, ..., 4)
    omega : ndarray, shape (nt, ..., 3)
        World angular velocity. Computed in float64; the dtype of ``q0``, ``L_body0`` and
        ``inv_inertia`` combined, as in :func:`torque_free`.
    """
    arrays = (
        as_float_array(q0, "q0", (4,)),
        as_float_array(L_body0, "L_body0", (3,)),
        as_float_array(inv_inertia, "inv_inertia", (3,)),
    )
    dtype = common_dtype(*arrays)
    q, Lb, J = (a.astype(np.float64) for a in arrays)
    batch = broadcast_leading(q0=(q, 1), L_body0=(Lb, 1), inv_inertia=(J, 1))
    if np.any(J < 0):
        raise InputError(
            f"inv_inertia: expected inverse moments >= 0, got minimum {float(np.min(J)):.6g}"
        )
    with np.errstate(over="ignore"):  # |q0|² beyond float64: far from unit, reported below
        off = np.abs(np.linalg.norm(q, axis=-1) - 1.0)
    if np.any(~(off <= UNIT_RTOL)):
        raise InputError(
            f"q0: expected unit quaternions (| |q0| - 1 | <= {UNIT_RTOL:g}), got "
            f"| |q0| - 1 | = {float(np.max(off)):.3g}"
        )
    nb = int(np.prod(batch, dtype=np.int64))
    qf = np.ascontiguousarray(np.broadcast_to(q, (*batch, 4))).reshape(nb, 4)
    Jf = np.ascontiguousarray(np.broadcast_to(J, (*batch, 3))).reshape(nb, 3)
    Lf = np.where(Jf > 0, np.broadcast_to(Lb, (*batch, 3)).reshape(nb, 3), 0.0)
    with np.errstate(over="ignore"):
        rate = np.max(Jf, axis=-1) * np.sqrt(np.sum(Lf * Lf, axis=-1))
    if not np.all(np.isfinite(rate)):
        raise InputError(
            "L_body0, inv_inertia: |L|² and the largest rate J_max |L| must be finite in "
            "float64 (expected |L_body0| well below 1e150)"
        )
    tt = _times(t)
    check_phase(Lf, Jf, tt)
    names = "q0, L_body0, inv_inertia, t"
    qt, wt = _solve(qf, Lf, Jf, tt.ravel(), names)
    return _in_dtype(qt, tt.shape + batch, dtype, names), _in_dtype(
        wt, tt.shape + batch, dtype, names
    )


def body_period(q0: ArrayLike, omega0: ArrayLike, inv_inertia: ArrayLike) -> np.ndarray:
    """Period of the body-frame angular momentum ``L_b(t)`` of the torque-free motion.

    * asymmetric body: ``T = 4 K(m) / ω_p`` (reference §4.2); infinite on the separatrix
      (``2E = J2 |L|²``, including a spin about the median axis), where the motion is
      heteroclinic. For a steady spin about the axis of largest or smallest moment the
      limit of nearby orbits is returned, ``2π / (|L| sqrt((J1 - J3)(J2 - J3)))`` resp.
      ``2π / (|L| sqrt((J1 - J2)(J1 - J3)))`` (``J1 > J2 > J3``);
    * symmetric body: ``2π / |Ω|``, ``Ω = (J∥ - J⊥) L_b,a`` (infinite when ``Ω = 0``);
    * ``L = 0``, spherical body, or a zero inverse moment: ``L_b`` is constant, ``inf``.

    ``L_b(t + T) = L_b(t)``; the attitude is not periodic in general (it turns about
    ``L_w`` by an angle that is incommensurate with ``2π``).

    Parameters
    ----------
    q0, omega0, inv_inertia : array_like, shapes (..., 4), (..., 3), (..., 3)
        As in :func:`torque_free`.

    Returns
    -------
    ndarray, shape batch
        Periods (time units of ``1/omega``), dtype of the inputs combined.
    """
    _, Lb, J, batch, dtype = _prepare(q0, omega0, inv_inertia)
    T = np.empty(Lb.shape[0])
    if kernels.period_serial(np.ascontiguousarray(Lb), J, T):
        raise InputError(
            "omega0, inv_inertia: too small, the body period (about 2π / (J |L_b|)) "
            "overflows float64"
        )
    with np.errstate(over="ignore"):
        out = T.reshape(batch).astype(dtype)
    if np.any(np.isinf(out) & np.isfinite(T.reshape(batch))):
        raise InputError("omega0, inv_inertia: too small, the body period overflows float32")
    return out[()]


def polhode(inv_inertia: ArrayLike, energy_factor: float, points: int = 129) -> np.ndarray:
    """The polhodes of a free body: where body-frame ``L`` can go at a given energy.

    Torque-free motion keeps ``|L|`` and ``2E = L_b·J L_b`` constant, so the unit vector
    ``u = L_b / |L|`` stays on the intersection of the unit sphere with the ellipsoid
    ``u·J u = J_L`` (``J_L = 2E / |L|²``, the energy factor). With the inverse moments
    sorted, ``J_a <= J_b <= J_c``:

    * ``J_L <= J_b``: loops about the ``a`` axis, ``u_b = √((J_L - J_a)/(J_b - J_a)) cos s``,
      ``u_c = √((J_L - J_a)/(J_c - J_a)) sin s``, ``u_a = ±√(1 - u_b² - u_c²)``;
    * ``J_L > J_b``: loops about the ``c`` axis, ``u_a = √((J_c - J_L)/(J_c - J_a)) cos s``,
      ``u_b = √((J_c - J_L)/(J_c - J_b)) sin s``, ``u_c = ±√(1 - u_a² - u_b²)``.

    ``J_L = J_b`` gives the separatrix (the four arcs between the ``±b`` axes, as two loops).

    Parameters
    ----------
    inv_inertia : array_like, shape (3,)
        Principal inverse moments ``J`` (``>= 0``, not all equal: a spherical body's ``L_b``
        does not move).
    energy_factor : float
        ``J_L`` in ``[min J, max J]``.
    points : int, optional
        Points per loop (``>= 3``); each loop is closed (its last point is its first).

    Returns
    -------
    ndarray, shape (2, points, 3)
        The two mirror-image loops (``u_a > 0`` and ``< 0``, resp. ``u_c``), unit vectors in
        body coordinates, on both surfaces to round-off.
    """
    J = as_float_array(inv_inertia, "inv_inertia", (3,))
    if J.shape != (3,) or np.any(J < 0):
        raise InputError(f"inv_inertia: expected three inverse moments >= 0, got {J.tolist()}")
    e = as_scalar(energy_factor, "energy_factor")
    n = points if isinstance(points, (int, np.integer)) and not isinstance(points, bool) else -1
    if n < 3 or n > 100_000:
        raise InputError(f"points: expected an integer in [3, 100000], got {points!r}")
    a, b, c = np.argsort(J, kind="stable")
    Ja, Jb, Jc = J[a], J[b], J[c]
    if Jc - Ja <= EQUAL_RTOL * Jc:
        raise InputError(
            f"inv_inertia: a spherical body ({J.tolist()}) has no polhodes: L_b is constant"
        )
    if not Ja <= e <= Jc:
        raise InputError(
            f"energy_factor: expected a value in [min J, max J] = [{Ja:g}, {Jc:g}], got {e!r}"
        )
    s = np.linspace(0.0, 2.0 * np.pi, n)
    out = np.zeros((2, n, 3))
    if e <= Jb:
        axis, first, second = a, b, c
        r1 = np.sqrt((e - Ja) / (Jb - Ja)) if Jb > Ja else 0.0
        r2 = np.sqrt((e - Ja) / (Jc - Ja))
    else:
        axis, first, second = c, a, b
        r1 = np.sqrt((Jc - e) / (Jc - Ja))
        r2 = np.sqrt((Jc - e) / (Jc - Jb))
    u1 = np.minimum(r1, 1.0) * np.cos(s)
    u2 = np.minimum(r2, 1.0) * np.sin(s)
    u0 = np.sqrt(np.maximum(1.0 - u1 * u1 - u2 * u2, 0.0))
    for k, sign in enumerate((1.0, -1.0)):
        out[k, :, axis] = sign * u0
        out[k, :, first] = u1
        out[k, :, second] = u2
    return out

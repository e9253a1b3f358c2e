"""Rigid-body kernels: inertia maps, the gyroscopic acceleration and the integrator family.

Per-body kernels work on tuples of float64 (state in registers) and are written once each,
following ``shared/reference/rigid-body-integrators.md``. The carried state of every method
is ``(q, L_b)``: the body-to-world unit quaternion and the body-frame angular momentum;
``omega = R J L_b`` is derived. Every method kernel maps ``(q0, L_b0)`` to ``(q1, L_b1)``
such that ``(q1, R1 J L_b1)`` is the state the method's own algorithm produces, so a
velocity-form method and a momentum-form method share one loop.

Inverse moments ``J`` may be zero (an axis held by a constraint). ``I`` is then the
pseudo-inverse (``I_i = 0`` where ``J_i = 0``) and every step starts by clearing the
momentum on such axes (:func:`constrain`), which is what a step from ``(q, omega)``
does; so ``step`` repeated and ``simulate`` agree in that case too.

Torque comes as a model (:mod:`tumble._kernels.torques`: ``kinds``, parameters ``P``,
custom ``fn``), evaluated in the body frame where each method's algorithm needs it
(:func:`advance`): once at the start of the step for the first-order methods, which hold
``tau_b = R0ᵀ tau`` over the step; as exact half kicks before and after the free flow for
the symmetric methods (Strang); at the four stages for ``rk4``.

Loops (``simulate_*``, ``step_*``, ``record_*``) are compiled per array dtype, but they widen
the inputs to float64 on entry, so the method kernels are compiled once per torque-model
structure (the type of ``kinds``).

Without torque the simulate loop carries what the symmetric methods keep exactly
(:func:`_simulate_body`): their ``L_b`` after each step comes from the run's initial world
``L`` (an identity in exact arithmetic), and ``exact_split`` is evaluated from the initial
state (:func:`_exact_flow_block`), so round-off does not accumulate in the invariants.
"""

from __future__ import annotations

import math

import numpy as np
from numba import literally, prange

from tumble._kernels import njit, parallel_njit
from tumble._kernels.exact import evaluate_scaled, free_flow, prepare_scaled
from tumble._kernels.kinematics import magnus_omega
from tumble._kernels.rotation import (
    cayley_rotate,
    cross,
    dot,
    qconj,
    qmul,
    qnormalize,
    qrotate,
    rotvec_to_q,
    sincos,
)
from tumble._kernels.torques import CONSTANT_WORLD, body_torque, kick, kinds_of, no_torque

#: Method ids of the compiled methods, in ``tumble.rigid.METHODS`` order ("exact" has no
#: step and no id here: ``simulate`` runs it as ``EXACT_SPLIT`` without torque).
EXPLICIT = 0
JOLT = 1
NAIVE_ROTATION = 2
JOLT_ROTATION = 3
MODIFIED_JOLT = 4
MODIFIED_JOLT_CAYLEY = 5
MOMENTUM_FIRST = 6
IMPLICIT = 7
MAGNUS = 8
SPLITTING = 9
MIDPOINT = 10
RK4 = 11
NONE = 12
MOMENTUM_FIRST_SYMMETRIC = 13
SYMMETRIC_TOP_SPLIT = 14
EXACT_SPLIT = 15

#: Ids of the time-symmetric methods: torque-free flows that :func:`_strang` wraps in half
#: kicks, and that compose (:func:`advance` with sub-step coefficients).
STRANG = (SPLITTING, MIDPOINT, MOMENTUM_FIRST_SYMMETRIC, SYMMETRIC_TOP_SPLIT, EXACT_SPLIT)

#: Relative threshold below which ``k = omega × L`` counts as zero: ``|k|² <= eps² |w|²
#: |L|²``. ``J_k`` is a Rayleigh quotient, bounded as ``k -> 0``, and noise in it only moves
#: ``Omega`` along ``L``, so a tiny value is safe; it only has to catch the exact 0/0.
K_REL_EPS = 1e-12

#: Newton tolerance of the implicit midpoint equation, relative to ``|L|``: a few float64
#: ulps, the level at which the iteration stops improving.
MIDPOINT_RTOL = 4e-16
MIDPOINT_MAX_ITER = 50

#: Fixed-point tolerance of the adjoint momentum-first half step, relative to ``|L|``: the
#: iteration contracts by about ``h |L| (J_max - J_min)`` per pass, and below ~1e-15 it only
#: chases round-off. The cap bounds the cost when ``h`` is too large to contract (the step
#: still conserves ``|L|`` and ``L_w`` exactly then; only its time symmetry is lost).
SYMMETRIC_RTOL = 1e-15
SYMMETRIC_MAX_ITER = 50


# --------------------------------------------------------------------------------------
# small tuple helpers


@njit
def _scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@njit
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit
def _axpy(a, s, b):
    """``a + s b``."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@njit
def mul(a, b):
    """Elementwise product: a diagonal matrix times a vector."""
    return (a[0] * b[0], a[1] * b[1], a[2] * b[2])


@njit
def pseudo_inverse(J):
    """Principal moments ``I_i = 1/J_i``, with 0 where ``J_i = 0`` (a constrained axis)."""
    return (
        1.0 / J[0] if J[0] > 0.0 else 0.0,
        1.0 / J[1] if J[1] > 0.0 else 0.0,
        1.0 / J[2] if J[2] > 0.0 else 0.0,
    )


@njit
def constrain(L, J):
    """Clear the body momentum on axes with ``J_i = 0``: the constraint absorbs it."""
    return (
        L[0] if J[0] > 0.0 else 0.0,
        L[1] if J[1] > 0.0 else 0.0,
        L[2] if J[2] > 0.0 else 0.0,
    )


@njit
def to_body(q, v):
    return qrotate(qconj(q), v)


@njit
def _turn(v, phi):
    """``Q(phi) v``: rotate ``v`` by the rotation vector ``phi``."""
    return qrotate(rotvec_to_q(phi), v)


@njit
def _advance_attitude(q, w_body, h):
    """``R1 = Q(omega h) R0 = R0 Q(omega_b h)``, renormalised."""
    return qnormalize(qmul(q, rotvec_to_q(_scale(w_body, h))))


@njit
def energy_factor(L, J):
    """``J_L = L·JL / |L|²`` (0 for ``L = 0``, where any value gives the same step)."""
    LL = dot(L, L)
    if LL > 0.0:
        return dot(L, mul(J, L)) / LL
    return 0.0


@njit
def j_prime(w, L, J):
    """The article's ``J' = J_k = k·Jk/|k|²`` with ``k = omega × L``; ``J_L`` when ``k ≈ 0``.

    ``k = 0`` means ``L`` is an eigenvector of ``J`` (steady spin, spherical top, ``L`` in
    the degenerate plane of a symmetric top): then ``omega ∥ L`` and every ``J'`` gives the
    same step, and ``J_L`` makes ``Omega = 0``. The threshold is relative (scale invariant).
    """
    k = cross(w, L)
    kk = dot(k, k)
    if kk > 0.0 and kk > K_REL_EPS * K_REL_EPS * dot(w, w) * dot(L, L):
        return dot(k, mul(J, k)) / kk
    return energy_factor(L, J)


# --------------------------------------------------------------------------------------
# the methods: first-order steps (q0, L_b0, J, I, tau_b, h) -> (q1, L_b1), and the
# free flows of the symmetric ones (q0, L_b0, J, I, h) -> (q1, L_b1)


@njit
def step_explicit(q, L, J, I, tb, h):
    """Forward Euler on omega (engine form), then ``R1 = Q(omega1 h) R0``.

    ``omega1 = omega0 + h J_w (tau - omega0 × L0)``; in the body frame at ``R0``:
    ``L1 = L0 + h (tau_b - k)``. ``R1`` turns about ``omega1``, which leaves ``omega1``'s
    body components unchanged, so the new body momentum is ``L1``.
    """
    k = cross(mul(J, L), L)
    L1 = (L[0] + h * (tb[0] - k[0]), L[1] + h * (tb[1] - k[1]), L[2] + h * (tb[2] - k[2]))
    return _advance_attitude(q, mul(J, L1), h), L1


@njit
def step_none(q, L, J, I, tb, h):
    """No gyroscopic term: ``omega1 = omega0 + h J_w tau``, ``R1 = Q(omega1 h) R0``."""
    L1 = _axpy(L, h, tb)
    return _advance_attitude(q, mul(J, L1), h), L1


@njit
def step_jolt(q, L, J, I, tb, h):
    """Jolt's code: body-frame Euler step of ``L`` rescaled to ``|L0|``, then torque, rotate.

    ``L' = L0 - h (omega_b × L0)``, ``L' <- L' |L0|/|L'|`` (0 if ``L' = 0``),
    ``omega <- R0 J L' + h J_w tau`` (Jolt applies the torque after the gyroscopic update),
    ``R1 = Q(omega h) R0``.
    """
    Lp = _axpy(L, -h, cross(mul(J, L), L))
    n2 = dot(Lp, Lp)
    Lp = _scale(Lp, math.sqrt(dot(L, L) / n2)) if n2 > 0.0 else (0.0, 0.0, 0.0)
    L1 = _axpy(Lp, h, tb)
    return _advance_attitude(q, mul(J, L1), h), L1


@njit
def step_naive_rotation(q, L, J, I, tb, h):
    """The blog's naive rotation: ``L1 = Q(-omega0 h) L0`` (body), torque,
    ``R1 = Q(omega1 h) R0``."""
    Lr = _turn(L, _scale(mul(J, L), -h))
    L1 = _axpy(Lr, h, tb)
    return _advance_attitude(q, mul(J, L1), h), L1


@njit
def step_jolt_rotation(q, L, J, I, tb, h):
    """Jolt in rotation form: ``L1 = Q(-Omega h) L0`` with ``Omega = (J - J_L) L0``."""
    jl = energy_factor(L, J)
    w = mul(J, L)
    Om = (w[0] - jl * L[0], w[1] - jl * L[1], w[2] - jl * L[2])
    Lr = _turn(L, _scale(Om, -h))
    L1 = _axpy(Lr, h, tb)
    return _advance_attitude(q, mul(J, L1), h), L1


@njit(inline="always")
def _modified_omega(q, L, J, tb, h):
    """Shared start of modified Jolt and momentum-first: ``L'``, ``J'`` and ``Omega`` (body)."""
    Lp = _axpy(L, h, tb)
    w = mul(J, Lp)
    jp = j_prime(w, Lp, J)
    Om = (w[0] - jp * Lp[0], w[1] - jp * Lp[1], w[2] - jp * Lp[2])
    return Lp, jp, Om


@njit(inline="always")
def step_modified_jolt(q, L, J, I, tb, h):
    """Modified Jolt (reference 2.10, body form): ``L1 = Q(-Omega h) L'``,
    ``R1 = Q(omega1 h) R0``."""
    Lp, _, Om = _modified_omega(q, L, J, tb, h)
    L1 = _turn(Lp, _scale(Om, -h))
    return _advance_attitude(q, mul(J, L1), h), L1


@njit(inline="always")
def step_modified_jolt_cayley(q, L, J, I, tb, h):
    """Modified Jolt with the trig-free Cayley rotation of ``L`` (angle ``2 atan(|Omega|h/2)``)."""
    Lp, _, Om = _modified_omega(q, L, J, tb, h)
    L1 = cayley_rotate(Lp, _scale(Om, -h))
    return _advance_attitude(q, mul(J, L1), h), L1


@njit(inline="always")
def step_momentum_first(q, L, J, I, tb, h):
    """Momentum-first (reference 2.10): ``R1 = Q(J' L' h) Q(Omega h) R0``.

    In the body frame ``Q(a_w) R0 = R0 Q(a_b)``, so ``q1 = q0 ⊗ exp(J' L'_b h/2) ⊗
    exp(Omega_b h/2)``: first ``Omega``, then the precession about ``L'``. ``L_w`` is
    untouched, so ``L_b1 = R1ᵀ L'_w = Q(-Omega_b h) L'_b``.
    """
    Lp, jp, Om = _modified_omega(q, L, J, tb, h)
    r = rotvec_to_q(_scale(Om, h))
    q1 = qmul(qmul(q, rotvec_to_q(_scale(Lp, jp * h))), r)
    # Q(-Omega h) is the conjugate of r bit for bit: one exponential serves both updates.
    L1 = qrotate(qconj(r), Lp)
    return qnormalize(q1), L1


@njit
def _free_omega(L, J):
    """``J'`` and ``Omega = J L - J' L`` of the torque-free momentum-first step at ``L``."""
    w = mul(J, L)
    jp = j_prime(w, L, J)
    return jp, (w[0] - jp * L[0], w[1] - jp * L[1], w[2] - jp * L[2])


@njit
def adjoint_momentum_first(q, L0, J, h):
    """The adjoint ``Φ*(h) = Φ(-h)⁻¹`` of the torque-free momentum-first step ``Φ``.

    ``Φ(-h)`` maps ``(q1, L1)`` to ``(q0, L0)``, so ``L1 = Q(-Omega(L1) h) L0`` (solved by
    fixed-point iteration from the explicit prediction) and
    ``q1 = q0 ⊗ exp(Omega h/2) ⊗ exp(J' L1 h/2)``: first the precession about the new
    ``L``, then ``Omega``, in world terms. ``Omega`` and ``J'`` come from the last iterate
    ``x``, and ``L1 = Q(-Omega(x) h) L0`` is formed from the same ``Omega`` (and the
    precession turns about ``L1`` itself), so ``R1 L1 = R0 L0`` holds exactly whether or not
    the iteration has converged. Cost: ``2 + n`` exponentials for ``n`` passes.
    """
    jp, Om = _free_omega(L0, J)
    r = rotvec_to_q(_scale(Om, h))
    L1 = qrotate(qconj(r), L0)
    tol2 = SYMMETRIC_RTOL * SYMMETRIC_RTOL * dot(L0, L0)
    for _ in range(SYMMETRIC_MAX_ITER):
        x = L1
        jp, Om = _free_omega(x, J)
        r = rotvec_to_q(_scale(Om, h))
        L1 = qrotate(qconj(r), L0)
        d = (L1[0] - x[0], L1[1] - x[1], L1[2] - x[2])
        if dot(d, d) <= tol2:
            break
    q1 = qmul(qmul(q, r), rotvec_to_q(_scale(L1, jp * h)))
    return qnormalize(q1), L1


@njit
def free_momentum_first_symmetric(q, L, J, I, h):
    """Second-order time-symmetric momentum-first: ``Φ(h/2) ∘ Φ*(h/2)`` (torque-free).

    ``Φ`` is the torque-free momentum-first step and ``Φ*`` its adjoint
    (:func:`adjoint_momentum_first`); the composition of a method with its adjoint over
    half steps is symmetric, hence of even order (2). Both halves are exact flows of a
    symmetric top, so the step is too.
    """
    hh = 0.5 * h
    q, L = adjoint_momentum_first(q, L, J, hh)
    return step_momentum_first(q, L, J, I, (0.0, 0.0, 0.0), hh)


@njit
def catto_residual(w, w1, I, h):
    """Implicit Euler residual in the body frame: ``f(w) = I (w - w1) + h w × (I w)``."""
    Iw = mul(I, w)
    c = cross(w, Iw)
    return (
        I[0] * (w[0] - w1[0]) + h * c[0],
        I[1] * (w[1] - w1[1]) + h * c[1],
        I[2] * (w[2] - w1[2]) + h * c[2],
    )


@njit
def catto_jacobian(w, I, h):
    """``df/dw = I + h ([w]× I - [I w]×)`` as a row-major 9-tuple."""
    a = mul(I, w)
    # [w]× I has columns w × (I_j e_j); [a]× is the cross-product matrix of a = I w.
    return (
        I[0],
        h * (-w[2] * I[1] + a[2]),
        h * (w[1] * I[2] - a[1]),
        h * (w[2] * I[0] - a[2]),
        I[1],
        h * (-w[0] * I[2] + a[0]),
        h * (-w[1] * I[0] + a[1]),
        h * (w[0] * I[1] - a[0]),
        I[2],
    )


@njit
def _solve3(m, b):
    """Solve the 3x3 system ``m x = b`` (row-major ``m``) by the adjugate (Cramer)."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m
    c00 = m11 * m22 - m12 * m21
    c01 = m12 * m20 - m10 * m22
    c02 = m10 * m21 - m11 * m20
    det = m00 * c00 + m01 * c01 + m02 * c02
    inv = 1.0 / det
    x0 = (c00 * b[0] + (m02 * m21 - m01 * m22) * b[1] + (m01 * m12 - m02 * m11) * b[2]) * inv
    x1 = (c01 * b[0] + (m00 * m22 - m02 * m20) * b[1] + (m02 * m10 - m00 * m12) * b[2]) * inv
    x2 = (c02 * b[0] + (m01 * m20 - m00 * m21) * b[1] + (m00 * m11 - m01 * m10) * b[2]) * inv
    return (x0, x1, x2)


@njit
def step_implicit(q, L, J, I, tb, h):
    """Catto's implicit Euler in the body frame, one Newton step (Bullet ``_Body``).

    ``w2 = w1 - Jac(w1)⁻¹ f(w1)`` with ``f(w1) = h w1 × (I w1)``; then the torque impulse
    ``h J_w tau`` and ``R1 = Q(omega1 h) R0``. Needs ``I = J⁻¹`` (no zero inverse moment).
    """
    w1 = mul(J, L)
    f = catto_residual(w1, w1, I, h)
    dw = _solve3(catto_jacobian(w1, I, h), f)
    w2 = (w1[0] - dw[0], w1[1] - dw[1], w1[2] - dw[2])
    L1 = _axpy(mul(I, w2), h, tb)
    return _advance_attitude(q, mul(J, L1), h), L1


@njit
def step_magnus(q, L, J, I, tb, h):
    """Explicit angular acceleration, orientation by the order-2 Magnus expansion (world).

    ``alpha = J_w (tau - omega0 × L0)`` held over the step, ``omega1 = omega0 + h alpha``,
    ``R1 = Q(Omega) R0`` with ``Omega = ½(omega0 + omega1) h + (h²/12) omega1 × omega0``.
    ``R1`` does not turn about ``omega1`` here, so ``L_b1 = I R1ᵀ omega1``.
    """
    wb = mul(J, L)
    ab = mul(J, add(tb, cross(L, wb)))
    w = qrotate(q, wb)
    a = qrotate(q, ab)
    Om = magnus_omega(w, a, h, 2)
    q1 = qnormalize(qmul(rotvec_to_q(Om), q))
    w1 = _axpy(w, h, a)
    return q1, mul(I, to_body(q1, w1))


@njit(inline="always")
def _axis_flow(q, L, j, axis, t):
    """Exact flow of ``½ j L_i²`` (``i = axis``) for time ``t``: ``L <- Q(-j L_i t e_i) L``,
    ``R <- R Q(j L_i t e_i)``. One :func:`~tumble._kernels.rotation.sincos`, of the half
    angle: ``cos a = (ch - sh)(ch + sh)`` and ``sin a = 2 sh ch`` err by an ulp or two of 1,
    like the quaternion's own values (libm's ``sin`` and ``cos`` of both angles cost about
    a third of a splitting step). ``q ⊗ (ch, sh e_i)`` is written out: 8 products, where
    :func:`~tumble._kernels.rotation.qmul` would multiply the zeros too (16)."""
    a = j * L[axis] * t
    sh, ch = sincos(0.5 * a)
    c = (ch - sh) * (ch + sh)
    s = 2.0 * sh * ch
    w, x, y, z = q
    if axis == 0:
        L1 = (L[0], c * L[1] + s * L[2], -s * L[1] + c * L[2])
        q1 = (w * ch - x * sh, w * sh + x * ch, y * ch + z * sh, z * ch - y * sh)
    elif axis == 1:
        L1 = (c * L[0] - s * L[2], L[1], s * L[0] + c * L[2])
        q1 = (w * ch - y * sh, x * ch - z * sh, w * sh + y * ch, z * ch + x * sh)
    else:
        L1 = (c * L[0] + s * L[1], -s * L[0] + c * L[1], L[2])
        q1 = (w * ch - z * sh, x * ch + y * sh, y * ch - x * sh, w * sh + z * ch)
    return q1, L1


@njit
def free_splitting(q, L, J, I, h):
    """Symmetric kinetic-energy splitting ``Φ1(h/2) Φ2(h/2) Φ3(h) Φ2(h/2) Φ1(h/2)``, ``Φi``
    the exact flow of ``½ J_i L_i²``: :func:`_split_stage`."""
    q, L = _split_stage(SPLITTING, q, L, J, _NO_PAIRING, h)
    return qnormalize(q), L


#: The pairing argument of the flows of ``splitting``, which has none.
_NO_PAIRING = (0, 0, 0)


@njit(inline="always")
def _outer_flow(method, q, L, J, pairing, t):
    """The outer flow of the splittings ``O(h/2) ∘ I(h) ∘ O(h/2)`` for time ``t``: ``Φ1``
    (``splitting``) or the remainder ``R`` of the pairing ``(a, b, c)``
    (``symmetric_top_split``). Each keeps its own ``L_i``, so ``O(s) ∘ O(t) = O(s + t)``
    exactly: consecutive outer flows merge (:func:`_split_stages`)."""
    if method == SPLITTING:
        return _axis_flow(q, L, J[0], 0, t)
    a, b = pairing[0], pairing[1]
    return _axis_flow(q, L, J[b] - J[a], b, t)


@njit(inline="always")
def _inner_flow(method, q, L, J, pairing, h):
    """The inner flow of the splittings for time ``h``: ``Φ2(h/2) Φ3(h) Φ2(h/2)``
    (``splitting``) or the symmetric top ``S(h)`` of the pairing ``(a, b, c)``
    (``symmetric_top_split``, :func:`symmetric_top_split`)."""
    if method == SPLITTING:
        q, L = _axis_flow(q, L, J[1], 1, 0.5 * h)
        q, L = _axis_flow(q, L, J[2], 2, h)
        return _axis_flow(q, L, J[1], 1, 0.5 * h)
    a, c = pairing[0], pairing[2]
    q, L = _axis_flow(q, L, J[c] - J[a], c, h)
    return qmul(q, rotvec_to_q(_scale(L, J[a] * h))), L


@njit
def symmetric_top_pairing(J):
    """The axes ``(a, b, c)`` of :func:`free_symmetric_top_split`: ``a`` the median inverse
    moment, ``b`` (the remainder) the one of the smallest and largest farther from it, ``c``
    the closer one (``b`` the largest on a tie).

    The leading error of ``R(h/2) S(h) R(h/2)`` is a sum of double brackets of ``S`` and
    ``R``, each carrying ``(J_b - J_a)(J_c - J_a)``: smallest in size with ``J_a`` the median
    (the two gaps then have opposite signs), and zero for a symmetric top. Of the remaining
    two terms, the one of the inner flow ``S`` weighs twice that of the outer ``R`` (1/12
    against 1/24), so the larger gap goes outside, on ``b``. A measurement over all six
    pairings on six bodies and three momenta agrees (``benchmarks/bench_rigid.py
    --pairing-study``, ``docs/integrators.md``).
    """
    lo = 0
    hi = 0
    for i in range(1, 3):
        if J[i] < J[lo]:
            lo = i
        if J[i] >= J[hi]:
            hi = i
    # lo is the first smallest, hi the last largest: distinct even when all are equal.
    mid = 3 - lo - hi
    if J[hi] - J[mid] >= J[mid] - J[lo]:
        return mid, hi, lo
    return mid, lo, hi


@njit
def symmetric_top_split(q, L, J, a, b, c, h):
    """``R(h/2) ∘ S(h) ∘ R(h/2)`` with the pairing ``(a, b, c)`` (Fassò 2003).

    ``T = S + R`` with the symmetric top ``S = ½ J_a (L_a² + L_b²) + ½ J_c L_c² = ½ J_a |L|²
    + ½ (J_c - J_a) L_c²`` and the remainder ``R = ½ (J_b - J_a) L_b²``. The flow of ``R``
    and of ``½ (J_c - J_a) L_c²`` turn about a body axis (:func:`_axis_flow`); that of ``½
    J_a |L|²`` keeps ``L_b`` and turns the attitude about ``L``: ``R <- R Q(J_a L_b t)``.
    The two parts of ``S`` Poisson-commute (``|L|²`` is a Casimir), so ``S``'s flow is their
    product in either order: the exact motion of that symmetric top.
    """
    q, L = _split_stage(SYMMETRIC_TOP_SPLIT, q, L, J, (a, b, c), h)
    return qnormalize(q), L


@njit
def free_symmetric_top_split(q, L, J, I, h):
    """Symmetric top plus remainder (:func:`symmetric_top_split`) with the measured pairing
    :func:`symmetric_top_pairing`."""
    a, b, c = symmetric_top_pairing(J)
    return symmetric_top_split(q, L, J, a, b, c, h)


@njit
def midpoint_momentum(L, J, h):
    """Solve ``Lbar = L + ½h Lbar × (J Lbar)`` by Newton; return ``Lbar``.

    ``F(x) = x - L - ½h x × Jx``, ``dF = 1 - ½h ([x]× J - [Jx]×)``; starts at ``x = L``
    and stops when the update is at round-off level (or after ``MIDPOINT_MAX_ITER``).
    """
    x = L
    hh = 0.5 * h
    tol2 = MIDPOINT_RTOL * MIDPOINT_RTOL * dot(L, L)
    for _ in range(MIDPOINT_MAX_ITER):
        Jx = mul(J, x)
        c = cross(x, Jx)
        F = (x[0] - L[0] - hh * c[0], x[1] - L[1] - hh * c[1], x[2] - L[2] - hh * c[2])
        # d(x × Jx)/dx = [x]× J - [Jx]×, the same structure as Catto's Jacobian.
        G = catto_jacobian(x, J, 1.0)
        m = (
            1.0 - hh * (G[0] - J[0]), -hh * G[1], -hh * G[2],
            -hh * G[3], 1.0 - hh * (G[4] - J[1]), -hh * G[5],
            -hh * G[6], -hh * G[7], 1.0 - hh * (G[8] - J[2]),
        )  # fmt: skip
        dx = _solve3(m, F)
        x = (x[0] - dx[0], x[1] - dx[1], x[2] - dx[2])
        if dot(dx, dx) <= tol2:
            break
    return x


@njit
def free_midpoint(q, L, J, I, h):
    """Implicit midpoint on Euler's equations with the Cayley attitude (Lie-Poisson midpoint).

    ``L1 = L0 + h Lbar × (J Lbar)``, ``Lbar = ½(L0 + L1)``; ``R1 = R0 cay(h J Lbar)`` whose
    quaternion is ``(1, h omega_bar/2)`` normalised.
    """
    hh = 0.5 * h
    Lbar = midpoint_momentum(L, J, h)
    L1 = (2.0 * Lbar[0] - L[0], 2.0 * Lbar[1] - L[1], 2.0 * Lbar[2] - L[2])
    wb = mul(J, Lbar)
    q1 = qnormalize(qmul(q, qnormalize((1.0, hh * wb[0], hh * wb[1], hh * wb[2]))))
    return q1, L1


@njit
def _rk4_rhs(q, L, J, I, model, b, t):
    """``dL_b/dt = tau_b + L_b × (J L_b)``, ``dq/dt = ½ q ⊗ (0, J L_b)`` at time ``t``."""
    kinds, P, fn = model
    qn = qnormalize(q)
    w = mul(J, L)
    dL = add(body_torque(kinds, P, fn, b, t, qn, L, J, I), cross(L, w))
    dq = qmul(q, (0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]))
    return dq, dL


@njit
def _q_axpy(q, s, d):
    return (q[0] + s * d[0], q[1] + s * d[1], q[2] + s * d[2], q[3] + s * d[3])


@njit
def step_rk4(q, L, J, I, model, b, t, h):
    """Classical RK4 on ``(L_b, q)`` (body Euler equations with the model's torque at the
    stage times ``t, t + h/2, t + h/2, t + h``), then ``q`` renormalised."""
    hh = 0.5 * h
    dq1, dL1 = _rk4_rhs(q, L, J, I, model, b, t)
    dq2, dL2 = _rk4_rhs(_q_axpy(q, hh, dq1), _axpy(L, hh, dL1), J, I, model, b, t + hh)
    dq3, dL3 = _rk4_rhs(_q_axpy(q, hh, dq2), _axpy(L, hh, dL2), J, I, model, b, t + hh)
    dq4, dL4 = _rk4_rhs(_q_axpy(q, h, dq3), _axpy(L, h, dL3), J, I, model, b, t + h)
    s = h / 6.0
    q1 = (
        q[0] + s * (dq1[0] + 2.0 * (dq2[0] + dq3[0]) + dq4[0]),
        q[1] + s * (dq1[1] + 2.0 * (dq2[1] + dq3[1]) + dq4[1]),
        q[2] + s * (dq1[2] + 2.0 * (dq2[2] + dq3[2]) + dq4[2]),
        q[3] + s * (dq1[3] + 2.0 * (dq2[3] + dq3[3]) + dq4[3]),
    )
    L1 = (
        L[0] + s * (dL1[0] + 2.0 * (dL2[0] + dL3[0]) + dL4[0]),
        L[1] + s * (dL1[1] + 2.0 * (dL2[1] + dL3[1]) + dL4[1]),
        L[2] + s * (dL1[2] + 2.0 * (dL2[2] + dL3[2]) + dL4[2]),
    )
    return qnormalize(q1), L1


@njit(inline="always")
def _free(method, q, L, J, I, h):
    """The torque-free flow ``F(h)`` of the symmetric method ``method`` (:data:`STRANG`)."""
    if method == SPLITTING:
        return free_splitting(q, L, J, I, h)
    if method == MIDPOINT:
        return free_midpoint(q, L, J, I, h)
    if method == SYMMETRIC_TOP_SPLIT:
        return free_symmetric_top_split(q, L, J, I, h)
    if method == EXACT_SPLIT:
        # The exact torque-free flow (tumble._kernels.exact): exact_split is exact
        # without torque and second order with it.
        return free_flow(q, L, J, h)
    return free_momentum_first_symmetric(q, L, J, I, h)


@njit(inline="always")
def _strang(method, q, L, J, I, model, b, t, h):
    """``K(t + h, h/2) ∘ F(h) ∘ K(t, h/2)``: the torque's half kicks around the free flow."""
    kinds, P, fn = model
    hh = 0.5 * h
    L = kick(kinds, P, fn, b, t, q, L, J, I, hh)
    q, L = _free(method, q, L, J, I, h)
    return q, kick(kinds, P, fn, b, t + h, q, L, J, I, hh)


@njit
def _composed(method, gamma, q, L, J, I, model, b, t, h):
    """The composition ``Φ(γ_s h) ∘ ... ∘ Φ(γ_1 h)`` of the symmetric method ``method``
    (:mod:`tumble.compositions`): stage ``i`` starts at ``t + (γ_1 + ... + γ_{i-1}) h``, so
    time-dependent torques see each sub-step's own time; each stage clears locked momentum
    as a step of the base does. With a model without a custom term (or none) the pieces
    that meet between stages and merge exactly are merged: the kicks
    (:func:`_composed_kicks`), and the splittings' outer flows where no kick separates them
    (:func:`_composed_splitting`); not with a locked axis (the stage-wise constraint does
    not commute with a merge)."""
    if J[0] > 0.0 and J[1] > 0.0 and J[2] > 0.0 and model[2] is None:
        if method in (SPLITTING, SYMMETRIC_TOP_SPLIT):
            return _composed_splitting(method, gamma, q, L, J, I, model, b, t, h)
        return _composed_kicks(method, gamma, q, L, J, I, model, b, t, h)
    c = 0.0
    for g in gamma:
        q, L = _strang(method, q, constrain(L, J), J, I, model, b, t + c * h, g * h)
        c += g
    return q, L


@njit
def _composed_kicks(method, gamma, q, L, J, I, model, b, t, h):
    """:func:`_composed` with the two kicks that meet between stages merged into one,
    ``K(t_i, (γ_i + γ_{i+1}) h/2)`` at the stage boundary ``t_i``: ``s + 1`` torque
    evaluations per step instead of ``2 s``. Exact for a model without a custom term: its
    kick is the exact flow of ``dL_b/dt = R^T τ(t, q) - D J L_b`` at fixed ``t`` and ``q``
    (:func:`~tumble._kernels.torques.kick`), a one-parameter group in the kick's length
    (a custom term's implicit-midpoint kick is not)."""
    kinds, P, fn = model
    n = gamma.shape[0]
    L = kick(kinds, P, fn, b, t, q, L, J, I, 0.5 * gamma[0] * h)
    c = 0.0
    for i in range(n):
        q, L = _free(method, q, L, J, I, gamma[i] * h)
        c += gamma[i]
        after = gamma[i + 1] if i + 1 < n else 0.0
        L = kick(kinds, P, fn, b, t + c * h, q, L, J, I, 0.5 * (gamma[i] + after) * h)
    return q, L


@njit
def _composed_splitting(method, gamma, q, L, J, I, model, b, t, h):
    """:func:`_composed_kicks` for ``splitting`` and ``symmetric_top_split``: each stage
    ``O(γ_i h/2) ∘ I(γ_i h) ∘ O(γ_i h/2)`` (:func:`_split_stage`) between the merged kicks,
    the pairing found once, one normalisation at the end; without torque
    :func:`_split_stages`. Compiled per model structure, so the flows stay in the two
    functions compiled once (inlining them here multiplied the compile time of each new
    structure by five)."""
    kinds, P, fn = model
    if no_torque(kinds, fn):
        return _split_stages(method, gamma, q, L, J, h)
    pairing = symmetric_top_pairing(J) if method == SYMMETRIC_TOP_SPLIT else _NO_PAIRING
    c = 0.0
    before = 0.0
    for g in gamma:
        L = kick(kinds, P, fn, b, t + c * h, q, L, J, I, 0.5 * (before + g) * h)
        q, L = _split_stage(method, q, L, J, pairing, g * h)
        c += g
        before = g
    L = kick(kinds, P, fn, b, t + c * h, q, L, J, I, 0.5 * before * h)
    return qnormalize(q), L


@njit
def _split_stage(method, q, L, J, pairing, h):
    """``O(h/2) ∘ I(h) ∘ O(h/2)`` (:func:`_outer_flow`, :func:`_inner_flow`), not
    normalised: the free flow of ``splitting`` or ``symmetric_top_split``."""
    hh = 0.5 * h
    q, L = _outer_flow(method, q, L, J, pairing, hh)
    q, L = _inner_flow(method, q, L, J, pairing, h)
    return _outer_flow(method, q, L, J, pairing, hh)


@njit
def _split_stages(method, gamma, q, L, J, h):
    """Torque-free composition of ``splitting`` or ``symmetric_top_split`` with the two
    outer flows that meet between stages merged into one, ``O((γ_i + γ_{i+1}) h/2)`` (an
    identity: ``O`` keeps the momentum component it turns about): ``s - 1`` fewer outer
    flows in ``s`` stages (``splitting:suzuki4``: 21 axis flows instead of 25), and one
    normalisation at the end."""
    pairing = symmetric_top_pairing(J) if method == SYMMETRIC_TOP_SPLIT else _NO_PAIRING
    n = gamma.shape[0]
    q, L = _outer_flow(method, q, L, J, pairing, 0.5 * gamma[0] * h)
    for i in range(n):
        q, L = _inner_flow(method, q, L, J, pairing, gamma[i] * h)
        after = gamma[i + 1] if i + 1 < n else 0.0
        q, L = _outer_flow(method, q, L, J, pairing, 0.5 * (gamma[i] + after) * h)
    return qnormalize(q), L


@njit(inline="always")
def advance(method, gamma, q, L, J, I, model, b, t, h):
    """One step of method ``method`` (an id above) of body ``b`` from ``(q, L_b)`` at time
    ``t``, under the torque ``model = (kinds, P, fn)`` (:mod:`tumble._kernels.torques`).

    First-order methods take the torque at the start of the step in the body frame
    (``R0ᵀ τ(t, q0, ω0)``, :func:`tumble._kernels.torques.body_torque`), held over it;
    the symmetric ones run between two exact half kicks (:func:`_strang`), composed with the
    sub-step coefficients ``gamma`` (float64 array) unless it is empty (:func:`_composed`;
    callers pass ``gamma`` only with a method of :data:`STRANG`); ``rk4`` takes it at its
    stages.
    """
    L = constrain(L, J)
    if method in STRANG:
        if gamma.shape[0] == 0:
            return _strang(method, q, L, J, I, model, b, t, h)
        return _composed(method, gamma, q, L, J, I, model, b, t, h)
    if method == RK4:
        return step_rk4(q, L, J, I, model, b, t, h)
    kinds, P, fn = model
    tb = body_torque(kinds, P, fn, b, t, q, L, J, I)
    if method == MOMENTUM_FIRST:
        return step_momentum_first(q, L, J, I, tb, h)
    if method == MODIFIED_JOLT:
        return step_modified_jolt(q, L, J, I, tb, h)
    if method == MODIFIED_JOLT_CAYLEY:
        return step_modified_jolt_cayley(q, L, J, I, tb, h)
    if method == EXPLICIT:
        return step_explicit(q, L, J, I, tb, h)
    if method == JOLT:
        return step_jolt(q, L, J, I, tb, h)
    if method == NAIVE_ROTATION:
        return step_naive_rotation(q, L, J, I, tb, h)
    if method == JOLT_ROTATION:
        return step_jolt_rotation(q, L, J, I, tb, h)
    if method == IMPLICIT:
        return step_implicit(q, L, J, I, tb, h)
    if method == MAGNUS:
        return step_magnus(q, L, J, I, tb, h)
    if method == NONE:
        return step_none(q, L, J, I, tb, h)
    raise ValueError("tumble._kernels.rigid.advance: unknown method kernel id")


# --------------------------------------------------------------------------------------
# loops over bodies and steps


@njit
def _load4(a, b):
    return (float(a[b, 0]), float(a[b, 1]), float(a[b, 2]), float(a[b, 3]))


@njit
def _load3(a, b):
    return (float(a[b, 0]), float(a[b, 1]), float(a[b, 2]))


@njit
def _record(r, b, q, L, J, q_out, w_out, Lw_out, Lb_out, E_out):
    """Write record ``r`` of body ``b``: ``q``, world ``omega`` and ``L``, ``L_b``, energy.

    Returns 1 if the record is not finite (its ``q``, ``omega`` or energy), else 0.
    """
    w = mul(J, L)
    ww = qrotate(q, w)
    Lw = qrotate(q, L)
    for i in range(4):
        q_out[r, b, i] = q[i]
    for i in range(3):
        w_out[r, b, i] = ww[i]
        Lw_out[r, b, i] = Lw[i]
        Lb_out[r, b, i] = L[i]
    e = 0.5 * dot(w, L)
    E_out[r, b] = e
    total = abs(q[0]) + abs(q[1]) + abs(q[2]) + abs(q[3]) + abs(e)
    total += abs(ww[0]) + abs(ww[1]) + abs(ww[2])
    return 0 if total < math.inf else 1


#: Bodies per block in ``simulate_blocks``. A step is one long
#: dependency chain (products, a division, a square root, each feeding the next), so one
#: body at a time leaves the core waiting on latencies. The loop instead runs one step over
#: a block of bodies (state in an 8 KB scratch array, in L1) inside the loop over steps,
#: with the step inlined, so that consecutive bodies' chains overlap. Measured at 10^5
#: bodies, one thread: momentum-first 75-90 -> 55-60 ns per body-step, modified Jolt
#: 100-110 -> 55-65 (results bit for bit the same). Interleaving 2 or 4 bodies in one loop
#: without inlining gained nothing.
BLOCK = 64


@njit
def _simulate_body(method, gamma, b0, q0, L0, J, model, h, steps, every, out):
    """Run and record bodies ``b0 .. b0 + BLOCK - 1`` (fewer at the end) with ``method``.

    ``literally`` makes numba compile this loop once per method id with :func:`advance`
    (inlined, with the hot steps) specialised to it, so the method's if-chain folds away:
    no dispatch runs per step. Each body takes exactly the steps :func:`advance` takes
    alone; only the order of bodies and steps is interchanged. ``out`` is
    ``(q_out, w_out, Lw_out, Lb_out, E_out)``. Returns the number of non-finite records.

    Without torque (a compile-time fact of the model), a symmetric method (:data:`STRANG`,
    composed or not) keeps world ``L`` exactly, so after each step ``L_b = R1ᵀ L_w0`` with
    ``L_w0`` the body's initial world momentum: the same state in exact arithmetic, and the
    same order, but ``|L|`` and world ``L`` stay within a few ulps over any run instead of
    walking by round-off (world ``L`` of the compositions over 10⁵ steps: 1.2e-13 to
    3.7e-13 restarted, below 2e-15 carried). Not with a locked axis (the constraint changes
    world ``L``). ``exact_split`` without torque is the exact flow and is evaluated from the
    initial state instead (:func:`_exact_flow_block`).
    """
    literally(method)
    if method == EXACT_SPLIT and no_torque(model[0], model[2]):
        return _exact_flow_block(b0, q0, L0, J, h, steps, every, out)
    q_out, w_out, Lw_out, Lb_out, E_out = out
    m = min(BLOCK, q0.shape[0] - b0)
    carry = method in STRANG and no_torque(model[0], model[2])
    # Rows: q (4), L_b (3), J (3), I (3), the carried world L (3; NaN: not carried); one
    # column per body.
    S = np.empty((16, m))
    bad = 0
    for i in range(m):
        b = b0 + i
        Jb = _load3(J, b)
        Ib = pseudo_inverse(Jb)
        q = _load4(q0, b)
        Lw = qrotate(q, _load3(L0, b))
        if not (carry and Jb[0] > 0.0 and Jb[1] > 0.0 and Jb[2] > 0.0):
            Lw = (math.nan, math.nan, math.nan)
        for c in range(4):
            S[c, i] = q0[b, c]
        for c in range(3):
            S[4 + c, i] = L0[b, c]
            S[7 + c, i] = Jb[c]
            S[10 + c, i] = Ib[c]
            S[13 + c, i] = Lw[c]
        bad += _record(0, b, q, _load3(L0, b), Jb, q_out, w_out, Lw_out, Lb_out, E_out)
    r = 1
    for s in range(1, steps + 1):
        t = (s - 1) * h
        for i in range(m):
            q, L = advance(
                method,
                gamma,
                (S[0, i], S[1, i], S[2, i], S[3, i]),
                (S[4, i], S[5, i], S[6, i]),
                (S[7, i], S[8, i], S[9, i]),
                (S[10, i], S[11, i], S[12, i]),
                model,
                b0 + i,
                t,
                h,
            )
            if carry and S[13, i] == S[13, i]:
                L = to_body(q, (S[13, i], S[14, i], S[15, i]))
            for c in range(4):
                S[c, i] = q[c]
            for c in range(3):
                S[4 + c, i] = L[c]
        if s % every == 0 or s == steps:
            for i in range(m):
                Jb = (S[7, i], S[8, i], S[9, i])
                L = constrain((S[4, i], S[5, i], S[6, i]), Jb)
                q = (S[0, i], S[1, i], S[2, i], S[3, i])
                bad += _record(r, b0 + i, q, L, Jb, q_out, w_out, Lw_out, Lb_out, E_out)
            r += 1
    return bad


@njit
def _exact_flow_block(b0, q0, L0, J, h, steps, every, out):
    """:func:`_simulate_body` for ``exact_split`` and its compositions without torque.

    Each step of those is the exact free flow over ``h`` (the kicks are zero, and the flows
    of a composition add up to one over ``Σ γ_i h = h``), so the state after ``n`` steps is
    the flow over ``n h`` from the initial state: one :func:`prepare_scaled` per body and one
    evaluation per record, as the ``exact`` method does. Restarting the flow every step
    instead walks the invariants by round-off, and the phase with them (measured on the
    peer body, ``dt = 0.1``, 10⁴ steps: ``exact_split:suzuki4`` 4e-12 rad from ``exact``;
    1e-10 rad 1e-3 from the separatrix).
    """
    m = min(BLOCK, q0.shape[0] - b0)
    bad = 0
    for i in range(m):
        b = b0 + i
        Jb = _load3(J, b)
        q = _load4(q0, b)
        L = _load3(L0, b)
        bad += _record(0, b, q, L, Jb, *out)
        f, sc = prepare_scaled(q, L, Jb)
        r = 1
        # Records at every, 2 every, ... and at the final step.
        for s in range(every, steps + every, every):
            q1, L1 = evaluate_scaled(f, sc, min(s, steps) * h)
            bad += _record(r, b, q1, constrain(L1, Jb), Jb, *out)
            r += 1
    return bad


# The callable-path loop comes as a serial and a ``prange`` twin: the caller picks with
# ``tumble._kernels.dispatch.use_parallel`` so that small batches never wake numba's
# thread pool. The loops that take a torque model run over a range of bodies
# instead, split over threads by ``tumble._kernels.dispatch.run_split``: numba's parallel
# loops cannot take the model's ``kinds`` (a tuple of types, see
# :mod:`tumble._kernels.torques`) into their threads.


@njit
def _run_block(method, gamma, b, q0, L0, J, model, h, steps, every, out):
    """:func:`_simulate_body` for the method with id ``method``, passed as a constant.

    Each call below compiles a block loop specialised to one method, so the method is
    chosen once per block rather than once per step. (Making ``method`` literal at the top
    of the loops instead measured 8-10 % slower for ``momentum_first`` and
    ``modified_jolt``.) Same ids and order as :func:`advance`; an unknown id raises.
    """
    if method == MOMENTUM_FIRST:
        return _simulate_body(MOMENTUM_FIRST, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == MODIFIED_JOLT:
        return _simulate_body(MODIFIED_JOLT, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == MODIFIED_JOLT_CAYLEY:
        return _simulate_body(
            MODIFIED_JOLT_CAYLEY, gamma, b, q0, L0, J, model, h, steps, every, out
        )
    elif method == SPLITTING:
        return _simulate_body(SPLITTING, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == MIDPOINT:
        return _simulate_body(MIDPOINT, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == RK4:
        return _simulate_body(RK4, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == EXPLICIT:
        return _simulate_body(EXPLICIT, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == JOLT:
        return _simulate_body(JOLT, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == NAIVE_ROTATION:
        return _simulate_body(NAIVE_ROTATION, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == JOLT_ROTATION:
        return _simulate_body(JOLT_ROTATION, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == IMPLICIT:
        return _simulate_body(IMPLICIT, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == MAGNUS:
        return _simulate_body(MAGNUS, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == MOMENTUM_FIRST_SYMMETRIC:
        return _simulate_body(
            MOMENTUM_FIRST_SYMMETRIC, gamma, b, q0, L0, J, model, h, steps, every, out
        )
    elif method == EXACT_SPLIT:
        return _simulate_body(EXACT_SPLIT, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == SYMMETRIC_TOP_SPLIT:
        return _simulate_body(SYMMETRIC_TOP_SPLIT, gamma, b, q0, L0, J, model, h, steps, every, out)
    elif method == NONE:
        return _simulate_body(NONE, gamma, b, q0, L0, J, model, h, steps, every, out)
    raise ValueError("tumble._kernels.rigid._run_block: unknown method kernel id")


@njit
def simulate_blocks(
    method, gamma, g0, g1, q0, L0, J, model, h, steps, every, q_out, w_out, Lw_out, Lb_out, E_out
):
    """Run blocks ``g0 .. g1 - 1`` of :data:`BLOCK` bodies for ``steps`` steps each,
    recording every ``every``-th state, the initial state first and the final state last.

    ``q0`` (N, 4) unit, ``L0`` (N, 3) body momentum, ``J`` (N, 3), ``model`` the torque
    ``(kinds, P, fn)`` without a custom ``fn`` (:mod:`tumble._kernels.torques`; time starts
    at 0); outputs (R, N, ...) with ``R = ceil(steps / every) + 1``. The method is chosen
    once per block (:func:`_run_block`), not once per step. Returns the number of
    non-finite records (0 spares the caller a pass over them). Threads run disjoint block
    ranges at once (:func:`tumble._kernels.dispatch.run_split`; the kernel releases the GIL).
    """
    out = (q_out, w_out, Lw_out, Lb_out, E_out)
    bad = 0
    for g in range(g0, g1):
        bad += _run_block(method, gamma, BLOCK * g, q0, L0, J, model, h, steps, every, out)
    return bad


@njit
def simulate_custom_blocks(
    method, gamma, g0, g1, q0, L0, J, model, h, steps, every, q_out, w_out, Lw_out, Lb_out, E_out
):
    """:func:`simulate_blocks` for a model with a ``custom`` function: compiled for this
    method alone (``literally``), since each user function compiles its own loop."""
    literally(method)
    out = (q_out, w_out, Lw_out, Lb_out, E_out)
    bad = 0
    for g in range(g0, g1):
        bad += _simulate_body(method, gamma, BLOCK * g, q0, L0, J, model, h, steps, every, out)
    return bad


@njit
def _step_body(method, gamma, b, q0, L0, J, model, t, h, q_out, L_out):
    Jb = _load3(J, b)
    q, L = advance(
        method, gamma, _load4(q0, b), _load3(L0, b), Jb, pseudo_inverse(Jb), model, b, t, h
    )
    L = constrain(L, Jb)
    for i in range(4):
        q_out[b, i] = q[i]
    for i in range(3):
        L_out[b, i] = L[i]


@njit
def step_bodies(method, gamma, b0, b1, q0, L0, J, model, t, h, q_out, L_out):
    """One step of bodies ``b0 .. b1 - 1`` from time ``t``: ``(q0, L0)`` (N, ...) to
    ``(q_out, L_out)``."""
    for b in range(b0, b1):
        _step_body(method, gamma, b, q0, L0, J, model, t, h, q_out, L_out)


@njit
def step_custom_bodies(method, gamma, b0, b1, q0, L0, J, model, t, h, q_out, L_out):
    """:func:`step_bodies` for a model with a ``custom`` function (one method compiled)."""
    literally(method)
    for b in range(b0, b1):
        _step_body(method, gamma, b, q0, L0, J, model, t, h, q_out, L_out)


@njit
def _record_body(q, L, J, r, b, out):
    Jb = _load3(J, b)
    _record(r, b, _load4(q, b), constrain(_load3(L, b), Jb), Jb, *out)


@njit
def record_serial(q, L, J, r, q_out, w_out, Lw_out, Lb_out, E_out):
    """Write record ``r`` of every body from the body state ``(q, L)`` (N, ...)."""
    for b in range(q.shape[0]):
        _record_body(q, L, J, r, b, (q_out, w_out, Lw_out, Lb_out, E_out))


#: ``kinds`` of a model that is one constant world torque per body (the callable path).
HELD_TORQUE = kinds_of((CONSTANT_WORLD,))


@njit
def _step_record_body(method, gamma, b, q, L, J, tau, t, h, r, w, out):
    """Step body ``b`` in place under the held world torque ``tau[b]``, keep its world
    ``omega`` in ``w`` and write record ``r`` (if ``r >= 0``). Returns ``(tau_bad, bad)``."""
    if not (abs(tau[b, 0]) + abs(tau[b, 1]) + abs(tau[b, 2]) < math.inf):
        return 1, 0
    Jb = _load3(J, b)
    model = (HELD_TORQUE, tau, None)
    q1, L1 = advance(
        method, gamma, _load4(q, b), _load3(L, b), Jb, pseudo_inverse(Jb), model, b, t, h
    )
    L1 = constrain(L1, Jb)
    wb = qrotate(q1, mul(Jb, L1))
    for i in range(4):
        q[b, i] = q1[i]
    for i in range(3):
        L[b, i] = L1[i]
        w[b, i] = wb[i]
    bad = 0
    if r >= 0:
        bad = _record(r, b, q1, L1, Jb, *out)
    elif not (abs(q1[0]) + abs(wb[0]) + abs(wb[1]) + abs(wb[2]) < math.inf):
        bad = 1
    return 0, bad


@njit
def step_record_serial(
    method, gamma, q, L, J, tau, t, h, r, w, q_out, w_out, Lw_out, Lb_out, E_out
):
    """One step of every body in place under held world torques ``tau`` (N, 3), updating the
    world ``omega`` ``w`` and writing record ``r`` when ``r >= 0``: the loop body of a run
    with a Python torque callable. Returns 2 if ``tau`` is not finite, 1 if a new state is
    not, else 0."""
    out = (q_out, w_out, Lw_out, Lb_out, E_out)
    n_tau = 0
    n_bad = 0
    for b in range(q.shape[0]):
        a, c = _step_record_body(method, gamma, b, q, L, J, tau, t, h, r, w, out)
        n_tau += a
        n_bad += c
    return 2 if n_tau else (1 if n_bad else 0)


@parallel_njit
def step_record_parallel(
    method, gamma, q, L, J, tau, t, h, r, w, q_out, w_out, Lw_out, Lb_out, E_out
):
    """:func:`step_record_serial` with the bodies spread over numba's threads."""
    out = (q_out, w_out, Lw_out, Lb_out, E_out)
    n_tau = 0
    n_bad = 0
    for b in prange(q.shape[0]):
        a, c = _step_record_body(method, gamma, b, q, L, J, tau, t, h, r, w, out)
        n_tau += a
        n_bad += c
    return 2 if n_tau else (1 if n_bad else 0)


@njit
def step_one(method, gamma, q, w, J, model, t, h, locked_ok, q_out, w_out):
    """One step of one body given as ``q`` (4,), world ``w`` (3,), ``J`` (3,) float64 arrays.

    The single-body fast path of :func:`tumble.rigid.step`: the same arithmetic as the
    batched path (normalise ``q``, ``L_b = I Rᵀ omega``, :func:`advance`, ``omega1 = R1 J
    L_b1``), bit for bit, without NumPy's per-call overheads. Returns 0 and fills
    ``q_out``, ``w_out``; or 1 for anything the validating path must see (non-finite or
    degenerate input, a locked axis the method refuses, a non-finite result), writing
    nothing meaningful.
    """
    total = abs(t) + abs(h)
    for i in range(3):
        total += abs(w[i]) + J[i]
        if not J[i] >= 0.0 or (J[i] == 0.0 and not locked_ok):
            return 1
    n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    if not (total < math.inf and n2 >= 2.2250738585072014e-308 and n2 < math.inf):
        return 1
    s = math.sqrt(n2)
    qn = (q[0] / s, q[1] / s, q[2] / s, q[3] / s)
    Jt = (J[0], J[1], J[2])
    I = pseudo_inverse(Jt)
    L = mul(I, to_body(qn, (w[0], w[1], w[2])))
    q1, L1 = advance(method, gamma, qn, L, Jt, I, model, 0, t, h)
    w1 = qrotate(q1, mul(Jt, constrain(L1, Jt)))
    if not (
        abs(q1[0]) + abs(q1[1]) + abs(q1[2]) + abs(q1[3]) + abs(w1[0]) + abs(w1[1]) + abs(w1[2])
        < math.inf
    ):
        return 1
    for i in range(4):
        q_out[i] = q1[i]
    for i in range(3):
        w_out[i] = w1[i]
    return 0

"""Torque-free flows of the time-symmetric methods: ``(q0, L_b0, J, I, h) -> (q1, L_b1)``.

Each flow is time-symmetric (``F(-h) = F(h)⁻¹``) and keeps ``|L|`` and world ``L``; the
loops wrap it in the torque's half kicks (Strang) and compose it into higher orders
(:mod:`tumble._kernels.rigid.compose`). The splittings are registered with their outer and
inner flows, which compositions merge between stages (:func:`tumble._kernels.rigid.table.split`).
"""

from __future__ import annotations

from tumble._kernels import inner
from tumble._kernels.exact import free_flow
from tumble._kernels.rigid.common import j_prime, mul, scale
from tumble._kernels.rigid.steps import catto_jacobian, solve3, step_momentum_first
from tumble._kernels.rigid.table import flow, split
from tumble._kernels.rotation import (
    cross,
    dot,
    qconj,
    qmul,
    qnormalize,
    qrotate,
    rotvec_to_q,
    sincos,
)

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


@inner
def _free_omega(L, J):
    """``J'`` and ``Omega = J L - J' L`` of the torque-free momentum-first step at ``L``."""
    w = mul(J, L)
    jp = j_prime(w, L, J)
    return jp, (w[0] - jp * L[0], w[1] - jp * L[1], w[2] - jp * L[2])


@inner
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
    r = rotvec_to_q(scale(Om, h))
    L1 = qrotate(qconj(r), L0)
    tol2 = SYMMETRIC_RTOL * SYMMETRIC_RTOL * dot(L0, L0)
    for _ in range(SYMMETRIC_MAX_ITER):
        x = L1
        jp, Om = _free_omega(x, J)
        r = rotvec_to_q(scale(Om, h))
        L1 = qrotate(qconj(r), L0)
        d = (L1[0] - x[0], L1[1] - x[1], L1[2] - x[2])
        if dot(d, d) <= tol2:
            break
    q1 = qmul(qmul(q, r), rotvec_to_q(scale(L1, jp * h)))
    return qnormalize(q1), L1


@flow("momentum_first_symmetric")
@inner
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


@inner(forceinline=True)
def axis_flow(q, L, j, axis, t):
    """Exact flow of ``½ j L_i²`` (``i = axis``) for time ``t``: ``L <- Q(-j L_i t e_i) L``,
    ``R <- R Q(j L_i t e_i)``, with the axis known at run time (a pairing's); a flow about
    a fixed axis calls :func:`flow_x`, :func:`flow_y` or :func:`flow_z`, and compiles that
    axis's code alone."""
    if axis == 0:
        return flow_x(q, L, j, t)
    if axis == 1:
        return flow_y(q, L, j, t)
    return flow_z(q, L, j, t)


@inner(inline="always")
def _half_turn(a):
    """``(cos a, sin a, cos a/2, sin a/2)`` from one :func:`~tumble._kernels.rotation.sincos`,
    of the half angle: ``cos a = (ch - sh)(ch + sh)`` and ``sin a = 2 sh ch`` err by an ulp
    or two of 1, like the quaternion's own values (libm's ``sin`` and ``cos`` of both
    angles cost about a third of a splitting step)."""
    sh, ch = sincos(0.5 * a)
    return (ch - sh) * (ch + sh), 2.0 * sh * ch, ch, sh


# ``q ⊗ (ch, sh e_i)`` is written out in each: 8 products, where
# :func:`~tumble._kernels.rotation.qmul` would multiply the zeros too (16).


@inner(forceinline=True)
def flow_x(q, L, j, t):
    """:func:`axis_flow` about body axis 0."""
    c, s, ch, sh = _half_turn(j * L[0] * t)
    w, x, y, z = q
    L1 = (L[0], c * L[1] + s * L[2], -s * L[1] + c * L[2])
    return (w * ch - x * sh, w * sh + x * ch, y * ch + z * sh, z * ch - y * sh), L1


@inner(forceinline=True)
def flow_y(q, L, j, t):
    """:func:`axis_flow` about body axis 1."""
    c, s, ch, sh = _half_turn(j * L[1] * t)
    w, x, y, z = q
    L1 = (c * L[0] - s * L[2], L[1], s * L[0] + c * L[2])
    return (w * ch - y * sh, x * ch - z * sh, w * sh + y * ch, z * ch + x * sh), L1


@inner(forceinline=True)
def flow_z(q, L, j, t):
    """:func:`axis_flow` about body axis 2."""
    c, s, ch, sh = _half_turn(j * L[2] * t)
    w, x, y, z = q
    L1 = (c * L[0] + s * L[1], -s * L[0] + c * L[1], L[2])
    return (w * ch - z * sh, x * ch + y * sh, y * ch - x * sh, w * sh + z * ch), L1


@inner
def no_pairing(J):
    """The pairing argument of ``splitting``'s flows, which have none."""
    return (0, 0, 0)


@inner(inline="always")
def splitting_outer(q, L, J, pairing, t):
    """``Φ1(t)``, the exact flow of ``½ J_1 L_1²``: the outer flow of ``splitting``. It keeps
    ``L_1``, so ``Φ1(s) ∘ Φ1(t) = Φ1(s + t)`` exactly: consecutive outer flows merge."""
    return flow_x(q, L, J[0], t)


@inner(inline="always")
def splitting_inner(q, L, J, pairing, h):
    """``Φ2(h/2) Φ3(h) Φ2(h/2)``, the inner flow of ``splitting`` (``Φi`` the exact flow of
    ``½ J_i L_i²``)."""
    q, L = flow_y(q, L, J[1], 0.5 * h)
    q, L = flow_z(q, L, J[2], h)
    return flow_y(q, L, J[1], 0.5 * h)


#: ``splitting``: the symmetric kinetic-energy splitting ``Φ1(h/2) Φ2(h/2) Φ3(h) Φ2(h/2)
#: Φ1(h/2)`` (NO_SQUISH), each ``Φi`` an exact rotation about a body axis.
split("splitting", splitting_outer, splitting_inner, no_pairing)


@inner
def symmetric_top_pairing(J):
    """The axes ``(a, b, c)`` of ``symmetric_top_split``: ``a`` the median inverse
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


@inner(inline="always")
def remainder_flow(q, L, J, pairing, t):
    """The remainder ``R = ½ (J_b - J_a) L_b²`` of the pairing ``(a, b, c)`` for time
    ``t``: the outer flow of ``symmetric_top_split``, keeping ``L_b`` (so it merges)."""
    a, b = pairing[0], pairing[1]
    return axis_flow(q, L, J[b] - J[a], b, t)


@inner(inline="always")
def symmetric_top_flow(q, L, J, pairing, h):
    """The symmetric top ``S = ½ J_a |L|² + ½ (J_c - J_a) L_c²`` for time ``h``: the inner
    flow of ``symmetric_top_split``. The flow of the second part turns about body axis
    ``c`` (:func:`axis_flow`); that of ``½ J_a |L|²`` keeps ``L_b`` and turns the attitude
    about ``L``: ``R <- R Q(J_a L_b h)``. The two Poisson-commute (``|L|²`` is a Casimir),
    so their product is the exact motion of that symmetric top."""
    a, c = pairing[0], pairing[2]
    q, L = axis_flow(q, L, J[c] - J[a], c, h)
    return qmul(q, rotvec_to_q(scale(L, J[a] * h))), L


#: ``symmetric_top_split``: ``R(h/2) ∘ S(h) ∘ R(h/2)`` (Fassò 2003) with the pairing of
#: :func:`symmetric_top_pairing`; exact for a symmetric top, whose remainder is zero.
split("symmetric_top_split", remainder_flow, symmetric_top_flow, symmetric_top_pairing)


@inner
def symmetric_top_split(q, L, J, a, b, c, h):
    """``R(h/2) ∘ S(h) ∘ R(h/2)`` with the pairing ``(a, b, c)`` given (any of the six; the
    method uses :func:`symmetric_top_pairing`'s), normalised: the pairing study of
    ``benchmarks/bench_rigid.py`` runs it."""
    pairing = (a, b, c)
    q, L = remainder_flow(q, L, J, pairing, 0.5 * h)
    q, L = symmetric_top_flow(q, L, J, pairing, h)
    q, L = remainder_flow(q, L, J, pairing, 0.5 * h)
    return qnormalize(q), L


@inner
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
        dx = solve3(m, F)
        x = (x[0] - dx[0], x[1] - dx[1], x[2] - dx[2])
        if dot(dx, dx) <= tol2:
            break
    return x


@flow("midpoint")
@inner
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


@flow("exact_split", exact=True)
@inner
def free_exact(q, L, J, I, h):
    """``exact_split``'s free flow: the exact torque-free motion over ``h``
    (:func:`tumble._kernels.exact.free_flow`, theta series) between the half kicks. Exact
    without torque (the loops then evaluate it from the initial state at each record),
    second order with it."""
    return free_flow(q, L, J, h)

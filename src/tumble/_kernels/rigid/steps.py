"""Rigid-body steps with a held torque: ``(q0, L_b0, J, I, tau_b, h) -> (q1, L_b1)``.

Each step follows ``shared/reference/rigid-body-integrators.md`` on the body state: ``q``
the body-to-world unit quaternion, ``L_b`` the body-frame angular momentum (``omega = R J
L_b`` is derived), ``J`` the principal inverse moments and ``I`` their pseudo-inverse,
``tau_b`` the body-frame torque held over the step (taken at its start, so each step is
first order in a torque that changes over it; Buss's two steps are second order without
torque and with a constant world torque). A step maps
``(q0, L_b0)`` to ``(q1, L_b1)`` such that ``(q1, R1 J L_b1)`` is the state the method's own
algorithm produces, so a velocity-form method and a momentum-form method share one loop.
Each is registered under its method's name (:func:`tumble._kernels.rigid.table.held`).
"""

from __future__ import annotations

from tumble._kernels import inner
from tumble._kernels.kinematics import magnus_omega
from tumble._kernels.rigid.common import (
    add,
    advance_attitude,
    axpy,
    energy_factor,
    j_prime,
    jolt_momentum,
    mul,
    scale,
    to_body,
    turn,
)
from tumble._kernels.rigid.table import held
from tumble._kernels.rotation import (
    cayley_rotate,
    cross,
    qconj,
    qmul,
    qnormalize,
    qrotate,
    rotvec_to_q,
)


@held("explicit")
@inner
def step_explicit(q, L, J, I, tb, h):
    """Forward Euler on omega (engine form), then ``R1 = Q(omega1 h) R0``.

    ``omega1 = omega0 + h J_w (tau - omega0 × L0)``; in the body frame at ``R0``:
    ``L1 = L0 + h (tau_b - k)``. ``R1`` turns about ``omega1``, which leaves ``omega1``'s
    body components unchanged, so the new body momentum is ``L1``.
    """
    k = cross(mul(J, L), L)
    L1 = (L[0] + h * (tb[0] - k[0]), L[1] + h * (tb[1] - k[1]), L[2] + h * (tb[2] - k[2]))
    return advance_attitude(q, mul(J, L1), h), L1


@held("none")
@inner
def step_none(q, L, J, I, tb, h):
    """No gyroscopic term: ``omega1 = omega0 + h J_w tau``, ``R1 = Q(omega1 h) R0``."""
    L1 = axpy(L, h, tb)
    return advance_attitude(q, mul(J, L1), h), L1


@held("jolt")
@inner
def step_jolt(q, L, J, I, tb, h):
    """Jolt's code: body-frame Euler step of ``L`` rescaled to ``|L0|``, then torque, rotate.

    ``L' = L0 - h (omega_b × L0)``, ``L' <- L' |L0|/|L'|`` (0 if ``L' = 0``),
    ``omega <- R0 J L' + h J_w tau`` (Jolt applies the torque after the gyroscopic update),
    ``R1 = Q(omega h) R0``.
    """
    L1 = axpy(jolt_momentum(L, J, h), h, tb)
    return advance_attitude(q, mul(J, L1), h), L1


@held("naive_rotation")
@inner
def step_naive_rotation(q, L, J, I, tb, h):
    """The blog's naive rotation: ``L1 = Q(-omega0 h) L0`` (body), torque,
    ``R1 = Q(omega1 h) R0``."""
    Lr = turn(L, scale(mul(J, L), -h))
    L1 = axpy(Lr, h, tb)
    return advance_attitude(q, mul(J, L1), h), L1


@held("jolt_rotation")
@inner
def step_jolt_rotation(q, L, J, I, tb, h):
    """Jolt in rotation form: ``L1 = Q(-Omega h) L0`` with ``Omega = (J - J_L) L0``."""
    jl = energy_factor(L, J)
    w = mul(J, L)
    Om = (w[0] - jl * L[0], w[1] - jl * L[1], w[2] - jl * L[2])
    Lr = turn(L, scale(Om, -h))
    L1 = axpy(Lr, h, tb)
    return advance_attitude(q, mul(J, L1), h), L1


@inner(forceinline=True)
def _modified_omega(q, L, J, tb, h):
    """Shared start of modified Jolt and momentum-first: ``L'``, ``J'`` and ``Omega`` (body)."""
    Lp = axpy(L, h, tb)
    w = mul(J, Lp)
    jp = j_prime(w, Lp, J)
    Om = (w[0] - jp * Lp[0], w[1] - jp * Lp[1], w[2] - jp * Lp[2])
    return Lp, jp, Om


@held("modified_jolt")
@inner(forceinline=True)
def step_modified_jolt(q, L, J, I, tb, h):
    """Modified Jolt (reference 2.10, body form): ``L1 = Q(-Omega h) L'``,
    ``R1 = Q(omega1 h) R0``."""
    Lp, _, Om = _modified_omega(q, L, J, tb, h)
    L1 = turn(Lp, scale(Om, -h))
    return advance_attitude(q, mul(J, L1), h), L1


@held("modified_jolt_cayley")
@inner(forceinline=True)
def step_modified_jolt_cayley(q, L, J, I, tb, h):
    """Modified Jolt with the trig-free Cayley rotation of ``L`` (angle ``2 atan(|Omega|h/2)``)."""
    Lp, _, Om = _modified_omega(q, L, J, tb, h)
    L1 = cayley_rotate(Lp, scale(Om, -h))
    return advance_attitude(q, mul(J, L1), h), L1


@held("momentum_first")
@inner(forceinline=True)
def step_momentum_first(q, L, J, I, tb, h):
    """Momentum-first (reference 2.10): ``R1 = Q(J' L' h) Q(Omega h) R0``.

    In the body frame ``Q(a_w) R0 = R0 Q(a_b)``, so ``q1 = q0 ⊗ exp(J' L'_b h/2) ⊗
    exp(Omega_b h/2)``: first ``Omega``, then the precession about ``L'``. ``L_w`` is
    untouched, so ``L_b1 = R1ᵀ L'_w = Q(-Omega_b h) L'_b``.
    """
    Lp, jp, Om = _modified_omega(q, L, J, tb, h)
    r = rotvec_to_q(scale(Om, h))
    q1 = qmul(qmul(q, rotvec_to_q(scale(Lp, jp * h))), r)
    # Q(-Omega h) is the conjugate of r bit for bit: one exponential serves both updates.
    L1 = qrotate(qconj(r), Lp)
    return qnormalize(q1), L1


@inner
def catto_residual(w, w1, I, h):
    """Implicit Euler residual in the body frame: ``f(w) = I (w - w1) + h w × (I w)``."""
    Iw = mul(I, w)
    c = cross(w, Iw)
    return (
        I[0] * (w[0] - w1[0]) + h * c[0],
        I[1] * (w[1] - w1[1]) + h * c[1],
        I[2] * (w[2] - w1[2]) + h * c[2],
    )


@inner
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


@inner
def solve3(m, b):
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


@inner
def newton_body(w, I, h):
    """One Newton step of body-frame implicit Euler from ``w``, Catto's (Bullet's
    ``computeGyroscopicImpulseImplicit_Body``, Avian's PR 420): ``f = h w × (I w)``,
    ``Df = I + h ([w]× I - [I w]×)``, ``w1 = w - Df⁻¹ f``."""
    f = catto_residual(w, w, I, h)
    dw = solve3(catto_jacobian(w, I, h), f)
    return (w[0] - dw[0], w[1] - dw[1], w[2] - dw[2])


@held("implicit")
@inner
def step_implicit(q, L, J, I, tb, h):
    """Catto's implicit Euler in the body frame, one Newton step (Bullet ``_Body``).

    ``w2 = w1 - Jac(w1)⁻¹ f(w1)`` with ``f(w1) = h w1 × (I w1)``; then the torque impulse
    ``h J_w tau`` and ``R1 = Q(omega1 h) R0``. Needs ``I = J⁻¹`` (no zero inverse moment).
    """
    L1 = axpy(mul(I, newton_body(mul(J, L), I, h)), h, tb)
    return advance_attitude(q, mul(J, L1), h), L1


@held("magnus")
@inner
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
    w1 = axpy(w, h, a)
    return q1, mul(I, to_body(q1, w1))


@inner(forceinline=True)
def _buss_rates(L, J, tb):
    """Body components at ``R0`` of ``omega`` and of its time derivative (Buss's ``omega``
    and ``omega-dot``): ``omega_b = J L_b``, ``omega'_b = J (tau_b - omega_b × L_b)``, the
    latter from ``dL_w/dt = tau`` and ``L_w = I_w omega`` (the gyroscopic term)."""
    w = mul(J, L)
    return w, mul(J, add(tb, cross(L, w)))


@inner(forceinline=True)
def _buss_advance(q, L, tb, wbar, h):
    """Buss's attitude update ``R1 = Q(wbar_w h) R0``, i.e. ``q1 = q0 ⊗ exp(wbar_b h/2)``,
    with world ``L`` changed by the torque alone: ``L_w1 = L_w0 + h tau``, so
    ``L_b1 = R1ᵀ L_w1 = Q(-wbar_b h) (L_b0 + h tau_b)``."""
    r = rotvec_to_q(scale(wbar, h))
    # Q(-wbar h) is the conjugate of r bit for bit: one exponential serves both updates.
    return qnormalize(qmul(q, r)), qrotate(qconj(r), axpy(L, h, tb))


@held("buss_second_order")
@inner(forceinline=True)
def step_buss_second_order(q, L, J, I, tb, h):
    """Buss's second-order method (J. Comput. Phys. 164 (2000) 377): world ``L`` is the
    state, ``omega`` is recomputed from it and the attitude, and the attitude turns by the
    mean angular velocity of the step's first-order Taylor expansion::

        omega' = J_w (tau - omega0 × L0)          (world frame, at R0)
        wbar   = omega0 + (h/2) omega'
        R1     = Q(wbar h) R0,   L_w1 = L_w0 + h tau

    computed in body components at ``R0`` (``Q(a_w) R0 = R0 Q(a_b)``). ``wbar h`` is the
    Magnus rotation vector of the step to ``O(h²)``, so the local attitude error is
    ``O(h³)`` and the global one ``O(h²)`` (free body or constant world torque). ``|L|`` and,
    without torque, world ``L`` are kept to round-off; the energy is not (local ``O(h³)``).
    Exact for a spherical top, where ``omega' = 0``.
    """
    w, wd = _buss_rates(L, J, tb)
    return _buss_advance(q, L, tb, axpy(w, 0.5 * h, wd), h)


@held("buss_augmented")
@inner(forceinline=True)
def step_buss_augmented(q, L, J, I, tb, h):
    """Buss's augmented second-order method: :func:`step_buss_second_order` with
    ``wbar = omega0 + (h/2) omega' + (h²/12) omega' × omega0``.

    The added term is the second Magnus term of an angular velocity that changes linearly
    over the step, ``(h³/12) omega' × omega0`` in the rotation vector (its sign in the world
    frame, where ``R1 = Q(.) R0``; in body components at ``R0`` the same cross product,
    since both vectors map by ``R0``). The Taylor term ``(h³/6) omega''`` of the same order
    is left out, so the method is still second order: it corrects the non-commutativity of
    the rotations within the step, not the curvature of ``omega(t)``. Same invariants as
    the second-order method.
    """
    w, wd = _buss_rates(L, J, tb)
    wbar = axpy(axpy(w, 0.5 * h, wd), h * h / 12.0, cross(wd, w))
    return _buss_advance(q, L, tb, wbar, h)

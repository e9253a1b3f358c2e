"""Small per-body helpers of the rigid-body kernels: tuple arithmetic, the inertia maps,
the energy factor ``J_L`` and the article's ``J'``, and one record of a run.

Every function works on tuples of float64 (the state stays in registers) and is compiled
with :data:`tumble._kernels.JIT_OPTIONS`.
"""

from __future__ import annotations

import math

from tumble._kernels import inner
from tumble._kernels.rotation import cross, dot, qconj, qmul, qnormalize, qrotate, rotvec_to_q

#: Relative threshold below which ``k = omega × L`` counts as zero: ``|k|² <= eps² |w|²
#: |L|²``. ``J_k`` is a Rayleigh quotient, bounded as ``k -> 0``, and noise in it only moves
#: ``Omega`` along ``L``, so a tiny value is safe; it only has to catch the exact 0/0.
K_REL_EPS = 1e-12


@inner
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@inner
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@inner
def axpy(a, s, b):
    """``a + s b``."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@inner
def mul(a, b):
    """Elementwise product: a diagonal matrix times a vector."""
    return (a[0] * b[0], a[1] * b[1], a[2] * b[2])


@inner
def pseudo_inverse(J):
    """Principal moments ``I_i = 1/J_i``, with 0 where ``J_i = 0`` (a constrained axis)."""
    return (
        1.0 / J[0] if J[0] > 0.0 else 0.0,
        1.0 / J[1] if J[1] > 0.0 else 0.0,
        1.0 / J[2] if J[2] > 0.0 else 0.0,
    )


@inner
def constrain(L, J):
    """Clear the body momentum on axes with ``J_i = 0``: the constraint absorbs it."""
    return (
        L[0] if J[0] > 0.0 else 0.0,
        L[1] if J[1] > 0.0 else 0.0,
        L[2] if J[2] > 0.0 else 0.0,
    )


@inner
def to_body(q, v):
    return qrotate(qconj(q), v)


@inner
def turn(v, phi):
    """``Q(phi) v``: rotate ``v`` by the rotation vector ``phi``."""
    return qrotate(rotvec_to_q(phi), v)


@inner
def advance_attitude(q, w_body, h):
    """``R1 = Q(omega h) R0 = R0 Q(omega_b h)``, renormalised."""
    return qnormalize(qmul(q, rotvec_to_q(scale(w_body, h))))


@inner
def energy_factor(L, J):
    """``J_L = L·JL / |L|²`` (0 for ``L = 0``, where any value gives the same step)."""
    LL = dot(L, L)
    if LL > 0.0:
        return dot(L, mul(J, L)) / LL
    return 0.0


@inner
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


@inner
def jolt_momentum(L, J, h):
    """Jolt's ``ApplyGyroscopicForceInternal`` (also PhysX's ``copyToSolverBodyData``, Avian
    from PR 738, Rapier's ``gyroscopic_corrected_angvel``): ``L' = L - h (J L) × L``,
    rescaled to ``|L|``. ``|L'| = 0`` happens only at ``L = 0`` (``L' ⟂ (J L) × L``): Jolt,
    PhysX and Avian then set 0 and Rapier keeps ``L``, the same value."""
    Lp = axpy(L, -h, cross(mul(J, L), L))
    n2 = dot(Lp, Lp)
    if n2 > 0.0:
        return scale(Lp, math.sqrt(dot(L, L) / n2))
    return (0.0, 0.0, 0.0)


@inner(forceinline=True)
def load4(a, b):
    return (float(a[b, 0]), float(a[b, 1]), float(a[b, 2]), float(a[b, 3]))


@inner(forceinline=True)
def load3(a, b):
    return (float(a[b, 0]), float(a[b, 1]), float(a[b, 2]))


@inner
def record(r, b, q, L, J, q_out, w_out, Lw_out, Lb_out, E_out):
    """Write record ``r`` of body ``b``: ``q``, world ``omega`` and ``L``, ``L_b``, energy.

    Returns 1 if the record is not finite (its ``q``, ``omega`` or energy), else 0; a
    quaternion whose ``|q|²`` is zero or subnormal (a blow-up normalised to nothing) is
    recorded as NaN.
    Compiled once, shared by every loop: callers pass ``r`` as an ``int64`` (a literal
    index would compile a specialisation of its own).
    """
    if not q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] >= 2.2250738585072014e-308:
        # A blow-up whose overflowed components normalised to 0 (or below the normal
        # range): no rotation, recorded as the divergence it is.
        q = (math.nan, math.nan, math.nan, math.nan)
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

"""Inertia maps of one rigid body, as gufuncs: the compiled side of the dynamics functions.

``tumble.rigid``'s ``world_inverse_inertia``, ``angular_momentum``, ``energy``,
``angular_acceleration`` and the conversions between world ``omega`` and body momentum
``L_b`` broadcast over any batch through these. Input is validated, normalised and of one
dtype (float32 or float64); the formulas are the per-body ones of
:mod:`tumble._kernels.rigid` (pseudo-inverse ``I`` on locked axes).
"""

from __future__ import annotations

from tumble._kernels import guvectorize, inner
from tumble._kernels.rigid.common import add, constrain, mul, pseudo_inverse, to_body
from tumble._kernels.rotation import cross, dot, qrotate


@inner
def _tup4(a):
    return (float(a[0]), float(a[1]), float(a[2]), float(a[3]))


@inner
def _tup3(a):
    return (float(a[0]), float(a[1]), float(a[2]))


@inner
def body_momentum(q, w, J):
    """``L_b = I Rᵀ omega`` with the pseudo-inverse ``I`` (no momentum on locked axes)."""
    return mul(pseudo_inverse(J), to_body(q, w))


@inner
def acceleration(tau, w, q, J):
    """``alpha = J_w (tau - omega × L)``, ``L = I_w omega``, evaluated in the body frame."""
    wb = to_body(q, w)
    Lb = mul(pseudo_inverse(J), wb)
    ab = mul(J, add(to_body(q, tau), cross(Lb, wb)))
    return qrotate(q, ab)


@guvectorize("(n),(m),(m)->(m)")
def angular_momentum_gu(q, w, J, out):
    qt = _tup4(q)
    L = qrotate(qt, body_momentum(qt, _tup3(w), _tup3(J)))
    out[0], out[1], out[2] = L[0], L[1], L[2]


@guvectorize("(n),(m),(m)->()")
def energy_gu(q, w, J, out):
    wt = _tup3(w)
    out[0] = 0.5 * dot(to_body(_tup4(q), wt), body_momentum(_tup4(q), wt, _tup3(J)))


@guvectorize("(m),(m),(n),(m)->(m)")
def angular_acceleration_gu(tau, w, q, J, out):
    a = acceleration(_tup3(tau), _tup3(w), _tup4(q), _tup3(J))
    out[0], out[1], out[2] = a[0], a[1], a[2]


@guvectorize("(n),(m)->(m,m)")
def world_inverse_inertia_gu(q, J, out):
    qt = _tup4(q)
    Jt = _tup3(J)
    # Columns of R J Rᵀ are R (J * (Rᵀ e_j)).
    for j in range(3):
        e = (1.0 if j == 0 else 0.0, 1.0 if j == 1 else 0.0, 1.0 if j == 2 else 0.0)
        c = qrotate(qt, mul(Jt, to_body(qt, e)))
        out[0, j], out[1, j], out[2, j] = c[0], c[1], c[2]


@guvectorize("(n),(m),(m)->(m)")
def body_momentum_gu(q, w, J, out):
    L = body_momentum(_tup4(q), _tup3(w), _tup3(J))
    out[0], out[1], out[2] = L[0], L[1], L[2]


@guvectorize("(n),(m),(m)->(m)")
def world_omega_gu(q, L, J, out):
    qt = _tup4(q)
    Jt = _tup3(J)
    w = qrotate(qt, mul(Jt, constrain(_tup3(L), Jt)))
    out[0], out[1], out[2] = w[0], w[1], w[2]

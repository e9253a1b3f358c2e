"""Classical Runge-Kutta 4 on the body state ``(q, L_b)``, the torque at its stages."""

from __future__ import annotations

from tumble._kernels import inner
from tumble._kernels.rigid.common import add, axpy, mul
from tumble._kernels.rigid.table import staged
from tumble._kernels.rotation import cross, qmul, qnormalize
from tumble._kernels.torques import body_torque


@inner
def _rk4_rhs(q, L, J, I, model, b, t):
    """``dL_b/dt = tau_b + L_b × (J L_b)``, ``dq/dt = ½ q ⊗ (0, J L_b)`` at time ``t``."""
    kinds, P, fn = model
    qn = qnormalize(q)
    w = mul(J, L)
    dL = add(body_torque(kinds, P, fn, b, t, qn, L, J, I), cross(L, w))
    dq = qmul(q, (0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]))
    return dq, dL


@inner
def _q_axpy(q, s, d):
    return (q[0] + s * d[0], q[1] + s * d[1], q[2] + s * d[2], q[3] + s * d[3])


@staged("rk4")
@inner
def step_rk4(q, L, J, I, model, b, t, h):
    """Classical RK4 on ``(L_b, q)`` (body Euler equations with the model's torque at the
    stage times ``t, t + h/2, t + h/2, t + h``), then ``q`` renormalised."""
    hh = 0.5 * h
    dq1, dL1 = _rk4_rhs(q, L, J, I, model, b, t)
    dq2, dL2 = _rk4_rhs(_q_axpy(q, hh, dq1), axpy(L, hh, dL1), J, I, model, b, t + hh)
    dq3, dL3 = _rk4_rhs(_q_axpy(q, hh, dq2), axpy(L, hh, dL2), J, I, model, b, t + hh)
    dq4, dL4 = _rk4_rhs(_q_axpy(q, h, dq3), axpy(L, h, dL3), J, I, model, b, t + h)
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

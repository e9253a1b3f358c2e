"""The pieces the engines' rotation updates are made of (:mod:`.engine_steps` composes them).

Frames: ``q`` is body-to-world; a vector with a ``_b`` meaning is in body components at the
pose the function is given. An engine that rotates by a world vector ``omega_w`` on the left,
``q1 = Q(omega_w h) ⊗ q0``, rotates by its body components on the right, ``q1 = q0 ⊗
Q(omega_b h)`` with ``omega_b = R0ᵀ omega_w``, the same quaternion to round-off; the
functions below take the body form. Each docstring names the engine code it stands for;
:mod:`tumble.engines` gives the files, functions, lines and commits.

Attitude updates map ``q`` and the new body angular velocity to ``q1`` (the exact one is
:func:`tumble._kernels.rigid.common.advance_attitude`); the gyroscopic updates the engines
share with tumble's own methods are :func:`tumble._kernels.rigid.common.jolt_momentum`
(Jolt's) and :func:`tumble._kernels.rigid.steps.newton_body` (Catto's), the others are
here. All work on tuples of float64.
"""

from __future__ import annotations

import math

from tumble._kernels import inner
from tumble._kernels.rigid.common import scale
from tumble._kernels.rigid.steps import solve3
from tumble._kernels.rotation import (
    cross,
    dot,
    mat_vec,
    q_to_mat,
    qmul,
    qnormalize,
)

# ---------------------------------------------------------------------------------------
# Attitude updates: q1 from q0 and the new angular velocity w (body components at R0).


@inner
def rotate_first_order(q, w, h):
    """``normalize(q0 + ½ h q0 ⊗ (0, w))`` = ``normalize(q0 ⊗ (1, w h/2))`` (ODE's default
    infinitesimal mode, Rapier's ``integrate_linearized``): the axis of ``w``, the angle
    ``2 atan(|w| h/2)`` instead of ``|w| h``."""
    return qnormalize(qmul(q, (1.0, 0.5 * h * w[0], 0.5 * h * w[1], 0.5 * h * w[2])))


@inner
def rotate_bullet(q, w, h):
    """``btTransformUtil::integrateTransform``'s exponential map.

    ``r = |w|`` (0 when ``|w|² <= FLT_EPSILON``), capped at ``(π/4)/h``; ``a = w sin(r h/2)/r``
    (``w (h/2 - h³ r²/48)`` for ``r < 0.001``); ``q1 = normalize((cos(r h/2), a) ⊗ q0)``. Above
    the cap ``a`` keeps the uncapped ``w``, so the rotation, after the normalisation, is by
    ``2 atan(|w| sin(π/8)/(r cos(π/8)))``, less than ``|w| h``, about the axis of ``w``.
    """
    ww = dot(w, w)
    r = math.sqrt(ww) if ww > 1.1920928955078125e-07 else 0.0
    if r * h > 0.25 * math.pi:
        r = 0.25 * math.pi / h
    if r < 0.001:
        s = 0.5 * h - h * h * h * 0.020833333333333333 * r * r
    else:
        s = math.sin(0.5 * r * h) / r
    return qnormalize(qmul(q, (math.cos(0.5 * r * h), s * w[0], s * w[1], s * w[2])))


@inner
def rotate_mujoco(q, w, h):
    """``mju_quatIntegrate(q, w_b, h)``: ``normalize(q0) ⊗ Q(w_b h)``, normalised *before*
    the product (MuJoCo's free joint keeps ``w`` in body components). A speed below
    ``mjMINVAL = 1e-15`` turns about ``x`` by ``|w| h``; an angle of exactly 0 is no turn."""
    n = math.sqrt(dot(w, w))
    angle = h * n
    axis = (1.0, 0.0, 0.0) if n < 1e-15 else scale(w, 1.0 / n)
    if angle == 0.0:
        dq = (1.0, 0.0, 0.0, 0.0)
    else:
        s = math.sin(0.5 * angle)
        dq = (math.cos(0.5 * angle), s * axis[0], s * axis[1], s * axis[2])
    return qmul(qnormalize(q), dq)


# ---------------------------------------------------------------------------------------
# Gyroscopic updates: the new body angular velocity or momentum, same body components.


@inner
def transposed(m):
    """``mᵀ`` for a row-major 3x3 9-tuple (Bepu applies its matrices to row vectors)."""
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


@inner
def mat_mul(A, B):
    """``A B`` for row-major 3x3 9-tuples."""
    return (
        A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
        A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
        A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
        A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
        A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
        A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
        A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
        A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
        A[6] * B[2] + A[7] * B[5] + A[8] * B[8],
    )


@inner
def skew(a):
    """``[a]×`` as a row-major 9-tuple."""
    return (0.0, -a[2], a[1], a[2], 0.0, -a[0], -a[1], a[0], 0.0)


@inner
def newton_world(q, w_w, I, h):
    """Bullet's ``computeGyroscopicImpulseImplicit_World``: one Newton step in world
    components with the world tensor ``I_w = R I Rᵀ`` built from ``q``: ``f = h w × (I_w
    w)``, ``Df = I_w + h ([w]× I_w - [I_w w]×)``, ``w1 = w - Df⁻¹ f``. The same map as
    :func:`newton_body` in exact arithmetic (``f`` and ``Df`` rotate with the body)."""
    R = q_to_mat(q)
    Rt = transposed(R)
    Iw = mat_mul(R, mat_mul((I[0], 0.0, 0.0, 0.0, I[1], 0.0, 0.0, 0.0, I[2]), Rt))
    a = mat_vec(Iw, w_w)
    wI = mat_mul(skew(w_w), Iw)
    ax = skew(a)
    Df = (
        Iw[0] + h * (wI[0] - ax[0]), Iw[1] + h * (wI[1] - ax[1]), Iw[2] + h * (wI[2] - ax[2]),
        Iw[3] + h * (wI[3] - ax[3]), Iw[4] + h * (wI[4] - ax[4]), Iw[5] + h * (wI[5] - ax[5]),
        Iw[6] + h * (wI[6] - ax[6]), Iw[7] + h * (wI[7] - ax[7]), Iw[8] + h * (wI[8] - ax[8]),
    )  # fmt: skip
    dw = solve3(Df, scale(cross(w_w, a), h))
    return (w_w[0] - dw[0], w_w[1] - dw[1], w_w[2] - dw[2])


@inner
def ode_linearised(L, I, h):
    """ODE's implicit gyroscopic term (Lacoursière): ``(I - h [L0]×) w1 = L0``, momentum
    frozen at its start value (``dxQuickStepIsland_Stage0_Bodies``; the torque ``τ_g`` it adds
    makes ``ω1 = Ĩ⁻¹ I ω0``). A singular ``Ĩ`` skips the term: ``w1 = I⁻¹ L0``."""
    m = (
        I[0], h * L[2], -h * L[1],
        -h * L[2], I[1], h * L[0],
        h * L[1], -h * L[0], I[2],
    )  # fmt: skip
    det = (
        m[0] * (m[4] * m[8] - m[5] * m[7])
        - m[1] * (m[3] * m[8] - m[5] * m[6])
        + m[2] * (m[3] * m[7] - m[4] * m[6])
    )
    if det == 0.0:
        return (L[0] / I[0], L[1] / I[1], L[2] / I[2])
    return solve3(m, L)

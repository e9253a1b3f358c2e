"""The public physics engines' rotation updates, one registered step per engine setting.

Each is a held step ``(q0, L_b0, J, I, tau_b, h) -> (q1, L_b1)`` (MuJoCo's RK4 a staged
one) that does what the engine does to a free body over one step of its own length ``h``,
in the engine's order, with zero damping (:mod:`tumble.engines` holds each record: the
engine's files, functions and lines, what the update does to ``omega``, to the attitude and
to the inertia, and which options it models). The body torque ``tau_b`` is the engine's
external torque at the start of the step, in body components at ``R0``: ``h J_w(R0) tau``
is ``h J tau_b`` there. An engine that keeps ``omega`` as its state is written in
``w = J L_b`` and returns ``L_b1 = I w1`` in body components at ``R1``; where the attitude
turns about ``w1`` itself those are ``w1``'s components at ``R0``.

The engines with sub-steps (Avian 6, Rapier 4) work in world components, as they do.
"""

from __future__ import annotations

import math

from tumble._kernels import inner
from tumble._kernels.rigid.common import (
    add,
    advance_attitude,
    axpy,
    jolt_momentum,
    mul,
    scale,
    to_body,
)
from tumble._kernels.rigid.engine_parts import (
    newton_world,
    ode_linearised,
    rotate_bullet,
    rotate_first_order,
    rotate_mujoco,
    transposed,
)
from tumble._kernels.rigid.steps import catto_jacobian, newton_body, solve3
from tumble._kernels.rigid.table import held, staged
from tumble._kernels.rotation import (
    cross,
    dot,
    mat_vec,
    qmul,
    qnormalize,
    qrotate,
    rotvec_to_q,
    so3_jacobian_inverse,
)
from tumble._kernels.torques import body_torque

# --- Jolt -------------------------------------------------------------------------------


@inner
def _rotate_jolt(q, w, h):
    """``Body::AddRotationStep(ω h)``: no turn at all when ``|ω h| <= 1e-6``."""
    if abs(h) * math.sqrt(dot(w, w)) <= 1e-6:
        return q
    return advance_attitude(q, w, h)


@held("jolt_gyroscopic")
@inner
def step_jolt_gyroscopic(q, L, J, I, tb, h):
    """Gyroscopic update at ``R0`` (``L' = L - h ω_b × L`` rescaled to ``|L|``), then the
    torque ``h J_w τ``, then ``q1 = normalize(Q(ω1 h) ⊗ q0)`` (none if ``|ω1 h| <= 1e-6``)."""
    L1 = axpy(jolt_momentum(L, J, h), h, tb)
    return _rotate_jolt(q, mul(J, L1), h), L1


@held("jolt_no_gyroscopic")
@inner
def step_jolt_no_gyroscopic(q, L, J, I, tb, h):
    """Jolt's default: the torque ``h J_w τ`` only, then the rotation of Jolt's step."""
    L1 = axpy(L, h, tb)
    return _rotate_jolt(q, mul(J, L1), h), L1


# --- PhysX ------------------------------------------------------------------------------


@inner
def _rotate_physx(q, w, h):
    """``integrateCore``: ``θ = min(|ω|, 1e7)`` along ``ω``, ``q1 = normalize(Q(ω h) ⊗ q0)``;
    no turn and no normalisation when ``|ω|² = 0``."""
    n2 = dot(w, w)
    if n2 == 0.0:
        return q
    n = math.sqrt(n2)
    if n > 1e7:
        w = scale(w, 1e7 / n)
    return advance_attitude(q, w, h)


@held("physx_gyroscopic")
@inner
def step_physx_gyroscopic(q, L, J, I, tb, h):
    """The torque first (``BodySim::updateForces``), then Jolt's gyroscopic formula on the
    solver body (``copyToSolverBodyData``) at ``R0``, then the rotation."""
    L1 = jolt_momentum(axpy(L, h, tb), J, h)
    return _rotate_physx(q, mul(J, L1), h), L1


@held("physx_no_gyroscopic")
@inner
def step_physx_no_gyroscopic(q, L, J, I, tb, h):
    """PhysX's default: the torque, then the rotation."""
    L1 = axpy(L, h, tb)
    return _rotate_physx(q, mul(J, L1), h), L1


# --- Bullet (btRigidBody in btDiscreteDynamicsWorld) -------------------------------------


@inner
def _bullet(q, w, J, I, tb, h, dw_gyro):
    """``ω1 = ω0 + h J_w τ + Δω_g`` (``writeBackBodies``), then ``integrateTransform``."""
    w1 = add(axpy(w, h, mul(J, tb)), dw_gyro)
    return rotate_bullet(q, w1, h), mul(I, w1)


@held("bullet_explicit")
@inner
def step_bullet_explicit(q, L, J, I, tb, h):
    """``computeGyroscopicForceExplicit``: ``g = ω × I_w ω``, clamped to ``|g| <= 100``
    (``m_maxGyroscopicForce``), ``Δω_g = -h J_w g``."""
    w = mul(J, L)
    g = cross(w, mul(I, w))
    gg = dot(g, g)
    if gg > 100.0 * 100.0:
        g = scale(g, 100.0 / math.sqrt(gg))
    return _bullet(q, w, J, I, tb, h, scale(mul(J, g), -h))


@held("bullet_implicit_world")
@inner
def step_bullet_implicit_world(q, L, J, I, tb, h):
    """``computeGyroscopicImpulseImplicit_World``: one Newton step in world components with
    ``I_w`` built from ``R0``."""
    w = mul(J, L)
    w_w = qrotate(q, w)
    w1 = newton_world(q, w_w, I, h)
    dw = to_body(q, (w1[0] - w_w[0], w1[1] - w_w[1], w1[2] - w_w[2]))
    return _bullet(q, w, J, I, tb, h, dw)


@held("bullet_implicit_body")
@inner
def step_bullet_implicit_body(q, L, J, I, tb, h):
    """``computeGyroscopicImpulseImplicit_Body`` (Bullet's default flag): one Newton step of
    body-frame implicit Euler at ``R0``."""
    w = mul(J, L)
    w1 = newton_body(w, I, h)
    return _bullet(q, w, J, I, tb, h, (w1[0] - w[0], w1[1] - w[1], w1[2] - w[2]))


@held("bullet_no_gyroscopic")
@inner
def step_bullet_no_gyroscopic(q, L, J, I, tb, h):
    """No gyroscopic flag: the torque, then ``integrateTransform``."""
    return _bullet(q, mul(J, L), J, I, tb, h, (0.0, 0.0, 0.0))


# --- ODE --------------------------------------------------------------------------------


@held("ode_gyroscopic")
@inner
def step_ode_gyroscopic(q, L, J, I, tb, h):
    """ODE's default: ``ω1 = (I_w - h [L0]×)⁻¹ L0 + h J_w τ`` at ``R0``, then the default
    infinitesimal rotation ``q1 = normalize(q0 + ½ h (0, ω1) ⊗ q0)`` (``dxStepBody``)."""
    w1 = axpy(ode_linearised(L, I, h), h, mul(J, tb))
    return rotate_first_order(q, w1, h), mul(I, w1)


@held("ode_no_gyroscopic")
@inner
def step_ode_no_gyroscopic(q, L, J, I, tb, h):
    """``dBodySetGyroscopicMode(b, 0)``: the torque only, then the infinitesimal rotation."""
    w1 = axpy(mul(J, L), h, mul(J, tb))
    return rotate_first_order(q, w1, h), mul(I, w1)


# --- Bepu v2 ----------------------------------------------------------------------------


@inner
def _bepu_pose(q, L, J, tb, h):
    """The user callback's torque (``ω_a = ω0 + h J_w(R0) τ``), then ``q1 = normalize(Q(ω_a
    h) ⊗ q0)``, skipped when ``|ω_a| <= 1e-15``. Returns ``q1`` and ``L_a = I ω_a`` (body
    components at ``R0``)."""
    La = axpy(L, h, tb)
    w = mul(J, La)
    if math.sqrt(dot(w, w)) <= 1e-15:
        return q, La
    return advance_attitude(q, w, h), La


@held("bepu_nonconserving")
@inner
def step_bepu_nonconserving(q, L, J, I, tb, h):
    """``AngularIntegrationMode.Nonconserving``: ``ω`` is kept through the pose update."""
    return _bepu_pose(q, L, J, tb, h)


@held("bepu_conserve_momentum")
@inner
def step_bepu_conserve_momentum(q, L, J, I, tb, h):
    """``ConserveMomentum``: world ``L = I_w(R0) ω_a`` kept across the pose update,
    ``ω ← J_w(R1) L``."""
    q1, La = _bepu_pose(q, L, J, tb, h)
    return q1, to_body(q1, qrotate(q, La))


@held("bepu_conserve_momentum_gyroscopic")
@inner
def step_bepu_conserve_momentum_gyroscopic(q, L, J, I, tb, h):
    """``ConserveMomentumWithGyroscopicTorque`` as its code reads: at ``R1``, ``w0 = R1ᵀ
    ω_a``, ``r = h (I w0) × w0``, ``M = I + h ([w0]× I - [I w0]×)`` applied as a row vector,
    ``w1 = w0 - Mᵀ⁻¹ r``. To first order ``w1 = w0 + h J (w0 × I w0)``: Euler's equation
    with the opposite sign (:mod:`tumble.engines` says what was checked)."""
    q1, La = _bepu_pose(q, L, J, tb, h)
    w0 = to_body(q1, qrotate(q, mul(J, La)))
    r = scale(cross(mul(I, w0), w0), h)
    dw = solve3(transposed(catto_jacobian(w0, I, h)), r)
    return q1, mul(I, (w0[0] - dw[0], w0[1] - dw[1], w0[2] - dw[2]))


# --- Avian (three eras, 6 sub-steps) ----------------------------------------------------

AVIAN_SUBSTEPS = 6


@held("avian_explicit")
@inner
def step_avian_explicit(q, L, J, I, tb, h):
    """Era 1 (bevy_xpbd, avian v0.1): per sub-step ``hs = h/6``, ``ω += hs J_w (τ - ω ×
    I_w ω)`` at the current pose, then ``q ← normalize(q + (0, ω hs/2) ⊗ q + (q_w hs/2)
    q)``: the quaternion derivative with a spurious real part (fixed by PR 488)."""
    hs = h / AVIAN_SUBSTEPS
    tw = qrotate(q, tb)
    w = qrotate(q, mul(J, L))
    for _ in range(AVIAN_SUBSTEPS):
        wb = to_body(q, w)
        ab = mul(J, add(to_body(q, tw), cross(mul(I, wb), wb)))
        w = axpy(w, hs, qrotate(q, ab))
        d = qmul((0.0, 0.5 * hs * w[0], 0.5 * hs * w[1], 0.5 * hs * w[2]), q)
        f = 1.0 + 0.5 * hs * q[0]
        q = qnormalize((f * q[0] + d[0], f * q[1] + d[1], f * q[2] + d[2], f * q[3] + d[3]))
    return q, mul(I, to_body(q, w))


@held("avian_implicit")
@inner
def step_avian_implicit(q, L, J, I, tb, h):
    """Era 2 (PR 420, v0.2-v0.3, with PR 488's rotation): per sub-step, one Newton step of
    body-frame implicit Euler at the current pose plus ``hs J_w τ``, then ``q ←
    normalize(Q(ω hs) ⊗ q)``."""
    hs = h / AVIAN_SUBSTEPS
    tw = qrotate(q, tb)
    w = qrotate(q, mul(J, L))
    for _ in range(AVIAN_SUBSTEPS):
        wb = to_body(q, w)
        wb1 = axpy(newton_body(wb, I, hs), hs, mul(J, to_body(q, tw)))
        w = qrotate(q, wb1)
        q = advance_attitude(q, wb1, hs)
    return q, mul(I, to_body(q, w))


@held("avian_jolt")
@inner
def step_avian_jolt(q, L, J, I, tb, h):
    """Era 3 (PR 738, 745, 747; v0.4): the torque increment ``hs J_w(R_step) τ`` per
    sub-step, then Jolt's gyroscopic formula at the sub-step's pose ``Δ ⊗ R_step``, then
    ``Δ ← Q(ω hs) ⊗ Δ``; after the sub-steps ``q1 = normalize(Δ ⊗ q0)``."""
    hs = h / AVIAN_SUBSTEPS
    dw = qrotate(q, scale(mul(J, tb), hs))
    w = qrotate(q, mul(J, L))
    d = (1.0, 0.0, 0.0, 0.0)
    for _ in range(AVIAN_SUBSTEPS):
        w = add(w, dw)
        qs = qmul(d, q)
        w = qrotate(qs, mul(J, jolt_momentum(mul(I, to_body(qs, w)), J, hs)))
        d = qmul(rotvec_to_q(scale(w, hs)), d)
    q1 = qnormalize(qmul(d, q))
    return q1, mul(I, to_body(q1, w))


# --- MuJoCo (free joint) ----------------------------------------------------------------


@inner
def _mujoco_force(w, I, tb):
    """The rotational rows of MuJoCo's ``qfrc_smooth - qfrc_bias`` for a free joint:
    ``τ_b - ω_b × I ω_b`` (the RNE bias force, explicit)."""
    g = cross(w, mul(I, w))
    return (tb[0] - g[0], tb[1] - g[1], tb[2] - g[2])


@held("mujoco_euler")
@inner
def step_mujoco_euler(q, L, J, I, tb, h):
    """``mj_Euler``: ``ω_b1 = ω_b0 + h J (τ_b - ω_b0 × I ω_b0)``, then ``q1 = normalize(q0)
    ⊗ Q(ω_b1 h)`` (semi-implicit Euler, body frame)."""
    w = mul(J, L)
    w1 = axpy(w, h, mul(J, _mujoco_force(w, I, tb)))
    return rotate_mujoco(q, w1, h), mul(I, w1)


@held("mujoco_implicit")
@inner
def step_mujoco_implicit(q, L, J, I, tb, h):
    """``mj_implicit`` (and ``implicitfast`` for a free body since 3.11): ``ω_b1 = ω_b0 + h
    (I + h ([ω]× I - [I ω]×))⁻¹ (τ_b - ω × I ω)``, then MuJoCo's rotation."""
    w = mul(J, L)
    a = solve3(catto_jacobian(w, I, h), _mujoco_force(w, I, tb))
    w1 = axpy(w, h, a)
    return rotate_mujoco(q, w1, h), mul(I, w1)


@inner
def _mujoco_slope(q, w, J, I, model, b, t):
    """``qacc`` at a stage state: the model's body torque there, minus the bias force."""
    kinds, P, fn = model
    tb = body_torque(kinds, P, fn, b, t, qnormalize(q), mul(I, w), J, I)
    return mul(J, _mujoco_force(w, I, tb))


@inner
def _dexp_inverse(theta, w):
    """``dexp⁻¹(θ) ω = J_r⁻¹(θ) ω = ω + ½ θ × ω + c θ × (θ × ω)``, ``c = 1/t² - (1 + cos
    t)/(2 t sin t)`` (:func:`tumble._kernels.rotation.so3_jacobian_inverse`): the body rate
    whose exponential's derivative is ``ω`` at ``exp(θ)``."""
    return mat_vec(so3_jacobian_inverse(theta, 1.0), w)


@staged("mujoco_rk4")
@inner
def step_mujoco_rk4(q, L, J, I, model, b, t, h):
    """``mj_RungeKutta`` of MuJoCo 4.0 (classic tableau, Runge-Kutta-Munthe-Kaas on the
    free joint's rotation): stage ``i`` at ``θ_i = h Σ_j A_ij k_j``, pose ``normalize(q0) ⊗
    exp(θ_i)``, velocity ``ω_i = ω0 + h Σ_j A_ij a_j`` with ``a_j`` the model's torque minus
    the bias force there, and ``k_i = dexp⁻¹(θ_i) ω_i``; the result ``q1 = normalize(q0) ⊗
    exp(h Σ B_j k_j)``, ``ω1 = ω0 + h Σ B_j a_j``. Fourth order (MuJoCo 3.x summed the raw
    ``ω_j``: second order)."""
    w1 = mul(J, L)
    a1 = _mujoco_slope(q, w1, J, I, model, b, t)
    th2 = scale(w1, 0.5 * h)
    w2 = axpy(w1, 0.5 * h, a1)
    k2 = _dexp_inverse(th2, w2)
    a2 = _mujoco_slope(rotate_mujoco(q, th2, 1.0), w2, J, I, model, b, t + 0.5 * h)
    th3 = scale(k2, 0.5 * h)
    w3 = axpy(w1, 0.5 * h, a2)
    k3 = _dexp_inverse(th3, w3)
    a3 = _mujoco_slope(rotate_mujoco(q, th3, 1.0), w3, J, I, model, b, t + 0.5 * h)
    th4 = scale(k3, h)
    w4 = axpy(w1, h, a3)
    k4 = _dexp_inverse(th4, w4)
    a4 = _mujoco_slope(rotate_mujoco(q, th4, 1.0), w4, J, I, model, b, t + h)
    s, m = 1.0 / 6.0, 1.0 / 3.0
    kbar = add(add(scale(w1, s), scale(k2, m)), add(scale(k3, m), scale(k4, s)))
    abar = add(add(scale(a1, s), scale(a2, m)), add(scale(a3, m), scale(a4, s)))
    return rotate_mujoco(q, kbar, h), mul(I, axpy(w1, h, abar))


# --- Rapier (4 sub-steps) ---------------------------------------------------------------

RAPIER_SUBSTEPS = 4


@held("rapier_gyroscopic")
@inner
def step_rapier_gyroscopic(q, L, J, I, tb, h):
    """Rapier 0.35 (staged island solver), per sub-step ``hs = h/4``: ``ω += hs J_w(R_step)
    τ``; Jolt's gyroscopic formula at the sub-step's pose; ``|ω| <= (π/4)/h`` (the whole
    step's ``h``); ``q ← normalize((1, ω hs/2) ⊗ q)`` (``integrate_linearized``)."""
    hs = h / RAPIER_SUBSTEPS
    dw = qrotate(q, scale(mul(J, tb), hs))
    w = qrotate(q, mul(J, L))
    cap = 0.25 * math.pi / abs(h)
    for _ in range(RAPIER_SUBSTEPS):
        w = add(w, dw)
        w = qrotate(q, mul(J, jolt_momentum(mul(I, to_body(q, w)), J, hs)))
        n = math.sqrt(dot(w, w))
        if n > cap:
            w = scale(w, cap / n)
        q = qnormalize(qmul((1.0, 0.5 * hs * w[0], 0.5 * hs * w[1], 0.5 * hs * w[2]), q))
    return q, mul(I, to_body(q, w))


# --- Godot (GodotPhysics3D) -------------------------------------------------------------


@held("godot")
@inner
def step_godot(q, L, J, I, tb, h):
    """``GodotBody3D::integrate_forces`` then ``integrate_velocities``: ``ω1 = ω0 + h J_w
    τ`` (no gyroscopic term), then the basis turned about ``ω1`` by ``|ω1| h`` and
    orthonormalised; no turn when ``|ω1| < 1e-5`` (``is_zero_approx``)."""
    L1 = axpy(L, h, tb)
    w = mul(J, L1)
    if math.sqrt(dot(w, w)) < 1e-5:
        return q, L1
    return advance_attitude(q, w, h), L1

"""One step of each engine's rotation update, worked by hand in NumPy: the oracle of
``tests/test_engines.py``.

Written from the engines' formulas as ``docs/engines.md`` states them, in the engines' own
terms (world-frame angular velocity, 3×3 world inertia tensors built from the pose, the
engines' order of operations, the world-frame quaternion products), not from tumble's kernels,
which work in body components at the step's start. Every function maps
``(q0, omega0, J, tau, h)`` (body-to-world quaternion ``w, x, y, z``, world angular velocity,
principal inverse moments, world torque held over the step, step) to ``(q1, omega1)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

FLT_EPSILON = 1.1920928955078125e-07


def qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product ``p ⊗ q``."""
    pw, pv, qw, qv = p[0], p[1:], q[0], q[1:]
    return np.concatenate([[pw * qw - pv @ qv], pw * qv + qw * pv + np.cross(pv, qv)])


def qexp(phi: np.ndarray) -> np.ndarray:
    """Unit quaternion of the rotation vector ``phi`` (from SciPy)."""
    return Rotation.from_rotvec(phi).as_quat(scalar_first=True)


def unit(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q)


def matrix(q: np.ndarray) -> np.ndarray:
    return Rotation.from_quat(q, scalar_first=True).as_matrix()


def skew(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def world(q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``R diag(d) Rᵀ``: a world inertia or inverse inertia tensor at pose ``q``."""
    R = matrix(q)
    return R @ np.diag(d) @ R.T


def jolt_gyro(q, w, J, h):
    """Jolt's ``ApplyGyroscopicForceInternal`` at pose ``q``: principal-frame ``L' = L - h
    ω_p × L`` rescaled to ``|L|`` (0 if ``L' = 0``)."""
    R = matrix(q)
    wp = R.T @ w
    L = wp / J
    Lp = L - h * np.cross(wp, L)
    n = np.linalg.norm(Lp)
    Lp = Lp * (np.linalg.norm(L) / n) if n > 0 else np.zeros(3)
    return R @ (J * Lp)


def rotate_world(q, w, h):
    return unit(qmul(qexp(w * h), q))


# --- one step per engine --------------------------------------------------------------


def jolt(q, w, J, tau, h, gyroscopic):
    if gyroscopic:
        w = jolt_gyro(q, w, J, h)
    w = w + h * world(q, J) @ tau
    if np.linalg.norm(w * h) > 1e-6:
        q = rotate_world(q, w, h)
    return q, w


def physx(q, w, J, tau, h, gyroscopic):
    w = w + h * world(q, J) @ tau
    if gyroscopic:
        w = jolt_gyro(q, w, J, h)
    theta = np.linalg.norm(w)
    if theta > 0:
        q = rotate_world(q, w * min(theta, 1e7) / theta, h)
    return q, w


def bullet_integrate_transform(q, w, h):
    """``btTransformUtil::integrateTransform``, exponential-map branch."""
    rate = np.linalg.norm(w) if w @ w > FLT_EPSILON else 0.0
    if rate * h > math.pi / 4:
        rate = (math.pi / 4) / h
    if rate < 0.001:
        axis = w * (0.5 * h - h**3 * 0.020833333333333333 * rate * rate)
    else:
        axis = w * (math.sin(0.5 * rate * h) / rate)
    return unit(qmul(np.concatenate([[math.cos(0.5 * rate * h)], axis]), q))


def bullet(q, w, J, tau, h, mode):
    Iw = world(q, 1.0 / J)
    Jw = world(q, J)
    if mode == "explicit":
        g = np.cross(w, Iw @ w)
        if np.linalg.norm(g) > 100.0:
            g = g * 100.0 / np.linalg.norm(g)
        dw = -h * Jw @ g
    elif mode == "implicit_world":
        f = h * np.cross(w, Iw @ w)
        Df = Iw + h * (skew(w) @ Iw - skew(Iw @ w))
        dw = -np.linalg.solve(Df, f)
    elif mode == "implicit_body":
        R = matrix(q)
        wb = R.T @ w
        I = np.diag(1.0 / J)
        f = h * np.cross(wb, I @ wb)
        Df = I + h * (skew(wb) @ I - skew(I @ wb))
        dw = R @ (wb - np.linalg.solve(Df, f)) - w
    else:
        dw = np.zeros(3)
    w1 = w + h * Jw @ tau + dw
    return bullet_integrate_transform(q, w1, h), w1


def ode(q, w, J, tau, h, gyroscopic):
    Iw = world(q, 1.0 / J)
    Jw = world(q, J)
    torque = tau.copy()
    if gyroscopic:
        L = Iw @ w
        tilde = Iw - h * skew(L)
        torque = torque + (Iw @ np.linalg.inv(tilde) - np.eye(3)) @ L / h
    w1 = w + h * Jw @ torque
    dq = 0.5 * h * qmul(np.concatenate([[0.0], w1]), q)
    return unit(q + dq), w1


def bepu(q, w, J, tau, h, mode):
    wa = w + h * world(q, J) @ tau
    q1 = rotate_world(q, wa, h) if np.linalg.norm(wa) > 1e-15 else q
    if mode == "momentum":
        return q1, world(q1, J) @ (world(q, 1.0 / J) @ wa)
    if mode == "gyroscopic":
        # The code's row-vector algebra: v·M is Mᵀ v, so r·M⁻¹ = M⁻ᵀ r.
        R1 = matrix(q1)
        w0 = R1.T @ wa
        I = np.diag(1.0 / J)
        L = I @ w0
        r = h * np.cross(L, w0)
        M = I + h * (skew(w0) @ I - skew(L))
        return q1, R1 @ (w0 - r @ np.linalg.inv(M))
    return q1, wa


def avian(q, w, J, tau, h, era, substeps=6):
    hs = h / substeps
    I = np.diag(1.0 / J)
    if era == 3:
        dw = hs * world(q, J) @ tau
        d = np.array([1.0, 0.0, 0.0, 0.0])
        for _ in range(substeps):
            w = w + dw
            w = jolt_gyro(qmul(d, q), w, J, hs)
            d = qmul(qexp(w * hs), d)
        return unit(qmul(d, q)), w
    for _ in range(substeps):
        if era == 1:
            Iw = world(q, 1.0 / J)
            w = w + hs * world(q, J) @ (tau - np.cross(w, Iw @ w))
            real_part_bug = np.concatenate([[q[0] * hs / 2], w * hs / 2])
            q = unit(q + qmul(real_part_bug, q))
        else:
            R = matrix(q)
            wb = R.T @ w
            f = hs * np.cross(wb, I @ wb)
            Df = I + hs * (skew(wb) @ I - skew(I @ wb))
            w = w + hs * world(q, J) @ tau + R @ (-np.linalg.solve(Df, f))
            q = rotate_world(q, w, hs)
    return q, w


def mujoco_integrate(q, wb, h):
    """``mju_quatIntegrate``: ``normalize(q) ⊗ Q(ω_b h)``, body frame."""
    return qmul(unit(q), qexp(wb * h))


def mujoco_qacc(q, wb, J, tau):
    I = 1.0 / J
    return J * (matrix(unit(q)).T @ tau - np.cross(wb, I * wb))


def dexp_inverse(theta: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``dexp⁻¹(θ) ω`` by the closed form of ``θ``'s angle, to first order at ``θ = 0``."""
    t = np.linalg.norm(theta)
    if t == 0:
        return w
    c = 1 / t**2 - (1 + math.cos(t)) / (2 * t * math.sin(t))
    return w + 0.5 * np.cross(theta, w) + c * np.cross(theta, np.cross(theta, w))


def mujoco(q, w, J, tau, h, integrator):
    wb = matrix(q).T @ w
    if integrator == "euler":
        wb1 = wb + h * mujoco_qacc(q, wb, J, tau)
        q1 = mujoco_integrate(q, wb1, h)
    elif integrator == "implicit":
        I = np.diag(1.0 / J)
        M = I + h * (skew(wb) @ I - skew(I @ wb))
        wb1 = wb + h * np.linalg.solve(M, I @ mujoco_qacc(q, wb, J, tau))
        q1 = mujoco_integrate(q, wb1, h)
    else:
        # MuJoCo 4.0: Runge-Kutta-Munthe-Kaas, each stage's body rate mapped by dexp⁻¹.
        A = [[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]]
        B = [1 / 6, 1 / 3, 1 / 3, 1 / 6]
        rates, acc = [], []
        for i in range(4):
            theta = h * sum((a * k for a, k in zip(A[i], rates, strict=False)), np.zeros(3))
            wi = wb + h * sum((a * x for a, x in zip(A[i], acc, strict=False)), np.zeros(3))
            rates.append(dexp_inverse(theta, wi))
            acc.append(mujoco_qacc(mujoco_integrate(q, theta, 1.0), wi, J, tau))
        q1 = mujoco_integrate(q, sum(b * k for b, k in zip(B, rates, strict=True)), h)
        wb1 = wb + h * sum(b * a for b, a in zip(B, acc, strict=True))
    return q1, matrix(q1) @ wb1


def rapier(q, w, J, tau, h, substeps=4):
    hs = h / substeps
    dw = hs * world(q, J) @ tau
    cap = (math.pi / 4) / h
    for _ in range(substeps):
        w = w + dw
        w = jolt_gyro(q, w, J, hs)
        if np.linalg.norm(w) > cap:
            w = w * cap / np.linalg.norm(w)
        q = unit(qmul(np.concatenate([[1.0], w * hs / 2]), q))
    return q, w


def godot(q, w, J, tau, h):
    """Godot turns a 3×3 basis and orthonormalises it (Gram-Schmidt on its columns)."""
    w1 = w + h * world(q, J) @ tau
    if np.linalg.norm(w1) < 1e-5:
        return q, w1
    B = Rotation.from_rotvec(w1 * h).as_matrix() @ matrix(q)
    x, y, z = B[:, 0], B[:, 1], B[:, 2]
    x = x / np.linalg.norm(x)
    y = y - (x @ y) * x
    y = y / np.linalg.norm(y)
    z = z - (x @ z) * x - (y @ z) * y
    z = z / np.linalg.norm(z)
    q1 = Rotation.from_matrix(np.column_stack([x, y, z])).as_quat(scalar_first=True)
    return q1, w1


STEPS = {
    "jolt_gyroscopic": lambda *a: jolt(*a, True),
    "jolt_no_gyroscopic": lambda *a: jolt(*a, False),
    "bullet_explicit": lambda *a: bullet(*a, "explicit"),
    "bullet_implicit_world": lambda *a: bullet(*a, "implicit_world"),
    "bullet_implicit_body": lambda *a: bullet(*a, "implicit_body"),
    "bullet_no_gyroscopic": lambda *a: bullet(*a, "none"),
    "ode_gyroscopic": lambda *a: ode(*a, True),
    "ode_no_gyroscopic": lambda *a: ode(*a, False),
    "bepu_nonconserving": lambda *a: bepu(*a, "none"),
    "bepu_conserve_momentum": lambda *a: bepu(*a, "momentum"),
    "bepu_conserve_momentum_gyroscopic": lambda *a: bepu(*a, "gyroscopic"),
    "physx_gyroscopic": lambda *a: physx(*a, True),
    "physx_no_gyroscopic": lambda *a: physx(*a, False),
    "avian_explicit": lambda *a: avian(*a, 1),
    "avian_implicit": lambda *a: avian(*a, 2),
    "avian_jolt": lambda *a: avian(*a, 3),
    "mujoco_euler": lambda *a: mujoco(*a, "euler"),
    "mujoco_rk4": lambda *a: mujoco(*a, "rk4"),
    "mujoco_implicit": lambda *a: mujoco(*a, "implicit"),
    "rapier_gyroscopic": rapier,
    "godot": godot,
}
"""The hand-worked step of each replica, by method name."""

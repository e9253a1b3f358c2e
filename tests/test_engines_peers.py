"""The engine replicas against the engines themselves: MuJoCo and pybullet, one step from each
of 100 random states, to round-off.

Each engine is stepped once from a random state (unit quaternion, ``|omega| <= 10`` rad/s,
principal moments of a random mass distribution, ``h`` in 1/30, 1/60, 1/240 s) and its new
attitude and angular velocity are compared with two things:

* the update written here in NumPy, from the engine's source (``docs/engines.md`` and the
  notes cite the lines): when the engine changes, this test says so before the replica does;
* the replica of :mod:`tumble.engines` run by :func:`tumble.rigid.step`.

MuJoCo: one body with a free joint (``qvel`` angular part in the **body** frame), inertial
frame at the body origin with ``iquat`` identity, no gravity, no damping.
``Euler -> mujoco_euler``, ``RK4 -> mujoco_rk4``, ``implicit``, ``implicitfast`` (and
``discrete`` where it exists) ``-> mujoco_implicit``: for a standalone free body MuJoCo
>= 3.11 rebuilds the free body's 6x6 block with the exact gyroscopic derivative under
``implicitfast`` too, and ``discrete`` gives such bodies the same treatment.

pybullet (built with ``BT_USE_DOUBLE_PRECISION``; quaternions ``x, y, z, w``; angular
velocity in the **world** frame): ``createMultiBody`` builds a ``btMultiBody`` (Featherstone)
unless ``useMaximalCoordinates=1`` (then a ``btRigidBody``, whose default gyroscopic flag is
``BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_BODY``: ``bullet_implicit_body``). The ``btMultiBody``
base adds ``omega_b x I omega_b`` explicitly to its bias force (``m_useGyroTerm``) and takes
a forward-Euler velocity step, which is ``bullet_explicit`` while that replica's force clamp
(``|g| <= 100``) is inactive: the states here keep ``|g| <= 50``. Both bodies then turn by
Bullet's world-frame exponential map from the new ``omega``. Angular damping is set to 0
(``btMultiBody`` defaults to ``0.04f``, ``I omega (k + k |omega|)`` in the bias force);
``numSubSteps = 0`` makes one ``stepSimulation`` one step of ``h``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from oracles import cover_distance, matrix
from tumble import rigid

N_STATES = 100
OMEGA_MAX = 10.0
STEPS = (1.0 / 30.0, 1.0 / 60.0, 1.0 / 240.0)
#: One step is a few dozen float64 operations (and one 3x3 solve, condition number below
#: 20 for these states) on quantities of size 1 to 10: engines, NumPy and replicas
#: agree to a few 1e-15 (measured: 1.2e-15 at worst). 1e-12 leaves room for other platforms'
#: libm and still catches any difference of formula (the smallest seen, a truncated dexp⁻¹
#: series in MuJoCo's RK4, is 4e-10).
TOL = 1e-12
#: Bullet's ``m_maxGyroscopicForce``: ``bullet_explicit`` clamps ``|omega x I_w omega|`` to it.
BULLET_MAX_GYRO = 100.0
#: Bullet's per-step rotation limit (``ANGULAR_MOTION_THRESHOLD``, rad).
BULLET_MAX_ANGLE = 0.25 * np.pi


# --- states ---------------------------------------------------------------------------------


@functools.cache
def states(
    seed: int = 20261129, omega_max: float = OMEGA_MAX, steps: tuple[float, ...] = STEPS
) -> tuple[tuple[Any, ...], ...]:
    """``(q, omega_world, inertia, h)`` for :data:`N_STATES` random states, ``h`` cycling
    through ``steps``.

    Principal moments ``(b + c, a + c, a + b)`` of second moments ``a, b, c`` log-uniform in
    ``[0.02, 1]`` (thin rods, flat plates, near-spherical bodies: ratios 1.2 to 18 here),
    scaled to a largest moment of 1, so that ``|omega x I omega| <= |omega|² / 2 <= 50``.
    State 0 has ``omega = 0`` and state 1 ``|omega| = 1e-4`` rad/s (Bullet's small-angle
    branch, below 0.001 rad/s); the others ``|omega|`` uniform in ``[0, omega_max]``.
    """
    rng = np.random.default_rng(seed)
    out = []
    for i in range(N_STATES):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        a, b, c = np.exp(rng.uniform(np.log(0.02), 0.0, 3))
        inertia = np.array([b + c, a + c, a + b])
        inertia /= inertia.max()
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        speed = (0.0, 1e-4)[i] if i < 2 else rng.uniform(0.0, omega_max)
        out.append((q, speed * direction, inertia, steps[i % len(steps)]))
    return tuple(out)


def close(q_engine, w_engine, q_other, w_other, omega0, what: str) -> None:
    """Assert agreement to :data:`TOL`: quaternions up to sign, ``omega`` relative to
    ``max(1, |omega0|)``; no NaN."""
    assert np.all(np.isfinite(q_other)), what
    assert np.all(np.isfinite(w_other)), what
    dq = cover_distance(q_engine, q_other)
    dw = np.abs(w_engine - w_other).max() / max(1.0, np.linalg.norm(omega0))
    message = f"{what}: |dq| = {dq:.3g}, |domega| / |omega0| = {dw:.3g}"
    assert dq <= TOL, message
    assert dw <= TOL, message


def replica(method: str, q, omega_world, inertia, h):
    """One step of the registry method ``method`` (world omega in and out)."""
    # A zero torque: the step the replica's torque tests compile already (no second loop).
    return rigid.step(q, omega_world, 1.0 / inertia, h, method, torque=np.zeros(3))


# --- the engines' updates, in NumPy ---------------------------------------------------------


def qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of scalar-first quaternions."""
    return np.concatenate(
        [[a[0] * b[0] - a[1:] @ b[1:]], a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:])]
    )


def skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def alpha_body(w: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """Euler's equations without torque, body frame: ``-I⁻¹ (omega × I omega)``."""
    return -np.cross(w, inertia * w) / inertia


def newton_step(w: np.ndarray, inertia: np.ndarray, h: float) -> np.ndarray:
    """One linearly implicit step of ``I omega' = -omega × I omega`` from ``w`` (body frame):
    ``w + h (I + h ([w]× I - [I w]×))⁻¹ (-w × I w)``."""
    I = np.diag(inertia)
    return w + h * np.linalg.solve(I + h * (skew(w) @ I - skew(inertia * w)), -np.cross(w, I @ w))


def mujoco_quat_integrate(q: np.ndarray, w_body: np.ndarray, h: float) -> np.ndarray:
    """``mju_quatIntegrate``: ``normalize(q) ⊗ (cos θ/2, n sin θ/2)``, ``θ = h |w|``, ``n`` the
    unit axis (``(1, 0, 0)`` for ``|w| < 1e-15``)."""
    speed = np.linalg.norm(w_body)
    axis = w_body / speed if speed >= 1e-15 else np.array([1.0, 0.0, 0.0])
    half = 0.5 * h * speed
    return qmul(q / np.linalg.norm(q), np.concatenate([[np.cos(half)], np.sin(half) * axis]))


def dexp_inv(theta: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rate of the body-frame rotation vector ``theta`` of ``R0 exp([theta]×)`` at body
    angular velocity ``w``: ``w + ½ θ × w + c θ × (θ × w)``,
    ``c = 1/t² - (1 + cos t) / (2 t sin t)`` (series ``1/12 + t²/720`` for small ``t``)."""
    t = np.linalg.norm(theta)
    c = 1 / 12 + t * t / 720 if t < 1e-3 else 1 / t**2 - (1 + np.cos(t)) / (2 * t * np.sin(t))
    return w + 0.5 * np.cross(theta, w) + c * np.cross(theta, np.cross(theta, w))


def mujoco_rk4(q: np.ndarray, w: np.ndarray, inertia: np.ndarray, h: float):
    """MuJoCo 4.0.0's RK4 of a free body: classic tableau on ``omega_b``; the rotation is
    Runge-Kutta-Munthe-Kaas, each stage's rate ``k_i = dexp⁻¹(θ_i, omega_i)`` at its stage
    angle ``θ_i = h Σ_j A_ij k_j``, and ``q1 = normalize(q0) ⊗ exp(h Σ B_i k_i)``."""
    A = ((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0))
    B = (1 / 6, 1 / 3, 1 / 3, 1 / 6)
    k: list[np.ndarray] = []
    acc: list[np.ndarray] = []
    for row in A:
        theta = h * sum((a * kj for a, kj in zip(row, k, strict=True)), np.zeros(3))
        wi = w + h * sum((a * aj for a, aj in zip(row, acc, strict=True)), np.zeros(3))
        k.append(dexp_inv(theta, wi))
        acc.append(alpha_body(wi, inertia))
    w1 = w + h * sum(b * aj for b, aj in zip(B, acc, strict=True))
    return mujoco_quat_integrate(q, sum(b * kj for b, kj in zip(B, k, strict=True)), h), w1


def mujoco_numpy(integrator: str, q, w_body, inertia, h):
    """MuJoCo's step of a free body in NumPy: ``(q1, omega_b1)``."""
    if integrator == "RK4":
        return mujoco_rk4(q, w_body, inertia, h)
    if integrator == "Euler":
        w1 = w_body + h * alpha_body(w_body, inertia)
    else:
        w1 = newton_step(w_body, inertia, h)
    return mujoco_quat_integrate(q, w1, h), w1


def bullet_exp_map(q: np.ndarray, w: np.ndarray, h: float) -> np.ndarray:
    """Bullet's world-frame exponential map (``btTransformUtil::integrateTransform``,
    ``btMultiBody::stepPositionsMultiDof``): ``normalize((cos(φ h/2), w s) ⊗ q)`` with
    ``φ = min(|w|, (π/4)/h)``, ``s = sin(φ h/2)/φ`` (Taylor ``h/2 - h³ φ²/48`` below 0.001
    rad/s, with Bullet's constant 0.020833333333)."""
    phi = min(np.linalg.norm(w), BULLET_MAX_ANGLE / h)
    if phi < 1e-3:
        s = 0.5 * h - h**3 * 0.020833333333 * phi * phi
    else:
        s = np.sin(0.5 * phi * h) / phi
    q1 = qmul(np.concatenate([[np.cos(0.5 * phi * h)], s * w]), q)
    return q1 / np.linalg.norm(q1)


def pybullet_numpy(body: str, q, w, inertia, h):
    """pybullet's step of a free body in NumPy: ``(q1, omega1)``, world ``omega``.

    ``multibody``: ``omega1 = omega0 + h R0 (-(omega_b × I omega_b) / I)``
    (``computeAccelerationsArticulatedBodyAlgorithmMultiDof``, ``applyDeltaVeeMultiDof``);
    ``rigid``: ``omega1 = R0 newton_step(omega_b)`` (``computeGyroscopicImpulseImplicit_Body``).
    """
    R0 = matrix(q)
    wb = R0.T @ w
    w1 = (
        w + h * (R0 @ alpha_body(wb, inertia))
        if body == "multibody"
        else R0 @ newton_step(wb, inertia, h)
    )
    return bullet_exp_map(q, w1, h), w1


# --- MuJoCo ---------------------------------------------------------------------------------

MUJOCO_REPLICAS = {
    "Euler": "mujoco_euler",
    "RK4": "mujoco_rk4",
    "implicit": "mujoco_implicit",
    "implicitfast": "mujoco_implicit",
    "discrete": "mujoco_implicit",
}


@pytest.fixture(scope="module")
def mujoco():
    return pytest.importorskip("mujoco")


def mujoco_version(mujoco) -> tuple[int, ...]:
    return tuple(int(p) for p in mujoco.__version__.split(".")[:3])


def mujoco_step(mujoco, integrator: str, q, w_body, inertia, h):
    """One ``mj_step`` of a free body from ``(q, w_body)``: ``(q1, omega_b1)``."""
    diag = " ".join(repr(float(x)) for x in inertia)
    xml = f"""
    <mujoco>
      <option timestep="{float(h)!r}" gravity="0 0 0" integrator="{integrator}"/>
      <worldbody>
        <body>
          <freejoint/>
          <inertial pos="0 0 0" mass="1" diaginertia="{diag}"/>
        </body>
      </worldbody>
    </mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    # The model is what the replicas assume: inertia as given, principal frame at the body
    # origin, no damping, no armature.
    assert np.array_equal(m.body_inertia[1], inertia)
    assert np.array_equal(m.body_iquat[1], [1.0, 0.0, 0.0, 0.0])
    assert np.array_equal(m.body_ipos[1], np.zeros(3))
    assert not m.dof_damping.any()
    assert not m.dof_armature.any()
    d = mujoco.MjData(m)
    d.qpos[3:7] = q
    d.qvel[3:6] = w_body
    mujoco.mj_step(m, d)
    return d.qpos[3:7].copy(), d.qvel[3:6].copy()


def skip_unless_integrator(mujoco, integrator: str) -> None:
    if not hasattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper()):
        pytest.skip(f"mujoco {mujoco.__version__} has no {integrator} integrator")
    if integrator == "RK4" and mujoco_version(mujoco) < (4, 0, 0):
        pytest.skip("RK4 of ball and free joints is Munthe-Kaas only since mujoco 4.0.0")


@pytest.mark.parametrize("integrator", list(MUJOCO_REPLICAS))
def test_mujoco_step_is_the_documented_update(mujoco, integrator: str) -> None:
    skip_unless_integrator(mujoco, integrator)
    for q, w, inertia, h in states():
        w_body = matrix(q).T @ w
        q1, w1 = mujoco_step(mujoco, integrator, q, w_body, inertia, h)
        ref_q, ref_w = mujoco_numpy(integrator, q, w_body, inertia, h)
        close(q1, w1, ref_q, ref_w, w, f"mujoco {integrator} vs NumPy at h = {h:.4g}")


@pytest.mark.parametrize("integrator", list(MUJOCO_REPLICAS))
def test_mujoco_agrees_with_its_replica(mujoco, integrator: str) -> None:
    skip_unless_integrator(mujoco, integrator)
    method = MUJOCO_REPLICAS[integrator]
    for q, w, inertia, h in states():
        q1, w_body1 = mujoco_step(mujoco, integrator, q, matrix(q).T @ w, inertia, h)
        rq, rw = replica(method, q, w, inertia, h)
        close(q1, matrix(q1) @ w_body1, rq, rw, w, f"mujoco {integrator} vs {method}, h = {h:.4g}")


# --- pybullet -------------------------------------------------------------------------------

PYBULLET_REPLICAS = {"multibody": "bullet_explicit", "rigid": "bullet_implicit_body"}
#: ``getDynamicsInfo``'s body type (its 11th field) of each kind of body.
PYBULLET_BODY_TYPE = {"rigid": 1, "multibody": 2}


@pytest.fixture(scope="module")
def pybullet():
    pb = pytest.importorskip("pybullet")
    client = pb.connect(pb.DIRECT)
    yield pb, client
    pb.disconnect(physicsClientId=client)


def pybullet_step(pybullet, body: str, q, w, inertia, h):
    """One ``stepSimulation`` of a lone free body from ``(q, w)``: ``(q1, omega1)``, world
    ``omega``, scalar-first ``q``."""
    pb, client = pybullet
    kw = {"physicsClientId": client}
    pb.resetSimulation(**kw)
    pb.setGravity(0.0, 0.0, 0.0, **kw)
    pb.setTimeStep(h, **kw)
    pb.setPhysicsEngineParameter(numSubSteps=0, **kw)
    uid = pb.createMultiBody(
        baseMass=1.0,
        baseInertialFramePosition=[0.0, 0.0, 0.0],
        baseInertialFrameOrientation=[0.0, 0.0, 0.0, 1.0],
        useMaximalCoordinates=int(body == "rigid"),
        **kw,
    )
    pb.changeDynamics(
        uid,
        -1,
        mass=1.0,
        localInertiaDiagonal=[float(x) for x in inertia],
        linearDamping=0.0,
        angularDamping=0.0,
        **kw,
    )
    info = pb.getDynamicsInfo(uid, -1, **kw)
    assert info[10] == PYBULLET_BODY_TYPE[body]
    # A btRigidBody keeps 1/I and reports 1/(1/I): within an ulp or two of I. For it,
    # pybullet 3.2.7 also leaves the inertial frame of this answer uninitialised
    # (createMultiBody put the frame at the identity).
    np.testing.assert_allclose(info[2], inertia, rtol=4e-16, atol=0)
    if body == "multibody":
        assert np.array_equal(info[2], inertia)
        assert np.array_equal(info[3], [0.0, 0.0, 0.0])
        assert np.array_equal(info[4], [0.0, 0.0, 0.0, 1.0])
    pb.resetBasePositionAndOrientation(uid, [0.0, 0.0, 0.0], [*q[1:], q[0]], **kw)
    pb.resetBaseVelocity(uid, [0.0, 0.0, 0.0], [float(x) for x in w], **kw)
    pb.stepSimulation(**kw)
    _, xyzw = pb.getBasePositionAndOrientation(uid, **kw)
    _, w1 = pb.getBaseVelocity(uid, **kw)
    return np.array([xyzw[3], *xyzw[:3]]), np.array(w1)


def test_states_keep_bullets_explicit_clamp_off() -> None:
    """The premise of comparing the ``btMultiBody`` with ``bullet_explicit``."""
    for q, w, inertia, _ in states():
        wb = matrix(q).T @ w
        assert np.linalg.norm(np.cross(wb, inertia * wb)) <= 0.5 * BULLET_MAX_GYRO


@pytest.mark.parametrize("body", list(PYBULLET_REPLICAS))
def test_pybullet_step_is_the_documented_update(pybullet, body: str) -> None:
    for q, w, inertia, h in states():
        q1, w1 = pybullet_step(pybullet, body, q, w, inertia, h)
        ref_q, ref_w = pybullet_numpy(body, q, w, inertia, h)
        close(q1, w1, ref_q, ref_w, w, f"pybullet {body} vs NumPy at h = {h:.4g}")


@pytest.mark.parametrize("body", list(PYBULLET_REPLICAS))
def test_pybullet_agrees_with_its_replica(pybullet, body: str) -> None:
    method = PYBULLET_REPLICAS[body]
    for q, w, inertia, h in states():
        q1, w1 = pybullet_step(pybullet, body, q, w, inertia, h)
        rq, rw = replica(method, q, w, inertia, h)
        close(q1, w1, rq, rw, w, f"pybullet {body} vs {method} at h = {h:.4g}")


def test_pybullet_rotation_limit_agrees_with_its_replica(pybullet) -> None:
    """Fast spins (``|omega| h`` up to 2 rad at 30 Hz) through Bullet's π/4-per-step limit, which
    shortens the angle of ``Q`` without touching ``omega``: the ``btRigidBody`` against
    ``bullet_implicit_body``. (``bullet_explicit``'s force clamp engages at these speeds, and
    the ``btMultiBody`` has none, so it is not compared here.)"""
    limited = 0
    for q, w, inertia, h in states(seed=7, omega_max=60.0, steps=(STEPS[0],))[2:]:
        q1, w1 = pybullet_step(pybullet, "rigid", q, w, inertia, h)
        close(q1, w1, *pybullet_numpy("rigid", q, w, inertia, h), w, "pybullet rigid vs NumPy")
        rq, rw = replica("bullet_implicit_body", q, w, inertia, h)
        close(q1, w1, rq, rw, w, f"pybullet rigid vs bullet_implicit_body at h = {h:.4g}")
        limited += np.linalg.norm(w1) * h > BULLET_MAX_ANGLE
    assert limited >= N_STATES // 2

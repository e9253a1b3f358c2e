"""Replicas of the public physics engines' rotation updates, as ordinary tumble methods.

Each replica is a method of :data:`tumble.rigid.METHODS` named after its engine and setting
(``bullet_implicit_body``, ``mujoco_rk4``, ...): :func:`tumble.rigid.simulate`,
``tumble compare``, the lab and sweeps take it like any method. :data:`ENGINES` maps each name
to its :class:`Replica` record: the engine, the commit its update was read at, the files and
functions it comes from, what the update does to ``omega``, to the attitude and to the
inertia tensor in the engine's order within a step, which options it models, and the smallest
change that fixes it. ``docs/engines.md`` is the long form, with the scorecard.

What every replica models (``docs/engines.md``, "What a replica is"): one free body, the
engine's update over one step of its own length ``h`` (its sub-steps inside: Avian 6, Rapier
4), zero damping, the external torque at the start of the step, no velocity clamp other than
one that is part of the rotation update itself (Bullet's ``π/4`` per step, Rapier's
``(π/4)/h``; the body clamps Jolt 47 rad/s and PhysX 100 rad/s are above every scenario),
float64 arithmetic (Jolt, PhysX, Bepu, Godot and Rapier run float32 by default). The
replicas take no locked axis (a zero inverse moment is an :class:`~tumble.InputError`).

This module is data: it imports no numba. The compiled updates are in
:mod:`tumble._kernels.rigid.engine_steps`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tumble._errors import InputError
from tumble._validate import describe

__all__ = ["BY_ENGINE", "ENGINES", "Replica", "render_records"]

#: The fix of most engines: the article's momentum-first step (world ``L`` fixed, attitude
#: ``Q(J'L dt) Q(Omega dt)``), a drop-in of the same cost class.
_MOMENTUM_FIRST = "momentum-first's step in place of the gyroscopic update"
_ADD_MOMENTUM_FIRST = "add a gyroscopic update: momentum-first's step"


_TEXT_FIELDS = (
    "name", "engine", "variant", "repository", "commit", "version", "omega", "attitude",
    "inertia", "options", "fix", "fix_method", "props", "description", "torque",
)  # fmt: skip


@dataclass(frozen=True)
class Replica:
    """One engine setting's rotation update (see the module docstring).

    Attributes
    ----------
    name : str
        The tumble method name.
    engine, variant : str
        The engine's name and the setting (``"Bullet"``, ``"implicit, body frame"``).
    default : bool
        The engine's default setting (what a body gets when nobody changes it).
    repository, commit, version : str
        Where and at which commit the update was read; the release it corresponds to.
    sources : tuple of str
        ``"path: function (lines)"`` of each piece of the update at that commit.
    omega, attitude, inertia : str
        What one step does to the angular velocity, to the attitude and to the inertia
        tensor, in the engine's order.
    options : str
        The engine options the replica models and how.
    fix : str
        The smallest change that fixes the update, in words.
    fix_method : str
        The tumble method that measures the fix (the scorecard runs it beside the replica).
    order : float
        Global order of the attitude error, measured (``tests/test_engines.py``).
    props : str
        The registry columns ``"L_norm | L_world | energy | exact_for | cost"``
        (:mod:`tumble.methods`), checked by ``tests/test_methods.py``.
    description : str
        One line for legends.
    torque : str
        ``"held"`` (the torque at the step's start) or ``"stages"`` (MuJoCo's RK4).
    """

    name: str
    engine: str
    variant: str
    default: bool
    repository: str
    commit: str
    version: str
    sources: tuple[str, ...]
    omega: str
    attitude: str
    inertia: str
    options: str
    fix: str
    fix_method: str
    order: float
    props: str
    description: str
    torque: str = "held"

    def __post_init__(self) -> None:
        # A record is data that the registry and the scorecard trust: checked as it is made.
        for name in _TEXT_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{name}: expected a non-empty str, got {describe(value)}")
        if type(self.default) is not bool:
            raise InputError(f"default: expected a bool, got {describe(self.default)}")
        if (
            not isinstance(self.sources, tuple)
            or not self.sources
            or not all(isinstance(x, str) and ": " in x for x in self.sources)
        ):
            raise InputError(
                "sources: expected a non-empty tuple of 'path: function (lines)' strings, got "
                f"{describe(self.sources)}"
            )
        if type(self.order) not in (int, float) or not self.order >= 0:
            raise InputError(f"order: expected a number >= 0, got {describe(self.order)}")
        if self.props.count("|") != 4:
            raise InputError(
                "props: expected 'L_norm | L_world | energy | exact_for | cost', got "
                f"{describe(self.props)}"
            )
        if self.torque not in ("held", "stages"):
            raise InputError(f"torque: expected 'held' or 'stages', got {describe(self.torque)}")


_JOLT = dict(
    engine="Jolt",
    repository="jrouwe/JoltPhysics",
    commit="3b47ec390cb9b933769183eff599f72195c5873c",
    version="5.x (gyroscopic: PR 809)",
)
_JOLT_SOURCES = (
    "Jolt/Physics/PhysicsSystem.cpp: PhysicsSystem::JobApplyGravity (746-791)",
    "Jolt/Physics/Body/MotionProperties.inl: MotionProperties::ApplyGyroscopicForceInternal "
    "(99-125), ApplyForceTorqueAndDragInternal (127-149)",
    "Jolt/Physics/PhysicsSystem.cpp: PhysicsSystem::JobIntegrateVelocity (1583-1641)",
    "Jolt/Physics/Body/Body.inl: Body::AddRotationStep (81-98)",
)
_JOLT_ROTATION = "q1 = normalize(Q(omega1 h) q0), world frame; no turn when |omega1 h| <= 1e-6"
_JOLT_INERTIA = "J_w = R0 J Rᵀ0 rebuilt from the start-of-step rotation on each use; none cached"
_JOLT_OPTIONS = (
    "mApplyGyroscopicForce; mAngularDamping = 0 (default 0.05); "
    "mMaxAngularVelocity (default 47 rad/s) not reached"
)

_BULLET = dict(
    engine="Bullet",
    repository="bulletphysics/bullet3",
    commit="6c888f4abd7b46f572587360cc214985f02e5c6b",
    version="3.25+ (modes: PR 346)",
)


def _bullet_sources(function: str) -> tuple[str, ...]:
    return (
        f"src/BulletDynamics/Dynamics/btRigidBody.cpp: {function}",
        "src/BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.cpp: "
        "convertBodiesInternal (1375-1400), writeBackBodies (1808-1834)",
        "src/BulletDynamics/Dynamics/btDiscreteDynamicsWorld.cpp: "
        "internalSingleStepSimulation (452-497), integrateTransformsInternal (951-1045)",
        "src/LinearMath/btTransformUtil.h: btTransformUtil::integrateTransform (32-82)",
    )


_BULLET_ROTATION = (
    "exponential map, q1 = normalize(dq q0) with the rate capped at (pi/4)/h "
    "and a Taylor series below 0.001 rad/s"
)
_BULLET_INERTIA = (
    "J_w from the pose at the step's start (updateInertiaTensor after the previous pose write)"
)
_BULLET_OPTIONS = "rigid-body flags; m_angularDamping = 0 (default 0)"

_ODE = dict(
    engine="ODE",
    repository="thomasmarsh/ODE (mirror of odedevs/ode)",
    commit="bcfb66cd5e18e32e27cfaae3651ead930bbcda13",
    version="0.16 (implicit gyroscopic: patch 185)",
)
_ODE_SOURCES = (
    "ode/src/quickstep.cpp: dxQuickStepIsland_Stage0_Bodies (1224-1305), "
    "dxQuickStepIsland_Stage6a (3299-3337)",
    "ode/src/util.cpp: dxStepBody (583-691)",
    "ode/src/rotation.cpp: dDQfromW (310-317)",
)
_ODE_ROTATION = (
    "infinitesimal (default mode): q1 = normalize(q0 + h/2 (0, omega1) q0), "
    "angle 2 atan(|omega1| h/2)"
)
_ODE_INERTIA = "I_w and J_w from the rotation matrix at the step's start"
_ODE_OPTIONS = (
    "dBodySetGyroscopicMode; finite rotation mode 0 (default); angular damping 0 "
    "(default); no max angular speed (default)"
)

_BEPU = dict(
    engine="Bepu v2",
    repository="bepu/bepuphysics2",
    commit="956a679f817ddc636584cf99ae0e009a1945d076",
    version="2.5 (master 2026-03)",
)
_BEPU_SOURCES = (
    "BepuPhysics/PoseIntegrator.cs: PoseIntegration.Integrate (121-143), "
    "IntegrateBundlesAfterSubstepping (537-692)",
)
_BEPU_ROTATION = (
    "user velocity callback first (torque), then q1 = normalize(Q(omega h) q0), "
    "skipped when |omega| <= 1e-15"
)
_BEPU_OPTIONS = (
    "AngularIntegrationMode; AllowSubstepsForUnconstrainedBodies = false (the "
    "demos); no damping in the callback; not modelled: the fall-back to the callback's "
    "omega when the correction is not finite (a blow-up)"
)

_PHYSX = dict(
    engine="PhysX 5",
    repository="NVIDIA-Omniverse/PhysX",
    commit="a3d8a641de4c3014fd56704af0f50b8be7e9778b",
    version="5.6",
)
_PHYSX_SOURCES = (
    "physx/source/simulationcontroller/src/ScBodySim.cpp: BodySim::updateForces (656-720)",
    "physx/source/lowleveldynamics/src/DyBodyCoreIntegrator.h: "
    "bodyCoreComputeUnconstrainedVelocity (39-81), integrateCore (83-177)",
    "physx/source/lowleveldynamics/src/DyRigidBodyToSolverBody.cpp: "
    "Dy::copyToSolverBodyData (38-113)",
)
_PHYSX_ROTATION = "q1 = normalize(Q(omega1 h) q0), world frame, |omega1| capped at 1e7"
_PHYSX_INERTIA = "world sqrt(J_w) from the step's start pose (copyToSolverBodyData)"
_PHYSX_OPTIONS = (
    "eENABLE_GYROSCOPIC_FORCES; PGS (TGS is the same map for a free body); "
    "angular damping 0 (default 0.05); max angular velocity (default 100) not "
    "reached"
)

_AVIAN = dict(engine="Avian", repository="avianphysics/avian")
_AVIAN_OPTIONS = (
    "SubstepCount = 6 (default); AngularDamping 0 (default); automatic gyroscopic; not "
    "modelled: skipping a non-finite velocity increment (a blow-up)"
)

_MUJOCO = dict(
    engine="MuJoCo",
    repository="google-deepmind/mujoco",
    commit="a7255075b003506ff5f34b512d88e02df12a73c6",
    version=(
        "3.12 (the source read); checked against the 4.0.0 package, whose RK4 changed "
        "(commit 9a7f240f0)"
    ),
)
_MUJOCO_SOURCES = (
    "src/engine/engine_core_smooth.c: mj_rne (2328-2390)",
    "src/engine/engine_forward.c: mj_advance (1261-1395)",
    "src/engine/engine_support.c: mj_integratePos (639-680)",
    "src/engine/engine_util_spatial.c: mju_quatIntegrate (234-243)",
)
_MUJOCO_ROTATION = "q1 = normalize(q0) Q(omega_b h), body frame, normalised before the product"
_MUJOCO_INERTIA = "M (the body inertia) and the bias force recomputed at every forward pass"
_MUJOCO_OPTIONS = "opt.integrator; free joint, no damping, no gravity unless a torque model"


def _replicas() -> tuple[Replica, ...]:
    R = Replica
    return (
        R("jolt_gyroscopic", variant="gyroscopic forces on", default=False, **_JOLT,
          sources=_JOLT_SOURCES,
          omega=("L' = L - h omega_b x L in the principal frame at R0, rescaled to |L|; then "
                 "+ h J_w tau"),
          attitude=_JOLT_ROTATION, inertia=_JOLT_INERTIA, options=_JOLT_OPTIONS,
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="exact | O(dt) | drifts to J_mid | spherical | 1 Q + 1 sqrt",
          description="Jolt, gyroscopic forces on: explicit L step rescaled to |L|, exact rotation",
          ),
        R("jolt_no_gyroscopic", variant="gyroscopic forces off (default)", default=True, **_JOLT,
          sources=_JOLT_SOURCES, omega="omega + h J_w tau; no gyroscopic term",
          attitude=_JOLT_ROTATION, inertia=_JOLT_INERTIA, options=_JOLT_OPTIONS,
          fix=_ADD_MOMENTUM_FIRST,
          fix_method="momentum_first", order=0,
          props="exact | no | exact | spherical | 1 Q",
          description="Jolt's default: no gyroscopic term, omega fixed without torque"),
        R("bullet_explicit", variant="explicit gyroscopic force", default=False, **_BULLET,
          sources=_bullet_sources("computeGyroscopicForceExplicit (283-295)"),
          omega="omega + h J_w tau - h J_w g, g = omega x I_w omega clamped to |g| <= 100",
          attitude=_BULLET_ROTATION, inertia=_BULLET_INERTIA,
          options=_BULLET_OPTIONS + "; BT_ENABLE_GYROSCOPIC_FORCE_EXPLICIT, "
          "m_maxGyroscopicForce = 100",
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="grows | no | grows, blows up | spherical | 1 Q",
          description="Bullet, explicit gyroscopic force (clamped): energy grows"),
        R("bullet_implicit_world", variant="implicit, world frame", default=False, **_BULLET,
          sources=_bullet_sources("computeGyroscopicImpulseImplicit_World (336-370), "
                                  "evalEulerEqn, evalEulerEqnDeriv (264-281)"),
          omega=("one Newton step of implicit Euler in world components from omega0 (I_w at "
                 "R0), + h J_w tau outside the solve"),
          attitude=_BULLET_ROTATION, inertia=_BULLET_INERTIA,
          options=_BULLET_OPTIONS + "; BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_WORLD",
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="decays | no | decays | spherical | 1 Q + 3x3 solve",
          description="Bullet, implicit gyroscopic step in the world frame: dissipative"),
        R("bullet_implicit_body", variant="implicit, body frame (default)", default=True,
          **_BULLET, sources=_bullet_sources("computeGyroscopicImpulseImplicit_Body (297-334)"),
          omega=("one Newton step of body-frame implicit Euler (Catto) from omega0 at R0, "
                 "+ h J_w tau outside the solve"),
          attitude=_BULLET_ROTATION, inertia=_BULLET_INERTIA,
          options=_BULLET_OPTIONS + "; BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_BODY (default)",
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="decays | no | decays | spherical | 1 Q + 3x3 solve",
          description="Bullet's default: implicit gyroscopic step in the body frame, dissipative"),
        R("bullet_no_gyroscopic", variant="no gyroscopic flag", default=False, **_BULLET,
          sources=_bullet_sources("setupRigidBody (91)"),
          omega="omega + h J_w tau; no gyroscopic term", attitude=_BULLET_ROTATION,
          inertia=_BULLET_INERTIA, options=_BULLET_OPTIONS + "; flags 0",
          fix=_ADD_MOMENTUM_FIRST,
          fix_method="momentum_first", order=0,
          props="exact | no | exact | spherical | 1 Q",
          description="Bullet without gyroscopic flags: omega fixed without torque"),
        R("ode_gyroscopic", variant="implicit gyroscopic term (default)", default=True, **_ODE,
          sources=_ODE_SOURCES,
          omega=("omega1 = (I_w - h [L0]x)^-1 L0 + h J_w tau: implicit in omega with the "
                 "momentum L0 = I_w omega0 frozen (Lacoursière's linearisation)"),
          attitude=_ODE_ROTATION, inertia=_ODE_INERTIA, options=_ODE_OPTIONS,
          fix="momentum-first's step, and the exact rotation (finite rotation mode)",
          fix_method="momentum_first", order=1,
          props="grows | no | decays | none | 1 Cayley + 3x3 solve",
          description="ODE's default: linearised implicit gyroscopic term, first-order rotation"),
        R("ode_no_gyroscopic", variant="gyroscopic mode off", default=False, **_ODE,
          sources=_ODE_SOURCES, omega="omega + h J_w tau; no gyroscopic term",
          attitude=_ODE_ROTATION, inertia=_ODE_INERTIA, options=_ODE_OPTIONS,
          fix=_ADD_MOMENTUM_FIRST,
          fix_method="momentum_first", order=0,
          props="exact | no | exact | none | 1 Cayley",
          description="ODE without its gyroscopic term: omega fixed, first-order rotation"),
        R("bepu_nonconserving", variant="Nonconserving (the demos')", default=True, **_BEPU,
          sources=_BEPU_SOURCES, omega="omega + h J_w tau (the user callback); nothing else",
          attitude=_BEPU_ROTATION, inertia="J_w from the step's start pose for the callback",
          options=_BEPU_OPTIONS,
          fix=_ADD_MOMENTUM_FIRST + " (ConserveMomentum keeps world L, not energy)",
          fix_method="momentum_first", order=0,
          props="exact | no | exact | spherical | 1 Q",
          description="Bepu's Nonconserving mode: no gyroscopic term, omega fixed"),
        R("bepu_conserve_momentum", variant="ConserveMomentum", default=False, **_BEPU,
          sources=(*_BEPU_SOURCES,
                   "BepuPhysics/PoseIntegrator.cs: IntegrateAngularVelocityConserveMomentum "
                   "(192-206)"),
          omega=("after the pose update: L = I_w(R0) omega, omega = J_w(R1) L (world L kept "
                 "across the rotation)"),
          attitude=_BEPU_ROTATION, inertia="I_w at R0, J_w at R1, both rebuilt from the pose",
          options=_BEPU_OPTIONS, fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="exact | exact | grows to J_max | spherical | 2 Q",
          description="Bepu's ConserveMomentum: world L kept, energy drifts up"),
        R("bepu_conserve_momentum_gyroscopic", variant="ConserveMomentumWithGyroscopicTorque",
          default=False, **_BEPU,
          sources=(*_BEPU_SOURCES,
                   "BepuPhysics/PoseIntegrator.cs: "
                   "IntegrateAngularVelocityConserveMomentumWithGyroscopicTorque (208-253)"),
          omega=("after the pose update, at R1: one Newton step of body-frame implicit Euler "
                 "as the code reads (row vectors), whose residual has the opposite sign"),
          attitude=_BEPU_ROTATION, inertia="I and J_w at R1, rebuilt from the pose",
          options=_BEPU_OPTIONS,
          fix="the residual's sign (r = h w x L), or momentum-first's step",
          fix_method="momentum_first", order=0,
          props="decays | no | decays | spherical | 1 Q + 3x3 solve",
          description="Bepu's gyroscopic mode as its code reads: a reversed-sign Newton step"),
        R("physx_gyroscopic", variant="eENABLE_GYROSCOPIC_FORCES on", default=False, **_PHYSX,
          sources=_PHYSX_SOURCES,
          omega=("omega + h J_w tau first; then Jolt's formula on the solver body: L' = L - h "
                 "omega_b x L at R0, rescaled to |L|"),
          attitude=_PHYSX_ROTATION, inertia=_PHYSX_INERTIA, options=_PHYSX_OPTIONS,
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="exact | O(dt) | drifts to J_mid | spherical | 1 Q + 1 sqrt",
          description="PhysX, gyroscopic flag on: Jolt's formula after the torque"),
        R("physx_no_gyroscopic", variant="flag off (default)", default=True, **_PHYSX,
          sources=_PHYSX_SOURCES, omega="omega + h J_w tau; no gyroscopic term",
          attitude=_PHYSX_ROTATION, inertia=_PHYSX_INERTIA, options=_PHYSX_OPTIONS,
          fix=_ADD_MOMENTUM_FIRST,
          fix_method="momentum_first", order=0,
          props="exact | no | exact | spherical | 1 Q",
          description="PhysX's default: no gyroscopic term, omega fixed without torque"),
        R("avian_explicit", variant="era 1: explicit, world frame (v0.1)", default=False,
          commit="e71de1a209ebea0848489385751652b3024c5db9", version="0.1 (bevy_xpbd heritage)",
          sources=("src/dynamics/integrator/semi_implicit_euler.rs: integrate_velocity "
                   "(35-65), integrate_position (71-110), angular_acceleration (140-168)",
                   "src/dynamics/integrator/mod.rs: integrate_velocities (136-229), "
                   "integrate_positions (232-281)"),
          omega="per sub-step: omega + hs J_w (tau - omega x I_w omega) at the current pose",
          attitude=("per sub-step: q = normalize(q + (0, omega hs/2) q + (q_w hs/2) q), a "
                    "spurious real part (fixed by PR 488)"),
          inertia="I_w and J_w from the current sub-step's rotation", options=_AVIAN_OPTIONS,
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="grows | no | grows, blows up | none | 6 x 1 Cayley", **_AVIAN,
          description="Avian v0.1: explicit world-frame gyroscopic term, biased quaternion step"),
        R("avian_implicit", variant="era 2: implicit Euler, body frame (v0.2-v0.3)",
          default=False, commit="71b835c280d7b909953b36f895f3f258b43df306",
          version="0.2-0.3 (PR 420, PR 488)",
          sources=("src/dynamics/integrator/semi_implicit_euler.rs: integrate_velocity "
                   "(35-97), integrate_position (100-140), solve_gyroscopic_torque (203-232)",),
          omega=("per sub-step: one Newton step of body-frame implicit Euler (Catto) at the "
                 "current pose, + hs J_w tau"),
          attitude="per sub-step: q = normalize(Q(omega hs) q)",
          inertia="I_w and J_w from the current sub-step's rotation", options=_AVIAN_OPTIONS,
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="decays | no | decays | spherical | 6 x (1 Q + 3x3 solve)", **_AVIAN,
          description="Avian v0.2-0.3: implicit body-frame gyroscopic step per sub-step"),
        R("avian_jolt", variant="era 3: Jolt's step per sub-step (v0.4+, default)", default=True,
          commit="5bef3827444436558de3194452b7e1ced5c557a6", version="0.4+ (PR 738, 745, 747)",
          sources=("src/dynamics/integrator/mod.rs: pre_process_velocity_increments "
                   "(260-313), integrate_velocities (343-391), solve_gyroscopic_torque "
                   "(403-460), integrate_positions (503-535)",
                   "src/dynamics/solver/solver_body/plugin.rs: prepare (207-248), writeback "
                   "(255-284)"),
          omega=("per sub-step: + hs J_w(R_step) tau, then Jolt's formula at the sub-step's "
                 "pose, L' = L - hs omega_b x L rescaled to |L|"),
          attitude="per sub-step: D = Q(omega hs) D; after them q1 = normalize(D q0)",
          inertia=("J_w for the torque from the step's start pose; the gyroscopic term uses "
                   "the sub-step's pose"), options=_AVIAN_OPTIONS,
          fix=_MOMENTUM_FIRST + " (avian PR 993)", fix_method="momentum_first",
          order=1, props="exact | O(dt) | drifts to J_mid | spherical | 6 x (1 Q + 1 sqrt)",
          **_AVIAN, description="Avian v0.4+: Jolt's gyroscopic step in each of 6 sub-steps"),
        R("mujoco_euler", variant="Euler (default integrator)", default=True, **_MUJOCO,
          sources=(*_MUJOCO_SOURCES, "src/engine/engine_forward.c: mj_Euler (1398-1482)"),
          omega=("omega_b + h J (tau_b - omega_b x I omega_b): the bias force of the free "
                 "joint, explicit"),
          attitude=_MUJOCO_ROTATION, inertia=_MUJOCO_INERTIA, options=_MUJOCO_OPTIONS,
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="grows | no | grows, blows up | spherical | 1 Q",
          description="MuJoCo Euler on a free joint: explicit gyroscopic term, energy grows"),
        R("mujoco_rk4", variant="RK4", default=False, **_MUJOCO,
          sources=(*_MUJOCO_SOURCES, "src/engine/engine_forward.c: mj_RungeKutta (1499-1587)",
                   "doc/changelog.rst (package 4.0.0): RK4 made Runge-Kutta-Munthe-Kaas"),
          omega="classic RK4 of omega_b' = J (tau_b - omega_b x I omega_b), torque at stages",
          attitude=("q1 = normalize(q0) exp(h sum B_j k_j), k_j = dexp^-1(theta_j) omega_j at "
                    "the stage rotations theta_j (4.0: Munthe-Kaas; 3.x summed omega_j)"),
          inertia=_MUJOCO_INERTIA, options=_MUJOCO_OPTIONS,
          fix=("none for accuracy (order 4); a sixth-order composition that keeps |L| and "
               "world L"),
          fix_method="symmetric_top_split:kahanli6", order=4,
          props="drifts | drifts | drifts | spherical | 4 evaluations", torque="stages",
          description="MuJoCo 4 RK4 on a free joint: Munthe-Kaas stages, order 4, slow drift"),
        R("mujoco_implicit", variant="implicit / implicitfast (free body)", default=False,
          **_MUJOCO, sources=(*_MUJOCO_SOURCES,
                              "src/engine/engine_forward.c: mj_implicit (1649-1777)",
                              "src/engine/engine_derivative.c: mjd_freeMhat (844-893)"),
          omega=("omega_b + h (I + h ([omega]x I - [I omega]x))^-1 (tau_b - omega x I omega): "
                 "one linearly implicit step with the torque inside the solve"),
          attitude=_MUJOCO_ROTATION, inertia=_MUJOCO_INERTIA, options=_MUJOCO_OPTIONS,
          fix=_MOMENTUM_FIRST, fix_method="momentum_first", order=1,
          props="decays | no | decays | spherical | 1 Q + 3x3 solve",
          description="MuJoCo implicit on a free joint: Newton step with the bias derivative"),
        R("rapier_gyroscopic", variant="gyroscopic forces on (code default)", default=True,
          engine="Rapier", repository="dimforge/rapier",
          commit="ccd01cd294e84945da55d61548002a5b6f73df31", version="0.35.2",
          sources=("src/dynamics/rigid_body.rs: gyroscopic_corrected_angvel (2018-2046)",
                   "src/dynamics/solver/staged_island_solver/worker.rs: velocity increments "
                   "(227-284), integrate positions (563-616)",
                   "src/dynamics/rigid_body_components.rs: "
                   "RigidBodyVelocity::integrate_linearized (884-898)"),
          omega=("per sub-step: + hs J_w(R_step) tau, Jolt's formula at the sub-step's pose, "
                 "then |omega| <= (pi/4)/h"),
          attitude="per sub-step: q = normalize((1, omega hs/2) q), angle 2 atan(|omega| hs/2)",
          inertia=("J_w for the torque from the step's start; the gyroscopic term uses the "
                   "sub-step's pose"),
          options=("4 sub-steps (num_solver_iterations, default); angular_damping 0 (default); "
                   "allow_fast_rotation false (default)"),
          fix="momentum-first's step, and the exact rotation", fix_method="momentum_first",
          order=1, props="exact | O(dt) | drifts to J_mid | none | 4 x (1 Cayley + 1 sqrt)",
          description="Rapier 0.35: Jolt's step per sub-step, first-order quaternion update"),
        R("godot", variant="GodotPhysics3D (built-in)", default=True, engine="Godot 4",
          repository="godotengine/godot", commit="0a93d3b4d2d43f5c0594c52e3ee5e5a3dbaad04b",
          version="4.x (modules/godot_physics_3d)",
          sources=("modules/godot_physics_3d/godot_body_3d.cpp: GodotBody3D::integrate_forces, "
                   "GodotBody3D::integrate_velocities, _update_transform_dependent",
                   "modules/godot_physics_3d/godot_step_3d.cpp: GodotStep3D::step"),
          omega="omega + h J_w tau; no gyroscopic term and no option for one",
          attitude=("basis turned about omega1 by |omega1| h (Basis(axis, angle)), "
                    "orthonormalised; none when |omega1| < 1e-5"),
          inertia="J_w cached from the start-of-step pose (_update_transform_dependent)",
          options="default_angular_damp 0 (default 0.1); custom_integrator false",
          fix=_ADD_MOMENTUM_FIRST, fix_method="momentum_first",
          order=0, props="exact | no | exact | spherical | 1 Q",
          description="Godot's built-in 3-D physics: no gyroscopic term, omega fixed"),
    )  # fmt: skip


ENGINES: Mapping[str, Replica] = MappingProxyType({r.name: r for r in _replicas()})
"""Each replica's record, by method name, in registry order (read-only)."""


def _by_engine() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for r in ENGINES.values():
        out[r.engine] = (*out.get(r.engine, ()), r.name)
    return out


BY_ENGINE: Mapping[str, tuple[str, ...]] = MappingProxyType(_by_engine())
"""The replicas of each engine (display name -> method names), in registry order."""


def render_records() -> str:
    """``docs/engines.md``'s section of the records (checked by ``tests/test_engines.py``):
    per engine, each replica's setting, version and commit, what its step does to ``omega``,
    the attitude and the inertia, the options it models, its sources and its smallest fix."""
    lines = []
    for engine, names in BY_ENGINE.items():
        lines += [f"### {engine}", "", f"Repository `{ENGINES[names[0]].repository}`.", ""]
        for name in names:
            r = ENGINES[name]
            sources = "; ".join(
                f"`{path}`: {where}" for path, where in (x.split(": ", 1) for x in r.sources)
            )
            lines += [
                f"- `{name}`: {r.variant}{' (the default)' if r.default else ''}; "
                f"{r.version}, read at `{r.commit}`.",
                f"  - omega: {r.omega}.",
                f"  - attitude: {r.attitude}.",
                f"  - inertia: {r.inertia}.",
                f"  - options modelled: {r.options}.",
                f"  - sources: {sources}.",
                f"  - smallest fix: {r.fix} (measured with `{r.fix_method}`).",
            ]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"

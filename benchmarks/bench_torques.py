"""Benchmark: torque models inside the compiled loop, on a heavy top, against their peers.

The body is a heavy symmetric top (a Lagrange top) pivoting at a fixed point under uniform
gravity: mass ``MASS`` = 1 kg, centre of mass ``c = (0, 0, ARM)`` = 0.5 m up the symmetry
axis (body coordinates, from the pivot), inertia about the centre of mass ``I_COM = (0.75,
0.75, 0.5)`` kg m², so about the pivot (parallel axes) ``I_PIVOT = (1, 1, 0.5)``, gravity
``g = (0, 0, -9.81)`` m/s². It starts tilted ``TILT`` = 0.3 rad from the vertical and
spinning ``SPIN`` = 50 rad/s about its axis, with no precession: ``L_3² / (4 I_1 m g l) ≈
32``, a fast top (a gyroscope) that nutates at about ``L_3 / I_1`` = 25 rad/s in a small
cusp while it precesses at about ``m g l / L_3`` ≈ 0.2 rad/s. Batches hold copies of this
top at azimuths ``φ_k = 2πk/N`` about the vertical: gravity is vertical, so each copy's exact
attitude is the reference one turned by ``φ_k`` (one ODE solve scores them all).

Contenders, measured in the same run, one thread each (process CPU time, best of 3):

1. tumble ``rigid.simulate`` with ``torques.gravity`` inside the compiled loop against the
   same loop torque-free, for several methods and ``N`` = 1, 1000, 100000 bodies (goal:
   gravity within ``GOAL_MODEL`` = 1.5x of the torque-free time per body-step);
2. the Python-callable path: ``torque=f(t, q, omega)`` computing the same gravity torque (a
   numba function called from Python), for one body: its overhead per step (path time minus
   ``f``'s own time minus the compiled step; goal <= ``GOAL_CALLABLE_US`` = 5 µs);
3. a C reference of the heavy-top step (``splitting`` with Strang gravity half kicks, and
   ``rk4`` with gravity at the stages, the formulas of tumble's kernels in the same order),
   compiled now with ``-O3 -march=native`` (no fast-math), one body at a time with its state
   in registers; its final states are checked against tumble's;
4. MuJoCo (``mujoco`` from PyPI, the ``bench`` extra), ``K`` tops in one model, each a body
   on a **ball joint** at its pivot (MuJoCo's inertia is about the centre of mass, so the
   model gives ``I_COM`` at ``pos = c``; MuJoCo's composite rigid body then has exactly
   ``I_PIVOT`` about the joint), ``integrator="RK4"``, gravity on, no contacts, zero damping
   and armature. A ball joint is the faithful model: the same three rotational degrees of
   freedom with the pivot held exactly, in MuJoCo's generalised coordinates. Free bodies
   pinned at the pivot by equality ``connect`` constraints are run too, to measure the
   alternative: three more degrees of freedom per top held by MuJoCo's soft constraint,
   whose compliance lets the pivot move and changes the dynamics. Steps run in C through
   ``mujoco.rollout`` (one thread).

Accuracy: every contender's largest attitude error at ``T_FINAL`` against a tight ODE
reference (SciPy ``solve_ivp``, DOP853, rtol 1e-13, on Euler's equations with the gravity
torque and the quaternion kinematics), at ``DTS``, next to its time per body-step.

Usage: ``tumble bench torques [--sizes N ...] [--methods a,b] [--mujoco-sizes K ...]
[--quick] [--no-write]``.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import time
from collections.abc import Callable

import numba
import numpy as np
from scipy.integrate import solve_ivp

from _common import (
    C_QUATERNIONS,
    best_cpu_time,
    c_pointer,
    compile_c,
    markdown_table,
    threads,
    write_section,
)
from tumble import rigid, rotation

MASS = 1.0
ARM = 0.5
I_COM = (0.75, 0.75, 0.5)
I_PIVOT = (I_COM[0] + MASS * ARM**2, I_COM[1] + MASS * ARM**2, I_COM[2])
CENTER_OF_MASS = (0.0, 0.0, ARM)
GRAVITY = (0.0, 0.0, -9.81)
TILT = 0.3
SPIN = 50.0
INV_INERTIA = tuple(1.0 / i for i in I_PIVOT)

T_FINAL = 2.0
DTS = (4e-3, 1e-3)
TIMING_DT = 1e-3
ACCURACY_TOPS = 16
ODE_RTOL = 1e-13
ODE_ATOL = 1e-15

SIZES = (1, 1_000, 100_000)
METHODS = ("momentum_first", "splitting", "rk4", "midpoint", "momentum_first_symmetric")
MUJOCO_SIZES = (1, 1_000)
BODY_STEPS = 2_000_000
MUJOCO_BODY_STEPS = 200_000
CALLABLE_STEPS = 2_000
COST_N = 1_000
GOAL_MODEL = 1.5
GOAL_CALLABLE_US = 5.0
# Agreement of the C reference's final state with tumble's, per step of the run: the same
# formulas rounded differently (GCC contracts a*b+c into FMA at -O3 -march=native) differ by
# a few ulps per step, which accumulate; |L| is about 25 here, so allow that much more.
AGREE_ATOL_PER_STEP = 1e-12

C_SOURCE = (
    C_QUATERNIONS
    + r"""
/* The heavy top's torque in body coordinates: R^T ((R c) x (m g)); zero with NO_TORQUE,
   which leaves the same steps torque-free (the compiler drops the torque's work). */
static inline v3 gravity_body(qt q, v3 c, v3 mg) {
#ifdef NO_TORQUE
    v3 zero = {0.0, 0.0, 0.0};
    return zero;
#else
    return qrotate(qconj(q), cross(qrotate(q, c), mg));
#endif
}

/* Exact flow of T_i = J_i L_i^2 / 2 for time t: L <- Q(-J_i L_i t e_i) L, R <- R Q(...). */
static inline void axis_flow(qt *q, v3 *L, v3 J, int axis, double t) {
    double Ji = axis == 0 ? J.x : axis == 1 ? J.y : J.z;
    double Li = axis == 0 ? L->x : axis == 1 ? L->y : L->z;
    double a = Ji * Li * t, c = cos(a), s = sin(a), ch = cos(0.5 * a), sh = sin(0.5 * a);
    v3 l = *L;
    if (axis == 0) {
        v3 r = {l.x, c * l.y + s * l.z, -s * l.y + c * l.z}; *L = r;
        qt p = {ch, sh, 0.0, 0.0}; *q = qmul(*q, p);
    } else if (axis == 1) {
        v3 r = {c * l.x - s * l.z, l.y, s * l.x + c * l.z}; *L = r;
        qt p = {ch, 0.0, sh, 0.0}; *q = qmul(*q, p);
    } else {
        v3 r = {c * l.x + s * l.y, -s * l.x + c * l.y, l.z}; *L = r;
        qt p = {ch, 0.0, 0.0, sh}; *q = qmul(*q, p);
    }
}

/* Kinetic-energy splitting 1(h/2) 2(h/2) 3(h) 2(h/2) 1(h/2) between Strang half kicks
   L_b += h/2 tau_b, the first at R0, the second at R1. */
static inline void splitting(qt *q, v3 *L, v3 J, v3 c, v3 mg, double h) {
    double hh = 0.5 * h;
    *L = axpy(*L, hh, gravity_body(*q, c, mg));
    axis_flow(q, L, J, 0, hh);
    axis_flow(q, L, J, 1, hh);
    axis_flow(q, L, J, 2, h);
    axis_flow(q, L, J, 1, hh);
    axis_flow(q, L, J, 0, hh);
    *q = qnormalize(*q);
    *L = axpy(*L, hh, gravity_body(*q, c, mg));
}

/* dL_b/dt = tau_b(q) + L_b x (J L_b), dq/dt = q (0, J L_b) / 2. */
static inline void rhs(qt q, v3 L, v3 J, v3 c, v3 mg, qt *dq, v3 *dL) {
    v3 w = mul(J, L);
    *dL = add(gravity_body(qnormalize(q), c, mg), cross(L, w));
    qt p = {0.0, 0.5 * w.x, 0.5 * w.y, 0.5 * w.z};
    *dq = qmul(q, p);
}

static inline void rk4(qt *q, v3 *L, v3 J, v3 c, v3 mg, double h) {
    double hh = 0.5 * h, s = h / 6.0;
    qt q0 = *q, dq1, dq2, dq3, dq4;
    v3 L0 = *L, dL1, dL2, dL3, dL4;
    rhs(q0, L0, J, c, mg, &dq1, &dL1);
    rhs(q_axpy(q0, hh, dq1), axpy(L0, hh, dL1), J, c, mg, &dq2, &dL2);
    rhs(q_axpy(q0, hh, dq2), axpy(L0, hh, dL2), J, c, mg, &dq3, &dL3);
    rhs(q_axpy(q0, h, dq3), axpy(L0, h, dL3), J, c, mg, &dq4, &dL4);
    qt q1 = {q0.w + s * (dq1.w + 2.0 * (dq2.w + dq3.w) + dq4.w),
             q0.x + s * (dq1.x + 2.0 * (dq2.x + dq3.x) + dq4.x),
             q0.y + s * (dq1.y + 2.0 * (dq2.y + dq3.y) + dq4.y),
             q0.z + s * (dq1.z + 2.0 * (dq2.z + dq3.z) + dq4.z)};
    v3 L1 = {L0.x + s * (dL1.x + 2.0 * (dL2.x + dL3.x) + dL4.x),
             L0.y + s * (dL1.y + 2.0 * (dL2.y + dL3.y) + dL4.y),
             L0.z + s * (dL1.z + 2.0 * (dL2.z + dL3.z) + dL4.z)};
    *q = qnormalize(q1);
    *L = L1;
}

/* n tops sharing J, c and m g: each body runs all its steps with the state in registers;
   the final q (n, 4) and L_b (n, 3) are written out. */
#define SIMULATE(NAME, STEP)                                                              \
void NAME(long n, const double *q0, const double *L0, const double *Jin,                   \
          const double *cin, const double *mgin, double h, long steps, double *q_out,     \
          double *L_out) {                                                                \
    v3 J = {Jin[0], Jin[1], Jin[2]}, c = {cin[0], cin[1], cin[2]};                         \
    v3 mg = {mgin[0], mgin[1], mgin[2]};                                                  \
    for (long b = 0; b < n; b++) {                                                        \
        qt q = {q0[4 * b], q0[4 * b + 1], q0[4 * b + 2], q0[4 * b + 3]};                   \
        v3 L = {L0[3 * b], L0[3 * b + 1], L0[3 * b + 2]};                                 \
        for (long s = 0; s < steps; s++) STEP(&q, &L, J, c, mg, h);                       \
        q_out[4 * b] = q.w; q_out[4 * b + 1] = q.x;                                       \
        q_out[4 * b + 2] = q.y; q_out[4 * b + 3] = q.z;                                   \
        L_out[3 * b] = L.x; L_out[3 * b + 1] = L.y; L_out[3 * b + 2] = L.z;               \
    }                                                                                     \
}

SIMULATE(heavy_top_splitting, splitting)
SIMULATE(heavy_top_rk4, rk4)
"""
)
C_METHODS = ("splitting", "rk4")
C_FLAGS = ("-O3", "-march=native")


# --------------------------------------------------------------------------------------
# the heavy top and its reference


def _azimuth(phi: np.ndarray) -> np.ndarray:
    """Quaternions ``(N, 4)`` of turns by ``phi`` about the world vertical."""
    return np.stack([np.cos(phi / 2), 0 * phi, 0 * phi, np.sin(phi / 2)], axis=-1)


def tops(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` copies of the top at azimuths ``2πk/n``: ``q0`` (n, 4), world ``omega0``, ``L_b``."""
    tilt = np.array([math.cos(TILT / 2), math.sin(TILT / 2), 0.0, 0.0])
    q0 = rotation.quat_multiply(_azimuth(2 * np.pi * np.arange(n) / n), tilt)
    omega_body = np.array([0.0, 0.0, SPIN])
    omega0 = rotation.quat_rotate(q0, omega_body)
    L_body = np.broadcast_to(np.array(I_PIVOT) * omega_body, (n, 3))
    return np.ascontiguousarray(q0), omega0, np.ascontiguousarray(L_body)


def _heavy_top_rhs(_t: float, y: np.ndarray) -> np.ndarray:
    """Euler's equations about the pivot with the gravity torque, and ``dq/dt = ½ q ⊗ ω_b``."""
    q, L = y[:4], y[4:]
    w = L / np.array(I_PIVOT)
    down_body = rotation.quat_rotate(rotation.quat_conjugate(q / np.linalg.norm(q)), GRAVITY)
    dL = np.cross(L, w) + np.cross(CENTER_OF_MASS, MASS * down_body)
    return np.concatenate([0.5 * rotation.quat_multiply(q, np.array([0.0, *w])), dL])


def reference_final(rtol: float = ODE_RTOL) -> np.ndarray:
    """The top's attitude at ``T_FINAL`` (azimuth 0): DOP853 on the ODE above."""
    q0, _, L0 = tops(1)
    y0 = np.concatenate([q0[0], L0[0]])
    sol = solve_ivp(
        _heavy_top_rhs, (0.0, T_FINAL), y0, method="DOP853", rtol=rtol, atol=ODE_ATOL,
        t_eval=[T_FINAL],
    )  # fmt: skip
    if not sol.success:
        raise RuntimeError(f"ODE reference failed: {sol.message}")
    q = sol.y[:4, -1]
    return q / np.linalg.norm(q)


def attitude_error(q: np.ndarray, q_ref0: np.ndarray) -> float:
    """Largest angle (rad) between ``q`` (N, 4) at ``T_FINAL`` and the turned references."""
    n = q.shape[0]
    q_ref = rotation.quat_multiply(_azimuth(2 * np.pi * np.arange(n) / n), q_ref0)
    return float(np.max(rotation.rotation_angle(q_ref, q)))


# --------------------------------------------------------------------------------------
# contenders


def gravity_model():
    from tumble import torques

    return torques.gravity(MASS, GRAVITY, CENTER_OF_MASS)


def tumble_runner(method, q, omega, h, steps, torque) -> Callable[[], rigid.Trajectory]:
    """The public ``simulate``, first and last state recorded."""
    J = np.array(INV_INERTIA)
    return lambda: rigid.simulate(q, omega, J, h, steps, method, torque=torque, every=steps)


@numba.njit
def gravity_callable(_t, q, _omega):
    """The heavy top's world torque ``(R c) × (m g)`` for one body (``q`` of shape (4,)).

    Compiled, so that it costs well under a microsecond and the path's own overhead is what
    the subtraction in :func:`callable_path` measures (a NumPy version of the same
    formula costs 30-100 µs per call here, mostly in ``np.cross``).
    """
    w, u = q[0], q[1:]
    c = np.array(CENTER_OF_MASS)
    t = 2.0 * np.cross(u, c)
    r = c + w * t + np.cross(u, t)
    return np.cross(r, MASS * np.array(GRAVITY))


def c_runner(lib, method, q, L, h, steps) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    fn = getattr(lib, f"heavy_top_{method}")
    fn.restype = None
    fn.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * 5 + [ctypes.c_double, ctypes.c_long,
                   ctypes.c_void_p, ctypes.c_void_p]  # fmt: skip
    consts = [np.array(INV_INERTIA), np.array(CENTER_OF_MASS), MASS * np.array(GRAVITY)]
    q_out, L_out = np.empty_like(q), np.empty_like(L)
    ptrs = [c_pointer(a) for a in (q, L, *consts, q_out, L_out)]

    def run():
        fn(q.shape[0], *ptrs[:5], h, steps, *ptrs[5:])
        return q_out, L_out

    return run


#: MuJoCo's models of the same tops: the faithful one (ball joints) and, to show what the
#: alternative costs, free bodies pinned at the pivot by equality ``connect`` constraints,
#: with MuJoCo's default constraint time constant (0.02 s) and with the stiffest advised one
#: (two steps).
MUJOCO_VARIANTS = {
    "ball": "MuJoCo RK4, ball joints",
    "connect": "MuJoCo RK4, free + connect (default solref)",
    "connect-stiff": "MuJoCo RK4, free + connect (solref 2 dt)",
}


def mujoco_model(k: int, dt: float, variant: str = "ball"):
    """``k`` heavy tops in one MuJoCo model, each a body pivoting at the world origin."""
    import mujoco

    inertial = (
        f'<inertial pos="{" ".join(map(repr, CENTER_OF_MASS))}" mass="{MASS!r}" '
        f'diaginertia="{" ".join(map(repr, I_COM))}"/>'
    )
    if variant == "ball":
        joint, equality = '<joint type="ball" damping="0" armature="0"/>', ""
    else:
        solref = "" if variant == "connect" else f' solref="{2 * dt!r} 1"'
        joint = "<freejoint/>"
        connects = "".join(f'<connect body1="t{i}" anchor="0 0 0"{solref}/>' for i in range(k))
        equality = f"<equality>{connects}</equality>"
    bodies = "".join(f'<body name="t{i}">{joint}{inertial}</body>' for i in range(k))
    xml = (
        f'<mujoco><size memory="{16 + k // 8}M"/>'
        f'<option timestep="{dt!r}" integrator="RK4" gravity="{" ".join(map(repr, GRAVITY))}">'
        '<flag contact="disable"/></option>'
        f"<worldbody>{bodies}</worldbody>{equality}</mujoco>"
    )
    return mujoco.MjModel.from_xml_string(xml)


def _mujoco_rows(model, data) -> tuple[np.ndarray, np.ndarray]:
    """Views (K, 4) of the tops' attitudes in ``qpos`` and (K, 3) of their body-frame
    angular velocities in ``qvel``: a ball joint's ``qpos`` is the body-to-parent quaternion
    (scalar first) and its ``qvel`` the angular velocity in body coordinates, the same
    state as tumble's; a free joint puts the position and world linear velocity first."""
    k = model.nbody - 1
    if model.nq == 4 * k:
        return data.qpos.reshape(k, 4), data.qvel.reshape(k, 3)
    return data.qpos.reshape(k, 7)[:, 3:], data.qvel.reshape(k, 6)[:, 3:]


def mujoco_start(q0: np.ndarray, dt: float, variant: str):
    """A model of ``len(q0)`` tops and its data at the initial state (pivots at rest)."""
    import mujoco

    model = mujoco_model(q0.shape[0], dt, variant)
    data = mujoco.MjData(model)
    q, w = _mujoco_rows(model, data)
    q[:] = q0
    w[:] = (0.0, 0.0, SPIN)
    return model, data


def mujoco_final(q0: np.ndarray, dt: float, steps: int, variant: str) -> tuple[np.ndarray, float]:
    """Attitudes (N, 4) of MuJoCo's tops after ``steps`` steps, and how far (m) the body
    origins (the pivots) moved."""
    import mujoco

    model, data = mujoco_start(q0, dt, variant)
    for _ in range(steps):
        mujoco.mj_step(model, data)
    drift = 0.0 if variant == "ball" else float(np.max(np.abs(data.qpos.reshape(-1, 7)[:, :3])))
    return _mujoco_rows(model, data)[0].copy(), drift


def mujoco_runner(q0: np.ndarray, dt: float, steps: int, variant: str) -> Callable[[], object]:
    """``steps`` steps of the ``len(q0)``-top model in C (``mujoco.rollout``, one thread)."""
    import mujoco
    from mujoco import rollout

    model, data = mujoco_start(q0, dt, variant)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, state, spec)
    out = np.empty((1, steps, state.size))
    return lambda: rollout.rollout(model, data, state[None], nstep=steps, state=out)


# --------------------------------------------------------------------------------------
# the parts


def per_body_step(fn: Callable[[], object], n: int, steps: int) -> float:
    """Seconds per body-step of ``fn`` (one thread, best process CPU time)."""
    with threads(1):
        return best_cpu_time(fn) / (n * steps)


def interleaved(fns: list[Callable[[], object]], body_steps: int, repeat: int = 3) -> list[float]:
    """Seconds per body-step of each of ``fns``, timed in turn within each of ``repeat``
    rounds (one thread, best process CPU time), so that a burst of load on the shared machine
    hits the contenders of one ratio alike."""
    best = [math.inf] * len(fns)
    with threads(1):
        for fn in fns:
            fn()
        for _ in range(repeat):
            for i, fn in enumerate(fns):
                t0 = time.process_time()
                fn()
                best[i] = min(best[i], time.process_time() - t0)
    return [b / body_steps for b in best]


def check_agreement(name: str, q: np.ndarray, L: np.ndarray, tr, steps: int) -> float:
    """Largest difference of a contender's final ``q`` and ``L_b`` from tumble's."""
    diff = max(float(np.max(np.abs(q - tr.q[-1]))), float(np.max(np.abs(L - tr.L_body[-1]))))
    if not diff <= AGREE_ATOL_PER_STEP * steps:
        raise AssertionError(f"{name} disagrees with tumble by {diff:.3g} after {steps} steps")
    return diff


def throughput(
    methods, sizes, budget, model, lib, lib_free
) -> tuple[str, dict[tuple[str, int], float]]:
    """Parts 1 and 3: ns per body-step torque-free, with gravity, and the same two in C."""
    ns: dict[tuple[str, int], float] = {}
    rows = []
    missed = []
    for m in methods:
        for n in sizes:
            q, omega, L = tops(n)
            steps = max(4, budget // n)
            free = tumble_runner(m, q, omega, TIMING_DT, steps, None)
            grav = tumble_runner(m, q, omega, TIMING_DT, steps, model)
            fns: list[Callable[[], object]] = [free, grav]
            if lib is not None and m in C_METHODS:
                run_c = c_runner(lib, m, q, L, TIMING_DT, steps)
                diff = check_agreement(f"C {m}", *run_c(), grav(), steps)
                fns += [run_c, c_runner(lib_free, m, q, L, TIMING_DT, steps)]
            t_free, t_grav, *t_c_list = interleaved(fns, n * steps)
            ns[(m, n)] = t_grav * 1e9
            ratio = t_grav / t_free
            c_cells = ["", "", "", "", ""]
            if t_c_list:
                t_c, t_c_free = t_c_list
                ns[(f"C {m}", n)] = t_c * 1e9
                c_cells = [f"{t_c_free * 1e9:.1f}", f"{t_c * 1e9:.1f}", f"{t_c / t_c_free:.2f}",
                           f"{t_grav / t_c:.2f}", f"{diff:.0e}"]  # fmt: skip
            rows.append(
                [f"`{m}`", f"{n:,}", f"{steps:,}", f"{t_free * 1e9:.1f}", f"{t_grav * 1e9:.1f}",
                 f"{ratio:.2f}", *c_cells]
            )  # fmt: skip
            print(" | ".join(rows[-1]), flush=True)
            if ratio > GOAL_MODEL:
                missed.append(f"`{m}` N = {n:,}: {ratio:.2f}")
    header = ["method", "bodies", "steps", "torque-free", "gravity", "gravity / free",
              "C torque-free", "C gravity", "C gravity / free", "tumble / C (gravity)",
              "C vs tumble"]  # fmt: skip
    goal = (
        f"Goal gravity / free <= {GOAL_MODEL}: MISSED in " + "; ".join(missed)
        if missed
        else f"Goal gravity / free <= {GOAL_MODEL}: met in every row."
    )
    text = (
        "### Gravity inside the compiled loop against the torque-free loop and C\n\n"
        "ns per body-step (lower is better), one thread, best-of-3 process CPU time (the "
        "contenders of a row timed in turn in each round), "
        f"dt = {TIMING_DT:g}, first and last state recorded. `gravity / free`: the goal is "
        f"<= {GOAL_MODEL}. C: the heavy-top step in C (`-O3 -march=native`, no fast-math, one "
        "body at a time), the formulas of tumble's `splitting` (Strang half kicks) and `rk4` "
        "(torque at the stages) in the same order, and the same source compiled with the "
        "torque set to zero (the compiler then drops the torque's work): `C gravity / free` "
        "is what the torque costs in the algorithm itself. Last column: largest difference "
        "of C's final q and L_b from tumble's.\n\n" + markdown_table(header, rows) + "\n\n" + goal
    )
    return text, ns


def callable_path(methods, steps, model, ns) -> str:
    """Part 2: the Python-callable torque for one body, and its overhead per step."""
    q, w, _ = tops(1)
    calls = 1000
    t_fn = best_cpu_time(lambda: [gravity_callable(0.0, q[0], w[0]) for _ in range(calls)])
    t_fn /= calls
    rows = []
    for m in methods:
        path = tumble_runner(m, q[0], w[0], TIMING_DT, steps, gravity_callable)
        t_path = per_body_step(path, 1, steps)
        if (m, 1) in ns:
            t_model = ns[(m, 1)] * 1e-9
        else:
            t_model = per_body_step(tumble_runner(m, q, w, TIMING_DT, steps, model), 1, steps)
        overhead = t_path - t_fn - t_model
        rows.append(
            [f"`{m}`", f"{t_path * 1e6:.2f}", f"{t_fn * 1e6:.2f}", f"{t_model * 1e6:.3f}",
             f"{overhead * 1e6:.2f}", "met" if overhead * 1e6 <= GOAL_CALLABLE_US else "MISSED"]
        )  # fmt: skip
        print(" | ".join(rows[-1]), flush=True)
    header = ["method", "callable path", "f alone", "compiled model", "overhead", "goal"]
    return (
        "### The Python-callable path, one body\n\n"
        "µs per step of `simulate(..., torque=f)` with `f(t, q, omega)` the same gravity "
        "torque (a numba function, called from Python like any callable), `f`'s own time "
        "per call from Python, the compiled model's time per step, and "
        f"the overhead = path - f - compiled (goal <= {GOAL_CALLABLE_US:g} µs). "
        f"{steps:,} steps, one thread, best-of-3 process CPU time.\n\n"
        + markdown_table(header, rows)
    )


def mujoco_costs(sizes, budget) -> dict[tuple[str, int], float]:
    """Part 4's timing: MuJoCo's ns per body-step for ``k`` tops in one model."""
    out = {}
    for variant in MUJOCO_VARIANTS:
        for k in sizes:
            q, _, _ = tops(k)
            # The constrained variants cost ~10x more per body-step: fewer steps.
            steps = max(4, budget // k // (1 if variant == "ball" else 10))
            t = per_body_step(mujoco_runner(q, TIMING_DT, steps, variant), k, steps) * 1e9
            out[(variant, k)] = t
            print(f"{MUJOCO_VARIANTS[variant]}, K = {k:,}: {t:.0f} ns per body-step", flush=True)
    return out


def equal_error(methods, errors, ns, mj_ns: float) -> str:
    """Each tumble method's cost per simulated second at MuJoCo's error at the finest dt,
    from its error at the two ends of ``DTS`` (measured order ``p``, ``err ∝ dt^p``)."""
    dt1, dt2 = DTS[0], DTS[-1]
    target = errors[("ball", dt2)]
    parts = []
    for m in methods:
        e1, e2 = errors[(m, dt1)], errors[(m, dt2)]
        p = math.log(e1 / e2) / math.log(dt1 / dt2)
        if not p > 0.5 or math.isnan(ns[m]):
            parts.append(f"`{m}` does not converge here (measured order {p:.1f})")
            continue
        dt_eq = dt2 * (target / e2) ** (1.0 / p)
        ratio = (mj_ns / dt2) / (ns[m] / dt_eq)
        parts.append(f"`{m}` (order {p:.1f}) needs dt = {dt_eq:.1e}: MuJoCo / tumble = {ratio:.2g}")
    return (
        f"At equal error (MuJoCo's {target:.1e} rad at dt = {dt2:g}, each method's dt "
        "extrapolated from its measured order), cost per simulated second, MuJoCo / tumble: "
        + "; ".join(parts)
        + "."
    )


def accuracy(methods, model, lib, ns, cost_n, mj_ns) -> str:
    """Attitude errors at ``T_FINAL`` against the ODE reference, next to each one's cost."""
    from tumble import torques

    q_ref = reference_final()
    spread = float(rotation.rotation_angle(q_ref, reference_final(ODE_RTOL * 10)))
    qa, wa, La = tops(ACCURACY_TOPS)
    theirs = torques.reference(qa[0], wa[0], INV_INERTIA, model, [T_FINAL])[0][-1]
    vs_tumble = float(rotation.rotation_angle(q_ref, theirs))
    mj_sizes = sorted({k for _, k in mj_ns})
    mj_k = COST_N if COST_N in mj_sizes else max(mj_sizes, default=0)
    mj_cost = mj_ns.get(("ball", mj_k), math.nan)

    def cost(t_ns: float) -> list[str]:
        ratio = mj_cost / t_ns
        return [
            "" if math.isnan(t_ns) else f"{t_ns:.0f}",
            "" if math.isnan(ratio) else f"{ratio:.2g}",
        ]

    rows: list[list[str]] = []
    errors: dict[tuple[str, float], float] = {}
    for dt in DTS:
        steps = round(T_FINAL / dt)
        first = len(rows)
        for m in methods:
            tr = rigid.simulate(
                qa, wa, np.array(INV_INERTIA), dt, steps, m, torque=model, every=steps
            )
            err = errors[(m, dt)] = attitude_error(tr.q[-1], q_ref)
            rows.append(
                [f"tumble `{m}`", f"{dt:g}", f"{err:.2e}", *cost(ns.get((m, cost_n), math.nan))]
            )
            if lib is not None and m in C_METHODS:
                cq, cL = c_runner(lib, m, qa, La, dt, steps)()
                check_agreement(f"C {m}", cq, cL, tr, steps)
                err = attitude_error(cq, q_ref)
                rows.append(
                    [
                        f"C `{m}`",
                        f"{dt:g}",
                        f"{err:.2e}",
                        *cost(ns.get((f"C {m}", cost_n), math.nan)),
                    ]
                )
        for variant, label in MUJOCO_VARIANTS.items() if mj_ns else ():
            q_mj, drift = mujoco_final(qa, dt, steps, variant)
            err = errors[(variant, dt)] = attitude_error(q_mj, q_ref)
            moved = f", pivots moved {drift:.1e} m" if drift else ""
            rows.append(
                [label + moved, f"{dt:g}", f"{err:.2e}", *cost(mj_ns[(variant, mj_k)])]
            )  # fmt: skip
        for row in rows[first:]:
            print(" | ".join(row), flush=True)
    if mj_ns:
        at_n1 = ", ".join(f"`{m}` {ns[(m, 1)]:.0f}" for m in methods if (m, 1) in ns)
        mj_text = (
            equal_error(methods, errors, {m: ns.get((m, cost_n), math.nan) for m in methods},
                        mj_cost)
            + "\n\nMuJoCo ns per body-step (K tops in one model, one thread): "
            + "; ".join(
                f"{label}: "
                + ", ".join(f"K = {k:,}: {mj_ns[(v, k)]:.0f}" for k in mj_sizes)
                for v, label in MUJOCO_VARIANTS.items()
            )
            + f". tumble with gravity at N = 1: {at_n1}."
        )  # fmt: skip
        cost_text = (
            f", MuJoCo at K = {mj_k:,} tops in one model; `MuJoCo / this`: MuJoCo's (ball "
            "joints) cost per body-step over this row's."
        )
    else:
        mj_text, cost_text = "MuJoCo: SKIPPED (not installed).", "."
    header = ["contender", "dt", "attitude error (rad)", "ns per body-step", "MuJoCo / this"]
    return (
        "### Accuracy and cost against MuJoCo\n\n"
        f"Largest attitude error at t = {T_FINAL:g} s over {ACCURACY_TOPS} tops (azimuths "
        f"2πk/{ACCURACY_TOPS}) against the bench's own ODE reference (SciPy DOP853, rtol "
        f"{ODE_RTOL:g}, Euler's equations in the body frame with the gravity torque; it moves "
        f"by {spread:.1e} rad from rtol {ODE_RTOL * 10:g}, and `tumble.torques.reference` "
        f"is {vs_tumble:.1e} rad from it). ns per body-step from the runs above: tumble with "
        f"gravity at N = {cost_n:,}{cost_text}\n\n"
        + markdown_table(header, rows)
        + "\n\n"
        + mj_text
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tumble bench torques", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--mujoco-sizes", type=int, nargs="+", default=list(MUJOCO_SIZES))
    parser.add_argument("--quick", action="store_true", help="small runs, no BENCHMARKS.md")
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in rigid.METHODS or m == "exact":
            parser.error(f"--methods: expected names from {', '.join(METHODS)}, got {m!r}")
    budget, mj_budget, call_steps = BODY_STEPS, MUJOCO_BODY_STEPS, CALLABLE_STEPS
    if args.quick:
        args.sizes, args.mujoco_sizes, args.no_write = [1, 100], [1, 16], True
        budget, mj_budget, call_steps = BODY_STEPS // 50, MUJOCO_BODY_STEPS // 50, 200
    notes = []
    lib = compile_c(C_SOURCE, C_FLAGS)
    if lib is None:
        notes.append("No C compiler found: the C reference was SKIPPED.")
    try:
        import mujoco  # noqa: F401
    except ImportError:
        has_mujoco = False
    else:
        has_mujoco = True
    if not has_mujoco:
        notes.append(
            "MuJoCo is not installed (`pip install mujoco`, or the `bench` extra): "
            "the MuJoCo part was SKIPPED."
        )
    for line in notes:
        print(line, flush=True)
    load_start = os.getloadavg()[0]
    model = gravity_model()
    lib_free = None if lib is None else compile_c(C_SOURCE, (*C_FLAGS, "-DNO_TORQUE"))
    part1, ns = throughput(methods, args.sizes, budget, model, lib, lib_free)
    part2 = callable_path(methods, call_steps, model, ns)
    mj_ns = mujoco_costs(args.mujoco_sizes, mj_budget) if has_mujoco else {}
    cost_n = COST_N if COST_N in args.sizes else max(args.sizes)
    part4 = accuracy(methods, model, lib, ns, cost_n, mj_ns)
    body = (
        "Heavy symmetric top pivoting at a fixed point: m = 1 kg, c = (0, 0, 0.5) m, "
        "I_pivot = (1, 1, 0.5) kg m² (I_com = (0.75, 0.75, 0.5)), g = (0, 0, -9.81) m/s², "
        "tilted 0.3 rad, spinning 50 rad/s about its axis (a fast top: nutation ~25 rad/s, "
        "precession ~0.2 rad/s); see `benchmarks/bench_torques.py` for every contender.\n\n"
        + "".join(f"**{line}**\n\n" for line in notes)
        + "\n\n".join([part1, part2, part4])
        + "\n\nThe machine was shared with other engineers' test runs while this ran (load "
        f"average {load_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the end, on "
        f"{os.cpu_count()} cores): single-thread CPU times vary by ~20 % between runs; the "
        "ratios, measured in the same run one row at a time, are steadier than the absolute "
        "numbers."
    )
    print(body)
    if not args.no_write:
        write_section("torques", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: ``tumble.rigid.simulate`` throughput in body-steps per second.

N = 1 .. 10^6 independent bodies (random attitudes, momenta and inertias, no torque) are
advanced by ``momentum_first`` and ``modified_jolt``. Contenders, measured in the same run:

- tumble ``simulate`` on one numba thread and on every core (``prange`` over bodies);
- a C reference of the same algorithm (the same formulas in the same order, including the
  constraint mask and the zero torque that tumble's kernels apply each step, and tumble's
  small-angle polynomials for sin and cos), compiled at benchmark time with
  ``-O3 -march=native`` and no fast-math, single-threaded, in two loop orders: a loop over
  bodies with, per body, a loop over steps (state in locals), and tumble's order (blocks of
  64 bodies, the step loop outside, state in arrays); and once more per body with libm's
  ``sin``/``cos`` (the algorithm before the polynomials);
- a NumPy implementation of the step, vectorised over bodies, with the loop over steps in
  Python.

Record policy for all: the first and the last state of each body (``every = steps``),
written as ``simulate`` writes them (``q``, world ``omega`` and ``L``, ``L_b``, energy).
Steps per run are chosen so each run does about ``BODY_STEPS`` body-steps (fewer steps for
10^6 bodies). Every contender's final state is checked against tumble's before timing.

Goals (issue 3): at 10^5 bodies, tumble single-threaded within 1.5x of the C reference (the
faster of its two loop orders), and at least 10x faster than the NumPy step.

With ``--symmetric-study`` it instead measures ``momentum_first_symmetric`` against
``splitting`` (and ``momentum_first``, ``midpoint`` for context) on attitude error per unit
cost: for a few bodies and a range of ``dt``, the largest attitude error against the exact
solution over ``t <= STUDY_T`` and the measured ns per step (one thread, interleaved
rounds); written to the ``rigid-symmetric`` section and quoted in ``docs/integrators.md``.

With ``--pairing-study`` it measures the six axis pairings of ``symmetric_top_split``
(symmetric top plus remainder) on several bodies and momenta, the measurement behind the
pairing rule of ``tumble._kernels.rigid.symmetric_top_pairing``: written to the
``rigid-pairing`` section and quoted in ``docs/integrators.md``.

Usage: ``tumble bench rigid [--sizes N ...] [--methods a,b] [--symmetric-study]
[--pairing-study] [--no-write]``.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import itertools
import math
from collections.abc import Callable

import numba
import numpy as np

from _common import (
    C_QUATERNIONS,
    best_cpu_time,
    best_time,
    c_pointer,
    compile_c,
    markdown_table,
    np_qmul,
    threads,
    write_section,
)
from tumble import diagnostics, exact, rigid, rotation, scenarios, torques
from tumble._kernels import inertia as _inertia
from tumble._kernels import rotation as _rot
from tumble._kernels.rigid import flows as _rigid

SIZES = (1, 10, 1_000, 10_000, 100_000, 1_000_000)
METHODS = ("momentum_first", "modified_jolt")
BODY_STEPS = 4_000_000
NUMPY_SECONDS = 0.3
GOAL_N = 100_000
GOAL_C = 1.5
GOAL_NUMPY = 10.0
# Agreement of the contenders' final states with tumble's, per step of the run: the same
# formulas rounded differently (GCC contracts a*b+c into FMA at -O3 -march=native; NumPy
# evaluates in another order) differ by a few ulps per step, which accumulate.
AGREE_ATOL_PER_STEP = 1e-13
# The C reference twice: with tumble's small-angle polynomials for sin and cos (the same
# algorithm; the goal's ratio) and with libm's sin and cos (the code before them).
C_POLY = "C -O3"
C_LIBM = "C -O3 libm"
# ... and with tumble's loop order (blocks of bodies, the step loop outside), polynomials.
C_BLOCKED = "C -O3 blocked"

C_SOURCE = (
    C_QUATERNIONS
    + r"""
static inline qt rotvec_to_q(v3 phi) {
    v3 x = scale(phi, 0.5);
    double z = x.x * x.x + x.y * x.y + x.z * x.z;
    double c, s;
#ifdef POLY_SINCOS
    /* tumble's cos_sinc_small: Taylor polynomials in z = t^2, Estrin form. */
    if (z <= SMALL_ANGLE_SQ) {
        static const double p[7] = {COS_P}, q[8] = {SINC_S};
        double z2 = z * z, z4 = z2 * z2;
        double cp = ((p[0] + p[1] * z) + z2 * (p[2] + p[3] * z))
                    + z4 * ((p[4] + p[5] * z) + z2 * p[6]);
        double sp = ((q[0] + q[1] * z) + z2 * (q[2] + q[3] * z))
                    + z4 * ((q[4] + q[5] * z) + z2 * (q[6] + q[7] * z));
        double hz = 0.5 * z, w = 1.0 - hz;
        c = w + (((1.0 - w) - hz) + z2 * cp);
        s = 1.0 + z * sp;
    } else
#endif
    {
        double t = sqrt(z);
        if (t < 1e-3) { double t2 = t * t; s = 1.0 - t2 / 6.0 + t2 * t2 / 120.0; }
        else s = sin(t) / t;
        c = cos(t);
    }
    qt r = {c, s * x.x, s * x.y, s * x.z};
    return r;
}
static inline v3 turn(v3 v, v3 phi) { return qrotate(rotvec_to_q(phi), v); }
static inline v3 constrain(v3 L, v3 J) {
    v3 r = {J.x > 0.0 ? L.x : 0.0, J.y > 0.0 ? L.y : 0.0, J.z > 0.0 ? L.z : 0.0};
    return r;
}
static inline double j_prime(v3 w, v3 L, v3 J) {
    v3 k = cross(w, L);
    double kk = dot(k, k);
    if (kk > 0.0 && kk > 1e-24 * dot(w, w) * dot(L, L)) return dot(k, mul(J, k)) / kk;
    double LL = dot(L, L);
    return LL > 0.0 ? dot(L, mul(J, L)) / LL : 0.0;
}

/* Shared start of both methods: L' = L + h tau_b, J', Omega (body frame). */
static inline void modified_omega(qt q, v3 L, v3 J, v3 tau, double h,
                                  v3 *Lp, double *jp, v3 *Om) {
    *Lp = axpy(L, h, qrotate(qconj(q), tau));
    v3 w = mul(J, *Lp);
    *jp = j_prime(w, *Lp, J);
    v3 o = {w.x - *jp * Lp->x, w.y - *jp * Lp->y, w.z - *jp * Lp->z};
    *Om = o;
}

static inline void momentum_first(qt *q, v3 *L, v3 J, v3 tau, double h) {
    v3 Lp, Om; double jp;
    modified_omega(*q, *L, J, tau, h, &Lp, &jp, &Om);
    qt r = rotvec_to_q(scale(Om, h));
    qt q1 = qmul(qmul(*q, rotvec_to_q(scale(Lp, jp * h))), r);
    *L = qrotate(qconj(r), Lp);
    *q = qnormalize(q1);
}

static inline void modified_jolt(qt *q, v3 *L, v3 J, v3 tau, double h) {
    v3 Lp, Om; double jp;
    modified_omega(*q, *L, J, tau, h, &Lp, &jp, &Om);
    v3 L1 = turn(Lp, scale(Om, -h));
    *q = qnormalize(qmul(*q, rotvec_to_q(scale(mul(J, L1), h))));
    *L = L1;
}

static inline void record(long r, long b, long n, qt q, v3 L, v3 J, double *q_out,
                          double *w_out, double *Lw_out, double *Lb_out, double *E_out) {
    v3 w = mul(J, L);
    v3 ww = qrotate(q, w);
    v3 Lw = qrotate(q, L);
    double *qo = q_out + 4 * (r * n + b);
    qo[0] = q.w; qo[1] = q.x; qo[2] = q.y; qo[3] = q.z;
    double *a = w_out + 3 * (r * n + b), *c = Lw_out + 3 * (r * n + b);
    double *d = Lb_out + 3 * (r * n + b);
    a[0] = ww.x; a[1] = ww.y; a[2] = ww.z;
    c[0] = Lw.x; c[1] = Lw.y; c[2] = Lw.z;
    d[0] = L.x; d[1] = L.y; d[2] = L.z;
    E_out[r * n + b] = 0.5 * dot(w, L);
}

#define SIMULATE(NAME, STEP)                                                              \
void NAME(long n, const double *q0, const double *L0, const double *Jin,                   \
          const double *tau_in, double h, long steps, long every, double *q_out,          \
          double *w_out, double *Lw_out, double *Lb_out, double *E_out) {                 \
    for (long b = 0; b < n; b++) {                                                        \
        qt q = {q0[4 * b], q0[4 * b + 1], q0[4 * b + 2], q0[4 * b + 3]};                   \
        v3 L = {L0[3 * b], L0[3 * b + 1], L0[3 * b + 2]};                                 \
        v3 J = {Jin[3 * b], Jin[3 * b + 1], Jin[3 * b + 2]};                              \
        v3 tau = {tau_in[3 * b], tau_in[3 * b + 1], tau_in[3 * b + 2]};                   \
        record(0, b, n, q, L, J, q_out, w_out, Lw_out, Lb_out, E_out);                    \
        long r = 1;                                                                       \
        for (long s = 1; s <= steps; s++) {                                               \
            L = constrain(L, J);                                                          \
            STEP(&q, &L, J, tau, h);                                                      \
            if (s % every == 0 || s == steps) {                                           \
                record(r, b, n, q, constrain(L, J), J, q_out, w_out, Lw_out, Lb_out,      \
                       E_out);                                                            \
                r++;                                                                      \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
}

/* tumble's loop order: a block of bodies advanced one step at a time, state in arrays. */
#define BLOCK 64
#define SIMULATE_BLOCKED(NAME, STEP)                                                      \
void NAME(long n, const double *q0, const double *L0, const double *Jin,                   \
          const double *tau_in, double h, long steps, long every, double *q_out,          \
          double *w_out, double *Lw_out, double *Lb_out, double *E_out) {                 \
    qt q[BLOCK]; v3 L[BLOCK], J[BLOCK], tau[BLOCK];                                       \
    for (long b0 = 0; b0 < n; b0 += BLOCK) {                                              \
        long m = n - b0 < BLOCK ? n - b0 : BLOCK;                                         \
        for (long i = 0; i < m; i++) {                                                    \
            long b = b0 + i;                                                              \
            qt qi = {q0[4 * b], q0[4 * b + 1], q0[4 * b + 2], q0[4 * b + 3]};              \
            v3 Li = {L0[3 * b], L0[3 * b + 1], L0[3 * b + 2]};                            \
            v3 Ji = {Jin[3 * b], Jin[3 * b + 1], Jin[3 * b + 2]};                         \
            v3 ti = {tau_in[3 * b], tau_in[3 * b + 1], tau_in[3 * b + 2]};                \
            q[i] = qi; L[i] = Li; J[i] = Ji; tau[i] = ti;                                 \
            record(0, b, n, qi, Li, Ji, q_out, w_out, Lw_out, Lb_out, E_out);             \
        }                                                                                 \
        long r = 1;                                                                       \
        for (long s = 1; s <= steps; s++) {                                               \
            for (long i = 0; i < m; i++) {                                                \
                L[i] = constrain(L[i], J[i]);                                             \
                STEP(&q[i], &L[i], J[i], tau[i], h);                                      \
            }                                                                             \
            if (s % every == 0 || s == steps) {                                           \
                for (long i = 0; i < m; i++)                                              \
                    record(r, b0 + i, n, q[i], constrain(L[i], J[i]), J[i], q_out, w_out, \
                           Lw_out, Lb_out, E_out);                                        \
                r++;                                                                      \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
}

SIMULATE(simulate_momentum_first, momentum_first)
SIMULATE(simulate_modified_jolt, modified_jolt)
SIMULATE_BLOCKED(blocked_momentum_first, momentum_first)
SIMULATE_BLOCKED(blocked_modified_jolt, modified_jolt)
"""
)


def c_source() -> str:
    """The C reference with tumble's polynomial coefficients filled in (exact repr)."""
    return (
        C_SOURCE.replace("SMALL_ANGLE_SQ", repr(_rot.SMALL_ANGLE_SQ))
        .replace("COS_P", ", ".join(map(repr, _rot.COS_P)))
        .replace("SINC_S", ", ".join(map(repr, _rot.SINC_S)))
    )


# --------------------------------------------------------------------------------------
# the NumPy step


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.stack(
        [
            a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
            a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
            a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0],
        ],
        axis=1,
    )


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


def _qrotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    u = q[:, 1:]
    t = 2.0 * _cross(u, v)
    return v + q[:, :1] * t + _cross(u, t)


def _rotvec_to_q(phi: np.ndarray) -> np.ndarray:
    x = 0.5 * phi
    t = np.sqrt(_dot(x, x))
    t2 = t * t
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(t < 1e-3, 1.0 - t2 / 6.0 + t2 * t2 / 120.0, np.sin(t) / t)
    return np.concatenate([np.cos(t)[:, None], s[:, None] * x], axis=1)


def _numpy_omega(q, L, J, tau, h):
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    Lp = L + h * _qrotate(conj, tau)
    w = J * Lp
    k = _cross(w, Lp)
    kk = _dot(k, k)
    LL = _dot(Lp, Lp)
    use_k = (kk > 0.0) & (kk > 1e-24 * _dot(w, w) * LL)
    with np.errstate(invalid="ignore", divide="ignore"):
        jk = _dot(k, J * k) / kk
        jl = np.where(LL > 0.0, _dot(Lp, w) / LL, 0.0)
    jp = np.where(use_k, jk, jl)
    return Lp, jp, w - jp[:, None] * Lp


def _normalize(q: np.ndarray) -> np.ndarray:
    return q / np.sqrt(_dot(q, q))[:, None]


def numpy_momentum_first(q, L, J, tau, h):
    Lp, jp, Om = _numpy_omega(q, L, J, tau, h)
    r = _rotvec_to_q(Om * h)
    q1 = np_qmul(np_qmul(q, _rotvec_to_q(Lp * (jp * h)[:, None])), r)
    return _normalize(q1), _qrotate(r * np.array([1.0, -1.0, -1.0, -1.0]), Lp)


def numpy_modified_jolt(q, L, J, tau, h):
    Lp, _, Om = _numpy_omega(q, L, J, tau, h)
    L1 = _qrotate(_rotvec_to_q(-h * Om), Lp)
    return _normalize(np_qmul(q, _rotvec_to_q(J * L1 * h))), L1


NUMPY_STEPS = {"momentum_first": numpy_momentum_first, "modified_jolt": numpy_modified_jolt}


def numpy_simulate(method, q, L, J, tau, h, steps):
    """Loop over steps in Python; records the first and last state like ``simulate``."""
    step = NUMPY_STEPS[method]
    records = [_numpy_record(q, L, J)]
    mask = J > 0
    for _ in range(steps):
        q, L = step(q, np.where(mask, L, 0.0), J, tau, h)
    records.append(_numpy_record(q, np.where(mask, L, 0.0), J))
    return records


def _numpy_record(q, L, J):
    w = J * L
    return q.copy(), _qrotate(q, w), _qrotate(q, L), L.copy(), 0.5 * _dot(w, L)


# --------------------------------------------------------------------------------------
# the runs


def bodies(n: int, rng: np.random.Generator):
    """Random bodies: ``q``, world ``omega``, body ``L`` (as simulate derives it), ``J``."""
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    J = rng.uniform(0.3, 1.5, size=(n, 3))
    omega = rng.normal(size=(n, 3))
    L = np.ascontiguousarray(_inertia.body_momentum_gu(q, omega, J))
    return q, omega, L, J, np.zeros((n, 3))


def outputs(n: int):
    return (
        np.empty((2, n, 4)),
        np.empty((2, n, 3)),
        np.empty((2, n, 3)),
        np.empty((2, n, 3)),
        (np.empty((2, n))),
    )


def tumble_runner(method, q, omega, J, h, steps) -> Callable[[], rigid.Trajectory]:
    """The public ``simulate`` (validation, allocation and the compiled loop)."""
    return lambda: rigid.simulate(q, omega, J, h, steps, method, every=steps)


def _final(tr: rigid.Trajectory) -> tuple:
    return tr.q[-1], tr.omega[-1], tr.L[-1], tr.L_body[-1], tr.energy[-1]


def c_runner(lib, method, q, L, J, tau, h, steps, loop="simulate") -> Callable[[], object]:
    fn = getattr(lib, f"{loop}_{method}")
    fn.restype = None
    fn.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * 4 + [ctypes.c_double, ctypes.c_long,
                   ctypes.c_long] + [ctypes.c_void_p] * 5  # fmt: skip
    out = outputs(q.shape[0])
    ptrs = [c_pointer(a) for a in (q, L, J, tau)]
    optrs = [c_pointer(a) for a in out]

    def run():
        fn(q.shape[0], *ptrs, h, steps, steps, *optrs)
        return out

    return run


def check_agreement(name: str, final: tuple, reference: tuple, steps: int) -> float:
    """Largest difference of the last record (q, omega, L, L_b, E) from tumble's."""
    diff = max(
        float(np.max(np.abs(a - b))) if a.size else 0.0
        for a, b in zip(final, reference, strict=True)
    )
    if not diff <= AGREE_ATOL_PER_STEP * steps:
        raise AssertionError(f"{name} disagrees with tumble by {diff:.3g}")
    return diff


STUDY_T = 40.0
STUDY_DTS = (0.4, 0.2, 0.1, 0.05, 0.025)
STUDY_METHODS = ("splitting", "momentum_first_symmetric", "midpoint", "momentum_first")
STUDY_BODIES = {
    "asymmetric (1, 0.6, 0.35)": (1.0, 0.6, 0.35),
    "near-symmetric (1, 0.9, 0.35)": (1.0, 0.9, 0.35),
    "nearly symmetric (1, 0.98, 0.35)": (1.0, 0.98, 0.35),
    "article default (0.5, 1, 1.5)": (0.5, 1.0, 1.5),
}
STUDY_OMEGA_BODY = (0.5, -0.48, 0.21)


def symmetric_study() -> str:
    """Attitude error per unit cost of the symmetric composition versus splitting."""
    ns: dict[str, list[float]] = {m: [] for m in STUDY_METHODS}
    rows = []
    for label, J in STUDY_BODIES.items():
        case0 = scenarios.explicit_case(J, STUDY_OMEGA_BODY)
        for dt in STUDY_DTS:
            case = scenarios.Case(
                case0.inv_inertia, case0.q0, case0.omega0, dt, round(STUDY_T / dt), case0.period
            )
            err = {}
            for m in STUDY_METHODS:
                tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, dt, case.steps, m)
                err[m] = float(np.max(diagnostics.attitude_error(tr, case.inv_inertia)))
                ns[m].append(scenarios.time_per_step(case, m))
            rows.append(
                [
                    label,
                    f"{dt:g}",
                    *(f"{err[m]:.2e}" for m in STUDY_METHODS),
                    f"{err['splitting'] / err['momentum_first_symmetric']:.1f}",
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    cost = {m: float(np.median(v)) for m, v in ns.items()}
    ratio = cost["momentum_first_symmetric"] / cost["splitting"]
    header = ["body", "dt", *(f"{m}" for m in STUDY_METHODS), "splitting / symmetric"]
    return (
        "### Symmetric momentum-first versus splitting (attitude error per unit cost)\n\n"
        f"Largest attitude error (rad) against the exact solution over t <= {STUDY_T:g}, "
        f"omega_body(0) = {STUDY_OMEGA_BODY}, identity attitude.\n\n"
        + markdown_table(header, rows)
        + "\n\nMedian cost per step (ns, one thread): "
        + ", ".join(f"{m} {cost[m]:.0f}" for m in STUDY_METHODS)
        + f". Cost ratio symmetric / splitting = {ratio:.2f}; both are second order, so at "
        f"equal work (steps x ns/step) the error ratio splitting / symmetric is the table's "
        f"last column divided by {ratio:.2f}² = {ratio**2:.1f}."
    )


PAIRING_BODIES = {
    "I = (1, 2, 3)": (1.0, 0.5, 1.0 / 3.0),
    "article J = (0.5, 1, 1.5)": (0.5, 1.0, 1.5),
    "J = (1, 1.1, 3)": (1.0, 1.1, 3.0),
    "J = (1, 2.9, 3)": (1.0, 2.9, 3.0),
    "J = (1, 2, 2.4)": (1.0, 2.0, 2.4),
    "J = (0.2, 1, 5)": (0.2, 1.0, 5.0),
}
PAIRING_MOMENTA = ((1.0, 0.4, 0.2), (0.2, 0.4, 1.0), (0.3, 1.0, 0.3))
PAIRING_T = 20.0
PAIRING_DT = 0.05


@numba.njit
def _run_pairing(q, L, J, a, b, c, h, n):
    qq = (q[0], q[1], q[2], q[3])
    LL = (L[0], L[1], L[2])
    for _ in range(n):
        qq, LL = _rigid.symmetric_top_split(qq, LL, (J[0], J[1], J[2]), a, b, c, h)
    return np.array(qq)


def pairing_study() -> str:
    """Attitude error of the six axis pairings of the symmetric-top-plus-remainder split."""
    perms = list(itertools.permutations(range(3)))
    steps = round(PAIRING_T / PAIRING_DT)
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    rows = []
    regret = {p: [] for p in (*perms, "rule")}
    for label, Jt in PAIRING_BODIES.items():
        J = np.array(Jt)
        for Lt in PAIRING_MOMENTA:
            L = np.array(Lt)
            q_ref = exact.torque_free(q0, J * L, J, [PAIRING_T])[0][0]
            err = {
                p: float(
                    rotation.rotation_angle(_run_pairing(q0, L, J, *p, PAIRING_DT, steps), q_ref)
                )
                for p in perms
            }
            rule = tuple(int(i) for i in _rigid.symmetric_top_pairing(Jt))
            best = min(err.values())
            for p in perms:
                regret[p].append(err[p] / best)
            regret["rule"].append(err[rule] / best)
            rows.append(
                [label, str(Lt), *(f"{err[p]:.1e}" for p in perms), "".join(map(str, rule)),
                 f"{err[rule] / best:.2f}"]
            )  # fmt: skip
            print(" | ".join(rows[-1]), flush=True)
    mean = {p: float(np.exp(np.mean(np.log(v)))) for p, v in regret.items()}
    rows.append(
        ["geometric mean of error / best", "", *(f"{mean[p]:.2f}" for p in perms), "",
         f"{mean['rule']:.2f}"]
    )  # fmt: skip
    header = ["body", "L_b(0)", *("abc = " + "".join(map(str, p)) for p in perms), "rule",
              "rule / best"]  # fmt: skip
    return (
        "### Symmetric top plus remainder: the axis pairing\n\n"
        f"Attitude error (rad) at t = {PAIRING_T:g}, dt = {PAIRING_DT:g}, against the exact "
        "solution, of `R(h/2) S(h) R(h/2)` with the symmetric top `S = ½ J_a |L|² + "
        "½ (J_c - J_a) L_c²` and the remainder `R = ½ (J_b - J_a) L_b²`, for every axis "
        "pairing `abc`; `rule` is the pairing `symmetric_top_split` takes (a = median, b = "
        "the farther of the smallest and largest).\n\n" + markdown_table(header, rows)
    )


TORQUE_STUDY_DTS = (0.02, 0.01, 0.005)
TORQUE_STUDY_T = 4.0
TORQUE_STUDY_LONG_T = 2000.0


def torque_study() -> str:
    """Each method under a conservative torque: measured order and total-energy behaviour."""
    case = scenarios.torque_case("heavy-top")
    q0, w0, J, model = case.q0, case.omega0, case.inv_inertia, case.torque
    t = np.array([TORQUE_STUDY_T])
    q_ref = torques.reference(q0, w0, J, model, t)[0][-1]
    rows = []
    for m in rigid.METHODS:
        if m == "exact":
            continue
        err = []
        for dt in TORQUE_STUDY_DTS:
            tr = rigid.simulate(q0, w0, J, dt, round(TORQUE_STUDY_T / dt), m, model, 10**9)
            err.append(float(rotation.rotation_angle(tr.q[-1], q_ref)))
        order = float(np.log2(err[-2] / err[-1]))
        dt = 0.005
        steps = round(TORQUE_STUDY_LONG_T / dt)
        tr = rigid.simulate(q0, w0, J, dt, steps, m, model, steps // 100, on_divergence="ignore")
        k = int(diagnostics.finite_records(tr))
        E = tr.energy[:k] + torques.potential_energy(model, tr.q[:k], J)
        dE = np.abs(E - E[0]) / abs(E[0])
        first, last = np.max(dE[1:11]), np.max(dE[-10:])
        trend = "bounded" if last <= 2 * first else ("grows" if last > 10 * first else "drifts")
        if k < len(tr.t):
            trend = f"blows up (t = {tr.t[k]:.3g})"
        rows.append([f"`{m}`", f"{order:.2f}", f"{first:.1e}", f"{last:.1e}", trend])
        print(" | ".join(rows[-1]), flush=True)
    return (
        "### Under a conservative torque (the heavy top of `tumble compare --torque`)\n\n"
        f"Order: attitude error at t = {TORQUE_STUDY_T:g} against `torques.reference`, from "
        f"dt = {TORQUE_STUDY_DTS[-2]:g} to {TORQUE_STUDY_DTS[-1]:g}. Energy: total energy "
        f"(kinetic + potential) relative error over t <= {TORQUE_STUDY_LONG_T:g} at dt = 0.005, "
        "largest over the first and the last tenth of the run.\n\n"
        + markdown_table(
            ["method", "measured order", "max dE/E, first tenth", "last tenth", "energy"], rows
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench rigid", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    studies = {
        "symmetric_study": (symmetric_study, "rigid-symmetric"),
        "torque_study": (torque_study, "rigid-torque"),
        "pairing_study": (pairing_study, "rigid-pairing"),
    }
    for flag, (study, _) in studies.items():
        parser.add_argument("--" + flag.replace("_", "-"), action="store_true", help=study.__doc__)
    args = parser.parse_args(argv)
    for flag, (study, section) in studies.items():
        if getattr(args, flag):
            text = study()
            print(text)
            if not args.no_write:
                write_section(section, text)
            return 0
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in METHODS:
            parser.error(f"--methods: expected names from {', '.join(METHODS)}, got {m!r}")
    flags = ("-O3", "-march=native")
    lib = compile_c(c_source(), (*flags, "-DPOLY_SINCOS"))
    lib_libm = compile_c(c_source(), flags)
    cores = numba.config.NUMBA_NUM_THREADS
    rng = np.random.default_rng(20261121)
    h = 0.05
    rows = []
    goal_lines = []
    for m in methods:
        for n in args.sizes:
            q, omega, L, J, tau = bodies(n, rng)
            steps = max(4, BODY_STEPS // n)
            run1 = tumble_runner(m, q, omega, J, h, steps)
            with threads(1):
                ref = _final(run1())
            rates = {}
            with threads(1):
                rates["tumble 1 thread"] = n * steps / best_cpu_time(run1)
            runc = run1
            with threads(cores):
                rates[f"tumble {cores} threads"] = (
                    n * steps / best_time(runc, min_time=0.0, repeat=3)
                )
            notes = []
            if lib is not None and lib_libm is not None:
                for key, cl, loop in (
                    (C_POLY, lib, "simulate"),
                    (C_BLOCKED, lib, "blocked"),
                    (C_LIBM, lib_libm, "simulate"),
                ):
                    runC = c_runner(cl, m, q, L, J, tau, h, steps, loop)
                    diff = check_agreement(key, tuple(a[1] for a in runC()), ref, steps)
                    notes.append(f"{key.split()[-1]} {diff:.0e}")
                    rates[key] = n * steps / best_cpu_time(runC)
            # NumPy costs ~tens of µs per step plus ~1 µs per body: size its run separately.
            np_steps = max(2, min(steps, int(NUMPY_SECONDS / (60e-6 + 1e-6 * n))))
            np_run = functools.partial(numpy_simulate, m, q, L, J, tau, h, np_steps)
            if np_steps == steps:
                notes.append(f"NumPy {check_agreement('NumPy', np_run()[1], ref, steps):.0e}")
            rates["NumPy step"] = n * np_steps / best_cpu_time(np_run, repeat=2)
            t1 = rates["tumble 1 thread"]
            c_ratio = rates[C_POLY] / t1 if C_POLY in rates else math.nan
            c_blocked_ratio = rates[C_BLOCKED] / t1 if C_BLOCKED in rates else math.nan
            c_libm_ratio = rates[C_LIBM] / t1 if C_LIBM in rates else math.nan
            np_ratio = t1 / rates["NumPy step"]
            np_all = rates[f"tumble {cores} threads"] / rates["NumPy step"]
            rows.append(
                [
                    m,
                    f"{n:,}",
                    steps,
                    *(f"{rates[k] / 1e6:.3g}" for k in rates),
                    f"{c_ratio:.2f}",
                    f"{c_blocked_ratio:.2f}",
                    f"{c_libm_ratio:.2f}",
                    f"{np_ratio:.1f}",
                    ", ".join(notes),
                ]
            )
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
            if n == GOAL_N:
                # The goal against the faster of the two same-algorithm C loops.
                c_best = max(c_ratio, c_blocked_ratio)
                goal_lines.append(
                    f"- `{m}`, N = {n:,}: C / tumble (1 thread) = {c_ratio:.2f}, "
                    f"C blocked / tumble = {c_blocked_ratio:.2f} "
                    f"(goal <= {GOAL_C} for the faster: "
                    f"{'met' if c_best <= GOAL_C else 'MISSED'}), "
                    f"C (libm) / tumble = {c_libm_ratio:.2f}; "
                    f"tumble (1 thread) / NumPy = {np_ratio:.1f} "
                    f"(goal >= {GOAL_NUMPY:g}: {'met' if np_ratio >= GOAL_NUMPY else 'MISSED'}), "
                    f"`simulate` as shipped ({cores} threads) / NumPy = {np_all:.1f} "
                    f"(goal >= {GOAL_NUMPY:g}: {'met' if np_all >= GOAL_NUMPY else 'MISSED'}); "
                    f"scalar C's best, C blocked / NumPy = "
                    f"{rates.get(C_BLOCKED, math.nan) / rates['NumPy step']:.1f}"
                )
    header = [
        "method",
        "bodies",
        "steps",
        "tumble 1 thread",
        f"tumble {cores} threads",
        *([C_POLY, C_BLOCKED, C_LIBM] if lib is not None and lib_libm is not None else []),
        "NumPy step",
        "C / tumble",
        "C blocked / tumble",
        "C (libm) / tumble",
        "tumble / NumPy",
        "max diff vs tumble",
    ]
    body = (
        "### `simulate` throughput (rigid bodies)\n\n"
        "Millions of body-steps per second (higher is better), no torque, records = first and "
        "last state. Single-threaded columns are best-of-3 process CPU time (the machine is "
        "shared, so wall time mostly measures the other jobs); the multi-thread column is "
        "best-of-3 wall time. C: the same algorithm in C (`-O3 -march=native`, no fast-math, "
        "one thread) with tumble's small-angle sin/cos polynomials, one body at a time (`C -O3`) "
        "and in tumble's loop order, blocks of 64 bodies inside the step loop (`C -O3 blocked`); "
        "`C -O3 libm`: one body at a time with libm's `sin`/`cos`. NumPy: the step vectorised "
        "over bodies, Python loop over steps (its own step count, sized to ~0.3 s). Ratios use "
        "tumble on one thread. Last column: largest difference of the final state from "
        "tumble's (NumPy only when it ran the same number of steps).\n\n"
        + markdown_table(header, rows)
        + "\n\n"
        + "\n".join(goal_lines)
        + "\n\nThe machine is shared with other jobs; numbers vary by ~20 % between runs."
    )
    print(body)
    if not args.no_write:
        write_section("rigid", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

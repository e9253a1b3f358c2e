"""Benchmark: the orientation update and the rotation primitives against their peers.

Operations (float64, contiguous, batch of N):

- ``rotate``: one Magnus step ``q' = exp(Omega/2) ⊗ q/|q|``, ``omega' = omega + alpha dt``
  (order 2), with the exact exponential and with the trig-free ``exp="approx"``;
- ``quat_rotate`` (``q v q*``), ``quat_multiply`` (``p ⊗ q``), ``rotvec_to_quat``.

Peers, measured in the same run on the same arrays:

- SciPy's ``Rotation`` doing the same work (for ``rotate``: Omega in NumPy, then
  ``Rotation.from_rotvec(Omega) * R``; the ``Rotation`` objects are built outside the timing,
  as a SciPy user keeps them as state);
- a plain NumPy implementation of the same formulas;
- a C loop with the same algorithm as tumble's scalar kernels (trig-free C for
  ``exp="approx"``; for the exact exponential the same polynomials for ``cos`` and
  ``sin(t)/t`` up to a half angle of 45° and libm ``sin``/``cos`` above), compiled now with
  the system compiler, ``-O3 -march=native``, no fast-math (GCC's default
  ``-ffp-contract=fast`` still fuses multiply-adds, which numba does not; the N = 10⁶ table
  also shows C with ``-ffp-contract=off`` to separate that effect), called through ctypes
  (about a microsecond of call overhead at small N), single-threaded. The C loops are the
  plain per-element loops; GCC does not vectorise them across elements, tumble's are
  written so that LLVM does.

The allocator is pinned (``_common.glibc_mmap_threshold``) so that timings do not depend on
what ran before: for the tables at 32 MiB, the ceiling of glibc's dynamic threshold (the
best a default process gets: blocks above it are mapped afresh on every allocation), and
at N = 10⁶ SciPy and tumble are also timed with every freed block kept mapped, a tuning no
default process has and SciPy's best case (``Rotation.apply`` allocates temporaries above
32 MiB, which then cost no page faults). The goal column reports both.

tumble runs on numba's default threads (all cores) in the size table; at N = 10⁶ it is also
timed on one thread against single-threaded C.

A second section (``rotation-scipy``) times every ``tumble.rotation`` function that has a
SciPy equivalent, and the interpolation functions, against that equivalent at N = 1, 10³
and 10⁶ in one run: the single-element fast path at N = 1, throughput at 10⁶.

Usage: ``tumble bench rotation [--sizes 1,10,...] [--only all|scipy|primitives] [--no-write]``.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from scipy.spatial.transform import Rotation, Slerp
from scipy.spatial.transform import RotationSpline as ScipySpline

from _common import (
    GLIBC_KEEP_ALL,
    GLIBC_SETTLED,
    SIZES,
    best_time,
    c_compiler,
    c_pointer,
    compile_c,
    fmt_time,
    glibc_mmap_threshold,
    markdown_table,
    np_qmul,
    threads,
    write_section,
)
from tumble import interpolate as ti
from tumble import rotation as tr
from tumble._kernels import rotation as _rk
from tumble.kinematics import MagnusConvergenceWarning, rotate
from tumble.rotation import quat_multiply, quat_rotate, rotvec_to_quat

DT = 0.01

# The C reference mirrors tumble's scalar kernels, constants included (read from them so
# the two cannot drift apart): the exact exp evaluates cos and sin(t)/t by polynomials up
# to SMALL_ANGLE and calls libm above; the trig-free exp guards huge arguments.
C_SOURCE = r"""
#include <math.h>

static const double COS_P[7] = {@COS_P@};
static const double SINC_S[8] = {@SINC_S@};
#define SMALL_ANGLE_SQ @SMALL_ANGLE_SQ@
#define SCALED_ABOVE @SCALED_ABOVE@

static void qmul(const double *p, const double *q, double *r) {
    r[0] = p[0]*q[0] - p[1]*q[1] - p[2]*q[2] - p[3]*q[3];
    r[1] = p[0]*q[1] + p[1]*q[0] + p[2]*q[3] - p[3]*q[2];
    r[2] = p[0]*q[2] - p[1]*q[3] + p[2]*q[0] + p[3]*q[1];
    r[3] = p[0]*q[3] + p[1]*q[2] - p[2]*q[1] + p[3]*q[0];
}

/* (cos t, sin(t)/t) from z = t*t for t <= SMALL_ANGLE, as tumble's cos_sinc_small. */
static void cos_sinc_small(double z, double *c_out, double *s_out) {
    const double *p = COS_P, *s = SINC_S;
    double z2 = z*z, z4 = z2*z2;
    double c = ((p[0] + p[1]*z) + z2*(p[2] + p[3]*z)) + z4*((p[4] + p[5]*z) + z2*p[6]);
    double sc = ((s[0] + s[1]*z) + z2*(s[2] + s[3]*z)) + z4*((s[4] + s[5]*z)
                + z2*(s[6] + s[7]*z));
    double hz = 0.5*z, w = 1.0 - hz;
    *c_out = w + (((1.0 - w) - hz) + z2*c);
    *s_out = 1.0 + z*sc;
}

/* exp((0, x)) exactly. */
static void qexp(const double *x, double *e) {
    double z = x[0]*x[0] + x[1]*x[1] + x[2]*x[2], c, s;
    if (z <= SMALL_ANGLE_SQ) {
        cos_sinc_small(z, &c, &s);
    } else {
        double t = sqrt(z);
        c = cos(t);
        s = sin(t)/t;
    }
    e[0] = c; e[1] = s*x[0]; e[2] = s*x[1]; e[3] = s*x[2];
}

/* The article's normalised third-order exp((0, x)): no trig; scaled form for huge x. */
static void qexp_approx(const double *x, double *e) {
    if (!(fabs(x[0]) <= SCALED_ABOVE && fabs(x[1]) <= SCALED_ABOVE
          && fabs(x[2]) <= SCALED_ABOVE)) {
        double m = fmax(fabs(x[0]), fmax(fabs(x[1]), fabs(x[2])));
        double y0 = x[0]/m, y1 = x[1]/m, y2 = x[2]/m, s = sqrt(y0*y0 + y1*y1 + y2*y2);
        double u = 1.0/(m*s), r = u*(u*u - 0.5)/(u*u - 1.0/6.0);
        double inv = -1.0/sqrt(1.0 + r*r);
        e[0] = r*inv; e[1] = y0/s*inv; e[2] = y1/s*inv; e[3] = y2/s*inv;
        return;
    }
    double t2 = x[0]*x[0] + x[1]*x[1] + x[2]*x[2];
    double a = 1.0 - 0.5*t2, b = 1.0 - t2/6.0, inv = 1.0/sqrt(a*a + b*b*t2), bi = b*inv;
    e[0] = a*inv; e[1] = bi*x[0]; e[2] = bi*x[1]; e[3] = bi*x[2];
}

void rotate(long n, const double *q, const double *w, const double *a, double h, int approx,
            double *q1, double *w1) {
    for (long i = 0; i < n; ++i) {
        const double *qi = q + 4*i, *wi = w + 3*i, *ai = a + 3*i;
        double c[3] = {ai[1]*wi[2] - ai[2]*wi[1], ai[2]*wi[0] - ai[0]*wi[2],
                       ai[0]*wi[1] - ai[1]*wi[0]};
        double k2 = h*h*h/12.0, x[3], e[4], qn[4];
        for (int j = 0; j < 3; ++j) x[j] = 0.5*(h*(wi[j] + 0.5*h*ai[j]) + k2*c[j]);
        if (approx) qexp_approx(x, e); else qexp(x, e);
        double s = 1.0/sqrt(qi[0]*qi[0] + qi[1]*qi[1] + qi[2]*qi[2] + qi[3]*qi[3]);
        for (int j = 0; j < 4; ++j) qn[j] = qi[j]*s;
        qmul(e, qn, q1 + 4*i);
        for (int j = 0; j < 3; ++j) w1[3*i + j] = wi[j] + h*ai[j];
    }
}

void quat_rotate(long n, const double *q, const double *v, double *out) {
    for (long i = 0; i < n; ++i) {
        const double *qi = q + 4*i, *vi = v + 3*i;
        double s = 2.0/(qi[0]*qi[0] + qi[1]*qi[1] + qi[2]*qi[2] + qi[3]*qi[3]);
        double w = qi[0], u[3] = {qi[1], qi[2], qi[3]};
        double t[3] = {s*(u[1]*vi[2] - u[2]*vi[1]), s*(u[2]*vi[0] - u[0]*vi[2]),
                       s*(u[0]*vi[1] - u[1]*vi[0])};
        out[3*i + 0] = vi[0] + w*t[0] + (u[1]*t[2] - u[2]*t[1]);
        out[3*i + 1] = vi[1] + w*t[1] + (u[2]*t[0] - u[0]*t[2]);
        out[3*i + 2] = vi[2] + w*t[2] + (u[0]*t[1] - u[1]*t[0]);
    }
}

/* quat_rotate's memory traffic and no other work: the floor for its loop. */
void stream(long n, const double *q, const double *v, double *out) {
    for (long i = 0; i < n; ++i) {
        double s = q[4*i] + q[4*i + 1] + q[4*i + 2] + q[4*i + 3];
        for (int j = 0; j < 3; ++j) out[3*i + j] = v[3*i + j] + s;
    }
}

void quat_multiply(long n, const double *p, const double *q, double *out) {
    for (long i = 0; i < n; ++i) qmul(p + 4*i, q + 4*i, out + 4*i);
}

void rotvec_to_quat(long n, const double *phi, double *out) {
    for (long i = 0; i < n; ++i) {
        double x[3] = {0.5*phi[3*i], 0.5*phi[3*i + 1], 0.5*phi[3*i + 2]};
        qexp(x, out + 4*i);
    }
}
"""
for _name, _value in {
    "@COS_P@": ", ".join(repr(c) for c in _rk.COS_P),
    "@SINC_S@": ", ".join(repr(c) for c in _rk.SINC_S),
    "@SMALL_ANGLE_SQ@": repr(_rk.SMALL_ANGLE_SQ),
    "@SCALED_ABOVE@": repr(_rk.SCALED_ABOVE),
}.items():
    C_SOURCE = C_SOURCE.replace(_name, _value)
C_FLAGS = ("-O3", "-march=native")
C_FLAGS_NO_FMA = ("-O3", "-march=native", "-ffp-contract=off")


# --- plain NumPy --------------------------------------------------------------------------


def _np_qexp(x: np.ndarray) -> np.ndarray:
    t = np.linalg.norm(x, axis=-1)
    s = np.sinc(t / np.pi)  # sin(t)/t, safe at 0
    return np.concatenate([np.cos(t)[:, None], s[:, None] * x], axis=-1)


def _np_rotate(q: np.ndarray, w: np.ndarray, a: np.ndarray, h: float) -> Any:
    omega = h * (w + 0.5 * h * a) + np.cross(a, w) * (h**3 / 12)
    qn = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np_qmul(_np_qexp(0.5 * omega), qn), w + a * h


def _np_quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    qn = q / np.linalg.norm(q, axis=-1, keepdims=True)
    u = qn[:, 1:]
    t = 2 * np.cross(u, v)
    return v + qn[:, :1] * t + np.cross(u, t)


# --- the suite ----------------------------------------------------------------------------


class Inputs:
    """Random float64 operands of one batch size, and SciPy's objects built from them."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        q = rng.normal(size=(n, 4))
        self.q = q / np.linalg.norm(q, axis=-1, keepdims=True)
        p = rng.normal(size=(n, 4))
        self.p = p / np.linalg.norm(p, axis=-1, keepdims=True)
        self.w = rng.normal(size=(n, 3))
        self.a = rng.normal(size=(n, 3))
        self.v = rng.normal(size=(n, 3))
        self.phi = rng.normal(size=(n, 3))
        self.rq = Rotation.from_quat(np.roll(self.q, -1, axis=-1))
        self.rp = Rotation.from_quat(np.roll(self.p, -1, axis=-1))
        self.q_out = np.empty((n, 4))
        self.w_out = np.empty((n, 3))
        self.v_out = np.empty((n, 3))
        self.n = n


def _scipy_rotate(x: Inputs) -> Any:
    omega = DT * (x.w + 0.5 * DT * x.a) + np.cross(x.a, x.w) * (DT**3 / 12)
    return Rotation.from_rotvec(omega) * x.rq, x.w + x.a * DT


def _contenders(x: Inputs, lib: Any) -> dict[str, dict[str, Callable[[], object]]]:
    """For each operation: tumble, SciPy, NumPy and C callables on the same data."""
    n = ctypes.c_long(x.n)

    def c_call(name: str, *args: Any) -> Callable[[], object]:
        fn = getattr(lib, name) if lib is not None else None
        return (lambda: fn(n, *args)) if fn is not None else (lambda: None)

    q, w, a, p, v, phi = (c_pointer(t) for t in (x.q, x.w, x.a, x.p, x.v, x.phi))
    qo, wo, vo = (c_pointer(t) for t in (x.q_out, x.w_out, x.v_out))
    h = ctypes.c_double(DT)
    return {
        "rotate (exact exp)": {
            "tumble": lambda: rotate(x.q, x.w, x.a, DT),
            "SciPy": lambda: _scipy_rotate(x),
            "NumPy": lambda: _np_rotate(x.q, x.w, x.a, DT),
            "C": c_call("rotate", q, w, a, h, ctypes.c_int(0), qo, wo),
        },
        "rotate (exp=approx)": {
            "tumble": lambda: rotate(x.q, x.w, x.a, DT, exp="approx"),
            "SciPy": lambda: _scipy_rotate(x),
            "NumPy": lambda: _np_rotate(x.q, x.w, x.a, DT),
            "C": c_call("rotate", q, w, a, h, ctypes.c_int(1), qo, wo),
        },
        "quat_rotate": {
            "tumble": lambda: quat_rotate(x.q, x.v),
            "SciPy": lambda: x.rq.apply(x.v),
            "NumPy": lambda: _np_quat_rotate(x.q, x.v),
            "C": c_call("quat_rotate", q, v, vo),
        },
        "quat_multiply": {
            "tumble": lambda: quat_multiply(x.p, x.q),
            "SciPy": lambda: x.rp * x.rq,
            "NumPy": lambda: np_qmul(x.p, x.q),
            "C": c_call("quat_multiply", p, q, qo),
        },
        "rotvec_to_quat": {
            "tumble": lambda: rotvec_to_quat(x.phi),
            "SciPy": lambda: Rotation.from_rotvec(x.phi).as_quat(),
            "NumPy": lambda: _np_qexp(0.5 * x.phi),
            "C": c_call("rotvec_to_quat", phi, qo),
        },
    }


def _check_agreement(x: Inputs) -> None:
    """The contenders compute the same thing (guards against benchmarking a wrong peer)."""
    q1, _ = rotate(x.q, x.w, x.a, DT)
    r1, _ = _scipy_rotate(x)
    ref = np.roll(r1.as_quat(), 1, axis=-1)
    assert np.allclose(np.abs(np.sum(q1 * ref, axis=-1)), 1.0, atol=1e-12)
    nq, _ = _np_rotate(x.q, x.w, x.a, DT)
    assert np.allclose(q1, nq, atol=1e-12)
    assert np.allclose(quat_rotate(x.q, x.v), x.rq.apply(x.v), atol=1e-12)


@numba.njit(cache=True)
def _stream_floor(q: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """The bytes of ``quat_rotate`` and no more work: read rows of q and v, write out.

    Flat rows with unsigned offsets, like tumble's loop, so LLVM vectorises it; its time
    is what memory alone costs one core.
    """
    for k in range(out.shape[0] // 3):
        i = np.uint64(k)
        j = np.uint64(4) * i
        m = np.uint64(3) * i
        s = q[j] + q[j + np.uint64(1)] + q[j + np.uint64(2)] + q[j + np.uint64(3)]
        for c in range(3):
            out[m + np.uint64(c)] = v[m + np.uint64(c)] + s


def cpu_time(fn: Callable[[], object], repeat: int = 7) -> float:
    """Best CPU time of the calling thread per call (single-threaded code only).

    Unlike wall-clock time it does not count the moments the thread waits for a core,
    which on a shared machine is most of the noise.
    """
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return best


def _ratio(num: float, den: float) -> str:
    return f"{num / den:.2f}" if num > 0 and den > 0 else "n/a"


LARGE_STEP_N = 200_000


def _large_steps(lib: Any) -> str:
    """``rotate`` (exact) on one thread when some steps turn more than 90°.

    Those take libm's ``sin``/``cos`` in a second pass over their range of the block
    (256 elements); the table shows what that costs, against the C loop, whose
    per-element branch makes every pattern cost about the same.
    """
    rng = np.random.default_rng(7)
    n = LARGE_STEP_N
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    small = 0.1 * rng.normal(size=(n, 3))
    one, two = small.copy(), small.copy()
    one[::256] *= 100
    two[::256] *= 100
    two[255::256] *= 100
    patterns = {"none": small, "one per 256": one, "two per 256, at the ends": two}
    patterns["all"] = 100 * small
    zero = np.zeros((n, 3))
    q_out, w_out = np.empty((n, 4)), np.empty((n, 3))
    rows = []
    for name, w in patterns.items():
        with threads(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", MagnusConvergenceWarning)
            t = cpu_time(lambda w=w: rotate(q, w, zero, 1.0))
        args = [ctypes.c_long(n), *(c_pointer(a) for a in (q, w, zero))]
        args += [ctypes.c_double(1.0), ctypes.c_int(0), c_pointer(q_out), c_pointer(w_out)]
        tc = cpu_time(lambda args=args: lib.rotate(*args)) if lib is not None else 0.0
        rows.append([name, fmt_time(t), fmt_time(tc) if tc else "n/a", _ratio(t, tc)])
    return (
        f"### Steps beyond 90° (`rotate`, exact, N = {n:,}, one thread, CPU time)\n\n"
        "Steps whose half angle exceeds 45° leave the branch-free pass and are redone with "
        "libm over their range of each block of 256.\n\n"
        + markdown_table(["large steps", "tumble", "C", "tumble/C"], rows)
    )


PEER_SIZES = (1, 1_000, 1_000_000)
#: Spline construction solves for the knot rates; SciPy's takes seconds at 10⁶ knots.
SPLINE_BUILD_SIZES = (3, 1_000, 100_000)


class PeerInputs:
    """float64 operands of one batch size for the SciPy-peer table (single elements at 1)."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        shape = () if n == 1 else (n,)
        self.q = tr.random_quat(shape, rng)
        self.p = tr.random_quat(shape, rng)
        self.v = rng.normal(size=(*shape, 3))
        self.phi = rng.normal(size=(*shape, 3))
        self.angles = rng.uniform(-np.pi, np.pi, (*shape, 3))
        self.R = tr.quat_to_matrix(self.q)
        self.mrp = tr.quat_to_mrp(self.q)
        self.rq = Rotation.from_quat(self.q[..., [1, 2, 3, 0]])
        self.rp = Rotation.from_quat(self.p[..., [1, 2, 3, 0]])
        self.two_phi = 2.0 * self.phi
        # sets of n: quaternions to average, vector pairs to align, pairs to interpolate
        self.mean_q = tr.random_quat(n, rng)
        self.mean_r = Rotation.from_quat(self.mean_q[:, [1, 2, 3, 0]])
        self.a = rng.normal(size=(n, 3))
        self.b = rng.normal(size=(n, 3))
        self.w = rng.uniform(0.5, 1.5, n)
        keys = tr.random_quat(n + 1, rng)
        self.k0, self.k1 = keys[:-1], keys[1:]
        self.s = rng.uniform(0, 1, n)
        self.slerp = Slerp(np.arange(n + 1.0), Rotation.from_quat(keys[:, [1, 2, 3, 0]]))
        self.slerp_t = np.arange(n) + self.s
        knots = 100
        times = np.arange(knots, dtype=float)
        kq = tr.rotvec_to_quat(np.cumsum(0.3 * rng.normal(size=(knots, 3)), axis=0))
        self.spline = ti.RotationSpline(times, kq)
        self.scipy_spline = ScipySpline(times, Rotation.from_quat(kq[:, [1, 2, 3, 0]]))
        self.t = rng.uniform(0, knots - 1, shape)


def _peers(x: PeerInputs) -> dict[str, tuple[str, Callable[[], object], Callable[[], object]]]:
    """For each function: (SciPy equivalent shown in the table, tumble call, SciPy call)."""
    return {
        "quat_multiply": ("`p * q`", lambda: tr.quat_multiply(x.p, x.q), lambda: x.rp * x.rq),
        "quat_rotate": ("`r.apply(v)`", lambda: tr.quat_rotate(x.q, x.v), lambda: x.rq.apply(x.v)),
        "quat_conjugate": ("`r.inv()`", lambda: tr.quat_conjugate(x.q), lambda: x.rq.inv()),
        "quat_normalize": (
            "`from_quat(q)`",
            lambda: tr.quat_normalize(x.q),
            lambda: Rotation.from_quat(x.q),
        ),
        "quat_to_matrix": ("`r.as_matrix()`", lambda: tr.quat_to_matrix(x.q), x.rq.as_matrix),
        "matrix_to_quat": (
            "`from_matrix(R)`",
            lambda: tr.matrix_to_quat(x.R),
            lambda: Rotation.from_matrix(x.R),
        ),
        "rotvec_to_quat": (
            "`from_rotvec(phi)`",
            lambda: tr.rotvec_to_quat(x.phi),
            lambda: Rotation.from_rotvec(x.phi),
        ),
        "quat_to_rotvec": ("`r.as_rotvec()`", lambda: tr.quat_to_rotvec(x.q), x.rq.as_rotvec),
        "rotvec_to_matrix": (
            "`from_rotvec(phi).as_matrix()`",
            lambda: tr.rotvec_to_matrix(x.phi),
            lambda: Rotation.from_rotvec(x.phi).as_matrix(),
        ),
        "matrix_to_rotvec": (
            "`from_matrix(R).as_rotvec()`",
            lambda: tr.matrix_to_rotvec(x.R),
            lambda: Rotation.from_matrix(x.R).as_rotvec(),
        ),
        "quat_exp": (
            "`from_rotvec(2 x)`",
            lambda: tr.quat_exp(x.phi),
            lambda: Rotation.from_rotvec(x.two_phi),
        ),
        "quat_log": ("`r.as_rotvec()`", lambda: tr.quat_log(x.q), x.rq.as_rotvec),
        "rotation_angle": (
            "`(p.inv() * q).magnitude()`",
            lambda: tr.rotation_angle(x.p, x.q),
            lambda: (x.rp.inv() * x.rq).magnitude(),
        ),
        "euler_to_quat": (
            "`from_euler('xyz', a)`",
            lambda: tr.euler_to_quat(x.angles, "xyz"),
            lambda: Rotation.from_euler("xyz", x.angles),
        ),
        "quat_to_euler": (
            "`r.as_euler('ZYX')`",
            lambda: tr.quat_to_euler(x.q, "ZYX"),
            lambda: x.rq.as_euler("ZYX"),
        ),
        "euler_to_matrix": (
            "`from_euler('zxz', a).as_matrix()`",
            lambda: tr.euler_to_matrix(x.angles, "zxz"),
            lambda: Rotation.from_euler("zxz", x.angles).as_matrix(),
        ),
        "matrix_to_euler": (
            "`from_matrix(R).as_euler('XYZ')`",
            lambda: tr.matrix_to_euler(x.R, "XYZ"),
            lambda: Rotation.from_matrix(x.R).as_euler("XYZ"),
        ),
        "quat_to_mrp": ("`r.as_mrp()`", lambda: tr.quat_to_mrp(x.q), x.rq.as_mrp),
        "mrp_to_quat": (
            "`from_mrp(p)`",
            lambda: tr.mrp_to_quat(x.mrp),
            lambda: Rotation.from_mrp(x.mrp),
        ),
        "quat_power": ("`r ** 0.3`", lambda: tr.quat_power(x.q, 0.3), lambda: x.rq**0.3),
        "quat_mean (N rotations)": (
            "`r.mean()`",
            lambda: tr.quat_mean(x.mean_q),
            lambda: x.mean_r.mean(),
        ),
        "quat_mean, weighted": (
            "`r.mean(w)`",
            lambda: tr.quat_mean(x.mean_q, x.w),
            lambda: x.mean_r.mean(x.w),
        ),
        "align_vectors (N pairs, weighted)": (
            "`align_vectors(a, b, w)`",
            lambda: tr.align_vectors(x.a, x.b, x.w),
            lambda: Rotation.align_vectors(x.a, x.b, x.w),
        ),
        "slerp (N pairs)": (
            "`Slerp(...)(t)`, built outside the timing",
            lambda: ti.slerp(x.k0, x.k1, x.s),
            lambda: x.slerp(x.slerp_t),
        ),
        "RotationSpline(t)": (
            "`spline(t)`, 100 knots",
            lambda: x.spline(x.t),
            lambda: x.scipy_spline(x.t),
        ),
        "RotationSpline.angular_velocity": (
            "`spline(t, 1)` (body frame; tumble world)",
            lambda: x.spline.angular_velocity(x.t),
            lambda: x.scipy_spline(x.t, 1),
        ),
        "RotationSpline.angular_acceleration": (
            "`spline(t, 2)` (body frame; tumble world)",
            lambda: x.spline.angular_acceleration(x.t),
            lambda: x.scipy_spline(x.t, 2),
        ),
    }


def _spline_build(n: int, rng: np.random.Generator) -> tuple[float, float]:
    """Seconds to build a spline through ``n`` knots: tumble, SciPy."""
    times = np.arange(n, dtype=float)
    kq = tr.rotvec_to_quat(np.cumsum(0.3 * rng.normal(size=(n, 3)), axis=0))
    kr = Rotation.from_quat(kq[:, [1, 2, 3, 0]])
    repeat = 3 if n > 10_000 else 5
    return (
        best_time(lambda: ti.RotationSpline(times, kq), repeat=repeat),
        best_time(lambda: ScipySpline(times, kr), repeat=repeat),
    )


def scipy_peer_section(rng: np.random.Generator) -> str:
    """The table of every function with a SciPy equivalent at N = 1, 10³, 10⁶."""
    load_before = os.getloadavg()[0]
    times: dict[str, dict[int, tuple[float, float]]] = {}
    labels: dict[str, str] = {}
    for n in PEER_SIZES:
        x = PeerInputs(n, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SciPy's warnings on random alignments
            for op, (label, ours, theirs) in _peers(x).items():
                labels[op] = label
                times.setdefault(op, {})[n] = (best_time(ours), best_time(theirs))
                t = times[op][n]
                print(
                    f"{op:38s} N={n:>9,}  tumble {fmt_time(t[0])}  SciPy {fmt_time(t[1])}",
                    flush=True,
                )
    build = {n: _spline_build(n, rng) for n in SPLINE_BUILD_SIZES}
    load_after = os.getloadavg()[0]
    header = ["function", "SciPy equivalent"]
    for n in PEER_SIZES:
        header += [f"tumble N={n:,}", f"SciPy N={n:,}", "ratio"]
    header.append("goal (1: >= 1, 10⁶: >= 10)")
    rows = []
    for op, by_n in times.items():
        row: list[object] = [f"`{op}`", labels[op]]
        for n in PEER_SIZES:
            ours, theirs = by_n[n]
            row += [fmt_time(ours), fmt_time(theirs), _ratio(theirs, ours)]
        one = by_n[1][1] / by_n[1][0] >= 1
        big = by_n[PEER_SIZES[-1]][1] / by_n[PEER_SIZES[-1]][0] >= 10
        row.append(f"1: {'met' if one else '**not met**'}, 10⁶: {'met' if big else '**not met**'}")
        rows.append(row)
    build_rows = [
        [f"{n:,}", fmt_time(b[0]), fmt_time(b[1]), _ratio(b[1], b[0])] for n, b in build.items()
    ]
    return (
        "## Rotation against SciPy, every function (`tumble bench rotation --only scipy`)\n\n"
        f"float64; N = 1 is one `(4,)`/`(3,)`/`(3, 3)` element (tumble's single-element fast "
        f"path; SciPy a single `Rotation`), the others batches; tumble on "
        f"{numba.get_num_threads()} numba threads (the pool only from "
        "`PARALLEL_MIN_SIZE` = 20,000 elements). SciPy's `Rotation` objects are built "
        "outside the timing where SciPy keeps them as state (`r`, `p`, `q` below), as a "
        "SciPy user would; functions that take arrays in both libraries include the "
        "construction. Ratio = SciPy time / tumble time (above 1: tumble faster). Best of "
        "5 rounds. **The machine was shared** with other engineers' test runs and "
        f"benchmarks while this ran: load average {load_before:.1f} at the start and "
        f"{load_after:.1f} at the end, on {os.cpu_count()} cores. Under such load every "
        "time here is several times its quiet value (a single-element call that takes "
        "about 1.5 µs on a quiet core measured 4-15 µs) and a ratio can move by 2x "
        "between runs; treat ratios near 1 as ties.\n\n"
        + markdown_table(header, rows)
        + "\n\n### RotationSpline construction (knot rates solved to round-off)\n\n"
        + markdown_table(["knots", "tumble", "SciPy", "SciPy/tumble"], build_rows)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench rotation", description=__doc__)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--only",
        choices=("all", "scipy", "primitives"),
        default="all",
        help="scipy: only the SciPy-peer table; primitives: only the tables against C",
    )
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    if args.only != "primitives":
        peers = scipy_peer_section(np.random.default_rng(17))
        print(peers)
        if not args.no_write:
            write_section("rotation-scipy", peers)
    if args.only == "scipy":
        return 0

    pinned = glibc_mmap_threshold(GLIBC_SETTLED)
    allocator_note = (
        "glibc's mmap threshold pinned at 32 MiB, the ceiling of its dynamic threshold (a "
        "long-running default process at its best: blocks above it are mapped afresh on "
        "every allocation; see `_common.glibc_mmap_threshold`)."
        if pinned
        else "Not glibc: the allocator runs unpinned (first-touch page faults vary)."
    )
    lib = compile_c(C_SOURCE, C_FLAGS)
    lib_nofma = compile_c(C_SOURCE, C_FLAGS_NO_FMA)
    if lib is None:
        note = "No C compiler found: the C columns are skipped."
    else:
        note = f"C: `{c_compiler()} {' '.join(C_FLAGS)}` (no fast-math), single-threaded."
    rng = np.random.default_rng(2026)
    n_threads = numba.get_num_threads()

    results: dict[str, list[list[object]]] = {}
    big: dict[str, dict[str, float]] = {}
    floor = 0.0
    for n in sizes:
        x = Inputs(n, rng)
        if n == sizes[0]:
            _check_agreement(x)
        for op, fns in _contenders(x, lib).items():
            t = {
                k: best_time(fn) if (k != "C" or lib is not None) else 0.0 for k, fn in fns.items()
            }
            results.setdefault(op, []).append(
                [
                    f"{n:,}",
                    fmt_time(t["tumble"]),
                    fmt_time(t["SciPy"]),
                    fmt_time(t["NumPy"]),
                    fmt_time(t["C"]) if t["C"] else "n/a",
                    _ratio(t["SciPy"], t["tumble"]),
                    _ratio(t["NumPy"], t["tumble"]),
                    _ratio(t["tumble"], t["C"]),
                ]
            )
            print(
                f"{op:22s} N={n:>9,}  " + "  ".join(f"{k} {fmt_time(v)}" for k, v in t.items()),
                flush=True,
            )
            if n == 1_000_000:
                with threads(1):
                    t1 = best_time(fns["tumble"])
                    cpu1 = cpu_time(fns["tumble"])
                c_fn = fns["C"]
                nofma_fn = _contenders(x, lib_nofma)[op]["C"] if lib_nofma is not None else None
                big[op] = {
                    **t,
                    # More rounds: all threads must find a free core at once for a clean one.
                    "tumble": min(t["tumble"], best_time(fns["tumble"], min_time=0.5, repeat=15)),
                    "tumble 1": t1,
                    "tumble 1 cpu": cpu1,
                    "C cpu": cpu_time(c_fn) if lib is not None else 0.0,
                    "C no-fma cpu": cpu_time(nofma_fn) if nofma_fn is not None else 0.0,
                }
                if op == "quat_rotate":
                    flat = (x.q.reshape(-1), x.v.reshape(-1), x.v_out.reshape(-1))
                    floor = best_time(lambda flat=flat: _stream_floor(*flat))
                    if lib is not None:
                        ptrs = [ctypes.c_long(x.n), *(c_pointer(t) for t in flat)]
                        floor = min(floor, best_time(lambda ptrs=ptrs: lib.stream(*ptrs)))
                if pinned:
                    # SciPy's best case: its large temporaries reused instead of mapped anew.
                    glibc_mmap_threshold(GLIBC_KEEP_ALL)
                    with threads(1):
                        big[op]["tumble 1 kept"] = best_time(fns["tumble"])
                    big[op]["SciPy kept"] = best_time(fns["SciPy"])
                    glibc_mmap_threshold(GLIBC_SETTLED)

    sections = [
        f"Batch of N float64 elements, {n_threads} numba threads for tumble. {note} "
        f"{allocator_note} "
        "Ratios above 1 in the SciPy and NumPy columns mean tumble is faster; tumble/C below "
        "1 means tumble is faster than C. The machine was shared with other jobs while "
        "this ran, so expect noise of 10-30 %."
    ]
    header = ["N", "tumble", "SciPy", "NumPy", "C", "SciPy/tumble", "NumPy/tumble", "tumble/C"]
    for op, rows in results.items():
        sections.append(f"### `{op}`\n\n" + markdown_table(header, rows))
    if big:
        rows = []
        for op, t in big.items():
            goal = ""
            if op.startswith(("rotate", "quat_rotate")) and t["C"]:
                checks = {
                    "SciPy": t["SciPy"] / t["tumble 1"] >= 10,
                    "1 thread": t["tumble 1 cpu"] / t["C cpu"] <= 1.5,
                    "all threads": t["tumble"] <= t["C"],
                }
                if "SciPy kept" in t:
                    kept = t["SciPy kept"] / t["tumble 1 kept"] >= 10
                    checks["SciPy with memory kept mapped"] = kept
                goal = ", ".join(
                    f"{k} {'met' if ok else '**not met**'}" for k, ok in checks.items()
                )
            rows.append(
                [
                    f"`{op}`",
                    fmt_time(t["tumble 1"]),
                    fmt_time(t["C"]) if t["C"] else "n/a",
                    _ratio(t["tumble 1"], t["C"]),
                    _ratio(t["tumble 1 cpu"], t["C cpu"]),
                    _ratio(t["tumble 1 cpu"], t["C no-fma cpu"]),
                    fmt_time(t["tumble"]),
                    _ratio(t["tumble"], t["C"]),
                    _ratio(t["SciPy"], t["tumble 1"]),
                    _ratio(t.get("SciPy kept", 0.0), t.get("tumble 1 kept", 0.0)),
                    goal,
                ]
            )
        sections.append(
            "### N = 1,000,000: single thread against C\n\n"
            "Goals for `rotate` and `quat_rotate`: SciPy/tumble(1 thread) >= 10, "
            "tumble(1 thread)/C <= 1.5, tumble(all threads)/C <= 1. Wall-clock times are "
            "best of 5 (best of 20 for all threads); on a machine shared with other jobs a "
            "thread can lose its core mid-call, so the single-thread ratio is also given in "
            "CPU time of the calling thread (`time.thread_time`, best of 7), which the goal "
            "check uses. The no-FMA "
            "column compiles the same C with `-ffp-contract=off` (GCC fuses multiply-adds "
            "by default, numba does not without fast-math): it is the same arithmetic as "
            "tumble's. tumble keeps FMA off on purpose: contraction breaks exact cancellations "
            "such as `a*b - b*a = 0` (with it, the equatorial state of a symmetric top no "
            "longer has an infinite body period). What tumble has that the C loop lacks is "
            "SIMD across elements: its loops are written so that LLVM vectorises them "
            "(constant strides, branch-free forms, the rare libm case redone afterwards), "
            "while GCC leaves the C loop, with its per-element branch to libm, scalar. "
            "The last ratio column times SciPy and tumble with glibc keeping every freed "
            "block mapped (SciPy's best case, a setting no default process reaches); "
            "`quat_rotate` is bound by memory there (see the floor below the table).\n\n"
            + markdown_table(
                [
                    "operation",
                    "tumble 1 thread",
                    "C 1 thread",
                    "tumble 1 / C (wall)",
                    "tumble 1 / C (CPU)",
                    "tumble 1 / C no-FMA (CPU)",
                    f"tumble {n_threads} threads",
                    f"tumble {n_threads} / C (wall)",
                    "SciPy / tumble 1",
                    "same, memory kept mapped",
                    "goal",
                ],
                rows,
            )
        )
        if floor and "quat_rotate" in big:
            t1 = big["quat_rotate"]["tumble 1"]
            tc = big["quat_rotate"]["C"]
            sections.append(
                "Memory floor at N = 10⁶: the faster of two loops (numba and C) that read "
                "`quat_rotate`'s inputs and write its output with no other work takes "
                f"{fmt_time(floor)} on one core; `quat_rotate` on one thread takes "
                f"{fmt_time(t1)} ({t1 / floor:.2f}x that), the C loop {fmt_time(tc)} "
                f"({tc / floor:.2f}x)."
            )
    sections.append(_large_steps(lib))
    body = "## Rotation (`tumble bench rotation`)\n\n" + "\n\n".join(sections)
    print(body)
    if not args.no_write:
        write_section("rotation", body)
    return 0

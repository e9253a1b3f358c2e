"""Kinematics kernels: constant-acceleration steps of position and orientation.

Scalar tuple kernels first (``magnus_omega`` is called by the rigid-body integrator
kernels: keep its name and signature), then the loops behind :mod:`tumble.kinematics`.

Operands of the loops follow the convention of :mod:`tumble._kernels.dispatch`: a flat
C-contiguous array per element or a tuple (a shared ``dt``: a float) for the whole batch,
told apart at compile time by ``load`` and ``load_scalar``. The Magnus order, the
exponential and the row width are compile-time choices too, passed as the *length* of a
tuple of zeros (``order_tag``, ``exp_tag``, ``width_tag``): numba then compiles one loop
per choice with the branches folded away (left to run time they cost a quarter of a
trig-free step, and they keep LLVM from vectorising the loops). The zeros are floats:
numba's parfor pass takes a tuple of ints that a ``prange`` body uses for an array shape,
and fails to compile the loop.

Each loop exists twice, serial (small batches: no thread start-up) and ``prange``; both
call the same per-element function. Those are plain ``njit`` functions, which LLVM
inlines: numba's ``inline="always"`` leaves loops that LLVM does not vectorise, and the
parfor pass rejects an IR-inlined use of the ``prange`` index. The loops check the input
as they go, with no branch in the hot path: ``bad`` counts results that are not finite
(each depends on every input: NaN or infinite as soon as one input is, or a quaternion
norm is zero or overflows), and ``near`` counts the steps whose cheap bound
``max(|w|, |w'|) |dt|`` reaches the Magnus convergence bound; :func:`count_far` then
settles those few exactly. Both are integer sums, which vectorise. The public module turns
them into ``InputError`` or a warning.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from tumble._kernels import inner, njit, parallel_njit, select
from tumble._kernels.dispatch import load, load3, load_scalar, store
from tumble._kernels.rotation import (
    SMALL_ANGLE_SQ,
    cross,
    dot,
    has_large_component,
    not_finite,
    q_to_mat,
    qexp,
    qexp_approx,
    qexp_approx_moderate,
    qexp_small,
    qmul,
)

EXACT = 0
APPROX = 1
AUTO = 2

AUTO_APPROX_MAX_ANGLE = 0.2169
"""Largest step angle ``|Omega|`` (radians) at which ``exp="auto"`` uses ``qexp_approx``.

The normalised cubic exponential has an exact axis; its rotation-angle error is
``|Omega|⁵/480 + O(|Omega|⁷)`` and crosses 1e-6 rad at ``|Omega| = 0.216955`` (12.43°),
measured against ``qexp`` by bisection; rounded down (error 9.996e-7 here).
"""

CONVERGENCE_ANGLE = math.pi
"""Magnus convergence bound on the angle turned in one step, ``∫|omega(t)| dt < pi``."""

_CONVERGENCE_ANGLE2 = CONVERGENCE_ANGLE * CONVERGENCE_ANGLE

# Below this ratio |alpha| |dt| / |omega| the trapezoid rule gives the turned angle to a
# relative 1e-9 (its error is h³ max|f''| / 12 with f'' <= |alpha|² / |omega|), while the
# closed form would lose digits to cancellation.
_TURN_TRAPEZOID_BELOW = 1e-4


@inner
def magnus_omega(w, a, dt, order):
    """World rotation vector ``Omega`` over a step of constant angular acceleration.

    ``omega(t) = w + a t`` on ``[0, dt]``; ``R' = exp([Omega]×) R``, ``q' = exp(Omega/2) ⊗ q``.
    Order 1 is ``Omega1 = w dt + a dt²/2`` (error ``O(dt³)``); order 2 adds
    ``Omega2 = (a × w) dt³/12`` (error ``O(dt⁵)``); any other order gives order 4, which adds
    every term of order ``dt⁵``: ``Omega3 = a × (a × w) dt⁵/240`` and the part
    ``w × (w × (w × a)) dt⁵/720`` of ``Omega4`` (error ``O(dt⁶)``).
    """
    h = dt
    o = (h * (w[0] + 0.5 * h * a[0]), h * (w[1] + 0.5 * h * a[1]), h * (w[2] + 0.5 * h * a[2]))
    if order == 1:
        return o
    c = cross(a, w)
    k2 = h * h * h / 12.0
    o = (o[0] + k2 * c[0], o[1] + k2 * c[1], o[2] + k2 * c[2])
    if order == 2:
        return o
    h5 = h * h * h * h * h
    aac = cross(a, c)
    www = cross(w, cross(w, cross(w, a)))
    k3 = h5 / 240.0
    k4 = h5 / 720.0
    return (
        o[0] + k3 * aac[0] + k4 * www[0],
        o[1] + k3 * aac[1] + k4 * www[1],
        o[2] + k3 * aac[2] + k4 * www[2],
    )


@inner
def turn_angle(w, a, dt):
    """Angle turned in the step: ``∫ |w + a t| dt`` over ``t`` between 0 and ``dt``.

    With ``p(t) = (w + a t)·a`` and ``c = |w × a|`` (constant over the step):
    ``∫ = [p |w + a t| / |a|² + c² asinh(p / c) / |a|³] / 2`` between the ends. When
    ``|a| |dt|`` is tiny next to ``|w|`` the trapezoid rule is used instead (see
    ``_TURN_TRAPEZOID_BELOW``). A backward step (``dt < 0``) turns by the same angle as
    the forward step from ``w`` with ``-a``.
    """
    h = abs(dt)
    if dt < 0.0:
        a = (-a[0], -a[1], -a[2])
    w1 = (w[0] + h * a[0], w[1] + h * a[1], w[2] + h * a[2])
    g0 = math.sqrt(dot(w, w))
    g1 = math.sqrt(dot(w1, w1))
    a2 = dot(a, a)
    if math.sqrt(a2) * h <= _TURN_TRAPEZOID_BELOW * max(g0, g1):
        return 0.5 * (g0 + g1) * h
    p0 = dot(w, a)
    p1 = dot(w1, a)
    total = (p1 * g1 - p0 * g0) / a2
    c = cross(w, a)
    c2 = dot(c, c)
    # c = 0 (w parallel to a) has no asinh part; c² > 0 keeps c²·asinh(p/c) away from 0·inf.
    if c2 > 0.0:
        cn = math.sqrt(c2)
        total += c2 / (a2 * math.sqrt(a2)) * (math.asinh(p1 / cn) - math.asinh(p0 / cn))
    return 0.5 * total


@inner
def exp_half(omega, exp):
    """Unit quaternion ``exp(Omega/2)``: exact, the normalised cubic, or ``auto`` by angle."""
    x = (0.5 * omega[0], 0.5 * omega[1], 0.5 * omega[2])
    if exp == APPROX:
        return qexp_approx(x)
    if exp == AUTO and dot(omega, omega) < AUTO_APPROX_MAX_ANGLE * AUTO_APPROX_MAX_ANGLE:
        return qexp_approx(x)
    return qexp(x)


@inner
def _special(x, z, exp):
    """1 where ``exp_half`` needs more than its branch-free form, else 0.

    ``x = Omega/2``, ``z = |x|²``: half angles beyond ``SMALL_ANGLE`` for the exact
    exponential (libm's ``sin``/``cos``), huge components for the approximation (its
    scaled form). A NaN lands on one side or the other and stays NaN either way.
    """
    if exp == APPROX:
        return np.int64(has_large_component(x))
    return np.int64(z > SMALL_ANGLE_SQ)


@inner
def _half(omega):
    """``x = Omega/2`` and ``z = |x|²``, the arguments of the exponentials."""
    x = (0.5 * omega[0], 0.5 * omega[1], 0.5 * omega[2])
    return x, dot(x, x)


@inner
def _exp_half_branch_free(omega, exp):
    """``exp_half`` by its branch-free forms, and ``_special`` of the element.

    The forms: the polynomials of ``qexp_small`` (exact) and ``qexp_approx_moderate``
    (approx); ``auto`` evaluates both and selects. Where ``_special`` is 1 the value is a
    stand-in, to be replaced.
    """
    x, z = _half(omega)
    e = qexp_approx_moderate(x) if exp == APPROX else qexp_small(x, z)
    if exp == AUTO:
        approx = qexp_approx_moderate(x)
        use = 4.0 * z < AUTO_APPROX_MAX_ANGLE * AUTO_APPROX_MAX_ANGLE
        e = (
            select(use, approx[0], e[0]),
            select(use, approx[1], e[1]),
            select(use, approx[2], e[2]),
            select(use, approx[3], e[3]),
        )
    return e, _special(x, z, exp)


@inner
def _near(w, w1, h):
    """1 if ``max(|w|, |w1|) |h|`` reaches the bound (an upper bound of the turned angle)."""
    m = max(dot(w, w), dot(w1, w1)) * (h * h)
    return np.int64(m >= _CONVERGENCE_ANGLE2)


@inner
def _blocks(n):
    return (n + _BLOCK - 1) // _BLOCK


@inner
def _block_range(b, n):
    start = b * _BLOCK
    return start, min(start + _BLOCK, n)


# --------------------------------------------------------------------------------------
# translate


@inner
def _translate_at(i, x, v, a, dt, d, x1, v1):
    h = load_scalar(dt, i)
    bad = 0
    for j in range(d):
        vj = load(v, i, d, j)
        vn = vj + load(a, i, d, j) * h
        xn = load(x, i, d, j) + 0.5 * (vj + vn) * h
        store(v1, i, d, j, vn)
        store(x1, i, d, j, xn)
        bad |= not_finite(abs(vn) + abs(xn))
    return bad


@njit
def translate_serial(x, v, a, dt, d, x1, v1):
    """Article step ``v' = v + a dt``, ``x' = x + (v + v') dt / 2`` in ``d`` dimensions.

    Returns the number of elements with a non-finite result.
    """
    bad = 0
    for i in range(x1.shape[0] // d):
        bad += _translate_at(i, x, v, a, dt, d, x1, v1)
    return bad


@parallel_njit
def translate_parallel(x, v, a, dt, d, x1, v1):
    """``translate_serial`` with the elements spread over numba's threads."""
    bad = 0
    for i in prange(x1.shape[0] // d):
        bad += _translate_at(i, x, v, a, dt, d, x1, v1)
    return bad


# --------------------------------------------------------------------------------------
# magnus


@inner
def _magnus_at(i, w, a, dt, order, out):
    wi = load3(w, i)
    ai = load3(a, i)
    h = load_scalar(dt, i)
    o = magnus_omega(wi, ai, h, order)
    for j in range(3):
        store(out, i, 3, j, o[j])
    w1 = (wi[0] + h * ai[0], wi[1] + h * ai[1], wi[2] + h * ai[2])
    size = abs(w1[0]) + abs(w1[1]) + abs(w1[2]) + abs(o[0]) + abs(o[1]) + abs(o[2])
    return not_finite(size), _near(wi, w1, h)


@njit
def magnus_serial(w, a, dt, order_tag, out):
    """``Omega`` of every element (order ``len(order_tag)``); returns ``(bad, near)``."""
    order = len(order_tag)
    bad = 0
    near = 0
    for i in range(out.shape[0] // 3):
        b, f = _magnus_at(i, w, a, dt, order, out)
        bad += b
        near += f
    return bad, near


@parallel_njit
def magnus_parallel(w, a, dt, order_tag, out):
    """``magnus_serial`` with the elements spread over numba's threads."""
    order = len(order_tag)
    bad = 0
    near = 0
    for i in prange(out.shape[0] // 3):
        b, f = _magnus_at(i, w, a, dt, order, out)
        bad += b
        near += f
    return bad, near


# --------------------------------------------------------------------------------------
# rotate (quaternion rows of 4, or matrix rows of 9)
#
# Blocks of _BLOCK elements, each in passes short enough to stay in L1: (1) the output
# rows, with the exponential of every element by its branch-free form (for matrices the
# exponentials are first parked in the output rows: a loop with nine interleaved rows in
# and out is not vectorised), (2) over the range of elements that pass 1 found outside the
# branch-free forms (``_special``; empty in most blocks), those elements again with the
# full exp_half (libm's sin and cos, the scaled approximation), counting their non-finite
# rows, which pass 1 left out, (3) omega' and the convergence count. The passes have no
# branch and each writes one array, so LLVM vectorises them across elements; a loop that
# writes two arrays, or a Python conditional in the loop, is not vectorised.

_BLOCK = 256


@inner
def _apply(i, x, e, width, out):
    """Row ``i`` of ``out``: ``e ⊗ x/|x|`` (width 4) or ``exp([Omega]×) R`` (width 9).

    Returns 1 if the row is not finite. A quaternion is normalised so that a slowly
    drifting |q| never reaches the output; a zero norm makes the row NaN (0 * inf) and an
    overflowing one leaves ``n2`` infinite, both flagged, as is any non-finite input. So
    is a deeply subnormal ``n2`` (``s² = 1/n2`` overflows): its few significant bits would
    give a visibly non-unit result (``|q'| = 1.0000056`` for ``|q| = 1e-160``).
    """
    if width == 4:
        qi = (load(x, i, 4, 0), load(x, i, 4, 1), load(x, i, 4, 2), load(x, i, 4, 3))
        n2 = qi[0] * qi[0] + qi[1] * qi[1] + qi[2] * qi[2] + qi[3] * qi[3]
        s = 1.0 / math.sqrt(n2)
        r = qmul(e, (qi[0] * s, qi[1] * s, qi[2] * s, qi[3] * s))
        for j in range(4):
            store(out, i, 4, j, r[j])
        return not_finite(abs(r[0]) + n2 + s * s)
    m = q_to_mat(e)
    total = 0.0
    for col in range(3):
        c = (load(x, i, 9, col), load(x, i, 9, 3 + col), load(x, i, 9, 6 + col))
        for row in range(3):
            v = m[3 * row] * c[0] + m[3 * row + 1] * c[1] + m[3 * row + 2] * c[2]
            store(out, i, 9, 3 * row + col, v)
            total += abs(v)
    return not_finite(total + abs(e[0]))


@inner
def _omega(i, w, a, dt, order):
    wi = load3(w, i)
    ai = load3(a, i)
    return magnus_omega(wi, ai, load_scalar(dt, i), order)


@inner
def _rotate_block(start, stop, x, w, a, dt, order_tag, exp_tag, width_tag, x_out, w_out):
    """Elements ``start`` to ``stop - 1``; returns ``(bad, near)`` counts.

    Takes the tags, not their lengths: the loops vectorise only where the choices are
    compile-time constants of the function that holds them.
    """
    order = len(order_tag)
    exp = len(exp_tag) - 1
    width = len(width_tag)
    # first..last: the range of elements outside the branch-free forms, found with integer
    # min/max (they vectorise) so that the scan at the end covers only that range.
    first = stop
    last = start - 1
    bad = 0
    if width == 4:
        for i in range(start, stop):
            e, sp = _exp_half_branch_free(_omega(i, w, a, dt, order), exp)
            bad += _apply(i, x, e, width, x_out) & (1 - sp)
            first = min(first, i + (1 - sp) * (stop - i))
            last = max(last, i - (1 - sp) * (i - start + 1))
    else:
        # Nine interleaved rows in and out of one loop are not vectorised: park e (and
        # whether it is a stand-in) in the first five slots of the output row first.
        for i in range(start, stop):
            e, sp = _exp_half_branch_free(_omega(i, w, a, dt, order), exp)
            for j in range(4):
                store(x_out, i, width, j, e[j])
            store(x_out, i, width, 4, sp)
            first = min(first, i + (1 - sp) * (stop - i))
            last = max(last, i - (1 - sp) * (i - start + 1))
        for i in range(start, stop):
            e = (
                load(x_out, i, width, 0),
                load(x_out, i, width, 1),
                load(x_out, i, width, 2),
                load(x_out, i, width, 3),
            )
            sp = np.int64(load(x_out, i, width, 4))
            bad += _apply(i, x, e, width, x_out) & (1 - sp)
    # The stand-ins were not counted above: redo them with the full exp_half and count.
    # Their flags are parked in w_out (written for good below), so that the test runs in
    # a loop without a branch and the loop with the branch only reads a flag.
    for i in range(first, last + 1):
        x_half, z = _half(_omega(i, w, a, dt, order))
        store(w_out, i, 3, 0, _special(x_half, z, exp))
    for i in range(first, last + 1):
        if load(w_out, i, 3, 0) != 0.0:
            omega = _omega(i, w, a, dt, order)
            bad += _apply(i, x, exp_half(omega, exp), width, x_out)
    near = 0
    for i in range(start, stop):
        wi = load3(w, i)
        ai = load3(a, i)
        h = load_scalar(dt, i)
        w1 = (wi[0] + h * ai[0], wi[1] + h * ai[1], wi[2] + h * ai[2])
        for j in range(3):
            store(w_out, i, 3, j, w1[j])
        near += _near(wi, w1, h)
    return bad, near


@njit
def rotate_serial(x, w, a, dt, order_tag, exp_tag, width_tag, x_out, w_out):
    """``q' = exp(Omega/2) ⊗ q/|q|`` or ``R' = exp([Omega]×) R``, ``omega' = omega + alpha dt``.

    Order ``len(order_tag)``, exponential ``len(exp_tag) - 1`` (``EXACT``/``APPROX``/
    ``AUTO``), rows of ``len(width_tag)`` (4: quaternions, 9: row-major matrices). Returns
    ``(bad, near)``: the number of non-finite results, and of steps near the bound.
    """
    n = w_out.shape[0] // 3
    tags = (order_tag, exp_tag, width_tag)
    bad = 0
    near = 0
    for b in range(_blocks(n)):
        start, stop = _block_range(b, n)
        bb, nb = _rotate_block(start, stop, x, w, a, dt, *tags, x_out, w_out)
        bad += bb
        near += nb
    return bad, near


@parallel_njit
def rotate_parallel(x, w, a, dt, order_tag, exp_tag, width_tag, x_out, w_out):
    """``rotate_serial`` with the blocks spread over numba's threads."""
    n = w_out.shape[0] // 3
    bad = 0
    near = 0
    for b in prange(_blocks(n)):
        start, stop = _block_range(b, n)
        bb, nb = _rotate_block(
            start, stop, x, w, a, dt, order_tag, exp_tag, width_tag, x_out, w_out
        )
        bad += bb
        near += nb
    return bad, near


@njit
def count_far(w, a, dt, n):
    """Number of the ``n`` steps that turn ``∫|omega(t)| dt >= CONVERGENCE_ANGLE``.

    The trapezoid value ``(|w| + |w'|) |dt| / 2`` bounds the integral from above
    (``|omega(t)|`` is convex in ``t``), so the closed form is evaluated only where it fails.
    """
    far = 0
    for i in range(n):
        wi = load3(w, i)
        ai = load3(a, i)
        h = load_scalar(dt, i)
        w1 = (wi[0] + h * ai[0], wi[1] + h * ai[1], wi[2] + h * ai[2])
        trapezoid = 0.5 * (math.sqrt(dot(wi, wi)) + math.sqrt(dot(w1, w1))) * abs(h)
        if trapezoid >= CONVERGENCE_ANGLE and turn_angle(wi, ai, h) >= CONVERGENCE_ANGLE:
            far += 1
    return far

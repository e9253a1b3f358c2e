"""Kinematics kernels: constant-acceleration steps of position and orientation.

Scalar tuple kernels first (``magnus_omega`` is called by the rigid-body integrator
kernels: keep its name and signature), then the loops behind :mod:`tumble.kinematics`.

Operands of the loops. A per-element operand is a C-contiguous ``(n, k)`` array; an operand
shared by the whole batch is passed as a plain ``k``-tuple (and a shared ``dt`` as a float),
so it lives in registers, is never copied ``n`` times and is never reloaded after a store.
numba compiles one loop per combination actually used; ``_get`` and ``_step`` resolve the
choice at compile time. The Magnus order and the exponential are passed as the *length* of
a tuple of zeros (``order_tag``, ``exp_tag``) for the same reason: numba then compiles one
loop per choice with the branches folded away (left to run time they cost a quarter of
a trig-free step).

Each loop exists twice, serial (small batches: no thread start-up) and ``prange``; both
inline the same per-element function. The loops check the input as they go, with no branch
in the hot path: ``bad`` accumulates ``0 * x`` over values that depend on every input (NaN
as soon as one input is NaN or infinite, or a quaternion norm is zero or overflows), and
``near`` counts the steps whose cheap bound ``max(|w|, |w'|) |dt|`` reaches the Magnus
convergence bound; :func:`count_far` then settles those few exactly. Together the two
checks cost about a tenth of a trig-free step, far less than a second pass over memory.
The public module turns them into ``InputError`` or a warning.
"""

from __future__ import annotations

import math

from numba import prange, types
from numba.extending import overload

from tumble._kernels import njit, parallel_njit
from tumble._kernels.rotation import cross, dot, q_to_mat, qexp, qexp_approx, qmul

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


@njit
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


@njit
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


@njit(inline="always")
def exp_half(omega, exp):
    """Unit quaternion ``exp(Omega/2)``: exact, the normalised cubic, or ``auto`` by angle."""
    x = (0.5 * omega[0], 0.5 * omega[1], 0.5 * omega[2])
    if exp == APPROX:
        return qexp_approx(x)
    if exp == AUTO and dot(omega, omega) < AUTO_APPROX_MAX_ANGLE * AUTO_APPROX_MAX_ANGLE:
        return qexp_approx(x)
    return qexp(x)


# --------------------------------------------------------------------------------------
# Operand access, resolved at compile time (see the module docstring).


def _get(x, row, j):
    """Component ``j`` of element ``row``: ``x[row, j]``, or ``x[j]`` of a shared tuple."""
    raise NotImplementedError  # pragma: no cover - replaced by the overload in compiled code


def _step(dt, row):
    """``dt`` of element ``row``: ``dt[row]`` of an array, ``dt`` itself when shared."""
    raise NotImplementedError  # pragma: no cover - replaced by the overload in compiled code


# Not inline="always": the parfor pass rejects an IR-inlined use of the prange index
# ("overwrite of parallel loop index"); LLVM inlines these one-liners anyway.
@overload(_get)
def _get_impl(x, row, j):
    if isinstance(x, types.Array):
        return lambda x, row, j: x[row, j]
    return lambda x, row, j: x[j]


@overload(_step)
def _step_impl(dt, row):
    if isinstance(dt, types.Array):
        return lambda dt, row: dt[row]
    return lambda dt, row: dt


@njit(inline="always")
def _vec3(x, row):
    return (_get(x, row, 0), _get(x, row, 1), _get(x, row, 2))


@njit(inline="always")
def _zero_times(x):
    """``0 * sum(x)`` term by term: 0 for finite ``x``, NaN if any entry is NaN or inf."""
    z = 0.0
    for v in x:
        z += 0.0 * v
    return z


@njit(inline="always")
def _near(w, w1, h):
    """1 if ``max(|w|, |w1|) |h|`` reaches the bound (an upper bound of the turned angle)."""
    m = max(dot(w, w), dot(w1, w1)) * (h * h)
    return 1 if m >= _CONVERGENCE_ANGLE2 else 0


# --------------------------------------------------------------------------------------
# translate


@njit(inline="always")
def _translate_at(i, x, v, a, dt, x1, v1):
    h = _step(dt, i)
    z = 0.0 * h
    for j in range(x1.shape[1]):
        vj = _get(v, i, j)
        aj = _get(a, i, j)
        xj = _get(x, i, j)
        vn = vj + aj * h
        xn = xj + 0.5 * (vj + vn) * h
        v1[i, j] = vn
        x1[i, j] = xn
        z += 0.0 * vn + 0.0 * xn
    return z


@njit
def translate_serial(x, v, a, dt, x1, v1):
    """Article step ``v' = v + a dt``, ``x' = x + (v + v') dt / 2``; returns ``bad``."""
    bad = 0.0
    for i in range(x1.shape[0]):
        bad += _translate_at(i, x, v, a, dt, x1, v1)
    return bad


@parallel_njit
def translate_parallel(x, v, a, dt, x1, v1):
    """``translate_serial`` with the elements spread over numba's threads."""
    bad = 0.0
    for i in prange(x1.shape[0]):
        bad += _translate_at(i, x, v, a, dt, x1, v1)
    return bad


# --------------------------------------------------------------------------------------
# magnus


@njit(inline="always")
def _magnus_at(i, w, a, dt, order, out):
    wi = _vec3(w, i)
    ai = _vec3(a, i)
    h = _step(dt, i)
    o = magnus_omega(wi, ai, h, order)
    out[i, 0], out[i, 1], out[i, 2] = o
    w1 = (wi[0] + h * ai[0], wi[1] + h * ai[1], wi[2] + h * ai[2])
    return _zero_times(w1) + _zero_times(o), _near(wi, w1, h)


@njit
def magnus_serial(w, a, dt, order_tag, out):
    """``Omega`` of every element (order ``len(order_tag)``); returns ``(bad, near)``."""
    order = len(order_tag)
    bad = 0.0
    near = 0
    for i in range(out.shape[0]):
        b, f = _magnus_at(i, w, a, dt, order, out)
        bad += b
        near += f
    return bad, near


@parallel_njit
def magnus_parallel(w, a, dt, order_tag, out):
    """``magnus_serial`` with the elements spread over numba's threads."""
    order = len(order_tag)
    bad = 0.0
    near = 0
    for i in prange(out.shape[0]):
        b, f = _magnus_at(i, w, a, dt, order, out)
        bad += b
        near += f
    return bad, near


# --------------------------------------------------------------------------------------
# rotate (quaternion) and rotate_matrix


@njit(inline="always")
def _omega_step(i, w, a, dt, order, exp, w_out):
    """Shared part of both rotate loops: ``exp(Omega/2)``, ``omega'`` and ``near``.

    A NaN or infinite ``w``, ``a`` or ``dt`` makes every component of ``exp(Omega/2)`` NaN
    (``cos(inf)``, ``inf * 0``), so the callers check the finiteness of their result only.
    """
    wi = _vec3(w, i)
    ai = _vec3(a, i)
    h = _step(dt, i)
    w1 = (wi[0] + h * ai[0], wi[1] + h * ai[1], wi[2] + h * ai[2])
    w_out[i, 0], w_out[i, 1], w_out[i, 2] = w1
    e = exp_half(magnus_omega(wi, ai, h, order), exp)
    return e, _near(wi, w1, h)


@njit(inline="always")
def _rotate_at(i, q, w, a, dt, order, exp, q_out, w_out):
    e, near = _omega_step(i, w, a, dt, order, exp, w_out)
    qi = (_get(q, i, 0), _get(q, i, 1), _get(q, i, 2), _get(q, i, 3))
    # The input is normalised so that a slowly drifting |q| never reaches the output. A zero
    # norm makes r NaN (0 * inf) and an overflowing one makes n2 infinite: both reach bad,
    # as does any NaN or infinity in the input (r[0] depends on every input value).
    n2 = qi[0] * qi[0] + qi[1] * qi[1] + qi[2] * qi[2] + qi[3] * qi[3]
    s = 1.0 / math.sqrt(n2)
    r = qmul(e, (qi[0] * s, qi[1] * s, qi[2] * s, qi[3] * s))
    q_out[i, 0], q_out[i, 1], q_out[i, 2], q_out[i, 3] = r
    return 0.0 * (r[0] + n2), near


@njit
def rotate_serial(q, w, a, dt, order_tag, exp_tag, q_out, w_out):
    """``q' = exp(Omega/2) ⊗ q/|q|``, ``omega' = omega + alpha dt``; returns ``(bad, near)``.

    Order ``len(order_tag)``, exponential ``len(exp_tag) - 1`` (``EXACT``/``APPROX``/``AUTO``).
    """
    order = len(order_tag)
    exp = len(exp_tag) - 1
    bad = 0.0
    near = 0
    for i in range(q_out.shape[0]):
        b, f = _rotate_at(i, q, w, a, dt, order, exp, q_out, w_out)
        bad += b
        near += f
    return bad, near


@parallel_njit
def rotate_parallel(q, w, a, dt, order_tag, exp_tag, q_out, w_out):
    """``rotate_serial`` with the elements spread over numba's threads."""
    order = len(order_tag)
    exp = len(exp_tag) - 1
    bad = 0.0
    near = 0
    for i in prange(q_out.shape[0]):
        b, f = _rotate_at(i, q, w, a, dt, order, exp, q_out, w_out)
        bad += b
        near += f
    return bad, near


@njit(inline="always")
def _rotate_matrix_at(i, r, w, a, dt, order, exp, r_out, w_out):
    e, near = _omega_step(i, w, a, dt, order, exp, w_out)
    m = q_to_mat(e)
    bad = 0.0 * e[0]
    for col in range(3):
        c = (_get(r, i, col), _get(r, i, 3 + col), _get(r, i, 6 + col))
        for row in range(3):
            v = m[3 * row] * c[0] + m[3 * row + 1] * c[1] + m[3 * row + 2] * c[2]
            r_out[i, 3 * row + col] = v
        bad += 0.0 * (c[0] + c[1] + c[2])
    return bad, near


@njit
def rotate_matrix_serial(r, w, a, dt, order_tag, exp_tag, r_out, w_out):
    """``R' = exp([Omega]×) R`` on rows of 9 (row-major), ``omega' = omega + alpha dt``."""
    order = len(order_tag)
    exp = len(exp_tag) - 1
    bad = 0.0
    near = 0
    for i in range(r_out.shape[0]):
        b, f = _rotate_matrix_at(i, r, w, a, dt, order, exp, r_out, w_out)
        bad += b
        near += f
    return bad, near


@parallel_njit
def rotate_matrix_parallel(r, w, a, dt, order_tag, exp_tag, r_out, w_out):
    """``rotate_matrix_serial`` with the elements spread over numba's threads."""
    order = len(order_tag)
    exp = len(exp_tag) - 1
    bad = 0.0
    near = 0
    for i in prange(r_out.shape[0]):
        b, f = _rotate_matrix_at(i, r, w, a, dt, order, exp, r_out, w_out)
        bad += b
        near += f
    return bad, near


@njit
def count_far(w, a, dt, n):
    """Number of the ``n`` steps that turn ``∫|omega(t)| dt >= CONVERGENCE_ANGLE``.

    The trapezoid value ``(|w| + |w'|) |dt| / 2`` bounds the integral from above
    (``|omega(t)|`` is convex in ``t``), so the closed form is evaluated only where it fails.
    """
    far = 0
    for i in range(n):
        wi = _vec3(w, i)
        ai = _vec3(a, i)
        h = _step(dt, i)
        w1 = (wi[0] + h * ai[0], wi[1] + h * ai[1], wi[2] + h * ai[2])
        trapezoid = 0.5 * (math.sqrt(dot(wi, wi)) + math.sqrt(dot(w1, w1))) * abs(h)
        if trapezoid >= CONVERGENCE_ANGLE and turn_angle(wi, ai, h) >= CONVERGENCE_ANGLE:
            far += 1
    return far

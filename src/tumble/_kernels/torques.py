"""Torque models evaluated inside the compiled step loops.

A model reaches the kernels as three values: ``kinds`` (:func:`kinds_of`, None for no
torque), ``P``, a float64 array (N, W) with each body's parameters, the terms' blocks side
by side in term order (``WIDTH[kind]`` columns each); and ``fn``, the user's compiled
``fn(t, q, omega) -> torque`` of a ``custom`` term, or None (then every use of it is pruned
at compile time, so the torque-free and built-in loops load from numba's cache).

Every model torque is split as ``tau(t, q, omega) = tau0(t, q) - D omega + custom(t, q,
omega)`` (world frame; ``tau0`` gathered in whichever frame each term is cheapest), where
the damping ``D >= 0`` gathers the ``-c omega`` parts of ``damping`` and
``attitude_control``. That split lets the Strang half kick of the symmetric
methods be exact when there is no ``custom`` term (:func:`kick`).

The model's structure is part of the *type* of ``kinds`` (:func:`kinds_of`): the number
of terms (a tuple, so the loop over terms unrolls) and which kinds occur (None for absent
ones). Each structure compiles its own loops, once (then numba's cache serves it), and
the code for absent kinds, absent frames and absent damping is folded away. With the kinds
and frames known only at run time the torque cost 40-90 ns more per body-step (one
thread, ``momentum_first`` at 1 000 bodies: torque-free 42-55 ns, a zero constant torque
94-137 ns, gravity 88-121 ns; with the structure in the type 49, and 52-62 ns).
"""

from __future__ import annotations

import math

from tumble._kernels import njit
from tumble._kernels.rotation import cross, dot, q_to_rotvec, qconj, qmul, qrotate

#: Term kinds (the columns each takes in ``P`` are in ``WIDTH``).
CONSTANT_WORLD = 0  # tau
CONSTANT_BODY = 1  # tau_b
GRAVITY = 2  # m g (world), c (body)
GRAVITY_GRADIENT = 3  # 3 n², nadir (world, unit)
DAMPING = 4  # c
ATTITUDE_CONTROL = 5  # target q (4), stiffness, damping
PERIODIC_WORLD = 6  # amplitude (3), angular frequency, phase
PERIODIC_BODY = 7  # amplitude (3, body), angular frequency, phase
CUSTOM = 8  # no parameters: ``fn``

WIDTH = (3, 3, 6, 4, 1, 6, 5, 5, 0)


def kinds_of(ids: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[bool | None, ...]] | None:
    """The kernels' ``kinds`` of a model whose terms have the kinds ``ids``, in order:
    ``(ids, present)``, with ``present[k]`` True if some term is of kind ``k``, else None;
    None for a model without terms. ``ids`` is a tuple, so its length is part of the type
    and the loop over terms unrolls; ``present`` is all type (see the module docstring)."""
    if not ids:
        return None
    return tuple(int(k) for k in ids), tuple((k in ids) or None for k in range(len(WIDTH)))


#: Fixed-point tolerance of the implicit-midpoint kick used with a ``custom`` term, relative
#: to ``|L| + |s tau|``: a few ulps, where the iteration stops improving.
KICK_RTOL = 4e-16
KICK_MAX_ITER = 50


@njit
def _body(q, v):
    return qrotate(qconj(q), v)


@njit
def split_torque(kinds, P, b, t, q, I):
    """The parts of body ``b``'s torque at time ``t`` and attitude ``q``.

    Returns ``(tau_w, tau_b, D)``: the torque that does not depend on ``omega`` is ``tau0 =
    tau_w + R tau_b`` (each term adds to the frame it is cheapest in: gravity and the
    gravity gradient are formed in the body frame, with one rotation each), and ``D`` is
    the total damping coefficient (``tau = tau0 - D omega``). ``I`` are the body's principal
    moments. ``kinds`` is None for no torque at all: that branch is pruned at compile time,
    so the torque-free loops keep the arithmetic (and the speed) of loops that never heard
    of torque.
    """
    if kinds is None:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0
    ids = kinds[0]
    wx = 0.0
    wy = 0.0
    wz = 0.0
    bx = 0.0
    by = 0.0
    bz = 0.0
    D = 0.0
    o = 0
    # Each branch advances the offset by its own width, a constant: indexing WIDTH with k
    # at run time measured 7 ns per term.
    for k in ids:
        if _has(kinds, CONSTANT_WORLD) and k == CONSTANT_WORLD:
            wx += P[b, o]
            wy += P[b, o + 1]
            wz += P[b, o + 2]
            o += 3
        elif _has(kinds, CONSTANT_BODY) and k == CONSTANT_BODY:
            bx += P[b, o]
            by += P[b, o + 1]
            bz += P[b, o + 2]
            o += 3
        elif _has(kinds, GRAVITY) and k == GRAVITY:
            # (R c) × (m g) = R (c × Rᵀ m g): the weight at the centre of mass, about the pivot.
            r = cross(
                (P[b, o + 3], P[b, o + 4], P[b, o + 5]),
                _body(q, (P[b, o], P[b, o + 1], P[b, o + 2])),
            )
            bx += r[0]
            by += r[1]
            bz += r[2]
            o += 6
        elif _has(kinds, GRAVITY_GRADIENT) and k == GRAVITY_GRADIENT:
            # 3 n² ẑ × (I_w ẑ) = R (3 n² ẑ_b × I ẑ_b), with I diagonal in the body frame.
            z = _body(q, (P[b, o + 1], P[b, o + 2], P[b, o + 3]))
            g = P[b, o]
            r = cross(z, (g * I[0] * z[0], g * I[1] * z[1], g * I[2] * z[2]))
            bx += r[0]
            by += r[1]
            bz += r[2]
            o += 4
        elif _has(kinds, DAMPING) and k == DAMPING:
            D += P[b, o]
            o += 1
        elif _has(kinds, ATTITUDE_CONTROL) and k == ATTITUDE_CONTROL:
            # -k_p e with e the world rotation vector from the target to q (short arc).
            e = q_to_rotvec(qmul(q, qconj((P[b, o], P[b, o + 1], P[b, o + 2], P[b, o + 3]))))
            kp = P[b, o + 4]
            wx -= kp * e[0]
            wy -= kp * e[1]
            wz -= kp * e[2]
            D += P[b, o + 5]
            o += 6
        elif _has(kinds, PERIODIC_WORLD) and k == PERIODIC_WORLD:
            cs = math.cos(P[b, o + 3] * t + P[b, o + 4])
            wx += cs * P[b, o]
            wy += cs * P[b, o + 1]
            wz += cs * P[b, o + 2]
            o += 5
        elif _has(kinds, PERIODIC_BODY) and k == PERIODIC_BODY:
            cs = math.cos(P[b, o + 3] * t + P[b, o + 4])
            bx += cs * P[b, o]
            by += cs * P[b, o + 1]
            bz += cs * P[b, o + 2]
            o += 5
    return (wx, wy, wz), (bx, by, bz), D


@njit
def _has(kinds, k):
    """True if the model has a term of kind ``k`` (a constant the compiler folds)."""
    if kinds is None:
        return False
    return kinds[1][k] is not None


@njit
def no_torque(kinds, fn):
    """True for a model without terms, no torque at all (a compile-time constant)."""
    return kinds is None and fn is None


@njit
def _world_terms(kinds):
    """True if some term adds to the world-frame ``tau0`` (a compile-time constant)."""
    return (
        _has(kinds, CONSTANT_WORLD) or _has(kinds, ATTITUDE_CONTROL) or _has(kinds, PERIODIC_WORLD)
    )


@njit
def _body_terms(kinds):
    """True if some term adds to the body-frame ``tau0`` (a compile-time constant)."""
    return (
        _has(kinds, CONSTANT_BODY)
        or _has(kinds, GRAVITY)
        or _has(kinds, GRAVITY_GRADIENT)
        or _has(kinds, PERIODIC_BODY)
    )


@njit
def _damped(kinds):
    """True if some term damps (``D > 0`` possible; a compile-time constant)."""
    return _has(kinds, DAMPING) or _has(kinds, ATTITUDE_CONTROL)


@njit
def _world_part(kinds, q, tw, tb):
    """``tau_w + R tau_b`` (no rotation when no term is in the body frame)."""
    if not _body_terms(kinds):
        return tw
    r = qrotate(q, tb)
    return (tw[0] + r[0], tw[1] + r[1], tw[2] + r[2])


@njit
def _body_part(kinds, q, tw, tb):
    """``Rᵀ tau_w + tau_b`` (no rotation when no term is in the world frame)."""
    if not _world_terms(kinds):
        return tb
    r = _body(q, tw)
    return (tb[0] + r[0], tb[1] + r[1], tb[2] + r[2])


@njit
def body_torque(kinds, P, fn, b, t, q, L, J, I):
    """Body-frame torque on body ``b`` at ``(t, q, L_b)``: ``Rᵀ tau0 - D omega_b +
    Rᵀ fn(t, q, omega)``, with ``omega_b = J L_b``. The steps work in the body frame, so a
    body-frame term (gravity) costs no rotation here, and a world one costs one."""
    tw, tbody, D = split_torque(kinds, P, b, t, q, I)
    tb = _body_part(kinds, q, tw, tbody)
    if fn is None and not _damped(kinds):
        return tb
    wb = (J[0] * L[0], J[1] * L[1], J[2] * L[2])
    tx = tb[0] - D * wb[0]
    ty = tb[1] - D * wb[1]
    tz = tb[2] - D * wb[2]
    if fn is not None:
        c = _body(q, fn(t, q, qrotate(q, wb)))
        tx += c[0]
        ty += c[1]
        tz += c[2]
    return (tx, ty, tz)


@njit
def _with_omega(tau0, D, fn, t, q, w):
    """``tau0 - D omega + fn(t, q, omega)`` for the world angular velocity ``w``."""
    tx = tau0[0] - D * w[0]
    ty = tau0[1] - D * w[1]
    tz = tau0[2] - D * w[2]
    if fn is not None:
        c = fn(t, q, w)
        tx += c[0]
        ty += c[1]
        tz += c[2]
    return (tx, ty, tz)


@njit
def torque_batch(kinds, P, fn, t, q, w, J, out):
    """World torque of every body (rows of ``q`` (N, 4), world ``w`` (N, 3), ``J`` (N, 3))."""
    for b in range(q.shape[0]):
        qb = (q[b, 0], q[b, 1], q[b, 2], q[b, 3])
        Jb = (J[b, 0], J[b, 1], J[b, 2])
        I = (
            1.0 / Jb[0] if Jb[0] > 0.0 else 0.0,
            1.0 / Jb[1] if Jb[1] > 0.0 else 0.0,
            1.0 / Jb[2] if Jb[2] > 0.0 else 0.0,
        )
        tw, tb, D = split_torque(kinds, P, b, t, qb, I)
        tau0 = _world_part(kinds, qb, tw, tb)
        r = _with_omega(tau0, D, fn, t, qb, (w[b, 0], w[b, 1], w[b, 2]))
        out[b, 0] = r[0]
        out[b, 1] = r[1]
        out[b, 2] = r[2]


@njit
def _phi1(x):
    """``(e^x - 1)/x``, 1 at ``x = 0``, without cancellation."""
    return math.expm1(x) / x if x != 0.0 else 1.0


@njit
def kick(kinds, P, fn, b, t, q, L, J, I, s):
    """The torque's own flow for time ``s`` at fixed attitude: ``dL_b/dt = R^T tau``.

    Without ``fn`` it is solved exactly: per body axis ``dL_i/dt = tau0_b,i - D J_i L_i``,
    so ``L_i(s) = e^{-a s} L_i + s phi1(-a s) tau0_b,i`` with ``a = D J_i`` and ``phi1(x) =
    (e^x - 1)/x``; with ``D = 0`` that is ``L + s tau0_b``, bit for bit the plain kick.
    With ``fn`` the flow is the implicit midpoint ``L1 = L0 + s R^T tau(Lbar)``, ``Lbar =
    (L0 + L1)/2``, by fixed-point iteration: symmetric and second order, so the Strang
    methods keep their order. Either way the kick is its own adjoint (``s -> -s`` undoes it).
    """
    tw, tbody, D = split_torque(kinds, P, b, t, q, I)
    tb = _body_part(kinds, q, tw, tbody)
    if fn is None:
        if not _damped(kinds):
            return (L[0] + s * tb[0], L[1] + s * tb[1], L[2] + s * tb[2])
        a0 = -D * J[0] * s
        a1 = -D * J[1] * s
        a2 = -D * J[2] * s
        return (
            math.exp(a0) * L[0] + s * _phi1(a0) * tb[0],
            math.exp(a1) * L[1] + s * _phi1(a1) * tb[1],
            math.exp(a2) * L[2] + s * _phi1(a2) * tb[2],
        )
    L1 = L
    scale = math.sqrt(dot(L, L)) + abs(s) * math.sqrt(dot(tb, tb))
    for _ in range(KICK_MAX_ITER):
        m = (0.5 * (L[0] + L1[0]), 0.5 * (L[1] + L1[1]), 0.5 * (L[2] + L1[2]))
        g = body_torque(kinds, P, fn, b, t, q, m, J, I)
        nxt = (L[0] + s * g[0], L[1] + s * g[1], L[2] + s * g[2])
        d = (nxt[0] - L1[0], nxt[1] - L1[1], nxt[2] - L1[2])
        L1 = nxt
        if math.sqrt(dot(d, d)) <= KICK_RTOL * scale:
            break
    return L1

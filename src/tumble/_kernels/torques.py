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

import functools
import math
from collections.abc import Callable
from typing import Any

from numba import types
from numba.extending import overload

from tumble._kernels import OVERLOAD_OPTIONS, inner, njit
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


@inner
def _body(q, v):
    return qrotate(qconj(q), v)


def _present(kinds: Any) -> tuple[bool, ...]:
    """Which kinds the model of numba type ``kinds`` has, one bool per kind (all False for
    None, no torque): read from the type, so a compile-time fact."""
    if isinstance(kinds, types.NoneType):
        return (False,) * len(WIDTH)
    return tuple(not isinstance(t, types.NoneType) for t in kinds.types[1].types)


def split_torque(kinds, P, b, t, q, I):
    """The parts of body ``b``'s torque at time ``t`` and attitude ``q``: compiled code only.

    Returns ``(tau_w, tau_b, D)``: the torque that does not depend on ``omega`` is ``tau0 =
    tau_w + R tau_b`` (each term adds to the frame it is cheapest in: gravity and the
    gravity gradient are formed in the body frame, with one rotation each), and ``D`` is
    the total damping coefficient (``tau = tau0 - D omega``). ``I`` are the body's principal
    moments. ``kinds`` is None for no torque at all: then the result is zeros and no term's
    code is compiled, so the torque-free loops keep the arithmetic (and the speed) of loops
    that never heard of torque.
    """
    raise NotImplementedError("split_torque runs in compiled code only")  # pragma: no cover


@overload(split_torque, jit_options=OVERLOAD_OPTIONS)
def _split_torque(kinds, P, b, t, q, I):
    return _split_torque_for(_present(kinds))


@functools.cache
def _split_torque_for(present: tuple[bool, ...]) -> Callable[..., Any]:
    """:func:`split_torque` for a model with the kinds ``present``. Each term's code sits
    behind ``if <kind present> and ...``, the first test a constant of this closure, so
    numba drops the absent kinds' code before typing it (a compiled call that only
    returned that constant still compiled every kind's code: seconds per model)."""
    (
        constant_world,
        constant_body,
        gravity,
        gravity_gradient,
        damping,
        attitude_control,
        periodic_world,
        periodic_body,
        _custom,
    ) = present

    def impl(kinds, P, b, t, q, I):
        if kinds is None:
            return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0
        wx = 0.0
        wy = 0.0
        wz = 0.0
        bx = 0.0
        by = 0.0
        bz = 0.0
        D = 0.0
        o = 0
        # Each term advances the offset by its own width, a constant: indexing WIDTH with k
        # at run time measured 7 ns per term.
        for k in kinds[0]:
            if constant_world and k == CONSTANT_WORLD:
                wx += P[b, o]
                wy += P[b, o + 1]
                wz += P[b, o + 2]
                o += 3
            if constant_body and k == CONSTANT_BODY:
                bx += P[b, o]
                by += P[b, o + 1]
                bz += P[b, o + 2]
                o += 3
            if gravity and k == GRAVITY:
                # (R c) × (m g) = R (c × Rᵀ m g): the weight at the centre of mass, about
                # the pivot.
                r = cross(
                    (P[b, o + 3], P[b, o + 4], P[b, o + 5]),
                    _body(q, (P[b, o], P[b, o + 1], P[b, o + 2])),
                )
                bx += r[0]
                by += r[1]
                bz += r[2]
                o += 6
            if gravity_gradient and k == GRAVITY_GRADIENT:
                # 3 n² ẑ × (I_w ẑ) = R (3 n² ẑ_b × I ẑ_b), with I diagonal in the body
                # frame.
                z = _body(q, (P[b, o + 1], P[b, o + 2], P[b, o + 3]))
                g = P[b, o]
                r = cross(z, (g * I[0] * z[0], g * I[1] * z[1], g * I[2] * z[2]))
                bx += r[0]
                by += r[1]
                bz += r[2]
                o += 4
            if damping and k == DAMPING:
                D += P[b, o]
                o += 1
            if attitude_control and k == ATTITUDE_CONTROL:
                # -k_p e with e the world rotation vector from the target to q (short arc).
                target = (P[b, o], P[b, o + 1], P[b, o + 2], P[b, o + 3])
                e = q_to_rotvec(qmul(q, qconj(target)))
                kp = P[b, o + 4]
                wx -= kp * e[0]
                wy -= kp * e[1]
                wz -= kp * e[2]
                D += P[b, o + 5]
                o += 6
            if periodic_world and k == PERIODIC_WORLD:
                cs = math.cos(P[b, o + 3] * t + P[b, o + 4])
                wx += cs * P[b, o]
                wy += cs * P[b, o + 1]
                wz += cs * P[b, o + 2]
                o += 5
            if periodic_body and k == PERIODIC_BODY:
                cs = math.cos(P[b, o + 3] * t + P[b, o + 4])
                bx += cs * P[b, o]
                by += cs * P[b, o + 1]
                bz += cs * P[b, o + 2]
                o += 5
        return (wx, wy, wz), (bx, by, bz), D

    return impl


def _world_terms(present: tuple[bool, ...]) -> bool:
    """True if some term adds to the world-frame ``tau0``."""
    return present[CONSTANT_WORLD] or present[ATTITUDE_CONTROL] or present[PERIODIC_WORLD]


def _body_terms(present: tuple[bool, ...]) -> bool:
    """True if some term adds to the body-frame ``tau0``."""
    return (
        present[CONSTANT_BODY]
        or present[GRAVITY]
        or present[GRAVITY_GRADIENT]
        or present[PERIODIC_BODY]
    )


def _damped(present: tuple[bool, ...]) -> bool:
    """True if some term damps (``D > 0`` possible)."""
    return present[DAMPING] or present[ATTITUDE_CONTROL]


def world_part(kinds, q, tw, tb):
    """``tau_w + R tau_b`` (no rotation when no term is in the body frame): compiled code
    only."""
    raise NotImplementedError("world_part runs in compiled code only")  # pragma: no cover


@overload(world_part, jit_options=OVERLOAD_OPTIONS)
def _world_part(kinds, q, tw, tb):
    if not _body_terms(_present(kinds)):
        return lambda kinds, q, tw, tb: tw

    def impl(kinds, q, tw, tb):
        r = qrotate(q, tb)
        return (tw[0] + r[0], tw[1] + r[1], tw[2] + r[2])

    return impl


def body_part(kinds, q, tw, tb):
    """``Rᵀ tau_w + tau_b`` (no rotation when no term is in the world frame): compiled code
    only."""
    raise NotImplementedError("body_part runs in compiled code only")  # pragma: no cover


@overload(body_part, jit_options=OVERLOAD_OPTIONS)
def _body_part(kinds, q, tw, tb):
    if not _world_terms(_present(kinds)):
        return lambda kinds, q, tw, tb: tb

    def impl(kinds, q, tw, tb):
        r = _body(q, tw)
        return (tb[0] + r[0], tb[1] + r[1], tb[2] + r[2])

    return impl


def body_torque(kinds, P, fn, b, t, q, L, J, I):
    """Body-frame torque on body ``b`` at ``(t, q, L_b)``: ``Rᵀ tau0 - D omega_b +
    Rᵀ fn(t, q, omega)``, with ``omega_b = J L_b``. The steps work in the body frame, so a
    body-frame term (gravity) costs no rotation here, and a world one costs one. Compiled
    code only."""
    raise NotImplementedError("body_torque runs in compiled code only")  # pragma: no cover


@overload(body_torque, jit_options=OVERLOAD_OPTIONS)
def _body_torque(kinds, P, fn, b, t, q, L, J, I):
    if isinstance(fn, types.NoneType) and not _damped(_present(kinds)):

        def undamped(kinds, P, fn, b, t, q, L, J, I):
            tw, tbody, _D = split_torque(kinds, P, b, t, q, I)
            return body_part(kinds, q, tw, tbody)

        return undamped

    def impl(kinds, P, fn, b, t, q, L, J, I):
        tw, tbody, D = split_torque(kinds, P, b, t, q, I)
        tb = body_part(kinds, q, tw, tbody)
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

    return impl


@inner
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
        tau0 = world_part(kinds, qb, tw, tb)
        r = _with_omega(tau0, D, fn, t, qb, (w[b, 0], w[b, 1], w[b, 2]))
        out[b, 0] = r[0]
        out[b, 1] = r[1]
        out[b, 2] = r[2]


@inner
def _phi1(x):
    """``(e^x - 1)/x``, 1 at ``x = 0``, without cancellation."""
    return math.expm1(x) / x if x != 0.0 else 1.0


def kick(kinds, P, fn, b, t, q, L, J, I, s):
    """The torque's own flow for time ``s`` at fixed attitude: ``dL_b/dt = R^T tau``.

    Without ``fn`` it is solved exactly: per body axis ``dL_i/dt = tau0_b,i - D J_i L_i``,
    so ``L_i(s) = e^{-a s} L_i + s phi1(-a s) tau0_b,i`` with ``a = D J_i`` and ``phi1(x) =
    (e^x - 1)/x``; with ``D = 0`` that is ``L + s tau0_b``, bit for bit the plain kick.
    With ``fn`` the flow is the implicit midpoint ``L1 = L0 + s R^T tau(Lbar)``, ``Lbar =
    (L0 + L1)/2``, by fixed-point iteration: symmetric and second order, so the Strang
    methods keep their order. Either way the kick is its own adjoint (``s -> -s`` undoes it).
    Compiled code only.
    """
    raise NotImplementedError("kick runs in compiled code only")  # pragma: no cover


@overload(kick, jit_options=OVERLOAD_OPTIONS)
def _kick(kinds, P, fn, b, t, q, L, J, I, s):
    if not isinstance(fn, types.NoneType):
        return _implicit_kick
    if not _damped(_present(kinds)):

        def plain(kinds, P, fn, b, t, q, L, J, I, s):
            tw, tbody, _D = split_torque(kinds, P, b, t, q, I)
            tb = body_part(kinds, q, tw, tbody)
            return (L[0] + s * tb[0], L[1] + s * tb[1], L[2] + s * tb[2])

        return plain

    def damped(kinds, P, fn, b, t, q, L, J, I, s):
        tw, tbody, D = split_torque(kinds, P, b, t, q, I)
        tb = body_part(kinds, q, tw, tbody)
        a0 = -D * J[0] * s
        a1 = -D * J[1] * s
        a2 = -D * J[2] * s
        return (
            math.exp(a0) * L[0] + s * _phi1(a0) * tb[0],
            math.exp(a1) * L[1] + s * _phi1(a1) * tb[1],
            math.exp(a2) * L[2] + s * _phi1(a2) * tb[2],
        )

    return damped


def _implicit_kick(kinds, P, fn, b, t, q, L, J, I, s):
    """:func:`kick` with a ``custom`` term: the implicit midpoint by fixed-point iteration."""
    tw, tbody, _D = split_torque(kinds, P, b, t, q, I)
    tb = body_part(kinds, q, tw, tbody)
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

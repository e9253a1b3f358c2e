"""The loops over bodies and steps behind ``tumble.rigid.simulate`` and ``step``.

Each loop is written once, as a template that calls ``_STEP``, and compiled as an entry
point of its own per method (plain or composed) and per kind of model (no torque, or a
torque), with that method's step bound to ``_STEP`` (:func:`_entry`;
:func:`tumble._kernels.rigid.compose.step_of` builds the step, which is inlined):
:func:`simulate_entry`, :func:`step_entry`, :func:`one_body_entry` and
:func:`step_record_entry` return them. numba then specialises each entry per torque-model
structure (the type of ``kinds``, :mod:`tumble._kernels.torques`) and per array type, and
caches it on disk. The loop is the entry itself: no outer function links and optimises it
a second time (that cost a third of a first ``simulate``'s compile).

The method still travels as the first argument, a :class:`~tumble._kernels.rigid.table.Tag`
(an empty value), because the steps take it; ``gamma`` holds a composition's sub-step
coefficients (float64, empty for a plain method). The loops take float64 inputs.

Without torque the simulate loop carries what the symmetric methods keep exactly: their
``L_b`` after each step comes from the run's initial world ``L`` (an identity in exact
arithmetic), and the exact flow (``exact_split``, the ``exact`` method) is evaluated from
the initial state (:func:`simulate_exact`), so round-off does not accumulate in the
invariants.

Threads: the loops run over a range of blocks or bodies, and
:func:`tumble._kernels.dispatch.run_split` runs ranges on several Python threads at once
(the kernels release the GIL): numba's ``prange`` cannot carry the model's ``kinds`` (a
tuple of types) into its threads.
"""

from __future__ import annotations

import functools
import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from tumble._kernels import built_njit, njit
from tumble._kernels.exact import evaluate_scaled, prepare_scaled
from tumble._kernels.inertia import body_momentum
from tumble._kernels.rigid import table
from tumble._kernels.rigid.common import (
    constrain,
    load3,
    load4,
    mul,
    pseudo_inverse,
    record,
    to_body,
)
from tumble._kernels.rigid.compose import step_of
from tumble._kernels.rigid.table import Tag
from tumble._kernels.rotation import qrotate
from tumble._kernels.torques import CONSTANT_WORLD, kinds_of

#: Bodies per block in :func:`_simulate_range`. A step is one long dependency chain
#: (products, a division, a square root, each feeding the next), so one body at a time
#: leaves the core waiting on latencies. The loop instead runs one step over a block of
#: bodies (state in an 8 KB scratch array, in L1) inside the loop over steps, with the step
#: inlined, so that consecutive bodies' chains overlap. Measured at 10^5 bodies, one
#: thread: momentum-first 75-90 -> 55-60 ns per body-step, modified Jolt 100-110 -> 55-65
#: (results bit for bit the same). Interleaving 2 or 4 bodies in one loop without inlining
#: gained nothing.
BLOCK = 64

#: The index of the first record, an ``int64`` rather than a literal (see ``record``).
FIRST = np.int64(0)

#: ``kinds`` of a model that is one constant world torque per body (the callable path).
HELD_TORQUE = kinds_of((CONSTANT_WORLD,))


def _simulate_range(
    method, gamma, g0, g1, q0, w0, J, model, h, steps, every, q_out, w_out, Lw_out, Lb_out, E_out
):
    """Run blocks ``g0 .. g1 - 1`` of :data:`BLOCK` bodies for ``steps`` steps each,
    recording every ``every``-th state, the initial state first and the final state last
    (the template of :func:`simulate_entry`, with ``_STEP`` the method's step, inlined,
    and ``_CARRY`` whether the method keeps world ``L`` exactly: symmetric, no torque).

    ``q0`` (N, 4) unit, ``w0`` (N, 3) world angular velocity (the loop forms the body
    momentum ``L_b = J⁺ Rᵀ omega``), ``J`` (N, 3), ``model`` the torque ``(kinds, P, fn)``
    (time starts at 0); outputs (R, N, ...) with ``R = ceil(steps / every) + 1``. Returns
    the number of non-finite records (0 spares the caller a pass over them).

    Each body takes exactly the steps ``_STEP`` takes alone; only the order of bodies
    and steps is interchanged. With ``_CARRY``, after each step ``L_b = R1ᵀ L_w0`` with
    ``L_w0`` the body's initial world momentum: the same state in exact arithmetic, and the
    same order, but ``|L|`` and world ``L`` stay within a few ulps over any run instead of
    walking by round-off (world ``L`` of the compositions over 10⁵ steps: 1.2e-13 to
    3.7e-13 restarted, below 2e-15 carried). Not with a locked axis (the constraint changes
    world ``L``).
    """
    out = (q_out, w_out, Lw_out, Lb_out, E_out)
    # Rows: q (4), L_b (3), J (3), I (3), the carried world L (3; NaN: not carried); one
    # column per body of the block.
    S = np.empty((16, BLOCK))
    bad = 0
    for g in range(g0, g1):
        b0 = BLOCK * g
        bad += _run_block(method, gamma, b0, q0, w0, J, model, h, steps, every, S, out)
    return bad


def _run_block(method, gamma, b0, q0, w0, J, model, h, steps, every, S, out):
    """Block ``b0 .. b0 + BLOCK - 1`` (fewer at the end) of :func:`_simulate_range`."""
    q_out, w_out, Lw_out, Lb_out, E_out = out
    m = min(BLOCK, q0.shape[0] - b0)
    bad = 0
    for i in range(m):
        b = b0 + i
        Jb = load3(J, b)
        Ib = pseudo_inverse(Jb)
        q = load4(q0, b)
        L = body_momentum(q, load3(w0, b), Jb)
        Lw = qrotate(q, L)
        if not (_CARRY and Jb[0] > 0.0 and Jb[1] > 0.0 and Jb[2] > 0.0):
            Lw = (math.nan, math.nan, math.nan)
        for c in range(4):
            S[c, i] = q[c]
        for c in range(3):
            S[4 + c, i] = L[c]
            S[7 + c, i] = Jb[c]
            S[10 + c, i] = Ib[c]
            S[13 + c, i] = Lw[c]
        bad += record(FIRST, b, q, L, Jb, q_out, w_out, Lw_out, Lb_out, E_out)
    r = FIRST + 1
    for s in range(1, steps + 1):
        t = (s - 1) * h
        for i in range(m):
            q, L = _STEP(
                method,
                gamma,
                (S[0, i], S[1, i], S[2, i], S[3, i]),
                (S[4, i], S[5, i], S[6, i]),
                (S[7, i], S[8, i], S[9, i]),
                (S[10, i], S[11, i], S[12, i]),
                model,
                b0 + i,
                t,
                h,
            )
            if _CARRY and S[13, i] == S[13, i]:
                L = to_body(q, (S[13, i], S[14, i], S[15, i]))
            for c in range(4):
                S[c, i] = q[c]
            for c in range(3):
                S[4 + c, i] = L[c]
        if s % every == 0 or s == steps:
            for i in range(m):
                Jb = (S[7, i], S[8, i], S[9, i])
                L = constrain((S[4, i], S[5, i], S[6, i]), Jb)
                q = (S[0, i], S[1, i], S[2, i], S[3, i])
                bad += record(r, b0 + i, q, L, Jb, q_out, w_out, Lw_out, Lb_out, E_out)
            r += 1
    return bad


def _exact_range(
    method, gamma, g0, g1, q0, w0, J, model, h, steps, every, q_out, w_out, Lw_out, Lb_out, E_out
):
    """:func:`simulate_exact`, called as the other simulate loops are (the method, whose
    type would compile the loop again for ``exact_split`` composed, is not passed on)."""
    return simulate_exact(g0, g1, q0, w0, J, h, steps, every, q_out, w_out, Lw_out, Lb_out, E_out)


@njit
def simulate_exact(g0, g1, q0, w0, J, h, steps, every, q_out, w_out, Lw_out, Lb_out, E_out):
    """:func:`_simulate_range` for the exact flow without torque (the ``exact`` method, and
    ``exact_split``, composed or not, without torque): one loop for all of them.

    Each step of ``exact_split`` is then the exact free flow over ``h`` (the kicks are zero,
    and the flows of a composition add up to one over ``Σ γ_i h = h``), so the state after
    ``n`` steps is the flow over ``n h`` from the initial state: one :func:`prepare_scaled`
    per body and one evaluation per record. Restarting the flow every step instead walks
    the invariants by round-off, and the phase with them (measured on the peer body,
    ``dt = 0.1``, 10⁴ steps: ``exact_split:suzuki4`` 4e-12 rad from ``exact``; 1e-10 rad
    1e-3 from the separatrix).
    """
    bad = 0
    for b in range(BLOCK * g0, min(BLOCK * g1, q0.shape[0])):
        Jb = load3(J, b)
        q = load4(q0, b)
        L = body_momentum(q, load3(w0, b), Jb)
        bad += record(FIRST, b, q, L, Jb, q_out, w_out, Lw_out, Lb_out, E_out)
        f, sc = prepare_scaled(q, L, Jb)
        r = FIRST + 1
        # Records at every, 2 every, ... and at the final step.
        for s in range(every, steps + every, every):
            q1, L1 = evaluate_scaled(f, sc, min(s, steps) * h)
            L1 = constrain(L1, Jb)
            bad += record(r, b, q1, L1, Jb, q_out, w_out, Lw_out, Lb_out, E_out)
            r += 1
    return bad


def _step_range(method, gamma, b0, b1, q0, L0, J, model, t, h, q_out, L_out):
    """One step of bodies ``b0 .. b1 - 1`` from time ``t``: ``(q0, L0)`` (N, ...) to
    ``(q_out, L_out)`` (the template of :func:`step_entry`)."""
    for b in range(b0, b1):
        Jb = load3(J, b)
        q, L = _STEP(
            method, gamma, load4(q0, b), load3(L0, b), Jb, pseudo_inverse(Jb), model, b, t, h
        )
        L = constrain(L, Jb)
        for i in range(4):
            q_out[b, i] = q[i]
        for i in range(3):
            L_out[b, i] = L[i]


@njit
def record_all(q, L, J, r, q_out, w_out, Lw_out, Lb_out, E_out):
    """Write record ``r`` of every body from the body state ``(q, L)`` (N, ...)."""
    for b in range(q.shape[0]):
        Jb = load3(J, b)
        record(
            r, b, load4(q, b), constrain(load3(L, b), Jb), Jb, q_out, w_out, Lw_out, Lb_out, E_out
        )


def _step_record(
    method, gamma, b0, b1, q, L, J, tau, t, h, r, w, q_out, w_out, Lw_out, Lb_out, E_out
):
    """One step of bodies ``b0 .. b1 - 1`` in place under held world torques ``tau`` (N, 3),
    updating the world ``omega`` ``w`` and writing record ``r`` when ``r >= 0``: the loop
    body of a run with a Python torque callable (the template of :func:`step_record_entry`).
    Returns 2 if ``tau`` is not finite, 1 if a new state is not, else 0."""
    n_tau = 0
    n_bad = 0
    for b in range(b0, b1):
        if not (abs(tau[b, 0]) + abs(tau[b, 1]) + abs(tau[b, 2]) < math.inf):
            n_tau += 1
            continue
        Jb = load3(J, b)
        model = (HELD_TORQUE, tau, None)
        q1, L1 = _STEP(
            method, gamma, load4(q, b), load3(L, b), Jb, pseudo_inverse(Jb), model, b, t, h
        )
        L1 = constrain(L1, Jb)
        wb = qrotate(q1, mul(Jb, L1))
        for i in range(4):
            q[b, i] = q1[i]
        for i in range(3):
            L[b, i] = L1[i]
            w[b, i] = wb[i]
        if r >= 0:
            n_bad += record(r, b, q1, L1, Jb, q_out, w_out, Lw_out, Lb_out, E_out)
        elif not (abs(q1[0]) + abs(wb[0]) + abs(wb[1]) + abs(wb[2]) < math.inf):
            n_bad += 1
    return 2 if n_tau else (1 if n_bad else 0)


def _step_one(method, gamma, q, w, J, model, t, h, locked_ok, q_out, w_out):
    """One step of one body given as ``q`` (4,), world ``w`` (3,), ``J`` (3,) float64 arrays
    (the template of :func:`one_body_entry`).

    The single-body fast path of :func:`tumble.rigid.step`: the same arithmetic as the
    batched path (normalise ``q``, ``L_b = I Rᵀ omega``, the step, ``omega1 = R1 J
    L_b1``), bit for bit, without NumPy's per-call overheads. Returns 0 and fills
    ``q_out``, ``w_out``; or 1 for anything the validating path must see (non-finite or
    degenerate input, a locked axis the method refuses, a non-finite result), writing
    nothing meaningful.
    """
    total = abs(t) + abs(h)
    for i in range(3):
        total += abs(w[i]) + J[i]
        if not J[i] >= 0.0 or (J[i] == 0.0 and not locked_ok):
            return 1
    n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    if not (total < math.inf and n2 >= 2.2250738585072014e-308 and n2 < math.inf):
        return 1
    s = math.sqrt(n2)
    qn = (q[0] / s, q[1] / s, q[2] / s, q[3] / s)
    Jt = (J[0], J[1], J[2])
    I = pseudo_inverse(Jt)
    L = mul(I, to_body(qn, (w[0], w[1], w[2])))
    q1, L1 = _STEP(method, gamma, qn, L, Jt, I, model, 0, t, h)
    w1 = qrotate(q1, mul(Jt, constrain(L1, Jt)))
    if not (
        abs(q1[0]) + abs(q1[1]) + abs(q1[2]) + abs(q1[3]) + abs(w1[0]) + abs(w1[1]) + abs(w1[2])
        < math.inf
    ):
        return 1
    for i in range(4):
        q_out[i] = q1[i]
    for i in range(3):
        w_out[i] = w1[i]
    return 0


#: Bound per method in each entry's globals (:func:`_entry`); these module values are
#: never compiled.
_STEP: Any = None
_CARRY = False


def _entry(template: Callable[..., Any], tag: Tag, free: bool) -> Any:
    """``template`` compiled as an entry point of its own for ``tag``'s method, without
    torque (``free``) or with one: its globals ``_STEP`` (the method's step,
    :func:`~tumble._kernels.rigid.compose.step_of`) and ``_CARRY`` (a symmetric method
    without torque keeps world ``L`` exactly) are fixed, and numba freezes globals as
    constants, so the entry holds that method's loop alone, and specialises it per
    torque-model structure and array type like any function.

    A closure over compiled functions would not be cached on disk (numba keys it by
    per-process ids, numba issue 6264); a function of the template's code with other
    globals is, under a name of its own (numba names cache files after the function's
    qualified name): ``_simulate_range__splitting__composed__free``. The name says
    everything the globals depend on; :mod:`tumble._kernels.cache` stamps it with the
    kernel sources. The simulate loop's block helper ``_run_block`` is bound the same way,
    and inlined.
    """
    kernel = table.kernel(tag.name)
    name = template.__name__ + f"__{tag.name}" + "__composed" * tag.composed + "__free" * free
    scope = {
        **template.__globals__,
        "_STEP": step_of(kernel, tag.composed, free),
        "_CARRY": kernel.symmetric and free,
    }
    if template is _simulate_range:
        block = _rebound(_run_block, f"_run_block__{name}", scope)
        scope["_run_block"] = built_njit(inline="always")(block)
    return njit(_rebound(template, name, scope))


def _rebound(template: Callable[..., Any], qualname: str, scope: dict[str, Any]) -> Any:
    """A function of ``template``'s code with the globals ``scope``, named ``qualname``."""
    func = types.FunctionType(template.__code__, scope, template.__name__, template.__defaults__)
    func.__qualname__ = qualname
    func.__doc__ = template.__doc__
    func.__module__ = template.__module__
    return func


@functools.cache
def simulate_entry(tag: Tag, free: bool) -> Any:
    """The loop behind :func:`tumble.rigid.simulate` for ``tag``'s method, without torque
    (``free``) or with one: :func:`_simulate_range` around the method's step, or
    :func:`simulate_exact` for the exact flow without torque. Each takes the world
    ``omega`` and forms ``L_b`` itself."""
    if free and table.kernel(tag.name).exact:
        return _exact_range
    return _entry(_simulate_range, tag, free)


@functools.cache
def step_entry(tag: Tag, free: bool) -> Any:
    """The loop behind a batched :func:`tumble.rigid.step`: :func:`_step_range`."""
    return _entry(_step_range, tag, free)


@functools.cache
def one_body_entry(tag: Tag, free: bool) -> Any:
    """The one-body step behind :func:`tumble.rigid.step`'s fast path: :func:`_step_one`."""
    return _entry(_step_one, tag, free)


@functools.cache
def step_record_entry(tag: Tag) -> Any:
    """The step of a run with a torque callable (a held torque): :func:`_step_record`."""
    return _entry(_step_record, tag, False)

"""One step of a method as the loops take it: :func:`step_of`.

``step(method, gamma, q, L_b, J, I, model, b, t, h)`` is one step of body ``b`` from
``(q, L_b)`` at time ``t`` under the torque ``model = (kinds, P, fn)``
(:mod:`tumble._kernels.torques`), built here once per kernel, composition and kind of model
from the kernel's form (:mod:`tumble._kernels.rigid.table`):

* ``held``: the body-frame torque at the start of the step (``R0ᵀ τ(t, q0, ω0)``,
  :func:`tumble._kernels.torques.body_torque`) held over the step;
* ``staged``: the step evaluates the model itself (``rk4``, at its stages);
* ``flow``, ``split`` (time-symmetric): ``K(t + h, h/2) ∘ F(h) ∘ K(t, h/2)``, the torque's
  exact half kicks around the free flow (Strang); composed, ``Φ(γ_s h) ∘ ... ∘ Φ(γ_1 h)``
  with the sub-step coefficients ``gamma`` (:mod:`tumble.compositions`), stage ``i`` starting
  at ``t + (γ_1 + ... + γ_{i-1}) h``.

A composition merges what consecutive stages share where the merge is an identity: the two
kicks that meet between stages (for a model without a custom term, whose kick is the exact
flow of the torque at fixed attitude and time, a one-parameter group), and without torque
the two outer flows of a splitting (each keeps the momentum component it turns about). Not
with a locked axis: the stage-wise constraint does not commute with a merge.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tumble._kernels import built_njit
from tumble._kernels.rigid.common import constrain
from tumble._kernels.rigid.table import Kernel
from tumble._kernels.rotation import qnormalize
from tumble._kernels.torques import body_torque, kick


@functools.cache
def step_of(kernel: Kernel, composed: bool, free_body: bool) -> Any:
    """One step of ``kernel`` (plain or ``composed``; for a model without torque when
    ``free_body``) as a function that numba inlines (``inline="always"``) into each loop
    that calls it (:mod:`tumble._kernels.rigid.loops`), so that LLVM interleaves the
    bodies of a block. Built once per process and structure; the functions it calls (the
    method's step or flow, the kicks) are compiled once each, cached on disk, and linked
    in (those marked ``forceinline`` are inlined by LLVM)."""
    return built_njit(inline="always")(implementation(kernel, composed, free_body))


@functools.cache
def implementation(kernel: Kernel, composed: bool, free_body: bool) -> Callable[..., Any]:
    """The Python body of :func:`step_of` for ``kernel``, plain or composed, for a model
    without torque (``free_body``: no torque code is compiled at all) or with one (built
    once each)."""
    if kernel.form == "held":
        return _held(kernel.step, free_body)
    if kernel.form == "staged":
        return _staged(kernel.step)
    free = split_pieces(kernel)[0] if kernel.form == "split" else kernel.step
    strang = _free_flow(free) if free_body else _strang(free)
    if not composed:
        return _plain(strang)
    if kernel.form == "split":
        merged = _merged_splitting(kernel, free_body)
    else:
        merged = _stages(free) if free_body else _merged_kicks(free)
    return _composed(strang, merged)


def _held(step: Callable[..., Any], free_body: bool) -> Callable[..., Any]:
    if free_body:

        def advance_free(method, gamma, q, L, J, I, model, b, t, h):
            return step(q, constrain(L, J), J, I, (0.0, 0.0, 0.0), h)

        return advance_free

    def advance_held(method, gamma, q, L, J, I, model, b, t, h):
        L = constrain(L, J)
        kinds, P, fn = model
        tb = body_torque(kinds, P, fn, b, t, q, L, J, I)
        return step(q, L, J, I, tb, h)

    return advance_held


def _staged(step: Callable[..., Any]) -> Callable[..., Any]:
    def advance_staged(method, gamma, q, L, J, I, model, b, t, h):
        return step(q, constrain(L, J), J, I, model, b, t, h)

    return advance_staged


def _strang(free: Callable[..., Any]) -> Callable[..., Any]:
    """``K(t + h, h/2) ∘ F(h) ∘ K(t, h/2)`` around the free flow ``free``."""

    @built_njit(inline="always")
    def strang(q, L, J, I, model, b, t, h):
        kinds, P, fn = model
        hh = 0.5 * h
        L = kick(kinds, P, fn, b, t, q, L, J, I, hh)
        q, L = free(q, L, J, I, h)
        return q, kick(kinds, P, fn, b, t + h, q, L, J, I, hh)

    return strang


def _free_flow(free: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`_strang` without torque: the kicks are identities, so the flow alone."""

    @built_njit(inline="always")
    def flow(q, L, J, I, model, b, t, h):
        return free(q, L, J, I, h)

    return flow


def _plain(strang: Callable[..., Any]) -> Callable[..., Any]:
    def advance_symmetric(method, gamma, q, L, J, I, model, b, t, h):
        return strang(q, constrain(L, J), J, I, model, b, t, h)

    return advance_symmetric


def _composed(strang: Callable[..., Any], merged: Callable[..., Any]) -> Callable[..., Any]:
    def advance_composed(method, gamma, q, L, J, I, model, b, t, h):
        L = constrain(L, J)
        if J[0] > 0.0 and J[1] > 0.0 and J[2] > 0.0 and model[2] is None:
            return merged(gamma, q, L, J, I, model, b, t, h)
        # Stage by stage: each clears locked momentum as a step of the base does, and a
        # custom term's implicit-midpoint kick is no group, so its kicks do not merge.
        c = 0.0
        for g in gamma:
            q, L = strang(q, constrain(L, J), J, I, model, b, t + c * h, g * h)
            c += g
        return q, L

    return advance_composed


def _stages(free: Callable[..., Any]) -> Callable[..., Any]:
    """The composition without torque: the free flows of the stages in turn."""

    @built_njit
    def stages(gamma, q, L, J, I, model, b, t, h):
        for g in gamma:
            q, L = free(q, L, J, I, g * h)
        return q, L

    return stages


def _merged_kicks(free: Callable[..., Any]) -> Callable[..., Any]:
    """The composition with the two kicks that meet between stages merged into one,
    ``K(t_i, (γ_i + γ_{i+1}) h/2)`` at the stage boundary ``t_i``: ``s + 1`` torque
    evaluations per step instead of ``2 s``."""

    @built_njit
    def composed_kicks(gamma, q, L, J, I, model, b, t, h):
        kinds, P, fn = model
        n = gamma.shape[0]
        L = kick(kinds, P, fn, b, t, q, L, J, I, 0.5 * gamma[0] * h)
        c = 0.0
        for i in range(n):
            q, L = free(q, L, J, I, gamma[i] * h)
            c += gamma[i]
            after = gamma[i + 1] if i + 1 < n else 0.0
            L = kick(kinds, P, fn, b, t + c * h, q, L, J, I, 0.5 * (gamma[i] + after) * h)
        return q, L

    return composed_kicks


@functools.cache
def split_pieces(kernel: Kernel) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The free flow ``O(h/2) ∘ I(h) ∘ O(h/2)`` of a ``split`` kernel (normalised), and its
    stage before normalisation: ``(free(q, L, J, I, h), stage(q, L, J, pairing, h))``."""
    outer, inner, pairing = kernel.outer, kernel.inner, kernel.pairing

    @built_njit
    def stage(q, L, J, p, h):
        hh = 0.5 * h
        q, L = outer(q, L, J, p, hh)
        q, L = inner(q, L, J, p, h)
        return outer(q, L, J, p, hh)

    @built_njit
    def free(q, L, J, I, h):
        q, L = stage(q, L, J, pairing(J), h)
        return qnormalize(q), L

    return free, stage


def _merged_splitting(kernel: Kernel, free_body: bool) -> Callable[..., Any]:
    """The composition of a splitting with the kicks merged (each stage ``O ∘ I ∘ O``
    between them, the pairing found once, one normalisation at the end); without torque
    (``free_body``) no kicks, and the outer flows that meet between stages merged,
    ``O((γ_i + γ_{i+1}) h/2)``: ``s - 1`` fewer outer flows in ``s`` stages
    (``splitting:suzuki4``: 21 axis flows instead of 25). With torque, the stages stay in
    :func:`split_pieces`' functions, compiled once: inlining them here multiplied the
    compile time of each new torque structure by five."""
    outer, inner, pairing = kernel.outer, kernel.inner, kernel.pairing
    stage = split_pieces(kernel)[1]

    @built_njit
    def stages(gamma, q, L, J, I, model, b, t, h):
        p = pairing(J)
        n = gamma.shape[0]
        q, L = outer(q, L, J, p, 0.5 * gamma[0] * h)
        for i in range(n):
            q, L = inner(q, L, J, p, gamma[i] * h)
            after = gamma[i + 1] if i + 1 < n else 0.0
            q, L = outer(q, L, J, p, 0.5 * (gamma[i] + after) * h)
        return qnormalize(q), L

    if free_body:
        return stages

    @built_njit
    def composed_splitting(gamma, q, L, J, I, model, b, t, h):
        kinds, P, fn = model
        p = pairing(J)
        c = 0.0
        before = 0.0
        for g in gamma:
            L = kick(kinds, P, fn, b, t + c * h, q, L, J, I, 0.5 * (before + g) * h)
            q, L = stage(q, L, J, p, g * h)
            c += g
            before = g
        L = kick(kinds, P, fn, b, t + c * h, q, L, J, I, 0.5 * before * h)
        return qnormalize(q), L

    return composed_splitting

"""The switches of the dual arithmetic, each context-local.

:func:`nan_safe` (public, re-exported by :mod:`tumble.dual`) turns NaN-safe partials on
or off; :func:`checking_every_coefficient`, the drivers' internal switch, makes the
NaN-safe product check the coefficient of every rule. Both are context variables: a
thread or an asyncio task that turns one off changes only its own derivatives (as
:func:`tumble.memory_limit` does for the memory limit). :mod:`tumble.dual.number` reads
:data:`NAN_SAFE` and :data:`EVERY_COEFFICIENT` directly, on the hot path of every dual
operation; they, :func:`nan_safe_enabled` and :func:`checking_every_coefficient` serve the
other modules of the package and are not exported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from tumble._errors import InputError

__all__ = ["nan_safe"]

NAN_SAFE: ContextVar[bool] = ContextVar("tumble_dual_nan_safe", default=True)
EVERY_COEFFICIENT: ContextVar[bool] = ContextVar("tumble_dual_every_coefficient", default=False)


@contextlib.contextmanager
def nan_safe(enabled: bool = True) -> Iterator[None]:
    """Within the block, turn NaN-safe partials on (the default) or off.

    NaN-safe: a partial that is zero stays zero whatever it is multiplied by, so an
    infinite derivative (``sqrt`` at 0) cannot turn an unrelated zero partial into NaN:
    ``gradient(lambda v: np.sqrt(v[0]) + v[1], [0, 1])`` is ``[inf, 1]``, not
    ``[inf, nan]`` (ForwardDiff.jl's NaN-safe mode). The check costs a pass over each
    value-sized coefficient; ``docs/dual.md`` gives the measured cost.

    Context-local, like :func:`tumble.memory_limit`: other threads and asyncio tasks keep
    their own setting, and the previous one is restored on exit. A thread started inside
    the block begins with the default (on) unless it runs in a copy of this context
    (``contextvars.copy_context().run``).
    """
    if not isinstance(enabled, bool):
        raise InputError(f"enabled: expected True or False, got {enabled!r}")
    token = NAN_SAFE.set(enabled)
    try:
        yield
    finally:
        NAN_SAFE.reset(token)


def nan_safe_enabled() -> bool:
    """Whether NaN-safe partials are on in this context (:func:`nan_safe`)."""
    return NAN_SAFE.get()


@contextlib.contextmanager
def checking_every_coefficient() -> Iterator[None]:
    """Within the block (context-local), the NaN-safe product checks the coefficients of
    every rule, not only of those outside :data:`~tumble.dual.rules.FINITE_DERIVATIVES`.

    A coefficient of such a rule is not finite only where an input or the value already
    is (``x * y`` with ``y = 1/0``). Checking them all costs a pass over every value-sized
    coefficient (13 % on the benchmark), so the drivers evaluate ``f`` without it and
    again with it only if the result holds a NaN: the same result as always checking.
    """
    token = EVERY_COEFFICIENT.set(True)
    try:
        yield
    finally:
        EVERY_COEFFICIENT.reset(token)

"""Compiled kernels behind tumble's public functions: the one place for numba code.

Every kernel is written once, in plain Python on one element with an explicit output,
and compiled with the options below (on-disk cache, keyed to all the package's sources by
:mod:`tumble._kernels.cache`; no fast-math so results match the readable formulas to
round-off). Public modules validate input and then call in here;
nothing in this package validates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numba
from numba import types
from numba.extending import intrinsic

from tumble._kernels import cache

cache.install()

#: Options for scalar and per-body kernels. ``error_model="numpy"`` makes division by zero
#: follow IEEE rules (no Python exception inside compiled loops); callers guard the
#: degenerate cases on purpose.
JIT_OPTIONS = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}

njit: Callable[..., Any] = functools.partial(numba.njit, **JIT_OPTIONS)
"""``numba.njit`` with tumble's options."""

parallel_njit: Callable[..., Any] = functools.partial(numba.njit, parallel=True, **JIT_OPTIONS)
"""``numba.njit`` with tumble's options and ``prange`` parallel loops."""

OVERLOAD_OPTIONS: Any = {k: v for k, v in JIT_OPTIONS.items() if k != "cache"}
"""Options for the implementations of ``numba.extending.overload`` (compiled into, and
cached with, their callers)."""

built_njit: Callable[..., Any] = functools.partial(numba.njit, **{**JIT_OPTIONS, "cache": False})
"""``numba.njit`` for functions that a factory builds around other kernels (a closure over
compiled functions): not cached alone, since numba cannot key such a closure across
processes (numba issue 6264), but compiled into, and cached with, the loop that calls it."""

guvectorize: Callable[..., Any] = functools.partial(numba.guvectorize, nopython=True, cache=True)
"""``numba.guvectorize`` with on-disk caching; broadcasting over leading axes for free."""

FLOAT_TYPES = ("float32", "float64")
"""The element types every public kernel is compiled for."""


@intrinsic
def _select(typingctx: Any, cond: Any, a: Any, b: Any) -> Any:
    """``a if cond else b`` for two floats of one type, as a single LLVM ``select``.

    Both values are computed; there is no branch, so a loop that picks per element between
    two formulas stays vectorisable (a Python conditional becomes control flow there).
    """
    if not isinstance(cond, types.Boolean) or not isinstance(a, types.Float) or a != b:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.select(*args)

    return a(cond, a, b), codegen


select: Callable[..., Any] = _select
"""``select(cond, a, b)`` in compiled code: ``a if cond else b`` without a branch."""

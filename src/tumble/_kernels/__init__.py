"""Compiled kernels behind tumble's public functions: the one place for numba code.

Every kernel is written once, in plain Python on one element with an explicit output,
and compiled with the options below (on-disk cache, keyed to all the package's sources by
:mod:`tumble._kernels.cache`; no fast-math so results match the readable formulas to
round-off). Public modules validate input and then call in here; nothing in this package
validates.

Nothing compiles when a module is imported: numba compiles a function the first time it
is called with new types, and :func:`guvectorize` builds a gufunc per float type the
first time it meets that type (numba's own ``guvectorize`` with explicit signatures
compiles every signature of every gufunc at import, which cost seconds before the first
rotation). :func:`twins` writes the serial and the ``prange`` form of a flat loop from
one per-element body.

Compile time is most of a first call, so: entry points that Python calls are
:func:`njit`; helpers that only compiled code calls are :func:`inner` (numba's Python and
C wrappers cost three quarters of a small function's compile time); and a helper that must
be inlined for speed is ``inner(forceinline=True)``, compiled once and inlined by LLVM,
rather than numba's ``inline="always"``, which copies, types and lowers the callee again
at every call site (a splitting step's five axis flows took 2 s to compile that way).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import prange, types
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic

from tumble._kernels import cache

cache.install()

#: Options for scalar and per-body kernels. ``error_model="numpy"`` makes division by zero
#: follow IEEE rules (no Python exception inside compiled loops); callers guard the
#: degenerate cases on purpose.
JIT_OPTIONS = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}

njit: Callable[..., Any] = functools.partial(numba.njit, **JIT_OPTIONS)
"""``numba.njit`` with tumble's options: for kernels that Python calls (entry points)."""

#: :data:`JIT_OPTIONS` of a kernel that only compiled code calls: numba builds no CPython
#: and no C wrapper for it (they cost three quarters of a small function's compile time:
#: 107 ms against 29 ms per tuple helper, measured on the 2-core machine).
INNER_OPTIONS = {
    **{k: v for k, v in JIT_OPTIONS.items() if k != "cache"},
    "no_cpython_wrapper": True,
    "no_cfunc_wrapper": True,
}


class InnerDispatcher(CPUDispatcher):
    """A kernel compiled for compiled callers only (:func:`inner`), cached on disk.

    Python may still call it (tests, a reader trying a formula): the call goes to a twin
    compiled with the wrappers, in this process only, the same code and the same results.
    """

    @functools.cached_property
    def _from_python(self) -> Any:
        return njit(cache=False)(self.py_func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._from_python(*args, **kwargs)


def inner(func: Callable[..., Any] | None = None, *, cache: bool = True, **options: Any) -> Any:
    """Decorator, ``@inner`` or ``@inner(forceinline=True)``: :func:`njit` for a helper that
    only other kernels call, compiled without Python's wrappers (:data:`INNER_OPTIONS`)."""
    if func is None:
        return functools.partial(inner, cache=cache, **options)
    dispatcher = InnerDispatcher(
        py_func=func, locals={}, targetoptions={**INNER_OPTIONS, **options}
    )
    if cache:
        dispatcher.enable_caching()
    return dispatcher


parallel_njit: Callable[..., Any] = functools.partial(numba.njit, parallel=True, **JIT_OPTIONS)
"""``numba.njit`` with tumble's options and ``prange`` parallel loops."""

OVERLOAD_OPTIONS: Any = {k: v for k, v in JIT_OPTIONS.items() if k != "cache"}
"""Options for the implementations of ``numba.extending.overload`` (compiled into, and
cached with, their callers)."""

built_njit: Callable[..., Any] = functools.partial(inner, cache=False)
"""``numba.njit`` for functions that a factory builds around other kernels (a closure over
compiled functions): not cached alone, since numba cannot key such a closure across
processes (numba issue 6264), but compiled into, and cached with, the loop that calls it."""

FLOAT_TYPES = ("float32", "float64")
"""The element types every public kernel is compiled for."""


class LazyGufunc:
    """A NumPy gufunc over ``func``, built for a float type the first time it is called
    with operands of that type, with on-disk caching.

    The operands are arrays of one float type (the first operand's type picks the loop);
    the call returns what the NumPy gufunc returns. A built gufunc is called directly, so
    a call costs a dictionary look-up more than the bare NumPy gufunc.
    """

    def __init__(self, func: Callable[..., Any], layout: str) -> None:
        self._func = func
        self._layout = layout
        self._built: dict[np.dtype, np.ufunc] = {}
        functools.update_wrapper(self, func)

    def __call__(self, *operands: Any) -> Any:
        ufunc = self._built.get(operands[0].dtype)
        if ufunc is None:
            ufunc = self._build(operands[0].dtype)
        return ufunc(*operands)

    def _build(self, dtype: np.dtype) -> np.ufunc:
        if dtype.name not in FLOAT_TYPES:
            raise TypeError(f"{self._func.__name__}: no loop for {dtype}, only {FLOAT_TYPES}")
        signature = _gufunc_signature(self._layout, dtype.name)
        with cache.building(self._func):
            built = numba.guvectorize([signature], self._layout, nopython=True, cache=True)(
                self._func
            )
        self._built[dtype] = built.ufunc
        return built.ufunc


def _gufunc_signature(layout: str, element: str) -> str:
    """numba's signature of a gufunc of ``layout`` on ``element`` numbers: an input without
    core axes is a scalar, every other operand an array with its core axes (an output at
    least one: numba writes a scalar output to ``out[0]``)."""
    inputs, outputs = layout.split("->")
    types = []
    for side, scalar in ((inputs, element), (outputs, f"{element}[:]")):
        for group in re.findall(r"\(([^)]*)\)", side):
            axes = len([a for a in group.split(",") if a.strip()])
            types.append(f"{element}[{', '.join([':'] * axes)}]" if axes else scalar)
    return f"void({', '.join(types)})"


def guvectorize(layout: str) -> Callable[[Callable[..., Any]], LazyGufunc]:
    """Decorator: ``func(*inputs, *outputs)`` as a gufunc of ``layout`` (``"(n),(m)->(m)"``)
    for float32 and float64, each built on first use (:class:`LazyGufunc`); broadcasting
    over leading axes for free."""

    def decorate(func: Callable[..., Any]) -> LazyGufunc:
        return LazyGufunc(func, layout)

    return decorate


_TWIN = """
def {name}({args}):
    {zeros}
    for i in loop_range(out.shape[0] // width):
        {accumulate}
    return {counts}
"""


def twins(body: Any, width: int, counts: int = 1) -> tuple[Any, Any]:
    """The serial and the ``prange`` loop of the per-element function ``body``.

    ``body(i, *operands, out)`` computes element ``i`` (a ``uint64``) into the flat
    ``out``, ``width`` numbers per element, and returns an integer flag, or a tuple of
    ``counts`` of them; each twin ``loop(*operands, out)`` runs it over every element of
    ``out`` and returns the sums. The serial twin is for small batches (no thread
    start-up), the parallel one for large (see ``dispatch.use_parallel``); named
    ``<stem>_serial`` and ``<stem>_parallel`` after ``body`` named ``_<stem>_at``.

    The twins are written out as source, with the operands as plain parameters: numba's
    dispatcher types plain arguments in C (a ``*args`` tuple would be typed in Python,
    microseconds per call), and a closure over ``body`` would key the on-disk cache by
    the dispatcher's per-process id (numba issue 6264: a miss in every new process), while
    the twins are entry points that must be cached. The source is compiled as if at
    ``body``'s line of ``body``'s file, where the cache files of the twins then live.
    """
    stem = body.__name__.removeprefix("_").removesuffix("_at")
    code = body.py_func.__code__
    params = list(inspect.signature(body.py_func).parameters)[1:]
    if params[-1] != "out":
        raise TypeError(f"{body.__name__}: the last parameter must be out, got {params[-1]}")
    sums = [f"c{k}" for k in range(counts)]
    call = f"body(np.uint64(i), {', '.join(params)})"
    if counts == 1:
        accumulate = f"c0 += {call}"
    else:
        accumulate = f"r = {call}\n" + "\n".join(f"        c{k} += r[{k}]" for k in range(counts))
    loops = []
    for suffix, loop_range, compile_with in (
        ("serial", range, njit),
        ("parallel", prange, parallel_njit),
    ):
        name = f"{stem}_{suffix}"
        source = _TWIN.format(
            name=name,
            args=", ".join(params),
            zeros="\n    ".join(f"{c} = 0" for c in sums),
            accumulate=accumulate,
            counts=", ".join(sums),
        )
        namespace = {
            "__name__": body.py_func.__module__,
            "np": np,
            "body": body,
            "width": width,
            "loop_range": loop_range,
        }
        # At body's line of body's file: numba names the cache files after both.
        exec(
            compile("\n" * (code.co_firstlineno - 2) + source, code.co_filename, "exec"), namespace
        )
        loop = namespace[name]
        loop.__doc__ = f"``{body.__name__}`` over every element, {suffix}; returns the sums."
        loops.append(compile_with(loop))
    return loops[0], loops[1]


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

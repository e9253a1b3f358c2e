"""Kernels behind :mod:`tumble.pairs`: walking and unranking the pair square and triangle.

Ranks are the positions of pairs in nested-loop order. For ``pairs`` over ``n`` items the
pair of rank ``k`` is ``(k // n, k % n)``; for ``distinct_pairs`` (``i < j``) row ``i``
starts at rank ``R(i) = i n - i (i + 1) / 2`` and holds ``n - 1 - i`` pairs. Exact unranking
of arbitrarily large ranks happens in Python (``math.isqrt``); the kernels here take a
starting pair ``(i, j)`` and walk forward, so they only ever handle int64 indices.

The reduction kernels are built per user function (``count_kernel``, ``fold_kernel``) and
compiled in memory only: numba cannot cache closures over other jitted functions on disk.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numba
import numpy as np

from tumble._kernels import JIT_OPTIONS, njit

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher

# Closures over a user's jitted function cannot go to numba's on-disk cache; the caller
# keeps the compiled kernels in memory, one per user function. Typed like `njit`: numba's
# stubs read a partial of njit as its options-only overload, which returns no Dispatcher.
_closure_jit: Callable[..., Any] = functools.partial(numba.njit, **{**JIT_OPTIONS, "cache": False})


@njit
def unrank_distinct(n, k):
    """The distinct pair ``(i, j)``, ``i < j < n``, of rank ``k`` (int64; needs n <= 2**31).

    Counting from the end, ``m = T - 1 - k`` lies in the reversed row ``r`` with
    ``r (r + 1) / 2 <= m < (r + 1) (r + 2) / 2``, so ``r = floor((sqrt(8 m + 1) - 1) / 2)``,
    ``i = n - 2 - r`` and ``j = n - 1 - (m - r (r + 1) / 2)``. The float square root can
    be one off for large ``m``; the two loops fix that exactly.
    """
    m = n * (n - 1) // 2 - 1 - k
    r = np.int64((math.sqrt(8.0 * m + 1.0) - 1.0) / 2.0)
    while r * (r + 1) // 2 > m:
        r -= 1
    while (r + 1) * (r + 2) // 2 <= m:
        r += 1
    return n - 2 - r, n - 1 - (m - r * (r + 1) // 2)


@njit
def fill_walk(n, i, j, distinct, I, J):
    """Fill ``I``, ``J`` with the pairs that follow ``(i, j)`` (itself first), in rank order."""
    k = 0
    total = I.shape[0]
    while k < total:
        stop = min(n, j + (total - k))
        for jj in range(j, stop):
            I[k] = i
            J[k] = jj
            k += 1
        i += 1
        j = i + 1 if distinct else 0


@njit
def fill_unrank(n, first, step, distinct, I, J):
    """Fill ``I``, ``J`` with the pairs of ranks ``first + t step`` (any step, int64 ranks)."""
    for t in range(I.shape[0]):
        k = first + t * step
        if distinct:
            I[t], J[t] = unrank_distinct(n, k)
        else:
            I[t] = k // n
            J[t] = k % n


def compile_function(func: Callable[..., object]) -> Dispatcher:
    """``func`` compiled lazily with tumble's options (already-jitted functions pass through).

    Raises whatever numba raises for objects it cannot compile (builtins, classes); typing
    errors only appear at the first call.
    """
    if isinstance(func, numba.core.dispatcher.Dispatcher):
        return func
    return _closure_jit(func)


def count_kernel(pred: Dispatcher) -> Dispatcher:
    """A compiled ``count(a, n, i, j, count, distinct)`` for one jitted predicate.

    It counts the pairs ``(a[i'], a[j'])`` for which ``pred`` is true among the ``count``
    pairs that start at ``(i, j)``, walking whole rows so the inner loop is a plain scan.
    """

    @_closure_jit
    def count_row(x, a, j, stop):
        total = 0
        for t in range(stop - j):
            # An unsigned index tells LLVM no negative-index wraparound can happen, which
            # is what lets it vectorise this loop (about 3x faster on this AVX-512 machine).
            if pred(x, a[np.uint64(j + t)]):
                total += 1
        return total

    @_closure_jit
    def count(a, n, i, j, count, distinct):
        total = 0
        while count > 0:
            stop = min(n, j + count)
            total += count_row(a[i], a, j, stop)
            count -= stop - j
            i += 1
            j = i + 1 if distinct else 0
        return total

    return count


def fold_kernel(func: Dispatcher) -> Dispatcher:
    """A compiled ``fold(a, n, i, j, count, distinct, acc)`` for one jitted ``func``.

    It returns ``acc`` after ``acc = func(acc, a[i'], a[j'])`` over the ``count`` pairs that
    start at ``(i, j)``, in rank order.
    """

    @_closure_jit
    def fold_row(acc, x, a, j, stop):
        for t in range(stop - j):
            acc = func(acc, x, a[np.uint64(j + t)])
        return acc

    @_closure_jit
    def fold(a, n, i, j, count, distinct, acc):
        while count > 0:
            stop = min(n, j + count)
            acc = fold_row(acc, a[i], a, j, stop)
            count -= stop - j
            i += 1
            j = i + 1 if distinct else 0
        return acc

    return fold

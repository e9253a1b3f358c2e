"""The one dispatch layer in front of the kernels: threads, and the operands of flat loops.

Public modules validate, then hand flat arrays to a kernel here or in a sibling module.
Three decisions are made in this one place:

* :func:`use_parallel` decides whether a batch is large enough for a ``prange`` kernel to
  pay for waking numba's thread pool (below :data:`PARALLEL_MIN_SIZE` elements the serial
  loop wins, and a small batch never touches the pool);
* :func:`run_split` runs a kernel over contiguous ranges of a batch on that many Python
  threads at once, for kernels whose arguments numba's ``prange`` cannot take (tuples);
* :func:`single_thread` runs a block of parallel kernels on the calling thread only, for
  callers that already run one job per core (sweep workers), serve one body per request
  (the lab), or time a single body (scenarios);
* :func:`first_use` says, in one log line, what a first call is compiling when that takes
  long, and :func:`compiled_entry` gives a call that is made again and again with the same
  argument types the compiled function itself, without numba's per-call typing;
* :func:`flat_operand` gives an argument of a broadcasting flat loop its form, and
  :func:`load`, :func:`load_scalar`, :func:`load3`, :func:`load4`, :func:`store` read and
  write it inside the loop.

Operands of the flat loops (``tumble.rotation``'s hot operations, ``tumble.kinematics``).
An argument with one element per batch element is the flat view of a C-contiguous
``(n, k)`` array, read at unsigned offsets (with a signed index numba adds a wrap-around
test to every load, about 20 % of these short loops). An argument shared by the whole
batch is a plain ``k``-tuple (a ``dt`` without component axis: the scalar itself): it
lives in registers, is never copied ``n`` times, and is never reloaded after a store.
Which of the two an argument is, is its numba type, so the choice is made at compile
time: numba compiles one loop per combination used, the row stride of every operand is a
constant, and LLVM vectorises the loops across elements (with a run-time stride it does
not, which cost ``quat_rotate`` half its speed).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import numba
import numpy as np
from numba import types
from numba.extending import overload

from tumble._kernels import inner

#: Batches at least this large run the ``prange`` loops (when numba has more than one
#: thread); below it, thread start-up costs more than it saves.
PARALLEL_MIN_SIZE = 20_000

_workqueue_lock = threading.RLock()
_layer: str | None = None


def use_parallel(size: int) -> bool:
    """Whether a loop over ``size`` elements should run on numba's thread pool."""
    return size >= PARALLEL_MIN_SIZE and numba.get_num_threads() > 1


_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    """In a forked child: drop the parent's pool, whose threads the child does not have
    (submitting to it would wait forever); the next :func:`run_split` makes a new one."""
    global _pool, _pool_size, _pool_lock
    _pool, _pool_size, _pool_lock = None, 0, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def run_split(run: Callable[[int, int], Any], count: int, parallel: bool) -> list[Any]:
    """``run(start, stop)`` over ``0 .. count``: in one call, or, if ``parallel``, in
    ``numba.get_num_threads()`` contiguous ranges on as many threads at once (the calling
    thread takes the first; ``run`` must release the GIL, as the compiled kernels do).
    Returns each range's result, in order.

    Every range has finished when this returns or raises (a compiled range cannot be
    stopped, and it writes into the caller's arrays). A failure, of the caller's range
    or of a worker's (an interrupt included), is raised after all ranges end: the first
    in range order, with the others attached as notes (Python 3.11+).
    """
    k = min(numba.get_num_threads(), count) if parallel else 1
    if k <= 1:
        return [run(0, count)]
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < k - 1:
            _pool = ThreadPoolExecutor(max_workers=k - 1, thread_name_prefix="tumble")
            _pool_size = k - 1
        pool = _pool
    bounds = [count * i // k for i in range(k + 1)]
    rest = [pool.submit(run, bounds[i], bounds[i + 1]) for i in range(1, k)]
    results: list[Any] = []
    errors: list[BaseException] = []
    try:
        results.append(run(bounds[0], bounds[1]))
    except BaseException as exc:  # re-raised below, once every range has ended
        errors.append(exc)
    wait(rest)
    for f in rest:
        failure = f.exception()
        if failure is None:
            results.append(f.result())
        else:
            errors.append(failure)
    if errors:
        if hasattr(errors[0], "add_note"):  # Python 3.11 and later
            for other in errors[1:]:
                errors[0].add_note(f"also raised in another range: {other!r}")
        raise errors[0]
    return results


def _threading_layer() -> str | None:
    """numba's threading layer, or None before the first parallel kernel has run."""
    global _layer
    if _layer is None:
        with contextlib.suppress(ValueError):
            _layer = numba.threading_layer()
    return _layer


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """Run numba's parallel kernels on the calling thread only, for the block.

    ``set_num_threads`` is per calling thread, so concurrent callers do not interfere. The
    ``workqueue`` threading layer (numba's fallback when neither OpenMP nor TBB is
    available) must not be entered from two threads at once: with it, or before the layer
    is known, callers take turns (a re-entrant lock, so blocks may nest).
    """
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        if _threading_layer() in (None, "workqueue"):
            with _workqueue_lock:
                yield
        else:
            yield
    finally:
        numba.set_num_threads(old)


#: A first call still running after this many seconds is compiling (loading a kernel from
#: numba's cache takes a fraction of a second): :func:`first_use` then logs what.
COMPILE_NOTICE_SECONDS = 2.0

_LOG = logging.getLogger("tumble")
_used: set[Hashable] = set()


def first_use(key: Hashable, what: Callable[[], str]) -> contextlib.AbstractContextManager[None]:
    """Around the first call of a compiled kernel for ``key`` in this process: if it runs
    longer than :data:`COMPILE_NOTICE_SECONDS`, log one INFO line on the ``tumble`` logger,
    "compiling <what()> ...", while it compiles (not a warning: the wait is expected once,
    and numba's cache serves later runs). Later calls with the same key cost a set lookup.
    """
    if key in _used:
        return contextlib.nullcontext()
    return _announce(key, what)


def compiled_entry(dispatcher: Any, args: tuple[Any, ...]) -> Callable[..., Any]:
    """The compiled overload of ``dispatcher`` for the types of ``args``, called directly.

    numba's dispatcher types every argument on every call; for a tuple or an argument of a
    custom type that typing runs in Python (about 2 µs of a one-body ``rigid.step``'s 3 µs
    kernel call). The overload's own entry point unboxes ``args`` as its signature says and
    skips the typing, so it must only be called with arguments of exactly these types (the
    caller keys it by what fixes them). ``dispatcher`` itself when that overload is not
    compiled (it then compiles on the next call, as always).
    """
    signature = tuple(dispatcher.typeof_pyval(a) for a in args)
    compiled = dispatcher.overloads.get(signature)
    return dispatcher if compiled is None else compiled.entry_point


@contextlib.contextmanager
def _announce(key: Hashable, what: Callable[[], str]) -> Iterator[None]:
    timer = threading.Timer(
        COMPILE_NOTICE_SECONDS,
        lambda: _LOG.info(
            "compiling %s (first use: numba compiles it once and caches it on disk; "
            "tumble precompile does this ahead of time)",
            what(),
        ),
    )
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        _used.add(key)


# --------------------------------------------------------------------------------------
# operands of the flat loops (see the module docstring)


def flat_operand(a: np.ndarray, n_trailing: int, batch: tuple[int, ...], size: int) -> Any:
    """``a`` as a flat loop takes it, for a batch of shape ``batch`` and ``size`` elements.

    ``a`` holds components of shape ``a.shape[-n_trailing:]`` (``k`` numbers) over leading
    axes that broadcast to ``batch``. One element for a batch of another size gives the
    shared form: a ``k``-tuple of scalars of ``a``'s dtype, or the scalar for
    ``n_trailing = 0``. Otherwise the per-element form: ``size * k`` numbers, C order,
    broadcast (copied) first if ``a`` has fewer elements.
    """
    trailing = a.shape[a.ndim - n_trailing :]
    k = math.prod(trailing)
    count = math.prod(a.shape[: a.ndim - n_trailing])
    if count == 1 and size != 1:
        shared = a.reshape(k)
        return shared[0] if n_trailing == 0 else tuple(shared)
    if count != size:
        a = np.broadcast_to(a, batch + trailing)
    return np.ascontiguousarray(a).reshape(size * k)


def load(x, row, width, j):
    """Component ``j`` of element ``row``: ``x[row * width + j]``, or ``x[j]`` if shared."""
    raise NotImplementedError  # pragma: no cover - replaced by the overload in compiled code


def load_scalar(x, row):
    """Element ``row`` of a scalar operand: ``x[row]``, or ``x`` itself if shared."""
    raise NotImplementedError  # pragma: no cover - replaced by the overload in compiled code


@overload(load)
def _load_impl(x, row, width, j):
    if isinstance(x, types.Array):
        return lambda x, row, width, j: x[np.uint64(row) * np.uint64(width) + np.uint64(j)]
    return lambda x, row, width, j: x[j]


@overload(load_scalar)
def _load_scalar_impl(x, row):
    if isinstance(x, types.Array):
        return lambda x, row: x[np.uint64(row)]
    return lambda x, row: x


@inner
def load3(x, row):
    """Element ``row`` of an operand of 3-vectors, as a tuple."""
    return (load(x, row, 3, 0), load(x, row, 3, 1), load(x, row, 3, 2))


@inner
def load4(x, row):
    """Element ``row`` of an operand of quaternions, as a tuple."""
    return (load(x, row, 4, 0), load(x, row, 4, 1), load(x, row, 4, 2), load(x, row, 4, 3))


@inner
def store(out, row, width, j, value):
    """``out[row * width + j] = value`` at an unsigned offset (``out`` is per element)."""
    out[np.uint64(row) * np.uint64(width) + np.uint64(j)] = value


def plain_arrays(x: Any) -> Any:
    """``x`` with each array in it (in tuples too) that is read-only or not C-contiguous
    copied to a plain one. numba types such arrays apart, and would compile a loop again
    for them (a broadcast input, then a fresh one); plain arrays pass through uncopied."""
    if isinstance(x, np.ndarray):
        plain = x.flags.writeable and x.flags.c_contiguous
        return x if plain else np.array(x, order="C")
    if isinstance(x, tuple):
        return tuple(plain_arrays(v) for v in x)
    return x

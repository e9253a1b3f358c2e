"""Lazy, indexable pairs and distinct pairs of a sequence.

``pairs(seq)`` is the ``n**2`` ordered pairs ``(seq[i], seq[j])`` in nested-loop order
(that of ``itertools.product(seq, repeat=2)``); ``distinct_pairs(seq)`` is the
``n (n - 1) / 2`` pairs with ``i < j`` (the order of ``itertools.combinations(seq, 2)``).
Both are views: they store the sequence and a range of ranks, nothing else, so
``distinct_pairs(range(10**20))`` costs a few hundred bytes.

A pair's *rank* is its position in that order. The view maps ranks to index pairs in
O(1) by closed form:

- pairs: ``k -> (k // n, k % n)``, and back ``(i, j) -> i n + j``;
- distinct pairs: row ``i`` starts at ``R(i) = i n - i (i + 1) / 2``, so
  ``(i, j) -> R(i) + j - i - 1``; going back, the rank ``m = T - 1 - k`` counted from the
  end lies in reversed row ``r = floor((isqrt(8 m + 1) - 1) / 2)``, giving ``i = n - 2 - r``
  and ``j = n - 1 - (m - r (r + 1) / 2)``. ``math.isqrt`` makes this exact for any rank.

Elements are :class:`Pair` named tuples (``p.first``, ``p.second``), or with ``refs=True``
:class:`PairRef` objects whose ``first`` and ``second`` write back into the sequence. Views
accept any sequence, including other views, so pairs of pairs need no materialising.

:meth:`count_if` and :meth:`reduce` run a plain Python ``pred(a, b)`` or
``func(acc, a, b)`` over numeric arrays compiled with numba when it can, else vectorised
over NumPy blocks (``count_if`` only), else in pure Python; ``view.last_path`` says which.
"""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
import operator
import sys
import types
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from itertools import repeat, starmap
from math import isqrt
from typing import TYPE_CHECKING, Any, NamedTuple, SupportsIndex, TypeVar, overload

import numba
import numpy as np

from tumble._errors import InputError
from tumble._kernels import pairs as _kernels
from tumble._validate import as_choice, as_int, check_callable, check_memory, describe

if TYPE_CHECKING:
    from typing import Self  # new in Python 3.11; tumble still runs on 3.10

    from _typeshed import SupportsLenAndGetItem
    from numba.core.dispatcher import Dispatcher

__all__ = ["DistinctPairs", "Pair", "PairRef", "Pairs", "distinct_pairs", "pairs"]

#: Pairs on which a compiled or vectorised path is checked against plain Python before
#: it runs: a cheap guard against functions numba or NumPy read differently from Python.
SAMPLE = 64
#: Pairs per NumPy block: the index and value temporaries stay near 1.5 MB.
BLOCK = 1 << 15
#: Below this many pairs, starting threads costs more than it saves. Reductions run on
#: Python threads over GIL-free compiled chunks (not numba's ``prange``), whose start-up and
#: per-chunk cost is far above a ``prange`` loop's: hence a threshold of its own, 50x
#: ``tumble._kernels.dispatch.PARALLEL_MIN_SIZE``.
MIN_PARALLEL = 1 << 20
#: Chunks per worker, so that one core slowed by other load does not hold up the rest.
CHUNKS_PER_WORKER = 4
#: Largest sequence the compiled paths take: its ranks then fit int64 with room to spare.
MAX_COMPILED_N = 2**31

_COUNT_PATHS = ("numba", "numpy", "python")
_REDUCE_PATHS = ("numba", "python")

_R = TypeVar("_R")  # what one path or one chunk of work returns
_A = TypeVar("_A")  # the accumulator of reduce


class Pair(NamedTuple):
    """One pair of values; equal to the plain tuple ``(first, second)``."""

    # Any: values of the sequence, whatever their type (the views are not generic).
    first: Any
    second: Any


# tuple.__new__ called from C: several times faster than the named tuple's Python __new__.
_new_pair = functools.partial(tuple.__new__, Pair)


class PairRef:
    """A pair of references into a sequence: ``first`` and ``second`` read and write it.

    ``ref.first = x`` does ``seq[i] = x``. When ``seq`` is itself a ``refs=True`` view,
    ``ref.first = (a, b)`` assigns member-wise into the pair below, as a C++ pair of
    references does. Iterating, indexing and ``==`` see the current values.
    """

    __slots__ = ("_i", "_j", "_seq")

    # Any: a list, a writable array or a refs=True view; no protocol in typing covers
    # item assignment for all three.
    def __init__(self, seq: Any, i: int, j: int) -> None:
        self._seq = seq
        self._i = i
        self._j = j

    @property
    def first(self) -> Any:
        """``seq[i]``, read and written in place."""
        return self._seq[self._i]

    @first.setter
    def first(self, value: object) -> None:
        self._seq[self._i] = value

    @property
    def second(self) -> Any:
        """``seq[j]``, read and written in place."""
        return self._seq[self._j]

    @second.setter
    def second(self, value: object) -> None:
        self._seq[self._j] = value

    @property
    def indices(self) -> tuple[int, int]:
        """``(i, j)``: where the pair lives in the sequence."""
        return self._i, self._j

    def __iter__(self) -> Iterator[Any]:
        yield self.first
        yield self.second

    def __len__(self) -> int:
        return 2

    def __getitem__(self, k: SupportsIndex) -> Any:
        return (self.first, self.second)[k]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple | PairRef):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable through the sequence

    def __repr__(self) -> str:
        return f"PairRef(first={self.first!r}, second={self.second!r})"


def _range_len(r: range) -> int:
    """``len(r)`` without the ``sys.maxsize`` limit of ``len``."""
    if r.step > 0:
        return max(0, (r.stop - r.start + r.step - 1) // r.step)
    return max(0, (r.start - r.stop - r.step - 1) // -r.step)


def _length(seq: SupportsLenAndGetItem[object]) -> int:
    if isinstance(seq, _PairView):
        return seq.size
    if isinstance(seq, range):
        return _range_len(seq)
    return len(seq)


def _as_sequence(seq: SupportsLenAndGetItem[object]) -> int:
    """Validate ``seq`` and return its length."""
    kind = type(seq)
    if (
        isinstance(seq, Mapping | Set)
        or not hasattr(kind, "__getitem__")
        or not hasattr(kind, "__len__")
    ):
        raise InputError(
            f"seq: expected a sequence (len() and integer indexing), got {describe(seq)}"
        )
    try:
        return _length(seq)
    except TypeError:  # 0-d arrays have __len__ but no length
        raise InputError(f"seq: expected a sequence with a length, got {describe(seq)}") from None


def _writable(seq: SupportsLenAndGetItem[object]) -> bool:
    if isinstance(seq, _PairView):
        return seq.refs
    if isinstance(seq, np.ndarray):
        return bool(seq.flags.writeable)
    return hasattr(type(seq), "__setitem__")


def _workers(workers: int | None, size: int) -> int:
    """Threads for a reduction over ``size`` pairs: one below :data:`MIN_PARALLEL`, where
    asking numba for its thread count would start its thread pool for nothing."""
    if workers is None:
        return int(numba.get_num_threads()) if size >= MIN_PARALLEL else 1
    return as_int(workers, "workers", minimum=1)


def _same(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays and other values without a single truth value
        return False


#: What a predicate written for scalars raises when it is handed NumPy arrays: a truth
#: value of many elements (ValueError), a conversion to a Python scalar or a hash of an
#: array (TypeError), a method only scalars have (AttributeError). Any other exception
#: is the predicate's own, and propagates from the probe as from every path.
_NOT_FOR_ARRAYS = (TypeError, ValueError, AttributeError)


class _Unavailable(Exception):
    """A reduction path cannot run for this call; the message says why."""


# Compiled kernels per user function. Plain functions (no closure, no defaults) are keyed
# by their code so that the same lambda written in a loop compiles once; others by
# identity, weakly, so that they can be freed. A cache maps a kind to its kernel and
# (kind, *argument types) to why compiling failed: Any for values of both sorts.
_BY_CODE: dict[tuple[types.CodeType, int], dict[str | tuple[object, ...], Any]] = {}
_BY_FUNC: weakref.WeakKeyDictionary[Callable[..., object], dict[str | tuple[object, ...], Any]] = (
    weakref.WeakKeyDictionary()
)


def _cache_for(func: Callable[..., object]) -> dict[str | tuple[object, ...], Any]:
    if (
        isinstance(func, types.FunctionType)
        and func.__closure__ is None
        and not func.__defaults__
        and not func.__kwdefaults__
    ):
        return _BY_CODE.setdefault((func.__code__, id(func.__globals__)), {})
    try:
        return _BY_FUNC.setdefault(func, {})
    except TypeError:  # not weakly referenceable: compile per call
        return {}


def _kernel(func: Callable[..., object], kind: str, *example: object) -> Dispatcher:
    """The ``kind`` ("count" or "fold") kernel of ``func``, or raise ``_Unavailable``.

    ``example`` are the arguments the kernel will see; a failure to compile for their
    types is remembered so that later calls fall through without recompiling.
    """
    cache = _cache_for(func)
    try:
        signature = tuple(numba.typeof(x) for x in example)
    except ValueError as exc:  # numba has no type for a value, e.g. a Fraction
        raise _Unavailable(str(exc)) from None
    failed = (kind, *signature)
    if failed in cache:
        raise _Unavailable(cache[failed])
    if kind not in cache:
        try:
            jitted = _kernels.compile_function(func)
        except Exception as exc:
            cache[failed] = f"numba cannot compile {describe(func)}: {exc}"
            raise _Unavailable(cache[failed]) from None
        cache[kind] = (_kernels.count_kernel if kind == "count" else _kernels.fold_kernel)(jitted)
    kernel = cache[kind]
    try:
        kernel.compile(signature)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        cache[failed] = f"numba cannot compile it for these types: {first}"
        raise _Unavailable(cache[failed]) from None
    return kernel


def _run(
    chunks: list[tuple[int, int]], fn: Callable[[tuple[int, int]], _R], workers: int
) -> list[_R]:
    """``[fn(c) for c in chunks]``, on ``workers`` threads (the kernels release the GIL)."""
    if workers == 1 or len(chunks) <= 1:
        return [fn(c) for c in chunks]
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, chunks))


def _split(start: int, count: int, workers: int) -> list[tuple[int, int]]:
    """``[start, start + count)`` as ``(first, length)`` chunks of equal length.

    Every pair costs the same, so equal lengths are equal work; for distinct pairs this
    is the triangle cut by unranking, not into equal row ranges (whose lengths differ).
    """
    if count <= 0:
        return []
    pieces = 1 if workers == 1 or count < MIN_PARALLEL else workers * CHUNKS_PER_WORKER
    bounds = [start + count * c // pieces for c in range(pieces + 1)]
    return [(a, b - a) for a, b in itertools.pairwise(bounds) if b > a]


class _PairView:
    """The shared machinery of :class:`Pairs` and :class:`DistinctPairs`."""

    _distinct = False
    __slots__ = ("_n", "_ranks", "_refs", "_seq", "_size", "last_path")

    def __init__(self, seq: SupportsLenAndGetItem[object], *, refs: bool = False) -> None:
        n = _as_sequence(seq)
        if not isinstance(refs, bool):
            raise InputError(f"refs: expected True or False, got {describe(refs)}")
        if refs and not _writable(seq):
            raise InputError(
                "seq: refs=True writes through to the sequence, which must support item "
                f"assignment (a list, a writable array, a refs=True view); got {describe(seq)}"
            )
        self._init(seq, n, range(self._full_size(n)), refs)

    def _init(self, seq: SupportsLenAndGetItem[object], n: int, ranks: range, refs: bool) -> None:
        # Any: written through when refs is True, which mypy cannot tie to seq's type.
        self._seq: Any = seq
        self._n = n
        self._ranks = ranks
        self._refs = refs
        self._size = _range_len(ranks)
        self.last_path: str | None = None

    def _sub(self, ranks: range) -> Self:
        view = object.__new__(type(self))
        view._init(self._seq, self._n, ranks, self._refs)
        return view

    # --- the closed forms -------------------------------------------------------------

    def _full_size(self, n: int) -> int:
        return n * (n - 1) // 2 if self._distinct else n * n

    def _unrank(self, k: int) -> tuple[int, int]:
        n = self._n
        if not self._distinct:
            i, j = divmod(k, n)
            return i, j
        m = n * (n - 1) // 2 - 1 - k
        r = (isqrt(8 * m + 1) - 1) // 2
        return n - 2 - r, n - 1 - (m - r * (r + 1) // 2)

    def _rank(self, i: int, j: int) -> int:
        if not self._distinct:
            return i * self._n + j
        return i * self._n - i * (i + 1) // 2 + j - i - 1

    # --- the sequence protocol ---------------------------------------------------------

    # Any: the caller's own sequence, of whatever type it was given.
    @property
    def seq(self) -> Any:
        """The underlying sequence (not a copy)."""
        return self._seq

    @property
    def n(self) -> int:
        """Number of items of the underlying sequence, fixed when the view was made."""
        return self._n

    @property
    def refs(self) -> bool:
        """Whether elements are :class:`PairRef` (write-through) instead of :class:`Pair`."""
        return self._refs

    @property
    def size(self) -> int:
        """Number of pairs in the view, exact at any size (``len`` stops at ``sys.maxsize``)."""
        return self._size

    def __len__(self) -> int:
        if self._size > sys.maxsize:
            raise OverflowError(
                f"the view holds {self._size} pairs, more than len() can return; use .size"
            )
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def _item(self, i: int, j: int) -> Pair | PairRef:
        if self._refs:
            return PairRef(self._seq, i, j)
        return _new_pair((self._seq[i], self._seq[j]))

    def _segments(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, int, int]]:
        """Row pieces ``(i, j0, j1)`` covering view positions ``[start, stop)`` in order."""
        stop = self._size if stop is None else stop
        count = stop - start
        r = self._ranks
        if r.step != 1:
            for rank in r[start:stop]:
                i, j = self._unrank(rank)
                yield i, j, j + 1
            return
        if count <= 0:
            return
        n = self._n
        i, j = self._unrank(r.start + start)
        while count > 0:
            end = min(n, j + count)
            yield i, j, end
            count -= end - j
            i += 1
            j = i + 1 if self._distinct else 0

    def __iter__(self) -> Iterator[Pair | PairRef]:
        seq = self._seq
        for i, j0, j1 in self._segments():
            if self._refs:
                yield from map(PairRef, repeat(seq), repeat(i), range(j0, j1))
            else:
                yield from map(_new_pair, zip(repeat(seq[i]), map(seq.__getitem__, range(j0, j1))))

    def _values(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[Any, Any]]:
        # C-level iteration (map, zip) keeps the pure-Python path near itertools' speed.
        seq = self._seq
        for i, j0, j1 in self._segments(start, stop):
            yield from zip(repeat(seq[i]), map(seq.__getitem__, range(j0, j1)))

    def _position(self, k: SupportsIndex) -> int:
        if isinstance(k, bool):
            raise InputError(f"k: expected an integer or a slice, got {describe(k)}")
        try:
            k = operator.index(k)
        except TypeError:
            raise InputError(f"k: expected an integer or a slice, got {describe(k)}") from None
        if not -self._size <= k < self._size:
            raise IndexError(f"pair index {k} out of range for a view of {self._size} pairs")
        return k + self._size if k < 0 else k

    @overload
    def __getitem__(self, k: SupportsIndex) -> Pair | PairRef: ...
    @overload
    def __getitem__(self, k: slice) -> Self: ...
    def __getitem__(self, k: SupportsIndex | slice) -> Pair | PairRef | Self:
        """``view[k]``: the pair of position ``k`` in O(1); a slice gives a lazy sub-view."""
        if isinstance(k, slice):
            try:
                return self._sub(self._ranks[k])
            except (TypeError, ValueError) as exc:
                raise InputError(f"k: bad slice {k!r} ({exc})") from None
        return self._item(*self._unrank(self._ranks[self._position(k)]))

    def __setitem__(self, k: SupportsIndex, value: Iterable[object]) -> None:
        """``view[k] = (a, b)`` assigns member-wise into the sequence (``refs=True`` only)."""
        if not self._refs:
            raise TypeError("this view is read-only; make it with refs=True to write through")
        if isinstance(k, slice):
            raise InputError(f"k: assign one pair at a time, at an integer position; got {k!r}")
        i, j = self._unrank(self._ranks[self._position(k)])
        try:
            first, second = value
        except (TypeError, ValueError):
            raise InputError(
                f"value: expected a pair (first, second), got {describe(value)}"
            ) from None
        self._seq[i] = first
        self._seq[j] = second

    def __repr__(self) -> str:
        name = type(self).__name__
        full = range(self._full_size(self._n))
        ranks = "" if self._ranks == full else f", ranks={self._ranks!r}"
        refs = ", refs=True" if self._refs else ""
        return f"{name}(n={self._n}, size={self._size}{ranks}{refs})"

    # --- ranking and index arrays ------------------------------------------------------

    def index(self, pair: Iterable[SupportsIndex]) -> int:
        """Position in this view of the pair of sequence indices ``pair = (i, j)``: O(1).

        The inverse of ``view[k]`` for indices: ``view.index((i, j)) == k`` exactly when
        ``view[k]`` is ``(seq[i], seq[j])`` at that place. Indices must satisfy
        ``0 <= i, j < n`` (and ``i < j`` for distinct pairs); a pair outside a sliced view
        raises ``InputError``, a ``ValueError`` as ``list.index`` raises.
        """
        try:
            i, j = (operator.index(x) for x in pair)
        except (TypeError, ValueError):
            raise InputError(
                f"pair: expected a pair of integer indices (i, j), got {describe(pair)}"
            ) from None
        if not (0 <= i < self._n and 0 <= j < self._n):
            raise InputError(f"pair: indices {(i, j)} out of range for a sequence of {self._n}")
        if self._distinct and not i < j:
            raise InputError(f"pair: distinct pairs have i < j, got {(i, j)}")
        r = self._ranks
        offset, rest = divmod(self._rank(i, j) - r.start, r.step)
        if rest or not 0 <= offset < self._size:
            raise InputError(f"pair: {(i, j)} is not in this view ({r!r} of the ranks)")
        return offset

    def index_arrays(
        self, start: int = 0, stop: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Index arrays ``(I, J)`` of the pairs at positions ``start:stop`` of the view.

        ``seq[I[t]], seq[J[t]]`` is ``view[start + t]``. ``start`` and ``stop`` follow
        slice rules (negative from the end, clipped). Cost O(stop - start) time and 16 bytes
        per pair; compiled. The sequence must have fewer than ``2**63`` items (int64).
        """
        start = as_int(start, "start", maximum=None)
        stop = self._size if stop is None else as_int(stop, "stop", maximum=None)
        if self._n > np.iinfo(np.int64).max:
            raise InputError(f"seq: {self._n} items do not fit int64 index arrays")
        start, stop, _ = slice(start, stop).indices(self._size)
        count = max(0, stop - start)
        check_memory(16 * count, "stop", f"index arrays of {count} pairs")
        I = np.empty(count, dtype=np.int64)
        J = np.empty(count, dtype=np.int64)
        if count == 0:
            return I, J
        r = self._ranks
        first = r[start]
        if r.step == 1:
            _kernels.fill_walk(self._n, *self._unrank(first), self._distinct, I, J)
        elif self._n <= MAX_COMPILED_N:
            _kernels.fill_unrank(self._n, first, r.step, self._distinct, I, J)
        else:
            for t, rank in enumerate(r[start:stop]):
                I[t], J[t] = self._unrank(rank)
        return I, J

    def blocks(self, size: int = BLOCK) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Iterate ``(I, J)`` index arrays of consecutive blocks of at most ``size`` pairs.

        Memory is O(size) at any moment whatever the view's size; the blocks together are
        ``index_arrays()``.
        """
        size = as_int(size, "size", minimum=1)
        return (self.index_arrays(p, p + size) for p in range(0, self._size, size))

    # --- reductions --------------------------------------------------------------------

    def _numeric(self) -> np.ndarray | None:
        """The sequence as a 1-D numeric array if it is (or plainly converts to) one."""
        seq = self._seq
        if isinstance(seq, np.ndarray):
            arr = seq
        elif isinstance(seq, list | tuple | range) and self._n <= MAX_COMPILED_N:
            try:
                arr = np.asarray(seq)
            except (ValueError, OverflowError):
                return None
        else:
            return None
        if arr.ndim != 1 or arr.dtype.kind not in "biuf" or arr.shape[0] > MAX_COMPILED_N:
            return None
        return arr

    def _dispatch(
        self, path: str, order: tuple[str, ...], attempts: dict[str, Callable[[], _R]]
    ) -> _R:
        reasons = []
        for name in order if path == "auto" else (path,):
            try:
                result = attempts[name]()
            except _Unavailable as why:
                if path != "auto":
                    raise InputError(f"path: {path!r} cannot run here: {why}") from None
                reasons.append(f"{name}: {why}")
                continue
            self.last_path = name
            return result
        raise AssertionError("the python path always runs; " + "; ".join(reasons))

    def _compiled_start(
        self, kind: str, func: Callable[..., object], *extra: object
    ) -> tuple[np.ndarray, Dispatcher]:
        arr = self._numeric()
        if arr is None:
            raise _Unavailable("the sequence is not a 1-D numeric array (or list of numbers)")
        if self._ranks.step != 1:
            raise _Unavailable("the compiled walk needs a contiguous view (slice step 1)")
        kernel = _kernel(func, kind, arr, self._n, 0, 0, 0, self._distinct, *extra)
        return arr, kernel

    def _chunked(
        self, start: int, stop: int, workers: int, body: Callable[[int, int], _R]
    ) -> list[_R]:
        return _run(_split(start, stop - start, workers), lambda c: body(*c), workers)

    # Any: pred sees values of the sequence (or NumPy blocks of them) and returns a truth
    # value (or an array of them).
    def count_if(
        self, pred: Callable[[Any, Any], Any], *, path: str = "auto", workers: int | None = None
    ) -> int:
        """Number of pairs ``(a, b)`` of the view for which ``pred(a, b)`` is true.

        Paths, tried in this order with ``path="auto"`` (name one to insist on it; if it
        cannot run, ``InputError`` says why), and recorded in ``view.last_path``:

        - ``"numba"``: ``pred`` compiled with numba (compiled kernels are kept per
          function; numba freezes the globals it reads) and run over whole rows of the
          pair square or triangle, split into equal-work chunks by unranking and run on
          ``workers`` threads (default ``numba.get_num_threads()``). Needs a 1-D numeric
          array (or a list, tuple or range of numbers, converted once) and a contiguous view;
          values are the array's dtype (int64 arithmetic wraps where Python's would not).
        - ``"numpy"``: ``pred(A, B)`` on NumPy blocks of ``BLOCK`` pairs, where it returns one
          truth value per pair; same chunking.
        - ``"python"``: ``pred(seq[i], seq[j])`` one pair at a time.

        A compiled or vectorised ``pred`` must first agree with plain Python on the first
        ``SAMPLE`` pairs, else the next path runs. ``pred`` runs in Python on those pairs
        first, so its errors there propagate; on arrays, a ``TypeError``, ``ValueError``
        or ``AttributeError`` (what code written for scalars raises on arrays) means the
        ``"numpy"`` path cannot run, and any other exception propagates as it is. Cost
        O(size) time, O(1) memory for numba, O(BLOCK x workers) for numpy; the result is
        an exact Python int.
        """
        check_callable(pred, "pred", 2)
        path = as_choice(path, "path", ("auto", *_COUNT_PATHS))
        nworkers = _workers(workers, self._size)
        if self._size == 0:
            self.last_path = "python" if path == "auto" else path
            return 0
        sample = min(self._size, SAMPLE)
        expected = sum(map(bool, starmap(pred, self._values(0, sample))))

        def compiled() -> int:
            arr, kernel = self._compiled_start("count", pred)
            distinct, base = self._distinct, self._ranks.start

            def run(first: int, count: int) -> int:
                return int(kernel(arr, self._n, *self._unrank(base + first), count, distinct))

            if run(0, sample) != expected:
                raise _Unavailable(
                    f"compiled pred disagreed with Python on the first {sample} pairs"
                )
            return expected + sum(self._chunked(sample, self._size, nworkers, run))

        def vectorised() -> int:
            arr = self._numeric()
            if arr is None:
                raise _Unavailable("the sequence is not a 1-D numeric array (or list of numbers)")

            def run(first: int, count: int) -> int:
                total = 0
                for p in range(first, first + count, BLOCK):
                    I, J = self.index_arrays(p, min(p + BLOCK, first + count))
                    total += int(np.count_nonzero(pred(arr[I], arr[J])))
                return total

            I, J = self.index_arrays(0, sample)
            try:
                res = np.asarray(pred(arr[I], arr[J]))
            except _NOT_FOR_ARRAYS as exc:
                raise _Unavailable(f"pred does not take arrays: {exc!r}") from None
            if res.shape != (sample,) or int(np.count_nonzero(res)) != expected:
                raise _Unavailable("pred on arrays did not give Python's answer per pair")
            return expected + sum(self._chunked(sample, self._size, nworkers, run))

        def plain() -> int:
            return expected + sum(map(bool, starmap(pred, self._values(sample))))

        return int(
            self._dispatch(
                path, _COUNT_PATHS, {"numba": compiled, "numpy": vectorised, "python": plain}
            )
        )

    def reduce(
        self,
        func: Callable[[_A, Any, Any], _A],
        initial: _A,
        *,
        combine: Callable[[_A, _A], _A] | None = None,
        path: str = "auto",
        workers: int | None = None,
    ) -> _A:
        """Fold ``acc = func(acc, a, b)`` over the pairs ``(a, b)`` in order, from ``initial``.

        Without ``combine`` the fold runs in order on one core. With an associative
        ``combine`` of which ``initial`` is an identity (``operator.add`` with 0, for
        instance; the contract of Spark's ``aggregate``), chunks fold separately from
        ``initial`` on ``workers`` threads and the partial results are combined in order.
        Paths as in :meth:`count_if` but without ``"numpy"`` (a fold does not vectorise):
        ``"numba"`` needs a numeric array, a contiguous view and ``initial`` of a type
        numba knows; the compiled fold must equal Python's on the first ``SAMPLE`` pairs.
        Cost O(size) time, O(1) memory.
        """
        check_callable(func, "func", 3)
        if combine is not None:
            check_callable(combine, "combine", 2)
        path = as_choice(path, "path", ("auto", *_REDUCE_PATHS))
        nworkers = _workers(workers, self._size)
        if self._size == 0:
            self.last_path = "python" if path == "auto" else path
            return initial
        sample = min(self._size, SAMPLE)
        head = functools.reduce(lambda acc, ab: func(acc, *ab), self._values(0, sample), initial)

        def compiled() -> _A:
            arr, kernel = self._compiled_start("fold", func, initial)
            distinct, base = self._distinct, self._ranks.start

            def run(first: int, count: int, acc: _A = initial) -> _A:
                if count == 0:
                    return acc
                return kernel(arr, self._n, *self._unrank(base + first), count, distinct, acc)

            if not _same(run(0, sample), head):
                raise _Unavailable(
                    f"compiled func disagreed with Python on the first {sample} pairs"
                )
            if combine is None:
                return run(sample, self._size - sample, head)
            parts = self._chunked(sample, self._size, nworkers, run)
            return functools.reduce(combine, parts, head)

        def plain() -> _A:
            return functools.reduce(lambda acc, ab: func(acc, *ab), self._values(sample), head)

        return self._dispatch(path, _REDUCE_PATHS, {"numba": compiled, "python": plain})


class Pairs(_PairView):
    """All ``n**2`` ordered pairs ``(seq[i], seq[j])``, ``i`` outer, ``j`` inner.

    The order of ``itertools.product(seq, repeat=2)``. Rank ``k`` is ``(k // n, k % n)``.
    Made by :func:`pairs`; see the module docstring for the operations.
    """

    _distinct = False
    __slots__ = ()


class DistinctPairs(_PairView):
    """The ``n (n - 1) / 2`` pairs ``(seq[i], seq[j])`` with ``i < j``, row by row.

    The order of ``itertools.combinations(seq, 2)``. Distinct means distinct positions:
    equal values at two positions still pair. Made by :func:`distinct_pairs`.
    """

    _distinct = True
    __slots__ = ()


def pairs(seq: SupportsLenAndGetItem[object], *, refs: bool = False) -> Pairs:
    """A lazy view of all ordered pairs of ``seq``, in nested-loop order.

    Parameters
    ----------
    seq : sequence, length n
        Anything with ``len()`` and integer indexing (list, tuple, range, str, 1-D or N-D
        NumPy array, another pairs view). Only a reference is kept; the length is read now.
    refs : bool
        Elements are :class:`PairRef` objects that write back into ``seq`` (which must
        support item assignment) instead of :class:`Pair` tuples of values.

    Returns
    -------
    Pairs
        ``size == n**2``; ``view[k] == (seq[k // n], seq[k % n])``. Indexing, ranking and
        slicing cost O(1) (O(log k) bit operations for huge ranks); iterating O(1) per pair.
    """
    return Pairs(seq, refs=refs)


def distinct_pairs(seq: SupportsLenAndGetItem[object], *, refs: bool = False) -> DistinctPairs:
    """A lazy view of the pairs ``(seq[i], seq[j])``, ``i < j``, in combinations order.

    Parameters
    ----------
    seq : sequence, length n
        As for :func:`pairs`.
    refs : bool
        As for :func:`pairs`.

    Returns
    -------
    DistinctPairs
        ``size == n (n - 1) / 2``; ``view[k]`` is found by the closed-form unranking of the
        module docstring in O(1) (``math.isqrt`` keeps it exact for any rank).
    """
    return DistinctPairs(seq, refs=refs)

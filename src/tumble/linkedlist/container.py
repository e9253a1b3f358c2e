"""The :class:`ContiguousList` API: ``deque`` and ``std::list`` operations, Python
protocols and whole-list algorithms, over the storage of
:class:`~tumble.linkedlist.storage.ListStorage`.

Whole-list operations that do not depend on order (``sum``, ``count``, ``fill``,
``replace``, ``remove``...) run over the contiguous values at NumPy speed without touching
the links; ``reverse`` and ``sort`` touch only the links.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
from tumble._kernels import linkedlist as _k
from tumble._validate import as_int, check_callable, check_memory, describe
from tumble.linkedlist.cursor import Cursor, lower_bound_by_cursor, slot_of
from tumble.linkedlist.storage import ListStorage

__all__ = ["ContiguousList"]

# Iteration and lower_bound handle these dtypes in compiled code (iteration then yields
# Python scalars through a memoryview, no list per chunk); numba has no float16 or long
# double, and the other kinds go through NumPy or Python.
_COMPILED_ITER = frozenset(
    np.dtype(t)
    for t in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
    )
)
# The first iteration chunk is small so that loops which stop early stay cheap.
_FIRST_CHUNK = 256
_CHUNK = 65536
_REPR_HEAD = 10


class _ListView(Sequence):
    """Read-only live view of a list's storage (``values`` when ``dtype`` is None)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[object]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        return self._items[index]

    def __repr__(self) -> str:
        return f"values({self._items!r})"


class ContiguousList(ListStorage):
    """A doubly linked list stored in two dense arrays: compact links and values.

    Parameters
    ----------
    values : iterable, optional
        Initial elements, front to back.
    dtype : numpy dtype or None, optional
        Element type. ``None`` (default) stores arbitrary Python objects in a ``list``;
        a NumPy dtype stores values in a NumPy array and enables NumPy-speed whole-list
        operations. Use fixed-size byte strings (``'S64'``) for large opaque values.

    Notes
    -----
    Costs: ``append``/``appendleft``/``insert`` amortised O(1); ``pop``/``popleft``/
    ``erase`` O(1); ``splice`` within one list O(k) link updates for k moved elements,
    from another list O(k) value copies; ``sort`` O(n log n) on the links only;
    ``reverse`` O(n) on the links only; ``sum``, ``count``, ``fill``, ``replace``,
    ``remove`` O(n) over contiguous values. Iteration walks the links in compiled code
    in chunks, then yields the chunk's values; changing the list's structure during
    iteration raises RuntimeError (values may be written through cursors).

    For dtype lists, the predicates and keys of ``count_if``, ``any``, ``all``,
    ``replace_if``, ``remove_if``, ``sort`` and ``merge`` are called **once** with the
    NumPy array of values and must return an array (so ``lambda v: v > 3`` works and
    runs at NumPy speed); for ``dtype=None`` they are called per element, as in Python.
    Not thread-safe.
    """

    # Elements come out typed Any (pop, front, iteration...): the list holds whatever it
    # was given and the class is not generic. They go in as object (checked at run time
    # against the dtype). Predicates and keys take Any: one element, or on a dtype list
    # the whole array of values; keys return Any: comparable objects, or an array.

    __hash__ = None  # type: ignore[assignment]  # mutable container

    def __init__(self, values: Iterable[object] = (), dtype: DTypeLike | None = None) -> None:
        super().__init__(dtype)
        self.extend(values)

    # ---------------------------------------------------------------------------- helpers

    def _slots(self) -> np.ndarray:
        return self.order() + 1

    @staticmethod
    def _other(other: object, dtype: np.dtype | None, name: str = "other") -> ContiguousList:
        if not isinstance(other, ContiguousList):
            raise InputError(f"{name}: expected a ContiguousList, got {describe(other)}")
        if other._dtype != dtype:
            raise InputError(f"{name}: expected a list of dtype {dtype}, got dtype {other._dtype}")
        return other

    def _coerce_many(self, values: Iterable[object], name: str) -> list[object] | np.ndarray:
        # Another list gives its elements in list order; between two dtype lists as an
        # array, so they never make a round trip through Python objects.
        if isinstance(values, ContiguousList):
            numeric = self._dtype is not None and values._dtype is not None
            values = values.to_numpy() if numeric else values.tolist()
        return super()._coerce_many(values, name)

    def _mask(self, pred: Callable[[Any], object], name: str) -> np.ndarray:
        """Boolean mask over storage order: ``pred`` per element, or once on the array."""
        check_callable(pred, name, 1)
        n = self._n
        if self._dtype is None:
            return np.fromiter((bool(pred(v)) for v in self._vals), bool, n)
        mask = np.asarray(self._call_on_array(pred, name, self.values))
        if mask.shape != (n,) or mask.dtype != bool:
            raise InputError(
                f"{name}: on a list of dtype {self._dtype} it is called once with the array of "
                f"values and must return a boolean array of shape ({n},), got {describe(mask)}"
            )
        return mask

    def _call_on_array(self, fn: Callable[[Any], object], name: str, values: ArrayLike) -> object:
        """``fn(values)``, turning NumPy's ambiguous-truth error into a pointed InputError."""
        try:
            return fn(values)
        except ValueError as exc:
            if isinstance(exc, InputError) or "truth value of an array" not in str(exc):
                raise
            # A per-element function (``v in (1, 2)``, ``v > 1 and v < 3``) met the array.
            raise InputError(
                f"{name}: on a list of dtype {self._dtype} it is called once with the whole "
                "array of values, not per element, and must be vectorised (for membership use "
                f"np.isin(v, ...), for 'and'/'or' use & and |); it raised: {exc}"
            ) from exc

    def _equal(self, value: object) -> np.ndarray:
        if self._dtype is None:
            return np.fromiter((v is value or bool(v == value) for v in self._vals), bool, self._n)
        return np.asarray(self._vals[: self._n] == value)

    def _keys(self, key: Callable[[Any], Any] | None) -> list[Any] | np.ndarray:
        """Sort keys of the elements in list order (an array, or a list for objects)."""
        if key is not None:
            check_callable(key, "key", 1)
        order = self.order()
        if self._dtype is None:
            vals = self._vals
            items = [vals[i] for i in order.tolist()]
            return items if key is None else [key(v) for v in items]
        ordered = self._vals[order]
        if key is None:
            return ordered
        ordered.flags.writeable = False
        keys = np.asarray(self._call_on_array(key, "key", ordered))
        if keys.shape != (self._n,):
            raise InputError(
                f"key: on a list of dtype {self._dtype} it is called once with the array of "
                f"values and must return an array of shape ({self._n},), got {describe(keys)}"
            )
        return keys

    @staticmethod
    def _is_sorted(keys: list[Any] | np.ndarray) -> bool:
        if isinstance(keys, np.ndarray):
            return not bool(np.any(keys[1:] < keys[:-1]))
        return not any(b < a for a, b in itertools.pairwise(keys))

    # -------------------------------------------------------------------------- properties

    @property
    def dtype(self) -> np.dtype | None:
        """The NumPy dtype of the values, or None for Python objects."""
        return self._dtype

    @property
    def index_dtype(self) -> np.dtype[np.unsignedinteger[Any]]:
        """The unsigned type of the links: the smallest that can index ``capacity``."""
        return self._nodes.dtype

    @property
    def capacity(self) -> int:
        """Elements the list can hold before its arrays grow (and maybe widen their index)."""
        return self._cap

    @property
    def values(self) -> Sequence[Any] | np.ndarray:
        """The values in storage order (not list order), read-only, without copying.

        A NumPy view for dtype lists (valid until the list next grows), a live read-only
        sequence otherwise. ``values[order()]`` is the list in order.
        """
        if self._dtype is None:
            return _ListView(self._vals)
        view = self._vals[: self._n].view()
        view.flags.writeable = False
        return view

    def order(self) -> np.ndarray:
        """Storage indices of the elements front to back, shape ``(len,)``, dtype intp.

        One compiled pass over the links (pure traversal: values are not touched).
        """
        out = np.empty(self._n, np.intp)
        if self._n:
            _k.gather(self._nodes, self._lk[1], True, out)
        return out

    def to_numpy(self) -> np.ndarray:
        """A new array of the elements front to back (dtype ``object`` when dtype is None)."""
        if self._dtype is None:
            return np.fromiter(self.tolist(), dtype=object, count=self._n)
        return self._vals[self.order()]

    def tolist(self) -> list[Any]:
        """A new Python list of the elements front to back."""
        if self._dtype is None:
            return list(map(self._vals.__getitem__, self.order().tolist()))
        return self._vals[self.order()].tolist()

    # ---------------------------------------------------------------------- Python protocols

    def __len__(self) -> int:
        return self._n

    def _chunks(self, forward: bool) -> Iterator[Iterable[Any]]:
        mod = self._mod
        slot = self._lk[1 if forward else 0]
        left = self._n
        size = _FIRST_CHUNK
        dtype = self._dtype
        while left > 0:
            k = min(size, left)
            left -= k
            if dtype in _COMPILED_ITER:
                chunk = np.empty(k, dtype)
                slot = _k.gather_values(self._nodes, self._vals, slot, forward, chunk)
                yield memoryview(chunk.data)
            else:
                idx = np.empty(k, np.intp)
                slot = _k.gather(self._nodes, slot, forward, idx)
                if dtype is None:
                    # itemgetter gathers in C; with one index it returns the bare item.
                    got = operator.itemgetter(*idx.tolist())(self._vals)
                    yield got if k > 1 else (got,)
                else:
                    yield self._vals[idx].tolist()
            if self._mod != mod:
                raise RuntimeError("ContiguousList changed its structure during iteration")
            size = _CHUNK

    def __iter__(self) -> Iterator[Any]:
        return itertools.chain.from_iterable(self._chunks(True))

    def __reversed__(self) -> Iterator[Any]:
        return itertools.chain.from_iterable(self._chunks(False))

    def __contains__(self, value: object) -> bool:
        try:
            v = self._coerce(value, "value")
        except InputError:
            return False
        return bool(self._equal(v).any())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ContiguousList):
            if len(other) != self._n:
                return False
            if self._dtype is not None and other._dtype is not None:
                return bool(np.array_equal(self.to_numpy(), other.to_numpy()))
            return self.tolist() == other.tolist()
        if isinstance(other, np.ndarray):
            return other.ndim == 1 and len(other) == self._n and self.tolist() == other.tolist()
        if isinstance(other, (str, bytes)) or not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == self._n and self.tolist() == list(other)

    def __repr__(self) -> str:
        n = self._n
        dtype = "" if self._dtype is None else f", dtype={str(self._dtype)!r}"
        if n <= 2 * _REPR_HEAD:
            return f"ContiguousList({self.tolist()!r}{dtype})"
        head = ", ".join(map(repr, itertools.islice(self, _REPR_HEAD)))
        tail = repr(self.back())
        return f"ContiguousList([{head}, ..., {tail}]{dtype}, len={n})"

    def copy(self) -> ContiguousList:
        """A new list with the same elements, order, dtype and capacity (links copied as is)."""
        new = ContiguousList.__new__(ContiguousList)
        n = self._n
        vals = self._vals if self._dtype is None else self._vals[:n]
        new._setup(self._dtype, self._cap, self._nodes[: n + 1], vals)
        return new

    __copy__ = copy

    def __getstate__(self) -> dict[str, object]:
        n = self._n
        vals = list(self._vals) if self._dtype is None else self._vals[:n].copy()
        return {
            "dtype": self._dtype,
            "capacity": self._cap,
            "nodes": self._nodes[: n + 1].copy(),
            "values": vals,
        }

    # Any: the fields have different types, each handed to its typed parameter.
    def __setstate__(self, state: dict[str, Any]) -> None:
        self._setup(state["dtype"], state["capacity"], state["nodes"], state["values"])

    # ------------------------------------------------------------------ deque-style methods

    def append(self, value: object) -> None:
        """Add ``value`` at the back. Amortised O(1)."""
        self._link_before(self._push(self._coerce(value, "value")), 0)

    def appendleft(self, value: object) -> None:
        """Add ``value`` at the front. Amortised O(1)."""
        v = self._coerce(value, "value")
        self._link_before(self._push(v), self._lk[1])

    def extend(self, values: Iterable[object]) -> None:
        """Add ``values`` at the back, in order. O(k) with one compiled linking pass."""
        vals = self._coerce_many(values, "values")
        if len(vals):
            slots = self._push_many(vals)
            _k.link_chain(self._nodes, slots, 0)
            self._mod += 1

    def extendleft(self, values: Iterable[object]) -> None:
        """Add ``values`` at the front one by one, so they end up reversed (as ``deque``)."""
        vals = self._coerce_many(values, "values")
        if len(vals):
            head = self._lk[1]
            slots = self._push_many(vals)
            _k.link_chain(self._nodes, np.ascontiguousarray(slots[::-1]), head)
            self._mod += 1

    def pop(self) -> Any:
        """Remove and return the back element; IndexError if empty. O(1)."""
        return self._pop_end(0)

    def popleft(self) -> Any:
        """Remove and return the front element; IndexError if empty. O(1)."""
        return self._pop_end(1)

    def _pop_end(self, link: int) -> Any:
        """Remove and return the element the sentinel's ``link`` names (0: back, 1: front)."""
        if self._n == 0:
            raise IndexError("pop from an empty ContiguousList")
        slot = self._lk[link]
        value = self._get(slot)
        self._erase(slot)
        return value

    def clear(self) -> None:
        """Remove every element, keeping the capacity; every cursor but ``end()`` goes stale."""
        self._gen[1 : self._n + 1] += 1
        self._nodes[0] = 0
        self._n = 0
        if self._dtype is None:
            self._vals.clear()
        self._mod += 1

    def front(self) -> Any:
        """The first element; IndexError if empty."""
        if self._n == 0:
            raise IndexError("front of an empty ContiguousList")
        return self._get(self._lk[1])

    def back(self) -> Any:
        """The last element; IndexError if empty."""
        if self._n == 0:
            raise IndexError("back of an empty ContiguousList")
        return self._get(self._lk[0])

    # ---------------------------------------------------------------- std::list-style cursors

    def begin(self) -> Cursor:
        """Cursor to the first element (``end()`` when empty)."""
        return Cursor(self, self._lk[1])

    def end(self) -> Cursor:
        """Cursor one past the last element; never goes stale."""
        return Cursor(self, 0)

    def insert(self, cursor: Cursor, value: object) -> Cursor:
        """Insert ``value`` before ``cursor``; return a cursor to it. O(1), moves nothing."""
        before = slot_of(cursor, self, "cursor")
        slot = self._push(self._coerce(value, "value"))
        self._link_before(slot, before)
        return Cursor(self, slot)

    def erase(self, cursor: Cursor) -> Cursor:
        """Erase the element at ``cursor``; return a cursor to the element that followed it.

        O(1). The storage-last element moves into the freed slot, so cursors to the erased
        element and to the moved one go stale; the returned cursor is always valid.
        """
        slot = slot_of(cursor, self, "cursor")
        if slot == 0:
            raise InputError("cursor: cannot erase end()")
        return Cursor(self, self._erase(slot))

    def find(self, value: object) -> Cursor:
        """Cursor to the first element equal to ``value`` in list order, or ``end()``.

        Equality is tested over the contiguous values; only a match walks the links.
        """
        mask = self._equal(self._coerce(value, "value"))
        if not mask.any():
            return self.end()
        return Cursor(self, int(_k.find_first(self._nodes, mask)))

    def lower_bound(self, value: object) -> Cursor:
        """Cursor to the first element not less than ``value`` in this sorted list.

        ``end()`` if every element is less. A binary search that advances along the links
        (``std::lower_bound`` on a list): O(log n) comparisons and O(n) link steps, in
        compiled code for bool, integer and float dtypes. The list must be sorted
        ascending (not checked: that would cost a full pass of comparisons).
        """
        x = self._coerce(value, "value")
        if self._dtype in _COMPILED_ITER:
            # Compare in the list's own type: numba would compare uint64 with int64 as floats.
            x = self._vals.dtype.type(x)
            return Cursor(self, int(_k.lower_bound(self._nodes, self._vals, self._n, x)))
        return lower_bound_by_cursor(self.begin(), self._n, x)

    def splice(
        self,
        cursor: Cursor,
        other: ContiguousList,
        first: Cursor | None = None,
        last: Cursor | None = None,
    ) -> None:
        """Move elements of ``other`` before ``cursor``, keeping their order.

        ``splice(c, other)`` moves all of ``other``; ``splice(c, other, first)`` the element
        at ``first``; ``splice(c, other, first, last)`` the range ``[first, last)``. Within
        one list (``other is self``) only links change and every cursor stays valid
        (``cursor`` must not lie inside the range). From another list the values are copied
        into this list's storage and erased from ``other`` (article §2.2), so cursors to
        the moved elements, and to elements of ``other`` shifted by the erasure, go stale.
        O(k) for k moved elements.
        """
        before = slot_of(cursor, self, "cursor")
        other = self._other(other, self._dtype)
        if first is None:
            if last is not None:
                raise InputError("last: give first as well")
            if other is self:
                raise InputError("other: cannot splice a whole list into itself")
            slots = other._slots()
        else:
            start = slot_of(first, other, "first")
            if last is None:
                if start == 0:
                    raise InputError("first: end() is not an element")
                if other is self and before in (start, self._lk[2 * start + 1]):
                    return
                slots = np.array([start], np.intp)
            else:
                stop = slot_of(last, other, "last")
                k = _k.count_until(other._nodes, start, stop)
                if k < 0:
                    raise InputError("last: not reachable from first")
                slots = np.empty(k, np.intp)
                _k.gather(other._nodes, start, True, slots)
                slots += 1
        if slots.shape[0] == 0:
            return
        if other is self:
            if np.any(slots == before):
                raise InputError("cursor: lies inside the range being spliced")
            _k.unlink(self._nodes, slots)
            _k.link_chain(self._nodes, slots, before)
            self._mod += 1
            return
        new = self._push_many(other._values_at(slots))
        _k.link_chain(self._nodes, new, before)
        self._mod += 1
        if slots.shape[0] == other._n:
            other.clear()
        else:
            other._erase_many(slots)

    def merge(self, other: ContiguousList, key: Callable[[Any], Any] | None = None) -> None:
        """Merge the sorted ``other`` into this sorted list, stably; ``other`` ends empty.

        Equal keys keep this list's elements first (like ``std::list::merge``). Both lists
        must be sorted by ``key`` (InputError otherwise). ``other``'s values are copied
        into this list's storage and its cursors go stale; this list's cursors stay valid.
        Cost: O((n + m) log(n + m)) worst case, close to O(n + m) as both runs are sorted.
        """
        other = self._other(other, self._dtype)
        if other is self:
            return
        ka, kb = self._keys(key), other._keys(key)
        if not self._is_sorted(ka):
            raise InputError("self: merge needs this list sorted (by key); it is not")
        if not self._is_sorted(kb):
            raise InputError("other: merge needs other sorted (by key); it is not")
        mine = self._slots()
        new = self._push_many(other._values_at(other._slots()))
        slots = np.concatenate([mine, new])
        if isinstance(ka, np.ndarray) and isinstance(kb, np.ndarray):
            perm = np.argsort(np.concatenate([ka, kb]), kind="stable")
        else:
            keys = list(ka) + list(kb)
            perm = np.array(sorted(range(len(keys)), key=keys.__getitem__), np.intp)
        self._relink(slots[perm])
        other.clear()

    def reverse(self) -> None:
        """Reverse the order by swapping every node's prev and next. O(n), values untouched."""
        used = self._nodes[: self._n + 1]
        used[:] = used[:, ::-1].copy()
        self._mod += 1

    def sort(self, key: Callable[[Any], Any] | None = None, reverse: bool = False) -> None:
        """Sort stably by ``key`` (ascending, or descending with ``reverse``), like ``list.sort``.

        O(n log n); only the links change, so every cursor stays valid. Equal elements keep
        their order in both directions.
        """
        if not isinstance(reverse, (bool, np.bool_)):
            raise InputError(f"reverse: expected a bool, got {describe(reverse)}")
        keys = self._keys(key)
        n = self._n
        if isinstance(keys, np.ndarray):
            if reverse:
                perm = (n - 1 - np.argsort(keys[::-1], kind="stable"))[::-1]
            else:
                perm = np.argsort(keys, kind="stable")
        else:
            perm = np.array(sorted(range(n), key=keys.__getitem__, reverse=bool(reverse)), np.intp)
        self._relink(self._slots()[perm])

    def unique(self) -> None:
        """Erase every element equal to the one before it in list order (as ``std::list``)."""
        if self._n < 2:
            return
        order = self.order()
        if self._dtype is None:
            vals = self._vals
            items = [vals[i] for i in order.tolist()]
            dup = np.fromiter(
                (b is a or bool(b == a) for a, b in itertools.pairwise(items)), bool, self._n - 1
            )
        else:
            ordered = self._vals[order]
            dup = ordered[1:] == ordered[:-1]
        self._erase_many(order[1:][dup] + 1)

    def remove(self, value: object) -> None:
        """Erase every element equal to ``value`` (a scan of the contiguous values)."""
        self._erase_many(np.flatnonzero(self._equal(self._coerce(value, "value"))) + 1)

    def remove_if(self, pred: Callable[[Any], object]) -> None:
        """Erase every element for which ``pred`` is true."""
        self._erase_many(np.flatnonzero(self._mask(pred, "pred")) + 1)

    def reserve(self, n: int) -> None:
        """Make room for ``n`` elements without further growth (may widen the index type)."""
        n = as_int(n, "n", minimum=0)
        if n > self._cap:
            check_memory(self._footprint(n), "n", f"room for {n} elements")
            self._reallocate(n)

    # ------------------------------------------------ whole-list operations, links bypassed

    def sum(self) -> Any:
        """Sum of all values, in storage order (NumPy's pairwise sum for dtype lists).

        Floating-point sums can differ in the last bits from a front-to-back sum.
        """
        if self._dtype is None:
            return sum(self._vals)
        if self._dtype.kind not in "biufcm":
            raise TypeError(f"sum: values of dtype {self._dtype} cannot be added")
        return self._vals[: self._n].sum().item()

    def count(self, value: object) -> int:
        """Number of elements equal to ``value``."""
        return int(np.count_nonzero(self._equal(self._coerce(value, "value"))))

    def count_if(self, pred: Callable[[Any], object]) -> int:
        """Number of elements for which ``pred`` is true."""
        return int(np.count_nonzero(self._mask(pred, "pred")))

    def any(self, pred: Callable[[Any], object] | None = None) -> bool:
        """True if ``pred`` (default: truthiness) holds for some element."""
        if pred is None:
            return bool(np.any(self._truthy()))
        return bool(np.any(self._mask(pred, "pred")))

    def all(self, pred: Callable[[Any], object] | None = None) -> bool:
        """True if ``pred`` (default: truthiness) holds for every element (or none exist)."""
        if pred is None:
            return bool(np.all(self._truthy()))
        return bool(np.all(self._mask(pred, "pred")))

    def _truthy(self) -> np.ndarray:
        if self._dtype is None:
            return np.fromiter(map(bool, self._vals), bool, self._n)
        return np.asarray(self.values != np.zeros((), self._dtype))

    def fill(self, value: object) -> None:
        """Set every element to ``value``."""
        v = self._coerce(value, "value")
        if self._dtype is None:
            self._vals[:] = [v] * self._n
        else:
            self._vals[: self._n] = v

    def replace(self, old: object, new: object) -> None:
        """Set every element equal to ``old`` to ``new``."""
        mask = self._equal(self._coerce(old, "old"))
        self._assign(mask, self._coerce(new, "new"))

    def replace_if(self, pred: Callable[[Any], object], new: object) -> None:
        """Set every element for which ``pred`` is true to ``new``."""
        mask = self._mask(pred, "pred")
        self._assign(mask, self._coerce(new, "new"))

    def _assign(self, mask: np.ndarray, value: object) -> None:
        if self._dtype is None:
            for i in np.flatnonzero(mask).tolist():
                self._vals[i] = value
        else:
            self._vals[: self._n][mask] = value

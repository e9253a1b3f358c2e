"""ContiguousList: a doubly linked list whose nodes and values live in contiguous arrays.

The design follows *Implementing Linked Lists with Contiguous Arrays* (see
``docs/linkedlist.md``). Links are array indices, not pointers, so they can be small:

- ``nodes``, shape ``(capacity + 1, 2)``, holds ``(prev, next)`` per slot in the smallest
  unsigned type that can index ``capacity`` (uint8 up to 255 elements, then uint16,
  uint32, uint64; widened automatically as the list grows, never narrowed). Row 0 is a
  sentinel that closes the list into a ring, so no operation needs a head/tail special
  case: ``nodes[0]`` is ``(tail, head)``.
- ``values`` holds the element of slot ``s`` at index ``s - 1``: a NumPy array when the
  list has a ``dtype`` (any bool, integer, float, complex, byte- or unicode-string,
  datetime or timedelta dtype; ``'S1024'`` makes 1 KiB values), else a Python ``list``.

Both arrays stay dense. Insertion appends a slot at the back of both arrays and links it
(amortised O(1)); erasure unlinks a slot and moves the *storage-last* element into the
hole, rewiring its two neighbours (O(1), nothing is deallocated). Whole-list operations
that do not depend on order (``sum``, ``count``, ``fill``, ``replace``, ``remove``...) run
over ``values`` at NumPy speed without touching the links; ``reverse`` and ``sort`` touch
only the links.

Cursor invalidation (article §2.2): erasing an element invalidates cursors to it *and* to
the element moved into its slot; operations that never move values (insert, splice or
sort within a list, reverse, reserve, growth) keep every cursor valid; ``clear`` and
moving elements out of a list (``splice``/``merge`` from another list) invalidate cursors
to the elements that left or moved. Using an invalidated cursor raises
:class:`StaleCursorError` (an :class:`~tumble.InputError`); a per-slot generation counter
detects it in O(1), so a stale cursor never reads another element's value.

Conventions where Python and ``std::list`` differ: reading or popping from an empty list,
stepping a cursor off either end and dereferencing ``end()`` raise :class:`IndexError`,
as Python sequences do; every other bad argument raises :class:`~tumble.InputError`
naming it. Values given to a list with a ``dtype`` must convert without loss (no float to
int, no out-of-range integer, no over-long byte string). Values come out as Python
objects, exactly as ``ndarray.tolist`` gives them.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
from tumble._kernels import linkedlist as _k
from tumble._validate import as_int, describe

__all__ = ["ContiguousList", "Cursor", "StaleCursorError"]

_INDEX_TYPES: tuple[np.dtype[np.unsignedinteger[Any]], ...] = (
    np.dtype(np.uint8),
    np.dtype(np.uint16),
    np.dtype(np.uint32),
    np.dtype(np.uint64),
)
_VALUE_KINDS = "biufcSUmM"
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
# Cursor.advance walks this many steps or fewer in Python: cheaper than a compiled call.
_SHORT_WALK = 8
_REPR_HEAD = 10


class StaleCursorError(InputError):
    """A cursor was used after its element was erased or moved by an erasure.

    Subclasses :class:`tumble.InputError` (hence :class:`ValueError`): passing a stale
    cursor is a bad argument. Get a fresh cursor from ``begin()``, ``find()`` or the return
    value of ``insert()``/``erase()``.
    """


def _index_dtype_for(capacity: int) -> np.dtype[np.unsignedinteger[Any]]:
    """The smallest unsigned type that can hold slot numbers 0 (sentinel) to ``capacity``."""
    for dt in _INDEX_TYPES:
        if capacity <= np.iinfo(dt).max:
            return dt
    raise InputError(f"capacity: at most {np.iinfo(np.uint64).max} elements, got {capacity}")


def _check_dtype(dtype: DTypeLike | None) -> np.dtype | None:
    if dtype is None:
        return None
    try:
        dt = np.dtype(dtype)
    except Exception:  # NumPy raises TypeError or ValueError depending on the spelling
        raise InputError(f"dtype: expected None or a NumPy dtype, got {dtype!r}") from None
    if dt.kind == "O":
        raise InputError("dtype: use dtype=None (a Python list) for arbitrary objects")
    if dt.kind not in _VALUE_KINDS or dt.shape != () or dt.fields is not None or dt.itemsize == 0:
        raise InputError(
            "dtype: expected a scalar bool, integer, float, complex, sized byte or unicode "
            f"string ('S64', 'U8'), datetime or timedelta dtype, got {dt}"
        )
    return dt


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


class Cursor:
    """A position in a :class:`ContiguousList`, like a ``std::list`` iterator.

    Obtained from ``begin()``, ``end()``, ``find()``, ``lower_bound()``, ``insert()`` or
    ``erase()``.
    ``next()``, ``prev()`` and ``advance()`` return new cursors (a cursor never changes
    position); ``value`` reads or writes the element. Stepping off either end or touching
    the value of ``end()`` raises :class:`IndexError`; using a cursor whose element was
    erased or moved raises :class:`StaleCursorError`.
    """

    __slots__ = ("_gen", "_list", "_slot")

    def __init__(self, owner: ContiguousList, slot: int) -> None:
        self._list = owner
        self._slot = slot
        self._gen = owner._genv[slot]

    @property
    def valid(self) -> bool:
        """True while the cursor's element has been neither erased nor moved."""
        owner = self._list
        return self._slot <= owner._n and owner._genv[self._slot] == self._gen

    def _check(self, name: str = "cursor") -> ContiguousList:
        if not self.valid:
            raise StaleCursorError(
                f"{name}: stale cursor, its element was erased or moved by an erasure; "
                "get a new one from begin(), find(), insert() or erase()"
            )
        return self._list

    def next(self) -> Cursor:
        """The cursor one step towards the back; from the last element, ``end()``."""
        owner = self._check()
        if self._slot == 0:
            raise IndexError("next: end() has no successor")
        return Cursor(owner, owner._lk[2 * self._slot + 1])

    def prev(self) -> Cursor:
        """The cursor one step towards the front; from ``end()``, the last element."""
        owner = self._check()
        slot = owner._lk[2 * self._slot]
        if slot == 0:
            raise IndexError("prev: begin() has no predecessor")
        return Cursor(owner, slot)

    def advance(self, steps: int) -> Cursor:
        """The cursor ``steps`` positions away (negative: towards the front), O(|steps|).

        Like ``std::next``/``std::prev``: reaching ``end()`` is allowed, going past it or
        before ``begin()`` raises IndexError. Long walks run in compiled code.
        """
        if type(steps) is not int:
            steps = as_int(steps, "steps")
        owner = self._check()
        slot = self._slot
        if 0 <= steps <= _SHORT_WALK:
            lk = owner._lk
            for _ in range(steps):
                if slot == 0:
                    raise IndexError(f"advance: {steps} steps leave the list")
                slot = lk[2 * slot + 1]
            return Cursor(owner, slot)
        slot = int(_k.advance(owner._nodes, slot, abs(steps), steps >= 0))
        if slot < 0:
            raise IndexError(f"advance: {steps} steps leave the list")
        return Cursor(owner, slot)

    @property
    def value(self) -> Any:
        """The element at this cursor (read and write; writing validates like ``append``)."""
        owner = self._check()
        if self._slot == 0:
            raise IndexError("value: end() has no value")
        return owner._get(self._slot)

    @value.setter
    def value(self, new: object) -> None:
        owner = self._check()
        if self._slot == 0:
            raise IndexError("value: end() has no value")
        owner._set(self._slot, owner._coerce(new, "value"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cursor):
            return NotImplemented
        return self._list is other._list and self._slot == other._slot and self._gen == other._gen

    def __hash__(self) -> int:
        return hash((id(self._list), self._slot, self._gen))

    def __repr__(self) -> str:
        if not self.valid:
            return "<Cursor (stale)>"
        if self._slot == 0:
            return "<Cursor end()>"
        return f"<Cursor value={self._list._get(self._slot)!r}>"


def _lower_bound_by_cursor(first: Cursor, count: int, x: object) -> Cursor:
    """``std::lower_bound`` over the ``count`` elements from ``first``, through cursors.

    The path of :meth:`ContiguousList.lower_bound` for dtypes without a compiled loop:
    O(log n) comparisons in Python and O(n) link steps (``advance`` walks in compiled
    code). ``benchmarks/bench_linkedlist.py`` times it as the Python-level binary search.
    """
    while count > 0:
        step = count // 2
        it = first.advance(step)
        if it.value < x:
            first, count = it.next(), count - step - 1
        else:
            count = step
    return first


class ContiguousList:
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
        self._setup(_check_dtype(dtype), 0, np.zeros((1, 2), np.uint8), [])
        self.extend(values)

    # ----------------------------------------------------------------------------- storage

    def _setup(
        self, dtype: np.dtype | None, capacity: int, used: np.ndarray, values: Iterable[object]
    ) -> None:
        """(Re)build storage for ``capacity`` slots from the used node rows and values."""
        n = used.shape[0] - 1
        self._dtype = dtype
        self._n = n
        self._cap = capacity
        self._mod = 0
        self._nodes = np.zeros((capacity + 1, 2), _index_dtype_for(capacity))
        self._nodes[: n + 1] = used
        self._gen = np.zeros(capacity + 1, np.uint64)
        if dtype is None:
            # A list when dtype is None, else an array: mypy cannot tie the two.
            self._vals: Any = list(values)
        else:
            self._vals = np.zeros(capacity, dtype)
            self._vals[:n] = values
            if dtype.kind in "iu":
                self._lo, self._hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
            elif dtype.kind == "f":
                self._fmax = float(np.finfo(dtype).max)
        self._refresh()

    def _refresh(self) -> None:
        # Flat memoryviews: Python-level link and generation access is ~3x faster than
        # indexing the NumPy arrays element by element.
        self._lk = memoryview(self._nodes.reshape(-1).data)
        self._genv = memoryview(self._gen.data)

    def _reallocate(self, capacity: int) -> None:
        n = self._n
        nodes = np.zeros((capacity + 1, 2), _index_dtype_for(capacity))
        nodes[: n + 1] = self._nodes[: n + 1]
        gen = np.zeros(capacity + 1, np.uint64)
        # Generations of free slots must survive: a stale cursor may still name one.
        gen[: self._cap + 1] = self._gen
        if self._dtype is not None:
            vals = np.zeros(capacity, self._dtype)
            vals[:n] = self._vals[:n]
            self._vals = vals
        self._nodes, self._gen, self._cap = nodes, gen, capacity
        self._refresh()

    def _grow(self, needed: int) -> None:
        """Geometric growth, capped at the current index type's range while that suffices.

        The cap keeps the index type as narrow as the element count allows: a list of 200
        elements stays uint8 instead of doubling its capacity into uint16.
        """
        limit = int(np.iinfo(self.index_dtype).max)
        capacity = max(needed, 2 * self._cap, 4)
        if needed <= limit:
            capacity = min(capacity, limit)
        self._reallocate(capacity)

    def _push(self, value: object) -> int:
        slot = self._n + 1
        if slot > self._cap:
            self._grow(slot)
        if self._dtype is None:
            self._vals.append(value)
        else:
            self._vals[slot - 1] = value
        self._n = slot
        return slot

    def _push_many(self, values: list[object] | np.ndarray) -> np.ndarray:
        n, k = self._n, len(values)
        if n + k > self._cap:
            self._grow(n + k)
        if self._dtype is None:
            self._vals.extend(values)
        else:
            self._vals[n : n + k] = values
        self._n = n + k
        return np.arange(n + 1, n + k + 1, dtype=np.intp)

    def _link_before(self, slot: int, before: int) -> None:
        lk = self._lk
        prev = lk[2 * before]
        lk[2 * slot] = prev
        lk[2 * slot + 1] = before
        lk[2 * prev + 1] = slot
        lk[2 * before] = slot
        self._mod += 1

    def _erase(self, slot: int) -> int:
        """Erase ``slot`` and return the slot now holding its successor (0 for the end)."""
        lk = self._lk
        prev, succ = lk[2 * slot], lk[2 * slot + 1]
        lk[2 * prev + 1] = succ
        lk[2 * succ] = prev
        last = self._n
        if slot != last:
            # Move the storage-last element into the hole and point its neighbours at it.
            lp, ln = lk[2 * last], lk[2 * last + 1]
            lk[2 * slot] = lp
            lk[2 * slot + 1] = ln
            lk[2 * lp + 1] = slot
            lk[2 * ln] = slot
            self._vals[slot - 1] = self._vals[last - 1]
            self._genv[last] += 1
            if succ == last:
                succ = slot
        if self._dtype is None:
            self._vals.pop()
        self._genv[slot] += 1
        self._n = last - 1
        self._mod += 1
        return succ

    def _erase_many(self, slots: np.ndarray) -> None:
        """Erase distinct ``slots`` at once: unlink, then fill the holes from the back."""
        k = slots.shape[0]
        if k == 0:
            return
        n = self._n
        m = n - k
        _k.unlink(self._nodes, slots)
        holes = np.sort(slots[slots <= m])
        tail = np.arange(m + 1, n + 1, dtype=np.intp)
        movers = tail[~np.isin(tail, slots)]
        _k.relocate(self._nodes, holes, movers)
        if self._dtype is None:
            vals = self._vals
            for h, mv in zip(holes.tolist(), movers.tolist(), strict=True):
                vals[h - 1] = vals[mv - 1]
            del vals[m:]
        else:
            self._vals[holes - 1] = self._vals[movers - 1]
        self._gen[slots] += 1
        self._gen[movers] += 1
        self._n = m
        self._mod += 1

    def _relink(self, slots: np.ndarray) -> None:
        """Link every element anew in the order ``slots`` (a permutation of 1..n)."""
        self._nodes[0] = 0
        _k.link_chain(self._nodes, np.ascontiguousarray(slots, dtype=np.intp), 0)
        self._mod += 1

    def _get(self, slot: int) -> Any:
        if self._dtype is None:
            return self._vals[slot - 1]
        return self._vals[slot - 1].item()

    def _set(self, slot: int, value: object) -> None:
        self._vals[slot - 1] = value

    def _values_at(self, slots: np.ndarray) -> list[object] | np.ndarray:
        if self._dtype is None:
            vals = self._vals
            return [vals[s - 1] for s in slots.tolist()]
        return self._vals[slots - 1]

    def _slots(self) -> np.ndarray:
        return self.order() + 1

    def _own(self, cursor: object, name: str) -> int:
        """The slot of ``cursor`` after checking it is a live cursor into this list."""
        if not isinstance(cursor, Cursor):
            raise InputError(f"{name}: expected a Cursor of this list, got {describe(cursor)}")
        if cursor._list is not self:
            raise InputError(f"{name}: the cursor belongs to a different ContiguousList")
        cursor._check(name)
        return cursor._slot

    @staticmethod
    def _other(other: object, dtype: np.dtype | None, name: str = "other") -> ContiguousList:
        if not isinstance(other, ContiguousList):
            raise InputError(f"{name}: expected a ContiguousList, got {describe(other)}")
        if other._dtype != dtype:
            raise InputError(f"{name}: expected a list of dtype {dtype}, got dtype {other._dtype}")
        return other

    # -------------------------------------------------------------------------- validation

    # Any: the checks on type(value) below narrow it, in ways mypy does not follow.
    def _coerce(self, value: Any, name: str) -> object:
        """``value`` converted losslessly to the list's dtype, or InputError naming ``name``."""
        dt = self._dtype
        if dt is None:
            return value
        kind, t = dt.kind, type(value)
        if kind in "iu" and t is int:
            if self._lo <= value <= self._hi:
                return value
            raise InputError(f"{name}: {value} is out of range for {dt}")
        if kind in "fc" and (t is float or t is int):
            try:
                f = float(value)
            except OverflowError:
                raise InputError(f"{name}: {value} is out of range for {dt}") from None
            if kind == "f" and math.isfinite(f) and abs(f) > self._fmax:
                raise InputError(f"{name}: {value} is out of range for {dt}")
            return f
        if kind == "S" and t is bytes:
            if len(value) <= dt.itemsize:
                return value
            raise InputError(f"{name}: {len(value)} bytes do not fit in {dt}")
        try:
            arr = np.asarray(value)
        except Exception:  # objects NumPy cannot convert at all
            raise InputError(f"{name}: expected a {dt} value, got {describe(value)}") from None
        if arr.ndim != 0:
            raise InputError(f"{name}: expected one {dt} value, got {describe(value)}")
        return self._convert(arr, name)[()]

    def _coerce_many(self, values: Iterable[object], name: str) -> list[object] | np.ndarray:
        if isinstance(values, ContiguousList):
            numeric = self._dtype is not None and values._dtype is not None
            values = values.to_numpy() if numeric else values.tolist()
        if self._dtype is None:
            try:
                return list(values)
            except TypeError:
                raise InputError(f"{name}: expected an iterable, got {describe(values)}") from None
        if not isinstance(values, np.ndarray):
            try:
                values = list(values)
            except TypeError:
                raise InputError(f"{name}: expected an iterable, got {describe(values)}") from None
        if len(values) == 0:
            return np.zeros(0, self._dtype)
        try:
            arr = np.asarray(values)
        except Exception:  # ragged or unconvertible input
            raise InputError(
                f"{name}: expected {self._dtype} values, got {describe(values)}"
            ) from None
        if arr.ndim != 1:
            raise InputError(f"{name}: expected a flat sequence of values, got shape {arr.shape}")
        return self._convert(arr, name)

    def _convert(self, arr: np.ndarray, name: str) -> np.ndarray:
        dt = self._dtype
        assert dt is not None
        # Any integer fits any integer type if its value does; the round trip below checks.
        integral = dt.kind in "iu" and arr.dtype.kind in "biu"
        if arr.dtype.kind == "O" or not (integral or np.can_cast(arr.dtype, dt, "same_kind")):
            raise InputError(f"{name}: expected {dt} values, got values of dtype {arr.dtype}")
        with np.errstate(all="ignore"):
            out = arr.astype(dt)
        if dt.kind in "iuSUmM":
            bad = out != arr
        elif dt.kind in "fc":
            bad = np.isfinite(arr) & ~np.isfinite(out)
        else:
            bad = np.zeros(arr.shape, bool)
        if np.any(bad):
            first = arr[bad].flat[0].item()
            raise InputError(f"{name}: {first!r} does not fit in {dt} without loss")
        return out

    def _mask(self, pred: Callable[[Any], object], name: str) -> np.ndarray:
        """Boolean mask over storage order: ``pred`` per element, or once on the array."""
        if not callable(pred):
            raise InputError(f"{name}: expected a callable, got {describe(pred)}")
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
        if key is not None and not callable(key):
            raise InputError(f"key: expected a callable or None, got {describe(key)}")
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
        before = self._own(cursor, "cursor")
        slot = self._push(self._coerce(value, "value"))
        self._link_before(slot, before)
        return Cursor(self, slot)

    def erase(self, cursor: Cursor) -> Cursor:
        """Erase the element at ``cursor``; return a cursor to the element that followed it.

        O(1). The storage-last element moves into the freed slot, so cursors to the erased
        element and to the moved one go stale; the returned cursor is always valid.
        """
        slot = self._own(cursor, "cursor")
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
        return _lower_bound_by_cursor(self.begin(), self._n, x)

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
        before = self._own(cursor, "cursor")
        other = self._other(other, self._dtype)
        if first is None:
            if last is not None:
                raise InputError("last: give first as well")
            if other is self:
                raise InputError("other: cannot splice a whole list into itself")
            slots = other._slots()
        else:
            start = other._own(first, "first")
            if last is None:
                if start == 0:
                    raise InputError("first: end() is not an element")
                if other is self and before in (start, self._lk[2 * start + 1]):
                    return
                slots = np.array([start], np.intp)
            else:
                stop = other._own(last, "last")
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

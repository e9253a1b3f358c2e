"""The storage under :class:`~tumble.linkedlist.ContiguousList`: two dense arrays and the
operations that allocate, link, erase and fill their slots.

Links are array indices, not pointers, so they can be small:

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
hole, rewiring its two neighbours (O(1), nothing is deallocated). Each slot also has a
generation counter, bumped whenever its element is erased or replaced by a moved one,
which is how a :class:`~tumble.linkedlist.Cursor` knows it went stale.

Incoming values are converted to the dtype here, without loss or not at all
(:meth:`ListStorage._coerce`, :meth:`ListStorage._coerce_many`), using the dtype's limits
cached when the storage is built.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from tumble._errors import InputError
from tumble._kernels import linkedlist as _k
from tumble._validate import describe

__all__ = ["ListStorage"]

_INDEX_TYPES: tuple[np.dtype[np.unsignedinteger[Any]], ...] = (
    np.dtype(np.uint8),
    np.dtype(np.uint16),
    np.dtype(np.uint32),
    np.dtype(np.uint64),
)
_VALUE_KINDS = "biufcSUmM"


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


class ListStorage:
    """The links, values and generations of a contiguous linked list, and their upkeep.

    The base of :class:`~tumble.linkedlist.ContiguousList`, which adds the public
    operations; a :class:`~tumble.linkedlist.Cursor` reads the links and generations
    directly. Every method here keeps the storage invariants (dense arrays, ring through
    the sentinel, generations bumped on erasure) and nothing else.
    """

    def __init__(self, dtype: DTypeLike | None) -> None:
        self._setup(_check_dtype(dtype), 0, np.zeros((1, 2), np.uint8), [])

    # --------------------------------------------------------------------- slots and links

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

    def _footprint(self, capacity: int) -> int:
        """Bytes of the link, generation and value arrays for ``capacity`` slots."""
        index = _index_dtype_for(capacity).itemsize
        value = 0 if self._dtype is None else self._dtype.itemsize
        return (capacity + 1) * (2 * index + 8) + capacity * value

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
        limit = int(np.iinfo(self._nodes.dtype).max)
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
        if self._dtype is None:
            try:
                return list(values)
            except TypeError:
                raise InputError(f"{name}: expected an iterable, got {describe(values)}") from None
        if isinstance(values, np.ndarray) and values.ndim == 0:
            raise InputError(f"{name}: expected an iterable, got {describe(values)}")
        if not isinstance(values, np.ndarray):
            try:
                values = list(values)
            except TypeError:
                raise InputError(f"{name}: expected an iterable, got {describe(values)}") from None
        if len(values) == 0:
            return np.zeros(0, self._dtype)
        ints = not isinstance(values, np.ndarray) and all(type(v) is int for v in values)
        if self._dtype.kind in "iu" and ints:
            # NumPy would infer float64 for ints beyond int64 (2**63 for a uint64 list) and
            # lose them; Python ints are checked against the list's range instead.
            for v in (min(values), max(values)):
                if not self._lo <= v <= self._hi:
                    raise InputError(f"{name}: {v} is out of range for {self._dtype}")
            return np.array(values, self._dtype)
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

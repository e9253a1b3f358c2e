"""Cursors into a :class:`~tumble.linkedlist.ContiguousList`, like ``std::list`` iterators.

A cursor is a slot number plus the slot's generation when the cursor was made. Cursor
invalidation (article §2.2): erasing an element invalidates cursors to it *and* to the
element moved into its slot; operations that never move values (insert, splice or sort
within a list, reverse, reserve, growth) keep every cursor valid; ``clear`` and moving
elements out of a list (``splice``/``merge`` from another list) invalidate cursors to the
elements that left or moved. Using an invalidated cursor raises :class:`StaleCursorError`
(an :class:`~tumble.InputError`); the per-slot generation counter detects it in O(1), so a
stale cursor never reads another element's value.

A cursor reads its list's links and generations directly (it is the list's iterator, a
friend of the storage in C++ terms): a public accessor per step would cost a call on the
hottest path, or widen the list's public API.
"""

from __future__ import annotations

from typing import Any

from tumble._errors import InputError
from tumble._kernels import linkedlist as _k
from tumble._validate import as_int, describe
from tumble.linkedlist.storage import ListStorage

# lower_bound_by_cursor and slot_of serve the container (and the benchmark of the
# Python-level search); they are not part of the package's API.
__all__ = ["Cursor", "StaleCursorError"]

# Cursor.advance walks this many steps or fewer in Python: cheaper than a compiled call.
_SHORT_WALK = 8


class StaleCursorError(InputError):
    """A cursor was used after its element was erased or moved by an erasure.

    Subclasses :class:`tumble.InputError` (hence :class:`ValueError`): passing a stale
    cursor is a bad argument. Get a fresh cursor from ``begin()``, ``find()`` or the return
    value of ``insert()``/``erase()``.
    """


class Cursor:
    """A position in a :class:`~tumble.linkedlist.ContiguousList`, like a ``std::list`` iterator.

    Obtained from ``begin()``, ``end()``, ``find()``, ``lower_bound()``, ``insert()`` or
    ``erase()``.
    ``next()``, ``prev()`` and ``advance()`` return new cursors (a cursor never changes
    position); ``value`` reads or writes the element. Stepping off either end or touching
    the value of ``end()`` raises :class:`IndexError`; using a cursor whose element was
    erased or moved raises :class:`StaleCursorError`.

    ``Cursor(owner, slot)`` is the cursor at storage slot ``slot`` of the list ``owner``
    (``0`` is ``end()``, the elements occupy ``1 .. len(owner)``); both are checked.
    """

    __slots__ = ("_gen", "_list", "_slot")

    def __init__(self, owner: ListStorage, slot: int) -> None:
        if not isinstance(owner, ListStorage):
            raise InputError(f"owner: expected a ContiguousList, got {describe(owner)}")
        if type(slot) is not int:
            slot = as_int(slot, "slot")
        if not 0 <= slot <= owner._n:
            raise InputError(
                f"slot: expected a slot of the list in [0, {owner._n}] (0 is end()), got {slot}"
            )
        self._list = owner
        self._slot = slot
        self._gen = owner._genv[slot]

    @property
    def valid(self) -> bool:
        """True while the cursor's element has been neither erased nor moved."""
        owner = self._list
        return self._slot <= owner._n and owner._genv[self._slot] == self._gen

    def _check(self, name: str = "cursor") -> ListStorage:
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
        if abs(steps) > owner._n:
            # No walk longer than the list stays in it; this also keeps |steps| below the
            # compiled walk's int64.
            raise IndexError(f"advance: {steps} steps leave the list")
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


def lower_bound_by_cursor(first: Cursor, count: int, x: object) -> Cursor:
    """``std::lower_bound`` over the ``count`` elements from ``first``, through cursors.

    The path of :meth:`~tumble.linkedlist.ContiguousList.lower_bound` for dtypes without a
    compiled loop: O(log n) comparisons in Python and O(n) link steps (``advance`` walks in
    compiled code). ``benchmarks/bench_linkedlist.py`` times it as the Python-level binary
    search.
    """
    while count > 0:
        step = count // 2
        it = first.advance(step)
        if it.value < x:
            first, count = it.next(), count - step - 1
        else:
            count = step
    return first


def slot_of(cursor: object, owner: ListStorage, name: str) -> int:
    """The slot of ``cursor`` after checking it is a live cursor into ``owner``."""
    if not isinstance(cursor, Cursor):
        raise InputError(f"{name}: expected a Cursor of this list, got {describe(cursor)}")
    if cursor._list is not owner:
        raise InputError(f"{name}: the cursor belongs to a different ContiguousList")
    cursor._check(name)
    return cursor._slot

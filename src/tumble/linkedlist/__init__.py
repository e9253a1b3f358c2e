"""ContiguousList: a doubly linked list whose nodes and values live in contiguous arrays.

The design follows *Implementing Linked Lists with Contiguous Arrays* (see
``docs/linkedlist.md``). Links are small array indices, not pointers; row 0 of the links
is a sentinel that closes the list into a ring; values stay dense, and erasure moves the
storage-last element into the hole. Whole-list operations that do not depend on order run
over the values at NumPy speed; ``reverse`` and ``sort`` touch only the links. Erasing an
element invalidates cursors to it and to the element moved into its slot; using such a
cursor raises :class:`StaleCursorError`, detected in O(1).

Conventions where Python and ``std::list`` differ: reading or popping from an empty list,
stepping a cursor off either end and dereferencing ``end()`` raise :class:`IndexError`,
as Python sequences do; every other bad argument raises :class:`~tumble.InputError`
naming it. Values given to a list with a ``dtype`` must convert without loss (no float to
int, no out-of-range integer, no over-long byte string). Values come out as Python
objects, exactly as ``ndarray.tolist`` gives them.

The package, one concern per module, each importing only those before it:

- :mod:`~tumble.linkedlist.storage`: :class:`~tumble.linkedlist.storage.ListStorage`, the
  link, value and generation arrays with their allocation, growth, linking, erasure and
  the lossless coercion of values to the dtype;
- :mod:`~tumble.linkedlist.cursor`: :class:`Cursor`, :class:`StaleCursorError` and the
  cursor invalidation rules;
- :mod:`~tumble.linkedlist.container`: :class:`ContiguousList`, the public operations on
  top of the storage.

Helpers shared between the modules have plain names but are not exported (``slot_of``,
``lower_bound_by_cursor``); the package's ``__all__`` is its API.
"""

from __future__ import annotations

from tumble.linkedlist.container import ContiguousList
from tumble.linkedlist.cursor import Cursor, StaleCursorError

__all__ = ["ContiguousList", "Cursor", "StaleCursorError"]

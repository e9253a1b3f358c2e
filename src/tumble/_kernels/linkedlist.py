"""Compiled link walking and relinking behind :mod:`tumble.linkedlist`.

The node array ``nodes`` has shape ``(capacity + 1, 2)`` and an unsigned index dtype
(uint8 to uint64); row ``s`` holds ``(prev, next)`` of slot ``s``. Row 0 is the sentinel of
a circular list: ``nodes[0, 1]`` is the head, ``nodes[0, 0]`` the tail, and an empty list
links the sentinel to itself. Slot ``s >= 1`` owns value ``s - 1``. Every kernel reads
links through ``np.intp(...)`` because numba promotes uint64 mixed with int64 to float.
"""

from __future__ import annotations

import numpy as np

from tumble._kernels import njit


@njit
def gather(nodes, start, forward, out):
    """Walk ``len(out)`` slots from ``start``, storing each slot's value index ``slot - 1``.

    Follows ``next`` links when ``forward`` else ``prev``; returns the slot after the last
    one stored (0 when the walk ended at the sentinel). Cost: one load per step.
    """
    col = 1 if forward else 0
    slot = np.intp(start)
    for k in range(out.shape[0]):
        out[k] = slot - 1
        slot = np.intp(nodes[slot, col])
    return slot


@njit
def gather_values(nodes, values, start, forward, out):
    """Like :func:`gather` but stores the values themselves: one pass, no index array."""
    col = 1 if forward else 0
    slot = np.intp(start)
    for k in range(out.shape[0]):
        out[k] = values[slot - 1]
        slot = np.intp(nodes[slot, col])
    return slot


@njit
def advance(nodes, slot, steps, forward):
    """The slot ``steps`` links away from ``slot``, or -1 if the walk leaves the list.

    Forward walks may end on the sentinel (``end()``) but not step off it; backward walks
    may start on it but not reach it again.
    """
    s = np.intp(slot)
    if forward:
        for _ in range(steps):
            if s == 0:
                return -1
            s = np.intp(nodes[s, 1])
    else:
        for _ in range(steps):
            s = np.intp(nodes[s, 0])
            if s == 0:
                return -1
    return s


@njit
def count_until(nodes, first, last):
    """Number of ``next`` steps from ``first`` to ``last``, or -1 if the sentinel comes first."""
    s = np.intp(first)
    k = 0
    while s != last:
        if s == 0:
            return -1
        s = np.intp(nodes[s, 1])
        k += 1
    return k


@njit
def link_chain(nodes, slots, before):
    """Link ``slots`` (unlinked) into a chain, in order, just before slot ``before``."""
    if slots.shape[0] == 0:
        return
    prev = np.intp(nodes[before, 0])
    for k in range(slots.shape[0]):
        s = slots[k]
        nodes[s, 0] = prev
        nodes[prev, 1] = s
        prev = s
    nodes[prev, 1] = before
    nodes[before, 0] = prev


@njit
def unlink(nodes, slots):
    """Take each of ``slots`` out of the chain; correct in any order, neighbours included."""
    for k in range(slots.shape[0]):
        s = slots[k]
        p = np.intp(nodes[s, 0])
        q = np.intp(nodes[s, 1])
        nodes[p, 1] = q
        nodes[q, 0] = p


@njit
def relocate(nodes, holes, movers):
    """Move the linked node of each ``movers[k]`` into the free slot ``holes[k]``.

    The caller moves the values alike. Each move rewires the two neighbours that point at
    the mover, so moving one after another is correct even when movers are adjacent.
    """
    for k in range(holes.shape[0]):
        h = holes[k]
        m = movers[k]
        p = np.intp(nodes[m, 0])
        q = np.intp(nodes[m, 1])
        nodes[h, 0] = p
        nodes[h, 1] = q
        nodes[p, 1] = h
        nodes[q, 0] = h


@njit
def find_first(nodes, mask):
    """The first slot in list order whose value index is set in ``mask``, or 0 if none."""
    s = np.intp(nodes[0, 1])
    while s != 0:
        if mask[s - 1]:
            return s
        s = np.intp(nodes[s, 1])
    return 0


@njit
def lower_bound(nodes, values, n, x):
    """First slot whose value is not less than ``x`` in a sorted list, or 0 (``end()``).

    ``std::lower_bound`` on list iterators: O(log n) comparisons, O(n) link steps in all.
    """
    first = np.intp(nodes[0, 1])
    count = n
    while count > 0:
        step = count // 2
        it = first
        for _ in range(step):
            it = np.intp(nodes[it, 1])
        if values[it - 1] < x:
            first = np.intp(nodes[it, 1])
            count -= step + 1
        else:
            count = step
    return first

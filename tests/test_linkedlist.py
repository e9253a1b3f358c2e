"""Tests of tumble.linkedlist.ContiguousList against a plain Python ``list`` model.

The state machines drive every mutating operation and, after each step, check contents,
order, length, both link directions, the index type and cursor validity (a cursor is
valid exactly while its element sits in the slot it had when the cursor was made: the
article's invalidation rule), for Python-object values and for NumPy int64 values.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from strategies import LINKEDLIST_DTYPES, linkedlist_values
from tumble import InputError
from tumble.linkedlist import ContiguousList, Cursor, StaleCursorError

UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)


def smallest_index_dtype(capacity: int) -> np.dtype:
    """The narrowest unsigned type holding slot numbers 0..capacity (oracle, independent)."""
    for t in UNSIGNED:
        if capacity <= np.iinfo(t).max:
            return np.dtype(t)
    raise AssertionError("capacity beyond uint64")


def check_structure(cl: ContiguousList, expected: list) -> list[int]:
    """Walk the raw link arrays in pure Python and check them against ``expected``.

    Returns the slots in list order. Checks: a ring through the sentinel in both
    directions, visiting each of the slots 1..n exactly once; values in that order equal
    ``expected``; order(), tolist(), iteration, reversal, len and the index type agree.
    """
    n = len(expected)
    assert len(cl) == n
    nodes = cl._nodes
    assert cl.capacity >= n
    assert nodes.shape == (cl.capacity + 1, 2)
    assert cl.index_dtype == nodes.dtype == smallest_index_dtype(cl.capacity)
    walk, prev, slot = [], 0, int(nodes[0, 1])
    for _ in range(n):
        assert 1 <= slot <= n, "link leaves the dense slot range"
        assert int(nodes[slot, 0]) == prev, "prev link does not mirror next link"
        walk.append(slot)
        prev, slot = slot, int(nodes[slot, 1])
    assert slot == 0, "the ring does not close at the sentinel"
    assert int(nodes[0, 0]) == prev
    assert sorted(walk) == list(range(1, n + 1)), "slots are not dense"
    assert cl.order().tolist() == [s - 1 for s in walk]
    stored = cl.values
    assert len(stored) == n
    assert [_py(stored[s - 1]) for s in walk] == expected
    assert cl.tolist() == expected
    assert list(cl) == expected
    assert list(reversed(cl)) == expected[::-1]
    assert cl == expected
    return walk


def _py(x):
    return x.item() if isinstance(x, np.generic) else x


def nth(cl: ContiguousList, i: int) -> Cursor:
    return cl.begin().advance(i)


class ListMachine(RuleBasedStateMachine):
    """ContiguousList vs a list of ``[uid, value]`` pairs; uids identify elements."""

    dtype: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self.cl = ContiguousList(dtype=self.dtype)
        self.other = ContiguousList(dtype=self.dtype)
        self.model: list[list] = []
        self.other_model: list[list] = []
        self.next_uid = 0
        # (cursor, uid, slot at creation, known stale): stale cursors stay tracked so that
        # a later reuse of their slot cannot bring them back to life.
        self.cursors: list[tuple[Cursor, int, int, bool]] = []

    # ------------------------------------------------------------------ helpers

    def fresh(self, values) -> list[list]:
        out = [[self.next_uid + k, v] for k, v in enumerate(values)]
        self.next_uid += len(out)
        return out

    def track(self, cursor: Cursor, pos: int) -> None:
        if pos < len(self.model):
            self.cursors = [*self.cursors[-7:], (cursor, self.model[pos][0], cursor._slot, False)]

    def vals(self, model=None) -> list:
        return [v for _, v in (self.model if model is None else model)]

    # ------------------------------------------------------------------ deque-style

    @rule(data=st.data())
    def append(self, data):
        v = data.draw(linkedlist_values(self.dtype))
        self.cl.append(v)
        self.model += self.fresh([v])

    @rule(data=st.data())
    def appendleft(self, data):
        v = data.draw(linkedlist_values(self.dtype))
        self.cl.appendleft(v)
        self.model[:0] = self.fresh([v])

    @rule(data=st.data())
    def extend(self, data):
        vs = data.draw(st.lists(linkedlist_values(self.dtype), max_size=12))
        self.cl.extend(vs)
        self.model += self.fresh(vs)

    @rule(data=st.data())
    def extendleft(self, data):
        vs = data.draw(st.lists(linkedlist_values(self.dtype), max_size=12))
        self.cl.extendleft(vs)
        self.model[:0] = self.fresh(vs)[::-1]

    @precondition(lambda self: len(self.model) < 300)
    @rule(start=st.integers(-100, 100))
    def extend_past_uint8(self, start):
        # Big enough to cross 255 elements within a run and widen the index to uint16.
        vs = list(range(start, start + 120))
        self.cl.extend(vs)
        self.model += self.fresh(vs)

    @precondition(lambda self: self.model)
    @rule()
    def pop(self):
        assert self.cl.pop() == self.model.pop()[1]

    @precondition(lambda self: self.model)
    @rule()
    def popleft(self):
        assert self.cl.popleft() == self.model.pop(0)[1]

    @rule()
    def clear(self):
        self.cl.clear()
        self.model.clear()

    # ------------------------------------------------------------------ cursors

    @rule(data=st.data())
    def insert(self, data):
        i = data.draw(st.integers(0, len(self.model)))
        v = data.draw(linkedlist_values(self.dtype))
        c = self.cl.insert(nth(self.cl, i), v)
        assert c.value == v
        self.model[i:i] = self.fresh([v])
        self.track(c, i)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def erase(self, data):
        i = data.draw(st.integers(0, len(self.model) - 1))
        c = self.cl.erase(nth(self.cl, i))
        del self.model[i]
        if i == len(self.model):
            assert c == self.cl.end()
        else:
            assert c.value == self.model[i][1]

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def write_value(self, data):
        i = data.draw(st.integers(0, len(self.model) - 1))
        v = data.draw(linkedlist_values(self.dtype))
        nth(self.cl, i).value = v
        self.model[i][1] = v

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def make_cursor(self, data):
        i = data.draw(st.integers(0, len(self.model) - 1))
        self.track(nth(self.cl, i), i)

    # ------------------------------------------------------------------ splice, merge

    @rule(data=st.data())
    def fill_other(self, data):
        vs = data.draw(st.lists(linkedlist_values(self.dtype), max_size=8))
        self.other.extend(vs)
        self.other_model += self.fresh(vs)

    @rule(data=st.data())
    def splice_all(self, data):
        i = data.draw(st.integers(0, len(self.model)))
        self.cl.splice(nth(self.cl, i), self.other)
        self.model[i:i] = self.other_model
        self.other_model = []

    @precondition(lambda self: self.other_model)
    @rule(data=st.data())
    def splice_one(self, data):
        i = data.draw(st.integers(0, len(self.model)))
        j = data.draw(st.integers(0, len(self.other_model) - 1))
        self.cl.splice(nth(self.cl, i), self.other, nth(self.other, j))
        self.model[i:i] = [self.other_model.pop(j)]

    @rule(data=st.data())
    def splice_range(self, data):
        i = data.draw(st.integers(0, len(self.model)))
        j = data.draw(st.integers(0, len(self.other_model)))
        k = data.draw(st.integers(j, len(self.other_model)))
        self.cl.splice(nth(self.cl, i), self.other, nth(self.other, j), nth(self.other, k))
        self.model[i:i] = self.other_model[j:k]
        del self.other_model[j:k]

    @rule(data=st.data())
    def splice_within(self, data):
        n = len(self.model)
        j = data.draw(st.integers(0, n))
        k = data.draw(st.integers(j, n))
        i = data.draw(st.sampled_from([p for p in range(n + 1) if not j <= p < k]))
        self.cl.splice(nth(self.cl, i), self.cl, nth(self.cl, j), nth(self.cl, k))
        moved = self.model[j:k]
        before = self.model[i] if i < n else None
        del self.model[j:k]
        at = len(self.model) if before is None else self.model.index(before)
        self.model[at:at] = moved

    @rule()
    def merge(self):
        self.cl.sort()
        self.other.sort()
        self.model.sort(key=lambda e: e[1])
        self.other_model.sort(key=lambda e: e[1])
        self.cl.merge(self.other)
        # A stable sort of the concatenation is the stable merge of two sorted runs.
        self.model = sorted(self.model + self.other_model, key=lambda e: e[1])
        self.other_model = []

    # ------------------------------------------------------------------ reordering

    @rule()
    def reverse(self):
        self.cl.reverse()
        self.model.reverse()

    @rule(by_mod=st.booleans(), descending=st.booleans())
    def sort(self, by_mod, descending):
        # key v % 5 makes many ties, so stability is exercised in both directions.
        key = (lambda v: v % 5) if by_mod else None
        self.cl.sort(key=key, reverse=descending)
        self.model.sort(key=lambda e: e[1] % 5 if by_mod else e[1], reverse=descending)

    @rule()
    def unique(self):
        self.cl.unique()
        kept = []
        for e in self.model:
            if not kept or kept[-1][1] != e[1]:
                kept.append(e)
        self.model = kept

    # ------------------------------------------------------------------ whole-list

    @rule(data=st.data())
    def remove(self, data):
        v = data.draw(linkedlist_values(self.dtype))
        self.cl.remove(v)
        self.model = [e for e in self.model if e[1] != v]

    @rule(m=st.integers(2, 4))
    def remove_if(self, m):
        self.cl.remove_if(lambda v: v % m == 0)
        self.model = [e for e in self.model if e[1] % m != 0]

    @rule(data=st.data())
    def fill(self, data):
        v = data.draw(linkedlist_values(self.dtype))
        self.cl.fill(v)
        for e in self.model:
            e[1] = v

    @rule(data=st.data())
    def replace(self, data):
        old = data.draw(linkedlist_values(self.dtype))
        new = data.draw(linkedlist_values(self.dtype))
        self.cl.replace(old, new)
        for e in self.model:
            if e[1] == old:
                e[1] = new

    @rule(data=st.data())
    def replace_if(self, data):
        new = data.draw(linkedlist_values(self.dtype))
        self.cl.replace_if(lambda v: v < 0, new)
        for e in self.model:
            if e[1] < 0:
                e[1] = new

    @rule(extra=st.integers(0, 300))
    def reserve(self, extra):
        self.cl.reserve(len(self.model) + extra)
        assert self.cl.capacity >= len(self.model) + extra

    # ------------------------------------------------------------------ invariants

    @invariant()
    def structure_matches_model(self):
        walk = check_structure(self.cl, self.vals())
        check_structure(self.other, self.vals(self.other_model))
        slot_of = {e[0]: s for e, s in zip(self.model, walk, strict=True)}
        tracked = []
        for cursor, uid, slot, stale in self.cursors:
            stale = stale or slot_of.get(uid) != slot
            if stale:
                assert not cursor.valid
                with pytest.raises(StaleCursorError):
                    _ = cursor.value
            else:
                assert cursor.valid
                assert cursor.value == self.model[walk.index(slot)][1]
            tracked.append((cursor, uid, slot, stale))
        self.cursors = tracked

    @invariant()
    def whole_list_queries_match(self):
        vals = self.vals()
        total = sum(vals)
        if self.dtype is not None:  # NumPy int64 sums wrap around modulo 2**64
            total = (total + 2**63) % 2**64 - 2**63
        assert self.cl.sum() == total
        assert self.cl.count(1) == vals.count(1)
        assert self.cl.count_if(lambda v: v > 0) == sum(v > 0 for v in vals)
        assert self.cl.any(lambda v: v == 0) == any(v == 0 for v in vals)
        assert self.cl.all(lambda v: v != 0) == all(v != 0 for v in vals)
        assert (0 in self.cl) == (0 in vals)
        found = self.cl.find(2)
        if 2 in vals:
            assert found.value == 2
            assert found == nth(self.cl, vals.index(2))
        else:
            assert found == self.cl.end()


class ObjectListMachine(ListMachine):
    dtype = LINKEDLIST_DTYPES[0]


class Int64ListMachine(ListMachine):
    dtype = LINKEDLIST_DTYPES[1]


_machine_settings = settings(max_examples=40, stateful_step_count=40)
TestObjectList = ObjectListMachine.TestCase
TestObjectList.settings = _machine_settings
TestInt64List = Int64ListMachine.TestCase
TestInt64List.settings = _machine_settings


# ---------------------------------------------------------------------------- index type


def test_index_dtype_is_uint8_for_100_elements():
    cl = ContiguousList(range(100), dtype="int64")
    assert cl.index_dtype == np.uint8
    grown = ContiguousList(dtype="int64")
    for v in range(100):
        grown.append(v)
    assert grown.index_dtype == np.uint8
    check_structure(grown, list(range(100)))


def test_index_dtype_is_uint32_for_100_000_elements():
    n = 100_000
    cl = ContiguousList(dtype="int32")
    cl.extend(range(n // 2))
    cl.extendleft(range(n // 2, n))
    assert cl.index_dtype == np.uint32
    expected = list(range(n - 1, n // 2 - 1, -1)) + list(range(n // 2))
    assert cl.tolist() == expected
    assert np.array_equal(cl.to_numpy(), expected)


def test_widening_keeps_links_and_cursors():
    cl = ContiguousList(range(255))
    assert cl.index_dtype == np.uint8
    c = cl.find(17)
    cl.append(255)
    assert cl.index_dtype == np.uint16
    assert c.valid
    assert c.value == 17
    check_structure(cl, list(range(256)))


def test_large_values_as_byte_strings():
    cl = ContiguousList([b"a" * 1024, b"b"], dtype="S1024")
    cl.appendleft(b"z" * 10)
    assert cl.tolist() == [b"z" * 10, b"a" * 1024, b"b"]
    assert cl.values.dtype.itemsize == 1024
    with pytest.raises(InputError, match="value"):
        cl.append(b"x" * 1025)


# ------------------------------------------------------------------------------- cursors


def test_erase_invalidates_the_erased_and_the_moved_element_only():
    cl = ContiguousList([10, 11, 12, 13], dtype="int64")
    c10, c11, c12, c13 = (cl.find(v) for v in (10, 11, 12, 13))
    after = cl.erase(c11)  # slot of 11 is refilled by 13, the storage-last element
    assert after.value == 12
    assert cl.tolist() == [10, 12, 13]
    assert c10.valid
    assert c12.valid
    assert not c11.valid
    assert not c13.valid
    for stale in (c11, c13):
        with pytest.raises(StaleCursorError, match="stale"):
            _ = stale.value
        with pytest.raises(StaleCursorError):
            stale.next()
        with pytest.raises(StaleCursorError):
            cl.insert(stale, 1)
        with pytest.raises(InputError):  # StaleCursorError is an InputError
            cl.erase(stale)
    assert cl.find(13).value == 13
    cl.append(14)  # reuses the slot 13 had: its old cursor must stay stale
    assert not c13.valid
    assert cl.find(14).value == 14


def test_erase_returns_a_valid_cursor_when_the_successor_is_the_moved_element():
    # Storage [x, y], list x y: erasing x moves y (storage-last) into x's slot, and the
    # returned cursor must name y in its new slot.
    cl = ContiguousList(["x", "y"])
    after = cl.erase(cl.begin())
    assert after.valid
    assert after.value == "y"
    assert after == cl.begin()
    check_structure(cl, ["y"])


def test_stale_cursor_never_reads_a_recycled_slot():
    cl = ContiguousList([1, 2, 3])
    c = cl.find(3)
    cl.pop()
    cl.append(99)  # reuses slot 3
    assert not c.valid
    with pytest.raises(StaleCursorError):
        _ = c.value
    cl.clear()
    cl.extend([5, 6, 7, 8])
    assert not c.valid


def test_clear_invalidates_cursors_and_growth_keeps_old_generations():
    cl = ContiguousList(range(3), dtype="int8")
    c = cl.find(2)
    cl.clear()
    cl.reserve(1000)  # reallocation must not forget that slot 3 was invalidated
    cl.extend([7, 7, 7])
    assert not c.valid
    assert cl.end().valid


def test_cursor_navigation_and_errors():
    cl = ContiguousList("abc")
    b = cl.begin()
    assert b.value == "a"
    assert b.next().next().value == "c"
    assert b.advance(3) == cl.end()
    assert cl.end().prev().value == "c"
    assert cl.end().advance(-3) == b
    with pytest.raises(IndexError):
        cl.end().next()
    with pytest.raises(IndexError):
        b.prev()
    with pytest.raises(IndexError):
        b.advance(4)
    with pytest.raises(IndexError):
        cl.end().advance(-4)
    with pytest.raises(IndexError):
        _ = cl.end().value
    with pytest.raises(IndexError):
        cl.end().value = "x"
    with pytest.raises(InputError, match="steps"):
        b.advance(1.5)
    assert "value='a'" in repr(b)
    assert "end" in repr(cl.end())


def test_sort_reverse_and_splice_within_keep_cursors():
    cl = ContiguousList([3, 1, 2], dtype="float64")
    cursors = [cl.find(v) for v in (3.0, 1.0, 2.0)]
    cl.sort()
    cl.reverse()
    cl.splice(cl.end(), cl, cl.begin())
    assert cl.tolist() == [2.0, 1.0, 3.0]
    assert [c.value for c in cursors] == [3.0, 1.0, 2.0]


# ---------------------------------------------------------------------- Python protocols


@pytest.mark.parametrize("dtype", [None, "int64", "float32", "S8", "U4", "bool"])
def test_pickle_and_copy_round_trip(dtype):
    raw = {
        None: [1, "two", (3,), None],
        "int64": [5, -1, 7, 2**40],
        "float32": [0.5, -2.0, 1e30, np.inf],
        "S8": [b"ab", b"", b"12345678"],
        "U4": ["ab", "", "wxyz"],
        "bool": [True, False, True],
    }[dtype]
    cl = ContiguousList(raw, dtype=dtype)
    cl.appendleft(raw[1])
    cl.erase(cl.begin().next())  # links now differ from storage order
    expected = cl.tolist()
    for clone in (pickle.loads(pickle.dumps(cl)), cl.copy(), copy.copy(cl), copy.deepcopy(cl)):
        assert clone == cl
        assert clone.tolist() == expected
        assert clone.dtype == cl.dtype
        assert clone.capacity == cl.capacity
        assert clone.index_dtype == cl.index_dtype
        check_structure(clone, expected)
        clone.append(raw[0])
        assert cl.tolist() == expected  # independent storage


def test_equality_and_repr():
    cl = ContiguousList([1, 2, 3], dtype="int16")
    assert cl == [1, 2, 3]
    assert cl == (1, 2, 3)
    assert cl == np.array([1, 2, 3])
    assert cl == ContiguousList([1, 2, 3])
    assert cl == ContiguousList([1, 2, 3], dtype="int64")
    assert cl != [1, 2]
    assert cl != [1, 2, 4]
    assert cl != "abc"
    assert cl != 5
    assert repr(cl) == "ContiguousList([1, 2, 3], dtype='int16')"
    long = ContiguousList(range(100))
    assert repr(long) == "ContiguousList([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..., 99], len=100)"
    with pytest.raises(TypeError):
        hash(cl)


def test_iteration_detects_structural_changes():
    cl = ContiguousList(range(1000))

    def append_while_looping():
        for v in cl:
            if v == 3:
                cl.append(1)

    with pytest.raises(RuntimeError, match="during iteration"):
        append_while_looping()
    cl2 = ContiguousList(range(10), dtype="int64")
    for v in cl2:  # writing values is allowed
        cl2.find(v).value = v + 100
    assert cl2.tolist() == list(range(100, 110))


def test_empty_list_conventions():
    cl = ContiguousList(dtype="int64")
    for method in (cl.pop, cl.popleft, cl.front, cl.back):
        with pytest.raises(IndexError):
            method()
    assert cl.begin() == cl.end()
    assert cl.sum() == 0
    assert cl.all()
    assert not cl.any()
    assert cl.order().shape == (0,)
    assert cl.tolist() == []
    assert list(reversed(cl)) == []
    cl.sort()
    cl.unique()
    cl.reverse()
    cl.remove_if(lambda v: v > 0)
    check_structure(cl, [])


# --------------------------------------------------------------- whole-list operations


def test_whole_list_operations_bypass_links_at_numpy_speed(rng):
    vals = rng.integers(-50, 50, 1000)
    cl = ContiguousList(dtype="int64")
    for k, v in enumerate(vals.tolist()):
        (cl.append if k % 3 else cl.appendleft)(v)
    expected = cl.tolist()
    assert cl.sum() == sum(expected)
    assert cl.count(7) == expected.count(7)
    assert cl.count_if(lambda v: v > 10) == sum(v > 10 for v in expected)
    assert cl.any(lambda v: v == 49) == (49 in expected)
    assert cl.all(lambda v: v > -51)
    assert sorted(cl.values.tolist()) == sorted(expected)
    with pytest.raises(ValueError, match="read-only"):
        cl.values[0] = 1
    cl.replace(7, 8)
    cl.replace_if(lambda v: v < 0, 0)
    expected = [0 if v < 0 else 8 if v == 7 else v for v in expected]
    assert cl.tolist() == expected
    cl.fill(4)
    assert cl.tolist() == [4] * 1000
    assert np.array_equal(cl.values[cl.order()], cl.to_numpy())


def test_object_lists_hold_any_object():
    cl = ContiguousList([{"a": 1}, [1, 2], None, 2**100])
    assert cl.to_numpy().dtype == object
    assert cl.to_numpy()[1] == [1, 2]
    assert cl.count(None) == 1
    assert cl.find([1, 2]).value == [1, 2]
    assert cl.values[3] == 2**100
    with pytest.raises(TypeError):
        cl.values[0] = 1


def test_float_sum_and_sort_with_nan_free_keys():
    cl = ContiguousList([0.1, 0.2, 0.3], dtype="float64")
    # The storage-order pairwise sum and math.fsum agree to a few ulps for 3 values.
    assert cl.sum() == pytest.approx(0.6, rel=4 * np.finfo(float).eps)
    cl.sort(key=lambda v: -v)
    assert cl.tolist() == [0.3, 0.2, 0.1]
    with pytest.raises(TypeError, match="sum"):
        ContiguousList([b"a"], dtype="S2").sum()


# -------------------------------------------------------------------------- bad input


def test_bad_dtype():
    for bad in ("object", object, "not-a-dtype", "S", [("a", "i4")], "(3,)f8", np.void):
        with pytest.raises(InputError, match="dtype"):
            ContiguousList(dtype=bad)


@pytest.mark.parametrize(
    ("dtype", "bad"),
    [
        ("int64", 2.5),
        ("int64", 2**63),
        ("int64", "3"),
        ("int64", [1, 2]),
        ("uint8", -1),
        ("uint8", 256),
        ("int8", np.int64(300)),
        ("float32", 1e300),
        ("float64", 2**2000),
        ("float64", 1j),
        ("bool", 1),
        ("S4", b"12345"),
        ("S4", "text"),
        ("U2", "abc"),
    ],
)
def test_bad_values_name_the_argument(dtype, bad):
    cl = ContiguousList(dtype=dtype)
    with pytest.raises(InputError, match="value"):
        cl.append(bad)
    with pytest.raises(InputError, match="values"):
        cl.extend([bad])
    with pytest.raises(InputError, match="value"):
        cl.insert(cl.end(), bad)
    with pytest.raises(InputError, match="value"):
        cl.fill(bad)
    with pytest.raises(InputError, match="new"):
        cl.replace_if(lambda v: v == v, bad)
    assert bad not in cl
    assert len(cl) == 0


def test_lossless_values_are_accepted():
    cl = ContiguousList(dtype="int64")
    for v in (True, 3, np.int8(4), np.uint64(5), np.float64(2.5).astype(np.int64)):
        cl.append(v)
    cl2 = ContiguousList([1, 2.5, np.float32(0.5)], dtype="float32")
    cl3 = ContiguousList(np.arange(3, dtype=np.int16), dtype="float64")
    assert cl.tolist() == [1, 3, 4, 5, 2]
    assert cl2.tolist() == [1.0, 2.5, 0.5]
    assert cl3.tolist() == [0.0, 1.0, 2.0]


def test_bad_arguments_name_the_argument():
    cl = ContiguousList([1, 2, 3], dtype="int64")
    other = ContiguousList([1], dtype="int64")
    with pytest.raises(InputError, match="values"):
        ContiguousList(5)
    with pytest.raises(InputError, match="values"):
        cl.extend([[1, 2], [3, 4]])
    with pytest.raises(InputError, match="cursor"):
        cl.insert(3, 4)
    with pytest.raises(InputError, match="different"):
        cl.insert(other.begin(), 4)
    with pytest.raises(InputError, match="cursor"):
        cl.erase(cl.end())
    with pytest.raises(InputError, match="other"):
        cl.splice(cl.end(), [1, 2])
    with pytest.raises(InputError, match="other"):
        cl.splice(cl.end(), ContiguousList([1]))
    with pytest.raises(InputError, match="other"):
        cl.splice(cl.end(), cl)
    with pytest.raises(InputError, match="first"):
        cl.splice(cl.end(), other, cl.begin())
    with pytest.raises(InputError, match="first"):
        cl.splice(cl.end(), other, other.end())
    with pytest.raises(InputError, match="last"):
        cl.splice(cl.end(), other, None, other.end())
    with pytest.raises(InputError, match="last"):
        cl.splice(cl.end(), other, other.end(), other.begin())
    with pytest.raises(InputError, match="cursor"):
        cl.splice(cl.begin().next(), cl, cl.begin(), cl.end())
    with pytest.raises(InputError, match="other"):
        cl.merge(ContiguousList([2, 1], dtype="int64"))
    with pytest.raises(InputError, match="self"):
        ContiguousList([2, 1], dtype="int64").merge(other)
    with pytest.raises(InputError, match="key"):
        cl.sort(key=5)
    with pytest.raises(InputError, match="key"):
        cl.sort(key=lambda v: v[:1])
    with pytest.raises(InputError, match="reverse"):
        cl.sort(reverse="yes")
    with pytest.raises(InputError, match="pred"):
        cl.count_if(3)
    with pytest.raises(InputError, match="pred"):
        cl.count_if(lambda v: 1)  # not vectorised: returns a scalar
    with pytest.raises(InputError, match="pred"):
        cl.remove_if(lambda v: v)  # integer array, not boolean
    with pytest.raises(InputError, match="n"):
        cl.reserve(-1)
    with pytest.raises(InputError, match="value"):
        cl.find(1.5)
    with pytest.raises(InputError, match="value"):
        cl.count("x")
    with pytest.raises(InputError, match="old"):
        cl.replace(0.5, 1)
    assert cl.tolist() == [1, 2, 3]
    assert other.tolist() == [1]


@given(st.lists(st.integers(-5, 5), max_size=30), st.lists(st.integers(-5, 5), max_size=30))
@settings(max_examples=40)
def test_merge_is_the_stable_merge_of_sorted_lists(a, b):
    a, b = sorted(a), sorted(b)
    tagged_a = [(v, "a") for v in a]
    tagged_b = [(v, "b") for v in b]
    cl = ContiguousList(tagged_a)
    cl.merge(ContiguousList(tagged_b), key=lambda t: t[0])
    assert cl.tolist() == sorted(tagged_a + tagged_b, key=lambda t: t[0])
    numeric = ContiguousList(a, dtype="int64")
    numeric.merge(ContiguousList(b, dtype="int64"))
    assert numeric.tolist() == sorted(a + b)


@given(
    st.lists(st.integers(-5, 5), max_size=40),
    st.integers(-6, 6),
    st.sampled_from([None, "int64", "float64", "S2"]),
)
@settings(max_examples=60)
def test_lower_bound_matches_bisect_left(values, x, dtype):
    import bisect

    if dtype == "S2":
        values, x = [str(v + 5).encode() for v in values], str(x + 5).encode()
    elif dtype == "float64":
        values, x = [v / 2 for v in values], x / 2
    values = sorted(values)
    cl = ContiguousList(dtype=dtype)
    for v in reversed(values):  # storage order differs from list order
        cl.appendleft(v)
    i = bisect.bisect_left(values, x)
    assert cl.lower_bound(x) == (nth(cl, i) if i < len(values) else cl.end())


def test_lower_bound_validates_value():
    with pytest.raises(InputError, match="value"):
        ContiguousList([1, 2], dtype="int64").lower_bound(1.5)


@pytest.mark.parametrize("dtype", ["float16", "complex64", "uint64", "datetime64[s]", "U3"])
def test_iteration_for_dtypes_without_compiled_gather(dtype):
    vals = np.arange(5).astype(dtype)
    cl = ContiguousList(dtype=dtype)
    for v in vals:
        cl.appendleft(v)
    assert list(cl) == vals[::-1].tolist()
    assert list(reversed(cl)) == vals.tolist()
    check_structure(cl, vals[::-1].tolist())


def test_lower_bound_compares_uint64_exactly():
    # Regression: mixed uint64/int64 comparisons in compiled code go through float64,
    # which cannot tell 2**62 + 1 from 2**62.
    big = 2**62
    cl = ContiguousList([big, big + 1, big + 2], dtype="uint64")
    assert cl.lower_bound(big + 1).value == big + 1
    assert cl.lower_bound(5) == cl.begin()


def test_non_vectorised_predicate_on_dtype_list_raises_input_error():
    """Regression: ``lambda v: v in (1, 2)`` on a dtype list gave NumPy's bare ValueError."""
    cl = ContiguousList([1, 2, 3, 4], dtype="int64")
    with pytest.raises(InputError, match=r"pred: .*whole array.*np\.isin"):
        cl.count_if(lambda v: v in (1, 2))
    with pytest.raises(InputError, match=r"pred: .*vectorised"):
        cl.remove_if(lambda v: v > 1 and v < 3)
    with pytest.raises(InputError, match=r"key: .*vectorised"):
        cl.sort(key=lambda v: v if v > 2 else -v)
    assert cl.count_if(lambda v: np.isin(v, (1, 2))) == 2
    assert cl.tolist() == [1, 2, 3, 4]


# ------------------------------------------------- regressions from the bad-input campaign


@pytest.mark.parametrize("steps", [2**63, 2**64, -(2**63), 10**30])
def test_regression_advance_2_63_and_2_64_raise_index_error(steps):
    # advance(2**63) as the first long walk used to return begin() (int64 wrap-around in
    # the compiled walk); advance(2**64) a numba TypingError.
    lst = ContiguousList([1, 2, 3], dtype="int64")
    with pytest.raises(IndexError):
        lst.begin().advance(steps)
    lst.begin().advance(3)  # an ordinary walk in between changes nothing
    with pytest.raises(IndexError):
        lst.begin().advance(steps)


def test_regression_uint64_construction_above_int64():
    # ContiguousList([1, 2**63], dtype='uint64') was refused (NumPy inferred float64),
    # though appending the values one by one worked.
    lst = ContiguousList([1, 2**63, 2**64 - 1], dtype="uint64")
    appended = ContiguousList(dtype="uint64")
    for v in (1, 2**63, 2**64 - 1):
        appended.append(v)
    assert list(lst) == list(appended) == [1, 2**63, 2**64 - 1]
    with pytest.raises(InputError, match="values: 18446744073709551616 is out of range"):
        ContiguousList([1, 2**64], dtype="uint64")
    with pytest.raises(InputError, match="values: -1 is out of range"):
        ContiguousList([-1, 2], dtype="uint64")


def test_regression_reserve_10_12_checks_the_size_first():
    # reserve(10**12) asked for 26 TB without a size check.
    lst = ContiguousList([1.0], dtype="float64")
    with pytest.raises(InputError, match=r"n: room for 1000000000000 elements would take .* TiB"):
        lst.reserve(10**12)
    with pytest.raises(InputError, match="n: expected an integer <="):
        lst.reserve(2**64)
    lst.reserve(1000)
    assert list(lst) == [1.0]


def test_regression_count_if_with_a_two_argument_function():
    # count_if(lambda a, b: ...) (a pairs predicate) gave a bare TypeError.
    with pytest.raises(InputError, match="pred: expected a function of 1 positional argument"):
        ContiguousList([1, 2, 3]).count_if(lambda a, b: a < b)
    with pytest.raises(InputError, match="key: expected a function of 1 positional argument"):
        ContiguousList([3, 1, 2]).sort(key=lambda a, b: a)
    assert ContiguousList([1, 2, 3]).count_if(lambda a: a > 1) == 2


@pytest.mark.parametrize(
    ("owner", "slot", "name"),
    [(None, 1, "owner"), ([1, 2, 3], 1, "owner"), ("list", 0, "owner")]
    + [("cl", s, "slot") for s in (-1, 4, 2**64, 1.0, "1", None)],
)
def test_regression_cursor_constructor_checks_owner_and_slot(owner, slot, name):
    # issue 18: Cursor(owner, slot) read owner._genv[slot] unchecked (AttributeError,
    # IndexError, or a cursor past the list's elements).
    cl = ContiguousList([3, 1, 2])
    with pytest.raises(InputError, match=rf"^{name}: "):
        Cursor(cl if owner == "cl" else owner, slot)


def test_cursor_constructor_at_a_slot_is_the_cursor_the_list_gives():
    cl = ContiguousList([3, 1, 2])
    assert Cursor(cl, 0) == cl.end()
    first = cl.begin()
    assert Cursor(cl, first._slot) == first

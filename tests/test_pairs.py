"""Tests for tumble.pairs: order against itertools, O(1) unranking against independent
counting, ranking as the inverse, nesting, write-through references and the three
reduction paths against plain Python."""

from __future__ import annotations

import fractions
import functools
import itertools
import math
import operator
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tumble.pairs as tp
from strategies import index_pairs, lengths_and_ranks, pair_counts
from tumble import InputError
from tumble.pairs import DistinctPairs, Pair, PairRef, Pairs, distinct_pairs, pairs

MAKERS = {"pairs": pairs, "distinct_pairs": distinct_pairs}
ORACLES = {
    "pairs": lambda s: itertools.product(s, repeat=2),
    "distinct_pairs": lambda s: itertools.combinations(s, 2),
}
KINDS = sorted(MAKERS)


def even_sum(a, b):
    return (a + b) % 2 == 0


def weighted(a, b):
    return 3 * a > b + 1


def python_count(view, pred):
    return sum(1 for a, b in ORACLES[kind_of(view)](view.seq) if pred(a, b))


def kind_of(view):
    return "distinct_pairs" if isinstance(view, DistinctPairs) else "pairs"


def distinct_rank_from_end(n, i, j):
    """Rank of (i, j), i < j, counted from the end: the rows after i hold C(n - 1 - i, 2)
    pairs, so an independent route to the same number as the forward row sums."""
    return n * (n - 1) // 2 - (n - 1 - i) * (n - 2 - i) // 2 - (n - j)


# --- order and contents -----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7])
def test_order_equals_itertools_small(kind, n):
    seq = [f"x{t}" for t in range(n)]
    view = MAKERS[kind](seq)
    expected = list(ORACLES[kind](seq))
    assert list(view) == expected
    assert view.size == len(view) == len(expected)
    assert bool(view) == bool(expected)
    assert [view[k] for k in range(view.size)] == expected
    assert [view[k - view.size] for k in range(view.size)] == expected


@pytest.mark.parametrize("kind", KINDS)
def test_order_equals_itertools_random_sizes_and_sequence_types(kind, rng):
    for n in rng.integers(3, 60, size=6):
        values = rng.integers(-50, 50, size=n)
        for seq in (
            list(values),
            tuple(values),
            values,
            range(5, 5 + 3 * n, 3),
            "".join(chr(97 + v % 26) for v in values),
        ):
            assert list(MAKERS[kind](seq)) == list(ORACLES[kind](seq))


@pytest.mark.parametrize("kind", KINDS)
def test_elements_are_named_pairs(kind):
    p = MAKERS[kind]([10, 20, 30])[1]
    assert isinstance(p, Pair)
    assert (p.first, p.second) == tuple(p)


@pytest.mark.parametrize("kind", KINDS)
def test_random_k_equals_kth_element_of_iteration(kind, rng):
    seq = list(range(700))
    view = MAKERS[kind](seq)
    for k in rng.integers(0, view.size, size=15):
        k = int(k)
        assert view[k] == next(itertools.islice(ORACLES[kind](seq), k, None))
        assert view[k - view.size] == view[k]


# --- O(1) unranking at sizes no iteration reaches ------------------------------------------


def test_distinct_pairs_of_a_billion_against_counting_from_the_end(rng):
    n = 10**9
    view = distinct_pairs(range(n))
    assert view.size == n * (n - 1) // 2
    for _ in range(200):
        i, j = sorted(int(x) for x in rng.choice(n, size=2, replace=False))
        rank = distinct_rank_from_end(n, i, j)
        assert view[rank] == (i, j)
        assert view.index((i, j)) == rank
        after = (i, j + 1) if j + 1 < n else (i + 1, i + 2)
        if rank + 1 < view.size:
            assert view[rank + 1] == after
    assert view[0] == (0, 1)
    assert view[-1] == (n - 2, n - 1)
    # Row boundaries, where a float square root would most likely be off by one.
    for i in rng.integers(0, n - 2, size=50):
        i = int(i)
        start = distinct_rank_from_end(n, i, i + 1)
        assert view[start] == (i, i + 1)
        assert view[start - 1] == ((i - 1, n - 1) if i else (n - 2, n - 1))


def test_pairs_of_a_billion_against_neighbours(rng):
    n = 10**9
    view = pairs(range(n))
    assert view.size == n * n
    for _ in range(200):
        i, j = (int(x) for x in rng.integers(1, n - 1, size=2))
        k = view.index((i, j))
        assert view[k] == (i, j)
        # Independent of the closed form: rows hold n pairs and j runs fastest.
        assert view[k - n] == (i - 1, j)
        assert view[k + 1] == (i, j + 1)
        assert view[k - j] == (i, 0)
    assert view[n - 1] == (0, n - 1)
    assert view[n] == (1, 0)


@pytest.mark.parametrize("kind", KINDS)
def test_beyond_int64_sizes_are_exact(kind):
    n = 10**20
    view = MAKERS[kind](range(n))
    assert view.size == pair_counts(n, kind == "distinct_pairs")
    assert view.size > sys.maxsize
    with pytest.raises(OverflowError, match="size"):
        len(view)
    last = (n - 2, n - 1) if kind == "distinct_pairs" else (n - 1, n - 1)
    assert view[-1] == last
    assert view.index(last) == view.size - 1
    tail = view[-3:]
    assert len(tail) == 3
    assert tail[-1] == last


@given(lengths_and_ranks(distinct=True))
def test_distinct_ranking_inverts_unranking(nk):
    n, k = nk
    view = distinct_pairs(range(n))
    i, j = view[k]
    assert 0 <= i < j < n
    assert view.index((i, j)) == k
    assert distinct_rank_from_end(n, i, j) == k


@given(lengths_and_ranks(distinct=False))
def test_pairs_ranking_inverts_unranking(nk):
    n, k = nk
    view = pairs(range(n))
    i, j = view[k]
    assert view.index((i, j)) == k


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_unranking_inverts_ranking(kind, data):
    n, i, j = data.draw(index_pairs(distinct=kind == "distinct_pairs"))
    view = MAKERS[kind](range(n))
    assert view[view.index((i, j))] == (i, j)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [2, 3, 4, 5, 9, 16])
def test_exhaustive_rank_and_unrank_small(kind, n):
    view = MAKERS[kind](range(n))
    for k, (i, j) in enumerate(ORACLES[kind](range(n))):
        assert view[k] == (i, j)
        assert view.index((i, j)) == k


# --- slices, index arrays, blocks -------------------------------------------------------


SLICES = [
    slice(None),
    slice(2, 9),
    slice(-5, None),
    slice(None, None, 3),
    slice(1, -1, 4),
    slice(None, None, -1),
    slice(-2, 3, -2),
    slice(100, 200),
    slice(7, 3),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sl", SLICES, ids=repr)
def test_slices_are_lazy_views_equal_to_list_slices(kind, sl):
    seq = list(range(10, 17))
    view = MAKERS[kind](seq)
    sub = view[sl]
    expected = list(ORACLES[kind](seq))[sl]
    assert type(sub) is type(view)
    assert sub.seq is seq
    assert list(sub) == expected
    assert sub.size == len(expected)
    assert [sub[k] for k in range(-sub.size, sub.size)] == expected + expected
    assert list(sub[1::2]) == expected[1::2]
    I, J = sub.index_arrays()
    assert [(seq[i], seq[j]) for i, j in zip(I, J, strict=True)] == expected
    for k, (a, b) in enumerate(expected):
        assert sub.index((seq.index(a), seq.index(b))) == k


@pytest.mark.parametrize("kind", KINDS)
def test_index_outside_a_slice_raises(kind):
    view = MAKERS[kind](range(6))[3:8]
    outside = MAKERS[kind](range(6))[0]
    with pytest.raises(InputError, match=r"pair: .* not in this view"):
        view.index(outside)
    with pytest.raises(ValueError, match="pair"):
        MAKERS[kind](range(6))[::2].index(MAKERS[kind](range(6))[1])


@pytest.mark.parametrize("kind", KINDS)
def test_index_arrays_and_blocks(kind):
    seq = np.arange(23)
    view = MAKERS[kind](seq)
    expected = np.array(list(ORACLES[kind](range(23))))
    I, J = view.index_arrays()
    assert I.dtype == J.dtype == np.int64
    np.testing.assert_array_equal(np.stack([I, J], axis=1), expected)
    I, J = view.index_arrays(-40, -3)
    np.testing.assert_array_equal(np.stack([I, J], axis=1), expected[-40:-3])
    I, J = view.index_arrays(50, 10)
    assert I.size == J.size == 0
    blocks = list(view.blocks(37))
    assert all(b[0].size <= 37 for b in blocks)
    np.testing.assert_array_equal(np.concatenate([b[0] for b in blocks]), expected[:, 0])
    np.testing.assert_array_equal(np.concatenate([b[1] for b in blocks]), expected[:, 1])
    stepped = view[::-7]
    I, J = stepped.index_arrays()
    np.testing.assert_array_equal(np.stack([I, J], axis=1), expected[::-7])


def test_index_arrays_beyond_int64_ranks():
    n = 10**10  # 5e19 distinct pairs: ranks past int64, indices still fit
    view = distinct_pairs(range(n))
    I, J = view.index_arrays(-4)
    last_four = [(n - 4, n - 1), (n - 3, n - 2), (n - 3, n - 1), (n - 2, n - 1)]
    assert list(zip(I.tolist(), J.tolist(), strict=True)) == last_four
    assert list(view[-4:]) == last_four
    far = view[10**19 : 10**19 + 9 * 10**9 : 10**9]
    I, J = far.index_arrays()
    assert list(zip(I.tolist(), J.tolist(), strict=True)) == [tuple(p) for p in far]


# --- nesting ----------------------------------------------------------------------------


ARTICLE_LINES = """\
( ( 1, 2 ), ( 1, 3 ) )
( ( 1, 2 ), ( 1, 4 ) )
( ( 1, 2 ), ( 2, 3 ) )
( ( 1, 2 ), ( 2, 4 ) )
( ( 1, 2 ), ( 3, 4 ) )
( ( 1, 3 ), ( 1, 4 ) )
( ( 1, 3 ), ( 2, 3 ) )
( ( 1, 3 ), ( 2, 4 ) )
( ( 1, 3 ), ( 3, 4 ) )
( ( 1, 4 ), ( 2, 3 ) )
( ( 1, 4 ), ( 2, 4 ) )
( ( 1, 4 ), ( 3, 4 ) )
( ( 2, 3 ), ( 2, 4 ) )
( ( 2, 3 ), ( 3, 4 ) )
( ( 2, 4 ), ( 3, 4 ) )""".splitlines()  # quoted from the source article's output


def test_distinct_pairs_of_distinct_pairs_prints_the_article_lines():
    v = [1, 2, 3, 4]
    lines = [
        f"( ( {p.first.first}, {p.first.second} ), ( {p.second.first}, {p.second.second} ) )"
        for p in distinct_pairs(distinct_pairs(v))
    ]
    assert lines == ARTICLE_LINES
    assert list(distinct_pairs(distinct_pairs(v))) == list(
        itertools.combinations(itertools.combinations(v, 2), 2)
    )


@pytest.mark.parametrize("outer", KINDS)
@pytest.mark.parametrize("inner", KINDS)
def test_nested_views_equal_nested_itertools(outer, inner, rng):
    seq = list(rng.integers(0, 9, size=6))
    view = MAKERS[outer](MAKERS[inner](seq))
    expected = list(ORACLES[outer](list(ORACLES[inner](seq))))
    assert list(view) == expected
    assert view.size == len(expected)
    for k in rng.integers(0, view.size, size=10):
        assert view[int(k)] == expected[int(k)]


def test_three_levels_are_indexable_without_materialising():
    inner = distinct_pairs(distinct_pairs(range(10**6)))
    deep = distinct_pairs(inner)
    assert deep.size == inner.size * (inner.size - 1) // 2
    a = inner.size // 3
    for b in (a + 1, a + 5, inner.size - 1):
        k = deep.index((a, b))
        assert deep[k] == (inner[a], inner[b])
        (i, j), _ = deep[k]
        assert inner.index((inner.seq.index(i), inner.seq.index(j))) == a


# --- write-through references -----------------------------------------------------------


def test_ref_members_write_the_list():
    v = [1, 2, 3, 4]
    view = distinct_pairs(v, refs=True)
    p = view[4]  # (2, 4) at indices (1, 3)
    assert isinstance(p, PairRef)
    assert p == (2, 4)
    assert p.indices == (1, 3)
    p.first = 20
    p.second += 40
    assert v == [1, 20, 3, 44]
    view[0] = (7, 8)  # member-wise assignment of a pair of values, as in the article
    assert v == [7, 8, 3, 44]
    assert view[0] == (7, 8)
    assert repr(view[0]) == "PairRef(first=7, second=8)"


def test_mutation_in_one_iteration_affects_later_ones_as_in_indexed_loops():
    # The article warns results depend on the order of iteration; that order is the
    # indexed double loop, which is the oracle here.
    data = [5, 3, 9, 1, 7, 2, 8]
    v = list(data)
    for p in distinct_pairs(v, refs=True):
        if p.first > p.second:
            p.first, p.second = p.second, p.first
    w = list(data)
    for i in range(len(w)):
        for j in range(i + 1, len(w)):
            if w[i] > w[j]:
                w[i], w[j] = w[j], w[i]
    assert v == w == sorted(data)
    acc = [1, 1, 1]
    for p in pairs(acc, refs=True):
        p.second = p.first + p.second
    ref = [1, 1, 1]
    for i in range(3):
        for j in range(3):
            ref[j] = ref[i] + ref[j]
    assert acc == ref


def test_nested_refs_assign_member_wise():
    v = [1, 2, 3, 4]
    view = distinct_pairs(distinct_pairs(v, refs=True), refs=True)
    p = view[0]  # ((1, 2), (1, 3))
    assert p == ((1, 2), (1, 3))
    p.second = (10, 30)  # the inner pair (v[0], v[2])
    assert v == [10, 2, 30, 4]
    p.first.second = 20
    assert v == [10, 20, 30, 4]


def test_refs_into_a_numpy_array():
    a = np.zeros(4)
    for p in pairs(a, refs=True):
        p.first += 1.0
    np.testing.assert_array_equal(a, [4.0, 4.0, 4.0, 4.0])


def read_only_array():
    a = np.arange(3)
    a.setflags(write=False)
    return a


@pytest.mark.parametrize("seq", [(1, 2), range(3), "abc", read_only_array(), pairs([1, 2])])
def test_refs_need_a_mutable_sequence(seq):
    with pytest.raises(InputError, match="seq: refs=True"):
        distinct_pairs(seq, refs=True)


def test_plain_views_are_read_only():
    view = pairs([1, 2])
    with pytest.raises(TypeError, match="refs=True"):
        view[0] = (3, 4)


# --- reductions: the three paths against plain Python ------------------------------------


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunk and thread even small views, so the parallel split is exercised cheaply."""
    monkeypatch.setattr(tp, "MIN_PARALLEL", 1)
    monkeypatch.setattr(tp, "BLOCK", 97)


@pytest.mark.parametrize("path", ["numba", "numpy", "python"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("workers", [1, 2])
def test_count_if_paths_equal_python(path, kind, workers, rng, small_chunks):
    for seq in (list(range(1, 301)), rng.integers(-1000, 1000, size=257), rng.random(130)):
        view = MAKERS[kind](seq)
        for pred in (even_sum, weighted):
            got = view.count_if(pred, path=path, workers=workers)
            assert type(got) is int
            assert got == python_count(view, pred)
            assert view.last_path == path
        sub = view[5:-70]
        assert sub.count_if(weighted, path=path, workers=workers) == sum(
            1 for a, b in sub if weighted(a, b)
        )


def test_count_if_auto_picks_the_fastest_possible_path():
    view = distinct_pairs(list(range(50)))
    assert view.count_if(even_sum) == python_count(view, even_sum)
    assert view.last_path == "numba"
    assert view.count_if(operator.lt) == python_count(view, operator.lt)
    assert view.last_path == "numpy"  # a builtin numba cannot compile, but it takes arrays
    assert view.count_if(lambda a, b: max(a, b) > 40) == python_count(
        view, lambda a, b: max(a, b) > 40
    )
    assert view.last_path in ("numba", "numpy")
    words = distinct_pairs(["ab", "b", "abc", "c"])
    assert words.count_if(lambda a, b: a in b) == 2
    assert words.last_path == "python"
    nested = distinct_pairs(distinct_pairs(range(6)))
    assert nested.count_if(lambda p, q: p[0] == q[0]) == sum(
        1 for p, q in itertools.combinations(itertools.combinations(range(6), 2), 2) if p[0] == q[0]
    )
    assert nested.last_path == "python"
    stepped = distinct_pairs(range(20))[::3]
    assert stepped.count_if(even_sum) == sum(1 for a, b in stepped if even_sum(a, b))
    assert stepped.last_path == "numpy"  # stepped: no compiled walk


def test_count_if_falls_back_when_compiled_arithmetic_would_overflow():
    big = [2**40 + 1, 2**40 + 3, 2**41 + 7]  # products wrap around int64 in numba and NumPy
    view = pairs(big)
    last_digit_low = view.count_if(lambda a, b: a * b % 10 < 5)
    assert last_digit_low == sum(1 for a in big for b in big if a * b % 10 < 5)
    assert view.last_path == "python"


def test_count_if_forcing_an_impossible_path_says_why():
    with pytest.raises(InputError, match="path: 'numba' cannot run here"):
        distinct_pairs(["a", "b", "c"]).count_if(lambda a, b: a < b, path="numba")
    with pytest.raises(InputError, match="path: 'numpy' cannot run here"):
        distinct_pairs([1, 2, 3]).count_if(lambda a, b: a < b and b < 3, path="numpy")


def test_regression_an_error_of_pred_on_arrays_propagates_instead_of_a_silent_fallback():
    # issue 27: the vectorised probe swallowed any exception of pred on arrays and ran
    # the pure-Python path, so a bug that shows only on arrays became a slow path. Here
    # pred looks up a table by the type of its argument: fine on the Python ints of the
    # sample, a KeyError on arrays (numba cannot compile the lookup at all).
    table = {int: 10}

    def pred(a, b):
        return a + b < table[type(a)]

    view = distinct_pairs(list(range(8)))
    for path in ("auto", "numpy"):
        with pytest.raises(KeyError):
            view.count_if(pred, path=path)
    assert view.count_if(pred, path="python") == sum(
        1 for a, b in itertools.combinations(range(8), 2) if a + b < 10
    )


def test_count_if_auto_skips_numpy_for_preds_written_for_scalars():
    # What scalar code raises on arrays means "not vectorisable", not a bug: a truth value
    # of many elements, a conversion to a Python scalar, a method only ints have.
    view = distinct_pairs(list(range(1, 40)))
    for pred in (
        lambda a, b: a < b and b < 30,
        lambda a, b: math.gcd(a, b) == 1,
        lambda a, b: a.bit_length() < b.bit_length(),
    ):
        assert view.count_if(pred) == python_count(view, pred)
        assert view.last_path in ("numba", "python")


@pytest.mark.parametrize("n", [2**10, 2**11 + 1])
def test_even_sum_example_at_small_n_matches_its_closed_form(n):
    # 1..n holds ceil(n/2) odd and floor(n/2) even numbers; a sum is even when both
    # parts have the same parity, so the count is C(odd, 2) + C(even, 2).
    odd, even = (n + 1) // 2, n // 2
    view = distinct_pairs(list(range(1, n + 1)))
    assert (
        view.count_if(lambda a, b: (a + b) % 2 == 0)
        == odd * (odd - 1) // 2 + even * (even - 1) // 2
    )
    assert view.last_path == "numba"


def test_empty_views_count_nothing():
    for kind in KINDS:
        view = MAKERS[kind]([])
        assert view.count_if(even_sum) == 0
        assert view.reduce(lambda acc, a, b: acc + 1, 5) == 5


def product_sum(acc, a, b):
    return acc + a * b


@pytest.mark.parametrize("path", ["numba", "python"])
@pytest.mark.parametrize("kind", KINDS)
def test_reduce_paths_equal_python_fold(path, kind, rng, small_chunks):
    seq = list(rng.integers(-20, 20, size=90))
    view = MAKERS[kind](seq)
    expected = functools.reduce(lambda acc, ab: product_sum(acc, *ab), ORACLES[kind](seq), 7)
    assert view.reduce(product_sum, 7, path=path) == expected
    assert view.last_path == path
    zero_based = expected - 7
    assert view.reduce(product_sum, 0, combine=operator.add, path=path, workers=2) == zero_based
    assert view.last_path == path
    floats = rng.random(70)
    fview = MAKERS[kind](floats)
    f_expected = functools.reduce(lambda acc, ab: product_sum(acc, *ab), ORACLES[kind](floats), 0.0)
    assert fview.reduce(product_sum, 0.0, path=path) == f_expected  # same operations, same order


def test_reduce_with_an_initial_numba_cannot_type_runs_in_python():
    view = distinct_pairs([1, 2, 3, 4])
    total = view.reduce(lambda acc, a, b: acc + fractions.Fraction(a, b), fractions.Fraction(0))
    assert total == sum(fractions.Fraction(a, b) for a, b in itertools.combinations(range(1, 5), 2))
    assert view.last_path == "python"


def test_a_lambda_written_in_a_loop_compiles_once():
    view = distinct_pairs(np.arange(40))
    preds = [lambda a, b: a * b > 100 for _ in range(3)]
    assert preds[0] is not preds[1]
    view.count_if(preds[0])
    assert view.last_path == "numba"
    assert tp._cache_for(preds[2])["count"] is tp._cache_for(preds[0])["count"]
    closure_preds = [lambda a, b, t=t: a * b > t for t in (10, 100)]
    assert tp._cache_for(closure_preds[0]) is not tp._cache_for(closure_preds[1])


# --- validation -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "seq", [(x for x in range(3)), {1: 2}, {1, 2}, 5, None, np.float64(3.0), np.array(4)]
)
def test_seq_must_be_a_sequence(kind, seq):
    with pytest.raises(InputError, match="seq: expected a sequence"):
        MAKERS[kind](seq)


@pytest.mark.parametrize("refs", [1, "yes", None])
def test_refs_must_be_a_bool(refs):
    with pytest.raises(InputError, match="refs: expected True or False"):
        pairs([1, 2], refs=refs)


@pytest.mark.parametrize("k", [1.0, "0", None, True, (0, 1), [0]])
def test_k_must_be_an_integer_or_slice(k):
    with pytest.raises(InputError, match="k: expected an integer or a slice"):
        distinct_pairs([1, 2, 3])[k]


@pytest.mark.parametrize("kind", KINDS)
def test_out_of_range_k_raises_index_error(kind):
    view = MAKERS[kind]([1, 2, 3])
    for k in (view.size, -view.size - 1, 10**30):
        with pytest.raises(IndexError, match="out of range"):
            view[k]
    with pytest.raises(IndexError):
        MAKERS[kind]([])[0]
    assert view[np.int64(1)] == view[1]


@pytest.mark.parametrize("sl", [slice(0, 3, 0), slice(0.5, 2), slice("a", None)])
def test_bad_slices(sl):
    with pytest.raises(InputError, match="k: bad slice"):
        distinct_pairs([1, 2, 3])[sl]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("pair", "match"),
    [
        (5, "expected a pair of integer indices"),
        ((1, 2, 3), "expected a pair of integer indices"),
        ((0.0, 1), "expected a pair of integer indices"),
        ("ab", "expected a pair of integer indices"),
        ((0, 4), "out of range"),
        ((-1, 2), "out of range"),
    ],
)
def test_index_validates_the_pair(kind, pair, match):
    with pytest.raises(InputError, match=f"pair: .*{match}"):
        MAKERS[kind](range(4)).index(pair)


def test_distinct_index_needs_i_below_j():
    for pair in ((2, 2), (3, 1)):
        with pytest.raises(InputError, match="pair: distinct pairs have i < j"):
            distinct_pairs(range(4)).index(pair)
    assert pairs(range(4)).index((3, 1)) == 13


def test_array_and_block_arguments_are_validated():
    view = distinct_pairs(range(5))
    with pytest.raises(InputError, match="start: expected an integer"):
        view.index_arrays(1.5)
    with pytest.raises(InputError, match="stop: expected an integer"):
        view.index_arrays(0, "3")
    with pytest.raises(InputError, match="size: expected an integer >= 1"):
        view.blocks(0)
    with pytest.raises(InputError, match=r"seq: .* int64"):
        distinct_pairs(range(2**64)).index_arrays(0, 3)


def test_reduction_arguments_are_validated():
    view = distinct_pairs([1, 2, 3])
    with pytest.raises(InputError, match="pred: expected a callable"):
        view.count_if(3)
    with pytest.raises(InputError, match="path: expected one of"):
        view.count_if(even_sum, path="gpu")
    with pytest.raises(InputError, match="workers: expected an integer >= 1"):
        view.count_if(even_sum, workers=0)
    with pytest.raises(InputError, match="func: expected a callable"):
        view.reduce(None, 0)
    with pytest.raises(InputError, match="combine: expected a callable"):
        view.reduce(product_sum, 0, combine="+")
    with pytest.raises(InputError, match="path: expected one of"):
        view.reduce(product_sum, 0, path="numpy")


def test_setitem_validates_the_value():
    view = pairs([1, 2], refs=True)
    with pytest.raises(InputError, match="value: expected a pair"):
        view[0] = 5
    with pytest.raises(IndexError):
        view[4] = (1, 2)
    with pytest.raises(InputError, match="k: assign one pair at a time"):
        view[0:2] = [(1, 2), (3, 4)]


def test_repr_names_the_view():
    assert repr(distinct_pairs([1, 2, 3])) == "DistinctPairs(n=3, size=3)"
    assert repr(pairs([1, 2], refs=True)[1:]) == "Pairs(n=2, size=3, ranks=range(1, 4), refs=True)"
    assert isinstance(pairs([1]), Pairs)


def test_work_is_split_into_equal_chunks_by_unranking_not_by_rows():
    n = 2000
    view = distinct_pairs(range(n))
    assert view.size >= tp.MIN_PARALLEL
    chunks = tp._split(0, view.size, 2)
    lengths = [c for _, c in chunks]
    assert len(chunks) == 2 * tp.CHUNKS_PER_WORKER
    assert max(lengths) - min(lengths) <= 1
    assert sum(lengths) == view.size
    assert all(a + c == b for (a, c), (b, _) in itertools.pairwise(chunks))
    # Equal work means unequal row ranges: the short rows at the end of the triangle
    # need many more rows per chunk than the long rows at the start.
    rows = [view[a + c - 1][0] - view[a][0] + 1 for a, c in chunks]
    assert rows[-1] > 3 * rows[0]


# ------------------------------------------------- regressions from the bad-input campaign


def test_regression_distinct_pairs_index_arrays_size_checked():
    # distinct_pairs(range(10**5)).index_arrays() asked for 2 x 37 GiB without a check.
    with pytest.raises(InputError, match=r"stop: index arrays of 4999950000 pairs would take"):
        distinct_pairs(range(10**5)).index_arrays()
    I, J = distinct_pairs(range(10**5)).index_arrays(0, 3)
    assert list(zip(I.tolist(), J.tolist(), strict=True)) == [(0, 1), (0, 2), (0, 3)]
    # positions stay Python ints: slice rules clip them, whatever their size
    assert distinct_pairs(range(4)).index_arrays(2**70)[0].size == 0


def test_regression_count_if_with_the_wrong_number_of_arguments():
    # count_if with a predicate of the wrong arity gave a bare TypeError from inside the loop.
    with pytest.raises(InputError, match="pred: expected a function of 2 positional arguments"):
        pairs([1, 2, 3]).count_if(lambda a: a > 1)
    with pytest.raises(InputError, match="func: expected a function of 3 positional arguments"):
        pairs([1, 2, 3]).reduce(lambda acc, a: acc + a, 0)
    assert pairs([1, 2, 3]).count_if(lambda a, b: a < b) == 3
    assert pairs([1, 2, 3]).count_if(operator.lt) == 3  # a builtin: signature trusted or read

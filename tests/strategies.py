"""Hypothesis strategies shared by the whole suite, one section per topic.

Append a section for your topic with one clearly headed block; keep strategies small and
shrinkable (element-wise floats where possible, seeds only for big batches).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# ======================================================================================
# Rotations: quaternions, rotation vectors, vectors, batch shapes
# ======================================================================================

#: Sampling regimes for rotation vectors (after jaxlie's test harness): uniform angle in
#: [0, π], angle exp(N(0, 1)) (spans small to several turns), near the identity (1e-12 to
#: 1e-3 rad), near a half turn (π minus 1e-12 to 1e-3).
ROTVEC_REGIMES = ("uniform", "exp_randn", "near_identity", "near_pi")

_unit_interval = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


def unit_vectors() -> st.SearchStrategy[np.ndarray]:
    """Unit 3-vectors (float64), from components in [-1, 1] of norm at least 0.1."""
    return (
        st.tuples(_unit_interval, _unit_interval, _unit_interval)
        .map(np.array)
        .filter(lambda v: np.linalg.norm(v) >= 0.1)
        .map(lambda v: v / np.linalg.norm(v))
    )


def quaternions(unit: bool = True) -> st.SearchStrategy[np.ndarray]:
    """Scalar-first quaternions (float64), unit by default; norm at least 0.1 before scaling."""
    raw = st.tuples(_unit_interval, _unit_interval, _unit_interval, _unit_interval).map(np.array)
    raw = raw.filter(lambda q: np.linalg.norm(q) >= 0.1)
    return raw.map(lambda q: q / np.linalg.norm(q)) if unit else raw


def rotation_angles(regime: str) -> st.SearchStrategy[float]:
    """Rotation angles in radians for one of :data:`ROTVEC_REGIMES`."""
    if regime == "uniform":
        return st.floats(0.0, math.pi)
    if regime == "exp_randn":
        return st.floats(-3.0, 2.5).map(math.exp)
    if regime == "near_identity":
        return st.floats(-12.0, -3.0).map(lambda e: 10.0**e)
    if regime == "near_pi":
        return st.floats(-12.0, -3.0).map(lambda e: math.pi - 10.0**e)
    raise ValueError(f"unknown regime {regime!r}")


def rotation_vectors(regime: str | None = None) -> st.SearchStrategy[np.ndarray]:
    """Rotation vectors (float64): a unit axis times an angle from ``regime`` (any if None)."""
    regimes = st.sampled_from(ROTVEC_REGIMES) if regime is None else st.just(regime)
    return regimes.flatmap(
        lambda r: st.tuples(unit_vectors(), rotation_angles(r)).map(lambda a: a[0] * a[1])
    )


def vectors(max_magnitude: float = 10.0) -> st.SearchStrategy[np.ndarray]:
    """3-vectors (float64) with components in [-max_magnitude, max_magnitude]."""
    c = st.floats(-max_magnitude, max_magnitude, allow_nan=False, allow_infinity=False)
    return st.tuples(c, c, c).map(np.array)


def batch_shapes(max_dims: int = 3) -> st.SearchStrategy[tuple[int, ...]]:
    """Leading batch shapes, from a single element ``()`` up to ``max_dims`` small axes."""
    return hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=4)


def broadcastable_batch_shapes(n: int = 2) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    """``n`` leading batch shapes that broadcast together (size-1 axes included)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=0, max_dims=3, min_side=1, max_side=4
    ).map(lambda r: r.input_shapes)


def quaternion_batches(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Unit quaternions of batch ``shape`` (float64), uniform on SO(3), drawn from a seed."""
    return st.integers(0, 2**32 - 1).map(
        lambda seed: _normalized(np.random.default_rng(seed).standard_normal((*shape, 4)))
    )


def _normalized(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


# ======================================================================================
# Transforms and hierarchies (n-D Transform, DynamicTransform)
# ======================================================================================

#: Dimensions exercised by the transform property tests.
TRANSFORM_DIMS = (1, 2, 3, 4)

_moderate = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


def skew_matrices(n: int, max_entry: float = 2.0) -> st.SearchStrategy[np.ndarray]:
    """n x n skew-symmetric matrices (float64) from n(n-1)/2 entries in [-max_entry, max_entry]."""
    k = n * (n - 1) // 2
    entry = st.floats(-max_entry, max_entry, allow_nan=False, allow_infinity=False)

    def build(values: tuple[float, ...]) -> np.ndarray:
        W = np.zeros((n, n))
        W[np.triu_indices(n, 1)] = values
        return W - W.T

    return st.tuples(*[entry] * k).map(build)


def rotation_matrices(n: int) -> st.SearchStrategy[np.ndarray]:
    """n x n rotations: the matrix exponential of a skew matrix with entries in [-π, π]."""
    from scipy.linalg import expm

    return skew_matrices(n, math.pi).map(lambda W: expm(W))


def nd_vectors(n: int) -> st.SearchStrategy[np.ndarray]:
    """n-vectors (float64) with components in [-2, 2]."""
    return st.tuples(*[_moderate] * n).map(lambda v: np.array(v, dtype=float))


def nd_transforms(n: int) -> st.SearchStrategy[object]:
    """:class:`tumble.transform.Transform` in n dimensions, scale in [0.5, 2]."""
    from tumble.transform import Transform

    return st.builds(Transform, nd_vectors(n), rotation_matrices(n), st.floats(0.5, 2.0))


def dynamic_transforms(n: int) -> st.SearchStrategy[object]:
    """:class:`tumble.transform.DynamicTransform` in n dimensions, moderate rates."""
    from tumble.transform import DynamicTransform

    return st.builds(
        DynamicTransform,
        nd_transforms(n),
        nd_vectors(n),
        nd_vectors(n),
        skew_matrices(n),
        skew_matrices(n),
    )


# ======================================================================================
# Pairs (lazy pairs and distinct pairs: sizes, ranks, index pairs)
# ======================================================================================


def pair_counts(n: int, distinct: bool) -> int:
    """How many pairs a sequence of ``n`` items has: ``n (n - 1) / 2`` distinct, else ``n**2``."""
    return n * (n - 1) // 2 if distinct else n * n


def sequence_lengths(max_n: int = 10**15) -> st.SearchStrategy[int]:
    """Sequence lengths with at least one pair: tiny ones often, huge ones (beyond int64 ranks)."""
    return st.one_of(st.integers(2, 8), st.integers(2, max_n))


def lengths_and_ranks(distinct: bool, max_n: int = 10**15) -> st.SearchStrategy[tuple[int, int]]:
    """``(n, k)`` with ``0 <= k <`` the number of pairs of ``n`` items; ends and rows favoured."""
    return sequence_lengths(max_n).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.one_of(
                st.integers(0, pair_counts(n, distinct) - 1),
                st.sampled_from([0, 1, pair_counts(n, distinct) - 1]).filter(
                    lambda k: k < pair_counts(n, distinct)
                ),
            ),
        )
    )


def index_pairs(distinct: bool, max_n: int = 10**15) -> st.SearchStrategy[tuple[int, int, int]]:
    """``(n, i, j)`` with ``0 <= i, j < n`` (and ``i < j`` when ``distinct``)."""

    def draw(n: int) -> st.SearchStrategy[tuple[int, int, int]]:
        if not distinct:
            return st.tuples(st.just(n), st.integers(0, n - 1), st.integers(0, n - 1))
        return st.integers(0, n - 2).flatmap(
            lambda i: st.tuples(st.just(n), st.just(i), st.integers(i + 1, n - 1))
        )

    return sequence_lengths(max_n).flatmap(draw)


# ======================================================================================
# Linked list (ContiguousList values: Python objects and NumPy int64)
# ======================================================================================

#: Value kinds of the ContiguousList state machines: ``None`` (Python objects) and int64.
LINKEDLIST_DTYPES = (None, "int64")


def linkedlist_values(dtype: str | None) -> st.SearchStrategy[int]:
    """Values for a ContiguousList of ``dtype``: mostly a few small integers (so duplicates,
    ties and ``unique`` runs are common), sometimes the extremes of the type; for ``None``
    also integers beyond 64 bits, which only a Python-object list can hold."""
    small = st.integers(-3, 3)
    if dtype is None:
        return st.one_of(small, small, st.integers(-(2**70), 2**70))
    info = np.iinfo(np.dtype(dtype))
    return st.one_of(small, small, st.integers(int(info.min), int(info.max)))


# ======================================================================================
# Dual numbers: unary rules of tumble.dual.RULES and points inside their domains
# ======================================================================================


def dual_smooth_unary_rules(lo: float, hi: float) -> st.SearchStrategy[np.ufunc]:
    """Smooth unary ufuncs of ``tumble.dual.RULES`` whose sampled domain covers [lo, hi]."""
    from tumble.dual import PIECEWISE_CONSTANT, RULES

    fits = [
        u
        for u, rule in RULES.items()
        if u.nin == 1
        and u.nout == 1
        and u not in PIECEWISE_CONSTANT
        and rule.domain[0][0] <= lo
        and rule.domain[0][1] >= hi
    ]
    return st.sampled_from(fits)


def dual_points(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Finite floats in [lo, hi], where the rules drawn with the same bounds are smooth."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


# ======================================================================================
# Exact rigid-body motion: principal inverse moments and body momenta
# ======================================================================================

_moment = st.floats(0.05, 5.0, allow_nan=False, allow_infinity=False)


def inverse_inertias() -> st.SearchStrategy[np.ndarray]:
    """Principal inverse moments (3,): generic, with two or three equal, or with two a
    relative 10^-k apart (k in 3..15, nearly symmetric), in any axis order."""
    generic = st.tuples(_moment, _moment, _moment).map(np.array)
    two_equal = st.tuples(_moment, _moment).map(lambda a: np.array([a[0], a[0], a[1]]))
    spherical = _moment.map(lambda a: np.full(3, a))
    nearly = st.tuples(_moment, _moment, st.integers(3, 15)).map(
        lambda a: np.array([a[0], a[0] * (1.0 + 10.0 ** -a[2]), a[1]])
    )
    return st.tuples(
        st.one_of(generic, generic, two_equal, spherical, nearly), st.permutations(range(3))
    ).map(lambda a: a[0][list(a[1])])


def body_momenta() -> st.SearchStrategy[np.ndarray]:
    """Body angular momenta (3,) with |L| in [1e-3, 1e3]: generic directions, and
    directions along a principal axis (steady spin) or in a principal plane."""
    direction = st.one_of(
        unit_vectors(),
        unit_vectors(),
        st.integers(0, 2).map(lambda i: np.eye(3)[i]),
        unit_vectors()
        .map(lambda v: v * np.array([1.0, 1.0, 0.0]))
        .filter(lambda v: np.linalg.norm(v) > 0.1),
    )
    size = st.floats(-3.0, 3.0).map(lambda e: 10.0**e)
    return st.tuples(direction, size).map(lambda a: a[0] * a[1])

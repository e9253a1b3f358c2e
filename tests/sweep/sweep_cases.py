"""The small grid and the dataset checks shared by the tests of tumble.sweep."""

from __future__ import annotations

from collections import Counter

from tumble import sweep

#: Longest wait for a cluster to come up or a sweep to finish in these tests.
TIMEOUT = 90.0

SMALL_GRID = {
    "methods": ["jolt", "momentum_first", "exact", "explicit"],
    "min_j": [0.5],
    "median_j": [0.2, 0.8],
    "energy": [0.0, 0.1, 0.5, 0.9],
    "steps_per_rotation": [4, 32],
    "rotations": [30],
    "inv_inertia": [[1.0, 2.0, 3.0], [0.5, 0.5, 1.5]],
}


def case_ids(cases):
    return [c.case_id for c in cases]


def dataset_rows(out):
    return sweep.read_results(out).to_pylist()


def assert_complete(out, cases):
    found = sweep.read_results(out).column("case_id").to_pylist()
    counts = Counter(found)
    assert not [i for i, n in counts.items() if n > 1], "duplicated cases"
    assert set(found) == set(case_ids(cases))

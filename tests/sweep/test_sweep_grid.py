"""tumble.sweep.grid: the cases of a sweep and their cutting into tasks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sweep_cases import SMALL_GRID, case_ids

from tumble import InputError, scenarios, sweep


def test_grid_is_the_product_of_the_lists():
    cases = sweep.build_grid(**SMALL_GRID)
    bodies = 1 * 2 + 2
    assert len(cases) == 4 * bodies * 4 * 2 * 1
    assert len(set(case_ids(cases))) == len(cases)
    assert case_ids(sweep.build_grid(**SMALL_GRID)) == case_ids(cases)  # deterministic ids
    explicit = [c for c in cases if c.inv_inertia is not None]
    assert len(explicit) == 4 * 2 * 4 * 2
    assert all(math.isnan(c.grid_values()["min_j"]) for c in explicit)
    only_explicit = sweep.build_grid(["rk4"], inv_inertia=[1, 2, 3])
    assert [c.inv_inertia for c in only_explicit] == [(1.0, 2.0, 3.0)]


def test_explicit_body_starts_mid_flip_at_the_energy_fraction():
    for J in ([1.0, 2.0, 3.0], [3.0, 1.0, 2.5], [0.5, 0.5, 1.5]):
        for e in (0.0, 0.3, 1.0):
            case = sweep.SweepCase("rk4", math.nan, math.nan, tuple(J), e, 16, 1).build()
            Lb = case.omega0 / case.inv_inertia  # identity attitude: world = body
            order = np.argsort(J, kind="stable")
            JL = Lb @ (case.inv_inertia * Lb) / (Lb @ Lb)
            Jmin, Jmax = min(J), max(J)
            assert np.isclose(JL, Jmin + e * (Jmax - Jmin), rtol=1e-14)
            assert Lb[order[1]] == 0.0
            assert np.isclose(np.linalg.norm(Lb), 1.0, rtol=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"methods": ["nope"]}, "methods"),
        ({"methods": []}, "methods"),
        ({"min_j": [0.0]}, "min_j"),
        ({"median_j": [1.5]}, "median_j"),
        ({"energy": [-0.1]}, "energy"),
        ({"energy": []}, "energy"),
        ({"energy": [math.nan]}, "energy"),
        ({"steps_per_rotation": [0]}, "steps_per_rotation"),
        ({"steps_per_rotation": [2.5]}, "steps_per_rotation"),
        ({"rotations": [0.0]}, "rotations"),
        ({"rotations": [0.1], "steps_per_rotation": [1]}, "rotations"),
        ({"inv_inertia": [1.0, 2.0]}, "inv_inertia"),
        ({"inv_inertia": [1.0, 0.0, 2.0]}, "inv_inertia"),
        # The long campaign (issue 27): round(rotations * steps) of 1e308 rotations raised
        # OverflowError; the grid takes the scenarios' bounds, which its cases must meet.
        ({"rotations": [1e308]}, "rotations"),
        ({"rotations": [2 * scenarios.MAX_ROTATIONS]}, "rotations"),
        ({"steps_per_rotation": [scenarios.MAX_STEPS_PER_ROTATION + 1]}, "steps_per_rotation"),
    ],
)
def test_bad_grid_raises_input_error_naming_the_argument(kwargs, name):
    with pytest.raises(InputError, match=rf"^{name}:"):
        sweep.build_grid(**kwargs)


def test_tasks_group_batches_and_cover_every_case_once():
    cases = sweep.build_grid(**SMALL_GRID)
    tasks = sweep.split_tasks(cases, 7)
    assert all(1 <= len(t) <= 7 for t in tasks)
    assert sorted(case_ids(c for t in tasks for c in t)) == sorted(case_ids(cases))
    # Sorted by method, steps and duration: a task spans at most two (method, steps) groups
    # when the task size is below the group size.
    for t in tasks:
        assert len({(c.method, c.steps_per_rotation) for c in t}) <= 2

"""Shared fixtures and Hypothesis settings for the whole suite."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Compiled kernels compile on first call, so per-example deadlines would only measure numba.
settings.register_profile(
    "tumble", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60
)
settings.load_profile("tumble")


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator: every random test is reproducible."""
    return np.random.default_rng(20261121)


#: The test files that take longest from an empty numba cache (compiling, subprocesses, a
#: browser), heaviest first: they are collected first, so that ``pytest -n N --dist
#: loadfile`` starts them at once on different workers instead of leaving one of them alone
#: at the end of the run. Measured by ``--durations`` on the 2-core machine.
HEAVY_FIRST = (
    "lab/test_lab_instrument_api.py",
    "lab/test_lab_torque_api.py",
    "test_torques.py",
    "test_contract.py",
    "test_startup.py",
    "test_compositions.py",
    "lab/test_lab_browser.py",
    "test_campaign.py",
    "test_rigid_api.py",
    "sweep/test_sweep_cluster.py",
    "sweep/test_sweep_cli.py",
    "lab/test_lab_torque_browser.py",
    "lab/test_lab_load.py",
)


def pytest_collection_modifyitems(session, config, items):
    def rank(item):
        path = item.path.as_posix()
        return next(
            (i for i, name in enumerate(HEAVY_FIRST) if path.endswith("tests/" + name)),
            len(HEAVY_FIRST),
        )

    items.sort(key=rank)  # stable: the order within a file, and of the others, is kept

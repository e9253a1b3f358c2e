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

"""A local Dask cluster and a small sweep on it, shared by the tests of tumble.sweep.

Clusters run on 127.0.0.1 only. Both fixtures are set up once for the sweep tests (pytest
tears package-scoped fixtures of a directory without ``__init__.py`` down at the end of
the session).
"""

from __future__ import annotations

import pytest
from sweep_cases import SMALL_GRID, TIMEOUT

from tumble import sweep

distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="package")
def client():
    """A 2-worker local cluster made by the same helper `run_sweep` uses by default."""
    with sweep.local_cluster(2) as cluster, distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=TIMEOUT)
        yield c


@pytest.fixture(scope="package")
def small_sweep(client, tmp_path_factory):
    out = tmp_path_factory.mktemp("small")
    summary = sweep.run_sweep(out, **SMALL_GRID, client=client, task_size=7, progress=False)
    return out, summary

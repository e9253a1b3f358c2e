"""tumble.sweep.dataset: the Parquet files, resuming and reading."""

from __future__ import annotations

import pytest
from sweep_cases import SMALL_GRID

from tumble import InputError, sweep


def test_completed_ids_reject_a_damaged_part_file(tmp_path):
    (tmp_path / ("part-" + "0" * 20 + ".parquet")).write_bytes(b"not parquet")
    with pytest.raises(InputError, match=r"^out: cannot read"):
        sweep.completed_case_ids(tmp_path)


def test_rerun_with_the_same_arguments_skips_everything(small_sweep, client):
    out, _ = small_sweep
    before = sorted(p.name for p in out.iterdir())
    summary = sweep.run_sweep(out, **SMALL_GRID, client=client, task_size=5, progress=False)
    assert summary.tasks == 0
    assert summary.skipped == summary.cases
    assert sorted(p.name for p in out.iterdir()) == before

"""tumble.sweep.dataset: the Parquet files, resuming and reading."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sweep_cases import SMALL_GRID

from tumble import InputError, sweep
from tumble.sweep import dataset


def test_completed_ids_ignore_a_damaged_part_file_and_name_it(tmp_path):
    name = "part-" + "0" * 20 + ".parquet"
    (tmp_path / name).write_bytes(b"not parquet")
    with pytest.warns(sweep.ForeignFileWarning, match=f"{name} \\(not a readable Parquet file"):
        assert sweep.completed_case_ids(tmp_path) == set()
    with pytest.warns(sweep.ForeignFileWarning, match=name):
        assert sweep.read_results(tmp_path).num_rows == 0


def test_rerun_with_the_same_arguments_skips_everything(small_sweep, client):
    out, _ = small_sweep
    before = sorted(p.name for p in out.iterdir())
    summary = sweep.run_sweep(out, **SMALL_GRID, client=client, task_size=5, progress=False)
    assert summary.tasks == 0
    assert summary.skipped == summary.cases
    assert sorted(p.name for p in out.iterdir()) == before


# ------------------------------------------------- regressions from the bad-input campaign


def _rows(cases):
    """Made-up score rows for ``cases`` (the values do not matter to the dataset)."""
    rows = []
    for c in cases:
        built = c.build()
        rows.append(
            {
                "case_id": c.case_id,
                **c.grid_values(),
                "j1": 1.0, "j2": 2.0, "j3": 3.0, "inertia_ratio": 3.0, "dt": built.dt,
                "steps": built.steps, "period": built.period,
                **{name: 0.0 for name in sweep.SCORE_COLUMNS},
            }
        )  # fmt: skip
    return {name: [r[name] for r in rows] for name in sweep.COLUMNS}


def test_regression_foreign_parquet_part_file_is_ignored_and_named(tmp_path):
    # A foreign Parquet file named like a part file made read_results (and sweep-plot)
    # fail with ArrowInvalid; with a grid case's case_id, that case was never computed.
    cases = sweep.build_grid(["rk4"], min_j=[0.5], median_j=[0.5], energy=[0.2, 0.4],
                             steps_per_rotation=[8], rotations=[1])  # fmt: skip
    own = dataset.write_part(tmp_path, _rows(cases[:1]))
    # 1. another schema entirely, claiming the second case
    foreign = tmp_path / ("part-" + "a" * 20 + ".parquet")
    pq.write_table(pa.table({"case_id": [cases[1].case_id], "x": [1.0]}), foreign)
    # 2. the sweep's columns, without the sweep's record (written by hand)
    forged_cols = _rows(cases[1:])
    forged = tmp_path / f"part-{dataset.task_key(forged_cols['case_id'])}.parquet"
    pq.write_table(pa.table(forged_cols, schema=dataset._schema()), forged)
    with pytest.warns(sweep.ForeignFileWarning) as record:
        done = sweep.completed_case_ids(tmp_path)
    assert done == {cases[0].case_id}
    message = str(record[0].message)
    assert foreign.name in message
    assert forged.name in message
    assert own.name not in message
    with pytest.warns(sweep.ForeignFileWarning):
        table = sweep.read_results(tmp_path)
    assert table.column("case_id").to_pylist() == [cases[0].case_id]


def test_regression_case_done_only_if_its_row_matches_its_parameters(tmp_path):
    # A part file that the sweep wrote, but whose row for a case_id carries other grid
    # values (a tampered or mixed-up file), must not mark that case done.
    cases = sweep.build_grid(["rk4"], min_j=[0.5], median_j=[0.5], energy=[0.2, 0.4],
                             steps_per_rotation=[8], rotations=[1])  # fmt: skip
    cols = _rows(cases[:1])
    cols["energy"] = [0.4]  # the row now says it is the other case, under case 0's id
    path = dataset.write_part(tmp_path, cols)
    with pytest.warns(sweep.ForeignFileWarning, match="case_id does not match their grid"):
        assert sweep.completed_case_ids(tmp_path) == set()
    path.unlink()
    # a file of another schema version
    cols = _rows(cases[:1])
    old = pa.table(cols, schema=dataset._schema().with_metadata(
        {b"tumble.sweep": b'{"schema_version": 0, "task_key": "x"}'}))  # fmt: skip
    pq.write_table(old, tmp_path / f"part-{dataset.task_key(cols['case_id'])}.parquet")
    with pytest.warns(sweep.ForeignFileWarning, match="schema version 0"):
        assert sweep.completed_case_ids(tmp_path) == set()


def test_part_files_record_the_sweep_that_wrote_them(tmp_path):
    cases = sweep.build_grid(["rk4"], min_j=[0.5], median_j=[0.5], energy=[0.2],
                             steps_per_rotation=[8], rotations=[1])  # fmt: skip
    path = dataset.write_part(tmp_path, _rows(cases))
    meta = pq.read_schema(path).metadata
    assert b"tumble.sweep" in meta
    assert f'"schema_version": {sweep.SCHEMA_VERSION}'.encode() in meta[b"tumble.sweep"]
    assert sweep.completed_case_ids(tmp_path) == {cases[0].case_id}
    assert sweep.read_results(tmp_path).column("median_j").to_pylist() == [0.5]


def test_regression_run_sweep_on_an_unwritable_folder(tmp_path):
    # run_sweep on a folder it cannot create or write raised a raw OSError after setup.
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match=r"^out: cannot write part files"):
        sweep.run_sweep(blocker / "sub", ["rk4"], progress=False, workers=1)
    with pytest.raises(InputError, match=r"^out: expected a folder path"):
        sweep.run_sweep(None, ["rk4"], progress=False, workers=1)
    if os.geteuid() != 0:  # root writes anywhere: a read-only folder cannot be made
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(InputError, match=r"^out: cannot write part files"):
            sweep.run_sweep(locked, ["rk4"], progress=False, workers=1)


@pytest.mark.parametrize(
    ("case", "name"),
    [
        (sweep.SweepCase("warp", 0.5, 0.5, None, 0.5, 8, 1.0), "method"),
        (sweep.SweepCase("rk4", 0.5, 0.5, (1.0, 2.0, 3.0), 2.0, 8, 1.0), "energy"),
        (sweep.SweepCase("rk4", 0.5, 0.5, (1.0, -2.0, 3.0), 0.5, 8, 1.0), "inv_inertia"),
        (sweep.SweepCase("rk4", 0.5, 0.5, (1.0, 2.0), 0.5, 8, 1.0), "inv_inertia"),
        (sweep.SweepCase("rk4", 0.5, 0.5, None, 0.5, 0, 1.0), "steps_per_rotation"),
        (sweep.SweepCase("rk4", -1.0, 0.5, None, 0.5, 8, 1.0), "min_j"),
    ],
)
def test_regression_sweep_case_build_and_run_task_raise_input_error(case, name):
    # SweepCase.build gave "math domain error" or NumPy errors; run_task the same.
    with pytest.raises(InputError, match=f"^{name}: "):
        case.build()
    with pytest.raises(InputError, match=f"^{name}: "):
        sweep.run_task([case])


@pytest.mark.parametrize("bad", [None, "rk4", [None], [1, 2]])
def test_regression_run_task_validates_its_cases(bad):
    with pytest.raises(InputError, match=r"^cases: expected a list of SweepCase"):
        sweep.run_task(bad)

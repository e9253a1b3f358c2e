"""Parameter sweeps of the rigid-body integrators on Dask: ``tumble sweep``.

A sweep scores every chosen method on every case of a grid against the exact solution and
writes one row per case to a Parquet dataset (``docs/sweep.md``). One module per concern:

* :mod:`tumble.sweep.grid`: the cases (:func:`build_grid`, :class:`SweepCase`) and their
  cutting into tasks (:func:`split_tasks`);
* :mod:`tumble.sweep.task`: running and scoring a task's cases on a worker
  (:func:`run_task`; the score columns :data:`SCORE_COLUMNS`);
* :mod:`tumble.sweep.dataset`: the Parquet files, resuming and reading
  (:func:`completed_case_ids`, :func:`read_results`);
* :mod:`tumble.sweep.cluster`: Dask, a local cluster or an existing one (:func:`run_sweep`,
  :func:`local_cluster`);
* :mod:`tumble.sweep.cli`: the ``tumble sweep`` command (:func:`add_arguments`, :func:`run`);
* :mod:`tumble.sweep.plot`: the heat maps of ``tumble sweep-plot`` (imported on its own).

The names below are re-exported here, the package's public surface; the flip detector is
physics and lives in :mod:`tumble.diagnostics` (:func:`first_flip_time`, :data:`FLIP_BAND`).
Each loads on its first access (PEP 562, :mod:`tumble._lazy`): importing the package, or
:mod:`tumble.sweep.cli` for ``tumble sweep --help``, loads no numba.
"""

from typing import TYPE_CHECKING

from tumble._lazy import lazy_names

if TYPE_CHECKING:
    from tumble.diagnostics import FLIP_BAND, first_flip_time
    from tumble.sweep.cli import add_arguments, run
    from tumble.sweep.cluster import SweepError, SweepSummary, local_cluster, run_sweep
    from tumble.sweep.dataset import ForeignFileWarning, completed_case_ids, read_results
    from tumble.sweep.grid import GRID_COLUMNS, SCHEMA_VERSION, SweepCase, build_grid, split_tasks
    from tumble.sweep.settings import DEFAULT_RETRIES, DEFAULT_SPIN, DEFAULT_TASK_SIZE
    from tumble.sweep.task import BODY_RECORDS_PER_CALL, COLUMNS, SCORE_COLUMNS, run_task

__all__ = [
    "BODY_RECORDS_PER_CALL",
    "COLUMNS",
    "DEFAULT_RETRIES",
    "DEFAULT_SPIN",
    "DEFAULT_TASK_SIZE",
    "FLIP_BAND",
    "GRID_COLUMNS",
    "SCHEMA_VERSION",
    "SCORE_COLUMNS",
    "ForeignFileWarning",
    "SweepCase",
    "SweepError",
    "SweepSummary",
    "add_arguments",
    "build_grid",
    "completed_case_ids",
    "first_flip_time",
    "local_cluster",
    "read_results",
    "run",
    "run_sweep",
    "run_task",
    "split_tasks",
]

#: Each re-exported name and the module that defines it (as imported for type checkers
#: above; a test holds the two to each other), imported on first access.
_LAZY = {
    **dict.fromkeys(("FLIP_BAND", "first_flip_time"), "tumble.diagnostics"),
    **dict.fromkeys(("add_arguments", "run"), "tumble.sweep.cli"),
    **dict.fromkeys(
        ("SweepError", "SweepSummary", "local_cluster", "run_sweep"), "tumble.sweep.cluster"
    ),
    **dict.fromkeys(
        ("ForeignFileWarning", "completed_case_ids", "read_results"), "tumble.sweep.dataset"
    ),
    **dict.fromkeys(
        ("GRID_COLUMNS", "SCHEMA_VERSION", "SweepCase", "build_grid", "split_tasks"),
        "tumble.sweep.grid",
    ),
    **dict.fromkeys(
        ("DEFAULT_RETRIES", "DEFAULT_SPIN", "DEFAULT_TASK_SIZE"), "tumble.sweep.settings"
    ),
    **dict.fromkeys(
        ("BODY_RECORDS_PER_CALL", "COLUMNS", "SCORE_COLUMNS", "run_task"), "tumble.sweep.task"
    ),
}

__getattr__, __dir__ = lazy_names(globals(), _LAZY)

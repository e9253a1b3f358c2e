"""A sweep's dataset: one Parquet file per finished task in a folder, and resuming.

Each finished task's rows are written at once as ``part-<hash of its case ids>.parquet``
(:func:`write_part`: temporary name, fsync, rename, so a file is either complete or
absent). A rerun reads the ``case_id`` column of the files there
(:func:`completed_case_ids`) and runs only the missing cases. :func:`read_results` reads the
whole dataset. Needs ``pyarrow`` (the ``sweep`` extra), imported when first used.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tumble._errors import InputError
from tumble.sweep import task

__all__ = [
    "completed_case_ids",
    "part_files",
    "prepare_folder",
    "read_results",
    "task_key",
    "write_part",
]

_INT_COLUMNS = ("steps_per_rotation", "steps")
_STR_COLUMNS = ("case_id", "method", "inv_inertia")

_PART = re.compile(r"part-[0-9a-f]{20}\.parquet")


def _arrow() -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa, pq


def _schema() -> Any:
    pa, _ = _arrow()
    return pa.schema(
        [
            (
                name,
                pa.string() if name in _STR_COLUMNS
                else pa.int64() if name in _INT_COLUMNS
                else pa.float64(),
            )
            for name in task.COLUMNS
        ]
    )  # fmt: skip


def task_key(case_ids: Iterable[str]) -> str:
    """A task's name: a hash of its case ids, whatever their order (20 hex digits)."""
    return hashlib.sha1("\n".join(sorted(case_ids)).encode()).hexdigest()[:20]


def prepare_folder(out: Any) -> Path:
    """The dataset folder ``out``, created if missing, without a crashed run's temporary files.

    Raises
    ------
    InputError
        ``out`` is a file.
    """
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"out: expected a folder, got the file {str(out)!r}")
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(".part-*.tmp"):
        stale.unlink()
    return folder


def write_part(out: Path, columns: dict[str, list[Any]]) -> Path:
    """Write one task's rows (:func:`tumble.sweep.task.run_task`) atomically into ``out``.

    The file is ``part-<task_key of its case ids>.parquet``, written under a temporary
    name, flushed to disk and renamed.
    """
    pa, pq = _arrow()
    table = pa.table(columns, schema=_schema())
    path = out / f"part-{task_key(columns['case_id'])}.parquet"
    tmp = out / f".{path.name}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def part_files(out: Path) -> list[Path]:
    """The complete part files in the folder ``out``, sorted by name."""
    return sorted(p for p in out.iterdir() if _PART.fullmatch(p.name))


def completed_case_ids(out: Any) -> set[str]:
    """The ``case_id`` of every row already written in the folder ``out`` (empty if none).

    Raises
    ------
    InputError
        A part file that cannot be read (not written by a sweep, or damaged outside it).
    """
    _, pq = _arrow()
    folder = Path(out)
    if not folder.is_dir():
        return set()
    done: set[str] = set()
    for p in part_files(folder):
        try:
            done.update(pq.read_table(p, columns=["case_id"]).column("case_id").to_pylist())
        except Exception as exc:
            raise InputError(f"out: cannot read {p} ({exc}); move it away and rerun") from None
    return done


def read_results(out: Any) -> Any:
    """The whole dataset in the folder ``out`` as one ``pyarrow.Table``.

    Columns :data:`tumble.sweep.task.COLUMNS`; an empty table when no task has finished.
    """
    pa, pq = _arrow()
    folder = Path(out)
    if not folder.is_dir():
        raise InputError(f"out: expected a folder written by tumble sweep, got {str(out)!r}")
    tables = [pq.read_table(p) for p in part_files(folder)]
    if not tables:
        return _schema().empty_table()
    return pa.concat_tables(tables)

"""A sweep's dataset: one Parquet file per finished task in a folder, and resuming.

Each finished task's rows are written at once as ``part-<hash of its case ids>.parquet``
(:func:`write_part`: temporary name, fsync, rename, so a file is either complete or
absent). A rerun reads the files there (:func:`completed_case_ids`) and runs only the
missing cases. :func:`read_results` reads the whole dataset. Needs ``pyarrow`` (the
``sweep`` extra), imported when first used.

**The folder is the sweep's own.** Each part file records in its Parquet metadata that
tumble's sweep wrote it, under which :data:`~tumble.sweep.grid.SCHEMA_VERSION`, and the
hash of its case ids (its name). A file counts as results only if that record is there,
its columns are the sweep's, its name is the hash of its case ids, and every row's
``case_id`` is the hash of the grid values in that row (so the row was computed for that
case, under those parameters). Anything else named like a part file (a foreign or
damaged file, one from another schema version) is reported by name with a
:class:`ForeignFileWarning` and ignored: never read as results, never counted as done.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tumble._errors import InputError, TumbleWarning
from tumble._validate import describe
from tumble.sweep import grid, task

__all__ = [
    "ForeignFileWarning",
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

#: The Parquet metadata key under which a part file records what wrote it.
_WRITER_KEY = b"tumble.sweep"


class ForeignFileWarning(TumbleWarning):
    """A file in a sweep folder, named like a part file, that this sweep did not write.

    It is ignored (neither results nor a finished case); the message names it and says
    why. Move it away to silence the warning.
    """


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
    try:
        ids = sorted(case_ids)
        text = "\n".join(ids)
    except (TypeError, ValueError):
        raise InputError(f"case_ids: expected case id strings, got {describe(case_ids)}") from None
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def _folder(out: Any) -> Path:
    if not isinstance(out, str | os.PathLike):
        raise InputError(f"out: expected a folder path (str or Path), got {type(out).__name__}")
    return Path(out)


def prepare_folder(out: Any) -> Path:
    """The dataset folder ``out``, created if missing, without a crashed run's temporary files.

    Raises
    ------
    InputError
        ``out`` is a file, or a folder that cannot be created or written.
    """
    folder = _folder(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"out: expected a folder, got the file {str(out)!r}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob(".part-*.tmp"):
            stale.unlink()
        # Found out now, not after the first task has run: can part files be written here?
        probe = folder / f".part-probe.{os.getpid()}.tmp"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(
            f"out: cannot write part files in the folder {str(out)!r} ({exc.strerror or exc})"
        ) from None
    return folder


def write_part(out: Path, columns: dict[str, list[Any]]) -> Path:
    """Write one task's rows (:func:`tumble.sweep.task.run_task`) atomically into ``out``.

    The file is ``part-<task_key of its case ids>.parquet``, written under a temporary
    name, flushed to disk and renamed.
    """
    pa, pq = _arrow()
    out = _folder(out)
    if not isinstance(columns, dict) or "case_id" not in columns:
        raise InputError(f"columns: expected {{column: list}} of a task, got {describe(columns)}")
    key = task_key(columns["case_id"])
    writer = {"schema_version": grid.SCHEMA_VERSION, "task_key": key}
    table = pa.table(columns, schema=_schema().with_metadata({_WRITER_KEY: json.dumps(writer)}))
    path = out / f"part-{key}.parquet"
    tmp = out / f".{path.name}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def part_files(out: Path) -> list[Path]:
    """The files in the folder ``out`` named like part files, sorted by name.

    Only the name is checked here; :func:`read_results` and :func:`completed_case_ids`
    read a file as results only if the sweep wrote it (module docstring).
    """
    folder = _folder(out)
    if not folder.is_dir():
        raise InputError(f"out: expected a folder written by tumble sweep, got {str(out)!r}")
    return sorted(p for p in folder.iterdir() if _PART.fullmatch(p.name))


def _row_case_id(row: dict[str, Any]) -> str:
    """The ``case_id`` of the case whose grid values are those of ``row``."""
    J = row["inv_inertia"]
    explicit = tuple(float(x) for x in J.split(",")) if J else None
    case = grid.SweepCase(
        row["method"],
        math.nan if explicit else row["min_j"],
        math.nan if explicit else row["median_j"],
        explicit,  # type: ignore[arg-type]
        row["energy"],
        row["steps_per_rotation"],
        row["rotations"],
        row["rate"],
        row["spin"],
    )
    return case.case_id


def _why_foreign(path: Path, table: Any) -> str | None:
    """Why the table read from ``path`` is not this sweep's results, or None if it is."""
    meta = table.schema.metadata or {}
    if _WRITER_KEY not in meta:
        return "no record of tumble's sweep in its metadata"
    try:
        writer = json.loads(meta[_WRITER_KEY])
        version = writer["schema_version"]
    except (ValueError, KeyError, TypeError):
        return "an unreadable record of the sweep that wrote it"
    if version != grid.SCHEMA_VERSION:
        return f"written under schema version {version}, this is {grid.SCHEMA_VERSION}"
    if not table.schema.remove_metadata().equals(_schema()):
        return "columns other than the sweep's"
    ids = table.column("case_id").to_pylist()
    if path.name != f"part-{task_key(ids)}.parquet":
        return "a name that is not the hash of its case ids"
    try:
        if any(_row_case_id(row) != row["case_id"] for row in table.to_pylist()):
            return "rows whose case_id does not match their grid values"
    except (ValueError, TypeError, AttributeError):
        return "rows whose grid values are not a sweep case's"
    return None


def _own_parts(folder: Path) -> list[Any]:
    """The tables of the sweep's own part files in ``folder``; warns about the others."""
    _, pq = _arrow()
    tables, foreign = [], []
    for p in part_files(folder):
        try:
            table = pq.read_table(p)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            why: str | None = f"not a readable Parquet file ({type(exc).__name__})"
        else:
            why = _why_foreign(p, table)
        if why is None:
            tables.append(table)
        else:
            foreign.append(f"{p} ({why})")
    if foreign:
        warnings.warn(
            f"{len(foreign)} file(s) in the sweep folder were not written by this sweep and "
            "are ignored (neither results nor finished cases; move them away): "
            + "; ".join(foreign),
            ForeignFileWarning,
            stacklevel=3,
        )
    return tables


def completed_case_ids(out: Any) -> set[str]:
    """The ``case_id`` of every row already written in the folder ``out`` (empty if none).

    Only the sweep's own part files count (module docstring); the others are reported
    with a :class:`ForeignFileWarning`.
    """
    folder = _folder(out)
    if not folder.is_dir():
        return set()
    return {i for t in _own_parts(folder) for i in t.column("case_id").to_pylist()}


def read_results(out: Any) -> Any:
    """The whole dataset in the folder ``out`` as one ``pyarrow.Table``.

    Columns :data:`tumble.sweep.task.COLUMNS`; an empty table when no task has finished.
    Only the sweep's own part files are read (module docstring); the others are reported
    with a :class:`ForeignFileWarning`.
    """
    pa, _ = _arrow()
    folder = _folder(out)
    if not folder.is_dir():
        raise InputError(f"out: expected a folder written by tumble sweep, got {str(out)!r}")
    tables = [t.replace_schema_metadata(None) for t in _own_parts(folder)]
    if not tables:
        return _schema().empty_table()
    return pa.concat_tables(tables)

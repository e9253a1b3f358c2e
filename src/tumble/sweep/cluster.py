"""Running a sweep on Dask: a local cluster or an existing one, progress, failures.

:func:`run_sweep` builds the grid (:mod:`tumble.sweep.grid`), skips the cases already in
the dataset folder (:mod:`tumble.sweep.dataset`), cuts the rest into tasks and submits
:func:`tumble.sweep.task.run_task` for each. The client writes each finished task's rows
as one Parquet file as soon as it arrives; a worker that dies has its tasks rerun elsewhere
by Dask (tasks are pure functions of their cases). Needs ``distributed`` (the ``sweep``
extra), imported when a cluster is first used.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._validate import as_int
from tumble.sweep import dataset, grid, task
from tumble.sweep.settings import DEFAULT_RETRIES, DEFAULT_TASK_SIZE

__all__ = [
    "DEFAULT_RETRIES",
    "DEFAULT_TASK_SIZE",
    "SweepError",
    "SweepSummary",
    "local_cluster",
    "run_sweep",
]


class SweepError(RuntimeError):
    """Some tasks of a sweep failed even after their retries (the others were written)."""


def local_cluster(workers: int | None = None) -> Any:
    """A ``distributed.LocalCluster`` for a sweep on this machine.

    ``workers`` single-threaded worker processes (default: one per CPU core available to
    this process), on the loopback interface only, no dashboard.
    """
    from distributed import LocalCluster

    n = len(os.sched_getaffinity(0)) if workers is None else as_int(workers, "workers", minimum=1)
    # Ctrl-C in a terminal signals the whole process group. The worker processes inherit an
    # ignored SIGINT (kept across exec), so only this process reacts: it cancels the tasks
    # and closes the cluster in order, instead of every worker dying with a traceback.
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    try:
        return LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # Without a dashboard the scheduler still serves its small HTTP API (health,
            # metrics); a free loopback port keeps it off 8787, which another cluster may
            # hold.
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
        )
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)


class _Progress:
    """Tasks done, runs done and the estimated time left, on one line of ``stream``."""

    def __init__(self, tasks: int, runs: int, stream: TextIO | None) -> None:
        self.tasks, self.runs, self.stream = tasks, runs, stream
        self.done_tasks = self.done_runs = 0
        self.start = self.last = time.monotonic()
        self.tty = stream is not None and stream.isatty()

    def update(self, runs: int) -> None:
        self.done_tasks += 1
        self.done_runs += runs
        now = time.monotonic()
        final = self.done_tasks == self.tasks
        if self.stream is None or not (self.tty or final or now - self.last >= 5.0):
            return
        self.last = now
        elapsed = now - self.start
        left = elapsed / self.done_runs * (self.runs - self.done_runs)
        width = 24
        fill = round(width * self.done_tasks / self.tasks)
        line = (
            f"sweep [{'#' * fill}{'.' * (width - fill)}] {self.done_tasks}/{self.tasks} tasks, "
            f"{self.done_runs}/{self.runs} runs, {_clock(elapsed)} elapsed, "
            f"~{_clock(left)} left"
        )
        end = "\n" if final or not self.tty else ""
        self.stream.write(("\r" if self.tty else "") + line + end)
        self.stream.flush()


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


@dataclass(frozen=True)
class SweepSummary:
    """What :func:`run_sweep` did.

    Attributes
    ----------
    out : Path
        The dataset folder.
    cases : int
        Cases in the grid.
    skipped : int
        Cases already in ``out`` (not rerun).
    tasks : int
        Tasks run (each wrote one Parquet file).
    seconds : float
        Wall time of the run, including starting (and closing) a cluster when this call
        starts one.
    """

    out: Path
    cases: int
    skipped: int
    tasks: int
    seconds: float

    @property
    def runs(self) -> int:
        """Cases run by this call."""
        return self.cases - self.skipped


def run_sweep(
    out: str | os.PathLike[str],
    methods: Sequence[str] | str | None = None,
    min_j: ArrayLike | None = None,
    median_j: ArrayLike | None = None,
    energy: ArrayLike | None = None,
    steps_per_rotation: ArrayLike | None = None,
    rotations: ArrayLike | None = None,
    inv_inertia: ArrayLike | None = None,
    *,
    rate: ArrayLike | None = None,
    spin: ArrayLike | None = None,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    task_size: int = DEFAULT_TASK_SIZE,
    retries: int = DEFAULT_RETRIES,
    progress: bool = True,
    callback: Callable[[int, int, Path], None] | None = None,
) -> SweepSummary:
    """Score every method on every case of the grid, on Dask, into a Parquet dataset.

    The grid is :func:`tumble.sweep.grid.build_grid` of the values given; cases already in
    ``out`` are skipped (resume), the rest are cut into tasks
    (:func:`tumble.sweep.grid.split_tasks`) that run :func:`tumble.sweep.task.run_task` on
    the workers. Each finished task's rows are written at once as one Parquet file in
    ``out`` (atomic). Read the result with :func:`tumble.sweep.dataset.read_results`.

    Parameters
    ----------
    out : str or Path
        Dataset folder (created if missing).
    methods, min_j, median_j, energy, steps_per_rotation, rotations, inv_inertia, rate, spin
        Grid values, as in :func:`tumble.sweep.grid.build_grid` (``rate`` and ``spin``,
        step rates in Hz and spins in revolutions per second, instead of
        ``steps_per_rotation``).
    client : distributed.Client, optional
        Run on this client's cluster (left open).
    scheduler : str, optional
        Address of a running scheduler, ``tcp://HOST:PORT`` (connected and closed here).
    workers : int, optional
        Size of the local cluster started when neither ``client`` nor ``scheduler`` is
        given (:func:`local_cluster`; default one worker per core); closed at the end.
    task_size : int, optional
        Cases per task.
    retries : int, optional
        Reruns of a task that raised.
    progress : bool, optional
        Show a progress line on stderr (tasks, runs, time left).
    callback : callable, optional
        ``callback(tasks_done, tasks_total, path)`` after each file is written.

    Returns
    -------
    SweepSummary

    Raises
    ------
    SweepError
        Tasks that still failed after ``retries`` (every other task was written).
    KeyboardInterrupt
        Re-raised after cancelling the pending tasks and closing what this call opened;
        the files written so far stay, and a rerun resumes.

    Notes
    -----
    A local cluster starts worker processes, so a script calling this must guard its
    top level with ``if __name__ == "__main__":``.
    """
    if sum(x is not None for x in (client, scheduler, workers)) > 1:
        raise InputError("client, scheduler, workers: give at most one of them")
    if workers is not None:
        as_int(workers, "workers", minimum=1)
    if scheduler is not None and not isinstance(scheduler, str):
        raise InputError(
            f"scheduler: expected an address like tcp://HOST:PORT, got {type(scheduler).__name__}"
        )
    cases = grid.build_grid(
        methods, min_j, median_j, energy, steps_per_rotation, rotations, inv_inertia, rate, spin
    )
    size = as_int(task_size, "task_size", minimum=1)
    n_retries = as_int(retries, "retries", minimum=0)
    folder = dataset.prepare_folder(out)
    done = dataset.completed_case_ids(folder)
    todo = [c for c in cases if c.case_id not in done]
    tasks = grid.split_tasks(todo, size)
    start = time.monotonic()
    if tasks:
        _run_tasks(tasks, folder, client, scheduler, workers, n_retries, progress, callback)
    return SweepSummary(folder, len(cases), len(cases) - len(todo), len(tasks),
                        time.monotonic() - start)  # fmt: skip


def _run_tasks(
    tasks: list[list[grid.SweepCase]],
    folder: Path,
    client: Any,
    scheduler: str | None,
    workers: int | None,
    retries: int,
    progress: bool,
    callback: Callable[[int, int, Path], None] | None,
) -> None:
    from distributed import Client, as_completed

    with contextlib.ExitStack() as stack:
        if client is None:
            if scheduler is not None:
                client = stack.enter_context(Client(scheduler, timeout="20s"))
            else:
                cluster = stack.enter_context(local_cluster(workers))
                client = stack.enter_context(Client(cluster))
        bar = _Progress(len(tasks), sum(map(len, tasks)), sys.stderr if progress else None)
        futures = {
            client.submit(
                task.run_task, cases,
                key=f"tumble-sweep-{dataset.task_key(c.case_id for c in cases)}",
                retries=retries,
            ): cases
            for cases in tasks
        }  # fmt: skip
        failed: list[BaseException] = []
        try:
            for future in as_completed(list(futures)):
                done = futures.pop(future)
                ok = future.status == "finished"
                if ok:
                    path = dataset.write_part(folder, future.result())
                else:
                    failed.append(
                        future.exception()
                        if future.status == "error"
                        else RuntimeError(f"task {future.key} ended {future.status}")
                    )
                # Released at once, so that a rerun on the same client computes afresh.
                future.release()
                if not ok:
                    continue
                bar.update(len(done))
                if callback is not None:
                    callback(bar.done_tasks, bar.tasks, path)
        finally:
            if futures:
                with contextlib.suppress(Exception):
                    client.cancel(list(futures))
        if failed:
            raise SweepError(
                f"{len(failed)} of {len(tasks)} tasks failed (the others are written; rerun "
                f"to retry): {type(failed[0]).__name__}: {failed[0]}"
            )

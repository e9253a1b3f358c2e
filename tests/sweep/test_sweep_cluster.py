"""tumble.sweep.cluster: sweeps on Dask, with failures, interruptions and a killed worker.

Oracle: the dataset's case ids against the grid (complete, no duplicates) after a worker is
killed and after an interrupted run is resumed. Clusters run on 127.0.0.1 only; every
process started here is stopped in a `finally`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from sweep_cases import SMALL_GRID, TIMEOUT, assert_complete

from tumble import InputError, sweep
from tumble.cli import main
from tumble.sweep import cluster

distributed = pytest.importorskip("distributed")


def test_run_sweep_validates_before_starting_anything(tmp_path):
    with pytest.raises(InputError, match=r"^task_size:"):
        sweep.run_sweep(tmp_path, ["jolt"], task_size=0)
    with pytest.raises(InputError, match="client, scheduler, workers"):
        sweep.run_sweep(tmp_path, ["jolt"], scheduler="tcp://127.0.0.1:1", workers=1)
    with pytest.raises(InputError, match=r"^workers:"):
        sweep.run_sweep(tmp_path, ["jolt"], workers=0)
    with pytest.raises(InputError, match=r"^scheduler:"):
        sweep.run_sweep(tmp_path, ["jolt"], scheduler=8786)
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match=r"^out:"):
        sweep.run_sweep(tmp_path / "file", ["jolt"])


def test_interrupted_sweep_resumes_without_duplicates(tmp_path, client):
    grid = {**SMALL_GRID, "methods": ["jolt", "rk4"], "inv_inertia": None}
    cases = sweep.build_grid(**grid)
    written = []

    def ctrl_c_after_two_files(done, total, path):
        written.append(path)
        if done == 2:
            raise KeyboardInterrupt

    # The interrupted run starts (and must close) its own single-worker local cluster.
    with pytest.raises(KeyboardInterrupt):
        sweep.run_sweep(
            tmp_path, **grid, workers=1, task_size=3, progress=False,
            callback=ctrl_c_after_two_files,
        )  # fmt: skip
    parts = sorted(tmp_path.glob("part-*.parquet"))
    assert parts == sorted(written)
    assert len(parts) == 2
    assert not list(tmp_path.glob(".part-*"))
    first = sweep.completed_case_ids(tmp_path)
    assert len(first) == 6
    summary = sweep.run_sweep(tmp_path, **grid, client=client, task_size=3, progress=False)
    assert summary.skipped == 6
    assert summary.runs == len(cases) - 6
    assert_complete(tmp_path, cases)


def test_a_failing_task_is_reported_after_the_others_are_written(tmp_path, client):
    good = sweep.build_grid(["jolt"], [0.5], [0.3], [0.2, 0.4], [16], [1])
    # A case build_grid would reject (energy 2): run_task raises InputError on the worker.
    bad = [sweep.SweepCase("jolt", 0.5, 0.3, None, 2.0, 16, 1.0)]
    with pytest.raises(sweep.SweepError, match=r"1 of 2 tasks failed.*energy"):
        cluster._run_tasks([bad, good], tmp_path, client, None, None, 0, False, None)
    assert_complete(tmp_path, good)


# --------------------------------------------------------------------------------------
# a separate scheduler and workers, one of them killed mid-sweep


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_killed_worker_loses_nothing(tmp_path):
    """Two `dask worker` processes (each under its nanny, as deployed); one worker process is
    SIGKILLed once the first file is written. Its nanny starts a new one; the tasks it held
    run again somewhere, and the dataset ends complete without duplicates."""
    psutil = pytest.importorskip("psutil")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", str(port)]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
    worker += ["--death-timeout", "60"]
    loopback = ["--host", "127.0.0.1", "--no-dashboard"]
    procs = [subprocess.Popen([*scheduler, *loopback], **quiet)]
    try:
        procs += [subprocess.Popen([*worker, *loopback], **quiet) for _ in range(2)]
        with distributed.Client(address, timeout=TIMEOUT) as c:
            c.wait_for_workers(2, timeout=TIMEOUT)
            # Load tumble's compiled kernels on both workers before the sweep.
            c.run(lambda: sweep.run_task(sweep.build_grid(["jolt"], rotations=[0.1])))
            victim = min(c.run(os.getpid).values())
        medians = [f"{f:g}" for f in np.linspace(0.05, 0.95, 12)]
        energies = [f"{e:g}" for e in np.linspace(0.02, 0.98, 50)]
        grid = ["--methods", "jolt,momentum_first", "--median-j", ",".join(medians),
                "--energy", ",".join(energies), "--steps-per-rotation", "64",
                "--rotations", "40"]  # fmt: skip
        seen = {}

        def kill_after_first_file():
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                files = list(tmp_path.glob("part-*.parquet"))
                if files:
                    os.kill(victim, signal.SIGKILL)
                    seen["files"] = len(files)
                    return
                time.sleep(0.005)

        watcher = threading.Thread(target=kill_after_first_file, daemon=True)
        watcher.start()
        argv = ["sweep", *grid, "--out", str(tmp_path), "--scheduler", address,
                "--task-size", "50", "--quiet"]  # fmt: skip
        result = {}
        # The sweep waits for workers as long as it takes; the test does not.
        runner = threading.Thread(target=lambda: result.update(rc=main(argv)), daemon=True)
        runner.start()
        runner.join(timeout=2 * TIMEOUT)
        assert not runner.is_alive(), "the sweep did not finish"
        assert result["rc"] == 0
        watcher.join(timeout=TIMEOUT)
        assert not psutil.pid_exists(victim) or psutil.Process(victim).status() == "zombie"
        n_tasks = 2 * 12 * 50 // 50
        assert seen["files"] < n_tasks, "the worker died only after the sweep had finished"
        cases = sweep.build_grid(
            ["jolt", "momentum_first"], [0.5], [float(f) for f in medians],
            [float(e) for e in energies], [64], [40],
        )  # fmt: skip
        assert len(list(tmp_path.glob("part-*.parquet"))) == n_tasks
        assert_complete(tmp_path, cases)
    finally:
        for p in reversed(procs):
            _stop(p)

"""`tumble sweep`: argument errors, Ctrl-C, and a sweep through a scheduler address.

Every process started here is stopped in a `finally`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sweep_cases import TIMEOUT, assert_complete

from tumble import sweep
from tumble.cli import main

pq = pytest.importorskip("pyarrow.parquet")


def test_ctrl_c_on_the_command_stops_cleanly_and_a_rerun_completes(tmp_path, client):
    """A real SIGINT to the command's process group, as Ctrl-C in a terminal sends.

    Each task holds about 5e5 body-steps, scored at every step (about half a second), so
    the signal, sent as soon as the first file appears, always lands mid-run (regression:
    with 200 rotations a warm machine finished all 19 tasks before the signal arrived).
    """
    grid = ["--methods", "jolt", "--median-j", "0.2,0.4,0.6,0.8", "--energy",
            ",".join(f"{e / 20:g}" for e in range(1, 20)), "--rotations", "2000"]  # fmt: skip
    argv = ["sweep", *grid, "--out", str(tmp_path), "--workers", "1", "--task-size", "4"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tumble.cli", *argv], start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT
        while not list(tmp_path.glob("part-*.parquet")) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err
    written = len(sweep.completed_case_ids(tmp_path))
    cases = sweep.build_grid(
        ["jolt"], [0.5], [0.2, 0.4, 0.6, 0.8], [e / 20 for e in range(1, 20)], [64], [2000]
    )
    assert 0 < written < len(cases)
    assert main([*argv[:-4], "--scheduler", client.scheduler.address, "--quiet"]) == 0
    assert_complete(tmp_path, cases)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--energy", "1.5"], "--energy"),
        (["--energy", "0.1,,0.2"], "--energy"),
        (["--methods", "jolt,nope"], "--methods"),
        (["--min-j", "0"], "--min-j"),
        (["--steps-per-rotation", "2.5"], "--steps-per-rotation"),
        (["--inv-inertia", "1,2"], "--inv-inertia"),
        (["--inv-inertia", "1,2,3;1,0,2"], "--inv-inertia"),
        (["--scheduler", "localhost"], "--scheduler"),
        (["--workers", "0"], "--workers"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "not allowed with"),
        (["--task-size", "0"], "--task-size"),
        (["--retries", "-1"], "--retries"),
        (["--rotations", "0.1", "--steps-per-rotation", "1"], "rotations"),
        (["--rotations", "1e9"], "at most 100000 rotations"),
        (["--rotations", "0"], "rotations"),
        (["--steps-per-rotation", "1000000"], "at most 100000 steps"),
    ],
)
def test_sweep_bad_arguments_exit_2_with_one_line(capsys, tmp_path, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--out", str(tmp_path / "out"), *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith("tumble sweep: error:")
    assert message in errors[0]
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_sweep_requires_out(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--methods", "jolt"])
    assert exc.value.code == 2
    assert "--out" in capsys.readouterr().err


def test_command_line_sweep_then_plot(tmp_path, capsys, client):
    """`tumble sweep` end to end through a scheduler address (the module's local cluster)."""
    address = client.scheduler.address
    argv = ["sweep", "--methods", "jolt", "--median-j", "0.3,0.7", "--energy", "0.2,0.6",
            "--steps-per-rotation", "16", "--rotations", "2", "--out", str(tmp_path / "d"),
            "--scheduler", address]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "4 cases: 0 already in" in captured.out
    assert "1/1 tasks" in captured.err
    assert main(argv) == 0
    assert "4 cases: 4 already in" in capsys.readouterr().out
    assert len(pq.read_table(next((tmp_path / "d").glob("part-*.parquet")))) == 4

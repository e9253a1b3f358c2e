"""tumble.sweep and the `tumble sweep` / `tumble sweep-plot` commands.

Oracles: every score of a swept case against direct calls of `tumble.rigid.simulate`,
`tumble.scenarios.score` (the diagnostics), `tumble.exact.body_period` and SciPy's
`CubicHermiteSpline.roots` for the flip; the dataset's case ids against the grid (complete,
no duplicates) after a worker is killed and after an interrupted run is resumed.
Clusters run on 127.0.0.1 only; every process started here is stopped in a `finally`.
"""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from tumble import InputError, exact, rigid, scenarios, sweep, sweep_plot
from tumble.cli import main

distributed = pytest.importorskip("distributed")
pq = pytest.importorskip("pyarrow.parquet")

#: Batched and single-body runs go through the same compiled per-body loop and the same
#: NumPy diagnostics, so they agree to round-off of the batched reductions.
SCORE_RTOL = 1e-12
#: The flip detector bisects the same cubic that SciPy solves in closed form.
FLIP_ATOL = 1e-9
#: The Hermite interpolant of the exact L_b is O(h⁴) accurate; at 32 steps per rotation
#: (h = 0.2) its zero sits within this of the closed-form T/2.
FLIP_EXACT_RTOL = 1e-5
#: Longest wait for a cluster to come up or a sweep to finish in these tests.
TIMEOUT = 90.0

SMALL_GRID = {
    "methods": ["jolt", "momentum_first", "exact", "explicit"],
    "min_j": [0.5],
    "median_j": [0.2, 0.8],
    "energy": [0.0, 0.1, 0.5, 0.9],
    "steps_per_rotation": [4, 32],
    "rotations": [30],
    "inv_inertia": [[1.0, 2.0, 3.0], [0.5, 0.5, 1.5]],
}


@pytest.fixture(scope="module")
def client():
    """A 2-worker local cluster made by the same helper `run_sweep` uses by default."""
    with sweep.local_cluster(2) as cluster, distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=TIMEOUT)
        yield c


@pytest.fixture(scope="module")
def small_sweep(client, tmp_path_factory):
    out = tmp_path_factory.mktemp("small")
    summary = sweep.run_sweep(out, **SMALL_GRID, client=client, task_size=7, progress=False)
    return out, summary


def _ids(cases):
    return [c.case_id for c in cases]


def _rows(out):
    return sweep.read_results(out).to_pylist()


def _assert_complete(out, cases):
    ids = sweep.read_results(out).column("case_id").to_pylist()
    counts = Counter(ids)
    assert not [i for i, n in counts.items() if n > 1], "duplicated cases"
    assert set(ids) == set(_ids(cases))


# --------------------------------------------------------------------------------------
# the grid, tasks and files


def test_grid_is_the_product_of_the_lists():
    cases = sweep.build_grid(**SMALL_GRID)
    bodies = 1 * 2 + 2
    assert len(cases) == 4 * bodies * 4 * 2 * 1
    assert len(set(_ids(cases))) == len(cases)
    assert _ids(sweep.build_grid(**SMALL_GRID)) == _ids(cases)  # deterministic ids
    explicit = [c for c in cases if c.inv_inertia is not None]
    assert len(explicit) == 4 * 2 * 4 * 2
    assert all(math.isnan(c.grid_values()["min_j"]) for c in explicit)
    only_explicit = sweep.build_grid(["rk4"], inv_inertia=[1, 2, 3])
    assert [c.inv_inertia for c in only_explicit] == [(1.0, 2.0, 3.0)]


def test_explicit_body_starts_mid_flip_at_the_energy_fraction():
    for J in ([1.0, 2.0, 3.0], [3.0, 1.0, 2.5], [0.5, 0.5, 1.5]):
        for e in (0.0, 0.3, 1.0):
            case = sweep.SweepCase("rk4", math.nan, math.nan, tuple(J), e, 16, 1).build()
            Lb = case.omega0 / case.inv_inertia  # identity attitude: world = body
            order = np.argsort(J, kind="stable")
            JL = Lb @ (case.inv_inertia * Lb) / (Lb @ Lb)
            Jmin, Jmax = min(J), max(J)
            assert np.isclose(JL, Jmin + e * (Jmax - Jmin), rtol=1e-14)
            assert Lb[order[1]] == 0.0
            assert np.isclose(np.linalg.norm(Lb), 1.0, rtol=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"methods": ["nope"]}, "methods"),
        ({"methods": []}, "methods"),
        ({"min_j": [0.0]}, "min_j"),
        ({"median_j": [1.5]}, "median_j"),
        ({"energy": [-0.1]}, "energy"),
        ({"energy": []}, "energy"),
        ({"energy": [math.nan]}, "energy"),
        ({"steps_per_rotation": [0]}, "steps_per_rotation"),
        ({"steps_per_rotation": [2.5]}, "steps_per_rotation"),
        ({"rotations": [0.0]}, "rotations"),
        ({"rotations": [0.1], "steps_per_rotation": [1]}, "rotations"),
        ({"inv_inertia": [1.0, 2.0]}, "inv_inertia"),
        ({"inv_inertia": [1.0, 0.0, 2.0]}, "inv_inertia"),
    ],
)
def test_bad_grid_raises_input_error_naming_the_argument(kwargs, name):
    with pytest.raises(InputError, match=rf"^{name}:"):
        sweep.build_grid(**kwargs)


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


def test_tasks_group_batches_and_cover_every_case_once():
    cases = sweep.build_grid(**SMALL_GRID)
    tasks = sweep.split_tasks(cases, 7)
    assert all(1 <= len(t) <= 7 for t in tasks)
    assert sorted(_ids(c for t in tasks for c in t)) == sorted(_ids(cases))
    # Sorted by method, steps and duration: a task spans at most two (method, steps) groups
    # when the task size is below the group size.
    for t in tasks:
        assert len({(c.method, c.steps_per_rotation) for c in t}) <= 2


def test_completed_ids_reject_a_damaged_part_file(tmp_path):
    (tmp_path / ("part-" + "0" * 20 + ".parquet")).write_bytes(b"not parquet")
    with pytest.raises(InputError, match=r"^out: cannot read"):
        sweep.completed_case_ids(tmp_path)


# --------------------------------------------------------------------------------------
# the flip


def _hermite_flip(t, Lb, J, band=sweep.FLIP_BAND):
    """The flip by SciPy: the first zero of the Hermite interpolant after |x| reached the
    band, provided x then reaches the band on the other side."""
    mid = np.argsort(J, kind="stable")[1]
    norm0 = np.linalg.norm(Lb[0])
    x = Lb[:, mid] / norm0
    dx = np.cross(Lb, J * Lb)[:, mid] / norm0
    big = np.flatnonzero(np.abs(x) >= band)
    if big.size == 0:
        return math.nan
    a = big[0]
    s = np.sign(x[a])
    roots = CubicHermiteSpline(t, x, dx).roots(extrapolate=False)
    for r in np.sort(roots[roots > t[a]]):
        if np.any(s * x[t > r] <= -band):
            return float(r)
    return math.nan


def test_first_flip_of_the_exact_motion_is_half_the_body_period():
    case = scenarios.article_case(0.5, 0.6, 0.55, 32, 6)
    tr = rigid.simulate(case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, "exact")
    T = float(exact.body_period(case.q0, case.omega0, case.inv_inertia))
    flip = sweep.first_flip_time(tr.t, tr.L_body[:, None], case.inv_inertia[None])[0]
    assert np.isfinite(flip)
    assert flip == pytest.approx(T / 2, rel=FLIP_EXACT_RTOL)
    assert flip == pytest.approx(_hermite_flip(tr.t, tr.L_body, case.inv_inertia), abs=FLIP_ATOL)


def test_flip_ignores_round_off_and_steady_spins():
    t = np.arange(6.0)
    # Round-off-sized wiggles about 0, then a real swing from + to -.
    x = np.array([1e-17, -1e-17, 0.5, 0.9, -0.2, -0.8])
    Lb = np.stack([np.sqrt(1 - x**2), x, np.zeros(6)], axis=-1)[:, None]
    J = np.array([[1.0, 2.0, 3.0]])
    flip = sweep.first_flip_time(t, Lb, J)[0]
    assert 3.0 < flip < 4.0
    steady = np.tile([[[0.0, 1e-12, 1.0]]], (6, 1, 1))
    assert np.isnan(sweep.first_flip_time(t, steady, J)[0])


# --------------------------------------------------------------------------------------
# a sweep on a local cluster, checked case by case


def test_every_score_matches_direct_calls(small_sweep):
    out, summary = small_sweep
    cases = {c.case_id: c for c in sweep.build_grid(**SMALL_GRID)}
    assert summary.runs == len(cases)
    assert summary.skipped == 0
    _assert_complete(out, cases.values())
    rows = _rows(out)
    assert set(rows[0]) == set(sweep.COLUMNS)
    diverged = 0
    for row in rows:
        sc = cases[row["case_id"]]
        for name, value in sc.grid_values().items():
            assert row[name] == value or (math.isnan(row[name]) and math.isnan(value)), name
        case = sc.build()
        with warnings.catch_warnings():
            # The explicit method's blow-up is part of the grid (scored, not warned about).
            warnings.simplefilter("ignore", rigid.DivergenceWarning)
            tr = rigid.simulate(
                case.q0, case.omega0, case.inv_inertia, case.dt, case.steps, sc.method
            )
        ref = scenarios.score(tr, case.inv_inertia)
        assert (row["dt"], row["steps"], row["period"]) == (case.dt, case.steps, case.period)
        for name in ("energy_error", "momentum_drift", "direction_drift", "attitude_error_end"):
            assert np.isfinite(row[name]), name
            assert row[name] == pytest.approx(getattr(ref, name), rel=SCORE_RTOL, abs=1e-300), name
        if ref.diverged_at is None:
            assert math.isnan(row["diverged_at"])
            n = tr.t.shape[0]
        else:
            diverged += 1
            assert row["diverged_at"] == ref.diverged_at
            n = int(np.searchsorted(tr.t, ref.diverged_at))
        T = float(exact.body_period(case.q0, case.omega0, case.inv_inertia))
        expected_exact = T / 2 if 0.0 < sc.energy < 1.0 and np.isfinite(T) else math.inf
        assert row["flip_time_exact"] == pytest.approx(expected_exact, rel=SCORE_RTOL)
        expected = _hermite_flip(tr.t[:n], tr.L_body[:n], case.inv_inertia)
        if math.isnan(expected):
            assert math.isnan(row["flip_time"])
        else:
            assert row["flip_time"] == pytest.approx(expected, abs=FLIP_ATOL)
            assert row["flip_time_error"] == pytest.approx(
                row["flip_time"] / row["flip_time_exact"] - 1.0, rel=SCORE_RTOL
            )
        if sc.method == "exact" and np.isfinite(row["flip_time_exact"]) and n == tr.t.shape[0]:
            if row["flip_time_exact"] < tr.t[-1] and sc.steps_per_rotation == 32:
                assert row["flip_time"] == pytest.approx(
                    row["flip_time_exact"], rel=FLIP_EXACT_RTOL
                )
        assert row["ns_per_step"] > 0
        assert np.isfinite(row["ns_per_step"])
    assert diverged > 0, "the grid should exercise the blow-up path (explicit, 4 steps/rotation)"


def test_rerun_with_the_same_arguments_skips_everything(small_sweep, client):
    out, _ = small_sweep
    before = sorted(p.name for p in out.iterdir())
    summary = sweep.run_sweep(out, **SMALL_GRID, client=client, task_size=5, progress=False)
    assert summary.tasks == 0
    assert summary.skipped == summary.cases
    assert sorted(p.name for p in out.iterdir()) == before


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
    _assert_complete(tmp_path, cases)


def test_a_failing_task_is_reported_after_the_others_are_written(tmp_path, client):
    good = sweep.build_grid(["jolt"], [0.5], [0.3], [0.2, 0.4], [16], [1])
    # A case build_grid would reject (energy 2): run_task raises InputError on the worker.
    bad = [sweep.SweepCase("jolt", 0.5, 0.3, None, 2.0, 16, 1.0)]
    with pytest.raises(sweep.SweepError, match=r"1 of 2 tasks failed.*energy"):
        sweep._run_tasks([bad, good], tmp_path, client, None, None, 0, False, None)
    _assert_complete(tmp_path, good)


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
    _assert_complete(tmp_path, cases)


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
        _assert_complete(tmp_path, cases)
    finally:
        for p in reversed(procs):
            _stop(p)


# --------------------------------------------------------------------------------------
# the command line


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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--x", "nope"], "--x"),
        (["--x", "energy", "--y", "energy"], "--y"),
        (["--score", "nope"], "--score"),
        (["--out", "figure.txt"], "--out"),
    ],
)
def test_sweep_plot_bad_arguments_exit_2_with_one_line(capsys, small_sweep, argv, message):
    out, _ = small_sweep
    with pytest.raises(SystemExit) as exc:
        main(["sweep-plot", str(out), *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith("tumble sweep-plot: error:")
    assert message in errors[0]


def test_sweep_plot_missing_folder_exits_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["sweep-plot", str(tmp_path / "none")])
    assert exc.value.code == 2
    assert "DIR" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".png", ".html"])
def test_sweep_plot_writes_png_and_html(small_sweep, tmp_path, capsys, suffix):
    out, _ = small_sweep
    target = tmp_path / f"maps{suffix}"
    argv = ["sweep-plot", str(out), "--x", "median_j", "--y", "energy",
            "--score", "energy_error,flip_time_error", "--out", str(target)]  # fmt: skip
    assert main(argv) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    data = target.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert b"plotly" in data
        assert b"energy_error" in data


def test_heat_map_cells_reduce_the_other_axes(small_sweep):
    out, _ = small_sweep
    table = sweep.read_results(out)
    methods, xs, ys, grids = sweep_plot.heat_maps(table, "median_j", "energy", ["energy_error"])
    assert "jolt" in methods
    assert xs == [0.2, 0.8]
    assert ys == [0.0, 0.1, 0.5, 0.9]
    rows = [r for r in _rows(out) if r["method"] == "jolt" and not math.isnan(r["median_j"])]
    for i, e in enumerate(ys):
        for j, f in enumerate(xs):
            cell = [r["energy_error"] for r in rows if r["energy"] == e and r["median_j"] == f]
            assert grids[("energy_error", "jolt")][i, j] == max(cell)
    with pytest.raises(InputError, match=r"^y:"):
        sweep_plot.heat_maps(table, "energy", "energy", ["energy_error"])


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

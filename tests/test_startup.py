"""Start-up: a call compiles only what it uses, the cache never serves stale code, a long
compile says what it compiles, ``tumble precompile`` fills the cache, and a new integrator
is one kernel plus one record.

The subprocess tests run from an empty numba cache of their own (``NUMBA_CACHE_DIR``), as a
new user's first call does; their costs are timed by ``tumble bench startup``, not here.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pickle
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from tumble import InputError, exact, methods, precompile, rigid
from tumble._kernels import dispatch, njit
from tumble._kernels.rigid import steps, table
from tumble.cli import main

SRC = Path(__file__).resolve().parents[1] / "src"


def _python(code: str, cache: Path, src: Path = SRC) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(src)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )


def _index_entries(cache: Path, function: str) -> list[str]:
    """The signatures numba's index files of ``function`` (``module.qualname``) hold, as
    text."""
    found = []
    for index in cache.rglob(f"{function}-*.nbi"):
        with open(index, "rb") as f:
            pickle.load(f)  # numba's version
            _stamp, overloads = pickle.loads(f.read())
        found += [str(key[0]) for key in overloads]
    return found


def test_one_method_compiles_and_caches_only_its_own_loop(tmp_path):
    """From an empty cache, one ``simulate`` of ``rk4`` compiles the simulate loop for
    ``rk4`` alone, and no other method's step: the method is a compile-time value. The
    first call also logs what it compiles (INFO on the ``tumble`` logger)."""
    run = _python(
        """
        import logging
        logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
        from tumble import rigid
        rigid.simulate([1.0, 0, 0, 0], [0.1, 2.0, 0.3], [1.0, 0.5, 0.3], 0.01, 10, "rk4")
        """,
        tmp_path,
    )
    # One loop, compiled once: rk4's torque-free simulate entry.
    entries = {p.name.split("-")[0] for p in tmp_path.rglob("loops.*.nbi")}
    assert entries == {"loops._simulate_range__rk4__free"}
    loops = _index_entries(tmp_path, "loops._simulate_range__rk4__free")
    assert len(loops) == 1
    assert loops[0].startswith("(Method[rk4],")
    cached = {p.name.split("-")[0] for p in tmp_path.rglob("*.nbi")}
    others = {f"steps.{name}" for name in dir(steps) if name.startswith("step_")}
    assert not cached & (others | {"flows.free_midpoint", "flows.free_exact"})
    assert re.search(r"^tumble compiling the rk4 loop \(_simulate_range", run.stderr, re.M)


def test_an_edit_to_any_kernel_source_recompiles_what_depends_on_it(tmp_path):
    """numba checks a cached function against its own file only; tumble's cache is keyed
    to every kernel source (``tumble._kernels.cache``), so an edit to a helper in another
    file never runs old machine code. ``body_momentum`` (``_kernels/inertia.py``) calls
    ``pseudo_inverse`` (``_kernels/rigid/common.py``): doubling the latter doubles the
    former's result in the next process."""
    src = tmp_path / "src"
    shutil.copytree(SRC / "tumble", src / "tumble", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    code = """
        from tumble._kernels.inertia import body_momentum
        print(body_momentum((1.0, 0.0, 0.0, 0.0), (1.0, 2.0, 3.0), (0.5, 0.25, 2.0))[1])
    """
    assert float(_python(code, cache, src).stdout) == 8.0
    common = src / "tumble" / "_kernels" / "rigid" / "common.py"
    text = common.read_text()
    assert "1.0 / J[1] if J[1] > 0.0 else 0.0," in text
    common.write_text(text.replace("1.0 / J[1] if J[1] > 0.0", "2.0 / J[1] if J[1] > 0.0"))
    assert float(_python(code, cache, src).stdout) == 16.0


_GUFUNC_MODULE = """
from tumble._kernels import guvectorize

@guvectorize("(n)->(n)")
def double(x, out):
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]
"""

_GUFUNC_BUILDER = """
import sys, time
from pathlib import Path
import numba
import numpy as np
from numba.core import caching
import tumble._kernels

role, flags = sys.argv[1], Path(sys.argv[2])
save = caching.IndexDataCacheFile._save_data


def wait_for(flag):
    deadline = time.monotonic() + 3.0
    while not (flags / flag).exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def interleaved(self, name, data):
    # first: kernel a saved, then second: kernel b and loop b, then first: loop a
    kernel = not name.startswith("guf-")
    if role == "first":
        (flags / ("first-compiled" if kernel else "first-at-loop")).touch()
        wait_for("second-compiled" if kernel else "second-done")
    elif role == "second" and kernel:
        (flags / "second-compiled").touch()
        wait_for("first-kernel-saved")
    save(self, name, data)
    if role == "first" and kernel:
        (flags / "first-kernel-saved").touch()


caching.IndexDataCacheFile._save_data = interleaved
if role == "second":
    numba.njit(lambda x: x + 1.0)(1.0)  # another compile first: numba's symbol counter moves
from gufunc_module import double

print(double(np.arange(3.0))[2])
(flags / f"{role}-done").touch()
"""


def test_two_processes_building_one_gufunc_leave_a_loadable_cache(tmp_path):
    """numba issue 10128: a gufunc's loop names its kernel by a per-process counter, so two
    processes that build one gufunc at once could leave the kernel of one beside the loop of
    the other, and the next process crashed when it loaded them. Here two processes order
    their saves that way (each waits for the other at most 3 s); tumble's lock makes the
    second wait for the first's whole build instead, and a third process loads a consistent
    pair."""
    (tmp_path / "gufunc_module.py").write_text(_GUFUNC_MODULE)
    (tmp_path / "builder.py").write_text(_GUFUNC_BUILDER)
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join([str(SRC), str(tmp_path)]),
    }
    runs = [
        subprocess.Popen(
            [sys.executable, str(tmp_path / "builder.py"), role, str(tmp_path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role in ("first", "second")
    ]
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
        assert float(out) == 4.0
    third = subprocess.run(
        [sys.executable, str(tmp_path / "builder.py"), "third", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert third.returncode == 0, f"exit {third.returncode}: {third.stderr[-2000:]}"
    assert float(third.stdout) == 4.0


def test_first_use_logs_a_long_compile_once(monkeypatch, caplog):
    monkeypatch.setattr(dispatch, "COMPILE_NOTICE_SECONDS", 0.01)
    key = ("test_startup", object())
    release = threading.Event()
    with caplog.at_level(logging.INFO, logger="tumble"):
        with dispatch.first_use(key, lambda: "the test kernel"):
            release.wait(1.0)  # the notice fires while the call is still running
        with dispatch.first_use(key, lambda: "the test kernel"):
            release.wait(0.05)
    notices = [r for r in caplog.records if r.name == "tumble"]
    assert [r.levelno for r in notices] == [logging.INFO]
    assert notices[0].getMessage().startswith("compiling the test kernel (first use")


def test_a_quick_first_use_logs_nothing(caplog):
    with caplog.at_level(logging.INFO, logger="tumble"):
        with dispatch.first_use(("test_startup", object()), lambda: "never said"):
            pass
    assert not [r for r in caplog.records if r.name == "tumble"]


def test_precompile_command_shows_progress_and_each_time(capsys):
    assert (
        main(["precompile", "--methods", "jolt,splitting:suzuki4", "--torque", "none,damped"]) == 0
    )
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert len(lines) == 4
    assert re.match(r"^\[#+\] 4/4 .+: \d+\.\d s$", lines[-1])
    assert "jolt (damped)" in err
    assert "splitting:suzuki4 (torque-free)" in err


def test_precompile_leaves_out_a_torque_for_a_torque_free_method():
    work = precompile.items(["exact", "rk4"], ["none", "heavy-top"])
    assert work == [
        precompile.Item("exact"),
        precompile.Item("rk4"),
        precompile.Item("rk4", "heavy-top"),
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: precompile.items(["rk5"]), r"^methods: expected one of"),
        (lambda: precompile.items("rk4"), r"^methods: expected a sequence"),
        (lambda: precompile.items(["rk4"], ["wind"]), r"^torques: expected names among"),
        (lambda: precompile.Item("exact", "heavy-top"), r"^torque: method 'exact' is torque-free"),
        (lambda: precompile.warm("rk4"), r"^item: expected a tumble.precompile.Item"),
        (lambda: precompile.precompile(["rk4"]), r"^work: expected tumble.precompile.Item"),
        (lambda: precompile.precompile([], jobs=0), r"^jobs: "),
    ],
)
def test_precompile_rejects_bad_input(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_regression_precompile_of_a_0d_array_names_work():
    # The long campaign (issue 27): a 0-d array is an Iterable that cannot be iterated,
    # and list() of it raised NumPy's TypeError.
    for work in (np.array(np.nan), np.full((), 1.0, dtype=np.float32)):
        with pytest.raises(InputError, match=r"^work: expected tumble.precompile.Item"):
            precompile.precompile(work)


def test_precompile_command_rejects_unknown_torques(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["precompile", "--torque", "wind"])
    assert exc.value.code == 2
    assert "--torque" in capsys.readouterr().err


# --------------------------------------------------------------------------------------
# adding an integrator: one kernel, one record, one doc paragraph (not needed for a test)


@njit
def step_toy(q, L, J, I, tb, h):
    """A toy first-order method: two explicit half steps (``steps.step_explicit``)."""
    q, L = steps.step_explicit(q, L, J, I, tb, 0.5 * h)
    return steps.step_explicit(q, L, J, I, tb, 0.5 * h)


def test_a_toy_method_is_one_kernel_and_one_record(monkeypatch):
    """A registered kernel and a record naming it make a method that ``simulate`` and
    ``step`` run like any other (no id to thread through the loops), of first order."""
    monkeypatch.setattr(table, "_KERNELS", dict(table._KERNELS))  # the toy leaves with the test
    table.held("test_toy")(step_toy)
    explicit = methods.method_info("explicit")
    toy = dataclasses.replace(
        explicit, name="test_toy", kernel="test_toy", description="two explicit half steps"
    )
    monkeypatch.setattr(methods, "REGISTRY", (*methods.REGISTRY, toy))
    monkeypatch.setitem(methods._BY_NAME, "test_toy", toy)
    q0, w0, J = [1.0, 0.0, 0.0, 0.0], np.array([0.3, 1.0, -0.2]), np.array([1.0, 0.5, 0.3])
    q1, w1 = rigid.step(q0, w0, J, 0.01, "test_toy")
    qa, wa = rigid.step(q0, w0, J, 0.005, "explicit")
    qb, wb = rigid.step(qa, wa, J, 0.005, "explicit")
    np.testing.assert_allclose(q1, qb, rtol=0, atol=1e-15)
    np.testing.assert_allclose(w1, wb, rtol=0, atol=1e-15)
    errors = []
    for n in (200, 400):
        tr = rigid.simulate(q0, w0, J, 1.0 / n, n, "test_toy", every=n)
        q_exact, _ = exact.torque_free(q0, w0, J, tr.t[-1])
        errors.append(
            float(np.min(np.linalg.norm([tr.q[-1] - q_exact, tr.q[-1] + q_exact], axis=-1)))
        )
    assert 1.8 < errors[0] / errors[1] < 2.2  # first order


def test_read_only_and_broadcast_inputs_reuse_the_compiled_loops():
    """numba types a read-only or strided array apart from a plain one; the loops get plain
    arrays, so such an input (a broadcast state, a frozen array) compiles nothing more."""
    from numba.core import event

    q, w, J = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.1, 2.0, 0.3]), np.array([1.0, 0.5, 0.3])
    frozen = q.copy()
    frozen.flags.writeable = False
    rigid.simulate(q, w, J, 0.01, 10, "jolt")
    rigid.step(q, w, J, 0.01, "jolt")
    rigid.step(q[None], w[None], J[None], 0.01, "jolt")
    compiled: list[str] = []

    class Listener(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    listener = Listener()
    event.register("numba:compile", listener)
    try:
        rigid.simulate(np.broadcast_to(q, (3, 4)), w, J, 0.01, 10, "jolt")
        rigid.simulate(frozen, w, J, 0.01, 10, "jolt")
        rigid.step(frozen, w, J, 0.01, "jolt")
        rigid.step(np.broadcast_to(q, (3, 4)), w[::-1][::-1], J, 0.01, "jolt")
    finally:
        event.unregister("numba:compile", listener)
    assert compiled == []

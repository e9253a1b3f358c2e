"""Benchmark: the first call from an empty numba cache, and again with the cache filled.

Each row is one fresh Python process that runs one first call, timed by the process's own
CPU seconds (user + system of the process and its threads, from ``import`` to the answer),
first with ``NUMBA_CACHE_DIR`` pointing at a new empty folder (a new user, a new Docker
image), then a second process on the same, now filled, folder (every later run). Each
row is the best of ``--rounds`` such pairs; rows run one after another, each with its own
cache, so none profits from another's compilation. Peers: SciPy's ``Rotation`` and MuJoCo
(import and a first answer) in the same run, and the bare interpreter.

Goals (issue 26), CPU seconds from an empty cache:

- ``import tumble`` and the first ``quat_rotate``: 2 s;
- the first ``simulate`` or ``step`` of a first- or second-order method, or of ``rk4``: 5 s;
- ``splitting:suzuki4`` and the other compositions: 15 s;
- the first use of a torque structure with one method: 8 s;
- with the cache filled, each at most 1 s.

The lab from an empty cache (``--lab``, wall seconds from the start of ``tumble lab`` on a
new cache): ``GET /`` answers within 10 s, and the default view's first plot is drawn
within 60 s (headless Debian Chromium, the page opened as soon as ``GET /`` answers).

Usage: ``tumble bench startup [--rounds R] [--rows NAME [NAME ...]] [--lab] [--no-write]``
(row names hold commas and spaces: quote each; ``--lab`` adds the lab's rows).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request

from _common import CHROMIUM, CHROMIUM_ARGS, free_port, machine_line, markdown_table, write_section

STATE = "[1.0, 0.0, 0.0, 0.0], [0.1, 2.0, 0.3], [1.0, 0.5, 0.3]"
SIMULATE = "from tumble import rigid\nrigid.simulate({state}, 0.01, 10, {method!r}{torque})"
STEP = "from tumble import rigid\nrigid.step({state}, 0.01, {method!r})"
GRAVITY = ", torque=torques.gravity(1.0, [0, 0, -9.81], [0, 0, 0.1])"

#: Row name -> (code run in a fresh process, goal in CPU seconds from an empty cache).
ROWS: dict[str, tuple[str, float]] = {
    "python -c pass (floor)": ("pass", 0.0),
    "numba's floor: one trivial cached function": (
        # A module in the cache folder (numba caches functions of files only), written once
        # so that the second process finds its cache entry current.
        "import os, sys\n"
        "folder = os.environ['NUMBA_CACHE_DIR']\n"
        "path = os.path.join(folder, 'floor_module.py')\n"
        "if not os.path.exists(path):\n"
        "    with open(path, 'w') as f:\n"
        "        f.write('import numba\\n@numba.njit(cache=True)\\ndef f(x):\\n'\n"
        "                '    return x + 1.0\\n')\n"
        "sys.path.insert(0, folder)\n"
        "import floor_module\n"
        "floor_module.f(1.0)",
        0.0,
    ),
    "import tumble": ("import tumble", 2.0),
    "rotation.quat_rotate, one vector": (
        "import tumble.rotation as tr\ntr.quat_rotate([1.0, 0, 0, 0], [1.0, 2.0, 3.0])",
        2.0,
    ),
    **{
        f"rigid.simulate {m}, 10 steps": (SIMULATE.format(state=STATE, method=m, torque=""), 5.0)
        for m in ("momentum_first", "rk4", "splitting", "jolt", "symmetric_top_split")
    },
    "rigid.step splitting, one body": (STEP.format(state=STATE, method="splitting"), 5.0),
    **{
        f"rigid.simulate {m}, 10 steps": (SIMULATE.format(state=STATE, method=m, torque=""), 15.0)
        for m in ("splitting:suzuki4", "symmetric_top_split:kahanli6")
    },
    "rigid.simulate splitting, gravity model": (
        "from tumble import torques\n"
        + SIMULATE.format(state=STATE, method="splitting", torque=GRAVITY),
        8.0,
    ),
    "SciPy Rotation.apply, one vector (peer)": (
        "from scipy.spatial.transform import Rotation\n"
        "Rotation.from_quat([0, 0, 0, 1.0]).apply([1.0, 2.0, 3.0])",
        0.0,
    ),
    "MuJoCo mj_step, free body (peer)": (
        "import mujoco\n"
        "m = mujoco.MjModel.from_xml_string('<mujoco><worldbody><body><freejoint/>"
        '<geom size="0.1"/></body></worldbody></mujoco>\')\n'
        "d = mujoco.MjData(m)\nmujoco.mj_step(m, d)",
        0.0,
    ),
}

WARM_GOAL = 1.0
#: The lab from an empty cache, wall seconds from its start: the page, the first plot.
LAB_PAGE_GOAL = 10.0
LAB_PLOT_GOAL = 60.0


def _cpu_seconds(code: str, cache: str) -> float | None:
    """CPU seconds (user + system) of a fresh process running ``code`` with numba's cache
    in ``cache``; None if it failed (a peer that is not installed)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        return None
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(code: str, rounds: int) -> tuple[float | None, float | None]:
    """Best cold and warm CPU seconds of ``code`` over ``rounds`` fresh caches."""
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="tumble-bench-startup-") as cache:
            first = _cpu_seconds(code, cache)
            if first is None:
                return None, None
            cold.append(first)
            second = _cpu_seconds(code, cache)
            if second is not None:
                warm.append(second)
    return min(cold), (min(warm) if warm else None)


def lab_from_empty_cache() -> tuple[float, float] | str:
    """Wall seconds from the start of ``tumble lab`` on an empty cache until ``GET /``
    answers, and until the page (opened then) has drawn its first answer; or why the
    browser part could not run."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "playwright missing"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} missing"
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    code = f"from tumble.cli import main; main(['lab', '--port', '{port}'])"
    with tempfile.TemporaryDirectory(prefix="tumble-bench-lab-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        start = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                try:
                    with urllib.request.urlopen(url, timeout=30) as r:
                        r.read()
                    break
                except OSError:
                    if server.poll() is not None or time.perf_counter() - start > 120:
                        return "the lab did not serve"
                    time.sleep(0.05)
            page_s = time.perf_counter() - start
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1366, "height": 900})
                page.goto(url)
                page.wait_for_function(
                    "window.tumbleLab && tumbleLab.completed >= 1", timeout=900_000
                )
                plot_s = time.perf_counter() - start
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=60)
    return page_s, plot_s


def _lab_section() -> str:
    measured = lab_from_empty_cache()
    if isinstance(measured, str):
        return f"The lab from an empty cache: not measured ({measured})."
    page_s, plot_s = measured
    rows = [
        ["`GET /` answers", f"{page_s:.1f} s", f"{LAB_PAGE_GOAL:g} s",
         "met" if page_s <= LAB_PAGE_GOAL else "MISSED"],
        ["the default view's first plot is drawn", f"{plot_s:.1f} s", f"{LAB_PLOT_GOAL:g} s",
         "met" if plot_s <= LAB_PLOT_GOAL else "MISSED"],
    ]  # fmt: skip
    print(f"lab from an empty cache: GET / {page_s:.1f} s, first plot {plot_s:.1f} s")
    return "\n\n".join(
        [
            "The lab from an empty cache: wall seconds from the start of `tumble lab` with a "
            "new `NUMBA_CACHE_DIR`; headless Debian Chromium opens the page as soon as `GET /` "
            "answers, and the page shows what compiles until its first answer is drawn.",
            markdown_table(["from the start of `tumble lab`", "wall", "goal", "verdict"], rows),
        ]
    )


def _fmt(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench startup", description=__doc__)
    parser.add_argument("--rounds", type=int, default=1, help="cold/warm pairs per row (1)")
    parser.add_argument("--rows", nargs="+", default=[], help="row names, each quoted (all)")
    parser.add_argument("--lab", action="store_true", help="also the lab from an empty cache")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    chosen = args.rows or list(ROWS)
    unknown = [r for r in chosen if r not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {list(ROWS)}")
    rows = []
    for name in chosen:
        code, goal = ROWS[name]
        cold, warm = measure(code, args.rounds)
        if goal:
            met = cold is not None and warm is not None and cold <= goal and warm <= WARM_GOAL
            verdict = f"{goal:g} s / {WARM_GOAL:g} s: {'met' if met else 'MISSED'}"
        else:
            verdict = "(reference)"
        rows.append([name, _fmt(cold), _fmt(warm), verdict])
        print(f"{name}: empty cache {_fmt(cold)}, filled {_fmt(warm)} {verdict}", flush=True)
    body = "\n\n".join(
        [
            "### Start-up: the first call from an empty numba cache (`tumble bench startup`)",
            "CPU seconds (user + system) of a fresh process that imports and makes one first "
            "call, with `NUMBA_CACHE_DIR` a new empty folder, then of a second process on the "
            f"filled folder; best of {args.rounds} pair(s) per row, each row with its own "
            "cache. Goals: empty cache / filled cache.",
            markdown_table(["first call", "empty cache", "filled cache", "goal"], rows),
            *([_lab_section()] if args.lab else []),
        ]
    )
    # write_section adds the machine's line under the body.
    print(body, machine_line(), sep="\n\n")
    if not args.no_write:
        write_section("startup", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

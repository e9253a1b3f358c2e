"""Shared tools for tumble's benchmarks: timing, C references, threads, BENCHMARKS.md.

Every suite (``bench_<name>.py`` with a ``main(argv)``) measures tumble and its peers in
the same run, reports ratios, and rewrites only its own section of ``BENCHMARKS.md``.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import hashlib
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"
BUILD = Path(__file__).resolve().parent / "_build"
SIZES = (1, 10, 1_000, 10_000, 1_000_000)


def best_time(fn: Callable[[], object], *, min_time: float = 0.2, repeat: int = 5) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` rounds of auto-sized loops.

    The minimum over rounds is the least noisy estimate on a shared machine; each round
    runs enough calls to last about ``min_time / repeat`` seconds.
    """
    fn()  # warm-up: compilation, caches, lazy imports
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time / repeat or number >= 1 << 20:
            break
        number *= 2 if elapsed == 0 else max(2, int(min_time / repeat / elapsed) + 1)
    best = elapsed / number
    for _ in range(repeat - 1):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def best_cpu_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best process CPU time of one call of ``fn`` (after a warm-up call).

    Single-threaded contenders are timed by CPU time, not wall time: on this shared
    machine a run is often descheduled for a large part of its wall time, which CPU time
    does not count. (Idle numba worker threads would add to it, making tumble look slower,
    not faster.)
    """
    fn()
    best = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


GLIBC_SETTLED = 32 << 20
"""The ceiling of glibc's dynamic mmap threshold (32 MiB on 64-bit), which a default process
reaches once it has freed a block that large: the best state a default process gets."""

GLIBC_KEEP_ALL = 1 << 30
"""An mmap threshold no array here reaches: every freed block stays mapped for reuse."""


def glibc_mmap_threshold(threshold: int) -> bool:
    """Pin glibc's mmap threshold at ``threshold`` bytes, the trim threshold at twice it.

    By default glibc maps every block above a dynamic threshold (128 kB, rising to at most
    32 MiB as large blocks are freed) afresh, page by page, and unmaps it on ``free``, so
    the speed of a call that allocates large arrays depends on what the process did
    before: SciPy's ``Rotation.apply`` at N = 10⁶ measured from 24 to 58 ms in the same
    build. Pinning the threshold makes every contender see the same allocator. Returns
    False (and changes nothing) if the C library is not glibc.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(
            libc.mallopt(m_mmap_threshold, threshold) == 1
            and libc.mallopt(m_trim_threshold, 2 * threshold) == 1
        )
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Run numba's parallel kernels on ``n`` threads inside the block."""
    old = numba.get_num_threads()
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(old)


def np_qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product of ``(N, 4)`` scalar-first quaternions, as the NumPy peers write it."""
    pw, px, py, pz = p.T
    qw, qx, qy, qz = q.T
    return np.stack(
        [
            pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
        ],
        axis=-1,
    )


C_QUATERNIONS = r"""
#include <math.h>

typedef struct { double x, y, z; } v3;
typedef struct { double w, x, y, z; } qt;

static inline v3 cross(v3 a, v3 b) {
    v3 r = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
    return r;
}
static inline double dot(v3 a, v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline v3 add(v3 a, v3 b) { v3 r = {a.x + b.x, a.y + b.y, a.z + b.z}; return r; }
static inline v3 mul(v3 a, v3 b) { v3 r = {a.x * b.x, a.y * b.y, a.z * b.z}; return r; }
static inline v3 scale(v3 a, double s) { v3 r = {a.x * s, a.y * s, a.z * s}; return r; }
static inline v3 axpy(v3 a, double s, v3 b) {
    v3 r = {a.x + s * b.x, a.y + s * b.y, a.z + s * b.z};
    return r;
}
static inline qt qmul(qt p, qt q) {
    qt r = {p.w * q.w - p.x * q.x - p.y * q.y - p.z * q.z,
            p.w * q.x + p.x * q.w + p.y * q.z - p.z * q.y,
            p.w * q.y - p.x * q.z + p.y * q.w + p.z * q.x,
            p.w * q.z + p.x * q.y - p.y * q.x + p.z * q.w};
    return r;
}
static inline qt qconj(qt q) { qt r = {q.w, -q.x, -q.y, -q.z}; return r; }
static inline qt qnormalize(qt q) {
    double inv = 1.0 / sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    qt r = {q.w * inv, q.x * inv, q.y * inv, q.z * inv};
    return r;
}
static inline qt q_axpy(qt a, double s, qt b) {
    qt r = {a.w + s * b.w, a.x + s * b.x, a.y + s * b.y, a.z + s * b.z};
    return r;
}
static inline v3 qrotate(qt q, v3 v) {
    v3 u = {q.x, q.y, q.z};
    v3 c = cross(u, v);
    v3 t = {2.0 * c.x, 2.0 * c.y, 2.0 * c.z};
    v3 d = cross(u, t);
    v3 r = {v.x + q.w * t.x + d.x, v.y + q.w * t.y + d.y, v.z + q.w * t.z + d.z};
    return r;
}
"""
"""The C references' vectors and quaternions (scalar first), written as tumble's kernels
write them (``tumble._kernels.rotation``), so that a C twin of a kernel rounds alike."""


def c_compiler() -> str | None:
    """Path of the system C compiler, or None (callers then skip the C column with a note)."""
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def compile_c(source: str, flags: tuple[str, ...] = ("-O3", "-march=native")) -> ctypes.CDLL | None:
    """Compile ``source`` into a shared library at benchmark time and load it.

    Returns None when no C compiler exists. Libraries are cached in ``benchmarks/_build``
    by a hash of source and flags. No fast-math unless the caller passes it explicitly.
    """
    cc = c_compiler()
    if cc is None:
        return None
    BUILD.mkdir(exist_ok=True)
    digest = hashlib.sha1((source + " ".join(flags)).encode()).hexdigest()[:16]
    lib = BUILD / f"ref_{digest}.so"
    if not lib.exists():
        src = BUILD / f"ref_{digest}.c"
        src.write_text(source)
        subprocess.run(
            [cc, *flags, "-fPIC", "-shared", "-o", str(lib), str(src), "-lm"],
            check=True,
            capture_output=True,
        )
    return ctypes.CDLL(str(lib))


def c_pointer(a: np.ndarray) -> ctypes.c_void_p:
    """A ctypes pointer to a C-contiguous array's data."""
    assert a.flags.c_contiguous
    return ctypes.c_void_p(a.ctypes.data)


def machine_line() -> str:
    """One line naming the machine and the versions behind a measurement."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{datetime.date.today().isoformat()}, {cpu}, {os.cpu_count()} cores (load average "
        f"{load} over 1, 5, 15 min at the end), Python {platform.python_version()}, NumPy "
        f"{np.__version__}, numba {numba.__version__}"
    )


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_time(seconds: float) -> str:
    """A time with a unit that keeps three significant digits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def write_section(name: str, body: str) -> None:
    """Replace (or append) the ``name`` section of BENCHMARKS.md with ``body``.

    Sections are delimited by HTML comments so that suites run independently and never
    overwrite each other's numbers.
    """
    start, end = f"<!-- bench:{name} start -->", f"<!-- bench:{name} end -->"
    block = f"{start}\n{body.strip()}\n\n_Measured {machine_line()}._\n{end}"
    text = (
        BENCHMARKS_MD.read_text()
        if BENCHMARKS_MD.exists()
        else (
            "# Benchmarks\n\nEach section is written by `tumble bench NAME` (see `benchmarks/`); "
            "every ratio compares tools measured in the same run.\n"
        )
    )
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else f"{text}\n{block}\n"
    BENCHMARKS_MD.write_text(text)


#: Debian's Chromium for the browser rows (TUMBLE_CHROMIUM points at another build), and
#: the flags known to work headless in a closed sandbox.
CHROMIUM = Path(os.environ.get("TUMBLE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

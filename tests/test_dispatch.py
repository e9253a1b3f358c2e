"""``tumble._kernels.dispatch.run_split``: the Python-thread split of the loops that take a
torque model. Model-based: the ranges against ``range``, failures against what a caller
must see, and a forked child (``multiprocessing``'s default start on Linux)."""

from __future__ import annotations

import itertools
import multiprocessing
import sys
import threading
import time

import numba
import pytest

from tumble._kernels import dispatch

pytestmark = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread: nothing is split"
)


@pytest.fixture(autouse=True)
def two_threads():
    threads = numba.get_num_threads()
    numba.set_num_threads(2)
    yield
    numba.set_num_threads(threads)


@pytest.mark.parametrize("count", [2, 3, 10, 20_001])
def test_the_ranges_cover_the_batch_once_in_order(count):
    seen: list[int] = []
    lock = threading.Lock()

    def run(start, stop):
        with lock:
            seen.extend(range(start, stop))
        return (start, stop)

    ranges = dispatch.run_split(run, count, parallel=True)
    assert len(ranges) == 2
    assert ranges[0][0] == 0
    assert ranges[-1][1] == count
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert sorted(seen) == list(range(count))
    assert dispatch.run_split(run, count, parallel=False) == [(0, count)]


def test_a_failing_caller_range_waits_for_the_workers_and_reports_theirs():
    finished: list[int] = []

    def run(start, stop):
        if start == 0:
            raise ValueError("caller's range")
        time.sleep(0.3)
        finished.append(start)
        raise RuntimeError("worker's range")

    with pytest.raises(ValueError, match="caller's range") as info:
        dispatch.run_split(run, 10, parallel=True)
    assert finished == [5]  # the worker ended before the call returned
    if sys.version_info >= (3, 11):
        assert any("worker's range" in note for note in info.value.__notes__)


def test_a_failing_worker_range_is_raised():
    def run(start, stop):
        if start > 0:
            raise RuntimeError("worker's range")
        return stop

    with pytest.raises(RuntimeError, match="worker's range"):
        dispatch.run_split(run, 10, parallel=True)


def _split_in_child(queue):
    numba.set_num_threads(2)
    queue.put(dispatch.run_split(lambda a, b: b - a, 10, parallel=True))


@pytest.mark.skipif(sys.platform != "linux", reason="fork is the default start only on Linux")
def test_a_forked_child_gets_its_own_pool():
    """The parent's pool has threads the child lacks: the child must not submit to it."""
    assert dispatch.run_split(lambda a, b: b - a, 10, parallel=True) == [5, 5]
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_split_in_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung, "the forked child hung on the parent's thread pool"
    assert queue.get(timeout=5) == [5, 5]

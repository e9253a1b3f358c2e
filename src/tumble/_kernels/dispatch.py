"""The one dispatch layer in front of the kernels: when to use threads, and how not to.

Public modules validate, then hand flat arrays to a kernel here or in a sibling module.
Two decisions are made in this one place:

* :func:`use_parallel` decides whether a batch is large enough for a ``prange`` kernel to
  pay for waking numba's thread pool (below :data:`PARALLEL_MIN_SIZE` elements the serial
  loop wins, and a small batch never touches the pool);
* :func:`single_thread` runs a block of parallel kernels on the calling thread only, for
  callers that already run one job per core (sweep workers), serve one body per request
  (the lab), or time a single body (scenarios).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import numba

#: Batches at least this large run the ``prange`` loops (when numba has more than one
#: thread); below it, thread start-up costs more than it saves.
PARALLEL_MIN_SIZE = 20_000

_workqueue_lock = threading.Lock()
_layer: str | None = None


def use_parallel(size: int) -> bool:
    """Whether a loop over ``size`` elements should run on numba's thread pool."""
    return size >= PARALLEL_MIN_SIZE and numba.get_num_threads() > 1


def _threading_layer() -> str | None:
    """numba's threading layer, or None before the first parallel kernel has run."""
    global _layer
    if _layer is None:
        with contextlib.suppress(ValueError):
            _layer = numba.threading_layer()
    return _layer


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """Run numba's parallel kernels on the calling thread only, for the block.

    ``set_num_threads`` is per calling thread, so concurrent callers do not interfere. The
    ``workqueue`` threading layer (numba's fallback when neither OpenMP nor TBB is
    available) must not be entered from two threads at once: with it, or before the layer
    is known, callers take turns.
    """
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        if _threading_layer() in (None, "workqueue"):
            with _workqueue_lock:
                yield
        else:
            yield
    finally:
        numba.set_num_threads(old)

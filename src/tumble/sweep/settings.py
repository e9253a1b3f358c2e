"""Defaults of a sweep's run: plain data, so that ``tumble sweep --help`` shows them without
loading the kernels (:mod:`tumble.sweep.cluster` uses them, and re-exports them)."""

from __future__ import annotations

__all__ = ["DEFAULT_RETRIES", "DEFAULT_SPIN", "DEFAULT_TASK_SIZE"]

#: Default cases per task: enough that the batched ``simulate`` amortises its overhead,
#: small enough that a sweep of a few thousand runs still feeds several workers.
DEFAULT_TASK_SIZE = 200

#: Reruns of a task that raised (a worker that dies is handled by Dask separately).
DEFAULT_RETRIES = 2

#: Initial spin ``|ω(0)| / 2π`` of the bodies of a sweep over step rates (``rate``), in
#: revolutions per second, when ``spin`` is not given: a body thrown with one turn a second.
DEFAULT_SPIN = 1.0

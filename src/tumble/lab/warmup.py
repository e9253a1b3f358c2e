"""The lab's start-up work on a worker thread: load or compile what requests need, in order.

From an empty numba cache a method's compiled loops take seconds to build, and the first
computation that uses a method builds them. The server does not make the first visitor
wait for all of them: it answers at once, and a :class:`WarmUp` runs the start-up
:class:`Task` s (one per method, per torque scenario, as :func:`tumble.lab.api.warm_up_plan`
orders them) one after the other on a daemon thread. A request whose tasks are not done
yet moves them to the front of the queue (:meth:`WarmUp.ensure`), and the page shows what
it waits for (``docs/lab.md``).

Threads: tumble's kernels release the GIL while they run (``nogil``), but numba's compiler
is mostly Python and holds it, so the worker and the server's threads share the
interpreter in the usual slices of ``sys.getswitchinterval()`` (5 ms): a page or a small
request waits a few slices, not for a compile (``docs/lab.md`` has the measured latency).
One worker is enough: numba compiles under one process-wide lock, so a second worker would
only wait for it. A request that computes while the worker compiles its kernel waits on
that same lock, and numba compiles each kernel once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tumble._errors import InputError
from tumble._validate import check_callable, describe

__all__ = ["LASTING_S", "Task", "WarmUp"]

#: A task that took this long compiled something (loading a method's loops from numba's
#: cache takes milliseconds): its console line stays on a terminal, a quicker one does not.
LASTING_S = 1.0


@dataclass(frozen=True)
class Task:
    """One unit of start-up work.

    Attributes
    ----------
    key : hashable
        What the task makes ready (for the lab ``(torque, method)``); two tasks with one key
        are the same work.
    label : str
        What the page and the console call it (``"jolt"``, ``"jolt (heavy-top)"``).
    run : callable
        Does the work, with no argument; its result is dropped.
    """

    key: Hashable
    label: str
    run: Callable[[], object]

    def __post_init__(self) -> None:
        try:
            hash(self.key)
        except TypeError:
            raise InputError(f"key: expected a hashable value, got {describe(self.key)}") from None
        if not isinstance(self.label, str) or not self.label:
            raise InputError(f"label: expected a non-empty str, got {describe(self.label)}")
        check_callable(self.run, "run", 0)


def _first_of_each(tasks: Iterable[Task]) -> list[Task]:
    """``tasks`` without the repeats of a key (the first of each, in order)."""
    first: dict[Hashable, Task] = {}
    for task in tasks:
        first.setdefault(task.key, task)
    return list(first.values())


class WarmUp:
    """Runs :class:`Task` s on one daemon thread, in queue order, and reports progress.

    Parameters
    ----------
    tasks : iterable of Task
        The start-up work in the order to do it (a repeated key runs once, first place).
    before_task : callable, optional
        ``before_task(task)``, called on the worker thread once ``task`` is the running one
        and before it runs. A test holds the warm-up here (waiting on an event) to see the
        page while a task is "compiling".
    log : callable, optional
        ``log(line, transient)`` for the console: ``"[3/85] jolt..."`` when a task starts
        and ``"[3/85] jolt: 2.1 s"`` when it ends, both ``transient`` (a terminal may write
        the next line over them) unless the task took :data:`LASTING_S` or more or failed;
        and a last line when all are done.

    Nothing runs before :meth:`start`. A task that raises is logged and counted as done
    (``failed`` in :meth:`status`): the request that needs it then computes on its own
    thread and reports the error as any request does.
    """

    def __init__(
        self,
        tasks: Iterable[Task],
        *,
        before_task: Callable[[Task], object] | None = None,
        log: Callable[[str, bool], object] | None = None,
    ) -> None:
        try:
            given = list(tasks)
        except TypeError:
            raise InputError(
                f"tasks: expected an iterable of Task, got {describe(tasks)}"
            ) from None
        for i, task in enumerate(given):
            if not isinstance(task, Task):
                raise InputError(f"tasks[{i}]: expected a Task, got {describe(task)}")
        if before_task is not None:
            check_callable(before_task, "before_task", 1)
        if log is not None:
            check_callable(log, "log", 2)
        self._queue = _first_of_each(given)
        self._before = before_task
        self._log = log
        self._cond = threading.Condition()
        self._done: dict[Hashable, str] = {}  # key -> label, in the order they finished
        self._failed: list[str] = []
        self._running: Task | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._started = 0.0
        self._seconds: float | None = None  # the whole warm-up, once it has ended

    def start(self) -> None:
        """Start the worker thread (once; later calls do nothing)."""
        with self._cond:
            if self._thread is not None:
                return
            self._started = time.perf_counter()
            self._spawn()

    def _spawn(self) -> None:
        """Start a worker thread on the queue (under the lock)."""
        self._seconds = None
        self._thread = threading.Thread(target=self._work, name="tumble-lab-warm-up")
        # Daemon: a compile cannot be interrupted, and Ctrl+C must not wait for it.
        self._thread.daemon = True
        self._thread.start()

    def _resume(self) -> None:
        """Start the worker again (under the lock) if it ended with the queue empty and work
        has come since: a request for a method the plan lacks, after the warm-up."""
        ended = self._thread is not None and self._seconds is not None
        if ended and self._queue and not self._stopping:
            self._spawn()

    def add(self, tasks: Sequence[Task], *, first: bool = False) -> None:
        """Queue the ``tasks`` whose keys are new (done, running and queued ones stay where
        they are): at the end, or with ``first`` at the front (behind the running task).
        A running task may add more; once the worker has ended, added tasks start it again
        (not after :meth:`stop`)."""
        new = self._checked(tasks)
        with self._cond:
            known = set(self._done) | {t.key for t in self._queue}
            if self._running is not None:
                known.add(self._running.key)
            new = [t for t in new if t.key not in known]
            self._queue = new + self._queue if first else self._queue + new
            self._resume()

    def stop(self) -> None:
        """Ask the worker to stop after its current task (the server is shutting down)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every task has run (or the worker stopped); True if all ran."""
        with self._cond:
            self._cond.wait_for(lambda: self._seconds is not None, timeout)
            return not self._queue and self._running is None

    def status(self) -> dict[str, Any]:
        """The body of ``GET /api/status``: ``state`` (``"waiting"`` before :meth:`start`,
        ``"compiling"``, ``"ready"`` or ``"stopped"``), tasks ``done`` of ``total``, the
        ``running`` task's label (or None), the labels that ``failed``, and ``seconds``
        since the start (the whole warm-up's once it has ended)."""
        with self._cond:
            if self._thread is None:
                state = "waiting"
            elif self._seconds is None:
                state = "compiling"
            else:
                state = "stopped" if self._queue else "ready"
            seconds = self._seconds if self._seconds is not None else self._elapsed()
            running = self._running
            return {
                "state": state,
                "done": len(self._done),
                "total": self._total(),
                "running": None if running is None else running.label,
                "failed": list(self._failed),
                "seconds": round(seconds, 3),
            }

    def ensure(self, tasks: Sequence[Task]) -> dict[str, Any] | None:
        """None if every one of ``tasks`` has run; otherwise move those not done to the
        front of the queue (in the given order, behind the running task; a key the queue
        lacks, such as a composed method, is added) and say what is still to do.

        Returns
        -------
        dict or None
            ``{"message", "running", "pending", "done", "total"}``: ``pending`` the labels
            of ``tasks`` not done yet (the running one first), ``done`` of ``total`` counts
            ``tasks`` only, ``running`` is the worker's task (it may be another request's),
            and ``message`` says it in one line: ``"compiling jolt (3 of 6)"``.
        """
        wanted = self._checked(tasks)
        with self._cond:
            running = self._running
            pending = [t for t in wanted if t.key not in self._done]
            if not pending:
                return None
            ahead = {t.key for t in pending}
            rest = [t for t in self._queue if t.key not in ahead]
            self._queue = [t for t in pending if running is None or t.key != running.key] + rest
            self._resume()
            if running is not None and running.key in ahead:
                pending.sort(key=lambda t: t.key != running.key)  # stable: running first
            done = len(wanted) - len(pending)
            first = pending[0].label
            where = f"({done + 1} of {len(wanted)})"
            if running is None or running.key == pending[0].key:
                message = f"compiling {first} {where}"
            else:
                message = f"finishing {running.label}, then compiling {first} {where}"
            return {
                "message": message,
                "running": None if running is None else running.label,
                "pending": [t.label for t in pending],
                "done": done,
                "total": len(wanted),
            }

    # ------------------------------------------------------------------ the worker

    @staticmethod
    def _checked(tasks: Sequence[Task]) -> list[Task]:
        """``tasks`` validated, without repeated keys."""
        if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Sequence):
            raise InputError(f"tasks: expected a sequence of Task, got {describe(tasks)}")
        for i, task in enumerate(tasks):
            if not isinstance(task, Task):
                raise InputError(f"tasks[{i}]: expected a Task, got {describe(task)}")
        return _first_of_each(tasks)

    def _elapsed(self) -> float:
        return time.perf_counter() - self._started if self._thread is not None else 0.0

    def _total(self) -> int:
        return len(self._done) + len(self._queue) + (self._running is not None)

    def _say(self, line: str, transient: bool) -> None:
        if self._log is not None:
            self._log(line, transient)

    def _work(self) -> None:
        while True:
            with self._cond:
                if self._stopping or not self._queue:
                    self._seconds = self._elapsed()
                    self._cond.notify_all()
                    left = len(self._queue)
                    break
                task = self._running = self._queue.pop(0)
                place = f"[{len(self._done) + 1}/{self._total()}]"
            self._say(f"{place} {task.label}...", True)
            start = time.perf_counter()
            failure = None
            try:
                if self._before is not None:
                    self._before(task)
                task.run()
            # Any failure: the server keeps serving, and the request that needs this work
            # computes it again on its own thread, where the error reaches the page.
            except Exception as exc:
                failure = f"{type(exc).__name__}: {exc}"
            seconds = time.perf_counter() - start
            with self._cond:
                self._done[task.key] = task.label
                self._running = None
                if failure is not None:
                    self._failed.append(task.label)
                self._cond.notify_all()
            if failure is None:
                self._say(f"{place} {task.label}: {seconds:.1f} s", seconds < LASTING_S)
            else:
                self._say(f"{place} {task.label} FAILED after {seconds:.1f} s: {failure}", False)
        if left:
            self._say(f"warm-up stopped with {left} tasks not run", False)
        else:
            self._say(
                f"warm-up done: {len(self._done)} tasks in {self._seconds:.1f} s"
                + (f", {len(self._failed)} failed" if self._failed else ""),
                False,
            )

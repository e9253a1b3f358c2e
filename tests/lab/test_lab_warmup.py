"""tumble.lab.warmup: the start-up worker, with plain Python tasks (no numba).

Its order, its priorities (a request's tasks jump the queue), what it says to a request and
to the console, a failing task, and stopping; the lab's plan is in test_lab_startup.py.
"""

from __future__ import annotations

import re
import threading

import pytest

from conftest import Gate
from tumble import InputError
from tumble.lab.warmup import Task, WarmUp

#: Seconds a test waits for the worker at most (it runs trivial tasks).
TIMEOUT_S = 30


def tasks_of(names: str, ran: list[str]) -> list[Task]:
    """One task per letter, keyed by it, that records its run in ``ran``."""
    return [Task(n, f"task {n}", lambda n=n: ran.append(n)) for n in names]


def test_tasks_run_once_each_in_order_then_ready() -> None:
    ran: list[str] = []
    runner = WarmUp([*tasks_of("abc", ran), *tasks_of("b", ran)])  # "b" again: same work
    assert runner.status()["state"] == "waiting"
    assert ran == []  # nothing before start
    runner.start()
    runner.start()  # a second start does nothing
    assert runner.wait(TIMEOUT_S)
    assert ran == ["a", "b", "c"]
    status = runner.status()
    assert status["state"] == "ready"
    assert (status["done"], status["total"], status["running"]) == (3, 3, None)
    assert status["failed"] == []
    assert status["seconds"] >= 0
    assert runner.ensure(tasks_of("ca", [])) is None  # all done: nothing to wait for


def test_a_request_moves_its_tasks_to_the_front_and_is_told_what_runs() -> None:
    ran: list[str] = []
    gate = Gate()
    runner = WarmUp(tasks_of("abcdef", ran), before_task=gate)
    runner.start()
    gate.wait_holding("task a")
    # A request that needs e and d (queued) and x (not in the plan) waits for a first.
    wanted = tasks_of("edx", ran)
    assert runner.ensure(wanted) == {
        "message": "finishing task a, then compiling task e (1 of 3)",
        "running": "task a",
        "pending": ["task e", "task d", "task x"],
        "done": 0,
        "total": 3,
    }
    # One that needs the running task too hears about that one first.
    answer = runner.ensure(tasks_of("da", ran))
    assert answer is not None
    assert answer["message"] == "compiling task a (1 of 2)"
    assert answer["pending"] == ["task a", "task d"]
    # The latest request's tasks go first: d, then e and x.
    gate.let_through()
    gate.wait_holding("task d")
    answer = runner.ensure(wanted)
    assert answer is not None
    assert answer["message"] == "compiling task d (1 of 3)"
    assert answer["pending"] == ["task d", "task e", "task x"]
    status = runner.status()
    assert (status["state"], status["done"], status["total"]) == ("compiling", 1, 7)
    assert status["running"] == "task d"
    gate.let_through()
    gate.wait_holding("task e")
    answer = runner.ensure(tasks_of("ade", ran))
    assert answer is not None
    assert answer["message"] == "compiling task e (3 of 3)"
    gate.open()
    assert runner.wait(TIMEOUT_S)
    # The requests' tasks ran right behind the running one, then the plan went on.
    assert ran == ["a", "d", "e", "x", "b", "c", "f"]
    assert runner.ensure(wanted) is None


def test_added_tasks_go_first_or_last_and_a_task_may_add_more() -> None:
    ran: list[str] = []
    runner = WarmUp(tasks_of("bc", ran))
    # The first task queues the rest of the plan as it runs (the lab's API load does).
    runner.add([Task("a", "task a", lambda: ran.append("a") or runner.add(tasks_of("cde", ran)))],
               first=True)  # fmt: skip
    runner.add(tasks_of("ab", ran))  # known keys stay where they are
    assert runner.status()["total"] == 3
    runner.start()
    assert runner.wait(TIMEOUT_S)
    assert ran == ["a", "b", "c", "d", "e"]
    assert runner.status()["total"] == 5


def test_a_failing_task_is_logged_counted_and_the_rest_runs() -> None:
    lines: list[tuple[str, bool]] = []

    def broken() -> None:
        raise RuntimeError("no luck")

    ran: list[str] = []
    runner = WarmUp(
        [Task("bad", "bad one", broken), *tasks_of("z", ran)],
        log=lambda line, transient: lines.append((line, transient)),
    )
    runner.start()
    assert runner.wait(TIMEOUT_S)
    assert ran == ["z"]
    status = runner.status()
    assert status["failed"] == ["bad one"]
    assert status["done"] == 2
    assert runner.ensure([Task("bad", "bad one", broken)]) is None  # the request computes
    assert lines[0] == ("[1/2] bad one...", True)
    assert lines[1][0].startswith("[1/2] bad one FAILED after ")
    assert lines[1][0].endswith("RuntimeError: no luck")
    assert lines[1][1] is False
    assert lines[2] == ("[2/2] task z...", True)
    # Within a second: loaded, not compiled, so a terminal may overwrite the line.
    assert lines[3][0].startswith("[2/2] task z: ")
    assert lines[3][1] is True
    assert lines[-1][0].startswith("warm-up done: 2 tasks in ")
    assert lines[-1][0].endswith(", 1 failed")
    assert lines[-1][1] is False


def test_a_task_of_a_second_or_more_stays_on_the_console() -> None:
    lines: list[tuple[str, bool]] = []
    done = threading.Event()
    runner = WarmUp(
        [Task("slow", "slow one", lambda: done.wait(1.05))],
        log=lambda line, transient: lines.append((line, transient)),
    )
    runner.start()
    assert runner.wait(TIMEOUT_S)
    assert lines[1][0].startswith("[1/1] slow one: 1.")
    assert lines[1][1] is False


def test_work_that_comes_after_the_warm_up_ended_runs() -> None:
    # A request for a method the plan lacks (a composition), once the plan has run: the
    # worker starts again, or the page would wait on "compiling" for ever.
    ran: list[str] = []
    runner = WarmUp(tasks_of("a", ran))
    runner.start()
    assert runner.wait(TIMEOUT_S)
    waiting = runner.ensure(tasks_of("ab", ran))
    assert waiting is not None
    assert waiting["pending"] == ["task b"]
    assert runner.wait(TIMEOUT_S)
    runner.add(tasks_of("c", ran))
    assert runner.wait(TIMEOUT_S)
    assert ran == ["a", "b", "c"]
    assert runner.ensure(tasks_of("abc", [])) is None
    assert runner.status()["state"] == "ready"
    assert runner.status()["done"] == 3


def test_stop_leaves_the_rest_of_the_queue() -> None:
    ran: list[str] = []
    gate = Gate()
    lines: list[str] = []
    runner = WarmUp(
        tasks_of("abc", ran), before_task=gate, log=lambda line, transient: lines.append(line)
    )
    runner.start()
    gate.wait_holding("task a")
    runner.stop()
    gate.open()
    assert not runner.wait(TIMEOUT_S)  # ended, but not everything ran
    assert ran == ["a"]
    assert runner.status()["state"] == "stopped"
    assert lines[-1] == "warm-up stopped with 2 tasks not run"


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: Task([1], "x", lambda: None), "key"),
        (lambda: Task("k", "", lambda: None), "label"),
        (lambda: Task("k", 3, lambda: None), "label"),
        (lambda: Task("k", "x", 5), "run"),
        (lambda: Task("k", "x", lambda a: None), "run"),
        (lambda: WarmUp(5), "tasks"),
        (lambda: WarmUp(["a"]), "tasks[0]"),
        (lambda: WarmUp([], before_task="x"), "before_task"),
        (lambda: WarmUp([], log=lambda line: None), "log"),
        (lambda: WarmUp([]).ensure("ab"), "tasks"),
        (lambda: WarmUp([]).ensure([None]), "tasks[0]"),
        (lambda: WarmUp([]).add(Task("k", "x", lambda: None)), "tasks"),
    ],
)
def test_bad_input_names_the_argument(make, name) -> None:
    with pytest.raises(InputError, match=f"^{re.escape(name)}: "):
        make()

"""Benchmark: start-up time of the ``tumble`` command (warm: modules cached, no compilation).

Each contender is a fresh process, timed from spawn to exit, best and median of ``--rounds``
runs after one warm-up run:

- ``tumble --help``: the top-level help, which must import no subcommand;
- ``tumble compare --help`` and ``tumble sweep --help``: a subcommand's help, which imports
  that subcommand's module (and with it numba and the kernels' modules, not their code);
- ``python -c pass``: the interpreter alone, the floor.

Goal (issue 13): ``tumble --help`` in at most 0.3 s on a warm machine.

Usage: ``tumble bench cli [--rounds R] [--no-write]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from _common import fmt_time, markdown_table, write_section

GOAL_S = 0.3

COMMANDS = {
    "tumble --help": ["-m", "tumble.cli", "--help"],
    "tumble compare --help": ["-m", "tumble.cli", "compare", "--help"],
    "tumble sweep --help": ["-m", "tumble.cli", "sweep", "--help"],
    "python -c pass (floor)": ["-c", "pass"],
}


def _run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tumble bench cli", description=__doc__)
    parser.add_argument("--rounds", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    rows = []
    best = {}
    for label, command in COMMANDS.items():
        _run(command)  # warm-up: bytecode and numba's index files in the OS cache
        samples = [_run(command) for _ in range(args.rounds)]
        best[label] = min(samples)
        rows.append([label, fmt_time(min(samples)), fmt_time(statistics.median(samples))])
    verdict = "met" if best["tumble --help"] <= GOAL_S else "MISSED"
    body = "\n\n".join(
        [
            "### Command start-up (`tumble --help`)",
            "Wall time of a fresh process from spawn to exit, best and median of "
            f"{args.rounds} runs after a warm-up run.",
            markdown_table(["command", "best", "median"], rows),
            f"- `tumble --help`: {fmt_time(best['tumble --help'])} "
            f"(goal <= {GOAL_S:g} s: {verdict}); "
            f"{best['tumble --help'] / best['python -c pass (floor)']:.1f}x the bare interpreter.",
        ]
    )
    print(body)
    if not args.no_write:
        write_section("cli", body)
    return 0

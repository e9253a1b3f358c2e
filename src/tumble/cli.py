"""The ``tumble`` command.

Subcommands live in the modules that own them; this file only wires them to argparse.
Bad arguments print a one-line message and exit with status 2 (argparse's convention).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from tumble._errors import InputError


def _benchmarks_dir() -> Path | None:
    """The repository's ``benchmarks/`` folder, if tumble runs from a source checkout."""
    candidate = Path(__file__).resolve().parents[2] / "benchmarks"
    return candidate if candidate.is_dir() else None


def _bench_names() -> list[str]:
    folder = _benchmarks_dir()
    if folder is None:
        return []
    return sorted(p.stem.removeprefix("bench_") for p in folder.glob("bench_*.py"))


def _run_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    folder = _benchmarks_dir()
    if folder is None:
        parser.error("benchmarks live in the source checkout; run `tumble bench` from a clone")
    names = _bench_names()
    if args.name not in names:
        parser.error(f"unknown benchmark {args.name!r}; choose from {', '.join(names)}")
    path = folder / f"bench_{args.name}.py"
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location(f"bench_{args.name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return int(module.main(args.rest) or 0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tumble", description="Rigid-body rotational dynamics done right."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = sub.add_parser(
        "bench",
        help="run a benchmark suite and update BENCHMARKS.md",
        description="Run a benchmark suite from benchmarks/ and write its BENCHMARKS.md section.",
    )
    bench.add_argument("name", help="suite name: " + (", ".join(_bench_names()) or "none found"))
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="options passed to the suite")
    bench.set_defaults(handler=_run_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args, parser) or 0)
    except InputError as exc:
        parser.exit(2, f"tumble {args.command}: error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

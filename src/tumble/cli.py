"""The ``tumble`` command.

Subcommands live in the modules that own them; this file only wires them to argparse.
A subcommand's module is imported only when that subcommand runs (or shows its help), so
``tumble --help`` stays fast: the compiled kernels behind ``compare`` and ``sweep`` load
only when needed. Bad arguments print a one-line message and exit with status 2
(argparse's convention).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
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
    # Registered before it runs, as an import would: dataclasses and typing look their
    # module up in sys.modules to resolve string annotations.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return int(module.main(args.rest) or 0)


def _run_lab(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if not 0 < args.port < 65536:
        parser.error(f"--port: expected a TCP port in 1..65535, got {args.port}")
    try:
        from tumble.lab import server
    except ImportError as exc:
        parser.exit(
            2,
            f"tumble lab: needs the lab extra ({exc.name} is missing): "
            "pip install 'tumble[lab]', or run ./dev lab from a clone\n",
        )
    server.run(args.host, args.port, open_browser=args.open)
    return 0


# Subcommands whose module supplies ``add_arguments(parser)`` and ``run(args, parser)``,
# by module name: imported only for the subcommand that is asked for.
_MODULE_COMMANDS = (
    (
        "compare",
        "tumble.compare",
        "run the integrators on one body and score them against the exact solution",
        "Run rigid-body integrators on the article's body (or an explicit one), print each "
        "method's conservation and attitude errors and cost, and optionally plot.",
    ),
    (
        "sweep",
        "tumble.sweep.cli",
        "score the integrators over a grid of bodies and steps, on Dask",
        "Run every method on every case of a grid (comma-separated lists), score each run "
        "against the exact solution and write a Parquet dataset; see docs/sweep.md.",
    ),
    (
        "precompile",
        "tumble.precompile",
        "compile the integrators' loops ahead of time into numba's cache",
        "Compile (or load) the loops that simulate and step run for each method and torque "
        "structure, so that later runs start at once; a progress bar shows each item's time.",
    ),
    (
        "sweep-plot",
        "tumble.sweep.plot",
        "draw heat maps of a sweep's scores per method",
        "Heat maps of each score over two grid axes, one panel per method, as PNG or "
        "interactive HTML; see docs/sweep.md.",
    ),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``tumble`` parser, with the full options of ``command`` (imported for that).

    Every subcommand is listed with its help line; only ``command``'s module is imported
    to add its options and handler (``None``: none of them, which is enough for
    ``tumble --help``).
    """
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
    lab = sub.add_parser(
        "lab",
        help="serve the interactive integrator lab in the browser",
        description="Serve the lab (page and JSON API) on a local port; see docs/lab.md.",
    )
    lab.add_argument("--host", default="127.0.0.1", help="interface to bind (default: %(default)s)")
    lab.add_argument("--port", type=int, default=8050, help="TCP port (default: %(default)s)")
    lab.add_argument("--open", action="store_true", help="open the page in a web browser")
    lab.set_defaults(handler=_run_lab)
    for name, module_name, help_text, description in _MODULE_COMMANDS:
        sub_parser = sub.add_parser(name, help=help_text, description=description)
        if name == command:
            module = importlib.import_module(module_name)
            module.add_arguments(sub_parser)
            sub_parser.set_defaults(handler=module.run)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv``: its first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_command(argv))
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args, parser) or 0)
    except InputError as exc:
        parser.exit(2, f"tumble {args.command}: error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

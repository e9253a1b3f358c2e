"""The `tumble` command's wiring: help, unknown commands and benchmarks."""

import ast
import subprocess
import sys

import pytest

from tumble.cli import main


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "bench" in capsys.readouterr().out


def test_unknown_command_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_unknown_benchmark_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "no-such-suite"])
    assert exc.value.code == 2
    assert "unknown benchmark" in capsys.readouterr().err


def test_console_script_runs():
    out = subprocess.run(
        [sys.executable, "-m", "tumble.cli", "--help"], capture_output=True, text=True, check=True
    )
    assert "usage: tumble" in out.stdout


def test_help_imports_no_subcommand_module():
    """`tumble --help` lists every command without importing their modules (nor numba),
    which keeps it fast; `tumble sweep --help` imports only what the sweep needs."""
    probe = (
        "import sys\n"
        "from tumble.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('numba', 'tumble.compare', 'tumble.sweep', 'tumble.rigid', 'tumble.lab')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)), file=sys.stderr)\n"
    )
    top = subprocess.run(
        [sys.executable, "-c", probe, "--help"], capture_output=True, text=True, check=True
    )
    assert "sweep-plot" in top.stdout
    assert top.stderr.strip() == "[]"
    sweep = subprocess.run(
        [sys.executable, "-c", probe, "sweep", "--help"], capture_output=True, text=True
    )
    assert "--task-size" in sweep.stdout
    assert "'tumble.sweep.cli'" in sweep.stderr
    assert "'tumble.sweep.plot'" not in sweep.stderr
    assert "'tumble.lab'" not in sweep.stderr


@pytest.mark.parametrize(
    ("command", "shows"),
    [
        ("compare", ["--steps-per-rotation", "rk4", "suzuki4", "heavy-top"]),
        ("sweep", ["--task-size", "cases per task (200)", "momentum_first"]),
        ("precompile", ["--torque", "gravity-gradient", "--jobs"]),
    ],
)
def test_command_help_imports_no_numba(command, shows):
    """`python -m tumble.cli compare|sweep|precompile --help` builds the full parser from
    data (the registry, the scenarios' parameters) and imports neither numba nor a kernel
    module: the interpreter's modules after the help is printed (``-m`` as runpy runs it;
    ``-X importtime`` misses modules loaded through importlib, as the subcommands are)."""
    probe = (
        "import runpy, sys\n"
        "sys.argv[0] = 'tumble.cli'\n"
        "try:\n"
        "    runpy.run_module('tumble.cli', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "print(sorted(sys.modules), file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, command, "--help"], capture_output=True, text=True, check=True
    )
    for text in shows:
        assert text in run.stdout
    loaded = ast.literal_eval(run.stderr.strip().splitlines()[-1])
    assert f"tumble.{'sweep.cli' if command == 'sweep' else command}" in loaded
    heavy = [m for m in loaded if m.split(".")[0] == "numba" or m.startswith("tumble._kernels")]
    assert not heavy, heavy

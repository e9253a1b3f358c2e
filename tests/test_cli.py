"""The `tumble` command's wiring: help, unknown commands and benchmarks."""

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

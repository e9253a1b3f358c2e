"""``./dev``: on a fresh clone it says what it is creating and installing before it does.

Runs the real script in a scratch copy of the repository's top level with a stub
``python3`` on PATH that records its calls (no network, no real install).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Stands in for python3 and for the venv's python and tumble: logs its arguments; for
#: ``-m venv DIR`` it makes DIR/bin with copies of itself.
STUB = """#!/bin/bash
echo "$(basename "$0") $*" >> "$STUB_LOG"
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    cp "$0" "$3/bin/python"
    cp "$0" "$3/bin/tumble"
fi
exit 0
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="./dev is a bash script")
def test_dev_announces_the_environment_and_the_install(tmp_path: Path) -> None:
    shutil.copy(ROOT / "dev", tmp_path / "dev")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    bin_dir = tmp_path / "stub-bin"
    bin_dir.mkdir()
    python3 = bin_dir / "python3"
    python3.write_text(STUB)
    python3.chmod(python3.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls.log"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STUB_LOG": str(log), "HOME": str(tmp_path)}
    run = subprocess.run(
        ["bash", str(tmp_path / "dev"), "tumble", "--version"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    out = run.stdout
    # Each step is announced before it runs, naming what it installs.
    assert "creating the virtual environment .venv" in out
    assert "installing tumble and its dependencies into .venv, extras: dev,lab" in out
    assert "pip install -e '.[dev,lab]'" in out
    assert out.index("creating") < out.index("installing") < out.index("environment ready")
    calls = log.read_text().splitlines()
    assert calls[0] == "python3 -m venv .venv"
    assert any("pip install" in c and "-e .[dev,lab]" in c for c in calls)
    assert calls[-1] == "tumble --version"
    # A second run finds the stamp: silent, straight to the command.
    again = subprocess.run(
        ["bash", str(tmp_path / "dev"), "tumble", "--version"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert again.returncode == 0
    assert again.stdout == ""
    assert os.path.exists(tmp_path / ".venv" / "bin" / "python")


#: Stands in for the environment's python (pytest) and mypy: exits with the code its
#: variable gives.
EXIT_STUB = """#!/bin/bash
case "$(basename "$0") $*" in
    "python -m pytest"*) exit "${PYTEST_RC:-0}" ;;
    mypy*) echo "mypy says $MYPY_RC"; exit "${MYPY_RC:-0}" ;;
esac
exit 0
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="./dev is a bash script")
@pytest.mark.parametrize(
    ("pytest_rc", "mypy_rc", "expected", "says"),
    [
        (0, 0, 0, ""),
        (0, 1, 1, "mypy found errors"),
        (1, 0, 1, ""),
        (2, 1, 2, "mypy found errors"),
        (5, 0, 1, "pytest collected no tests"),
    ],
)
def test_dev_test_fails_when_the_tests_or_mypy_fail(
    tmp_path: Path, pytest_rc: int, mypy_rc: int, expected: int, says: str
) -> None:
    """``./dev test`` runs mypy beside pytest: either failing fails the run, pytest's code
    first, and no tests collected is a failure; mypy's report is always printed."""
    for name in ("dev", "pyproject.toml", "package-lock.json"):
        shutil.copy(ROOT / name, tmp_path / name)
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    for name in ("python", "ruff", "mypy"):
        (venv / name).write_text(EXIT_STUB)
        (venv / name).chmod(0o755)
    # The environment and the page assets are in place (their stamps), so nothing installs.
    digest = {
        n: hashlib.sha1((tmp_path / n).read_bytes()).hexdigest()[:12]
        for n in ("pyproject.toml", "package-lock.json")
    }
    (tmp_path / ".venv" / f".installed-{digest['pyproject.toml']}-dev-lab").touch()
    bundle = tmp_path / "node_modules" / "plotly.js-basic-dist-min" / "plotly-basic.min.js"
    bundle.parent.mkdir(parents=True)
    bundle.touch()
    (tmp_path / "node_modules" / f".installed-{digest['package-lock.json']}").touch()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "PYTEST_RC": str(pytest_rc),
        "MYPY_RC": str(mypy_rc),
    }
    run = subprocess.run(
        ["bash", str(tmp_path / "dev"), "test"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == expected, (run.stdout, run.stderr)
    assert f"mypy says {mypy_rc}" in run.stdout
    assert says in run.stderr
    # The background mypy's log is gone.
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("tmp.")]

"""Build hook (hatchling): ship plotly.js's partial bundle in the wheel, for the lab page.

The lab page draws scatter traces only, and plotly.js's partial "basic" bundle (1.2 MB)
gives its first plot one to two seconds sooner than the full bundle of the ``plotly`` Python
package (4.6 MB). A checkout gets the partial bundle from ``./dev`` (``npm ci`` into
``node_modules``); a wheel carries it as ``tumble/lab/vendor/plotly-basic.min.js``, with
its licence, so that a ``pip install`` serves it too (``tumble.lab.server.plotly_js_path``).

The bundle comes from ``node_modules`` when it is there at the version that
``package-lock.json`` pins, else from ``npm ci``. Without npm, or when ``npm ci`` fails
(no network), the wheel is built without it and the lab falls back to the full bundle; the
build says so in a warning (``pip install -v`` shows it) and ``tumble lab`` says so at start.
Editable installs skip this: they run from the checkout, which serves ``node_modules``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = "plotly.js-basic-dist-min"
BUNDLE = "plotly-basic.min.js"
#: Where the wheel holds the bundle and its licence (``tumble.lab.server.PACKAGED_BUNDLE``).
TARGET = "tumble/lab/vendor"
#: ``npm ci`` seconds at most: a build must not hang on an unreachable registry.
NPM_TIMEOUT_S = 300


def _pinned(lock: Path) -> str | None:
    """The version of the bundle's package that a lock file records, or None."""
    try:
        packages = json.loads(lock.read_text())["packages"]
        return str(packages[f"node_modules/{PACKAGE}"]["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class BundleHook(BuildHookInterface):
    """Adds the partial plotly.js bundle to the wheel (see the module docstring)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        folder = root / "node_modules" / PACKAGE
        problem = self._bundle(root, folder)
        if problem is not None:
            self.app.display_warning(
                f"tumble: {problem}; the wheel has no partial plotly.js bundle, so the lab "
                "will serve the full bundle of the plotly package (4.6 MB; its first plot "
                "comes one to two seconds later). Build again with npm and its registry at hand "
                "to ship it."
            )
            return
        build_data["force_include"][str(folder / BUNDLE)] = f"{TARGET}/{BUNDLE}"
        build_data["force_include"][str(folder / "LICENSE")] = f"{TARGET}/plotly.js-LICENSE"
        self.app.display_info(
            f"tumble: the wheel ships {PACKAGE} {_pinned(root / 'package-lock.json')}"
        )

    def _bundle(self, root: Path, folder: Path) -> str | None:
        """Make ``folder`` hold the pinned bundle; None when it does, else what failed."""
        lock = root / "package-lock.json"
        want = _pinned(lock)
        if want is None:
            return f"{lock} does not pin {PACKAGE}"
        have = _pinned(root / "node_modules" / ".package-lock.json")
        if have == want and (folder / BUNDLE).is_file() and (folder / "LICENSE").is_file():
            return None
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not installed"
        self.app.display_info(f"tumble: npm ci ({PACKAGE} {want}, for the lab page)")
        command = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
        try:
            done = subprocess.run(command, cwd=root, timeout=NPM_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"npm ci failed ({exc})"
        if done.returncode != 0:
            return f"npm ci failed (status {done.returncode})"
        if not (folder / BUNDLE).is_file():
            return f"npm ci did not install {folder / BUNDLE}"
        return None

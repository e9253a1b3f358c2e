"""The scenarios' parameters as plain data: the article's defaults, the limits, the forced cases.

What the command line's parsers (``tumble compare``, ``sweep``, ``precompile``) and the
lab's forms show and check before anything runs. It imports nothing but the standard
library, so that building a parser (and ``--help``) loads no compiled kernel;
:mod:`tumble.scenarios` builds the cases from these values and re-exports them.
"""

from __future__ import annotations

__all__ = ["DEFAULTS", "MAX_ROTATIONS", "MAX_STEPS_PER_ROTATION", "TORQUE_SCENARIOS"]

DEFAULTS: dict[str, float] = {
    "min_j": 0.5,
    "median_j": 0.5,
    "energy": 0.4,
    "steps_per_rotation": 64,
    "rotations": 20,
}
"""Defaults of the article's parametrisation: an asymmetric body near the separatrix
(``energy`` just below ``median_j``: a Dzhanibekov flip every few periods), 64 steps per
rotation, 20 rotations (``t = 40π``)."""

#: Largest ``rotations`` and ``steps_per_rotation`` a scenario accepts (the lab and
#: ``tumble compare`` share them): 1e5 periods at 1e5 steps each is already 1e10 steps per
#: method, hours of work; larger values are typing mistakes rather than experiments.
MAX_ROTATIONS = 100_000.0
MAX_STEPS_PER_ROTATION = 100_000

#: The forced cases of :func:`tumble.scenarios.torque_case` (``tumble compare --torque``),
#: with their text.
TORQUE_SCENARIOS: dict[str, str] = {
    "heavy-top": (
        "a heavy symmetric top: I about the pivot (1.2, 1.2, 0.5), m = 1, centre of mass 0.4 "
        "up the symmetry axis, g = 9.81, tilted 0.6 rad, spinning at 12 rad/s"
    ),
    "gravity-gradient": (
        "a satellite (I = 1, 1.5, 2) in a gravity gradient, n = 1, nadir z: its axis of "
        "least inertia 0.3 rad from nadir, librating"
    ),
    "damped": "the article's default body under viscous damping -0.05 omega",
    "controlled": (
        "the article's default body under a PD law to the identity attitude, k_p = 0.5, k_d = 0.5"
    ),
}

"""The lab's preset menu: named free bodies and the torque scenarios (``GET /api/presets``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tumble import scenarios

__all__ = ["PRESETS", "Preset", "preset_table"]

_D = scenarios.DEFAULTS


@dataclass(frozen=True)
class Preset:
    """A named case of the lab's preset menu (``GET /api/presets``).

    Attributes
    ----------
    id, label : str
        Key (for the page) and menu text.
    note : str
        What the case is and where its numbers come from.
    params : dict
        Fields of :class:`SimulateRequest` that the preset sets (the article's
        parametrisation or an explicit body); the page keeps the rest.
    torque : str or None
        Name of a torque scenario (``tumble compare --torque``) for forced motion; None for
        the free body. Adding a torque scenario to the menu is one entry here.
    """

    id: str
    label: str
    note: str
    params: dict[str, Any]
    torque: str | None = None


def _box(sides: tuple[float, float, float], below_separatrix: float | None) -> dict[str, Any]:
    """The article's parameters of a uniform box with these side lengths.

    ``I_x = m (b² + c²) / 12`` and so on; the article's parametrisation fixes ``J_max -
    J_min = 1`` (a change of time unit), so ``min_j = J_min / (J_max - J_min)`` and
    ``median_j = (J_mid - J_min) / (J_max - J_min)``, whatever the mass. ``energy``:
    ``below_separatrix`` under ``median_j`` (a spin near the median axis: flips), or the
    article's 0.4 when None.
    """
    a, b, c = sides
    J = np.sort([12.0 / (b * b + c * c), 12.0 / (a * a + c * c), 12.0 / (a * a + b * b)])
    span = J[2] - J[0]
    median = float((J[1] - J[0]) / span)
    energy = _D["energy"] if below_separatrix is None else median - below_separatrix
    return {
        "min_j": round(float(J[0] / span), 4),
        "median_j": round(median, 4),
        "energy": round(max(energy, 0.0), 4),
    }


PRESETS: tuple[Preset, ...] = (
    Preset(
        "article",
        "the article's default",
        "J = (0.5, 1, 1.5), energy 0.4: the case of the source article's toy. No solid body "
        "has these moments (I_x > I_y + I_z); the 3-D view draws a thin plate.",
        {"min_j": _D["min_j"], "median_j": _D["median_j"], "energy": _D["energy"]},
    ),
    Preset(
        "tennis-racket",
        "tennis racket (box 3:2:1)",
        "A uniform box of sides 3 : 2 : 1 spun just off its median axis (energy 0.01 below "
        "the separatrix): the tennis-racket theorem, a half-turn flip every few periods.",
        _box((3.0, 2.0, 1.0), 0.01),
    ),
    Preset(
        "long-bar",
        "long bar (20:1:1)",
        "A uniform bar 20 times longer than wide: a symmetric top (two equal moments), the "
        "body L moves on circles about the long axis.",
        _box((20.0, 1.0, 1.0), None),
    ),
    Preset(
        "flat-plate",
        "flat plate (30:30:1)",
        "A square plate 30 times wider than thick: a symmetric top (median J = max J).",
        _box((30.0, 30.0, 1.0), None),
    ),
    Preset(
        "sphere",
        "spherical body",
        "Equal moments (J = 1, 1, 1): any spin is steady, L_b does not move and every "
        "method should keep the exact uniform rotation.",
        {"inv_inertia": [1.0, 1.0, 1.0], "omega_body": [0.3, 0.4, 1.0]},
    ),
    Preset(
        "phone",
        "phone (146.7 × 71.5 × 7.65 mm)",
        "An iPhone 13 as a uniform box: Apple's published size 146.7 × 71.5 × 7.65 mm "
        "(mass 174 g; it cancels), moments computed, not measured. Spun about its median "
        "axis (energy 0.02 below the separatrix), as in the phone-flip trick.",
        _box((146.7e-3, 71.5e-3, 7.65e-3), 0.02),
    ),
    Preset(
        "heavy-top",
        "heavy top (gravity)",
        f"Forced motion, {scenarios.TORQUE_SCENARIOS['heavy-top']}. Gravity turns L: the top "
        "precesses about the vertical and nods (nutation), so |L|, J_L and world L change; "
        "the dashed reference is a tight ODE solve, not a closed form. A good method "
        "follows it; the attitude error shows how fast each one loses the phase.",
        {},
        "heavy-top",
    ),
    Preset(
        "gravity-gradient",
        "satellite in a gravity gradient",
        f"Forced motion, {scenarios.TORQUE_SCENARIOS['gravity-gradient']}. The gradient "
        "pulls the long axis back towards nadir, so the body librates about it; energy "
        "counting the potential is conserved, but J_L, |L| and world L oscillate. The "
        "dashed reference is a tight ODE solve.",
        {},
        "gravity-gradient",
    ),
    Preset(
        "damped",
        "damped (viscous torque)",
        f"Forced motion, {scenarios.TORQUE_SCENARIOS['damped']}: |L| and the energy decay "
        "and the body-frame L spirals in towards zero. The "
        "dashed reference is a tight ODE solve.",
        {},
        "damped",
    ),
    Preset(
        "controlled",
        "attitude control (PD law)",
        f"Forced motion, {scenarios.TORQUE_SCENARIOS['controlled']}: the controller brakes "
        "the spin and turns the body to the identity attitude, so L decays to zero. The "
        "dashed reference is a tight ODE solve.",
        {},
        "controlled",
    ),
)
"""The preset menu, in order: free bodies, then the torque scenarios of
:data:`tumble.scenarios.TORQUE_SCENARIOS` (``params`` empty: the scenario sets the body)."""


def preset_table() -> list[dict[str, Any]]:
    """The body of ``GET /api/presets``: the fields of each :data:`PRESETS` entry."""
    return [asdict(p) for p in PRESETS]

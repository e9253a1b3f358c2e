"""The lab's preset menu: named free bodies, the engines at 60 Hz and the torque scenarios
(``GET /api/presets``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tumble import bodies, engines, rigid, scenarios

__all__ = [
    "ENGINE_RATE_HZ",
    "ENGINE_SECONDS",
    "ENGINE_STEPS",
    "PRESETS",
    "Preset",
    "engine_defaults",
    "preset_table",
]

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
        parametrisation or an explicit body; also the step, the duration and the methods
        ticked); the page keeps the rest.
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


def engine_defaults() -> list[str]:
    """Each engine's default setting: the replicas of :data:`tumble.engines.ENGINES` whose
    record says ``default``, in the order of :data:`tumble.rigid.METHODS` (the page's)."""
    names = [name for name, replica in engines.ENGINES.items() if replica.default]
    return sorted(names, key=rigid.METHODS.index)


def _article_parameters(
    moments: np.ndarray, omega_body: np.ndarray
) -> tuple[dict[str, float], float]:
    """The article's parameters of a body spun at ``omega_body`` (the same ``J`` ratios and
    energy fraction: the same orbit of ``L_b``, entered where ``L_b`` lies in the plane of
    the smallest and largest ``J``), and its rotation period ``P = 2π / ((J_max - J_min)
    |L|)`` in the time unit of ``omega_body``."""
    J = 1.0 / moments
    L = moments * omega_body
    J_L = float(L @ (J * L) / (L @ L))
    lo, mid, hi = np.sort(J)
    span = float(hi - lo)
    params = {
        "min_j": round(float(lo) / span, 7),
        "median_j": round(float(mid - lo) / span, 7),
        "energy": round((J_L - float(lo)) / span, 7),
    }
    return params, 2.0 * np.pi / (span * float(np.linalg.norm(L)))


#: The engines preset's tick rate and duration: 60 steps per second for 20 seconds.
ENGINE_RATE_HZ = 60
ENGINE_SECONDS = 20

_HANDLE = bodies.spin("t-handle")  # at the identity attitude: body omega = world omega
_T_HANDLE, _T_PERIOD = _article_parameters(1.0 / _HANDLE.inv_inertia, _HANDLE.omega0)
#: Steps per rotation of the engines preset: the lab's step is ``dt = P / steps_per_rotation``
#: (an integer), so 60 Hz is ``60 P`` steps per rotation; the T-handle at 2 rev/s has ``P =
#: 0.523`` s, ``60 P = 31.4``, and 31 steps are 60 Hz for the handle spun 1.3 % faster,
#: 2.03 rev/s (the motion depends only on the angle per step and the inertia ratios).
ENGINE_STEPS = round(ENGINE_RATE_HZ * _T_PERIOD)
_SPIN = float(np.linalg.norm(_HANDLE.omega0)) / (2.0 * np.pi)  # rev/s
_SPIN_60 = _SPIN * _T_PERIOD * ENGINE_RATE_HZ / ENGINE_STEPS
_BELOW = _T_HANDLE["median_j"] - _T_HANDLE["energy"]


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
        "engines",
        "engines at 60 Hz",
        "Each engine's default setting (tumble.engines) on Dzhanibekov's T-handle of tumble "
        "bench engines: a crossbar 8 cm and a stem 4 cm (30 g each) spun about the stem with "
        f"1 % about the other axes: energy fraction {_BELOW:.1e} below the separatrix, so "
        f"the stem flips over about every 1.8 s. {ENGINE_STEPS} steps per rotation period "
        "P = 2π/((J_max − J_min)|L|): a 60 Hz tick (dt = 1/60 s, "
        f"{ENGINE_RATE_HZ * ENGINE_SECONDS} ticks = {ENGINE_SECONDS} s) for the handle spun "
        f"at {_SPIN_60:.2f} rev/s (at {_SPIN:.0f} rev/s, the scorecard's, it is "
        f"{ENGINE_STEPS / _T_PERIOD:.1f} Hz). The run starts where L lies in the plane of the "
        "min and max J axes, the article's start, elsewhere on the same orbit. Dashed: the "
        "exact solution; the engines without a gyroscopic term spin about a fixed ω and never "
        "flip.",
        {
            **_T_HANDLE,
            "steps_per_rotation": ENGINE_STEPS,
            "rotations": round(ENGINE_RATE_HZ * ENGINE_SECONDS / ENGINE_STEPS, 6),
            "methods": engine_defaults(),
        },
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

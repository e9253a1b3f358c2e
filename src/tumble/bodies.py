"""Everyday spinning bodies, in physical units: the motions players see.

Each :class:`Spin` is a real object (its principal moments computed from its shape and
mass, SI units) with an initial attitude and body-frame angular velocity: Dzhanibekov's
T-handle, a tennis racket, a phone spun flat, Feynman's wobbling plate, a 3:2:1 box near
the separatrix, and the heavy top of :func:`tumble.scenarios.torque_case`. ``tumble bench
engines`` scores the engines' replicas on all of them (:data:`KEYS`, :func:`spin`), and
the lab's "engines at 60 Hz" preset runs the T-handle. :meth:`Spin.case` turns one into a
:class:`tumble.scenarios.Case` at a step rate and a duration.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tumble import scenarios
from tumble._errors import InputError
from tumble._validate import as_choice, as_float_array, as_scalar, describe

__all__ = ["KEYS", "KINDS", "Spin", "spin"]

#: What a spin shows, and so which extra measures apply: ``"flip"`` (it flips: the flip
#: period), ``"stable"`` (a spin about the largest-inertia axis: its wobble), ``"top"`` (a
#: symmetric top), ``"forced"`` (under a torque model).
KINDS = ("flip", "stable", "top", "forced")


@dataclass(frozen=True)
class Spin:
    """A body and how it is spun.

    Attributes
    ----------
    key, title, text : str
        Identifier, name, and where its numbers come from.
    kind : str
        One of :data:`KINDS`.
    inv_inertia : ndarray, shape (3,)
        Principal inverse moments ``J``, 1/(kg m²), all positive.
    q0 : ndarray, shape (4,)
        Initial body-to-world unit quaternion ``(w, x, y, z)``.
    omega0 : ndarray, shape (3,)
        Initial angular velocity, world frame (rad/s; at ``q0`` = identity, body = world).
    torque : torque model or None
        A :mod:`tumble.torques` model for forced motion.
    """

    key: str
    title: str
    text: str
    kind: str
    inv_inertia: np.ndarray
    q0: np.ndarray
    omega0: np.ndarray
    torque: Any = None

    def __post_init__(self) -> None:
        for field in ("key", "title", "text"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise InputError(
                    f"{field}: expected a non-empty str, got {describe(getattr(self, field))}"
                )
        as_choice(self.kind, "kind", KINDS)
        J = np.array(as_float_array(self.inv_inertia, "inv_inertia", (3,)), dtype=np.float64)
        if J.shape != (3,) or not np.all(J > 0):
            raise InputError(f"inv_inertia: expected 3 positive inverse moments, got {J!r}")
        q = np.array(as_float_array(self.q0, "q0", (4,)), dtype=np.float64)
        if q.shape != (4,) or abs(float(np.linalg.norm(q)) - 1.0) > 1e-12:
            raise InputError(f"q0: expected one unit quaternion (w, x, y, z), got {q!r}")
        w = np.array(as_float_array(self.omega0, "omega0", (3,)), dtype=np.float64)
        if w.shape != (3,):
            raise InputError(f"omega0: expected one angular velocity, got shape {w.shape}")
        # Read-only: spin() hands out one shared instance per key.
        for name, value in (("inv_inertia", J), ("q0", q), ("omega0", w)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        if (self.torque is None) != (self.kind != "forced"):
            raise InputError(
                f"torque: expected a torque model exactly when kind is 'forced', got "
                f"{describe(self.torque)} with kind {self.kind!r}"
            )

    def case(self, rate: float, seconds: float) -> scenarios.Case:
        """The case at ``rate`` steps per second (Hz) for ``seconds`` of simulated time
        (``round(seconds * rate)`` steps; the case's period is ``2π/|omega0|``).

        Raises
        ------
        InputError
            ``rate`` or ``seconds`` not a positive finite number, or more steps than a case
            takes.
        """
        rate = as_scalar(rate, "rate", positive=True)
        seconds = as_scalar(seconds, "seconds", positive=True)
        period = float(2.0 * math.pi / np.linalg.norm(self.omega0))
        return scenarios.Case(
            self.inv_inertia, self.q0, self.omega0, 1.0 / rate, max(1, round(seconds * rate)),
            period, self.torque,
        )  # fmt: skip


def _rod(mass: float, length: float, radius: float, axis: int) -> np.ndarray:
    """Principal moments of a solid cylinder about its centre, its axis along ``axis``."""
    moments = np.full(3, mass * (length * length / 12.0 + radius * radius / 4.0))
    moments[axis] = mass * radius * radius / 2.0
    return moments


def _box(sides: tuple[float, float, float], mass: float) -> np.ndarray:
    """Principal moments of a uniform box, ``I_x = m (b² + c²)/12`` and so on."""
    a, b, c = sides
    return mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
_TWO_REV = 4.0 * math.pi  # 2 revolutions per second, rad/s


def _t_handle() -> Spin:
    # A crossbar (30 g, 8 cm) along body x and a stem (30 g, 4 cm) along body y from its
    # middle, both 4 mm in radius; moments about the centre of mass (parallel axes).
    bar_mass, bar_length, stem_mass, stem_length, radius = 0.03, 0.08, 0.03, 0.04, 0.004
    y_centre = stem_mass * stem_length / 2.0 / (bar_mass + stem_mass)
    stem_arm = stem_length / 2.0 - y_centre
    I = (
        _rod(bar_mass, bar_length, radius, 0)
        + bar_mass * np.array([y_centre**2, 0.0, y_centre**2])
        + _rod(stem_mass, stem_length, radius, 1)
        + stem_mass * np.array([stem_arm**2, 0.0, stem_arm**2])
    )
    return Spin(
        "t-handle", "Dzhanibekov's T-handle",
        "crossbar 8 cm and stem 4 cm (30 g each, 4 mm thick), I = "
        f"({I[0] * 1e7:.0f}, {I[1] * 1e7:.0f}, {I[2] * 1e7:.0f}) g cm²; spun at 2 rev/s "
        "about the stem (the median axis) with 1 % of that about each other axis",
        "flip", 1.0 / I, _IDENTITY, _TWO_REV * np.array([0.01, 1.0, 0.01]),
    )  # fmt: skip


def _racket() -> Spin:
    # 340 g: 15 kg cm² about the handle (twistweight), 145 kg cm² about the transverse axis
    # in the string plane through the centre of mass, their sum about the normal (flat body).
    I = np.array([15.0, 145.0, 160.0]) * 1e-5
    return Spin(
        "racket", "tennis racket",
        "I = (15, 145, 160) kg cm² (handle, in-plane transverse, normal); thrown at 1 rev/s "
        "about the in-plane transverse axis (the intermediate one) with 1 % of that about "
        "each other axis",
        "flip", 1.0 / I, _IDENTITY, 0.5 * _TWO_REV * np.array([0.01, 1.0, 0.01]),
    )  # fmt: skip


def _stable_spin() -> Spin:
    I = _box((146.7e-3, 71.5e-3, 7.65e-3), 0.174)
    return Spin(
        "stable-spin", "stable spin",
        "a phone (146.7 × 71.5 × 7.65 mm, 174 g, a uniform box) spun flat at 2 rev/s about "
        "its normal (largest inertia) with 1 % of that about each other axis",
        "stable", 1.0 / I, _IDENTITY, _TWO_REV * np.array([0.01, 0.01, 1.0]),
    )  # fmt: skip


def _symmetric_top() -> Spin:
    I = np.array([0.25, 0.25, 0.5]) * 0.3 * 0.12**2
    return Spin(
        "symmetric-top", "symmetric top",
        "Feynman's wobbling plate: a disc (r = 12 cm, 300 g) spun at 2 rev/s about its axis, "
        "with 10 % of that about a diameter",
        "top", 1.0 / I, _IDENTITY, _TWO_REV * np.array([0.1, 0.0, 1.0]),
    )  # fmt: skip


def _near_separatrix() -> Spin:
    # The article's parametrisation of a 3:2:1 box (world L along z, body L in the plane of
    # the smallest and largest moments), energy 1e-3 below the separatrix; J and omega
    # scaled together (L unchanged, time rescaled) to |omega| = 1 rev/s.
    J = np.sort(1.0 / _box((3.0, 2.0, 1.0), 1.0))
    span = J[2] - J[0]
    median = (J[1] - J[0]) / span
    c = scenarios.article_case(J[0] / span, median, median - 1e-3)
    s = 2.0 * math.pi / float(np.linalg.norm(c.omega0))
    return Spin(
        "near-separatrix", "near the separatrix",
        "a uniform 3:2:1 box, energy 1e-3 below the separatrix (the article's "
        "parametrisation: fraction median_j - 1e-3), |omega| = 1 rev/s",
        "flip", c.inv_inertia * s, c.q0, c.omega0 * s,
    )  # fmt: skip


def _heavy_top() -> Spin:
    c = scenarios.torque_case("heavy-top")
    return Spin(
        "heavy-top", "heavy top",
        scenarios.TORQUE_SCENARIOS["heavy-top"] + " (`tumble compare --torque heavy-top`)",
        "forced", c.inv_inertia, c.q0, c.omega0, c.torque,
    )  # fmt: skip


_BUILDERS = {
    "t-handle": _t_handle,
    "racket": _racket,
    "stable-spin": _stable_spin,
    "symmetric-top": _symmetric_top,
    "near-separatrix": _near_separatrix,
    "heavy-top": _heavy_top,
}

#: The spins' keys, in the scorecard's order.
KEYS: tuple[str, ...] = tuple(_BUILDERS)


@functools.cache
def _built(key: str) -> Spin:
    return _BUILDERS[key]()


def spin(key: str) -> Spin:
    """The spin named ``key`` (one of :data:`KEYS`), built on first use (the heavy top's
    torque model loads the compiled torques).

    Raises
    ------
    InputError
        ``key`` is not one of :data:`KEYS`.
    """
    return _built(as_choice(key, "key", KEYS))
